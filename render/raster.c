/* raster.c: the Z-buffer rasteriser: the closed terrain block's triangles
 * and the water's over it into a visibility buffer of 64-bit keys
 * (render.h says what a key holds).
 *
 * Positions are snapped to 1/256 of a sample and the coverage test is done
 * on exact 64-bit integer edge functions with a tie rule that gives a pixel
 * on an edge shared by two triangles to exactly one of them, so the mesh is
 * watertight: no sample falls through a crack or is drawn twice.
 *
 * The winding rule.  The sign of a triangle's screen area is computed once;
 * a front face has negative area (y runs down the screen; camera.c).  That
 * one sign decides the cull, and the same sign orders the vertices for the
 * coverage test, so the test can never disagree with the cull.  The block is
 * closed (surface, skirts and floor), so from any camera outside it every
 * sample a back face covers is covered nearer by a front face: --no-cull
 * draws the back faces and the Z-buffer throws all of them away again, and
 * the picture is byte-identical (tests/test_render.c checks it, from below
 * the horizon too).  On a depth tie the key prefers the front face, so
 * even a sample exactly on a silhouette edge, where the front and the back
 * face meet at one depth, goes to the face the cull keeps.
 *
 * A triangle that crosses the near plane or the guard band is clipped,
 * each edge cut from the same end whichever triangle walks it, and a cut
 * point that rounds to a hair nearer than the near plane is put back on it:
 * the clipped triangle then meets its neighbours exactly (dropping it left
 * the sky showing between the floor and a skirt from close cameras).
 *
 * A triangle is rejected by its box of sample centres first (at --size 4096
 * most fall between samples), then by its area; the swap that orders a front
 * face's vertices is a pair of selects, not a branch, since at a pixel a
 * triangle the sign is as good as random.
 *
 * Where the time went at --size 512 (a triangle covers about two samples,
 * a quarter of those that pass the box cover none): per triangle, not per
 * sample.  So a surface cell whose four vertices' box holds no sample
 * centre of the strip is skipped before either triangle is set up (at
 * 512 four cells in ten; most of them at 4096); the depth's setup (a
 * double division) waits until a sample is found covered; and a box
 * wider than a few samples (a skirt's column, a spike of the field seen
 * from the side) finds each row's covered run from the edge functions
 * (raster_wide) instead of testing every sample.  Each gives the same
 * samples the same keys, to the bit.  Where the CPU has AVX2 (wg_wide),
 * the surface's triangles are queued and drawn eight at a time
 * (raster_tri8, below), the same keys again. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "wide.h"

#define RASTER_ONE (1 << WG_SUBPIXEL_BITS)
#define RASTER_HALF (RASTER_ONE / 2)
#define RASTER_OUT INT32_MIN /* sentinel: this vertex needs clipping */

/* The guard band, in samples from the picture's centre.  Vertices inside
 * it are drawn directly; a triangle with a vertex outside it, or behind the
 * near plane, is clipped first.  2^20 samples are 2^28 in fixed point, so
 * edge-function products stay below 2^60 and fit in int64. */
#define RASTER_GUARD 1048576.0f
/* Clip a little inside the guard band, so that a clipped vertex's rounding
 * never takes it back outside. */
#define RASTER_CLIP (0.99f * RASTER_GUARD)

uint64_t wg_block_surface(uint32_t n)
{
    return 2 * (uint64_t)(n - 1) * (n - 1);
}

uint64_t wg_block_skirts(uint32_t n)
{
    return wg_block_surface(n) + 8 * (uint64_t)(n - 1);
}

uint64_t wg_block_triangles(uint32_t n)
{
    return wg_block_skirts(n) + 4 * (uint64_t)(n - 1);
}

uint64_t wg_block_water(uint32_t n)
{
    return wg_block_triangles(n);
}

uint64_t wg_block_water_sides(uint32_t n)
{
    return wg_block_water(n) + wg_block_surface(n);
}

uint64_t wg_block_all(uint32_t n)
{
    return wg_block_water_sides(n) + 8 * (uint64_t)(n - 1);
}

/* Grid vertex i of side s of the border, walking each side in increasing
 * x or y: s = 0 north (y = 0), 1 east (x = N-1), 2 south (y = N-1), 3 west
 * (x = 0). */
static void raster_border(uint32_t n, uint32_t s, uint32_t i, uint32_t *x,
                          uint32_t *y)
{
    *x = s == 0 || s == 2 ? i : s == 1 ? n - 1 : 0;
    *y = s == 1 || s == 3 ? i : s == 2 ? n - 1 : 0;
}

static void raster_vertex(const float *h, uint32_t n, float sp, uint32_t x,
                          uint32_t y, float floor_y, int on_floor, float p[3])
{
    p[0] = wg_block_coord(x, sp);
    p[1] = on_floor ? floor_y : h[(size_t)y * n + x];
    p[2] = wg_block_coord(y, sp);
}

/* Order p so that (p1 - p0) x (p2 - p0) points along 'out'. */
static void raster_orient(float p[3][3], const float out[3])
{
    float u[3], w[3];
    for (int i = 0; i < 3; i++) {
        u[i] = p[1][i] - p[0][i];
        w[i] = p[2][i] - p[0][i];
    }
    float c[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                  u[0] * w[1] - u[1] * w[0]};
    if (c[0] * out[0] + c[1] * out[1] + c[2] * out[2] < 0.0f)
        for (int i = 0; i < 3; i++) {
            float t = p[1][i];
            p[1][i] = p[2][i];
            p[2][i] = t;
        }
}

/* The corners of surface triangle k (a cell's half) on the heights h. */
static void raster_cell_triangle(const float *h, uint32_t n, float sp,
                                 uint64_t k, float p[3][3])
{
    /* Cell corners a (x, y), b (x+1, y), c (x, y+1), d (x+1, y+1):
     * (a, c, b) and (b, c, d) are counter-clockwise seen from +Y. */
    /* (N-1)^2 < 2^32 for every allowed N: a 32-bit division, twice
     * as fast as a 64-bit one, and this runs once per shaded pixel. */
    uint32_t cell = (uint32_t)(k >> 1);
    uint32_t x = cell % (n - 1), y = cell / (n - 1);
    if ((k & 1) == 0) {
        raster_vertex(h, n, sp, x, y, 0, 0, p[0]);
        raster_vertex(h, n, sp, x, y + 1, 0, 0, p[1]);
        raster_vertex(h, n, sp, x + 1, y, 0, 0, p[2]);
    } else {
        raster_vertex(h, n, sp, x + 1, y, 0, 0, p[0]);
        raster_vertex(h, n, sp, x, y + 1, 0, 0, p[1]);
        raster_vertex(h, n, sp, x + 1, y + 1, 0, 0, p[2]);
    }
}

/* Triangle 'half' of the wall under edge i of side s of the border, from
 * the heights 'top' down to 'bottom' (NULL: the floor), split along
 * T(i) - B(i+1), facing out of the block.  Where top and bottom meet at a
 * vertex, one of the two has no area and is not drawn. */
static void raster_wall(const float *top, const float *bottom, uint32_t n,
                        float sp, uint32_t s, uint32_t i, int half,
                        float p[3][3])
{
    static const float outward[4][3] = {
        {0, 0, -1}, {1, 0, 0}, {0, 0, 1}, {-1, 0, 0}};
    uint32_t x0, y0, x1, y1;
    raster_border(n, s, i, &x0, &y0);
    raster_border(n, s, i + 1, &x1, &y1);
    const float *b = bottom ? bottom : top;
    const int to_floor = bottom == NULL;
    raster_vertex(top, n, sp, x0, y0, 0, 0, p[0]);
    if (half == 0) {
        raster_vertex(top, n, sp, x1, y1, 0, 0, p[1]);
        raster_vertex(b, n, sp, x1, y1, WG_BLOCK_FLOOR, to_floor, p[2]);
    } else {
        raster_vertex(b, n, sp, x1, y1, WG_BLOCK_FLOOR, to_floor, p[1]);
        raster_vertex(b, n, sp, x0, y0, WG_BLOCK_FLOOR, to_floor, p[2]);
    }
    raster_orient(p, outward[s]);
}

