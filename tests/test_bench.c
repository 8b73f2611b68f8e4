/* test_bench.c: scripts/bench.sh at a tiny size.  With -l it prints, per
 * stage, the measured time, this machine's limit and their ratio, the
 * work it counted, and the whole run's wall time beside the total; a
 * backend worldgen does not know is a usage error (exit 2).  Fast: one run
 * of a 16-sided world (the machine's limits are measured once, a few
 * seconds, and cached in build/limits.txt). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Run scripts/bench.sh with 'args' (shell words) in the test's folder. */
static wg_cli bench_run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s/scripts/bench.sh' %s", wg_srcdir(), args);
    return wg_cli_sh(cmd);
}

/* The limits' cache (build/limits.txt) names the CPU, the count of CPUs
 * and the load average it was measured at; a cache of another count or
 * CPU is measured again, saying so: under taskset -c 0 a cache of two
 * cores had set openmp's one thread against two cores' limits.  Said
 * also where build/limits is built first, as in a fresh tree (it is
 * removed here): that had measured again without a word of the cache,
 * and this test failed on a fresh tree's first run.  (This is the one
 * measurement bench_limits then reuses.) */
WG_TEST(bench_limits_cache_of_another_machine_is_measured_again)
{
    if (system("grep -qw avx2 /proc/cpuinfo") != 0) {
        wg_skip("this CPU has no AVX2: bench.sh measures no limits");
        return;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/build/limits.txt", wg_srcdir());
    FILE *fp = fopen(path, "w");
    CHECK(fp != NULL, "cannot write %s", path);
    if (!fp)
        return;
    fputs("cores 4096\nmix_1 1\nmix_all 1\ncpu Another CPU\nload 0.00 0.00 0.00\n", fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/build/limits", wg_srcdir());
    unlink(path);
    snprintf(path, sizeof path, "%s/build/limits.txt", wg_srcdir());
    wg_cli c = bench_run("-s 16 -r 1 -b scalar -H 1 -l");
    CHECK(c.status == 0 && strstr(c.out, "limits of this machine (measured now, load average ") &&
              strstr(c.out, "; the cache was of 4096 CPUs, Another CPU, this run has "),
          "status %d, a stale cache used:\n%s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
    size_t len = 0;
    char *cache = wg_read_file(path, &len);
    CHECK(cache && !strstr(cache, "cores 4096\n") && !strstr(cache, "Another CPU") &&
              strstr(cache, "\ncpu ") && strstr(cache, "\nload "),
          "the cache: %s", cache ? cache : "(none)");
    free(cache);
    /* The same machine: the cache, with when and at what load. */
    c = bench_run("-s 16 -r 1 -b scalar -H 1 -l");
    CHECK(c.status == 0 && strstr(c.out, " at load average ") &&
              strstr(c.out, ", cached in build/limits.txt (-L measures again)"),
          "status %d, not the cache:\n%s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(bench_limits)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s/scripts/bench.sh' -s 16 -r 1 -H 100 -b scalar -l",
             wg_srcdir());
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
    /* The hydraulic limit on one thread (scalar): 16 x 16 cells, 100
     * steps, 319 ops each, at the better mix rate of the widths this CPU
     * has: on one with AVX-512 the kernels' 16-lane builds run, and the
     * AVX2 rate alone would be a limit they beat. */
    double mix = 0, mix_all = 0, wide = 0, wide_all = 0;
    const char *m = strstr(c.out, "the mix ");
    CHECK(m && sscanf(m, "the mix %lf / %lf", &mix, &mix_all) == 2 && mix > 0,
          "no mix rate in:\n%s", c.out);
    const char *m512 = strstr(c.out, "AVX-512 G lane-ops/s");
    if (system("grep -qw avx512f /proc/cpuinfo") == 0) {
        CHECK(m512 != NULL, "an AVX-512 CPU, no AVX-512 rates in:\n%s", c.out);
        m512 = m512 ? strstr(m512, "the mix ") : NULL;
        CHECK(m512 && sscanf(m512, "the mix %lf / %lf", &wide, &wide_all) == 2 &&
                  wide > 0 && wide_all > 0,
              "no AVX-512 mix rate in:\n%s", c.out);
    } else {
        CHECK(m512 == NULL, "AVX-512 rates from a CPU without it:\n%s", c.out);
    }
    double best = wide > mix ? wide : mix, t = 0, lim = 0, ratio = 0;
    if (best > 0 && bench_row(c.out, "hydraulic", &t, &lim, &ratio) == 0) {
        double want = 16.0 * 16 * 100 * 319 / (best * 1e9);
        /* printed to the microsecond */
        CHECK(lim > want - 6e-7 && lim < want + 6e-7,
              "hydraulic limit %g, not 16^2 x 100 x 319 / %g G = %g", lim,
              best, want);
    }
    double wall = -1;
    const char *w = strstr(c.out, " wall ");
    CHECK(w && sscanf(w + 6, " %lfs", &wall) == 1 && wall > 0,
          "no wall time in:\n%s", c.out);
    wg_cli_free(&c);
}

/* openmp on fewer threads than cores (OMP_NUM_THREADS=1) is held to one
 * thread's limits, and says so: every core's had made its ratio look
 * twice as far from the limit as it was. */
WG_TEST(bench_limits_follow_openmp_threads)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "OMP_NUM_THREADS=1 '%s/scripts/bench.sh' -s 16 -r 1 -H 100 -b openmp -l",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "bench.sh -l: status %d: %s", c.status, c.err);
    int cores = 0;
    const char *l = strstr(c.out, "one thread / all ");
    if (c.status != 0 || strstr(c.out, "limits: not measured") || !l ||
        sscanf(l, "one thread / all %d cores", &cores) != 1 || cores < 2) {
        wg_skip("no limits measured, or one CPU: nothing to tell apart");
        wg_cli_free(&c);
        return;
    }
    CHECK(strstr(c.out, "openmp runs 1 of the ") &&
              strstr(c.out, "(OMP_NUM_THREADS): its limits are one thread's"),
          "not said:\n%s", c.out);
    double mix = 0, mix_all = 0, wide = 0, wide_all = 0;
    const char *m = strstr(c.out, "the mix ");
    CHECK(m && sscanf(m, "the mix %lf / %lf", &mix, &mix_all) == 2,
          "no mix rate in:\n%s", c.out);
    const char *m512 = strstr(c.out, "AVX-512 G lane-ops/s");
    m512 = m512 ? strstr(m512, "the mix ") : NULL;
    if (m512)
        sscanf(m512, "the mix %lf / %lf", &wide, &wide_all);
    double best = wide > mix ? wide : mix, t = 0, lim = 0, ratio = 0;
    CHECK(best > 0 && bench_row(c.out, "hydraulic", &t, &lim, &ratio) == 0,
          "no hydraulic row in:\n%s", c.out);
    double want = 16.0 * 16 * 100 * 319 / (best * 1e9);
    CHECK(lim > want - 6e-7 && lim < want + 6e-7,
          "hydraulic limit %g on one thread, not 16^2 x 100 x 319 / %g G = %g",
          lim, best, want);
    wg_cli_free(&c);
    /* Every thread: every core's rates, and nothing said. */
    snprintf(cmd, sizeof cmd,
             "env -u OMP_NUM_THREADS '%s/scripts/bench.sh' -s 16 -r 1 -H 100 -b openmp -l",
             wg_srcdir());
    c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && !strstr(c.out, "openmp runs") &&
              bench_row(c.out, "hydraulic", &t, &lim, &ratio) == 0 &&
              lim < want * 0.9,
          "status %d, limit %g against one thread's %g:\n%s", c.status, lim,
          want, c.out);
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

/* With -R each run also draws the picture: the wall is then the whole run
 * a user waits for, beside the render's medians (-t, the CSV), and the
 * temporary PNG goes with the JSON's file.  Without it no picture is drawn
 * (the CSV has no render columns and the wall is the stages').  The
 * temporaries are looked for in a $TMPDIR of the test's own: in /tmp,
 * shared, another program's tmp.*.png (another bench.sh -R, another test
 * run beside this one) had failed it. */
WG_TEST(bench_times_the_render_when_asked)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "rm -rf rt && mkdir rt && TMPDIR=$PWD/rt '%s/scripts/bench.sh' "
             "-s 32 -r 1 -b scalar -R -t -c - && "
             "ls -A rt | grep -c '^tmp\\..*\\.png$'", wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 1 || c.status == 0, "bench.sh -R: status %d: %s",
          c.status, c.err);
    const char *csv = strstr(c.out, "size,backend,");
    CHECK(csv && strstr(csv, ",wall,rasterise,shade,png\n"),
          "no render columns in:\n%s", c.out);
    double wall = 0, ra = 0, sh = 0, png = 0;
    const char *row = csv ? strstr(csv, "\n32,scalar,") : NULL;
    if (row) {
        /* size,backend, then 9 figures, then wall and the render's three */
        const char *p = row + 1;
        for (int comma = 0; comma < 10 && p; comma++)
            p = strchr(p + 1, ',');
        CHECK(p && sscanf(p + 1, "%lf,%lf,%lf,%lf", &wall, &ra, &sh, &png) == 4,
              "the row: %s", row);
    }
    CHECK(ra > 0 && sh > 0 && png > 0 && wall > ra + sh + png,
          "wall %g, rasterise %g, shade %g, png %g", wall, ra, sh, png);
    CHECK(strstr(c.out, "render: rasterise "), "no render line in:\n%s",
          c.out);
    CHECK(strstr(c.out, "\n0\n"), "a temporary PNG was left:\n%s", c.out);
    wg_cli_free(&c);

    c = bench_run("-s 32 -r 1 -b scalar -t -c -");
    CHECK(c.status == 0 && strstr(c.out, ",steps,wall\n") &&
              !strstr(c.out, "render: "),
          "status %d:\n%s", c.status, c.out);
    wg_cli_free(&c);
}

