/* material.c: what the ground is made of, from what shaped it.
 *
 * Every material is decided from the values at one point of the ground
 * (height, the sea level, water, sediment, the normal) and a noise of the
 * world position: nothing is measured over the field.  An earlier version
 * put its boundaries at the field's 15th, 50th and 85th height percentiles,
 * which kept every seed colourful but meant that a tile of a world, or the
 * same world with one more mountain, moved every boundary; it was turned
 * down for land whose snow line and beaches stand where the sea and the
 * height put them.
 *
 * Heights are read as altitude: 0 at the sea, 1 at height 1, so raising
 * the sea raises the beaches and the tree line with it.  Each boundary is a
 * smoothstep over a band, and the bands are moved a little by value noise of
 * the world position (seeds 000 and 002 colour their ground so), so neither
 * contour lines nor the grid show.  The noise's lattice is in world units:
 * a 513 preview and the 2049 world get the same noise at the vertices they
 * share.
 *
 * The colours are written in sRGB, as a painter picks them, and turned into
 * linear light once, in wg_materials_make().  The ground's roughness
 * below the grid, which the light sees (wg_relief), is here too: rock is
 * rougher than turf, and it uses the same noise. */
#include <math.h>
#include <string.h>

#include "render.h"

/* Rock begins where the normal's y falls below MAT_NY_HI (a slope of 41
 * degrees) and is bare at MAT_NY_LO (57 degrees).  The thermal stage leaves
 * slopes at its talus, 34 degrees (ny 0.83), and the hydraulic stage cuts
 * steeper banks: at 512, seed 1234, the median land normal has ny 0.86 and
 * a tenth of the land is under 0.65.  The reference's 0.80..0.45 made a
 * third of the land grey. */
#define MAT_NY_HI 0.75f
#define MAT_NY_LO 0.55f

/* Sediment, in height units, measured at 512, seed 1234 (the land's net
 * change is -0.028 at its 5th percentile, -0.012 at its 25th, +0.008 at its
 * 75th, +0.033 at its 95th):
 * a deposit shows from MAT_DEPOSIT (fully at twice that) and turns to sand
 * from MAT_THICK; ground stripped by more than MAT_SCOUR shows its stones;
 * a riverbed is ground carved by more than MAT_CARVED that water still
 * runs over, from WG_WATER_DAMP deep (the rain's film on a slope is
 * thinner). */
#define MAT_DEPOSIT 0.006f
#define MAT_THICK 0.03f
#define MAT_SCOUR 0.025f
#define MAT_CARVED 0.002f

/* The noise's two scales, in lattice cells per world unit: patches about
 * 0.15 units across (13 cells of a 513 world) that move the boundaries and
 * thin the forest, and grain about 0.04 units across that varies the
 * colour a little. */
#define MAT_PATCH 6.5f
#define MAT_GRAIN WG_MATERIAL_GRAIN

/* The lattice value at (i, j), in [-1, 1]: seed 000's hash of the point
 * with one of its two mixing rounds, enough for a colour.  (A 64 KiB table
 * of the values instead of the hash measured the same: the blending, not
 * the noise, is most of wg_albedo's time.) */
static inline float mat_corner(int32_t i, int32_t j)
{
    uint32_t h = (uint32_t)i * 0x8DA6B343u ^ (uint32_t)j * 0xD8163841u;
    h ^= h >> 15;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    /* 23 bits of it as the mantissa of a float in [2, 4), rather than a
     * conversion instruction: the noise in 11 ns instead of 16. */
    uint32_t bits = (h >> 9) | 0x40000000u;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v - 3.0f;
}

wg_rgb wg_from_srgb(float r, float g, float b)
{
    float in[3] = {r, g, b}, out[3];
    for (int i = 0; i < 3; i++) {
        float c = in[i] / 255.0f;
        out[i] = c <= 0.04045f ? c / 12.92f : powf((c + 0.055f) / 1.055f, 2.4f);
    }
    wg_rgb c = {out[0], out[1], out[2]};
    return c;
}

void wg_materials_make(wg_materials *m, float sea)
{
    m->sea = sea;
    /* A sea at 1 leaves no land; keep the altitude finite anyway. */
    m->inv_span = 1.0f / (sea < 0.95f ? 1.0f - sea : 0.05f);
    m->sand = wg_from_srgb(214, 200, 156);  /* beaches, bars, fans */
    m->silt = wg_from_srgb(112, 106, 84);   /* the seabed, deeper down */
    m->soil = wg_from_srgb(118, 94, 64);    /* thin deposits */
    m->gravel = wg_from_srgb(124, 116, 102); /* riverbeds */
    m->meadow = wg_from_srgb(112, 140, 64); /* by the coast */
    m->grass = wg_from_srgb(88, 124, 50);
    m->forest = wg_from_srgb(38, 66, 32);
    m->heath = wg_from_srgb(106, 104, 66);  /* above the tree line */
    m->rock = wg_from_srgb(92, 89, 86);
    m->snow = wg_from_srgb(236, 240, 246);
}

