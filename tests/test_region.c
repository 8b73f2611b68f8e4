/* test_region.c: regions (wg_job.region, --region X,Y,W,H).  A window made
 * from its halo alone equals the same window of the whole world, to the
 * bit, on every backend (SPEC.md "Windows and tiles"): heights, water,
 * sediment and normals, whatever the window touches (the world's borders,
 * its corners, nothing) and however thin; across backends the agreement
 * rules hold as for whole worlds.  On the command line: bad regions are
 * usage errors, a region's height map is the window of the whole one, and
 * a region of a 1048577-sided world runs in seconds and a few MiB. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/vulkan.h"
#include "test.h"

/* A job of world 'w' (with its lattice) for region r (w = 0: whole). */
typedef struct region_job {
    wg_job job;
    float lat[WG_LATTICE_R * WG_LATTICE_R];
} region_job;

static region_job *region_job_new(const wg_world *w)
{
    region_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->job.world = *w;
    wg_consts_init(&j->job.consts, &j->job.world);
    wg_lattice_fill(j->lat, w->seed);
    j->job.lattice = j->lat;
    return j;
}

/* Run b on j's world, region r, with 'threads'; vulkan under the
 * validation layer.  0, or -1 after a failed check. */
static int region_run(const wg_backend *b, region_job *j, wg_rect r,
                      int threads, wg_fields *f)
{
    char err[WG_ERR_LEN] = "", dev[128];
    wg_times t;
    j->job.region = r;
    j->job.threads = threads;
    int vk = b == &wg_backend_vulkan;
    if (vk)
        setenv("WORLDGEN_VK_VALIDATION", "1", 1);
    int rc = wg_backend_run(b, &j->job, f, &t, dev, sizeof dev, err);
    if (vk)
        unsetenv("WORLDGEN_VK_VALIDATION");
    CHECK(rc == 0, "%s, region %u,%u,%u,%u: %s", b->name, r.x, r.y, r.w,
          r.h, err);
    return rc;
}

/* The region fields 'got' against the same window of 'whole': height,
 * water and sediment to the bit; the normals to the bit when tol is 0,
 * else within tol.  Returns the number of fields that differ. */
static int region_compare(const char *what, const wg_fields *got,
                          const wg_fields *whole, wg_rect win, double tol)
{
    CHECK(got->n == whole->n && wg_rect_equal(got->r, win),
          "%s: fields of %u,%u,%u,%u of %u, want %u,%u,%u,%u of %u", what,
          got->r.x, got->r.y, got->r.w, got->r.h, got->n, win.x, win.y,
          win.w, win.h, whole->n);
    if (got->n != whole->n || !wg_rect_equal(got->r, win))
        return 6;
    const char *names[6] = {"height", "water", "sediment", "nx", "ny", "nz"};
    const float *a[6] = {got->height, got->water, got->sediment,
                         got->nx,     got->ny,    got->nz};
    const float *b[6] = {whole->height, whole->water, whole->sediment,
                         whole->nx,     whole->ny,    whole->nz};
    int bad = 0;
    for (int k = 0; k < 6; k++) {
        size_t bits = 0;
        double worst = 0.0;
        for (uint32_t y = 0; y < win.h; y++) {
            int same;
            const float *ra = a[k] + (size_t)y * win.w;
            const float *rb = b[k] + (size_t)(win.y + y - whole->r.y) *
                                         whole->r.w + (win.x - whole->r.x);
            double d = wg_max_diff(ra, rb, win.w, &same);
            worst = d > worst || d != d ? d : worst;
            for (uint32_t x = 0; !same && x < win.w; x++)
                bits += memcmp(&ra[x], &rb[x], sizeof(float)) != 0;
        }
        int ok = k < 3 || tol == 0.0 ? bits == 0 : worst <= tol;
        CHECK(ok, "%s: %zu cells of %s differ (max %g)", what, bits,
              names[k], worst);
        bad += !ok;
    }
    return bad;
}

/* Run b on every window of 'wins' of world 'w' and compare each with the
 * whole world made by b (to the bit) and by scalar (SPEC's agreement:
 * b's normal tolerance).  Threads cycle through 1, 2, 3. */