/* -h and --help print what the script does and how to call it (its
 * header), exit 0, as do resolution.sh's: both had been usage errors. */
WG_TEST(bench_and_resolution_help)
{
    static const char *const calls[] = {
        "scripts/bench.sh -h", "scripts/bench.sh --help",
        "scripts/resolution.sh -h", "scripts/resolution.sh --help"};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "'%s'/%s", wg_srcdir(), calls[i]);
        wg_cli c = wg_cli_sh(cmd);
        const char *name = strchr(calls[i], '/') + 1;
        char example[64];
        snprintf(example, sizeof example, "scripts/%.*s ",
                 (int)strcspn(name, " "), name);
        CHECK(c.status == 0 && strstr(c.out, example) && !c.err[0],
              "%s: status %d, out '%.80s', err '%s'", calls[i], c.status,
              c.out, c.err);
        wg_cli_free(&c);
    }
}

/* A bad option value is a usage error (exit 2) that names the option, the
 * value and the valid range, before anything is measured; worldgen's own
 * options get worldgen's ranges.  (-r 0 had printed 0.00000s, -r abc died
 * of an unbound variable, an extra argument was ignored.) */
WG_TEST(bench_bad_option_values)
{
    static const struct { const char *args, *msg; } cases[] = {
        {"-r 0", "bench.sh: -r: '0' is out of range (valid: 1..1000)"},
        {"-r 1001", "bench.sh: -r: '1001' is out of range (valid: 1..1000)"},
        {"-r abc", "bench.sh: -r: 'abc' is not a whole number (valid: 1..1000)"},
        {"-r 2x", "bench.sh: -r: '2x' is not a whole number (valid: 1..1000)"},
        {"-r 0x3e9", "bench.sh: -r: '0x3e9' is out of range (valid: 1..1000)"},
        {"-r 0x", "bench.sh: -r: '0x' is not a whole number (valid: 1..1000)"},
        {"-s '16 1'", "bench.sh: -s: '1' is out of range (valid: 2..65536)\n"},
        {"-s '16 *'", "bench.sh: -s: '*' is not a whole number (valid: 2..65536"},
        {"-s ''", "bench.sh: -s: '' names no size"},
        {"-o 0", "bench.sh: -o: '0' is out of range (valid: 1..16)"},
        {"-o 2000", "bench.sh: -o: '2000' is out of range (valid: 1..16)"},
        {"-e -1", "bench.sh: -e: '-1' is not a whole number (valid: 0..10000"},
        {"-H 100001", "bench.sh: -H: '100001' is out of range (valid: 0..100000)"},
        {"-H nan", "bench.sh: -H: 'nan' is not a whole number (valid: 0..100000"},
        {"extra", "bench.sh: 'extra': an argument this script does not take"},
        {"-b auto", "bench.sh: -b: 'auto' is not one backend to measure (valid: scalar, "
                    "openmp, vulkan or all, separated by commas)"},
        {"-b '*'", "bench.sh: -b: '*' is not a backend's name (valid: scalar"},
        {"-b ,,,", "bench.sh: -b: ',,,' names no backend (valid: scalar"},
        /* An empty -b had measured every backend, as no -b; a name beside
         * 'all' had not been looked at. */
        {"-b ''", "bench.sh: -b: '' names no backend (valid: scalar"},
        {"-b all,vulcan", "bench.sh: -b vulcan: worldgen: --mesh: 'vulcan' is not a backend"},
        /* An empty -c had been no CSV and exit 0; -H beside -d dropped. */
        {"-c ''", "bench.sh: -c: '' names no file (valid: a file name, or -"},
        {"-d", "bench.sh: -d and -H: -d runs worldgen's default passes and steps"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[256];
        /* The rest small, so that a run that measures anyway is short. */
        snprintf(args, sizeof args, "-s 16 -r 1 -b scalar -H 1 %s",
                 cases[i].args);
        wg_cli c = bench_run(args);
        CHECK(c.status == 2, "bench.sh %s: status %d, not 2: %s%s", args,
              c.status, c.out, c.err);
        CHECK(strstr(c.err, cases[i].msg), "bench.sh %s: not '%s' in: %s",
              args, cases[i].msg, c.err);
        CHECK(!strstr(c.out, "| grid"), "bench.sh %s measured: %s", args,
              c.out);
        wg_cli_free(&c);
    }
    /* A backend named twice is one column; 'all' is every one. */
    wg_cli d = bench_run("-s 16 -r 1 -H 1 -b scalar,scalar");
    CHECK(d.status == 0 && strstr(d.out, "|     scalar |\n"), "%d: %s%s", d.status, d.out,
          d.err);
    wg_cli_free(&d);
    d = bench_run("-s 16 -r 1 -H 1 -b all");
    CHECK(d.status == 0 && strstr(d.out, "|     scalar |     openmp |"), "%d: %s%s",
          d.status, d.out, d.err);
    wg_cli_free(&d);
    /* 0x hex, as worldgen takes it, is made decimal for the table. */
    wg_cli c = bench_run("-s 0x10 -r 0x1 -b scalar -H 0x2 -e 0x1 -o 0x2 -t");
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    CHECK(strstr(c.out, "2 octaves, 1 erosion passes, 2 hydraulic steps, "
                        "median of 1 runs") && strstr(c.out, "|     16 | "),
          "%s", c.out);
    wg_cli_free(&c);
}

/* A size worldgen fails on (out of memory under ulimit -v) fails the
 * benchmark, saying why (exit 1): it had printed the size before's time,
 * read from the JSON that run left, with exit 0. */
WG_TEST(bench_worldgen_failure_is_no_figure)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "ulimit -v 1000000; '%s/scripts/bench.sh' -s '16 20000' -r 1 "
             "-b scalar -H 1 2>&1 >out.txt; echo \"status $?\"; cat out.txt",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "bench.sh: size 20000, scalar: worldgen failed "
                        "(status 1): worldgen: ") &&
              (strstr(c.out, "out of memory") || strstr(c.out, "(ulimit -v) leaves")),
          "no reason in: %s", c.out);
    CHECK(strstr(c.out, "status 1\n"), "not status 1: %s", c.out);
    /* The row's line ends, marked, before the message (which had
     * followed the row's first cell on the same line). */
    CHECK(strstr(c.out, "|  20000 |     failed |\n"), "no ended row: %s", c.out);
    wg_cli_free(&c);
}

