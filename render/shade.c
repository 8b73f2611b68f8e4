/* shade.c: light, sky and haze, water, the sun's shadows, the resolve
 * from visibility-buffer keys to pixels, and the map's pixels.
 *
 * All light is added in linear RGB and turned into sRGB once, at the end;
 * the colours below are written in sRGB, as a painter picks them.
 *
 * The ground's colour comes from material.c, from the values at the point
 * shaded.  A low sun gives the relief, a cool sky fill keeps the shadow side
 * blue rather than black, cast shadows come from one sweep over the grid,
 * and distance haze sets the far side back.  Where the water's surface is
 * nearest (render.h), the ground under it is seen through the water,
 * dimmed and tinted with the depth between them, with the sky reflected by
 * the Fresnel term of the view angle and the sun's glint.
 *
 * A row of pixels is shaded in batches (wg_shade_rows): their samples
 * gathered, the rays met with their triangles, the colours made, the
 * pixels put together.  Where the CPU has AVX2 (wg_wide), the rays to the
 * surface are met eight at a time (shade_meet8) and the ground and the
 * water over it shaded eight at a time (shade_surface8, shade_mirror8),
 * each lane to the bit as the one-at-a-time code (shade_meet_at,
 * shade_colour) gives it; the block's sides stay one at a time. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "wide.h"

/* Keys whose depths differ by less than this (2^13 of the 28-bit depth:
 * 0.8%) belong to one continuous stretch of ground, and the pixel is shaded
 * once at its centre; otherwise once per sample. */
#define SHADE_COHERENT (UINT64_C(1) << 13)

/* The stretches a pixel's samples may share, each one smooth surface
 * shaded alike: the ground; the skirts of each of the block's four sides;
 * the floor; the water's sheet; the water's sides on each side of the
 * block.  A pixel whose samples all lie on one of them, at depths within
 * SHADE_COHERENT, is shaded once at its centre.  Samples on two (the rim
 * of the block, a shoreline, the corner where two sides meet, the water's
 * side against the skirt under it) are shaded each at its own place, since
 * the colour changes sharply between them.  The floor is only ever seen
 * from below and at the block's silhouette: always per sample. */
#define SHADE_STRETCHES 11
#define SHADE_FLOOR 5

/* How fast the sky deepens from the horizon up: exp(-3.5 * sin(elevation)). */
#define SHADE_HORIZON 3.5f

/* Water absorbs red first, then green, then blue: per unit of path through
 * it, the fraction of each lost is 1 - exp(-k d).  A river 0.003 deep shows
 * its bed almost clear, the shelf of the sea (0.02) turquoise, its deeps
 * (0.1 and more) dark blue. */
static const float shade_absorb[3] = {55.0f, 17.0f, 8.5f};

float wg_smoothstep(float t)
{
    t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    return t * t * (3.0f - 2.0f * t);
}

/* The light, linear: a warm low sun and the sky's cool fill. */
static const wg_rgb shade_sun_light = {2.6f, 2.25f, 1.8f};
static const wg_rgb shade_sky_light = {0.16f, 0.22f, 0.34f};
/* The sun's elevation, degrees, below which its light and glow redden. */
#define SHADE_GOLDEN 12.0f
/* How far below the horizon, degrees, the sun is when the sky is night's. */
#define SHADE_NIGHT 12.0f

void wg_palette_make(wg_palette *p, float sea, float sun_az, float sun_el)
{
    memset(p, 0, sizeof *p);
    wg_materials_make(&p->mat, sea);
    wg_direction(sun_az, sun_el, p->sun);
    p->sun_elevation = sun_el;
    p->rock = wg_from_srgb(112, 108, 104);
    p->soil = wg_from_srgb(92, 70, 50);
    p->zenith = wg_from_srgb(52, 94, 168);
    p->horizon = wg_from_srgb(196, 212, 228);
    p->glow = wg_from_srgb(255, 214, 160);
    p->deep = wg_from_srgb(8, 40, 88);
    p->shallow = wg_from_srgb(26, 116, 128);
    p->haze_density = 0.05f;
    p->sun_in_water = 1;
    /* A low sun: its light crosses more air, which takes the blue out of
     * it; its light and the glow round it redden from SHADE_GOLDEN degrees
     * down, and the haze at the horizon warms a little.  At noon's
     * elevations (from SHADE_GOLDEN up, the default's 20 among them) the
     * colours are unchanged; a low sun had lit the land white under a
     * midday sky. */
    const float gold = 1.0f - wg_smoothstep(sun_el * (1.0f / SHADE_GOLDEN));
    p->sunlight = shade_sun_light;
    p->sunlight.g *= 1.0f - 0.28f * gold;
    p->sunlight.b *= 1.0f - 0.55f * gold;
    p->glow = wg_mix(p->glow, wg_from_srgb(255, 146, 84), gold);
    p->glow_gain = 1.0f + 1.5f * gold;
    p->horizon = wg_mix(p->horizon, wg_from_srgb(226, 204, 196), 0.6f * gold);
    /* A sun whose disc has set lights nothing directly, and the sky dims
     * (it had stayed at noon's colours, a west face lit in full beside
     * dark land).  From half a degree up nothing changes. */
    p->sun_light = wg_smoothstep(sun_el + 0.5f);
    p->sky_light = sun_el >= 0.0f
                       ? 1.0f
                       : 0.08f + 0.92f * wg_smoothstep((sun_el + 10.0f) / 10.0f);
    wg_rgb *sky[3] = {&p->zenith, &p->horizon, &p->glow};
    for (int i = 0; i < 3; i++) {
        sky[i]->r *= p->sky_light;
        sky[i]->g *= p->sky_light;
        sky[i]->b *= p->sky_light;
    }
    /* and from the day's colours, dimmed, it turns to twilight's blues
     * (the blue hour, the sun SHADE_NIGHT / 3 degrees down), then to a
     * night's deep blue, SHADE_NIGHT degrees down; the glow on the sun's
     * side fades with the sky's light.  Dimmed alone, the warm low-sun
     * horizon had made twilight a lavender grey and every night an
     * overcast grey, lighter than the land. */
    if (sun_el < 0.0f) {
        const float blue = wg_smoothstep(-sun_el * (3.0f / SHADE_NIGHT));
        const float night = wg_smoothstep((-sun_el * (3.0f / SHADE_NIGHT) - 1.0f) * 0.5f);
        p->zenith = wg_mix(wg_mix(p->zenith, wg_from_srgb(36, 62, 124), blue),
                           wg_from_srgb(10, 17, 42), night);
        p->horizon = wg_mix(wg_mix(p->horizon, wg_from_srgb(118, 124, 164), blue),
                            wg_from_srgb(30, 39, 66), night);
    }
}

wg_rgb wg_light(const wg_palette *p, wg_rgb c, const float n[3], float lit)
{
    float lam = n[0] * p->sun[0] + n[1] * p->sun[1] + n[2] * p->sun[2];
    lam = lam > 0.0f ? lam * lit * p->sun_light : 0.0f;
    /* The sky fill: all of it from straight up, a fifth of it still on an
     * overhang (light bounced off the ground), so no face is black. */
    float sky = (0.6f + 0.4f * n[1]) * p->sky_light;
    wg_rgb o = {c.r * (p->sunlight.r * lam + shade_sky_light.r * sky),
                c.g * (p->sunlight.g * lam + shade_sky_light.g * sky),
                c.b * (p->sunlight.b * lam + shade_sky_light.b * sky)};
    return o;
}

/* wg_sky with the sun's disc weighed by 'disc' (the sky's own: the sun's
 * share above the horizon, sun_light). */
static inline __attribute__((always_inline)) wg_rgb
shade_sky_dir(const wg_palette *p, const float d[3], float disc)
{
    float up = d[1] > 0.0f ? d[1] : 0.0f;
    float hz = expf(-up * SHADE_HORIZON);
    wg_rgb c = wg_mix(p->zenith, p->horizon, hz);
    float toward = d[0] * p->sun[0] + d[1] * p->sun[1] + d[2] * p->sun[2];
    toward = toward > 0.0f ? toward : 0.0f;
    float t2 = toward * toward, t4 = t2 * t2, t8 = t4 * t4;
    float t64 = t8 * t8;
    t64 *= t64;
    t64 *= t64;
    /* A broad glow near the horizon toward the sun, a tight halo, and the
     * disc itself (half a degree across). */
    float g = 0.55f * p->glow_gain * t8 * hz + 0.5f * t64 +
              6.0f * disc * wg_smoothstep((toward - 0.99994f) / 0.00003f);
    c.r += p->glow.r * g;
    c.g += p->glow.g * g;
    c.b += p->glow.b * g;
    if (d[1] < 0.0f) { /* below the horizon: mist over far ground */
        wg_rgb mist = wg_mix(p->horizon, p->zenith, 0.35f);
        mist.r *= 0.62f, mist.g *= 0.62f, mist.b *= 0.62f;
        c = wg_mix(c, mist, 1.0f - expf(d[1] * 2.5f));
    }
    return c;
}

wg_rgb wg_sky(const wg_palette *p, const float d[3])
{
    return shade_sky_dir(p, d, p->sun_light);
}

wg_rgb wg_water(const wg_palette *p, wg_rgb bed, float d, const float dir[3],
                const float n[3], float lit, const wg_rgb *land)
{
    return wg_water_covered(p, bed, d, dir, n, lit, land, land ? 1.0f : 0.0f);
}

wg_rgb wg_water_covered(const wg_palette *p, wg_rgb bed, float d,
                        const float dir[3], const float n[3], float lit,
                        const wg_rgb *land, float cover)
{
    float dn = dir[0] * n[0] + dir[1] * n[1] + dir[2] * n[2];
    float cv = -dn < 0.02f ? 0.02f : -dn > 1.0f ? 1.0f : -dn;
    /* Fresnel: Schlick's approximation with water's 2% at normal
     * incidence, so a lake seen from above shows its bed and one seen at a
     * grazing angle mirrors the sky. */
    float m = 1.0f - cv, m2 = m * m;
    float fres = 0.02f + 0.98f * m2 * m2 * m;
    /* The light goes down to the bed and back up along the refracted view
     * (Snell, n = 1.33), whose cosine is never below 0.66: the path is at
     * most 2.5 depths however grazing the view. */
    float ct = sqrtf(1.0f - (1.0f - cv * cv) * (1.0f / 1.7689f));
    float path = d * (1.0f + 1.0f / ct);
    /* Water is never quite clear: a fifth of the bed's light is lost
     * to what it carries even where it is shallow, so a river a cell wide
     * still reads as water. */
    float t[3];
    for (int i = 0; i < 3; i++)
        t[i] = 0.8f * expf(-path * shade_absorb[i]);
    /* What the water scatters back in place of the bed it hides: blue
     * green where it is shallow, deep blue where it is deep, lit as level
     * ground is, in shadow too. */
    wg_rgb deep = wg_light(p, wg_mix(p->shallow, p->deep,
                                     wg_smoothstep(d * 20.0f)), n, lit);
    wg_rgb below = {bed.r * t[0] + deep.r * (1.0f - t[0]),
                    bed.g * t[1] + deep.g * (1.0f - t[1]),
                    bed.b * t[2] + deep.b * (1.0f - t[2])};
    /* The sky in the mirror direction (the sun's disc among it). */
    float r[3] = {dir[0] - 2.0f * dn * n[0], dir[1] - 2.0f * dn * n[1],
                  dir[2] - 2.0f * dn * n[2]};
    r[1] = r[1] < 0.0f ? 0.0f : r[1];
    /* Without the sun (the map: seen straight down from everywhere at once,
     * a sun near the zenith lit every lake and a whole sea pure white), the
     * sky's colour alone, deep overhead and pale at the horizon.  The
     * sun's disc is seen in the mirror only as far as the sun reaches the
     * point ('lit'): the ground that casts the shadow stands between the
     * water and the sun along the mirrored ray too, and a lake in a
     * ridge's shadow had shown the sun's disc whole, sharp in the dark
     * water, where the glint beside it was cut off by the shadow. */
    /* The land's mirror, where it covers the mirror (no glint there). */
    wg_rgb c_land = {0.0f, 0.0f, 0.0f};
    if (cover > 0.0f)
        c_land = (wg_rgb){below.r * (1.0f - fres) + land->r * fres,
                          below.g * (1.0f - fres) + land->g * fres,
                          below.b * (1.0f - fres) + land->b * fres};
    if (cover >= 1.0f)
        return c_land;
    wg_rgb sky = p->sun_in_water
                     ? shade_sky_dir(p, r, p->sun_light * lit)
                     : wg_mix(p->zenith, p->horizon,
                              expf(-r[1] * SHADE_HORIZON));
    /* The glint: small waves tilt the surface, and a wave whose normal is
     * the half vector between the eye and the sun mirrors the sun; a hot
     * core (power 4096 of its cosine to the normal: the view 2 degrees off
     * the mirror in the plane of the sun gives half) and a faint wide sheen
     * (power 64), brighter the more grazing the view (the waves' facets
     * are seen foreshortened: over the cosine of the view, as a microfacet
     * glint), only where the sun reaches.  Through the half vector, a
     * low sun's glint is a path drawn out toward the eye, as on the sea at
     * evening; the mirror direction's lobe it had been (power 256 of the
     * reflected ray's cosine to the sun) was a round disc from any camera,
     * four times the sun's light at its centre, and a camera facing the
     * sun over the sea saw a white disc a third of the picture wide. */
    float hv[3] = {p->sun[0] - dir[0], p->sun[1] - dir[1], p->sun[2] - dir[2]};
    float hh = hv[0] * hv[0] + hv[1] * hv[1] + hv[2] * hv[2];
    float nh = hv[0] * n[0] + hv[1] * n[1] + hv[2] * n[2];
    nh = nh > 0.0f && hh > 1e-12f && p->sun_in_water ? nh / sqrtf(hh)
                                                      : 0.0f;
    float s64 = nh;
    for (int k = 0; k < 6; k++)
        s64 *= s64;
    float s4096 = s64;
    for (int k = 0; k < 6; k++)
        s4096 *= s4096;
    float glint = lit * p->sun_light *
                  (0.8f * s4096 + 0.025f * s64 / (cv > 0.1f ? cv : 0.1f));
    wg_rgb c = {below.r * (1.0f - fres) + sky.r * fres +
                    p->sunlight.r * glint,
                below.g * (1.0f - fres) + sky.g * fres +
                    p->sunlight.g * glint,
                below.b * (1.0f - fres) + sky.b * fres +
                    p->sunlight.b * glint};
    return cover > 0.0f ? wg_mix(c, c_land, cover) : c;
}

