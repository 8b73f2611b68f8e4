/* test_spec.c: the lattice and the scalar backend against SPEC.md: its
 * reference values, the conformance vectors, and windows (tiles) that must
 * equal the whole world. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/scalar.h"
#include "test.h"

WG_TEST(lattice_reference_values)
{
    /* SPEC.md: seed 1234 gives these three entries exactly. */
    static float lat[WG_LATTICE_R * WG_LATTICE_R];
    wg_lattice_fill(lat, 1234);
    CHECK(lat[0] == 0.7306665182113647f, "L[0] = %.17g", lat[0]);
    CHECK(lat[1] == 0.5928898453712463f, "L[1] = %.17g", lat[1]);
    CHECK(lat[65535] == 0.2903295159339905f, "L[65535] = %.17g", lat[65535]);
    for (int k = 0; k < WG_LATTICE_R * WG_LATTICE_R; k++)
        if (!(lat[k] >= 0.0f && lat[k] < 1.0f)) {
            CHECK(0, "L[%d] = %g is outside [0, 1)", k, lat[k]);
            break;
        }
}

WG_TEST(lattice_seed_matters)
{
    static float a[WG_LATTICE_R * WG_LATTICE_R], b[WG_LATTICE_R * WG_LATTICE_R];
    wg_lattice_fill(a, 0);
    wg_lattice_fill(b, 1);
    CHECK(memcmp(a, b, sizeof a) != 0, "seeds 0 and 1 give one lattice");
}

WG_TEST(consts_are_binary32_of_spec)
{
    wg_world w = {.size = 64, .octaves = 6, .passes = 12, .seed = 1};
    wg_consts c;
    wg_consts_init(&c, &w);
    CHECK(c.inv_n == 1.0f / 63.0f);
    CHECK(c.talus == 4.0f / 63.0f);
    CHECK(c.inv_norm == 1.0f / 1.96875f, "norm of 6 octaves is 1.96875");
    CHECK(c.freq[5] == 32.0f && c.amp[5] == 0.03125f && c.offs[5] == 85.0f);
    float s = 6.0f / 63.0f;
    CHECK(c.k1 == 1.0f / s && c.k2 == 1.0f / (2.0f * s));
}

/* Compare one field with its vector file, bit for bit. */
static void spec_check_vector(const char *name, const char *field,
                              const float *f, size_t n)
{
    char path[256];
    size_t len = 0;
    snprintf(path, sizeof path, "tests/vectors/%s.%s.f32", name, field);
    float *v = wg_read_file(path, &len);
    CHECK(v != NULL, "cannot read %s", path);
    if (!v)
        return;
    CHECK(len == n * sizeof(float), "%s: %zu bytes", path, len);
    if (len == n * sizeof(float)) {
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < n; i++)
            if (memcmp(&v[i], &f[i], sizeof *f) != 0 && bad++ == 0)
                first = i;
        CHECK(bad == 0, "%s: %zu cells differ, first at %zu: %.9g != %.9g",
              path, bad, first, f[first], v[first]);
    }
    free(v);
}

static void spec_check_world(const char *backend, const wg_world *w,
                             const char *name)
{
    wg_world terrain_only = *w;
    terrain_only.passes = 0;
    wg_fields t, f;
    size_t n = wg_cells(w->size);
    CHECK(wg_make_world(backend, &terrain_only, 0, &t) == 0);
    CHECK(wg_make_world(backend, w, 0, &f) == 0);
    if (t.height)
        spec_check_vector(name, "terrain", t.height, n);
    if (f.height) {
        spec_check_vector(name, "height", f.height, n);
        spec_check_vector(name, "nx", f.nx, n);
        spec_check_vector(name, "ny", f.ny, n);
        spec_check_vector(name, "nz", f.nz, n);
    }
    wg_fields_free(&t);
    wg_fields_free(&f);
}

WG_TEST(scalar_matches_vectors_64)
{
    wg_world w = {.size = 64, .octaves = 6, .passes = 12, .seed = 1234};
    spec_check_world("scalar", &w, "s64_o6_e12_seed1234");
}

WG_TEST(scalar_matches_vectors_37)
{
    wg_world w = {.size = 37, .octaves = 3, .passes = 5, .seed = 0xdeadbeef};
    spec_check_world("scalar", &w, "s37_o3_e5_seed0xdeadbeef");
}

/* A window of the world computed on its own, from a view holding only its
 * neighbourhood, must equal the same cells of the whole world. */