static void region_windows(const wg_backend *b, const wg_world *w,
                           const wg_rect *wins, size_t count)
{
    region_job *j = region_job_new(w);
    CHECK(j != NULL);
    if (!j)
        return;
    wg_fields whole, ref;
    const wg_rect all = {0, 0, 0, 0};
    if (region_run(b, j, all, 0, &whole) != 0) {
        free(j);
        return;
    }
    if (region_run(&wg_backend_scalar, j, all, 0, &ref) != 0) {
        wg_fields_free(&whole);
        free(j);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        wg_fields f;
        char what[200];
        snprintf(what, sizeof what, "%s, size %u, erosion %u, hydraulic %u, "
                 "region %u,%u,%u,%u", b->name, w->size, w->passes, w->steps,
                 wins[i].x, wins[i].y, wins[i].w, wins[i].h);
        if (region_run(b, j, wins[i], 1 + (int)(i % 3), &f) != 0)
            continue;
        if (region_compare(what, &f, &whole, wins[i], 0.0) == 0)
            region_compare(what, &f, &ref, wins[i], b->normal_tolerance);
        wg_fields_free(&f);
    }
    wg_fields_free(&whole);
    wg_fields_free(&ref);
    free(j);
}

/* The windows of an n-sided world that a region must get right: each
 * corner cell, each border row and column, thin ones through the middle,
 * ones whose halo the border cuts on one side, an interior one and the
 * whole world. */
static size_t region_edge_windows(uint32_t n, wg_rect *r)
{
    const uint32_t l = n - 1, m = n / 2;
    const wg_rect wins[] = {
        {0, 0, 1, 1},        {l, 0, 1, 1},        {0, l, 1, 1},
        {l, l, 1, 1},        {0, 0, n, 1},        {0, l, n, 1},
        {0, 0, 1, n},        {l, 0, 1, n},        {m, 0, 1, n},
        {0, m, n, 1},        {2, 3, 5, 4},        {0, m - 7, 9, 13},
        {m - 5, m - 9, 17, 23}, {1, 1, n - 2, n - 2}, {m, l - 4, 7, 5},
        {0, 0, n, n},
    };
    memcpy(r, wins, sizeof wins);
    return sizeof wins / sizeof wins[0];
}

/* The worlds the CPU backends are tried on: both erosions; neither (the
 * halo is then the normals' one cell); each alone.  With 16 octaves the
 * slopes are steep enough that the thermal halo is tight: one cell less
 * and windows differ (tried); a halo of one cell a hydraulic step, not
 * two, makes the hydraulic world differ. */
static const wg_world region_worlds[] = {
    {.size = 97, .octaves = 6, .passes = 5, .steps = 4, .sea = 0.3f,
     .seed = 31},
    {.size = 64, .octaves = 3, .passes = 0, .steps = 0, .sea = 0.25f,
     .seed = 7},
    {.size = 97, .octaves = 16, .passes = 6, .steps = 0, .sea = 0.25f,
     .seed = 7},
    {.size = 97, .octaves = 6, .passes = 0, .steps = 6, .sea = 0.25f,
     .seed = 7},
};

WG_TEST(region_scalar_windows_at_borders_corners_and_thin)
{
    for (size_t i = 0; i < sizeof region_worlds / sizeof region_worlds[0];
         i++) {
        wg_rect wins[32];
        size_t k = region_edge_windows(region_worlds[i].size, wins);
        region_windows(&wg_backend_scalar, &region_worlds[i], wins, k);
    }
}

WG_TEST(region_openmp_windows_at_borders_corners_and_thin)
{
    for (size_t i = 0; i < sizeof region_worlds / sizeof region_worlds[0];
         i++) {
        wg_rect wins[32];
        size_t k = region_edge_windows(region_worlds[i].size, wins);
        region_windows(&wg_backend_openmp, &region_worlds[i], wins, k);
    }
}

/* A world of 1000, an uneven size, in tiles of 300 (the last row and
 * column 100), both erosions on: the tiles put together are the world. */
static void region_tiles(const wg_backend *b)
{
    const wg_world w = {.size = 1000, .octaves = 6, .passes = 3, .steps = 5,
                        .sea = 0.3f, .seed = 0xC0FFEE};
    wg_rect wins[16];
    size_t k = 0;
    for (uint32_t y = 0; y < w.size; y += 300)
        for (uint32_t x = 0; x < w.size; x += 300)
            wins[k++] = (wg_rect){x, y, w.size - x < 300 ? w.size - x : 300,
                                  w.size - y < 300 ? w.size - y : 300};
    region_windows(b, &w, wins, k);
}

