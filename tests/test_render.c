/* test_render.c: the renderer: the winding rule (--no-cull changes no byte,
 * from above or below the horizon, water included), a watertight coverage
 * rule, materials from local values only, water by depth, angle and sun,
 * shadows, haze from the block whatever the camera looks at, a picture
 * that looks like land with water in it, the PNG and its parameters, and
 * the options' checks; a block without cracks from random
 * outside cameras; the water's own surface (its levels, the shore where
 * the ground meets it); the map (features where they are, north up, no
 * camera, --aa, letterboxing, its description); the memory a render takes,
 * and threads beyond the CPUs and the work. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "render/render.h"
#include "render/stats.h"
#include "test.h"

/* A small world with a lake below the sea level, rivers and snow. */
static const wg_world render_world = {.size = 96, .octaves = 5, .passes = 6,
                                      .steps = 80, .sea = 0.25f, .seed = 7};

/* Render 'o' of the test world; returns 0 and fills img. */
static int render_it(const wg_fields *f, const wg_render_opts *o,
                     wg_image *img, wg_render_stats *rs)
{
    char err[WG_ERR_LEN];
    if (wg_render(f, render_world.sea, o, img, rs, err) != 0) {
        fprintf(stderr, "    %s\n", err);
        return -1;
    }
    return 0;
}

WG_TEST(render_no_cull_is_byte_identical)
{
    /* The winding rule: cull and coverage follow one sign, the block is
     * closed, so drawing back faces too changes nothing the Z-buffer
     * keeps: from above, from grazing angles, close up (triangles clipped
     * at the near plane) and from below the horizon (looking up at the
     * floor and the skirts).  The world has water: the surface drawn is
     * the water's where there is some, so this covers it too. */
    static const wg_camera cams[] = {
        {215, 25, 9.5f, 45, 0.2f},  /* the default */
        {30, 70, 8, 45, 0.3f},      /* from high above */
        {300, 4, 7, 45, 0.4f},      /* grazing, the horizon in view */
        {120, -20, 9, 45, 0.5f},    /* below the horizon */
        {10, -60, 7, 60, 0.0f},     /* far below, looking up */
        {200, 35, 1.2f, 90, 1.3f},  /* close: the near plane clips */
        {45, 15, 40, 10, 0.3f},     /* far off through a long lens */
    };
    wg_fields f;
    CHECK(wg_make_world("scalar", &render_world, 0, &f) == 0);
    for (size_t i = 0; i < sizeof cams / sizeof cams[0]; i++) {
        wg_render_opts o = wg_render_defaults;
        o.width = 160, o.height = 120, o.cam = cams[i];
        wg_image a = {0}, b = {0};
        wg_render_stats ra, rb;
        o.cull = 1;
        CHECK(render_it(&f, &o, &a, &ra) == 0);
        o.cull = 0;
        CHECK(render_it(&f, &o, &b, &rb) == 0);
        CHECK(a.rgb && b.rgb && memcmp(a.rgb, b.rgb, 160 * 120 * 3) == 0,
              "camera %zu (elevation %g): --no-cull changed the picture", i,
              cams[i].elevation);
        /* Not vacuous: without the cull more triangles reached the
         * samples, and the Z-buffer threw them away. */
        CHECK(rb.drawn > ra.drawn, "camera %zu: %llu vs %llu drawn", i,
              (unsigned long long)rb.drawn, (unsigned long long)ra.drawn);
        wg_image_free(&a);
        wg_image_free(&b);
    }
    wg_fields_free(&f);
}

WG_TEST(render_wide_paths_draw_the_same_picture)
{
    /* The wide paths (eight triangles rasterised, eight rays met and eight
     * grounds shaded at once, in AVX2) give every sample what the
     * one-at-a-time code gives it: the pictures are the same to the byte,
     * from the cameras of the cull's test, at every --aa, with water, its
     * shores and the block's sides in view, and the triangles drawn are
     * counted alike. */
    wg_wide_set(1);
    if (!wg_wide()) {
        wg_skip("no AVX2 here (or WORLDGEN_WIDE=0): only the one path runs");
        return;
    }
    static const wg_camera cams[] = {
        {215, 25, 9.5f, 45, 0.2f}, {30, 70, 8, 45, 0.3f},
        {300, 4, 7, 45, 0.4f},     {120, -20, 9, 45, 0.5f},
        {200, 35, 1.2f, 90, 1.3f}, {45, 15, 40, 10, 0.3f},
        {100, 12, 3, 50, 0.1f},
    };
    wg_fields f;
    CHECK(wg_make_world("scalar", &render_world, 0, &f) == 0);
    for (size_t i = 0; i < sizeof cams / sizeof cams[0]; i++) {
        wg_render_opts o = wg_render_defaults;
        o.width = 200, o.height = 150, o.cam = cams[i];
        o.aa = 1 + (uint32_t)(i % 4);
        o.sun_azimuth = 40.0f + 50.0f * (float)i;
        wg_image a = {0}, b = {0};
        wg_render_stats ra, rb;
        wg_wide_set(1);
        CHECK(render_it(&f, &o, &a, &ra) == 0);
        wg_wide_set(0);
        CHECK(render_it(&f, &o, &b, &rb) == 0);
        CHECK(a.rgb && b.rgb && memcmp(a.rgb, b.rgb, 200 * 150 * 3) == 0,
              "camera %zu, --aa %u: the wide paths changed the picture", i,
              o.aa);
        CHECK(ra.drawn == rb.drawn, "camera %zu: %llu vs %llu drawn", i,
              (unsigned long long)ra.drawn, (unsigned long long)rb.drawn);
        wg_image_free(&a);
        wg_image_free(&b);
    }
    wg_fields_free(&f);
    /* From 1536 on, a sun nearer east or west than north or south takes
     * the sweep's banded path (shade.c), its bands of eight rows a vector
     * each: the light it leaves, seen in the picture, is the same too. */
    static const wg_world big = {.size = 1537, .octaves = 5, .passes = 2,
                                 .steps = 0, .sea = 0.25f, .seed = 7};
    CHECK(wg_make_world("openmp", &big, 0, &f) == 0);
    for (int i = 0; i < 2; i++) {
        wg_render_opts o = wg_render_defaults;
        o.width = 160, o.height = 120, o.aa = 1;
        o.sun_azimuth = i ? 100.0f : 290.0f;
        o.sun_elevation = 6.0f;
        wg_image a = {0}, b = {0};
        wg_render_stats ra, rb;
        wg_wide_set(1);
        char err[WG_ERR_LEN];
        CHECK(wg_render(&f, big.sea, &o, &a, &ra, err) == 0, "%s", err);
        wg_wide_set(0);
        CHECK(wg_render(&f, big.sea, &o, &b, &rb, err) == 0, "%s", err);
        CHECK(a.rgb && b.rgb && memcmp(a.rgb, b.rgb, 160 * 120 * 3) == 0,
              "--size 1537, sun at %g: the wide sweep changed the picture",
              (double)o.sun_azimuth);
        wg_image_free(&a);
        wg_image_free(&b);
    }
    wg_wide_set(1);
    wg_fields_free(&f);
}

#if WG_WIDE
/* A random float in [lo, hi) from state *s (xorshift). */
static float render_rand8(uint64_t *s, float lo, float hi)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return lo + (hi - lo) * (float)((double)(*s >> 11) / 9007199254740992.0);
}
#endif

WG_TEST(render_wide_materials_are_the_scalar_ones)
{
    /* wg_albedo8 and wg_relief8 against wg_albedo and wg_relief, lane by
     * lane, on 200 thousand grounds of every kind: shores and seabeds,
     * snow lines, deposits and scours, wet and dry, cliffs and flats,
     * under water or not, near and far (every relief octave shown, faded
     * or gone).  A rule the wide code computes for every lane and selects
     * must leave the others as the scalar code's skip does, to the bit. */
    wg_wide_set(1);
    if (!wg_wide()) {
        wg_skip("no AVX2 here (or WORLDGEN_WIDE=0): only the one path runs");
        return;
    }
#if WG_WIDE
    uint64_t st = 0x9E3779B97F4A7C15u;
    long differ = 0;
    for (int it = 0; it < 25000; it++) {
        wg_materials m;
        wg_materials_make(&m, it % 5 == 0 ? 0.6f : 0.25f);
        wg_ground8 g;
        wg_ground one[8];
        float foot[8], depth[8], n[3][8], rgb[3][8];
        for (int l = 0; l < 8; l++) {
            wg_ground *q = &one[l];
            q->x = render_rand8(&st, -3, 3), q->z = render_rand8(&st, -3, 3);
            q->h = it % 3 ? render_rand8(&st, 0, 1)
                          : m.sea + render_rand8(&st, -0.03f, 0.03f);
            q->water = it % 4 ? render_rand8(&st, 0, 0.003f) : 0.0f;
            q->sediment = render_rand8(&st, -0.06f, 0.06f);
            float a = render_rand8(&st, 0, 1), b = render_rand8(&st, -1, 1),
                  c = render_rand8(&st, -1, 1);
            float len = sqrtf(a * a + b * b + c * c);
            len = len > 0 ? len : 1;
            q->n[0] = b / len, q->n[1] = a / len, q->n[2] = c / len;
            if (it % 7 == 0)
                q->n[0] = 0, q->n[1] = 1, q->n[2] = 0;
            foot[l] = render_rand8(&st, 0, it % 5 ? 0.01f : 0.05f);
            depth[l] = it % 2 ? 0.0f : render_rand8(&st, 0, 0.004f);
            g.x[l] = q->x, g.z[l] = q->z, g.h[l] = q->h;
            g.water[l] = q->water, g.sediment[l] = q->sediment;
            for (int k = 0; k < 3; k++)
                g.n[k][l] = n[k][l] = q->n[k];
        }
        wg_albedo8(&m, &g, rgb);
        wg_relief8(&g, depth, foot, n);
        for (int l = 0; l < 8; l++) {
            wg_rgb c = wg_albedo(&m, &one[l]);
            float ns[3] = {one[l].n[0], one[l].n[1], one[l].n[2]};
            wg_relief(&one[l], depth[l], foot[l], ns);
            const float want[6] = {c.r, c.g, c.b, ns[0], ns[1], ns[2]};
            const float got[6] = {rgb[0][l], rgb[1][l], rgb[2][l],
                                  n[0][l],   n[1][l],   n[2][l]};
            if (memcmp(want, got, sizeof want) != 0 && differ++ < 3)
                CHECK(0, "ground %d.%d: albedo %.9g %.9g %.9g normal %.9g "
                         "%.9g %.9g, wide %.9g %.9g %.9g, %.9g %.9g %.9g",
                      it, l, want[0], want[1], want[2], want[3], want[4],
                      want[5], got[0], got[1], got[2], got[3], got[4],
                      got[5]);
        }
    }
    CHECK(differ == 0, "%ld grounds differ", differ);
#endif
}

/* Keys of a w x h sample target, all empty. */
static uint64_t *render_target(wg_target *t, uint32_t w, uint32_t h)
{
    t->keys = malloc((size_t)w * h * sizeof *t->keys);
    memset(t->keys, 0xff, (size_t)w * h * sizeof *t->keys);
    t->w = w, t->h = h, t->y0 = 0, t->y1 = h;
    return t->keys;
}

static wg_svert render_v(double x, double y)
{
    wg_svert v = {(int32_t)(x * (1 << WG_SUBPIXEL_BITS)),
                  (int32_t)(y * (1 << WG_SUBPIXEL_BITS)), 1.0f};
    return v;
}

WG_TEST(render_winding_front_faces_have_negative_area)
{
    /* Counter-clockwise as the camera sees it, on a screen whose y runs
     * down: (0,0) -> (0,8) -> (8,0) is a front face; its reverse is a back
     * face, culled, but drawn exactly the same without the cull. */
    wg_target t;
    render_target(&t, 16, 16);
    wg_svert a = render_v(0, 0), b = render_v(0, 8), c = render_v(8, 0);
    CHECK(wg_raster_triangle(&t, &a, &b, &c, 1, 1) == 1, "front face culled");
    uint64_t *front = malloc(16 * 16 * sizeof *front);
    memcpy(front, t.keys, 16 * 16 * sizeof *front);
    memset(t.keys, 0xff, 16 * 16 * sizeof *t.keys);
    CHECK(wg_raster_triangle(&t, &a, &c, &b, 1, 1) == 0, "back face drawn");
    int empty = 1;
    for (int i = 0; i < 256; i++)
        empty &= t.keys[i] == WG_KEY_EMPTY;
    CHECK(empty, "a culled triangle wrote samples");
    CHECK(wg_raster_triangle(&t, &a, &c, &b, 1, 0) == 1);
    int same = 1, covered = 0;
    for (int i = 0; i < 256; i++) {
        same &= wg_key_id(t.keys[i]) == wg_key_id(front[i]) &&
                (t.keys[i] == WG_KEY_EMPTY) == (front[i] == WG_KEY_EMPTY);
        covered += front[i] != WG_KEY_EMPTY;
    }
    CHECK(same, "the back face covers other samples than the front face");
    /* Samples (i + 0.5, j + 0.5) with i + j + 1 < 8 inside, and on the
     * diagonal edge exactly one side's: 28 + 8 of them halve the tie. */
    CHECK(covered >= 28 && covered <= 36, "covered %d", covered);
    /* A front face beats a back face at the same depth. */
    CHECK(wg_key_make(0.5f, 0, 9) < wg_key_make(0.5f, 1, 1));
    CHECK(wg_key_make(0.6f, 1, 9) < wg_key_make(0.5f, 0, 1), "nearer wins");
    free(front);
    free(t.keys);
}

WG_TEST(render_every_id_fits_the_key)
{
    /* The key keeps 35 bits of id: every triangle of the largest world,
     * the water's and its sides' included, has one of its own, and the
     * parts follow each other. */
    static const uint32_t sizes[] = {2, 3, 513, 65536};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint32_t n = sizes[i];
        uint64_t c = (uint64_t)(n - 1);
        CHECK(wg_block_surface(n) == 2 * c * c &&
              wg_block_skirts(n) == wg_block_surface(n) + 8 * c &&
              wg_block_triangles(n) == wg_block_skirts(n) + 4 * c &&
              wg_block_water(n) == wg_block_triangles(n) &&
              wg_block_water_sides(n) == wg_block_water(n) + 2 * c * c &&
              wg_block_all(n) == wg_block_water_sides(n) + 8 * c, "n %u", n);
        uint64_t last = wg_block_all(n) - 1;
        CHECK(wg_key_id(wg_key_make(0.5f, 1, last)) == last,
              "n %u: id %llu does not fit", n, (unsigned long long)last);
    }
}

WG_TEST(render_shared_edges_are_watertight)
{
    /* A quad cut along a diagonal with sub-sample vertices, at many
     * offsets: every sample inside is covered, none by both halves. */
    for (int k = 0; k < 64; k++) {
        double ox = 0.3 + k * 0.137, oy = 0.7 + k * 0.071;
        wg_svert a = render_v(ox, oy), b = render_v(ox + 9.3, oy + 1.1);
        wg_svert c = render_v(ox + 1.7, oy + 8.9), d = render_v(ox + 11.1, oy + 10.3);
        wg_target t1, t2;
        render_target(&t1, 24, 24);
        render_target(&t2, 24, 24);
        wg_raster_triangle(&t1, &a, &c, &b, 1, 0);
        wg_raster_triangle(&t2, &b, &c, &d, 2, 0);
        wg_target both;
        render_target(&both, 24, 24);
        wg_raster_triangle(&both, &a, &c, &b, 1, 0);
        wg_raster_triangle(&both, &b, &c, &d, 2, 0);
        int twice = 0, once = 0, all = 0;
        for (int i = 0; i < 24 * 24; i++) {
            int in1 = t1.keys[i] != WG_KEY_EMPTY, in2 = t2.keys[i] != WG_KEY_EMPTY;
            twice += in1 && in2;
            once += in1 != in2;
            all += both.keys[i] != WG_KEY_EMPTY;
        }
        CHECK(twice == 0, "offset %d: %d samples drawn by both halves", k, twice);
        CHECK(once == all, "offset %d: %d covered once, %d in all", k, once, all);
        CHECK(all > 60, "offset %d: only %d samples", k, all);
        free(t1.keys);
        free(t2.keys);
        free(both.keys);
    }
}

/* Ground at world position (x, z), height h, facing n (normalised here),
 * dry and neither eroded nor built up unless the caller says so. */
static wg_ground render_ground(float x, float z, float h, float nx, float ny,
                               float nz)
{
    float l = 1.0f / sqrtf(nx * nx + ny * ny + nz * nz);
    wg_ground g = {.x = x, .z = z, .h = h, .n = {nx * l, ny * l, nz * l}};
    return g;
}

/* Which of the materials c is, by the direction of its colour in linear
 * RGB (the grain noise scales a colour by a few percent and wet ground
 * darkens it, neither turns it): the nearest within 8 degrees, or -1 when
 * none is (an even blend of two). */
static int render_nearest(const wg_materials *m, wg_rgb c)
{
    const wg_rgb *all[] = {&m->sand, &m->silt, &m->soil, &m->gravel,
                           &m->meadow, &m->grass, &m->forest, &m->heath,
                           &m->rock, &m->snow};
    int best = -1;
    float bc = 0.99f, lc = sqrtf(c.r * c.r + c.g * c.g + c.b * c.b);
    for (int i = 0; i < 10; i++) {
        const wg_rgb *a = all[i];
        float la = sqrtf(a->r * a->r + a->g * a->g + a->b * a->b);
        float cs = (c.r * a->r + c.g * a->g + c.b * a->b) / (lc * la);
        if (cs > bc)
            bc = cs, best = i;
    }
    return best;
}

enum { M_SAND, M_SILT, M_SOIL, M_GRAVEL, M_MEADOW, M_GRASS, M_FOREST, M_HEATH,
       M_ROCK, M_SNOW };

static float render_lum(wg_rgb c)
{
    return 0.2126f * c.r + 0.7152f * c.g + 0.0722f * c.b;
}

