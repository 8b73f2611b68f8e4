/* openmp_hydraulic.c: stage 3 of the OpenMP backend, the hydraulic
 * erosion: the row kernels of a step's two passes (pass 1 makes each
 * cell's eight shares of its water, pass 2 takes in its neighbours'), and
 * the sweeps that run them over each thread's band of rows, both passes
 * of a step fused, two steps to a sweep, a band's edges waiting on its
 * neighbours' progress.  The same bits as scalar.c for any thread count,
 * as the backend's other stages (openmp.c says how).
 *
 * Measured on the 2-core CI machine (AMD EPYC with AVX-512, gcc 12; medians
 * of 7-9 runs, from the --json figures; 6 octaves, 12 passes):
 * - stage 3's start (ground, sea, zero sediment) is a vectorised row, not
 *   the scalar backend's cell by cell: 4096 with no steps, one thread,
 *   0.15-0.24 s -> 0.09-0.11 s, most of it now the faults of the water and
 *   sediment fields' first pages.
 * - the hydraulic steps go in pairs, the second a sweep two rows behind
 *   the first in each band (openmp_hyd_pair), so a pair reads the state
 *   from memory once: Intel Xeon VM, two threads, medians in turn, 20
 *   steps at 2048 319 -> 289 ms, 100 at 512 83.9 -> 78.8 ms; the same bits.
 */
#define _GNU_SOURCE /* cpu_set_t (openmp_team.h) */
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "hydraulic.h"
#include "openmp_stage.h"
#include "openmp_team.h"

/* Stage 3, the fast way to the same bits.  SPEC.md's pass 2 recomputes,
 * for each of a cell's eight neighbours, the share of water it sends the
 * cell (its weight times its Q) and the cell's own shares; here pass 1
 * computes every cell's eight shares once, in a ring of three rows that
 * stays in the cache, and pass 2 reads them.  A share is the SPEC's
 * ftz(weight(d, g, P) * Q) when the surface drop d > 0 and +0 otherwise; a
 * cell adds w[k] * share and s[k] * share for every neighbour, which for a
 * neighbour that sends nothing adds +0 and changes no bit (water and
 * sediment are never negative), so the sums are the SPEC's.  scalar.c keeps
 * the SPEC's plain form, and the tests hold the two to the bit.  Measured
 * on one thread (AVX2, medians of 3): 19.8 ns a cell-step at 512 and 18.8
 * at 2048 with the SPEC's form, 13.4 and 16.4 with the shares.
 *
 * Directions are numbered in SPEC order, i = 0..7 for (dy, dx) = (-1,-1),
 * (-1,0), (-1,1), (0,-1), (0,1), (1,-1), (1,0), (1,1); the neighbour in
 * direction i sees the cell in direction 7 - i. */
static const int openmp_dx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
static const int openmp_dy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};

/* A thread's ring: the shares of three rows, and the water
 * surface b + w of three rows (pass 1 reads each row's surface three
 * times, and each cell's nine times), row y in slot (y + 1) % 3; NULL rows
 * stand outside the world.
 *
 * Beyond the world's edge lie SPEC.md's ghosts, whose surface GH goes on
 * at the slope the surface has at the edge: each surface row has one at
 * each end, and 'above' and 'below' are the rows of ghosts beyond the
 * first and the last row (each with its two corner ghosts), made when pass
 * 1 of those rows needs them (openmp_ghost_row).  So pass 1 runs the
 * vector kernel over every cell of every row, a ghost a neighbour like any
 * other there; it had taken the cell-by-cell path on the border, a tenth
 * of the stage at 512. */
typedef struct openmp_ring {
    float *share[3][8];
    float *surf[3];
    float *above, *below;
    const float *b0; /* the starting ground, all of it: pass 2's ghosts */
} openmp_ring;

/* The rows pass 1 or 2 of row y reads: the state rows y-1..y+1 (NULL
 * outside the world) and, for pass 2, the ring and the row's running mean
 * of the water (updated in place). */
typedef struct openmp_hyd_in {
    const float *b[3], *w[3], *s[3];
    const float *h[3]; /* pass 1: the surface rows, b + w */
    const float *share[3][8];
    float *a;
    /* Pass 2, the ghosts' ground GB (SPEC.md "The world's edge"), the
     * starting ground of the cell each stands beside: for the first row
     * the first row of it (ga), for the last the last (gz), NULL
     * elsewhere, indexed as the rows and moved with them; and all of it
     * (b0, n columns), for the first and the last column, and the row y
     * of how many. */
    const float *ga, *gz, *b0;
    uint32_t n, y, rows;
} openmp_hyd_in;

/* The ground GB of the ghost at (gx, gy), one step outside the grid: the
 * starting ground of the cell it stands beside. */
static inline float openmp_ghost_at(const openmp_hyd_in *in, int64_t gx,
                                    int64_t gy)
{
    int64_t cx = gx < 0 ? 0 : gx >= in->n ? in->n - 1 : gx;
    int64_t cy = gy < 0 ? 0 : gy >= in->rows ? in->rows - 1 : gy;
    return in->b0[cy * in->n + cx];
}

/* A ghost's term of pass 2 (SPEC.md "The world's edge"): it counts only
 * in the steepest drop, through its ground GB; its water share is among
 * the cell's own shares, from pass 1, and it gives nothing and takes no
 * creep.  The drop is a max of +0 and nonzero numbers, so the order in
 * which the ghosts join it changes no bit. */
#define OMP_GHOST(gbv, g, b, drop)                                               do {                                                                             float e_ = wg_hyd_ftz((b) - (gbv), eps);                                     drop = wg_hyd_max(drop, e_ * (g));                                       } while (0)

/* SPEC weight(d, g, p) for d = +0 or d >= EPS, with one flush where the
 * SPEC has three: t = (d g) p lies in [0, about 1], so if t or t^2 is
 * below EPS, t^4 is below EPS too and the last flush makes it +0 as the
 * SPEC's earlier ones would; otherwise those flushes change nothing.  The
 * same bits whether the CPU keeps subnormals or flushes them (an
 * unflushed t^4 may be subnormal; the last flush takes it to +0 either
 * way).  Four operations fewer of the nine a neighbour: a cell-step at
 * 512 on one thread went from 10.6 to 10.1 ns (medians of 9, 100 steps). */