void wg_block_triangle(const wg_block *blk, uint64_t id, float p[3][3])
{
    const uint32_t n = blk->n;
    float sp = wg_block_spacing(n);
    uint64_t surface = wg_block_surface(n), skirts = wg_block_skirts(n);
    uint64_t water = wg_block_water(n), sides = wg_block_water_sides(n);
    if (id < surface) {
        raster_cell_triangle(blk->ground, n, sp, id, p);
        return;
    }
    if (id >= water && id < sides) {
        raster_cell_triangle(blk->level, n, sp, id - water, p);
        return;
    }
    if (id < skirts || id >= sides) {
        /* A skirt's column, from the ground down to the floor, or the
         * water's above it, from its surface down to the ground: the
         * border edge from vertex i to i+1 and the two points under it. */
        /* 4(N-1) columns < 2^32: 32-bit divisions, as above (this runs
         * once per side triangle in each pixel that shows it: 74 of the 183
         * thousand hits of the default view). */
        uint64_t k = id < skirts ? id - surface : id - sides;
        uint32_t col = (uint32_t)(k >> 1);
        uint32_t s = col / (n - 1), i = col % (n - 1);
        if (id < skirts)
            raster_wall(blk->ground, NULL, n, sp, s, i, (int)(k & 1), p);
        else
            raster_wall(blk->level, blk->ground, n, sp, s, i, (int)(k & 1),
                        p);
        return;
    }
    /* The floor: a fan from its centre to every floor point of the border,
     * so it shares each skirt column's bottom edge exactly. */
    static const float down[3] = {0, -1, 0};
    uint32_t x0, y0, x1, y1;
    uint32_t k = (uint32_t)(id - skirts);
    uint32_t s = k / (n - 1), i = k % (n - 1);
    raster_border(n, s, i, &x0, &y0);
    raster_border(n, s, i + 1, &x1, &y1);
    p[0][0] = 0.0f;
    p[0][1] = WG_BLOCK_FLOOR;
    p[0][2] = 0.0f;
    raster_vertex(blk->ground, n, sp, x0, y0, WG_BLOCK_FLOOR, 1, p[1]);
    raster_vertex(blk->ground, n, sp, x1, y1, WG_BLOCK_FLOOR, 1, p[2]);
    raster_orient(p, down);
}

uint64_t wg_key_make(float iw, int back, uint64_t id)
{
    uint32_t bits;
    memcpy(&bits, &iw, sizeof bits);
    /* A positive float's bits grow with it: invert them so nearer (larger
     * 1/depth) is smaller, and keep 28 of the 31 (20 bits of mantissa, a
     * relative depth step of 1e-6). */
    uint32_t depth = iw > 0.0f ? (0x7fffffffu - bits) >> 3 : 0x0fffffffu;
    return (uint64_t)depth << 36 | (uint64_t)(back != 0) << 35 | id;
}

/* floor(v + 0.5) as an int without a libm call (v is within the guard
 * band, so it fits). */
static inline int32_t raster_round(float v)
{
    float r = v + 0.5f;
    int32_t i = (int32_t)r;
    return i - (r < (float)i);
}

/* Camera-space point to a snapped screen vertex, or RASTER_OUT. */
static inline wg_svert raster_snap(const wg_eye *v, const float c[3])
{
    wg_svert s = {RASTER_OUT, 0, 0.0f};
    if (!(c[2] >= v->near))
        return s;
    float iz = 1.0f / c[2];
    float x = c[0] * iz * v->focal, y = -c[1] * iz * v->focal;
    if (!(fabsf(x) <= RASTER_GUARD && fabsf(y) <= RASTER_GUARD))
        return s;
    s.x = raster_round((v->cx + x) * (float)RASTER_ONE);
    s.y = raster_round((v->cy + y) * (float)RASTER_ONE);
    s.iw = iz;
    return s;
}

/* wg_eye_to_camera, the same arithmetic in the same order, inline. */
static inline void raster_to_camera(const wg_eye *v, const float p[3],
                                    float out[3])
{
    float d[3] = {p[0] - v->pos[0], p[1] - v->pos[1], p[2] - v->pos[2]};
    out[0] = d[0] * v->right[0] + d[1] * v->right[1] + d[2] * v->right[2];
    out[1] = d[0] * v->up[0] + d[1] * v->up[1] + d[2] * v->up[2];
    out[2] = d[0] * v->fwd[0] + d[1] * v->fwd[1] + d[2] * v->fwd[2];
}

static inline wg_svert raster_project(const wg_eye *v, const float p[3])
{
    float c[3];
    raster_to_camera(v, p, c);
    return raster_snap(v, c);
}

/* Does a positively wound triangle own the samples exactly on its edge
 * running (dx, dy)?  Its top and left edges (screen y down): for an edge
 * and its reverse exactly one answer is yes, so a shared edge's samples go
 * to one side only. */
static inline int raster_owns(int64_t dx, int64_t dy)
{
    /* Bitwise, not ||: the edges' directions are as good as random. */
    return (dy < 0) | ((dy == 0) & (dx > 0));
}

/* floor(a / d) for d > 0, exactly. */
static inline int64_t raster_floordiv(int64_t a, int64_t d)
{
    int64_t q = a / d;
    return q - (a % d != 0 && a < 0);
}

/* An edge walked down the rows of a wide box.  Along a row its function is
 * e + m*s at offset m from the box's left column; the samples it keeps are
 * m >= q where s > 0, m <= q where s < 0, with q the exact bound and r =
 * e + q*s the remainder, 0 <= r < |s|.  A row adds sy to e and to r, and
 * r is brought back into range a step of q at a time: a skirt's sides
 * (these boxes are mostly skirt columns, a few samples wide and a hundred
 * tall, leaning with the perspective) move q a sample or less a row.  An
 * edge that moves q more than RASTER_STEEP a row divides again instead.
 * Before, each row's bounds came from three double divisions corrected by
 * the integers (the same samples: both are exact): at --size 512, the
 * default view, the sides' 170 thousand wide rows took 33 million
 * instructions (of 695 for the whole render), now 25. */
#define RASTER_STEEP 4
typedef struct raster_edge {
    int64_t s, a, sy; /* step along a row, |s|, step down a row */
    int64_t e, q, r;
    int steep;
} raster_edge;

static inline void raster_edge_div(raster_edge *g)
{
    int64_t f = raster_floordiv(g->e, g->a);
    /* s > 0: the least m with e + m*s >= 0 is -floor(e / s); s < 0: the
     * most is floor(e / -s).  Either way r = e mod |s|. */
    g->q = g->s > 0 ? -f : f;
    g->r = g->e - f * g->a;
}

static inline void raster_edge_start(raster_edge *g, int64_t e, int64_t s,
                                     int64_t sy)
{
    g->s = s, g->a = s < 0 ? -s : s, g->sy = sy, g->e = e;
    g->steep = sy > RASTER_STEEP * g->a || -sy > RASTER_STEEP * g->a;
    if (g->a)
        raster_edge_div(g);
}

static inline void raster_edge_down(raster_edge *g)
{
    g->e += g->sy;
    if (!g->a)
        return;
    if (g->steep) {
        raster_edge_div(g);
        return;
    }
    int64_t d = g->s > 0 ? 1 : -1;
    g->r += g->sy;
    while (g->r < 0)
        g->r += g->a, g->q += d;
    while (g->r >= g->a)
        g->r -= g->a, g->q -= d;
}

/* Narrow [*lo, *hi] to the offsets edge g keeps on its current row. */
static inline void raster_edge_clip(const raster_edge *g, int64_t *lo,
                                    int64_t *hi)
{
    if (g->s > 0)
        *lo = g->q > *lo ? g->q : *lo;
    else if (g->s < 0)
        *hi = g->q < *hi ? g->q : *hi;
    else if (g->e < 0)
        *hi = *lo - 1;
}

/* Rows of a box wider than a few samples (a skirt's tall column, a spike
 * of the field seen from the side): each row's covered run is found from
 * the three edge functions instead of by testing every sample; the same
 * samples, and the same depths. */
