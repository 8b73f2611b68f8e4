/* test_build.c: the build follows its configuration (issue 10).
 *
 * In a copy of the source tree (in the runner's scratch folder), as on a
 * machine where 'make deps' has not yet installed Vulkan: 'make', then
 * 'make deps worldgen tests/run' in one invocation, in the same folder.
 * Stand-ins first in PATH play Debian (fake/): dpkg-query says libvulkan-dev
 * and glslc are missing until apt-get has "installed" them, and until then
 * pkg-config looks in a folder with every .pc file of this machine but
 * vulkan.pc.  The Makefile's own detection (build/config.mk) runs on the
 * real pkg-config and glslc.  The first ./worldgen must show vulkan's skip
 * line and refuse --mesh vulkan with the way to get it; after deps, the
 * same make must build with Vulkan: ./worldgen has the backend and tests/run
 * links (no object of the first configuration reused).  A third make must
 * find nothing to do.
 *
 * Two builds with -j2: 13 to 17 s on the 2-core CI machine.  Skipped
 * without glslc and libvulkan-dev (nothing to unhide), and under SAN=1 (it
 * checks the Makefile, which the plain suite already did).
 *
 * And the README's account of the build and the tree: CI starts with its
 * first commands, and its Layout names every source file. */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define BUILD_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUILD_TEST_SANITIZED 1
#endif
#endif

/* Run a shell command made from fmt in the scratch folder, with make's own
 * variables from the 'make test' that started the runner removed (its
 * command-line settings such as SAN=1, and a jobserver this process does
 * not hold). */
static wg_cli build_sh(const char *fmt, ...)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof cmd,
                     "unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    return wg_cli_sh(cmd);
}

/* The last 'keep' bytes of s, for a failure message. */
static const char *build_tail(const char *s, size_t keep)
{
    size_t len = strlen(s);
    return len > keep ? s + len - keep : s;
}

/* Shell: the source tree (its printf argument, wg_srcdir()) copied into
 * ./tree, without what a build made, for a make of its own there. */
#define BUILD_COPY_TREE                                                    \
    "tar -C '%s' --exclude=./.git --exclude=./build --exclude=./worldgen " \
    "    --exclude=./tests/run -cf - . | tar -C tree -xf -; "