static inline float openmp_hyd_weight(float d, float g, float p, float eps)
{
    float t = (d * g) * p, t2 = t * t;
    return wg_hyd_ftz_nn(t2 * t2, eps);
}

/* The statements for the first of a loop pass's J cells (j = 0), and for
 * the others (j = 1 .. J - 1) when J is larger: J is a constant where it is
 * used, so the tests fold away and gcc vectorises the loop (loops over j
 * stopped it: "two or more consecutive inner loops").  The arrays the
 * statements index hold OMP_J_MAX cells, so that the branches for j the
 * loop's J leaves out index inside them too (clang warned of them). */
#define OMP_J_MAX 4
#define OMP_J(...)                                                           \
    do {                                                                     \
        {                                                                    \
            const int j = 0;                                                 \
            __VA_ARGS__;                                                     \
        }                                                                    \
        if (J > 1) {                                                         \
            const int j = 1;                                                 \
            __VA_ARGS__;                                                     \
        }                                                                    \
        if (J > 2) {                                                         \
            const int j = 2;                                                 \
            __VA_ARGS__;                                                     \
        }                                                                    \
        if (J > 3) {                                                         \
            const int j = 3;                                                 \
            __VA_ARGS__;                                                     \
        }                                                                    \
    } while (0)

/* Pass 1 of the cells x0 + j * off + [0, x1 - x0) of a row for j < J,
 * every cell with eight neighbours, ghosts standing in for those outside
 * the world (openmp_ring).  Its first half is hydraulic.h's
 * wg_hyd_route_row; sharing it through an inline helper with array
 * out-parameters stopped gcc 12 from vectorising either loop (measured:
 * 8.4 to 46 ns a cell-step at 2048), so the two stay apart and the tests
 * hold them to the same bits.
 *
 * Each pass of the loop makes J cells, one from each of J stretches of the
 * row, their operations interleaved: a cell's operations are one long
 * chain (the steepest drop, rcp, the weights' sum, rcp again, the shares),
 * longer than the CPU's scheduler looks ahead, and the other stretches'
 * cells give it independent work beside it.
 *
 * The steepest drop is the SPEC's running max taken as a tree: every
 * d * g is +0 or positive (a drop below EPS, or towards a higher
 * neighbour, is flushed to +0 here, as pass 1 needs only d > 0), and the
 * max of such numbers is the greatest of them whatever the order, so the
 * bits are the SPEC's and the chain is three maxes long instead of eight. */
static inline __attribute__((always_inline)) void
openmp_hyd_route_kernel(const wg_hyd_consts *k, const openmp_hyd_in *in,
                        size_t x0, size_t x1, size_t off, const int J,
                        float *const share[8])
{
    const float eps = k->eps, gd = k->slope_d;
    const float *restrict hu = in->h[0], *restrict h1 = in->h[1],
                          *restrict hd = in->h[2];
    const float *restrict w = in->w[1];
    float *restrict s0 = share[0], *restrict s1 = share[1],
                    *restrict s2 = share[2], *restrict s3 = share[3],
                    *restrict s4 = share[4], *restrict s5 = share[5],
                    *restrict s6 = share[6], *restrict s7 = share[7];
#pragma omp simd
    for (size_t x = x0; x < x1; x++) {
        float h[OMP_J_MAX], d[8][OMP_J_MAX], dmax[OMP_J_MAX], sum[OMP_J_MAX],
            p[OMP_J_MAX], wt[8][OMP_J_MAX], q[OMP_J_MAX];
        OMP_J(h[j] = h1[x + j * off]);
#define OMP_D(i, row, dx)                                                    \
        OMP_J(d[i][j] = wg_hyd_ftz_nn(h[j] - row[x + j * off + dx], eps))
        OMP_D(0, hu, -1); OMP_D(1, hu, 0); OMP_D(2, hu, 1);
        OMP_D(3, h1, -1); OMP_D(4, h1, 1);
        OMP_D(5, hd, -1); OMP_D(6, hd, 0); OMP_D(7, hd, 1);
#undef OMP_D
        /* Corners (0, 2, 5, 7) weighted by GD, sides by 1. */
        OMP_J(dmax[j] = wg_hyd_max(
                  wg_hyd_max(wg_hyd_max(d[0][j] * gd, d[1][j]),
                             wg_hyd_max(d[2][j] * gd, d[3][j])),
                  wg_hyd_max(wg_hyd_max(d[4][j], d[5][j] * gd),
                             wg_hyd_max(d[6][j], d[7][j] * gd))));
        OMP_J(p[j] = wg_hyd_inv(dmax[j]); sum[j] = 0.0f);
#define OMP_W(i, g)                                                          \
        OMP_J(wt[i][j] = openmp_hyd_weight(d[i][j], g, p[j], eps);           \
              sum[j] = sum[j] + wt[i][j])
        OMP_W(0, gd); OMP_W(1, 1.0f); OMP_W(2, gd); OMP_W(3, 1.0f);
        OMP_W(4, 1.0f); OMP_W(5, gd); OMP_W(6, 1.0f); OMP_W(7, gd);
#undef OMP_W
        OMP_J(q[j] = wg_hyd_route(k, dmax[j], sum[j], w[x + j * off]));
        OMP_J(const size_t xx = x + j * off;
              s0[xx] = wg_hyd_ftz_nn(wt[0][j] * q[j], eps);
              s1[xx] = wg_hyd_ftz_nn(wt[1][j] * q[j], eps);
              s2[xx] = wg_hyd_ftz_nn(wt[2][j] * q[j], eps);
              s3[xx] = wg_hyd_ftz_nn(wt[3][j] * q[j], eps);
              s4[xx] = wg_hyd_ftz_nn(wt[4][j] * q[j], eps);
              s5[xx] = wg_hyd_ftz_nn(wt[5][j] * q[j], eps);
              s6[xx] = wg_hyd_ftz_nn(wt[6][j] * q[j], eps);
              s7[xx] = wg_hyd_ftz_nn(wt[7][j] * q[j], eps));
    }
}

/* Pass 1 of the cells [x0, x1) of a row: four stretches of whole vectors
 * interleaved, then what is left as two halves (sharing the middle cell
 * when the span is odd: pass 1 writes only the cell's shares, from inputs,
 * so a cell made twice gets the same bits).  Two stretches had been 7.0
 * cycles a cell in llvm-mca's model of pass 1 (Sapphire Rapids), bound by
 * the chain; four are 4.9, with the tree above. */
