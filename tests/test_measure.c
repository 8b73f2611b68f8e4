/* test_measure.c: the README's measuring tools, scripts/roughness.c,
 * scripts/resolution.c and scripts/drainage.c: each builds warning-free
 * with the project's compiler and measures what it says, on maps made by
 * hand and on small worlds.  Fast: three tiny compiles and worlds of 65 at
 * most. */
#include <math.h>
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

/* A new file NAME in the test's folder, open for writing; NULL (the test
 * failed) when it cannot be made. */
static FILE *measure_create(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", wg_tmpdir(), name);
    FILE *fp = fopen(path, "wb");
    CHECK(fp != NULL, "cannot write %s", path);
    return fp;
}

/* A square grey PFM of side n from v (rows y = 0 first), in the test's
 * folder. */
static void measure_pfm(const char *name, const float *v, unsigned n)
{
    FILE *fp = measure_create(name);
    if (!fp)
        return;
    fprintf(fp, "Pf\n%u %u\n-1.0\n", n, n);
    for (unsigned y = n; y-- > 0;) /* PFM: the bottom row first */
        fwrite(v + (size_t)y * n, sizeof *v, n, fp);
    fclose(fp);
}

/* Build scripts/NAME.c into ./NAME-san with AddressSanitizer (and its leak
 * checker) and UBSan; 0 on success, else -1 with the test skipped where
 * the compiler has no sanitizers, failed where the file does not build. */
static int measure_build_san(const char *name)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "${CC:-cc} -std=c11 -O1 -g -Wall -Wextra -Werror "
             "-fsanitize=address,undefined -fno-sanitize-recover=undefined "
             "-o %s-san '%s/scripts/%s.c' -lm",
             name, wg_srcdir(), name);
    wg_cli c = wg_cli_sh(cmd);
    int rc = c.status == 0 ? 0 : -1;
    if (rc && (strstr(c.err, "asan") || strstr(c.err, "sanitize")))
        wg_skip("no sanitizers in this compiler: %s", c.err);
    else
        CHECK(rc == 0, "%s.c does not build with sanitizers: %s", name, c.err);
    wg_cli_free(&c);
    return rc;
}

/* Run 'cmd' (a sanitized tool on maps it refuses): exit 1 with a message
 * and no leak or undefined behaviour reported. */
static void measure_refused_clean(const char *cmd)
{
    char sh[512];
    snprintf(sh, sizeof sh, "ASAN_OPTIONS=detect_leaks=1 %s", cmd);
    wg_cli c = wg_cli_sh(sh);
    CHECK(c.status == 1 && c.err[0] && !strstr(c.err, "Sanitizer") &&
              !strstr(c.err, "runtime error"),
          "%s: status %d: %s", cmd, c.status, c.err);
    wg_cli_free(&c);
}

/* The tools free their maps on the paths that refuse them too (they
 * returned 1 with the maps held: LeakSanitizer's "definitely lost"): two
 * sizes, a side too small, a map that cannot be read after one that was,
 * and resolution's sizes that share no vertices. */