WG_TEST(build_follows_its_configuration)
{
#ifdef BUILD_TEST_SANITIZED
    wg_skip("checks the Makefile, not the code: the plain suite runs it");
    return;
#endif
    wg_cli c = build_sh("command -v glslc && pkg-config --exists vulkan");
    int have = c.status == 0;
    wg_cli_free(&c);
    if (!have) {
        wg_skip("needs glslc and libvulkan-dev (make deps) to unhide");
        return;
    }

    /* The tree without what a build made, and the stand-ins. */
    c = build_sh(
        "set -e; mkdir tree pc fake; "
        BUILD_COPY_TREE
        "for d in $(pkg-config --variable pc_path pkg-config | tr : ' '); do "
        "  for f in \"$d\"/*.pc; do [ -e \"$f\" ] && ln -sf \"$f\" pc/; done; "
        "done; rm -f pc/vulkan.pc; "
        "printf '#!/bin/sh\\n[ -e %%s/installed ] || export PKG_CONFIG_LIBDIR=%%s/pc\\n"
        "exec %%s \"$@\"\\n' \"$PWD\" \"$PWD\" \"$(command -v pkg-config)\" > fake/pkg-config; "
        "printf '#!/bin/sh\\ncase \"$3\" in libvulkan-dev|glslc) [ -e %%s/installed ] || exit 1;; esac\\n"
        "echo install ok installed\\n' \"$PWD\" > fake/dpkg-query; "
        "printf '#!/bin/sh\\n[ \"$1\" = update ] || touch %%s/installed\\n' \"$PWD\" > fake/apt-get; "
        "chmod +x fake/*; export PATH=$PWD/fake:$PATH; "
        "pkg-config --exists libpng zlib; ! pkg-config --exists vulkan",
        wg_srcdir());
    int ready = c.status == 0;
    CHECK(ready, "could not copy the tree or make the stand-ins: %s", c.err);
    wg_cli_free(&c);
    if (!ready) /* never 'make deps' without the stand-ins */
        return;
#define BUILD_IN_TREE "cd tree && PATH=$PWD/../fake:$PATH "

    /* 1: before deps. */
    c = build_sh(BUILD_IN_TREE "make -j2 2>&1");
    CHECK(c.status == 0, "make without Vulkan failed: %s",
          build_tail(c.out, 3000));
    CHECK(strstr(c.out, "config: building without Vulkan") != NULL,
          "no 'without Vulkan' from the configuration: %s",
          build_tail(c.out, 3000));
    wg_cli_free(&c);
    c = build_sh("cd tree && ./worldgen --size 8 --mesh all --no-image 2>&1");
    CHECK(c.status == 0, "status %d: %s", c.status, c.out);
    CHECK(strstr(c.out, "skip    vulkan: this worldgen was built without "
                        "Vulkan") && strstr(c.out, "make deps"),
          "no skip line saying how to get vulkan: %s", c.out);
    wg_cli_free(&c);
    c = build_sh("cd tree && ./worldgen --size 8 --mesh vulkan -q --no-image");
    CHECK(c.status == 1 && strstr(c.err, "--mesh vulkan: not available here: "
                                         "this worldgen was built without Vulkan"),
          "--mesh vulkan: status %d: %s", c.status, c.err);
    wg_cli_free(&c);

    /* 2: deps and the build in one make, in the same build folder. */
    c = build_sh(BUILD_IN_TREE "make -j2 deps worldgen tests/run 2>&1");
    CHECK(c.status == 0, "make deps worldgen tests/run failed: %s",
          build_tail(c.out, 3000));
    CHECK(strstr(c.out, "deps: installing libvulkan-dev glslc") &&
          strstr(c.out, "config: building with Vulkan") &&
          strstr(c.out, "-DWG_HAVE_VULKAN") &&
          strstr(c.out, "backends/registry.c"),
          "the objects were not rebuilt with Vulkan after deps: %s",
          build_tail(c.out, 3000));
    wg_cli_free(&c);
    c = build_sh("cd tree && ./worldgen --size 8 --mesh all --no-image 2>&1");
    CHECK(c.status == 0 && !strstr(c.out, "built without Vulkan"),
          "status %d: %s", c.status, c.out);
    wg_cli_free(&c);
    /* The backend is in; whether it runs depends on a device, which is
     * test_vulkan.c's business. */
    c = build_sh("cd tree && ./worldgen --size 8 --mesh vulkan -q --no-image");
    CHECK(c.status == 0 || (c.status == 1 && !strstr(c.err, "built without")),
          "--mesh vulkan: status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    c = build_sh("cd tree && tests/run no-test-has-this-name");
    CHECK(c.status == 0 && strstr(c.out, "0 passed, 0 failed"),
          "tests/run: status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);

    /* 3: nothing changed, nothing to do. */
    c = build_sh(BUILD_IN_TREE "make -j2 worldgen tests/run 2>&1");
    CHECK(c.status == 0 && !strstr(c.out, " -c ") && !strstr(c.out, " -o ") &&
          !strstr(c.out, "config:"),
          "a make with nothing changed rebuilt: %s", build_tail(c.out, 3000));
    wg_cli_free(&c);
#undef BUILD_IN_TREE
}

/* 'make deps run' where an install fails (apt-get, then npm with the
 * packages in place) stops with that step's reason and the rule's name:
 * GNU make had gone on to say "No rule to make target 'deps-install'" (the
 * included build/config.mk, remade after deps-install, was optional), so a
 * new user behind an npm proxy saw a Makefile bug, not npm's refusal. */
WG_TEST(build_failed_deps_says_what_failed)
{
#ifdef BUILD_TEST_SANITIZED
    wg_skip("checks the Makefile, not the code: the plain suite runs it");
    return;
#endif
    wg_cli c = build_sh(
        "set -e; rm -rf deps; mkdir deps deps/fake; cd deps; "
        "mkdir tree; " BUILD_COPY_TREE
        "printf '#!/bin/sh\ncase \"$3\" in jq) [ -e %%s/apt-ok ] || exit 1;; esac\n"
        "echo install ok installed\n' \"$PWD\" > fake/dpkg-query; "
        "printf '#!/bin/sh\n[ -e %%s/apt-ok ] && exit 0\n"
        "echo \"E: Unable to locate package jq\" >&2; exit 100\n' \"$PWD\" > fake/apt-get; "
        "printf '#!/bin/sh\n[ \"$1\" = config ] && { echo https://registry.example/; exit 0; }\n"
        "echo \"npm error code SELF_SIGNED_CERT_IN_CHAIN\" >&2; exit 1\n' > fake/npm; "
        "chmod +x fake/*",
        wg_srcdir());
    int ready = c.status == 0;
    CHECK(ready, "could not copy the tree or make the stand-ins: %s", c.err);
    wg_cli_free(&c);
    if (!ready) /* never 'make deps' without the stand-ins */
        return;
#define BUILD_IN_TREE "cd deps/tree && PATH=$PWD/../fake:$PATH "
    c = build_sh(BUILD_IN_TREE "make deps run 2>&1");
    CHECK(c.status == 2 && strstr(c.out, "E: Unable to locate package jq") &&
              strstr(c.out, "deps: apt-get could not install jq") &&
              strstr(c.out, "deps-install] Error 1") &&
              !strstr(c.out, "No rule to make target"),
          "apt-get failing: status %d: %s", c.status, build_tail(c.out, 3000));
    CHECK(!strstr(c.out, "cc "), "it built after deps failed: %s",
          build_tail(c.out, 3000));
    wg_cli_free(&c);
    c = build_sh("touch deps/apt-ok; " BUILD_IN_TREE "make deps run 2>&1");
    CHECK(c.status == 2 && strstr(c.out, "SELF_SIGNED_CERT_IN_CHAIN") &&
              strstr(c.out, "deps: npm could not install gltf-validator") &&
              strstr(c.out, "https://registry.example/") &&
              strstr(c.out, "cafile") &&
              strstr(c.out, "deps-install] Error 1") &&
              !strstr(c.out, "No rule to make target"),
          "npm failing: status %d: %s", c.status, build_tail(c.out, 3000));
    wg_cli_free(&c);
#undef BUILD_IN_TREE
}

/* The next command of a script or a ```sh block from *p on, without its
 * comment and trailing blanks, into out[len]: skips blank and comment
 * lines, and the shell's own set-up (set, cd, export).  0 at the end (or
 * at a closing ```). */
static int build_next_command(const char **p, char *out, size_t len)
{
    while (**p) {
        const char *line = *p, *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        *p = *end ? end + 1 : end;
        while (line < end && (*line == ' ' || *line == '\t'))
            line++;
        if (strncmp(line, "```", 3) == 0)
            return 0;
        const char *hash = memchr(line, '#', (size_t)(end - line));
        if (hash)
            end = hash;
        while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        size_t n = (size_t)(end - line);
        if (n == 0 || strncmp(line, "set ", 4) == 0 ||
            strncmp(line, "cd ", 3) == 0 || strncmp(line, "export ", 7) == 0)
            continue;
        snprintf(out, len, "%.*s", (int)n, line);
        return 1;
    }
    return 0;
}

/* CI runs what the README tells a new user to, first and as written: the
 * commands of README.md's first sh block begin .ci/run. */
WG_TEST(build_ci_starts_with_the_readme_commands)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/README.md", wg_srcdir());
    char *readme = wg_read_file(path, NULL);
    snprintf(path, sizeof path, "%s/.ci/run", wg_srcdir());
    char *ci = wg_read_file(path, NULL);
    CHECK(readme && ci, "cannot read README.md or .ci/run");
    const char *block = readme ? strstr(readme, "```sh\n") : NULL;
    CHECK(block != NULL, "README.md has no sh block");
    if (!block || !ci) {
        free(readme);
        free(ci);
        return;
    }
    const char *r = block + 6, *c = ci;
    char want[256], got[256];
    int n = 0;
    while (build_next_command(&r, want, sizeof want)) {
        n++;
        int have = build_next_command(&c, got, sizeof got);
        CHECK(have && strcmp(got, want) == 0,
              "README command %d is '%s', .ci/run has '%s'", n, want,
              have ? got : "(nothing)");
    }
    CHECK(n >= 2, "README's first sh block has %d commands", n);
    free(readme);
    free(ci);
}

/* Whether the word name stands in text: not inside a longer name. */
static int build_names(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; (p = strstr(p, name)) != NULL; p++) {
        int before = p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
        int after = isalnum((unsigned char)p[n]) || p[n] == '_';
        if (!before && !after)
            return 1;
    }
    return 0;
}