/* Linear light to 8-bit sRGB through a table over [0, SHADE_LUT_MAX): a
 * soft shoulder above SHADE_KNEE rolls highlights off toward white instead
 * of clipping them, so sunlit snow keeps its shading.  The shoulder is
 * K + (1 - K) t / (1 + b t), t = (c - K) / (1 - K): slope 1 at the knee,
 * 1 (white) at SHADE_LUT_MAX, where the table ends.  Sunlit snow is 1.2 to
 * 2.4 in linear light (albedo 0.85 under a sun of 2.6); the exponential
 * shoulder from 0.7 it had (1 - exp(-t)) was 249 at 1.2 and 255 from 1.7,
 * so sunlit snow was paper white, no slope or relief left on it: of the
 * pixels 225 or more in every channel, 76% were 250 or more at --seed
 * 0xC0FFEE --elevation 60 --sun-elevation 60, 52% in the default picture;
 * this one gives snow 238 to 251, and none reach 250 in either.  Below
 * the knee (sRGB 203, above the tests' 200) nothing changes. */
#define SHADE_LUT_SIZE 8192
#define SHADE_LUT_MAX 4.0f
#define SHADE_KNEE 0.6

static uint8_t shade_lut[SHADE_LUT_SIZE + 1];

static inline uint8_t shade_srgb8(float x)
{
    if (!(x > 0.0f))
        return 0;
    if (x >= SHADE_LUT_MAX)
        return 255;
    return shade_lut[(int)(x * (SHADE_LUT_SIZE / SHADE_LUT_MAX) + 0.5f)];
}

uint8_t wg_srgb8(float x)
{
    if (!shade_lut[SHADE_LUT_SIZE]) /* filled on first use; the top is 255 */
        for (int i = 0; i <= SHADE_LUT_SIZE; i++) {
            double c = i * (double)SHADE_LUT_MAX / SHADE_LUT_SIZE;
            if (c > SHADE_KNEE) { /* 1 at SHADE_LUT_MAX */
                const double top = (SHADE_LUT_MAX - SHADE_KNEE) /
                                   (1.0 - SHADE_KNEE);
                const double b = (top - 1.0) / top;
                double t = (c - SHADE_KNEE) / (1.0 - SHADE_KNEE);
                c = SHADE_KNEE + (1.0 - SHADE_KNEE) * t / (1.0 + b * t);
            }
            c = c <= 0.0031308 ? c * 12.92 : 1.055 * pow(c, 1 / 2.4) - 0.055;
            shade_lut[i] = (uint8_t)(c * 255.0 + 0.5);
        }
    return shade_srgb8(x);
}

/* The sweep, one line of the grid at a time, from the line nearest the sun
 * away from it.  'top' holds, for each vertex of the previous line, the
 * highest sight line toward the sun so far: max(h, horizon).  A vertex's
 * horizon is its sun-side neighbour line's 'top', read where the ray toward
 * the sun crosses that line (linear interpolation), less the sun's rise
 * over one step.  O(N^2) for any sun, against O(N^3) for marching a ray
 * from every vertex. */

/* What the sweep keeps at a vertex is its clearance t under the sight
 * line toward the sun, in penumbras (0: the edge of the shadow, 1: fully
 * lit), clamped to [-SHADE_LIT_REACH, 1 + SHADE_LIT_REACH] and scaled to a
 * byte; a point shaded takes the smoothstep of the clearance interpolated
 * from its triangle's corners.  Interpolating the light itself (0 or 1 at
 * almost every vertex) drew each shadow's edge along the triangles' edges,
 * a comb of teeth a cell apart along every shadow of a low sun; the
 * clearance interpolated crosses zero on one line through each triangle,
 * so the edge runs between the vertices where the sight line does. */
#define SHADE_LIT_REACH 4.0f
#define SHADE_LIT_SCALE (255.0f / (1.0f + 2.0f * SHADE_LIT_REACH))

/* The sunlit fraction for a clearance byte interpolated (0..255). */
static inline float shade_lit(float q)
{
    float t = q * (1.0f / SHADE_LIT_SCALE) - SHADE_LIT_REACH;
    t = 0.5f * (t + fabsf(t));
    t = 0.5f * ((t + 1.0f) - fabsf(t - 1.0f));
    return t * t * (3.0f - 2.0f * t);
}

float wg_sunlit(float lit)
{
    return shade_lit(lit);
}

/* One vertex of the sweep, of height hv, at 'at' along its line: its lit
 * and its top.  Its sun-side line's top at position a is prev[a - base]
 * (prev NULL on the first line). */
static inline float shade_sweep_one(const float *prev, ptrdiff_t base,
                                    float at, uint32_t n, float rise,
                                    float soft, float hv, uint8_t *lit)
{
    float horizon = -INFINITY;
    if (prev && at >= 0.0f && at <= (float)(n - 1)) {
        uint32_t a = (uint32_t)at;
        a = a > n - 2 ? n - 2 : a;
        float f = at - (float)a;
        float t0 = prev[(ptrdiff_t)a - base];
        float t1 = prev[(ptrdiff_t)a + 1 - base];
        horizon = t0 + (t1 - t0) * f - rise;
    }
    /* The clearance in penumbras, not the light: shade_field interpolates
     * it and takes the smoothstep per point (SHADE_LIT_REACH). */
    float t = (hv - horizon) / soft + 1.0f;
    t = t < -SHADE_LIT_REACH ? -SHADE_LIT_REACH
        : t > 1.0f + SHADE_LIT_REACH ? 1.0f + SHADE_LIT_REACH : t;
    *lit = (uint8_t)((t + SHADE_LIT_REACH) * SHADE_LIT_SCALE + 0.5f);
    return hv > horizon ? hv : horizon;
}

#if WG_WIDE
/* Eight vertices of a line of the sweep, j .. j + 7 along it, as
 * shade_sweep_one makes each, to the bit, in AVX2: 'from' the line before
 * (NULL on the first line) at offset 'base' (its value for position a is
 * from[a - base]), vertex j's height at h[j * stride + at0] and its light
 * to lit[] at the same place, its top to out[j - j0]. */
__attribute__((target("avx2"))) static void
shade_sweep8(const float *from, ptrdiff_t base, uint32_t j, const float *h,
             size_t stride, size_t at0, uint32_t n, float slope, float rise,
             float soft, float *out, uint8_t *lit)
{
    const w8f reach = w8_k(SHADE_LIT_REACH);
    const w8f low = w8_k(-SHADE_LIT_REACH), high = w8_k(1.0f + SHADE_LIT_REACH);
    const w8i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const w8i jj = _mm256_add_epi32(_mm256_set1_epi32((int32_t)j), lane);
    float hv8[8];
    for (int l = 0; l < 8; l++)
        hv8[l] = h[(size_t)(j + (uint32_t)l) * stride + at0];
    const w8f hv = _mm256_loadu_ps(hv8);
    w8f horizon = w8_k(-INFINITY);
    if (from) {
        const w8f at = W8_ADD(_mm256_cvtepi32_ps(jj), w8_k(slope));
        const w8f in = _mm256_and_ps(W8_GE(at, w8_k(0.0f)),
                                     W8_LE(at, w8_k((float)(n - 1))));
        /* (uint32_t)at, then read at a - base and the one after (less the
         * mask: plus one); a lane off the line reads from[0] and keeps
         * -inf */
        w8i a = _mm256_cvttps_epi32(_mm256_and_ps(in, at));
        a = _mm256_min_epi32(a, _mm256_set1_epi32((int32_t)n - 2));
        const w8f f = W8_SUB(at, _mm256_cvtepi32_ps(a));
        const w8i at_prev = _mm256_and_si256(
            _mm256_castps_si256(in),
            _mm256_sub_epi32(a, _mm256_set1_epi32((int32_t)base)));
        const w8f t0 = _mm256_i32gather_ps(from, at_prev, 4);
        const w8f t1 = _mm256_i32gather_ps(
            from, _mm256_sub_epi32(at_prev, _mm256_castps_si256(in)), 4);
        horizon = w8_sel(
            in, W8_SUB(W8_ADD(t0, W8_MUL(W8_SUB(t1, t0), f)), w8_k(rise)),
            horizon);
    }
    w8f t = W8_ADD(W8_DIV(W8_SUB(hv, horizon), w8_k(soft)), w8_k(1.0f));
    t = w8_sel(W8_LT(t, low), low, w8_sel(W8_GT(t, high), high, t));
    const w8i q = _mm256_cvttps_epi32(W8_ADD(
        W8_MUL(W8_ADD(t, reach), w8_k(SHADE_LIT_SCALE)), w8_k(0.5f)));
    _mm256_storeu_ps(out, w8_sel(W8_GT(hv, horizon), hv, horizon));
    int32_t q8[8];
    _mm256_storeu_si256((w8i *)q8, q);
    for (int l = 0; l < 8; l++)
        lit[(size_t)(j + (uint32_t)l) * stride + at0] = (uint8_t)q8[l];
}

/* One whole line of the sweep (the loop in wg_shadow_sweep), eight
 * vertices at a time, the rest as shade_sweep_one makes them. */
static void shade_sweep_line8(const float *first, const float *h,
                              size_t stride, size_t at0, uint32_t n,
                              float slope, float rise, float soft,
                              float *next, uint8_t *lit)
{
    uint32_t j = 0;
    for (; j + 8 <= n; j += 8)
        shade_sweep8(first, 0, j, h, stride, at0, n, slope, rise, soft,
                     next + j, lit);
    for (; j < n; j++) {
        size_t i = (size_t)j * stride + at0;
        next[j] = shade_sweep_one(first, 0, (float)j + slope, n, rise, soft,
                                  h[i], &lit[i]);
    }
}
#endif

/* Rows of the grid taken SHADE_SWEEP_ROWS at a time when the sweep's lines
 * are columns (a sun nearer east or west than north or south, as the
 * default's) on a grid of SHADE_SWEEP_BANDED or more: walking a whole
 * column touched a new cache line (and at --size 4096 a new page) at every
 * vertex, twice, 16.7 million times; a band of rows walked column by column
 * reuses each line for 16 columns.  The same arithmetic on the same values:
 * a vertex reads its sun-side column at rows j - 1 .. j + 2 only (|slope| <=
 * 1), so with the bands taken in the order the dependencies run (from the
 * side the rows read), each band needs two rows of the band done before it,
 * kept per column in 'edge'.  Measured alone, one thread, the default sun,
 * best of 7 on the loaded CI machine: 294 ms to 100 ms at --size 4096 (the
 * sweep runs on one thread while the others make the plan and the sky, so
 * this came off the render's time), 59-68 to 35-55 ms at 2048; 8 rows
 * beat 4, 16, 32 and 64 (bands of rows 16 KiB apart share few cache sets).
 * At 1024 and 512 the columns stay in the cache and bands cost a little
 * more (8-9 against 10-11 ms; 1.6-2.4 against 2.0-2.6). */
#define SHADE_SWEEP_ROWS 8
#define SHADE_SWEEP_BANDED 1536

static void shade_sweep_columns(const float *h, uint32_t n, float slope,
                                float rise, float soft, int step,
                                uint8_t *lit, float *edge)
{
    uint32_t first = step > 0 ? n - 1 : 0;
    /* slope >= 0: row j reads rows j .. j + 2 (or n - 2 .. n - 1 at the
     * bottom), so bands go from the bottom up; else rows j - 1 .. j (and
     * j + 1, times 0, where j + slope rounds to j), top down. */
    int up = slope >= 0.0f;
    uint32_t bands = (n + SHADE_SWEEP_ROWS - 1) / SHADE_SWEEP_ROWS;
    /* Column values of the band's rows j0 - 2 .. j1 + 1 at offset j - j0 + 2;
     * the margin rows not given are never read but as 0 * value. */
    float col[2][SHADE_SWEEP_ROWS + 4];
#if WG_WIDE
    _Static_assert(SHADE_SWEEP_ROWS == 8, "a band is one wide vector");
    const int wide = wg_wide();
#endif
    for (uint32_t b = 0; b < bands; b++) {
        uint32_t j0, j1;
        if (up) {
            j1 = n - b * SHADE_SWEEP_ROWS;
            j0 = j1 > SHADE_SWEEP_ROWS ? j1 - SHADE_SWEEP_ROWS : 0;
        } else {
            j0 = b * SHADE_SWEEP_ROWS;
            j1 = j0 + SHADE_SWEEP_ROWS < n ? j0 + SHADE_SWEEP_ROWS : n;
        }
        uint32_t rows = j1 - j0;
        /* The margin rows from the band before, and the band's own two
         * rows that the next band reads. */
        uint32_t in0 = up ? rows + 2 : 1, in1 = up ? rows + 3 : 0;
        uint32_t out0 = up ? 2 : rows + 1, out1 = up ? 3 : rows;
        float *prev = col[0], *cur = col[1], pend0 = 0.0f, pend1 = 0.0f;
        memset(col, 0, sizeof col);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t line = step > 0 ? first - k : first + k;
            if (k > 0) {
                if (b > 0) {
                    prev[in0] = edge[k - 1];
                    prev[in1] = edge[n + k - 1];
                }
                /* Column k - 1 of the band before is read: now the
                 * next band's may take its place. */
                edge[k - 1] = pend0;
                edge[n + k - 1] = pend1;
            }
#if WG_WIDE
            if (wide && rows == 8)
                shade_sweep8(k > 0 ? prev : NULL, (ptrdiff_t)j0 - 2, j0, h, n,
                             line, n, slope, rise, soft, cur + 2, lit);
            else
#endif
                for (uint32_t j = j0; j < j1; j++) {
                    size_t i = (size_t)j * n + line;
                    cur[j - j0 + 2] = shade_sweep_one(
                        k > 0 ? prev : NULL, (ptrdiff_t)j0 - 2,
                        (float)j + slope, n, rise, soft, h[i], &lit[i]);
                }
            if (rows >= 2) {
                pend0 = cur[out0];
                pend1 = cur[out1];
            }
            float *t = prev;
            prev = cur;
            cur = t;
        }
        edge[n - 1] = pend0;
        edge[2 * n - 1] = pend1;
    }
}



