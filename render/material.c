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
#include "wide.h"

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
 * for every lane and its result selected by the same condition.  For the
 * shading's wide path (shade.c, shade_surface8). */
#if WG_WIDE
/* mat_step */
W8_FN w8f mat8_step(w8f t)
{
    const w8f half = w8_k(0.5f), one = w8_k(1.0f);
    t = W8_MUL(half, W8_ADD(t, w8_abs(t)));
    t = W8_MUL(half, W8_SUB(W8_ADD(t, one), w8_abs(W8_SUB(t, one))));
    return W8_MUL(W8_MUL(t, t), W8_SUB(w8_k(3.0f), W8_MUL(w8_k(2.0f), t)));
}

typedef struct {
    w8f r, g, b;
} mat8_rgb_t;

W8_FN mat8_rgb_t mat8_rgb(wg_rgb c)
{
    return (mat8_rgb_t){w8_k(c.r), w8_k(c.g), w8_k(c.b)};
}

/* wg_mix: a * (1 - t) + b * t */
W8_FN mat8_rgb_t mat8_mix(mat8_rgb_t a, mat8_rgb_t b, w8f t)
{
    w8f s = W8_SUB(w8_k(1.0f), t);
    return (mat8_rgb_t){W8_ADD(W8_MUL(a.r, s), W8_MUL(b.r, t)),
                   W8_ADD(W8_MUL(a.g, s), W8_MUL(b.g, t)),
                   W8_ADD(W8_MUL(a.b, s), W8_MUL(b.b, t))};
}

W8_FN mat8_rgb_t mat8_sel_rgb(w8f c, mat8_rgb_t a, mat8_rgb_t b)
{
    return (mat8_rgb_t){w8_sel(c, a.r, b.r), w8_sel(c, a.g, b.g),
                   w8_sel(c, a.b, b.b)};
}

/* floor(x) as an int, and x less it, as mat_noise and mat_gradient_slope
 * take them. */
W8_FN w8i mat8_floor(w8f x, w8f *frac)
{
    w8i i = _mm256_cvttps_epi32(x);
    w8i below = _mm256_castps_si256(W8_LT(x, _mm256_cvtepi32_ps(i)));
    i = _mm256_add_epi32(i, below); /* less one where x < (float)i */
    *frac = W8_SUB(x, _mm256_cvtepi32_ps(i));
    return i;
}

/* mat_corner's and mat_gradient's hash of lattice point (i, j). */
W8_FN w8i mat8_hash(w8i i, w8i j)
{
    w8i h = _mm256_xor_si256(
        _mm256_mullo_epi32(i, _mm256_set1_epi32((int)0x8DA6B343u)),
        _mm256_mullo_epi32(j, _mm256_set1_epi32((int)0xD8163841u)));
    h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 15));
    h = _mm256_mullo_epi32(h, _mm256_set1_epi32((int)0x846CA68Bu));
    return _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
}

/* mat_corner */
W8_FN w8f mat8_corner(w8i i, w8i j)
{
    w8i bits = _mm256_or_si256(_mm256_srli_epi32(mat8_hash(i, j), 9),
                               _mm256_set1_epi32(0x40000000));
    return W8_SUB(_mm256_castsi256_ps(bits), w8_k(3.0f));
}

/* mat_noise */
W8_FN w8f mat8_noise(w8f x, w8f z)
{
    w8f u, v;
    w8i i = mat8_floor(x, &u), j = mat8_floor(z, &v);
    const w8f three = w8_k(3.0f), two = w8_k(2.0f);
    u = W8_MUL(W8_MUL(u, u), W8_SUB(three, W8_MUL(two, u)));
    v = W8_MUL(W8_MUL(v, v), W8_SUB(three, W8_MUL(two, v)));
    const w8i one = _mm256_set1_epi32(1);
    w8i i1 = _mm256_add_epi32(i, one), j1 = _mm256_add_epi32(j, one);
    w8f a = mat8_corner(i, j), b = mat8_corner(i1, j);
    w8f c = mat8_corner(i, j1), d = mat8_corner(i1, j1);
    w8f top = W8_ADD(a, W8_MUL(W8_SUB(b, a), u));
    w8f bot = W8_ADD(c, W8_MUL(W8_SUB(d, c), u));
    return W8_ADD(top, W8_MUL(W8_SUB(bot, top), v));
}

