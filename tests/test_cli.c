/* test_cli.c: the command line as a user meets it: good runs, every kind of
 * bad value (named in the message, exit status 2), help, version, and the
 * manual page covering every option --help lists. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* One command line, the exit status it must give and a piece of text its
 * standard error must hold. */
typedef struct cli_case {
    const char *argv[12];
    int status;
    const char *err_has;
} cli_case;

static void cli_check_cases(const cli_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        wg_cli c = wg_cli_run(cases[i].argv);
        char line[256] = "";
        for (int a = 0; cases[i].argv[a]; a++)
            snprintf(line + strlen(line), sizeof line - strlen(line), " %s",
                     cases[i].argv[a]);
        CHECK(c.status == cases[i].status, "worldgen%s: status %d, want %d; "
              "stderr: %s", line, c.status, cases[i].status, c.err);
        CHECK(strstr(c.err, cases[i].err_has) != NULL,
              "worldgen%s: stderr lacks \"%s\": %s", line, cases[i].err_has,
              c.err);
        if (cases[i].status == 2)
            CHECK(c.out_len == 0, "worldgen%s: a usage error printed to stdout",
                  line);
        wg_cli_free(&c);
    }
}

WG_TEST(cli_bad_numbers_are_refused_by_name)
{
    static const cli_case cases[] = {
        {{"--size", "12abc"}, 2, "--size: '12abc' is not a whole number (valid: 2..65536"},
        {{"--size", ""}, 2, "--size: '' is not a whole number"},
        {{"--size", "-5"}, 2, "--size: '-5'"},
        {{"--size", "+5"}, 2, "--size: '+5'"},
        {{"--size", " 64"}, 2, "--size: ' 64'"},
        {{"--size", "64 "}, 2, "--size: '64 '"},
        {{"--size", "1"}, 2, "--size: '1' is out of range (valid: 2..65536)"},
        {{"--size", "65537"}, 2, "--size: '65537' is out of range"},
        {{"--size", "99999999999999999999999"}, 2, "is out of range"},
        {{"--size", "nan"}, 2, "--size: 'nan'"},
        {{"--size", "inf"}, 2, "--size: 'inf'"},
        {{"--size", "6.5"}, 2, "--size: '6.5'"},
        {{"--size", "1e3"}, 2, "--size: '1e3'"},
        {{"--size", "0x"}, 2, "--size: '0x'"},
        {{"--seed", "-1"}, 2, "--seed: '-1' is not a whole number (valid: 0..18446744073709551615"},
        {{"--seed", "18446744073709551616"}, 2, "--seed: '18446744073709551616' is out of range"},
        {{"--seed", "0x10000000000000000"}, 2, "--seed: '0x10000000000000000' is out of range"},
        {{"--seed", "0xfg"}, 2, "--seed: '0xfg'"},
        {{"--seed", ""}, 2, "--seed: ''"},
        {{"--octaves", "0"}, 2, "--octaves: '0' is out of range (valid: 1..16)"},
        {{"--octaves", "17"}, 2, "--octaves: '17' is out of range (valid: 1..16)"},
        {{"--octaves", "six"}, 2, "--octaves: 'six'"},
        {{"--erosion", "10001"}, 2, "--erosion: '10001' is out of range (valid: 0..10000)"},
        {{"--erosion", "-1"}, 2, "--erosion: '-1'"},
        {{"--mesh", "gpu"}, 2, "--mesh: 'gpu' is not a backend (valid: scalar"},
        {{"--mesh", ""}, 2, "--mesh: ''"},
        {{"--heightmap-format", "bmp"}, 2, "--heightmap-format: 'bmp' is not a height map format (valid: pfm, png, r16 or raw, tif or tiff)"},
        {{"--heightmap", "out.bmp"}, 2, "--heightmap: 'out.bmp' has no known extension "
                                        "(valid: .pfm, .png, .r16 or .raw, .tif or .tiff, "
                                        "in any case;"},
        {{"--heightmap", "-"}, 2, "--heightmap -: give the format with --heightmap-format"},
        {{"--size"}, 2, "option '--size' needs a value: --size N vertices per side, "
                        "2..65536, or up to 1048577 with --region (default 512)\n"},
        /* Its own help entry, not one that mentions it (--region's). */
        {{"-q", "--json"}, 2, "option '--json' needs a value: --json FILE the timings"},
        {{"--sea"}, 2, "option '--sea' needs a value: --sea-level H the sea's height, "
                       "0..1 (default 0.25)\n"},
        {{"--bogus"}, 2, "unknown option '--bogus'"},
        {{"-x"}, 2, "unknown option '-x'"},
        {{"stray"}, 2, "unexpected argument 'stray'"},
    };
    cli_check_cases(cases, sizeof cases / sizeof cases[0]);
}