/* README.md's Layout names every file of the source folders (a header is
 * named with its .c), so a reader finds each file's purpose there: it had
 * left out agree.c, cache.h, material.c, the scripts' shared headers and
 * resolution.c, the tests' helpers, fuzz target and suppressions, the
 * Makefile and .ci/run.  The tests' test_*.c are "one file per unit";
 * files without an extension in the top folder and tests/ are the build's
 * (./worldgen, tests/run). */
WG_TEST(build_readme_layout_names_every_file)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/README.md", wg_srcdir());
    char *readme = wg_read_file(path, NULL);
    char *layout = readme ? strstr(readme, "\n## Layout\n") : NULL;
    CHECK(layout != NULL, "README.md has no Layout section");
    if (!layout) {
        free(readme);
        return;
    }
    char *end = strstr(layout + 1, "\n## ");
    if (end)
        *end = '\0';
    static const char *const dirs[] = {"", "backends", "render", "scripts",
                                       "tests"};
    int seen = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", wg_srcdir(), dirs[i]);
        DIR *d = opendir(path);
        CHECK(d != NULL, "cannot list %s", path);
        for (struct dirent *e; d && (e = readdir(d));) {
            const char *name = e->d_name, *dot = strrchr(name, '.');
            char file[4600];
            snprintf(file, sizeof file, "%s/%s", path, name);
            struct stat st;
            if (name[0] == '.' || stat(file, &st) != 0 || !S_ISREG(st.st_mode) ||
                name[strlen(name) - 1] == '~')
                continue;
            int top = dirs[i][0] == '\0';
            if ((top || strcmp(dirs[i], "tests") == 0) && !dot &&
                strcmp(name, "Makefile") != 0)
                continue;
            if (top && strcmp(dot ? dot : "", ".c") != 0 &&
                strcmp(name, "Makefile") != 0)
                continue;
            if (strncmp(name, "test_", 5) == 0 && strcmp(dot, ".c") == 0)
                continue;
            char c_file[256] = "";
            if (dot && strcmp(dot, ".h") == 0)
                snprintf(c_file, sizeof c_file, "%.*s.c", (int)(dot - name), name);
            seen++;
            CHECK(build_names(layout, name) ||
                      (c_file[0] && build_names(layout, c_file)),
                  "README's Layout does not name %s%s%s", dirs[i],
                  top ? "" : "/", name);
        }
        if (d)
            closedir(d);
    }
    CHECK(build_names(layout, ".ci/run"), "README's Layout does not name .ci/run");
    static const char *const sub[] = {"vectors/", "slurm/", "fuzz/", "san/"};
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++)
        CHECK(strstr(layout, sub[i]) != NULL,
              "README's Layout does not name tests/%s", sub[i]);
    CHECK(seen >= 40, "only %d files found in the source folders", seen);
    free(readme);
}

