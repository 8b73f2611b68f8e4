/* test_hostile.c: worldgen under hostile conditions: interrupted mid-write,
 * writing into a closed pipe, outputs that cannot be written.  It must never
 * crash, hang, print garbage or leave a broken or temporary file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

/* Start a big world writing a PNG height map, wait until its temporary
 * file exists (the write is under way), send 'sig', and report the exit
 * status and what is left in the folder. */
static void hostile_interrupt(const char *sig, int want_status)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "d=%s/int-%s; mkdir -p $d; "
             "./worldgen --size 3000 --erosion 0 --hydraulic 0 -q --heightmap $d/big.png & pid=$!; "
             "n=0; until ls -a $d | grep -q '^\\.big\\.png\\.tmp-'; do "
             "  sleep 0.005; n=$((n+1)); [ $n -gt 4000 ] && { kill $pid; echo no-temp; exit 7; }; "
             "  kill -0 $pid 2>/dev/null || { echo finished-early; exit 8; }; done; "
             "kill -%s $pid; wait $pid; st=$?; ls -A $d; exit $st",
             wg_tmpdir(), sig, sig);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == want_status, "SIG%s: status %d, want %d: %s %s", sig, c.status,
          want_status, c.out, c.err);
    CHECK(c.out_len == 0, "SIG%s left files behind: %s", sig, c.out);
    wg_cli_free(&c);
}

WG_TEST(hostile_sigint_mid_write_removes_the_temporary)
{
    hostile_interrupt("INT", 130);
}

WG_TEST(hostile_sigterm_mid_write_removes_the_temporary)
{
    hostile_interrupt("TERM", 143);
}

WG_TEST(hostile_closed_pipe_is_quiet)
{
    /* The reader goes away after 100 bytes: worldgen dies of SIGPIPE, the
     * conventional way, says nothing and leaves nothing. */
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd %s && mkdir -p pipe && cd pipe && "
             "{ %s/worldgen --size 1024 --hydraulic 0 -q --heightmap - --heightmap-format r16; "
             "echo \"status $?\" >&2; } | head -c 100 > /dev/null; ls -A",
             wg_tmpdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.err, "status 141") || strstr(c.err, "status 1\n"), "%s", c.err);
    CHECK(!strstr(c.err, "worldgen:") || strstr(c.err, "Broken pipe"), "%s", c.err);
    CHECK(c.out_len == 0, "left behind: %s", c.out);
    wg_cli_free(&c);
    /* The same for the picture on standard output. */
    snprintf(cmd, sizeof cmd,
             "cd %s/pipe && { %s/worldgen --size 64 -q --out -; "
             "echo \"status $?\" >&2; } | head -c 100 > /dev/null; ls -A",
             wg_tmpdir(), wg_srcdir());
    c = wg_cli_sh(cmd);
    CHECK(strstr(c.err, "status 141") || strstr(c.err, "status 1\n"), "%s", c.err);
    CHECK(c.out_len == 0, "left behind: %s", c.out);
    wg_cli_free(&c);
}

