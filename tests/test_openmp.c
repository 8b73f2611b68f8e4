/* test_openmp.c: the OpenMP backend against the scalar reference, bit for
 * bit, at every thread count and at sizes that divide by neither the thread
 * count nor the vector width; and the agreement code that --check uses. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/agree.h"
#include "backends/backend.h"
#include "render/render.h"
#include "test.h"

static void omp_check_identical(const wg_world *w, int threads)
{
    wg_fields a, b;
    CHECK(wg_make_world("scalar", w, 0, &a) == 0);
    CHECK(wg_make_world("openmp", w, threads, &b) == 0);
    if (a.height && b.height) {
        wg_agreement g = wg_agree(&a, &b, &wg_backend_openmp);
        CHECK(g.identical && g.ok, "size %u octaves %u passes %u steps %u "
              "sea %g, %d threads: max dh %g, max dw %g, max dn %g", w->size,
              w->octaves, w->passes, w->steps, (double)w->sea, threads,
              g.max_dh, g.max_dw, g.max_dn);
    }
    wg_fields_free(&a);
    wg_fields_free(&b);
}

WG_TEST(openmp_identical_to_scalar_every_thread_count)
{
    static const uint32_t sizes[] = {2, 3, 5, 17, 37, 64, 101, 257};
    static const int threads[] = {1, 2, 3, 7};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            wg_world w = {.size = sizes[i], .octaves = 6, .passes = 5,
                          .seed = 1234 + i};
            omp_check_identical(&w, threads[t]);
        }
}

WG_TEST(openmp_identical_at_extremes)
{
    /* erosion parity (0, 1, 2 passes), 1 and 16 octaves, a 0x hex seed */
    const wg_world worlds[] = {
        {.size = 129, .octaves = 1, .passes = 0, .seed = 0},
        {.size = 130, .octaves = 16, .passes = 1, .seed = UINT64_MAX},
        {.size = 131, .octaves = 6, .passes = 2, .seed = 0xdeadbeef},
        {.size = 600, .octaves = 6, .passes = 12, .seed = 1234},
    };
    for (size_t i = 0; i < sizeof worlds / sizeof worlds[0]; i++) {
        omp_check_identical(&worlds[i], 2);
        omp_check_identical(&worlds[i], 5);
    }
}

/* Stage 3: its two passes split across threads by rows; a band's edge rows
 * read the routing of the next band's, so sizes and thread counts that cut
 * the world unevenly are the cases to try.  Pass 1 makes a row as four
 * stretches of whole vectors (64 cells and more) and what is left as two
 * halves: 65, 127, 130 and 191 leave 1, 63, 2 and 63 cells to the halves,
 * the sizes under 64 make the whole row as halves.  Steps go in pairs, the
 * second a sweep behind the first, where every band has 8 rows or more
 * (an odd count ends with one step alone): 65 to 300 on 2 to 7 threads
 * try a pair's waits at the bands' edges (a lag of one row too few, or
 * a band's first rows not held back for the band above, fails here). */
WG_TEST(openmp_hydraulic_identical_to_scalar)
{
    static const uint32_t sizes[] = {2, 3, 4, 17, 38, 65, 127, 130, 191};
    static const uint32_t steps[] = {1, 2, 9, 40};
    static const int threads[] = {1, 2, 3, 7};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
            wg_world w = {.size = sizes[i], .octaves = 6, .passes = 3,
                          .steps = steps[k], .sea = 0.1f * (float)k,
                          .seed = 99 + i};
            omp_check_identical(&w, threads[(i + k) % 4]);
        }
    wg_world big = {.size = 300, .octaves = 6, .passes = 12, .steps = 150,
                    .sea = 0.25f, .seed = 1234};
    omp_check_identical(&big, 2);
    omp_check_identical(&big, 5);
}

WG_TEST(openmp_matches_vectors)
{
    /* The vectors, independently of the scalar backend. */
    wg_world w = {.size = 37, .octaves = 3, .passes = 5, .seed = 0xdeadbeef};
    wg_fields f;
    size_t len = 0;
    CHECK(wg_make_world("openmp", &w, 3, &f) == 0);
    float *v = wg_read_file("tests/vectors/s37_o3_e5_seed0xdeadbeef.height.f32", &len);
    CHECK(v && f.height && len == 37 * 37 * 4 && memcmp(v, f.height, len) == 0);
    free(v);
    v = wg_read_file("tests/vectors/s37_o3_e5_seed0xdeadbeef.nz.f32", &len);
    CHECK(v && f.nz && len == 37 * 37 * 4 && memcmp(v, f.nz, len) == 0);
    free(v);
    wg_fields_free(&f);
}