/* mat_gradient: the direction's two parts by the hash's low three bits. */
W8_FN void mat8_gradient(w8i i, w8i j, w8f *gx, w8f *gz)
{
    const w8f dx = _mm256_setr_ps(0.9238795f, 0.3826834f, -0.3826834f,
                                  -0.9238795f, -0.9238795f, -0.3826834f,
                                  0.3826834f, 0.9238795f);
    const w8f dz = _mm256_setr_ps(0.3826834f, 0.9238795f, 0.9238795f,
                                  0.3826834f, -0.3826834f, -0.9238795f,
                                  -0.9238795f, -0.3826834f);
    w8i h = mat8_hash(i, j);
    *gx = _mm256_permutevar8x32_ps(dx, h);
    *gz = _mm256_permutevar8x32_ps(dz, h);
}

/* mat_gradient_slope */
W8_FN void mat8_gradient_slope(w8f x, w8f z, w8f *sx, w8f *sz)
{
    w8f fx, fz;
    w8i i = mat8_floor(x, &fx), j = mat8_floor(z, &fz);
    const w8f one = w8_k(1.0f), six = w8_k(6.0f), fifteen = w8_k(15.0f),
              ten = w8_k(10.0f), thirty = w8_k(30.0f), two = w8_k(2.0f);
    w8f u = W8_MUL(W8_MUL(W8_MUL(fx, fx), fx),
                   W8_ADD(W8_MUL(fx, W8_SUB(W8_MUL(fx, six), fifteen)), ten));
    w8f v = W8_MUL(W8_MUL(W8_MUL(fz, fz), fz),
                   W8_ADD(W8_MUL(fz, W8_SUB(W8_MUL(fz, six), fifteen)), ten));
    w8f du = W8_MUL(W8_MUL(W8_MUL(thirty, fx), fx),
                    W8_ADD(W8_MUL(fx, W8_SUB(fx, two)), one));
    w8f dv = W8_MUL(W8_MUL(W8_MUL(thirty, fz), fz),
                    W8_ADD(W8_MUL(fz, W8_SUB(fz, two)), one));
    const w8i i1 = _mm256_add_epi32(i, _mm256_set1_epi32(1));
    const w8i j1 = _mm256_add_epi32(j, _mm256_set1_epi32(1));
    w8f ax, az, bx, bz, cx, cz, dx, dz;
    mat8_gradient(i, j, &ax, &az);
    mat8_gradient(i1, j, &bx, &bz);
    mat8_gradient(i, j1, &cx, &cz);
    mat8_gradient(i1, j1, &dx, &dz);
    w8f fx1 = W8_SUB(fx, one), fz1 = W8_SUB(fz, one);
    w8f va = W8_ADD(W8_MUL(ax, fx), W8_MUL(az, fz));
    w8f vb = W8_ADD(W8_MUL(bx, fx1), W8_MUL(bz, fz));
    w8f vc = W8_ADD(W8_MUL(cx, fx), W8_MUL(cz, fz1));
    w8f vd = W8_ADD(W8_MUL(dx, fx1), W8_MUL(dz, fz1));
    w8f k = W8_ADD(W8_SUB(W8_SUB(va, vb), vc), vd);
    w8f uv = W8_MUL(u, v);
    *sx = W8_ADD(
        W8_ADD(W8_ADD(W8_ADD(ax, W8_MUL(u, W8_SUB(bx, ax))),
                      W8_MUL(v, W8_SUB(cx, ax))),
               W8_MUL(uv, W8_ADD(W8_SUB(W8_SUB(ax, bx), cx), dx))),
        W8_MUL(du, W8_SUB(W8_ADD(W8_MUL(v, k), vb), va)));
    *sz = W8_ADD(
        W8_ADD(W8_ADD(W8_ADD(az, W8_MUL(u, W8_SUB(bz, az))),
                      W8_MUL(v, W8_SUB(cz, az))),
               W8_MUL(uv, W8_ADD(W8_SUB(W8_SUB(az, bz), cz), dz))),
        W8_MUL(dv, W8_SUB(W8_ADD(W8_MUL(u, k), vc), va)));
}