WG_TEST(region_scalar_tiles_of_300_make_a_world_of_1000)
{
    region_tiles(&wg_backend_scalar);
}

WG_TEST(region_openmp_tiles_of_300_make_a_world_of_1000)
{
    region_tiles(&wg_backend_openmp);
}

/* Vulkan (lavapipe here: slow, so small): windows of a world that is no
 * multiple of a workgroup, with the blocked erosion's K passes and its
 * rest; then the staging, storage-buffer and one-pass paths. */
WG_TEST(region_vulkan_windows_equal_whole_world)
{
    char err[WG_ERR_LEN];
    const wg_world w = {.size = 53, .octaves = 5, .passes = 5, .steps = 3,
                        .sea = 0.3f, .seed = 99};
    region_job *j = region_job_new(&w);
    CHECK(j != NULL);
    if (!j)
        return;
    j->job.region = (wg_rect){0, 0, 1, 1};
    int ok = wg_backend_vulkan.probe(&j->job, err) == 0;
    free(j);
    if (!ok) {
        wg_skip("%s", err);
        return;
    }
    unsigned before = wg_vulkan_validation_count();
    const wg_rect wins[] = {
        {0, 0, 1, 1},   {52, 52, 1, 1}, {0, 10, 53, 7},
        {26, 0, 1, 53}, {20, 17, 9, 13}, {40, 0, 13, 20},
    };
    region_windows(&wg_backend_vulkan, &w, wins, sizeof wins / sizeof wins[0]);
    static const char *const paths[][2] = {
        {"WORLDGEN_VK_STAGING", "1"},
        {"WORLDGEN_VK_TEXELS", "0"},
        {"WORLDGEN_VK_EROSION", "single"},
    };
    const wg_rect one[] = {{17, 30, 11, 23}};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        setenv(paths[i][0], paths[i][1], 1);
        region_windows(&wg_backend_vulkan, &w, one, 1);
        unsetenv(paths[i][0]);
    }
    CHECK(wg_vulkan_validation_count() == before,
          "%u validation messages (printed above)",
          wg_vulkan_validation_count() - before);
}

/* A region of a 1048577-sided world: only its rectangle is computed, and
 * the same window made with a larger halo (a larger region holding it) is
 * the same to the bit, on each CPU backend and between them. */
WG_TEST(region_of_a_huge_world_is_the_same_from_any_larger_region)
{
    const wg_world w = {.size = WG_REGION_SIZE_MAX, .octaves = 6,
                        .passes = 4, .steps = 10, .sea = 0.25f, .seed = 1234};
    region_job *j = region_job_new(&w);
    CHECK(j != NULL);
    if (!j)
        return;
    const wg_rect win = {500000, 500000, 64, 48},
                  big = {499970, 499990, 120, 80};
    j->job.region = win;
    wg_rect r = wg_job_rect(&j->job);
    uint32_t halo = wg_halo(&w);
    CHECK(halo == 25 && r.x == win.x - halo && r.y == win.y - halo &&
              r.w == win.w + 2 * halo && r.h == win.h + 2 * halo,
          "R = %u,%u,%u,%u", r.x, r.y, r.w, r.h);
    wg_fields a, b, c;
    if (region_run(&wg_backend_scalar, j, win, 0, &a) == 0) {
        if (region_run(&wg_backend_scalar, j, big, 0, &b) == 0) {
            region_compare("scalar inside a larger region", &a, &b, win, 0.0);
            wg_fields_free(&b);
        }
        if (region_run(&wg_backend_openmp, j, big, 2, &c) == 0) {
            region_compare("openmp's larger region against scalar", &a, &c,
                           win, 0.0);
            wg_fields_free(&c);
        }
        wg_fields_free(&a);
    }
    /* The last cells of the world, where the halo is cut. */
    const wg_rect corner = {WG_REGION_SIZE_MAX - 3, WG_REGION_SIZE_MAX - 2, 3,
                            2},
                  around = {WG_REGION_SIZE_MAX - 40, WG_REGION_SIZE_MAX - 9,
                            40, 9};
    if (region_run(&wg_backend_openmp, j, corner, 2, &a) == 0) {
        if (region_run(&wg_backend_scalar, j, around, 0, &b) == 0) {
            region_compare("the world's last corner", &a, &b, corner, 0.0);
            wg_fields_free(&b);
        }
        wg_fields_free(&a);
    }
    free(j);
}