WG_TEST(render_materials_from_local_values)
{
    /* Every material from the values at a point and the sea level alone,
     * by altitude over the sea (sea 0.25: altitude a is height
     * 0.25 + 0.75 a), checked at many positions, so the noise that moves
     * the boundaries cannot decide the answer. */
    wg_materials m;
    wg_materials_make(&m, 0.25f);
    int beach = 0, green = 0, rock = 0, snow_n = 0, snow_s = 0, cliff = 0;
    int fan = 0, bed = 0, seabed = 0, darker = 0, soil = 0, slope_clean = 0;
    int slope_sand = 0;
    const int tries = 50;
    for (int i = 0; i < tries; i++) {
        float x = -2.9f + 0.117f * (float)i, z = 1.7f - 0.071f * (float)i;
        /* Flat ground just above the sea: the beach. */
        wg_ground g = render_ground(x, z, 0.253f, 0, 1, 0);
        beach += render_nearest(&m, wg_albedo(&m, &g)) == M_SAND;
        /* Under the sea, deep: the seabed goes to silt. */
        g = render_ground(x, z, 0.15f, 0, 1, 0);
        g.water = 0.1f;
        seabed += render_nearest(&m, wg_albedo(&m, &g)) == M_SILT;
        /* Gentle lowland and hillside: grass, meadow or forest. */
        g = render_ground(x, z, 0.25f + 0.75f * 0.2f, 0.2f, 1, 0);
        int k = render_nearest(&m, wg_albedo(&m, &g));
        green += k == M_GRASS || k == M_MEADOW || k == M_FOREST;
        /* Steep, at a low, a middle and a high altitude: rock. */
        for (int a = 0; a < 3; a++) {
            g = render_ground(x, z, 0.3f + 0.25f * (float)a, 2.0f, 1, 0);
            rock += render_nearest(&m, wg_albedo(&m, &g)) == M_ROCK;
        }
        /* High (altitude 0.65), gently sloping (30 degrees): snow where
         * the slope faces north (its normal toward -Z), none where it
         * faces south; none on a cliff higher still. */
        g = render_ground(x, z, 0.25f + 0.75f * 0.65f, 0, 0.87f, -0.5f);
        snow_n += render_nearest(&m, wg_albedo(&m, &g)) == M_SNOW;
        g = render_ground(x, z, 0.25f + 0.75f * 0.65f, 0, 0.87f, 0.5f);
        snow_s += render_nearest(&m, wg_albedo(&m, &g)) == M_SNOW;
        g = render_ground(x, z, 0.25f + 0.75f * 0.9f, 0, 0.45f, -0.89f);
        cliff += render_nearest(&m, wg_albedo(&m, &g)) == M_ROCK;
        /* A thick deposit on lowland: sand; carved ground under a river:
         * gravel. */
        g = render_ground(x, z, 0.4f, 0, 1, 0);
        g.sediment = 0.06f;
        fan += render_nearest(&m, wg_albedo(&m, &g)) == M_SAND;
        g.sediment = -0.02f;
        g.water = 0.001f;
        bed += render_nearest(&m, wg_albedo(&m, &g)) == M_GRAVEL;
        /* A thin deposit tints level ground toward soil, but not a grassy
         * slope of 37 degrees (its hollows had been brown spots); a thick
         * one is sand on that slope too. */
        wg_ground flat = render_ground(x, z, 0.4f, 0, 1, 0), thin = flat;
        thin.sediment = 0.015f;
        soil += render_lum(wg_albedo(&m, &thin)) !=
                render_lum(wg_albedo(&m, &flat));
        wg_ground slope = render_ground(x, z, 0.4f, 0.6f, 0.8f, 0);
        thin = slope;
        thin.sediment = 0.015f;
        wg_rgb a = wg_albedo(&m, &slope), b = wg_albedo(&m, &thin);
        slope_clean += a.r == b.r && a.g == b.g && a.b == b.b;
        thin.sediment = 0.09f;
        slope_sand += render_nearest(&m, wg_albedo(&m, &thin)) == M_SAND;
        /* Wet ground is darker than the same ground dry. */
        wg_ground dry = render_ground(x, z, 0.4f, 0, 1, 0), wet = dry;
        wet.water = 0.0009f;
        darker += render_lum(wg_albedo(&m, &wet)) <
                  0.8f * render_lum(wg_albedo(&m, &dry));
    }
    CHECK(beach == tries, "beach: %d of %d sand", beach, tries);
    CHECK(seabed == tries, "seabed: %d of %d silt", seabed, tries);
    CHECK(green == tries, "lowland: %d of %d green", green, tries);
    CHECK(rock == 3 * tries, "steep: %d of %d rock", rock, 3 * tries);
    CHECK(snow_n == tries && snow_s == 0, "snow: %d north, %d south of %d",
          snow_n, snow_s, tries);
    CHECK(cliff == tries, "a high cliff: %d of %d rock", cliff, tries);
    CHECK(fan == tries, "a thick deposit: %d of %d sand", fan, tries);
    CHECK(bed == tries, "a riverbed: %d of %d gravel", bed, tries);
    CHECK(darker == tries, "wet ground: %d of %d darker", darker, tries);
    CHECK(soil == tries && slope_clean == tries && slope_sand == tries,
          "a thin deposit: %d of %d tinted on level ground, %d untinted on a "
          "slope; a thick one %d sand on a slope", soil, tries, slope_clean,
          slope_sand);

    /* The sea level moves the land with it: ground just above the sea is
     * beach, the same height with the sea far below is not. */
    wg_materials low;
    wg_materials_make(&low, 0.05f);
    wg_ground g = render_ground(0.3f, 0.2f, 0.253f, 0, 1, 0);
    CHECK(render_nearest(&low, wg_albedo(&low, &g)) != M_SAND,
          "0.253 is still beach with the sea at 0.05");
}

/* The snow on a crest that faces the sun does not end in a band of one
 * width along it: a long ridge, level along x at altitude 0.8 (sea 0.25),
 * rounded at its crest and falling to the south at 30 degrees, has snow on
 * its crest that reaches down the sunny face further here and less far
 * there.  Its lower edge, measured from the crest at 200 places along the
 * ridge, had been at one distance with a spread (standard deviation) of 7%
 * of it, which drew a white rim of one width along every crest seen from
 * the south; it is 26% now. */
WG_TEST(render_snow_edge_on_a_sunny_crest_varies)
{
    wg_materials m;
    wg_materials_make(&m, 0.25f);
    const float top = 0.25f + 0.75f * 0.8f, a = 5.0f;
    const float bend = 0.57735f / (2.0f * a); /* where the face is 30 deg */
    double sum = 0, sum2 = 0;
    const int places = 200;
    for (int i = 0; i < places; i++) {
        float x = -2.0f + 4.0f * (float)i / (float)places, edge = 0.3f;
        for (float z = 0.0f; z < 0.3f; z += 0.0005f) {
            float slope = z < bend ? 2.0f * a * z : 0.57735f;
            float h = z < bend ? top - a * z * z
                               : top - a * bend * bend - 0.57735f * (z - bend);
            wg_ground g = render_ground(x, z, h, 0, 1, slope);
            if (render_nearest(&m, wg_albedo(&m, &g)) != M_SNOW) {
                edge = z;
                break;
            }
        }
        sum += edge;
        sum2 += (double)edge * edge;
    }
    double mean = sum / places, sd = sqrt(sum2 / places - mean * mean);
    CHECK(mean > 0.005 && mean < 0.2, "no snow on the crest: edge %.4f", mean);
    CHECK(sd > 0.18 * mean, "the snow's edge: %.4f from the crest, spread "
          "%.4f: a band of one width", mean, sd);
}

WG_TEST(render_materials_have_noise_not_contours)
{
    /* Along a contour line (one height, flat ground) across the world the
     * colour varies, by a little: the boundaries move with the noise of the
     * world position, so no ring of one colour follows the contour.  At one
     * position the colour is always the same. */
    wg_materials m;
    wg_materials_make(&m, 0.25f);
    /* The grass-forest boundary (altitude 0.1 to 0.18) and the tree line
     * (0.40 to 0.48). */
    const float alts[2] = {0.14f, 0.44f};
    for (int a = 0; a < 2; a++) {
        float lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < 400; i++) {
            float x = -3.0f + 6.0f * (float)i / 399.0f;
            wg_ground g = render_ground(x, 0.37f, 0.25f + 0.75f * alts[a], 0, 1, 0);
            float l = render_lum(wg_albedo(&m, &g));
            lo = l < lo ? l : lo;
            hi = l > hi ? l : hi;
        }
        CHECK(hi > 1.3f * lo, "altitude %.2f: one colour along the contour "
              "(%g..%g)", alts[a], lo, hi);
    }
    /* The grain alone, where no boundary is near, stays small. */
    float lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < 400; i++) {
        float x = -3.0f + 6.0f * (float)i / 399.0f;
        wg_ground g = render_ground(x, -1.1f, 0.25f + 0.75f * 0.9f, 0, 0.95f, -0.3f);
        float l = render_lum(wg_albedo(&m, &g));
        lo = l < lo ? l : lo;
        hi = l > hi ? l : hi;
    }
    CHECK(hi < 1.25f * lo, "snow varies too much: %g..%g", lo, hi);
    wg_ground g = render_ground(1.234f, -0.5f, 0.4f, 0.1f, 1, 0.2f);
    wg_rgb a = wg_albedo(&m, &g), b = wg_albedo(&m, &g);
    CHECK(a.r == b.r && a.g == b.g && a.b == b.b);
    /* The noise is of the world position: in [-1, 1], smooth, and not
     * constant. */
    float nlo = INFINITY, nhi = -INFINITY, jump = 0.0f;
    float prev = wg_noise(-7.0f, 3.3f);
    for (int i = 1; i < 2000; i++) {
        float v = wg_noise(0.01f * (float)i - 7.0f, 3.3f);
        nlo = v < nlo ? v : nlo;
        nhi = v > nhi ? v : nhi;
        jump = fabsf(v - prev) > jump ? fabsf(v - prev) : jump;
        prev = v;
    }
    CHECK(nlo >= -1.0f && nhi <= 1.0f && nhi - nlo > 1.0f && jump < 0.05f,
          "noise %g..%g, largest step %g", nlo, nhi, jump);
}

WG_TEST(render_water_by_depth_angle_and_sun)
{
    wg_palette p;
    wg_palette_make(&p, 0.25f, 90, 20); /* the sun in the east, low */
    const wg_rgb bed = {0.5f, 0.42f, 0.25f}; /* lit sand */
    const float up[3] = {0, 1, 0}, down[3] = {0, -1, 0};
    /* Seen from above: shallow water shows its bed, deeper water is
     * turquoise (blue and green over red), deep water dark blue. */
    wg_rgb shallow = wg_water(&p, bed, 0.001f, down, up, 1.0f, NULL);
    wg_rgb mid = wg_water(&p, bed, 0.02f, down, up, 1.0f, NULL);
    wg_rgb deep = wg_water(&p, bed, 0.2f, down, up, 1.0f, NULL);
    CHECK(shallow.r > 0.5f * bed.r && shallow.r > mid.r,
          "shallow water hides its bed: %g %g %g", shallow.r, shallow.g, shallow.b);
    CHECK(mid.g > 2.0f * mid.r && mid.b > 2.0f * mid.r,
          "0.02 deep is not turquoise: %g %g %g", mid.r, mid.g, mid.b);
    CHECK(deep.b > deep.g && deep.g > deep.r && render_lum(deep) < 0.3f * render_lum(mid),
          "deep water is not dark blue: %g %g %g", deep.r, deep.g, deep.b);
    /* Fresnel: deep water seen at a grazing angle mirrors the sky, seen
     * from above it does not. */
    float graze[3] = {0, -0.05f, -1};
    float l = 1.0f / sqrtf(graze[1] * graze[1] + graze[2] * graze[2]);
    graze[1] *= l, graze[2] *= l;
    wg_rgb far = wg_water(&p, bed, 0.2f, graze, up, 1.0f, NULL);
    const float hz[3] = {0, 0.05f, -1};
    wg_rgb sky = wg_sky(&p, hz);
    CHECK(render_lum(far) > 0.6f * render_lum(sky) &&
          render_lum(far) > 3.0f * render_lum(deep),
          "no reflection at a grazing angle: %g, sky %g", render_lum(far),
          render_lum(sky));
    /* The glint: looking toward the sun's reflection the water shines far
     * more than looking the other way at the same angle, and not in a
     * shadow. */
    float toward[3] = {p.sun[0], -p.sun[1], p.sun[2]};
    float away[3] = {-p.sun[0], -p.sun[1], -p.sun[2]};
    wg_rgb glint = wg_water(&p, bed, 0.2f, toward, up, 1.0f, NULL);
    wg_rgb other = wg_water(&p, bed, 0.2f, away, up, 1.0f, NULL);
    wg_rgb shadow = wg_water(&p, bed, 0.2f, toward, up, 0.0f, NULL);
    CHECK(render_lum(glint) > 3.0f * render_lum(other), "no glint: %g vs %g",
          render_lum(glint), render_lum(other));
    CHECK(render_lum(shadow) < 0.5f * render_lum(glint), "a glint in shadow");
}

WG_TEST(render_water_in_shadow_mirrors_no_sun)
{
    /* Water in the shadow of a ridge, seen along the mirror of the sun:
     * the ridge hides the sun's disc from the water as it hides its light,
     * so the water is as dark there as 2 degrees beside it (the sky's
     * halo changes little over 2 degrees; the disc is half a degree
     * across).  The disc had been mirrored whole, 6.4 times the water's
     * luminance around it at this angle, where its glint was put out. */
    wg_palette p;
    wg_palette_make(&p, 0.25f, 290, 20);
    const wg_rgb bed = {0.05f, 0.06f, 0.04f};
    const float up[3] = {0, 1, 0};
    float toward[3] = {p.sun[0], -p.sun[1], p.sun[2]};
    /* The same view turned 2 degrees about the vertical. */
    const float a = 2.0f * 3.14159265f / 180.0f;
    float beside[3] = {toward[0] * cosf(a) - toward[2] * sinf(a), toward[1],
                       toward[0] * sinf(a) + toward[2] * cosf(a)};
    wg_rgb at = wg_water(&p, bed, 0.05f, toward, up, 0.0f, NULL);
    wg_rgb off = wg_water(&p, bed, 0.05f, beside, up, 0.0f, NULL);
    CHECK(render_lum(at) < 1.05f * render_lum(off),
          "the sun's disc in the water of a shadow: %g against %g beside it",
          render_lum(at), render_lum(off));
    /* Half in the penumbra, half the disc; in the sun, all of it. */
    wg_rgb half = wg_water(&p, bed, 0.05f, toward, up, 0.5f, NULL);
    wg_rgb lit = wg_water(&p, bed, 0.05f, toward, up, 1.0f, NULL);
    CHECK(render_lum(half) > 1.5f * render_lum(off) &&
          render_lum(lit) > 1.5f * render_lum(half),
          "the disc does not follow the light: %g, %g, %g", render_lum(off),
          render_lum(half), render_lum(lit));
}

/* The glint of the view d (from the eye) on level water: its light less
 * that of the same view with the sun put out. */
static float render_glint(const wg_palette *p, const float d[3])
{
    const wg_rgb bed = {0.05f, 0.06f, 0.04f};
    const float up[3] = {0, 1, 0};
    return render_lum(wg_water(p, bed, 0.05f, d, up, 1.0f, NULL)) -
           render_lum(wg_water(p, bed, 0.05f, d, up, 0.0f, NULL));
}

/* The view from the eye down to level water at depression 'el' degrees
 * and bearing 'az' degrees from the sun's. */
static void render_view_toward(const wg_palette *p, float el, float az,
                               float d[3])
{
    float hl = sqrtf(p->sun[0] * p->sun[0] + p->sun[2] * p->sun[2]);
    float hx = p->sun[0] / hl, hz = p->sun[2] / hl;
    const float rad = 3.14159265f / 180.0f;
    float c = cosf(az * rad), s = sinf(az * rad);
    d[0] = cosf(el * rad) * (hx * c - hz * s);
    d[1] = -sinf(el * rad);
    d[2] = cosf(el * rad) * (hx * s + hz * c);
}

/* The sun's glint on water is a path drawn out toward the eye, as waves
 * spread it (the half vector between the eye and the sun as their
 * normal), with a small hot core: under a 20 degree sun, 3 degrees off the
 * mirror toward the eye keeps over twice the glint of 3 degrees aside;
 * under a 45 degree sun 6 degrees aside has under a tenth of the peak.  The
 * mirror direction's round lobe it had been kept the same 3 degrees either
 * way and a quarter of the peak at 6: a camera facing the sun over the sea
 * saw a white disc a third of the picture wide. */
WG_TEST(render_water_glint_is_a_path_toward_the_eye)
{
    wg_palette p;
    float d[3];
    wg_palette_make(&p, 0.25f, 290, 20);
    render_view_toward(&p, 23.0f, 0.0f, d);
    float along = render_glint(&p, d);
    render_view_toward(&p, 20.0f, 3.0f, d);
    float aside = render_glint(&p, d);
    CHECK(along > 2.0f * aside && aside > 0.0f,
          "the glint 3 degrees toward the eye %g, aside %g", along, aside);
    wg_palette_make(&p, 0.25f, 290, 45);
    render_view_toward(&p, 45.0f, 0.0f, d);
    float peak = render_glint(&p, d);
    render_view_toward(&p, 45.0f, 6.0f, d);
    float off = render_glint(&p, d);
    CHECK(peak > 1.0f && off < 0.1f * peak,
          "the glint's peak %g, 6 degrees aside %g", peak, off);
}