static inline __attribute__((always_inline)) float mat_noise(float x,
                                                             float z)
{
    /* floor without a libm call: |x| is at most a few hundred here. */
    int32_t i = (int32_t)x, j = (int32_t)z;
    i -= x < (float)i;
    j -= z < (float)j;
    float u = x - (float)i, v = z - (float)j;
    u = u * u * (3.0f - 2.0f * u);
    v = v * v * (3.0f - 2.0f * v);
    float a = mat_corner(i, j), b = mat_corner(i + 1, j);
    float c = mat_corner(i, j + 1), d = mat_corner(i + 1, j + 1);
    float top = a + (b - a) * u, bot = c + (d - c) * u;
    return top + (bot - top) * v;
}

float wg_noise(float x, float z)
{
    return mat_noise(x, z);
}

/* wg_smoothstep without a branch: the clamp to [0, 1] as sums with fabsf
 * (exact at 0 and 1, within an ulp of t between).  gcc 12 compiles the
 * clamp written with comparisons as two branches each, a dozen per pixel
 * on values that change from pixel to pixel. */
static inline float mat_step(float t)
{
    t = 0.5f * (t + fabsf(t));
    t = 0.5f * ((t + 1.0f) - fabsf(t - 1.0f));
    return t * t * (3.0f - 2.0f * t);
}

/* The gradient at lattice point (i, j) of gradient noise: one of eight
 * unit directions, 45 degrees apart and 22.5 off the axes, by the hash. */
static inline __attribute__((always_inline)) void
mat_gradient(int32_t i, int32_t j, float *gx, float *gz)
{
    static const float dir[8][2] = {
        {0.9238795f, 0.3826834f},   {0.3826834f, 0.9238795f},
        {-0.3826834f, 0.9238795f},  {-0.9238795f, 0.3826834f},
        {-0.9238795f, -0.3826834f}, {-0.3826834f, -0.9238795f},
        {0.3826834f, -0.9238795f},  {0.9238795f, -0.3826834f}};
    uint32_t h = (uint32_t)i * 0x8DA6B343u ^ (uint32_t)j * 0xD8163841u;
    h ^= h >> 15;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    *gx = dir[h & 7][0];
    *gz = dir[h & 7][1];
}

/* The slope (d/dx, d/dz) of gradient noise at (x, z), with the quintic
 * fade 6t^5 - 15t^4 + 10t^3 (the smoothstep's slope has a kink at every
 * lattice line).  Not the materials' value noise: its slope is flat at
 * every lattice point and steepest between, and lit as a relief it drew
 * the lattice's cells as blocks (on a slope in the sky's light, dark
 * squares). */
static inline __attribute__((always_inline)) void
mat_gradient_slope(float x, float z, float *sx, float *sz)
{
    int32_t i = (int32_t)x, j = (int32_t)z;
    i -= x < (float)i;
    j -= z < (float)j;
    float fx = x - (float)i, fz = z - (float)j;
    float u = fx * fx * fx * (fx * (fx * 6.0f - 15.0f) + 10.0f);
    float v = fz * fz * fz * (fz * (fz * 6.0f - 15.0f) + 10.0f);
    float du = 30.0f * fx * fx * (fx * (fx - 2.0f) + 1.0f);
    float dv = 30.0f * fz * fz * (fz * (fz - 2.0f) + 1.0f);
    float ax, az, bx, bz, cx, cz, dx, dz;
    mat_gradient(i, j, &ax, &az);
    mat_gradient(i + 1, j, &bx, &bz);
    mat_gradient(i, j + 1, &cx, &cz);
    mat_gradient(i + 1, j + 1, &dx, &dz);
    float va = ax * fx + az * fz, vb = bx * (fx - 1.0f) + bz * fz;
    float vc = cx * fx + cz * (fz - 1.0f);
    float vd = dx * (fx - 1.0f) + dz * (fz - 1.0f);
    float k = va - vb - vc + vd;
    *sx = ax + u * (bx - ax) + v * (cx - ax) + u * v * (ax - bx - cx + dx) +
          du * (v * k + vb - va);
    *sz = az + u * (bz - az) + v * (cz - az) + u * v * (az - bz - cz + dz) +
          dv * (u * k + vc - va);
}

/* The relief's height, per unit of its octaves' noise, on level ground;
 * steep ground has up to 2.3 times as much, near-vertical faces none
 * (wg_relief). */
#define MAT_RELIEF 0.0045f

/* One octave of the relief: f lattice cells to the world unit, the
 * lattice turned by the angle of cosine cs and sine sn, its noise moved by
 * (ox, oz) cells and weighed by w; its slope added to (sx, sz).  It fades
 * out, linearly, as the footprint 'foot' grows from a quarter of its
 * wavelength to half of it. */
