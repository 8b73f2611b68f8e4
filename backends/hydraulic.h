/* hydraulic.h: SPEC.md stage 3 (hydraulic erosion) one cell at a time, the
 * arithmetic every CPU backend shares.
 *
 * The functions here are the SPEC's operations in the SPEC's order and
 * nothing else, written as selects (no branches on data) so that a row loop
 * around them vectorises; the scalar and OpenMP backends both call them, so
 * they agree by construction and the tests check it anyway.  The shader
 * (shaders/hydraulic.comp) writes the same operations in GLSL.
 *
 * Assumptions: binary32, round to nearest, no FMA contraction (built with
 * -ffp-contract=off), subnormals either kept or flushed: the SPEC's flush
 * rule (ftz) keeps every operation's result a normal number or zero, so the
 * CPU (which keeps subnormals) and a GPU (which may flush them) agree. */
#ifndef WG_HYDRAULIC_H
#define WG_HYDRAULIC_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "spec.h"

/* SPEC ftz(x): |x| < EPS gives +0, anything else x. */
static inline float wg_hyd_ftz(float x, float eps)
{
    return fabsf(x) < eps ? 0.0f : x;
}

/* SPEC ftz(x) where x >= 0, or where the result is discarded when x < 0
 * (a masked lane): x < EPS gives +0.  For x >= 0 it is ftz(x) bit for bit
 * (-0 gives +0 in both) and skips the |x|, one operation of three. */
static inline float wg_hyd_ftz_nn(float x, float eps)
{
    return x < eps ? 0.0f : x;
}

/* SPEC max(a, b) and min(a, b), as selects (libm's fmaxf is a call, and
 * GLSL's max is defined this way). */
static inline float wg_hyd_max(float a, float b)
{
    return a < b ? b : a;
}

static inline float wg_hyd_min(float a, float b)
{
    return b < a ? b : a;
}

/* SPEC rcp(m), m a normal positive number: an integer-seeded reciprocal
 * refined by three Newton steps, each operation correctly rounded, so every
 * device computes the same bits.  Within 2 ulp of 1/m (not the nearest
 * float: the model needs a value it can pin, not the best one). */
static inline float wg_hyd_rcp(float m)
{
    uint32_t u;
    float r;
    memcpy(&u, &m, sizeof u);
    u = 0x7EF311C3u - u;
    memcpy(&r, &u, sizeof r);
    r = r * (2.0f - m * r);
    r = r * (2.0f - m * r);
    r = r * (2.0f - m * r);
    return r;
}

/* The routing weight of a neighbour whose surface lies d below the cell's
 * (d > 0), where gk is 1 for a side and GD for a corner and p = rcp of
 * the cell's steepest weighted drop: t = d gk p in (0, 1], weight t^4.
 * The fourth power sends most of the water down the steepest way, which
 * is what gathers rain into rivers; every product is flushed, so t^4 never
 * falls to a subnormal. */
static inline float wg_hyd_weight(float d, float gk, float p, float eps)
{
    /* Only ever used for d > 0 (every caller selects it away otherwise),
     * so t, t^2 and t^4 are >= 0 and the cheaper flush is exact. */
    float t = wg_hyd_ftz_nn((d * gk) * p, eps);
    float t2 = wg_hyd_ftz_nn(t * t, eps);
    return wg_hyd_ftz_nn(t2 * t2, eps);
}

/* Pass 1, after the neighbours: from the steepest weighted drop dmax and
 * the sum of the weights, P = rcp(dmax) and Q = F * rcp(sum), where F, the
 * share of the water that leaves, is min(FMAX, KF dmax rcp(max(w, EPS))):
 * a thin film runs off FMAX of itself, deep water only as far as levels
 * the surfaces. */
static inline float wg_hyd_route(const wg_hyd_consts *k, float dmax,
                                 float sum, float w)
{
    float f = wg_hyd_min(k->f_max, (dmax * k->kf) *
                                   wg_hyd_rcp(wg_hyd_max(w, k->eps)));
    float r = wg_hyd_rcp(sum > 0.0f ? sum : 1.0f);
    return sum > 0.0f ? f * r : 0.0f;
}

/* Pass 1: P = rcp(dmax), or 0 when no neighbour's surface is lower. */
static inline float wg_hyd_inv(float dmax)
{
    float r = wg_hyd_rcp(dmax > 0.0f ? dmax : 1.0f);
    return dmax > 0.0f ? r : 0.0f;
}