WG_TEST(scalar_windows_equal_whole_world)
{
    const uint32_t n = 53;
    wg_world w = {.size = n, .octaves = 5, .passes = 1, .seed = 99};
    wg_consts c;
    static float lat[WG_LATTICE_R * WG_LATTICE_R];
    wg_consts_init(&c, &w);
    wg_lattice_fill(lat, w.seed);
    size_t cells = wg_cells(n);
    float *h = malloc(cells * 4), *e = malloc(cells * 4), *nx = malloc(cells * 4),
          *ny = malloc(cells * 4), *nz = malloc(cells * 4);
    wg_rect all = wg_rect_world(n);
    wg_view vh = {h, all}, ve = {e, all}, vx = {nx, all}, vy = {ny, all},
            vz = {nz, all};
    wg_scalar_terrain(&c, lat, all, &vh);
    wg_scalar_erosion_pass(&c, &vh, all, &ve);
    wg_scalar_normals(&c, &ve, all, &vx, &vy, &vz);

    /* Windows at corners, edges and inside, including 1-cell ones. */
    const wg_rect wins[] = {
        {0, 0, 7, 5}, {n - 9, 0, 9, 4}, {0, n - 3, 11, 3}, {n - 1, n - 1, 1, 1},
        {20, 17, 13, 9}, {1, 1, 1, 1}, {0, 30, n, 2}, {40, 0, 3, n},
    };
    for (size_t k = 0; k < sizeof wins / sizeof wins[0]; k++) {
        wg_rect win = wins[k];
        /* The halo: the window grown by one cell, clipped to the world. */
        uint32_t hx0 = win.x ? win.x - 1 : 0, hy0 = win.y ? win.y - 1 : 0;
        uint32_t hx1 = win.x + win.w < n ? win.x + win.w + 1 : n;
        uint32_t hy1 = win.y + win.h < n ? win.y + win.h + 1 : n;
        wg_rect halo = {hx0, hy0, hx1 - hx0, hy1 - hy0};
        size_t hcells = (size_t)halo.w * halo.h, wcells = (size_t)win.w * win.h;
        float *th = malloc(hcells * 4), *te = malloc(wcells * 4);
        float *tx = malloc(wcells * 4), *ty = malloc(wcells * 4),
              *tz = malloc(wcells * 4), *he = malloc(hcells * 4);
        wg_view vth = {th, halo}, vte = {te, win}, vhe = {he, halo};
        wg_view vtx = {tx, win}, vty = {ty, win}, vtz = {tz, win};

        wg_scalar_terrain(&c, lat, halo, &vth);
        wg_scalar_erosion_pass(&c, &vth, win, &vte);
        /* normals of the window read the eroded heights of its halo */
        for (uint32_t y = 0; y < halo.h; y++)
            memcpy(he + (size_t)y * halo.w, e + (size_t)(halo.y + y) * n + halo.x,
                   halo.w * 4);
        wg_scalar_normals(&c, &vhe, win, &vtx, &vty, &vtz);

        int bad = 0;
        for (uint32_t y = 0; y < win.h; y++)
            for (uint32_t x = 0; x < win.w; x++) {
                size_t gi = (size_t)(win.y + y) * n + win.x + x;
                size_t wi = (size_t)y * win.w + x;
                size_t hi = (size_t)(win.y + y - halo.y) * halo.w + win.x + x - halo.x;
                bad += memcmp(&th[hi], &h[gi], 4) != 0;
                bad += memcmp(&te[wi], &e[gi], 4) != 0;
                bad += memcmp(&tx[wi], &nx[gi], 4) != 0;
                bad += memcmp(&ty[wi], &ny[gi], 4) != 0;
                bad += memcmp(&tz[wi], &nz[gi], 4) != 0;
            }
        CHECK(bad == 0, "window %u,%u %ux%u: %d values differ", win.x, win.y,
              win.w, win.h, bad);
        free(th), free(te), free(tx), free(ty), free(tz), free(he);
    }
    free(h), free(e), free(nx), free(ny), free(nz);
}

WG_TEST(scalar_erosion_conserves_mass)
{
    /* Every pair exchanges symmetrically: the total height stays put up to
     * binary32 rounding. */
    wg_world w0 = {.size = 96, .octaves = 6, .passes = 0, .seed = 5};
    wg_world w1 = w0;
    w1.passes = 40;
    wg_fields a, b;
    CHECK(wg_make_world("scalar", &w0, 0, &a) == 0);
    CHECK(wg_make_world("scalar", &w1, 0, &b) == 0);
    if (a.height && b.height) {
        double sa = 0, sb = 0, moved = 0;
        for (size_t i = 0; i < wg_cells(96); i++) {
            sa += a.height[i];
            sb += b.height[i];
            moved += a.height[i] > b.height[i] ? a.height[i] - b.height[i] : 0;
        }
        CHECK(moved > 1.0, "erosion moved only %g", moved);
        CHECK(sa - sb < 1e-3 && sb - sa < 1e-3, "mass %g became %g", sa, sb);
    }
    wg_fields_free(&a);
    wg_fields_free(&b);
}

WG_TEST(scalar_heights_in_unit_range_and_normals_unit)
{
    wg_world w = {.size = 2, .octaves = 16, .passes = 3, .seed = UINT64_MAX};
    for (uint32_t n = 2; n <= 130; n += 64) {
        w.size = n;
        wg_fields f;
        CHECK(wg_make_world("scalar", &w, 0, &f) == 0);
        if (!f.height)
            continue;
        for (size_t i = 0; i < wg_cells(n); i++) {
            float l2 = f.nx[i] * f.nx[i] + f.ny[i] * f.ny[i] + f.nz[i] * f.nz[i];
            if (!(f.height[i] >= 0.0f && f.height[i] <= 1.0f) ||
                !(l2 > 0.9999f && l2 < 1.0001f) || !(f.ny[i] > 0.0f)) {
                CHECK(0, "size %u cell %zu: h %g, |n|^2 %g", n, i, f.height[i], l2);
                break;
            }
        }
        wg_fields_free(&f);
    }
}

/* SPEC v2, stage 1: the noise is sampled at x / (N - 1), so a 513 preview
 * is exactly the terrain of a 2049 build at every vertex they share (every
 * fourth one of 2049), to the bit. */