WG_TEST(render_water_shown_sea_flat_rivers_whole)
{
    /* The sea is drawn flat at its level, whatever the field's last
     * sediment did to its depth. */
    wg_fields f;
    CHECK(wg_make_world("scalar", &render_world, 0, &f) == 0);
    float sea = render_world.sea, worst = 0.0f;
    size_t under = 0;
    for (uint32_t y = 0; f.height && y < f.n; y++)
        for (uint32_t x = 0; x < f.n; x++) {
            float h = f.height[(size_t)y * f.n + x];
            if (h >= sea)
                continue;
            float d = fabsf(h + wg_water_shown(&f, sea, x, y) - sea);
            worst = d > worst ? d : worst;
            under++;
        }
    CHECK(under > 100 && worst <= 1e-7f, "%zu vertices under the sea, the "
          "surface up to %g off the sea level", under, worst);
    wg_fields_free(&f);

    /* A river a cell wide left dotted (every other vertex wet, on flat
     * ground) is shown whole; its banks stay dry, and so does a single wet
     * vertex's neighbourhood; a ridge between two seas stays dry. */
    CHECK(wg_fields_alloc(&f, 9) == 0);
    for (size_t k = 0; k < wg_cells(9); k++)
        f.height[k] = 0.5f, f.water[k] = 0.0f;
    for (uint32_t x = 0; x < 9; x += 2)
        f.water[4 * 9 + x] = 0.004f;     /* row 4: wet, dry, wet, ... */
    f.water[1 * 9 + 1] = 0.004f;         /* a lone puddle */
    for (uint32_t x = 1; x < 8; x++) {
        float d = wg_water_shown(&f, 0.25f, x, 4);
        CHECK(d > 0.0039f && d < 0.0041f, "river at %u: %g", x, d);
        CHECK(wg_water_shown(&f, 0.25f, x, 3) == 0.0f &&
              wg_water_shown(&f, 0.25f, x, 5) == 0.0f, "a bank at %u is wet", x);
    }
    CHECK(wg_water_shown(&f, 0.25f, 2, 1) == 0.0f &&
          wg_water_shown(&f, 0.25f, 2, 2) == 0.0f, "the puddle spread");
    for (uint32_t y = 0; y < 9; y++) {
        f.height[y * 9 + 6] = 0.1f, f.water[y * 9 + 6] = 0.15f; /* sea */
        f.height[y * 9 + 8] = 0.1f, f.water[y * 9 + 8] = 0.15f;
        f.height[y * 9 + 7] = 0.3f, f.water[y * 9 + 7] = 0.0f;  /* ridge */
    }
    CHECK(wg_water_shown(&f, 0.25f, 7, 6) == 0.0f, "the ridge is flooded: %g",
          wg_water_shown(&f, 0.25f, 7, 6));
    wg_fields_free(&f);
}

WG_TEST(render_water_tops_are_the_water_shown)
{
    /* wg_water_tops, the rows the renderer draws from, is height +
     * wg_water_shown to the bit, for any rows: a world wider than its
     * chunks of columns (256), with a river one vertex wide and dotted
     * (every other vertex wet) laid across a chunk's edge and the border,
     * made in one call and in two. */
    wg_world w = render_world;
    w.size = 300;
    wg_fields f;
    CHECK(wg_make_world("openmp", &w, 0, &f) == 0);
    const uint32_t n = f.n;
    const float sea = w.sea;
    for (uint32_t x = 200; x < n; x += 2) {
        f.height[40 * (size_t)n + x] = 0.6f;
        f.height[40 * (size_t)n + x + 1] = 0.6f;
        f.water[40 * (size_t)n + x] = 0.004f;
    }
    float *one = malloc(wg_cells(n) * sizeof *one);
    float *two = malloc(wg_cells(n) * sizeof *two);
    CHECK(one && two);
    wg_water_tops(&f, sea, 0, n, one);
    wg_water_tops(&f, sea, 0, 41, two);
    wg_water_tops(&f, sea, 41, n, two);
    size_t wrong = 0, filled = 0;
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            size_t k = (size_t)y * n + x;
            float want = f.height[k] + wg_water_shown(&f, sea, x, y);
            wrong += memcmp(&one[k], &want, sizeof want) != 0 ||
                     memcmp(&two[k], &want, sizeof want) != 0;
            filled += f.height[k] >= sea && f.water[k] <= WG_WATER_MIN &&
                      want > f.height[k];
        }
    CHECK(wrong == 0, "%zu of %zu vertices differ from wg_water_shown", wrong,
          wg_cells(n));
    CHECK(filled >= 40, "only %zu dry vertices between wet ones", filled);
    free(one);
    free(two);
    wg_fields_free(&f);
}

WG_TEST(render_light_low_sun_and_sky_fill)
{
    wg_palette p;
    wg_palette_make(&p, 0.25f, 90, 20); /* the sun in the east, low */
    wg_rgb grey = {0.5f, 0.5f, 0.5f};
    const float up[3] = {0, 1, 0}, east[3] = {0.7071f, 0.7071f, 0};
    const float west[3] = {-0.7071f, 0.7071f, 0};
    wg_rgb flat = wg_light(&p, grey, up, 1.0f);
    wg_rgb sunny = wg_light(&p, grey, east, 1.0f);
    wg_rgb shade = wg_light(&p, grey, west, 1.0f);
    /* A low sun: the slope facing it is far brighter than flat ground,
     * and the one facing away gets only the sky's cool fill. */
    CHECK(sunny.g > 1.5f * flat.g, "%g vs %g", sunny.g, flat.g);
    CHECK(shade.g > 0.0f && shade.g < 0.3f * flat.g);
    CHECK(shade.b > shade.r, "shadow is not blue: %g %g", shade.r, shade.b);
    wg_rgb shadowed = wg_light(&p, grey, east, 0.0f);
    CHECK(shadowed.r < 0.2f * sunny.r, "cast shadow does not darken");
    /* The sky: deep overhead, pale at the horizon, bright at the sun. */
    const float zen[3] = {0, 1, 0}, hor[3] = {0, 0.01f, -1};
    wg_rgb z = wg_sky(&p, zen), h = wg_sky(&p, hor), s = wg_sky(&p, p.sun);
    CHECK(h.r + h.g + h.b > z.r + z.g + z.b + 0.3f);
    CHECK(z.b > z.r && s.r > h.r, "sky %g %g %g", z.b, z.r, s.r);
}

/* A sun below the horizon lights no face directly (a west face had stayed
 * sunlit beside dark land), and the sky dims through twilight; from half a
 * degree up the light is the day's, unchanged. */
WG_TEST(render_light_sun_below_the_horizon)
{
    const float west[3] = {-1, 0, 0}, zen[3] = {0, 1, 0};
    wg_rgb grey = {0.5f, 0.5f, 0.5f};
    wg_palette day, dusk, night, dawn;
    wg_palette_make(&day, 0.25f, 270, 20);
    wg_palette_make(&dawn, 0.25f, 270, 0.5f);
    wg_palette_make(&dusk, 0.25f, 270, -3);
    wg_palette_make(&night, 0.25f, 270, -20);
    CHECK(dawn.sun_light == 1.0f && dawn.sky_light == 1.0f &&
          day.sun_light == 1.0f && day.sky_light == 1.0f);
    /* The west face, facing the sun's bearing: direct sun by day, only the
     * (dimmed) sky's fill at dusk. */
    wg_rgb lit = wg_light(&day, grey, west, 1.0f);
    wg_rgb fill = wg_light(&day, grey, west, 0.0f);
    wg_rgb set = wg_light(&dusk, grey, west, 1.0f);
    CHECK(lit.r > 2.0f * fill.r, "%g %g", lit.r, fill.r);
    CHECK(set.r <= fill.r && set.r > 0.0f, "dusk %g, the day's fill %g",
          set.r, fill.r);
    wg_rgb z_day = wg_sky(&day, zen), z_dusk = wg_sky(&dusk, zen),
           z_night = wg_sky(&night, zen);
    CHECK(z_dusk.b < z_day.b && z_night.b < 0.2f * z_day.b && z_night.b > 0,
          "zenith %g %g %g", z_day.b, z_dusk.b, z_night.b);
}

/* Through twilight the sky turns blue and at night deep blue: dimmed
 * alone, the warm low-sun horizon had made every night an overcast grey
 * (the horizon's blue 0.94 of its red), lighter than the land. */
WG_TEST(render_night_sky_is_deep_blue)
{
    const float hor[3] = {0.0f, 0.02f, -1.0f}, zen[3] = {0, 1, 0};
    wg_palette dusk, blue, night, deep;
    wg_palette_make(&dusk, 0.25f, 90, -0.5f);
    wg_palette_make(&blue, 0.25f, 90, -4); /* away from the sun: north */
    wg_palette_make(&night, 0.25f, 90, -12);
    wg_palette_make(&deep, 0.25f, 90, -60);
    wg_rgb h0 = wg_sky(&dusk, hor), h4 = wg_sky(&blue, hor),
           h12 = wg_sky(&night, hor), h60 = wg_sky(&deep, hor),
           z60 = wg_sky(&deep, zen);
    CHECK(h4.b / h4.r > 1.3f * (h0.b / h0.r),
          "the blue hour's horizon %g %g %g, at sunset %g %g %g", h4.r, h4.g,
          h4.b, h0.r, h0.g, h0.b);
    CHECK(h60.b > 2.0f * h60.r && z60.b > 3.0f * z60.r,
          "the night's horizon %g %g %g, zenith %g %g %g", h60.r, h60.g,
          h60.b, z60.r, z60.g, z60.b);
    CHECK(h12.r == h60.r && h12.b == h60.b, "the night from 12 degrees down: "
          "%g %g, %g %g", h12.r, h12.b, h60.r, h60.b);
    CHECK(h60.r + h60.g + h60.b < 0.1f * (h4.r + h4.g + h4.b) + 0.05f,
          "the night's horizon %g %g %g against the blue hour's %g %g %g",
          h60.r, h60.g, h60.b, h4.r, h4.g, h4.b);
}

WG_TEST(render_shadow_sweep_behind_a_ridge)
{
    /* Flat ground with a wall one unit tall down the middle (x = 32 of 65,
     * S = 6/64), the sun low in the east: the ground west of the wall is
     * in shadow for 1/tan(20 deg) = 2.75 units (29 cells), east of it lit. */
    uint32_t n = 65;
    float *h = calloc(wg_cells(n), sizeof *h);
    uint8_t *lit = malloc(wg_cells(n));
    for (uint32_t y = 0; y < n; y++)
        h[y * n + 32] = 1.0f;
    wg_palette p;
    for (int sweep = 0; sweep < 2; sweep++) {
        /* Due east, and east by a little north (the sweep interpolates). */
        wg_palette_make(&p, 0.25f, sweep ? 80.0f : 90.0f, 20);
        CHECK(wg_shadow_sweep(&p, h, n, lit) == 0);
        uint32_t y = 40;
        /* The sweep keeps the clearance; the light is wg_sunlit's. */
        float l[65];
        for (uint32_t x = 0; x < n; x++)
            l[x] = wg_sunlit(lit[y * n + x]);
        CHECK(l[40] == 1.0f && l[64] == 1.0f, "east is lit: %g %g", l[40],
              l[64]);
        CHECK(l[31] == 0.0f && l[20] == 0.0f && l[8] < 0.25f,
              "behind the wall: %g %g %g", l[31], l[20], l[8]);
        CHECK(l[0] > 0.75f, "beyond the shadow: %g", l[0]);
        /* Interpolated, the edge falls between the vertices. */
        uint32_t edge = 1;
        while (edge < 31 && l[edge] > 0.0f)
            edge++;
        float mid = 0.5f * ((float)lit[y * n + edge - 1] + lit[y * n + edge]);
        CHECK(wg_sunlit(mid) > 0.0f || l[edge - 1] < 0.5f,
              "the clearance interpolates: %g %g", l[edge - 1], l[edge]);
    }
    wg_palette_make(&p, 0.25f, 90, -5); /* night */
    CHECK(wg_shadow_sweep(&p, h, n, lit) == 0 && wg_sunlit(lit[100]) == 0.0f);
    free(h);
    free(lit);
}

/* Pixels of rows [y0, y1) and columns [x0, x1) that are clearly blue. */
static int render_blue(const wg_image *img, uint32_t y0, uint32_t y1,
                       uint32_t x0, uint32_t x1)
{
    int blue = 0;
    for (uint32_t y = y0; y < y1; y++)
        for (uint32_t x = x0; x < x1; x++) {
            const uint8_t *q = img->rgb + ((size_t)y * img->w + x) * 3;
            blue += q[2] > q[0] + 30 && q[2] > q[1] + 8;
        }
    return blue;
}

WG_TEST(render_picture_is_a_landscape)
{
    wg_fields f;
    CHECK(wg_make_world("scalar", &render_world, 0, &f) == 0);
    wg_render_opts o = wg_render_defaults;
    o.width = 200, o.height = 150;
    wg_image img = {0};
    wg_render_stats rs;
    CHECK(render_it(&f, &o, &img, &rs) == 0);
    if (!img.rgb) {
        wg_fields_free(&f);
        return;
    }
    const uint8_t *px = img.rgb;
    /* The top rows are sky: blue over red, and not black. */
    for (uint32_t x = 0; x < img.w; x += 7) {
        const uint8_t *q = px + x * 3;
        CHECK(q[2] > q[0] && q[2] > 100, "(%u, 0) = %d %d %d", x, q[0], q[1], q[2]);
    }
    /* The sky changes toward the horizon: not one flat colour. */
    const uint8_t *top = px + (100 * 3), *lower = px + (30 * img.w + 100) * 3;
    CHECK(abs(top[0] - lower[0]) + abs(top[1] - lower[1]) + abs(top[2] - lower[2]) > 6,
          "flat sky: %d %d %d / %d %d %d", top[0], top[1], top[2], lower[0],
          lower[1], lower[2]);
    /* The middle is ground, and it varies: light, shade, materials. */
    double sum = 0, sum2 = 0;
    int green = 0, n = 0;
    for (uint32_t y = 55; y < 95; y++)
        for (uint32_t x = 60; x < 140; x++) {
            const uint8_t *q = px + (y * img.w + x) * 3;
            double l = 0.3 * q[0] + 0.59 * q[1] + 0.11 * q[2];
            sum += l, sum2 += l * l, n++;
            green += q[1] > q[0] && q[1] > q[2];
        }
    double mean = sum / n, var = sum2 / n - mean * mean;
    CHECK(var > 200.0, "the ground is flat: variance %g", var);
    CHECK(green > n / 20, "no grass or forest: %d of %d", green, n);
    CHECK(rs.drawn > 0 && rs.drawn < rs.triangles);

    /* Water: its lake and rivers are blue among the ground (the sky is
     * not in this box), and they are blue because of the water: the same
     * ground with the water field taken away and no sea has none. */
    int blue = render_blue(&img, 60, 100, 60, 140);
    CHECK(blue > 100, "no water: %d blue pixels", blue);
    wg_image_free(&img);
    wg_fields dry = f;
    char err[WG_ERR_LEN];
    dry.water = calloc(wg_cells(f.n), sizeof *dry.water);
    CHECK(dry.water && wg_render(&dry, 0.0f, &o, &img, &rs, err) == 0);
    if (img.rgb) {
        int left = render_blue(&img, 60, 100, 60, 140);
        CHECK(left < blue / 10, "%d blue pixels without water (%d with)", left,
              blue);
    }
    free(dry.water);
    wg_image_free(&img);

    /* Any number of threads makes the same picture. */
    wg_image a = {0}, b = {0};
    o.threads = 1;
    CHECK(render_it(&f, &o, &a, &rs) == 0);
    o.threads = 3;
    CHECK(render_it(&f, &o, &b, &rs) == 0);
    CHECK(a.rgb && b.rgb && memcmp(a.rgb, b.rgb, (size_t)200 * 150 * 3) == 0);
    wg_image_free(&a);
    wg_image_free(&b);
    wg_fields_free(&f);
}

WG_TEST(render_png_records_its_parameters)
{
    char path[300], text[2048];
    snprintf(path, sizeof path, "%s/pic.png", wg_tmpdir());
    const char *argv[] = {"--size", "48", "--seed", "99", "--erosion", "3",
                          "--out", path, "--width", "120", "--height", "90",
                          "--aa", "3", "--azimuth", "12.5", "--sun-elevation",
                          "33", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 0, "%s", c.err);
    /* The table's render block. */
    CHECK(strstr(c.out, "render  120x90 pixels, 3x3 samples") &&
          strstr(c.out, "rasterise") && strstr(c.out, "shade") &&
          strstr(c.out, "png"), "%s", c.out);
    wg_cli_free(&c);
    uint32_t w = 0, h = 0;
    uint8_t *px = wg_read_png(path, 8, 3, &w, &h, text, sizeof text);
    CHECK(px && w == 120 && h == 90, "%ux%u", w, h);
    CHECK(strstr(text, "Software=worldgen "), "%s", text);
    static const char *const want[] = {
        "--size 48", "--seed 99", "--octaves 6", "--erosion 3", "--width 120",
        "--height 90", "--aa 3", "--azimuth 12.5", "--elevation 25",
        "--distance 9.5", "--fov 45", "--look 0.2", "--sun-azimuth 290",
        "--sun-elevation 33"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(strstr(text, want[i]), "no '%s' in %s", want[i], text);
    free(px);
}

WG_TEST(render_out_dash_is_standard_output)
{
    const char *argv[] = {"--size", "32", "--out", "-", "--width", "64",
                          "--height", "48", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 0, "%s", c.err);
    CHECK(c.out_len > 8 && memcmp(c.out, "\x89PNG\r\n\x1a\n", 8) == 0,
          "stdout is not a PNG");
    /* The tables moved to stderr, out of the picture's way. */
    CHECK(strstr(c.err, "rasterise") && strstr(c.err, "(standard output)"),
          "%s", c.err);
    wg_cli_free(&c);
}

WG_TEST(render_default_run_writes_world_png)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd %s && mkdir -p def none && cd def && %s/worldgen --size 24 -q && "
             "ls && cd ../none && %s/worldgen --size 24 -q --no-image && ls",
             wg_tmpdir(), wg_srcdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && strcmp(c.out, "world.png\n") == 0,
          "status %d, files: '%s' %s", c.status, c.out, c.err);
    wg_cli_free(&c);
    char path[300], text[1024];
    snprintf(path, sizeof path, "%s/def/world.png", wg_tmpdir());
    uint32_t w = 0, h = 0;
    uint8_t *px = wg_read_png(path, 8, 3, &w, &h, text, sizeof text);
    CHECK(px && w == 800 && h == 600, "%ux%u", w, h);
    free(px);
}