WG_TEST(cli_good_runs)
{
    static const cli_case cases[] = {
        {{"--size", "2", "-q"}, 0, ""},
        {{"--size", "0x40", "--seed", "0xDEADBEEF", "-q"}, 0, ""},
        {{"--size", "33", "--seed", "18446744073709551615", "--octaves", "16",
          "--erosion", "0", "-q"}, 0, ""},
        {{"--size=17", "--octaves=1", "--erosion=3", "--mesh=scalar", "-q"}, 0, ""},
    };
    cli_check_cases(cases, sizeof cases / sizeof cases[0]);
}

WG_TEST(cli_table_has_world_line_and_backend_row)
{
    /* --mesh auto, the default, picks openmp or scalar by the machine:
     * scalar here, whose speedup against itself is 1. */
    const char *argv[] = {"--size", "40", "--seed", "7", "--octaves", "3",
                          "--erosion", "2", "--hydraulic", "200", "--sea-level",
                          "0.3", "--mesh", "scalar", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    CHECK(strstr(c.out, "world   40x40 grid, 3 octaves, 2 erosion passes, "
                        "200 hydraulic steps, sea level 0.3, seed 7\n"),
          "%s", c.out);
    CHECK(strstr(c.out, "backend      setup   terrain   erosion hydraulic   "
                        "normals  readback     total  speedup"),
          "%s", c.out);
    /* Every stage has its column, and total is their sum (setup apart). */
    const char *row = strstr(c.out, "\n  scalar ");
    double t[8] = {0};
    CHECK(row && sscanf(row, " scalar %lfs %lfs %lfs %lfs %lfs %lfs %lfs %lfx",
                        &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6],
                        &t[7]) == 8, "%s", c.out);
    double sum = t[1] + t[2] + t[3] + t[4] + t[5];
    CHECK(t[3] > 0.0 && fabs(sum - t[6]) <= 0.00025, "hydraulic %g, stages "
          "add up to %g, total %g", t[3], sum, t[6]);
    CHECK(t[7] == 1.0, "scalar's speedup against itself: %s", c.out);
    wg_cli_free(&c);
}