static void raster_wide(const wg_target *t, int32_t x0, int32_t x1,
                        int32_t y0, int32_t y1, const int64_t e[3],
                        const int64_t sx[3], const int64_t sy[3],
                        const int64_t ub[3], const int64_t ddx[3],
                        const int64_t ddy[3], const wg_svert *const v[3],
                        int64_t area, int back, uint64_t id)
{
    int ready = 0;
    int32_t iw_y = 0;
    double iw_row0 = 0.0, iw_dx = 0.0, iw_dy = 0.0;
    raster_edge g[3];
    for (int k = 0; k < 3; k++)
        raster_edge_start(&g[k], e[k], sx[k], sy[k]);
    for (int32_t y = y0; y <= y1; y++) {
        if (y > y0)
            for (int k = 0; k < 3; k++)
                raster_edge_down(&g[k]);
        int64_t lo = 0, hi = x1 - x0;
        for (int k = 0; k < 3; k++)
            raster_edge_clip(&g[k], &lo, &hi);
        if (lo > hi)
            continue;
        if (!ready) {
            double wsum = 0.0, gx = 0.0, gy = 0.0;
            for (int k = 0; k < 3; k++) {
                wsum += (double)ub[k] * v[k]->iw;
                gx += (double)(-ddy[k]) * v[k]->iw;
                gy += (double)ddx[k] * v[k]->iw;
            }
            double inv = 1.0 / (double)area;
            iw_row0 = wsum * inv;
            iw_dx = gx * RASTER_ONE * inv;
            iw_dy = gy * RASTER_ONE * inv;
            iw_y = y0;
            ready = 1;
        }
        for (; iw_y < y; iw_y++)
            iw_row0 += iw_dy;
        uint64_t *row = t->keys + (size_t)(y - (int32_t)t->y0) * t->w + x0;
        for (int32_t m = (int32_t)lo; m <= (int32_t)hi; m++) {
            uint64_t key = wg_key_make(
                (float)(iw_row0 + (double)m * iw_dx), back, id);
            row[m] = key < row[m] ? key : row[m];
        }
    }
}

static inline __attribute__((always_inline)) int
raster_tri(const wg_target *t, const wg_svert *a, const wg_svert *b,
           const wg_svert *c, uint64_t id, int cull)
{
    /* Bounding box -> the samples whose centres it holds: first, since
     * it is the cheapest test and at large sizes most triangles fall
     * between sample centres. */
    int32_t minx = a->x < b->x ? a->x : b->x, maxx = a->x > b->x ? a->x : b->x;
    int32_t miny = a->y < b->y ? a->y : b->y, maxy = a->y > b->y ? a->y : b->y;
    minx = c->x < minx ? c->x : minx;
    maxx = c->x > maxx ? c->x : maxx;
    miny = c->y < miny ? c->y : miny;
    maxy = c->y > maxy ? c->y : maxy;
    /* Sample i's centre is i*ONE + HALF; >> on a negative int is an
     * arithmetic shift (floor) with gcc and clang. */
    int32_t x0 = (minx - RASTER_HALF + RASTER_ONE - 1) >> WG_SUBPIXEL_BITS;
    int32_t x1 = (maxx - RASTER_HALF) >> WG_SUBPIXEL_BITS;
    int32_t y0 = (miny - RASTER_HALF + RASTER_ONE - 1) >> WG_SUBPIXEL_BITS;
    int32_t y1 = (maxy - RASTER_HALF) >> WG_SUBPIXEL_BITS;
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 >= (int32_t)t->w ? (int32_t)t->w - 1 : x1;
    y1 = y1 >= (int32_t)t->h ? (int32_t)t->h - 1 : y1;
    /* Counted by the strip that holds its first row, so once. */
    int first = y0 >= (int32_t)t->y0 && y0 < (int32_t)t->y1;
    y0 = y0 < (int32_t)t->y0 ? (int32_t)t->y0 : y0;
    y1 = y1 >= (int32_t)t->y1 ? (int32_t)t->y1 - 1 : y1;
    if (x0 > x1 || y0 > y1)
        return 0; /* off the strip, or between sample centres */

    int64_t area = (int64_t)(b->x - a->x) * (c->y - a->y) -
                   (int64_t)(b->y - a->y) * (c->x - a->x);
    if (area == 0)
        return 0; /* degenerate: covers nothing, faces nowhere */
    int back = area > 0;
    if (back && cull)
        return 0;
    /* The one sign, decided: order the vertices by it (a front face's b
     * and c swap), without a branch, which would mispredict half the
     * time. */
    const wg_svert *p1 = back ? b : c, *p2 = back ? c : b;
    b = p1;
    c = p2;
    area = back ? area : -area;

    /* Edge functions at the first sample centre; e_k is positive inside,
     * on the side of edge k where the opposite vertex lies.  Scalars, not
     * arrays: arrays passed to raster_wide lived on the stack for every
     * triangle, each use a load (the wide path gets copies); at --size
     * 512 the surface's triangles took 203 million instructions, now 188. */
    int64_t px = (int64_t)x0 * RASTER_ONE + RASTER_HALF;
    int64_t py = (int64_t)y0 * RASTER_ONE + RASTER_HALF;
    /* Edge k runs from vertex k+1 to k+2 (mod 3), written out. */
    int64_t ddx0 = (int64_t)c->x - b->x, ddy0 = (int64_t)c->y - b->y;
    int64_t ddx1 = (int64_t)a->x - c->x, ddy1 = (int64_t)a->y - c->y;
    int64_t ddx2 = (int64_t)b->x - a->x, ddy2 = (int64_t)b->y - a->y;
    int64_t ub0 = ddx0 * (py - b->y) - ddy0 * (px - b->x);
    int64_t ub1 = ddx1 * (py - c->y) - ddy1 * (px - c->x);
    int64_t ub2 = ddx2 * (py - a->y) - ddy2 * (px - a->x);
    int64_t r0 = ub0 - 1 + raster_owns(ddx0, ddy0);
    int64_t r1 = ub1 - 1 + raster_owns(ddx1, ddy1);
    int64_t r2 = ub2 - 1 + raster_owns(ddx2, ddy2);
    int64_t sx0 = -ddy0 * RASTER_ONE, sx1 = -ddy1 * RASTER_ONE,
            sx2 = -ddy2 * RASTER_ONE;
    int64_t sy0 = ddx0 * RASTER_ONE, sy1 = ddx1 * RASTER_ONE,
            sy2 = ddx2 * RASTER_ONE;
    if (x1 - x0 >= 8) {
        const int64_t e[3] = {r0, r1, r2}, ub[3] = {ub0, ub1, ub2};
        const int64_t ddx[3] = {ddx0, ddx1, ddx2}, ddy[3] = {ddy0, ddy1, ddy2};
        const int64_t sx[3] = {sx0, sx1, sx2}, sy[3] = {sy0, sy1, sy2};
        const wg_svert *v[3] = {a, b, c};
        raster_wide(t, x0, x1, y0, y1, e, sx, sy, ub, ddx, ddy, v, area,
                    back, id);
        return first;
    }

    /* The coverage first, on the integer edge functions alone: most
     * triangles at small sizes cover a few samples or none, and the depth's
     * setup (a division) is made only once one is covered. */
    int ready = 0;
    int32_t iw_y = 0;
    double iw_row0 = 0.0, iw_dx = 0.0, iw_dy = 0.0;
    for (int32_t y = y0; y <= y1; y++) {
        int64_t e0 = r0, e1 = r1, e2 = r2;
        uint64_t *row = t->keys + (size_t)(y - (int32_t)t->y0) * t->w;
        for (int32_t x = x0; x <= x1; x++) {
            if ((e0 | e1 | e2) >= 0) {
                if (!ready) {
                    /* 1/depth is affine on the screen: the barycentric
                     * blend of the vertices' values, from the unbiased
                     * edge functions at the first sample centre; then
                     * stepped a row at a time from there.  (The sums in
                     * raster_wide's order, k = 0, 1, 2.) */
                    double wsum = 0.0, gx = 0.0, gy = 0.0;
                    wsum += (double)ub0 * a->iw;
                    gx += (double)(-ddy0) * a->iw;
                    gy += (double)ddx0 * a->iw;
                    wsum += (double)ub1 * b->iw;
                    gx += (double)(-ddy1) * b->iw;
                    gy += (double)ddx1 * b->iw;
                    wsum += (double)ub2 * c->iw;
                    gx += (double)(-ddy2) * c->iw;
                    gy += (double)ddx2 * c->iw;
                    double inv = 1.0 / (double)area;
                    iw_row0 = wsum * inv;
                    iw_dx = gx * RASTER_ONE * inv;
                    iw_dy = gy * RASTER_ONE * inv;
                    iw_y = y0;
                    ready = 1;
                }
                /* The row's start: stepped from y0 a row at a time. */
                for (; iw_y < y; iw_y++)
                    iw_row0 += iw_dy;
                double iw_row = iw_row0;
                for (; x <= x1; x++) {
                    if ((e0 | e1 | e2) >= 0) {
                        uint64_t key = wg_key_make(
                            (float)(iw_row + (double)(x - x0) * iw_dx), back,
                            id);
                        if (key < row[x])
                            row[x] = key;
                    }
                    e0 += sx0;
                    e1 += sx1;
                    e2 += sx2;
                }
                break;
            }
            e0 += sx0;
            e1 += sx1;
            e2 += sx2;
        }
        r0 += sy0;
        r1 += sy1;
        r2 += sy2;
    }
    return first;
}

