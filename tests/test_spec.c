/* test_spec.c: the lattice and the scalar backend against SPEC.md: its
 * reference values, the conformance vectors, and windows (tiles) that must
 * equal the whole world. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
