/* gltf.c: the binary glTF 2.0 writer (gltf.h) and the simplification of
 * its meshes.
 *
 * The meshes' attributes and indices are made, on every core, straight into
 * the buffer that becomes the BIN chunk, while the texture is made and
 * compressed into memory on another thread.  The GLB's header and JSON
 * hold the PNG's size, so a regular file gets everything before the PNG
 * as soon as the meshes are done, with room for those numbers, which are
 * written in once the PNG is; a pipe gets the file in order at the end.
 * Either way, a few large fwrite calls.  Measured: see wg_gltf_save(). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gltf.h"
#include "obj.h"
#include "outfile.h"
#include "png.h"
#include "render.h"
#include "stats.h"

/* GLB is little-endian; the buffers are the host's floats and integers. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the GLB writer stores host-order numbers: little-endian hosts only"
#endif

#define GLTF_FLOAT 5126
#define GLTF_UINT 5125
#define GLTF_ARRAY_BUFFER 34962
#define GLTF_ELEMENT_ARRAY_BUFFER 34963

/* --- the meshes ------------------------------------------------------------ */

typedef struct gltf_mesh {
    size_t nv, ni;     /* vertices, indices (0: no mesh) */
    uint32_t *grid;    /* vertex k's grid point; NULL: grid point k */
    uint32_t *idx;     /* NULL: every cell's two triangles, made in place */
    float min[3], max[3];
    size_t pos, nrm, uv, ind; /* byte offsets in the BIN chunk */
} gltf_mesh;

typedef struct gltf_job {
    const wg_fields *f;
    float sea, error;
    const char *params;
    uint32_t n, parts;
    float *shown;      /* wg_water_shown() at every vertex; NULL: no water */
    gltf_mesh mesh[2]; /* terrain, water */
    uint8_t *bin;      /* the meshes' part of the BIN chunk */
    size_t bin_len;
    float pmin[WG_THREADS_MAX][2][3], pmax[WG_THREADS_MAX][2][3];
    /* Simplifying: tasks 0 .. tiles-1 are the terrain's tiles, then the
     * water's. */
    uint32_t tiles_x;
    size_t tiles, tasks;
    atomic_size_t next;
    uint32_t **tri;  /* each terrain tile's triangles */
    size_t *tri_len;
    float *tri_err;  /* each task's largest height difference */
    struct gltf_blocks *blocks; /* each water tile's blocks */
    float *level;    /* the water's level at every grid point */
    uint32_t *wet_sum; /* wet cells north-west of each grid point */
    atomic_int nomem;
    /* The texture, compressed. */
    char *png;
    size_t png_len;
    int png_rc;
    char png_why[WG_ERR_LEN];
    int geo_rc;
    char geo_why[WG_ERR_LEN];
    /* The file: its JSON (the numbers that depend on the PNG's size at
     * at_img and at_buf, 10 characters each), and whether the part before
     * the PNG went out while the texture was still being made. */
    FILE *fp;
    off_t start;
    int seekable, sent;
    char *js;
    size_t js_len, at_img, at_buf;
    double got; /* simplified: the largest height difference left */
} gltf_job;

static inline int gltf_wet(const float *shown, size_t k)
{
    return shown[k] > WG_WATER_MIN;
}

/* Is the cell whose north-west corner is grid point k under water: a
 * corner deeper than WG_WATER_MIN (as the OBJ's water object)? */
static inline int gltf_wet_cell(const float *shown, size_t k, uint32_t n)
{
    return gltf_wet(shown, k) || gltf_wet(shown, k + 1) ||
           gltf_wet(shown, k + n) || gltf_wet(shown, k + n + 1);
}

/* The water's level at vertex (x, y): obj.c's, so the two exports' water
 * surfaces coincide. */
static float gltf_level(const wg_fields *f, const float *shown, uint32_t x,
                        uint32_t y)
{
    size_t row = (size_t)y * f->n;
    return wg_obj_level(f->height + row, shown + row, f->n, x, y > 0,
                        y + 1 < f->n);
}

/* Grid point (x, y) of mesh m (0 terrain, 1 water) in world space. */
static inline void gltf_point(const gltf_job *j, int m, uint32_t x, uint32_t y,
                              float sp, float p[3])
{
    p[0] = wg_block_coord(x, sp);
    p[1] = m ? gltf_level(j->f, j->shown, x, y)
             : j->f->height[(size_t)y * j->n + x];
    p[2] = wg_block_coord(y, sp);
}

/* Rows [y0, y1) of a part's share of rows. */
static void gltf_share(size_t count, uint32_t parts, uint32_t part, size_t *a,
                       size_t *b)
{
    *a = count * part / parts;
    *b = count * (part + 1) / parts;
}

static void gltf_shown_part(void *ctx, uint32_t part)
{
    gltf_job *j = ctx;
    size_t y0, y1;
    gltf_share(j->n, j->parts, part, &y0, &y1);
    for (size_t y = y0; y < y1; y++)
        for (uint32_t x = 0; x < j->n; x++)
            j->shown[y * j->n + x] =
                wg_water_shown(j->f, j->sea, x, (uint32_t)y);
}

/* The two triangles of the cell whose north-west corner is grid point a,
 * counter-clockwise seen from +Y as the OBJ's: (a, c, b) and (b, c, d)
 * with b east of a, c south of a, d south-east. */