int wg_raster_triangle(const wg_target *t, const wg_svert *a,
                       const wg_svert *b, const wg_svert *c, uint64_t id,
                       int cull)
{
    return raster_tri(t, a, b, c, id, cull);
}

/* Signed distance of camera-space point c inside clip plane k (>= 0 is
 * kept): the near plane, then the guard band's four sides. */
static float raster_plane(const wg_eye *v, int k, const float c[3])
{
    float g = RASTER_CLIP / v->focal;
    switch (k) {
    case 0:
        return c[2] - v->near;
    case 1:
        return c[0] + g * c[2];
    case 2:
        return g * c[2] - c[0];
    case 3:
        return g * c[2] - c[1];
    default:
        return g * c[2] + c[1];
    }
}

/* A triangle that crosses the near plane or the guard band: clip it in
 * camera space (Sutherland-Hodgman), then draw the polygon as a fan with
 * the triangle's id.  Returns 1 if it counts as drawn in this strip. */
static int raster_clipped(const wg_target *t, const wg_eye *v,
                          const float p[3][3], uint64_t id, int cull)
{
    float poly[2][9][3];
    int cnt = 3, cur = 0;
    for (int i = 0; i < 3; i++)
        wg_eye_to_camera(v, p[i], poly[0][i]);
    for (int k = 0; k < 5 && cnt > 0; k++) {
        int out = 0;
        for (int i = 0; i < cnt; i++) {
            const float *s = poly[cur][i], *e = poly[cur][(i + 1) % cnt];
            float ds = raster_plane(v, k, s), de = raster_plane(v, k, e);
            if (ds >= 0.0f)
                memcpy(poly[!cur][out++], s, sizeof poly[0][0]);
            if ((ds >= 0.0f) != (de >= 0.0f)) {
                /* Interpolate from the same end whichever way the edge is
                 * walked, so the two triangles sharing it get the same
                 * point, bit for bit. */
                const float *u = s, *w = e;
                float du = ds, dw = de;
                if (memcmp(s, e, sizeof poly[0][0]) > 0) {
                    u = e, w = s, du = de, dw = ds;
                }
                float f = du / (du - dw);
                for (int j = 0; j < 3; j++)
                    poly[!cur][out][j] = u[j] + (w[j] - u[j]) * f;
                out++;
            }
        }
        cnt = out;
        cur = !cur;
    }
    if (cnt < 3)
        return 0;
    wg_svert s[9];
    for (int i = 0; i < cnt; i++) {
        /* A point cut on the near plane can round to a hair nearer;
         * dropping the triangle for that opened a crack along the cut
         * (sky between the floor and a skirt from close cameras).  The
         * original vertices kept here are all at or beyond the plane. */
        float *c = poly[cur][i];
        c[2] = c[2] < v->near ? v->near : c[2];
        s[i] = raster_snap(v, c);
        if (s[i].x == RASTER_OUT)
            return 0; /* NaN from a degenerate cut: nothing to draw */
    }
    int drawn = 0;
    for (int i = 1; i + 1 < cnt; i++)
        drawn |= wg_raster_triangle(t, &s[0], &s[i], &s[i + 1], id, cull);
    return drawn;
}

static int raster_one(const wg_target *t, const wg_eye *v,
                      const wg_block *blk, const wg_svert *a,
                      const wg_svert *b, const wg_svert *c, uint64_t id,
                      int cull)
{
    if (a->x != RASTER_OUT && b->x != RASTER_OUT && c->x != RASTER_OUT)
        return raster_tri(t, a, b, c, id, cull);
    float p[3][3];
    wg_block_triangle(blk, id, p);
    return raster_clipped(t, v, p, id, cull);
}

/* ---- Eight small triangles at once (AVX2) ----
 *
 * At --size 512 nearly every triangle of the surface has a box of one or
 * two sample columns and one to four rows: its setup, not its samples, is
 * the rasteriser's time.  raster_tri8 takes eight such triangles at once:
 * their boxes, areas, edge functions and coverage in 32-bit lanes (exact:
 * a triangle less than RASTER_SMALL across keeps every product under
 * 2^31), their depths' setup in double as raster_tri makes it, in its
 * order, and each covered sample's key as raster_tri gives it, to the
 * bit.  A triangle to clip, a larger one or a larger box goes to
 * raster_one.  The keys are kept by their minimum, so the order the
 * triangles are drawn in changes nothing. */
#if WG_WIDE

#define RASTER_SMALL (1 << 13) /* subpixels: 32 samples */

typedef struct raster_queue {
    wg_svert v[8][3];
    uint64_t id[8];
    uint32_t n;
} raster_queue;

W8_FN __m256i r8_k(int32_t x)
{
    return _mm256_set1_epi32(x);
}

/* Whether each lane of e0 | e1 | e2 is >= 0 (all three edges keep it). */
W8_FN __m256i r8_inside(__m256i e0, __m256i e1, __m256i e2)
{
    return _mm256_cmpgt_epi32(
        _mm256_or_si256(_mm256_or_si256(e0, e1), e2), r8_k(-1));
}

/* The three vertices' iw, as doubles, for lanes 0-3 (hi 0) or 4-7. */
W8_FN __m256d r8_wide(__m256 f, int hi)
{
    return _mm256_cvtps_pd(hi ? _mm256_extractf128_ps(f, 1)
                              : _mm256_castps256_ps128(f));
}

W8_FN __m256d r8_wide_i(__m256i i, int hi)
{
    return _mm256_cvtepi32_pd(hi ? _mm256_extracti128_si256(i, 1)
                                 : _mm256_castsi256_si128(i));
}