/* scripts/fresh-check, which needs root, debootstrap and about five minutes, is
 * run by hand; here, only that it refuses what it cannot take before it
 * makes or mounts anything, and that --help is its header. */
WG_TEST(build_fresh_check_refuses_bad_arguments)
{
    static const char *const bad[] = {"x", "--keep", "--keep a b", "-k d"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wg_cli c = build_sh("'%s/scripts/fresh-check' %s; echo status $?",
                            wg_srcdir(), bad[i]);
        CHECK(strstr(c.out, "status 2") && strstr(c.err, "usage: "
                                                   "scripts/fresh-check"),
              "'%s': %s %s", bad[i], c.out, c.err);
        wg_cli_free(&c);
    }
    wg_cli c = build_sh("'%s/scripts/fresh-check' --help", wg_srcdir());
    CHECK(c.status == 0 && strstr(c.out, "make deps run") &&
              strstr(c.out, "--keep DIR"),
          "--help: %d %s", c.status, c.out);
    wg_cli_free(&c);
}

/* 'make AVX512=0' builds the OpenMP kernels without their AVX-512 clones
 * (openmp_stage.h's OPENMP_CLONES), so that a CPU with AVX-512 runs the
 * AVX2 ones, which a CPU without it runs: one kernel file compiled as the
 * Makefile compiles it with and without the setting, and the Makefile's
 * setting itself. */