static inline uint32_t *gltf_cell(uint32_t *p, uint32_t a, uint32_t n)
{
    uint32_t b = a + 1, c = a + n, d = c + 1;
    p[0] = a, p[1] = c, p[2] = b;
    p[3] = b, p[4] = c, p[5] = d;
    return p + 6;
}

/* Number the grid points m->idx uses in grid order (so vertices stay in
 * rows, as in the OBJ), and rewrite the indices with the new numbers.
 * Returns 0, or -1 when out of memory. */
static int gltf_compact(gltf_mesh *m, uint32_t n)
{
    size_t cells = wg_cells(n), nv = 0;
    uint32_t *map = malloc(cells * sizeof *map);
    if (!map)
        return -1;
    memset(map, 0xff, cells * sizeof *map);
    for (size_t i = 0; i < m->ni; i++)
        map[m->idx[i]] = 0;
    for (size_t g = 0; g < cells; g++)
        nv += map[g] == 0;
    m->grid = malloc((nv ? nv : 1) * sizeof *m->grid);
    if (!m->grid) {
        free(map);
        return -1;
    }
    nv = 0;
    for (size_t g = 0; g < cells; g++)
        if (map[g] == 0) {
            m->grid[nv] = (uint32_t)g;
            map[g] = (uint32_t)nv++;
        }
    for (size_t i = 0; i < m->ni; i++)
        m->idx[i] = map[m->idx[i]];
    m->nv = nv;
    free(map);
    return 0;
}

/* The water's triangles over every wet cell, as grid points.  Returns 0,
 * or -1 when out of memory. */
static int gltf_water_cells(gltf_job *j)
{
    uint32_t n = j->n;
    size_t wet = 0;
    for (size_t y = 0; y + 1 < n; y++)
        for (size_t x = 0; x + 1 < n; x++)
            wet += gltf_wet_cell(j->shown, y * n + x, n);
    gltf_mesh *m = &j->mesh[1];
    m->ni = 6 * wet;
    if (!wet)
        return 0;
    uint32_t *p = m->idx = malloc(m->ni * sizeof *m->idx);
    if (!p)
        return -1;
    for (size_t y = 0; y + 1 < n; y++)
        for (size_t x = 0; x + 1 < n; x++)
            if (gltf_wet_cell(j->shown, y * n + x, n))
                p = gltf_cell(p, (uint32_t)(y * n + x), n);
    return gltf_compact(m, n);
}

/* --- simplifying -------------------------------------------------------------
 * The terrain, tile by tile (WG_GLTF_TILE cells a side, on every core): a
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
 *
 * The water: a quadtree of square blocks of wet cells; a block whose levels
 * lie within E/2 of a plane is one fan around its centre through every
 * block corner on its border, so blocks of different sizes meet without a
 * crack and every water vertex is within E of the surface. */

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
 * Exact: a tile's coordinates are at most WG_GLTF_TILE. */
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

/* Memory for one tile of at most WG_GLTF_TILE cells a side. */
typedef struct tin_mem {
    tin m;
    float *z, *line;
    uint8_t *keep;
} tin_mem;

static int tin_alloc(tin_mem *a)
{
    size_t T = WG_GLTF_TILE, pts = (T + 1) * (T + 1), tris = 2 * pts;
    memset(a, 0, sizeof *a);
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
    return a->z && a->line && a->keep && a->m.t && a->m.err && a->m.at &&
                   a->m.heap && a->m.hpos && a->m.stack && a->m.dirty &&
                   a->m.is_dirty ? 0 : -1;
}

static void tin_release(tin_mem *a)
{
    free(a->z), free(a->line), free(a->keep);
    free(a->m.t), free(a->m.err), free(a->m.at), free(a->m.heap);
    free(a->m.hpos), free(a->m.stack), free(a->m.dirty), free(a->m.is_dirty);
}

/* Simplify the terrain of the tile at grid point (x0, y0), w x h cells,
 * into triangles of grid points (seen from above counter-clockwise) at
 * *out, *len indices.  Returns the largest height difference left, or -1
 * when out of memory. */