static inline __attribute__((always_inline)) void
mat_relief_octave(const wg_ground *g, float foot, float f, float cs, float sn,
                  float ox, float oz, float w, float *sx, float *sz)
{
    float fade = 2.0f - 4.0f * foot * f;
    if (!(fade > 0.0f))
        return;
    w *= f * (fade < 1.0f ? fade : 1.0f);
    float u = cs * g->x - sn * g->z, v = sn * g->x + cs * g->z;
    float gu, gv;
    mat_gradient_slope(u * f + ox, v * f + oz, &gu, &gv);
    /* The slope back in x and z: the turn's transpose. */
    *sx += w * (cs * gu + sn * gv);
    *sz += w * (cs * gv - sn * gu);
}

/* The relief's octaves, in lattice cells to the world unit. */
#define MAT_RELIEF_F1 20.0f
#define MAT_RELIEF_F2 45.0f

float wg_relief_finest(float foot)
{
    return foot * MAT_RELIEF_F2 < 0.5f   ? MAT_RELIEF_F2
           : foot * MAT_RELIEF_F1 < 0.5f ? MAT_RELIEF_F1
                                         : 0.0f;
}

void wg_relief(const wg_ground *g, float depth, float foot, float n[3])
{
    /* Rock is rougher than turf; a lake's bed is silt.  The noise is of
     * x and z, which a steep face stretches down its slope (by 1 / ny),
     * so it fades out from ny 0.6 (53 degrees) to 0.2 (78): near-vertical
     * faces had shown it as long dark streaks. */
    const float ny = g->n[1];
    float amp = MAT_RELIEF * (0.4f + 2.5f * (1.0f - ny)) *
                mat_step((ny - 0.2f) * 2.5f);
    if (depth > 0.0f)
        amp *= 1.0f - mat_step(depth * 500.0f);
    if (!(amp > 0.0f))
        return;
    /* Two octaves, 20 and 45 to the world unit (a 513 world has 85 cells
     * to the unit), each lattice turned (by 0.52 radians, 30 degrees, and
     * by 60): a lattice noise's slopes lean toward its lattice's axes, and
     * unturned they drew the ground in little squares.  A square lattice
     * looks the same turned by 90 degrees, so 30 and 60 put each octave's
     * axes as far from the grid's and from the other's as they can be; the
     * fine octave had been turned by 99 degrees, 9 from the grid, and drew
     * stripes along it (north-south under the default sun). */
    float sx = 0.0f, sz = 0.0f;
    mat_relief_octave(g, foot, MAT_RELIEF_F1, 0.8678f, 0.4969f, 3.5f, 1.25f,
                      amp, &sx, &sz);
    mat_relief_octave(g, foot, MAT_RELIEF_F2, 0.5f, 0.8660254f, 14.5f,
                      8.25f, 0.5f * amp, &sx, &sz);
    if (sx == 0.0f && sz == 0.0f)
        return;
    n[0] -= sx;
    n[2] -= sz;
    float l = 1.0f / sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    n[0] *= l, n[1] *= l, n[2] *= l;
}