__attribute__((target("avx2"))) static uint64_t
raster_tri8(const wg_target *t, const wg_eye *eye, const wg_block *blk,
            const raster_queue *q, int cull)
{
    int32_t vx[3][8], vy[3][8];
    float vw[3][8];
    for (uint32_t l = 0; l < 8; l++) {
        const uint32_t s = l < q->n ? l : 0;
        for (int k = 0; k < 3; k++) {
            vx[k][l] = q->v[s][k].x;
            vy[k][l] = q->v[s][k].y;
            vw[k][l] = q->v[s][k].iw;
        }
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i valid = _mm256_cmpgt_epi32(r8_k((int32_t)q->n), lane);
    __m256i ax = _mm256_loadu_si256((const __m256i *)vx[0]);
    __m256i ay = _mm256_loadu_si256((const __m256i *)vy[0]);
    __m256i bx = _mm256_loadu_si256((const __m256i *)vx[1]);
    __m256i by = _mm256_loadu_si256((const __m256i *)vy[1]);
    __m256i cx = _mm256_loadu_si256((const __m256i *)vx[2]);
    __m256i cy = _mm256_loadu_si256((const __m256i *)vy[2]);
    __m256 aw = _mm256_loadu_ps(vw[0]), bw = _mm256_loadu_ps(vw[1]),
           cw = _mm256_loadu_ps(vw[2]);
    const __m256i out_ = r8_k(RASTER_OUT);
    __m256i clip = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpeq_epi32(ax, out_),
                        _mm256_cmpeq_epi32(bx, out_)),
        _mm256_cmpeq_epi32(cx, out_));
    __m256i minx = _mm256_min_epi32(_mm256_min_epi32(ax, bx), cx);
    __m256i maxx = _mm256_max_epi32(_mm256_max_epi32(ax, bx), cx);
    __m256i miny = _mm256_min_epi32(_mm256_min_epi32(ay, by), cy);
    __m256i maxy = _mm256_max_epi32(_mm256_max_epi32(ay, by), cy);
    __m256i small = _mm256_and_si256(
        _mm256_cmpgt_epi32(r8_k(RASTER_SMALL), _mm256_sub_epi32(maxx, minx)),
        _mm256_cmpgt_epi32(r8_k(RASTER_SMALL), _mm256_sub_epi32(maxy, miny)));
    /* raster_tri's box of sample centres */
    const __m256i up = r8_k(RASTER_ONE - 1 - RASTER_HALF),
                  down = r8_k(-RASTER_HALF);
    __m256i x0 = _mm256_srai_epi32(_mm256_add_epi32(minx, up), WG_SUBPIXEL_BITS);
    __m256i x1 = _mm256_srai_epi32(_mm256_add_epi32(maxx, down), WG_SUBPIXEL_BITS);
    __m256i y0 = _mm256_srai_epi32(_mm256_add_epi32(miny, up), WG_SUBPIXEL_BITS);
    __m256i y1 = _mm256_srai_epi32(_mm256_add_epi32(maxy, down), WG_SUBPIXEL_BITS);
    x0 = _mm256_max_epi32(x0, r8_k(0));
    y0 = _mm256_max_epi32(y0, r8_k(0));
    x1 = _mm256_min_epi32(x1, r8_k((int32_t)t->w - 1));
    y1 = _mm256_min_epi32(y1, r8_k((int32_t)t->h - 1));
    const __m256i first = _mm256_andnot_si256(
        _mm256_cmpgt_epi32(r8_k((int32_t)t->y0), y0),
        _mm256_cmpgt_epi32(r8_k((int32_t)t->y1), y0));
    y0 = _mm256_max_epi32(y0, r8_k((int32_t)t->y0));
    y1 = _mm256_min_epi32(y1, r8_k((int32_t)t->y1 - 1));
    const __m256i empty = _mm256_or_si256(_mm256_cmpgt_epi32(x0, x1),
                                          _mm256_cmpgt_epi32(y0, y1));
    const __m256i fits = _mm256_and_si256(
        _mm256_cmpgt_epi32(r8_k(2), _mm256_sub_epi32(x1, x0)),
        _mm256_cmpgt_epi32(r8_k(4), _mm256_sub_epi32(y1, y0)));
    /* raster_one for a triangle to clip, or too large, or whose box is */
    __m256i slow = _mm256_and_si256(
        valid, _mm256_or_si256(
                   clip, _mm256_andnot_si256(
                             empty, _mm256_xor_si256(_mm256_and_si256(small, fits),
                                                     r8_k(-1)))));
    /* what remains is drawn here */
    __m256i live = _mm256_andnot_si256(_mm256_or_si256(slow, empty), valid);
    __m256i area = _mm256_sub_epi32(
        _mm256_mullo_epi32(_mm256_sub_epi32(bx, ax), _mm256_sub_epi32(cy, ay)),
        _mm256_mullo_epi32(_mm256_sub_epi32(by, ay), _mm256_sub_epi32(cx, ax)));
    live = _mm256_andnot_si256(_mm256_cmpeq_epi32(area, r8_k(0)), live);
    const __m256i back = _mm256_cmpgt_epi32(area, r8_k(0));
    if (cull)
        live = _mm256_andnot_si256(back, live);
    /* A front face's b and c swap; its area turns positive. */
    {
        __m256i tx = _mm256_blendv_epi8(cx, bx, back);
        __m256i ty = _mm256_blendv_epi8(cy, by, back);
        __m256 tw = _mm256_blendv_ps(cw, bw, _mm256_castsi256_ps(back));
        cx = _mm256_blendv_epi8(bx, cx, back);
        cy = _mm256_blendv_epi8(by, cy, back);
        cw = _mm256_blendv_ps(bw, cw, _mm256_castsi256_ps(back));
        bx = tx, by = ty, bw = tw;
    }
    area = _mm256_abs_epi32(area);
    const __m256i px = _mm256_add_epi32(_mm256_slli_epi32(x0, WG_SUBPIXEL_BITS),
                                        r8_k(RASTER_HALF));
    const __m256i py = _mm256_add_epi32(_mm256_slli_epi32(y0, WG_SUBPIXEL_BITS),
                                        r8_k(RASTER_HALF));
    /* edge k from vertex k+1 to k+2 */
    const __m256i *ex[3] = {&cx, &ax, &bx}, *ey[3] = {&cy, &ay, &by};
    const __m256i *sxv[3] = {&bx, &cx, &ax}, *syv[3] = {&by, &cy, &ay};
    __m256i ddx[3], ddy[3], ub[3], r[3], sx[3], sy[3];
    for (int k = 0; k < 3; k++) {
        ddx[k] = _mm256_sub_epi32(*ex[k], *sxv[k]);
        ddy[k] = _mm256_sub_epi32(*ey[k], *syv[k]);
        ub[k] = _mm256_sub_epi32(
            _mm256_mullo_epi32(ddx[k], _mm256_sub_epi32(py, *syv[k])),
            _mm256_mullo_epi32(ddy[k], _mm256_sub_epi32(px, *sxv[k])));
        /* raster_owns: dy < 0, or dy == 0 and dx > 0 */
        __m256i owns = _mm256_or_si256(
            _mm256_cmpgt_epi32(r8_k(0), ddy[k]),
            _mm256_and_si256(_mm256_cmpeq_epi32(ddy[k], r8_k(0)),
                             _mm256_cmpgt_epi32(ddx[k], r8_k(0))));
        /* ub - 1 + owns: owns is -1 or 0 */
        r[k] = _mm256_sub_epi32(_mm256_sub_epi32(ub[k], r8_k(1)), owns);
        sx[k] = _mm256_slli_epi32(_mm256_sub_epi32(r8_k(0), ddy[k]),
                                  WG_SUBPIXEL_BITS);
        sy[k] = _mm256_slli_epi32(ddx[k], WG_SUBPIXEL_BITS);
    }
    /* The coverage of the box's samples, bit 2 * row + column. */
    const __m256i cols = _mm256_sub_epi32(x1, x0), rows = _mm256_sub_epi32(y1, y0);
    __m256i cover = r8_k(0);
    for (int row = 0; row < 4; row++) {
        __m256i e0 = r[0], e1 = r[1], e2 = r[2];
        const __m256i in_row = _mm256_and_si256(
            live, _mm256_cmpgt_epi32(rows, r8_k(row - 1)));
        for (int col = 0; col < 2; col++) {
            __m256i in = _mm256_and_si256(
                _mm256_and_si256(in_row, r8_inside(e0, e1, e2)),
                _mm256_cmpgt_epi32(cols, r8_k(col - 1)));
            cover = _mm256_or_si256(
                cover, _mm256_and_si256(in, r8_k(1 << (2 * row + col))));
            e0 = _mm256_add_epi32(e0, sx[0]);
            e1 = _mm256_add_epi32(e1, sx[1]);
            e2 = _mm256_add_epi32(e2, sx[2]);
        }
        for (int k = 0; k < 3; k++)
            r[k] = _mm256_add_epi32(r[k], sy[k]);
    }
    int32_t covered[8], at_x[8], at_y[8], slow_l[8], drawn_l[8];
    _mm256_storeu_si256((__m256i *)covered, cover);
    _mm256_storeu_si256((__m256i *)at_x, x0);
    _mm256_storeu_si256((__m256i *)at_y, y0);
    _mm256_storeu_si256((__m256i *)slow_l, slow);
    _mm256_storeu_si256((__m256i *)drawn_l, _mm256_and_si256(live, first));
    uint64_t count = 0;
    /* The depths: raster_tri's setup, in double, four lanes at a time,
     * and each sample's 1/depth as a float. */
    float iw[8][8]; /* [2 * row + column][lane] */
    if (!_mm256_testz_si256(cover, cover)) {
        const __m256 ws[3] = {aw, bw, cw};
        for (int hi = 0; hi < 2; hi++) {
            __m256d wsum = _mm256_setzero_pd(), gx = wsum, gy = wsum;
            for (int k = 0; k < 3; k++) {
                __m256d w = r8_wide(ws[k], hi);
                wsum = _mm256_add_pd(wsum, _mm256_mul_pd(r8_wide_i(ub[k], hi), w));
                gx = _mm256_add_pd(
                    gx, _mm256_mul_pd(
                            r8_wide_i(_mm256_sub_epi32(r8_k(0), ddy[k]), hi), w));
                gy = _mm256_add_pd(gy, _mm256_mul_pd(r8_wide_i(ddx[k], hi), w));
            }
            const __m256d inv = _mm256_div_pd(_mm256_set1_pd(1.0),
                                              r8_wide_i(area, hi));
            const __m256d one = _mm256_set1_pd((double)RASTER_ONE);
            __m256d row = _mm256_mul_pd(wsum, inv);
            const __m256d dx = _mm256_mul_pd(_mm256_mul_pd(gx, one), inv);
            const __m256d dy = _mm256_mul_pd(_mm256_mul_pd(gy, one), inv);
            const __m256d zero = _mm256_setzero_pd(), unit = _mm256_set1_pd(1.0);
            for (int rr = 0; rr < 4; rr++) {
                if (rr)
                    row = _mm256_add_pd(row, dy);
                _mm_storeu_ps(&iw[2 * rr][4 * hi],
                              _mm256_cvtpd_ps(_mm256_add_pd(
                                  row, _mm256_mul_pd(zero, dx))));
                _mm_storeu_ps(&iw[2 * rr + 1][4 * hi],
                              _mm256_cvtpd_ps(_mm256_add_pd(
                                  row, _mm256_mul_pd(unit, dx))));
            }
        }
    }
    int32_t backs[8];
    _mm256_storeu_si256((__m256i *)backs, back);
    for (uint32_t l = 0; l < q->n; l++) {
        if (slow_l[l]) {
            count += (uint64_t)raster_one(t, eye, blk, &q->v[l][0],
                                          &q->v[l][1], &q->v[l][2], q->id[l],
                                          cull);
            continue;
        }
        count += drawn_l[l] != 0;
        for (uint32_t bits = (uint32_t)covered[l]; bits; bits &= bits - 1) {
            const int s = __builtin_ctz(bits);
            uint64_t *row = t->keys +
                            (size_t)(at_y[l] + s / 2 - (int32_t)t->y0) * t->w +
                            at_x[l] + s % 2;
            uint64_t key = wg_key_make(iw[s][l], backs[l] != 0, q->id[l]);
            *row = key < *row ? key : *row;
        }
    }
    return count;
}
#endif