WG_TEST(measure_tools_free_maps_they_refuse)
{
    if (measure_build_san("roughness") != 0 ||
        measure_build_san("drainage") != 0 ||
        measure_build_san("resolution") != 0)
        return;
    float v[5 * 5] = {0};
    measure_pfm("m5.pfm", v, 5);
    measure_pfm("m3.pfm", v, 3);
    measure_pfm("m2.pfm", v, 2);
    static const char *const cmd[] = {
        "./roughness-san m5.pfm m3.pfm",       "./roughness-san m2.pfm m2.pfm",
        "./roughness-san m5.pfm absent.pfm",   "./drainage-san m5.pfm m3.pfm 0.25",
        "./drainage-san m2.pfm m2.pfm 0.25",   "./drainage-san m5.pfm absent.pfm 0.25",
        "./resolution-san m3.pfm m5.pfm m3.pfm m5.pfm m5.pfm",
        "./resolution-san m5.pfm m5.pfm m5.pfm m3.pfm m3.pfm",
        "./resolution-san m3.pfm m3.pfm m3.pfm m5.pfm absent.pfm",
    };
    for (size_t i = 0; i < sizeof cmd / sizeof cmd[0]; i++)
        measure_refused_clean(cmd[i]);
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

/* A file of the header 'head', then count floats of v (NULL: zeros), then
 * the text 'tail', in the test's folder. */
static void measure_raw(const char *name, const char *head, const float *v,
                        size_t count, const char *tail)
{
    FILE *fp = measure_create(name);
    if (!fp)
        return;
    fputs(head, fp);
    for (size_t i = 0; i < count; i++) {
        float x = v ? v[i] : 0.0f;
        fwrite(&x, sizeof x, 1, fp);
    }
    fputs(tail, fp);
    fclose(fp);
}

/* pfm.h refuses what is not a square grey little-endian PFM of finite
 * values, with exit 1 and a message that names the file and what is wrong:
 * sides whose product wrapped malloc (SIGSEGV), a negative or 2^32 + 3
 * side (%u took them: the second read as 3), a 0 x 0 or oblong map, the
 * largest side with its data missing (found before 16 GiB is allocated), a
 * big-endian, nan or infinite scale, data cut short or followed by more,
 * nan or inf in the data, a missing file, a folder, a colour PFM.  The same
 * through a pipe, and a good map through a pipe still reads. */
WG_TEST(measure_pfm_read_refuses_hostile_maps)
{
    if (measure_build("roughness") != 0 || measure_build("drainage") != 0)
        return;
    float ok[9] = {0}, nan9[9] = {0}, inf9[9] = {0};
    nan9[4] = NAN;
    inf9[8] = -INFINITY;
    measure_raw("ok.pfm", "Pf\n3 3\n-1.0\n", ok, 9, "");
    measure_raw("wrap.pfm", "Pf\n2147483648 2147483648\n-1.0\n", NULL, 16, "");
    measure_raw("neg.pfm", "Pf\n-1 -1\n-1.0\n", NULL, 9, "");
    measure_raw("wide.pfm", "Pf\n4294967299 3\n-1.0\n", NULL, 9, "");
    measure_raw("zero.pfm", "Pf\n0 0\n-1.0\n", NULL, 0, "");
    measure_raw("max.pfm", "Pf\n65536 65536\n-1.0\n", NULL, 9, "");
    measure_raw("oblong.pfm", "Pf\n3 4\n-1.0\n", NULL, 12, "");
    measure_raw("big.pfm", "Pf\n3 3\n1.0\n", NULL, 9, "");
    measure_raw("nanscale.pfm", "Pf\n3 3\nnan\n", NULL, 9, "");
    measure_raw("infscale.pfm", "Pf\n3 3\n-inf\n", NULL, 9, "");
    measure_raw("short.pfm", "Pf\n3 3\n-1.0\n", NULL, 8, "");
    measure_raw("trail.pfm", "Pf\n3 3\n-1.0\n", NULL, 9, "junk");
    measure_raw("nan.pfm", "Pf\n3 3\n-1.0\n", nan9, 9, "");
    measure_raw("inf.pfm", "Pf\n3 3\n-1.0\n", inf9, 9, "");
    measure_raw("colour.pfm", "PF\n3 3\n-1.0\n", NULL, 27, "");
    static const struct {
        const char *file, *why;
    } bad[] = {
        {"wrap.pfm", "width '2147483648' is not a whole number from 1 to 65536"},
        {"neg.pfm", "width '-1'"},
        {"wide.pfm", "width '4294967299'"},
        {"zero.pfm", "width '0'"},
        {"max.pfm", "a 65536 x 65536 PFM 17179869184: it is cut short"},
        {"oblong.pfm", "3 x 4: the map is not square"},
        {"big.pfm", "big-endian"},
        {"nanscale.pfm", "scale 'nan' is not a finite number"},
        {"infscale.pfm", "scale '-inf' is not a finite number"},
        {"short.pfm", "it is cut short"},
        {"trail.pfm", "something follows the data"},
        {"nan.pfm", "1 values that are not finite, the first nan at vertex (1, 1)"},
        {"inf.pfm", "not finite, the first -inf at vertex (2, 0)"},
        {"absent.pfm", "absent.pfm: No such file or directory"},
        {".", ".: Is a directory"},
        {"colour.pfm", "'PF' is a colour one"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "./roughness ok.pfm %s", bad[i].file);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 1 && strstr(c.err, bad[i].file) &&
                  strstr(c.err, bad[i].why) && !c.out[0],
              "%s: status %d, not 1 with '%s': %s", cmd, c.status,
              bad[i].why, c.err);
        wg_cli_free(&c);
    }
    /* Not a regular file: what is read is checked as it comes. */
    static const struct {
        const char *cmd, *why;
    } piped[] = {
        {"cat trail.pfm | ./roughness /dev/stdin ok.pfm", "follows the data"},
        {"cat short.pfm | ./roughness /dev/stdin ok.pfm", "cut short"},
        {"cat nan.pfm | ./drainage ok.pfm /dev/stdin 0.25", "not finite"},
        {"cat ok.pfm | ./roughness /dev/stdin ok.pfm", NULL},
    };
    for (size_t i = 0; i < sizeof piped / sizeof piped[0]; i++) {
        wg_cli c = wg_cli_sh(piped[i].cmd);
        if (piped[i].why)
            CHECK(c.status == 1 && strstr(c.err, piped[i].why) && !c.out[0],
                  "%s: status %d: %s", piped[i].cmd, c.status, c.err);
        else
            CHECK(c.status == 0 && strstr(c.out, "0 peaks"),
                  "%s: status %d: %s", piped[i].cmd, c.status, c.err);
        wg_cli_free(&c);
    }
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
    CHECK(strstr(c.out, "water deeper than 0.001:") &&
              strstr(c.out, "water deeper than 0.003:") &&
              strstr(c.out, "water deeper than 0.01:"),
          "output:\n%s", c.out);
    wg_cli_free(&c);
}