int wg_shadow_sweep(const wg_palette *p, const float *h, uint32_t n,
                    uint8_t *lit)
{
    size_t cells = wg_cells(n);
    float hl = sqrtf(p->sun[0] * p->sun[0] + p->sun[2] * p->sun[2]);
    if (p->sun_light <= 0.0f || hl < 1e-4f) {
        /* The sun wholly below the horizon lights nothing; overhead it
         * shadows nothing. */
        memset(lit, p->sun_light <= 0.0f ? 0 : 255, cells);
        return 0;
    }
    float *prev = wg_render_alloc(2 * (size_t)n * sizeof *prev);
    if (!prev)
        return -1;
    float *next = prev + n;

    /* Walk along the axis the sun's bearing is closer to: 'major' steps one
     * grid line toward the sun, 'minor' moves 'slope' cells meanwhile. */
    float dx = p->sun[0] / hl, dz = p->sun[2] / hl;
    int along_x = fabsf(dx) >= fabsf(dz);
    float major = along_x ? dx : dz, minor = along_x ? dz : dx;
    float slope = minor / fabsf(major);
    float sp = wg_block_spacing(n);
    /* A sun whose centre is at or under the horizon (its disc's upper part
     * above it, sun_light) sends its light level: what nothing toward it
     * stands higher than is lit.  (Every vertex had been put in shadow
     * from 0 degrees down, while the block's sides, which no ground
     * shades, kept the disc's share: at --sun-elevation 0 the side facing
     * the sun shone under dark land, and 0.001 degrees up every peak lit
     * at once.) */
    float up = p->sun[1] > 0.0f ? p->sun[1] : 0.0f;
    float rise = up / hl * sp * sqrtf(1.0f + slope * slope);
    /* The penumbra: a sight line must clear a vertex by this much to light
     * it fully.  A few steps' rise, so shadow edges are soft but small
     * grids do not shadow their own sunlit slopes. */
    float soft = 3.0f * rise + 0.002f;
    int step = major > 0.0f ? 1 : -1; /* toward the sun */
    uint32_t first = step > 0 ? n - 1 : 0;

    if (along_x && n >= SHADE_SWEEP_BANDED) {
        shade_sweep_columns(h, n, slope, rise, soft, step, lit, prev);
        wg_render_free(prev);
        return 0;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t line = step > 0 ? first - k : first + k;
        const float *from = k > 0 ? prev : NULL;
#if WG_WIDE
        if (wg_wide()) {
            shade_sweep_line8(from, h, along_x ? n : 1,
                              along_x ? line : (size_t)line * n, n, slope,
                              rise, soft, next, lit);
            float *t = prev;
            prev = next;
            next = t;
            continue;
        }
#endif
        for (uint32_t j = 0; j < n; j++) {
            size_t i = along_x ? (size_t)j * n + line : (size_t)line * n + j;
            next[j] = shade_sweep_one(from, 0, (float)j + slope, n, rise,
                                      soft, h[i], &lit[i]);
        }
        float *t = prev;
        prev = next;
        next = t;
    }
    wg_render_free(prev < next ? prev : next);
    return 0;
}

/* What the resolve needs about the scene. */
typedef struct shade_ctx {
    const wg_palette *p;
    const wg_eye *v;
    const wg_fields *f;
    const float *top;   /* the ground and the water shown on it */
    const float *level; /* the water's surface drawn (wg_water_levels) */
    const uint8_t *lit;
    uint32_t n;
    float sp, inv_sp;
    uint64_t surface, skirts, water, sides; /* the first ids of each part */
    /* The first id of each stretch after the ground's (shade_stretch). */
    uint64_t stretch[SHADE_STRETCHES - 1];
    wg_rgb air;   /* the haze's colour away from the sun */
    float air_hz; /* wg_sky's horizon term at the haze's elevation */
    uint32_t aa;
    int wide; /* shade_surface8 for the ground's samples */
} shade_ctx;

/* The three vertices i and weights wt of the point (u, v) of cell (cx,
 * cy), u along x and v along y from its corner a, on triangle 'half' of
 * it: the weights the rasteriser's triangles have.  (u, v) is first pulled
 * into that triangle, so a sample the rasteriser gave to a triangle seen
 * edge-on, whose ray meets the plane far away, is still shaded from that
 * triangle and not from some distant slope. */
static inline void shade_weights(const shade_ctx *c, uint32_t cx, uint32_t cy,
                                 int half, float u, float v, size_t i[3],
                                 float wt[3])
{
    uint32_t n = c->n;
    u = u < 0.0f ? 0.0f : u > 1.0f ? 1.0f : u;
    v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    size_t a = (size_t)cy * n + cx;
    if (half == 0) { /* (a, c, b): u + v <= 1 */
        float s = u + v;
        if (s > 1.0f)
            u /= s, v /= s;
        i[0] = a, i[1] = a + n, i[2] = a + 1;
        wt[0] = 1.0f - u - v, wt[1] = v, wt[2] = u;
    } else { /* (b, c, d): u + v >= 1 */
        float d = 0.5f * (1.0f - u - v);
        if (d > 0.0f)
            u += d, v += d;
        i[0] = a + 1, i[1] = a + n, i[2] = a + n + 1;
        wt[0] = 1.0f - v, wt[1] = 1.0f - u, wt[2] = u + v - 1.0f;
    }
}

/* The fields at (u, v) of triangle 'half' of cell (cx, cy)
 * (shade_weights): ground height, water (as shown: the surface less the
 * ground), sediment, unit normal and sunlit fraction (g's position is left
 * to the caller).  Inline, so g stays in registers: 3.5 million
 * instructions of 625 at --size 512. */
static inline __attribute__((always_inline)) void
shade_field(const shade_ctx *c, uint32_t cx, uint32_t cy, int half, float u,
            float v, wg_ground *g, float *lit)
{
    size_t i[3];
    float wt[3];
    shade_weights(c, cx, cy, half, u, v, i, wt);
    const wg_fields *f = c->f;
    float nx = 0, ny = 0, nz = 0, hh = 0, ww = 0, ss = 0, ll = 0;
    for (int k = 0; k < 3; k++) {
        hh += f->height[i[k]] * wt[k];
        ww += c->top[i[k]] * wt[k];
        ss += f->sediment[i[k]] * wt[k];
        nx += f->nx[i[k]] * wt[k];
        ny += f->ny[i[k]] * wt[k];
        nz += f->nz[i[k]] * wt[k];
        ll += (float)c->lit[i[k]] * wt[k];
    }
    ll = shade_lit(ll);
    float l = 1.0f / sqrtf(nx * nx + ny * ny + nz * nz);
    g->n[0] = nx * l;
    g->n[1] = ny * l;
    g->n[2] = nz * l;
    g->h = hh;
    g->water = ww - hh; /* the water shown (wg_water_shown) */
    g->sediment = ss;
    *lit = ll;
}

/* The cell under world (x, z), clamped to the grid, and the position in it. */
static void shade_cell(const shade_ctx *c, float x, float z, uint32_t *cx,
                       uint32_t *cy, float *u, float *v)
{
    float top = (float)(c->n - 2);
    float gx = (x + 3.0f) * c->inv_sp, gz = (z + 3.0f) * c->inv_sp;
    float fx = gx < 0.0f ? 0.0f : gx > top ? top : floorf(gx);
    float fz = gz < 0.0f ? 0.0f : gz > top ? top : floorf(gz);
    *cx = (uint32_t)fx;
    *cy = (uint32_t)fz;
    *u = gx - fx;
    *v = gz - fz;
}

/* Mix the haze over colour col seen at distance dist along unit dir. */
static inline __attribute__((always_inline)) wg_rgb
shade_haze(const shade_ctx *c, wg_rgb col, const float dir[3],
                         float dist)
{
    float far = dist - c->p->haze_start;
    if (far <= 0.0f)
        return col;
    /* 1 - exp(-x) to second order, as 1 - 1/(1 + x + x^2/2): within 0.01
     * of it over the distances of a view, at a quarter of expf's cost. */
    float x = far * c->p->haze_density;
    float amount = 1.0f - 1.0f / (1.0f + x + 0.5f * x * x);
    /* The haze is lit as the sky just above the horizon in that direction
     * (wg_sky at an elevation of about one degree, its constant parts
     * folded into c->air), so it glows toward the sun. */
    float flat = dir[0] * dir[0] + dir[2] * dir[2]; /* cos^2 of its pitch */
    float hl = 1.0f / sqrtf(flat + 1e-12f);
    const float *sun = c->p->sun;
    float toward = (dir[0] * sun[0] + dir[2] * sun[2]) * hl;
    toward = toward > 0.0f ? toward : 0.0f;
    float t2 = toward * toward, t4 = t2 * t2, t8 = t4 * t4;
    /* The glow fades out for rays steeper than 45 degrees, gone at 72:
     * near the vertical the ray's bearing turns through every direction
     * within a few pixels, and the floor seen from straight below showed
     * a wedge of glow fanning out from the point overhead. */
    float g = 0.55f * c->p->glow_gain * t8 * c->air_hz *
              wg_smoothstep((flat - 0.1f) * 2.5f);
    wg_rgb air = {c->air.r + c->p->glow.r * g, c->air.g + c->p->glow.g * g,
                  c->air.b + c->p->glow.b * g};
    return wg_mix(col, air, amount);
}

/* How much of water of depth d (its surface drawn less the ground: 0 at
 * the shoreline) is drawn over ground where the water shown on the
 * vertices, interpolated, is 'shown': it fades in over the first
 * WG_WATER_MIN of depth, as a film of water is clear, and over one more
 * WG_WATER_MIN of the water shown.  The second keeps a river one cell wide
 * a soft line: its surface drawn covers the cells around each wet vertex
 * whole, and their edges drew it as a chain of facets. */
static inline float shade_wet(float d, float shown)
{
    return wg_smoothstep(d * (1.0f / WG_WATER_MIN)) *
           wg_smoothstep((shown - WG_WATER_MIN) * (1.0f / WG_WATER_MIN));
}

/* How far above the water's level the ground stays wet: the sea's
 * waterline band (material.c, 1/300). */
#define SHADE_SHORE_WET 0.0033f

/* The depth over which the bed's own relief fades from its lighting: the
 * light reaching it has been scattered by the water on the way, so under
 * SHADE_BED_SOFT or more of water the bed is lit as level ground, and in
 * the shallows between, partly (from the waterline, so nothing changes
 * where the water ends).  The hydraulic stage leaves the bed of its
 * shallow sheets rough from cell to cell; lit by its own normals it
 * showed through them as scales along the grid, which level water over a
 * bed does not show. */
#define SHADE_BED_SOFT 0.0025f

/* The land that level water at (x, y, z) mirrors, seen along the unit
 * direction dir: the mirrored ray is followed over the ground and the
 * water shown on it (top), at points from 1.5 cells out, each 1.6 times
 * as far as the last, up to SHADE_MIRROR_REACH (the same reach in world
 * units at every resolution: 6 points at 512).  Returns how much of the
 * mirror the land covers, 0 (the sky) to 1: at each point, by how far the
 * surface there rises above the ray or falls short of it, over
 * SHADE_MIRROR_SOFT of the ray's length (rippled water spreads what it
 * mirrors over a few degrees), half where the two meet; *land is the
 * ground of the point that covers most, lit as the picture lights it (its
 * material, its normal, its share of the sun).  Land that rose above the
 * ray by any amount had covered the whole mirror and land a hair under it
 * none: in a river under its banks seen from low, blotches of sky with
 * hard edges among the banks' reflections, a cell or two across.  A ray
 * that leaves the block ends there.  A river down a gully had mirrored the
 * bright sky over the horizon from a low camera, a white streak between
 * dark banks, and the water under a steep shore the sky behind the shore.
 * Further hills are
 * not mirrored: followed to 100 cells, the ray met a hill behind nearly
 * every distant lake seen from low, and the lakes took the hills' colour
 * and were lost in the land.  Not for views steeper than
 * SHADE_MIRROR_STEEP (the Fresnel term leaves under 3% to the mirror),
 * nor from below. */
#define SHADE_MIRROR_REACH 0.2f
#define SHADE_MIRROR_STEEP 0.6f
#define SHADE_MIRROR_SOFT 0.12f /* about 7 degrees */

static inline float shade_mirror(const shade_ctx *c, float x, float y,
                                  float z, const float dir[3], wg_rgb *land)
{
    const float rx = dir[0], ry = -dir[1], rz = dir[2];
    if (!(ry > 0.0f && ry < SHADE_MIRROR_STEEP))
        return 0.0f;
    float cover = 0.0f;
    for (float s = 1.5f * c->sp; s < SHADE_MIRROR_REACH; s *= 1.6f) {
        const float px = x + rx * s, pz = z + rz * s;
        if (!(px >= -3.0f && px <= 3.0f && pz >= -3.0f && pz <= 3.0f))
            break;
        uint32_t cx, cy;
        float u, v;
        shade_cell(c, px, pz, &cx, &cy, &u, &v);
        const int half = u + v > 1.0f;
        size_t i[3];
        float wt[3];
        shade_weights(c, cx, cy, half, u, v, i, wt);
        const float t = c->top[i[0]] * wt[0] + c->top[i[1]] * wt[1] +
                        c->top[i[2]] * wt[2];
        /* How far the surface rises above the ray, over the ray's spread
         * there (SHADE_MIRROR_SOFT of its length): half covered where the
         * surface meets the ray. */
        const float k = wg_smoothstep((t - (y + ry * s)) /
                                          (SHADE_MIRROR_SOFT * s) +
                                      0.5f);
        if (k > cover) {
            wg_ground g;
            float lit;
            shade_field(c, cx, cy, half, u, v, &g, &lit);
            g.x = px;
            g.z = pz;
            *land = wg_light(c->p, wg_albedo(&c->p->mat, &g), g.n, lit);
            cover = k;
            if (cover >= 1.0f)
                break;
        }
    }
    return cover;
}