/* Project vertices x0..x1 of grid row y: raster_vertex and
 * raster_project for each, the same operations in the same order, written
 * so that the compiler runs 4 vertices at a time (SSE2; built at -O3, see
 * the Makefile) with selects for the vertices to clip.  At --size 4096
 * this loop was a third of the rasteriser's time, one vertex at a time;
 * an AVX2 clone did not vectorise (gcc 12 keeps its selects as
 * branches). */
static void raster_row(const wg_eye *v, const float *h, const float *l,
                       uint32_t n, float sp, uint32_t y, uint32_t x0,
                       uint32_t x1, wg_svert *out)
{
    /* The eye copied out, so the compiler need not reload it after each
     * store. */
    const wg_eye e = *v;
    const float *row = h + (size_t)y * n, *lrow = l + (size_t)y * n;
    /* The row's z term of each camera coordinate: the same product that
     * raster_to_camera adds last. */
    const float d2 = wg_block_coord(y, sp) - e.pos[2];
    const float k0 = d2 * e.right[2], k1 = d2 * e.up[2], k2 = d2 * e.fwd[2];
    const int32_t first = (int32_t)x0, count = (int32_t)(x1 - x0) + 1;
    row += x0;
    lrow += x0;
    for (int32_t i = 0; i < count; i++) {
        /* wg_block_coord: a grid index (< 2^31) converted signed, the
         * same value, as vectors convert */
        float d0 = (-3.0f + (float)(first + i) * sp) - e.pos[0];
        float d1 = (lrow[i] > row[i] ? lrow[i] : row[i]) - e.pos[1];
        float c0 = (d0 * e.right[0] + d1 * e.right[1]) + k0;
        float c1 = (d0 * e.up[0] + d1 * e.up[1]) + k1;
        float c2 = (d0 * e.fwd[0] + d1 * e.fwd[1]) + k2;
        /* raster_snap: behind the near plane or outside the guard band,
         * RASTER_OUT; the arithmetic of such a vertex is kept finite. */
        int front = c2 >= e.near;
        float iz = 1.0f / (front ? c2 : 1.0f);
        float sx = c0 * iz * e.focal, sy = -c1 * iz * e.focal;
        int in = front & (fabsf(sx) <= RASTER_GUARD) &
                 (fabsf(sy) <= RASTER_GUARD);
        float rx = (e.cx + (in ? sx : 0.0f)) * (float)RASTER_ONE + 0.5f;
        float ry = (e.cy + (in ? sy : 0.0f)) * (float)RASTER_ONE + 0.5f;
        int32_t ix = (int32_t)rx, iy = (int32_t)ry;
        ix -= rx < (float)ix; /* raster_round: floor(v + 0.5) */
        iy -= ry < (float)iy;
        out[i].x = in ? ix : RASTER_OUT;
        out[i].y = in ? iy : 0;
        out[i].iw = in ? iz : 0.0f;
    }
}

/* The sample rows the box lo..hi (world space) can cover: the hull of its
 * eight corners projected, a sample wider each way than the snapping can
 * move a vertex; the whole picture if a corner is behind the near plane.
 * Returns 0 when the box is wholly outside the picture. */
static int raster_box(const wg_eye *v, const float lo[3], const float hi[3],
                      int32_t *ymin, int32_t *ymax)
{
    float x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (int k = 0; k < 8; k++) {
        float p[3] = {k & 1 ? hi[0] : lo[0], k & 2 ? hi[1] : lo[1],
                      k & 4 ? hi[2] : lo[2]};
        float c[3];
        wg_eye_to_camera(v, p, c);
        if (!(c[2] >= v->near)) {
            *ymin = 0;
            *ymax = (int32_t)v->h - 1;
            return 1;
        }
        float sx = v->cx + c[0] / c[2] * v->focal;
        float sy = v->cy - c[1] / c[2] * v->focal;
        x0 = sx < x0 ? sx : x0;
        x1 = sx > x1 ? sx : x1;
        y0 = sy < y0 ? sy : y0;
        y1 = sy > y1 ? sy : y1;
    }
    if (x1 < -1.0f || x0 > (float)v->w + 1.0f || y1 < -1.0f ||
        y0 > (float)v->h + 1.0f)
        return 0;
    *ymin = y0 < 1.0f ? 0 : (int32_t)y0 - 1;
    *ymax = y1 > (float)v->h - 2.0f ? (int32_t)v->h - 1 : (int32_t)y1 + 1;
    return 1;
}

/* Surface squares per side. */
static uint32_t raster_runs(uint32_t n)
{
    return (n - 2) / WG_PIECE_CELLS + 1;
}

/* The plan's pieces, then its cells. */
static size_t raster_pieces_bytes(uint32_t n)
{
    size_t runs = raster_runs(n);
    return (runs * runs + 12 * runs) * sizeof(wg_piece);
}

size_t wg_plan_bytes(uint32_t n)
{
    return raster_pieces_bytes(n) + wg_cells(n - 1);
}

int wg_plan_alloc(wg_plan *pl, uint32_t n)
{
    pl->count = 0;
    pl->pieces = wg_render_alloc(wg_plan_bytes(n));
    pl->cells = pl->pieces ? (uint8_t *)pl->pieces + raster_pieces_bytes(n)
                           : NULL;
    return pl->pieces ? 0 : -1;
}

int wg_plan_make(wg_plan *pl, const wg_eye *v, const wg_block *b)
{
    if (wg_plan_alloc(pl, b->n) != 0)
        return -1;
    wg_plan_fill(pl, v, b);
    return 0;
}

/* Add the piece of 'kind' over vertices [x0, x1] x [y0, y1], whose
 * heights span lo..hi, if it reaches the picture. */
static void raster_piece(wg_plan *pl, const wg_eye *v, float sp,
                         uint32_t kind, uint32_t x0, uint32_t y0, uint32_t x1,
                         uint32_t y1, float lo, float hi, int mixed)
{
    float a[3] = {wg_block_coord(x0, sp), lo, wg_block_coord(y0, sp)};
    float b[3] = {wg_block_coord(x1, sp), hi, wg_block_coord(y1, sp)};
    wg_piece *k = &pl->pieces[pl->count];
    if (raster_box(v, a, b, &k->ymin, &k->ymax)) {
        k->kind = kind, k->a = x0, k->b = y0, k->ea = x1, k->eb = y1;
        k->mixed = mixed;
        pl->count++;
    }
}

/* The square of cells from (bx, by) as a piece: the ground alone where it
 * has no water, else the ground and the water, each cell drawing what
 * WG_CELL_* says. */