/* A constant square map of side n (0 for a 0 x 0 header), in the test's
 * folder. */
static void measure_flat(const char *name, unsigned n, float v)
{
    float *f = malloc(((size_t)n * n + 1) * sizeof *f);
    for (size_t i = 0; i < (size_t)n * n; i++)
        f[i] = v;
    measure_pfm(name, f, n);
    free(f);
}

/* Maps the comparison cannot use are refused with exit 1 and nothing on
 * standard output, never a crash or a nan: a 1 x 1 small world (its side
 * minus one was a divisor), an H1 of another size than T1 (it was read as
 * T1's size), a big world smaller than the small one, a 0 x 0 big one, and
 * an erosion that changed nothing (no change to share). */
WG_TEST(measure_resolution_refuses_maps_that_do_not_match)
{
    if (measure_build("resolution") != 0)
        return;
    measure_flat("a1.pfm", 1, 0.3f);
    measure_flat("b1.pfm", 1, 0.4f);
    measure_flat("a2.pfm", 2, 0.3f);
    measure_flat("b2.pfm", 2, 0.4f);
    measure_flat("a3.pfm", 3, 0.3f);
    measure_flat("b3.pfm", 3, 0.4f);
    measure_flat("a5.pfm", 5, 0.3f);
    measure_flat("b5.pfm", 5, 0.4f);
    measure_flat("a0.pfm", 0, 0.0f);
    static const struct {
        const char *args, *why;
    } bad[] = {
        {"a1.pfm b1.pfm a1.pfm a5.pfm a5.pfm", "share no vertices"},
        {"a3.pfm b5.pfm a3.pfm a5.pfm a5.pfm", "b5.pfm is 5 a side"},
        {"a3.pfm b3.pfm a3.pfm a5.pfm b3.pfm", "b3.pfm is 3 a side"},
        {"a3.pfm b3.pfm a3.pfm a1.pfm a1.pfm", "share no vertices"},
        {"a3.pfm a3.pfm a3.pfm a1.pfm a1.pfm", "share no vertices"},
        {"a2.pfm b2.pfm a2.pfm a0.pfm a0.pfm", ""}, /* the side or pfm.h */
        {"a3.pfm a3.pfm a3.pfm a5.pfm a5.pfm", "changed no height"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "./resolution %s", bad[i].args);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 1 && strstr(c.err, bad[i].why) && !c.out[0],
              "%s: status %d, not 1 with '%s': %s%s", cmd, c.status,
              bad[i].why, c.err, c.out);
        wg_cli_free(&c);
    }
}