/* The sun's light on a slope (the cosine to the ground's own normal) below
 * which the orbit view's relief fades, to none where the sun grazes the
 * slope or leaves it (shade_surface). */
#define SHADE_RELIEF_TERMINATOR 0.35f

/* The lit colour of the ground g, the sun reaching it by 'lit', and of
 * the water over it seen along the unit direction 'dir': 'rise' is the
 * water's surface drawn less the ground (shade_water_at), its depth where
 * positive, the ground's height above the water's level where negative.
 * The orbit view and the map share it; 'orbit' says which. */
static inline __attribute__((always_inline)) wg_rgb
shade_surface(const shade_ctx *c, const wg_ground *g, float lit,
                            float rise, float film, const float dir[3],
                            float foot, int orbit)
{
    const float d = rise > 0.0f ? rise : 0.0f;
    /* The ground's material sees the water drawn over it, not the water
     * shown interpolated from the vertices: beside a wet vertex the
     * latter covers the cells around it, and its bed (silt) showed in
     * the open where the water's surface passes under the ground.  There
     * it is wet ground (WG_WATER_MIN) at the waterline, drying over the
     * first SHADE_SHORE_WET above it (the whole of those cells had been
     * wet ground, 40% darker, a polygon along the grid round each lake). */
    wg_ground m = *g;
    if (m.water > WG_WATER_MIN) {
        float drawn = d > WG_WATER_MIN ? d : WG_WATER_MIN;
        m.water = drawn < m.water ? drawn : m.water;
    }
    /* Above the waterline, in a triangle with a wet corner (rise finite),
     * the wet corners' share dries; the dry corners' own film of rain
     * ('film') stays, as in the cells beyond, so no edge shows there. */
    if (rise < 0.0f && rise > -INFINITY) {
        float wet = m.water *
                    (1.0f - wg_smoothstep(-rise * (1.0f / SHADE_SHORE_WET)));
        wet = wet > film ? wet : film;
        m.water = wet < m.water ? wet : m.water;
    }
    /* The bed's normal for its light, tilted up with the depth over it
     * (its material keeps the ground's own: rock stays rock). */
    float n[3] = {g->n[0], g->n[1], g->n[2]};
    if (d > 0.0f) {
        float k = wg_smoothstep(d * (1.0f / SHADE_BED_SOFT));
        n[0] -= n[0] * k;
        n[1] += (1.0f - n[1]) * k;
        n[2] -= n[2] * k;
        float l = 1.0f / sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        n[0] *= l, n[1] *= l, n[2] *= l;
    }
    /* In the orbit view the relief's tilt fades where the sun grazes the
     * slope: there a tilt of a few degrees turned the sun's light on and
     * off, and a slope facing from a low sun (--distance 2 --elevation 30
     * --azimuth 215 --look 0.1, the default 20 degree sun) was covered in
     * dark blotches the noise's size, a leopard's coat drawn out down the
     * slope.  The map, seen from above, keeps it: there it is the
     * hillshade's texture on the shaded side. */
    float k = 1.0f;
    if (orbit) {
        const float *sun = c->p->sun;
        k = wg_smoothstep((n[0] * sun[0] + n[1] * sun[1] + n[2] * sun[2]) *
                          (1.0f / SHADE_RELIEF_TERMINATOR));
    }
    if (k >= 1.0f) {
        wg_relief(g, d, foot, n);
    } else if (k > 0.0f) {
        const float b[3] = {n[0], n[1], n[2]};
        wg_relief(g, d, foot, n);
        for (int i = 0; i < 3; i++)
            n[i] = b[i] + (n[i] - b[i]) * k;
        float l = 1.0f / sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        n[0] *= l, n[1] *= l, n[2] *= l;
    }
    wg_rgb col = wg_light(c->p, wg_albedo(&c->p->mat, &m), n, lit);
    /* The water over it is level (a river's slope is too gentle to show
     * in its reflection). */
    float wet = shade_wet(d, g->water);
    if (wet > 0.0f) {
        static const float up[3] = {0.0f, 1.0f, 0.0f};
        wg_rgb land;
        float seen = shade_mirror(c, g->x, g->h + d, g->z, dir, &land);
        col = wg_mix(col,
                     wg_water_covered(c->p, col, d, dir, up, lit, &land, seen),
                     wet);
    }
    return col;
}

/* The water at (u, v) of triangle 'half' of cell (cx, cy), interpolated
 * from the triangle's corners (shade_weights): the ground's height; the
 * water shown on the corners (top less the ground); of that, the dry
 * corners' share alone ('film', the rain on them); and 'rise', the
 * water's surface drawn less the ground (negative where it is under the
 * ground, -inf where no corner is wet), the surface no higher than the
 * highest wet corner's.  Water does not climb above the water it comes
 * from; the surface drawn does where a dry corner is held at its ground
 * above the water's level (on the world's border, which keeps the
 * water's sides upright), and there it had covered the slope up to that
 * corner. */
typedef struct shade_water {
    float ground, shown, film, rise;
} shade_water;

static inline shade_water shade_water_at(const shade_ctx *c, uint32_t cx,
                                         uint32_t cy, int half, float u,
                                         float v)
{
    size_t i[3];
    float wt[3], l = 0.0f, cap = -INFINITY;
    shade_water w = {0.0f, 0.0f, 0.0f, 0.0f};
    shade_weights(c, cx, cy, half, u, v, i, wt);
    for (int k = 0; k < 3; k++) {
        float g = c->f->height[i[k]], lk = c->level[i[k]];
        float shown = c->top[i[k]] - g;
        w.ground += g * wt[k];
        w.shown += shown * wt[k];
        w.film += (shown > WG_WATER_MIN ? 0.0f : shown) * wt[k];
        l += lk * wt[k];
        cap = lk > g && lk > cap ? lk : cap;
    }
    l = l < cap ? l : cap;
    w.rise = l - w.ground;
    return w;
}

/* shade_water_at's depth: 0 where the surface is under the ground. */
static inline float shade_depth(const shade_ctx *c, uint32_t cx, uint32_t cy,
                                int half, float u, float v)
{
    float r = shade_water_at(c, cx, cy, half, u, v).rise;
    return r > 0.0f ? r : 0.0f;
}

/* Where the ray through sample position (sx, sy) meets the plane of
 * triangle id: the first half of shading a sample; shade_colour (or, for
 * eight that met the ground, shade_surface8) the second. */
typedef struct shade_meet {
    uint64_t id, half_id;
    uint32_t cx, cy;
    int over;
    float hit[3], d[3], unit[3], nrm[3], dist;
} shade_meet;

static inline void shade_meet_at(const shade_ctx *c, uint64_t id, float sx,
                                 float sy, shade_meet *m)
{
    float dir[3], p[3][3], e1[3], e2[3], nrm[3], hit[3];
    wg_eye_ray(c->v, sx, sy, dir);
    uint32_t cx = 0, cy = 0;
    /* The ground's triangles and the water's over them are a cell's
     * halves: 'over' for the water's, half_id the ground's under it. */
    const int over = id >= c->water && id < c->sides;
    const uint64_t half_id = over ? id - c->water : id;
    if (half_id < c->surface) {
        /* wg_block_triangle's corners of a surface triangle, the cell
         * found once for them and for the fields below. */
        uint32_t n = c->n, cell = (uint32_t)(half_id >> 1);
        cy = cell / (n - 1);
        cx = cell - cy * (n - 1);
        const float *t = (over ? c->level : c->f->height) + (size_t)cy * n +
                         cx;
        float x0 = wg_block_coord(cx, c->sp);
        float x1 = wg_block_coord(cx + 1, c->sp);
        float z0 = wg_block_coord(cy, c->sp);
        float z1 = wg_block_coord(cy + 1, c->sp);
        if ((half_id & 1) == 0) { /* (a, c, b) */
            p[0][0] = x0, p[0][1] = t[0], p[0][2] = z0;
            p[1][0] = x0, p[1][1] = t[n], p[1][2] = z1;
            p[2][0] = x1, p[2][1] = t[1], p[2][2] = z0;
        } else { /* (b, c, d) */
            p[0][0] = x1, p[0][1] = t[1], p[0][2] = z0;
            p[1][0] = x0, p[1][1] = t[n], p[1][2] = z1;
            p[2][0] = x1, p[2][1] = t[n + 1], p[2][2] = z1;
        }
    } else {
        const wg_block b = {.ground = c->f->height, .top = c->top,
                            .level = c->level, .n = c->n};
        wg_block_triangle(&b, id, p);
    }
    for (int i = 0; i < 3; i++) {
        e1[i] = p[1][i] - p[0][i];
        e2[i] = p[2][i] - p[0][i];
    }
    nrm[0] = e1[1] * e2[2] - e1[2] * e2[1];
    nrm[1] = e1[2] * e2[0] - e1[0] * e2[2];
    nrm[2] = e1[0] * e2[1] - e1[1] * e2[0];
    const float *e = c->v->pos;
    float den = nrm[0] * dir[0] + nrm[1] * dir[1] + nrm[2] * dir[2];
    float num = nrm[0] * (p[0][0] - e[0]) + nrm[1] * (p[0][1] - e[1]) +
                nrm[2] * (p[0][2] - e[2]);
    float t = num / den;
    if (!(t > 0.0f && t < 1e30f)) { /* grazing: take the centroid */
        for (int i = 0; i < 3; i++)
            hit[i] = (p[0][i] + p[1][i] + p[2][i]) / 3.0f;
    } else {
        for (int i = 0; i < 3; i++)
            hit[i] = e[i] + dir[i] * t;
    }
    float d[3] = {hit[0] - e[0], hit[1] - e[1], hit[2] - e[2]};
    float dist = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    float inv = 1.0f / dist;
    float unit[3] = {d[0] * inv, d[1] * inv, d[2] * inv};
    m->id = id;
    m->half_id = half_id;
    m->cx = cx;
    m->cy = cy;
    m->over = over;
    for (int i = 0; i < 3; i++) {
        m->hit[i] = hit[i];
        m->d[i] = d[i];
        m->unit[i] = unit[i];
        m->nrm[i] = nrm[i];
    }
    m->dist = dist;
}

/* The colour of the triangle a ray met (shade_meet_at). */
static wg_rgb shade_colour(const shade_ctx *c, const shade_meet *m)
{
    const uint64_t id = m->id, half_id = m->half_id;
    const int over = m->over;
    uint32_t cx = m->cx, cy = m->cy;
    const float *hit = m->hit, *d = m->d, *unit = m->unit, *nrm = m->nrm;
    const float dist = m->dist;
    wg_rgb col;
    wg_ground g;
    float lit;
    if (half_id < c->surface) {
        /* The ground, or the water over it and the ground below it there
         * (the same cell and half: the water's triangles stand over the
         * ground's). */
        float u = (hit[0] - wg_block_coord(cx, c->sp)) * c->inv_sp;
        float v = (hit[2] - wg_block_coord(cy, c->sp)) * c->inv_sp;
        int half = (int)(half_id & 1);
        shade_field(c, cx, cy, half, u, v, &g, &lit);
        g.x = hit[0];
        g.z = hit[2];
        /* The ground drawn is never under the water drawn: its rise
         * (the height above the water's level) only where the materials
         * would see water on it (the rain's film is on most ground). */
        float rise = 0.0f, film = 0.0f;
        if (over)
            rise = shade_depth(c, cx, cy, half, u, v);
        else if (g.water > WG_WATER_DAMP) {
            shade_water w = shade_water_at(c, cx, cy, half, u, v);
            rise = w.rise < 0.0f ? w.rise : 0.0f;
            film = w.film;
        }
        /* A pixel spans aa / focal of the picture's plane at depth 1, so
         * its footprint across the ray is the hit's depth (along fwd, not
         * its distance) times that: off the axis a pixel sees a narrower
         * angle, and taking the distance had faded the relief out toward
         * the edges of a wide view (by 1/cos: 3 times at the corners of
         * --fov 120), where the ground is drawn largest. */
        float depth = d[0] * c->v->fwd[0] + d[1] * c->v->fwd[1] +
                      d[2] * c->v->fwd[2];
        col = shade_surface(c, &g, lit, rise, film, unit,
                            depth * (float)c->aa / c->v->focal, 1);
    } else {
        /* The block's sides, a cut through the ground: a band of soil
         * under the surface, rock below it, in faint uneven strata; the
         * floor is the same rock.  Where the cut passes through water (the
         * sea, a lake at the edge: the water's own sides), it shows the
         * water's side, darker with depth. */
        float l = 1.0f / sqrtf(nrm[0] * nrm[0] + nrm[1] * nrm[1] +
                               nrm[2] * nrm[2]);
        float n[3] = {nrm[0] * l, nrm[1] * l, nrm[2] * l};
        float below = 1.0f;
        float y = hit[1];
        if (id < c->skirts || id >= c->sides) {
            float u, v;
            shade_cell(c, hit[0], hit[2], &cx, &cy, &u, &v);
            shade_water w = shade_water_at(c, cx, cy, u + v > 1.0f, u, v);
            below = (w.ground - y) / 0.08f;
            /* The water's side up to its surface, no higher than its
             * highest wet corner (shade_water_at).  Above that the side
             * stands over a bank that a dry vertex of the border holds up
             * to its ground (wg_water_levels), where the surface over it
             * is drawn as ground: it is the block's cut there, as the
             * skirt under it (it had been water, a band climbing the
             * bank). */
            float surf = id >= c->sides ? w.ground + w.rise : -INFINITY;
            if (y <= surf) {
                /* Looked into sideways, through far more water than its
                 * depth: deep water's colour, a little lighter toward the
                 * surface (0.2 of it).  From the shallows' turquoise at
                 * the surface to deep over 0.04, it had drawn a bright
                 * cyan line along every water's side seen from afar. */
                float k = 0.7f + 0.3f * wg_smoothstep((surf - y) * 5.0f);
                wg_rgb side = wg_mix(c->p->shallow, c->p->deep, k);
                return shade_haze(c, wg_light(c->p, side, n, 1.0f), unit,
                                  dist);
            }
        }
        float strata = 1.0f + 0.035f * sinf(y * 61.0f + 1.3f * sinf(y * 17.0f));
        wg_rgb ground = wg_mix(c->p->soil, c->p->rock, wg_smoothstep(below));
        float k = 0.55f * strata;
        ground.r *= k, ground.g *= k, ground.b *= k;
        col = wg_light(c->p, ground, n, 1.0f);
    }
    return shade_haze(c, col, unit, dist);
}

