/* test_hostile.c: worldgen under hostile conditions: interrupted mid-write
 * by any fatal signal, writing into a closed pipe or past a file size
 * limit, outputs that cannot be written, outputs named through links,
 * descriptors, devices and FIFOs, one file named twice, names at and past
 * NAME_MAX.  It must never crash, hang, print garbage, replace a link or a
 * device, or leave a broken or temporary file. */
/* O_TMPFILE */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

/* Shell conditions on worldgen ($pid) and the folder whose path matches
 * the case pattern PAT (the files may have no name: O_TMPFILE).
 * HOSTILE_OPEN: it has a file open there, seen twice 5 ms apart (the
 * empty temporary by which every output's folder is tried before the work
 * lives for microseconds).  HOSTILE_WRITING: a file open there holds bytes.
 * For printf formats (%%s). */
#define HOSTILE_OPEN_ONCE(pat)                                                \
    "{ w=0; for f in /proc/$pid/fd/*; do case $(readlink $f) in " pat ") "    \
    "w=1;; esac; done; [ $w = 1 ]; }"
#define HOSTILE_OPEN(pat)                                                     \
    HOSTILE_OPEN_ONCE(pat) " && sleep 0.005 && " HOSTILE_OPEN_ONCE(pat)
#define HOSTILE_WRITING(pat)                                                  \
    "{ w=0; for f in /proc/$pid/fd/*; do case $(readlink $f) in " pat ") "    \
    "[ \"$(stat -L -c %%s $f 2>/dev/null || echo 0)\" -gt 0 ] && w=1;; esac; " \
    "done; [ $w = 1 ]; }"

/* Shell: a function 'mid DIR SIG COMMAND...' that runs COMMAND (a
 * worldgen writing into DIR) in the background as $pid, waits until a
 * file it has open in DIR holds bytes (HOSTILE_WRITING), stops it there
 * (SIGSTOP) and, if it is still writing then, sends SIG, lets it go on
 * (SIGCONT) and returns its exit status; a run that ended or renamed its
 * file before it was stopped is made again, five times at most (then
 * status 7 and "never caught writing").  Sent while the run went on, the
 * signal had come after the end of the write now and then (the PNG's
 * bytes go out in the last 0.1-0.3 s of the run), and the run exited 0
 * with its file in place.  For printf formats. */
#define HOSTILE_MID                                                           \
    "mid() { d=$1; s=$2; shift 2; t=0; "                                      \
    "  while [ $t -lt 5 ]; do \"$@\" & pid=$!; n=0; "                          \
    "    until " HOSTILE_WRITING("$d/*") "; do sleep 0.005; n=$((n+1)); "      \
    "      [ $n -gt 6000 ] && break; kill -0 $pid 2>/dev/null || break; "     \
    "    done; kill -STOP $pid 2>/dev/null; "                                  \
    "    if " HOSTILE_WRITING("$d/*") "; then kill -s $s $pid; "                \
    "      kill -CONT $pid; wait $pid; return $?; fi; "                       \
    "    kill -CONT $pid 2>/dev/null; wait $pid; rm -f $d/* $d/.[!.]*; "       \
    "    t=$((t+1)); done; echo \"never caught writing\"; return 7; }; "

/* A small picture, quickly made: the reference for byte comparisons. */
#define HOSTILE_PIC "--size 16 --mesh scalar -q --width 16 --height 16"

/* Run a shell script made with printf's format, in the test folder. */
static wg_cli hostile_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static wg_cli hostile_sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return wg_cli_sh(cmd);
}

/* Whether c's run found no openmp backend in this build: then the test
 * is skipped and c freed. */
static int hostile_without_openmp(wg_cli *c)
{
    if (!strstr(c->err, "built without OpenMP"))
        return 0;
    wg_skip("no openmp backend in this build (make OPENMP=)");
    wg_cli_free(c);
    return 1;
}

/* Start a big world writing a PNG height map, catch it writing into its
 * temporary (HOSTILE_MID), send 'sig', and report the exit status and
 * what is left in the folder.  The shell gives a background job
 * SIGINT and SIGQUIT ignored, and whoever ran the tests may have ignored
 * others (nohup: SIGHUP), and worldgen keeps what it was given ignored:
 * env puts every default back, as a job under job control has them (the
 * tests run under nohup had waited for ever on a worldgen that ignored
 * the SIGHUP they sent it). */
static void hostile_interrupt(const char *sig, int want_status)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             HOSTILE_MID "d=%s/int-%s; mkdir -p $d; "
             "mid $d %s env --default-signal ./worldgen --size 3000 --erosion 0 "
             "--hydraulic 0 -q --heightmap $d/big.png; st=$?; ls -A $d; exit $st",
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

/* SIGKILL, which no handler sees (the OOM killer, timeout -s KILL), once
 * every output is written and held: the temporaries have no names yet, so
 * nothing is left, and files already there keep their content. */
/* Does the test folder's file system make unnamed files (O_TMPFILE)?
 * Where it does not, the temporaries are named from the start, and
 * SIGKILL leaves them: the test is skipped, saying so. */