/* scripts/resolution.sh and what it builds, copied into the folder 'dir'
 * of the test's folder (shared by every test, so ./worldgen stays as it
 * is), beside 'worldgen', a shell script or NULL for the binary under
 * test; 0 on success. */
static int measure_copy_resolution_sh(const char *dir, const char *worldgen)
{
    char cmd[8192];
    const char *src = wg_srcdir();
    int len = snprintf(cmd, sizeof cmd,
                       "rm -rf %s && mkdir -p %s/scripts %s/render && cp "
                       "'%s/scripts/resolution.sh' '%s/scripts/resolution.c' "
                       "'%s/scripts/pfm.h' '%s/scripts/out.h' %s/scripts/ && "
                       "cp '%s/render/stats.h' %s/render/ && ",
                       dir, dir, dir, src, src, src, src, dir, src, dir);
    if (worldgen)
        snprintf(cmd + len, sizeof cmd - (size_t)len,
                 "printf '%%s\\n' '%s' > %s/worldgen && chmod +x %s/worldgen",
                 worldgen, dir, dir);
    else
        snprintf(cmd + len, sizeof cmd - (size_t)len,
                 "ln -s '%s/worldgen' %s/worldgen", src, dir);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "%s: %s", cmd, c.err);
    int rc = c.status == 0 ? 0 : -1;
    wg_cli_free(&c);
    return rc;
}

/* resolution.sh checks SMALL and BIG before any run (they were found out
 * only after the three worldgen runs, 70 s at the defaults): sides that
 * share no vertices, a big world smaller than the small one, sizes out of
 * 2..65536 or not numbers are a usage error, exit 2, naming the value; a
 * worldgen that records its runs is never called. */
WG_TEST(measure_resolution_sh_checks_sizes_before_running)
{
    if (measure_copy_resolution_sh("rsh-sizes", "#!/bin/sh\n"
                                   "echo \"$*\" >> runs; exit 3") != 0)
        return;
    static const struct {
        const char *args, *why;
    } bad[] = {
        {"5 8", "sizes 5 and 8 share no vertices"},
        {"9 5", "sizes 9 and 5 share no vertices"},
        {"1 5", "SMALL '1' is not a size from 2 to 65536"},
        {"33 70000", "BIG '70000' is not a size from 2 to 65536"},
        {"33 65x", "BIG '65x'"},
        {"513 --seed 7", "BIG '--seed'"},
        /* It had gone to worldgen: "worldgen: unexpected argument". */
        {"17 33 extra", "resolution.sh: 'extra': an argument this script does not take"},
        /* Options after -- that undo the comparison: they had given 0% (two
         * 9x9 worlds) or 776% (a region), with exit 0. */
        {"17 33 -- --size 9", "worldgen option '--size' (--size): the script compares "
                              "whole worlds"},
        {"17 33 -- --reg 0,0,10,10", "worldgen option '--reg' (--region)"},
        {"17 33 -- --watermap=w.pfm", "worldgen option '--watermap=w.pfm' (--watermap)"},
        {"17 33 -- --json r.json", "makes no output but its comparison (--json)"},
        {"17 33 -- -qV", "worldgen option '-qV': the script runs worldgen itself"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "rsh-sizes/scripts/resolution.sh %s",
                 bad[i].args);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 2 && strstr(c.err, bad[i].why) &&
                  strstr(c.err, "usage"),
              "%s: status %d, not 2 with '%s': %s", cmd, c.status,
              bad[i].why, c.err);
        wg_cli_free(&c);
    }
    wg_cli c = wg_cli_sh("cat rsh-sizes/runs");
    CHECK(c.status != 0, "worldgen ran:\n%s", c.out);
    wg_cli_free(&c);
}

/* A --mesh of the user's is theirs alone: the script's own --mesh auto
 * had made worldgen warn, in each run, that --mesh was given twice. */
WG_TEST(measure_resolution_sh_takes_a_mesh_without_warning)
{
    if (measure_copy_resolution_sh("rsh-mesh", NULL) != 0)
        return;
    wg_cli c = wg_cli_sh("rsh-mesh/scripts/resolution.sh 3 5 -- --mesh scalar");
    CHECK(c.status == 0 && strstr(c.out, "3 against 5") && c.err[0] == '\0',
          "status %d: %s%s", c.status, c.err, c.out);
    wg_cli_free(&c);
}