#if WG_WIDE

/* ---- The shading's wide path (render.h, WG_WIDE) ----
 *
 * The rays to the surface met eight at a time (shade_meet8) and the
 * ground or the water over it shaded eight at a time (shade_surface8,
 * shade_mirror8), in AVX2 (wide.h): each lane the same operations in the
 * same order as shade_meet_at and shade_colour, so every colour is theirs
 * to the bit (tests/test_render.c draws pictures both ways).  One point at
 * a time, the surface's shading had been two thirds of the default
 * picture's. */

/* wg_smoothstep: the clamp by comparisons, as it is written there. */
W8_FN w8f shade8_smooth(w8f t)
{
    const w8f zero = w8_k(0.0f), one = w8_k(1.0f);
    t = w8_sel(W8_LT(t, zero), zero, w8_sel(W8_GT(t, one), one, t));
    return W8_MUL(W8_MUL(t, t), W8_SUB(w8_k(3.0f), W8_MUL(w8_k(2.0f), t)));
}

/* 1 / sqrt((x*x + y*y) + z*z) */
W8_FN w8f shade8_inv_len(w8f x, w8f y, w8f z)
{
    return W8_DIV(
        w8_k(1.0f),
        _mm256_sqrt_ps(W8_ADD(W8_ADD(W8_MUL(x, x), W8_MUL(y, y)),
                              W8_MUL(z, z))));
}

W8_FN w8f shade8_gather(const float *base, w8i idx)
{
    return _mm256_i32gather_ps(base, idx, 4);
}

/* shade_meet_at for eight rays to the surface's triangles (the ground's
 * or the water's over it), in AVX2, each lane to the bit as shade_meet_at
 * gives it: at --size 512 the meeting had become the shading's dearest
 * part once the ground's colours were made eight at a time. */
__attribute__((target("avx2"))) static void
shade_meet8(const shade_ctx *c, const uint64_t id[8], const float sx[8],
            const float sy[8], shade_meet *const out[8])
{
    const wg_eye *v = c->v;
    const uint32_t n = c->n;
    float cxf[8], cyf[8], cx1f[8], cy1f[8], ya[8], yb[8], yc[8];
    int32_t half[8];
    for (int l = 0; l < 8; l++) {
        shade_meet *m = out[l];
        const uint64_t i = id[l];
        const int over = i >= c->water && i < c->sides;
        const uint64_t half_id = over ? i - c->water : i;
        const uint32_t cell = (uint32_t)(half_id >> 1);
        const uint32_t cy = cell / (n - 1), cx = cell - cy * (n - 1);
        const float *t = (over ? c->level : c->f->height) + (size_t)cy * n +
                         cx;
        m->id = i;
        m->half_id = half_id;
        m->cx = cx;
        m->cy = cy;
        m->over = over;
        cxf[l] = (float)cx;
        cyf[l] = (float)cy;
        cx1f[l] = (float)(cx + 1);
        cy1f[l] = (float)(cy + 1);
        const int h = (int)(half_id & 1);
        half[l] = -h;
        /* p0, p1, p2's heights: (a, c, b) or (b, c, d) */
        ya[l] = h ? t[1] : t[0];
        yb[l] = t[n];
        yc[l] = h ? t[n + 1] : t[1];
    }
    const w8f second =
        _mm256_castsi256_ps(_mm256_loadu_si256((const w8i *)half));
    const w8f sp = w8_k(c->sp), m3 = w8_k(-3.0f);
    const w8f x0 = W8_ADD(m3, W8_MUL(_mm256_loadu_ps(cxf), sp));
    const w8f x1 = W8_ADD(m3, W8_MUL(_mm256_loadu_ps(cx1f), sp));
    const w8f z0 = W8_ADD(m3, W8_MUL(_mm256_loadu_ps(cyf), sp));
    const w8f z1 = W8_ADD(m3, W8_MUL(_mm256_loadu_ps(cy1f), sp));
    /* half 0: (x0, z0), (x0, z1), (x1, z0); half 1: (x1, z0), (x0, z1),
     * (x1, z1) */
    const w8f p[3][3] = {
        {w8_sel(second, x1, x0), _mm256_loadu_ps(ya), z0},
        {x0, _mm256_loadu_ps(yb), z1},
        {x1, _mm256_loadu_ps(yc), w8_sel(second, z1, z0)}};
    /* wg_eye_ray */
    const w8f fx = W8_DIV(W8_SUB(_mm256_loadu_ps(sx), w8_k(v->cx)),
                                 w8_k(v->focal));
    const w8f fy = W8_DIV(W8_SUB(w8_k(v->cy), _mm256_loadu_ps(sy)),
                                 w8_k(v->focal));
    w8f dir[3], e1[3], e2[3];
    for (int i = 0; i < 3; i++) {
        dir[i] = W8_ADD(W8_ADD(w8_k(v->fwd[i]), W8_MUL(fx, w8_k(v->right[i]))),
                        W8_MUL(fy, w8_k(v->up[i])));
        e1[i] = W8_SUB(p[1][i], p[0][i]);
        e2[i] = W8_SUB(p[2][i], p[0][i]);
    }
    const w8f nrm[3] = {
        W8_SUB(W8_MUL(e1[1], e2[2]), W8_MUL(e1[2], e2[1])),
        W8_SUB(W8_MUL(e1[2], e2[0]), W8_MUL(e1[0], e2[2])),
        W8_SUB(W8_MUL(e1[0], e2[1]), W8_MUL(e1[1], e2[0]))};
    const float *e = v->pos;
    const w8f eye[3] = {w8_k(e[0]), w8_k(e[1]), w8_k(e[2])};
    w8f den = W8_ADD(W8_ADD(W8_MUL(nrm[0], dir[0]), W8_MUL(nrm[1], dir[1])),
                     W8_MUL(nrm[2], dir[2]));
    w8f num = W8_ADD(
        W8_ADD(W8_MUL(nrm[0], W8_SUB(p[0][0], eye[0])),
               W8_MUL(nrm[1], W8_SUB(p[0][1], eye[1]))),
        W8_MUL(nrm[2], W8_SUB(p[0][2], eye[2])));
    w8f t = W8_DIV(num, den);
    const w8f meets = _mm256_and_ps(W8_GT(t, w8_k(0.0f)),
                                    W8_LT(t, w8_k(1e30f)));
    w8f hit[3], d[3];
    for (int i = 0; i < 3; i++) {
        w8f centroid = W8_DIV(W8_ADD(W8_ADD(p[0][i], p[1][i]), p[2][i]),
                                     w8_k(3.0f));
        hit[i] = w8_sel(meets, W8_ADD(eye[i], W8_MUL(dir[i], t)), centroid);
        d[i] = W8_SUB(hit[i], eye[i]);
    }
    const w8f dist = _mm256_sqrt_ps(
        W8_ADD(W8_ADD(W8_MUL(d[0], d[0]), W8_MUL(d[1], d[1])),
               W8_MUL(d[2], d[2])));
    const w8f inv = W8_DIV(w8_k(1.0f), dist);
    float o[13][8];
    for (int i = 0; i < 3; i++) {
        _mm256_storeu_ps(o[i], hit[i]);
        _mm256_storeu_ps(o[3 + i], d[i]);
        _mm256_storeu_ps(o[6 + i], W8_MUL(d[i], inv));
        _mm256_storeu_ps(o[9 + i], nrm[i]);
    }
    _mm256_storeu_ps(o[12], dist);
    for (int l = 0; l < 8; l++) {
        shade_meet *m = out[l];
        for (int i = 0; i < 3; i++) {
            m->hit[i] = o[i][l];
            m->d[i] = o[3 + i][l];
            m->unit[i] = o[6 + i][l];
            m->nrm[i] = o[9 + i][l];
        }
        m->dist = o[12][l];
    }
}

/* The fields at a point of each lane's triangle, as shade_field gives
 * them, and what shade_water_at adds to them: the water shown on the dry
 * corners (film), the surface drawn (level) and the highest wet corner's
 * (cap).  Each sum from 0, in the corners' order. */
typedef struct shade_fields8 {
    w8f h, top, sed, n[3], lit, film, level, cap;
} shade_fields8;

/* shade_weights: the three corners' indices and weights. */
W8_FN void shade_corners8(const shade_ctx *c, w8i base, w8f second,
                               w8f u, w8f v, w8i idx[3], w8f wt[3])
{
    const w8f zero = w8_k(0.0f), one = w8_k(1.0f);
    u = w8_sel(W8_LT(u, zero), zero, w8_sel(W8_GT(u, one), one, u));
    v = w8_sel(W8_LT(v, zero), zero, w8_sel(W8_GT(v, one), one, v));
    /* half 0, (a, c, b): pulled into u + v <= 1 */
    w8f s = W8_ADD(u, v), over = W8_GT(s, one);
    w8f u0 = w8_sel(over, W8_DIV(u, s), u);
    w8f v0 = w8_sel(over, W8_DIV(v, s), v);
    /* half 1, (b, c, d): pulled into u + v >= 1 */
    w8f e = W8_MUL(w8_k(0.5f), W8_SUB(W8_SUB(one, u), v));
    w8f under = W8_GT(e, zero);
    w8f u1 = w8_sel(under, W8_ADD(u, e), u);
    w8f v1 = w8_sel(under, W8_ADD(v, e), v);
    wt[0] = w8_sel(second, W8_SUB(one, v1), W8_SUB(W8_SUB(one, u0), v0)),
    wt[1] = w8_sel(second, W8_SUB(one, u1), v0);
    wt[2] = w8_sel(second, W8_SUB(W8_ADD(u1, v1), one), u0);
    /* half 0: a, a + n, a + 1; half 1: a + 1, a + n, a + n + 1 */
    const w8i n = _mm256_set1_epi32((int32_t)c->n);
    const w8i step = _mm256_castps_si256(second); /* -1 on half 1 */
    idx[0] = _mm256_sub_epi32(base, step);
    idx[1] = _mm256_add_epi32(base, n);
    idx[2] = _mm256_add_epi32(_mm256_add_epi32(base, _mm256_set1_epi32(1)),
                              _mm256_and_si256(step, n));
}

/* The fields over the corners (shade_field's sums, and shade_water_at's). */
W8_FN void shade_gather8(const shade_ctx *c, const w8i idx[3],
                              const w8f wt[3], shade_fields8 *o)
{
    const w8f zero = w8_k(0.0f), one = w8_k(1.0f);
    const wg_fields *f = c->f;
    w8f hh = zero, ww = zero, ss = zero, nx = zero, ny = zero, nz = zero,
        ll = zero, film = zero, lv = zero, cap = w8_k(-INFINITY);
    for (int k = 0; k < 3; k++) {
        int32_t at[8];
        float litk[8];
        _mm256_storeu_si256((w8i *)at, idx[k]);
        for (int l = 0; l < 8; l++)
            litk[l] = (float)c->lit[at[l]];
        const w8f w = wt[k];
        const w8f g = shade8_gather(f->height, idx[k]);
        const w8f t = shade8_gather(c->top, idx[k]);
        const w8f lk = shade8_gather(c->level, idx[k]);
        hh = W8_ADD(hh, W8_MUL(g, w));
        ww = W8_ADD(ww, W8_MUL(t, w));
        ss = W8_ADD(ss, W8_MUL(shade8_gather(f->sediment, idx[k]), w));
        nx = W8_ADD(nx, W8_MUL(shade8_gather(f->nx, idx[k]), w));
        ny = W8_ADD(ny, W8_MUL(shade8_gather(f->ny, idx[k]), w));
        nz = W8_ADD(nz, W8_MUL(shade8_gather(f->nz, idx[k]), w));
        ll = W8_ADD(ll, W8_MUL(_mm256_loadu_ps(litk), w));
        const w8f sh = W8_SUB(t, g);
        film = W8_ADD(film,
                      W8_MUL(w8_sel(W8_GT(sh, w8_k(WG_WATER_MIN)), zero, sh),
                             w));
        lv = W8_ADD(lv, W8_MUL(lk, w));
        cap = w8_sel(_mm256_and_ps(W8_GT(lk, g), W8_GT(lk, cap)), lk, cap);
    }
    /* shade_lit */
    {
        w8f t = W8_SUB(W8_MUL(ll, w8_k(1.0f / SHADE_LIT_SCALE)),
                       w8_k(SHADE_LIT_REACH));
        const w8f h5 = w8_k(0.5f), sign = w8_k(-0.0f);
        t = W8_MUL(h5, W8_ADD(t, _mm256_andnot_ps(sign, t)));
        t = W8_MUL(h5, W8_SUB(W8_ADD(t, one),
                              _mm256_andnot_ps(sign, W8_SUB(t, one))));
        ll = W8_MUL(W8_MUL(t, t), W8_SUB(w8_k(3.0f), W8_MUL(w8_k(2.0f), t)));
    }
    const w8f il = shade8_inv_len(nx, ny, nz);
    o->h = hh, o->top = ww, o->sed = ss, o->lit = ll;
    o->n[0] = W8_MUL(nx, il), o->n[1] = W8_MUL(ny, il), o->n[2] = W8_MUL(nz, il);
    o->film = film, o->level = lv, o->cap = cap;
}

/* The fields at (u, v) of each lane's cell, from its corner 'base' (cy *
 * n + cx) and half (second: half 1), as shade_field gives them, with what
 * shade_water_at adds. */
W8_FN void shade_field8(const shade_ctx *c, w8i base, w8f second,
                             w8f u, w8f v, shade_fields8 *o)
{
    w8i idx[3];
    w8f wt[3];
    shade_corners8(c, base, second, u, v, idx, wt);
    shade_gather8(c, idx, wt, o);
}