static void spec_check_preview(uint32_t small, uint32_t big, uint64_t seed)
{
    wg_world ws = {.size = small, .octaves = 8, .passes = 0, .seed = seed};
    wg_world wb = ws;
    wb.size = big;
    wg_consts cs, cb;
    static float lat[WG_LATTICE_R * WG_LATTICE_R];
    wg_consts_init(&cs, &ws);
    wg_consts_init(&cb, &wb);
    wg_lattice_fill(lat, seed);
    const uint32_t step = (big - 1) / (small - 1);
    float *hs = malloc(wg_cells(small) * sizeof(float));
    float *row = malloc((size_t)big * sizeof(float));
    wg_view vs = {hs, wg_rect_world(small)};
    wg_scalar_terrain(&cs, lat, wg_rect_world(small), &vs);
    size_t bad = 0, first = 0;
    for (uint32_t y = 0; y < small; y++) {
        /* One row of the big world at a time: only its shared rows. */
        wg_rect r = {0, y * step, big, 1};
        wg_view vb = {row, r};
        wg_scalar_terrain(&cb, lat, r, &vb);
        for (uint32_t x = 0; x < small; x++)
            if (memcmp(&hs[(size_t)y * small + x], &row[x * step], 4) != 0 &&
                bad++ == 0)
                first = (size_t)y * small + x;
    }
    CHECK(bad == 0, "%u against %u, seed %llu: %zu shared vertices differ, "
          "first at %zu", small, big, (unsigned long long)seed, bad, first);
    free(hs);
    free(row);
}

WG_TEST(terrain_preview_equals_bigger_world_at_shared_vertices)
{
    spec_check_preview(513, 2049, 1234);
    spec_check_preview(257, 1025, 0xdeadbeef);
    spec_check_preview(1001, 2001, 7);
}

/* ------------------------------------------------ stage 3, hydraulic */

/* The stage 3 vectors (height, water, sediment), made from SPEC.md's text
 * by an independent implementation, reproduced by 'backend' to the bit. */
