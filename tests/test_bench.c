/* test_bench.c: scripts/bench.sh at a tiny size.  With -l it prints, per
 * stage, the measured time, this machine's limit and their ratio, the
 * work it counted, and the whole run's wall time beside the total; a
 * backend worldgen does not know is a usage error (exit 2).  Fast: one run
 * of a 16-sided world (the machine's limits are measured once, a few
 * seconds, and cached in build/limits.txt). */
#include <stdio.h>
#include <string.h>

#include "test.h"

/* The line of the -l table for 'stage' ("  terrain   0.000031s ..."),
 * after the table's header; its measured time, limit and ratio. */
static int bench_row(const char *out, const char *stage, double *t,
                     double *lim, double *ratio)
{
    const char *p = strstr(out, "stage        measured");
    if (!p)
        return -1;
    char key[32];
    snprintf(key, sizeof key, " %s ", stage);
    p = strstr(p, key);
    if (!p)
        return -1;
    return sscanf(p + strlen(key), " %lfs %lfs %lfx", t, lim, ratio) == 3
               ? 0
               : -1;
}

WG_TEST(bench_limits)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s/scripts/bench.sh' -s 16 -r 1 -b scalar -l", wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "bench.sh -l: status %d: %s", c.status, c.err);
    if (c.status == 0 && strstr(c.out, "limits: not measured")) {
        wg_skip("this CPU has no AVX2: bench.sh measures no limits");
        wg_cli_free(&c);
        return;
    }
    CHECK(strstr(c.out, "terrain:   46 ops + 1 quad fetch per cell-octave"),
          "no work counts in:\n%s", c.out);
    CHECK(strstr(c.out, "triad bandwidth GB/s"), "no bandwidth in:\n%s",
          c.out);
    CHECK(strstr(c.out, "the mix"), "no issue rates in:\n%s", c.out);
    /* The terrain's fetch rate, measured: a figure, not an empty field
     * from a cache written before limits.c measured it. */
    const char *q = strstr(c.out, "quad fetches ");
    double q1 = 0, qall = 0;
    CHECK(q && sscanf(q, "quad fetches %lf / %lf", &q1, &qall) == 2 &&
              q1 > 0 && qall > 0,
          "no quad fetch rates in:\n%s", c.out);
    static const char *const stages[] = {"terrain", "erosion", "hydraulic",
                                         "normals", "total"};
    for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++) {
        double t = -1, lim = -1, ratio = -1;
        int rc = bench_row(c.out, stages[i], &t, &lim, &ratio);
        CHECK(rc == 0, "no '%s  measured limit ratio' row in:\n%s",
              stages[i], c.out);
        if (rc == 0)
            CHECK(t >= 0 && lim >= 0 && ratio >= 0,
                  "%s: measured %g, limit %g, ratio %g", stages[i], t, lim,
                  ratio);
    }
    double wall = -1;
    const char *w = strstr(c.out, " wall ");
    CHECK(w && sscanf(w + 6, " %lfs", &wall) == 1 && wall > 0,
          "no wall time in:\n%s", c.out);
    wg_cli_free(&c);
}

WG_TEST(bench_unknown_backend)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s/scripts/bench.sh' -s 16 -r 1 -b nosuch -l", wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 2, "bench.sh -b nosuch: status %d, not 2: %s",
          c.status, c.err);
    CHECK(strstr(c.err, "nosuch"), "the error does not name it: %s", c.err);
    wg_cli_free(&c);
}
