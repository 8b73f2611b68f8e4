/* test_gpu_check.c: scripts/gpu-check's plumbing, in a tree of its own
 * (a copy of the script, a Makefile that makes stand-ins, a bundle whose
 * programs exit 0 at once): 'run' writes the source tree's ./worldgen and
 * tests/run, so it never runs in the tree under test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

/* A fresh tree 'name' under the runner's folder (its path in buf[512]):
 * scripts/gpu-check, a Makefile whose worldgen and tests/run are stand-ins
 * made only where missing, and a bundle in .gpu whose exec exits 0. */
static const char *gc_tree(char *buf, const char *name)
{
    snprintf(buf, 512, "%s/%s", wg_tmpdir(), name);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && mkdir -p '%s/scripts' '%s/tests' '%s/.gpu/bin' && cd '%s' && "
             "cp '%s/scripts/gpu-check' scripts/ && "
             "printf 'worldgen tests/run:\\n\\tcp /bin/true $@\\n' > Makefile && "
             "printf '#!/bin/sh\\nexit 0\\n' > .gpu/exec && cp .gpu/exec .gpu/bin/worldgen && "
             "chmod +x .gpu/exec .gpu/bin/worldgen",
             buf, buf, buf, buf, buf, wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "%s: %s", cmd, c.err);
    wg_cli_free(&c);
    return buf;
}

/* run OUT: OUT is where the script was started, not the tree (which the
 * script enters); an OUT whose gpu-check.txt cannot be written fails at
 * once (exit 1), not after every part, with 'every part passed' and no
 * log; --help works from anywhere. */
WG_TEST(gpu_check_run_out)
{
    char tree[512], cmd[4096];
    gc_tree(tree, "gc-out");
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/elsewhere' && cd '%s/elsewhere' && "
             "GPU_CHECK_QUICK=1 timeout 60 ../scripts/gpu-check run rel >/dev/null 2>&1; "
             "echo \"status $?\"; ls rel ../rel 2>&1 | sed 's/:.*//'",
             tree, tree);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "gpu-check.txt\n") && !strstr(c.out, "../rel"),
          "OUT not where it was started: %s", c.out);
    wg_cli_free(&c);

    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/o/gpu-check.txt' && cd '%s' && GPU_CHECK_QUICK=1 timeout 60 "
             "scripts/gpu-check run o", tree, tree);
    c = wg_cli_sh(cmd);
    CHECK(c.status == 1 && strstr(c.err, "cannot write ") &&
              strstr(c.err, "o/gpu-check.txt: Is a directory") &&
              !strstr(c.out, "== machine"),
          "status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);

    snprintf(cmd, sizeof cmd, "cd '%s/elsewhere' && ../scripts/gpu-check --help", tree);
    c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && strstr(c.out, "gpu-check: the Vulkan backend") && !c.err[0],
          "--help: status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* bundle after a run here: run leaves wrappers of the bundle as ./worldgen
 * and tests/run, which make finds up to date; bundled, the wrapper had
 * exec'd itself for ever.  The build's own programs are bundled. */
WG_TEST(gpu_check_bundle_after_run)
{
    if (!wg_have_command("jq")) {
        wg_skip("no jq: gpu-check bundle needs it (make deps installs it)");
        return;
    }
    char tree[512], cmd[4096];
    gc_tree(tree, "gc-bundle");
    snprintf(cmd, sizeof cmd,
             "cd '%s' && GPU_CHECK_QUICK=1 timeout 60 scripts/gpu-check run o >/dev/null 2>&1; "
             "head -n 2 worldgen | tail -n 1; timeout 60 scripts/gpu-check bundle >/dev/null && "
             "cmp .gpu/bin/worldgen /bin/true && cmp .gpu/bin/run /bin/true && echo bundled",
             tree);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "/.gpu/exec' worldgen") && strstr(c.out, "\nbundled\n"),
          "status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* run's wrappers hold the tree's path as it is, whatever it holds: in
 * double quotes, a tree under a name with $(...) had run the command at
 * each wrapper's start, and exec'd a path without it (not found). */
WG_TEST(gpu_check_wrappers_quote_the_tree)
{
    char tree[512], cmd[4096];
    gc_tree(tree, "gc-q $(touch pwned)`touch pwned2`\"x\\y %s");
    snprintf(cmd, sizeof cmd,
             "cd '%s' && GPU_CHECK_QUICK=1 timeout 60 scripts/gpu-check run o >/dev/null 2>&1; "
             "./worldgen && tests/run && .gpu/path/jq && echo ran; ls pwned pwned2 2>/dev/null",
             tree);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "ran\n") == 0, "status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* A signal to the script stops the part it is running: timeout makes a
 * process group of its own, and the part's worldgen had run on, orphaned,
 * after the script was killed.  Here the part is tests/run, made a sleep
 * with a token no other process has (anchored, so that the pattern does
 * not find the shell that runs this). */
WG_TEST(gpu_check_stopped_stops_its_part)
{
    char tree[512], cmd[4096];
    gc_tree(tree, "gc-stop");
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '#!/bin/sh\\n[ \"$1\" = run ] && exec sleep 31.%d\\nexit 0\\n' "
             "> .gpu/exec && { GPU_CHECK_QUICK=1 scripts/gpu-check run o >/dev/null 2>&1 & "
             "pid=$!; }; n=0; until pgrep -f '^sleep 31[.]%d$' >/dev/null; do sleep 0.01; "
             "n=$((n+1)); [ $n -gt 3000 ] && { echo never; break; }; done; "
             "kill -TERM $pid; wait $pid; echo \"status $?\"; sleep 0.2; "
             "pgrep -f '^sleep 31[.]%d$' >/dev/null && { echo orphan; pkill -f '^sleep 31[.]%d$'; }; "
             "exit 0",
             tree, (int)getpid(), (int)getpid(), (int)getpid(), (int)getpid());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "status 143\n") == 0, "%s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* Arguments it does not take are a usage error (exit 2), not ignored. */