WG_TEST(render_unwritable_out_fails_and_leaves_nothing)
{
    const char *argv[] = {"--size", "24", "-q", "--out", "no-such-folder/x.png", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 1, "status %d", c.status);
    CHECK(strstr(c.err, "--out: cannot write 'no-such-folder/x.png'"), "%s", c.err);
    wg_cli_free(&c);

    /* A full disk: the write fails after the file was opened. */
    const char *full[] = {"--size", "24", "-q", "--out", "/dev/full", NULL};
    c = wg_cli_run(full);
    CHECK(c.status == 1 && strstr(c.err, "--out: cannot write '/dev/full'"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);

    /* A folder in the way of the file's name: nothing left in its folder. */
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd %s && mkdir -p un/x.png && %s/worldgen --size 24 -q "
             "--out un/x.png; echo \"status $?\"; ls -A un/x.png; ls -A un",
             wg_tmpdir(), wg_srcdir());
    c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "status 1\nx.png\n") && !strstr(c.out, "tmp"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(render_bad_values_are_usage_errors)
{
    static const struct {
        const char *opt, *val, *msg;
    } cases[] = {
        {"--width", "15", "--width: '15' is out of range (valid: 16..16384)"},
        {"--width", "abc", "--width: 'abc' is not a whole number"},
        {"--height", "16385", "--height: '16385' is out of range (valid: 16..16384)"},
        {"--aa", "0", "--aa: '0' is out of range (valid: 1..4)"},
        {"--aa", "5", "--aa: '5' is out of range (valid: 1..4)"},
        {"--azimuth", "nan", "--azimuth: 'nan' is not a number (valid: -360..360)"},
        {"--azimuth", "inf", "--azimuth: 'inf' is not a number (valid: -360..360)"},
        {"--azimuth", "", "--azimuth: '' is not a number (valid: -360..360)"},
        {"--azimuth", "12deg", "--azimuth: '12deg' is not a number"},
        {"--azimuth", " 12", "--azimuth: ' 12' is not a number"},
        {"--azimuth", "361", "--azimuth: '361' is out of range (valid: -360..360)"},
        {"--elevation", "90", "--elevation: '90' is out of range (valid: -89..89)"},
        {"--elevation", "-89.5", "--elevation: '-89.5' is out of range (valid: -89..89)"},
        {"--distance", "0", "--distance: '0' is out of range (valid: 0.1..1000)"},
        {"--distance", "1e999", "--distance: '1e999' is out of range (valid: 0.1..1000)"},
        {"--fov", "0.5", "--fov: '0.5' is out of range (valid: 1..150)"},
        {"--fov", "151", "--fov: '151' is out of range (valid: 1..150)"},
        {"--look", "-11", "--look: '-11' is out of range (valid: -10..10)"},
        {"--sun-azimuth", "x", "--sun-azimuth: 'x' is not a number (valid: -360..360)"},
        {"--sun-elevation", "91", "--sun-elevation: '91' is out of range (valid: -90..90)"},
        {"--out", "", "--out: '' is not a file name"},
        {"--obj", "-", "--obj: '-' is not supported"},
        {"--obj", "", "--obj: '' is not a file name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[] = {cases[i].opt, cases[i].val, NULL};
        wg_cli c = wg_cli_run(argv);
        CHECK(c.status == 2 && strstr(c.err, cases[i].msg), "%s '%s': %d %s",
              cases[i].opt, cases[i].val, c.status, c.err);
        wg_cli_free(&c);
    }
    /* Options that cannot go together. */
    static const char *const pairs[][7] = {
        {"--out", "-", "--heightmap", "-", "--heightmap-format", "pfm",
         "--out - and --heightmap - both want standard output"},
        {"--out", "-", "--json", "-", NULL, NULL,
         "--out - and --json - both want standard output"},
        {"--out", "a.png", "--heightmap", "a.png", NULL, NULL,
         "--out 'a.png' and --heightmap 'a.png' are the same file"},
        {"--no-image", "--out", "a.png", NULL, NULL, NULL,
         "--no-image and --out 'a.png': choose one"},
        {"--no-image", "--show", NULL, NULL, NULL, NULL,
         "--show needs the picture"},
        {"--obj", "w.obj", "--out", "w_albedo.png", NULL, NULL,
         "--obj 'w.obj' writes 'w_albedo.png', which --out writes too"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *argv[7] = {0};
        int n = 0;
        while (n < 6 && pairs[i][n])
            argv[n] = pairs[i][n], n++;
        const char *msg = pairs[i][6];
        wg_cli c = wg_cli_run(argv);
        CHECK(c.status == 2 && strstr(c.err, msg), "%s: %d %s", msg, c.status,
              c.err);
        wg_cli_free(&c);
    }
    /* In range, odd forms are fine. */
    char path[300];
    snprintf(path, sizeof path, "%s/ok.png", wg_tmpdir());
    const char *ok[] = {"--size", "16", "-q", "--out", path, "--width", "16",
                        "--height", "16", "--azimuth", "-359.5", "--elevation",
                        "-89", "--sun-elevation", "+1e1", "--fov", "150", NULL};
    wg_cli c = wg_cli_run(ok);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
}

/* ---- the block from outside cameras ---- */

/* A small fixed generator, so the cameras are the same on every run. */
static uint64_t render_rng = 0x9E3779B97F4A7C15u;
static double render_rand(double lo, double hi)
{
    render_rng ^= render_rng << 13;
    render_rng ^= render_rng >> 7;
    render_rng ^= render_rng << 17;
    return lo + (hi - lo) * (double)(render_rng >> 11) * 0x1p-53;
}

/* Does the ray from e along d meet the box lo..hi at a depth beyond the
 * near plane (t measured along d, whose camera-space z is 1)? */
static int render_ray_box(const float e[3], const float d[3], float near,
                          const float lo[3], const float hi[3])
{
    double t0 = near, t1 = INFINITY;
    for (int i = 0; i < 3; i++) {
        if (d[i] == 0.0f) {
            if (e[i] <= lo[i] || e[i] >= hi[i])
                return 0;
            continue;
        }
        double a = (lo[i] - e[i]) / (double)d[i];
        double b = (hi[i] - e[i]) / (double)d[i];
        if (a > b) {
            double t = a;
            a = b, b = t;
        }
        t0 = a > t0 ? a : t0;
        t1 = b < t1 ? b : t1;
    }
    return t0 < t1;
}

WG_TEST(render_block_is_watertight_from_outside)
{
    /* Many cameras outside the block, close and far, low, level and from
     * below, through wide and narrow lenses, around small worlds: (a)
     * --no-cull changes no byte of the picture, and (b) every sample whose
     * ray (and its four neighbours' rays) passes through the block's core
     * (the box under the lowest point of its top) is covered.  A triangle
     * cut by the near plane whose cut point rounded to just in front of
     * the plane used to be dropped whole, and the sky showed through
     * between the floor and a skirt (--size 64 --elevation -5 --distance
     * 4). */
    static const uint32_t sizes[] = {2, 3, 9, 33};
    int cameras = 0, checked = 0;
    long solid = 0;
    for (size_t w = 0; w < sizeof sizes / sizeof sizes[0]; w++) {
        wg_world world = render_world;
        world.size = sizes[w], world.passes = 2, world.steps = 10;
        wg_fields f;
        if (wg_make_world("scalar", &world, 0, &f) != 0) {
            CHECK(0, "no world of size %u", sizes[w]);
            continue;
        }
        uint32_t n = f.n;
        /* The surfaces drawn (render.c), and the lowest and highest
         * points of the higher of the two. */
        float *top = malloc(wg_cells(n) * sizeof *top);
        float *level = malloc(wg_cells(n) * sizeof *level);
        for (uint32_t y = 0; y < n; y++)
            for (uint32_t x = 0; x < n; x++) {
                size_t k = (size_t)y * n + x;
                top[k] = f.height[k] + wg_water_shown(&f, world.sea, x, y);
            }
        wg_water_levels(f.height, top, n, 0, n, level);
        const wg_block blk = {.ground = f.height, .top = top,
                              .level = level, .n = n};
        float tlo = INFINITY, thi = -INFINITY;
        for (size_t k = 0; k < wg_cells(n); k++) {
            float t = level[k] > f.height[k] ? level[k] : f.height[k];
            tlo = t < tlo ? t : tlo;
            thi = t > thi ? t : thi;
        }
        for (int c = 0; c < 60; c++) {
            wg_render_opts o = wg_render_defaults;
            wg_camera *cam = &o.cam;
            cam->azimuth = (float)render_rand(0, 360);
            cam->elevation = (float)(render_rand(0, 1) < 0.5
                                         ? render_rand(-12, 12)
                                         : render_rand(-85, 85));
            cam->fov = (float)(render_rand(0, 1) < 0.3 ? render_rand(5, 25)
                                                      : render_rand(25, 150));
            cam->look = (float)render_rand(-0.5, 1.5);
            cam->distance = (float)(render_rand(0, 1) < 0.5
                                        ? render_rand(3.05, 5)
                                        : render_rand(0.3, 40));
            o.width = (uint32_t)render_rand(16, 161);
            o.height = (uint32_t)render_rand(16, 121);
            o.aa = (uint32_t)render_rand(1, 3);
            /* Outside the block's box by a margin (the near plane is a
             * millimetre; a camera in the block sees its inside). */
            float d[3];
            wg_direction(cam->azimuth, cam->elevation, d);
            float e[3] = {d[0] * cam->distance,
                          d[1] * cam->distance + cam->look,
                          d[2] * cam->distance};
            const float m = 0.02f;
            if (fabsf(e[0]) < 3 + m && fabsf(e[2]) < 3 + m &&
                e[1] > WG_BLOCK_FLOOR - m && e[1] < thi + m) {
                c--;
                continue;
            }
            cameras++;

            /* (a) */
            wg_image a = {0}, b = {0};
            wg_render_stats rs;
            char err[WG_ERR_LEN];
            o.cull = 1;
            CHECK(wg_render(&f, world.sea, &o, &a, &rs, err) == 0, "%s", err);
            o.cull = 0;
            CHECK(wg_render(&f, world.sea, &o, &b, &rs, err) == 0, "%s", err);
            size_t bytes = (size_t)o.width * o.height * 3;
            CHECK(a.rgb && b.rgb && memcmp(a.rgb, b.rgb, bytes) == 0,
                  "size %u, camera %g %g %g %g %g: --no-cull changed the "
                  "picture", n, cam->azimuth, cam->elevation, cam->distance,
                  cam->fov, cam->look);
            wg_image_free(&a);
            wg_image_free(&b);

            /* (b), on the keys of the whole picture at once. */
            uint32_t sw = o.width * o.aa, sh = o.height * o.aa;
            wg_eye v;
            wg_eye_make(&v, cam, sw, sh);
            wg_plan pl;
            wg_target t;
            CHECK(wg_plan_make(&pl, &v, &blk) == 0);
            render_target(&t, sw, sh);
            wg_raster_strip(&t, &v, &pl, &blk, 1);
            const float lo[3] = {-3, WG_BLOCK_FLOOR, -3}, hi[3] = {3, tlo, 3};
            int holes = 0;
            for (uint32_t y = 1; y + 1 < sh; y++)
                for (uint32_t x = 1; x + 1 < sw; x++) {
                    static const int nb[5][2] = {
                        {0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}};
                    int in = 1;
                    for (int k = 0; k < 5 && in; k++) {
                        float dir[3];
                        wg_eye_ray(&v, (float)x + 0.5f + nb[k][0],
                                   (float)y + 0.5f + nb[k][1], dir);
                        in = render_ray_box(v.pos, dir, v.near, lo, hi);
                    }
                    if (!in)
                        continue;
                    solid++;
                    if (t.keys[(size_t)y * sw + x] == WG_KEY_EMPTY && !holes++)
                        CHECK(0, "size %u, camera %g %g %g %g %g, %ux%u "
                              "samples: sky at (%u, %u) inside the block",
                              n, cam->azimuth, cam->elevation,
                              cam->distance, cam->fov, cam->look, sw, sh, x,
                              y);
                }
            checked++;
            free(t.keys);
            wg_plan_free(&pl);
        }
        free(top);
        free(level);
        wg_fields_free(&f);
    }
    CHECK(cameras == 240 && checked == 240, "%d cameras", cameras);
    /* Not vacuous: many samples looked into the block's core. */
    CHECK(solid > 100000, "%ld samples through the core", solid);
}

/* ---- the map view ---- */

/* An n-sided world made by hand: ground height(x, z) and water depth
 * water(x, z) (NULL: none) at every vertex's world position, no sediment,
 * normals from the heights' differences.  Returns 0, or -1. */
static int render_hand_world(uint32_t n, float (*height)(float, float),
                             float (*water)(float, float), wg_fields *f)
{
    if (wg_fields_alloc(f, n) != 0)
        return -1;
    float sp = wg_block_spacing(n);
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            size_t k = (size_t)y * n + x;
            float wx = wg_block_coord(x, sp), wz = wg_block_coord(y, sp);
            f->height[k] = height(wx, wz);
            f->water[k] = water ? water(wx, wz) : 0.0f;
            f->sediment[k] = 0.0f;
        }
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            uint32_t x0 = x ? x - 1 : x, x1 = x + 1 < n ? x + 1 : x;
            uint32_t y0 = y ? y - 1 : y, y1 = y + 1 < n ? y + 1 : y;
            const float *h = f->height;
            float dx = (h[(size_t)y * n + x1] - h[(size_t)y * n + x0]) /
                       ((float)(x1 - x0) * sp);
            float dz = (h[(size_t)y1 * n + x] - h[(size_t)y0 * n + x]) /
                       ((float)(y1 - y0) * sp);
            float l = 1.0f / sqrtf(dx * dx + 1.0f + dz * dz);
            size_t k = (size_t)y * n + x;
            f->nx[k] = -dx * l, f->ny[k] = l, f->nz[k] = -dz * l;
        }
    return 0;
}

/* A hill half a unit tall in the north-west quarter, at (-1.5, -1.5), on
 * level ground at 0.3; a lake 0.05 deep and half a unit across in the
 * north-east quarter, at (1.5, -1.5). */
static float render_hill(float x, float z)
{
    float dx = x + 1.5f, dz = z + 1.5f;
    return 0.3f + 0.5f * expf(-(dx * dx + dz * dz) / (2 * 0.35f * 0.35f));
}

static float render_lake(float x, float z)
{
    float dx = x - 1.5f, dz = z + 1.5f;
    return dx * dx + dz * dz < 0.25f ? 0.05f : 0.0f;
}

static const uint8_t *render_px(const wg_image *img, uint32_t x, uint32_t y)
{
    return img->rgb + ((size_t)y * img->w + x) * 3;
}

static double render_luma3(const uint8_t q[3])
{
    return 0.2126 * q[0] + 0.7152 * q[1] + 0.0722 * q[2];
}

static double render_luma(const wg_image *img, uint32_t x, uint32_t y)
{
    return render_luma3(render_px(img, x, y));
}

/* The map of f, sea 0. */
static int render_map(const wg_fields *f, wg_render_opts o, wg_image *img)
{
    char err[WG_ERR_LEN];
    wg_render_stats rs;
    o.view = WG_VIEW_MAP;
    if (wg_render(f, 0.0f, &o, img, &rs, err) != 0) {
        fprintf(stderr, "    %s\n", err);
        return -1;
    }
    return 0;
}

/* The 200x200 map (--aa 1) of an n-sided world made by hand: pixel p's
 * centre stands at world -3 + (p + 0.5) * 0.03.  Returns 0 with f and img
 * filled, or -1 (the checks saying why) with neither. */
static int render_hand_map(uint32_t n, float (*height)(float, float),
                           float (*water)(float, float), wg_fields *f,
                           wg_image *img)
{
    CHECK(render_hand_world(n, height, water, f) == 0);
    wg_render_opts o = wg_render_defaults;
    o.width = o.height = 200;
    o.aa = 1;
    *img = (wg_image){0};
    CHECK(render_map(f, o, img) == 0);
    if (img->rgb)
        return 0;
    wg_fields_free(f);
    return -1;
}

/* A pixel of water, blue, not the snow on a shaded side, which the sky's
 * fill turns blue-grey. */
static int render_water_blue(const uint8_t *q)
{
    return q[2] > 2 * q[0] + 20 && q[2] > q[1] + 20;
}

/* Level ground at 0.3 under 0.05 of water everywhere, and for
 * render_water_mirrors_a_bank, a bank 0.15 over the water's surface, dry,
 * from 0.12 to 0.3 south of the centre (+z), along x. */
static float render_lake_floor(float x, float z)
{
    (void)x, (void)z;
    return 0.3f;
}

static float render_lake_bank(float x, float z)
{
    (void)x;
    return z > 0.12f && z < 0.3f ? 0.5f : 0.3f;
}

static float render_lake_water(float x, float z)
{
    return render_lake_bank(x, z) > 0.3f ? 0.0f : 0.05f;
}

/* The camera of the mirror's tests: south, at the water's surface at the
 * centre from 10 degrees up, 64x48 pixels, a narrow lens; the sun in the
 * east. */
static wg_render_opts render_mirror_view(void)
{
    wg_render_opts o = wg_render_defaults;
    o.width = 64, o.height = 48, o.aa = 1;
    o.cam = (wg_camera){.azimuth = 0, .elevation = 10, .distance = 3,
                        .fov = 10, .look = 0.35f};
    o.sun_azimuth = 90, o.sun_elevation = 20;
    return o;
}

WG_TEST(render_water_mirrors_a_bank)
{
    /* Water seen at a grazing angle mirrors what stands in the mirror
     * direction: the sky over open water, the bank where a bank rises
     * near it (a river down a gully, seen from low, had mirrored the
     * bright sky over the horizon: a white streak between dark banks).
     * The camera looks south at the water's surface at the centre from 10
     * degrees up, so the mirrored ray rises at 10 degrees and meets the
     * bank 0.12 on, 0.02 up; the sun in the east leaves the bank's face
     * toward the water in shade. */
    wg_fields open, bank;
    CHECK(render_hand_world(129, render_lake_floor, render_lake_water,
                            &open) == 0);
    CHECK(render_hand_world(129, render_lake_bank, render_lake_water,
                            &bank) == 0);
    wg_render_opts o = render_mirror_view();
    wg_image a = {0}, b = {0};
    wg_render_stats rs;
    char err[WG_ERR_LEN];
    CHECK(wg_render(&open, 0.0f, &o, &a, &rs, err) == 0, "%s", err);
    CHECK(wg_render(&bank, 0.0f, &o, &b, &rs, err) == 0, "%s", err);
    if (a.rgb && b.rgb) {
        /* The centre pixel is the water in both (the bank stands beyond
         * it, above it in the picture). */
        const uint8_t *qa = render_px(&a, 32, 24);
        CHECK(render_water_blue(qa) || qa[2] > qa[0],
              "open water is not water: %d %d %d", qa[0], qa[1], qa[2]);
        double la = render_luma(&a, 32, 24), lb = render_luma(&b, 32, 24);
        CHECK(lb < 0.8 * la,
              "the water under the bank mirrors the sky: luma %.1f, open "
              "water %.1f", lb, la);
        /* Its own pixels are the same: the bank changes only the mirror. */
        CHECK(memcmp(render_px(&a, 32, 40), render_px(&b, 32, 40), 3) == 0,
              "the near water changed");
    }
    wg_image_free(&a);
    wg_image_free(&b);
    wg_fields_free(&open);
    wg_fields_free(&bank);
}

/* render_lake_bank's bank with a top that rises from west to east, a
 * quarter of a unit per unit, through the height of the mirrored ray of
 * render_water_mirrors_a_bank's camera. */
static float render_lake_ramp(float x, float z)
{
    return z > 0.12f && z < 0.3f ? 0.372f + 0.25f * x : 0.3f;
}

static float render_lake_ramp_water(float x, float z)
{
    (void)x;
    return z > 0.12f && z < 0.3f ? 0.0f : 0.05f;
}

/* The bank comes into the water's mirror gradually as it rises into the
 * mirrored ray (rippled water blurs what it mirrors), not all at once:
 * along the row of water under a bank whose top rises across the picture,
 * the mirror goes from the sky to the bank, and no step between
 * neighbouring pixels is more than a quarter of that.  The mirror had
 * shown the bank wherever it stood above the ray by any amount and the
 * sky elsewhere: in a river under its banks seen from low, pale blotches
 * of sky with hard edges among the dark banks' reflections, a cell or
 * two across. */
WG_TEST(render_water_mirror_is_gradual)
{
    wg_fields f;
    CHECK(render_hand_world(129, render_lake_ramp, render_lake_ramp_water,
                            &f) == 0);
    wg_render_opts o = render_mirror_view();
    wg_image a = {0};
    wg_render_stats rs;
    char err[WG_ERR_LEN];
    CHECK(wg_render(&f, 0.0f, &o, &a, &rs, err) == 0, "%s", err);
    if (a.rgb) {
        double lo = 1e9, hi = -1e9, step = 0;
        for (uint32_t x = 2; x < 62; x++) {
            double l = render_luma(&a, x, 24);
            lo = l < lo ? l : lo;
            hi = l > hi ? l : hi;
            if (x > 2) {
                double d = fabs(l - render_luma(&a, x - 1, 24));
                step = d > step ? d : step;
            }
        }
        CHECK(hi - lo > 15.0, "no bank in the mirror: luma %.1f..%.1f", lo,
              hi);
        CHECK(step < 0.25 * (hi - lo),
              "the mirror jumps %.1f of %.1f between two pixels", step,
              hi - lo);
    }
    wg_image_free(&a);
    wg_fields_free(&f);
}

/* Planes rising to the east and to the west, 0.3 a unit: a 20 degree sun
 * in the east grazes the first (the cosine to its normal 0.057) and lights
 * the second (0.6). */
static float render_plane_east(float x, float z)
{
    (void)z;
    return 0.3f + 0.3f * x;
}

static float render_plane_west(float x, float z)
{
    (void)z;
    return 0.3f - 0.3f * x;
}

/* How rough the luma is over the middle of a 160x120 picture of f, close,
 * the sun in the east 20 degrees up: the mean difference between
 * neighbouring pixels (a smooth change across the picture, the haze's or
 * the light's, counts for little). */
static double render_slope_roughness(const wg_fields *f)
{
    wg_render_opts o = wg_render_defaults;
    o.width = 160, o.height = 120, o.aa = 1;
    o.cam = (wg_camera){.azimuth = 180, .elevation = 40, .distance = 1.2f,
                        .fov = 45, .look = 0.3f};
    o.sun_azimuth = 90, o.sun_elevation = 20;
    wg_image img = {0};
    wg_render_stats rs;
    char err[WG_ERR_LEN];
    if (wg_render(f, 0.0f, &o, &img, &rs, err) != 0 || !img.rgb)
        return -1.0;
    double sum = 0;
    int count = 0;
    for (uint32_t y = 30; y < 90; y++)
        for (uint32_t x = 40; x < 120; x++) {
            double l = render_luma(&img, x, y);
            sum += fabs(l - render_luma(&img, x + 1, y)) +
                   fabs(l - render_luma(&img, x, y + 1));
            count += 2;
        }
    wg_image_free(&img);
    return sum / count;
}

/* The relief finer than the grid fades where the sun grazes a slope in
 * the orbit view: a tilt of a few degrees had turned the sun's light on
 * and off there, dark blotches the noise's size all over a slope facing
 * from a low sun.  A slope the sun lights keeps it. */
WG_TEST(render_relief_fades_where_the_sun_grazes)
{
    wg_fields graze, lit;
    CHECK(render_hand_world(257, render_plane_east, NULL, &graze) == 0);
    CHECK(render_hand_world(257, render_plane_west, NULL, &lit) == 0);
    double g = render_slope_roughness(&graze), l = render_slope_roughness(&lit);
    /* Measured: 0.86 and 2.30 (the grazed slope had been as rough as the
     * lit one, 2.30). */
    CHECK(l > 1.5, "a lit slope's relief is gone: roughness %.2f", l);
    CHECK(g >= 0 && g < 0.5 * l, "a grazed slope's roughness %.2f, a lit one's %.2f",
          g, l);
    wg_fields_free(&graze);
    wg_fields_free(&lit);
}

WG_TEST(render_map_puts_features_where_they_are)
{
    /* 200x200 pixels for the 6x6 world: pixel p's centre is at world
     * -3 + (p + 0.5) * 0.03, so the hill stands at pixel (50, 50), north
     * west, and the lake at (150, 50), north east, 16 pixels across. */
    wg_fields f;
    CHECK(render_hand_world(129, render_hill, render_lake, &f) == 0);
    wg_render_opts o = wg_render_defaults;
    o.width = o.height = 200;
    o.aa = 1;
    wg_image img = {0};
    CHECK(render_map(&f, o, &img) == 0);
    if (!img.rgb) {
        wg_fields_free(&f);
        return;
    }
    /* The lake is blue, and nothing else is. */
    int outside = 0;
    for (uint32_t y = 0; y < 200; y++)
        for (uint32_t x = 0; x < 200; x++) {
            const uint8_t *q = render_px(&img, x, y);
            int blue = render_water_blue(q);
            double r = hypot(x + 0.5 - 150, y + 0.5 - 50);
            if (r < 14)
                CHECK(blue, "lake pixel (%u, %u) = %d %d %d", x, y, q[0],
                      q[1], q[2]);
            outside += r > 19 && blue;
        }
    CHECK(outside == 0, "%d blue pixels away from the lake", outside);
    /* The sun from the west-north-west (290, 20 up) lights the hill's
     * west flank and leaves its east flank in shade, its shadow falling
     * east-south-east over the level ground. */
    double flat = render_luma(&img, 50, 150);
    double west = render_luma(&img, 38, 50), east = render_luma(&img, 62, 48);
    double shadow = render_luma(&img, 80, 55);
    CHECK(west > 1.3 * flat && east < 0.6 * flat && shadow < 0.6 * flat,
          "flat %g, west flank %g, east flank %g, shadow %g", flat, west, east,
          shadow);
    /* Level ground far from both is one colour, give or take the
     * materials' noise. */
    CHECK(fabs(render_luma(&img, 150, 150) - flat) < 0.25 * flat);
    wg_image_free(&img);

    /* The sun from the east turns it round. */
    o.sun_azimuth = 90;
    CHECK(render_map(&f, o, &img) == 0);
    if (img.rgb)
        CHECK(render_luma(&img, 62, 50) > 1.5 * render_luma(&img, 38, 50),
              "east %g, west %g", render_luma(&img, 62, 50),
              render_luma(&img, 38, 50));
    wg_image_free(&img);
    wg_fields_free(&f);
}

/* wg_water_levels on a grid of ground 'g' and ground-with-water 'top'
 * (n columns, 'rows' rows), whole and then in two parts split at row
 * 'cut': the parts must give the same levels and the same count. */
static uint64_t render_levels(const float *g, const float *top, uint32_t n,
                              uint32_t rows, uint32_t cut, float *level)
{
    (void)rows;
    uint64_t whole = wg_water_levels(g, top, n, 0, n, level);
    float *two = malloc(wg_cells(n) * sizeof *two);
    CHECK(two != NULL);
    if (!two)
        return whole;
    uint64_t parts = wg_water_levels(g, top, n, 0, cut, two) +
                     wg_water_levels(g, top, n, cut, n, two);
    CHECK(parts == whole && memcmp(two, level, wg_cells(n) * sizeof *two) == 0,
          "in two parts: %llu cells, not %llu, or other levels",
          (unsigned long long)parts, (unsigned long long)whole);
    free(two);
    return whole;
}

WG_TEST(render_water_levels_meet_the_ground_at_the_shore)
{
    /* A 7 x 7 grid of level ground at 0.5, one wet vertex (3, 3) whose
     * surface stands at 0.52, the rest dry with a film thinner than
     * WG_WATER_MIN; around it a bank above the water (2, 3), a vertex below
     * its surface (4, 3), and far away a vertex with no wet neighbour. */
    enum { N = 7 };
    float g[N * N], top[N * N], level[N * N];
    for (int k = 0; k < N * N; k++)
        g[k] = 0.5f, top[k] = 0.5f + 0.5f * WG_WATER_MIN;
    g[3 * N + 3] = 0.5f, top[3 * N + 3] = 0.52f;
    g[3 * N + 2] = 0.6f, top[3 * N + 2] = 0.6f;  /* a bank */
    g[3 * N + 4] = 0.45f, top[3 * N + 4] = 0.45f; /* downhill */
    /* Under the ground by a third of the water on (3, 3). */
    const float d3 = (0.52f - 0.5f) * (1.0f / 3.0f);
    uint64_t cells = render_levels(g, top, N, N, 3, level);
    CHECK(level[3 * N + 3] == 0.52f, "the wet vertex: %g", level[3 * N + 3]);
    CHECK(level[3 * N + 2] == 0.52f, "the bank: %g, under its ground 0.6, "
          "at the water's surface", level[3 * N + 2]);
    /* Under the ground by a third of the water beside it, so the shore
     * crosses the edge three quarters of the way from the water (it had
     * been held at its ground: the shore a comb of points, one at each dry
     * vertex). */
    CHECK(level[3 * N + 4] == 0.45f - d3, "downhill: %g, its ground less "
          "a third of the water beside it", level[3 * N + 4]);
    CHECK(level[2 * N + 3] == 0.5f - d3 && level[4 * N + 2] == 0.5f - d3,
          "ground below the surface: %g %g", level[2 * N + 3],
          level[4 * N + 2]);
    CHECK(level[0] == 0.5f && level[6 * N + 6] == 0.5f,
          "no wet neighbour: the ground");
    /* The four cells around the wet vertex have water over them. */
    CHECK(cells == 4, "%llu cells with water", (unsigned long long)cells);

    /* The higher of two wet neighbours' surfaces and the shallower of
     * their waters; and on the border, the ground (the water's side there
     * runs from its surface down to the ground, and must not turn upside
     * down). */
    top[3 * N + 5] = 0.53f; /* (5, 3): wet, 0.03 deep, beside (4, 3) */
    g[0 * N + 1] = 0.7f;    /* (1, 0): a bank on the border, */
    top[1 * N + 1] = 0.6f;  /* next to (1, 1), wet at 0.6 */
    const float d5 = (0.53f - 0.5f) * (1.0f / 3.0f);
    cells = render_levels(g, top, N, N, 4, level);
    CHECK(level[3 * N + 4] == 0.45f - d3 && level[2 * N + 4] == 0.5f - d3 &&
          level[3 * N + 6] == 0.5f, "%g %g %g", level[3 * N + 4],
          level[2 * N + 4], level[3 * N + 6]);
    CHECK(level[2 * N + 5] == 0.5f - d5, "%g", level[2 * N + 5]);
    CHECK(level[0 * N + 1] == 0.7f, "the border's bank: %g, its ground",
          level[0 * N + 1]);
    CHECK(level[1 * N + 1] == 0.6f);
    CHECK(cells == 12, "%llu cells", (unsigned long long)cells);

    /* A river a vertex wide across the cells' split, (x + 1, y) to
     * (x, y + 1): wet (1, 1), (2, 2), (3, 3).  The dry vertices that end
     * the split between two of them, (2, 1) and (1, 2), (3, 2) and (2, 3),
     * are held at their ground, so the sheet runs through unbroken; the
     * others go under by a third of the water beside them.  Along the split instead
     * (wet (3, 1), (2, 2), (1, 3)) the triangles join the wet vertices and
     * no dry vertex is held. */
    for (int k = 0; k < N * N; k++)
        g[k] = 0.5f, top[k] = 0.5f;
    for (int k = 1; k <= 3; k++)
        top[k * N + k] = 0.52f;
    cells = render_levels(g, top, N, N, 2, level);
    CHECK(level[1 * N + 2] == 0.5f && level[2 * N + 1] == 0.5f &&
          level[2 * N + 3] == 0.5f && level[3 * N + 2] == 0.5f,
          "the split's ends: %g %g %g %g", level[1 * N + 2],
          level[2 * N + 1], level[2 * N + 3], level[3 * N + 2]);
    CHECK(level[0 * N + 0] == 0.5f && level[1 * N + 0] == 0.5f,
          "the border: %g %g", level[0], level[N]);
    CHECK(level[1 * N + 3] == 0.5f - d3 && level[3 * N + 1] == 0.5f - d3 &&
          level[4 * N + 4] == 0.5f - d3 && level[4 * N + 3] == 0.5f - d3,
          "beside the river: %g %g %g %g", level[1 * N + 3],
          level[3 * N + 1], level[4 * N + 4], level[4 * N + 3]);
    for (int k = 1; k <= 3; k++)
        top[k * N + k] = 0.5f, top[k * N + 4 - k] = 0.52f;
    cells = render_levels(g, top, N, N, 2, level);
    CHECK(level[2 * N + 3] == 0.5f - d3 && level[3 * N + 2] == 0.5f - d3 &&
          level[1 * N + 1] == 0.5f - d3 && level[3 * N + 3] == 0.5f - d3,
          "along the split: %g %g %g %g", level[2 * N + 3],
          level[3 * N + 2], level[1 * N + 1], level[3 * N + 3]);

    /* Across the columns the function takes at once (1024): a wet vertex
     * on each side of the seam, and banks next to them on the other. */
    const uint32_t w = 1100, h = 3;
    float *gg = malloc((size_t)w * w * sizeof *gg);
    float *tt = malloc((size_t)w * w * sizeof *tt);
    float *ll = malloc((size_t)w * w * sizeof *ll);
    CHECK(gg && tt && ll);
    if (gg && tt && ll) {
        for (size_t k = 0; k < (size_t)w * w; k++)
            gg[k] = tt[k] = 0.5f;
        for (uint32_t x = 1022; x <= 1025; x++)
            gg[w + x] = tt[w + x] = 0.6f; /* banks */
        tt[w + 1023] = 0.7f;              /* wet: 0.1 deep */
        tt[w + 1024] = 0.65f;             /* wet: 0.05 deep */
        const float d = (0.65f - 0.6f) * (1.0f / 3.0f);
        cells = render_levels(gg, tt, w, h, 1, ll);
        CHECK(ll[w + 1022] == 0.6f - (0.7f - 0.6f) * (1.0f / 3.0f) &&
              ll[w + 1025] == 0.6f - d, "banks beside the seam: %g %g",
              ll[w + 1022], ll[w + 1025]);
        CHECK(ll[1023] == 0.5f && ll[2 * w + 1024] == 0.5f - d,
              "the border, its ground, and below the surfaces: %g %g",
              ll[1023], ll[2 * w + 1024]);
        CHECK(ll[w + 1023] == 0.7f && ll[w + 1024] == 0.65f);
        /* The water's cells: (1022..1024, 0..1), six. */
        CHECK(cells == 6, "%llu cells", (unsigned long long)cells);
    }
    free(gg);
    free(tt);
    free(ll);
}

/* A bowl, its floor at 0.3 at the centre, rising 0.1 a unit squared. */
static float render_bowl(float x, float z)
{
    return 0.3f + 0.1f * (x * x + z * z);
}

/* The bowl filled to 0.556: 1.6 units out from the centre. */
#define RENDER_BOWL_LEVEL 0.556f
static float render_bowl_water(float x, float z)
{
    float d = RENDER_BOWL_LEVEL - render_bowl(x, z);
    return d > 0.0f ? d : 0.0f;
}

WG_TEST(render_shore_is_where_the_ground_meets_the_water)
{
    /* A lake in a bowl on a coarse grid (a cell is 0.75 across): seen
     * from above, its shore is the circle where the ground rises out of
     * the water, 1.6 units out, within a little of the grid's
     * interpolation of the bowl.  The water had been drawn on the
     * ground, ending where its depth interpolated from the vertices ran
     * out: near the first dry vertices, up to 2.25 units out, a lake a
     * cell too wide all round. */
    wg_fields f;
    wg_image img;
    if (render_hand_map(9, render_bowl, render_bowl_water, &f, &img) != 0)
        return;
    int inside = 0, wet_in = 0, ring = 0, wet_ring = 0;
    for (uint32_t y = 0; y < 200; y++)
        for (uint32_t x = 0; x < 200; x++) {
            const uint8_t *q = render_px(&img, x, y);
            int blue = render_water_blue(q);
            /* The pixel's centre in world units. */
            double r = hypot(-3 + (x + 0.5) * 0.03, -3 + (y + 0.5) * 0.03);
            if (r < 1.3) {
                inside++;
                wet_in += blue;
            } else if (r > 1.8 && r < 2.1) {
                ring++;
                wet_ring += blue;
            }
        }
    CHECK(inside > 0 && wet_in == inside, "%d of %d pixels of the lake are "
          "water", wet_in, inside);
    CHECK(ring > 0 && wet_ring == 0, "%d of %d pixels of the bank, 0.2 to 0.5 "
          "above the shore, are water", wet_ring, ring);
    wg_image_free(&img);
    wg_fields_free(&f);
}

/* A low bowl, grass all over (sea 0), its floor at 0.05 at the centre,
 * filled to 0.1012: 1.6 units out, as the bowl above. */
static float render_low_bowl(float x, float z)
{
    return 0.05f + 0.02f * (x * x + z * z);
}

static float render_low_bowl_water(float x, float z)
{
    float d = 0.1012f - render_low_bowl(x, z);
    return d > 0.0f ? d : 0.0f;
}

WG_TEST(render_bank_above_the_water_is_not_its_bed)
{
    /* The bank just above the shore, in the cells round the last wet
     * vertices, is the ground, green as the rest of the bowl's grass, not
     * the lake's bed: the materials had read the water shown interpolated
     * from the vertices, which there still covers the ground, and drew
     * bare silt where the water's surface passed under the ground (on
     * small grids whole cells of it round every lake and island). */
    wg_fields f;
    wg_image img;
    if (render_hand_map(9, render_low_bowl, render_low_bowl_water, &f,
                        &img) != 0)
        return;
    int ring = 0, brown = 0;
    uint32_t bx = 0, by = 0;
    for (uint32_t y = 0; y < 200; y++)
        for (uint32_t x = 0; x < 200; x++) {
            const uint8_t *q = render_px(&img, x, y);
            double r = hypot(-3 + (x + 0.5) * 0.03, -3 + (y + 0.5) * 0.03);
            if (r < 1.8 || r > 2.0)
                continue;
            ring++;
            /* Grass is green, well above its red (88, 124, 50); the bed's
             * silt is not (112, 106, 84). */
            if (!(q[1] > q[0] + 15) && !brown++)
                bx = x, by = y;
        }
    const uint8_t *q = render_px(&img, bx, by);
    CHECK(ring > 0 && brown == 0, "%d of %d pixels of the bank are not "
          "grass, the first (%u, %u) %u %u %u", brown, ring, bx, by, q[0],
          q[1], q[2]);
    wg_image_free(&img);
    wg_fields_free(&f);
}

WG_TEST(render_bank_above_the_water_is_dry)
{
    /* The bank 0.014 to 0.04 above the lake's level (1.8 to 2.2 units
     * out, in the cells round the last wet vertices, whose corners reach
     * 2.25 out) is the same grass as where there is no lake at all: wet,
     * darker ground is a band along the waterline only.  It had been
     * darkened by 40% over every cell with a wet corner, a dark polygon
     * with straight edges along the grid round every lake, pond and river
     * (on small grids a whole cell wide). */
    wg_fields f, dry;
    wg_image img, bare;
    if (render_hand_map(9, render_low_bowl, render_low_bowl_water, &f,
                        &img) != 0)
        return;
    if (render_hand_map(9, render_low_bowl, NULL, &dry, &bare) != 0) {
        wg_image_free(&img);
        wg_fields_free(&f);
        return;
    }
    int ring = 0, dark = 0;
    uint32_t bx = 0, by = 0;
    for (uint32_t y = 0; y < 200; y++)
        for (uint32_t x = 0; x < 200; x++) {
            double r = hypot(-3 + (x + 0.5) * 0.03, -3 + (y + 0.5) * 0.03);
            if (r < 1.8 || r > 2.2)
                continue;
            ring++;
            if (render_luma(&img, x, y) < render_luma(&bare, x, y) - 3.0 &&
                !dark++)
                bx = x, by = y;
        }
    CHECK(ring > 0 && dark == 0, "%d of %d pixels of the bank are darker "
          "than without the lake, the first (%u, %u) %.1f against %.1f",
          dark, ring, bx, by, render_luma(&img, bx, by),
          render_luma(&bare, bx, by));
    /* Not vacuous: along row 100 (z = 0), east of the centre, the ground
     * at the waterline (r = 1.6) is wet, darker than the dry bowl. */
    int line = 0;
    for (uint32_t x = 140; x < 170; x++)
        line += !render_water_blue(render_px(&img, x, 100)) &&
                render_luma(&img, x, 100) < render_luma(&bare, x, 100) - 3.0;
    CHECK(line > 0, "no wet ground at the waterline");
    wg_image_free(&img);
    wg_image_free(&bare);
    wg_fields_free(&f);
    wg_fields_free(&dry);
}

/* A world sloping up to the south (+z), 'base' high at z = 0 and rising
 * 'per' a unit, with a lake filled to 'fill' from one side of the world to
 * the other: name(x, z) its ground, name##_water(x, z) its water. */
#define RENDER_SLOPE_WORLD(name, base, per, fill)                          \
    static float name(float x, float z)                                    \
    {                                                                      \
        (void)x;                                                           \
        return (base) + (per) * z;                                         \
    }                                                                      \
    static float name##_water(float x, float z)                            \
    {                                                                      \
        float d = (fill) - name(x, z);                                     \
        return d > 0.0f ? d : 0.0f;                                        \
    }

/* Grass: 0.08 at z = 0, 0.1 a unit; the lake's shore at z = 0.1, between
 * two rows of a 9 grid (z = 0 wet, z = 0.75 dry). */
RENDER_SLOPE_WORLD(render_slope, 0.08f, 0.1f, 0.09f)

WG_TEST(render_water_does_not_climb_the_border)
{
    /* At the world's border a dry vertex's water surface is held at its
     * ground (the water's sides there stand upright), so the surface drawn
     * rises up the bank from the last wet vertex; the water had been drawn
     * all the way up it, in the two columns of cells on the border alone.
     * The shore is the same line across the whole world. */
    wg_fields f;
    wg_image img;
    if (render_hand_map(9, render_slope, render_slope_water, &f, &img) != 0)
        return;
    int below = 0, wet_below = 0, bank = 0, bare = 0;
    uint32_t bx = 0, bz = 0;
    for (uint32_t y = 0; y < 200; y++)
        for (uint32_t x = 0; x < 200; x++) {
            const uint8_t *q = render_px(&img, x, y);
            double z = -3 + (y + 0.5) * 0.03;
            if (z < -1.0) { /* deep enough to be blue, not turquoise */
                below++;
                wet_below += render_water_blue(q);
            } else if (z > 0.3 && z < 0.65) {
                /* Grass, its green well above its blue (94 to 36); not
                 * water (96 to 89), nor the silt of a bed (88 to 64). */
                bank++;
                if (!(q[1] > q[2] + 30) && !bare++)
                    bx = x, bz = y;
            }
        }
    CHECK(below > 0 && wet_below == below, "%d of %d pixels under the water "
          "are water", wet_below, below);
    const uint8_t *q = render_px(&img, bx, bz);
    CHECK(bank > 0 && bare == 0, "%d of %d pixels of the bank are not grass, "
          "the first (%u, %u) %u %u %u", bare, bank, bx, bz, q[0], q[1], q[2]);
    wg_image_free(&img);
    wg_fields_free(&f);
}

/* Steeper: 0.5 at z = 0, 0.15 a unit; the lake's shore at z = 0.375,
 * halfway between two rows of a 9 grid (z = 0 wet, z = 0.75 dry). */
RENDER_SLOPE_WORLD(render_steep, 0.5f, 0.15f, 0.55625f)

/* render_steep's lake seen from the west, square on to the block's west
 * side (1200 x 400, --aa 1): the pixels q[i] at the world points at[i]
 * (NULL, with a failed check, for one off the picture).  Returns 0, or -1
 * when the picture could not be made. */
static int render_steep_side(int count, const float at[][3],
                             uint8_t q[][3])
{
    wg_fields f;
    CHECK(render_hand_world(9, render_steep, render_steep_water, &f) == 0);
    wg_render_opts o = wg_render_defaults;
    o.width = 1200, o.height = 400, o.aa = 1;
    o.cam = (wg_camera){.azimuth = 270, .elevation = 0, .distance = 10,
                        .fov = 6, .look = 0.5f};
    wg_image img = {0};
    wg_render_stats rs;
    CHECK(render_it(&f, &o, &img, &rs) == 0);
    int rc = img.rgb ? 0 : -1;
    wg_eye v;
    wg_eye_make(&v, &o.cam, o.width, o.height);
    for (int i = 0; img.rgb && i < count; i++) {
        float c[3];
        wg_eye_to_camera(&v, at[i], c);
        float sx = v.cx + c[0] / c[2] * v.focal;
        float sy = v.cy - c[1] / c[2] * v.focal;
        int in = sx >= 0 && sy >= 0 && sx < o.width && sy < o.height;
        CHECK(in, "point %d at (%g, %g), off the picture", i, sx, sy);
        if (in)
            memcpy(q[i], render_px(&img, (uint32_t)sx, (uint32_t)sy), 3);
        else
            rc = -1;
    }
    wg_image_free(&img);
    wg_fields_free(&f);
    return rc;
}

WG_TEST(render_water_side_ends_at_the_water)
{
    /* Where the lake meets the border the water has a side of its own,
     * which the bank's dry border vertex (held at its ground) makes a
     * triangle from the water's surface up to that vertex: above the
     * water's level it is the block's cut, soil, as the skirt under it.
     * It had been water, a band climbing the bank.  On the west side
     * (x = -3): at z = 0.375, between the ground (the water's level there,
     * 0.556) and the triangle's top (0.584); at z = -0.75, under the
     * water's surface and over the ground (0.3875). */
    static const float at[2][3] = {{-3.0f, 0.570f, 0.375f},
                                   {-3.0f, 0.47f, -0.75f}};
    uint8_t q[2][3];
    if (render_steep_side(2, at, q) != 0)
        return;
    CHECK(q[0][0] >= q[0][2], "the side above the water is %u %u %u, "
          "not soil", q[0][0], q[0][1], q[0][2]);
    CHECK(q[1][2] > q[1][0] + 30, "the side under the water is %u %u "
          "%u, not water", q[1][0], q[1][1], q[1][2]);
}

/* The water's side is not lit up just under its surface: the lake of
 * render_water_side_ends_at_the_water, a hair (0.006) under the water's
 * level and 0.1 under it.  The side had been the shallows' turquoise at
 * the surface, deep blue from 0.04 down: a band of that colour along every
 * water's side, a bright cyan line one pixel high where the side is seen
 * from afar (the default picture's lake at the block's edge, the sea's
 * sides).  A cut through water is looked into sideways, through much more
 * of it than its depth. */
WG_TEST(render_water_side_has_no_bright_rim)
{
    static const float at[2][3] = {{-3.0f, 0.55625f - 0.006f, -0.75f},
                                   {-3.0f, 0.55625f - 0.1f, -0.75f}};
    uint8_t q[2][3];
    if (render_steep_side(2, at, q) != 0)
        return;
    double top = render_luma3(q[0]), down = render_luma3(q[1]);
    CHECK(down > 0 && top < 1.25 * down, "the water's side: luma %.1f just "
          "under the surface, %.1f 0.1 down", top, down);
}

/* A bed in waves of 0.05 (slopes up to 0.4) and a level one, each under
 * 0.01 of water in the middle (|x|, |z| < 2), none beyond. */
static float render_rough_bed(float x, float z)
{
    return 0.5f + 0.05f * sinf(x * 8.0f) * sinf(z * 8.0f);
}

static float render_level_bed(float x, float z)
{
    (void)x, (void)z;
    return 0.5f;
}

static float render_sheet(float x, float z)
{
    return fabsf(x) < 2.0f && fabsf(z) < 2.0f ? 0.01f : 0.0f;
}

/* The standard deviation of the luminance of the map's pixels over the
 * middle of the world (|x|, |z| < 1.5). */
static double render_middle_spread(const wg_image *img)
{
    double sum = 0.0, sq = 0.0;
    size_t count = 0;
    for (uint32_t y = img->h / 4; y < img->h * 3 / 4; y++)
        for (uint32_t x = img->w / 4; x < img->w * 3 / 4; x++) {
            const uint8_t *p = img->rgb + ((size_t)y * img->w + x) * 3;
            double l = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
            sum += l, sq += l * l, count++;
        }
    double mean = sum / (double)count;
    return sqrt(sq / (double)count - mean * mean);
}

WG_TEST(render_bed_under_water_is_lit_as_level)
{
    /* Water of one depth over a bed in waves looks as it does over a level
     * bed (the sun at 35 degrees, above the waves' steepest slope, 22, so
     * that no wave shades another): the light that reaches the bed has
     * been scattered by the water, so its relief does not show.  Lit by
     * its own normals it had shown through as scales along the grid on
     * the shallow sheets the hydraulic stage leaves (here a spread of 4.85
     * against 0.71; now 1.06). */
    float (*const beds[2])(float, float) = {render_rough_bed,
                                            render_level_bed};
    double spread[2] = {0.0, 0.0};
    for (int i = 0; i < 2; i++) {
        wg_fields f;
        CHECK(render_hand_world(65, beds[i], render_sheet, &f) == 0);
        wg_render_opts o = wg_render_defaults;
        o.width = o.height = 200;
        o.aa = 1;
        o.sun_elevation = 35.0f;
        wg_image img = {0};
        CHECK(render_map(&f, o, &img) == 0);
        if (img.rgb)
            spread[i] = render_middle_spread(&img);
        wg_image_free(&img);
        wg_fields_free(&f);
    }
    CHECK(spread[0] < spread[1] + 2.0,
          "the luminance over the waves spreads %.2f, over the level bed "
          "%.2f", spread[0], spread[1]);
}

WG_TEST(render_map_ignores_the_camera)
{
    wg_fields f;
    CHECK(wg_make_world("scalar", &render_world, 0, &f) == 0);
    wg_render_opts o = wg_render_defaults;
    o.width = 120, o.height = 90;
    wg_image a = {0}, b = {0};
    CHECK(render_map(&f, o, &a) == 0);
    static const wg_camera cams[] = {
        {30, 70, 8, 45, 0.3f}, {120, -20, 9, 10, -3}, {0, 89, 0.1f, 150, 10}};
    for (size_t i = 0; i < sizeof cams / sizeof cams[0]; i++) {
        o.cam = cams[i];
        o.cull = (int)i % 2;
        o.threads = (uint32_t)i;
        CHECK(render_map(&f, o, &b) == 0);
        CHECK(a.rgb && b.rgb && memcmp(a.rgb, b.rgb, 120 * 90 * 3) == 0,
              "camera %zu changed the map", i);
        wg_image_free(&b);
    }
    /* Not the orbit view's picture. */
    o = wg_render_defaults;
    o.width = 120, o.height = 90;
    CHECK(render_it(&f, &o, &b, &(wg_render_stats){0}) == 0);
    CHECK(a.rgb && b.rgb && memcmp(a.rgb, b.rgb, (size_t)120 * 90 * 3) != 0);
    wg_image_free(&a);
    wg_image_free(&b);
    wg_fields_free(&f);
}

/* Run 'cmd', which writes the picture 'name' in the test's folder, and
 * read it as 8-bit RGB; NULL, the checks saying why, unless the run
 * succeeded and the picture is w x h. */
static uint8_t *render_run_png(const char *cmd, const char *name, uint32_t w,
                               uint32_t h)
{
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "%s: %s", cmd, c.err);
    wg_cli_free(&c);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", wg_tmpdir(), name);
    uint32_t pw = 0, ph = 0;
    uint8_t *rgb = wg_read_png(path, 8, 3, &pw, &ph, NULL, 0);
    CHECK(rgb && pw == w && ph == h, "%s: %ux%u", path, pw, ph);
    if (rgb && (pw != w || ph != h)) {
        free(rgb);
        rgb = NULL;
    }
    return rgb;
}