/* Pass 2, one neighbour k (ground bk, water wk, sediment sk, routing pk,
 * qk) of a cell (ground b, surface h, routing p, q); gk is 1 for a side
 * and GD for a corner.  It adds to what the cell gathers: 'out', the share
 * of its water that leaves; 'win' and 'sin', the water and sediment
 * arriving; 'drop', the steepest weighted drop of the ground; 'creep', the
 * ground the cell loses to soil creep (ck is KS for a side, KS/4 for a
 * corner).  A macro, not
 * a function: gcc 12 vectorises a row loop around it only with plain
 * locals. */
#define WG_HYD_GATHER(out, win, sin, drop, creep, b, h, p, q, bk, wk, sk, \
                      pk, qk, gk, ck, eps)                                 \
    do {                                                                   \
        float d_ = wg_hyd_ftz((h) - ((bk) + (wk)), eps);                   \
        float o_ = (out) + wg_hyd_ftz(wg_hyd_weight(d_, gk, p, eps) * (q), \
                                      eps);                                \
        float f_ = wg_hyd_ftz(wg_hyd_weight(-d_, gk, pk, eps) * (qk), eps); \
        float wi_ = (win) + (wk) * f_;                                     \
        float si_ = (sin) + (sk) * f_;                                     \
        float e_ = wg_hyd_ftz((b) - (bk), eps);                            \
        float g_ = e_ * (gk);                                              \
        creep = (creep) + e_ * (ck);                                       \
        out = d_ > 0.0f ? o_ : (out);                                      \
        win = d_ < 0.0f ? wi_ : (win);                                     \
        sin = d_ < 0.0f ? si_ : (sin);                                     \
        drop = wg_hyd_max(drop, g_);                                       \
    } while (0)

/* Pass 2, the end: the cell's new ground, water, sediment and the
 * water's running mean (a, in place: only the cell itself reads it). */
static inline void wg_hyd_finish(const wg_hyd_consts *k, float b, float w,
                                 float s, float out, float win, float sin,
                                 float drop, float creep, float *b_out,
                                 float *w_out, float *s_out, float *a)
{
    const float eps = k->eps;
    /* wg_hyd_ftz_nn where the value is >= 0 (w, out, s, drop, the
     * constants are) or is selected only when it is: the same bits. */
    float wo = wg_hyd_ftz_nn(w * out, eps);
    float w1 = wg_hyd_ftz_nn(wg_hyd_max((w - wo) + win, 0.0f), eps);
    float so = s * out;
    float s1 = wg_hyd_ftz_nn(wg_hyd_max((s - so) + sin, 0.0f), eps);
    float cap = wg_hyd_ftz_nn((wg_hyd_ftz_nn(wo * wo, eps) * drop) * k->kc,
                              eps);
    /* Erode the deficit (at most half the steepest drop), or deposit the
     * excess. */
    float e = wg_hyd_min(wg_hyd_ftz_nn((cap - s1) * k->ke, eps), drop * 0.5f);
    float dep = wg_hyd_ftz_nn((s1 - cap) * k->kd, eps);
    float b1 = s1 < cap ? b - e : b + dep;
    float s2 = s1 < cap ? s1 + e : s1 - dep;
    b1 = wg_hyd_ftz(wg_hyd_ftz(b1, eps) - creep, eps);
    s2 = wg_hyd_ftz(s2, eps);
    float w2 = wg_hyd_ftz_nn((w1 + k->rain) * k->keep, eps);
    float sea = wg_hyd_ftz_nn(k->sea - b1, eps);
    w2 = b1 < k->sea ? sea : w2;
    *b_out = b1;
    *w_out = w2;
    *s_out = s2;
    *a = wg_hyd_ftz(*a + wg_hyd_ftz((w2 - *a) * k->ka, eps), eps);
}

/* The state before the first step: ground b0 = ftz(height), the sea's
 * water over ground below SEA, no sediment, the running mean the water. */
static inline void wg_hyd_start(const wg_hyd_consts *k, float h, float *b0,
                                float *w0, float *s0, float *a0)
{
    float b = wg_hyd_ftz(h, k->eps);
    float sea = wg_hyd_ftz(k->sea - b, k->eps);
    *b0 = b;
    *w0 = b < k->sea ? sea : 0.0f;
    *s0 = 0.0f;
    *a0 = *w0;
}