wg_rgb wg_albedo(const wg_materials *m, const wg_ground *g)
{
    /* Each rule is skipped where its weight is 0, which is most of the
     * ground for most of them; neighbouring pixels take the same branches,
     * so they are predicted well. */
    float patch = mat_noise(g->x * MAT_PATCH + 0.5f, g->z * MAT_PATCH + 0.5f);
    float grain = mat_noise(g->x * MAT_GRAIN + 7.25f, g->z * MAT_GRAIN + 3.5f);
    float above = g->h - m->sea, sed = g->sediment, water = g->water;
    float alt = above * m->inv_span + 0.025f * patch + 0.008f * grain;
    float ny = g->n[1] + 0.03f * grain;

    /* Vegetation by altitude: meadow by the coast, grass, forest on the
     * lower slopes in patches with clearings, heath above the tree line,
     * then bare stony ground. */
    wg_rgb c = wg_mix(m->meadow, m->grass, mat_step((alt - 0.03f) * 12.0f));
    if (alt > 0.10f && alt < 0.49f) {
        float forest = mat_step((alt - 0.10f) * 12.0f) *
                       (1.0f - mat_step((alt - 0.40f) * 12.0f)) *
                       mat_step((patch + 0.45f) * 3.0f);
        c = wg_mix(c, m->forest, forest);
    }
    if (alt > 0.42f) {
        c = wg_mix(c, m->heath, mat_step((alt - 0.42f) * 12.0f));
        c = wg_mix(c, m->rock, 0.6f * mat_step((alt - 0.56f) * 10.0f));
    }

    /* Ground the water stripped (gullies, scoured slopes) shows its
     * stones; rock where steep, at any height. */
    if (sed < -MAT_SCOUR)
        c = wg_mix(c, m->gravel,
                   0.5f * mat_step((-sed - MAT_SCOUR) * (1.0f / MAT_SCOUR)));
    float steep = 0.0f;
    if (ny < MAT_NY_HI) {
        steep = mat_step((MAT_NY_HI - ny) * (1.0f / (MAT_NY_HI - MAT_NY_LO)));
        c = wg_mix(c, m->rock, steep);
    }

    /* Deposited sediment: a thin layer is soil that plants soon grow on
     * again (a tint), a thick one (bars, fans, deltas) bare sand; neither
     * stays where the ground is rock for steepness (the field's deposits
     * on slopes had drawn brown ovals over the grey of rock faces), and a
     * thin one shows only on gentle ground, under 16 degrees fully and
     * none from 28: the hollows of grassy hillsides, where the stage
     * leaves a little, had been brown spots all over them. */
    if (sed > MAT_DEPOSIT) {
        float dep = mat_step((sed - MAT_DEPOSIT) * (1.0f / MAT_DEPOSIT));
        float thick = mat_step((sed - MAT_THICK) * (1.0f / MAT_THICK));
        float gentle = mat_step((ny - 0.88f) * 12.5f);
        c = wg_mix(c, wg_mix(m->soil, m->sand, thick),
                   dep * (0.4f + 0.45f * thick) * (1.0f - steep) *
                       (thick + (1.0f - thick) * gentle));
    }

    /* Under open water nothing grows: the bed is silt where the water lies
     * still and gravel where it carved the ground (a riverbed), and the
     * carved ground that running water still wets is gravel too. */
    float flow = 0.0f;
    if (water > WG_WATER_DAMP) {
        flow = mat_step((water - WG_WATER_DAMP) *
                        (1.0f / (WG_WATER_MIN - WG_WATER_DAMP)));
        float under = mat_step((water - WG_WATER_MIN) * (1.0f / WG_WATER_MIN));
        float carved = mat_step((-sed - MAT_CARVED) *
                                (1.0f / (3.0f * MAT_CARVED)));
        c = wg_mix(c, m->silt, under * (1.0f - carved));
        c = wg_mix(c, m->gravel, flow * carved);
    }

    /* The shore: sand from under the sea to a little above it where the
     * ground is gentle (the voxel chapter's rule, seed 004), the seabed
     * going to silt as it deepens. */
    if (above < 0.02f) {
        float beach = (1.0f - mat_step((above - 0.006f - 0.004f * patch) *
                                       120.0f)) *
                      mat_step((ny - 0.6f) * 5.0f);
        wg_rgb bed = wg_mix(m->sand, m->silt, mat_step(-above * 40.0f));
        c = wg_mix(c, bed, beach);
        /* The waterline is wet. */
        float line = 1.0f - mat_step(above * 300.0f);
        flow = flow > line ? flow : line;
    }

    /* Snow above a line at altitude 0.62, lower on slopes facing north (a
     * normal toward -Z: 0.47 on one of 30 degrees) and higher on those
     * facing south, thinning over 0.125 of altitude under a lower edge
     * that the grain moves by 0.05 either way; it lies on slopes up to 43
     * degrees and on none steeper than 61, cliffs.  (A sharper edge,
     * thinning over 0.06 and stripped from 40 to 52 degrees, ended the
     * snow of every sharp crest at one distance down its sunny face: a
     * white rim of one width along the crests seen from the south.) */
    float line = 0.62f + 0.30f * g->n[2], snow = 0.0f;
    if (alt > line - 0.05f) {
        snow = mat_step((alt - line) * 8.0f + 0.4f * grain) *
               mat_step((ny - 0.48f - 0.06f * grain) * 4.0f);
        c = wg_mix(c, m->snow, snow);
    }

    /* Wet ground is darker, snow is not; and the grain. */
    float k = (1.0f - 0.4f * flow * (1.0f - snow)) * (1.0f + 0.07f * grain);
    c.r *= k, c.g *= k, c.b *= k;
    return c;
}

/* ---- Eight grounds at once (wg_albedo8, wg_relief8) ----
 *
 * The rules above, lane by lane, in AVX2: each operation the scalar code
 * makes, in its order, so that every lane's result is the scalar one to
 * the bit (tests/test_render.c compares them on grounds of every kind).
 * A rule the scalar code skips where it does not apply is computed here
 * for every lane and its result selected by the same condition.  The
 * ground is nine in ten of the samples the default picture shades
 * (shade.c, shade_ground8). */
#if WG_WIDE
#include <immintrin.h>

#define MAT_WIDE __attribute__((target("avx2"), always_inline)) static inline

typedef __m256 v8f;
typedef __m256i v8i;

MAT_WIDE v8f v8_k(float x)
{
    return _mm256_set1_ps(x);
}

/* c ? a : b, lane by lane (c from a comparison). */
MAT_WIDE v8f v8_sel(v8f c, v8f a, v8f b)
{
    return _mm256_blendv_ps(b, a, c);
}

MAT_WIDE v8f v8_add(v8f a, v8f b)
{
    return _mm256_add_ps(a, b);
}

MAT_WIDE v8f v8_sub(v8f a, v8f b)
{
    return _mm256_sub_ps(a, b);
}

MAT_WIDE v8f v8_mul(v8f a, v8f b)
{
    return _mm256_mul_ps(a, b);
}

MAT_WIDE v8f v8_abs(v8f a)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a);
}