void wg_spec_check_hydraulic_vectors(const char *backend, int threads)
{
    const struct {
        wg_world w;
        const char *name;
    } cases[] = {
        {{.size = 64, .octaves = 6, .passes = 12, .steps = 60, .sea = 0.3f,
          .seed = 1234}, "s64_o6_e12_h60_sea0.3_seed1234"},
        {{.size = 37, .octaves = 3, .passes = 5, .steps = 25, .sea = 0.25f,
          .seed = 0xdeadbeef}, "s37_o3_e5_h25_sea0.25_seed0xdeadbeef"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_fields f;
        size_t n = wg_cells(cases[i].w.size);
        if (wg_make_world(backend, &cases[i].w, threads, &f) != 0) {
            CHECK(0, "%s cannot make %s", backend, cases[i].name);
            continue;
        }
        spec_check_vector(cases[i].name, "height", f.height, n);
        spec_check_vector(cases[i].name, "water", f.water, n);
        spec_check_vector(cases[i].name, "sediment", f.sediment, n);
        wg_fields_free(&f);
    }
}

WG_TEST(scalar_matches_hydraulic_vectors)
{
    wg_spec_check_hydraulic_vectors("scalar", 0);
}

/* r grown by g cells on every side, cut at the N-sided world's border. */
static wg_rect spec_grow(wg_rect r, uint32_t g, uint32_t n)
{
    uint32_t x0 = r.x > g ? r.x - g : 0, y0 = r.y > g ? r.y - g : 0;
    uint32_t x1 = r.x + r.w + g < n ? r.x + r.w + g : n;
    uint32_t y1 = r.y + r.h + g < n ? r.y + r.h + g : n;
    wg_rect o = {x0, y0, x1 - x0, y1 - y0};
    return o;
}

/* Stage 3 of world 'w' (no thermal passes) over the window 'win' alone,
 * from the terrain of its halo (2 * steps cells), as a tile of a huge world
 * would be made: height, water and sediment of the window, and (when
 * 'carried' is not NULL) the sediment the water still carries after the
 * last step, win.w * win.h floats each (caller frees). */
static void spec_hydraulic_window(const wg_world *w, wg_rect win, float **h,
                                  float **wat, float **sed, float **carried)
{
    wg_consts c;
    static float lat[WG_LATTICE_R * WG_LATTICE_R];
    wg_consts_init(&c, w);
    wg_lattice_fill(lat, w->seed);
    const uint32_t n = w->size, steps = w->steps;
    wg_rect r0 = spec_grow(win, 2 * steps, n);
    size_t cells = (size_t)r0.w * r0.h, wc = (size_t)win.w * win.h;
    float *buf[10];
    for (int i = 0; i < 10; i++)
        buf[i] = calloc(cells, sizeof(float));
    float *b[2] = {buf[0], buf[1]}, *wa[2] = {buf[2], buf[3]},
          *s[2] = {buf[4], buf[5]}, *p = buf[6], *q = buf[7], *b0 = buf[8],
          *mean = buf[9];
#define RV(ptr) ((wg_view){(ptr), r0})
    wg_scalar_terrain(&c, lat, r0, &RV(b[0]));
    wg_scalar_hydraulic_start(&c, &RV(b[0]), r0, &RV(b[0]), &RV(wa[0]),
                              &RV(s[0]), &RV(mean));
    memcpy(b0, b[0], cells * sizeof(float));
    for (uint32_t i = 0; i < steps; i++) {
        int a = (int)(i & 1), z = a ^ 1;
        uint32_t left = 2 * (steps - i); /* halo still needed, this step in */
        wg_rect rr = spec_grow(win, left - 1, n), rs = spec_grow(win, left - 2, n);
        wg_scalar_hydraulic_route(&c, &RV(b[a]), &RV(wa[a]), rr, &RV(p), &RV(q));
        const wg_view in[6] = {RV(b[a]), RV(wa[a]), RV(s[a]),
                               RV(p),    RV(q),     RV(b0)};
        const wg_view out[3] = {RV(b[z]), RV(wa[z]), RV(s[z])};
        const wg_view *pin[6] = {&in[0], &in[1], &in[2],
                                 &in[3], &in[4], &in[5]};
        const wg_view *pout[3] = {&out[0], &out[1], &out[2]};
        wg_scalar_hydraulic_step(&c, pin, rs, pout, &RV(mean));
    }
    int a = (int)(steps & 1);
    *h = malloc(wc * sizeof(float));
    *wat = malloc(wc * sizeof(float));
    *sed = malloc(wc * sizeof(float));
    wg_view vh = {*h, win}, vs = {*sed, win};
    wg_scalar_hydraulic_settle(&c, &RV(b[a]), &RV(wa[a]), &RV(mean), &RV(b0),
                               win, &vh, &RV(wa[a]), &vs);
    if (carried)
        *carried = malloc(wc * sizeof(float));
    for (uint32_t y = 0; y < win.h; y++) {
        size_t at = (size_t)(win.y + y - r0.y) * r0.w + (win.x - r0.x);
        memcpy(*wat + (size_t)y * win.w, wa[a] + at, win.w * sizeof(float));
        if (carried)
            memcpy(*carried + (size_t)y * win.w, s[a] + at,
                   win.w * sizeof(float));
    }
#undef RV
    for (int i = 0; i < 10; i++)
        free(buf[i]);
}

/* SPEC "Windows and tiles": a window of the hydraulic stage computed from
 * its halo alone equals the same cells of the whole world, to the bit. */
WG_TEST(scalar_hydraulic_windows_equal_whole_world)
{
    wg_world w = {.size = 61, .octaves = 5, .passes = 0, .steps = 9,
                  .sea = 0.3f, .seed = 4242};
    wg_fields f;
    CHECK(wg_make_world("scalar", &w, 0, &f) == 0);
    if (!f.height)
        return;
    const uint32_t n = w.size;
    const wg_rect wins[] = {
        {0, 0, 9, 7}, {n - 12, 0, 12, 5}, {0, n - 4, 17, 4}, {n - 1, n - 1, 1, 1},
        {23, 19, 15, 11}, {30, 30, 1, 1}, {0, 40, n, 3}, {44, 0, 2, n},
    };
    for (size_t k = 0; k < sizeof wins / sizeof wins[0]; k++) {
        wg_rect win = wins[k];
        float *h, *wat, *sed;
        spec_hydraulic_window(&w, win, &h, &wat, &sed, NULL);
        int bad = 0;
        for (uint32_t y = 0; y < win.h; y++)
            for (uint32_t x = 0; x < win.w; x++) {
                size_t gi = (size_t)(win.y + y) * n + win.x + x;
                size_t wi = (size_t)y * win.w + x;
                bad += memcmp(&h[wi], &f.height[gi], 4) != 0;
                bad += memcmp(&wat[wi], &f.water[gi], 4) != 0;
                bad += memcmp(&sed[wi], &f.sediment[gi], 4) != 0;
            }
        CHECK(bad == 0, "window %u,%u %ux%u: %d values differ", win.x, win.y,
              win.w, win.h, bad);
        free(h), free(wat), free(sed);
    }
    wg_fields_free(&f);
}

/* With no steps the stage changes no height, fills the sea and moves no
 * sediment. */
WG_TEST(scalar_hydraulic_zero_steps_is_the_sea_alone)
{
    wg_world w = {.size = 70, .octaves = 6, .passes = 3, .steps = 0,
                  .sea = 0.35f, .seed = 77};
    wg_world none = w;
    none.sea = 0.0f;
    wg_fields f, g;
    CHECK(wg_make_world("scalar", &w, 0, &f) == 0);
    CHECK(wg_make_world("scalar", &none, 0, &g) == 0);
    if (!f.height || !g.height)
        return;
    size_t sea = 0;
    for (size_t i = 0; i < wg_cells(w.size); i++) {
        CHECK(memcmp(&f.height[i], &g.height[i], 4) == 0, "height %zu", i);
        float want = f.height[i] < w.sea ? w.sea - f.height[i] : 0.0f;
        if (f.water[i] != want || f.sediment[i] != 0.0f || g.water[i] != 0.0f) {
            CHECK(0, "cell %zu: water %g (want %g), sediment %g", i,
                  f.water[i], want, f.sediment[i]);
            break;
        }
        sea += f.water[i] > 0.0f;
    }
    CHECK(sea > 0 && sea < wg_cells(w.size), "%zu cells of sea", sea);
    wg_fields_free(&f);
    wg_fields_free(&g);
}

/* On a world of the noise, the water cuts valleys, carries a load, stands
 * on land and holds the sea level (its ground's balance: in a bowl,
 * scalar_hydraulic_conserves_ground_in_a_bowl; here some of the load
 * leaves the world over its edge). */
WG_TEST(scalar_hydraulic_cuts_valleys)
{
    wg_world w = {.size = 129, .octaves = 6, .passes = 0, .steps = 120,
                  .sea = 0.25f, .seed = 1234};
    wg_rect all = {0, 0, w.size, w.size};
    float *h = NULL, *wat = NULL, *sed = NULL, *carried = NULL;
    spec_hydraulic_window(&w, all, &h, &wat, &sed, &carried);
    if (!h || !wat || !sed || !carried) {
        CHECK(0, "out of memory");
        goto out;
    }
    double net = 0, moved = 0, load = 0, wet = 0, deepest = 0, bump = 0;
    for (size_t i = 0; i < wg_cells(w.size); i++) {
        /* the sea is flat at the sea level */
        if (h[i] < w.sea && fabs(h[i] + wat[i] - w.sea) > bump)
            bump = fabs(h[i] + wat[i] - w.sea);
        net += sed[i];
        moved += fabs(sed[i]);
        load += carried[i];
        wet += wat[i] > 1e-3f && h[i] >= w.sea;
        deepest = sed[i] < deepest ? sed[i] : deepest;
    }
    CHECK(moved > 1.0, "the water moved only %g of ground", moved);
    /* At the end the water carries 0.8% of the ground it moved (4.3% when
     * KF was 0.5 at every size, which let this world's streams carry four
     * times what a 513 world's do). */
    CHECK(load > 2e-3 * moved, "the water carries only %g of %g moved", load,
          moved);
    CHECK(net < 0, "the ground gained %g", net);
    CHECK(deepest < -0.005, "no valley deeper than %g was cut", -deepest);
    CHECK(wet > 0, "no water stands on land");
    CHECK(bump < 1e-6, "the sea's surface is %g off the sea level", bump);
out:
    free(h);
    free(wat);
    free(sed);
    free(carried);
}

/* Cells more than 0.001 above every one of their eight neighbours, in
 * the field v (+ add, when not NULL) of an n-sided world. */
static size_t spec_peaks(const float *v, const float *add, uint32_t n)
{
    size_t peaks = 0;
    for (uint32_t y = 1; y + 1 < n; y++)
        for (uint32_t x = 1; x + 1 < n; x++) {
            size_t i = (size_t)y * n + x;
            double c = (double)v[i] + (add ? add[i] : 0.0), hi = -1e30;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    size_t k = (size_t)(y + dy) * n + (x + dx);
                    double e = (double)v[k] + (add ? add[k] : 0.0);
                    if ((dx || dy) && e > hi)
                        hi = e;
                }
            peaks += c - hi > 1e-3;
        }
    return peaks;
}