WG_TEST(openmp_matches_hydraulic_vectors)
{
    wg_spec_check_hydraulic_vectors("openmp", 1);
    wg_spec_check_hydraulic_vectors("openmp", 3);
}

WG_TEST(agree_detects_a_one_bit_difference)
{
    /* The --check gate's own code, fed a deliberately perturbed field. */
    wg_world w = {.size = 33, .octaves = 4, .passes = 2, .seed = 3};
    wg_fields a, b;
    CHECK(wg_make_world("scalar", &w, 0, &a) == 0);
    CHECK(wg_make_world("scalar", &w, 0, &b) == 0);
    if (!a.height || !b.height)
        return;
    wg_agreement g = wg_agree(&a, &b, &wg_backend_openmp);
    CHECK(g.identical && g.ok && g.max_dh == 0 && g.max_dn == 0);

    CHECK(g.bad_field == NULL, "an agreement names a cell: %s", g.bad_field);

    b.height[100] = nextafterf(b.height[100], 2.0f);
    g = wg_agree(&a, &b, &wg_backend_openmp);
    CHECK(!g.ok && !g.heights_identical && g.max_dh > 0, "one ulp of height");
    /* where: cell 100 of a 33 grid is x 1, y 3 */
    CHECK(g.bad_field && !strcmp(g.bad_field, "height") && g.bad_x == 1 &&
              g.bad_y == 3 && g.bad_ref == a.height[100] &&
              g.bad_value == b.height[100],
          "%s at %u, %u", g.bad_field ? g.bad_field : "nothing", g.bad_x, g.bad_y);
    b.height[100] = a.height[100];
    b.water[200] = nextafterf(b.water[200], 2.0f);
    g = wg_agree(&a, &b, &wg_backend_openmp);
    CHECK(!g.ok && g.max_dw > 0 && g.max_dh == 0, "one ulp of water");
    b.water[200] = a.water[200];
    b.sediment[5] = 1e-30f;
    g = wg_agree(&a, &b, &wg_backend_openmp);
    CHECK(!g.ok && g.max_dw > 0, "sediment");
    b.sediment[5] = a.sediment[5];

    /* A normal off by 5e-7: fails on a CPU backend (must be identical),
     * passes with the GPU tolerance of 1e-6, fails beyond it. */
    wg_backend gpu = wg_backend_openmp;
    gpu.normal_tolerance = 1e-6;
    b.ny[7] = a.ny[7] - 5e-7f;
    g = wg_agree(&a, &b, &wg_backend_openmp);
    CHECK(!g.ok && g.heights_identical, "CPU normals must be identical");
    g = wg_agree(&a, &b, &gpu);
    CHECK(g.ok && !g.identical && fabs(g.max_dn - 5e-7) < 1e-7, "%g", g.max_dn);
    b.nx[9] = a.nx[9] + 3e-6f;
    g = wg_agree(&a, &b, &gpu);
    CHECK(!g.ok, "3e-6 is beyond the GPU tolerance");
    /* ny[7], within the tolerance, is not where it breaks: nx[9] is */
    CHECK(g.bad_field && !strcmp(g.bad_field, "nx") && g.bad_x == 9 && g.bad_y == 0,
          "%s at %u, %u", g.bad_field ? g.bad_field : "nothing", g.bad_x, g.bad_y);
    b.nz[0] = NAN;
    g = wg_agree(&a, &b, &gpu);
    CHECK(!g.ok && isinf(g.max_dn), "NaN is infinitely far");
    wg_fields_free(&a);
    wg_fields_free(&b);
}