WG_TEST(region_outside_the_world_is_refused_by_the_backends)
{
    const wg_world w = {.size = 16, .octaves = 2, .passes = 1, .steps = 1,
                        .sea = 0.25f, .seed = 1};
    region_job *j = region_job_new(&w);
    CHECK(j != NULL);
    if (!j)
        return;
    const wg_rect bad[] = {{15, 0, 2, 1}, {0, 16, 1, 1}, {0, 0, 0, 4},
                           {0, 0, 4, 0}, {UINT32_MAX, 0, 2, 2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[WG_ERR_LEN] = "", dev[8];
        wg_fields f;
        wg_times t;
        j->job.region = bad[i];
        CHECK(wg_backend_run(&wg_backend_scalar, &j->job, &f, &t, dev,
                             sizeof dev, err) == -1 &&
                  strstr(err, "not inside"),
              "region %u,%u,%u,%u: %s", bad[i].x, bad[i].y, bad[i].w,
              bad[i].h, err);
    }
    free(j);
}

/* ------------------------------------------------------ the command line */

WG_TEST(region_cli_bad_values_are_usage_errors)
{
    static const struct {
        const char *size, *region, *says;
    } cases[] = {
        {"64", "", "is not four whole numbers"},
        {"64", "1,2,3", "is not four whole numbers"},
        {"64", "1,2,3,4,5", "is not four whole numbers"},
        {"64", "a,b,c,d", "is not four whole numbers"},
        {"64", "1,,3,4", "is not four whole numbers"},
        {"64", " 1,2,3,4", "is not four whole numbers"},
        {"64", "1,2,3,4 ", "is not four whole numbers"},
        {"64", "-1,0,4,4", "is not four whole numbers"},
        {"64", "+1,0,4,4", "is not four whole numbers"},
        {"64", "0x,0,4,4", "is not four whole numbers"},
        {"64", "0xg,0,4,4", "is not four whole numbers"},
        {"64", "0x3D,0,4,4", "is outside the 64x64 world"}, /* hex, as --size: 61 */
        {"64", "1.5,0,4,4", "is not four whole numbers"},
        {"64", "0,0,0,4", "is out of range"},
        {"64", "0,0,4,0", "is out of range"},
        {"64", "61,0,4,4", "is outside the 64x64 world"},
        {"64", "0,61,4,4", "is outside the 64x64 world"},
        {"64", "0,0,65,1", "is outside the 64x64 world"},
        {"64", "64,0,1,1", "is outside the 64x64 world"},
        {"64", "99999999999,0,1,1", "is outside the 64x64 world"},
        {"64", "0,0,18446744073709551617,1", "is outside the 64x64 world"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char want[160];
        snprintf(want, sizeof want, "--region: '%s' %s", cases[i].region,
                 cases[i].says);
        const char *argv[] = {"--size", cases[i].size, "--region",
                              cases[i].region, "-q", "--no-image", NULL};
        wg_cli c = wg_cli_run(argv);
        CHECK(c.status == 2 && c.out_len == 0 && strstr(c.err, want) &&
                  strstr(c.err, "(valid: "),
              "--region '%s': status %d, stderr: %s", cases[i].region,
              c.status, c.err);
        wg_cli_free(&c);
    }
    /* 0x hex, as every whole-number option takes it, is the same window. */
    wg_cli h = wg_cli_sh("./worldgen --size 64 --region 0x3,0,0X10,0xa -q --heightmap rh.pfm && "
                         "./worldgen --size 64 --region 3,0,16,10 -q --heightmap rd.pfm && "
                         "cmp rh.pfm rd.pfm && echo same");
    CHECK(h.status == 0 && strcmp(h.out, "same\n") == 0, "%s%s", h.out, h.err);
    wg_cli_free(&h);
    /* The size named in the range, whichever option comes first. */
    const char *after[] = {"--region", "10,0,60,2", "--size", "64", "-q",
                           "--no-image", NULL};
    wg_cli c = wg_cli_run(after);
    CHECK(c.status == 2 && strstr(c.err, "--region: '10,0,60,2' is outside "
                                         "the 64x64 world (valid: W and H "
                                         "1..64, X + W and Y + H at most 64)"),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    /* A world beyond 65536 needs a region, and none beyond 1048577 runs. */
    const char *big[] = {"--size", "70000", "-q", "--no-image", NULL};
    c = wg_cli_run(big);
    CHECK(c.status == 2 && strstr(c.err, "--size: '70000' is out of range "
                                         "(valid: 2..65536; up to 1048577 "
                                         "with --region)"),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    const char *huge[] = {"--size", "1048578", "--region", "0,0,1,1", "-q",
                          "--no-image", NULL};
    c = wg_cli_run(huge);
    CHECK(c.status == 2 && strstr(c.err, "--size: '1048578' is out of range "
                                         "(valid: 2..65536; up to 1048577 "
                                         "with --region)"),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    /* The edges that are inside. */
    const char *edge[] = {"--size", "64", "--region", "60,0,4,64", "-q",
                          "--no-image", "--erosion", "1", "--hydraulic", "1",
                          NULL};
    c = wg_cli_run(edge);
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
}

/* A PFM map read back: w, h and the values, rows top to bottom. */
static float *region_read_pfm(const char *path, uint32_t *w, uint32_t *h)
{
    size_t len;
    char *b = wg_read_file(path, &len);
    unsigned ww, hh;
    int used = 0;
    /* The header ends at its one newline after -1.0: a "\n" in the format
     * would also swallow data bytes that happen to be white space. */
    if (!b || sscanf(b, "Pf\n%u %u\n-1.0%n", &ww, &hh, &used) != 2 ||
        used == 0 || b[used++] != '\n' ||
        len != (size_t)used + (size_t)ww * hh * 4) {
        free(b);
        return NULL;
    }
    float *v = malloc((size_t)ww * hh * sizeof *v);
    for (size_t y = 0; v && y < hh; y++) /* the file's first row is the last */
        memcpy(v + y * ww, b + used + (hh - 1 - y) * ww * 4, ww * 4);
    free(b);
    *w = ww;
    *h = hh;
    return v;
}

/* The maps of a region are the window of the whole world's maps, on every
 * backend, and --mesh all --check finds the backends in agreement. */
WG_TEST(region_cli_maps_are_the_window_of_the_whole_world)
{
    const char *common = "--size 97 --erosion 3 --hydraulic 4 --seed 5 -q "
                         "--no-image";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "./worldgen %s --mesh scalar --heightmap "
             "whole.pfm --watermap whole_w.pfm", common);
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    uint32_t nw = 0, nh = 0, ww = 0, wh = 0;
    char path[512];
    snprintf(path, sizeof path, "%s/whole.pfm", wg_tmpdir());
    float *whole = region_read_pfm(path, &nw, &nh);
    snprintf(path, sizeof path, "%s/whole_w.pfm", wg_tmpdir());
    float *whole_w = region_read_pfm(path, &ww, &wh);
    CHECK(whole && whole_w && nw == 97 && nh == 97 && ww == 97 && wh == 97);
    static const char *const meshes[] = {"scalar", "openmp", "all --check"};
    const wg_rect r = {13, 40, 31, 17};
    for (size_t m = 0; whole && whole_w && m < 3; m++) {
        snprintf(cmd, sizeof cmd, "./worldgen %s --region %u,%u,%u,%u "
                 "--mesh %s --heightmap r.pfm --watermap r_w.pfm", common,
                 r.x, r.y, r.w, r.h, meshes[m]);
        c = wg_cli_sh(cmd);
        CHECK(c.status == 0, "--mesh %s: status %d: %s", meshes[m], c.status,
              c.err);
        wg_cli_free(&c);
        const float *full[2] = {whole, whole_w};
        const char *names[2] = {"r.pfm", "r_w.pfm"};
        for (int k = 0; k < 2; k++) {
            uint32_t w = 0, h = 0;
            snprintf(path, sizeof path, "%s/%s", wg_tmpdir(), names[k]);
            float *got = region_read_pfm(path, &w, &h);
            CHECK(got && w == r.w && h == r.h, "--mesh %s: %s is %ux%u",
                  meshes[m], names[k], w, h);
            int bad = 0;
            for (uint32_t y = 0; got && w == r.w && h == r.h && y < r.h; y++)
                bad += memcmp(got + (size_t)y * r.w,
                              full[k] + (size_t)(r.y + y) * 97 + r.x,
                              r.w * sizeof(float)) != 0;
            CHECK(bad == 0, "--mesh %s: %d rows of %s differ", meshes[m], bad,
                  names[k]);
            free(got);
        }
    }
    free(whole);
    free(whole_w);
}

/* --size 1048577 --region 500000,500000,256,256 --hydraulic 10 --erosion 4
 * runs in seconds and in memory that goes with the region: the most the
 * process held (getrusage of a child that waits for it alone) is far from
 * the world's 4 TiB a field. */
WG_TEST(region_cli_huge_world_runs_in_bounded_memory)
{
    int fd[2];
    CHECK(pipe(fd) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        const char *argv[] = {"--size", "1048577", "--region",
                              "500000,500000,256,256", "--hydraulic", "10",
                              "--erosion", "4", "--mesh", "scalar", "-q",
                              "--heightmap", "huge.pfm", NULL};
        double t0 = wg_now();
        wg_cli c = wg_cli_run(argv);
        double secs = wg_now() - t0;
        struct rusage ru;
        getrusage(RUSAGE_CHILDREN, &ru);
        char msg[1024];
        int len = snprintf(msg, sizeof msg, "%d %ld %.3f %.900s", c.status,
                           ru.ru_maxrss, secs, c.err);
        if (write(fd[1], msg, (size_t)len) != len)
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    char msg[1024] = "";
    ssize_t got = 0, k;
    while ((k = read(fd[0], msg + got, sizeof msg - 1 - (size_t)got)) > 0)
        got += k;
    close(fd[0]);
    waitpid(pid, NULL, 0);
    int status = -1;
    long kib = -1;
    double secs = -1;
    int used = 0;
    sscanf(msg, "%d %ld %lf %n", &status, &kib, &secs, &used);
    CHECK(status == 0, "status %d: %s", status, msg + used);
    /* A whole 1048577 world would need 48 TiB: 200 MiB bounds the window
     * and its halo, with room for AddressSanitizer's shadow and its
     * allocator (430 MiB under SAN=1, 8 MiB without). */
#if defined(__SANITIZE_ADDRESS__)
    const long limit_kib = 1024 * 1024;
#else
    const long limit_kib = 200 * 1024;
#endif
    CHECK(kib > 0 && kib < limit_kib, "max RSS %ld KiB", kib);
    CHECK(secs >= 0 && secs < 30, "%.1f s", secs);
    uint32_t w = 0, h = 0;
    char path[512];
    snprintf(path, sizeof path, "%s/huge.pfm", wg_tmpdir());
    float *v = region_read_pfm(path, &w, &h);
    CHECK(v && w == 256 && h == 256, "huge.pfm is %ux%u", w, h);
    free(v);
}

/* A region run's reports name the window: the world line and the JSON's
 * world carry it, and --histogram measures the window's cells, not the
 * world's.  Both had shown only the world's size, so a window's
 * histogram read as the whole world's, in the table and in the JSON. */
WG_TEST(region_cli_reports_name_the_window)
{
    wg_cli c = wg_cli_sh(
        "./worldgen --size 64 --region 5,6,7,3 --mesh scalar --histogram "
        "--no-image --json rj.json --heightmap rj.pfm && "
        "jq -c '.world.region, ([.histogram.percent[] * 21 / 100 | "
        ". - round | fabs < 1e-6] + [.histogram.percent | add | round] "
        "| unique)' rj.json && "
        "./worldgen --size 64 --mesh scalar --no-image --json - | "
        "jq -c .world.region");
    CHECK(c.status == 0, "status %d: %s", c.status, c.err);
    CHECK(strstr(c.out, "world   64x64 grid, 6 octaves, 0 erosion passes, "
                        "49 hydraulic steps, sea level 0.25, seed 1234, "
                        "region 5,6,7,3\n"), "%s", c.out);
    /* The JSON's world names the window, and its histogram counts the 21
     * cells of the window (each bin a whole number of them, adding up to
     * 100%); a whole world's region is null. */
    CHECK(strstr(c.out, "\n{\"x\":5,\"y\":6,\"width\":7,\"height\":3}\n"
                        "[true,100]\nnull\n"), "%s", c.out);
    wg_cli_free(&c);
}