/* SPEC "After the last step": the stage leaves no needles.  Laying the
 * carried sediment down at the end, and giving the last step's water,
 * made 2094 ground peaks and 3681 water-surface peaks in the default 513
 * world; the ground before the stage has 424, and now after it 208, the
 * water surface 566 (0.2% of the cells). */
WG_TEST(openmp_hydraulic_leaves_no_needles)
{
    wg_world w = {.size = 513, .octaves = 6, .passes = 12, .steps = 400,
                  .sea = 0.25f, .seed = 1234};
    wg_world dry = w;
    dry.steps = 0;
    wg_fields f, g;
    CHECK(wg_make_world("openmp", &w, 0, &f) == 0);
    CHECK(wg_make_world("openmp", &dry, 0, &g) == 0);
    if (f.height && g.height) {
        size_t after = spec_peaks(f.height, NULL, w.size);
        size_t before = spec_peaks(g.height, NULL, w.size);
        size_t water = spec_peaks(f.height, f.water, w.size);
        CHECK(after <= before, "%zu ground peaks after the stage, %zu before",
              after, before);
        CHECK(water * 300 < wg_cells(w.size), "%zu water-surface peaks",
              water);
    }
    wg_fields_free(&f);
    wg_fields_free(&g);
}

#if defined(__SSE__)
#include <xmmintrin.h>
/* SPEC "Subnormals": no operation of stage 3 meets a subnormal, so the
 * CPU with flush-to-zero and denormals-are-zero (as a GPU may run) gives
 * the same bits as without. */
WG_TEST(scalar_hydraulic_same_with_subnormals_flushed)
{
    const wg_world worlds[] = {
        {.size = 80, .octaves = 8, .passes = 4, .steps = 60, .sea = 0.3f,
         .seed = 1},
        {.size = 45, .octaves = 16, .passes = 0, .steps = 200, .sea = 0.0f,
         .seed = 0xfeed},
        {.size = 33, .octaves = 3, .passes = 1, .steps = 90, .sea = 1.0f,
         .seed = 9},
    };
    for (size_t k = 0; k < sizeof worlds / sizeof worlds[0]; k++) {
        wg_fields a, b;
        unsigned csr = _mm_getcsr();
        CHECK(wg_make_world("scalar", &worlds[k], 0, &a) == 0);
        _mm_setcsr(csr | 0x8040); /* FTZ | DAZ */
        int rc = wg_make_world("scalar", &worlds[k], 0, &b);
        _mm_setcsr(csr);
        CHECK(rc == 0);
        if (a.height && b.height) {
            size_t bytes = wg_cells(worlds[k].size) * sizeof(float);
            CHECK(memcmp(a.height, b.height, bytes) == 0 &&
                      memcmp(a.water, b.water, bytes) == 0 &&
                      memcmp(a.sediment, b.sediment, bytes) == 0,
                  "world %zu differs with subnormals flushed", k);
        }
        wg_fields_free(&a);
        wg_fields_free(&b);
    }
}

/* Stage 3 on the hand-made heights h (n x n, the whole world) for 'steps'
 * steps (at least 1) with the scalar functions: the final water into wat,
 * and where they are not NULL, the ground into ground, the net sediment
 * into sed and the sediment still carried into carried. */