/* mat_relief_octave: its slope added to (sx, sz) where the octave shows
 * (fade > 0). */
W8_FN void mat8_relief_octave(w8f x, w8f z, w8f foot, float f, float cs,
                               float sn, float ox, float oz, w8f w, w8f *sx,
                               w8f *sz)
{
    const w8f vf = w8_k(f), vcs = w8_k(cs), vsn = w8_k(sn);
    w8f fade = W8_SUB(w8_k(2.0f), W8_MUL(W8_MUL(w8_k(4.0f), foot), vf));
    w8f shows = W8_GT(fade, w8_k(0.0f));
    w8f one = w8_k(1.0f);
    w = W8_MUL(w, W8_MUL(vf, w8_sel(W8_LT(fade, one), fade, one)));
    w8f u = W8_SUB(W8_MUL(vcs, x), W8_MUL(vsn, z));
    w8f v = W8_ADD(W8_MUL(vsn, x), W8_MUL(vcs, z));
    w8f gu, gv;
    mat8_gradient_slope(W8_ADD(W8_MUL(u, vf), w8_k(ox)),
                      W8_ADD(W8_MUL(v, vf), w8_k(oz)), &gu, &gv);
    w8f ax = W8_ADD(*sx, W8_MUL(w, W8_ADD(W8_MUL(vcs, gu), W8_MUL(vsn, gv))));
    w8f az = W8_ADD(*sz, W8_MUL(w, W8_SUB(W8_MUL(vcs, gv), W8_MUL(vsn, gu))));
    *sx = w8_sel(shows, ax, *sx);
    *sz = w8_sel(shows, az, *sz);
}

W8_FN w8f mat8_load(const float *p)
{
    return _mm256_loadu_ps(p);
}

__attribute__((target("avx2"))) void
wg_relief8(const wg_ground8 *g, const float depth[8], const float foot[8],
           float n[3][8])
{
    const w8f zero = w8_k(0.0f), one = w8_k(1.0f);
    const w8f ny = mat8_load(g->n[1]), d = mat8_load(depth), x = mat8_load(g->x),
              z = mat8_load(g->z);
    w8f amp = W8_MUL(W8_MUL(w8_k(MAT_RELIEF),
                            W8_ADD(w8_k(0.4f),
                                   W8_MUL(w8_k(2.5f), W8_SUB(one, ny)))),
                     mat8_step(W8_MUL(W8_SUB(ny, w8_k(0.2f)), w8_k(2.5f))));
    amp = w8_sel(W8_GT(d, zero),
                 W8_MUL(amp, W8_SUB(one, mat8_step(W8_MUL(d, w8_k(500.0f))))),
                 amp);
    w8f sx = zero, sz = zero;
    const w8f ft = mat8_load(foot);
    mat8_relief_octave(x, z, ft, MAT_RELIEF_F1, 0.8678f, 0.4969f, 3.5f, 1.25f,
                     amp, &sx, &sz);
    mat8_relief_octave(x, z, ft, MAT_RELIEF_F2, 0.5f, 0.8660254f, 14.5f, 8.25f,
                     W8_MUL(w8_k(0.5f), amp), &sx, &sz);
    /* Tilted where there is relief (amp > 0) and it moved the normal. */
    w8f tilt = _mm256_andnot_ps(
        _mm256_and_ps(W8_EQ(sx, zero),
                      W8_EQ(sz, zero)),
        W8_GT(amp, zero));
    w8f n0 = mat8_load(n[0]), n1 = mat8_load(n[1]), n2 = mat8_load(n[2]);
    w8f t0 = W8_SUB(n0, sx), t2 = W8_SUB(n2, sz);
    w8f l = W8_DIV(
        one, _mm256_sqrt_ps(W8_ADD(W8_ADD(W8_MUL(t0, t0), W8_MUL(n1, n1)),
                                   W8_MUL(t2, t2))));
    _mm256_storeu_ps(n[0], w8_sel(tilt, W8_MUL(t0, l), n0));
    _mm256_storeu_ps(n[1], w8_sel(tilt, W8_MUL(n1, l), n1));
    _mm256_storeu_ps(n[2], w8_sel(tilt, W8_MUL(t2, l), n2));
}