static void raster_square(wg_plan *pl, const wg_eye *v, const wg_block *blk,
                          uint32_t bx, uint32_t by)
{
    const uint32_t n = blk->n;
    const float sp = wg_block_spacing(n);
    uint32_t ex = bx + WG_PIECE_CELLS < n - 1 ? bx + WG_PIECE_CELLS : n - 1;
    uint32_t ey = by + WG_PIECE_CELLS < n - 1 ? by + WG_PIECE_CELLS : n - 1;
    float lo = INFINITY, hi = -INFINITY, wlo = INFINITY, whi = -INFINITY;
    /* Each vertex's part in a cell's WG_CELL_*: 1 wet (its level above the
     * ground), 2 a bank (below), at [y - by][x - bx]. */
    uint8_t vf[WG_PIECE_CELLS + 1][WG_PIECE_CELLS + 1];
    int wet = 0;
    for (uint32_t y = by; y <= ey; y++)
        for (uint32_t x = bx; x <= ex; x++) {
            size_t k = (size_t)y * n + x;
            float g = blk->ground[k], l = blk->level[k];
            lo = g < lo ? g : lo;
            hi = g > hi ? g : hi;
            wlo = l < wlo ? l : wlo;
            whi = l > whi ? l : whi;
            int f = (l > g) | (l < g) << 1;
            vf[y - by][x - bx] = (uint8_t)f;
            wet |= f & 1;
        }
    if (!wet) { /* no water: the ground alone, every cell */
        raster_piece(pl, v, sp, WG_PIECE_SURFACE, bx, by, ex, ey, lo, hi, 0);
        return;
    }
    /* What each cell draws (WG_CELL_*), from its corners' parts. */
    for (uint32_t y = by; y < ey; y++)
        for (uint32_t x = bx; x < ex; x++) {
            const uint8_t *a = &vf[y - by][x - bx];
            const uint8_t *c = a + WG_PIECE_CELLS + 1;
            int f = a[0] | a[1] | c[0] | c[1];
            int w = f & 1, bank = f >> 1;
            pl->cells[(size_t)y * (n - 1) + x] =
                (uint8_t)(w * WG_CELL_WATER + ((!w) | bank) * WG_CELL_GROUND);
        }
    /* One piece for the two: its box spans both. */
    lo = wlo < lo ? wlo : lo;
    hi = whi > hi ? whi : hi;
    raster_piece(pl, v, sp, WG_PIECE_SURFACE, bx, by, ex, ey, lo, hi, 1);
}

void wg_plan_fill(wg_plan *pl, const wg_eye *v, const wg_block *blk)
{
    pl->count = 0;
    const uint32_t n = blk->n;
    float sp = wg_block_spacing(n);
    for (uint32_t by = 0; by + 1 < n; by += WG_PIECE_CELLS)
        for (uint32_t bx = 0; bx + 1 < n; bx += WG_PIECE_CELLS)
            raster_square(pl, v, blk, bx, by);
    /* The skirts, the floor and the water's sides, in runs of
     * WG_PIECE_CELLS border steps (the water's only where it has water). */
    for (uint32_t kind = WG_PIECE_SKIRT; kind <= WG_PIECE_WATER_SIDE; kind++)
        for (uint32_t side = 0; side < 4; side++)
            for (uint32_t i0 = 0; i0 + 1 < n; i0 += WG_PIECE_CELLS) {
                uint32_t i1 = i0 + WG_PIECE_CELLS < n - 1 ? i0 + WG_PIECE_CELLS
                                                          : n - 1;
                float a[3] = {INFINITY, WG_BLOCK_FLOOR, INFINITY};
                float b[3] = {-INFINITY, WG_BLOCK_FLOOR, -INFINITY};
                if (kind == WG_PIECE_FLOOR) { /* the fan's centre */
                    a[0] = a[2] = b[0] = b[2] = 0.0f;
                }
                if (kind == WG_PIECE_WATER_SIDE)
                    a[1] = INFINITY;
                int wet = 0;
                for (uint32_t i = i0; i <= i1; i++) {
                    uint32_t x, y;
                    raster_border(n, side, i, &x, &y);
                    size_t q = (size_t)y * n + x;
                    float px = wg_block_coord(x, sp), pz = wg_block_coord(y, sp);
                    float g = blk->ground[q], l = blk->level[q];
                    float top = kind == WG_PIECE_SKIRT ? g
                                : kind == WG_PIECE_FLOOR ? WG_BLOCK_FLOOR
                                                         : l;
                    wet |= l > g;
                    a[0] = px < a[0] ? px : a[0];
                    b[0] = px > b[0] ? px : b[0];
                    a[2] = pz < a[2] ? pz : a[2];
                    b[2] = pz > b[2] ? pz : b[2];
                    b[1] = top > b[1] ? top : b[1];
                    if (kind == WG_PIECE_WATER_SIDE)
                        a[1] = g < a[1] ? g : a[1];
                }
                if (kind == WG_PIECE_WATER_SIDE && !wet)
                    continue;
                wg_piece *k = &pl->pieces[pl->count];
                if (raster_box(v, a, b, &k->ymin, &k->ymax)) {
                    k->kind = kind, k->a = side, k->b = i0;
                    k->ea = k->eb = 0, k->mixed = 0; /* a surface's only */
                    pl->count++;
                }
            }
}

void wg_plan_free(wg_plan *pl)
{
    wg_render_free(pl->pieces);
    pl->pieces = NULL;
    pl->cells = NULL;
    pl->count = 0;
}

/* The extent of two vertices, one above the other. */
static inline void raster_column(const wg_svert *a, const wg_svert *b,
                                 int32_t *x0, int32_t *x1, int32_t *y0,
                                 int32_t *y1)
{
    *x0 = a->x < b->x ? a->x : b->x;
    *x1 = a->x > b->x ? a->x : b->x;
    *y0 = a->y < b->y ? a->y : b->y;
    *y1 = a->y > b->y ? a->y : b->y;
}

/* A cell's box of sample centres, from its left and right columns of
 * projected vertices (top and bottom), the right one kept for the next
 * cell.  At --size 4096, where most cells hold no sample centre, this was
 * 1.82 of the rasteriser's 4.6 billion instructions (one thread), now
 * 1.35; at 512, 51 million, now 42. */
typedef struct raster_cols {
    int32_t x0, x1, y0, y1; /* the left column's extent */
} raster_cols;

/* Whether the box [minx, maxx] x [miny, maxy] (in 1/256 sample) holds a
 * sample centre of t's strip; RASTER_OUT (a vertex to clip) says yes, and
 * takes the long way. */
static inline int raster_box_reaches(const wg_target *t, int32_t minx,
                                     int32_t maxx, int32_t miny, int32_t maxy)
{
    if (minx == RASTER_OUT)
        return 1;
    int32_t cx0 = (minx - RASTER_HALF + RASTER_ONE - 1) >> WG_SUBPIXEL_BITS;
    int32_t cx1 = (maxx - RASTER_HALF) >> WG_SUBPIXEL_BITS;
    int32_t cy0 = (miny - RASTER_HALF + RASTER_ONE - 1) >> WG_SUBPIXEL_BITS;
    int32_t cy1 = (maxy - RASTER_HALF) >> WG_SUBPIXEL_BITS;
    cx0 = cx0 < 0 ? 0 : cx0;
    cx1 = cx1 >= (int32_t)t->w ? (int32_t)t->w - 1 : cx1;
    cy0 = cy0 < (int32_t)t->y0 ? (int32_t)t->y0 : cy0;
    cy1 = cy1 >= (int32_t)t->y1 ? (int32_t)t->y1 - 1 : cy1;
    return cx0 <= cx1 && cy0 <= cy1;
}

/* Whether the cell whose right column is (top, bot), its left one in c,
 * can hold a sample centre of t's strip (each triangle's own box lies
 * inside the cell's); c becomes the right column, for the next cell. */
static inline int raster_cell_reaches(const wg_target *t, raster_cols *c,
                                      const wg_svert *top, const wg_svert *bot)
{
    int32_t rx0, rx1, ry0, ry1;
    raster_column(top, bot, &rx0, &rx1, &ry0, &ry1);
    int32_t minx = c->x0 < rx0 ? c->x0 : rx0, maxx = c->x1 > rx1 ? c->x1 : rx1;
    int32_t miny = c->y0 < ry0 ? c->y0 : ry0, maxy = c->y1 > ry1 ? c->y1 : ry1;
    c->x0 = rx0, c->x1 = rx1, c->y0 = ry0, c->y1 = ry1;
    return raster_box_reaches(t, minx, maxx, miny, maxy);
}