/* After the last step: the ground is b, the water the sea's w (held at
 * SEA) or on land its running mean a, and the net change of the ground
 * since 'start' (b0).  The sediment still carried stays in the water: laid
 * down where the last step left its packets, it raised needles; the last
 * step's water is packets too (SPEC.md, "After the last step"). */
static inline void wg_hyd_settle(const wg_hyd_consts *k, float b, float w,
                                 float a, float start, float *h_out,
                                 float *w_out, float *sed_out)
{
    *h_out = b;
    *w_out = b < k->sea ? w : a;
    *sed_out = b - start;
}

/* Pass 1 over cells x0 <= x < x1 of an interior row, every cell with all
 * eight neighbours: rows are indexed by world x; 'u' and 'd' are the rows
 * above and below.  Writes P and Q. */
/* always_inline: each backend inlines it into its own row function, built
 * for its own vector width (openmp_hydraulic.c's target clones). */
__attribute__((always_inline)) static inline void wg_hyd_route_row(const wg_hyd_consts *k,
                                    const float *restrict bu,
                                    const float *restrict b,
                                    const float *restrict bd,
                                    const float *restrict wu,
                                    const float *restrict w,
                                    const float *restrict wd, size_t x0,
                                    size_t x1, float *restrict po,
                                    float *restrict qo)
{
    const wg_hyd_consts kk = *k;
    const float gd = kk.slope_d, eps = kk.eps;
#pragma omp simd
    for (size_t x = x0; x < x1; x++) {
        float h = b[x] + w[x];
        /* The eight surface drops in SPEC order, and their weights. */
        float d[8] = {
            wg_hyd_ftz(h - (bu[x - 1] + wu[x - 1]), eps),
            wg_hyd_ftz(h - (bu[x] + wu[x]), eps),
            wg_hyd_ftz(h - (bu[x + 1] + wu[x + 1]), eps),
            wg_hyd_ftz(h - (b[x - 1] + w[x - 1]), eps),
            wg_hyd_ftz(h - (b[x + 1] + w[x + 1]), eps),
            wg_hyd_ftz(h - (bd[x - 1] + wd[x - 1]), eps),
            wg_hyd_ftz(h - (bd[x] + wd[x]), eps),
            wg_hyd_ftz(h - (bd[x + 1] + wd[x + 1]), eps),
        };
        const float g[8] = {gd, 1.0f, gd, 1.0f, 1.0f, gd, 1.0f, gd};
        float dmax = 0.0f, sum = 0.0f;
        for (int i = 0; i < 8; i++)
            dmax = wg_hyd_max(dmax, d[i] * g[i]);
        float p = wg_hyd_inv(dmax);
        for (int i = 0; i < 8; i++) {
            float t = sum + wg_hyd_weight(d[i], g[i], p, eps);
            sum = d[i] > 0.0f ? t : sum;
        }
        po[x] = p;
        qo[x] = wg_hyd_route(&kk, dmax, sum, w[x]);
    }
}

/* The rows around an interior row of pass 2: [0] above, [1] the row, [2]
 * below, each indexed by world x. */
typedef struct wg_hyd_rows {
    const float *b[3], *w[3], *s[3], *p[3], *q[3];
    const float *b0[3]; /* the ground before the first step: the world's
                           edge reads it (scalar.c) */
    float *a; /* the row's running mean, updated in place */
} wg_hyd_rows;

/* Pass 2 over cells x0 <= x < x1 of an interior row (all eight neighbours
 * exist), into bo, wo, so and the running mean in->a (indexed by world
 * x). */