static double tin_tile(tin_mem *a, const wg_fields *f, uint32_t x0, uint32_t y0,
                       uint32_t w, uint32_t h, float e, uint32_t **out,
                       size_t *len)
{
    uint32_t n = f->n, s = w + 1;
    tin *m = &a->m;
    m->w = w, m->h = h, m->stride = s, m->e = e, m->z = a->z;
    m->nt = m->hn = m->nd = 0;
    for (uint32_t y = 0; y <= h; y++)
        memcpy(a->z + (size_t)y * s, f->height + (size_t)(y0 + y) * n + x0,
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

/* Water blocks: (x, y) the north-west grid point, s cells a side. */
typedef struct gltf_block {
    uint32_t x, y, s;
} gltf_block;

typedef struct gltf_blocks {
    gltf_block *b;
    size_t n, cap;
} gltf_blocks;

/* Wet cells in [x, x+s) x [y, y+s), from the summed table (n x n). */
static inline uint32_t gltf_wet_in(const uint32_t *sum, uint32_t n, uint32_t x,
                                   uint32_t y, uint32_t s)
{
    size_t a = (size_t)y * n + x, b = (size_t)(y + s) * n + x;
    return sum[b + s] - sum[b] - sum[a + s] + sum[a];
}

/* Is every level of block (x, y, s) within e/2 of the least-squares
 * plane?  Updates *worst with twice the largest distance. */
static int gltf_block_flat(const gltf_job *j, uint32_t x0, uint32_t y0,
                           uint32_t s, float e, double *worst)
{
    uint32_t n = j->n;
    double c = s / 2.0, sh = 0, su = 0, sv = 0, uu = 0;
    for (uint32_t y = 0; y <= s; y++)
        for (uint32_t x = 0; x <= s; x++) {
            double l = j->level[(size_t)(y0 + y) * n + x0 + x];
            sh += l, su += (x - c) * l, sv += (y - c) * l;
        }
    for (uint32_t i = 0; i <= s; i++)
        uu += (i - c) * (i - c);
    uu *= s + 1;
    double a = sh / ((s + 1.0) * (s + 1.0)), b = su / uu, d = sv / uu, far = 0;
    for (uint32_t y = 0; y <= s; y++)
        for (uint32_t x = 0; x <= s; x++) {
            double l = j->level[(size_t)(y0 + y) * n + x0 + x];
            far = fmax(far, fabs(l - (a + b * (x - c) + d * (y - c))));
            if (far > e / 2.0)
                return 0;
        }
    *worst = fmax(*worst, 2 * far);
    return 1;
}

/* The blocks of the quadtree under block (x, y, s): whole where flat,
 * single wet cells where not. */
static int gltf_block_split(const gltf_job *j, uint32_t x, uint32_t y,
                            uint32_t s, gltf_blocks *out, double *worst)
{
    uint32_t n = j->n;
    if (x >= n - 1 || y >= n - 1)
        return 0;
    int inside = x + s <= n - 1 && y + s <= n - 1;
    if (inside && gltf_wet_in(j->wet_sum, n, x, y, s) == 0)
        return 0;
    if (s == 1 || (inside && gltf_wet_in(j->wet_sum, n, x, y, s) == s * s &&
                   gltf_block_flat(j, x, y, s, j->error, worst))) {
        if (out->n == out->cap) {
            size_t cap = out->cap * 2 + 64;
            gltf_block *b = realloc(out->b, cap * sizeof *b);
            if (!b)
                return -1;
            out->b = b, out->cap = cap;
        }
        out->b[out->n++] = (gltf_block){x, y, s};
        return 0;
    }
    uint32_t h = s / 2;
    return gltf_block_split(j, x, y, h, out, worst) ||
           gltf_block_split(j, x + h, y, h, out, worst) ||
           gltf_block_split(j, x, y + h, h, out, worst) ||
           gltf_block_split(j, x + h, y + h, h, out, worst)
               ? -1 : 0;
}

/* Simplify tiles until none is left: tasks 0 .. tiles-1 are the terrain's
 * tiles, then the water's top blocks. */
static void gltf_tile_part(void *ctx, uint32_t part)
{
    (void)part;
    gltf_job *j = ctx;
    uint32_t n = j->n, T = WG_GLTF_TILE;
    tin_mem mem;
    int have = 0;
    while (!j->nomem) {
        size_t task = atomic_fetch_add(&j->next, 1);
        if (task >= j->tasks)
            break;
        size_t tile = task % j->tiles;
        uint32_t x0 = (uint32_t)(tile % j->tiles_x) * T;
        uint32_t y0 = (uint32_t)(tile / j->tiles_x) * T;
        double worst = 0.0;
        if (task < j->tiles) {
            if (!have && (have = 1, tin_alloc(&mem) != 0)) {
                j->nomem = 1;
                break;
            }
            uint32_t w = n - 1 - x0 < T ? n - 1 - x0 : T;
            uint32_t h = n - 1 - y0 < T ? n - 1 - y0 : T;
            worst = tin_tile(&mem, j->f, x0, y0, w, h, j->error, &j->tri[task],
                             &j->tri_len[task]);
        } else {
            gltf_blocks *b = &j->blocks[tile];
            if (gltf_block_split(j, x0, y0, T, b, &worst) != 0)
                worst = -1.0;
        }
        if (worst < 0.0)
            j->nomem = 1;
        j->tri_err[task] = (float)worst;
    }
    if (have)
        tin_release(&mem);
}

/* The water's triangles from its blocks, as grid points: a single cell as
 * the grid's two; a block with only its corners on its border as two; else
 * a fan around its centre through every block corner on its border, west
 * side down, south side east, east side up, north side west. */
static int gltf_water_blocks(gltf_job *j)
{
    uint32_t n = j->n;
    uint8_t *mark = calloc(wg_cells(n), 1);
    size_t cap = 0, ni = 0;
    uint32_t *idx = NULL;
    if (!mark)
        return -1;
    for (size_t t = 0; t < j->tiles; t++)
        for (size_t i = 0; i < j->blocks[t].n; i++) {
            gltf_block k = j->blocks[t].b[i];
            size_t a = (size_t)k.y * n + k.x, c = a + (size_t)k.s * n;
            mark[a] = mark[a + k.s] = mark[c] = mark[c + k.s] = 1;
        }
    for (size_t t = 0; t < j->tiles; t++)
        for (size_t i = 0; i < j->blocks[t].n; i++) {
            gltf_block k = j->blocks[t].b[i];
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
    j->mesh[1].idx = idx;
    j->mesh[1].ni = ni;
    return ni ? gltf_compact(&j->mesh[1], n) : 0;
}

static void gltf_level_part(void *ctx, uint32_t part)
{
    gltf_job *j = ctx;
    size_t y0, y1;
    gltf_share(j->n, j->parts, part, &y0, &y1);
    for (size_t y = y0; y < y1; y++)
        for (uint32_t x = 0; x < j->n; x++)
            j->level[y * j->n + x] = gltf_level(j->f, j->shown, x, (uint32_t)y);
}

/* Simplify both meshes into j->mesh[].  Returns 0, or -1 when out of
 * memory. */
static int gltf_simplify_all(gltf_job *j)
{
    uint32_t n = j->n, T = WG_GLTF_TILE;
    j->tiles_x = (n - 1 + T - 1) / T;
    j->tiles = (size_t)j->tiles_x * j->tiles_x;
    j->tasks = j->tiles * (j->shown ? 2 : 1);
    j->tri = calloc(j->tiles, sizeof *j->tri);
    j->tri_len = calloc(j->tiles, sizeof *j->tri_len);
    j->tri_err = calloc(j->tasks, sizeof *j->tri_err);
    j->blocks = calloc(j->tiles, sizeof *j->blocks);
    int rc = -1;
    if (!j->tri || !j->tri_len || !j->tri_err || !j->blocks)
        goto out;
    if (j->shown) {
        /* The water's levels, and a summed table of its wet cells. */
        j->level = malloc(wg_cells(n) * sizeof *j->level);
        j->wet_sum = malloc(wg_cells(n) * sizeof *j->wet_sum);
        if (!j->level || !j->wet_sum)
            goto out;
        wg_parallel(j->parts, gltf_level_part, j);
        for (uint32_t y = 0; y < n; y++)
            for (uint32_t x = 0; x < n; x++) {
                size_t k = (size_t)y * n + x;
                j->wet_sum[k] = !x || !y ? 0
                    : j->wet_sum[k - 1] + j->wet_sum[k - n] - j->wet_sum[k - n - 1] +
                      (uint32_t)gltf_wet_cell(j->shown, k - n - 1, n);
            }
    }
    atomic_store(&j->next, 0);
    j->nomem = 0;
    wg_parallel(j->parts, gltf_tile_part, j);
    if (j->nomem)
        goto out;
    for (size_t t = 0; t < j->tasks; t++)
        j->got = fmax(j->got, j->tri_err[t]);
    gltf_mesh *g = &j->mesh[0];
    for (size_t t = 0; t < j->tiles; t++)
        g->ni += j->tri_len[t];
    uint32_t *p = g->idx = malloc(g->ni * sizeof *g->idx);
    if (!p)
        goto out;
    for (size_t t = 0; t < j->tiles; t++) {
        memcpy(p, j->tri[t], j->tri_len[t] * sizeof *p);
        p += j->tri_len[t];
    }
    if (gltf_compact(g, n) != 0 || (j->shown && gltf_water_blocks(j) != 0))
        goto out;
    rc = 0;
out:
    for (size_t t = 0; t < j->tiles; t++) {
        if (j->tri)
            free(j->tri[t]);
        if (j->blocks)
            free(j->blocks[t].b);
    }
    free(j->tri);
    free(j->tri_len);
    free(j->tri_err);
    free(j->blocks);
    j->tri = NULL, j->blocks = NULL;
    return rc;
}

/* Fill a part's share of every mesh's vertices and indices in j->bin. */
static void gltf_fill_part(void *ctx, uint32_t part)
{
    gltf_job *j = ctx;
    uint32_t n = j->n;
    float sp = wg_block_spacing(n);
    uint32_t side = wg_texture_side(n);
    double ts = (double)(side - 1) / (double)(n - 1);
    for (int m = 0; m < 2; m++) {
        gltf_mesh *g = &j->mesh[m];
        float *mn = j->pmin[part][m], *mx = j->pmax[part][m];
        mn[0] = mn[1] = mn[2] = INFINITY;
        mx[0] = mx[1] = mx[2] = -INFINITY;
        if (!g->ni)
            continue;
        size_t k0, k1;
        gltf_share(g->nv, j->parts, part, &k0, &k1);
        float *pos = (float *)(j->bin + g->pos) + 3 * k0;
        float *nrm = (float *)(j->bin + g->nrm) + 3 * k0;
        float *uv = m ? NULL : (float *)(j->bin + g->uv) + 2 * k0;
        for (size_t k = k0; k < k1; k++) {
            size_t gp = g->grid ? g->grid[k] : k;
            uint32_t x = (uint32_t)(gp % n), y = (uint32_t)(gp / n);
            gltf_point(j, m, x, y, sp, pos);
            for (int c = 0; c < 3; c++) {
                mn[c] = pos[c] < mn[c] ? pos[c] : mn[c];
                mx[c] = pos[c] > mx[c] ? pos[c] : mx[c];
            }
            pos += 3;
            if (m) { /* the water is level */
                nrm[0] = 0.0f, nrm[1] = 1.0f, nrm[2] = 0.0f;
            } else {
                /* Unit length to float precision, as glTF asks: the
                 * fields' normals are within a few ulps of it. */
                double a = j->f->nx[gp], b = j->f->ny[gp], c = j->f->nz[gp];
                double len = sqrt(a * a + b * b + c * c);
                if (!(len > 0.0))
                    a = 0.0, b = len = 1.0, c = 0.0;
                nrm[0] = (float)(a / len);
                nrm[1] = (float)(b / len);
                nrm[2] = (float)(c / len);
                /* Texel centres, as the OBJ's; glTF's v = 0 is the top
                 * row of the image, where grid row 0 is. */
                uv[0] = (float)(((double)x * ts + 0.5) / side);
                uv[1] = (float)(((double)y * ts + 0.5) / side);
                uv += 2;
            }
            nrm += 3;
        }
        uint32_t *ind = (uint32_t *)(j->bin + g->ind);
        if (g->idx) {
            size_t i0, i1;
            gltf_share(g->ni / 3, j->parts, part, &i0, &i1);
            memcpy(ind + 3 * i0, g->idx + 3 * i0, 3 * (i1 - i0) * sizeof *ind);
        } else {
            size_t y0, y1;
            gltf_share(n - 1, j->parts, part, &y0, &y1);
            uint32_t *p = ind + y0 * (n - 1) * 6;
            for (size_t y = y0; y < y1; y++)
                for (size_t x = 0; x + 1 < n; x++)
                    p = gltf_cell(p, (uint32_t)(y * n + x), n);
        }
    }
}

/* The meshes, into j->bin.  Returns 0, or -1 with the reason. */
static int gltf_geometry(gltf_job *j, char *err)
{
    uint32_t n = j->n;
    size_t cells = wg_cells(n);
    /* No water, no water mesh (as the OBJ: wg_water_shown is no deeper
     * than the water beside it). */
    size_t any = 0;
    while (any < cells && !(j->f->water[any] > WG_WATER_MIN))
        any++;
    if (any < cells) {
        if (!(j->shown = malloc(cells * sizeof *j->shown)))
            return wg_fail(err, "out of memory");
        wg_parallel(j->parts, gltf_shown_part, j);
    }
    gltf_mesh *t = &j->mesh[0];
    if (j->error > 0.0f) {
        if (gltf_simplify_all(j) != 0)
            return wg_fail(err, "out of memory");
    } else {
        t->nv = cells;
        t->ni = 6 * wg_cells(n - 1);
        if (j->shown && gltf_water_cells(j) != 0)
            return wg_fail(err, "out of memory");
    }
    /* The layout: each mesh's positions, normals, texture coordinates and
     * indices, every one a multiple of 4 bytes long. */
    size_t at = 0;
    for (int m = 0; m < 2; m++) {
        gltf_mesh *g = &j->mesh[m];
        if (!g->ni)
            continue;
        g->pos = at, at += g->nv * 12;
        g->nrm = at, at += g->nv * 12;
        g->uv = at, at += m ? 0 : g->nv * 8;
        g->ind = at, at += g->ni * 4;
    }
    j->bin_len = at;
    /* Over 4 GiB the GLB cannot say its own length. */
    if (at > UINT32_MAX - (1u << 20))
        return wg_fail(err, "a %ux%u glTF would be %.1f GiB, over the format's "
                       "4 GiB: simplify it", n, n, at / 1073741824.0);
    if (!(j->bin = malloc(at ? at : 1)))
        return wg_fail(err, "out of memory for %.1f GiB of meshes",
                       at / 1073741824.0);
    wg_parallel(j->parts, gltf_fill_part, j);
    for (int m = 0; m < 2; m++)
        for (int c = 0; c < 3; c++) {
            j->mesh[m].min[c] = INFINITY, j->mesh[m].max[c] = -INFINITY;
            for (uint32_t p = 0; p < j->parts; p++) {
                j->mesh[m].min[c] = fminf(j->mesh[m].min[c], j->pmin[p][m][c]);
                j->mesh[m].max[c] = fmaxf(j->mesh[m].max[c], j->pmax[p][m][c]);
            }
        }
    return 0;
}

/* The texture, made and compressed into memory. */
static int gltf_texture(gltf_job *j, char *err)
{
    uint32_t side = wg_texture_side(j->n);
    uint8_t *rgb = malloc((size_t)side * side * 3);
    if (!rgb)
        return wg_fail(err, "out of memory for a %ux%u texture", side, side);
    wg_texture_make(j->f, j->sea, side, rgb);
    const wg_png_text text[] = {
        {"Software", "worldgen " WG_VERSION},
        {"worldgen", j->params},
    };
    FILE *ms = open_memstream(&j->png, &j->png_len);
    int rc = ms ? wg_png_write(ms, side, side, 8, 3, rgb, (size_t)side * 3,
                               text, 2, err)
                : wg_fail(err, "out of memory");
    if (ms && fclose(ms) != 0 && rc == 0)
        rc = wg_fail(err, "out of memory");
    free(rgb);
    return rc;
}

static int gltf_send(gltf_job *j, char *err);

/* The geometry on the caller's thread (and on every core from there), the
 * texture on a second. */
static void gltf_halves(void *ctx, uint32_t part)
{
    gltf_job *j = ctx;
    if (part == 1) {
        j->png_rc = gltf_texture(j, j->png_why);
        return;
    }
    j->geo_rc = gltf_geometry(j, j->geo_why);
    if (j->geo_rc == 0)
        j->geo_rc = gltf_send(j, j->geo_why);
}

/* --- the JSON chunk -------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t gltf_utf8(const unsigned char *s)
{
    unsigned c = s[0];
    size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2
               : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    for (size_t i = 1; i < len; i++) {
        unsigned b = s[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
            return 0;
    }
    return len;
}

/* s as a JSON string: escapes, and U+FFFD for bytes that are not UTF-8
 * (a path in the parameters may be in any encoding; JSON must be UTF-8). */
static void gltf_json_str(FILE *js, const char *s)
{
    fputc('"', js);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t len = gltf_utf8(p);
        if (*p == '"' || *p == '\\')
            fprintf(js, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(js, "\\u%04x", *p);
        else if (len)
            fwrite(p, 1, len, js);
        else
            fputs("\\ufffd", js);
        p += len ? len : 1;
    }
    fputc('"', js);
}

/* A float exactly: 17 digits make the double that is the float, which is
 * what a validator compares min and max with. */
static void gltf_json_vec3(FILE *js, const char *key, const float v[3])
{
    fprintf(js, ",\"%s\":[%.17g,%.17g,%.17g]", key, (double)v[0],
            (double)v[1], (double)v[2]);
}

/* The JSON of the file, into a memory buffer (*js_len bytes), but for the
 * PNG's size (see gltf_finish).  Returns 0, or -1 when out of memory. */
static int gltf_json(gltf_job *j, char **js_buf, size_t *js_len)
{
    FILE *js = open_memstream(js_buf, js_len);
    if (!js)
        return -1;
    int water = j->mesh[1].ni > 0;
    fprintf(js, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"worldgen "
                WG_VERSION "\",\"extras\":{\"worldgen\":\"" WG_VERSION
                "\",\"parameters\":");
    gltf_json_str(js, j->params ? j->params : "");
    if (j->error > 0.0f)
        fprintf(js, ",\"simplified\":{\"method\":\"greedy Delaunay insertion "
                    "(terrain), quadtree (water)\",\"max_error\":%.9g,"
                    "\"error\":%.9g,\"tile\":%d}",
                (double)j->error, j->got, WG_GLTF_TILE);
    fprintf(js, "}},\"scene\":0,\"scenes\":[{\"name\":\"world\",\"nodes\":[0%s]}],"
                "\"nodes\":[{\"name\":\"terrain\",\"mesh\":0}%s],",
            water ? ",1" : "", water ? ",{\"name\":\"water\",\"mesh\":1}" : "");
    fprintf(js, "\"meshes\":[{\"name\":\"terrain\",\"primitives\":[{"
                "\"attributes\":{\"POSITION\":0,\"NORMAL\":1,\"TEXCOORD_0\":2},"
                "\"indices\":3,\"material\":0}]}%s],",
            water ? ",{\"name\":\"water\",\"primitives\":[{\"attributes\":"
                    "{\"POSITION\":4,\"NORMAL\":5},\"indices\":6,"
                    "\"material\":1}]}" : "");
    /* The terrain: its texture as the base colour, matte; the water: the
     * OBJ's Kd and d, glossy. */
    fprintf(js, "\"materials\":[{\"name\":\"terrain\",\"pbrMetallicRoughness\":"
                "{\"baseColorTexture\":{\"index\":0},\"metallicFactor\":0,"
                "\"roughnessFactor\":0.9}}%s],",
            water ? ",{\"name\":\"water\",\"pbrMetallicRoughness\":{"
                    "\"baseColorFactor\":[0.02,0.12,0.22,0.6],"
                    "\"metallicFactor\":0,\"roughnessFactor\":0.05},"
                    "\"alphaMode\":\"BLEND\"}" : "");
    int image_view = water ? 7 : 4;
    fprintf(js, "\"textures\":[{\"sampler\":0,\"source\":0}],"
                "\"samplers\":[{\"magFilter\":9729,\"minFilter\":9987,"
                "\"wrapS\":33071,\"wrapT\":33071}],"
                "\"images\":[{\"name\":\"albedo\",\"bufferView\":%d,"
                "\"mimeType\":\"image/png\"}],", image_view);
    /* Accessor i is bufferView i: positions, normals, (texture
     * coordinates,) indices of each mesh. */
    fputs("\"accessors\":[", js);
    int view = 0;
    for (int m = 0; m <= water; m++) {
        const gltf_mesh *g = &j->mesh[m];
        fprintf(js, "%s{\"bufferView\":%d,\"componentType\":%d,\"count\":%zu,"
                    "\"type\":\"VEC3\"", m ? "," : "", view++, GLTF_FLOAT, g->nv);
        gltf_json_vec3(js, "min", g->min);
        gltf_json_vec3(js, "max", g->max);
        fprintf(js, "},{\"bufferView\":%d,\"componentType\":%d,\"count\":%zu,"
                    "\"type\":\"VEC3\"}", view++, GLTF_FLOAT, g->nv);
        if (!m)
            fprintf(js, ",{\"bufferView\":%d,\"componentType\":%d,\"count\":%zu,"
                        "\"type\":\"VEC2\"}", view++, GLTF_FLOAT, g->nv);
        fprintf(js, ",{\"bufferView\":%d,\"componentType\":%d,\"count\":%zu,"
                    "\"type\":\"SCALAR\"}", view++, GLTF_UINT, g->ni);
    }
    fputs("],\"bufferViews\":[", js);
    for (int m = 0; m <= water; m++) {
        const gltf_mesh *g = &j->mesh[m];
        const char *sep = m ? "," : "";
        fprintf(js, "%s{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu,"
                    "\"target\":%d}", sep, g->pos, g->nv * 12, GLTF_ARRAY_BUFFER);
        fprintf(js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu,"
                    "\"target\":%d}", g->nrm, g->nv * 12, GLTF_ARRAY_BUFFER);
        if (!m)
            fprintf(js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu,"
                        "\"target\":%d}", g->uv, g->nv * 8, GLTF_ARRAY_BUFFER);
        fprintf(js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu,"
                    "\"target\":%d}", g->ind, g->ni * 4,
                GLTF_ELEMENT_ARRAY_BUFFER);
    }
    /* The PNG last: the meshes' offsets do not depend on its size, and
     * the two numbers that do are written later, 10 characters wide. */
    fprintf(js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":", j->bin_len);
    long img = ftell(js);
    fprintf(js, "%10u}],\"buffers\":[{\"byteLength\":", 0u);
    long buf = ftell(js);
    fprintf(js, "%10u}]}", 0u);
    /* The chunk is padded with spaces to 4 bytes, as GLB asks. */
    long end = ftell(js);
    fputs(&"   "[3 - (4 - end % 4) % 4], js);
    if (fclose(js) != 0 || img < 0 || buf < 0 || end < 0)
        return -1;
    j->at_img = (size_t)img, j->at_buf = (size_t)buf;
    return 0;
}

/* --- the file -------------------------------------------------------------- */

static void gltf_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

int wg_gltf_check(uint32_t n, float max_error, char *err)
{
    if (!(max_error >= 0.0f && max_error <= WG_GLTF_ERROR_MAX))
        return wg_fail(err, "the simplification error %g is not in 0..%g",
                       (double)max_error, (double)WG_GLTF_ERROR_MAX);
    /* Every grid vertex is 32 bytes and every cell 24 bytes of indices. */
    double least = 32.0 * wg_cells(n) + 24.0 * wg_cells(n - 1);
    if (max_error == 0.0f && least > (double)UINT32_MAX)
        return wg_fail(err, "a %ux%u glTF would be over %.1f GiB, past the "
                       "format's 4 GiB: simplify it", n, n, least / 1073741824.0);
    return 0;
}

/* The header, the JSON and the meshes, with the PNG's size still unknown
 * (zero) where it counts, when the file can be patched afterwards
 * (gltf_finish): so they are written while the texture is compressed.
 * Returns 0, or -1 with the reason. */
static int gltf_send(gltf_job *j, char *err)
{
    if (gltf_json(j, &j->js, &j->js_len) != 0)
        return wg_fail(err, "out of memory");
    if (!j->seekable)
        return 0;
    uint8_t head[20], bin_head[8] = {0, 0, 0, 0, 'B', 'I', 'N', 0};
    memcpy(head, "glTF\2\0\0\0\0\0\0\0", 12);
    gltf_u32(head + 12, (uint32_t)(j->js_len));
    memcpy(head + 16, "JSON", 4);
    errno = 0;
    if (fwrite(head, 1, 20, j->fp) != 20 ||
        fwrite(j->js, 1, j->js_len, j->fp) != j->js_len ||
        fwrite(bin_head, 1, 8, j->fp) != 8 ||
        fwrite(j->bin, 1, j->bin_len, j->fp) != j->bin_len)
        return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
    j->sent = 1;
    return 0;
}

/* n as the 10 characters the JSON keeps for it. */
static void gltf_number(char *p, uint32_t n)
{
    char tmp[16];
    snprintf(tmp, sizeof tmp, "%10u", n);
    memcpy(p, tmp, 10);
}

/* Put the numbers that depend on the PNG's size, 'at' bytes into the file,
 * in place. */
static int gltf_patch(gltf_job *j, size_t at, const void *p, size_t len)
{
    return fseeko(j->fp, j->start + (off_t)at, SEEK_SET) == 0 &&
           fwrite(p, 1, len, j->fp) == len ? 0 : -1;
}

/* The rest of the file once the PNG is made: all of it, or the PNG and the
 * numbers its size changes.  Returns 0, or -1 with the reason. */
static int gltf_finish(gltf_job *j, uint32_t *total_out, char *err)
{
    static const uint8_t zeros[4] = {0};
    size_t bin = j->bin_len + j->png_len, bin_pad = (4 - bin % 4) % 4;
    size_t total = 12 + 8 + j->js_len + 8 + bin + bin_pad;
    if (total > UINT32_MAX)
        return wg_fail(err, "the glTF would be %.1f GiB, over the format's "
                       "4 GiB: simplify it", total / 1073741824.0);
    uint8_t head[20], bin_head[8];
    memcpy(head, "glTF", 4);
    gltf_u32(head + 4, 2);
    gltf_u32(head + 8, (uint32_t)total);
    gltf_u32(head + 12, (uint32_t)(j->js_len));
    memcpy(head + 16, "JSON", 4);
    gltf_u32(bin_head, (uint32_t)(bin + bin_pad));
    memcpy(bin_head + 4, "BIN", 4);
    gltf_number(j->js + j->at_img, (uint32_t)j->png_len);
    gltf_number(j->js + j->at_buf, (uint32_t)bin);
    errno = 0;
    int bad;
    if (j->sent) {
        bad = fwrite(j->png, 1, j->png_len, j->fp) != j->png_len ||
              fwrite(zeros, 1, bin_pad, j->fp) != bin_pad ||
              gltf_patch(j, 8, head + 8, 4) != 0 ||
              gltf_patch(j, 20 + j->at_img, j->js + j->at_img, 10) != 0 ||
              gltf_patch(j, 20 + j->at_buf, j->js + j->at_buf, 10) != 0 ||
              gltf_patch(j, 20 + j->js_len, bin_head, 4) != 0 ||
              fseeko(j->fp, 0, SEEK_END) != 0;
    } else {
        bad = fwrite(head, 1, 20, j->fp) != 20 ||
              fwrite(j->js, 1, j->js_len, j->fp) != j->js_len ||
              fwrite(bin_head, 1, 8, j->fp) != 8 ||
              fwrite(j->bin, 1, j->bin_len, j->fp) != j->bin_len ||
              fwrite(j->png, 1, j->png_len, j->fp) != j->png_len ||
              fwrite(zeros, 1, bin_pad, j->fp) != bin_pad;
    }
    if (bad || ferror(j->fp))
        return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
    *total_out = (uint32_t)total;
    return 0;
}

/* Can the file be written out of order: a regular file, not in append
 * mode (every write would go to its end)? */
static int gltf_seekable(FILE *fp, off_t *start)
{
    struct stat st;
    int fd = fileno(fp), fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);
    *start = ftello(fp);
    return fd >= 0 && fl >= 0 && !(fl & O_APPEND) && fstat(fd, &st) == 0 &&
           S_ISREG(st.st_mode) && *start >= 0;
}

int wg_gltf_write(FILE *fp, const wg_fields *f, float sea, const char *params,
                  float max_error, wg_gltf_stats *stats, char *err)
{
    uint32_t n = f->n;
    if (wg_gltf_check(n, max_error, err) != 0)
        return -1;
    long cpus = wg_cpus();
    gltf_job *j = calloc(1, sizeof *j);
    if (!j)
        return wg_fail(err, "out of memory");
    j->f = f, j->sea = sea, j->error = max_error, j->n = n;
    j->params = params ? params : "";
    j->parts = cpus < 1 ? 1 : cpus > WG_THREADS_MAX ? WG_THREADS_MAX
                                                    : (uint32_t)cpus;
    j->fp = fp;
    j->seekable = gltf_seekable(fp, &j->start);
    int rc = -1;
    uint32_t total = 0;
    wg_parallel(2, gltf_halves, j);
    if (j->geo_rc != 0 || j->png_rc != 0) {
        snprintf(err, WG_ERR_LEN, "%s", j->geo_rc ? j->geo_why : j->png_why);
        goto out;
    }
    if (gltf_finish(j, &total, err) != 0)
        goto out;
    if (stats) {
        for (int m = 0; m < 2; m++) {
            stats->vertices[m] = j->mesh[m].ni ? j->mesh[m].nv : 0;
            stats->triangles[m] = j->mesh[m].ni / 3;
        }
        stats->bytes = total;
        stats->error = j->got;
    }
    rc = 0;
out:
    for (int m = 0; m < 2; m++) {
        free(j->mesh[m].grid);
        free(j->mesh[m].idx);
    }
    free(j->shown);
    free(j->level);
    free(j->wet_sum);
    free(j->bin);
    free(j->png);
    free(j->js);
    free(j);
    return rc;
}

/* Measured on the 2-core CI machine (busy: medians of 5, --hydraulic 0):
 * at --size 512 the GLB (16.6 MB) in 0.08 s, the OBJ (58 MB in its three
 * files) in 0.16 s; at 2048, 261 MB in 1.7 s against 1017 MB in 3.7 s,
 * and simplified within 1 mm, 13 MB (262k of 8.4M terrain triangles) in
 * 1.4 s.  The texture (made and compressed: 0.7 s at 2048, the same as the
 * OBJ's) is the longest part of the full grid's; the greedy insertion's
 * scans of its triangles the longest of a simplified one. */
int wg_gltf_save(const char *path, const wg_fields *f, float sea,
                 const char *params, float max_error, wg_gltf_stats *stats,
                 char *err)
{
    char why[WG_ERR_LEN], shown[WG_PATH_SHOWN + 1];
    wg_outfile out = {0}; /* a zeroed one aborts as a no-op */
    if (wg_outfile_open(&out, path, why) != 0 ||
        wg_gltf_write(out.fp, f, sea, params, max_error, stats, why) != 0 ||
        wg_outfile_commit(&out, why) != 0) {
        wg_outfile_abort(&out);
        /* A long path elided in the middle, so the reason fits whole. */
        return wg_fail(err, "'%s': %s", wg_outfile_shown(path, shown), why);
    }
    return 0;
}