OPENMP_CLONES
static void openmp_hyd_route_cells(const wg_hyd_consts *k,
                                   const openmp_hyd_in *in, size_t x0,
                                   size_t x1, float *const share[8])
{
    const size_t m = (x1 - x0) / (4 * OPENMP_LANES) * OPENMP_LANES;
    if (m > 0)
        openmp_hyd_route_kernel(k, in, x0, x0 + m, m, 4, share);
    x0 += 4 * m;
    if (x0 < x1) {
        const size_t len = x1 - x0, half = (len + 1) / 2;
        openmp_hyd_route_kernel(k, in, x0, x0 + half, len - half, 2, share);
    }
}

/* Pass 2 of one cell, with the neighbours that exist ('has') and ghosts
 * for the others. */
static void openmp_hyd_step_cell(const wg_hyd_consts *k,
                                 const openmp_hyd_in *in, size_t x,
                                 const int has[8], float *bo, float *wo,
                                 float *so)
{
    const float eps = k->eps, b = in->b[1][x];
    float win = 0.0f, sin = 0.0f, drop = 0.0f, creep = 0.0f;
    for (int i = 0; i < 8; i++) {
        int corner = openmp_dx[i] && openmp_dy[i];
        if (!has[i]) {
            float gb = openmp_ghost_at(in, (int64_t)x + openmp_dx[i],
                                       (int64_t)in->y + openmp_dy[i]);
            OMP_GHOST(gb, corner ? k->slope_d : 1.0f, b, drop);
            continue;
        }
        size_t xx = x + (size_t)(ptrdiff_t)openmp_dx[i];
        int r = 1 + openmp_dy[i];
        float f = in->share[r][7 - i][xx];
        win = win + in->w[r][xx] * f;
        sin = sin + in->s[r][xx] * f;
        float e = wg_hyd_ftz(b - in->b[r][xx], eps);
        drop = wg_hyd_max(drop, e * (corner ? k->slope_d : 1.0f));
        creep = creep + e * (corner ? k->creep_d : k->creep_o);
    }
    /* 'out', the sum of the cell's own shares in SPEC order (a share to
     * a neighbour that is not there is +0, which adds nothing). */
    float out = 0.0f;
    for (int i = 0; i < 8; i++)
        out = out + in->share[1][i][x];
    wg_hyd_finish(k, b, in->w[1][x], in->s[1][x], out, win, sin,
                  drop, creep, &bo[x], &wo[x], &so[x], &in->a[x]);
}

/* One neighbour's terms of pass 2 for the cell of ground b: the water and
 * the sediment it sends (its share f of them), and the drop and the creep
 * towards it (g, c: side or corner); at index xk of its rows, added into
 * the cell's sums win, sin, drop and creep.  The vector kernel and the edge
 * cells (openmp_hyd_step_side) share it. */
#define OMP_NB(f, wr, zr, br, xk, g, c, b, win, sin, drop, creep)             \
    do {                                                                     \
        win = win + wr[xk] * f[xk];                                          \
        sin = sin + zr[xk] * f[xk];                                          \
        float e_ = wg_hyd_ftz(b - br[xk], eps);                              \
        drop = wg_hyd_max(drop, e_ * (g));                                   \
        creep = creep + e_ * (c);                                            \
    } while (0)

/* Pass 2 of the cells [x0, x1) of a row, and with J = 2 of the cells off
 * further on too, interleaved as in pass 1 (openmp_hyd_route_cells); none
 * of them in the first or the last column: with the row above if 'up',
 * the row below if 'down' (constants where it is inlined, so each case is
 * its own loop).  The halves must not overlap: the running mean a is
 * updated in place. */
static inline __attribute__((always_inline)) void
openmp_hyd_step_kernel(const wg_hyd_consts *k, const openmp_hyd_in *in,
                       size_t x0, size_t x1, size_t off, const int J,
                       float *restrict bo, float *restrict wo,
                       float *restrict so, const int up, const int down)
{
    const wg_hyd_consts kk = *k;
    const float eps = kk.eps, gd = kk.slope_d;
    const float co = kk.creep_o, cd = kk.creep_d;
    const float *restrict b0 = in->b[0], *restrict b1 = in->b[1],
                          *restrict b2 = in->b[2];
    const float *restrict w0 = in->w[0], *restrict w1 = in->w[1],
                          *restrict w2 = in->w[2];
    const float *restrict z0 = in->s[0], *restrict z1 = in->s[1],
                          *restrict z2 = in->s[2];
    /* The share each neighbour sends the cell: direction 7 - i of the
     * neighbour in direction i. */
    const float *restrict f0 = in->share[0][7], *restrict f1 = in->share[0][6],
                          *restrict f2 = in->share[0][5];
    const float *restrict f3 = in->share[1][4], *restrict f4 = in->share[1][3];
    const float *restrict f5 = in->share[2][2], *restrict f6 = in->share[2][1],
                          *restrict f7 = in->share[2][0];
    const float *restrict o0 = in->share[1][0], *restrict o1 = in->share[1][1],
                          *restrict o2 = in->share[1][2], *restrict o3 = in->share[1][3],
                          *restrict o4 = in->share[1][4], *restrict o5 = in->share[1][5],
                          *restrict o6 = in->share[1][6], *restrict o7 = in->share[1][7];
    float *restrict am = in->a;
    const float *restrict ga = in->ga, *restrict gz = in->gz;
#pragma omp simd
    for (size_t x = x0; x < x1; x++) {
        float b[OMP_J_MAX], win[OMP_J_MAX], sin[OMP_J_MAX], drop[OMP_J_MAX],
            creep[OMP_J_MAX], out[OMP_J_MAX];
        OMP_J(b[j] = b1[x + j * off];
              win[j] = sin[j] = drop[j] = creep[j] = out[j] = 0.0f);
        /* 'out' is summed here from the cell's own shares, in SPEC
         * order, not at the end of pass 1: there it lengthened the chain
         * of dependent operations that bounds pass 1 (the shares wait for
         * rcp(sum), which waits for the weights); here it runs beside the
         * neighbours' sums.  Two threads, 400 steps at 512: 0.575 ->
         * 0.544 s (medians of 9, run in turn); one thread at 2048 the
         * same; the same bits. */
#define OMP_OUT(o)                                                           \
        OMP_J(out[j] = out[j] + o[x + j * off])
        OMP_OUT(o0); OMP_OUT(o1); OMP_OUT(o2); OMP_OUT(o3);
        OMP_OUT(o4); OMP_OUT(o5); OMP_OUT(o6); OMP_OUT(o7);
#undef OMP_OUT
        /* The neighbours that exist, in SPEC order (the ghosts beyond the
         * first or the last row come after them: below). */
#define OMP_NBJ(f, wr, zr, br, dx, g, c)                                     \
        OMP_J(OMP_NB(f, wr, zr, br, x + j * off + dx, g, c, b[j], win[j],  \
                     sin[j], drop[j], creep[j]))
        if (up) {
            OMP_NBJ(f0, w0, z0, b0, -1, gd, cd);
            OMP_NBJ(f1, w0, z0, b0, 0, 1.0f, co);
            OMP_NBJ(f2, w0, z0, b0, 1, gd, cd);
        }
        OMP_NBJ(f3, w1, z1, b1, -1, 1.0f, co);
        OMP_NBJ(f4, w1, z1, b1, 1, 1.0f, co);
        if (down) {
            OMP_NBJ(f5, w2, z2, b2, -1, gd, cd);
            OMP_NBJ(f6, w2, z2, b2, 0, 1.0f, co);
            OMP_NBJ(f7, w2, z2, b2, 1, gd, cd);
        }
#undef OMP_NBJ
        /* The first or the last row of the world: the ghosts beyond it. */
#define OMP_GJ(row, dx, g)                                                           OMP_J(OMP_GHOST(row[x + j * off + dx], g, b[j], drop[j]))
        if (!up) {
            OMP_GJ(ga, -1, gd);
            OMP_GJ(ga, 0, 1.0f);
            OMP_GJ(ga, 1, gd);
        }
        if (!down) {
            OMP_GJ(gz, -1, gd);
            OMP_GJ(gz, 0, 1.0f);
            OMP_GJ(gz, 1, gd);
        }
#undef OMP_GJ
        float nb[OMP_J_MAX], nw[OMP_J_MAX], ns[OMP_J_MAX], na[OMP_J_MAX];
        OMP_J(na[j] = am[x + j * off]);
        OMP_J(wg_hyd_finish(&kk, b[j], w1[x + j * off], z1[x + j * off],
                            out[j], win[j], sin[j], drop[j], creep[j],
                            &nb[j], &nw[j], &ns[j], &na[j]));
        OMP_J(bo[x + j * off] = nb[j]; wo[x + j * off] = nw[j];
              so[x + j * off] = ns[j]; am[x + j * off] = na[j]);
    }
}

