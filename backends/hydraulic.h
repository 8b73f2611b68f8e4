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

/* Pass 1, one neighbour: the demand A grows by d * ck when the cell's water
 * surface H stands above the neighbour's Hk. */
static inline float wg_hyd_demand(float a, float h, float hk, float ck,
                                  float eps)
{
    float d = wg_hyd_ftz(h - hk, eps);
    float t = a + d * ck;
    return d > 0.0f ? t : a;
}

/* Pass 1, the end: R = min(rcp(max(A, w)), V), or 0 when both are 0. */
static inline float wg_hyd_scale(float a, float w, float vmax)
{
    float m = wg_hyd_max(a, w);
    float r = wg_hyd_min(wg_hyd_rcp(m > 0.0f ? m : 1.0f), vmax);
    return m > 0.0f ? r : 0.0f;
}

/* Pass 2, one neighbour k (ground bk, water wk, sediment sk, scale rk) of a
 * cell (ground b, surface h, scale r); ck and gk are FO/GD's for its kind.
 * It adds to what the cell gathers: 'out', the share of its water that
 * leaves; 'win' and 'sin', the water and sediment arriving; 'drop', the
 * steepest drop of the ground to a neighbour.  A macro, not a function:
 * gcc 12 vectorises a row loop around it only with plain locals. */
#define WG_HYD_GATHER(out, win, sin, drop, b, h, r, bk, wk, sk, rk, ck, gk, \
                      eps)                                                  \
    do {                                                                    \
        float d_ = wg_hyd_ftz((h) - ((bk) + (wk)), eps);                    \
        float o_ = (out) + ((d_ * (ck)) * (r));                             \
        float f_ = ((-d_) * (ck)) * (rk);                                   \
        float wi_ = (win) + (wk) * f_;                                      \
        float si_ = (sin) + (sk) * f_;                                      \
        float g_ = wg_hyd_ftz((b) - (bk), eps) * (gk);                      \
        out = d_ > 0.0f ? o_ : (out);                                       \
        win = d_ < 0.0f ? wi_ : (win);                                      \
        sin = d_ < 0.0f ? si_ : (sin);                                      \
        drop = wg_hyd_max(drop, g_);                                        \
    } while (0)

/* Pass 2, the end: the cell's new ground, water and sediment. */
static inline void wg_hyd_finish(const wg_hyd_consts *k, float b, float w,
                                 float s, float out, float win, float sin,
                                 float drop, float *b_out, float *w_out,
                                 float *s_out)
{
    const float eps = k->eps;
    float wo = wg_hyd_ftz(w * out, eps);
    float w1 = wg_hyd_ftz(wg_hyd_max((w - wo) + win, 0.0f), eps);
    float so = s * out;
    float s1 = wg_hyd_ftz(wg_hyd_max((s - so) + sin, 0.0f), eps);
    float cap = wg_hyd_ftz((wo * drop) * k->kc, eps);
    /* Erode the deficit (at most half the steepest drop), or deposit the
     * excess. */
    float e = wg_hyd_min(wg_hyd_ftz((cap - s1) * k->ke, eps), drop * 0.5f);
    float dep = wg_hyd_ftz((s1 - cap) * k->kd, eps);
    float b1 = s1 < cap ? b - e : b + dep;
    float s2 = s1 < cap ? s1 + e : s1 - dep;
    b1 = wg_hyd_ftz(b1, eps);
    s2 = wg_hyd_ftz(s2, eps);
    float w2 = wg_hyd_ftz((w1 + k->rain) * k->keep, eps);
    float sea = wg_hyd_ftz(k->sea - b1, eps);
    *b_out = b1;
    *w_out = b1 < k->sea ? sea : w2;
    *s_out = s2;
}

/* The state before the first step: ground b0 = ftz(height), the sea's
 * water over ground below SEA, no sediment. */
static inline void wg_hyd_start(const wg_hyd_consts *k, float h, float *b0,
                                float *w0, float *s0)
{
    float b = wg_hyd_ftz(h, k->eps);
    float sea = wg_hyd_ftz(k->sea - b, k->eps);
    *b0 = b;
    *w0 = b < k->sea ? sea : 0.0f;
    *s0 = 0.0f;
}

/* After the last step: the sediment still carried settles where it is.
 * 'start' is b0; the result is the ground and the net change. */