WG_TEST(hostile_json_to_unwritable_places)
{
    static const struct {
        const char *path, *err_has;
    } cases[] = {
        {"/nonexistent-dir/t.json", "--json: cannot write '/nonexistent-dir/t.json': the folder"},
        {"/dev/full", "--json: cannot write '/dev/full': No space left on device"},
        {"/", "--json: cannot write '/': it is a directory"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[] = {"--size", "16", "-q", "--json", cases[i].path, NULL};
        wg_cli c = wg_cli_run(argv);
        CHECK(c.status == 1 && strstr(c.err, cases[i].err_has), "%s: %d %s",
              cases[i].path, c.status, c.err);
        wg_cli_free(&c);
    }
}

WG_TEST(hostile_both_outputs_on_stdout_conflict)
{
    const char *argv[] = {"--json", "-", "--heightmap", "-", "--heightmap-format",
                          "pfm", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 2 && strstr(c.err, "both want standard output"), "%s", c.err);
    wg_cli_free(&c);
}

/* Every numeric option against every kind of hostile value: each must be
 * refused with status 2, nothing on stdout, and a message that names the
 * option, quotes the value and gives the valid range. */
WG_TEST(hostile_every_numeric_option_every_bad_value)
{
    static const char *const options[] = {
        "size", "seed", "octaves", "erosion", "hydraulic", "sea-level",
        "threads", "width", "height", "aa", "azimuth", "elevation",
        "distance", "fov", "look", "sun-azimuth", "sun-elevation",
    };
    /* One of each kind: empty, junk after digits, spaces, NaN and
     * infinities, overflow both ways, a bare prefix, a locale comma, a
     * doubled sign, a bare exponent. */
    static const char *const values[] = {
        "",      "12abc", " 5",    "5 ",   "nan",  "-nan",
        "inf",   "-inf",  "1e999", "-99999999999999999999999999999",
        "18446744073709551616",    "0x",   "1,5",  "++1",  "1e",   "5%",
    };
    int bad = 0;
    for (size_t o = 0; o < sizeof options / sizeof options[0]; o++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            char opt[40], want[160];
            snprintf(opt, sizeof opt, "--%s", options[o]);
            snprintf(want, sizeof want, "--%s: '%s' is ", options[o], values[v]);
            const char *argv[] = {opt, values[v], "--no-image", NULL};
            wg_cli c = wg_cli_run(argv);
            if (c.status != 2 || c.out_len != 0 || !strstr(c.err, want) ||
                !strstr(c.err, "(valid: ")) {
                CHECK(0, "worldgen %s '%s': status %d, stderr: %s", opt, values[v],
                      c.status, c.err);
                bad++;
            }
            wg_cli_free(&c);
            if (bad > 5)
                return; /* enough to see the pattern */
        }
}

/* Values at and just past each end of every range. */
WG_TEST(hostile_range_edges)
{
    static const struct {
        const char *opt, *ok_lo, *ok_hi, *bad_lo, *bad_hi;
    } edges[] = {
        {"--size", "2", "64", "1", "65537"},
        {"--octaves", "1", "16", "0", "17"},
        {"--erosion", "0", "3", "-1", "10001"},
        {"--threads", "1", "1024", "0", "1025"},
        {"--width", "16", "64", "15", "16385"},
        {"--height", "16", "64", "15", "16385"},
        {"--aa", "1", "4", "0", "5"},
        {"--elevation", "-89", "89", "-89.5", "89.001"},
        {"--fov", "1", "150", "0.999", "150.5"},
        {"--distance", "0.1", "1000", "0.09", "1000.1"},
        {"--sun-elevation", "-90", "90", "-90.01", "90.01"},
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        const char *vals[4] = {edges[i].ok_lo, edges[i].ok_hi, edges[i].bad_lo,
                               edges[i].bad_hi};
        for (int k = 0; k < 4; k++) {
            const char *argv[] = {"--size", "16", "-q", "--no-image", edges[i].opt,
                                  vals[k], NULL};
            wg_cli c = wg_cli_run(argv);
            int want = k < 2 ? 0 : 2;
            CHECK(c.status == want, "%s %s: status %d, want %d: %s", edges[i].opt,
                  vals[k], c.status, want, c.err);
            if (want == 2)
                CHECK(strstr(c.err, "(valid: "), "%s %s: %s", edges[i].opt,
                      vals[k], c.err);
            wg_cli_free(&c);
        }
    }
}

/* strtod reads hex and binary exponents: a decimal option must not
 * ("--fov 0x20" was 32). */
WG_TEST(hostile_decimal_options_refuse_hex)
{
    static const char *const options[] = {
        "sea-level", "azimuth", "elevation", "distance", "fov", "look",
        "sun-azimuth", "sun-elevation",
    };
    static const char *const values[] = {"0x20", "0X1", "0x1p3", "0x.8"};
    for (size_t o = 0; o < sizeof options / sizeof options[0]; o++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            char opt[40], want[160];
            snprintf(opt, sizeof opt, "--%s", options[o]);
            snprintf(want, sizeof want, "--%s: '%s' is not a decimal number",
                     options[o], values[v]);
            const char *argv[] = {opt, values[v], "--no-image", NULL};
            wg_cli c = wg_cli_run(argv);
            CHECK(c.status == 2 && strstr(c.err, want), "%s %s: status %d, %s",
                  opt, values[v], c.status, c.err);
            wg_cli_free(&c);
        }
}

/* An empty --json is refused before any world is made (it used to fail
 * after), and the OpenMP runtime's own variable is not trusted: 65536
 * threads crashed a run. */
WG_TEST(hostile_late_and_environment_values)
{
    const char *argv[] = {"--json", "", "--size", "4096", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 2 && strstr(c.err, "--json: '' is not a file name"),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("OMP_NUM_THREADS=65536 ./worldgen --size 64 --mesh openmp "
                  "--hydraulic 3 -q --no-image --heightmap a.pfm && "
                  "./worldgen --size 64 --mesh scalar --hydraulic 3 -q "
                  "--no-image --heightmap b.pfm && cmp a.pfm b.pfm");
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
}