WG_TEST(build_avx512_0_leaves_out_the_avx512_kernels)
{
    static const char *const how[2] = {"", "-DWG_NO_AVX512"};
    int clones[2][2];
    for (int k = 0; k < 2; k++) {
        wg_cli c = build_sh(
            "${CC:-cc} -O3 -fopenmp-simd -fno-tree-pre -ffp-contract=off "
            "-fopenmp -std=c11 -D_XOPEN_SOURCE=700 -I'%s' -I'%s/build' %s "
            "-c '%s/backends/openmp_erosion.c' -o erosion.o && "
            "echo $(nm erosion.o | grep -c '\\.avx512f$') "
            "$(nm erosion.o | grep -c '\\.avx2$')",
            wg_srcdir(), wg_srcdir(), how[k], wg_srcdir());
        CHECK(c.status == 0 && sscanf(c.out, "%d %d", &clones[k][0], &clones[k][1]) == 2,
              "%s: %d %s %s", how[k], c.status, c.out, c.err);
        wg_cli_free(&c);
    }
    CHECK(clones[0][0] > 0 && clones[0][1] > 0, "default: %d AVX-512, %d AVX2 clones",
          clones[0][0], clones[0][1]);
    CHECK(clones[1][0] == 0 && clones[1][1] > 0, "WG_NO_AVX512: %d AVX-512, %d AVX2 clones",
          clones[1][0], clones[1][1]);
    char path[4300];
    snprintf(path, sizeof path, "%s/Makefile", wg_srcdir());
    char *mk = wg_read_file(path, NULL);
    CHECK(mk && strstr(mk, "ifeq ($(AVX512),0)\nFIELD_CFLAGS += -DWG_NO_AVX512\n"),
          "the Makefile does not pass WG_NO_AVX512 for AVX512=0");
    free(mk);
}

/* render/outfile.c builds with C library headers that do not know statx's
 * STATX_ATTR_MOUNT_ROOT (glibc before 2.33 with Linux headers before
 * 5.8: Debian 11 and Ubuntu 20.04's, RHEL 8's): the mount-point refusal
 * is then left out, as O_TMPFILE is where the headers lack it, and a
 * rename over a mount point fails at the end as before.  Here, a
 * <sys/stat.h> that hides it stands in for those headers; the file had
 * not compiled ('STATX_ATTR_MOUNT_ROOT' undeclared). */
WG_TEST(build_outfile_without_statx_mount_root)
{
    wg_cli c = build_sh("mkdir -p old/sys && printf '#include_next <sys/stat.h>\\n"
                        "#undef STATX_ATTR_MOUNT_ROOT\\n' > old/sys/stat.h && "
                        "${CC:-cc} -std=c11 -D_XOPEN_SOURCE=700 -Wall -Wextra -Werror "
                        "-I'%s' -I'%s/build' -Iold -c '%s/render/outfile.c' -o outfile.o",
                        wg_srcdir(), wg_srcdir(), wg_srcdir());
    CHECK(c.status == 0, "%d %s", c.status, build_tail(c.err, 600));
    wg_cli_free(&c);
}

/* The OpenMP files build off x86 (aarch64: a Raspberry Pi, a Graviton or
 * an Apple machine's Linux), where OPENMP_X86 is not defined: their
 * kernels' x86 clones (openmp_stage.h's OPENMP_CLONES) had failed every
 * such build ("function multiversioning is not supported").  Checked
 * with clang's aarch64 target, -fsyntax-only, on this machine's headers
 * (x86-64's, whose 32-bit half is stood in for and whose own complaints
 * are not the files'); skipped where clang cannot. */
WG_TEST(build_openmp_files_build_off_x86)
{
    static const char *const target =
        "clang --target=aarch64-linux-gnu -fsyntax-only -fopenmp -std=c11 "
        "-D_XOPEN_SOURCE=700 -isystem /usr/include/$(${CC:-cc} -print-multiarch)";
    wg_cli c = build_sh("command -v clang >/dev/null && mkdir -p stub/gnu && "
                        ": > stub/gnu/stubs-32.h && printf '#include <stdint.h>\\n"
                        "#include <math.h>\\nint x;\\n' > t.c && %s -isystem stub t.c",
                        target);
    int can = c.status == 0;
    wg_cli_free(&c);
    if (!can) {
        wg_skip("clang cannot check a file for aarch64 here");
        return;
    }
    c = build_sh("cd '%s' && for f in backends/openmp*.c; do %s -isystem \"$OLDPWD/stub\" "
                 "-I. -Ibuild \"$f\" 2>&1 | grep ': error: ' | grep -v '^/usr/'; done; true",
                 wg_srcdir(), target);
    CHECK(c.status == 0 && c.out[0] == '\0', "%d %s %s", c.status, build_tail(c.out, 600),
          c.err);
    wg_cli_free(&c);
}