MAT_WIDE v8f v8_neg(v8f a)
{
    return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f));
}

#define V8_LT(a, b) _mm256_cmp_ps((a), (b), _CMP_LT_OQ)
#define V8_GT(a, b) _mm256_cmp_ps((a), (b), _CMP_GT_OQ)

/* mat_step */
MAT_WIDE v8f v8_step(v8f t)
{
    const v8f half = v8_k(0.5f), one = v8_k(1.0f);
    t = v8_mul(half, v8_add(t, v8_abs(t)));
    t = v8_mul(half, v8_sub(v8_add(t, one), v8_abs(v8_sub(t, one))));
    return v8_mul(v8_mul(t, t), v8_sub(v8_k(3.0f), v8_mul(v8_k(2.0f), t)));
}

typedef struct {
    v8f r, g, b;
} v8rgb;

MAT_WIDE v8rgb v8_rgb(wg_rgb c)
{
    return (v8rgb){v8_k(c.r), v8_k(c.g), v8_k(c.b)};
}

/* wg_mix: a * (1 - t) + b * t */
MAT_WIDE v8rgb v8_mix(v8rgb a, v8rgb b, v8f t)
{
    v8f s = v8_sub(v8_k(1.0f), t);
    return (v8rgb){v8_add(v8_mul(a.r, s), v8_mul(b.r, t)),
                   v8_add(v8_mul(a.g, s), v8_mul(b.g, t)),
                   v8_add(v8_mul(a.b, s), v8_mul(b.b, t))};
}

MAT_WIDE v8rgb v8_sel_rgb(v8f c, v8rgb a, v8rgb b)
{
    return (v8rgb){v8_sel(c, a.r, b.r), v8_sel(c, a.g, b.g),
                   v8_sel(c, a.b, b.b)};
}

/* floor(x) as an int, and x less it, as mat_noise and mat_gradient_slope
 * take them. */
MAT_WIDE v8i v8_floor(v8f x, v8f *frac)
{
    v8i i = _mm256_cvttps_epi32(x);
    v8i below = _mm256_castps_si256(V8_LT(x, _mm256_cvtepi32_ps(i)));
    i = _mm256_add_epi32(i, below); /* less one where x < (float)i */
    *frac = v8_sub(x, _mm256_cvtepi32_ps(i));
    return i;
}

/* mat_corner's and mat_gradient's hash of lattice point (i, j). */
MAT_WIDE v8i v8_hash(v8i i, v8i j)
{
    v8i h = _mm256_xor_si256(
        _mm256_mullo_epi32(i, _mm256_set1_epi32((int)0x8DA6B343u)),
        _mm256_mullo_epi32(j, _mm256_set1_epi32((int)0xD8163841u)));
    h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 15));
    h = _mm256_mullo_epi32(h, _mm256_set1_epi32((int)0x846CA68Bu));
    return _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
}

/* mat_corner */
MAT_WIDE v8f v8_corner(v8i i, v8i j)
{
    v8i bits = _mm256_or_si256(_mm256_srli_epi32(v8_hash(i, j), 9),
                               _mm256_set1_epi32(0x40000000));
    return v8_sub(_mm256_castsi256_ps(bits), v8_k(3.0f));
}

/* mat_noise */
MAT_WIDE v8f v8_noise(v8f x, v8f z)
{
    v8f u, v;
    v8i i = v8_floor(x, &u), j = v8_floor(z, &v);
    const v8f three = v8_k(3.0f), two = v8_k(2.0f);
    u = v8_mul(v8_mul(u, u), v8_sub(three, v8_mul(two, u)));
    v = v8_mul(v8_mul(v, v), v8_sub(three, v8_mul(two, v)));
    const v8i one = _mm256_set1_epi32(1);
    v8i i1 = _mm256_add_epi32(i, one), j1 = _mm256_add_epi32(j, one);
    v8f a = v8_corner(i, j), b = v8_corner(i1, j);
    v8f c = v8_corner(i, j1), d = v8_corner(i1, j1);
    v8f top = v8_add(a, v8_mul(v8_sub(b, a), u));
    v8f bot = v8_add(c, v8_mul(v8_sub(d, c), u));
    return v8_add(top, v8_mul(v8_sub(bot, top), v));
}

/* mat_gradient: the direction's two parts by the hash's low three bits. */
MAT_WIDE void v8_gradient(v8i i, v8i j, v8f *gx, v8f *gz)
{
    const v8f dx = _mm256_setr_ps(0.9238795f, 0.3826834f, -0.3826834f,
                                  -0.9238795f, -0.9238795f, -0.3826834f,
                                  0.3826834f, 0.9238795f);
    const v8f dz = _mm256_setr_ps(0.3826834f, 0.9238795f, 0.9238795f,
                                  0.3826834f, -0.3826834f, -0.9238795f,
                                  -0.9238795f, -0.3826834f);
    v8i h = v8_hash(i, j);
    *gx = _mm256_permutevar8x32_ps(dx, h);
    *gz = _mm256_permutevar8x32_ps(dz, h);
}