/* A map's water mirrors the sky, not the sun: seen straight down from
 * everywhere at once, a sun at the zenith had been reflected by every
 * lake, and a world under the sea (--sea-level 1) was a pure white square.
 * Every pixel of that world's map is now water blue, at any sun. */
WG_TEST(render_map_water_under_a_high_sun_stays_water)
{
    static const char *const suns[] = {"90", "85", "20"};
    for (int i = 0; i < 3; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "./worldgen --size 33 --mesh scalar -q "
                 "--sea-level 1 --view map --width 32 --height 32 --aa 1 "
                 "--sun-elevation %s --out mapsun.png", suns[i]);
        uint8_t *rgb = render_run_png(cmd, "mapsun.png", 32, 32);
        int white = 0;
        const uint8_t *first = NULL;
        for (uint32_t k = 0; rgb && k < 32 * 32; k++) {
            const uint8_t *q = rgb + 3 * k;
            if (!(q[2] > q[0] + 60 && q[0] < 100) && !white++)
                first = q;
        }
        CHECK(white == 0, "--sun-elevation %s: %d of 1024 pixels are not "
              "water, the first %u %u %u", suns[i], white,
              first ? first[0] : 0, first ? first[1] : 0,
              first ? first[2] : 0);
        free(rgb);
    }
}

