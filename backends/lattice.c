/* lattice.c: the SPEC.md host constants and the shared random lattice.
 *
 * Everything here runs once per world on the host; the backends only read
 * what it produces, so a world is the same on every backend by construction
 * of its inputs. */
#include "spec.h"

/* (float)cos(o * 0.64) and (float)sin(o * 0.64) as SPEC.md tabulates them.
 * The table, not libm, is the authority: libm's cos differs between C
 * libraries in the last place and the world must not. */
static const float lattice_cos[WG_MAX_OCTAVES] = {
    0x1p+0f,         0x1.9aac4cp-1f,  0x1.2598acp-2f,  -0x1.5e5c7ap-2f,
    -0x1.abd24ap-1f, -0x1.ff207ep-1f, -0x1.881fcp-1f,  -0x1.d7a912p-3f,
    0x1.95ee64p-2f,  0x1.bb82c4p-1f,  0x1.fc82bcp-1f,  0x1.743cdap-1f,
    0x1.6285p-3f,    -0x1.cc1de6p-2f, -0x1.c9b008p-1f, -0x1.f82902p-1f,
};
static const float lattice_sin[WG_MAX_OCTAVES] = {
    0x0p+0f,        0x1.31c39ap-1f,  0x1.ea810ep-1f,  0x1.e11936p-1f,
    0x1.19451ep-1f, -0x1.de3374p-5f, -0x1.493722p-1f, -0x1.f23ca6p-1f,
    -0x1.d60d56p-1f, -0x1.ffa22p-2f, 0x1.dd62b2p-4f,  0x1.5f8b3cp-1f,
    0x1.f8454p-1f,  0x1.c9671p-1f,   0x1.cafb52p-2f,  -0x1.65057p-3f,
};

void wg_consts_init(wg_consts *c, const wg_world *w)
{
    uint32_t n = w->size;
    float norm = 0.0f, amp = 1.0f, freq = 1.0f;

    c->n = n;
    c->octaves = w->octaves;
    c->inv_n = 1.0f / (float)(n - 1);
    c->base = WG_BASE;
    for (uint32_t o = 0; o < WG_MAX_OCTAVES; o++) {
        c->freq[o] = freq;
        c->amp[o] = amp;
        c->offs[o] = (float)(o * 17);
        c->cos[o] = lattice_cos[o];
        c->sin[o] = lattice_sin[o];
        if (o < w->octaves)
            norm += amp; /* exact: a sum of distinct powers of two */
        freq *= 2.0f;
        amp *= 0.5f;
    }
    c->inv_norm = 1.0f / norm;
    c->talus = 4.0f / (float)(n - 1);
    c->rate = WG_RATE;

    float s = WG_WORLD_UNITS / (float)(n - 1);
    c->k2 = WG_HEIGHT_UNITS / (2.0f * s);
    c->k1 = WG_HEIGHT_UNITS / s;

    wg_hyd_init(&c->hyd, w);
}

/* SPEC min(a, b), on the host as on the device. */
static float lattice_min(float a, float b)
{
    return b < a ? b : a;
}

float wg_sea_of(float v)
{
    return v < WG_HYD_EPS && v > -WG_HYD_EPS ? 0.0f : v;
}