/* mat_gradient_slope */
MAT_WIDE void v8_gradient_slope(v8f x, v8f z, v8f *sx, v8f *sz)
{
    v8f fx, fz;
    v8i i = v8_floor(x, &fx), j = v8_floor(z, &fz);
    const v8f one = v8_k(1.0f), six = v8_k(6.0f), fifteen = v8_k(15.0f),
              ten = v8_k(10.0f), thirty = v8_k(30.0f), two = v8_k(2.0f);
    v8f u = v8_mul(v8_mul(v8_mul(fx, fx), fx),
                   v8_add(v8_mul(fx, v8_sub(v8_mul(fx, six), fifteen)), ten));
    v8f v = v8_mul(v8_mul(v8_mul(fz, fz), fz),
                   v8_add(v8_mul(fz, v8_sub(v8_mul(fz, six), fifteen)), ten));
    v8f du = v8_mul(v8_mul(v8_mul(thirty, fx), fx),
                    v8_add(v8_mul(fx, v8_sub(fx, two)), one));
    v8f dv = v8_mul(v8_mul(v8_mul(thirty, fz), fz),
                    v8_add(v8_mul(fz, v8_sub(fz, two)), one));
    const v8i i1 = _mm256_add_epi32(i, _mm256_set1_epi32(1));
    const v8i j1 = _mm256_add_epi32(j, _mm256_set1_epi32(1));
    v8f ax, az, bx, bz, cx, cz, dx, dz;
    v8_gradient(i, j, &ax, &az);
    v8_gradient(i1, j, &bx, &bz);
    v8_gradient(i, j1, &cx, &cz);
    v8_gradient(i1, j1, &dx, &dz);
    v8f fx1 = v8_sub(fx, one), fz1 = v8_sub(fz, one);
    v8f va = v8_add(v8_mul(ax, fx), v8_mul(az, fz));
    v8f vb = v8_add(v8_mul(bx, fx1), v8_mul(bz, fz));
    v8f vc = v8_add(v8_mul(cx, fx), v8_mul(cz, fz1));
    v8f vd = v8_add(v8_mul(dx, fx1), v8_mul(dz, fz1));
    v8f k = v8_add(v8_sub(v8_sub(va, vb), vc), vd);
    v8f uv = v8_mul(u, v);
    *sx = v8_add(
        v8_add(v8_add(v8_add(ax, v8_mul(u, v8_sub(bx, ax))),
                      v8_mul(v, v8_sub(cx, ax))),
               v8_mul(uv, v8_add(v8_sub(v8_sub(ax, bx), cx), dx))),
        v8_mul(du, v8_sub(v8_add(v8_mul(v, k), vb), va)));
    *sz = v8_add(
        v8_add(v8_add(v8_add(az, v8_mul(u, v8_sub(bz, az))),
                      v8_mul(v, v8_sub(cz, az))),
               v8_mul(uv, v8_add(v8_sub(v8_sub(az, bz), cz), dz))),
        v8_mul(dv, v8_sub(v8_add(v8_mul(u, k), vc), va)));
}

/* mat_relief_octave: its slope added to (sx, sz) where the octave shows
 * (fade > 0). */
MAT_WIDE void v8_relief_octave(v8f x, v8f z, v8f foot, float f, float cs,
                               float sn, float ox, float oz, v8f w, v8f *sx,
                               v8f *sz)
{
    const v8f vf = v8_k(f), vcs = v8_k(cs), vsn = v8_k(sn);
    v8f fade = v8_sub(v8_k(2.0f), v8_mul(v8_mul(v8_k(4.0f), foot), vf));
    v8f shows = V8_GT(fade, v8_k(0.0f));
    v8f one = v8_k(1.0f);
    w = v8_mul(w, v8_mul(vf, v8_sel(V8_LT(fade, one), fade, one)));
    v8f u = v8_sub(v8_mul(vcs, x), v8_mul(vsn, z));
    v8f v = v8_add(v8_mul(vsn, x), v8_mul(vcs, z));
    v8f gu, gv;
    v8_gradient_slope(v8_add(v8_mul(u, vf), v8_k(ox)),
                      v8_add(v8_mul(v, vf), v8_k(oz)), &gu, &gv);
    v8f ax = v8_add(*sx, v8_mul(w, v8_add(v8_mul(vcs, gu), v8_mul(vsn, gv))));
    v8f az = v8_add(*sz, v8_mul(w, v8_sub(v8_mul(vcs, gv), v8_mul(vsn, gu))));
    *sx = v8_sel(shows, ax, *sx);
    *sz = v8_sel(shows, az, *sz);
}

MAT_WIDE v8f v8_load(const float *p)
{
    return _mm256_loadu_ps(p);
}