__attribute__((always_inline)) static inline void wg_hyd_step_row(const wg_hyd_consts *k,
                                   const wg_hyd_rows *in, size_t x0,
                                   size_t x1, float *restrict bo,
                                   float *restrict wo, float *restrict so)
{
    float *restrict am = in->a;
    const wg_hyd_consts kk = *k; /* in registers, not re-read per cell */
    const float gd = kk.slope_d, eps = kk.eps;
    const float cso = kk.creep_o, csd = kk.creep_d;
    const float *restrict b0 = in->b[0], *restrict b1 = in->b[1],
                          *restrict b2 = in->b[2];
    const float *restrict w0 = in->w[0], *restrict w1 = in->w[1],
                          *restrict w2 = in->w[2];
    const float *restrict s0 = in->s[0], *restrict s1 = in->s[1],
                          *restrict s2 = in->s[2];
    const float *restrict p0 = in->p[0], *restrict p1 = in->p[1],
                          *restrict p2 = in->p[2];
    const float *restrict q0 = in->q[0], *restrict q1 = in->q[1],
                          *restrict q2 = in->q[2];
#pragma omp simd
    for (size_t x = x0; x < x1; x++) {
        float b = b1[x], w = w1[x], p = p1[x], q = q1[x], h = b + w;
        float out = 0.0f, win = 0.0f, sin = 0.0f, drop = 0.0f, creep = 0.0f;
#define WG_HYD_NB(row, dx, g, c)                                             \
    WG_HYD_GATHER(out, win, sin, drop, creep, b, h, p, q, b##row[x + dx],    \
                  w##row[x + dx], s##row[x + dx], p##row[x + dx],            \
                  q##row[x + dx], g, c, eps)
        WG_HYD_NB(0, -1, gd, csd);
        WG_HYD_NB(0, 0, 1.0f, cso);
        WG_HYD_NB(0, 1, gd, csd);
        WG_HYD_NB(1, -1, 1.0f, cso);
        WG_HYD_NB(1, 1, 1.0f, cso);
        WG_HYD_NB(2, -1, gd, csd);
        WG_HYD_NB(2, 0, 1.0f, cso);
        WG_HYD_NB(2, 1, gd, csd);
#undef WG_HYD_NB
        float nb, nw, ns, na = am[x];
        wg_hyd_finish(&kk, b, w, s1[x], out, win, sin, drop, creep, &nb, &nw,
                      &ns, &na);
        bo[x] = nb;
        wo[x] = nw;
        so[x] = ns;
        am[x] = na;
    }
}

/* ------------------------------------------------ the CPU backends' buffers */

struct wg_fields;

/* The host buffers of stage 3 on the cells a backend computes (the
 * world, or a region and its halo).  The ground ping-pongs
 * between the result field 'height' (b[0]) and the backend's second height
 * buffer (b[1]), the water between 'water' (w[0]) and w[1]; the starting
 * ground b0, the running mean a and the second sediment s[1] are the
 * normals' three fields, which nothing reads until stage 4 writes them
 * (at 8192, 0.8 GB fewer bytes touched); the rest is the stage's own. */
typedef struct wg_hyd_buffers {
    float *b0;         /* the starting ground, for the net sediment */
    float *b[2], *w[2], *s[2];
    float *a;          /* the water's running mean, updated in place */
    float *p, *q;      /* pass 1's routing */
    int borrowed;      /* no steps: s[0] is the fields' sediment and a their
                          water (the start writes w there too): not ours */
} wg_hyd_buffers;

/* What step i reads and writes. */
typedef struct wg_hyd_state {
    float *b, *w, *s;    /* read */
    float *bo, *wo, *so; /* written */
    float *a;            /* read and written in place */
} wg_hyd_state;

/* Take the buffers, of 'cells' floats each, for 'steps' steps on the
 * fields 'f' whose second height buffer is 'other'; with no steps only the
 * start runs, and b0 and the step buffers are NULL.  'routing': pass 1's
 * shares in fields of their own, p and q (the scalar backend; OpenMP keeps
 * them in rows of its own and takes none: 8 bytes a cell fewer, which its
 * memory check had counted and a job's limit refused).  Returns 0, or -1
 * when memory runs out (then wg_hyd_buffers_free() still frees what was
 * taken). */
int wg_hyd_buffers_alloc(wg_hyd_buffers *hb, struct wg_fields *f,
                         float *other, size_t cells, uint32_t steps,
                         int routing);

/* The buffers step i reads and writes (i = steps: what the last wrote). */
wg_hyd_state wg_hyd_buffers_step(const wg_hyd_buffers *hb, uint32_t i);

/* After 'steps' steps, leave the final water in f->water (the ground is
 * settled into f->height by the caller). */
void wg_hyd_buffers_finish(wg_hyd_buffers *hb, struct wg_fields *f,
                           uint32_t steps);

/* Free what wg_hyd_buffers_alloc() took (not the fields).  No operation is
 * performed on members that are NULL. */
void wg_hyd_buffers_free(wg_hyd_buffers *hb);

#endif