/* openmp_hyd_step_kernel with the rows that exist as constants: the cells
 * [x0, x1) as two interleaved halves when there are two whole vectors or
 * more, and what is left over alone. */
static inline __attribute__((always_inline)) void
openmp_hyd_step_rows(const wg_hyd_consts *k, const openmp_hyd_in *in,
                     size_t x0, size_t x1, float *restrict bo,
                     float *restrict wo, float *restrict so, int up, int down)
{
    const size_t m = (x1 - x0) / (2 * OPENMP_LANES) * OPENMP_LANES;
#define OMP_ROWS(a0, a1, off, J)                                             \
    do {                                                                     \
        if (up && down)                                                      \
            openmp_hyd_step_kernel(k, in, a0, a1, off, J, bo, wo, so, 1, 1); \
        else if (up)                                                         \
            openmp_hyd_step_kernel(k, in, a0, a1, off, J, bo, wo, so, 1, 0); \
        else if (down)                                                       \
            openmp_hyd_step_kernel(k, in, a0, a1, off, J, bo, wo, so, 0, 1); \
        else                                                                 \
            openmp_hyd_step_kernel(k, in, a0, a1, off, J, bo, wo, so, 0, 0); \
    } while (0)
    if (m > 0)
        OMP_ROWS(x0, x0 + m, m, 2);
    if (x0 + 2 * m < x1)
        OMP_ROWS(x0 + 2 * m, x1, 0, 1);
#undef OMP_ROWS
}

/* 'in' with every row moved 'by' cells on: the copy's cell x is in's cell
 * x + by (rows that are not there stay NULL). */
static openmp_hyd_in openmp_hyd_shift(const openmp_hyd_in *in, size_t by)
{
    openmp_hyd_in t = *in;
    for (int r = 0; r < 3; r++) {
        t.b[r] = in->b[r] ? in->b[r] + by : NULL;
        t.w[r] = in->w[r] ? in->w[r] + by : NULL;
        t.s[r] = in->s[r] ? in->s[r] + by : NULL;
        t.h[r] = in->h[r] ? in->h[r] + by : NULL;
        for (int i = 0; i < 8; i++)
            t.share[r][i] = in->share[r][i] ? in->share[r][i] + by : NULL;
    }
    t.a = in->a ? in->a + by : NULL;
    t.ga = in->ga ? in->ga + by : NULL;
    t.gz = in->gz ? in->gz + by : NULL;
    return t;
}

/* Pass 2 of the cells [x0, x1) of a row, as openmp_hyd_step_kernel: the
 * first and the last row of the world run the vector kernel too, without
 * the row that is not there (they had taken the cell-by-cell path).
 *
 * Whole vectors only: the r cells past the last whole vector are made as
 * the last OPENMP_LANES cells of the row again, one vector, into scratch,
 * of which the r are kept.  gcc's loop had made them one at a time: at
 * 512 a row's 510 inner cells left 14, a quarter of the pass's time (a
 * tenth of the stage).  Not in place: a cell's running mean a is updated
 * in place, and the cells before the r must not be made twice. */
