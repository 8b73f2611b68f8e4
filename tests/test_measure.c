/* test_measure.c: the README's measuring tools, scripts/roughness.c and
 * scripts/resolution.c: each builds warning-free with the project's
 * compiler and measures what it says, on maps made by hand and on small
 * worlds.  Fast: two tiny compiles and worlds of 65 at most. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* Build scripts/NAME.c into ./NAME in the test's folder; 0 on success. */
static int measure_build(const char *name)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror -o %s "
             "'%s/scripts/%s.c' -lm",
             name, wg_srcdir(), name);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "%s.c does not build: %s", name, c.err);
    int rc = c.status == 0 ? 0 : -1;
    wg_cli_free(&c);
    return rc;
}

/* A square grey PFM of side n from v (rows y = 0 first), in the test's
 * folder. */
static void measure_pfm(const char *name, const float *v, unsigned n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", wg_tmpdir(), name);
    FILE *fp = fopen(path, "wb");
    CHECK(fp != NULL, "cannot write %s", path);
    if (!fp)
        return;
    fprintf(fp, "Pf\n%u %u\n-1.0\n", n, n);
    for (unsigned y = n; y-- > 0;) /* PFM: the bottom row first */
        fwrite(v + (size_t)y * n, sizeof *v, n, fp);
    fclose(fp);
}

/* One spike of ground, one pit, and a water mound on flat ground beside
 * them: the counts are exactly those. */
WG_TEST(measure_roughness_counts_peaks_and_pits)
{
    if (measure_build("roughness") != 0)
        return;
    enum { N = 9 };
    float h[N * N], w[N * N];
    for (int i = 0; i < N * N; i++)
        h[i] = 0.3f, w[i] = 0.0f;
    h[2 * N + 2] = 0.31f;   /* a needle: a ground peak */
    h[6 * N + 2] = 0.29f;   /* a hole: a ground pit */
    w[4 * N + 6] = 0.005f;  /* a water mound: a water-surface peak */
    w[4 * N + 5] = 0.0005f; /* under 0.001 above its neighbours: none */
    measure_pfm("h.pfm", h, N);
    measure_pfm("w.pfm", w, N);
    wg_cli c = wg_cli_sh("./roughness h.pfm w.pfm");
    CHECK(c.status == 0, "roughness: %s", c.err);
    long gp = -1, gq = -1, wp = -1, wq = -1;
    const char *g = strstr(c.out, "ground:"), *s = strstr(c.out, "water surface:");
    CHECK(g && sscanf(g, "ground: %ld peaks, %ld pits", &gp, &gq) == 2 && s &&
              sscanf(s, "water surface: %ld peaks, %ld pits", &wp, &wq) == 2,
          "output:\n%s", c.out);
    CHECK(gp == 1 && gq == 1 && wp == 2 && wq == 1,
          "ground %ld peaks %ld pits, water surface %ld peaks %ld pits", gp,
          gq, wp, wq);
    wg_cli_free(&c);
    /* Maps of two sizes are refused. */
    measure_pfm("small.pfm", h, 5);
    c = wg_cli_sh("./roughness h.pfm small.pfm");
    CHECK(c.status == 1 && strstr(c.err, "differ"), "status %d: %s",
          c.status, c.err);
    wg_cli_free(&c);
}

/* A 33 and a 65 world of the same options, compared at their shared
 * vertices: a finite share and the water lines. */
WG_TEST(measure_resolution_compares_two_sizes)
{
    if (measure_build("resolution") != 0)
        return;
    wg_cli c = wg_cli_sh(
        "./worldgen --size 33 --erosion 0 --hydraulic 0 -q --no-image "
        "--heightmap t1.pfm && "
        "./worldgen --size 33 --erosion 1 --hydraulic 16 -q --no-image "
        "--heightmap h1.pfm --watermap w1.pfm && "
        "./worldgen --size 65 --erosion 4 --hydraulic 32 -q --no-image "
        "--heightmap h2.pfm --watermap w2.pfm && "
        "./resolution t1.pfm h1.pfm w1.pfm h2.pfm w2.pfm");
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    double dh = -1, change = -1, share = -1;
    unsigned at = 0;
    const char *p = strstr(c.out, "mean |dh| at shared vertices");
    CHECK(p && sscanf(p, "mean |dh| at shared vertices %lf, mean erosion "
                         "change at %u %lf: %lf%%",
                      &dh, &at, &change, &share) == 4,
          "output:\n%s", c.out);
    CHECK(at == 33 && dh > 0 && change > 0 && share > 0 && share < 1000,
          "dh %g, change at %u %g, share %g%%", dh, at, change, share);
    CHECK(strstr(c.out, "water deeper than 0.003:") &&
              strstr(c.out, "water deeper than 0.01:"),
          "output:\n%s", c.out);
    wg_cli_free(&c);
}