/* -c is checked before anything is measured: a folder that does not
 * exist, or a folder given as the file, fails at once (exit 1, as
 * worldgen's outputs do) and leaves nothing behind (a folder had been
 * given a 'dir.tmp.PID' inside it); a relative name is where the script
 * was started, not the source tree it runs in. */
WG_TEST(bench_csv_checked_up_front)
{
    wg_cli c = bench_run("-s 16 -r 1 -b scalar -H 1 -c nosuch/x.csv");
    CHECK(c.status == 1, "status %d, not 1: %s", c.status, c.err);
    CHECK(strstr(c.err, "bench.sh: -c: cannot write '") &&
              strstr(c.err, "/nosuch/x.csv': No such file or directory"),
          "%s", c.err);
    CHECK(!strstr(c.out, "| grid"), "measured first: %s", c.out);
    wg_cli_free(&c);
    c = wg_cli_sh("mkdir d");
    wg_cli_free(&c);
    c = bench_run("-s 16 -r 1 -b scalar -H 1 -c d 2>&1; echo \"status $?\"; "
                  "ls -A d");
    CHECK(strstr(c.out, "bench.sh: -c: cannot write '") &&
              strstr(c.out, "/d': it is a directory"),
          "%s", c.out);
    CHECK(strstr(c.out, "status 1\n") && !strstr(c.out, "| grid"),
          "not status 1 before measuring: %s", c.out);
    const char *st = strstr(c.out, "status 1\n");
    CHECK(st && st[9] == '\0', "a temporary left in d: %s", c.out);
    wg_cli_free(&c);

    /* A write that fails says why, once. */
    c = bench_run("-s 16 -r 1 -b scalar -H 1 -c /dev/full");
    CHECK(c.status == 1 && strcmp(c.err, "bench.sh: -c: cannot write '/dev/full': No space "
                                         "left on device\n") == 0,
          "%d: %s", c.status, c.err);
    wg_cli_free(&c);

    c = bench_run("-s 16 -r 1 -b scalar -H 1 -c rel.csv; echo \"status $?\"; "
                  "cat rel.csv; ls -A");
    CHECK(strstr(c.out, "status 0\nsize,backend,") &&
              strstr(c.out, "\n16,scalar,"),
          "no rel.csv here: %s %s", c.out, c.err);
    CHECK(!strstr(c.out, ".tmp."), "a temporary left: %s", c.out);
    wg_cli_free(&c);
}