OPENMP_CLONES
static void openmp_hyd_step_cells(const wg_hyd_consts *k,
                                  const openmp_hyd_in *in, size_t x0,
                                  size_t x1, float *restrict bo,
                                  float *restrict wo, float *restrict so,
                                  int up, int down)
{
    const size_t end = openmp_tail(x0, x1);
    openmp_hyd_step_rows(k, in, x0, end, bo, wo, so, up, down);
    if (end == x1)
        return;
    /* The copy's cells 1..LANES are in's x1 - LANES .. x1 - 1 (from 1, so
     * that the kernel's x - 1 stays an index); in's first cell, x0, is at
     * least 1 (column 0 is the edge code's), so the copy's rows start at
     * in's cell x1 - LANES - 1 >= 0. */
    const size_t r = x1 - end, by = x1 - OPENMP_LANES - 1;
    openmp_hyd_in t = openmp_hyd_shift(in, by);
    float tb[OPENMP_LANES + 1], tw[OPENMP_LANES + 1], ts[OPENMP_LANES + 1];
    float ta[OPENMP_LANES + 1];
    memcpy(ta + 1, in->a + by + 1, OPENMP_LANES * sizeof *ta);
    t.a = ta;
    openmp_hyd_step_rows(k, &t, 1, OPENMP_LANES + 1, tb, tw, ts, up, down);
    const size_t from = OPENMP_LANES + 1 - r; /* in's cell 'end' */
    memcpy(bo + end, tb + from, r * sizeof *tb);
    memcpy(wo + end, tw + from, r * sizeof *tw);
    memcpy(so + end, ts + from, r * sizeof *ts);
    memcpy(in->a + end, ta + from, r * sizeof *ta);
}

/* Which of cell x's neighbours exist in row y of a grid of n columns and
 * 'rows' rows. */
static void openmp_hyd_has(uint32_t n, uint32_t rows, uint32_t x, uint32_t y,
                           int has[8])
{
    for (int i = 0; i < 8; i++) {
        int64_t xx = (int64_t)x + openmp_dx[i], yy = (int64_t)y + openmp_dy[i];
        has[i] = xx >= 0 && yy >= 0 && xx < n && yy < rows;
    }
}

/* Pass 2 of cell x of the first (left) or the last (right) column, with
 * the neighbours that exist (and the ghosts for those that do not) as
 * constants: openmp_hyd_step_cell's
 * operations in its order, unrolled.  The loop over eight neighbours with
 * a test each had cost 6% of the stage at 512 on AVX2 (two such cells a
 * row of 513; measured by leaving them out). */
static inline __attribute__((always_inline)) void
openmp_hyd_step_side(const wg_hyd_consts *k, const openmp_hyd_in *in,
                     size_t x, const int left, const int right, const int up,
                     const int down, float *bo, float *wo, float *so)
{
    const float eps = k->eps, gd = k->slope_d, co = k->creep_o,
                cd = k->creep_d, b = in->b[1][x];
    float win = 0.0f, sin = 0.0f, drop = 0.0f, creep = 0.0f;
    /* Neighbour i (SPEC order) in row r (0 above, 1 the cell's, 2 below)
     * at column xx: the share it sends is its own share 7 - i. */
#define OMP_SIDE(i, r, xx, g, c)                                             \
    OMP_NB(in->share[r][7 - (i)], in->w[r], in->s[r], in->b[r], xx, g, c, b, \
           win, sin, drop, creep)
    /* A neighbour beyond the edge is a ghost (dx, dy from the cell). */
#define OMP_SIDE_GHOST(dx, dy, g)                                            \
    OMP_GHOST(openmp_ghost_at(in, (int64_t)x + (dx), (int64_t)in->y + (dy)), \
              g, b, drop)
    if (up && left)
        OMP_SIDE(0, 0, x - 1, gd, cd);
    else
        OMP_SIDE_GHOST(-1, -1, gd);
    if (up)
        OMP_SIDE(1, 0, x, 1.0f, co);
    else
        OMP_SIDE_GHOST(0, -1, 1.0f);
    if (up && right)
        OMP_SIDE(2, 0, x + 1, gd, cd);
    else
        OMP_SIDE_GHOST(1, -1, gd);
    if (left)
        OMP_SIDE(3, 1, x - 1, 1.0f, co);
    else
        OMP_SIDE_GHOST(-1, 0, 1.0f);
    if (right)
        OMP_SIDE(4, 1, x + 1, 1.0f, co);
    else
        OMP_SIDE_GHOST(1, 0, 1.0f);
    if (down && left)
        OMP_SIDE(5, 2, x - 1, gd, cd);
    else
        OMP_SIDE_GHOST(-1, 1, gd);
    if (down)
        OMP_SIDE(6, 2, x, 1.0f, co);
    else
        OMP_SIDE_GHOST(0, 1, 1.0f);
    if (down && right)
        OMP_SIDE(7, 2, x + 1, gd, cd);
    else
        OMP_SIDE_GHOST(1, 1, gd);
#undef OMP_SIDE_GHOST
#undef OMP_SIDE
#undef OMP_NB
    float out = 0.0f;
    for (int i = 0; i < 8; i++)
        out = out + in->share[1][i][x];
    wg_hyd_finish(k, b, in->w[1][x], in->s[1][x], out, win, sin, drop, creep,
                  &bo[x], &wo[x], &so[x], &in->a[x]);
}

/* openmp_hyd_step_side for the first column (first != 0) or the last, of
 * a row with the rows above and below that exist. */
static void openmp_hyd_step_edge(const wg_hyd_consts *k,
                                 const openmp_hyd_in *in, size_t x, int first,
                                 int up, int down, float *bo, float *wo,
                                 float *so)
{
#define OMP_EDGE(l, r)                                                       \
    do {                                                                     \
        if (up && down)                                                      \
            openmp_hyd_step_side(k, in, x, l, r, 1, 1, bo, wo, so);          \
        else if (up)                                                         \
            openmp_hyd_step_side(k, in, x, l, r, 1, 0, bo, wo, so);          \
        else if (down)                                                       \
            openmp_hyd_step_side(k, in, x, l, r, 0, 1, bo, wo, so);          \
        else                                                                 \
            openmp_hyd_step_side(k, in, x, l, r, 0, 0, bo, wo, so);          \
    } while (0)
    if (first)
        OMP_EDGE(0, 1);
    else
        OMP_EDGE(1, 0);
#undef OMP_EDGE
}

/* Pass 2 of row y of a grid of n columns and 'rows' rows: the vector
 * kernel but in the first and the last column, which take the edge code
 * (the cell code, with the neighbours that exist and ghosts, on a grid
 * narrower than three). */
static void openmp_hyd_row(const wg_consts *c, const openmp_hyd_in *in,
                           uint32_t n, uint32_t rows, uint32_t y, float *o0,
                           float *o1, float *o2)
{
    const int up = y > 0, down = y < rows - 1;
    if (n >= 3) {
        openmp_hyd_step_edge(&c->hyd, in, 0, 1, up, down, o0, o1, o2);
        openmp_hyd_step_cells(&c->hyd, in, 1, n - 1, o0, o1, o2, up, down);
        openmp_hyd_step_edge(&c->hyd, in, n - 1, 0, up, down, o0, o1, o2);
        return;
    }
    int has[8];
    for (uint32_t x = 0; x < n; x++) {
        openmp_hyd_has(n, rows, x, y, has);
        openmp_hyd_step_cell(&c->hyd, in, x, has, o0, o1, o2);
    }
}