/* wg_light */
W8_FN void shade_light8(const wg_palette *p, const w8f c[3],
                             const w8f n[3], w8f lit, w8f out[3])
{
    const float *sun = p->sun;
    w8f lam = W8_ADD(W8_ADD(W8_MUL(n[0], w8_k(sun[0])),
                            W8_MUL(n[1], w8_k(sun[1]))),
                     W8_MUL(n[2], w8_k(sun[2])));
    lam = w8_sel(W8_GT(lam, w8_k(0.0f)),
                 W8_MUL(W8_MUL(lam, lit), w8_k(p->sun_light)), w8_k(0.0f));
    const w8f sky = W8_MUL(W8_ADD(w8_k(0.6f), W8_MUL(w8_k(0.4f), n[1])),
                           w8_k(p->sky_light));
    const float sunl[3] = {p->sunlight.r, p->sunlight.g, p->sunlight.b};
    const float skyl[3] = {shade_sky_light.r, shade_sky_light.g,
                           shade_sky_light.b};
    for (int i = 0; i < 3; i++)
        out[i] = W8_MUL(c[i], W8_ADD(W8_MUL(w8_k(sunl[i]), lam),
                                     W8_MUL(w8_k(skyl[i]), sky)));
}

/* shade_mirror for the lanes of 'wet': the land that level water at (x,
 * y, z) mirrors along dir, how much of the mirror it covers (seen) and
 * its colour (land, where seen > 0).  The points along the mirrored ray
 * are the same for every lane; a lane stops where shade_mirror's loop
 * ends for it (off the block, or covered whole). */
__attribute__((target("avx2"))) static void
shade_mirror8(const shade_ctx *c, w8f x, w8f y, w8f z, const w8f dir[3],
              w8f wet, float seen[8], float land[3][8])
{
    const w8f zero = w8_k(0.0f), one = w8_k(1.0f);
    const w8f rx = dir[0], ry = _mm256_xor_ps(dir[1], w8_k(-0.0f)),
              rz = dir[2];
    w8f on = _mm256_and_ps(
        wet, _mm256_and_ps(W8_GT(ry, zero),
                           W8_LT(ry, w8_k(SHADE_MIRROR_STEEP))));
    w8f cover = zero, lr = zero, lg = zero, lb = zero;
    const w8f edge = w8_k(3.0f), m_edge = w8_k(-3.0f);
    const w8f top = w8_k((float)(c->n - 2)), inv_sp = w8_k(c->inv_sp);
    for (float s = 1.5f * c->sp; s < SHADE_MIRROR_REACH; s *= 1.6f) {
        if (_mm256_testz_ps(on, on))
            break;
        const w8f vs = w8_k(s);
        const w8f px = W8_ADD(x, W8_MUL(rx, vs)), pz = W8_ADD(z, W8_MUL(rz, vs));
        on = _mm256_and_ps(
            on, _mm256_and_ps(_mm256_and_ps(W8_GE(px, m_edge), W8_LE(px, edge)),
                              _mm256_and_ps(W8_GE(pz, m_edge), W8_LE(pz, edge))));
        if (_mm256_testz_ps(on, on))
            break;
        /* shade_cell */
        const w8f gx = W8_MUL(W8_ADD(px, edge), inv_sp);
        const w8f gz = W8_MUL(W8_ADD(pz, edge), inv_sp);
        const w8f fx = w8_sel(W8_LT(gx, zero), zero,
                              w8_sel(W8_GT(gx, top), top, _mm256_floor_ps(gx)));
        const w8f fz = w8_sel(W8_LT(gz, zero), zero,
                              w8_sel(W8_GT(gz, top), top, _mm256_floor_ps(gz)));
        const w8f u = W8_SUB(gx, fx), v = W8_SUB(gz, fz);
        /* A lane no longer on reads cell (0, 0): its point may be NaN (a
         * ray that met its triangle at the eye), which the clamps let
         * through and the conversion would make an index far outside. */
        const w8i cx = _mm256_cvttps_epi32(w8_sel(on, fx, zero));
        const w8i cy = _mm256_cvttps_epi32(w8_sel(on, fz, zero));
        const w8i base = _mm256_add_epi32(
            _mm256_mullo_epi32(cy, _mm256_set1_epi32((int32_t)c->n)), cx);
        const w8f second = W8_GT(W8_ADD(u, v), one);
        w8i idx[3];
        w8f wt[3];
        shade_corners8(c, base, second, u, v, idx, wt);
        /* the surface there (the water shown on the ground), as
         * shade_mirror sums it: from the first corner, not from 0 */
        const w8f t = W8_ADD(
            W8_ADD(W8_MUL(shade8_gather(c->top, idx[0]), wt[0]),
                   W8_MUL(shade8_gather(c->top, idx[1]), wt[1])),
            W8_MUL(shade8_gather(c->top, idx[2]), wt[2]));
        const w8f k = shade8_smooth(W8_ADD(
            W8_DIV(W8_SUB(t, W8_ADD(y, W8_MUL(ry, vs))),
                          w8_k(SHADE_MIRROR_SOFT * s)),
            w8_k(0.5f)));
        const w8f more = _mm256_and_ps(on, W8_GT(k, cover));
        if (_mm256_testz_ps(more, more))
            continue;
        /* the land there, lit as the picture lights it */
        shade_fields8 fl;
        shade_gather8(c, idx, wt, &fl);
        wg_ground8 g8;
        float alb[3][8];
        _mm256_storeu_ps(g8.x, px);
        _mm256_storeu_ps(g8.z, pz);
        _mm256_storeu_ps(g8.h, fl.h);
        _mm256_storeu_ps(g8.water, W8_SUB(fl.top, fl.h));
        _mm256_storeu_ps(g8.sediment, fl.sed);
        for (int i = 0; i < 3; i++)
            _mm256_storeu_ps(g8.n[i], fl.n[i]);
        wg_albedo8(&c->p->mat, &g8, alb);
        const w8f a8[3] = {_mm256_loadu_ps(alb[0]), _mm256_loadu_ps(alb[1]),
                           _mm256_loadu_ps(alb[2])};
        w8f lit8[3];
        shade_light8(c->p, a8, fl.n, fl.lit, lit8);
        lr = w8_sel(more, lit8[0], lr);
        lg = w8_sel(more, lit8[1], lg);
        lb = w8_sel(more, lit8[2], lb);
        cover = w8_sel(more, k, cover);
        on = _mm256_andnot_ps(_mm256_and_ps(more, W8_GE(cover, one)), on);
    }
    _mm256_storeu_ps(seen, cover);
    _mm256_storeu_ps(land[0], lr);
    _mm256_storeu_ps(land[1], lg);
    _mm256_storeu_ps(land[2], lb);
}

/* shade_colour for eight rays that met the surface (the ground, or the
 * water over it; not the block's sides): the fields at each point, the
 * water's rise, the depth drawn and the material's water, the shore's
 * wetting, the bed's normal tilted up under water, the relief faded where
 * the sun grazes, the material (wg_albedo8), the light; then where there
 * is water over it, its mirror (shade_mirror8) and its colour (a lane at a
 * time: wg_water_covered's expf), and the haze. */
__attribute__((target("avx2"))) static void
shade_surface8(const shade_ctx *c, const shade_meet *const m[8], wg_rgb out[8])
{
    const wg_palette *p = c->p;
    const w8f zero = w8_k(0.0f), one = w8_k(1.0f);
    float hx[8], hz[8], dd[3][8], un[3][8], dist[8], cxf[8], cyf[8];
    int32_t half[8], base[8], overs[8];
    for (int l = 0; l < 8; l++) {
        const shade_meet *q = m[l];
        hx[l] = q->hit[0];
        hz[l] = q->hit[2];
        for (int i = 0; i < 3; i++) {
            dd[i][l] = q->d[i];
            un[i][l] = q->unit[i];
        }
        dist[l] = q->dist;
        cxf[l] = (float)q->cx;
        cyf[l] = (float)q->cy;
        half[l] = -(int32_t)(q->half_id & 1);
        overs[l] = -(int32_t)(q->over != 0);
        base[l] = (int32_t)(q->cy * c->n + q->cx);
    }
    /* shade_colour: the point in its cell */
    const w8f sp = w8_k(c->sp), inv_sp = w8_k(c->inv_sp);
    const w8f x = _mm256_loadu_ps(hx), z = _mm256_loadu_ps(hz);
    w8f u = W8_MUL(W8_SUB(x, W8_ADD(w8_k(-3.0f),
                                   W8_MUL(_mm256_loadu_ps(cxf), sp))),
                   inv_sp);
    w8f v = W8_MUL(W8_SUB(z, W8_ADD(w8_k(-3.0f),
                                   W8_MUL(_mm256_loadu_ps(cyf), sp))),
                   inv_sp);
    const w8f second =
        _mm256_castsi256_ps(_mm256_loadu_si256((const w8i *)half));
    shade_fields8 fl;
    shade_field8(c, _mm256_loadu_si256((const w8i *)base), second, u, v, &fl);
    const w8f hh = fl.h, ww = fl.top, ss = fl.sed, ll = fl.lit;
    w8f film = fl.film, lv = fl.level;
    const w8f cap = fl.cap;
    wg_ground8 g8;
    _mm256_storeu_ps(g8.n[0], fl.n[0]);
    _mm256_storeu_ps(g8.n[1], fl.n[1]);
    _mm256_storeu_ps(g8.n[2], fl.n[2]);
    const w8f water = W8_SUB(ww, hh);
    /* shade_colour: the water's rise, where the materials would see water
     * (below the water's level: only its rise <= 0 on the ground) */
    const w8f damp = W8_GT(water, w8_k(WG_WATER_DAMP));
    lv = w8_sel(W8_LT(lv, cap), lv, cap);
    const w8f rw = W8_SUB(lv, hh);
    /* the water's own: its depth (shade_depth), and no film */
    const w8f water_ray =
        _mm256_castsi256_ps(_mm256_loadu_si256((const w8i *)overs));
    const w8f rise = w8_sel(
        water_ray, w8_sel(W8_GT(rw, zero), rw, zero),
        w8_sel(damp, w8_sel(W8_LT(rw, zero), rw, zero), zero));
    film = w8_sel(_mm256_andnot_ps(water_ray, damp), film, zero);
    /* The footprint. */
    const w8f d0 = _mm256_loadu_ps(dd[0]), d1 = _mm256_loadu_ps(dd[1]),
              d2 = _mm256_loadu_ps(dd[2]);
    const float *fwd = c->v->fwd;
    w8f depth = W8_ADD(W8_ADD(W8_MUL(d0, w8_k(fwd[0])), W8_MUL(d1, w8_k(fwd[1]))),
                       W8_MUL(d2, w8_k(fwd[2])));
    float foot[8];
    _mm256_storeu_ps(foot, W8_DIV(W8_MUL(depth, w8_k((float)c->aa)),
                                         w8_k(c->v->focal)));
    /* shade_surface: the depth drawn, the material's water */
    const w8f d = w8_sel(W8_GT(rise, zero), rise, zero);
    w8f mw = water;
    {
        const w8f wmin = w8_k(WG_WATER_MIN);
        w8f drawn = w8_sel(W8_GT(d, wmin), d, wmin);
        mw = w8_sel(W8_GT(mw, wmin), w8_sel(W8_LT(drawn, mw), drawn, mw), mw);
    }
    {
        w8f shore = _mm256_and_ps(W8_LT(rise, zero),
                                  W8_GT(rise, w8_k(-INFINITY)));
        w8f wet = W8_MUL(mw, W8_SUB(one, shade8_smooth(W8_MUL(
                                             _mm256_xor_ps(rise, w8_k(-0.0f)),
                                             w8_k(1.0f / SHADE_SHORE_WET)))));
        wet = w8_sel(W8_GT(wet, film), wet, film);
        mw = w8_sel(shore, w8_sel(W8_LT(wet, mw), wet, mw), mw);
    }
    _mm256_storeu_ps(g8.x, x);
    _mm256_storeu_ps(g8.z, z);
    _mm256_storeu_ps(g8.h, hh);
    _mm256_storeu_ps(g8.sediment, ss);
    /* the bed's normal tilted up with the depth over it */
    w8f b0 = _mm256_loadu_ps(g8.n[0]), b1 = _mm256_loadu_ps(g8.n[1]),
        b2 = _mm256_loadu_ps(g8.n[2]);
    {
        const w8f bed = W8_GT(d, zero);
        const w8f kb = shade8_smooth(W8_MUL(d, w8_k(1.0f / SHADE_BED_SOFT)));
        const w8f t0 = W8_SUB(b0, W8_MUL(b0, kb));
        const w8f t1 = W8_ADD(b1, W8_MUL(W8_SUB(one, b1), kb));
        const w8f t2 = W8_SUB(b2, W8_MUL(b2, kb));
        const w8f il = shade8_inv_len(t0, t1, t2);
        b0 = w8_sel(bed, W8_MUL(t0, il), b0);
        b1 = w8_sel(bed, W8_MUL(t1, il), b1);
        b2 = w8_sel(bed, W8_MUL(t2, il), b2);
    }
    /* the relief, faded where the sun grazes the slope */
    const float *sun = p->sun;
    w8f k = shade8_smooth(W8_MUL(
        W8_ADD(W8_ADD(W8_MUL(b0, w8_k(sun[0])), W8_MUL(b1, w8_k(sun[1]))),
               W8_MUL(b2, w8_k(sun[2]))),
        w8_k(1.0f / SHADE_RELIEF_TERMINATOR)));
    float nr[3][8], depth8[8];
    _mm256_storeu_ps(nr[0], b0);
    _mm256_storeu_ps(nr[1], b1);
    _mm256_storeu_ps(nr[2], b2);
    _mm256_storeu_ps(depth8, d);
    wg_relief8(&g8, depth8, foot, nr);
    w8f n0 = _mm256_loadu_ps(nr[0]), n1 = _mm256_loadu_ps(nr[1]),
        n2 = _mm256_loadu_ps(nr[2]);
    {
        w8f m0 = W8_ADD(b0, W8_MUL(W8_SUB(n0, b0), k));
        w8f m1 = W8_ADD(b1, W8_MUL(W8_SUB(n1, b1), k));
        w8f m2 = W8_ADD(b2, W8_MUL(W8_SUB(n2, b2), k));
        w8f il = shade8_inv_len(m0, m1, m2);
        w8f full = W8_GE(k, one), some = W8_GT(k, zero);
        n0 = w8_sel(full, n0, w8_sel(some, W8_MUL(m0, il), b0));
        n1 = w8_sel(full, n1, w8_sel(some, W8_MUL(m1, il), b1));
        n2 = w8_sel(full, n2, w8_sel(some, W8_MUL(m2, il), b2));
    }
    /* the material, seeing the water drawn */
    _mm256_storeu_ps(g8.water, mw);
    float alb[3][8];
    wg_albedo8(&p->mat, &g8, alb);
    w8f col[3];
    {
        const w8f alb8[3] = {_mm256_loadu_ps(alb[0]), _mm256_loadu_ps(alb[1]),
                             _mm256_loadu_ps(alb[2])};
        const w8f nl[3] = {n0, n1, n2};
        shade_light8(p, alb8, nl, ll, col);
    }
    /* The water over it, where there is some (shade_wet): its mirror
     * and its colour, a lane at a time. */
    {
        const w8f wet = W8_MUL(
            shade8_smooth(W8_MUL(d, w8_k(1.0f / WG_WATER_MIN))),
            shade8_smooth(W8_MUL(W8_SUB(water, w8_k(WG_WATER_MIN)),
                             w8_k(1.0f / WG_WATER_MIN))));
        const int some = _mm256_movemask_ps(W8_GT(wet, zero));
        if (some) {
            float cl[3][8], wl[8], dl[8], litl[8];
            for (int i = 0; i < 3; i++)
                _mm256_storeu_ps(cl[i], col[i]);
            _mm256_storeu_ps(wl, wet);
            _mm256_storeu_ps(dl, d);
            _mm256_storeu_ps(litl, ll);
            static const float up[3] = {0.0f, 1.0f, 0.0f};
            float seen[8], land[3][8];
            const w8f dir8[3] = {_mm256_loadu_ps(un[0]), _mm256_loadu_ps(un[1]),
                                 _mm256_loadu_ps(un[2])};
            shade_mirror8(c, x, W8_ADD(hh, d), z, dir8, W8_GT(wet, zero),
                          seen, land);
            for (int l = 0; l < 8; l++) {
                if (!(some >> l & 1))
                    continue;
                const float dir[3] = {un[0][l], un[1][l], un[2][l]};
                const wg_rgb lnd = {land[0][l], land[1][l], land[2][l]};
                wg_rgb here = {cl[0][l], cl[1][l], cl[2][l]};
                here = wg_mix(here,
                              wg_water_covered(p, here, dl[l], dir, up,
                                               litl[l], &lnd, seen[l]),
                              wl[l]);
                cl[0][l] = here.r, cl[1][l] = here.g, cl[2][l] = here.b;
            }
            for (int i = 0; i < 3; i++)
                col[i] = _mm256_loadu_ps(cl[i]);
        }
    }
    /* shade_haze */
    {
        const w8f far = W8_SUB(_mm256_loadu_ps(dist), w8_k(p->haze_start));
        const w8f xh = W8_MUL(far, w8_k(p->haze_density));
        const w8f amount = W8_SUB(
            one, W8_DIV(one, W8_ADD(W8_ADD(one, xh),
                                           W8_MUL(W8_MUL(w8_k(0.5f), xh), xh))));
        const w8f e0 = _mm256_loadu_ps(un[0]), e2 = _mm256_loadu_ps(un[2]);
        const w8f flat = W8_ADD(W8_MUL(e0, e0), W8_MUL(e2, e2));
        const w8f hl = W8_DIV(
            one, _mm256_sqrt_ps(W8_ADD(flat, w8_k(1e-12f))));
        w8f toward = W8_MUL(
            W8_ADD(W8_MUL(e0, w8_k(sun[0])), W8_MUL(e2, w8_k(sun[2]))), hl);
        toward = w8_sel(W8_GT(toward, zero), toward, zero);
        const w8f t2 = W8_MUL(toward, toward), t4 = W8_MUL(t2, t2),
                  t8 = W8_MUL(t4, t4);
        const w8f gl = W8_MUL(
            W8_MUL(W8_MUL(w8_k(0.55f * p->glow_gain), t8), w8_k(c->air_hz)),
            shade8_smooth(W8_MUL(W8_SUB(flat, w8_k(0.1f)), w8_k(2.5f))));
        const float air[3] = {c->air.r, c->air.g, c->air.b};
        const float glow[3] = {p->glow.r, p->glow.g, p->glow.b};
        const w8f clear = W8_LE(far, zero);
        const w8f rest = W8_SUB(one, amount);
        for (int i = 0; i < 3; i++) {
            w8f a8 = W8_ADD(w8_k(air[i]), W8_MUL(w8_k(glow[i]), gl));
            w8f mixed = W8_ADD(W8_MUL(col[i], rest), W8_MUL(a8, amount));
            col[i] = w8_sel(clear, col[i], mixed);
        }
    }
    float o[3][8];
    for (int i = 0; i < 3; i++)
        _mm256_storeu_ps(o[i], col[i]);
    for (int l = 0; l < 8; l++)
        out[l] = (wg_rgb){o[0][l], o[1][l], o[2][l]};
}
#endif