void wg_hyd_init(wg_hyd_consts *h, const wg_world *w)
{
    /* q: how many cells of a 513 world one cell of this one spans, so that
     * the constants (chosen at 513) mean the same in world terms: a step
     * stands for a time q, so rates go with q and diffusion with 1 / q.
     * KC goes as 1 / q (measured: the mean change the stage makes is then
     * 1.24e-2 at 257 and 1.25e-2 at 513; with q it was 1.81e-2 and 1.25e-2,
     * with q^2 2.38e-2).  KS: 0.015 keeps the 513-against-2049 difference
     * under a quarter of the change for the seeds tried (README: 19.3% for
     * seed 1234, 20.8% for 0xC0FFEE; when the end still laid the carried
     * sediment down, 20.5% and 23.3%, and 0.01 gave 23.0% and 25.5%, no
     * creep 54%); creep is what makes a valley as wide in world units at
     * every resolution rather than one cell wide at each. */
    const float q = 512.0f / (float)(w->size - 1);
    /* SEA is flushed like the stage's values (SPEC "Host constants"): a
     * subnormal sea level would be 0 on a GPU that flushes its operands
     * and not on the CPU, and 'b < SEA' would disagree at b = 0. */
    h->sea = wg_sea_of(w->sea);
    h->slope_d = 0x1.6a09e6p-1f;
    /* KF, as 1 / q up to 0.5: where the water is deeper than its drop to
     * the steepest neighbour, a step moves at most KF dmax of it, and dmax
     * shrinks with the cell, so a cell's flow per unit of width and time
     * goes as KF q.  With KF 0.5 at every size, a 2049 world's streams
     * carried a quarter of a 513 world's for the same depth, stood deeper
     * and wider, and the water over 0.001 covered 2.7 and 3.2 points more
     * of the land (seeds 1234 and 0xC0FFEE; README, "The same landscape
     * at every resolution"); with 0.125 / q, 0.34 and 0.25.  A step cannot
     * level more than half a drop without sending the water back and
     * forth, so KF stops at 0.5, reached at 2049: beyond it a cell's flow
     * shrinks again.  (0.25 at every size had made lakes flatter but held
     * still more water at 2049 than at 513.) */
    h->kf = lattice_min(0.125f / q, 0.5f);
    /* FMAX: a thin film had run off whole each step (F = 1), so the water
     * on a slope moved in packets, one cell a step, in step with each
     * other along a grid line and not along a bent one; the squared
     * discharge of the packets cut those lines deeper, and the default
     * world's slopes were scored with straight gullies a cell wide along
     * the rows and columns, in ladders.  With half the water at most, the
     * flow is steady from step to step, the gullies follow the ground and
     * join, and more of the land drains (default world, D8 on the ground:
     * pits 898 -> 397, to the sea 17.8% -> 25.2%; 0.25 drained more, 164
     * and 32.3%, but made the rivers fewer and wide as lakes). */
    h->f_max = 0.5f;
    h->rain = 5e-6f * q;
    h->keep = 1.0f - 0.001f * q;
    h->kc = 1e6f / q;
    h->ke = lattice_min(0.3f * q, 1.0f);
    h->kd = lattice_min(0.3f * q, 1.0f);
    h->creep_o = lattice_min(0.015f / q, 0.2f);
    h->creep_d = h->creep_o * 0.25f;
    /* KA: the water's running mean spans about 1 / KA steps, 10 at 513
     * and 20 at 1025 (measured there: the water surface had 5418 cells
     * over 0.001 above all eight neighbours with the last step's water,
     * 446 with the mean; a mean over 33 steps, 402, lags the lakes'
     * filling more for little gain). */
    h->ka = lattice_min(0.1f * q, 1.0f);
    h->eps = WG_HYD_EPS;
}

void wg_lattice_fill(float *lat, uint64_t seed)
{
    uint64_t state = seed;
    for (size_t k = 0; k < (size_t)WG_LATTICE_R * WG_LATTICE_R; k++) {
        state += 0x9E3779B97F4A7C15ull;
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        lat[k] = (float)(z >> 40) * 0x1p-24f;
    }
}

uint32_t wg_default_passes(uint32_t n)
{
    double q = (double)(n - 1) / 512.0;
    double p = 12.0 * q * q;
    return p > WG_EROSION_MAX ? WG_EROSION_MAX : (uint32_t)(p + 0.5);
}

uint32_t wg_default_steps(uint32_t n)
{
    double q = (double)(n - 1) / 512.0;
    double p = 400.0 * q;
    return p > WG_HYDRAULIC_MAX ? WG_HYDRAULIC_MAX : (uint32_t)(p + 0.5);
}