/* Row y of a field of n columns and 'rows' rows, or NULL outside it. */
static inline float *openmp_row(float *f, uint32_t y, uint32_t n,
                                uint32_t rows)
{
    return y < rows ? f + (size_t)y * n : NULL;
}

/* A ghost's water surface (SPEC.md "The world's edge"): the value v at
 * its edge cell e going on at the slope from the cell j one further in,
 * v[e] + (v[e] - v[j]). */
static inline float openmp_ghost(float vc, float vi)
{
    return vc + (vc - vi);
}

/* The water surface b + w of a row (n >= 2), which pass 1 reads, and the
 * ghosts at its two ends. */
OPENMP_CLONES
static void openmp_surface_row(const float *restrict b,
                               const float *restrict w, float *restrict h,
                               uint32_t n)
{
#pragma omp simd
    for (uint32_t x = 0; x < n; x++)
        h[x] = b[x] + w[x];
    h[-1] = openmp_ghost(h[0], h[1]);
    h[n] = openmp_ghost(h[n - 1], h[n - 2]);
}

/* The ghosts' water surfaces beyond the first or the last row, from that
 * row (v0) and the one further in (v1), into g indexed from -1 to n, for
 * pass 1 of the edge row.  The corner ghosts go on diagonally. */
OPENMP_CLONES
static void openmp_ghost_row(const float *restrict v0,
                             const float *restrict v1, float *restrict g,
                             uint32_t n)
{
#pragma omp simd
    for (uint32_t x = 0; x < n; x++)
        g[x] = openmp_ghost(v0[x], v1[x]);
    g[-1] = openmp_ghost(v0[0], v1[1]);
    g[n] = openmp_ghost(v0[n - 1], v1[n - 2]);
}

#define SLOT(y) (((y) + 1) % 3)
#define ROW(f, y) openmp_row(f, y, n, rows)

/* The start of a sweep whose pass 2 begins at row y0: the water surface of
 * the two rows before the first row pass 1 makes (y0 - 1, or 0). */
static void openmp_hyd_sweep_start(const wg_hyd_state *st, uint32_t n,
                                   uint32_t rows, uint32_t y0,
                                   const openmp_ring *ring)
{
    const uint32_t first = y0 > 0 ? y0 - 1 : 0;
    for (uint32_t y = first > 0 ? first - 1 : 0; y <= first && y < rows; y++)
        openmp_surface_row(ROW(st->b, y), ROW(st->w, y),
                           ring->surf[SLOT(y)], n);
}

/* Iteration y of a sweep that makes pass 2 of the rows [y0, y1): the
 * surface of row y + 1, pass 1 of row y into the ring, then pass 2 of row
 * y - 1, whose three rows of shares are ready now (and of row y itself
 * when it is the last), where they lie in [y0, y1).  A sweep runs its
 * iterations from y0 - 1 (or 0) to y1 (or the last row): pass 1 of its
 * edge rows is made again rather than waited for from the neighbouring
 * bands, which make the same bits. */
static void openmp_hyd_sweep_row(const wg_consts *c, const wg_hyd_state *st,
                                 uint32_t n, uint32_t rows, uint32_t y0,
                                 uint32_t y1, const openmp_ring *ring,
                                 uint32_t y)
{
    openmp_hyd_in in;
    memset(&in, 0, sizeof in);
    if (y + 1 < rows)
        openmp_surface_row(ROW(st->b, y + 1), ROW(st->w, y + 1),
                           ring->surf[SLOT(y + 1)], n);
    for (int k = 0; k < 3; k++) {
        uint32_t yy = y - 1 + (uint32_t)k;
        in.b[k] = ROW(st->b, yy);
        in.w[k] = ROW(st->w, yy);
        in.h[k] = yy < rows ? ring->surf[SLOT(yy)] : NULL;
    }
    /* The ghosts beyond the world's first and last rows.  R is at least 2
     * by 2 when there are steps (its halo is at least 3 cells, the world
     * at least 2 on a side), so the edge row has one further in. */
    if (y == 0) {
        openmp_ghost_row(ring->surf[SLOT(0)], ring->surf[SLOT(1)],
                         ring->above, n);
        in.h[0] = ring->above;
    }
    if (y == rows - 1) {
        openmp_ghost_row(ring->surf[SLOT(rows - 1)],
                         ring->surf[SLOT(rows - 2)], ring->below, n);
        in.h[2] = ring->below;
    }
    openmp_hyd_route_cells(&c->hyd, &in, 0, n, ring->share[SLOT(y)]);
    uint32_t ys[2] = {y - 1, y};
    for (int j = 0; j < 2; j++) {
        uint32_t r = ys[j];
        int ready = j == 0 ? y >= 1 : y == rows - 1;
        if (!ready || r < y0 || r >= y1)
            continue;
        for (int k = 0; k < 3; k++) {
            uint32_t yy = r - 1 + (uint32_t)k;
            in.b[k] = ROW(st->b, yy);
            in.w[k] = ROW(st->w, yy);
            in.s[k] = ROW(st->s, yy);
            for (int i = 0; i < 8; i++)
                in.share[k][i] = yy < rows ? ring->share[SLOT(yy)][i] : NULL;
        }
        in.a = ROW(st->a, r);
        in.b0 = ring->b0;
        in.ga = r == 0 ? ring->b0 : NULL;
        in.gz = r == rows - 1 ? ring->b0 + (size_t)(rows - 1) * n : NULL;
        in.n = n;
        in.y = r;
        in.rows = rows;
        openmp_hyd_row(c, &in, n, rows, r, ROW(st->bo, r), ROW(st->wo, r),
                       ROW(st->so, r));
    }
}
#undef ROW
#undef SLOT

/* The last iteration of a sweep over the band [y0, y1). */
static uint32_t openmp_hyd_sweep_last(uint32_t y1, uint32_t rows)
{
    return y1 < rows ? y1 : rows - 1;
}

/* One step over the rows [y0, y1) of a thread's band: pass 1 of a row runs
 * just before pass 2 first needs it, into the thread's ring, so the shares
 * never go to memory. */
