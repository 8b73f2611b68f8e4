/* test_pipeline.c: worldgen in shell pipelines and CI jobs: backend lists
 * and --require, what --mesh auto picks, no stray picture beside data
 * outputs, the render block only with a picture or a file, binary output kept off terminals, the progress line only on a
 * terminal, warnings and suggestions for options, the JSON carrying the
 * whole run, and the memory check honouring control groups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

/* Run a shell script in the test's folder and return its result. */
static wg_cli pipe_sh(const char *fmt, const char *arg)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, arg);
    return wg_cli_sh(cmd);
}

/* The backends' names in --json's order, as "a,b,c". */
static void pipe_backends(const char *args, char *names, size_t len)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "./worldgen %s -q --json - | python3 -c 'import json,sys; "
             "print(\",\".join(b[\"name\"] for b in json.load(sys.stdin)"
             "[\"backends\"]))'", args);
    wg_cli c = wg_cli_sh(cmd);
    snprintf(names, len, "%.*s", (int)strcspn(c.out, "\n"), c.out);
    CHECK(c.status == 0, "%s: %d %s", args, c.status, c.err);
    wg_cli_free(&c);
}

WG_TEST(pipeline_mesh_takes_a_list_in_registry_order)
{
    char names[128];
    pipe_backends("--size 24 --mesh scalar,openmp", names, sizeof names);
    CHECK(strcmp(names, "scalar,openmp") == 0, "%s", names);
    pipe_backends("--size 24 --mesh openmp,scalar,openmp", names, sizeof names);
    CHECK(strcmp(names, "scalar,openmp") == 0, "%s", names);
    pipe_backends("--size 24 --mesh openmp --check", names, sizeof names);
    CHECK(strcmp(names, "scalar,openmp") == 0, "%s", names);
    static const char *const bad[] = {"scalar,", ",scalar", "scalar,,openmp",
                                      "scalar,gpu", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *argv[] = {"--size", "16", "--mesh", bad[i], NULL};
        wg_cli c = wg_cli_run(argv);
        /* A list's bad name with the list: "'' (an empty name)" alone had
         * named no value given. */
        char in[64] = "";
        if (strchr(bad[i], ','))
            snprintf(in, sizeof in, " in '%s' is", bad[i]);
        CHECK(c.status == 2 && strstr(c.err, "--mesh: '") &&
                  strstr(c.err, in) &&
                  strstr(c.err, "is not a backend (valid: scalar"),
              "--mesh '%s': %d %s", bad[i], c.status, c.err);
        wg_cli_free(&c);
    }
}

