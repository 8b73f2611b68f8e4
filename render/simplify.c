/* simplify.c: a grid's surface in fewer triangles, every grid point
 * within a given height difference of it (simplify.h); the glTF writer's
 * --gltf-error.  The terrain as a triangulated irregular network, the
 * water as a quadtree of flat blocks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simplify.h"

#include "backends/spec.h"

/* --- the terrain: a triangulated irregular network --------------------------
 * Tile by tile (the glTF writer's are WG_GLTF_TILE cells a side, on every
 * core): a
 * Delaunay triangulation grown by greedy insertion (Garland and Heckbert,
 * "Fast polygonal approximation of terrains and height fields", 1995):
 * the grid point farthest in height from the surface so far goes in, until
 * none is farther than E.  A tile's four borders are simplified first, as
 * lines (Douglas-Peucker, within E): a line's points depend on its heights
 * alone, so the two tiles that share it make it of the same points and
 * join without a crack, and the world's borders stay straight.  Every
 * triangle is then counter-clockwise seen from above and every grid point
 * within E of the surface: an exact bound, which meshoptimizer (Debian
 * 12's 0.18) does not give here; on these height fields it also folded
 * triangles over and stood zero-area ones on end, at any error.
 */

/* A tile's triangulation.  Points are the tile's grid points, numbered
 * y * stride + x with y the grid row; triangles are counter-clockwise in
 * (x, y), which is clockwise seen from +Y (they are written reversed). */
typedef struct tin_tri {
    int32_t v[3];
    int32_t nb[3]; /* the triangle across edge v[i] -> v[i+1], or -1 */
} tin_tri;

typedef struct tin {
    uint32_t w, h, stride; /* cells; stride = w + 1 points a row */
    float e;
    const float *z;  /* the tile's heights, stride * (h + 1) */
    tin_tri *t;
    size_t nt;
    double *err;     /* per triangle: the largest error inside, and where */
    int32_t *at;
    int32_t *heap, *hpos; /* triangles by error, largest first */
    size_t hn;
    int32_t *stack, *dirty;
    size_t ns, nd;
    uint8_t *is_dirty;
} tin;