static void openmp_hyd_band(const wg_consts *c, const wg_hyd_state *st,
                            uint32_t n, uint32_t rows, uint32_t y0,
                            uint32_t y1, const openmp_ring *ring)
{
    openmp_hyd_sweep_start(st, n, rows, y0, ring);
    for (uint32_t y = y0 > 0 ? y0 - 1 : 0; y <= openmp_hyd_sweep_last(y1, rows);
         y++)
        openmp_hyd_sweep_row(c, st, n, rows, y0, y1, ring, y);
}

/* How far each thread's sweep of the first step of a pair has gone: the
 * pair's number in the high half, the iterations done in the low; on a
 * cache line of its own. */
typedef struct openmp_progress {
    _Atomic uint64_t done;
    char pad[64 - sizeof(uint64_t)];
} openmp_progress;

static void openmp_progress_wait(openmp_progress *p, uint64_t want)
{
    for (unsigned k = 0;
         atomic_load_explicit(&p->done, memory_order_acquire) < want; k++) {
#ifdef OPENMP_X86
        if (k < 4096) {
            _mm_pause();
            continue;
        }
#endif
        sched_yield();
    }
}

/* How many iterations step i + 1 runs behind step i in a pair: its
 * iteration z reads the rows step i makes up to z + 1, made by step i's
 * iteration z + 2, and writes row z - 1 of the buffers step i reads, which
 * step i's later iterations (from z + 3 on) no longer read. */
#define OPENMP_PAIR_LAG 2

/* The fewest rows a band may have for the steps to go in pairs. */
#define OPENMP_PAIR_ROWS 8

/* Two steps, i (st0) and i + 1 (st1), in one sweep of a thread's band
 * [y0, y1): each row step i makes goes through step i + 1 a few rows
 * later, while its rows are still in the cache, so each pair of steps
 * reads the state from memory once.  Step i + 1 reads what the
 * neighbouring bands make in step i beside its edges, and writes rows
 * that they read in step i:
 * - its first rows (pass 2 of y0 and y0 + 1, after another band's) wait
 *   until the band above has finished step i, and run last;
 * - its last rows (from the iteration that first reads row y1) wait until
 *   the band below has made step i's rows y1 and y1 + 1, which it does
 *   first (it has long done so by then).
 * 'pair' numbers the pairs from 1; 'done' is every thread's progress. */
static void openmp_hyd_pair(const wg_consts *c, const wg_hyd_state *st0,
                            const wg_hyd_state *st1, uint32_t n,
                            uint32_t rows, uint32_t y0, uint32_t y1,
                            const openmp_ring *r0, const openmp_ring *r1,
                            openmp_progress *done, uint32_t id, uint32_t nt,
                            uint64_t pair)
{
    const uint64_t tag = pair << 32;
    const uint32_t last = openmp_hyd_sweep_last(y1, rows);
    const uint32_t first0 = y0 > 0 ? y0 - 1 : 0;
    /* Step i + 1's pass 2 from row 'top' on in the sweep, the rows before
     * it after the band above is done. */
    const uint32_t top = id > 0 ? y0 + 2 : y0;
    const uint32_t first1 = top > 0 ? top - 1 : 0;
    openmp_hyd_sweep_start(st0, n, rows, y0, r0);
    int below = id + 1 == nt; /* the band below made rows y1, y1 + 1 */
    for (uint32_t y = first0; y <= last + OPENMP_PAIR_LAG; y++) {
        if (y <= last) {
            openmp_hyd_sweep_row(c, st0, n, rows, y0, y1, r0, y);
            atomic_store_explicit(&done[id].done, tag | (y + 1u),
                                  memory_order_release);
        }
        if (y < first1 + OPENMP_PAIR_LAG)
            continue;
        const uint32_t z = y - OPENMP_PAIR_LAG;
        if (z == first1)
            openmp_hyd_sweep_start(st1, n, rows, top, r1);
        if (!below && z + 1 >= y1) {
            /* Its iteration y1 + 2 has made pass 2 of row y1 + 1. */
            openmp_progress_wait(&done[id + 1], tag | (y1 + 3u));
            below = 1;
        }
        openmp_hyd_sweep_row(c, st1, n, rows, top, y1, r1, z);
    }
    if (top > y0) {
        /* The band above ends its sweep of step i at row y0. */
        openmp_progress_wait(&done[id - 1], tag | (y0 + 1u));
        openmp_hyd_sweep_start(st1, n, rows, y0, r1);
        for (uint32_t z = y0 - 1; z <= top; z++)
            openmp_hyd_sweep_row(c, st1, n, rows, y0, top, r1, z);
    }
}

/* The start of stage 3 (wg_hyd_start) over one row, in place: h becomes
 * the ground b; w the sea's depth, s zero and a the water (a may be w,
 * as when there are no steps: wg_hyd_buffers_alloc). */
OPENMP_CLONES
static void openmp_hyd_start_row(const wg_hyd_consts *k, float *restrict h,
                                 float *w, float *restrict sed, float *a,
                                 uint32_t n)
{
    const float eps = k->eps, sea = k->sea;
#pragma omp simd
    for (uint32_t x = 0; x < n; x++) {
        float b = wg_hyd_ftz(h[x], eps);
        float depth = wg_hyd_ftz(sea - b, eps);
        h[x] = b;
        w[x] = b < sea ? depth : 0.0f;
        sed[x] = 0.0f;
    }
    if (a != w)
        memcpy(a, w, n * sizeof *a);
}

/* The end of stage 3 (wg_hyd_settle) over one row: the ground, the water
 * (the sea's depth, or the land's running mean) and the net sediment; h
 * may be b, and wo w (each cell reads its own values before it writes
 * them).  It had been the scalar backend's settle, a cell at a time
 * through its views: 6% of a run at 8193 with one step. */
OPENMP_CLONES
static void openmp_hyd_settle_row(const wg_hyd_consts *k, const float *b,
                                  const float *w, const float *restrict a,
                                  const float *restrict b0, float *h,
                                  float *wo, float *restrict sed, uint32_t n)
{
    const float sea = k->sea;
#pragma omp simd
    for (uint32_t x = 0; x < n; x++) {
        const float g = b[x];
        const float water = g < sea ? w[x] : a[x];
        sed[x] = g - b0[x];
        wo[x] = water;
        h[x] = g;
    }
}