static wg_rgb shade_sky_at(const shade_ctx *c, float sx, float sy)
{
    float dir[3];
    wg_eye_ray(c->v, sx, sy, dir);
    float l = 1.0f / sqrtf(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
    dir[0] *= l, dir[1] *= l, dir[2] *= l;
    return wg_sky(c->p, dir);
}

/* The sky is smooth but for the sun's disc, so it is evaluated exactly on
 * a grid of every SHADE_SKY_STEP-th pixel centre and interpolated between;
 * a grid cell near the sun is marked (alpha < 0) and evaluated exactly at
 * every pixel.  At 800x600, 72% of the default picture is sky: exact, it
 * cost 11 ms of the 43 ms of shading; gridded, under 1 ms. */
#define SHADE_SKY_STEP 4

typedef struct shade_sky {
    wg_rgb *at;       /* (gw) x (gh) grid points */
    uint8_t *exact;   /* per grid cell: the sun is near, evaluate exactly */
    uint32_t gw, gh;
    atomic_uint taken; /* rows handed out so far (shade_sky_rows) */
} shade_sky;

/* The grid's points across and down for a w x h picture. */
static uint32_t shade_sky_side(uint32_t pixels)
{
    return pixels / SHADE_SKY_STEP + 2;
}

static int shade_sky_alloc(shade_sky *g, uint32_t w, uint32_t h)
{
    g->gw = shade_sky_side(w);
    g->gh = shade_sky_side(h);
    atomic_init(&g->taken, 0);
    g->at = wg_render_alloc((size_t)g->gw * g->gh * sizeof *g->at);
    g->exact = wg_render_alloc((size_t)g->gw * g->gh);
    if (!g->at || !g->exact) {
        wg_render_free(g->at);
        wg_render_free(g->exact);
        return -1;
    }
    return 0;
}

/* Rows of the grid not yet taken, one at a time, until none is left: the
 * sky at each point, and in exact whether the point is near the sun
 * (wg_shader_sky_done then marks the cells around such a point, so no row
 * is written by two threads). */
static void shade_sky_rows(const shade_ctx *c, shade_sky *g)
{
    uint32_t aa = c->aa;
    /* Inside 12 degrees of the sun, where its disc and the bend of its
     * halo (toward^64: 38% of its peak 10 degrees out, 24% at 12, 2% at
     * 20) change fastest, evaluate exactly; beyond, the halo is smooth
     * enough for the grid. */
    const float near_sun = 0.978f;
    for (;;) {
        const uint32_t j =
            atomic_fetch_add_explicit(&g->taken, 1, memory_order_relaxed);
        if (j >= g->gh)
            break;
        for (uint32_t i = 0; i < g->gw; i++) {
            float dir[3];
            float sx = ((float)(i * SHADE_SKY_STEP) + 0.5f) * (float)aa;
            float sy = ((float)(j * SHADE_SKY_STEP) + 0.5f) * (float)aa;
            wg_eye_ray(c->v, sx, sy, dir);
            float l = 1.0f / sqrtf(dir[0] * dir[0] + dir[1] * dir[1] +
                                   dir[2] * dir[2]);
            dir[0] *= l, dir[1] *= l, dir[2] *= l;
            size_t k = (size_t)j * g->gw + i;
            g->at[k] = wg_sky(c->p, dir);
            const float *sun = c->p->sun;
            g->exact[k] =
                dir[0] * sun[0] + dir[1] * sun[1] + dir[2] * sun[2] > near_sun;
        }
    }
}

/* A grid cell is evaluated exactly where any of its four corners is near
 * the sun.  In place: cell k reads points k, k+1, k+gw, k+gw+1, which no
 * earlier cell has rewritten. */
static void shade_sky_mark(shade_sky *g)
{
    for (uint32_t j = 0; j < g->gh; j++)
        for (uint32_t i = 0; i < g->gw; i++) {
            size_t k = (size_t)j * g->gw + i;
            int right = i + 1 < g->gw, down = j + 1 < g->gh;
            g->exact[k] = g->exact[k] | (right && g->exact[k + 1]) |
                          (down && g->exact[k + g->gw]) |
                          (right && down && g->exact[k + g->gw + 1]);
        }
}

/* The sky at the centre of pixel (px, py). */
static inline __attribute__((always_inline)) wg_rgb
shade_sky_pixel(const shade_ctx *c, const shade_sky *g,
                              uint32_t px, uint32_t py, uint32_t aa)
{
    uint32_t i = px / SHADE_SKY_STEP, j = py / SHADE_SKY_STEP;
    size_t k = (size_t)j * g->gw + i;
    if (g->exact[k])
        return shade_sky_at(c, ((float)px + 0.5f) * (float)aa,
                            ((float)py + 0.5f) * (float)aa);
    float fx = (float)(px % SHADE_SKY_STEP) * (1.0f / SHADE_SKY_STEP);
    float fy = (float)(py % SHADE_SKY_STEP) * (1.0f / SHADE_SKY_STEP);
    wg_rgb top = wg_mix(g->at[k], g->at[k + 1], fx);
    wg_rgb bot = wg_mix(g->at[k + g->gw], g->at[k + g->gw + 1], fx);
    return wg_mix(top, bot, fy);
}

/* The stretch that triangle 'id' lies on: how many stretches' first ids
 * it is at or past. */
static inline uint32_t shade_stretch(const shade_ctx *c, uint64_t id)
{
    uint32_t st = 0;
    for (int i = 0; i < SHADE_STRETCHES - 1; i++)
        st += id >= c->stretch[i];
    return st;
}

/* Pixels shaded together (wg_shade_rows): their samples are gathered, then
 * every ray of them met with its triangle, then the colours made, eight
 * at a time for those on the ground where the processor can
 * (shade_surface8), then the pixels put together from them.  The batch is
 * on the stack (54 KiB at --aa 4). */
#define SHADE_BATCH 32
#define SHADE_SAMPLES (WG_RENDER_AA_MAX * WG_RENDER_AA_MAX)
#define SHADE_RAYS (SHADE_BATCH * SHADE_SAMPLES)

typedef struct shade_batch {
    shade_meet meet[SHADE_RAYS];
    wg_rgb col[SHADE_RAYS];
    uint64_t id[SHADE_RAYS];
    float sx[SHADE_RAYS], sy[SHADE_RAYS];
    uint32_t rays;
    /* Per pixel: 0 the sky (written already), 1 one ray for the whole
     * pixel, from[0]; 2 one for each sample, from[s] (-1: the sky). */
    uint8_t kind[SHADE_BATCH];
    int16_t from[SHADE_BATCH][SHADE_SAMPLES];
} shade_batch;

/* A ray of the batch through sample position (sx, sy), to triangle id. */
static inline int16_t shade_ray(shade_batch *b, uint64_t id, float sx,
                                float sy)
{
    b->id[b->rays] = id;
    b->sx[b->rays] = sx;
    b->sy[b->rays] = sy;
    return (int16_t)b->rays++;
}

/* One pixel's samples (the nearest over the rasteriser parts' keys): the
 * sky, written at once, if they show only sky; else one ray at its centre
 * if they show one stretch of ground or of water; else a ray for every
 * distinct triangle, at its own sample. */
static inline __attribute__((always_inline)) void
shade_gather(const shade_ctx *c, const shade_sky *sky_grid,
             const wg_target *t, uint32_t px, uint32_t py, uint8_t out[3],
             uint32_t aa, shade_batch *b, uint32_t slot)
{
    uint32_t ns = aa * aa, rep = (aa / 2) * aa + aa / 2;
    /* The sky first, on the AND of the keys alone: it is 72% of the
     * default picture, and the gathering below (depths, ids, counts) cost
     * a sky pixel 79 instructions more, 27 million of the render's 663 at
     * --size 512. */
    uint64_t all = WG_KEY_EMPTY;
    for (uint32_t j = 0; j < aa; j++) {
        const uint64_t *row = t->keys + ((size_t)py * aa + j - t->y0) * t->w +
                              (size_t)px * aa;
        for (uint32_t i = 0; i < aa; i++)
            all &= row[i];
    }
    if (all == WG_KEY_EMPTY) {
        wg_rgb sky = shade_sky_pixel(c, sky_grid, px, py, aa);
        out[0] = shade_srgb8(sky.r);
        out[1] = shade_srgb8(sky.g);
        out[2] = shade_srgb8(sky.b);
        b->kind[slot] = 0;
        return;
    }
    uint64_t k[SHADE_SAMPLES];
    uint32_t empty = 0;
    uint64_t dmin = UINT64_MAX, dmax = 0, imin = UINT64_MAX, imax = 0;
    /* Without a branch per sample: an empty key's depth and id count in
     * dmax and imax too, but those decide only where no key is empty. */
    for (uint32_t j = 0; j < aa; j++) {
        const uint64_t *row = t->keys + ((size_t)py * aa + j - t->y0) * t->w +
                              (size_t)px * aa;
        for (uint32_t i = 0; i < aa; i++) {
            uint64_t key = row[i];
            k[j * aa + i] = key;
            empty += key == WG_KEY_EMPTY;
            uint64_t d = key >> 36;
            dmin = d < dmin ? d : dmin;
            dmax = d > dmax ? d : dmax;
            uint64_t id = wg_key_id(key);
            imin = id < imin ? id : imin;
            imax = id > imax ? id : imax;
        }
    }
    /* The stretches are runs of ids: the samples share one if their
     * least and greatest ids do; the ground's first (most pixels show
     * only ground), without counting the boundaries. */
    int one = 1;
    if (imax >= c->stretch[0]) {
        const uint32_t st = shade_stretch(c, imin);
        one = st == shade_stretch(c, imax) && st != SHADE_FLOOR;
    }
    if (!empty && one && dmax - dmin < SHADE_COHERENT) {
        b->kind[slot] = 1;
        b->from[slot][0] = shade_ray(b, wg_key_id(k[rep]),
                                     ((float)px + 0.5f) * (float)aa,
                                     ((float)py + 0.5f) * (float)aa);
        return;
    }
    /* A silhouette, the sky's edge or the block's: each triangle once. */
    b->kind[slot] = 2;
    for (uint32_t s = 0; s < ns; s++) {
        if (k[s] == WG_KEY_EMPTY) {
            b->from[slot][s] = -1;
            continue;
        }
        uint32_t same = 0;
        while (same < s && (k[same] == WG_KEY_EMPTY ||
                            wg_key_id(k[same]) != wg_key_id(k[s])))
            same++;
        b->from[slot][s] =
            same < s ? b->from[slot][same]
                     : shade_ray(b, wg_key_id(k[s]),
                                 (float)(px * aa + s % aa) + 0.5f,
                                 (float)(py * aa + s / aa) + 0.5f);
    }
}

/* The batch's rays met and coloured. */
static void shade_batch_colour(const shade_ctx *c, shade_batch *b)
{
#if WG_WIDE
    if (c->wide) {
        /* The surface's rays met eight at a time, then the ground's
         * coloured eight at a time (the last group of each filled out with
         * its first ray again, met or coloured twice), the rest one by
         * one. */
        uint32_t surface[SHADE_RAYS], count = 0;
        for (uint32_t r = 0; r < b->rays; r++) {
            const uint64_t id = b->id[r];
            if (id < c->surface || (id >= c->water && id < c->sides))
                surface[count++] = r;
            else
                shade_meet_at(c, id, b->sx[r], b->sy[r], &b->meet[r]);
        }
        for (uint32_t g = 0; g < count; g += 8) {
            uint64_t id[8];
            float sx[8], sy[8];
            shade_meet *m[8];
            uint32_t lanes = count - g < 8 ? count - g : 8;
            for (uint32_t l = 0; l < 8; l++) {
                uint32_t r = surface[g + (l < lanes ? l : 0)];
                id[l] = b->id[r];
                sx[l] = b->sx[r];
                sy[l] = b->sy[r];
                m[l] = &b->meet[r];
            }
            shade_meet8(c, id, sx, sy, m);
        }
        uint32_t ground[SHADE_RAYS];
        count = 0;
        for (uint32_t r = 0; r < b->rays; r++) {
            const shade_meet *m = &b->meet[r];
            if (m->half_id < c->surface)
                ground[count++] = r;
            else
                b->col[r] = shade_colour(c, m);
        }
        for (uint32_t g = 0; g < count; g += 8) {
            const shade_meet *m[8];
            wg_rgb col[8];
            uint32_t lanes = count - g < 8 ? count - g : 8;
            for (uint32_t l = 0; l < 8; l++)
                m[l] = &b->meet[ground[g + (l < lanes ? l : 0)]];
            shade_surface8(c, m, col);
            for (uint32_t l = 0; l < lanes; l++)
                b->col[ground[g + l]] = col[l];
        }
        return;
    }
#endif
    for (uint32_t r = 0; r < b->rays; r++) {
        shade_meet_at(c, b->id[r], b->sx[r], b->sy[r], &b->meet[r]);
        b->col[r] = shade_colour(c, &b->meet[r]);
    }
}

/* A pixel of the batch from its rays' colours: its samples' colours
 * summed in their order, the sky's where a sample has none. */
static inline __attribute__((always_inline)) void
shade_put(const shade_ctx *c, const shade_sky *sky_grid, const shade_batch *b,
          uint32_t slot, uint32_t px, uint32_t py, uint8_t out[3],
          uint32_t aa)
{
    wg_rgb acc;
    if (b->kind[slot] == 0)
        return;
    if (b->kind[slot] == 1) {
        acc = b->col[b->from[slot][0]];
    } else {
        const uint32_t ns = aa * aa;
        wg_rgb sky = {0.0f, 0.0f, 0.0f};
        int have_sky = 0;
        acc.r = acc.g = acc.b = 0.0f;
        for (uint32_t s = 0; s < ns; s++) {
            wg_rgb one;
            if (b->from[slot][s] < 0) {
                if (!have_sky) {
                    sky = shade_sky_pixel(c, sky_grid, px, py, aa);
                    have_sky = 1;
                }
                one = sky;
            } else {
                one = b->col[b->from[slot][s]];
            }
            acc.r += one.r;
            acc.g += one.g;
            acc.b += one.b;
        }
        float inv = 1.0f / (float)ns;
        acc.r *= inv;
        acc.g *= inv;
        acc.b *= inv;
    }
    out[0] = shade_srgb8(acc.r);
    out[1] = shade_srgb8(acc.g);
    out[2] = shade_srgb8(acc.b);
}

struct wg_shader {
    shade_ctx c;
    shade_sky sky;
};

wg_shader *wg_shader_new(const wg_palette *p, const wg_eye *v,
                         const wg_fields *f, const wg_block *b,
                         const uint8_t *lit, uint32_t aa, uint32_t w,
                         uint32_t h)
{
    wg_shader *s = wg_render_alloc(sizeof *s);
    if (!s)
        return NULL;
    s->c = (shade_ctx){
        .p = p, .v = v, .f = f, .top = b->top, .level = b->level,
        .lit = lit, .n = f->n, .sp = wg_block_spacing(f->n),
        .inv_sp = (float)(f->n - 1) / 6.0f,
        .surface = wg_block_surface(f->n), .skirts = wg_block_skirts(f->n),
        .water = wg_block_water(f->n), .sides = wg_block_water_sides(f->n),
        .air_hz = expf(-0.02f * SHADE_HORIZON), .aa = aa,
        /* The wide path's corners are 32-bit indices. */
        .wide = wg_wide() && (uint64_t)f->n * f->n <= INT32_MAX,
    };
    s->c.air = wg_mix(p->zenith, p->horizon, s->c.air_hz);
    /* Skirts and water's sides: 2(N-1) a side, sides in raster_border's
     * order; then the floor, the water's sheet. */
    const uint64_t side = 2 * (uint64_t)(f->n - 1);
    for (int i = 0; i < 4; i++) {
        s->c.stretch[i] = s->c.surface + side * (uint64_t)i;
        s->c.stretch[6 + i] = s->c.sides + side * (uint64_t)i;
    }
    s->c.stretch[SHADE_FLOOR - 1] = s->c.skirts;
    s->c.stretch[SHADE_FLOOR] = s->c.water;
    wg_srgb8(0.0f); /* fill its table before any thread reads it */
    if (shade_sky_alloc(&s->sky, w, h) != 0) {
        wg_render_free(s);
        return NULL;
    }
    return s;
}

void wg_shader_sky(wg_shader *s)
{
    shade_sky_rows(&s->c, &s->sky);
}

void wg_shader_sky_done(wg_shader *s)
{
    shade_sky_mark(&s->sky);
}

size_t wg_shader_bytes(uint32_t w, uint32_t h)
{
    size_t points = (size_t)shade_sky_side(w) * shade_sky_side(h);
    return sizeof(wg_shader) + points * (sizeof(wg_rgb) + 1);
}

void wg_shader_free(wg_shader *s)
{
    if (!s)
        return;
    wg_render_free(s->sky.at);
    wg_render_free(s->sky.exact);
    wg_render_free(s);
}

void wg_shade_rows(const wg_shader *s, const wg_target *t, uint32_t py0,
                   uint32_t py1, wg_image *img)
{
    shade_batch b;
    /* One loop for each --aa, so that the samples' loops unroll. */
#define SHADE_ROWS(aa)                                                        \
    for (uint32_t py = py0; py < py1; py++) {                                \
        uint8_t *row = img->rgb + (size_t)py * img->w * 3;                   \
        for (uint32_t x0 = 0; x0 < img->w; x0 += SHADE_BATCH) {              \
            uint32_t n = img->w - x0 < SHADE_BATCH ? img->w - x0             \
                                                   : SHADE_BATCH;            \
            b.rays = 0;                                                      \
            for (uint32_t i = 0; i < n; i++)                                 \
                shade_gather(&s->c, &s->sky, t, x0 + i, py,                  \
                             row + (size_t)(x0 + i) * 3, aa, &b, i);         \
            shade_batch_colour(&s->c, &b);                                   \
            for (uint32_t i = 0; i < n; i++)                                 \
                shade_put(&s->c, &s->sky, &b, i, x0 + i, py,                 \
                          row + (size_t)(x0 + i) * 3, aa);                   \
        }                                                                    \
    }
    switch (s->c.aa) {
    case 1:
        SHADE_ROWS(1)
        break;
    case 2:
        SHADE_ROWS(2)
        break;
    case 3:
        SHADE_ROWS(3)
        break;
    default:
        SHADE_ROWS(4)
        break;
    }
#undef SHADE_ROWS
}

/* The map: a sample at world (x, z) sees the surface straight down there,
 * shaded from the triangle and the interpolated fields the orbit view
 * would use; no haze (nothing lies between) and no sky. */
static wg_rgb shade_map_sample(const shade_ctx *c, float x, float z,
                               float foot)
{
    static const float down[3] = {0.0f, -1.0f, 0.0f};
    uint32_t cx, cy;
    float u, v, lit;
    wg_ground g;
    shade_cell(c, x, z, &cx, &cy, &u, &v);
    int half = u + v > 1.0f;
    shade_field(c, cx, cy, half, u, v, &g, &lit);
    g.x = x;
    g.z = z;
    shade_water w = shade_water_at(c, cx, cy, half, u, v);
    return shade_surface(c, &g, lit, w.rise, w.film, down, foot, 0);
}

/* shade_wet at world (x, z). */
static float shade_map_wet(const shade_ctx *c, float x, float z)
{
    uint32_t cx, cy;
    float u, v;
    shade_cell(c, x, z, &cx, &cy, &u, &v);
    shade_water w = shade_water_at(c, cx, cy, u + v > 1.0f, u, v);
    return shade_wet(w.rise > 0.0f ? w.rise : 0.0f, w.shown);
}

void wg_map_rows(const wg_palette *p, const wg_fields *f, const wg_block *b,
                 const uint8_t *lit, uint32_t aa, uint32_t py0, uint32_t py1,
                 wg_image *img)
{
    shade_ctx c = {.p = p, .f = f, .top = b->top, .level = b->level,
                   .lit = lit, .n = f->n, .sp = wg_block_spacing(f->n),
                   .inv_sp = (float)(f->n - 1) / 6.0f, .aa = aa};
    static const uint8_t bg[3] = WG_MAP_BACKGROUND;
    /* The world's 6 x 6 units fill the centred square of 'side' pixels;
     * sample k of it (counting from its west or north edge) stands at
     * -3 + (k + 1/2) * step, computed so that a map at --aa 2 samples
     * exactly where one twice the size at --aa 1 does. */
    uint32_t side = img->w < img->h ? img->w : img->h;
    uint32_t ox = (img->w - side) / 2, oy = (img->h - side) / 2;
    float step = 6.0f / (float)(side * aa), inv = 1.0f / (float)(aa * aa);
    /* Across a pixel no wider than half a cell and a quarter of the
     * materials' finest noise and of the finest relief its samples show,
     * the fields are planes and the colour is as smooth but at the water's
     * edge: such a pixel is shaded once, at its centre, unless its samples
     * are not all dry or all water.  (Every sample costs a full shading:
     * at --size 512, a 2048x2048 map at --aa 2 took twice as long without
     * this.)  A sample's footprint for the relief is the samples' spacing:
     * the mean of a pixel's samples is what filters it. */
    float pixel = step * (float)aa;
    int fine = aa > 1 && 2.0f * pixel <= c.sp &&
               4.0f * WG_MATERIAL_GRAIN * pixel <= 1.0f &&
               4.0f * wg_relief_finest(step) * pixel <= 1.0f;
    for (uint32_t py = py0; py < py1; py++) {
        uint8_t *out = img->rgb + (size_t)py * img->w * 3;
        for (uint32_t px = 0; px < img->w; px++, out += 3) {
            if (px < ox || px - ox >= side || py < oy || py - oy >= side) {
                memcpy(out, bg, 3);
                continue;
            }
            uint32_t sx = (px - ox) * aa, sz = (py - oy) * aa;
            if (fine) {
                float first = -1.0f;
                int same = 1;
                for (uint32_t k = 0; k < aa * aa && same; k++) {
                    float w = shade_map_wet(
                        &c, -3.0f + ((float)(sx + k % aa) + 0.5f) * step,
                        -3.0f + ((float)(sz + k / aa) + 0.5f) * step);
                    same = (w == 0.0f || w == 1.0f) && (!k || w == first);
                    first = w;
                }
                if (same) {
                    float half = 0.5f * (float)aa;
                    wg_rgb one = shade_map_sample(
                        &c, -3.0f + ((float)sx + half) * step,
                        -3.0f + ((float)sz + half) * step, step);
                    out[0] = wg_srgb8(one.r);
                    out[1] = wg_srgb8(one.g);
                    out[2] = wg_srgb8(one.b);
                    continue;
                }
            }
            wg_rgb acc = {0.0f, 0.0f, 0.0f};
            for (uint32_t j = 0; j < aa; j++) {
                float z = -3.0f + ((float)(sz + j) + 0.5f) * step;
                for (uint32_t i = 0; i < aa; i++) {
                    float x = -3.0f + ((float)(sx + i) + 0.5f) * step;
                    wg_rgb one = shade_map_sample(&c, x, z, step);
                    acc.r += one.r;
                    acc.g += one.g;
                    acc.b += one.b;
                }
            }
            out[0] = wg_srgb8(acc.r * inv);
            out[1] = wg_srgb8(acc.g * inv);
            out[2] = wg_srgb8(acc.b * inv);
        }
    }
}