/* A -c in an append-only folder (chattr +a), where the temporary can be
 * made but neither renamed nor removed: it had failed after the measuring
 * and left 'b.csv.tmp.PID'.  Now refused first (exit 1), nothing made. */
WG_TEST(bench_csv_in_an_append_only_folder)
{
    wg_cli c = wg_cli_sh("rm -rf ao && mkdir ao && chattr +a ao 2>/dev/null && echo ok");
    int can = strcmp(c.out, "ok\n") == 0;
    wg_cli_free(&c);
    if (!can) {
        wg_skip("chattr +a does not work here (root on a file system with it)");
        return;
    }
    c = bench_run("-s 16 -r 1 -b scalar -H 1 -c ao/b.csv; echo \"status $?\"; ls -A ao; "
                  "chattr -a ao");
    CHECK(strcmp(c.out, "status 1\n") == 0 &&
              strstr(c.err, "/ao/b.csv': its folder is append-only or immutable"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A -c in a folder whose name has a newline and, after it, an 'a' or an
 * 'i' is written: lsattr's second line (the name's rest) had been read as
 * its flags, "its folder is append-only or immutable". */
WG_TEST(bench_csv_in_a_folder_with_a_newline)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "d=$(printf 'x\\nai') && rm -rf \"$d\" && mkdir \"$d\" && '%s/scripts/bench.sh' "
             "-s 16 -r 1 -b scalar -H 1 -c \"$d/b.csv\" >/dev/null && head -n 1 \"$d/b.csv\"",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && strncmp(c.out, "size,backend,", 13) == 0, "status %d: %s %s",
          c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* Run as scripts/bench.sh (and scripts/resolution.sh, scripts/gpu-check)
 * with an exported CDPATH that names a folder holding a scripts/ too: cd
 * scripts/.. had gone there, printed its path as the first line of the
 * table (and of a CSV on standard output), and run that tree's worldgen. */
WG_TEST(bench_scripts_ignore_cdpath)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p decoy/scripts && cd '%s' && export CDPATH=\"$OLDPWD/decoy\" && "
             "scripts/bench.sh -s 16 -r 1 -b scalar -H 1 | head -n 1 && "
             "scripts/resolution.sh 17 33 | head -n 1 && scripts/gpu-check --help | head -n 1",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && strncmp(c.out, "worldgen ", 9) == 0 &&
              strstr(c.out, "\n17 against 33,") && strstr(c.out, "\ngpu-check: the Vulkan") &&
              !strstr(c.out, "decoy"),
          "status %d: %s %s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* A signal ends the script without a temporary left: the JSON's (in
 * $TMPDIR) and the CSV's (beside it); and at once, not after the size's
 * other runs (1000 of them, half a minute).  TERM, and USR1 and ALRM,
 * which had killed the script outright, its temporaries left and its
 * worldgen running on.  While it measures, the CSV has no temporary yet
 * (one made at the start and kept through the measuring had stayed behind
 * a SIGKILL); it is made when the CSV is written.  The script is the
 * background job itself (not an and-list's subshell around it), and its
 * first lines go to the test's messages: a CI run had seen 'status 2'
 * from it once, under the load of the other worker, with nothing to say
 * why. */
WG_TEST(bench_signal_leaves_no_temporary)
{
    static const struct {
        const char *sig;
        int status;
    } sigs[] = {{"TERM", 143}, {"USR1", 138}, {"ALRM", 142}};
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd,
                 "rm -rf t s.csv* b.out; mkdir t; TMPDIR=$PWD/t '%s/scripts/bench.sh' "
                 "-s 16 -r 1000 -b scalar -H 1 -c s.csv > b.out 2>&1 & pid=$!; i=0; "
                 "while [ $i -lt 400 ] && ! grep -q grid b.out; do sleep 0.05; "
                 "i=$((i+1)); done; ls -A t; ls -A | grep -c s.csv; "
                 "t0=$(date +%%s); kill -%s $pid; wait $pid; echo \"status $?\"; "
                 "[ $(($(date +%%s) - t0)) -lt 10 ] || echo slow; sleep 0.2; "
                 "pgrep -f \"$PWD/t/tm[p]\" >/dev/null && echo running; ls -A t; ls -A; "
                 "head -n 4 b.out >&2",
                 wg_srcdir(), sigs[k].sig);
        wg_cli c = wg_cli_sh(cmd);
        char want[64];
        snprintf(want, sizeof want, "\n0\nstatus %d\n", sigs[k].status);
        /* While it measures, the JSON's temporary alone is there. */
        CHECK(strstr(c.out, "tmp.") && strstr(c.out, want), "%s: %s %s",
              sigs[k].sig, c.out, c.err);
        const char *after = strstr(c.out, want);
        CHECK(after && !strstr(after, "tmp") && !strstr(after, "s.csv"),
              "%s: a temporary left: %s", sigs[k].sig, c.out);
        CHECK(after && !strstr(after, "slow") && !strstr(after, "running"),
              "%s: 10 s or more after the signal, or worldgen still running: %s",
              sigs[k].sig, c.out);
        wg_cli_free(&c);
    }
}