/* Stage 3: the steps run over bands of rows, one band a thread, both
 * passes fused, two steps to a sweep (openmp_hyd_pair; one alone where a
 * band is thinner than OPENMP_PAIR_ROWS, and for an odd last step:
 * openmp_hyd_band), with one barrier after each sweep: the next reads
 * rows that the neighbouring bands wrote in this one. */
void openmp_hydraulic(openmp_ctx *s, openmp_team *tm, uint32_t id,
                      uint32_t nt)
{
    const wg_consts *c = &s->job->consts;
    const uint32_t steps = s->job->world.steps;
    const wg_rect all = s->all;
    const uint32_t n = all.w, rows = all.h;
    const uint32_t y0 = (uint32_t)((uint64_t)rows * id / nt);
    const uint32_t y1 = (uint32_t)((uint64_t)rows * (id + 1) / nt);
    wg_hyd_buffers *hb = &s->hb;
    if (id == 0 && wg_hyd_buffers_alloc(hb, &s->f, s->other,
                                        wg_rect_cells(all), steps, 0) != 0) {
        char what[160];
        wg_job_describe(s->job, what, sizeof what);
        openmp_team_fail(tm, "openmp: out of memory for the hydraulic stage "
                         "of %s", what);
    }
    /* How far each thread has gone, for the steps in pairs. */
    const int paired = steps >= 2 && rows / nt >= OPENMP_PAIR_ROWS;
    if (id == 0 && paired) {
        s->hyd_done = aligned_alloc(64, nt * sizeof *s->hyd_done);
        if (s->hyd_done)
            for (uint32_t t = 0; t < nt; t++)
                atomic_init(&s->hyd_done[t].done, 0);
        else
            openmp_team_fail(tm, "openmp: out of memory for the hydraulic "
                             "stage's progress");
    }
    /* Two rings, one for each step of a pair: 3 rows of 8 shares and the
     * surface each, and the two rows of ghosts beyond the world's first
     * and last rows, 29 rows a ring, each 80 bytes past a multiple of the
     * row: rows a power of two apart (8 KiB at 2048) would fall in the
     * same L1 sets and evict each other (measured at 2048, one thread:
     * 28.3 ns a cell-step unpadded, 16.4 padded; 512 is 13.4 either
     * way). */
    const size_t stride = (size_t)n + 20;
    float *pq = malloc(58 * stride * sizeof(float));
    openmp_ring ring[2];
    if (pq) {
        for (int k = 0; k < 2; k++) {
            float *at = pq + (size_t)(29 * k) * stride;
            for (int r = 0; r < 3; r++) {
                for (int i = 0; i < 8; i++)
                    ring[k].share[r][i] = at + (size_t)(9 * r + i) * stride;
                /* A surface row and its two ghosts. */
                ring[k].surf[r] = at + (size_t)(9 * r + 8) * stride + 1;
            }
            ring[k].above = at + 27 * stride + 1;
            ring[k].below = at + 28 * stride + 1;
            ring[k].b0 = NULL; /* made with the buffers, below */
        }
    } else {
        openmp_team_fail(tm, "openmp: out of memory for the hydraulic "
                         "stage's rows");
    }
    openmp_barrier_wait(&tm->bar, id); /* the buffers are made, or not */
    const int failed = tm->bar.stop;
    if (!failed)
        ring[0].b0 = ring[1].b0 = hb->b0;
    if (!failed) {
        /* The fields this stage writes first, each thread its band's
         * pages at once (openmp_first_touch), not a trap a page as its
         * rows first write them: on the 2-core AMD EPYC VM the six
         * fields' 1.5k faults at 512 had been 15 ms of the stage's 245. */
        float *fresh[6] = {hb->w[0], hb->s[0], hb->a,
                           hb->w[1], hb->s[1], s->f.sediment};
        const size_t a = (size_t)y0 * n * sizeof(float);
        const size_t b = (size_t)y1 * n * sizeof(float);
        for (int k = 0; k < 6; k++)
            if (fresh[k]) /* with no steps, some are NULL or the same */
                openmp_first_touch((char *)fresh[k], a, b);
    }
    for (uint32_t y = y0; y < y1 && !failed; y++) {
        const size_t at = (size_t)y * n;
        /* In place: the heights become the starting ground, kept. */
        openmp_hyd_start_row(&c->hyd, hb->b[0] + at, hb->w[0] + at,
                             hb->s[0] + at, hb->a + at, n);
        if (steps > 0)
            memcpy(hb->b0 + at, hb->b[0] + at, n * sizeof(float));
    }
    openmp_barrier_wait(&tm->bar, id);
    for (uint32_t i = 0; i < steps && !failed;) {
        wg_hyd_state st = wg_hyd_buffers_step(hb, i);
        if (paired && i + 1 < steps) {
            wg_hyd_state st1 = wg_hyd_buffers_step(hb, i + 1);
            openmp_hyd_pair(c, &st, &st1, n, rows, y0, y1, &ring[0],
                            &ring[1], s->hyd_done, id, nt, i / 2 + 1);
            i += 2;
        } else {
            if (y0 < y1)
                openmp_hyd_band(c, &st, n, rows, y0, y1, &ring[0]);
            i++;
        }
        if (id == 0 && s->job->progress) /* one thread tells */
            s->job->progress("hydraulic", (double)i / steps);
        openmp_barrier_wait(&tm->bar, id);
    }
    free(pq);
    if (!failed && steps > 0) {
        /* With no steps the start has written everything: the ground, the
         * sea, and zero sediment into the field. */
        wg_hyd_state st = wg_hyd_buffers_step(hb, steps);
        for (uint32_t y = y0; y < y1; y++) {
            const size_t at = (size_t)y * n;
            openmp_hyd_settle_row(&c->hyd, st.b + at, st.w + at, st.a + at,
                                  hb->b0 + at, s->f.height + at, st.w + at,
                                  s->f.sediment + at, n);
        }
    }
    openmp_barrier_wait(&tm->bar, id); /* every row is settled */
    /* The stage's buffers are freed when the backend closes
     * (openmp_close), not here: unmapping them took thread 0 long enough
     * that the other slept at the barrier after the stage, and woke into
     * the normals 90-230 us late (at 512, where the normals take 0.1-0.2
     * ms). */
    if (id == 0) {
        free(s->hyd_done);
        s->hyd_done = NULL;
        if (!failed)
            wg_hyd_buffers_finish(hb, &s->f, steps);
    }
}