WG_TEST(cli_mesh_all_table_and_agreement)
{
    const char *argv[] = {"--size", "99", "--mesh", "all", "--check", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    const char *sc = strstr(c.out, "\n  scalar "), *om = strstr(c.out, "\n  openmp ");
    CHECK(sc && om && sc < om, "scalar then openmp: %s", c.out);
    CHECK(strstr(c.out, "agree   openmp vs scalar   max dh = 0.00e+00   max dw = "
                        "0.00e+00   max dn = 0.00e+00   identical"), "%s", c.out);
    wg_cli_free(&c);
}

WG_TEST(cli_check_fails_with_status_3_when_a_backend_disagrees)
{
    wg_cli c = wg_cli_sh("WORLDGEN_FAULT=openmp ./worldgen --size 64 --mesh all --check");
    CHECK(c.status == 3, "status %d", c.status);
    CHECK(strstr(c.err, "--check: openmp disagrees with scalar: max dh = "), "%s", c.err);
    /* the tolerances as the SPEC writes them (a CPU's normals had read
     * "dn 0e+00" beside dh 0 and dw 0) */
    CHECK(strstr(c.err, " (allowed: dh 0, dw 0, dn 0); "), "%s", c.err);
    CHECK(strstr(c.out, "DISAGREES"), "%s", c.out);
    /* and says where: the hook's cell, 64 * 64 / 2, is x 0, y 32 */
    CHECK(strstr(c.err, "; first at x 0, y 32: height "), "%s", c.err);
    wg_cli_free(&c);
    /* in a region, in the world's coordinates: cell 32 of the 8 x 8
     * window at 1,2 is x 1, y 6 */
    c = wg_cli_sh("WORLDGEN_FAULT=openmp:water ./worldgen --size 64 --region 1,2,8,8 "
                  "--erosion 1 --hydraulic 1 --mesh all --check -q --heightmap r.pfm");
    CHECK(c.status == 3 && strstr(c.err, "; first at x 1, y 6: water "),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    /* --check with one backend runs scalar as the reference too */
    c = wg_cli_sh("WORLDGEN_FAULT=openmp ./worldgen --size 64 --mesh openmp --check -q");
    CHECK(c.status == 3, "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    /* the water is held to the bit too */
    c = wg_cli_sh("WORLDGEN_FAULT=openmp:water ./worldgen --size 64 --mesh all "
                  "--check -q");
    CHECK(c.status == 3 && strstr(c.err, "max dh = 0.00e+00, max dw = "),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    /* without --check a disagreement is reported but not fatal */
    c = wg_cli_sh("WORLDGEN_FAULT=openmp ./worldgen --size 64 --mesh all");
    CHECK(c.status == 0 && strstr(c.out, "DISAGREES"), "status %d", c.status);
    wg_cli_free(&c);
}

WG_TEST(cli_threads_give_identical_files)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "for t in 1 2 3 4 5 6 7 8; do ./worldgen --size 203 --mesh openmp "
             "--threads $t -q --heightmap %s/t$t.pfm || exit 9; done; "
             "for t in 2 3 4 5 6 7 8; do cmp -s %s/t1.pfm %s/t$t.pfm || exit $t; done; "
             "OMP_NUM_THREADS=3 ./worldgen --size 203 --mesh openmp -q --heightmap %s/env.pfm && "
             "cmp %s/t1.pfm %s/env.pfm",
             wg_tmpdir(), wg_tmpdir(), wg_tmpdir(), wg_tmpdir(), wg_tmpdir(), wg_tmpdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "status %d (the thread count whose file differs): %s", c.status, c.err);
    wg_cli_free(&c);
}

/* The team moves threads that share a CPU to free ones as it forms, each
 * bound for a moment and then given its whole mask back: no thread of
 * this process may be left bound to fewer CPUs than it had. */
WG_TEST(openmp_team_leaves_no_thread_bound)
{
    if (getenv("OMP_PROC_BIND") || getenv("GOMP_CPU_AFFINITY") ||
        getenv("OMP_PLACES"))
        return; /* libgomp binds its threads itself, as asked */
    if (getenv("OMP_DYNAMIC") || getenv("OMP_THREAD_LIMIT"))
        return; /* libgomp may run the team on one thread */
    cpu_set_t all;
    CHECK(sched_getaffinity(0, sizeof all, &all) == 0);
    wg_world w = {.size = 96, .octaves = 6, .passes = 5, .steps = 5,
                  .seed = 7};
    for (int threads = 2; threads <= 5; threads++) {
        wg_fields f;
        CHECK(wg_make_world("openmp", &w, threads, &f) == 0);
        wg_fields_free(&f);
    }
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int tasks = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        cpu_set_t m;
        CHECK(sched_getaffinity(atoi(e->d_name), sizeof m, &m) == 0);
        CHECK(CPU_EQUAL(&m, &all), "thread %s is left with %d of the %d "
              "CPUs", e->d_name, CPU_COUNT(&m), CPU_COUNT(&all));
        tasks++;
    }
    if (d)
        closedir(d);
    CHECK(tasks >= 2, "%d threads: the team ran on one", tasks);
}

/* More threads than CPUs, all on one: no thread can move, every barrier
 * sleeps rather than spins, and the bits are scalar's. */
WG_TEST(cli_openmp_team_on_one_cpu)
{
    wg_cli c = wg_cli_sh("taskset -c 0 ./worldgen --size 131 --hydraulic 20 "
                         "--mesh scalar,openmp --threads 3 --check -q "
                         "--no-image");
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
}

WG_TEST(cli_threads_bad_values)
{
    const char *a[] = {"--threads", "0", NULL}, *b[] = {"--threads", "two", NULL},
               *d[] = {"--threads", "1025", NULL};
    const char *const *cases[] = {a, b, d};
    for (int i = 0; i < 3; i++) {
        wg_cli c = wg_cli_run(cases[i]);
        CHECK(c.status == 2 && strstr(c.err, "--threads: '") &&
              strstr(c.err, "(valid: 1..1024"), "%s", c.err);
        wg_cli_free(&c);
    }
}

WG_TEST(cli_mesh_auto_runs_one_backend)
{
    const char *argv[] = {"--size", "300", "--mesh", "auto", "--threads", "2", NULL};
    wg_cli c = wg_cli_run(argv);
    CHECK(c.status == 0, "%s", c.err);
    int rows = 0;
    for (size_t i = 0; wg_backends[i]; i++) {
        char key[32];
        snprintf(key, sizeof key, "\n  %s ", wg_backends[i]->name);
        rows += strstr(c.out, key) != NULL;
    }
    CHECK(rows == 1, "auto ran %d backends: %s", rows, c.out);
    CHECK(!strstr(c.out, "\n  scalar "), "with 2 threads auto must beat scalar: %s", c.out);
    wg_cli_free(&c);
}

WG_TEST(cli_json_parses_and_matches_the_table)
{
    /* JSON on stdout, the table on stderr, from one run; jq parses it. */
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "./worldgen --size 77 --mesh all --check --json - > %s/run.json 2> %s/table.txt && "
             "jq -r '.backends[] | \"\\(.name) \\(.setup) \\(.terrain) \\(.erosion) "
             "\\(.hydraulic) \\(.normals) \\(.readback) \\(.total)\"' %s/run.json && "
             "jq -e '.world.size == 77 and .world.seed == 1234 and .check == \"pass\" and "
             "(.agree | length) == (.backends | length) - 1 and all(.agree[]; .identical)' %s/run.json",
             wg_tmpdir(), wg_tmpdir(), wg_tmpdir(), wg_tmpdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    char path[300];
    snprintf(path, sizeof path, "%s/table.txt", wg_tmpdir());
    char *table = wg_read_file(path, NULL);
    int rows = 0;
    for (char *line = c.out; table && line && *line; rows++) {
        char name[32];
        double j[7], t[7];
        if (sscanf(line, "%31s %lf %lf %lf %lf %lf %lf %lf", name, &j[0], &j[1],
                   &j[2], &j[3], &j[4], &j[5], &j[6]) != 8)
            break;
        char key[40];
        snprintf(key, sizeof key, "\n  %s ", name);
        const char *row = strstr(table, key);
        CHECK(row && sscanf(row + strlen(key), " %lfs %lfs %lfs %lfs %lfs %lfs %lfs",
                            &t[0], &t[1], &t[2], &t[3], &t[4], &t[5],
                            &t[6]) == 7, "%s", name);
        for (int k = 0; row && k < 7; k++)
            CHECK(fabs(j[k] - t[k]) <= 0.00005 + 1e-12, "%s column %d: json %g, table %g",
                  name, k, j[k], t[k]);
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    CHECK(rows >= 2, "only %d backends in the JSON", rows);
    free(table);
    wg_cli_free(&c);
}

/* The CPUs of part 1's thread, into ((int *)ctx)[part]. */
static void openmp_test_cpus_part(void *ctx, uint32_t part)
{
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) == 0)
        ((int *)ctx)[part] = CPU_COUNT(&s);
}

/* libgomp binds the main thread to its first place at start (OMP_PROC_BIND,
 * OMP_PLACES, GOMP_CPU_AFFINITY), and the threads wg_parallel starts for
 * the renderer and the writers had inherited that one CPU: wg_cpus() of
 * them on it.  Bound here as libgomp binds it, the caller's thread keeps
 * its CPU and the others get the process's. */
WG_TEST(openmp_binding_leaves_the_renderers_threads_every_cpu)
{
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all) != 0 || CPU_COUNT(&all) < 2) {
        wg_skip("needs a process that may run on 2 CPUs or more");
        return;
    }
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    CHECK(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0);
    int n[2] = {0, 0};
    wg_parallel(2, openmp_test_cpus_part, n);
    pthread_setaffinity_np(pthread_self(), sizeof all, &all);
    CHECK(n[0] == 1 && n[1] == CPU_COUNT(&all),
          "the caller's thread on %d CPUs, part 1's on %d of %d", n[0], n[1],
          CPU_COUNT(&all));
}