__attribute__((target("avx2"))) void
wg_relief8(const wg_ground8 *g, const float depth[8], const float foot[8],
           float n[3][8])
{
    const v8f zero = v8_k(0.0f), one = v8_k(1.0f);
    const v8f ny = v8_load(g->n[1]), d = v8_load(depth), x = v8_load(g->x),
              z = v8_load(g->z);
    v8f amp = v8_mul(v8_mul(v8_k(MAT_RELIEF),
                            v8_add(v8_k(0.4f),
                                   v8_mul(v8_k(2.5f), v8_sub(one, ny)))),
                     v8_step(v8_mul(v8_sub(ny, v8_k(0.2f)), v8_k(2.5f))));
    amp = v8_sel(V8_GT(d, zero),
                 v8_mul(amp, v8_sub(one, v8_step(v8_mul(d, v8_k(500.0f))))),
                 amp);
    v8f sx = zero, sz = zero;
    const v8f ft = v8_load(foot);
    v8_relief_octave(x, z, ft, MAT_RELIEF_F1, 0.8678f, 0.4969f, 3.5f, 1.25f,
                     amp, &sx, &sz);
    v8_relief_octave(x, z, ft, MAT_RELIEF_F2, 0.5f, 0.8660254f, 14.5f, 8.25f,
                     v8_mul(v8_k(0.5f), amp), &sx, &sz);
    /* Tilted where there is relief (amp > 0) and it moved the normal. */
    v8f tilt = _mm256_andnot_ps(
        _mm256_and_ps(_mm256_cmp_ps(sx, zero, _CMP_EQ_OQ),
                      _mm256_cmp_ps(sz, zero, _CMP_EQ_OQ)),
        V8_GT(amp, zero));
    v8f n0 = v8_load(n[0]), n1 = v8_load(n[1]), n2 = v8_load(n[2]);
    v8f t0 = v8_sub(n0, sx), t2 = v8_sub(n2, sz);
    v8f l = _mm256_div_ps(
        one, _mm256_sqrt_ps(v8_add(v8_add(v8_mul(t0, t0), v8_mul(n1, n1)),
                                   v8_mul(t2, t2))));
    _mm256_storeu_ps(n[0], v8_sel(tilt, v8_mul(t0, l), n0));
    _mm256_storeu_ps(n[1], v8_sel(tilt, v8_mul(n1, l), n1));
    _mm256_storeu_ps(n[2], v8_sel(tilt, v8_mul(t2, l), n2));
}