static int hostile_unnamed_temporaries(void)
{
    int fd = open(wg_tmpdir(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        wg_skip("%s makes no unnamed files (O_TMPFILE: %s)", wg_tmpdir(),
                strerror(errno));
        return 0;
    }
    close(fd);
    return 1;
}

WG_TEST(hostile_sigkill_before_the_renames_leaves_nothing)
{
    if (!hostile_unnamed_temporaries())
        return;
    /* So too where descriptors are short: they are named to be closed. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 128) {
        wg_skip("ulimit -n %llu: too few descriptors to hold every output open",
                (unsigned long long)rl.rlim_cur);
        return;
    }
    wg_cli c = hostile_sh(
        "mkdir -p kill && cd kill && echo old > p.png && "
        "WORLDGEN_FAULT=kill ../worldgen --size 33 -q --out p.png "
        "--heightmap h.tif --watermap w.pfm --obj o.obj --gltf g.glb "
        "--json j.json; echo \"status $?\"; ls -A; cat p.png");
    CHECK(strcmp(c.out, "status 137\np.png\nold\n") == 0, "%s %s", c.out,
          c.err);
    wg_cli_free(&c);
}

/* SIGKILL after a set's first rename (WORLDGEN_FAULT=kill-placing, as
 * the OOM killer or a scheduler's time limit can kill there): what the
 * killed run left beside its outputs (the temporaries and the kept old
 * contents, each a whole copy) is removed by the next run that writes one
 * of those names, each beside its own (the PNG alone, then the rest), and
 * no other file.  Seven later runs had left them all. */
WG_TEST(hostile_sigkill_in_the_renames_is_cleared_by_the_next_run)
{
    if (!hostile_unnamed_temporaries())
        return;
    wg_cli c = hostile_sh(
        "rm -rf killp && mkdir killp && cd killp && touch .p.png.tmp-keep "
        ".p.png.old-1234567 .x.png.old-ABCdef && "
        "W='../worldgen --size 33 -q --out p.png --heightmap h.tif --obj "
        "o.obj'; $W && WORLDGEN_FAULT=kill-placing $W --seed 9; "
        "echo \"status $?\"; ls -A | grep -c '^\\..*\\.\\(tmp\\|old\\)-......$'; "
        "../worldgen --size 33 -q --out p.png --seed 9 && ls -A | grep "
        "'^\\.p\\.png\\.'; echo --; $W --seed 9 && ls -A");
    CHECK(strcmp(c.out, "status 137\n10\n.p.png.old-1234567\n.p.png.tmp-keep\n"
                        "--\n.p.png.old-1234567\n.p.png.tmp-keep\n"
                        ".x.png.old-ABCdef\nh.tif\no.mtl\no.obj\n"
                        "o_albedo.png\np.png\n") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* Few descriptors (ulimit -n 20): the finished outputs are named early to
 * be closed, the OBJ's files from two threads at once (they had been able
 * to wait for each other for ever, about one run in 200), and every run
 * writes every file, with nothing left beside them. */
WG_TEST(hostile_few_descriptors_write_every_output)
{
    wg_cli c = hostile_sh(
        "mkdir -p fewfd && cd fewfd && ulimit -n 20 && for i in 1 2 3 4 5 6 7 8 9 10; do "
        "  timeout 20 ../worldgen --size 65 --hydraulic 0 --erosion 0 --mesh scalar -q "
        "    --out p.png --heightmap h.tif --obj o.obj --gltf g.glb --json j.json || "
        "    echo \"status $?\"; done; ls -A | tr '\\n' ' '");
    CHECK(strcmp(c.out, "g.glb h.tif j.json o.mtl o.obj o_albedo.png p.png ") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* Too few descriptors to open libgeotiff (ulimit -n: the standard three,
 * the temporary, and what the test's shell holds besides): the message
 * names that, not a library to install, which dlerror's "cannot open
 * shared object file" had been taken for. */
WG_TEST(hostile_too_few_descriptors_for_libgeotiff_is_not_a_missing_library)
{
    wg_cli c = hostile_sh("mkdir -p fewfd4 && cd fewfd4 && for n in 4 5 6 7 8 9 10; do "
                          "(ulimit -n $n && exec ../worldgen --size 16 --mesh scalar -q "
                          "--heightmap h.tif) 2>&1 | grep 'cannot load libgeotiff'; done");
    CHECK(strstr(c.out, "worldgen: --heightmap: cannot write 'h.tif': cannot load libgeotiff: ") &&
              strstr(c.out, "Too many open files") && !strstr(c.out, "installed?"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
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
    /* A count followed by junk is not taken for its number (libgomp
     * ignores the whole value, and so does worldgen: every core); a list
     * for nested levels gives its first. */
    c = wg_cli_sh("for v in 1e3 2abc 1.5 '1,' 0 ' 1 , 2' 1; do OMP_NUM_THREADS=\"$v\" "
                  "./worldgen --size 16 --mesh scalar -q --no-image --json j.json "
                  "2>/dev/null; printf '%s ' $(jq .host.threads j.json); done; "
                  "jq .host.cores j.json");
    char want[128];
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    cores = cores > 1024 ? 1024 : cores;
    snprintf(want, sizeof want, "%d %d %d %d %d 1 1 %d\n", cores, cores, cores, cores, cores,
             cores);
    CHECK(c.status == 0 && strcmp(c.out, want) == 0, "status %d: %s, want %s: %s", c.status,
          c.out, want, c.err);
    wg_cli_free(&c);
}

/* A name that is a symbolic link writes through to its final target, in
 * the target's folder: the link stays a link, a dangling one gets its
 * target made, and the bytes are those of a plain file. */
WG_TEST(hostile_output_through_links_writes_their_target)
{
    wg_cli c = hostile_sh(
        "mkdir -p links/sub && cd links && W=../worldgen A='" HOSTILE_PIC "'; "
        "$W $A --out ref.png; "
        "echo old > real.png; ln -s real.png one.png; $W $A --out one.png; "
        "test -L one.png && cmp -s ref.png real.png && echo link; "
        /* a chain, one link relative to its own folder through '..' */
        "echo old > real2.png; ln -s ../real2.png sub/back.png; ln -s sub/back.png hop.png; "
        "ln -s hop.png chain.png; $W $A --out chain.png; "
        "test -L chain.png && test -L hop.png && test -L sub/back.png && "
        "cmp -s ref.png real2.png && echo chain; "
        "ln -s new.png dangling.png; $W $A --out dangling.png; "
        "test -L dangling.png && cmp -s ref.png new.png && echo dangling; "
        "ln -s \"$PWD/sub/h.pfm\" abs.pfm; $W --size 16 --mesh scalar -q --no-image "
        "--heightmap abs.pfm; test -L abs.pfm && test -s sub/h.pfm && echo absolute; "
        "ls -A . sub | grep -c tmp-");
    CHECK(c.status == 1 && strcmp(c.out, "link\nchain\ndangling\nabsolute\n0\n") == 0,
          "%d: %s %s", c.status, c.out, c.err);
    wg_cli_free(&c);

    /* A link into a folder that does not exist, and a loop of links. */
    c = hostile_sh("mkdir -p links2 && cd links2 && ln -s nowhere/x.png lost.png && "
                   "../worldgen " HOSTILE_PIC " --out lost.png; echo \"status $?\"; "
                   "ln -s loop1 loop2; ln -s loop2 loop1; "
                   "../worldgen " HOSTILE_PIC " --out loop1; echo \"status $?\"; "
                   "test -L lost.png && ls -A | LC_ALL=C sort | tr '\\n' ' '");
    CHECK(strcmp(c.out, "status 1\nstatus 1\nloop1 loop2 lost.png ") == 0, "%s", c.out);
    CHECK(strstr(c.err, "cannot write 'lost.png': the folder 'nowhere/' (where its "
                        "link points) does not exist"), "%s", c.err);
    CHECK(strstr(c.err, "cannot write 'loop1': Too many levels of symbolic links"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* Another user's symbolic link in a sticky folder anyone may write in
 * (/tmp) is not followed: it is how that user makes a program write over
 * its own user's files (ln -s ~victim/.bashrc /tmp/world.png), and the
 * kernel's fs.protected_symlinks refuses it to open(), but worldgen
 * follows links itself (readlink), and had written through it, replacing
 * the file, where the shell's 'echo > link' is refused.  Refused whether
 * or not the kernel has the guard on; a link of ours, or of the folder's
 * owner, is followed as before.  As root, the link given to nobody. */
WG_TEST(hostile_other_users_link_in_a_sticky_folder_is_not_followed)
{
    if (geteuid() != 0) {
        wg_skip("needs root, to give a link to another user");
        return;
    }
    wg_cli c = hostile_sh(
        "rm -rf guard && mkdir -p guard/st && cd guard && chmod 1777 st && "
        "echo keep > victim && ln -s ../victim st/w.png && ln -s ../made st/d.json && "
        "ln -s ../mine st/m.png && chown -h 65534:65534 st/w.png st/d.json && "
        "../worldgen " HOSTILE_PIC " --out st/w.png; echo $?; "
        "../worldgen --size 16 --mesh scalar -q --json st/d.json; echo $?; "
        "../worldgen " HOSTILE_PIC " --out st/m.png; echo $?; "
        "cat victim; ls; ls -A st | tr '\\n' ' '");
    CHECK(strcmp(c.out, "1\n1\n0\nkeep\nmine\nst\nvictim\nd.json m.png w.png ") == 0,
          "%s %s", c.out, c.err);
    CHECK(strcmp(c.err, "worldgen: --out: cannot write 'st/w.png': Permission denied (the "
                        "symbolic link 'st/w.png' is another user's, in a sticky folder "
                        "anyone may write in: not followed, as fs.protected_symlinks has "
                        "it)\n"
                        "worldgen: --json: cannot write 'st/d.json': Permission denied (the "
                        "symbolic link 'st/d.json' is another user's, in a sticky folder "
                        "anyone may write in: not followed, as fs.protected_symlinks has "
                        "it)\n") == 0,
          "%s", c.err);
    wg_cli_free(&c);
    /* The folder owner's link is followed, as the kernel follows it (a
     * sticky folder of nobody's, its link nobody's); and a link of ours
     * that leads to another user's in the sticky folder is refused at that
     * one, named. */
    c = hostile_sh("cd guard && mkdir own && chmod 1777 own && chown 65534 own && "
                   "ln -s ../owned own/o.json && chown -h 65534 own/o.json && "
                   "ln -s w.png st/via.png && "
                   "../worldgen --size 16 --mesh scalar -q --json own/o.json; echo $?; "
                   "head -c 1 owned; echo; ../worldgen " HOSTILE_PIC " --out st/via.png; "
                   "echo $?; cat victim");
    CHECK(strcmp(c.out, "0\n{\n1\nkeep\n") == 0, "%s %s", c.out, c.err);
    CHECK(strcmp(c.err, "worldgen: --out: cannot write 'st/via.png': Permission denied (the "
                        "symbolic link 'st/w.png' is another user's, in a sticky folder "
                        "anyone may write in: not followed, as fs.protected_symlinks has "
                        "it)\n") == 0,
          "%s", c.err);
    wg_cli_free(&c);
}

/* A name that means a descriptor is written to that descriptor, and a
 * device or FIFO in place: /dev/stdout used to be renamed over (as root,
 * the link in /dev itself was replaced by the picture).  (Standard
 * error's is refused: hostile_output_on_standard_error_beside_the_tables
 * _is_refused.) */
WG_TEST(hostile_output_to_descriptors_and_devices)
{
    wg_cli c = hostile_sh(
        "mkdir -p fds && cd fds && W=../worldgen A='" HOSTILE_PIC "'; "
        "$W $A --out ref.png; "
        "$W $A --out /dev/stdout > a.png; cmp -s ref.png a.png && echo stdout-file; "
        "$W $A --out /dev/stdout | cat > b.png; cmp -s ref.png b.png && echo stdout-pipe; "
        "$W $A --out /dev/fd/1 > c.png; cmp -s ref.png c.png && echo fd1; "
        "$W $A --out /proc/self/fd/1 | cat > d.png; cmp -s ref.png d.png && echo proc-fd1; "
        "$W $A --out /dev/fd/3 3> e.png; cmp -s ref.png e.png && echo fd3; "
        "ln -s /dev/fd/4 to-fd4.png; $W $A --out to-fd4.png 4> f.png; "
        "cmp -s ref.png f.png && echo link-to-fd4; "
        "ln -s /dev/stdout to-stdout.png; $W $A --out to-stdout.png > g.png; "
        "test -L to-stdout.png && cmp -s ref.png g.png && echo link-to-stdout; "
        "mkfifo fifo; cat fifo > h.png & $W $A --out fifo; wait; "
        "test -p fifo && cmp -s ref.png h.png && echo fifo; "
        "$W $A --out /dev/null && test -c /dev/null && echo null; "
        "test -L /dev/stdout && test -L /dev/fd && echo dev-intact; "
        "ls -A | grep -c tmp-");
    CHECK(strcmp(c.out, "stdout-file\nstdout-pipe\nfd1\nproc-fd1\nfd3\nlink-to-fd4\n"
                        "link-to-stdout\nfifo\nnull\ndev-intact\n0\n") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);

    /* A socket cannot be opened: said so, and left alone (python3 makes
     * one where it is installed). */
    c = hostile_sh("cd fds && command -v python3 > /dev/null || exit 77; python3 -c "
                   "'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")' && "
                   "../worldgen " HOSTILE_PIC " --out sock; echo \"status $?\"; test -S sock "
                   "&& echo socket");
    if (c.status != 77)
        CHECK(strcmp(c.out, "status 1\nsocket\n") == 0 &&
                  strstr(c.err, "cannot write 'sock': it is a socket"),
              "%s %s", c.out, c.err);
    wg_cli_free(&c);

    /* A descriptor that is not open, or open for reading only. */
    static const struct {
        const char *name, *err_has;
    } bad[] = {
        {"/dev/fd/9", "cannot write '/dev/fd/9': descriptor 9 is not open (Bad file descriptor)"},
        {"/dev/stdin", "standard input is open for reading only (Bad file descriptor)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *argv[] = {"--size", "16", "--mesh", "scalar", "-q", "--width",
                              "16", "--height", "16", "--out", bad[i].name, NULL};
        c = wg_cli_run(argv);
        CHECK(c.status == 1 && strstr(c.err, bad[i].err_has), "%s: %d %s", bad[i].name,
              c.status, c.err);
        wg_cli_free(&c);
    }
}

/* A replaced file keeps its mode (the temporary used to get 0666 & ~umask),
 * and, as root, its owner and group; a new file gets 0666 & ~umask. */
WG_TEST(hostile_replaced_file_keeps_its_mode_and_owner)
{
    wg_cli c = hostile_sh(
        "mkdir -p modes && cd modes && umask 022 && "
        "for m in 600 640 604 755; do echo old > f$m.png; chmod $m f$m.png; "
        "  ../worldgen " HOSTILE_PIC " --out f$m.png; stat -c %%a f$m.png; done; "
        "umask 027; ../worldgen " HOSTILE_PIC " --out new.png; stat -c %%a new.png");
    CHECK(strcmp(c.out, "600\n640\n604\n755\n640\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
    if (geteuid() != 0)
        return;
    c = hostile_sh("cd modes && echo old > own.png && chown 65534:65534 own.png && "
                   "chmod 640 own.png && ../worldgen " HOSTILE_PIC " --out own.png && "
                   "stat -c '%%u:%%g %%a' own.png && cmp -s own.png f600.png && echo same");
    CHECK(strcmp(c.out, "65534:65534 640\nsame\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* Every asynchronous signal whose default action kills removes the
 * temporaries first and then kills with the same signal.  Deterministic:
 * the OBJ's .mtl is a FIFO nobody reads, so worldgen waits in its open()
 * with the texture's temporary already made. */
WG_TEST(hostile_every_fatal_signal_removes_the_temporaries)
{
    static const struct {
        const char *sig;
        int status;
    } sigs[] = {
        {"HUP", 129},  {"INT", 130},  {"QUIT", 131}, {"ABRT", 134},   {"USR1", 138},
        {"USR2", 140}, {"PIPE", 141}, {"ALRM", 142}, {"TERM", 143},   {"XCPU", 152},
        {"VTALRM", 154}, {"PROF", 155}, {"RTMIN", 162},
    };
    char list[200] = "", want[600] = "";
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        size_t l = strlen(list), w = strlen(want);
        snprintf(list + l, sizeof list - l, " %s", sigs[i].sig);
        snprintf(want + w, sizeof want - w, "%s %d x.mtl\n", sigs[i].sig, sigs[i].status);
    }
    wg_cli c = hostile_sh(
        "ulimit -c 0; mkdir -p sigs && cd sigs && for s in%s; do "
        "  mkdir $s && mkfifo $s/x.mtl; "
        "  env --default-signal ../worldgen --size 17 --mesh scalar -q "
        "    --no-image --obj $s/x.obj & pid=$!; "
        "  n=0; until " HOSTILE_OPEN("*/$s/*") "; do "
        "    sleep 0.005; n=$((n+1)); [ $n -gt 2000 ] && break; done; "
        "  kill -s $s $pid; wait $pid; echo \"$s $? $(ls -A $s)\"; "
        "done",
        list);
    CHECK(strcmp(c.out, want) == 0, "got:\n%swant:\n%s%s", c.out, want, c.err);
    wg_cli_free(&c);
}

/* The same mid-write, two at once on big worlds. */
WG_TEST(hostile_more_signals_mid_write_remove_the_temporary)
{
    wg_cli c = hostile_sh(
        "ulimit -c 0; T=%s; " HOSTILE_MID "for s in HUP PIPE; do ( "
        "  d=$T/mid-$s; mkdir -p $d; "
        "  mid $d $s env --default-signal ./worldgen --size 2000 --mesh scalar "
        "    --erosion 0 --hydraulic 0 -q --heightmap $d/big.png; "
        "  echo \"[$s $? $(ls -A $d)]\" ) & done; wait",
        wg_tmpdir());
    static const char *const want[] = {"[HUP 129 ]", "[PIPE 141 ]"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(strstr(c.out, want[i]), "want %s in:\n%s%s", want[i], c.out, c.err);
    wg_cli_free(&c);
}

/* A signal ignored by whoever started worldgen (trap '' HUP, nohup) stays
 * ignored: the run goes on and completes. */
WG_TEST(hostile_ignored_hup_stays_ignored)
{
    wg_cli c = hostile_sh(
        "mkdir -p hup && cd hup && for how in trap nohup; do "
        "  rm -f x.*; mkfifo x.mtl; "
        "  if [ $how = trap ]; then (trap '' HUP; exec ../worldgen --size 17 --mesh scalar "
        "      -q --no-image --obj x.obj) & "
        "  else nohup ../worldgen --size 17 --mesh scalar -q --no-image --obj x.obj "
        "      > /dev/null 2>&1 & fi; pid=$!; "
        "  n=0; until " HOSTILE_OPEN("*/hup/*") "; do "
        "    sleep 0.005; n=$((n+1)); [ $n -gt 2000 ] && break; done; "
        "  kill -HUP $pid; sleep 0.1; kill -0 $pid && echo alive; "
        "  cat x.mtl > got.mtl; wait $pid; echo \"$how $?\"; "
        "  grep -c '^newmtl' got.mtl; ls -A | LC_ALL=C sort | tr '\\n' ' '; echo; "
        "done");
    CHECK(strcmp(c.out, "alive\ntrap 0\n2\ngot.mtl x.mtl x.obj x_albedo.png \n"
                        "alive\nnohup 0\n2\ngot.mtl x.mtl x.obj x_albedo.png \n") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A file size limit (ulimit -f) is a runtime error naming the file and
 * "File too large", not a death by SIGXFSZ (status 153) that leaves the
 * temporary. */
WG_TEST(hostile_file_size_limit_is_a_clean_error)
{
    static const struct {
        const char *args, *err_has;
    } cases[] = {
        {"--size 512 --hydraulic 0 --no-image --heightmap big.pfm",
         "--heightmap: cannot write 'big.pfm': File too large"},
        {"--size 64 --width 1024 --height 1024 --out big.png",
         "--out: cannot write 'big.png': File too large"},
        {"--size 129 --hydraulic 0 --no-image --obj big.obj",
         "--obj: cannot write 'big"},
        {"--size 512 --hydraulic 0 --no-image --heightmap - --heightmap-format r16",
         "--heightmap: cannot write '-': File too large"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_cli c = hostile_sh("rm -rf fsize; mkdir fsize && cd fsize && "
                              "(ulimit -f 100; exec ../worldgen --mesh scalar -q %s "
                              "> stdout.bin); echo \"status $?\"; ls -A | grep -v stdout.bin",
                              cases[i].args);
        CHECK(strcmp(c.out, "status 1\n") == 0, "%s: %s %s", cases[i].args, c.out, c.err);
        CHECK(strstr(c.err, cases[i].err_has) && strstr(c.err, "File too large"),
              "%s: %s", cases[i].args, c.err);
        wg_cli_free(&c);
    }
}

/* libpng's "Write Error" named no cause: the failing write's errno is
 * kept and reported. */
WG_TEST(hostile_png_errors_name_the_cause)
{
    static const struct {
        const char *script, *err_has;
    } cases[] = {
        {"./worldgen " HOSTILE_PIC " --out /dev/full",
         "--out: cannot write '/dev/full': No space left on device"},
        {"./worldgen " HOSTILE_PIC " --no-image --heightmap /dev/full --heightmap-format png",
         "--heightmap: cannot write '/dev/full': No space left on device"},
        {"./worldgen " HOSTILE_PIC " --out - > /dev/full",
         "--out: cannot write '-': No space left on device"},
        {"./worldgen " HOSTILE_PIC " --out - >&-",
         "--out: cannot write '-': standard output is closed (Bad file descriptor)"},
        {"./worldgen " HOSTILE_PIC " --no-image --heightmap - --heightmap-format png >&-",
         "--heightmap: cannot write '-': standard output is closed (Bad file descriptor)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_cli c = wg_cli_sh(cases[i].script);
        CHECK(c.status == 1 && strstr(c.err, cases[i].err_has) &&
                  !strstr(c.err, "Write Error"),
              "%s: %d %s", cases[i].script, c.status, c.err);
        wg_cli_free(&c);
    }
    /* With standard error closed too, no output file may take its number
     * (a message would land in it): the picture is still whole. */
    wg_cli c = hostile_sh("mkdir -p closed && cd closed && ../worldgen " HOSTILE_PIC
                          " --out a.png >&- 2>&-; echo \"status $?\" >&2; "
                          "../worldgen " HOSTILE_PIC " --out b.png && cmp a.png b.png && "
                          "ls -A | grep -c tmp-");
    CHECK(strcmp(c.out, "0\n") == 0 && strstr(c.err, "status 0"), "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* One file named twice, by any means, is refused before any work: two
 * spellings, a link (to a file or dangling), a hard link, standard output
 * by each of its names or by the file it goes to, an OBJ's sibling. */
WG_TEST(hostile_one_file_named_twice)
{
    wg_cli c = hostile_sh("mkdir -p twice/sub && cd twice && touch e.png hard1.png && "
                          "ln hard1.png hard2.png && ln -s e.png esym.png && "
                          "ln -s d.png dsym.png && ln -s w.mtl j.json && ln -s e.png ej.json");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    static const struct {
        const char *args, *err_has;
    } cases[] = {
        {"--out a.png --heightmap ./a.png",
         "--out 'a.png' and --heightmap './a.png' are the same file"},
        {"--out a.png --heightmap sub/../a.png",
         "--out 'a.png' and --heightmap 'sub/../a.png' are the same file"},
        {"--out e.png --heightmap esym.png",
         "--out 'e.png' and --heightmap 'esym.png' are the same file"},
        {"--out dsym.png --heightmap d.png",
         "--out 'dsym.png' and --heightmap 'd.png' are the same file"},
        {"--out hard1.png --heightmap hard2.png",
         "--out 'hard1.png' and --heightmap 'hard2.png' are the same file"},
        {"--heightmap h.pfm --watermap \"$PWD/h.pfm\"", "are the same file"},
        {"--out e.png --json ej.json", "--out 'e.png' and --json 'ej.json' are the same file"},
        {"--obj w.obj --json j.json", "--obj 'w.obj' writes 'w.mtl', which --json writes too"},
        {"--out - --json /dev/stdout",
         "--out - and --json /dev/stdout both want standard output"},
        {"--out /dev/fd/1 --json /proc/self/fd/1",
         "--out /dev/fd/1 and --json /proc/self/fd/1 both want standard output"},
        {"--out - --heightmap so.png > so.png",
         "--out '-' and --heightmap 'so.png' are the same file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        c = hostile_sh("cd twice && ../worldgen --size 16 %s; echo \"status $?\"",
                       cases[i].args);
        CHECK(strstr(c.out, "status 2") && strstr(c.err, cases[i].err_has), "%s: %s %s",
              cases[i].args, c.out, c.err);
        wg_cli_free(&c);
    }
    /* Standard output and standard error into one pipe. */
    c = hostile_sh("cd twice && { ../worldgen --size 16 --out /dev/stdout --json /dev/stderr "
                   "2>&1; echo \"status $?\" >&2; } | cat");
    CHECK(strstr(c.err, "status 2") &&
              strstr(c.out, "--out '/dev/stdout' and --json '/dev/stderr' are the same file"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
    /* Not clashes: two names, and a device that takes any number of
     * writers. */
    c = hostile_sh("cd twice && ../worldgen " HOSTILE_PIC " --out a.png --heightmap b.png && "
                   "../worldgen --size 16 -q --no-image --heightmap /dev/null --watermap "
                   "/dev/null --json /dev/null --heightmap-format pfm && echo fine");
    CHECK(strcmp(c.out, "fine\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A name of up to NAME_MAX (255) bytes works, whatever its temporary's
 * name; a longer one says so; a long path is elided in the middle, so the
 * reason after it is printed whole. */
WG_TEST(hostile_long_file_names)
{
    static const int lens[] = {243, 244, 250, 255};
    char name[300];
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        memset(name, 'n', sizeof name);
        memcpy(name + lens[i] - 4, ".png", 5);
        wg_cli c = hostile_sh("rm -rf long; mkdir long && cd long && ../worldgen " HOSTILE_PIC
                              " --out %s && ../worldgen --size 16 --mesh scalar -q --no-image "
                              "--heightmap %.*s.pfm && ls -A | wc -l && ls -A | grep -c tmp-",
                              name, lens[i] - 4, name);
        /* The picture, the map and its ENVI header (NAME.pfm.hdr, or
         * NAME.hdr where that is too long a name). */
        CHECK(strcmp(c.out, "3\n0\n") == 0, "%d bytes: %s %s", lens[i], c.out, c.err);
        wg_cli_free(&c);
    }
    memset(name, 'n', sizeof name);
    memcpy(name + 256 - 4, ".png", 5);
    wg_cli c = hostile_sh("rm -rf long; mkdir long && cd long && ../worldgen " HOSTILE_PIC
                          " --out %s; echo \"status $?\"; ls -A", name);
    CHECK(strcmp(c.out, "status 1\n") == 0 &&
              strstr(c.err, "': its name is 256 bytes long, more than the 255 a file "
                            "name may have\n"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);

    /* A 700-byte folder that does not exist. */
    char dir[800] = "";
    for (int i = 0; i < 7; i++)
        strcat(dir, "/dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
                    "dddddddddddddddddddddddddddddddd");
    static const char *const opts[] = {"--heightmap", "--obj", "--out", "--json",
                                       "--gltf"};
    static const char *const files[] = {"h.pfm", "w.obj", "p.png", "r.json", "g.glb"};
    for (int i = 0; i < 5; i++) {
        c = hostile_sh("./worldgen --size 16 --mesh scalar -q %s %s %s/%s",
                       i == 2 ? "" : "--no-image", opts[i], dir + 1, files[i]);
        CHECK(c.status == 1, "%s: %d", opts[i], c.status);
        /* The error's line ends with its reason, whole. */
        const char *line = strstr(c.err, "cannot write '");
        const char *nl = line ? strchr(line, '\n') : NULL;
        CHECK(nl && nl - line > 14 && strncmp(nl - 14, "does not exist", 14) == 0 &&
                  strstr(line, "..."),
              "%s: %s", opts[i], c.err);
        wg_cli_free(&c);
    }

    /* A path a few bytes short of PATH_MAX, whose temporary beside it
     * would pass it: said so (it had said "4090 bytes long, more than the
     * 4095"), with the path elided. */
    static char path[4200];
    path[0] = '\0';
    for (int i = 0; i < 816; i++)
        strcat(path, "a/../");
    strcat(path, "xxxxxx.glb");
    c = hostile_sh("mkdir -p a && ./worldgen --size 16 --mesh scalar -q --gltf %s", path);
    CHECK(c.status == 1 && strlen(c.err) < 500 &&
              strstr(c.err, "...") &&
              strstr(c.err, "xxxxxx.glb': it is 4090 bytes long (or its links are), and the "
                            "temporary file beside it (12 bytes more) would pass the 4095 a "
                            "path may have"),
          "%d: %s", c.status, c.err);
    wg_cli_free(&c);
}

/* strtod skips any leading white space, not only ' ', '\t' and '\n':
 * "\v0.5" was the sea level 0.5.  A control character in a refused value
 * is shown escaped, so it can neither drive the terminal nor forge a
 * line of the message. */
WG_TEST(hostile_decimal_options_refuse_every_leading_space)
{
    static const char *const options[] = {"sea-level", "gltf-error", "azimuth",
                                          "elevation", "distance", "fov",
                                          "look", "sun-azimuth", "sun-elevation"};
    static const struct {
        const char *value, *shown;
    } values[] = {
        {"\v0.5", "'\\x0b0.5' is not a number"},
        {"\f0.5", "'\\x0c0.5' is not a number"},
        {"\r0.5", "'\\x0d0.5' is not a number"},
        {"0.5\r", "'0.5\\x0d' is not a number"},
    };
    for (size_t o = 0; o < sizeof options / sizeof options[0]; o++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            char opt[40], want[160];
            snprintf(opt, sizeof opt, "--%s", options[o]);
            snprintf(want, sizeof want, "--%s: %s (valid: ", options[o],
                     values[v].shown);
            const char *argv[] = {"--size", "16", "-q", "--no-image", opt,
                                  values[v].value, NULL};
            wg_cli c = wg_cli_run(argv);
            CHECK(c.status == 2 && strstr(c.err, want), "%s %s: status %d, %s",
                  opt, values[v].shown, c.status, c.err);
            wg_cli_free(&c);
        }
    /* An escape sequence in any refused value reaches no terminal. */
    const char *argv[] = {"--mesh", "\033[2Jx", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 2 && !strchr(c.err, '\033') && strstr(c.err, "'\\x1b[2Jx'"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* A decimal too small for a double (1e-400) or only for a normal one
 * (1e-310) underflows toward 0: a value in range, not "out of range". */
WG_TEST(hostile_tiny_decimals_are_in_range)
{
    wg_cli c = hostile_sh("mkdir -p tiny && cd tiny && "
                          "../worldgen --size 16 --mesh scalar -q --no-image --sea-level 0 "
                          "--heightmap a.pfm && for v in 1e-310 1e-400 -1e-400 -0; do "
                          "../worldgen --size 16 --mesh scalar -q --no-image --sea-level $v "
                          "--heightmap b.pfm && cmp a.pfm b.pfm && echo $v; done");
    CHECK(strcmp(c.out, "1e-310\n1e-400\n-1e-400\n-0\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
    const char *argv[] = {"--size", "16", "-q", "--no-image", "--gltf", "t.glb",
                          "--gltf-error", "1e-320", NULL};
    c = wg_cli_run(argv);
    CHECK(c.status == 0, "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* An output on a standard output that is closed or open for reading only
 * (1</dev/null), or on a descriptor open for reading only, is refused
 * before the work, as any other output that cannot be written: it had
 * been found only when written, after the whole world was made.  Under a
 * limit that no world of that size fits in, the message is the output's,
 * not the memory's, which is checked later. */
WG_TEST(hostile_unwritable_descriptor_is_found_before_the_work)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    static const struct {
        const char *args, *err_has;
    } cases[] = {
        {"--heightmap - 1</dev/null",
         "--heightmap: cannot write '-': standard output is open for reading only"},
        {"--heightmap - >&-", "--heightmap: cannot write '-': standard output is closed"},
        {"--json /dev/stdout 1</dev/null",
         "--json: cannot write '/dev/stdout': standard output is open for reading only"},
        {"--watermap /dev/fd/5 5</dev/null",
         "--watermap: cannot write '/dev/fd/5': descriptor 5 is open for reading only"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_cli c = hostile_sh("ulimit -v 1000000; ./worldgen --size 30000 --no-image -q "
                              "--heightmap-format pfm %s", cases[i].args);
        CHECK(c.status == 1 && strstr(c.err, cases[i].err_has) &&
                  !strstr(c.err, "needs"),
              "%s: %d %s", cases[i].args, c.status, c.err);
        wg_cli_free(&c);
    }
}

/* A standard output open with O_NONBLOCK (a pipe whose other program set
 * it, as Node.js does, and passed it on) with a slow reader: the map comes
 * whole, not "Resource temporarily unavailable" after the pipe's 64 KiB,
 * and the flag is set again when worldgen ends (the open file is the
 * other program's too). */
WG_TEST(hostile_non_blocking_stdout_waits_for_its_reader)
{
    wg_cli c = hostile_sh(
        "command -v python3 > /dev/null || exit 77; cat > nb.py <<'EOF'\n"
        "import fcntl, os, select, subprocess, time\n"
        "r, w = os.pipe()\n"
        "fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)\n"
        "p = subprocess.Popen(['./worldgen', '--size', '512', '-q', '--heightmap', '-',\n"
        "                      '--heightmap-format', 'pfm', '--mesh', 'scalar',\n"
        "                      '--hydraulic', '0', '--erosion', '0', '--no-image'], stdout=w)\n"
        "got = 0\n"
        "time.sleep(0.3)\n"
        "while True:\n"
        "    if select.select([r], [], [], 0.2)[0]:\n"
        "        got += len(os.read(r, 4096)); time.sleep(0.0002)\n"
        "    elif p.poll() is not None:\n"
        "        break\n"
        "print('status', p.wait(), 'bytes', got,\n"
        "      'nonblock', bool(fcntl.fcntl(w, fcntl.F_GETFL) & os.O_NONBLOCK))\n"
        "EOF\n"
        "python3 nb.py");
    if (c.status == 77) {
        wg_skip("needs python3");
        wg_cli_free(&c);
        return;
    }
    CHECK(c.status == 0 && strstr(c.out, "status 0 bytes 1048592 nonblock True\n"), "%s %s",
          c.out, c.err);
    wg_cli_free(&c);
}

/* --show on an X display that takes the connection and never answers (a
 * stuck server, an ssh -X tunnel whose far end is gone): given up after
 * 10 s, saying so, exit 1, nothing written (it had waited for ever, before
 * the world was made).  A socket stands in for the display. */
WG_TEST(hostile_silent_display_is_given_up)
{
    wg_cli c = hostile_sh(
        "command -v python3 > /dev/null || exit 77; mkdir -p /tmp/.X11-unix; "
        "n=$((5000 + $$ %% 4000)); while [ -e /tmp/.X11-unix/X$n ]; do n=$((n + 1)); done; "
        "python3 -c 'import socket, sys, time\n"
        "s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(5)\n"
        "c = s.accept(); time.sleep(40)' /tmp/.X11-unix/X$n & py=$!; "
        "i=0; until [ -S /tmp/.X11-unix/X$n ] || [ $i -ge 100 ]; do sleep 0.05; i=$((i+1)); done; "
        "DISPLAY=:$n timeout 30 ./worldgen --size 16 -q --show --out silent.png; "
        "echo \"status $?\"; kill $py; rm -f /tmp/.X11-unix/X$n; ls silent.png 2>&1 | grep -c 'No such'");
    if (c.status == 77) {
        wg_skip("needs python3");
        wg_cli_free(&c);
        return;
    }
    CHECK(!strcmp(c.out, "status 1\n1\n") &&
              strstr(c.err, "--show: cannot open a window: the display (DISPLAY=:") &&
              strstr(c.err, ") did not answer in 10 s"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* An output on standard output that cannot be written says why once: the
 * close of standard output at exit used to add "cannot write to standard
 * output: Input/output error", a second, vaguer cause for the same loss. */
WG_TEST(hostile_failed_stdout_output_is_reported_once)
{
    static const char *const cases[] = {
        "--no-image --heightmap - --heightmap-format pfm > /dev/full",
        "--no-image --heightmap - --heightmap-format tif > /dev/full",
        "--no-image --watermap - --heightmap-format png >&-",
        "--no-image --heightmap - --heightmap-format r16 >&-",
        "--no-image --json - > /dev/full",
        "--no-image --gltf - > /dev/full",
        "--width 16 --height 16 --out - > /dev/full",
        "--width 16 --height 16 --out - >&-",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_cli c = hostile_sh("./worldgen --size 16 --mesh scalar -q %s", cases[i]);
        const char *nl = strchr(c.err, '\n');
        CHECK(c.status == 1 && strstr(c.err, "cannot write '-': ") && nl &&
                  nl[1] == '\0' && !strstr(c.err, "Input/output error"),
              "%s: %d %s", cases[i], c.status, c.err);
        wg_cli_free(&c);
    }
    /* The tables alone on a full standard output: still said, once. */
    wg_cli c = wg_cli_sh("./worldgen --size 16 --mesh scalar --no-image > /dev/full");
    CHECK(c.status == 1 &&
              strcmp(c.err, "worldgen: cannot write to standard output: No space left "
                            "on device\n") == 0,
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* Tables that are lost (standard output on a full disk or closed;
 * standard error, when standard output carries an output) fail the run
 * before any file is put in place: they had been found lost only at exit,
 * exit 1 with every file already replaced.  The cause is the write's own,
 * said once. */
WG_TEST(hostile_lost_tables_replace_no_file)
{
    wg_cli c = hostile_sh(
        "rm -rf lt && mkdir lt && cd lt && echo old > a.png && echo old > h.pfm && "
        "../worldgen --size 16 --mesh scalar --width 16 --height 16 --out a.png "
        "--heightmap h.pfm > /dev/full; echo \"full $?\"; "
        "../worldgen --size 16 --mesh scalar --width 16 --height 16 --out a.png "
        "--heightmap h.pfm >&-; echo \"closed $?\"; "
        "../worldgen --size 16 --mesh scalar -q --histogram --heightmap h.pfm > /dev/full; "
        "echo \"histogram $?\"; "
        "../worldgen --size 16 --mesh scalar --heightmap h.pfm --json - 2>/dev/full "
        ">/dev/null; echo \"stderr $?\"; cat a.png h.pfm; ls -A | tr '\\n' ' '");
    CHECK(strcmp(c.out, "full 1\nclosed 1\nhistogram 1\nstderr 1\nold\nold\n"
                        "a.png h.pfm ") == 0 &&
              strcmp(c.err, "worldgen: cannot write to standard output: No space left on "
                            "device\nworldgen: cannot write to standard output: Bad file "
                            "descriptor\nworldgen: cannot write to standard output: No "
                            "space left on device\n") == 0,
          "%s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* The OBJ names FILE.mtl and FILE_albedo.png beside it: a device or a
 * descriptor named as such has no folder of ours beside it (--obj
 * /dev/null made /dev/null.mtl and /dev/null_albedo.png in /dev), so it
 * is refused as '-' is.  A link to a device is fine: the .mtl and the
 * texture go beside the link. */
WG_TEST(hostile_obj_to_a_device_is_refused)
{
    wg_cli c = hostile_sh(
        "mkdir -p objdev && cd objdev && "
        "for f in /dev/null /dev/fd/1 /proc/self/fd/1 /dev/stdout; do "
        "  had=; [ -e $f.mtl ] && had=1; "
        "  ../worldgen --size 16 --mesh scalar -q --no-image --obj $f > /dev/null; "
        "  echo \"$f $?\"; "
        "  [ -z \"$had\" ] && [ -f $f.mtl ] && echo \"made $f.mtl\" && rm -f $f.mtl; "
        "  [ -z \"$had\" ] && [ -f ${f}_albedo.png ] && rm -f ${f}_albedo.png; done; "
        "ln -sf /dev/null dn.obj && "
        "../worldgen --size 16 --mesh scalar -q --no-image --obj dn.obj; echo \"link $?\"; "
        "ls -A | tr '\\n' ' '");
    CHECK(strcmp(c.out, "/dev/null 2\n/dev/fd/1 2\n/proc/self/fd/1 2\n/dev/stdout 2\n"
                        "link 0\ndn.mtl dn.obj dn_albedo.png ") == 0,
          "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "--obj: '/dev/null' is a device or a descriptor, not a file") &&
              strstr(c.err, "--obj: '/dev/fd/1' is a device or a descriptor"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* An OBJ's .mtl or texture named again by an option after --obj (--gltf)
 * is blamed on the OBJ, as one named before it is: the message said
 * "--obj 'x.mtl' and --gltf 'x.mtl' are the same file". */
WG_TEST(hostile_obj_sibling_named_by_a_later_option)
{
    static const struct {
        const char *args, *err_has;
    } cases[] = {
        {"--obj x.obj --gltf x.mtl", "--obj 'x.obj' writes 'x.mtl', which --gltf writes too"},
        {"--obj x.obj --gltf x_albedo.png",
         "--obj 'x.obj' writes 'x_albedo.png', which --gltf writes too"},
        {"--obj x.obj --gltf x.obj", "--obj 'x.obj' and --gltf 'x.obj' are the same file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_cli c = hostile_sh("./worldgen --size 16 -q %s", cases[i].args);
        CHECK(c.status == 2 && strstr(c.err, cases[i].err_has), "%s: %d %s",
              cases[i].args, c.status, c.err);
        wg_cli_free(&c);
    }
}

/* A file its owner made read-only (chmod a-w) is refused, as a plain open
 * would refuse it, not renamed over because its folder is writable.  As
 * root, the run is made as nobody. */
WG_TEST(hostile_read_only_file_is_not_replaced)
{
    wg_cli c = hostile_sh(
        "mkdir -p rofile && cd rofile && cp ../worldgen wg && echo keep > ro.png && "
        "chmod 444 ro.png && as=; if [ \"$(id -u)\" = 0 ]; then "
        "  command -v setpriv > /dev/null || exit 77; chmod 711 .. && "
        "  chown -R 65534:65534 . && as='setpriv --reuid=65534 --regid=65534 "
        "--clear-groups'; $as ./wg --version > /dev/null 2>&1 || exit 77; fi; "
        "$as ./wg " HOSTILE_PIC " --out ro.png; echo \"status $?\"; cat ro.png; "
        "ls -A | grep -c tmp-");
    if (c.status == 77) {
        wg_skip("cannot run as another user here");
        wg_cli_free(&c);
        return;
    }
    CHECK(strcmp(c.out, "status 1\nkeep\n0\n") == 0 &&
              strstr(c.err, "--out: cannot write 'ro.png': Permission denied"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A file anyone may write, in a folder we may not write (chmod 555): the
 * run is refused, since an output is made beside its name and renamed
 * into place, and the message names the folder, not only "Permission
 * denied" of the file.  As root, the run is made as nobody. */
WG_TEST(hostile_unwritable_folder_is_named)
{
    wg_cli c = hostile_sh(
        "mkdir -p rodir/in && cd rodir && cp ../worldgen wg && echo keep > in/w.png && "
        "chmod 666 in/w.png && chmod 555 in && as=; if [ \"$(id -u)\" = 0 ]; then "
        "  command -v setpriv > /dev/null || exit 77; chmod 711 .. && "
        "  chown 65534:65534 wg && as='setpriv --reuid=65534 --regid=65534 "
        "--clear-groups'; $as ./wg --version > /dev/null 2>&1 || exit 77; fi; "
        "$as ./wg " HOSTILE_PIC " --out in/w.png; echo \"status $?\"; cat in/w.png");
    if (c.status == 77) {
        wg_skip("cannot run as another user here");
        wg_cli_free(&c);
        return;
    }
    CHECK(strcmp(c.out, "status 1\nkeep\n") == 0 &&
              strstr(c.err, "--out: cannot write 'in/w.png': Permission denied (no new "
                            "file can be made in the folder 'in/': "),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* An option given twice keeps its last value, and says which one it
 * dropped: --out a.png --out b.png made no a.png without a word. */
WG_TEST(hostile_repeated_option_is_said)
{
    wg_cli c = hostile_sh("mkdir -p twice2 && cd twice2 && ../worldgen --size 16 --mesh scalar "
                          "-q --no-image --heightmap a.pfm --heightmap b.pfm --size 17 -q; "
                          "echo \"status $?\"; ls -A | tr '\\n' ' '");
    CHECK(strcmp(c.out, "status 0\nb.pfm b.pfm.hdr ") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "warning: --heightmap is given more than once: the last, "
                        "'b.pfm', is used, not 'a.pfm'") &&
              strstr(c.err, "warning: --size is given more than once: the last, '17', "
                            "is used, not '16'"),
          "%s", c.err);
    wg_cli_free(&c);
    /* The same value twice changes nothing: no word. */
    c = hostile_sh("./worldgen --size 16 --size 16 --mesh scalar -q --no-image");
    CHECK(c.status == 0 && c.err[0] == '\0', "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* A --size past both limits names both. */
WG_TEST(hostile_size_past_the_region_limit_names_it)
{
    const char *argv[] = {"--size", "1048578", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 2 && strstr(c.err, "--size: '1048578' is out of range (valid: "
                                         "2..65536; up to 1048577 with --region)"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* A folder that exists but makes no files (/proc) answers ENOENT, which
 * was reported as "the folder '/proc/' does not exist". */
WG_TEST(hostile_folder_that_takes_no_files_is_not_called_missing)
{
    wg_cli c = hostile_sh("test -d /proc/self || exit 77; ./worldgen --size 16 --mesh "
                          "scalar -q --no-image --json /proc/x.json --heightmap "
                          "/proc/self/x.pfm; echo \"status $?\"");
    if (c.status == 77) {
        wg_skip("no /proc here");
        wg_cli_free(&c);
        return;
    }
    CHECK(strcmp(c.out, "status 1\n") == 0 &&
              strstr(c.err, "--heightmap: cannot write '/proc/self/x.pfm': the folder "
                            "'/proc/self/' takes no new files (No such file or directory)") &&
              !strstr(c.err, "does not exist"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A stack size limit too small to run in (ulimit -s 32) is refused with
 * a message, before anything is made: it was a segmentation fault. */
WG_TEST(hostile_tiny_stack_limit_is_refused)
{
#if defined(__SANITIZE_ADDRESS__)
    wg_skip("AddressSanitizer needs more stack than the limit tested");
    return;
#endif
    wg_cli c = hostile_sh("mkdir -p stack && cd stack && for s in 32 64 128; do "
                          "(ulimit -s $s; exec ../worldgen --size 64 --hydraulic 3 -q "
                          "--width 64 --height 64 --out o.png --obj x.obj --heightmap "
                          "h.tif); echo \"$s $?\"; done; ls -A | tr '\\n' ' '");
    CHECK(strcmp(c.out, "32 1\n64 1\n128 1\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: the stack size limit is 32 KiB (ulimit -s); worldgen "
                        "needs at least 256 KiB"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* --gltf writes binary glTF whatever the name: a .gltf name (the JSON
 * form's, as importers read it) or another extension gets a warning, as
 * --out's does; .glb, devices and '-' do not. */
WG_TEST(hostile_gltf_extension_mismatch_is_said)
{
    wg_cli c = hostile_sh("mkdir -p glbext && cd glbext && for f in t.gltf t.obj t.GLB "
                          "t.glb /dev/null; do ../worldgen --size 16 --mesh scalar -q "
                          "--no-image --gltf $f; echo \"$f $?\"; done");
    CHECK(strcmp(c.out, "t.gltf 0\nt.obj 0\nt.GLB 0\nt.glb 0\n/dev/null 0\n") == 0, "%s %s",
          c.out, c.err);
    CHECK(strstr(c.err, "warning: --gltf 't.gltf': the file is binary glTF (.glb) whatever "
                        "the name says; importers read a .gltf name as the JSON form\n") &&
              strstr(c.err, "warning: --gltf 't.obj': the file is binary glTF (.glb) "
                            "whatever the name says\n") &&
              !strstr(c.err, "GLB") && !strstr(c.err, "null") && !strstr(c.err, "t.glb'"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* A run that fails at a later output (here the picture, past a file size
 * limit, after the height map was written) replaces none of the files it
 * was to write: they were all held for the end (wg_outfile_hold), and
 * nothing of them is left behind, not the map's header either.  Before,
 * the height map was already in place when the picture failed. */
WG_TEST(hostile_late_failure_replaces_no_earlier_output)
{
    wg_cli c = hostile_sh("mkdir -p late && cd late && echo keep > h.pfm && "
                          "echo keep > w.png && (ulimit -f 40; exec ../worldgen "
                          "--size 64 --mesh scalar -q --heightmap h.pfm --out w.png "
                          "--json j.json); echo \"$?\"; cat h.pfm w.png; ls -A");
    CHECK(strcmp(c.out, "1\nkeep\nkeep\nh.pfm\nw.png\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: --out: cannot write 'w.png': File too large"), "%s",
          c.err);
    wg_cli_free(&c);
}

/* An output whose folder is missing fails the run before the work, not
 * after it: no timing table (the backends never ran), the other outputs
 * untouched. */
WG_TEST(hostile_missing_folder_fails_before_the_work)
{
    wg_cli c = hostile_sh("mkdir -p early && cd early && echo keep > h.png && "
                          "../worldgen --size 64 --mesh scalar --no-image --heightmap "
                          "h.png --json missing/j.json; echo \"$?\"; cat h.png; ls -A");
    CHECK(strcmp(c.out, "1\nkeep\nh.png\n") == 0, "%s %s", c.out, c.err);
    CHECK(strcmp(c.err, "worldgen: --json: cannot write 'missing/j.json': the folder "
                        "'missing/' does not exist\n") == 0,
          "%s", c.err);
    wg_cli_free(&c);
}

/* A file written beside an output (a map's ENVI header or world file,
 * the OBJ's .mtl and texture) that cannot be written fails the run before
 * the work too, as the output itself does: no timing table, the output
 * untouched.  Only the outputs had been tried, and a header that was a
 * folder (or immutable, or another user's in a sticky folder) failed the
 * run at its end, after all the work. */
WG_TEST(hostile_side_file_fails_before_the_work)
{
    static const struct {
        const char *args, *folder, *err;
    } cases[] = {
        {"--heightmap h.pfm", "h.pfm.hdr",
         "worldgen: --heightmap: cannot write 'h.pfm': its header 'h.pfm.hdr': it is a "
         "directory\n"},
        {"--watermap w.r16", "w.r16.hdr",
         "worldgen: --watermap: cannot write 'w.r16': its header 'w.r16.hdr': it is a "
         "directory\n"},
        {"--normalmap n.png", "n.pgw",
         "worldgen: --normalmap: cannot write 'n.png': its world file 'n.pgw': it is a "
         "directory\n"},
        {"--albedo a.PNG", "a.PGW",
         "worldgen: --albedo: cannot write 'a.PNG': its world file 'a.PGW': it is a "
         "directory\n"},
        {"--obj o.obj", "o.mtl", "worldgen: --obj: cannot write 'o.mtl': it is a directory\n"},
        {"--obj o.obj", "o_albedo.png",
         "worldgen: --obj: cannot write 'o_albedo.png': it is a directory\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_cli c = hostile_sh("rm -rf side && mkdir -p side/%s && cd side && echo keep > "
                              "j.json && ../worldgen --size 64 --mesh scalar --no-image "
                              "--json j.json %s; echo \"$?\"; cat j.json",
                              cases[i].folder, cases[i].args);
        CHECK(strcmp(c.out, "1\nkeep\n") == 0, "%s: %s %s", cases[i].args, c.out, c.err);
        CHECK(strcmp(c.err, cases[i].err) == 0, "%s: %s", cases[i].args, c.err);
        wg_cli_free(&c);
    }
    /* Immutable, where chattr works here. */
    wg_cli c = hostile_sh("rm -rf side && mkdir side && cd side && touch h.r16.hdr && "
                          "{ chattr +i h.r16.hdr 2>/dev/null || { echo no-chattr; exit 0; }; }; "
                          "../worldgen --size 64 --mesh scalar --no-image --heightmap h.r16; "
                          "echo \"$?\"; chattr -i h.r16.hdr; ls");
    if (strcmp(c.out, "no-chattr\n") != 0) {
        CHECK(strcmp(c.out, "1\nh.r16.hdr\n") == 0, "%s %s", c.out, c.err);
        CHECK(strcmp(c.err, "worldgen: --heightmap: cannot write 'h.r16': its header "
                            "'h.r16.hdr': Operation not permitted (the file is immutable: "
                            "chattr -i)\n") == 0,
              "%s", c.err);
    }
    wg_cli_free(&c);
}

/* A file that is a mount point (a file bind-mounted over another, as
 * docker run -v $PWD/w.png:/w.png mounts one) cannot be replaced by a
 * rename: refused before the work, saying so; the run had made the world
 * and then failed with "cannot put the outputs in place: 'f.png': Device
 * or resource busy".  Its header too.  As root, where mount works. */
WG_TEST(hostile_mount_point_file_is_refused_before_the_work)
{
    wg_cli c = hostile_sh(
        "rm -rf mnt && mkdir mnt && cd mnt && echo keep > src && touch f.png h.pfm.hdr && "
        "{ mount --bind src f.png 2>/dev/null || { echo no-mount; exit 0; }; }; "
        "mount --bind src h.pfm.hdr; "
        "../worldgen --size 64 --mesh scalar --width 16 --height 16 --out f.png; echo $?; "
        "../worldgen --size 64 --mesh scalar --no-image --heightmap h.pfm; echo $?; "
        "cat f.png; umount f.png h.pfm.hdr; ls");
    if (strcmp(c.out, "no-mount\n") == 0) {
        wg_skip("cannot bind-mount a file here (needs root)");
        wg_cli_free(&c);
        return;
    }
    CHECK(strcmp(c.out, "1\n1\nkeep\nf.png\nh.pfm.hdr\nsrc\n") == 0, "%s %s", c.out, c.err);
    CHECK(strcmp(c.err, "worldgen: --out: cannot write 'f.png': Device or resource busy (the "
                        "file is a mount point, as a container's bind mount of one file: "
                        "outputs are renamed into place whole, and no rename can replace "
                        "it; mount its folder instead)\n"
                        "worldgen: --heightmap: cannot write 'h.pfm': its header "
                        "'h.pfm.hdr': Device or resource busy (the file is a mount point, "
                        "as a container's bind mount of one file: outputs are renamed into "
                        "place whole, and no rename can replace it; mount its folder "
                        "instead)\n") == 0,
          "%s", c.err);
    wg_cli_free(&c);
}

/* A set of files fails when one of them cannot be replaced (in a sticky
 * folder, a file of another user's: here the map's header), before any of
 * them is changed (before the work: the header is tried with the map),
 * and says why; no second name is left behind.  Before, the height map
 * already renamed was deleted.  As root, running worldgen as nobody. */
WG_TEST(hostile_sticky_folder_set_is_all_or_nothing)
{
    if (geteuid() != 0) {
        wg_skip("needs root, to run worldgen as another user");
        return;
    }
    wg_cli c = hostile_sh(
        "command -v setpriv >/dev/null || { echo no-setpriv; exit 0; }; "
        "d=$(mktemp -d /tmp/wg-sticky.XXXXXX) && chmod 1777 $d && "
        "cp ./worldgen $d/wg && chmod 755 $d/wg && cd $d && "
        "echo keep > h.pfm && chown 65534:65534 h.pfm && echo x > h.pfm.hdr && "
        "chmod 666 h.pfm.hdr && setpriv --reuid=65534 --regid=65534 "
        "--clear-groups ./wg --size 16 --mesh scalar -q --no-image --heightmap "
        "h.pfm; echo \"$?\"; cat h.pfm h.pfm.hdr; rm wg; ls -A; cd / && rm -rf $d");
    if (strcmp(c.out, "no-setpriv\n") == 0) {
        wg_skip("needs setpriv (util-linux)");
        wg_cli_free(&c);
        return;
    }
    CHECK(strcmp(c.out, "1\nkeep\nx\nh.pfm\nh.pfm.hdr\n") == 0, "%s %s", c.out, c.err);
    CHECK(strcmp(c.err, "worldgen: --heightmap: cannot write 'h.pfm': its header "
                        "'h.pfm.hdr': Operation not permitted (another user's file in a "
                        "sticky folder)\n") == 0,
          "%s", c.err);
    wg_cli_free(&c);
}

/* With an output on standard output the tables go to standard error; when
 * that fails (a full device, closed), the run fails as it does when the
 * tables on standard output fail: it had exited 0. */
WG_TEST(hostile_lost_tables_on_stderr_fail_the_run)
{
    wg_cli c = hostile_sh("for e in /dev/full closed; do if [ $e = closed ]; then "
                          "./worldgen --size 16 --mesh scalar --no-image --heightmap - "
                          "--heightmap-format pfm >/dev/null 2>&-; else ./worldgen --size 16 "
                          "--mesh scalar --no-image --json - --histogram >/dev/null "
                          "2>$e; fi; echo $?; done; ./worldgen --size 16 --mesh scalar -q "
                          "--no-image --heightmap - --heightmap-format pfm >/dev/null "
                          "2>/dev/full; echo $?");
    CHECK(strcmp(c.out, "1\n1\n0\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* With an output on standard output the tables go to standard error: an
 * output that is standard error's file too (--json /dev/stderr, or --out
 * - with 2>&1 into one file or pipe) is a usage error, before anything is
 * written; the tables (or --histogram's figures) had gone into it, a PNG
 * or a JSON no reader takes, with exit 0.  With -q too: the run's warnings
 * and errors go there whatever -q says (--json /dev/stderr --azimuth 5
 * had begun the JSON with the warning that --azimuth does nothing).
 * /dev/null (a device) is no file the two share. */
WG_TEST(hostile_output_on_standard_error_beside_the_tables_is_refused)
{
    wg_cli c = hostile_sh(
        "mkdir -p tables2 && cd tables2 && W=../worldgen A='" HOSTILE_PIC "'; "
        "$W $A --out ref.png; "
        "$W --size 16 --mesh scalar --width 16 --height 16 --out - > both.png 2>&1; echo $?; "
        "grep -c '^worldgen: --out -: standard output is standard error.s file too (2>&1), "
        "where the tables go when an output takes standard output; give -q, or send --out "
        "to a file' both.png; "
        "$W $A --histogram --out - 2>&1 | grep -c \"figures go when an output takes "
        "standard output; leave out --histogram, or send --out to a file\"; "
        "$W --size 16 --mesh scalar --width 16 --height 16 --out - --json /dev/stderr "
        "> j.png 2> j.json; echo $? $(wc -c < j.png); "
        "$W $A --out - > q.png 2>&1; echo $?; grep -c '^worldgen: --out -: standard "
        "output is standard error.s file too (2>&1), where worldgen writes its warnings "
        "and errors; send one of them elsewhere' q.png; "
        "$W $A --no-image --json /dev/stderr --azimuth 5 2> j2.json; echo $?; "
        "grep -c '^worldgen: --json /dev/stderr: that is standard error, where worldgen "
        "writes its warnings and errors; send --json to a file or to standard output (-)' "
        "j2.json; $W $A --out - 2>/dev/null > q2.png; cmp q2.png ref.png && echo same; "
        "$W --size 16 --mesh scalar --width 16 --height 16 --out - > /dev/null 2>&1; echo $?");
    CHECK(strcmp(c.out, "2\n1\n"
                        "1\n"
                        "2 0\n"
                        "2\n1\n"
                        "2\n1\n"
                        "same\n"
                        "0\n") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
    const char *argv[] = {"--size", "16", "--mesh", "scalar", "--width", "16", "--height", "16",
                          "--out", "-", "--json", "/dev/stderr", NULL};
    c = wg_cli_run(argv);
    CHECK(c.status == 2 && c.out_len == 0 &&
              strstr(c.err, "worldgen: --json /dev/stderr: the tables go to standard error "
                            "when --out takes standard output; give -q, or send --json to a "
                            "file\n"),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
}

/* The tables go to standard output: an output that is standard output's
 * file too (--json f > f) is a usage error, before anything is written;
 * the output, renamed into place, had replaced the file the tables were
 * written into, and they were lost, with exit 0.  A map's header counts
 * (--heightmap h.pfm > h.pfm.hdr); -q without --histogram prints nothing
 * there, and /dev/null is no file the two share. */
WG_TEST(hostile_output_on_standard_output_beside_the_tables_is_refused)
{
    wg_cli c = hostile_sh(
        "mkdir -p tables3 && cd tables3 && W='../worldgen --size 16 --mesh scalar'; "
        "$W --json f.json > f.json; echo $? $(wc -c < f.json); "
        "$W --histogram -q --heightmap h.pfm > h.pfm.hdr; echo $? $(ls); "
        "$W -q --json q.json > q.json; echo $? $(grep -c spec q.json); "
        "$W --heightmap-format pfm --heightmap /dev/null > /dev/null; echo $?");
    CHECK(strcmp(c.out, "2 0\n2 f.json h.pfm.hdr\n0 1\n0\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: --json writes 'f.json', standard output's file too, "
                        "where the tables go; give -q, or send --json to another file\n") &&
              strstr(c.err, "worldgen: --heightmap writes 'h.pfm.hdr', standard output's "
                            "file too, where --histogram's figures go; leave out "
                            "--histogram, or send --heightmap to another file\n"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* A control character in a path (an escape sequence, a newline) is shown
 * as \xNN in a runtime error too, as usage errors show it: it can neither
 * drive the terminal nor forge a second line. */
WG_TEST(hostile_control_characters_in_paths_are_escaped)
{
    wg_cli c = hostile_sh("./worldgen --size 16 --mesh scalar -q --no-image "
                          "--heightmap \"$(printf '\\033[31mno\\ndir/x.pfm')\"; echo $?");
    CHECK(strcmp(c.out, "1\n") == 0, "%s %s", c.out, c.err);
    CHECK(strcmp(c.err, "worldgen: --heightmap: cannot write '\\x1b[31mno\\x0adir/x.pfm': "
                        "the folder '\\x1b[31mno\\x0adir/' does not exist\n") == 0,
          "%s", c.err);
    wg_cli_free(&c);
}

/* The tables show a path as messages do: the render block's output
 * column had printed it raw, so a name with a newline and an escape
 * sequence forged a second 'wall' line in the table and drove the
 * terminal, in a run that exits 0. */
WG_TEST(hostile_control_characters_in_table_paths_are_escaped)
{
    wg_cli c = hostile_sh("./worldgen --size 4 --mesh scalar --no-image "
                          "--heightmap \"$(printf 'tp\nwall    0.000s \033[31mx.pfm')\"; "
                          "echo $?; rm -f tp*");
    CHECK(strstr(c.out, "  heightmap ") && strstr(c.out, "s  tp\\x0awall    0.000s "
                                                  "\\x1b[31mx.pfm\n"), "%s", c.out);
    int walls = 0;
    for (const char *p = c.out; (p = strstr(p, "\nwall ")) != NULL; p++)
        walls++;
    CHECK(!strchr(c.out, '\033') && walls == 1, "%d wall lines: %s", walls,
          c.out);
    const char *end = strrchr(c.out, ')');
    CHECK(end && strcmp(end, ")\n0\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A set whose last rename fails (the test hook WORLDGEN_FAULT=rename)
 * gives every target back what it held: the files replaced before it get
 * their old content again, new ones are removed, nothing is left beside
 * them.  As root, also as nobody over a root-owned file it may write but
 * not read, which the kernel will not hard-link (protected_hardlinks):
 * kept by moving it aside instead, and moved back, owner and all. */
WG_TEST(hostile_failed_set_gives_every_file_back)
{
    wg_cli c = hostile_sh("mkdir -p giveback && cd giveback && echo old-h > h.pfm && "
                          "echo old-hdr > h.pfm.hdr && echo old-png > w.png && "
                          "WORLDGEN_FAULT=rename ../worldgen --size 16 --mesh scalar -q "
                          "--heightmap h.pfm --out w.png --json j.json --width 64 "
                          "--height 48; echo $?; cat h.pfm h.pfm.hdr w.png; ls -A");
    CHECK(strcmp(c.out, "1\nold-h\nold-hdr\nold-png\nh.pfm\nh.pfm.hdr\nw.png\n") == 0,
          "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: cannot put the outputs in place: 'j.json': Input/output "
                        "error; no output was changed"),
          "%s", c.err);
    wg_cli_free(&c);
    if (geteuid() != 0) {
        wg_skip("the moved-aside case needs root, to run worldgen as another user");
        return;
    }
    c = hostile_sh(
        "command -v setpriv >/dev/null || { echo no-setpriv; exit 0; }; "
        "d=$(mktemp -d /tmp/wg-aside.XXXXXX) && chmod 755 $d && cp ./worldgen $d/wg && "
        "mkdir $d/out && chown 65534 $d/out && cd $d/out && echo old > a.pfm && "
        "chmod 622 a.pfm && NB='setpriv --reuid=65534 --regid=65534 --clear-groups'; "
        "WORLDGEN_FAULT=rename $NB ../wg --size 16 --mesh scalar -q --no-image "
        "--heightmap a.pfm; echo $?; cat a.pfm; stat -c %%U a.pfm; ls -A; "
        "$NB ../wg --size 16 --mesh scalar -q --no-image --heightmap a.pfm; echo $?; "
        "head -c 2 a.pfm; echo; ls -A; cd / && rm -rf $d");
    if (strcmp(c.out, "no-setpriv\n") == 0) {
        wg_skip("needs setpriv (util-linux)");
        wg_cli_free(&c);
        return;
    }
    CHECK(strcmp(c.out, "1\nold\nroot\na.pfm\n0\nPf\na.pfm\na.pfm.hdr\n") == 0, "%s %s",
          c.out, c.err);
    wg_cli_free(&c);
}

/* A fatal signal that comes while a run's files are renamed into place
 * (the test hook WORLDGEN_FAULT=signal: SIGTERM, held until the renames
 * end) kills the run with every target as it was: the replaced ones their
 * old content, the new ones gone, nothing beside them.  The run had died
 * of it after every file was replaced (a large file's rename waits for its
 * data on ext4, 28 ms for a 180 MB OBJ: 1 of 25 SIGTERMs at --size 1024
 * landed there). */
WG_TEST(hostile_signal_during_the_renames_changes_nothing)
{
    wg_cli c = hostile_sh("mkdir -p sigset && cd sigset && echo old-h > h.pfm && "
                          "echo old-png > w.png && "
                          "WORLDGEN_FAULT=signal ../worldgen --size 16 --mesh scalar -q "
                          "--heightmap h.pfm --out w.png --json j.json --width 64 "
                          "--height 48; echo $?; cat h.pfm w.png; ls -A");
    CHECK(strcmp(c.out, "143\nold-h\nold-png\nh.pfm\nw.png\n") == 0, "%s %s",
          c.out, c.err);
    wg_cli_free(&c);
    /* One file alone: not renamed at all. */
    c = hostile_sh("mkdir -p sigone && cd sigone && echo old-j > j.json && "
                   "WORLDGEN_FAULT=signal ../worldgen --size 16 --mesh scalar -q "
                   "--no-image --json j.json; echo $?; cat j.json; ls -A");
    CHECK(strcmp(c.out, "143\nold-j\nj.json\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A failed run cuts the regular files it wrote in place, through a
 * descriptor the shell opened (> f, >> log, 7> f), back to where they
 * stood: they cannot be renamed into place with the others, and a full
 * disk had left 64 KiB of a PFM in standard output's file (appended to a
 * log with >>).  The run fails here at its last rename (the test hook
 * WORLDGEN_FAULT=rename); without it, the same files are whole. */
WG_TEST(hostile_failed_run_cuts_its_descriptors_files_back)
{
    wg_cli c = hostile_sh(
        "mkdir -p cutback && cd cutback && W=../worldgen "
        "A='--size 16 --mesh scalar -q --no-image --json j.json --heightmap h.pfm'; "
        "WORLDGEN_FAULT=rename $W $A --watermap - --heightmap-format pfm > w.pfm; "
        "echo $? $(wc -c < w.pfm); echo 'line one' > log; "
        "WORLDGEN_FAULT=rename $W $A --watermap - --heightmap-format pfm >> log; "
        "echo $?; cat log; "
        "WORLDGEN_FAULT=rename $W $A --watermap /dev/fd/7 --heightmap-format pfm 7> s.pfm; "
        "echo $? $(wc -c < s.pfm); "
        "$W $A --watermap - --heightmap-format pfm >> log; echo $?; head -n 2 log; "
        "ls -A");
    CHECK(strcmp(c.out, "1 0\n1\nline one\n1 0\n0\nline one\nPf\n"
                        "h.pfm\nh.pfm.hdr\nj.json\nlog\ns.pfm\nw.pfm\n") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A run that dies of a signal cuts those files back too: a SIGTERM while
 * a PNG went to standard output's file (> f) had left 196 KiB of it, and
 * >> log kept 26 MB of a PFM after its first line, since only a failed
 * run cut them.  The signal comes here at the renames (the test hook
 * WORLDGEN_FAULT=signal), when the maps are written whole; the handler
 * takes the same path at any point of the writing. */
WG_TEST(hostile_signal_cuts_its_descriptors_files_back)
{
    wg_cli c = hostile_sh(
        "mkdir -p sigcut && cd sigcut && W=../worldgen "
        "A='--size 16 --mesh scalar -q --no-image --heightmap h.pfm'; "
        "WORLDGEN_FAULT=signal $W $A --watermap - --heightmap-format pfm > w.pfm; "
        "echo $? $(wc -c < w.pfm); echo 'line one' > log; "
        "WORLDGEN_FAULT=signal $W $A --json - >> log; echo $?; cat log; "
        "WORLDGEN_FAULT=signal $W $A --watermap /dev/fd/7 --heightmap-format pfm 7> s.pfm; "
        "echo $? $(wc -c < s.pfm); ls -A");
    CHECK(strcmp(c.out, "143 0\n143\nline one\n143 0\nlog\ns.pfm\nw.pfm\n") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A limit on processes (ulimit -u, a control group's pids.max) that lets
 * no thread start: the openmp backend is not available, saying why and
 * the --threads that can run, instead of libgomp's "Thread creation
 * failed" and exit; --mesh auto runs scalar; and it runs with that many,
 * the render too, which says so.
 * Run as nobody where the tests run as root, whose process limit the
 * kernel does not apply. */
WG_TEST(hostile_process_limit_names_the_threads_that_can_start)
{
    /* LeakSanitizer checks at exit from a thread of its own, which the
     * limit forbids: under SAN=1 it would fail every run. */
    wg_cli c = hostile_sh(
        "export ASAN_OPTIONS=detect_leaks=0; "
        "command -v prlimit >/dev/null || { echo no-util-linux; exit 0; }; "
        "NB=; if [ \"$(id -u)\" = 0 ]; then command -v setpriv >/dev/null || "
        "{ echo no-util-linux; exit 0; }; "
        "NB='setpriv --reuid=65534 --regid=65534 --clear-groups'; fi; "
        "d=$(mktemp -d /tmp/wg-nproc.XXXXXX) && chmod 755 $d && cp ./worldgen $d/wg && "
        "cd $d && for t in 2 1; do $NB prlimit --nproc=1:1 ./wg --size 64 "
        "--mesh openmp --threads $t -q --no-image; echo $?; done; "
        "$NB prlimit --nproc=1:1 ./wg --size 256 --hydraulic 10 --threads 2 --no-image "
        "> auto.txt; echo $?; grep -c '^  scalar ' auto.txt; "
        "$NB prlimit --nproc=1:1 ./wg --size 64 --threads 2 -q --out - --json /dev/fd/3 "
        "3> j.json > p.png; jq -r .render.threads j.json; cd / && rm -rf $d");
    if (strcmp(c.out, "no-util-linux\n") == 0) {
        wg_skip("needs prlimit and setpriv (util-linux)");
        wg_cli_free(&c);
        return;
    }
    /* The render's threads are those that ran it: one (it said 2). */
    CHECK(strcmp(c.out, "1\n0\n0\n1\n1\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: --mesh openmp: not available here: cannot start 2 "
                        "threads, only 1 (Resource temporarily unavailable: a limit on processes, "
                        "ulimit -u or a control group's pids.max); give --threads 1") &&
              !strstr(c.err, "libgomp"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* Run from a folder that has been deleted: said so, exit 1; it had been
 * "the folder '.' takes no new files (No such file or directory)", the
 * message for /proc, naming no cause. */
WG_TEST(hostile_deleted_current_folder_is_said_to_be)
{
    /* On the test's own file system, and on a tmpfs (/dev/shm), which
     * makes a temporary in a deleted folder (ext4 refuses it): there the
     * run had failed only at the end, "cannot put the outputs in place". */
    static const char *const where[] = {".", "/dev/shm"};
    for (int i = 0; i < 2; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "W=$PWD/worldgen; [ -d '%s' ] && [ -w '%s' ] || "
                 "{ echo none; exit 0; }; d=$(mktemp -d \"$(cd '%s' && pwd)/gone-cwd.XXXXXX\") "
                 "&& cd \"$d\" && rmdir \"$d\" && $W --size 8 -q --out a.png; "
                 "echo $?", where[i], where[i], where[i]);
        wg_cli c = hostile_sh(cmd);
        if (strcmp(c.out, "none\n") != 0)
            CHECK(strcmp(c.out, "1\n") == 0 &&
                      strstr(c.err, "worldgen: --out: cannot write 'a.png': "
                                    "the folder '.' has been deleted (it is in "
                                    "no folder any more)"),
                  "in %s: %s %s", where[i], c.out, c.err);
        wg_cli_free(&c);
    }
}

/* Restricted to one CPU (taskset; a container's or a Slurm job's cpuset is
 * the same to the process), the JSON's threads are what ran: 1.  It had
 * said the cores online (2) while openmp ran 1 thread, and the renderer
 * and writers started a thread per core online on that one CPU. */
WG_TEST(hostile_one_cpu_of_many_is_the_threads)
{
    wg_cli c = hostile_sh("command -v taskset >/dev/null || { echo no-taskset; exit 0; }; "
                          "cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//'); "
                          "taskset -c \"$cpu\" ./worldgen --size 64 --mesh openmp -q "
                          "--json - --obj one-cpu.obj | grep '\"host\"'");
    if (strcmp(c.out, "no-taskset\n") == 0 || strstr(c.err, "built without OpenMP")) {
        wg_skip("needs taskset (util-linux) and the openmp backend (make OPENMP=)");
        wg_cli_free(&c);
        return;
    }
    CHECK(strstr(c.out, "\"threads\": 1,"), "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A folder that is append-only (chattr +a) takes new names but lets none
 * be renamed or removed: the temporary was named there, its rename
 * failed, and it stayed behind (".a.png.tmp-*", one a run) beside "no
 * output was changed".  Now refused before anything is made, saying why;
 * an immutable folder too. */
WG_TEST(hostile_append_only_folder_leaves_no_temporary)
{
    wg_cli c = hostile_sh("rm -rf ao ai; mkdir ao ai && chattr +a ao 2>/dev/null && "
                          "chattr +i ai 2>/dev/null || { chattr -a ao 2>/dev/null; "
                          "echo no-chattr; exit 0; }; "
                          "./worldgen --size 8 -q --out ao/a.png --heightmap ao/h.pfm; "
                          "echo $?; ./worldgen --size 8 -q --out ai/a.png; echo $?; "
                          "ls -A ao ai; chattr -a ao; chattr -i ai");
    if (strcmp(c.out, "no-chattr\n") == 0) {
        wg_skip("chattr +a and +i do not work here (root on a file system with them)");
        wg_cli_free(&c);
        return;
    }
    CHECK(strcmp(c.out, "1\n1\nai:\n\nao:\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: --heightmap: cannot write 'ao/h.pfm': Operation not "
                        "permitted (the folder 'ao' is append-only: chattr -a;") &&
              strstr(c.err, "worldgen: --out: cannot write 'ai/a.png': Operation not "
                            "permitted (the folder 'ai' is immutable: chattr -i;"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* An output that is a folder, in an append-only folder: "it is a
 * directory", the cause, as anywhere else; the folder's flag had been
 * given as the reason instead. */
WG_TEST(hostile_append_only_folder_still_says_a_directory)
{
    wg_cli c = hostile_sh("rm -rf aod; mkdir -p aod/d && chattr +a aod 2>/dev/null || "
                          "{ echo no-chattr; exit 0; }; "
                          "./worldgen --size 8 -q --out aod/d; echo $?; chattr -a aod");
    if (strcmp(c.out, "no-chattr\n") == 0) {
        wg_skip("chattr +a does not work here (root on a file system with it)");
        wg_cli_free(&c);
        return;
    }
    CHECK(strcmp(c.out, "1\n") == 0 &&
              strstr(c.err, "worldgen: --out: cannot write 'aod/d': it is a directory") &&
              !strstr(c.err, "append-only"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* GOMP_CPU_AFFINITY naming a CPU this machine lacks (a job script from a
 * bigger one): libgomp keeps the place (from OMP_PLACES it would drop
 * it), its pthread_create for the thread bound there failed, and libgomp
 * exited with "Thread creation failed: Invalid argument", --mesh all too.
 * Now openmp is not available, saying which place and the --threads that
 * can run; in a list it is skipped. */
WG_TEST(hostile_affinity_to_a_missing_cpu_names_the_place)
{
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    wg_cli c = hostile_sh("export GOMP_CPU_AFFINITY='0 %ld'; ./worldgen --size 64 "
                          "--mesh openmp --threads 2 -q --no-image; echo $?; "
                          "./worldgen --size 64 --mesh all --threads 2 --no-image "
                          "| grep -c '^skip    openmp: '; echo $?", cpus);
    if (strcmp(c.out, "0\n0\n1\n") == 0 && !strstr(c.err, "libgomp")) {
        wg_skip("libgomp keeps no place of CPU %ld here", cpus);
        wg_cli_free(&c);
        return;
    }
    if (hostile_without_openmp(&c))
        return;
    char says[256];
    snprintf(says, sizeof says, "worldgen: --mesh openmp: not available here: cannot "
             "start 2 threads bound to their places, only 1: thread 1 is bound to "
             "GOMP_CPU_AFFINITY's place 1 (CPU %ld), none of which this process may "
             "use (Invalid argument); give --threads 1", cpus);
    CHECK(strcmp(c.out, "1\n1\n0\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, says) && !strstr(c.err, "libgomp"), "%s", c.err);
    wg_cli_free(&c);
}

/* The variables for tests and measurements take their own values alone:
 * any other is a usage error naming the variable, the value and the valid
 * ones, before the world is made (WORLDGEN_VK_VALIDATION=yes had run
 * without the validation asked for, WORLDGEN_VK_EROSION=Single the other
 * kernel, silently).  Empty is unset.  A WORLDGEN_FAULT that spoils a
 * field says so. */
WG_TEST(hostile_environment_values_are_checked)
{
    static const struct {
        const char *env, *err_has;
    } bad[] = {
        {"WORLDGEN_VK_VALIDATION=yes",
         "WORLDGEN_VK_VALIDATION: 'yes' is not a value it takes (valid: 0 or 1, or unset)"},
        {"WORLDGEN_VK_STAGING='1 '", "WORLDGEN_VK_STAGING: '1 ' is not a value it takes"},
        {"WORLDGEN_VK_TEXELS=false", "WORLDGEN_VK_TEXELS: 'false' is not a value it takes"},
        {"WORLDGEN_VK_EROSION=Single",
         "WORLDGEN_VK_EROSION: 'Single' is not a value it takes (valid: single or blocked, "
         "or unset)"},
        {"WORLDGEN_WIDE=off", "WORLDGEN_WIDE: 'off' is not a value it takes (valid: 0 or 1, "
                              "or unset)"},
        {"WORLDGEN_FAULT=scalar:height",
         "WORLDGEN_FAULT: 'scalar:height' is not a fault the tests can ask for (valid: "
         "rename, signal, kill, kill-placing, show, a backend (scalar, openmp, vulkan), or "
         "one with :water, or "
         "unset)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wg_cli c = hostile_sh("%s ./worldgen --size 16 --mesh scalar -q --no-image "
                              "--json j-env.json; test -e j-env.json && echo written",
                              bad[i].env);
        CHECK(strcmp(c.out, "") == 0 && strstr(c.err, bad[i].err_has) &&
                  strstr(c.err, "Try 'worldgen --help'"),
              "%s: %s %s", bad[i].env, c.out, c.err);
        wg_cli_free(&c);
    }
    wg_cli c = hostile_sh("WORLDGEN_VK_VALIDATION= WORLDGEN_VK_STAGING=0 WORLDGEN_VK_TEXELS=1 "
                          "WORLDGEN_VK_EROSION=blocked WORLDGEN_WIDE=0 WORLDGEN_FAULT= "
                          "./worldgen --size 16 "
                          "--mesh scalar -q --no-image; echo $?; WORLDGEN_FAULT=scalar:water "
                          "./worldgen --size 16 --mesh scalar -q --no-image; echo $?; "
                          "WORLDGEN_FAULT=x ./worldgen --help > /dev/null; echo $?; "
                          "WORLDGEN_FAULT=x ./worldgen --version > /dev/null; echo $?");
    CHECK(strcmp(c.out, "0\n0\n0\n2\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: warning: WORLDGEN_FAULT=scalar:water: one water depth of "
                        "scalar's is wrong on purpose (a test hook; unset it for the true "
                        "world)"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* A GeoTIFF to a pipe or a device is made in a temporary file under
 * $TMPDIR and copied: when that file cannot be written (a full or limited
 * $TMPDIR), the message names it, not the output, which had read as a
 * full disk or a too-large file where the output goes. */
WG_TEST(hostile_temporary_tiff_failure_names_the_temporary)
{
    wg_cli c = hostile_sh("rm -rf tmptif; mkdir -p tmptif/t && cd tmptif && "
                          "(ulimit -f 8; TMPDIR=$PWD/t exec ../worldgen --size 256 --mesh "
                          "scalar -q --hydraulic 0 --no-image --heightmap - "
                          "--heightmap-format tif > /dev/null); echo \"status $?\"; ls -A t");
    CHECK(strcmp(c.out, "status 1\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: --heightmap: cannot write '-': the temporary TIFF it is "
                        "copied from, in ") &&
              strstr(c.err, "/tmptif/t ($TMPDIR): File too large"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* A GeoTIFF to a pipe, a FIFO or a device goes through a temporary file
 * under $TMPDIR: a $TMPDIR that takes no files fails the run before the
 * world is made (it had failed after), and one to a regular file needs
 * none. */
WG_TEST(hostile_tmpdir_of_a_piped_tiff_is_tried_first)
{
    wg_cli c = hostile_sh(
        "rm -rf tifpipe; mkdir tifpipe && cd tifpipe && mkfifo f.tif && "
        "for a in '--heightmap - --heightmap-format tif' '--normalmap f.tif' "
        "'--watermap /dev/null --heightmap-format tif'; do "
        "  { TMPDIR=$PWD/none ../worldgen --size 64 --mesh scalar -q $a; echo $? > st; } "
        "    | cat > /dev/null; echo \"status $(cat st)\"; done; "
        "TMPDIR=$PWD/none ../worldgen --size 64 --mesh scalar -q --heightmap - "
        "--heightmap-format tif > h.tif; echo \"file $? $(test -s h.tif && echo written)\"; "
        "TMPDIR=$PWD/none ../worldgen --size 64 --mesh scalar -q --heightmap /dev/fd/3 "
        "--heightmap-format tif 3> h3.tif; echo \"fd $? $(test -s h3.tif && echo written)\"");
    CHECK(strcmp(c.out, "status 1\nstatus 1\nstatus 1\nfile 0 written\nfd 0 written\n") == 0,
          "%s %s",
          c.out, c.err);
    const char *want[] = {"/tifpipe/none for the TIFF: No such file or directory\n",
                          "worldgen: --normalmap f.tif: cannot make",
                          "worldgen: --watermap /dev/null: cannot make"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(strstr(c.err, want[i]), "want '%s' in: %s", want[i], c.err);
    wg_cli_free(&c);
}

/* A GeoTIFF that cannot be written for want of memory (an address space
 * limit) says so: libtiff's own words ("TIFFAppendToStrip: Write error at
 * scanline 0", "TIFFWriteBufferSetup: No space for output buffer") had
 * read as a full disk.  Limits from one that refuses the world up front
 * to one that writes it: every failure that names libtiff says out of
 * memory, and some fail there (the window between the fields and the
 * TIFF's buffers fitting). */
WG_TEST(hostile_geotiff_out_of_memory_says_so)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    wg_cli c = hostile_sh(
        "mkdir -p tifmem && cd tifmem; for v in $(seq 70000 3000 130000); do "
        "(ulimit -v $v; exec ../worldgen --size 1024 --hydraulic 5 --erosion 2 -q "
        "--threads 1 --no-image --normalmap n.tif) 2>&1; done");
    int tiff = 0, bad = 0;
    for (const char *l = c.out; l && *l;) {
        const char *e = strchr(l, '\n');
        size_t len = e ? (size_t)(e - l) : strlen(l);
        char line[600];
        snprintf(line, sizeof line, "%.*s", (int)len, l);
        if (strstr(line, "libtiff") || strstr(line, "TIFF")) {
            tiff += strstr(line, "cannot write 'n.tif': out of memory (libtiff: ") != NULL;
            bad += strstr(line, "out of memory") == NULL;
        }
        l = e ? e + 1 : NULL;
    }
    CHECK(bad == 0 && tiff > 0, "%d said otherwise, %d out of memory: %s", bad, tiff,
          c.out);
    wg_cli_free(&c);
}

/* An output that is the running program's own file is a usage error:
 * --out wgc run as ./wgc had replaced the program with the picture, exit
 * 0 (the file kept its mode 0755); so had --json /proc/self/exe. */
WG_TEST(hostile_output_onto_the_program_itself_is_refused)
{
    wg_cli c = hostile_sh(
        "cp ./worldgen wgc && for o in '--out wgc' '--json /proc/self/exe' "
        "'--heightmap ./wgc'; do ./wgc --size 16 -q $o; echo \"status $?\"; done; "
        "cmp -s wgc ./worldgen && echo intact");
    CHECK(strcmp(c.out, "status 2\nstatus 2\nstatus 2\nintact\n") == 0 &&
              strstr(c.err, "--out wgc: that is worldgen itself") &&
              strstr(c.err, "--json /proc/self/exe: that is worldgen itself"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A glTF whose meshes cannot be allocated says how much they needed in a
 * unit that shows it: "out of memory for 0.0 GiB of meshes" had been said
 * of 17 MB.  Limits around the one where the world fits and its meshes do
 * not (46-58 MB at 512). */
WG_TEST(hostile_gltf_out_of_memory_says_its_size)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    wg_cli c = hostile_sh(
        "mkdir -p glbmem && cd glbmem; for v in $(seq 40000 2000 70000); do "
        "(ulimit -v $v; exec ../worldgen --size 512 --hydraulic 5 --erosion 2 -q "
        "--threads 1 --gltf g.glb) 2>&1; done");
    CHECK(strstr(c.out, " MiB of meshes") && !strstr(c.out, " 0.0 GiB"),
          "%s", c.out);
    wg_cli_free(&c);
}

/* Threads whose stacks (8 MiB each, the stack size limit) the address
 * space limit cannot hold are said to be that, not a limit on processes
 * (ulimit -u), which it had said under ulimit -v 1000000 with --threads
 * 1024. */
WG_TEST(hostile_threads_short_of_address_space_say_so)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    wg_cli c = hostile_sh("ulimit -s 8192; ulimit -v 1000000; ./worldgen --size 64 "
                          "--mesh openmp --threads 1024 -q --no-image");
    if (hostile_without_openmp(&c))
        return;
    CHECK(c.status == 1 && strstr(c.err, "each needs a stack of 8.0 MiB (the "
                                         "stack size limit, ulimit -s), and the "
                                         "address space limit (ulimit -v) holds "
                                         "no more") &&
              !strstr(c.err, "ulimit -u"),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
}

/* OMP_STACKSIZE (or GOMP_STACKSIZE) too large for a thread to start with:
 * libgomp's pthread_create failed and it exited, "Thread creation failed:
 * Resource temporarily unavailable", whatever --mesh said (auto chose
 * openmp on two cores).  Now openmp is not available, naming the variable
 * and the size; a stack that fits still runs it.  Under ulimit -v, so
 * that the size fails whatever the kernel's overcommit. */
WG_TEST(hostile_huge_openmp_stack_names_the_variable)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    wg_cli c = hostile_sh(
        "ulimit -v 4194304; for e in 'OMP_STACKSIZE=8G' 'OMP_STACKSIZE=x GOMP_STACKSIZE=8388608' "
        "'OMP_STACKSIZE=64M'; do env $e ./worldgen --size 64 --mesh openmp --threads 2 -q "
        "--no-image; echo $?; done; OMP_STACKSIZE=8G ./worldgen --size 64 --mesh all "
        "--threads 2 --no-image | grep -c '^skip    openmp: '");
    if (hostile_without_openmp(&c))
        return;
    CHECK(strcmp(c.out, "1\n1\n0\n1\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: --mesh openmp: not available here: cannot start 2 threads, "
                        "only 1: each needs the stack of 8589934592 bytes that "
                        "OMP_STACKSIZE='8G' asks for (Resource temporarily unavailable); give "
                        "a smaller OMP_STACKSIZE, or --threads 1\n") &&
              strstr(c.err, "the stack of 8589934592 bytes that GOMP_STACKSIZE='8388608' "
                            "asks for") &&
              !strstr(c.err, "Thread creation failed"),
          "%s", c.err);
    wg_cli_free(&c);
}

/* An empty file name is a usage error for every option that takes one,
 * before any work: with --heightmap-format, --heightmap '' (and
 * --watermap '', --sedimentmap '') had reached the writer, "cannot write
 * '': empty file name", a runtime failure (exit 1). */
WG_TEST(hostile_empty_file_name_is_a_usage_error_everywhere)
{
    static const char *const options[] = {"--heightmap", "--watermap", "--sedimentmap",
                                          "--normalmap", "--albedo",   "--json",
                                          "--obj",       "--gltf",     "--out"};
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
        for (int format = 0; format < 2; format++) {
            const char *argv[] = {"--size", "16", "-q", "--mesh", "scalar", options[i], "",
                                  format ? "--heightmap-format" : NULL, "pfm", NULL};
            wg_cli c = wg_cli_run(argv);
            char want[64];
            snprintf(want, sizeof want, "%s: '' is", options[i]);
            CHECK(c.status == 2 && strstr(c.err, want), "%s ''%s: %d %s", options[i],
                  format ? " --heightmap-format pfm" : "", c.status, c.err);
            wg_cli_free(&c);
        }
}

/* --region's numbers with leading zeros are the numbers, as --size's are:
 * ten digits or more had been taken for a place beyond any world ("is
 * outside the 16x16 world" for 0000000001,...). */
WG_TEST(hostile_region_numbers_with_leading_zeros)
{
    wg_cli c = hostile_sh("mkdir -p rzero && cd rzero && ../worldgen --size 16 --mesh scalar "
                          "-q --region 1,2,3,4 --heightmap a.pfm && ../worldgen --size 16 "
                          "--mesh scalar -q --region 00000000000000000001,0000000000002,"
                          "0x00000000000000003,0X0000000004 --heightmap b.pfm && cmp a.pfm "
                          "b.pfm && echo same");
    CHECK(strcmp(c.out, "same\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
    /* Ten significant digits are still beyond any world. */
    const char *argv[] = {"--size", "16", "-q", "--region", "0001000000000,0,1,1", NULL};
    c = wg_cli_run(argv);
    CHECK(c.status == 2 && strstr(c.err, "is outside the 16x16 world"), "%d %s", c.status,
          c.err);
    wg_cli_free(&c);
}

/* An option given twice with one number spelled two ways (16 and 0x10,
 * 0.5 and .50) changes nothing, and gets no word: it had been warned of
 * as a value dropped ("the last, '0x10', is used, not '16'"). */
WG_TEST(hostile_one_number_spelled_twice_is_not_said)
{
    static const char *const pairs[][3] = {
        {"--size", "16", "0x10"},          {"--size", "16", "016"},
        {"--seed", "255", "0XfF"},         {"--sea-level", "0.5", ".50"},
        {"--sea-level", "0", "-0"},        {"--hydraulic", "3", "0x3"},
        {"--seed", "18446744073709551615", "0xffffffffffffffff"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *argv[] = {"--size", "16", "--mesh", "scalar", "-q", "--no-image",
                              pairs[i][0], pairs[i][1], pairs[i][0], pairs[i][2], NULL};
        wg_cli c = wg_cli_run(argv);
        CHECK(c.status == 0 && !strstr(c.err, "more than once"), "%s %s %s: %d %s",
              pairs[i][0], pairs[i][1], pairs[i][2], c.status, c.err);
        wg_cli_free(&c);
    }
    /* Two numbers are still said. */
    const char *argv[] = {"--size", "16", "--size", "0x11", "--mesh", "scalar", "-q",
                          "--no-image", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 0 && strstr(c.err, "warning: --size is given more than once: the last, "
                                         "'0x11', is used, not '16'"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* OMP_DYNAMIC=true let libgomp size openmp's team by the load average,
 * at most the CPUs: --threads 4 on the 2-core machine ran 1 thread, the
 * JSON saying 4.  The team is the size asked for: counted here while the
 * run waits on a height map into a FIFO (its stages done, the team idle). */
WG_TEST(hostile_omp_dynamic_keeps_the_team_asked_for)
{
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    wg_cli c = hostile_sh(
        "mkfifo f.pfm || exit 1; OMP_DYNAMIC=true ./worldgen --size 257 --hydraulic 2 "
        "--mesh openmp --threads %ld --no-image -q --heightmap f.pfm & pid=$!; "
        /* a run that ends without opening the FIFO opens no reader's way */
        "{ while kill -0 $pid 2>/dev/null; do sleep 0.05; done; exec 4<>f.pfm; } & "
        "exec 3<f.pfm; ls /proc/$pid/task | wc -l; cat <&3 > /dev/null; wait $pid",
        cpus + 2);
    if (hostile_without_openmp(&c))
        return;
    CHECK(c.status == 0 && atol(c.out) == cpus + 2, "%ld threads: status %d, %s %s",
          cpus + 2, c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* OMP_THREAD_LIMIT caps libgomp's teams without a word: --threads 2
 * under OMP_THREAD_LIMIT=1 ran 1 thread, the JSON saying 2.  Now openmp is
 * not available for more, naming the variable and the --threads that
 * runs, and the default count (openmp's, the renderer's and the JSON's)
 * is at most the limit. */
WG_TEST(hostile_omp_thread_limit_is_said_and_kept)
{
    wg_cli c = hostile_sh("export OMP_THREAD_LIMIT=1; ./worldgen --size 64 --mesh openmp "
                          "--threads 2 -q --no-image; echo $?; ./worldgen --size 64 "
                          "--mesh all --threads 2 --no-image | grep -c '^skip    openmp: '; "
                          "./worldgen --size 64 --mesh openmp -q --no-image --json - "
                          "| jq .host.threads");
    if (hostile_without_openmp(&c))
        return;
    CHECK(strcmp(c.out, "1\n1\n1\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "worldgen: --mesh openmp: not available here: cannot start 2 "
                        "threads, only 1: OMP_THREAD_LIMIT='1' allows no more; give "
                        "--threads 1"),
          "%s", c.err);
    wg_cli_free(&c);
}
