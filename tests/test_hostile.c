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
             "./worldgen --size 3000 --erosion 0 -q --heightmap $d/big.png & pid=$!; "
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
             "{ %s/worldgen --size 1024 -q --heightmap - --heightmap-format r16; "
             "echo \"status $?\" >&2; } | head -c 100 > /dev/null; ls -A",
             wg_tmpdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.err, "status 141") || strstr(c.err, "status 1\n"), "%s", c.err);
    CHECK(!strstr(c.err, "worldgen:") || strstr(c.err, "Broken pipe"), "%s", c.err);
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