WG_TEST(pipeline_require_fails_when_a_backend_is_skipped)
{
    /* Without a Vulkan driver, --mesh all skips vulkan and passes; with
     * --require vulkan it must fail before computing anything. */
    wg_cli c = wg_cli_sh("VK_ICD_FILENAMES=/nonexistent.json ./worldgen "
                         "--size 24 --mesh all --check --no-image");
    CHECK(c.status == 0 && strstr(c.out, "skip    vulkan"), "%d %s %s",
          c.status, c.out, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("VK_ICD_FILENAMES=/nonexistent.json ./worldgen --size 24 "
                  "--mesh all --check --require vulkan --no-image");
    CHECK(c.status == 1 && strstr(c.err, "--require vulkan: vulkan does not "
                                        "run: ") &&
              !strstr(c.out, "backend"),
          "%d %s %s", c.status, c.out, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("VK_ICD_FILENAMES=/nonexistent.json ./worldgen --size 24 "
                  "--mesh all --require all --no-image");
    CHECK(c.status == 1 && strstr(c.err, "--require all: vulkan does not run"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    /* A backend --mesh does not choose is a usage error. */
    const char *argv[] = {"--size", "16", "--mesh", "scalar", "--require",
                          "openmp", NULL};
    c = wg_cli_run(argv);
    CHECK(c.status == 2 && strstr(c.err, "--require openmp: --mesh scalar"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    /* So is any with --mesh auto, which runs the fastest here: at 16,
     * scalar, at 512 openmp; the same command had failed (exit 1) or not
     * by the size and the machine.  --check's scalar may be required. */
    const char *size[] = {"16", "512"};
    for (int i = 0; i < 2; i++) {
        const char *autos[] = {"--size", size[i], "--require", "openmp", "-q",
                               "--no-image", NULL};
        c = wg_cli_run(autos);
        CHECK(c.status == 2 && strstr(c.err, "--require openmp: --mesh auto runs "
                                             "whichever backend is fastest here"),
              "%d %s", c.status, c.err);
        wg_cli_free(&c);
    }
    const char *checked[] = {"--size", "16", "--check", "--require", "scalar",
                             "-q", "--no-image", NULL};
    c = wg_cli_run(checked);
    CHECK(c.status == 0, "%d %s", c.status, c.err);
    wg_cli_free(&c);
    /* What is required and runs passes. */
    const char *ok[] = {"--size", "16", "--mesh", "scalar,openmp", "--require",
                        "scalar,openmp", "--no-image", "-q", NULL};
    c = wg_cli_run(ok);
    CHECK(c.status == 0, "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

WG_TEST(pipeline_auto_runs_scalar_where_threads_cost_more)
{
    char names[128];
    pipe_backends("--size 16", names, sizeof names);
    CHECK(strcmp(names, "scalar") == 0, "16: %s", names);
    pipe_backends("--size 33 --hydraulic 0 --erosion 0", names, sizeof names);
    CHECK(strcmp(names, "scalar") == 0, "33 without erosion: %s", names);
    if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
        pipe_backends("--size 128", names, sizeof names);
        CHECK(strcmp(names, "openmp") == 0, "128: %s", names);
    }
    /* lavapipe is slower than scalar: never chosen. */
    pipe_backends("--size 128 --threads 1", names, sizeof names);
    CHECK(strcmp(names, "scalar") == 0, "128 on one thread: %s", names);
}

WG_TEST(pipeline_openmp_waits_passively_unless_told)
{
    /* libgomp prints its settings with OMP_DISPLAY_ENV: a spin count of 0
     * is passive waiting. */
    wg_cli c = wg_cli_sh("OMP_DISPLAY_ENV=verbose ./worldgen --size 2 --mesh "
                         "openmp -q --no-image 2>&1 | grep GOMP_SPINCOUNT");
    CHECK(strstr(c.out, "'0'"), "%s", c.out);
    wg_cli_free(&c);
    c = wg_cli_sh("OMP_WAIT_POLICY=active OMP_DISPLAY_ENV=verbose ./worldgen "
                  "--size 2 --mesh openmp -q --no-image 2>&1 | grep "
                  "GOMP_SPINCOUNT");
    CHECK(c.out_len && !strstr(c.out, "'0'"), "%s", c.out);
    wg_cli_free(&c);
}

WG_TEST(pipeline_data_outputs_make_no_stray_picture)
{
    static const struct {
        const char *args, *files;
    } cases[] = {
        {"--heightmap h.png", "h.png"},
        {"--heightmap - --heightmap-format r16 > h.r16", "h.r16"},
        {"--json - > j.json", "j.json"},
        {"--json j.json --watermap w.pfm", "j.json w.pfm w.pfm.hdr"},
        {"--obj m.obj", "m.mtl m.obj m_albedo.png"},
        {"--gltf m.glb", "m.glb"},
        {"--heightmap h.png --out p.png", "h.png p.png"},
        {"", "world.png"},
        {"--histogram > /dev/null", "world.png"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf d && mkdir d && cd d && "
                 "../worldgen --size 24 -q %s && ls | tr '\\n' ' '",
                 cases[i].args);
        wg_cli c = wg_cli_sh(cmd);
        char want[128];
        snprintf(want, sizeof want, "%s ", cases[i].files);
        CHECK(c.status == 0 && strcmp(c.out, want) == 0,
              "'%s': %d left '%s', want '%s' %s", cases[i].args, c.status,
              c.out, want, c.err);
        wg_cli_free(&c);
    }
}

/* The table has a render block when the run draws a picture or writes a
 * map or a mesh, as the manual and the README say ("no picture" when it
 * draws none), and none for a run that writes only --json or nothing:
 * they had said every run has one. */
WG_TEST(pipeline_render_block_only_with_a_picture_or_a_file)
{
    static const struct {
        const char *args, *render;
    } cases[] = {
        {"", "render  160x120 pixels"},
        {"--heightmap h.pfm", "render  no picture\n"},
        {"--obj m.obj --no-image", "render  no picture\n"},
        {"--json j.json", NULL},
        {"--no-image", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "rm -rf d && mkdir d && cd d && ../worldgen "
                 "--size 24 --width 160 --height 120 %s", cases[i].args);
        wg_cli c = wg_cli_sh(cmd);
        const char *r = strstr(c.out, "\nrender ");
        CHECK(c.status == 0 && (cases[i].render
                                    ? r && strncmp(r + 1, cases[i].render,
                                                   strlen(cases[i].render)) == 0
                                    : r == NULL) &&
                  strstr(c.out, "\nwall "),
              "'%s': %d %s %s", cases[i].args, c.status, c.out, c.err);
        wg_cli_free(&c);
    }
}

WG_TEST(pipeline_binary_output_to_a_terminal_is_refused)
{
    /* script(1) gives worldgen a terminal for standard output, and
     * standard error: refused by any name, standard error's (/dev/stderr,
     * which only standard output's check had let through) or /dev/tty,
     * and nothing of the file written (a PNG's, a PFM's or a GLB's
     * first bytes). */
    static const struct { const char *args, *says; } cases[] = {
        {"--out -", "standard output is a terminal"},
        {"--heightmap - --heightmap-format png", "standard output is a terminal"},
        {"--watermap /dev/stdout --heightmap-format r16 --no-image",
         "standard output is a terminal"},
        {"--gltf -", "standard output is a terminal"},
        {"--no-image --heightmap /dev/stderr --heightmap-format pfm",
         "that is a terminal; worldgen does not write"},
        {"--gltf /dev/tty", "that is a terminal; worldgen does not write"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "script -qec './worldgen --size 16 %s' "
                 "/dev/null", cases[i].args);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 2 && strstr(c.out, cases[i].says) &&
                  !strstr(c.out, "PNG\r\n") && !strstr(c.out, "Pf\r\n") &&
                  !strstr(c.out, "JSON{"),
              "%s: %d %s", cases[i].args, c.status, c.out);
        wg_cli_free(&c);
    }
    /* JSON is text: fine on a terminal. */
    wg_cli c = wg_cli_sh("script -qec './worldgen --size 16 --json - -q' "
                         "/dev/null");
    CHECK(c.status == 0 && strstr(c.out, "\"backends\""), "%d %s", c.status,
          c.out);
    wg_cli_free(&c);
}

WG_TEST(pipeline_progress_only_on_a_terminal)
{
    /* Three runs at once, long enough to pass the progress line's first
     * second: on a terminal (34 columns wide), with stderr not a terminal,
     * and with -q on a terminal.  At once, so that the sanitized suite (ten times slower)
     * waits for one run's time and a half, not three; three processes on
     * two cores also keep each run the longer.  500 steps take 1.5 s
     * alone here (300 had become 0.9 s, under the line's first second). */
    const char *run = "./worldgen --size 300 --hydraulic 500 --mesh scalar "
                      "--no-image";
    char script[2048];
    snprintf(script, sizeof script,
             "d=$(mktemp -d) || exit 9; "
             "script -qec 'stty cols 34; %s > /dev/null' /dev/null > $d/1 & p1=$!; "
             "%s > /dev/null 2> $d/2 & p2=$!; "
             "script -qec '%s -q' /dev/null > $d/3 & p3=$!; "
             "wait $p1; r1=$?; wait $p2; r2=$?; wait $p3; r3=$?; "
             "echo \"status $r1 $r2 $r3\"; cat $d/1; echo @@2; cat $d/2; "
             "echo @@3; cat $d/3; rm -r $d",
             run, run, run);
    wg_cli c = wg_cli_sh(script);
    const char *two = strstr(c.out, "@@2\n");
    const char *three = two ? strstr(two, "@@3\n") : NULL;
    CHECK(c.status == 0 && strncmp(c.out, "status 0 0 0\n", 13) == 0 &&
              two && three, "%d %s", c.status, c.out);
    if (two && three) {
        const char *term = strstr(c.out, "scalar: hydraulic");
        CHECK(term && term < two && strstr(c.out, "%") < two &&
                  strstr(c.out, "\033[K") < two,
              "no progress on a terminal: %.*s", (int)(two - c.out), c.out);
        /* Cut to the terminal's 34 columns less one: a line that
         * wrapped left a row behind each time it was rewritten. */
        size_t longest = 0;
        for (const char *p = strstr(c.out, "\r\033[K"); p && p < two;) {
            const char *q = p + 4, *e = q + strcspn(q, "\r\n");
            longest = (size_t)(e - q) > longest ? (size_t)(e - q) : longest;
            p = strstr(e, "\r\033[K");
        }
        CHECK(longest > 20 && longest <= 33, "a progress line of %zu columns on a "
              "terminal of 34: %.*s", longest, (int)(two - c.out), c.out);
        CHECK(three == two + 4, "stderr not a terminal: %.*s",
              (int)(three - two - 4), two + 4);
        CHECK(three[4] == '\0', "-q on a terminal: %s", three + 4);
    }
    wg_cli_free(&c);
}

WG_TEST(pipeline_options_that_do_nothing_warn)
{
    static const struct {
        const char *args, *warning;
    } cases[] = {
        {"--mesh scalar --gpu 0", "--gpu does nothing: --mesh scalar"},
        {"--mesh scalar,openmp --power low-power", "--power does nothing"},
        /* auto at 16 chooses a CPU backend. */
        {"--gpu 0", "--gpu does nothing: --mesh auto chose "},
        {"--power high-performance", "--power does nothing: --mesh auto chose "},
        {"--heightmap h.png --azimuth 10", "--azimuth does nothing: this run "
                                           "makes no picture"},
        {"--no-image --aa 3", "--aa does nothing"},
        {"--mesh scalar --check", "--check does nothing with --mesh scalar"},
        {"--check --no-image", "--check compares nothing: only scalar runs "
                               "(--mesh auto chose it"},
        {"--distance 0.1 --out p.png", "the camera is inside the ground (at "
                                       "height 0.242, under the surface"},
        {"--sea-level 0.9 --look 0.6 --distance 0.1 --out p.png",
         "the camera is under the water (at height 0.642, under its surface "
         "at 0.9)"},
        {"--sea-level 0.9 --look 0.9 --elevation 0.3 --distance 0.1 "
         "--out p.png", "the camera is 0.00052 over the surface (at height "
                        "0.900524, the surface at 0.9), nearer than the "
                        "0.001 the picture is cut at"},
        {"--heightmap-format r16", "--heightmap-format does nothing"},
        {"--gltf-error 0.01", "--gltf-error does nothing without --gltf"},
        {"--out p.jpg", "--out 'p.jpg': the picture is a PNG"},
        {"--mesh scalar --no-image --threads 2", "--threads does nothing"},
        {"--view map --azimuth 10 --out p.png", "--azimuth does nothing with "
                                                "--view map"},
        {"--json j.json --view map", "--view does nothing: this run makes no "
                                     "picture"},
        {"--hydraulic 0 --sedimentmap s.pfm", "--sedimentmap 's.pfm' is all "
                                              "zeros: --hydraulic 0 moves no "
                                              "sediment"},
        {"--sedimentmap - --heightmap-format r16 --hydraulic 0 > /dev/null",
         "--sedimentmap '-' is all zeros"},
        /* The camera as far as it may be, and the block still cut. */
        {"--width 16 --height 4096 --aa 1 --out p.png",
         "the whole block would fit a 16x4096 picture at --distance 2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_cli c = pipe_sh("./worldgen --size 16 -q %s", cases[i].args);
        CHECK(c.status == 0 && strstr(c.err, "worldgen: warning: ") &&
                  strstr(c.err, cases[i].warning),
              "%s: %d %s", cases[i].args, c.status, c.err);
        wg_cli_free(&c);
    }
    /* --check where the other backend named is not available. */
    wg_cli v = pipe_sh("VK_ICD_FILENAMES=/nonexistent %s",
                       "./worldgen --size 16 -q --no-image --mesh "
                       "scalar,vulkan --check");
    CHECK(v.status == 0 && strstr(v.err, "--check compares nothing: only "
                                         "scalar runs (the other backends"),
          "%d %s", v.status, v.err);
    wg_cli_free(&v);
    /* --list-devices makes no world: the rest is said to do nothing,
     * whether or not there is a device to list. */
    v = pipe_sh("%s", "./worldgen --list-devices --json l.json --out l.png --size 16");
    CHECK(strstr(v.err, "worldgen: warning: --size, --json, --out do nothing with "
                        "--list-devices") && access("l.json", F_OK) != 0,
          "%d %s", v.status, v.err);
    wg_cli_free(&v);
    /* And none where every option counts. */
    wg_cli c = pipe_sh("%s", "./worldgen --size 16 -q --mesh all --gpu 0 "
                             "--azimuth 10 --out p.png --threads 2 "
                             "--sedimentmap s.pfm");
    CHECK(c.status == 0 && c.err[0] == '\0', "%s", c.err);
    wg_cli_free(&c);
}

WG_TEST(pipeline_mistyped_options_get_suggestions)
{
    static const struct {
        const char *arg, *err_has;
    } cases[] = {
        {"--sized", "unknown option '--sized'; did you mean '--size'?"},
        {"--heigthmap", "did you mean '--heightmap'?"},
        {"--chek", "did you mean '--check'?"},
        {"--s", "option '--s' is ambiguous: it could be --size, --seed"},
        {"--sun=5", "option '--sun' is ambiguous: it could be --sun-azimuth, "
                    "--sun-elevation"},
        {"--check=yes", "option '--check' takes no value"},
        {"--xyzzy-plugh", "unknown option '--xyzzy-plugh'"},
        {"-z", "unknown option '-z'"},
        {"--view=top", "--view: 'top' is not a view (valid: orbit, map)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[] = {cases[i].arg, NULL};
        wg_cli c = wg_cli_run(argv);
        CHECK(c.status == 2 && strstr(c.err, cases[i].err_has) &&
                  c.out_len == 0,
              "%s: %d %s", cases[i].arg, c.status, c.err);
        wg_cli_free(&c);
    }
    /* An unambiguous abbreviation still works, as getopt allows. */
    const char *argv[] = {"--siz", "16", "--no-im", "-q", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 0, "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

WG_TEST(pipeline_json_carries_the_whole_run)
{
    /* A name that is not UTF-8 must not break the JSON. */
    wg_cli c = wg_cli_sh(
        "./worldgen --size 24 -q --histogram --json j.json --heightmap "
        "\"$(printf 'h\\377.png')\" --out p.png > /dev/null && python3 -c '\n"
        "import json\n"
        "j = json.load(open(\"j.json\", encoding=\"utf-8\"))\n"
        "assert j[\"version\"] and j[\"spec\"] == 2, j\n"
        "assert j[\"command\"][1:3] == [\"--size\", \"24\"], j[\"command\"]\n"
        "assert \"\\ufffd\" in j[\"command\"][8], j[\"command\"]\n"
        "h = j[\"host\"]\n"
        "assert h[\"cpu\"] and h[\"cores\"] >= 1 and h[\"threads\"] >= 1, h\n"
        "assert h[\"vector\"] in (\"avx512\", \"avx2\", \"sse2\", \"scalar\"), h\n"
        "import os, re\n"
        "if os.path.exists(\"/proc/cpuinfo\") and h[\"vector\"] != \"scalar\":\n"
        "    f = re.search(r\"^flags\\s*:(.*)$\", open(\"/proc/cpuinfo\").read(), re.M)\n"
        "    f = f.group(1).split() if f else []\n"
        "    want = \"avx512\" if \"avx512f\" in f else \"avx2\" if \"avx2\" in f else \"sse2\"\n"
        "    assert h[\"vector\"] == want or (want == \"avx512\" and h[\"vector\"] == \"avx2\"), (h, want)\n"
        "r = j[\"render\"]\n"
        "assert r[\"width\"] == 800 and r[\"rasterise\"] > 0 and r[\"shade\"] > 0, r\n"
        "assert r[\"view\"] == \"orbit\" and r[\"triangles\"] > 0 and r[\"drawn\"] > 0, r\n"
        "w = {x[\"format\"]: x for x in j[\"writers\"]}\n"
        "assert set(w) == {\"heightmap\", \"png\"}, w\n"
        "assert w[\"png\"][\"path\"] == \"p.png\" and w[\"png\"][\"seconds\"] > 0, w\n"
        "assert w[\"heightmap\"][\"seconds\"] > 0, w\n"
        "s = j[\"histogram\"]\n"
        "assert len(s[\"percent\"]) == 10 and abs(sum(s[\"percent\"]) - 100) < 0.01, s\n"
        "assert 0 <= s[\"water_percent\"] <= 100, s\n"
        "assert j[\"wall\"] > 0, j\n"
        "print(\"ok\")'");
    CHECK(c.status == 0 && strcmp(c.out, "ok\n") == 0, "%d %s %s", c.status,
          c.out, c.err);
    wg_cli_free(&c);
    /* The renderer follows OMP_NUM_THREADS, as the README says. */
    c = wg_cli_sh("OMP_NUM_THREADS=1 ./worldgen --size 24 -q --out p.png "
                  "--json - | python3 -c 'import json,sys; j = "
                  "json.load(sys.stdin); print(j[\"render\"][\"threads\"], "
                  "j[\"host\"][\"threads\"])'");
    CHECK(c.status == 0 && strcmp(c.out, "1 1\n") == 0, "%d %s %s", c.status,
          c.out, c.err);
    wg_cli_free(&c);
    /* The map view draws no triangles: their counts and the rasterising
     * do not apply, null as the manual says (the counts had been 0). */
    c = wg_cli_sh("./worldgen --size 24 -q --view map --out m.png --json - | "
                  "python3 -c 'import json,sys; r = json.load(sys.stdin)[\"render\"]; "
                  "print(r[\"view\"], r[\"triangles\"], r[\"drawn\"], r[\"rasterise\"], "
                  "r[\"shade\"] > 0)'");
    CHECK(c.status == 0 && strcmp(c.out, "map None None None True\n") == 0, "%d %s %s",
          c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* Whether 'key' stands in 'text' as a word of its own (not inside
 * another word: "drawn" is no "draw"). */
static int pipe_has_word(const char *text, const char *key)
{
    size_t len = strlen(key);
    for (const char *p = text; (p = strstr(p, key)) != NULL; p++) {
        int before = p > text && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z'));
        char c = p[len];
        if (!before && c != '_' && !(c >= 'a' && c <= 'z'))
            return 1;
    }
    return 0;
}

/* Every key of the JSON is in the manual's --json entry: the agreement's
 * max_dh and ok, the histogram's p50, the writers, seed_hex and more had
 * been in none, nor when each is null.  Two runs between them give every
 * key: a picture, maps and the histogram with every backend compared; a
 * region with vulkan skipped. */
WG_TEST(pipeline_every_json_key_is_in_the_manual)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/man/worldgen.1", wg_srcdir());
    char *man = wg_read_file(path, NULL);
    CHECK(man != NULL, "%s missing", path);
    const char *from = man ? strstr(man, "\n.BI \\-\\-json \" FILE\"\n") : NULL;
    const char *to = from ? strstr(from, "\n.TP\n.B \\-\\-histogram\n") : NULL;
    CHECK(from && to, "no --json entry in the manual");
    if (!from || !to) {
        free(man);
        return;
    }
    man[to - man] = '\0';
    wg_cli c = wg_cli_sh(
        "./worldgen --size 16 --mesh all --check --histogram --out p.png "
        "--heightmap h.pfm -q --json - && VK_ICD_FILENAMES=/nonexistent "
        "./worldgen --size 64 --region 1,2,8,8 --erosion 1 --hydraulic 1 "
        "--mesh all --heightmap r.pfm -q --json -");
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    const char *want[] = {"region", "width", "reason", "max_dh", "p50",
                          "rasterise", "seconds"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(strstr(c.out, want[i]), "no %s in the runs' JSON: %s", want[i],
              c.out);
    int keys = 0;
    for (const char *p = c.out; (p = strstr(p, "\": ")) != NULL; p += 3) {
        const char *q = p;
        while (q > c.out && q[-1] != '"')
            q--;
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(p - q), q);
        /* a string value before a colon is no key: only names here */
        if (strspn(key, "abcdefghijklmnopqrstuvwxyz_0123456789") != strlen(key))
            continue;
        CHECK(pipe_has_word(from, key), "the JSON's \"%s\" is not in the "
              "manual's --json entry", key);
        keys++;
    }
    CHECK(keys > 40, "only %d keys in: %s", keys, c.out);
    free(man);
    wg_cli_free(&c);
}

WG_TEST(pipeline_help_to_a_full_device_says_so)
{
    wg_cli c = wg_cli_sh("./worldgen --help > /dev/full");
    CHECK(c.status == 1 && strstr(c.err, "cannot write to standard output: "
                                         "No space left on device"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("./worldgen --size 16 --no-image > /dev/full");
    CHECK(c.status == 1 && strstr(c.err, "No space left on device"), "%d %s",
          c.status, c.err);
    wg_cli_free(&c);
    /* Nothing for standard output: closing it is fine. */
    c = wg_cli_sh("./worldgen --size 16 -q --out p.png >&-");
    CHECK(c.status == 0 && c.err[0] == '\0', "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* A memory control group (cgroup v1 or v2, as this machine has) of
 * 'bytes', made for the test: its folder in grp.  Returns 0, or -1 with
 * the test skipped where none can be made. */
static int pipeline_memory_group(char *grp, size_t size, const char *bytes)
{
    const char *v1 = "/sys/fs/cgroup/memory", *v2 = "/sys/fs/cgroup";
    char limit[300];
    int ok = 0;
    struct stat st;
    if (stat("/sys/fs/cgroup/memory/memory.limit_in_bytes", &st) == 0) {
        snprintf(grp, size, "%s/worldgen-test-%d", v1, (int)getpid());
        snprintf(limit, sizeof limit, "%s/memory.limit_in_bytes", grp);
        ok = mkdir(grp, 0755) == 0;
    } else if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {
        snprintf(grp, size, "%s/worldgen-test-%d", v2, (int)getpid());
        snprintf(limit, sizeof limit, "%s/memory.max", grp);
        ok = mkdir(grp, 0755) == 0;
    }
    if (!ok) {
        wg_skip("cannot make a memory control group here (not root, or no "
                "writable cgroup file system)");
        return -1;
    }
    FILE *fp = fopen(limit, "w");
    CHECK(fp && fprintf(fp, "%s\n", bytes) > 0 && fclose(fp) == 0, "%s",
          limit);
    return 0;
}

WG_TEST(pipeline_memory_check_honours_the_control_group)
{
    /* A group of 256 MiB: --size 4096 needs about 0.8 GiB and must be
     * refused up front, where the machine alone would let it run into the
     * OOM killer. */
    char grp[256], cmd[1024];
    if (pipeline_memory_group(grp, sizeof grp, "268435456") != 0)
        return;
    snprintf(cmd, sizeof cmd, "sh -c 'echo $$ > %s/cgroup.procs && exec "
             "./worldgen --size 4096 --mesh scalar --no-image -q'", grp);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 1 && strstr(c.err, "--size 4096 needs") &&
              strstr(c.err, "its control group lets it have "),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    rmdir(grp);
}

/* The file cache a group holds is memory the kernel takes back for it:
 * after 240 MB written in a group of 256 MiB (the cache charged to the
 * group, as a job's own output is), a world of about 40 MiB is made.  The
 * cache had been counted as used: "its control group lets it have 14 MiB
 * more", exit 1. */
WG_TEST(pipeline_memory_check_leaves_the_groups_file_cache)
{
    char grp[256], cmd[1500];
    if (pipeline_memory_group(grp, sizeof grp, "268435456") != 0)
        return;
    snprintf(cmd, sizeof cmd,
             "sh -c 'echo $$ > %s/cgroup.procs && dd if=/dev/zero of=%s/cache "
             "bs=1M count=240 status=none && "
             "./worldgen --size 1025 --mesh scalar --erosion 1 --hydraulic 1 "
             "--no-image -q; echo \"status $?\"; rm -f %s/cache'",
             grp, wg_tmpdir(), wg_tmpdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "status 0\n") == 0 && c.err[0] == '\0', "%s %s",
          c.out, c.err);
    wg_cli_free(&c);
    rmdir(grp);
}

/* A data size limit (ulimit -d, which bounds the heap and the anonymous
 * mappings the fields are in) is one too: the world is refused before it
 * is made (it had been made until an allocation failed, "scalar: out of
 * memory"), and so is a picture too large to draw from it (refused only
 * after the world was made, whose timing table came first). */
WG_TEST(pipeline_data_size_limit_is_checked_first)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    wg_cli c = wg_cli_sh("ulimit -d 100000; ./worldgen --size 4096 --no-image -q "
                         "--mesh scalar --hydraulic 0");
    CHECK(c.status == 1 && strstr(c.err, "worldgen: --size 4096 needs 448.0 MiB for the "
                                         "fields of a 4096x4096 world; its data size "
                                         "limit (ulimit -d) leaves "),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("ulimit -d 300000; ./worldgen --size 65 --mesh scalar --width 16384 "
                  "--height 16384 --aa 1 --out p.png");
    CHECK(c.status == 1 && !strstr(c.err, "terrain") &&
              strstr(c.err, "worldgen: a 16384x16384 picture at --aa 1 needs ") &&
              strstr(c.err, "its data size limit (ulimit -d) leaves "),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* An address space limit (ulimit -v) is a limit too: the world is refused
 * before it is made, saying so (it had counted the machine's memory, then
 * failed part way with "out of memory" in a backend the user never
 * named). */
WG_TEST(pipeline_address_space_limit_is_checked_first)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    wg_cli c = wg_cli_sh("ulimit -v 1000000; ./worldgen --size 20000 --no-image -q "
                         "--mesh openmp");
    CHECK(c.status == 1 && strstr(c.err, "worldgen: --size 20000 needs 13.41 GiB for the "
                                         "fields of a 20000x20000 world; its address "
                                         "space limit (ulimit -v) leaves "),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    /* The scalar backend keeps pass 1's shares in two fields more. */
    c = wg_cli_sh("ulimit -v 1000000; ./worldgen --size 20000 --no-image -q "
                  "--mesh scalar");
    CHECK(c.status == 1 && strstr(c.err, "worldgen: --size 20000 needs 16.39 GiB for the "
                                         "fields of a 20000x20000 world; "),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* What a backend holds at its peak is counted, no more: a region's
 * window is cut from its fields in place, and OpenMP takes no p and q.
 * In a group of 75 MiB, an OpenMP tile of 1025 with its halo (1211 x 1211
 * computed: 50 MiB of fields, a peak of about 61 MiB with the program) is
 * made; it had been counted at 85.5 MiB and refused, as a Slurm task of 3
 * GiB was refused an 8193 tile whose peak is 2.36 GiB. */
WG_TEST(pipeline_memory_check_counts_what_the_backend_holds)
{
    WG_SKIP_UNDER_ASAN_PEAK();
    char grp[256], cmd[1024];
    if (pipeline_memory_group(grp, sizeof grp, "78643200") != 0)
        return;
    snprintf(cmd, sizeof cmd, "sh -c 'echo $$ > %s/cgroup.procs && exec "
             "./worldgen --size 4097 --region 1024,1024,1025,1025 --erosion 12 "
             "--hydraulic 40 --mesh openmp --no-image -q --heightmap held.tif'",
             grp);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && c.err[0] == '\0', "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    rmdir(grp);
}

/* The chunk types of PNG file 'path', in order, each followed by a space
 * (at most size bytes), or "" when it cannot be read. */
static void pipeline_png_chunks(const char *path, char *out, size_t size)
{
    size_t len = 0;
    unsigned char *d = wg_read_file(path, &len);
    out[0] = '\0';
    for (size_t at = 8; d && len >= 8 && at + 12 <= len;) {
        uint32_t n = (uint32_t)d[at] << 24 | (uint32_t)d[at + 1] << 16 |
                     (uint32_t)d[at + 2] << 8 | d[at + 3];
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%.4s ", (const char *)d + at + 4);
        at += 12 + (size_t)n;
    }
    free(d);
}

/* The colour pictures (the render, --albedo, the OBJ's texture) say they
 * are sRGB (sRGB, with gAMA and cHRM for readers without it), before the
 * image data; the 16-bit data maps say nothing of colour.  None had said
 * anything, and colour-managed readers took the pictures for an unknown
 * space. */
WG_TEST(pipeline_colour_pngs_are_tagged_srgb_data_maps_are_not)
{
    wg_cli c = wg_cli_sh("./worldgen --size 17 --mesh scalar -q --width 64 --height 48 "
                         "--out tag-p.png --albedo tag-a.png --obj tag-o.obj "
                         "--heightmap tag-h.png --normalmap tag-n.png");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    static const char *const colour[] = {"tag-p.png", "tag-a.png", "tag-o_albedo.png"};
    static const char *const data[] = {"tag-h.png", "tag-n.png"};
    char chunks[4096], path[1024];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", wg_tmpdir(), colour[i]);
        pipeline_png_chunks(path, chunks, sizeof chunks);
        CHECK(strncmp(chunks, "IHDR gAMA sRGB cHRM ", 20) == 0 &&
                  strstr(chunks, "IDAT "),
              "%s: %s", colour[i], chunks);
    }
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", wg_tmpdir(), data[i]);
        pipeline_png_chunks(path, chunks, sizeof chunks);
        CHECK(strncmp(chunks, "IHDR ", 5) == 0 && strstr(chunks, "IDAT ") &&
                  !strstr(chunks, "sRGB") && !strstr(chunks, "gAMA") &&
                  !strstr(chunks, "cHRM"),
              "%s: %s", data[i], chunks);
    }
}