/* The block's floor seen from straight below: the haze's glow toward the
 * sun followed each ray's bearing, which near the vertical turns through
 * every direction within a few pixels, and a wedge of glow fanned out from
 * the point overhead.  Now the floor round that point is even: pixels on a
 * ring about it differ by a few levels, not tens. */
WG_TEST(render_floor_from_below_has_no_wedge)
{
    uint8_t *rgb = render_run_png("./worldgen --size 16 --mesh scalar -q "
                                  "--elevation -89 --sun-elevation 5 --width "
                                  "96 --height 96 --aa 1 --out below.png",
                                  "below.png", 96, 96);
    int lo = 255, hi = 0;
    for (int a = 0; rgb && a < 64; a++) {
        double t = a * 6.283185307179586 / 64;
        int x = 48 + (int)lround(12 * cos(t)), y = 48 + (int)lround(12 * sin(t));
        const uint8_t *q = rgb + 3 * ((size_t)y * 96 + (size_t)x);
        int v = q[0] + q[1] + q[2];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    CHECK(hi - lo <= 9, "the floor round the point overhead spans %d..%d",
          lo, hi);
    free(rgb);
}

/* 8-bit sRGB to linear, below the tone curve's shoulder (shade.c). */
static double render_linear(uint8_t v)
{
    double c = v / 255.0;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double render_srgb(double l)
{
    double c = l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1 / 2.4) - 0.055;
    return 255.0 * c;
}

/* Compare the map 'small' (--aa 2) with the means, in linear light, of
 * the 2x2 blocks of the map 'big' (--aa 1) twice its size, channel by
 * channel, leaving out pixels as bright as the tone curve's shoulder
 * (where it is no longer sRGB): how many were compared, the largest
 * difference, and how many differ by more than 2. */
static void render_aa_compare(const wg_image *big, const wg_image *small,
                              int *compared, int *worst, int *off)
{
    *compared = *worst = *off = 0;
    for (uint32_t y = 0; y < small->h; y++)
        for (uint32_t x = 0; x < small->w; x++)
            for (int ch = 0; ch < 3; ch++) {
                double sum = 0;
                int bright = 0;
                for (uint32_t k = 0; k < 4; k++) {
                    uint8_t v =
                        render_px(big, 2 * x + k % 2, 2 * y + k / 2)[ch];
                    bright |= v > 200;
                    sum += render_linear(v);
                }
                uint8_t got = render_px(small, x, y)[ch];
                if (bright || got > 200)
                    continue;
                int d = abs((int)lround(render_srgb(sum / 4)) - got);
                *worst = d > *worst ? d : *worst;
                *off += d > 2;
                (*compared)++;
            }
}

WG_TEST(render_map_aa_averages_its_samples)
{
    /* --aa 2 at 100x100 samples where --aa 1 at 200x200 does, and each
     * pixel is the mean of its samples, to the 8 bits' rounding. */
    wg_fields f;
    CHECK(wg_make_world("scalar", &render_world, 0, &f) == 0);
    wg_render_opts o = wg_render_defaults;
    wg_image big = {0}, small = {0}, plain = {0};
    o.width = o.height = 200, o.aa = 1;
    CHECK(render_map(&f, o, &big) == 0);
    o.width = o.height = 100, o.aa = 2;
    CHECK(render_map(&f, o, &small) == 0);
    o.aa = 1;
    CHECK(render_map(&f, o, &plain) == 0);
    int compared, worst, off;
    if (big.rgb && small.rgb && plain.rgb) {
        render_aa_compare(&big, &small, &compared, &worst, &off);
        CHECK(compared > 25000 && worst <= 3, "%d compared, off by %d",
              compared, worst);
        /* And it is not the one sample per pixel of --aa 1. */
        int differ = 0;
        for (size_t i = 0; i < (size_t)100 * 100 * 3; i++)
            differ += small.rgb[i] != plain.rgb[i];
        CHECK(differ > 3000, "%d channels differ from --aa 1", differ);
    }
    wg_image_free(&big);
    wg_image_free(&small);
    wg_image_free(&plain);
    wg_fields_free(&f);

    /* A pixel much smaller than a cell and than the materials' noise
     * (here 0.01 units, a cell 0.19) is shaded once at its centre unless
     * it holds the water's edge: close to the mean of its samples all the
     * same (but at the sharpest material edges, the snow line and the
     * forest's, where one pixel in a thousand is a few levels off). */
    CHECK(render_hand_world(33, render_hill, render_lake, &f) == 0);
    o.width = o.height = 1200, o.aa = 1;
    CHECK(render_map(&f, o, &big) == 0);
    o.width = o.height = 600, o.aa = 2;
    CHECK(render_map(&f, o, &small) == 0);
    if (big.rgb && small.rgb) {
        render_aa_compare(&big, &small, &compared, &worst, &off);
        CHECK(compared > 900000 && off < compared / 500 && worst <= 16,
              "%d compared, %d off by more than 2, by up to %d", compared,
              off, worst);
    }
    wg_image_free(&big);
    wg_image_free(&small);
    wg_fields_free(&f);
}

WG_TEST(render_map_letterboxes_other_shapes)
{
    /* The world fills the centred square of the shorter side, exactly as
     * in a square picture of that side; the margins are the background. */
    wg_fields f;
    CHECK(render_hand_world(65, render_hill, render_lake, &f) == 0);
    wg_render_opts o = wg_render_defaults;
    o.width = o.height = 100;
    wg_image sq = {0};
    CHECK(render_map(&f, o, &sq) == 0);
    static const uint32_t shapes[][2] = {{160, 100}, {100, 170}, {161, 100},
                                         {100, 101}};
    static const uint8_t bg[3] = WG_MAP_BACKGROUND;
    for (size_t i = 0; sq.rgb && i < sizeof shapes / sizeof shapes[0]; i++) {
        o.width = shapes[i][0], o.height = shapes[i][1];
        wg_image img = {0};
        CHECK(render_map(&f, o, &img) == 0);
        if (!img.rgb)
            continue;
        uint32_t ox = (o.width - 100) / 2, oy = (o.height - 100) / 2;
        int margin = 1, same = 1;
        for (uint32_t y = 0; y < o.height; y++)
            for (uint32_t x = 0; x < o.width; x++) {
                const uint8_t *q = render_px(&img, x, y);
                if (x < ox || x >= ox + 100 || y < oy || y >= oy + 100)
                    margin &= memcmp(q, bg, 3) == 0;
                else
                    same &= memcmp(q, render_px(&sq, x - ox, y - oy), 3) == 0;
            }
        CHECK(margin && same, "%ux%u: margins %s, square %s", o.width,
              o.height, margin ? "ok" : "wrong", same ? "ok" : "wrong");
        wg_image_free(&img);
    }
    /* The world reaches the square's edges: no background inside it. */
    int inside = 0;
    for (uint32_t i = 0; sq.rgb && i < 100 * 100; i++)
        inside += memcmp(sq.rgb + 3 * i, bg, 3) == 0;
    CHECK(inside == 0, "%d background pixels in the square", inside);
    wg_image_free(&sq);
    wg_fields_free(&f);
}

WG_TEST(render_map_is_described_and_named)
{
    char buf[512];
    wg_render_opts o = wg_render_defaults;
    wg_render_describe(&o, buf, sizeof buf);
    CHECK(strcmp(buf, "--width 800 --height 600 --aa 2 --azimuth 215 "
                      "--elevation 25 --distance 9.5 --fov 45 --look 0.2 "
                      "--sun-azimuth 290 --sun-elevation 20") == 0,
          "%s", buf);
    o.view = WG_VIEW_MAP;
    o.sun_azimuth = 315.5f;
    wg_render_describe(&o, buf, sizeof buf);
    CHECK(strcmp(buf, "--view map --width 800 --height 600 --aa 2 "
                      "--sun-azimuth 315.5 --sun-elevation 20") == 0,
          "%s", buf);
    wg_render_view v = WG_VIEW_ORBIT;
    CHECK(wg_render_view_parse("map", &v) == 0 && v == WG_VIEW_MAP);
    CHECK(wg_render_view_parse("orbit", &v) == 0 && v == WG_VIEW_ORBIT);
    CHECK(wg_render_view_parse("Map", &v) == -1 &&
          wg_render_view_parse("", &v) == -1 && v == WG_VIEW_ORBIT);
    CHECK(strcmp(wg_render_view_name(WG_VIEW_MAP), "map") == 0 &&
          strcmp(wg_render_view_name(WG_VIEW_ORBIT), "orbit") == 0);
}

/* ---- memory and threads ---- */

WG_TEST(render_memory_is_predicted)
{
    /* wg_render_memory against the peak the render counted of its own
     * allocations (wg_render_alloc, and the picture), within 10%. */
    static const struct {
        uint32_t n, w, h, aa, threads;
        wg_render_view view;
    } cases[] = {
        {96, 160, 120, 2, 0, WG_VIEW_ORBIT},
        {33, 900, 700, 3, 1, WG_VIEW_ORBIT},
        {2, 64, 16, 1, 1024, WG_VIEW_ORBIT},
        {96, 16, 16, 4, 0, WG_VIEW_ORBIT},
        {96, 300, 200, 2, 0, WG_VIEW_MAP},
        {257, 40, 30, 1, 2, WG_VIEW_MAP},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_world world = render_world;
        world.size = cases[i].n, world.passes = 1, world.steps = 4;
        wg_fields f;
        if (wg_make_world("scalar", &world, 0, &f) != 0) {
            CHECK(0, "no world");
            continue;
        }
        wg_render_opts o = wg_render_defaults;
        o.width = cases[i].w, o.height = cases[i].h, o.aa = cases[i].aa;
        o.threads = cases[i].threads, o.view = cases[i].view;
        wg_image img = {0};
        wg_render_stats rs = {0};
        char err[WG_ERR_LEN];
        CHECK(wg_render(&f, world.sea, &o, &img, &rs, err) == 0, "%s", err);
        double want = wg_render_memory(&o, f.n);
        CHECK(fabs(want - rs.memory) <= 0.1 * rs.memory &&
                  rs.memory >= (double)o.width * o.height * 3,
              "case %zu: predicted %.0f, peak %.0f bytes", i, want, rs.memory);
        wg_image_free(&img);
        wg_fields_free(&f);
    }
    /* The CLI's worst case: 16384 x 16384 at --aa 4 is the picture (768
     * MiB) and a strip's keys a thread, not 8 bytes for every sample
     * (32 GiB). */
    wg_render_opts o = wg_render_defaults;
    o.width = o.height = 16384, o.aa = 4;
    double big = wg_render_memory(&o, 513);
    CHECK(big > 768.0 * 1048576 && big < 1.5 * 1073741824.0, "%.0f", big);
    o.view = WG_VIEW_MAP;
    CHECK(wg_render_memory(&o, 513) < big);
}

WG_TEST(render_without_its_threads_draws_the_same)
{
    /* A render's threads are one team that waits for all of its members
     * between steps: when a thread cannot be started (here each would
     * reserve a 4 GB stack under a 3 GB address-space limit), the render
     * runs every step on the caller's thread instead of waiting for it,
     * and draws the same picture, the map too. */
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    wg_cli c = wg_cli_sh(
        "for v in orbit map; do "
        "./worldgen --mesh scalar --size 64 --threads 2 --view $v -q "
        "--out two.png && "
        "(ulimit -s 4000000 && ulimit -v 3000000 && exec timeout 60 "
        "./worldgen --mesh scalar --size 64 --threads 2 --view $v -q "
        "--out one.png) && cmp one.png two.png && echo same; done");
    CHECK(c.status == 0 && strcmp(c.out, "same\nsame\n") == 0,
          "status %d: %s %s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(render_threads_beyond_cores_and_strips)
{
    /* 1024 threads asked: no more run than there are CPUs or strips of
     * 32 rows, the memory is that of those, and the picture the same as
     * one thread's. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    wg_fields f;
    CHECK(wg_make_world("scalar", &render_world, 0, &f) == 0);
    for (int map = 0; map < 2; map++)
        for (uint32_t h = 16; h <= 160; h += 144) {
            wg_render_opts o = wg_render_defaults;
            o.width = 160, o.height = h;
            o.view = map ? WG_VIEW_MAP : WG_VIEW_ORBIT;
            wg_image a = {0}, b = {0};
            wg_render_stats ra, rb;
            o.threads = 1;
            CHECK(render_it(&f, &o, &a, &ra) == 0);
            double one = wg_render_memory(&o, f.n);
            o.threads = 1024;
            double t0 = wg_now();
            CHECK(render_it(&f, &o, &b, &rb) == 0);
            double t1 = wg_now() - t0;
            uint32_t strips = (h + 31) / 32;
            CHECK(rb.threads >= 1 && (long)rb.threads <= cpus &&
                      rb.threads <= strips,
                  "%u threads for %u strips on %ld CPUs", rb.threads, strips,
                  cpus);
            CHECK(a.rgb && b.rgb &&
                  memcmp(a.rgb, b.rgb, (size_t)160 * h * 3) == 0);
            /* Memory grows with the threads that run, not those asked. */
            o.threads = rb.threads;
            double ran = wg_render_memory(&o, f.n);
            o.threads = 1024;
            CHECK(wg_render_memory(&o, f.n) == ran && ran >= one);
            CHECK(t1 < 5.0, "%g s", t1);
            wg_image_free(&a);
            wg_image_free(&b);
        }
    wg_fields_free(&f);
}

/* wg_camera_fit: at the distance it gives, every corner of the box is
 * inside the frame less its margin, and one is on that margin (a nearer
 * camera would cut the box), for cameras high and low, narrow and wide,
 * in wide and tall pictures. */
WG_TEST(render_camera_fit_keeps_the_block_inside)
{
    static const float cams[][6] = {
        /* azimuth, elevation, fov, look, width, height */
        {215, 25, 45, 0.2f, 800, 600}, {215, 89, 45, 0.2f, 800, 600},
        {0, 60, 20, 0.0f, 640, 480},   {130, -40, 90, 1.5f, 300, 900},
        {300, 5, 10, -2.0f, 1920, 1080}, {45, 89, 150, 0.2f, 64, 64},
    };
    const float lo[3] = {-3.0f, WG_BLOCK_FLOOR, -3.0f}, hi[3] = {3, 1, 3};
    const float margin = 0.04f;
    for (size_t i = 0; i < sizeof cams / sizeof cams[0]; i++) {
        wg_camera c = {.azimuth = cams[i][0], .elevation = cams[i][1],
                       .fov = cams[i][2], .look = cams[i][3]};
        const uint32_t w = (uint32_t)cams[i][4], h = (uint32_t)cams[i][5];
        c.distance = wg_camera_fit(&c, w, h, lo, hi, margin);
        CHECK(c.distance > 0.0f, "camera %zu: %g", i, c.distance);
        /* How far out of the frame less its margin the box reaches at a
         * distance (in half-frames: > 0 is cut). */
        double out[2];
        for (int k = 0; k < 2; k++) {
            wg_camera at = c;
            at.distance = c.distance * (k ? 0.99f : 1.0f);
            wg_eye v;
            wg_eye_make(&v, &at, w, h);
            out[k] = -1.0;
            for (int j = 0; j < 8; j++) {
                float p[3] = {j & 1 ? hi[0] : lo[0], j & 2 ? hi[1] : lo[1],
                              j & 4 ? hi[2] : lo[2]}, q[3];
                wg_eye_to_camera(&v, p, q);
                double sx = fabs(q[0] / q[2] * v.focal) / v.cx;
                double sy = fabs(q[1] / q[2] * v.focal) / v.cy;
                double m = (sx > sy ? sx : sy) - (1.0 - margin);
                out[k] = q[2] <= 0.0f ? 1.0 : m > out[k] ? m : out[k];
            }
        }
        CHECK(out[0] <= 1e-4 && out[0] > -1e-3,
              "camera %zu at %g: the box reaches %g past the margin", i,
              c.distance, out[0]);
        CHECK(out[1] > 0.0, "camera %zu 1%% nearer: %g, not cut", i, out[1]);
    }
}

/* Without --distance the camera stands at 9.5, or farther where the whole
 * block would not fit the picture: --elevation 60 cut the block's far and
 * near corners, 89 its top and bottom.  A lens wider than the default's
 * comes nearer, no nearer than the fit (--fov 90 had stood at 9.5, the
 * world a third of the picture wide; the lens's own 9.5 * tan 22.5 / tan
 * 45 = 3.94 would put the camera over the block).  The distance used is
 * in the picture's provenance; a --distance given is kept. */
WG_TEST(render_default_distance_fits_the_block)
{
    static const struct { const char *args, *want; } runs[] = {
        {"", "--distance 9.5 "},
        {"--elevation 60", "--distance 11.32 "},
        {"--fov 20", "--distance 19.52 "},
        {"--fov 46", "--distance 9.28 "}, /* 9.5 * tan 22.5 / tan 23 */
        {"--fov 90", "--distance 5.8 "},  /* the fit */
        {"--fov 90 --distance 9.5", "--distance 9.5 "},
        {"--elevation 60 --distance 9.5", "--distance 9.5 "},
        {"--elevation 60 --distance 30", "--distance 30 "},
        /* Past --distance's range (124681 would fit): its end, 1000, so
         * the provenance's command line is one worldgen takes. */
        {"--fov 1 --width 16 --height 4000", "--distance 1000 "},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "./worldgen --size 9 --mesh scalar -q "
                 "--aa 1 %s %s --out fit.png", runs[i].args,
                 strstr(runs[i].args, "--width") ? ""
                                                 : "--width 800 --height 600");
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 0, "%s: %s", cmd, c.err);
        wg_cli_free(&c);
        char path[512], text[2048] = "";
        snprintf(path, sizeof path, "%s/fit.png", wg_tmpdir());
        uint32_t w = 0, h = 0;
        uint8_t *px = wg_read_png(path, 8, 3, &w, &h, text, sizeof text);
        CHECK(px && strstr(text, runs[i].want), "'%s': wanted '%s' in %s",
              runs[i].args, runs[i].want, text);
        free(px);
    }
}