/* Options worldgen refuses (--hyd with no value) are found before any
 * run, a usage error of the script's (exit 2): the first run had been
 * made and the second had failed, with worldgen's usage line alone.  A
 * warning the runs give (--view with no picture) is said once, not once
 * for each of the three runs. */
WG_TEST(measure_resolution_sh_judges_worldgens_options_first)
{
    if (measure_copy_resolution_sh("rsh-opts", NULL) != 0)
        return;
    wg_cli c = wg_cli_sh("rsh-opts/scripts/resolution.sh 3 5 -- --hyd");
    CHECK(c.status == 2 && c.out[0] == '\0' &&
              strstr(c.err, "worldgen: option '--hyd' needs a value") &&
              strstr(c.err, "resolution.sh: worldgen refused the options after -- "
                            "(its message above)\nusage: scripts/resolution.sh"),
          "status %d: %s%s", c.status, c.err, c.out);
    wg_cli_free(&c);
    c = wg_cli_sh("rsh-opts/scripts/resolution.sh 3 5 -- --view map");
    CHECK(c.status == 0 && strstr(c.out, "3 against 5") &&
              strcmp(c.err, "worldgen: warning: --view does nothing: this run makes "
                            "no picture\n") == 0,
          "status %d: %s%s", c.status, c.err, c.out);
    wg_cli_free(&c);
}

/* Options under which erosion changes nothing leave no share to give:
 * resolution.sh fails (exit 1, saying so) instead of printing -nan%. */
WG_TEST(measure_resolution_sh_fails_when_erosion_changes_nothing)
{
    if (measure_copy_resolution_sh("rsh-none", NULL) != 0)
        return;
    wg_cli c = wg_cli_sh("rsh-none/scripts/resolution.sh 3 5 -- "
                         "--erosion 0 --hydraulic 0");
    CHECK(c.status == 1 && strstr(c.err, "erosion changed no height at 3") &&
              !strstr(c.out, "nan"),
          "status %d: %s%s", c.status, c.err, c.out);
    wg_cli_free(&c);
}

/* Without the compiler it builds its measure with ($CC, or cc), a message
 * naming it and exit 1; it had ended with 127, "cc: command not found". */
WG_TEST(measure_resolution_sh_without_a_compiler_says_so)
{
    if (measure_copy_resolution_sh("rsh-cc", NULL) != 0)
        return;
    wg_cli c = wg_cli_sh("CC=no-such-cc rsh-cc/scripts/resolution.sh 3 5");
    CHECK(c.status == 1 && strstr(c.err, "resolution.sh: cannot build "
                                         "scripts/resolution.c with 'no-such-cc'"),
          "status %d: %s%s", c.status, c.err, c.out);
    wg_cli_free(&c);
}

/* drainage's figures for one surface ("water surface" or "ground"). */
typedef struct {
    long pits, sea, border, to_pits, deep_pits, to_deep;
    double fill;
} measure_drain;

static int measure_drain_parse(const char *out, const char *name,
                               measure_drain *d)
{
    static const char *const key[] = {"pits", "to sea", "to border",
                                      "to pits", "deep pits", "to deep pits",
                                      "mean fill depth"};
    long *v[] = {&d->pits, &d->sea, &d->border, &d->to_pits, &d->deep_pits,
                 &d->to_deep};
    for (int k = 0; k < 7; k++) {
        char label[64];
        snprintf(label, sizeof label, "\n%s %s: ", name, key[k]);
        const char *p = strstr(out, label);
        if (!p || (k < 6 ? sscanf(p + strlen(label), "%ld", v[k])
                         : sscanf(p + strlen(label), "%lf", &d->fill)) != 1)
            return -1;
    }
    return 0;
}

/* Run drainage on h.pfm and w.pfm with SEA 'sea'; the land cells and both
 * surfaces' figures, or -1 with a failed check. */