static inline int64_t tin_orient(const tin *m, int32_t a, int32_t b, int32_t c)
{
    int64_t s = m->stride;
    int64_t ax = a % s, ay = a / s, bx = b % s, by = b / s, cx = c % s, cy = c / s;
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

/* > 0 when d is inside the circle through a, b, c (counter-clockwise).
 * Exact: a tile's coordinates are at most WG_TIN_SIDE_MAX. */
static int64_t tin_incircle(const tin *m, int32_t a, int32_t b, int32_t c,
                            int32_t d)
{
    int64_t s = m->stride, dx = d % s, dy = d / s;
    int64_t adx = a % s - dx, ady = a / s - dy, bdx = b % s - dx, bdy = b / s - dy;
    int64_t cdx = c % s - dx, cdy = c / s - dy;
    return (adx * adx + ady * ady) * (bdx * cdy - cdx * bdy) +
           (bdx * bdx + bdy * bdy) * (cdx * ady - adx * cdy) +
           (cdx * cdx + cdy * cdy) * (adx * bdy - bdx * ady);
}

static void tin_heap_swap(tin *m, size_t i, size_t k)
{
    int32_t a = m->heap[i], b = m->heap[k];
    m->heap[i] = b, m->heap[k] = a;
    m->hpos[b] = (int32_t)i, m->hpos[a] = (int32_t)k;
}

/* Put triangle t where its error says in the heap. */
static void tin_heap_fix(tin *m, int32_t t)
{
    size_t i;
    if (m->hpos[t] < 0) {
        i = m->hn++;
        m->heap[i] = t;
        m->hpos[t] = (int32_t)i;
    } else {
        i = (size_t)m->hpos[t];
    }
    while (i > 0 && m->err[m->heap[(i - 1) / 2]] < m->err[t]) {
        tin_heap_swap(m, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, big = i;
        if (l < m->hn && m->err[m->heap[l]] > m->err[m->heap[big]])
            big = l;
        if (r < m->hn && m->err[m->heap[r]] > m->err[m->heap[big]])
            big = r;
        if (big == i)
            break;
        tin_heap_swap(m, i, big);
        i = big;
    }
}

/* The grid point inside triangle t (or on its edges, not on the tile's
 * border: those are the lines') farthest in height from its plane. */
static void tin_scan(tin *m, int32_t t)
{
    const int32_t *v = m->t[t].v;
    int64_t s = m->stride;
    int64_t x0 = v[0] % s, y0 = v[0] / s, x1 = v[1] % s, y1 = v[1] / s;
    int64_t x2 = v[2] % s, y2 = v[2] / s;
    double z0 = m->z[v[0]], det = (double)tin_orient(m, v[0], v[1], v[2]);
    double b = ((m->z[v[1]] - z0) * (double)(y2 - y0) -
                (m->z[v[2]] - z0) * (double)(y1 - y0)) / det;
    double c = ((double)(x1 - x0) * (m->z[v[2]] - z0) -
                (double)(x2 - x0) * (m->z[v[1]] - z0)) / det;
    int64_t xa = x0 < x1 ? x0 : x1, xb = x0 > x1 ? x0 : x1;
    int64_t ya = y0 < y1 ? y0 : y1, yb = y0 > y1 ? y0 : y1;
    xa = x2 < xa ? x2 : xa, xb = x2 > xb ? x2 : xb;
    ya = y2 < ya ? y2 : ya, yb = y2 > yb ? y2 : yb;
    xa = xa < 1 ? 1 : xa, ya = ya < 1 ? 1 : ya;
    xb = xb > (int64_t)m->w - 1 ? (int64_t)m->w - 1 : xb;
    yb = yb > (int64_t)m->h - 1 ? (int64_t)m->h - 1 : yb;
    double best = 0.0;
    int32_t at = -1;
    for (int64_t y = ya; y <= yb; y++) {
        /* Edge functions, stepped along the row. */
        int64_t e0 = (x1 - x0) * (y - y0) - (y1 - y0) * (xa - x0);
        int64_t e1 = (x2 - x1) * (y - y1) - (y2 - y1) * (xa - x1);
        int64_t e2 = (x0 - x2) * (y - y2) - (y0 - y2) * (xa - x2);
        double zr = z0 + c * (double)(y - y0);
        for (int64_t x = xa; x <= xb; x++) {
            if (e0 >= 0 && e1 >= 0 && e2 >= 0) {
                int32_t q = (int32_t)(y * s + x);
                double d = fabs(m->z[q] - (zr + b * (double)(x - x0)));
                if (d > best && q != v[0] && q != v[1] && q != v[2])
                    best = d, at = q;
            }
            e0 -= y1 - y0, e1 -= y2 - y1, e2 -= y0 - y2;
        }
    }
    m->err[t] = best;
    m->at[t] = at;
    tin_heap_fix(m, t);
}

static void tin_set(tin *m, int32_t t, int32_t a, int32_t b, int32_t c,
                    int32_t na, int32_t nb, int32_t nc)
{
    tin_tri *r = &m->t[t];
    r->v[0] = a, r->v[1] = b, r->v[2] = c;
    r->nb[0] = na, r->nb[1] = nb, r->nb[2] = nc;
    if (!m->is_dirty[t]) {
        m->is_dirty[t] = 1;
        m->dirty[m->nd++] = t;
    }
}

/* Neighbour n now sees 'now' where it saw 'was'. */
static void tin_relink(tin *m, int32_t n, int32_t was, int32_t now)
{
    for (int i = 0; n >= 0 && i < 3; i++)
        if (m->t[n].nb[i] == was)
            m->t[n].nb[i] = now;
}

static int32_t tin_new(tin *m)
{
    int32_t t = (int32_t)m->nt++;
    m->hpos[t] = -1;
    m->is_dirty[t] = 0;
    return t;
}

/* Triangle t as (a, b, c) with edge 'e' first. */
static void tin_turn(const tin *m, int32_t t, int e, int32_t v[3], int32_t nb[3])
{
    for (int i = 0; i < 3; i++) {
        v[i] = m->t[t].v[(e + i) % 3];
        nb[i] = m->t[t].nb[(e + i) % 3];
    }
}

/* Add point q, inside triangle t or on one of its edges, then flip edges
 * until the triangulation is Delaunay again (Lawson), then rescan what
 * changed (or leave it listed in m->dirty, while the borders go in). */
static void tin_insert(tin *m, int32_t t, int32_t q, int rescan)
{
    int on = -1;
    for (int i = 0; i < 3; i++)
        if (tin_orient(m, m->t[t].v[i], m->t[t].v[(i + 1) % 3], q) == 0)
            on = i;
    int32_t v[3], nb[3];
    tin_turn(m, t, on < 0 ? 0 : on, v, nb);
    int32_t a = v[0], b = v[1], c = v[2];
    m->ns = 0;
    if (on < 0) { /* inside: three triangles */
        int32_t t1 = tin_new(m), t2 = tin_new(m);
        tin_set(m, t, a, b, q, nb[0], t1, t2);
        tin_set(m, t1, b, c, q, nb[1], t2, t);
        tin_set(m, t2, c, a, q, nb[2], t, t1);
        tin_relink(m, nb[1], t, t1);
        tin_relink(m, nb[2], t, t2);
        m->stack[m->ns++] = t, m->stack[m->ns++] = t1, m->stack[m->ns++] = t2;
    } else if (nb[0] < 0) { /* on the tile's border: two */
        int32_t t1 = tin_new(m);
        tin_set(m, t, a, q, c, -1, t1, nb[2]);
        tin_set(m, t1, q, b, c, -1, nb[1], t);
        tin_relink(m, nb[1], t, t1);
        m->stack[m->ns++] = t, m->stack[m->ns++] = t1;
    } else { /* on the edge a-b shared with u = (b, a, d): four */
        int32_t u = nb[0], uv[3], un[3];
        int f = 0;
        while (m->t[u].v[f] != b)
            f++;
        tin_turn(m, u, f, uv, un);
        int32_t d = uv[2], t1 = tin_new(m), u1 = tin_new(m);
        tin_set(m, t, a, q, c, u1, t1, nb[2]);
        tin_set(m, t1, q, b, c, u, nb[1], t);
        tin_set(m, u, b, q, d, t1, u1, un[2]);
        tin_set(m, u1, q, a, d, t, un[1], u);
        tin_relink(m, nb[1], t, t1);
        tin_relink(m, un[1], u, u1);
        m->stack[m->ns++] = t, m->stack[m->ns++] = t1;
        m->stack[m->ns++] = u, m->stack[m->ns++] = u1;
    }
    /* Every triangle on the stack has q as a corner; check the edge
     * opposite it. */
    while (m->ns) {
        int32_t s = m->stack[--m->ns];
        int iq = 0;
        while (m->t[s].v[iq] != q)
            iq++;
        tin_turn(m, s, (iq + 1) % 3, v, nb); /* v = (a, b, q) */
        int32_t u = nb[0];
        if (u < 0)
            continue;
        int f = 0;
        while (m->t[u].v[f] != v[1])
            f++;
        int32_t uv[3], un[3];
        tin_turn(m, u, f, uv, un); /* uv = (b, a, d) */
        if (tin_incircle(m, v[0], v[1], v[2], uv[2]) <= 0)
            continue;
        tin_set(m, s, v[0], uv[2], q, un[1], u, nb[2]);
        tin_set(m, u, uv[2], v[1], q, un[2], nb[1], s);
        tin_relink(m, un[1], u, s);
        tin_relink(m, nb[1], s, u);
        m->stack[m->ns++] = s, m->stack[m->ns++] = u;
    }
    for (size_t i = 0; rescan && i < m->nd; i++) {
        m->is_dirty[m->dirty[i]] = 0;
        tin_scan(m, m->dirty[i]);
    }
    if (rescan)
        m->nd = 0;
}

/* Douglas-Peucker on heights h[i0..i1]: mark in keep[] the points that a
 * polyline within e of every height needs; returns the largest height
 * difference left. */
static double tin_line(const float *h, uint32_t i0, uint32_t i1, float e,
                       uint8_t *keep)
{
    double worst = 0.0;
    uint32_t at = i0;
    for (uint32_t i = i0 + 1; i < i1; i++) {
        double l = h[i0] + (double)(h[i1] - h[i0]) * (i - i0) / (i1 - i0);
        double d = fabs(h[i] - l);
        if (d > worst)
            worst = d, at = i;
    }
    if (worst <= e)
        return worst;
    keep[at] = 1;
    double a = tin_line(h, i0, at, e, keep), b = tin_line(h, at, i1, e, keep);
    return a > b ? a : b;
}

/* Memory for one tile of at most 'side' cells a side. */
struct wg_tin {
    tin m;
    float *z, *line;
    uint8_t *keep;
};

void wg_tin_free(wg_tin *a)
{
    if (!a)
        return;
    free(a->z), free(a->line), free(a->keep);
    free(a->m.t), free(a->m.err), free(a->m.at), free(a->m.heap);
    free(a->m.hpos), free(a->m.stack), free(a->m.dirty), free(a->m.is_dirty);
    free(a);
}

wg_tin *wg_tin_new(uint32_t side)
{
    size_t T = side, pts = (T + 1) * (T + 1), tris = 2 * pts;
    wg_tin *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->z = malloc(pts * sizeof *a->z);
    a->line = malloc((T + 1) * sizeof *a->line);
    a->keep = malloc(T + 1);
    a->m.t = malloc(tris * sizeof *a->m.t);
    a->m.err = malloc(tris * sizeof *a->m.err);
    a->m.at = malloc(tris * sizeof *a->m.at);
    a->m.heap = malloc(tris * sizeof *a->m.heap);
    a->m.hpos = malloc(tris * sizeof *a->m.hpos);
    a->m.stack = malloc(tris * sizeof *a->m.stack);
    a->m.dirty = malloc(tris * sizeof *a->m.dirty);
    a->m.is_dirty = malloc(tris);
    if (a->z && a->line && a->keep && a->m.t && a->m.err && a->m.at &&
        a->m.heap && a->m.hpos && a->m.stack && a->m.dirty && a->m.is_dirty)
        return a;
    wg_tin_free(a);
    return NULL;
}

double wg_tin_tile(wg_tin *a, const float *height, uint32_t n, uint32_t x0,
                   uint32_t y0, uint32_t w, uint32_t h, float e,
                   uint32_t **out, size_t *len)
{
    uint32_t s = w + 1;
    tin *m = &a->m;
    m->w = w, m->h = h, m->stride = s, m->e = e, m->z = a->z;
    m->nt = m->hn = m->nd = 0;
    for (uint32_t y = 0; y <= h; y++)
        memcpy(a->z + (size_t)y * s, height + (size_t)(y0 + y) * n + x0,
               s * sizeof *a->z);
    /* The rectangle, then the points its borders keep. */
    int32_t A = 0, B = (int32_t)w, C = (int32_t)(h * s + w), D = (int32_t)(h * s);
    int32_t t0 = tin_new(m), t1 = tin_new(m);
    tin_set(m, t0, A, B, C, -1, -1, t1);
    tin_set(m, t1, A, C, D, t0, -1, -1);
    double worst = 0.0;
    for (int side = 0; side < 4; side++) {
        /* North, south (rows 0, h), west, east (columns 0, w), each in
         * increasing coordinate, as the neighbour reads it. */
        uint32_t len1 = side < 2 ? w : h;
        for (uint32_t i = 0; i <= len1; i++) {
            a->line[i] = side < 2 ? a->z[(side ? h : 0) * s + i]
                                  : a->z[i * s + (side == 3 ? w : 0)];
            a->keep[i] = 0;
        }
        double d = tin_line(a->line, 0, len1, e, a->keep);
        worst = d > worst ? d : worst;
        for (uint32_t i = 1; i < len1; i++) {
            if (!a->keep[i])
                continue;
            int32_t q = side < 2 ? (int32_t)((side ? h : 0) * s + i)
                                 : (int32_t)(i * s + (side == 3 ? w : 0));
            /* The triangle whose border edge holds q. */
            for (size_t t = 0; t < m->nt; t++) {
                int k = 0;
                while (k < 3 && !(m->t[t].nb[k] < 0 &&
                                  tin_orient(m, m->t[t].v[k], m->t[t].v[(k + 1) % 3], q) == 0))
                    k++;
                if (k == 3)
                    continue;
                int64_t ss = s, px = q % ss, py = q / ss;
                int32_t p0 = m->t[t].v[k], p1 = m->t[t].v[(k + 1) % 3];
                int64_t dot = (p0 % ss - px) * (p1 % ss - px) +
                              (p0 / ss - py) * (p1 / ss - py);
                if (dot < 0) {
                    tin_insert(m, (int32_t)t, q, 0);
                    break;
                }
            }
        }
    }
    for (size_t i = 0; i < m->nd; i++) {
        m->is_dirty[m->dirty[i]] = 0;
        tin_scan(m, m->dirty[i]);
    }
    m->nd = 0;
    while (m->hn && m->err[m->heap[0]] > e)
        tin_insert(m, m->heap[0], m->at[m->heap[0]], 1);
    if (m->hn && m->err[m->heap[0]] > worst)
        worst = m->err[m->heap[0]];
    uint32_t *tri = malloc(3 * m->nt * sizeof *tri);
    if (!tri)
        return -1.0;
    for (size_t t = 0; t < m->nt; t++)
        for (int i = 0; i < 3; i++) {
            int32_t q = m->t[t].v[(3 - i) % 3]; /* reversed: v0, v2, v1 */
            tri[3 * t + i] = (uint32_t)((size_t)(y0 + (uint32_t)q / s) * n +
                                        x0 + (uint32_t)q % s);
        }
    *out = tri;
    *len = 3 * m->nt;
    return worst;
}


/* --- the water: a quadtree of flat blocks -----------------------------------
 * A quadtree of square blocks of wet cells; a block whose levels lie
 * within E/2 of a plane is one fan around its centre through every block
 * corner on its border, so blocks of different sizes meet without a crack
 * and every water vertex is within E of the surface. */

/* Wet cells in [x, x+s) x [y, y+s), from the summed table (n x n). */
static inline uint32_t quad_wet_in(const uint32_t *sum, uint32_t n, uint32_t x,
                                   uint32_t y, uint32_t s)
{
    size_t a = (size_t)y * n + x, b = (size_t)(y + s) * n + x;
    return sum[b + s] - sum[b] - sum[a + s] + sum[a];
}

/* Is every level of block (x, y, s) within e/2 of the least-squares
 * plane?  Updates *worst with twice the largest distance. */
static int quad_flat(const wg_quad_grid *g, uint32_t x0, uint32_t y0,
                     uint32_t s, float e, double *worst)
{
    uint32_t n = g->n;
    double c = s / 2.0, sh = 0, su = 0, sv = 0, uu = 0;
    for (uint32_t y = 0; y <= s; y++)
        for (uint32_t x = 0; x <= s; x++) {
            double l = g->level[(size_t)(y0 + y) * n + x0 + x];
            sh += l, su += (x - c) * l, sv += (y - c) * l;
        }
    for (uint32_t i = 0; i <= s; i++)
        uu += (i - c) * (i - c);
    uu *= s + 1;
    double a = sh / ((s + 1.0) * (s + 1.0)), b = su / uu, d = sv / uu, far = 0;
    for (uint32_t y = 0; y <= s; y++)
        for (uint32_t x = 0; x <= s; x++) {
            double l = g->level[(size_t)(y0 + y) * n + x0 + x];
            far = fmax(far, fabs(l - (a + b * (x - c) + d * (y - c))));
            if (far > e / 2.0)
                return 0;
        }
    *worst = fmax(*worst, 2 * far);
    return 1;
}

int wg_quad_split(const wg_quad_grid *g, uint32_t x, uint32_t y, uint32_t s,
                  float e, wg_quad_blocks *out, double *worst)
{
    uint32_t n = g->n;
    if (x >= n - 1 || y >= n - 1)
        return 0;
    int inside = x + s <= n - 1 && y + s <= n - 1;
    if (inside && quad_wet_in(g->wet_sum, n, x, y, s) == 0)
        return 0;
    if (s == 1 || (inside && quad_wet_in(g->wet_sum, n, x, y, s) == s * s &&
                   quad_flat(g, x, y, s, e, worst))) {
        if (out->n == out->cap) {
            size_t cap = out->cap * 2 + 64;
            wg_quad_block *b = realloc(out->b, cap * sizeof *b);
            if (!b)
                return -1;
            out->b = b, out->cap = cap;
        }
        out->b[out->n++] = (wg_quad_block){x, y, s};
        return 0;
    }
    uint32_t h = s / 2;
    return wg_quad_split(g, x, y, h, e, out, worst) ||
           wg_quad_split(g, x + h, y, h, e, out, worst) ||
           wg_quad_split(g, x, y + h, h, e, out, worst) ||
           wg_quad_split(g, x + h, y + h, h, e, out, worst)
               ? -1 : 0;
}

/* A single cell as the grid's two triangles; a block with only its corners
 * on its border as two; else a fan around its centre through every block
 * corner on its border, west side down, south side east, east side up,
 * north side west. */
int wg_quad_triangles(const wg_quad_blocks *blocks, size_t count, uint32_t n,
                      uint32_t **idx_out, size_t *ni_out)
{
    uint8_t *mark = calloc(wg_cells(n), 1);
    size_t cap = 0, ni = 0;
    uint32_t *idx = NULL;
    if (!mark)
        return -1;
    for (size_t t = 0; t < count; t++)
        for (size_t i = 0; i < blocks[t].n; i++) {
            wg_quad_block k = blocks[t].b[i];
            size_t a = (size_t)k.y * n + k.x, c = a + (size_t)k.s * n;
            mark[a] = mark[a + k.s] = mark[c] = mark[c + k.s] = 1;
        }
    for (size_t t = 0; t < count; t++)
        for (size_t i = 0; i < blocks[t].n; i++) {
            wg_quad_block k = blocks[t].b[i];
            /* The border, as grid points in order, and how many. */
            size_t ring = 0;
            for (uint32_t s = 0; s < k.s; s++)
                ring += mark[(size_t)(k.y + s) * n + k.x] +
                        mark[(size_t)(k.y + k.s) * n + k.x + s] +
                        mark[(size_t)(k.y + k.s - s) * n + k.x + k.s] +
                        mark[(size_t)k.y * n + k.x + k.s - s];
            size_t need = ring == 4 ? 6 : 3 * ring;
            if (ni + need > cap) {
                size_t c2 = (ni + need) * 2;
                uint32_t *p = realloc(idx, c2 * sizeof *p);
                if (!p) {
                    free(idx);
                    free(mark);
                    return -1;
                }
                idx = p, cap = c2;
            }
            size_t a = (size_t)k.y * n + k.x;
            if (ring == 4) {
                uint32_t b = (uint32_t)(a + k.s), c = (uint32_t)(a + (size_t)k.s * n);
                uint32_t d = c + k.s;
                idx[ni++] = (uint32_t)a, idx[ni++] = c, idx[ni++] = b;
                idx[ni++] = b, idx[ni++] = c, idx[ni++] = d;
                continue;
            }
            uint32_t mid = (uint32_t)(a + (size_t)(k.s / 2) * n + k.s / 2);
            uint32_t first = UINT32_MAX, prev = UINT32_MAX;
            for (int side = 0; side < 4; side++)
                for (uint32_t s = 0; s < k.s; s++) {
                    size_t g = side == 0 ? (size_t)(k.y + s) * n + k.x
                             : side == 1 ? (size_t)(k.y + k.s) * n + k.x + s
                             : side == 2 ? (size_t)(k.y + k.s - s) * n + k.x + k.s
                                         : (size_t)k.y * n + k.x + k.s - s;
                    if (!mark[g])
                        continue;
                    if (prev != UINT32_MAX) {
                        idx[ni++] = mid, idx[ni++] = prev;
                        idx[ni++] = (uint32_t)g;
                    } else {
                        first = (uint32_t)g;
                    }
                    prev = (uint32_t)g;
                }
            idx[ni++] = mid, idx[ni++] = prev, idx[ni++] = first;
        }
    free(mark);
    *idx_out = idx;
    *ni_out = ni;
    return 0;
}