static inline void wg_hyd_settle(const wg_hyd_consts *k, float b, float s,
                                 float start, float *h_out, float *sed_out)
{
    float h = wg_hyd_ftz(b + s, k->eps);
    *h_out = h;
    *sed_out = h - start;
}

/* Pass 1 over cells x0 <= x < x1 of an interior row, every cell with all
 * eight neighbours: rows are indexed by world x; up/dn are the rows above
 * and below. */
static inline void wg_hyd_scale_row(const wg_hyd_consts *k,
                                    const float *restrict bu,
                                    const float *restrict b,
                                    const float *restrict bd,
                                    const float *restrict wu,
                                    const float *restrict w,
                                    const float *restrict wd, size_t x0,
                                    size_t x1, float *restrict r)
{
    const float fo = k->flow_o, fd = k->flow_d, eps = k->eps, v = k->vmax;
#pragma omp simd
    for (size_t x = x0; x < x1; x++) {
        float h = b[x] + w[x], a = 0.0f;
        a = wg_hyd_demand(a, h, bu[x - 1] + wu[x - 1], fd, eps);
        a = wg_hyd_demand(a, h, bu[x] + wu[x], fo, eps);
        a = wg_hyd_demand(a, h, bu[x + 1] + wu[x + 1], fd, eps);
        a = wg_hyd_demand(a, h, b[x - 1] + w[x - 1], fo, eps);
        a = wg_hyd_demand(a, h, b[x + 1] + w[x + 1], fo, eps);
        a = wg_hyd_demand(a, h, bd[x - 1] + wd[x - 1], fd, eps);
        a = wg_hyd_demand(a, h, bd[x] + wd[x], fo, eps);
        a = wg_hyd_demand(a, h, bd[x + 1] + wd[x + 1], fd, eps);
        r[x] = wg_hyd_scale(a, w[x], v);
    }
}

/* The rows around an interior row of pass 2: [0] above, [1] the row, [2]
 * below, each indexed by world x. */
typedef struct wg_hyd_rows {
    const float *b[3], *w[3], *s[3], *r[3];
} wg_hyd_rows;

/* Pass 2 over cells x0 <= x < x1 of an interior row (all eight neighbours
 * exist), into bo, wo, so (indexed by world x). */
static inline void wg_hyd_step_row(const wg_hyd_consts *k,
                                   const wg_hyd_rows *in, size_t x0,
                                   size_t x1, float *restrict bo,
                                   float *restrict wo, float *restrict so)
{
    const wg_hyd_consts kk = *k; /* in registers, not re-read per cell */
    const float fo = kk.flow_o, fd = kk.flow_d, gd = kk.slope_d;
    const float eps = kk.eps;
    const float *restrict b0 = in->b[0], *restrict b1 = in->b[1],
                          *restrict b2 = in->b[2];
    const float *restrict w0 = in->w[0], *restrict w1 = in->w[1],
                          *restrict w2 = in->w[2];
    const float *restrict s0 = in->s[0], *restrict s1 = in->s[1],
                          *restrict s2 = in->s[2];
    const float *restrict r0 = in->r[0], *restrict r1 = in->r[1],
                          *restrict r2 = in->r[2];
#pragma omp simd
    for (size_t x = x0; x < x1; x++) {
        float b = b1[x], w = w1[x], r = r1[x], h = b + w;
        float out = 0.0f, win = 0.0f, sin = 0.0f, drop = 0.0f;
#define WG_HYD_NB(row, dx, c, g)                                             \
    WG_HYD_GATHER(out, win, sin, drop, b, h, r, b##row[x + dx],              \
                  w##row[x + dx], s##row[x + dx], r##row[x + dx], c, g, eps)
        WG_HYD_NB(0, -1, fd, gd);
        WG_HYD_NB(0, 0, fo, 1.0f);
        WG_HYD_NB(0, 1, fd, gd);
        WG_HYD_NB(1, -1, fo, 1.0f);
        WG_HYD_NB(1, 1, fo, 1.0f);
        WG_HYD_NB(2, -1, fd, gd);
        WG_HYD_NB(2, 0, fo, 1.0f);
        WG_HYD_NB(2, 1, fd, gd);
#undef WG_HYD_NB
        float nb, nw, ns;
        wg_hyd_finish(&kk, b, w, s1[x], out, win, sin, drop, &nb, &nw, &ns);
        bo[x] = nb;
        wo[x] = nw;
        so[x] = ns;
    }
}

#endif