static void spec_hydraulic_full(const wg_consts *c, uint32_t n,
                                uint32_t steps, const float *h, float *wat,
                                float *ground, float *sed, float *carried)
{
    size_t cells = (size_t)n * n;
    wg_rect r = {0, 0, n, n};
    float *buf[10];
    for (int i = 0; i < 10; i++)
        buf[i] = calloc(cells, sizeof(float));
    memcpy(buf[0], h, cells * sizeof(float));
#define RV(ptr) ((wg_view){(ptr), r})
    wg_scalar_hydraulic_start(c, &RV(buf[0]), r, &RV(buf[0]), &RV(buf[2]),
                              &RV(buf[4]), &RV(buf[9]));
    memcpy(buf[8], buf[0], cells * sizeof(float));
    for (uint32_t i = 0; i < steps; i++) {
        int a = (int)(i & 1), z = a ^ 1;
        wg_scalar_hydraulic_route(c, &RV(buf[a]), &RV(buf[2 + a]), r,
                                  &RV(buf[6]), &RV(buf[7]));
        const wg_view in[6] = {RV(buf[a]), RV(buf[2 + a]), RV(buf[4 + a]),
                               RV(buf[6]), RV(buf[7]),     RV(buf[8])};
        const wg_view out[3] = {RV(buf[z]), RV(buf[2 + z]), RV(buf[4 + z])};
        const wg_view *pin[6] = {&in[0], &in[1], &in[2],
                                 &in[3], &in[4], &in[5]};
        const wg_view *pout[3] = {&out[0], &out[1], &out[2]};
        wg_scalar_hydraulic_step(c, pin, r, pout, &RV(buf[9]));
    }
    int a = (int)(steps & 1);
    wg_view vw = {wat, r};
    if (carried)
        memcpy(carried, buf[4 + a], cells * sizeof(float));
    wg_scalar_hydraulic_settle(c, &RV(buf[a]), &RV(buf[2 + a]), &RV(buf[9]),
                               &RV(buf[8]), r, &RV(buf[a]), &vw,
                               &RV(buf[4 + a]));
    if (ground)
        memcpy(ground, buf[a], cells * sizeof(float));
    if (sed)
        memcpy(sed, buf[4 + a], cells * sizeof(float));
#undef RV
    for (int i = 0; i < 10; i++)
        free(buf[i]);
}

static void spec_hydraulic_on(const wg_consts *c, uint32_t n, uint32_t steps,
                              const float *h, float *wat)
{
    spec_hydraulic_full(c, n, steps, h, wat, NULL, NULL, NULL);
}

/* SPEC "The world's edge": water that runs down to the edge runs on out of
 * the world.  On a plane sloping down to the west edge the film there is
 * as deep as up the slope (before, the edge was a wall: the water of the
 * whole slope gathered along it, 0.05 deep, and ran off along it, a gutter
 * down the world's side), and the edge cells erode no deeper than their
 * starting ground (the base level). */
WG_TEST(scalar_hydraulic_edge_is_open)
{
    enum { N = 65 };
    wg_world w = {.size = N, .octaves = 1, .passes = 0, .steps = 150,
                  .sea = 0.0f, .seed = 1};
    wg_consts c;
    wg_consts_init(&c, &w);
    static float h[N * N], wat[N * N], g[N * N];
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++)
            h[y * N + x] = 0.3f + 0.4f * (float)x / (N - 1);
    spec_hydraulic_full(&c, N, w.steps, h, wat, g, NULL, NULL);
    double edge = 0, in = 0, lowest = 1;
    for (int y = 8; y < N - 8; y++) {
        edge += wat[y * N];
        in += wat[y * N + 16];
        lowest = g[y * N] - h[y * N] < lowest ? g[y * N] - h[y * N] : lowest;
    }
    CHECK(in > 0, "no water on the slope");
    CHECK(edge < 1.5 * in, "the water at the edge is %.3g deep, %.3g up the "
          "slope", edge / (N - 16), in / (N - 16));
    CHECK(lowest > -1e-6, "an edge cell dug %g below its start", -lowest);
}

/* The stage moves ground, it does not make or lose it, where no water
 * leaves the world: in a bowl, whose water surface rises to every edge, the
 * ground's net change and the sediment the water still carries at the end
 * add up to nothing, up to binary32 rounding and the flush of tiny loads.
 * (Water running out over the edge takes its load with it.) */
WG_TEST(scalar_hydraulic_conserves_ground_in_a_bowl)
{
    enum { N = 97 };
    wg_world w = {.size = N, .octaves = 1, .passes = 0, .steps = 150,
                  .sea = 0.0f, .seed = 1};
    wg_consts c;
    wg_consts_init(&c, &w);
    static float h[N * N], wat[N * N], sed[N * N], carried[N * N];
    const double m = (N - 1) / 2.0;
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
            /* A bowl, rippled inside, smooth towards the edge. */
            double u = (x - m) / m, v = (y - m) / m, r2 = u * u + v * v;
            double in = r2 < 1 ? (1 - r2) * (1 - r2) : 0;
            h[y * N + x] = (float)(0.3 + 0.3 * r2 +
                                   0.04 * in * sin(9 * u) * sin(7 * v));
        }
    spec_hydraulic_full(&c, N, w.steps, h, wat, NULL, sed, carried);
    double net = 0, moved = 0, load = 0, deepest = 0;
    for (size_t i = 0; i < (size_t)N * N; i++) {
        net += sed[i];
        moved += fabs(sed[i]);
        load += carried[i];
        deepest = sed[i] < deepest ? sed[i] : deepest;
    }
    CHECK(moved > 0.05, "the water moved only %g of ground", moved);
    CHECK(load > 1e-2 * moved, "the water carries only %g", load);
    CHECK(fabs(net + load) < 1e-3 * moved, "ground %g + carried %g of %g moved",
          net, load, moved);
    CHECK(deepest < -0.001, "no valley deeper than %g was cut", -deepest);
}

/* SPEC stage 3: SEA is flushed.  A subnormal sea level (--sea-level 1e-45
 * is accepted) would be 0 to a GPU that flushes operands but not to the
 * CPU, and ground at exactly 0 would be sea on one and land on the other:
 * with the flush both see SEA = 0, and a CPU with FTZ and DAZ computes the
 * same water as one without. */