__attribute__((target("avx2"))) void
wg_albedo8(const wg_materials *m, const wg_ground8 *g, float rgb[3][8])
{
    const v8f zero = v8_k(0.0f), one = v8_k(1.0f);
    const v8f x = v8_load(g->x), z = v8_load(g->z);
    v8f patch = v8_noise(v8_add(v8_mul(x, v8_k(MAT_PATCH)), v8_k(0.5f)),
                         v8_add(v8_mul(z, v8_k(MAT_PATCH)), v8_k(0.5f)));
    v8f grain = v8_noise(v8_add(v8_mul(x, v8_k(MAT_GRAIN)), v8_k(7.25f)),
                         v8_add(v8_mul(z, v8_k(MAT_GRAIN)), v8_k(3.5f)));
    v8f above = v8_sub(v8_load(g->h), v8_k(m->sea));
    v8f sed = v8_load(g->sediment), water = v8_load(g->water);
    v8f alt = v8_add(v8_add(v8_mul(above, v8_k(m->inv_span)),
                            v8_mul(v8_k(0.025f), patch)),
                     v8_mul(v8_k(0.008f), grain));
    v8f ny = v8_add(v8_load(g->n[1]), v8_mul(v8_k(0.03f), grain));

    /* vegetation by altitude */
    v8rgb c = v8_mix(v8_rgb(m->meadow), v8_rgb(m->grass),
                     v8_step(v8_mul(v8_sub(alt, v8_k(0.03f)), v8_k(12.0f))));
    v8f when = _mm256_and_ps(V8_GT(alt, v8_k(0.10f)), V8_LT(alt, v8_k(0.49f)));
    v8f forest = v8_mul(
        v8_mul(v8_step(v8_mul(v8_sub(alt, v8_k(0.10f)), v8_k(12.0f))),
               v8_sub(one, v8_step(v8_mul(v8_sub(alt, v8_k(0.40f)),
                                          v8_k(12.0f))))),
        v8_step(v8_mul(v8_add(patch, v8_k(0.45f)), v8_k(3.0f))));
    c = v8_sel_rgb(when, v8_mix(c, v8_rgb(m->forest), forest), c);
    when = V8_GT(alt, v8_k(0.42f));
    v8rgb hi = v8_mix(c, v8_rgb(m->heath),
                      v8_step(v8_mul(v8_sub(alt, v8_k(0.42f)), v8_k(12.0f))));
    hi = v8_mix(hi, v8_rgb(m->rock),
                v8_mul(v8_k(0.6f), v8_step(v8_mul(v8_sub(alt, v8_k(0.56f)),
                                                  v8_k(10.0f)))));
    c = v8_sel_rgb(when, hi, c);

    /* stripped ground, and rock where steep */
    v8f nsed = v8_neg(sed);
    when = V8_LT(sed, v8_k(-MAT_SCOUR));
    c = v8_sel_rgb(
        when,
        v8_mix(c, v8_rgb(m->gravel),
               v8_mul(v8_k(0.5f),
                      v8_step(v8_mul(v8_sub(nsed, v8_k(MAT_SCOUR)),
                                     v8_k(1.0f / MAT_SCOUR))))),
        c);
    when = V8_LT(ny, v8_k(MAT_NY_HI));
    v8f steep = v8_sel(when,
                       v8_step(v8_mul(v8_sub(v8_k(MAT_NY_HI), ny),
                                      v8_k(1.0f / (MAT_NY_HI - MAT_NY_LO)))),
                       zero);
    c = v8_sel_rgb(when, v8_mix(c, v8_rgb(m->rock), steep), c);

    /* deposits */
    when = V8_GT(sed, v8_k(MAT_DEPOSIT));
    {
        v8f dep = v8_step(v8_mul(v8_sub(sed, v8_k(MAT_DEPOSIT)),
                                 v8_k(1.0f / MAT_DEPOSIT)));
        v8f thick = v8_step(v8_mul(v8_sub(sed, v8_k(MAT_THICK)),
                                   v8_k(1.0f / MAT_THICK)));
        v8f gentle = v8_step(v8_mul(v8_sub(ny, v8_k(0.88f)), v8_k(12.5f)));
        v8f t = v8_mul(
            v8_mul(v8_mul(dep, v8_add(v8_k(0.4f), v8_mul(v8_k(0.45f), thick))),
                   v8_sub(one, steep)),
            v8_add(thick, v8_mul(v8_sub(one, thick), gentle)));
        c = v8_sel_rgb(
            when, v8_mix(c, v8_mix(v8_rgb(m->soil), v8_rgb(m->sand), thick), t),
            c);
    }

    /* under water, and carved wet ground */
    v8f flow = zero;
    when = V8_GT(water, v8_k(WG_WATER_DAMP));
    {
        v8f fl = v8_step(v8_mul(v8_sub(water, v8_k(WG_WATER_DAMP)),
                                v8_k(1.0f / (WG_WATER_MIN - WG_WATER_DAMP))));
        v8f under = v8_step(v8_mul(v8_sub(water, v8_k(WG_WATER_MIN)),
                                   v8_k(1.0f / WG_WATER_MIN)));
        v8f carved = v8_step(v8_mul(v8_sub(nsed, v8_k(MAT_CARVED)),
                                    v8_k(1.0f / (3.0f * MAT_CARVED))));
        v8rgb w = v8_mix(c, v8_rgb(m->silt), v8_mul(under, v8_sub(one, carved)));
        w = v8_mix(w, v8_rgb(m->gravel), v8_mul(fl, carved));
        c = v8_sel_rgb(when, w, c);
        flow = v8_sel(when, fl, zero);
    }

    /* the shore */
    when = V8_LT(above, v8_k(0.02f));
    {
        v8f beach = v8_mul(
            v8_sub(one, v8_step(v8_mul(
                            v8_sub(v8_sub(above, v8_k(0.006f)),
                                   v8_mul(v8_k(0.004f), patch)),
                            v8_k(120.0f)))),
            v8_step(v8_mul(v8_sub(ny, v8_k(0.6f)), v8_k(5.0f))));
        v8rgb bed = v8_mix(v8_rgb(m->sand), v8_rgb(m->silt),
                           v8_step(v8_mul(v8_neg(above), v8_k(40.0f))));
        c = v8_sel_rgb(when, v8_mix(c, bed, beach), c);
        v8f line = v8_sub(one, v8_step(v8_mul(above, v8_k(300.0f))));
        flow = v8_sel(when, v8_sel(V8_GT(flow, line), flow, line), flow);
    }

    /* snow */
    v8f line = v8_add(v8_k(0.62f), v8_mul(v8_k(0.30f), v8_load(g->n[2])));
    when = V8_GT(alt, v8_sub(line, v8_k(0.05f)));
    v8f snow = v8_sel(
        when,
        v8_mul(v8_step(v8_add(v8_mul(v8_sub(alt, line), v8_k(8.0f)),
                              v8_mul(v8_k(0.4f), grain))),
               v8_step(v8_mul(v8_sub(v8_sub(ny, v8_k(0.48f)),
                                     v8_mul(v8_k(0.06f), grain)),
                              v8_k(4.0f)))),
        zero);
    c = v8_sel_rgb(when, v8_mix(c, v8_rgb(m->snow), snow), c);

    /* wet ground darker, and the grain */
    v8f k = v8_mul(
        v8_sub(one, v8_mul(v8_mul(v8_k(0.4f), flow), v8_sub(one, snow))),
        v8_add(one, v8_mul(v8_k(0.07f), grain)));
    _mm256_storeu_ps(rgb[0], v8_mul(c.r, k));
    _mm256_storeu_ps(rgb[1], v8_mul(c.g, k));
    _mm256_storeu_ps(rgb[2], v8_mul(c.b, k));
}
#endif