static long measure_drain_run(const char *sea, measure_drain *water,
                              measure_drain *ground)
{
    char cmd[256];
    long land = -1;
    snprintf(cmd, sizeof cmd, "./drainage h.pfm w.pfm %s", sea);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "%s: status %d: %s", cmd, c.status, c.err);
    int ok = c.status == 0 && sscanf(c.out, "land cells: %ld", &land) == 1 &&
             measure_drain_parse(c.out, "water surface", water) == 0 &&
             measure_drain_parse(c.out, "ground", ground) == 0;
    CHECK(ok, "%s, output:\n%s", cmd, c.out);
    wg_cli_free(&c);
    return ok ? land : -1;
}

/* a matches b to the 7 digits drainage prints */
#define DRAIN_NEAR(a, b) (fabs((a) - (b)) <= 1e-6 * fabs(b))

#define DRAIN_IS(d, p, s, b, tp, dp, td)                                    \
    CHECK((d).pits == (p) && (d).sea == (s) && (d).border == (b) &&         \
              (d).to_pits == (tp) && (d).deep_pits == (dp) &&               \
              (d).to_deep == (td),                                          \
          #d ": %ld pits, %ld to sea, %ld to border, %ld to pits, %ld deep " \
             "pits, %ld to them", (d).pits, (d).sea, (d).border,           \
          (d).to_pits, (d).deep_pits, (d).to_deep)

/* The plane of the drainage tests, N = 7 (DRAIN_PLANE_N): 0.01 a row up
 * from a row of sea (0.1 under 0.25 of water), with a hole 0.05 deep at
 * (3, 4) that water fills level. */
enum { DRAIN_PLANE_N = 7 };
static void measure_drain_plane(float *h, float *w)
{
    const int N = DRAIN_PLANE_N;
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
            h[y * N + x] = y ? 0.3f + 0.01f * (float)y : 0.1f;
            w[y * N + x] = y ? 0.0f : 0.25f - 0.1f;
        }
    h[4 * N + 3] -= 0.05f;
    w[4 * N + 3] = 0.05f;
}

/* A plane tilted down to a row of sea, N = 7, with a hole 0.05 deep in its
 * ground that water fills level: the water surface's 25 land cells all run
 * to the sea; the ground's hole takes its three columns from the row below
 * it up (9 cells), filled 0.04 to the level of the cell below it.  With SEA
 * 0.05 the sea row is land on the border, where everything else ends. */
WG_TEST(measure_drainage_plane_to_the_sea)
{
    if (measure_build("drainage") != 0)
        return;
    enum { N = DRAIN_PLANE_N };
    float h[N * N], w[N * N];
    measure_drain_plane(h, w);
    measure_pfm("h.pfm", h, N);
    measure_pfm("w.pfm", w, N);
    measure_drain water, ground;
    long land = measure_drain_run("0.25", &water, &ground);
    CHECK(land == 25, "%ld land cells", land);
    DRAIN_IS(water, 0, 25, 0, 0, 0, 0);
    CHECK(water.fill == 0, "water surface mean fill depth %g", water.fill);
    DRAIN_IS(ground, 1, 16, 0, 9, 1, 9);
    double fill = ((double)h[3 * N + 3] - (double)h[4 * N + 3]) / 25;
    CHECK(DRAIN_NEAR(ground.fill, fill), "ground mean fill depth %.9g, "
          "not %.9g", ground.fill, fill);
    land = measure_drain_run("0.05", &water, &ground);
    CHECK(land == 25, "SEA 0.05: %ld land cells", land);
    DRAIN_IS(water, 0, 0, 25, 0, 0, 0);
    DRAIN_IS(ground, 1, 0, 16, 9, 1, 9);
}

/* A bowl, N = 9, no sea: every one of the 49 land cells runs down to the
 * one pit at its centre, 0.16 below the lowest border cell, and every cell
 * under that level is filled up to it. */