WG_TEST(scalar_hydraulic_subnormal_sea_is_flushed)
{
    enum { N = 17 };
    wg_world w = {.size = N, .octaves = 1, .passes = 0, .steps = 6,
                  .sea = 0x1p-149f, .seed = 1};
    wg_consts c;
    wg_consts_init(&c, &w);
    CHECK(c.hyd.sea == 0.0f, "SEA %a", (double)c.hyd.sea);
    /* A valley whose floor is ground at exactly 0. */
    float h[N * N], a[N * N], b[N * N];
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++)
            h[y * N + x] = x < 6 ? 0.0f : (float)(x - 5) * 0.01f;
    spec_hydraulic_on(&c, N, w.steps, h, a);
    unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x8040); /* FTZ | DAZ */
    spec_hydraulic_on(&c, N, w.steps, h, b);
    _mm_setcsr(csr);
    CHECK(memcmp(a, b, sizeof a) == 0,
          "the water differs with subnormals flushed");
}
#endif

/* --sea-level is read as SPEC.md's SEA says: strtod's rounding and
 * underflow first, the check on its double, then the rounding to binary32
 * and the flush, and what the JSON reports (and the renderer draws) is
 * that SEA: 1e-45 had been reported as 1.4e-45 while the fields used 0. */
WG_TEST(spec_sea_level_is_read_as_the_spec_says)
{
    static const struct {
        const char *arg, *sea; /* NULL: refused */
    } cases[] = {
        {"1e-45", "0"},     {"-1e-400", "0"}, {"1.0000000000000001", "1"},
        {"2.5e-1", "0.25"}, {".25", "0.25"},  {"-3e-324", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[] = {"--size", "5", "--mesh", "scalar", "-q", "--no-image",
                              "--json", "-", "--sea-level", cases[i].arg, NULL};
        wg_cli c = wg_cli_run(argv);
        if (!cases[i].sea) {
            CHECK(c.status == 2 && strstr(c.err, "is out of range (valid: 0..1)"),
                  "%s: %d %s", cases[i].arg, c.status, c.err);
        } else {
            char want[64];
            snprintf(want, sizeof want, "\"sea\": %s,", cases[i].sea);
            CHECK(c.status == 0 && strstr(c.out, want), "%s: %d, not '%s' in %s",
                  cases[i].arg, c.status, want, c.out);
        }
        wg_cli_free(&c);
    }
}

/* Whether python3 is here for spec_reference.py; the test is skipped,
 * saying so, where it is not. */
static int spec_have_python(void)
{
    if (system("command -v python3 >/dev/null") == 0)
        return 1;
    wg_skip("python3 is not installed");
    return 0;
}

/* scripts/spec_reference.py checks every argument before computing, with
 * worldgen's ranges and forms: a bad one is an argparse usage error (exit
 * 2) naming the option, the value and the range, never a traceback after
 * the work (--prefix in a missing folder) nor a silent run (--size 0,
 * --sea-level nan or 7, a seed over 64 bits). */
WG_TEST(spec_reference_checks_its_arguments)
{
    if (!spec_have_python())
        return;
    static const struct { const char *args, *msg; } cases[] = {
        {"--seed abc", "--seed: 'abc' is not a whole number (valid: "
                       "0..18446744073709551615, decimal or 0x hex)"},
        {"--seed 18446744073709551616", "--seed: '18446744073709551616' is "
                                        "out of range (valid: 0..18446744073709551615)"},
        {"--seed -1", "--seed: '-1' is not a whole number"},
        {"--size 0", "--size: '0' is out of range (valid: 2..65536)"},
        {"--size 1", "--size: '1' is out of range (valid: 2..65536)"},
        {"--size 65537", "--size: '65537' is out of range (valid: 2..65536)"},
        {"--size ' 5'", "--size: ' 5' is not a whole number (valid: 2..65536"},
        {"--octaves 0", "--octaves: '0' is out of range (valid: 1..16)"},
        {"--octaves 2000", "--octaves: '2000' is out of range (valid: 1..16)"},
        {"--erosion -1", "--erosion: '-1' is not a whole number (valid: 0..10000"},
        {"--erosion 10001", "--erosion: '10001' is out of range (valid: 0..10000)"},
        {"--hydraulic 1_0", "--hydraulic: '1_0' is not a whole number (valid: 0..100000"},
        {"--hydraulic 100001", "--hydraulic: '100001' is out of range (valid: 0..100000)"},
        {"--sea-level nan", "--sea-level: 'nan' is not a number (valid: 0..1)"},
        {"--sea-level inf", "--sea-level: 'inf' is not a number (valid: 0..1)"},
        {"--sea-level 0x1p-2", "--sea-level: '0x1p-2' is not a number (valid: 0..1)"},
        {"--sea-level 7", "--sea-level: '7' is out of range (valid: 0..1)"},
        {"--sea-level -0.5", "--sea-level: '-0.5' is out of range (valid: 0..1)"},
        {"--prefix nosuch/v", "--prefix: cannot write 'nosuch/v_stage1.f32': "
                              "the folder 'nosuch' does not exist"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "python3 '%s/scripts/spec_reference.py' --size 2 --erosion 0 "
                 "--hydraulic 0 --prefix v %s",
                 wg_srcdir(), cases[i].args);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 2, "%s: status %d, not 2: %s", cases[i].args,
              c.status, c.err);
        CHECK(strstr(c.err, "spec_reference.py: error: argument ") &&
                  strstr(c.err, cases[i].msg),
              "%s: not '%s' in: %s", cases[i].args, cases[i].msg, c.err);
        CHECK(!strstr(c.err, "Traceback"), "%s: %s", cases[i].args, c.err);
        wg_cli_free(&c);
    }
    /* worldgen's forms: 0x hex, a decimal seed with a leading zero (int(s,
     * 0) had refused "010"), a sea level of -0. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "python3 '%s/scripts/spec_reference.py' --size 0x2 --octaves 02 "
             "--erosion 0 --hydraulic 1 --seed 010 --sea-level -0 --prefix "
             "ok && wc -c < ok_height.f32",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && atoi(c.out) == 16, "status %d: %s %s", c.status,
          c.out, c.err);
    wg_cli_free(&c);
}

/* spec_reference.py writes its five outputs as a set: one that cannot be
 * written (a file size limit of 0) leaves the set an earlier run wrote,
 * untouched, and no temporary; written in place, the first had been left
 * empty among the old others.  A termination while writing leaves none
 * either. */
WG_TEST(spec_reference_writes_its_outputs_as_a_set)
{
    if (!spec_have_python())
        return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "rm -rf sr-set && mkdir sr-set && cd sr-set && "
             "python3 '%s/scripts/spec_reference.py' --size 5 --erosion 1 --hydraulic 2 "
             "--prefix v && cksum v_* > ../sr-set.sum && "
             "(ulimit -f 0; python3 '%s/scripts/spec_reference.py' --size 5 --erosion 1 "
             "--hydraulic 2 --seed 7 --prefix v 2>&1; echo \"status $?\") | cat; "
             "cksum v_* | cmp - ../sr-set.sum && echo same; ls -A | tr '\\n' ' '",
             wg_srcdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    /* (its message through a pipe: a file takes none under the limit) */
    CHECK(strstr(c.out, "cannot write v_stage1.f32: File too large\nstatus 1\nsame\n"
                        "v_height.f32 v_sediment.f32 v_stage1.f32 v_stage2.f32 v_water.f32 "),
          "%s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* A signal while spec_reference.py renames its set (sent from inside the
 * first os.replace, so that it lands between two renames every time)
 * waits until the set is renamed: the outputs are the new set, whole, and
 * no temporary is left.  It had exited between the renames, the new
 * v_stage1.f32 among the old four. */
WG_TEST(spec_reference_signal_between_renames_keeps_the_set)
{
    if (!spec_have_python())
        return;
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "rm -rf sr-sig && mkdir sr-sig && cd sr-sig && "
             "cat > kill.py <<'EOF'\n"
             "import os, runpy, signal, sys\n"
             "real, sig = os.replace, getattr(signal, sys.argv.pop(2))\n"
             "def replace(a, b):\n"
             "    real(a, b)\n"
             "    os.kill(os.getpid(), sig)\n"
             "os.replace = replace\n"
             "sys.argv = sys.argv[1:]\n"
             "runpy.run_path(sys.argv[0], run_name='__main__')\n"
             "EOF\n"
             "s='%s/scripts/spec_reference.py'; a='--size 5 --erosion 1 --hydraulic 2'; "
             "python3 \"$s\" $a --seed 7 --prefix new && "
             "for sig in SIGINT SIGTERM SIGHUP; do "
             "  python3 \"$s\" $a --prefix v && "
             "  python3 kill.py \"$s\" $sig $a --seed 7 --prefix v 2>/dev/null; "
             "  echo \"$sig $?\"; for f in v_*; do cmp -s $f new${f#v} || echo \"$f old\"; done; "
             "done; ls -A | tr '\\n' ' '",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && !strcmp(c.out, "SIGINT 130\nSIGTERM 143\nSIGHUP 129\n"
                                   "kill.py new_height.f32 new_sediment.f32 "
                                   "new_stage1.f32 new_stage2.f32 new_water.f32 v_height.f32 "
                                   "v_sediment.f32 v_stage1.f32 v_stage2.f32 v_water.f32 "),
          "status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* An output of spec_reference.py that is a symbolic link is written
 * through to its final target, as worldgen's outputs are (a dangling one
 * gets its target made): os.replace had renamed the new file over the
 * link.  Another user's link in a sticky folder anyone may write in is not
 * followed (as root, a link given to nobody). */
WG_TEST(spec_reference_writes_through_links)
{
    if (!spec_have_python())
        return;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "rm -rf sr-link && mkdir -p sr-link/sub && cd sr-link && "
             "s='%s/scripts/spec_reference.py'; a='--size 5 --erosion 1 --hydraulic 2'; "
             "python3 \"$s\" $a --prefix new && echo old > sub/h && "
             "ln -s sub/h v_height.f32 && ln -s sub/w v_water.f32 && "
             "python3 \"$s\" $a --prefix v && for f in v_height.f32 v_water.f32; do "
             "[ -L $f ] && cmp $f new${f#v} && echo \"$f through\"; done; ls -A sub | tr '\\n' ' '; "
             "[ $(id -u) = 0 ] || exit 0; mkdir st && chmod 1777 st && echo victim > victim && "
             "ln -s \"$PWD/victim\" st/v_height.f32 && chown -h nobody st/v_height.f32 && "
             "python3 \"$s\" $a --prefix st/v 2>&1 | tail -1; cat victim; ls -A st",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    const char *want = "v_height.f32 through\nv_water.f32 through\nh w ";
    CHECK(strncmp(c.out, want, strlen(want)) == 0, "%s%s", c.out, c.err);
    if (geteuid() == 0)
        CHECK(strstr(c.out, "cannot write 'st/v_height.f32': it is another user's "
                            "symbolic link in the sticky folder 'st', which is not "
                            "followed\nvictim\nv_height.f32\n"),
              "%s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* A world whose lists do not fit in memory (here under ulimit -v) is a
 * message and exit 1: a MemoryError's traceback had been all. */
WG_TEST(spec_reference_out_of_memory_says_so)
{
    if (!spec_have_python())
        return;
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "ulimit -v 400000; python3 '%s/scripts/spec_reference.py' --size 3000 "
             "--erosion 0 --hydraulic 0 --prefix sr-oom",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 1 && !strcmp(c.err, "spec_reference.py: not enough memory for the "
                                          "lists of a 3000x3000 world\n"),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
}