__attribute__((target("avx2"))) void
wg_albedo8(const wg_materials *m, const wg_ground8 *g, float rgb[3][8])
{
    const w8f zero = w8_k(0.0f), one = w8_k(1.0f);
    const w8f x = mat8_load(g->x), z = mat8_load(g->z);
    w8f patch = mat8_noise(W8_ADD(W8_MUL(x, w8_k(MAT_PATCH)), w8_k(0.5f)),
                         W8_ADD(W8_MUL(z, w8_k(MAT_PATCH)), w8_k(0.5f)));
    w8f grain = mat8_noise(W8_ADD(W8_MUL(x, w8_k(MAT_GRAIN)), w8_k(7.25f)),
                         W8_ADD(W8_MUL(z, w8_k(MAT_GRAIN)), w8_k(3.5f)));
    w8f above = W8_SUB(mat8_load(g->h), w8_k(m->sea));
    w8f sed = mat8_load(g->sediment), water = mat8_load(g->water);
    w8f alt = W8_ADD(W8_ADD(W8_MUL(above, w8_k(m->inv_span)),
                            W8_MUL(w8_k(0.025f), patch)),
                     W8_MUL(w8_k(0.008f), grain));
    w8f ny = W8_ADD(mat8_load(g->n[1]), W8_MUL(w8_k(0.03f), grain));

    /* vegetation by altitude */
    mat8_rgb_t c = mat8_mix(mat8_rgb(m->meadow), mat8_rgb(m->grass),
                     mat8_step(W8_MUL(W8_SUB(alt, w8_k(0.03f)), w8_k(12.0f))));
    w8f when = _mm256_and_ps(W8_GT(alt, w8_k(0.10f)), W8_LT(alt, w8_k(0.49f)));
    w8f forest = W8_MUL(
        W8_MUL(mat8_step(W8_MUL(W8_SUB(alt, w8_k(0.10f)), w8_k(12.0f))),
               W8_SUB(one, mat8_step(W8_MUL(W8_SUB(alt, w8_k(0.40f)),
                                          w8_k(12.0f))))),
        mat8_step(W8_MUL(W8_ADD(patch, w8_k(0.45f)), w8_k(3.0f))));
    c = mat8_sel_rgb(when, mat8_mix(c, mat8_rgb(m->forest), forest), c);
    when = W8_GT(alt, w8_k(0.42f));
    mat8_rgb_t hi = mat8_mix(c, mat8_rgb(m->heath),
                      mat8_step(W8_MUL(W8_SUB(alt, w8_k(0.42f)), w8_k(12.0f))));
    hi = mat8_mix(hi, mat8_rgb(m->rock),
                W8_MUL(w8_k(0.6f), mat8_step(W8_MUL(W8_SUB(alt, w8_k(0.56f)),
                                                  w8_k(10.0f)))));
    c = mat8_sel_rgb(when, hi, c);

    /* stripped ground, and rock where steep */
    w8f nsed = w8_neg(sed);
    when = W8_LT(sed, w8_k(-MAT_SCOUR));
    c = mat8_sel_rgb(
        when,
        mat8_mix(c, mat8_rgb(m->gravel),
               W8_MUL(w8_k(0.5f),
                      mat8_step(W8_MUL(W8_SUB(nsed, w8_k(MAT_SCOUR)),
                                     w8_k(1.0f / MAT_SCOUR))))),
        c);
    when = W8_LT(ny, w8_k(MAT_NY_HI));
    w8f steep = w8_sel(when,
                       mat8_step(W8_MUL(W8_SUB(w8_k(MAT_NY_HI), ny),
                                      w8_k(1.0f / (MAT_NY_HI - MAT_NY_LO)))),
                       zero);
    c = mat8_sel_rgb(when, mat8_mix(c, mat8_rgb(m->rock), steep), c);

    /* deposits */
    when = W8_GT(sed, w8_k(MAT_DEPOSIT));
    {
        w8f dep = mat8_step(W8_MUL(W8_SUB(sed, w8_k(MAT_DEPOSIT)),
                                 w8_k(1.0f / MAT_DEPOSIT)));
        w8f thick = mat8_step(W8_MUL(W8_SUB(sed, w8_k(MAT_THICK)),
                                   w8_k(1.0f / MAT_THICK)));
        w8f gentle = mat8_step(W8_MUL(W8_SUB(ny, w8_k(0.88f)), w8_k(12.5f)));
        w8f t = W8_MUL(
            W8_MUL(W8_MUL(dep, W8_ADD(w8_k(0.4f), W8_MUL(w8_k(0.45f), thick))),
                   W8_SUB(one, steep)),
            W8_ADD(thick, W8_MUL(W8_SUB(one, thick), gentle)));
        c = mat8_sel_rgb(
            when, mat8_mix(c, mat8_mix(mat8_rgb(m->soil), mat8_rgb(m->sand), thick), t),
            c);
    }

    /* under water, and carved wet ground */
    w8f flow = zero;
    when = W8_GT(water, w8_k(WG_WATER_DAMP));
    {
        w8f fl = mat8_step(W8_MUL(W8_SUB(water, w8_k(WG_WATER_DAMP)),
                                w8_k(1.0f / (WG_WATER_MIN - WG_WATER_DAMP))));
        w8f under = mat8_step(W8_MUL(W8_SUB(water, w8_k(WG_WATER_MIN)),
                                   w8_k(1.0f / WG_WATER_MIN)));
        w8f carved = mat8_step(W8_MUL(W8_SUB(nsed, w8_k(MAT_CARVED)),
                                    w8_k(1.0f / (3.0f * MAT_CARVED))));
        mat8_rgb_t w = mat8_mix(c, mat8_rgb(m->silt), W8_MUL(under, W8_SUB(one, carved)));
        w = mat8_mix(w, mat8_rgb(m->gravel), W8_MUL(fl, carved));
        c = mat8_sel_rgb(when, w, c);
        flow = w8_sel(when, fl, zero);
    }

    /* the shore */
    when = W8_LT(above, w8_k(0.02f));
    {
        w8f beach = W8_MUL(
            W8_SUB(one, mat8_step(W8_MUL(
                            W8_SUB(W8_SUB(above, w8_k(0.006f)),
                                   W8_MUL(w8_k(0.004f), patch)),
                            w8_k(120.0f)))),
            mat8_step(W8_MUL(W8_SUB(ny, w8_k(0.6f)), w8_k(5.0f))));
        mat8_rgb_t bed = mat8_mix(mat8_rgb(m->sand), mat8_rgb(m->silt),
                           mat8_step(W8_MUL(w8_neg(above), w8_k(40.0f))));
        c = mat8_sel_rgb(when, mat8_mix(c, bed, beach), c);
        w8f line = W8_SUB(one, mat8_step(W8_MUL(above, w8_k(300.0f))));
        flow = w8_sel(when, w8_sel(W8_GT(flow, line), flow, line), flow);
    }

    /* snow */
    w8f line = W8_ADD(w8_k(0.62f), W8_MUL(w8_k(0.30f), mat8_load(g->n[2])));
    when = W8_GT(alt, W8_SUB(line, w8_k(0.05f)));
    w8f snow = w8_sel(
        when,
        W8_MUL(mat8_step(W8_ADD(W8_MUL(W8_SUB(alt, line), w8_k(8.0f)),
                              W8_MUL(w8_k(0.4f), grain))),
               mat8_step(W8_MUL(W8_SUB(W8_SUB(ny, w8_k(0.48f)),
                                     W8_MUL(w8_k(0.06f), grain)),
                              w8_k(4.0f)))),
        zero);
    c = mat8_sel_rgb(when, mat8_mix(c, mat8_rgb(m->snow), snow), c);

    /* wet ground darker, and the grain */
    w8f k = W8_MUL(
        W8_SUB(one, W8_MUL(W8_MUL(w8_k(0.4f), flow), W8_SUB(one, snow))),
        W8_ADD(one, W8_MUL(w8_k(0.07f), grain)));
    _mm256_storeu_ps(rgb[0], W8_MUL(c.r, k));
    _mm256_storeu_ps(rgb[1], W8_MUL(c.g, k));
    _mm256_storeu_ps(rgb[2], W8_MUL(c.b, k));
}
#endif