/* A low sun reddens: its light and the sky round it lose blue from 12
 * degrees down (a sun at 3 degrees had lit the land white under a midday
 * sky), and from 12 degrees up nothing changes (the default's 20). */
WG_TEST(render_low_sun_is_warm)
{
    wg_palette noon, high, low;
    wg_palette_make(&noon, 0.25f, 290, 45);
    wg_palette_make(&high, 0.25f, 290, 12);
    wg_palette_make(&low, 0.25f, 290, 3);
    CHECK(memcmp(&noon.sunlight, &high.sunlight, sizeof noon.sunlight) == 0 &&
              memcmp(&noon.glow, &high.glow, sizeof noon.glow) == 0 &&
              memcmp(&noon.horizon, &high.horizon, sizeof noon.horizon) == 0 &&
              noon.glow_gain == 1.0f,
          "the palette changes above 12 degrees");
    CHECK(low.sunlight.b / low.sunlight.r < 0.6f * noon.sunlight.b /
                                                noon.sunlight.r,
          "the low sun's light: %g %g %g", low.sunlight.r, low.sunlight.g,
          low.sunlight.b);
    /* The sky just above the horizon toward the sun. */
    float d[3];
    wg_direction(290, 2, d);
    wg_rgb a = wg_sky(&noon, d), b = wg_sky(&low, d);
    CHECK(b.b / b.r < 0.8f * (a.b / a.r), "toward the low sun the sky is "
          "%g %g %g, at noon %g %g %g", b.r, b.g, b.b, a.r, a.g, a.b);
}