/* resolution.sh signalled alone (kill PID, not its process group) while
 * a worldgen of its runs: that worldgen stops too, and the script's folder
 * goes, with status 128 + the signal.  worldgen had run on, writing into
 * the folder the script had removed on its way out. */
WG_TEST(bench_signal_to_resolution_stops_its_worldgen)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "rm -rf t; mkdir t; TMPDIR=$PWD/t '%s/scripts/resolution.sh' 129 2049 "
             "> r.out 2>&1 & pid=$!; i=0; "
             "while [ $i -lt 600 ] && ! pgrep -f \"$PWD/t/tm[p].*/h2.pfm\" >/dev/null; do "
             "sleep 0.05; i=$((i+1)); done; pgrep -f \"$PWD/t/tm[p].*/h2.pfm\" >/dev/null || "
             "echo 'no worldgen seen'; kill -TERM $pid; wait $pid; echo \"status $?\"; "
             "pgrep -f \"$PWD/t/tm[p]\" >/dev/null && echo running; ls -A t; "
             "cat r.out >&2",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(!strcmp(c.out, "status 143\n"), "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* The CSV's temporary is a name no one can have made first: a link at
 * the name it had had ('s.csv.tmp.' and the script's pid, which a
 * program that starts it knows) had been followed, the file it named
 * written over and s.csv made a link to it. */
WG_TEST(bench_csv_temporary_is_not_a_name_made_first)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "echo precious > victim && bash -c 'ln -s victim s.csv.tmp.$$; exec "
             "\"$0\" -c s.csv -s 16 -r 1 -b scalar -H 1 > /dev/null' '%s/scripts/bench.sh'; "
             "echo \"status $?\"; cat victim; [ -L s.csv ] && echo link; head -c 5 s.csv",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "status 0\nprecious\nsize,") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A signal to the script's process group (Ctrl-C, timeout) while mktemp
 * makes the JSON's file leaves no file in $TMPDIR: a mktemp that makes its
 * file, then signals the group and only then prints the name, stands for
 * one killed after making it; an rm that signals the group first, for a
 * second signal (timeout sends two) during the clean-up.  mktemp had died
 * there, the file left and its name never known to the clean-up, and the
 * clean-up's rm had died of the second signal. */