WG_TEST(gpu_check_refuses_bad_arguments)
{
    char tree[512], cmd[4096];
    gc_tree(tree, "gc-args");
    static const char *const bad[][2] = {
        {"", "no command"},
        {"bundle x", "bundle takes no arguments: x"},
        {"run", "run takes one argument, OUT (given 0)"},
        {"run o extra", "run takes one argument, OUT (given 2)"},
        {"frob", "unknown command 'frob'"},
        /* (( )) had evaluated the value: PWD[$(touch pwned)] ran touch. */
        {"run o GPU_CHECK_QUICK='PWD[$(touch pwned)]'",
         "GPU_CHECK_QUICK 'PWD[$(touch pwned)]': 1 (every part small) or 0"},
        {"run o GPU_CHECK_QUICK=yes", "GPU_CHECK_QUICK 'yes': 1 (every part small) or 0"},
        {"run o WG_GPU_LIBC=mine", "WG_GPU_LIBC 'mine': system or bundled"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* "run o NAME=VALUE": the setting in the environment. */
        const char *env = strncmp(bad[i][0], "run o ", 6) == 0 && strchr(bad[i][0], '=')
                              ? bad[i][0] + 6
                              : "";
        snprintf(cmd, sizeof cmd, "cd '%s' && %s scripts/gpu-check %.*s; st=$?; "
                 "test -e pwned && echo pwned; exit $st", tree, env,
                 env[0] ? 5 : (int)strlen(bad[i][0]), bad[i][0]);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 2 && strstr(c.err, bad[i][1]) && strstr(c.err, "usage: ") &&
                  !c.out[0],
              "'%s': status %d: %s%s", bad[i][0], c.status, c.out, c.err);
        wg_cli_free(&c);
    }
}