/* The relief the light sees: it tilts a normal on dry ground, more where
 * the ground is steep; it is gone under water 0.002 deep and where a pixel
 * spans half its coarser octave's wavelength (1/40 of a unit); it varies
 * with the world position, and only with it. */
static float render_relief_tilt(float x, float z, float ny, float depth,
                                float foot)
{
    wg_ground g = {.x = x, .z = z, .h = 0.4f};
    float s = sqrtf(1.0f - ny * ny);
    g.n[0] = s, g.n[1] = ny, g.n[2] = 0.0f;
    float n[3] = {g.n[0], g.n[1], g.n[2]};
    wg_relief(&g, depth, foot, n);
    float dot = n[0] * g.n[0] + n[1] * g.n[1] + n[2] * g.n[2];
    float len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    CHECK(fabsf(len - 1.0f) < 1e-5f, "the normal stays a unit: %g", len);
    return acosf(dot > 1.0f ? 1.0f : dot) * 57.29578f;
}

WG_TEST(render_relief_fades_with_the_footprint_and_under_water)
{
    double level = 0.0, steep = 0.0;
    int moved = 0, points = 0;
    for (int i = 0; i < 400; i++) {
        float x = -3.0f + 0.0153f * (float)i, z = 2.9f - 0.0117f * (float)i;
        float a = render_relief_tilt(x, z, 1.0f, 0.0f, 0.001f);
        float b = render_relief_tilt(x, z, 0.7f, 0.0f, 0.001f);
        level += a, steep += b, points++;
        moved += a > 0.5f;
        CHECK(render_relief_tilt(x, z, 0.7f, 0.0f, 0.001f) == b,
              "the same point tilts alike");
        CHECK(render_relief_tilt(x, z, 0.7f, 0.002f, 0.001f) == 0.0f,
              "under 0.002 of water at (%g, %g)", x, z);
        /* A face of 81 degrees, down which noise of x and z would be
         * stretched into streaks: none. */
        CHECK(render_relief_tilt(x, z, 0.15f, 0.0f, 0.001f) == 0.0f,
              "a near-vertical face at (%g, %g)", x, z);
        CHECK(render_relief_tilt(x, z, 0.7f, 0.0f, 0.5f / 20.0f) == 0.0f,
              "a pixel of 1/40 unit at (%g, %g)", x, z);
    }
    level /= points, steep /= points;
    CHECK(moved > points / 2, "%d of %d level points tilted", moved, points);
    CHECK(level > 1.0 && level < 15.0, "the mean tilt on level ground: %g "
          "degrees", level);
    CHECK(steep > 1.5 * level, "steep %g degrees, level %g", steep, level);
    /* Half the footprint at which it is gone: the coarser octave alone,
     * less than with both. */
    float fine = 0.0f, coarse = 0.0f;
    for (int i = 0; i < 200; i++) {
        float x = 0.031f * (float)i - 3.0f;
        fine += render_relief_tilt(x, 0.5f, 1.0f, 0.0f, 0.001f);
        coarse += render_relief_tilt(x, 0.5f, 1.0f, 0.0f, 0.0125f);
    }
    CHECK(coarse > 0.0f && coarse < fine, "tilt %g with the coarser octave "
          "alone, %g with both", coarse, fine);
    CHECK(wg_relief_finest(0.001f) == 45.0f && wg_relief_finest(0.015f) ==
          20.0f && wg_relief_finest(0.025f) == 0.0f,
          "the finest octave shown: %g, %g, %g", wg_relief_finest(0.001f),
          wg_relief_finest(0.015f), wg_relief_finest(0.025f));
}

/* The relief's slope on level ground at (x, z), its pixel 'foot' wide:
 * the normal's tilt read back as the slope it is (-n.x / n.y, -n.z / n.y:
 * wg_relief's normalisation cancels). */
static void render_relief_slope(float x, float z, float foot, float *sx,
                                float *sz)
{
    wg_ground g = {.x = x, .z = z, .h = 0.4f, .n = {0.0f, 1.0f, 0.0f}};
    float n[3] = {0.0f, 1.0f, 0.0f};
    wg_relief(&g, 0.0f, foot, n);
    *sx = -n[0] / n[1];
    *sz = -n[2] / n[1];
}

/* A lattice noise's slopes lean toward its lattice's axes, so an octave
 * whose lattice is turned near a multiple of 90 degrees draws the ground
 * in stripes along the grid's (lit from the west, north-south stripes in
 * every map and close view).  Each octave alone: the coarse one where a
 * pixel of 0.012 units has faded the fine one out (and the coarse one not
 * at all), the fine one as the whole relief less that.  Of its slope's
 * square, the share that points within 10 degrees of the x or z axis is
 * 2/9 for a relief with no direction (the gradient noise of the relief
 * has 0.24 at most); the fine octave of value noise turned by 99 degrees
 * (9 from the axes) had 0.46 of it there. */
WG_TEST(render_relief_does_not_run_along_the_grid)
{
    double near[2] = {0.0, 0.0}, all[2] = {0.0, 0.0};
    for (int j = 0; j < 200; j++)
        for (int i = 0; i < 200; i++) {
            float x = -1.3f + 0.00937f * (float)i;
            float z = 0.7f + 0.00811f * (float)j;
            float ax, az, cx, cz;
            render_relief_slope(x, z, 0.0002f, &ax, &az);
            render_relief_slope(x, z, 0.012f, &cx, &cz);
            float s[2][2] = {{cx, cz}, {ax - cx, az - cz}};
            for (int o = 0; o < 2; o++) {
                double e = (double)s[o][0] * s[o][0] +
                           (double)s[o][1] * s[o][1];
                double a = fmod(atan2(s[o][1], s[o][0]) * 57.29578 + 360.0,
                                90.0);
                all[o] += e;
                near[o] += a < 10.0 || a > 80.0 ? e : 0.0;
            }
        }
    for (int o = 0; o < 2; o++)
        CHECK(all[o] > 0.0 && near[o] < 0.3 * all[o],
              "the %s octave: %.3f of its slope within 10 degrees of the "
              "axes", o ? "fine" : "coarse", near[o] / all[o]);
}

/* The standard deviation of the luminance over the w x w pixels from
 * (x0, y0). */
static double render_window_spread(const wg_image *img, uint32_t x0,
                                   uint32_t y0, uint32_t w)
{
    double sum = 0.0, sq = 0.0;
    for (uint32_t y = y0; y < y0 + w; y++)
        for (uint32_t x = x0; x < x0 + w; x++) {
            const uint8_t *p = render_px(img, x, y);
            double l = 0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2];
            sum += l, sq += l * l;
        }
    double n = (double)w * w, mean = sum / n;
    return sqrt(sq / n - mean * mean);
}

/* Level sand a thousandth above the test world's sea (0.25): one
 * material all over, so what varies is the relief (and the grain). */
static float render_beach(float x, float z)
{
    (void)x, (void)z;
    return 0.251f;
}

/* A level world seen straight down lies in one plane parallel to the
 * picture's, which the perspective draws at one scale all over: its
 * relief is as strong at the corners as in the middle, however wide the
 * view.  The relief's fade took a pixel's footprint from the distance to
 * the ground, not its depth, and at --fov 120 the corners (twice as far
 * as deep) had lost it: their luminance spread 2.4 against 4.6 in the
 * middle (now 4.4 and 4.7; the sand's grain is the rest). */
WG_TEST(render_relief_is_alike_across_a_wide_view)
{
    wg_fields f;
    CHECK(render_hand_world(129, render_beach, NULL, &f) == 0);
    wg_render_opts o = wg_render_defaults;
    o.width = o.height = 200;
    o.aa = 1;
    o.cam.elevation = 89.0f;
    o.cam.distance = 0.65f;
    o.cam.look = 0.251f;
    o.cam.fov = 120.0f;
    o.sun_elevation = 30.0f;
    wg_image img = {0};
    wg_render_stats rs;
    CHECK(render_it(&f, &o, &img, &rs) == 0);
    if (img.rgb) {
        double mid = render_window_spread(&img, 70, 70, 60), corner = 0.0;
        for (int k = 0; k < 4; k++)
            corner += render_window_spread(&img, k % 2 ? 160 : 0,
                                           k / 2 ? 160 : 0, 40) / 4.0;
        CHECK(mid > 2.0, "the middle's luminance spreads %.2f", mid);
        CHECK(corner > 0.75 * mid && corner < 1.33 * mid,
              "the corners' luminance spreads %.2f, the middle's %.2f",
              corner, mid);
    }
    wg_image_free(&img);
    wg_fields_free(&f);
}

/* Level ground at 0.2, under the sea at 1 in the haze test: deep water
 * everywhere, whose colour changes only slowly with the view's angle. */
static float render_flat(float x, float z)
{
    (void)x, (void)z;
    return 0.2f;
}

/* Level ground at 0.4, over the tests' sea. */
static float render_level_land(float x, float z)
{
    (void)x, (void)z;
    return 0.4f;
}

/* A camera over the surface by less than the depth the rasteriser clips
 * at (WG_EYE_NEAR) sees the ground under it cut away, as a camera inside
 * sees holes: it is told (camera_near, which worldgen warns of).  Half a
 * millimetre over level ground, looking straight down, had shown the sky
 * where the ground was, and no warning. */
WG_TEST(render_camera_nearer_than_the_clip_is_told)
{
    wg_fields f;
    CHECK(render_hand_world(33, render_level_land, NULL, &f) == 0);
    wg_render_opts o = wg_render_defaults;
    o.width = o.height = 32;
    o.aa = 1;
    o.cam.elevation = 89.0f;
    o.cam.distance = 0.1f;
    o.cam.fov = 60.0f;
    const float over[2] = {0.5f * WG_EYE_NEAR, 2.0f * WG_EYE_NEAR};
    uint8_t middle[2][3] = {{0}};
    for (int k = 0; k < 2; k++) {
        /* The camera's height is look + distance * sin(elevation). */
        o.cam.look = 0.4f + over[k] -
                     (float)(0.1 * sin(89.0 * 3.14159265358979323846 / 180));
        wg_image img = {0};
        wg_render_stats rs;
        CHECK(render_it(&f, &o, &img, &rs) == 0);
        CHECK(!rs.camera_inside && rs.camera_near == (k == 0),
              "%g over the ground (at %g, the surface at %g): inside %d, "
              "near %d", over[k], rs.camera_y, rs.surface_y,
              rs.camera_inside, rs.camera_near);
        if (img.rgb)
            memcpy(middle[k], render_px(&img, 16, 16), 3);
        wg_image_free(&img);
    }
    /* And it is so: the ground under the nearer camera is gone. */
    int d = 0;
    for (int c = 0; c < 3; c++)
        d += abs(middle[0][c] - middle[1][c]);
    CHECK(d > 30, "the middle pixel %u %u %u, 2 mm up %u %u %u",
          middle[0][0], middle[0][1], middle[0][2], middle[1][0],
          middle[1][1], middle[1][2]);
    wg_fields_free(&f);
}

/* The colour of img at sample position (sx, sy) of a picture drawn at
 * --aa aa, channel ch: bilinear between the pixels' centres. */
static double render_at(const wg_image *img, float sx, float sy, uint32_t aa,
                        int ch)
{
    double x = sx / (double)aa - 0.5, y = sy / (double)aa - 0.5;
    uint32_t i = (uint32_t)x, j = (uint32_t)y;
    double u = x - i, v = y - j;
    double top = render_px(img, i, j)[ch] * (1 - u) +
                 render_px(img, i + 1, j)[ch] * u;
    double bot = render_px(img, i, j + 1)[ch] * (1 - u) +
                 render_px(img, i + 1, j + 1)[ch] * u;
    return top * (1 - v) + bot * v;
}

/* The haze begins about where the block's near edge stands, whatever the
 * camera looks at: one looking at a point far above or below the block
 * (--look 10, --look -10) had taken the haze's start from its distance to
 * that point, and hazed the whole block grey or drawn it too clear.  Two
 * cameras at one place, one looking at the centre of the block's floor,
 * one down at a point 10 below it, draw each point of the block alike. */
WG_TEST(render_haze_starts_at_the_block_not_the_look_point)
{
    wg_fields f;
    if (render_hand_world(33, render_flat, NULL, &f) != 0) {
        CHECK(0, "no world");
        return;
    }
    /* The eye 6 units out from the block's centre and 8 up. */
    const double out = 6.0, up = 8.0, deg = 180.0 / 3.14159265358979323846;
    const float looks[2] = {WG_BLOCK_FLOOR, -10.0f};
    const uint32_t aa = 2;
    wg_image img[2] = {{0}, {0}};
    wg_eye eye[2];
    for (int k = 0; k < 2; k++) {
        wg_render_opts o = wg_render_defaults;
        o.width = 320, o.height = 240, o.aa = aa;
        o.cam.look = looks[k];
        o.cam.elevation = (float)(atan2(up - looks[k], out) * deg);
        o.cam.distance = (float)hypot(up - looks[k], out);
        o.cam.fov = 90.0f;
        char err[WG_ERR_LEN];
        wg_render_stats rs;
        CHECK(wg_render(&f, 1.0f, &o, &img[k], &rs, err) == 0, "%s", err);
        wg_eye_make(&eye[k], &o.cam, o.width * aa, o.height * aa);
    }
    /* Points on the water's surface, near and far. */
    static const float pts[3][3] = {
        {0.0f, 1.0f, 0.0f}, {-1.5f, 1.0f, 1.5f}, {1.5f, 1.0f, -2.0f}};
    for (int i = 0; img[0].rgb && img[1].rgb && i < 3; i++) {
        double c[2][3];
        for (int k = 0; k < 2; k++) {
            float p[3];
            wg_eye_to_camera(&eye[k], pts[i], p);
            float sx = eye[k].cx + p[0] / p[2] * eye[k].focal;
            float sy = eye[k].cy - p[1] / p[2] * eye[k].focal;
            CHECK(sx > aa && sy > aa && sx < eye[k].w - 2.0f * aa &&
                      sy < eye[k].h - 2.0f * aa,
                  "point %d is out of picture %d", i, k);
            for (int ch = 0; ch < 3; ch++)
                c[k][ch] = render_at(&img[k], sx, sy, aa, ch);
        }
        double most = 0;
        for (int ch = 0; ch < 3; ch++)
            most = fmax(most, fabs(c[0][ch] - c[1][ch]));
        CHECK(most <= 1.5,
              "point %d: %.1f %.1f %.1f looking at the block, %.1f %.1f "
              "%.1f looking under it", i, c[0][0], c[0][1], c[0][2], c[1][0],
              c[1][1], c[1][2]);
    }
    wg_image_free(&img[0]);
    wg_image_free(&img[1]);
    wg_fields_free(&f);
}

/* The sun at the horizon lights what it reaches: its light fades with the
 * share of its disc above the horizon (from half a degree up to half a
 * degree down), on the ground as on the block's sides.  The ground had
 * been lit by nothing from 0 degrees down, while the side facing the sun
 * kept half its light: at --sun-elevation 0 the west side shone orange
 * under dark land, and a thousandth of a degree up every peak lit at
 * once. */
WG_TEST(render_sun_at_the_horizon_lights_what_it_reaches)
{
    wg_fields f;
    CHECK(wg_make_world("scalar", &render_world, 0, &f) == 0);
    static const float els[3] = {-0.001f, 0.0f, 0.001f};
    wg_image img[3] = {{0}, {0}, {0}};
    for (int k = 0; k < 3; k++) {
        wg_render_opts o = wg_render_defaults;
        o.width = 200, o.height = 150, o.aa = 1;
        o.sun_elevation = els[k];
        CHECK(render_it(&f, &o, &img[k], &(wg_render_stats){0}) == 0);
    }
    for (int k = 0; k < 2; k++) {
        size_t apart = 0;
        for (size_t i = 0; img[k].rgb && img[2].rgb && i < 200 * 150 * 3;
             i++)
            apart += abs(img[k].rgb[i] - img[2].rgb[i]) > 2;
        CHECK(apart == 0,
              "%zu channels differ by more than 2 between the sun at %g "
              "and at %g degrees", apart, els[k], els[2]);
    }
    for (int k = 0; k < 3; k++)
        wg_image_free(&img[k]);
    wg_fields_free(&f);
}

/* Sunlit snow keeps its shading under a high sun: snow on level ground
 * and on a face turned to the sun's bearing but standing upright (the
 * sun's light on it 0.87 and 0.5) are 1.9 and 1.1 in linear light, and
 * the tone curve's shoulder had made them 254 and 246, so every sunlit
 * slope of snow was the same white (shade.c, SHADE_KNEE).  Below the
 * knee the curve is sRGB's, and it is white only at the table's end. */
WG_TEST(render_sunlit_snow_is_not_clipped)
{
    wg_palette p;
    wg_palette_make(&p, 0.25f, 290, 60);
    float up[3] = {0.0f, 1.0f, 0.0f}, face[3];
    wg_direction(290, 0, face);
    wg_rgb level = wg_light(&p, p.mat.snow, up, 1.0f);
    wg_rgb side = wg_light(&p, p.mat.snow, face, 1.0f);
    int a = wg_srgb8(level.g), b = wg_srgb8(side.g);
    CHECK(a < 252 && a - b >= 8, "sunlit snow: level %d, upright face %d",
          a, b);
    CHECK(wg_srgb8(0.5f) == 188 && wg_srgb8(4.0f) == 255,
          "the curve: 0.5 -> %d, 4 -> %d", wg_srgb8(0.5f), wg_srgb8(4.0f));
    int last = 0, steps = 0;
    for (int i = 0; i <= 400; i++) {
        int v = wg_srgb8((float)i * 0.01f);
        steps += v < last;
        last = v;
    }
    CHECK(steps == 0, "the curve falls %d times over 0..4", steps);
}