WG_TEST(measure_drainage_bowl_has_one_deep_pit)
{
    if (measure_build("drainage") != 0)
        return;
    enum { N = 9 };
    float h[N * N], w[N * N];
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
            h[y * N + x] = 0.5f + 0.01f * (float)((x - 4) * (x - 4) +
                                                  (y - 4) * (y - 4));
            w[y * N + x] = 0.0f;
        }
    measure_pfm("h.pfm", h, N);
    measure_pfm("w.pfm", w, N);
    measure_drain water, ground;
    long land = measure_drain_run("0.25", &water, &ground);
    CHECK(land == 49, "%ld land cells", land);
    DRAIN_IS(water, 1, 0, 0, 49, 1, 49);
    DRAIN_IS(ground, 1, 0, 0, 49, 1, 49);
    double fill = 0, rim = h[4]; /* (4, 0): the lowest border cell */
    for (int y = 1; y < N - 1; y++)
        for (int x = 1; x < N - 1; x++)
            fill += h[y * N + x] < rim ? rim - (double)h[y * N + x] : 0.0;
    fill /= 49;
    CHECK(DRAIN_NEAR(ground.fill, fill) && DRAIN_NEAR(water.fill, fill),
          "mean fill depth %.9g and %.9g, not %.9g", ground.fill, water.fill,
          fill);
}

/* A gentle plane (0.0001 a row) down to a row of sea, N = 9, with two
 * holes in row 5: one 0.05 deep at x = 2, one 0.0005 deep at x = 6 (filled
 * 0.0004 to its lowest neighbour's level: shallow).  Each takes its three
 * columns from row 4 up, 12 cells of the 49; only the first is deep. */
WG_TEST(measure_drainage_tells_deep_pits_from_shallow)
{
    if (measure_build("drainage") != 0)
        return;
    enum { N = 9 };
    float h[N * N], w[N * N];
    for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
            h[y * N + x] = y ? 0.3f + 0.0001f * (float)y : 0.1f;
            w[y * N + x] = 0.0f;
        }
    h[5 * N + 2] -= 0.05f;
    h[5 * N + 6] -= 0.0005f;
    measure_pfm("h.pfm", h, N);
    measure_pfm("w.pfm", w, N);
    measure_drain water, ground;
    long land = measure_drain_run("0.25", &water, &ground);
    CHECK(land == 49, "%ld land cells", land);
    DRAIN_IS(water, 2, 25, 0, 24, 1, 12);
    DRAIN_IS(ground, 2, 25, 0, 24, 1, 12);
    double fill = ((double)h[4 * N + 2] - (double)h[5 * N + 2] +
                   (double)h[4 * N + 6] - (double)h[5 * N + 6]) / 49;
    CHECK(DRAIN_NEAR(ground.fill, fill), "mean fill depth %.9g, not %.9g",
          ground.fill, fill);
}

/* A tie, N = 5, no sea: the centre (0.5) drops 0.1 to the left (0.4, then
 * the border at 0.3) and 0.1 to the right (0.4, a pit 0.1 deep); the first
 * in the order, the left, takes it and the cells above and below it that
 * run to it: 6 of the 9 to the border, 3 to the pit. */
WG_TEST(measure_drainage_breaks_ties_in_order)
{
    if (measure_build("drainage") != 0)
        return;
    enum { N = 5 };
    float h[N * N], w[N * N];
    for (int i = 0; i < N * N; i++)
        h[i] = 0.9f, w[i] = 0.0f;
    h[2 * N + 0] = 0.3f;
    h[2 * N + 1] = h[2 * N + 3] = 0.4f;
    h[2 * N + 2] = 0.5f;
    measure_pfm("h.pfm", h, N);
    measure_pfm("w.pfm", w, N);
    measure_drain water, ground;
    long land = measure_drain_run("0.25", &water, &ground);
    CHECK(land == 9, "%ld land cells", land);
    DRAIN_IS(ground, 1, 0, 6, 3, 1, 3);
}

/* Where the water goes, on the plane of measure_drainage_plane_to_the_sea
 * (N = 7, 0.01 a row up from a row of sea): a lake, the hole at (3, 4)
 * filled level with 0.05 of water, takes the cell above it and itself; a
 * dry hole 0.015 deep at (1, 3) takes itself, the two cells above it and
 * the three of the next column that fall to it faster than down their
 * own: 6 cells, one dry pit; the other 17 of the 25 reach the sea.
 * Water just under WET (0.001) is dry ground. */