WG_TEST(cli_quiet_prints_nothing)
{
    const char *argv[] = {"--size", "16", "--quiet", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 0 && c.out_len == 0 && c.err[0] == '\0', "%s%s", c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(cli_histogram_percentages_and_bounds)
{
    const char *argv[] = {"--size", "128", "--histogram", "-q", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 0);
    const char *p = strstr(c.out, "heights   0:");
    CHECK(p != NULL, "%s", c.out);
    int sum = 0;
    for (int i = 0; p && i < 10; i++) {
        char key[8];
        snprintf(key, sizeof key, " %d:", i);
        const char *k = strstr(p, key);
        CHECK(k != NULL, "bin %d missing", i);
        if (k)
            sum += atoi(k + strlen(key));
    }
    CHECK(sum >= 95 && sum <= 105, "bins add up to %d%%", sum);
    float p15 = 0, p50 = 0, p85 = 0;
    const char *b = strstr(c.out, "quantiles p15 ");
    CHECK(b && sscanf(b, "quantiles p15 %f  p50 %f  p85 %f", &p15, &p50, &p85) == 3,
          "%s", c.out);
    CHECK(0 < p15 && p15 < p50 && p50 < p85 && p85 < 1, "%g %g %g", p15, p50, p85);
    /* The share under water and under the sea, which the sea level moves:
     * the sea is water, but for its edge, shallower than 0.001. */
    float water = -1, sea = -1, level = -1;
    const char *w = strstr(c.out, "water     ");
    CHECK(w && sscanf(w, "water     %f%% under water (deeper than 0.001), %f%% "
                         "under the sea (below %f)", &water, &sea, &level) == 3,
          "%s", c.out);
    CHECK(level == 0.25f && sea > 0 && sea < 50 && water > sea - 1 && water < 100,
          "water %g%%, sea %g%% below %g", water, sea, level);
    wg_cli_free(&c);
    const char *high[] = {"--size", "128", "--histogram", "-q", "--sea-level",
                          "0.5", "--hydraulic", "0", "--no-image", NULL};
    c = wg_cli_run(high);
    float water2 = -1, sea2 = -1;
    w = strstr(c.out, "water     ");
    CHECK(c.status == 0 && w &&
          sscanf(w, "water     %f%% under water (deeper than 0.001), %f%% under "
                    "the sea (below 0.5)", &water2, &sea2) == 2, "%s", c.out);
    CHECK(sea2 > sea + 20 && water2 > sea2 - 1, "sea at 0.5: %g%%, water "
          "%g%% (at 0.25: %g%%)", sea2, water2, sea);
    wg_cli_free(&c);
}

/* The percentiles lie within the heights' range: they are 16-bit bins'
 * heights, and a 2x2 world's p85 (0.740978122) was above its max
 * (0.74097693) in the JSON. */
WG_TEST(cli_percentiles_within_the_range)
{
    int fails = 0;
    for (int seed = 1; seed <= 40; seed++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "./worldgen --size %d --seed %d --mesh scalar --erosion 0 "
                 "--hydraulic 0 --histogram -q --no-image --json -", 2 + seed % 3, seed);
        wg_cli c = wg_cli_sh(cmd);
        double lo = 0, hi = 0, p[3] = {0};
        const char *h = strstr(c.out, "\"min\": ");
        int ok = c.status == 0 && h &&
                 sscanf(h, "\"min\": %lf, \"max\": %lf, \"p15\": %lf, \"p50\": %lf, "
                           "\"p85\": %lf", &lo, &hi, &p[0], &p[1], &p[2]) == 5;
        CHECK(ok, "%s %s", c.out, c.err);
        if (ok && !(lo <= p[0] && p[0] <= p[1] && p[1] <= p[2] && p[2] <= hi) && fails++ < 3)
            CHECK(0, "seed %d: min %.9g p15 %.9g p50 %.9g p85 %.9g max %.9g", seed, lo,
                  p[0], p[1], p[2], hi);
        wg_cli_free(&c);
    }
    CHECK(fails == 0, "%d of 40 worlds have a percentile outside their range", fails);
}

WG_TEST(cli_help_and_version)
{
    const char *help[] = {"--help", NULL}, *version[] = {"--version", NULL};
    wg_cli c = wg_cli_run(help);
    CHECK(c.status == 0 && strstr(c.out, "Usage: worldgen") && c.err[0] == '\0');
    wg_cli_free(&c);
    c = wg_cli_run(version);
    CHECK(c.status == 0 && strncmp(c.out, "worldgen ", 9) == 0, "%s", c.out);
    wg_cli_free(&c);
    /* They act once every option is read and checked: a bad value before
     * or after them is a usage error all the same (after them, it had
     * exited 0), and so are options that do not go together. */
    const char *bad[][6] = {{"--help", "--bogus", NULL},
                            {"--version", "--size", "0", NULL},
                            {"--list-devices", "--aa", "9", NULL},
                            {"--size", "0", "--version", NULL},
                            {"--version", "--size", "50", "--region", "10,10,50,5", NULL}};
    for (int i = 0; i < 5; i++) {
        c = wg_cli_run(bad[i]);
        CHECK(c.status == 2 && c.out[0] == '\0' && strstr(c.err, "worldgen: "), "%s: %d %s %s",
              bad[i][0], c.status, c.out, c.err);
        wg_cli_free(&c);
    }
}

/* --help is read in a terminal of 80 columns: every line fits, as GNU's
 * help does (the --seed and --mesh lines had run to 81 and 88, wrapping
 * mid-word). */
WG_TEST(cli_help_fits_80_columns)
{
    const char *help[] = {"--help", NULL};
    wg_cli c = wg_cli_run(help);
    CHECK(c.status == 0, "status %d", c.status);
    int n = 0;
    for (const char *line = c.out; *line; n++) {
        size_t len = strcspn(line, "\n");
        CHECK(len < 80, "--help line %d is %zu columns: '%.*s'", n + 1, len,
              (int)len, line);
        line += len + (line[len] == '\n');
    }
    CHECK(n > 40, "--help has %d lines", n);
    wg_cli_free(&c);
}

WG_TEST(cli_help_to_closed_stdout_fails)
{
    wg_cli c = wg_cli_sh("./worldgen --help >/dev/full");
    CHECK(c.status == 1, "status %d", c.status);
    wg_cli_free(&c);
}

WG_TEST(cli_every_help_option_is_in_the_manual)
{
    const char *help[] = {"--help", NULL};
    wg_cli c = wg_cli_run(help);
    char *man = wg_read_file("man/worldgen.1", NULL);
    CHECK(man != NULL, "man/worldgen.1 missing");
    int found = 0;
    for (const char *p = c.out; man && (p = strstr(p, "--")) != NULL;) {
        char opt[64];
        size_t len = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");
        if (len == 0 || len > 60) {
            p += 2;
            continue;
        }
        /* groff writes a dash in an option name as \- */
        char esc[160] = "\\-\\-";
        for (size_t i = 0; i < len; i++) {
            size_t e = strlen(esc);
            if (p[2 + i] == '-')
                snprintf(esc + e, sizeof esc - e, "\\-");
            else
                snprintf(esc + e, sizeof esc - e, "%c", p[2 + i]);
        }
        snprintf(opt, sizeof opt, "--%.*s", (int)len, p + 2);
        CHECK(strstr(man, esc) != NULL, "%s is not in man/worldgen.1", opt);
        found++;
        p += 2 + len;
    }
    CHECK(found >= 10, "only %d options found in --help", found);
    free(man);
    wg_cli_free(&c);
}

WG_TEST(cli_too_big_a_world_is_refused_up_front)
{
    const char *argv[] = {"--size", "65536", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 1, "status %d", c.status);
    CHECK(strstr(c.err, "--size 65536 needs ") && strstr(c.err, "GiB"), "%s", c.err);
    /* The way to need less: a whole world's fields do not depend on the
     * counts, so only --hydraulic 0 (it had said "or fewer steps" too); a
     * region's halo does. */
    CHECK(strstr(c.err, " (--hydraulic 0 needs less)\n"), "%s", c.err);
    wg_cli_free(&c);
    const char *region[] = {"--size", "1048577", "--region", "0,0,65000,65000",
                            "--erosion", "2", "--hydraulic", "3", NULL};
    c = wg_cli_run(region);
    CHECK(c.status == 1 && strstr(c.err, " (fewer --erosion passes and "
                                         "--hydraulic steps, a smaller halo, "
                                         "or --hydraulic 0, need less)\n"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    /* Without erosion passes, no fewer of them is the way; without
     * either count, the halo is the normals' one cell, and nothing is
     * said ("fewer --erosion passes" had been said of both). */
    const char *no_passes[] = {"--size", "1048577", "--region", "0,0,65000,65000",
                               "--erosion", "0", "--hydraulic", "3", NULL};
    c = wg_cli_run(no_passes);
    CHECK(c.status == 1 && strstr(c.err, " (fewer --hydraulic steps, a smaller halo, "
                                         "or --hydraulic 0, need less)\n"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    const char *no_counts[] = {"--size", "1048577", "--region", "0,0,65000,65000",
                               "--erosion", "0", "--hydraulic", "0", NULL};
    c = wg_cli_run(no_counts);
    CHECK(c.status == 1 && strstr(c.err, "needs ") && !strstr(c.err, "less"), "%d %s",
          c.status, c.err);
    wg_cli_free(&c);
    const char *bare[] = {"--size", "65536", "--hydraulic", "0", NULL};
    c = wg_cli_run(bare);
    CHECK(c.status == 1 && strstr(c.err, "needs ") && !strstr(c.err, "less"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

WG_TEST(cli_out_of_memory_is_reported_not_crashed)
{
    /* Under a 200 MB address-space limit a 4096 world (needs ~400 MB)
     * must fail with a message and status 1, never a crash. */
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    wg_cli c = wg_cli_sh("ulimit -v 200000; ./worldgen --size 4096 -q");
    CHECK(c.status == 1, "status %d: %s", c.status, c.err);
    CHECK(strstr(c.err, "out of memory") || strstr(c.err, "needs "), "%s", c.err);
    wg_cli_free(&c);
}

/* The default backend is the fastest here (--mesh auto): one row, whatever
 * it is, and the same fields as scalar's (the height map is identical). */
WG_TEST(cli_default_backend_is_auto_with_scalars_fields)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "./worldgen --size 70 -q --no-image --json - | jq -r '.backends | length' && "
             "./worldgen --size 70 -q --no-image --heightmap a.pfm --watermap aw.pfm && "
             "./worldgen --size 70 -q --no-image --mesh scalar --heightmap b.pfm "
             "--watermap bw.pfm && cmp a.pfm b.pfm && cmp aw.pfm bw.pfm && echo same");
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && strcmp(c.out, "1\nsame\n") == 0, "status %d: %s %s",
          c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* The table's speedup is the JSON's to the digits it shows: below 0.05 it
 * had one decimal, so openmp at --size 2 (its threads' wake-up against
 * scalar's microseconds: 0.004 in the JSON) read 0.0x. */
WG_TEST(cli_table_speedup_matches_the_json)
{
    wg_cli c = wg_cli_sh("./worldgen --size 2 --mesh scalar,openmp --no-image "
                         "--json sp.json && jq '.backends[1].speedup' sp.json");
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    const char *row = strstr(c.out, "\n  openmp ");
    const char *json = strrchr(c.out, ')'); /* after the wall line */
    double t[8] = {0}, want = -1.0;
    CHECK(row && sscanf(row, " openmp %lfs %lfs %lfs %lfs %lfs %lfs %lfs %lfx",
                        &t[0], &t[1], &t[2], &t[3], &t[4], &t[5], &t[6],
                        &t[7]) == 8, "%s", c.out);
    CHECK(json && sscanf(json + 1, "%lf", &want) == 1 && want > 0.0, "%s",
          c.out);
    CHECK(fabs(t[7] - want) <= (want < 0.05 ? 0.06 * want : 0.05),
          "the table's speedup %g, the JSON's %g: %s", t[7], want, c.out);
    wg_cli_free(&c);
}

/* The histogram's shares read 0% or 100% only when they are: with the sea
 * at the highest height every cell but the peak is under it, and the text
 * had read "100.0% under the sea" (the JSON 99.99), the bin of the peak
 * "9:0%" and the bin of the lowest cells "0:0%". */
WG_TEST(cli_histogram_shares_never_round_to_all_or_none)
{
    wg_cli c = wg_cli_sh(
        "m=$(./worldgen --size 100 --hydraulic 0 --mesh scalar --histogram -q "
        "--no-image --json - | jq .histogram.max) && "
        "./worldgen --size 100 --hydraulic 0 --mesh scalar --histogram -q "
        "--no-image --sea-level $m --json sh.json && "
        "jq -r '.histogram | .percent[], .water_percent, .sea_percent' sh.json");
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    /* The JSON's twelve shares after the four lines of text. */
    double want[12] = {0}, got[12] = {0};
    const char *p = strstr(c.out, "(below ");
    p = p ? strchr(p, '\n') : NULL;
    for (int i = 0; p && i < 12; i++)
        want[i] = strtod(p, (char **)&p);
    const char *h = strstr(c.out, "heights  ");
    for (int i = 0; h && i < 10; i++) {
        char key[8];
        snprintf(key, sizeof key, " %d:", i);
        const char *k = strstr(h, key);
        got[i] = k ? atof(k + strlen(key)) : -1.0;
    }
    const char *w = strstr(c.out, "water     ");
    CHECK(w && sscanf(w, "water     %lf%% under water (deeper than 0.001), "
                         "%lf%% under the sea", &got[10], &got[11]) == 2,
          "%s", c.out);
    CHECK(want[11] > 99.0 && want[11] < 100.0 && want[9] > 0.0, "%s", c.out);
    for (int i = 0; i < 12; i++)
        CHECK((got[i] > 0.0) == (want[i] > 0.0) &&
              (got[i] < 100.0) == (want[i] < 100.0) &&
              fabs(got[i] - want[i]) <= (i < 10 ? 0.5 : 0.05),
              "share %d: the text %g, the JSON %g: %s", i, got[i], want[i],
              c.out);
    wg_cli_free(&c);
}

/* The world line and the histogram show the sea level the run used, to
 * the digit: 0.99999994 (the float below 1) had read "1" and 0.2500001
 * "0.25", six digits of %g. */
WG_TEST(cli_sea_level_shown_as_used)
{
    static const char *const levels[] = {"0.99999994", "0.2500001", "0.3"};
    for (int i = 0; i < 3; i++) {
        const char *argv[] = {"--size", "4", "--mesh", "scalar", "--no-image",
                              "--histogram", "--sea-level", levels[i], NULL};
        wg_cli c = wg_cli_run(argv);
        char world[64], water[64];
        snprintf(world, sizeof world, ", sea level %s, seed 1234\n", levels[i]);
        snprintf(water, sizeof water, " under the sea (below %s)\n", levels[i]);
        CHECK(c.status == 0 && strstr(c.out, world) && strstr(c.out, water),
              "%s: %s %s", levels[i], c.out, c.err);
        wg_cli_free(&c);
    }
}