WG_TEST(bench_signal_in_mktemp_leaves_no_temporary)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "rm -rf bm && mkdir -p bm/bin bm/t && cd bm && "
             "printf '#!/bin/sh\\nn=$(%%s \"$@\") || exit\\nkill -INT 0\\necho \"$n\"\\n' "
             "\"$(command -v mktemp)\" > bin/mktemp && "
             "printf '#!/bin/sh\\nkill -INT 0\\nexec %%s \"$@\"\\n' \"$(command -v rm)\" > bin/rm && "
             "chmod +x bin/mktemp bin/rm && "
             "cd '%s' && TMPDIR=$OLDPWD/t PATH=$OLDPWD/bin:$PATH setsid -w scripts/bench.sh "
             "-s 16 -r 1 -b scalar -H 1 >/dev/null 2>&1; echo \"status $?\"; ls -A $OLDPWD/t",
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(!strcmp(c.out, "status 130\n"), "a temporary left: %s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* Under a locale whose decimal point is a comma, the figures are read and
 * written with a point: sort -g and awk had read worldgen's seconds as
 * whole numbers and bash's printf had refused them, so the table showed
 * 0,00000s and the CSV's fields had commas inside them. */
WG_TEST(bench_figures_in_a_comma_locale)
{
    const char *loc = wg_comma_locale();
    if (!loc) {
        wg_skip("localedef cannot make de_DE.UTF-8 here");
        return;
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s '%s/scripts/bench.sh' -s 16 -r 3 -b scalar "
             "-H 1 -t -c -", loc, wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && !c.err[0], "status %d: %s", c.status, c.err);
    const char *row = strstr(c.out, "|     16 |   0.");
    CHECK(row && !memchr(row, ',', strcspn(row, "\n")), "a comma in the table: %s",
          c.out);
    const char *csv = strstr(c.out, "\n16,scalar,");
    int commas = 0;
    for (const char *p = csv; p && *++p && *p != '\n';)
        commas += *p == ',';
    CHECK(csv && commas == 10, "the CSV's row has %d commas, not 10: %s",
          commas, c.out);
    wg_cli_free(&c);
}

/* A -c that is a link to a file is written beside the file it names and
 * renamed over that file, the link staying a link: written through, a
 * write that failed (a full disk: a one-page tmpfs, a CSV of two pages)
 * had left the file cut short and its old content gone.  Now it keeps its
 * old content (and no temporary is left); a write that succeeds keeps the
 * file's mode.  The full disk here is a one-page tmpfs that the old CSV
 * fills: a CSV of one row cannot be written beside it (written through,
 * the old script had emptied the file and put the row there; the two
 * pages of 44 sizes had cost a minute of measuring). */
WG_TEST(bench_csv_through_a_link_is_whole_or_unchanged)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "mkdir -p bl && mount -t tmpfs -o size=4k tmpfs bl 2>/dev/null || exit 77; "
             "trap 'umount bl' EXIT; echo old > bl/data.csv && chmod 640 bl/data.csv && "
             "ln -sfn bl/data.csv l.csv && '%s/scripts/bench.sh' -s 16 "
             "-r 1 -b scalar -H 1 -c l.csv >/dev/null; echo \"status $?\"; cat bl/data.csv; "
             "ls -A bl; mkdir -p bd && echo old > bd/data.csv && chmod 640 bd/data.csv && "
             "ln -sfn bd/data.csv l.csv && "
             "'%s/scripts/bench.sh' -s 16 -r 1 -b scalar -H 1 -c l.csv >/dev/null; "
             "echo \"status $?\"; [ -L l.csv ] && echo link; head -c 5 bd/data.csv; echo; "
             "stat -c %%a bd/data.csv; ls -A bd",
             wg_srcdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    if (c.status == 77)
        wg_skip("cannot mount a small tmpfs here (not root?)");
    else
        CHECK(strcmp(c.out, "status 1\nold\ndata.csv\nstatus 0\nlink\nsize,\n640\n"
                            "data.csv\n") == 0 &&
                  strstr(c.err, "/l.csv': No space left on device"),
              "%s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* A -c that is another user's link in a sticky folder anyone may write
 * in (/tmp) is not followed, as worldgen's outputs are not: the script
 * resolves links by readlink, which fs.protected_symlinks does not guard,
 * and the CSV had replaced the file a link planted there named.  A link
 * of ours is followed as before.  As root, the link given to nobody. */
WG_TEST(bench_csv_through_another_users_link_in_a_sticky_folder)
{
    if (geteuid() != 0) {
        wg_skip("needs root, to give a link to another user");
        return;
    }
    wg_cli c = wg_cli_sh("rm -rf bg && mkdir -p bg/st && chmod 1777 bg/st && "
                         "echo keep > bg/victim && ln -s ../victim bg/st/w.csv && "
                         "ln -s ../mine bg/st/m.csv && chown -h 65534 bg/st/w.csv");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    c = bench_run("-s 16 -r 1 -b scalar -H 1 -c bg/st/w.csv; echo \"status $?\"; "
                  "cat bg/victim");
    CHECK(strcmp(c.out, "status 1\nkeep\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "bench.sh: -c: cannot write '") &&
              strstr(c.err, "/bg/st/w.csv': Permission denied (the symbolic link '") &&
              strstr(c.err, "/bg/st/w.csv' is another user's, in a sticky folder anyone "
                            "may write in: not followed, as fs.protected_symlinks has it)\n"),
          "%s", c.err);
    wg_cli_free(&c);
    c = bench_run("-s 16 -r 1 -b scalar -H 1 -c bg/st/m.csv > /dev/null; echo \"status $?\"; "
                  "head -c 5 bg/mine");
    CHECK(strcmp(c.out, "status 0\nsize,") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
    /* The folder owner's link is followed, as the kernel follows it. */
    c = wg_cli_sh("mkdir bg/own && chmod 1777 bg/own && chown 65534 bg/own && "
                  "ln -s ../owned bg/own/o.csv && chown -h 65534 bg/own/o.csv");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    c = bench_run("-s 16 -r 1 -b scalar -H 1 -c bg/own/o.csv > /dev/null; echo \"status $?\"; "
                  "head -c 5 bg/owned");
    CHECK(strcmp(c.out, "status 0\nsize,") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* -c /dev/stdout, /dev/fd/1 and /dev/stderr write the CSV where those
 * descriptors go: opened inside the $(...) that takes the write's errors,
 * they had named its pipe, and the CSV had been said as the error
 * ("cannot write '/dev/stdout': size,backend,...", exit 1). */
WG_TEST(bench_csv_to_a_descriptors_name)
{
    wg_cli c = bench_run("-s 16 -r 1 -b scalar -H 1 -c /dev/stdout > o.txt && "
                         "grep -c '^16,scalar,' o.txt");
    CHECK(c.status == 0 && strcmp(c.out, "1\n") == 0 && c.err[0] == '\0',
          "/dev/stdout: status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
    c = bench_run("-s 16 -r 1 -b scalar -H 1 -c /dev/fd/1 | grep -c '^16,scalar,'");
    CHECK(c.status == 0 && strcmp(c.out, "1\n") == 0 && c.err[0] == '\0',
          "/dev/fd/1: status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
    c = bench_run("-s 16 -r 1 -b scalar -H 1 -c /dev/stderr 2>&1 >/dev/null | "
                  "grep -c '^16,scalar,'");
    CHECK(c.status == 0 && strcmp(c.out, "1\n") == 0,
          "/dev/stderr: status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* The median of an even count of runs, the mean of the middle two, keeps
 * the JSON's digits: printed with %.6f it had written the steps as
 * 1.000000 in the CSV and cut a readback of 5e-08 seconds to 0.000000. */
WG_TEST(bench_median_of_an_even_count_keeps_the_digits)
{
    static const char *const runs[] = {"2", "4"};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "-s 16 -r %s -b scalar -H 1 -c -", runs[i]);
        wg_cli c = bench_run(args);
        CHECK(c.status == 0 && !c.err[0], "-r %s: status %d: %s", runs[i],
              c.status, c.err);
        const char *row = strstr(c.out, "\n16,scalar,");
        CHECK(row, "-r %s: no CSV row in:\n%s", runs[i], c.out);
        if (!row) {
            wg_cli_free(&c);
            continue;
        }
        /* size,backend, 7 figures, steps, wall */
        char field[11][64];
        int n = 0;
        const char *p = row + 1;
        while (n < 11 && *p && *p != '\n') {
            size_t len = strcspn(p, ",\n");
            snprintf(field[n++], sizeof field[0], "%.*s", (int)len, p);
            p += len + (p[len] == ',');
        }
        CHECK(n == 11, "-r %s: %d fields in: %.200s", runs[i], n, row + 1);
        CHECK(n == 11 && strcmp(field[9], "1") == 0,
              "-r %s: the steps are '%s', not 1: %.200s", runs[i],
              n == 11 ? field[9] : "", row + 1);
        for (int k = 2; k < n; k++)
            CHECK(strcmp(field[k], "0.000000") != 0,
                  "-r %s: field %d cut to six decimals: %.200s", runs[i], k,
                  row + 1);
        wg_cli_free(&c);
    }
}

/* A size named twice (in decimal and in hex too) is one row of the table
 * and of the CSV: each had been measured and shown in the table, while
 * -t, -l and the CSV showed the last one's medians in both rows. */
WG_TEST(bench_a_size_named_twice_is_one_row)
{
    wg_cli c = bench_run("-s '16 0x10 20 16' -r 1 -b scalar -H 1 -t -c -");
    CHECK(c.status == 0 && !c.err[0], "status %d: %s", c.status, c.err);
    int table = 0, csv = 0, stages = 0;
    for (const char *p = c.out; (p = strstr(p, "|     16 |")); p++)
        table++;
    for (const char *p = c.out; (p = strstr(p, "\n16,scalar,")); p++)
        csv++;
    for (const char *p = c.out; (p = strstr(p, "\n      16 scalar ")); p++)
        stages++;
    CHECK(table == 1 && csv == 1 && stages == 1,
          "16 in %d rows of the table, %d of -t, %d of the CSV:\n%s", table,
          stages, csv, c.out);
    CHECK(strstr(c.out, "|     20 |") && strstr(c.out, "\n20,scalar,"),
          "no row for 20:\n%s", c.out);
    wg_cli_free(&c);
}

/* Sizes on lines of their own (-s "$(seq 16 8 24)") are each measured, as
 * sizes between spaces are: only the first line's had been, with exit 0. */
WG_TEST(bench_sizes_on_lines_of_their_own)
{
    wg_cli c = bench_run("-s \"$(printf '\\n16\\n0x18\\n')\" -r 1 -b scalar -H 1");
    CHECK(c.status == 0 && strstr(c.out, "|     16 |") && strstr(c.out, "|     24 |"),
          "status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}