WG_TEST(measure_drainage_into_lakes_rivers_and_dry_pits)
{
    if (measure_build("drainage") != 0)
        return;
    enum { N = DRAIN_PLANE_N };
    float h[N * N], w[N * N];
    measure_drain_plane(h, w);
    h[3 * N + 1] -= 0.015f;
    w[3 * N + 1] = 0.00099f;
    measure_pfm("h.pfm", h, N);
    measure_pfm("w.pfm", w, N);
    wg_cli c = wg_cli_sh("./drainage h.pfm w.pfm 0.25");
    CHECK(c.status == 0 &&
              strstr(c.out, "\ninto water to sea: 17 cells, 68.00%\n") &&
              strstr(c.out, "\ninto water to lakes and rivers: 2 cells, 8.00%\n") &&
              strstr(c.out, "\ninto water to border: 0 cells, 0.00%\n") &&
              strstr(c.out, "\ninto water to dry pits: 6 cells, 24.00%\n") &&
              strstr(c.out, "\ninto water dry pits: 1\n"),
          "status %d: %s%s", c.status, c.err, c.out);
    wg_cli_free(&c);
}

/* Maps of two sizes, a missing argument and a SEA that is not a height
 * from 0 to 1 are refused. */
WG_TEST(measure_drainage_refuses_bad_input)
{
    if (measure_build("drainage") != 0)
        return;
    float h[9 * 9] = {0};
    measure_pfm("h.pfm", h, 9);
    measure_pfm("small.pfm", h, 5);
    wg_cli c = wg_cli_sh("./drainage h.pfm small.pfm 0.25");
    CHECK(c.status == 1 && strstr(c.err, "differ") && !c.out[0],
          "two sizes: status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("./drainage h.pfm h.pfm");
    CHECK(c.status == 2 && strstr(c.err, "usage"), "no SEA: status %d: %s",
          c.status, c.err);
    wg_cli_free(&c);
    static const char *const bad[] = {"x", "1.5", "-0.1", "nan", "0.25x", "''"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "./drainage h.pfm h.pfm %s", bad[i]);
        c = wg_cli_sh(cmd);
        CHECK(c.status == 2 && strstr(c.err, "SEA must be"),
              "SEA %s: status %d: %s", bad[i], c.status, c.err);
        wg_cli_free(&c);
    }
}

/* Figures that cannot be written (standard output on a full disk, or
 * closed) are a failure that says why, exit 1: the tools had exited 0
 * with the figures lost (and limits.c, which shares out.h, had let
 * bench.sh -l keep a cut build/limits.txt). */
WG_TEST(measure_tools_say_lost_figures)
{
    if (measure_build("roughness") != 0 || measure_build("drainage") != 0 ||
        measure_build("resolution") != 0)
        return;
    float flat[5 * 5] = {0}, bump[5 * 5] = {0};
    bump[12] = 0.5f;
    measure_pfm("flat.pfm", flat, 5);
    measure_pfm("bump.pfm", bump, 5);
    static const struct {
        const char *prog, *args;
    } tool[] = {
        {"roughness", "bump.pfm flat.pfm"},
        {"drainage", "bump.pfm flat.pfm 0.25"},
        {"resolution", "flat.pfm bump.pfm flat.pfm bump.pfm flat.pfm"},
    };
    for (size_t i = 0; i < sizeof tool / sizeof tool[0]; i++) {
        static const char *const to[][2] = {
            {">/dev/full", "No space left on device"},
            {">&-", "Bad file descriptor"},
        };
        for (int k = 0; k < 2; k++) {
            char cmd[512], want[256];
            snprintf(cmd, sizeof cmd, "./%s %s %s", tool[i].prog,
                     tool[i].args, to[k][0]);
            snprintf(want, sizeof want,
                     "%s: cannot write to standard output: %s\n",
                     tool[i].prog, to[k][1]);
            wg_cli c = wg_cli_sh(cmd);
            CHECK(c.status == 1 && strcmp(c.err, want) == 0,
                  "%s: status %d: %s", cmd, c.status, c.err);
            wg_cli_free(&c);
        }
        char cmd[512];
        snprintf(cmd, sizeof cmd, "./%s %s | wc -l", tool[i].prog,
                 tool[i].args);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 0 && atoi(c.out) >= 2 && c.err[0] == '\0',
              "%s: status %d: %s%s", cmd, c.status, c.out, c.err);
        wg_cli_free(&c);
    }
}