/* raster_cell_reaches for a cell alone, its corners top[0..1] and
 * bot[0..1] (a shore cell's ground or water, apart). */
static inline int raster_corners_reach(const wg_target *t,
                                       const wg_svert *top,
                                       const wg_svert *bot)
{
    raster_cols c;
    raster_column(&top[0], &bot[0], &c.x0, &c.x1, &c.y0, &c.y1);
    return raster_cell_reaches(t, &c, &top[1], &bot[1]);
}

/* A cell's two triangles, (a, c, b) and (b, c, d) (wg_block_triangle's
 * order), ids id and id + 1, from its corners' projections. */
static inline uint64_t raster_cell(const wg_target *t, const wg_eye *v,
                                   const wg_block *blk, const wg_svert *top,
                                   const wg_svert *bot, uint64_t id, int cull)
{
    return (uint64_t)raster_one(t, v, blk, &top[0], &bot[0], &top[1], id,
                                cull) +
           (uint64_t)raster_one(t, v, blk, &top[1], &bot[0], &bot[1], id + 1,
                                cull);
}

#if WG_WIDE
/* raster_cell through the queue: its two triangles drawn with the next
 * six (raster_tri8). */
static inline uint64_t raster_cell_queued(const wg_target *t,
                                          const wg_eye *v,
                                          const wg_block *blk,
                                          raster_queue *q, const wg_svert *top,
                                          const wg_svert *bot, uint64_t id,
                                          int cull)
{
    const wg_svert *tri[2][3] = {{&top[0], &bot[0], &top[1]},
                                 {&top[1], &bot[0], &bot[1]}};
    uint64_t count = 0;
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 3; i++)
            q->v[q->n][i] = *tri[k][i];
        q->id[q->n] = id + (uint64_t)k;
        if (++q->n == 8) {
            count += raster_tri8(t, v, blk, q, cull);
            q->n = 0;
        }
    }
    return count;
}
#endif

/* One square of the surface: its rows streamed through two rows of
 * projected vertices, each vertex projected once per square, at the
 * higher of the ground and the water's surface.  A cell draws the ground,
 * the water or both as WG_CELL_* says (the plan's cells, where the
 * square has water): over a cell that draws one, that one is the higher
 * at every corner, so the rows hold its corners; a cell that draws both
 * (a shore: a tenth of the cells with water at --size 512) takes its
 * corners from rows of each, made for the rows that have such a cell (one
 * cell at a time, their projection had been a fortieth of the render's
 * time).  (Drawing the water's squares in a pass of their own
 * had made rasterising a fifth dearer at 512.) */
static uint64_t raster_surface(const wg_target *t, const wg_eye *v,
                               const wg_block *blk, const wg_plan *pl,
                               const wg_piece *pc, int cull)
{
    wg_svert rows[2][WG_PIECE_CELLS + 1], *top = rows[0], *bot = rows[1];
    /* The ground's and the water's rows apart, for the cells that draw
     * both: [0] the ground's, [1] the water's; kept from one row to the
     * next while each has such a cell. */
    wg_svert apart[2][2][WG_PIECE_CELLS + 1];
    wg_svert *gt = apart[0][0], *gb = apart[0][1];
    wg_svert *wt = apart[1][0], *wb = apart[1][1];
    int kept = 0; /* gt and wt hold the row above */
    const uint32_t n = blk->n;
    const uint64_t water = wg_block_water(n);
    const uint32_t bx = pc->a, by = pc->b, ex = pc->ea, ey = pc->eb;
    const float *g = blk->ground, *l = blk->level;
    float sp = wg_block_spacing(n);
    uint64_t count = 0;
#if WG_WIDE
    raster_queue q;
    q.n = 0;
    const int wide = wg_wide();
#define RASTER_CELL(tp, bt, cid)                                              \
    (wide ? raster_cell_queued(t, v, blk, &q, (tp), (bt), (cid), cull)       \
          : raster_cell(t, v, blk, (tp), (bt), (cid), cull))
#else
#define RASTER_CELL(tp, bt, cid) raster_cell(t, v, blk, (tp), (bt), (cid), cull)
#endif
    raster_row(v, g, l, n, sp, by, bx, ex, top);
    for (uint32_t y = by + 1; y <= ey; y++) {
        raster_row(v, g, l, n, sp, y, bx, ex, bot);
        uint64_t id = 2 * ((uint64_t)(y - 1) * (n - 1) + bx);
        const uint8_t *cells = pl->cells + (size_t)(y - 1) * (n - 1) + bx;
        int both = 0;
        for (uint32_t i = 0; pc->mixed && i < ex - bx; i++)
            both |= cells[i] == (WG_CELL_GROUND | WG_CELL_WATER);
        if (both) {
            if (!kept) {
                raster_row(v, g, g, n, sp, y - 1, bx, ex, gt);
                raster_row(v, l, l, n, sp, y - 1, bx, ex, wt);
            }
            raster_row(v, g, g, n, sp, y, bx, ex, gb);
            raster_row(v, l, l, n, sp, y, bx, ex, wb);
        }
        raster_cols c;
        raster_column(&top[0], &bot[0], &c.x0, &c.x1, &c.y0, &c.y1);
        for (uint32_t i = 0; i < ex - bx; i++, id += 2) {
            int reach = raster_cell_reaches(t, &c, &top[i + 1], &bot[i + 1]);
            int what = pc->mixed ? cells[i] : WG_CELL_GROUND;
            if (what != (WG_CELL_GROUND | WG_CELL_WATER)) {
                if (reach)
                    count += RASTER_CELL(&top[i], &bot[i],
                                         what == WG_CELL_WATER ? water + id
                                                               : id);
                continue;
            }
            if (raster_corners_reach(t, &gt[i], &gb[i]))
                count += RASTER_CELL(&gt[i], &gb[i], id);
            if (raster_corners_reach(t, &wt[i], &wb[i]))
                count += RASTER_CELL(&wt[i], &wb[i], water + id);
        }
        wg_svert *tmp = top;
        top = bot;
        bot = tmp;
        if (both) {
            tmp = gt, gt = gb, gb = tmp;
            tmp = wt, wt = wb, wb = tmp;
        }
        kept = both;
    }
#if WG_WIDE
    if (q.n)
        count += raster_tri8(t, v, blk, &q, cull);
#endif
#undef RASTER_CELL
    return count;
}

uint64_t wg_raster_strip(const wg_target *t, const wg_eye *v,
                         const wg_plan *pl, const wg_block *blk, int cull)
{
    const uint32_t n = blk->n;
    uint64_t count = 0;
    for (size_t b = 0; b < pl->count; b++) {
        const wg_piece *k = &pl->pieces[b];
        if (k->ymax < (int32_t)t->y0 || k->ymin >= (int32_t)t->y1)
            continue;
        if (k->kind == WG_PIECE_SURFACE) {
            count += raster_surface(t, v, blk, pl, k, cull);
            continue;
        }
        /* Skirt columns (two triangles each), floor segments (one) or
         * the water's side columns (two), built one by one: 20(N-1) in
         * all.  Their border vertices project exactly as the surface's and
         * the water's did, so the block stays watertight. */
        uint32_t i1 = k->b + WG_PIECE_CELLS < n - 1 ? k->b + WG_PIECE_CELLS
                                                    : n - 1;
        uint64_t col = (uint64_t)k->a * (n - 1) + k->b;
        uint64_t first = k->kind == WG_PIECE_SKIRT
                             ? wg_block_surface(n) + 2 * col
                         : k->kind == WG_PIECE_FLOOR
                             ? wg_block_skirts(n) + col
                             : wg_block_water_sides(n) + 2 * col;
        uint64_t last = first + (uint64_t)(i1 - k->b) *
                                    (k->kind == WG_PIECE_FLOOR ? 1 : 2);
        for (uint64_t id = first; id < last; id++) {
            float p[3][3];
            wg_block_triangle(blk, id, p);
            wg_svert s[3];
            for (int i = 0; i < 3; i++)
                s[i] = raster_project(v, p[i]);
            count += (uint64_t)raster_one(t, v, blk, &s[0], &s[1], &s[2], id,
                                          cull);
        }
    }
    return count;
}
