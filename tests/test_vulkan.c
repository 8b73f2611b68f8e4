/* test_vulkan.c: the Vulkan backend against the scalar one and the SPEC
 * vectors, under the validation layer.
 *
 * Every run here has WORLDGEN_VK_VALIDATION=1 (core and synchronisation
 * validation) and must leave the layer silent.  Heights must equal the
 * scalar backend's to the bit; normals may differ by 1e-6 (GPU '/' and
 * sqrt).  Without a usable Vulkan device (or without the validation layer)
 * the tests are skipped with the probe's reason. */
#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/vulkan.h"
#include "backends/vulkan_device.h"
#include "test.h"

/* LeakSanitizer (make SAN=1) finds leaks inside two Debian 12 libraries,
 * none in worldgen:
 * - the validation layer (vulkan-validationlayers 1.3.239): about 5 KB per
 *   instance made with synchronisation validation (none without it);
 * - lavapipe (Mesa 22.3.6) and its LLVM: 11 KB in 6 blocks once per
 *   process, once a dispatch is large enough for lavapipe's worker threads
 *   (a 256x256 world is; 64x64 is not).  ./worldgen shows it too.
 * These suppress leaks allocated in those modules and nothing else.
 * vk_test_available() keeps the two loaded so that their frames still carry
 * a module name when the checker runs at exit (the loader unloads a layer
 * and a driver with the last instance). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libVkLayer_khronos_validation.so\n"
           "leak:libvulkan_lvp.so\n"
           "leak:libLLVM-15.so\n";
}

/* A job and its lattice, kept together. */
typedef struct vk_test_job {
    wg_job job;
    float lat[WG_LATTICE_R * WG_LATTICE_R];
} vk_test_job;

/* A job for world 'w'. */
static vk_test_job *vk_test_job_world(const wg_world *w)
{
    vk_test_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->job.world = *w;
    wg_consts_init(&j->job.consts, &j->job.world);
    wg_lattice_fill(j->lat, w->seed);
    j->job.lattice = j->lat;
    return j;
}

/* A job without hydraulic steps (sea level 0: no water either). */
static vk_test_job *vk_test_job_new(uint32_t size, uint32_t octaves,
                                    uint32_t passes, uint64_t seed)
{
    wg_world w = {.size = size, .octaves = octaves, .passes = passes,
                  .steps = 0, .sea = 0.0f, .seed = seed};
    return vk_test_job_world(&w);
}

/* The backend's probe and run with the validation layer on.  The variable
 * is set only around them (the backend reads it when it makes its
 * instance), so that the ./worldgen of other tests does not inherit it. */
static int vk_test_probe(const wg_job *job, char *err)
{
    setenv("WORLDGEN_VK_VALIDATION", "1", 1);
    int rc = wg_backend_vulkan.probe(job, err);
    unsetenv("WORLDGEN_VK_VALIDATION");
    return rc;
}

static int vk_test_run_raw(const wg_backend *b, const wg_job *job,
                           wg_fields *f, char *dev, size_t dev_len, char *err)
{
    wg_times t;
    setenv("WORLDGEN_VK_VALIDATION", "1", 1);
    int rc = wg_backend_run(b, job, f, &t, dev, dev_len, err);
    unsetenv("WORLDGEN_VK_VALIDATION");
    return rc;
}

/* 1 when the Vulkan backend can run here with validation; otherwise the
 * running test is marked skipped with the reason. */
static int vk_test_available(void)
{
    static int kept; /* never closed: see __lsan_default_suppressions */
    if (!kept++) {
        (void)dlopen("libVkLayer_khronos_validation.so", RTLD_NOW);
        (void)dlopen("libvulkan_lvp.so", RTLD_NOW);
    }
    char err[WG_ERR_LEN] = "";
    vk_test_job *j = vk_test_job_new(64, 1, 0, 1);
    int ok = j && vk_test_probe(&j->job, err) == 0;
    if (!ok)
        wg_skip("%s", j ? err : "out of memory");
    free(j);
    return ok;
}

/* Run 'b' on 'j'; 0 or -1 with a failed check. */
static int vk_test_run(const wg_backend *b, const wg_job *job, wg_fields *f)
{
    char err[WG_ERR_LEN] = "", dev[128];
    int rc = vk_test_run_raw(b, job, f, dev, sizeof dev, err);
    CHECK(rc == 0, "%s: %s", b->name, err);
    return rc;
}

/* The largest |a[i] - b[i]| over n floats; the count of bit differences
 * goes to *diff_bits. */
static double vk_test_maxdiff(const float *a, const float *b, size_t n,
                              size_t *diff_bits)
{
    double m = 0.0;
    *diff_bits = 0;
    for (size_t i = 0; i < n; i++) {
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0)
            (*diff_bits)++;
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > m || d != d)
            m = d != d ? INFINITY : d;
    }
    return m;
}

/* Compare the Vulkan fields with expected ones: heights (and the water and
 * the sediment, where given) to the bit, the normals within 1e-6. */
static void vk_test_compare_all(const char *what, const wg_fields *got,
                                const float *height, const float *water,
                                const float *sediment, const float *nx,
                                const float *ny, const float *nz)
{
    size_t n = wg_cells(got->n), bits;
    double dh = vk_test_maxdiff(got->height, height, n, &bits);
    CHECK(bits == 0, "%s: %zu heights differ in their bits, max |dh| = %g",
          what, bits, dh);
    if (water) {
        double dw = vk_test_maxdiff(got->water, water, n, &bits);
        CHECK(bits == 0, "%s: %zu waters differ in their bits, max |dw| = %g",
              what, bits, dw);
    }
    if (sediment) {
        double ds = vk_test_maxdiff(got->sediment, sediment, n, &bits);
        CHECK(bits == 0,
              "%s: %zu sediments differ in their bits, max |ds| = %g", what,
              bits, ds);
    }
    const float *want[3] = {nx, ny, nz};
    const float *have[3] = {got->nx, got->ny, got->nz};
    for (int c = 0; c < 3; c++) {
        if (!want[c])
            continue;
        double dn = vk_test_maxdiff(have[c], want[c], n, &bits);
        CHECK(dn <= 1e-6, "%s: max |dn%c| = %g", what, "xyz"[c], dn);
    }
}

static void vk_test_compare(const char *what, const wg_fields *got,
                            const float *height, const float *nx,
                            const float *ny, const float *nz)
{
    vk_test_compare_all(what, got, height, NULL, NULL, nx, ny, nz);
}

/* Run the Vulkan backend and the scalar one on world 'w' and compare every
 * field; the validation layer must stay silent. */
static void vk_test_world_against_scalar(const wg_world *w)
{
    vk_test_job *j = vk_test_job_world(w);
    CHECK(j != NULL);
    if (!j)
        return;
    wg_fields ref, got;
    unsigned before = wg_vulkan_validation_count();
    if (vk_test_run(&wg_backend_scalar, &j->job, &ref) == 0) {
        if (vk_test_run(&wg_backend_vulkan, &j->job, &got) == 0) {
            char what[160];
            snprintf(what, sizeof what, "size %u, octaves %u, erosion %u, "
                     "hydraulic %u, sea %g, seed %llu", w->size, w->octaves,
                     w->passes, w->steps, (double)w->sea,
                     (unsigned long long)w->seed);
            vk_test_compare_all(what, &got, ref.height, ref.water,
                                ref.sediment, ref.nx, ref.ny, ref.nz);
            wg_fields_free(&got);
        }
        wg_fields_free(&ref);
    }
    CHECK(wg_vulkan_validation_count() == before,
          "%u validation messages (printed above)",
          wg_vulkan_validation_count() - before);
    free(j);
}

/* The same without hydraulic steps. */
static void vk_test_against_scalar(uint32_t size, uint32_t octaves,
                                   uint32_t passes, uint64_t seed)
{
    wg_world w = {.size = size, .octaves = octaves, .passes = passes,
                  .steps = 0, .sea = 0.0f, .seed = seed};
    vk_test_world_against_scalar(&w);
}

/* The hydraulic stage against scalar at one size: every step count of
 * 'steps' at each sea level, to the bit for height, water and sediment. */
static void vk_test_hydraulic(uint32_t size, const uint32_t *steps,
                              size_t n_steps, uint32_t passes, uint64_t seed)
{
    /* Each step count with one of the sea levels in turn, so that every
     * size meets all three (every combination tripled the suite's Vulkan
     * time, most of it creating devices, under the sanitizers). */
    static const float sea[] = {0.0f, 0.25f, 0.6f};
    for (size_t i = 0; i < n_steps; i++) {
        wg_world w = {.size = size, .octaves = 6, .passes = passes,
                      .steps = steps[i], .sea = sea[(i + size) % 3],
                      .seed = seed};
        vk_test_world_against_scalar(&w);
    }
}

/* The step counts of the hydraulic tests: none, both parities of the
 * ping-pong, and 40 (a chunk of 32 in a secondary command buffer, then 8
 * inline). */
static const uint32_t vk_test_steps[] = {0, 1, 2, 7, 40};
#define VK_TEST_STEPS \
    vk_test_steps, sizeof vk_test_steps / sizeof vk_test_steps[0]

/* Read vector 'field' of a world from tests/vectors; NULL if missing. */
static float *vk_test_vector(const char *world, const char *field, size_t n)
{
    char path[256];
    size_t len = 0;
    snprintf(path, sizeof path, "tests/vectors/%s.%s.f32", world, field);
    float *p = wg_read_file(path, &len);
    CHECK(p && len == n * sizeof(float), "%s: missing or %zu bytes", path,
          len);
    if (p && len != n * sizeof(float)) {
        free(p);
        p = NULL;
    }
    return p;
}

/* The vectors of one world: 'terrain' from a run without erosion, 'height'
 * and the normals from the full run. */
static void vk_test_against_vectors(const char *world, uint32_t size,
                                    uint32_t octaves, uint32_t passes,
                                    uint64_t seed)
{
    size_t n = wg_cells(size);
    float *terrain = vk_test_vector(world, "terrain", n);
    float *height = vk_test_vector(world, "height", n);
    float *nx = vk_test_vector(world, "nx", n);
    float *ny = vk_test_vector(world, "ny", n);
    float *nz = vk_test_vector(world, "nz", n);
    vk_test_job *j = vk_test_job_new(size, octaves, 0, seed);
    vk_test_job *k = vk_test_job_new(size, octaves, passes, seed);
    unsigned before = wg_vulkan_validation_count();
    wg_fields got;
    if (terrain && height && nx && ny && nz && j && k) {
        if (vk_test_run(&wg_backend_vulkan, &j->job, &got) == 0) {
            vk_test_compare("terrain", &got, terrain, NULL, NULL, NULL);
            wg_fields_free(&got);
        }
        if (vk_test_run(&wg_backend_vulkan, &k->job, &got) == 0) {
            vk_test_compare(world, &got, height, nx, ny, nz);
            wg_fields_free(&got);
        }
    }
    CHECK(wg_vulkan_validation_count() == before,
          "%u validation messages (printed above)",
          wg_vulkan_validation_count() - before);
    free(j);
    free(k);
    free(terrain);
    free(height);
    free(nx);
    free(ny);
    free(nz);
}

/* Without a driver (the loader pointed at a file that does not exist),
 * probe fails with a reason instead of crashing.  In a child: the loader
 * reads VK_ICD_FILENAMES when an instance is made, and the parent's later
 * tests need the real driver. */
WG_TEST(vulkan_probe_without_driver)
{
#ifndef WG_HAVE_VULKAN
    wg_skip("built without Vulkan");
    return;
#endif
    int fd[2];
    if (pipe(fd) != 0) {
        CHECK(0, "pipe failed");
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        CHECK(0, "fork failed");
        close(fd[0]);
        close(fd[1]);
        return;
    }
    if (pid == 0) {
        char err[WG_ERR_LEN] = "";
        close(fd[0]);
        setenv("VK_ICD_FILENAMES", "/nonexistent.json", 1);
        setenv("VK_DRIVER_FILES", "/nonexistent.json", 1);
        unsetenv("WORLDGEN_VK_VALIDATION");
        vk_test_job *j = vk_test_job_new(64, 1, 0, 1);
        int rc = j ? wg_backend_vulkan.probe(&j->job, err) : 0;
        ssize_t w = write(fd[1], err, strlen(err));
        (void)w;
        _exit(rc == -1 ? 0 : 1);
    }
    close(fd[1]);
    char msg[WG_ERR_LEN] = "";
    size_t len = 0;
    ssize_t r;
    while (len < sizeof msg - 1 &&
           (r = read(fd[0], msg + len, sizeof msg - 1 - len)) > 0)
        len += (size_t)r;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "probe did not fail without a driver (status %d)", st);
    CHECK(strstr(msg, "Vulkan") != NULL, "no reason given: '%s'", msg);
    CHECK(strchr(msg, '\n') == NULL, "the reason is not one line: '%s'", msg);
}

/* Mesa's device-select layer, with MESA_VK_DEVICE_SELECT=list, prints
 * the devices and ends the process with exit(0) when they are enumerated:
 * --mesh vulkan had exited 0 having written nothing, and --check and
 * --require vulkan had passed.  The backend is not available, saying
 * why, before any instance is made. */
WG_TEST(vulkan_device_select_list_is_refused)
{
    if (!vk_test_available())
        return;
    wg_cli c = wg_cli_sh("rm -f dsl.pfm; MESA_VK_DEVICE_SELECT=list ./worldgen "
                         "--size 16 --mesh vulkan --no-image --heightmap "
                         "dsl.pfm; echo $?; ls dsl.pfm 2>/dev/null");
    CHECK(strcmp(c.out, "1\n") == 0 &&
              strstr(c.err, "MESA_VK_DEVICE_SELECT=list makes Mesa's"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("MESA_VK_DEVICE_SELECT=list ./worldgen --size 16 --mesh "
                  "scalar,vulkan --require vulkan --check --no-image -q");
    CHECK(c.status == 1 && strstr(c.err, "--require vulkan: vulkan does not "
                                        "run: vulkan: MESA_VK_DEVICE_SELECT"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

WG_TEST(vulkan_list_devices)
{
    if (!vk_test_available())
        return;
    char err[WG_ERR_LEN] = "", *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    CHECK(out != NULL);
    if (!out)
        return;
    setenv("WORLDGEN_VK_VALIDATION", "1", 1);
    unsigned before = wg_vulkan_validation_count();
    int rc = wg_vulkan_list_devices(out, err);
    unsetenv("WORLDGEN_VK_VALIDATION");
    fclose(out);
    CHECK(wg_vulkan_validation_count() == before);
    CHECK(rc == 0, "%s", err);
    CHECK(buf && strncmp(buf, "0: ", 3) == 0, "first line: '%s'",
          buf ? buf : "");
    CHECK(buf && strstr(buf, "Vulkan 1."), "no API version: '%s'",
          buf ? buf : "");
    free(buf);
}

/* --gpu: an index and a name substring choose a device, a wrong one fails
 * and says what there is. */
WG_TEST(vulkan_gpu_choice)
{
    if (!vk_test_available())
        return;
    vk_test_job *j = vk_test_job_new(16, 1, 0, 1);
    CHECK(j != NULL);
    if (!j)
        return;
    char err[WG_ERR_LEN] = "", dev[128] = "";
    wg_fields f;

    j->job.gpu = "0";
    CHECK(vk_test_probe(&j->job, err) == 0, "--gpu 0: %s", err);
    CHECK(vk_test_run_raw(&wg_backend_vulkan, &j->job, &f, dev, sizeof dev,
                          err) == 0, "--gpu 0: %s", err);
    wg_fields_free(&f);
    CHECK(strstr(dev, "(Vulkan 1.") != NULL, "device: '%s'", dev);

    /* The first word of the device's own name, upper-cased. */
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(dev, " "), dev);
    for (char *p = name; *p; p++)
        *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
    j->job.gpu = name;
    CHECK(vk_test_probe(&j->job, err) == 0, "--gpu %s: %s", name, err);

    j->job.gpu = "no such gpu";
    CHECK(vk_test_probe(&j->job, err) == -1);
    CHECK(strstr(err, "no such gpu") && strstr(err, "0: "),
          "the reason should name the wish and the devices: '%s'", err);
    j->job.gpu = "99";
    CHECK(vk_test_probe(&j->job, err) == -1);

    /* Either preference still finds a device (the best of either kind, or
     * whatever there is). */
    j->job.gpu = NULL;
    j->job.power = WG_POWER_LOW;
    CHECK(vk_test_probe(&j->job, err) == 0, "low power: %s", err);
    j->job.power = WG_POWER_HIGH;
    CHECK(vk_test_probe(&j->job, err) == 0, "high power: %s", err);
    free(j);
}

/* --gpu among several devices (names as drivers report them; no device
 * needed): an index, a substring that names one device, and a substring
 * in several names, which must fail and name each rather than take the
 * first (four identical GPUs on a cluster node). */
#ifdef WG_HAVE_VULKAN
/* A Vulkan run asked for by name among others (--mesh all --check): a
 * --gpu that matches no device, or validation that is not installed, is
 * a failure (exit 1, why), not a skip: the CI gate had passed, exit 0,
 * having checked no Vulkan at all.  A --gpu that matches runs. */
WG_TEST(vulkan_asked_for_by_name_is_no_skip)
{
    if (!vk_test_available())
        return;
    wg_cli c = wg_cli_sh("./worldgen --size 5 --mesh all --check -q --no-image --gpu 7");
    CHECK(c.status == 1 && strstr(c.err, "worldgen: --gpu '7' asks for the vulkan "
                                         "backend, which does not run: vulkan: --gpu '7': "
                                         "no device 7"),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("WORLDGEN_VK_VALIDATION=1 VK_LAYER_PATH=/nonexistent ./worldgen --size 5 "
                  "--mesh all --check -q --no-image");
    CHECK(c.status == 1 && strstr(c.err, "worldgen: WORLDGEN_VK_VALIDATION=1 asks for the "
                                         "vulkan backend, which does not run: "),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("./worldgen --size 5 --mesh all --check -q --no-image --gpu 0");
    CHECK(c.status == 0 && c.err[0] == '\0', "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
}

WG_TEST(vulkan_gpu_match_refuses_an_ambiguous_name)
{
    static const char *const names[] = {
        "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)", "NVIDIA H200",
        "AMD Radeon Graphics (RADV GFX1103_R1)"};
    char err[WG_ERR_LEN] = "";
    CHECK(vulkan_gpu_match(names, 4, "2", err) == 2, "%s", err);
    CHECK(vulkan_gpu_match(names, 4, "llvm", err) == 1, "%s", err);
    CHECK(vulkan_gpu_match(names, 4, "radv", err) == 3, "%s", err);
    CHECK(vulkan_gpu_match(names, 4, "nvidia", err) == -1);
    CHECK(strstr(err, "more than one") && strstr(err, "0: NVIDIA H200") &&
              strstr(err, "2: NVIDIA H200") && !strstr(err, "1: llvm"),
          "the reason should name both matches and only them: '%s'", err);
    CHECK(vulkan_gpu_match(names, 4, "4", err) == -1 &&
              strstr(err, "no device 4"), "'%s'", err);
    CHECK(vulkan_gpu_match(names, 4, "99999999999999999999999", err) == -1);
    CHECK(vulkan_gpu_match(names, 4, "intel", err) == -1 &&
              strstr(err, "intel"), "'%s'", err);
    /* An index in 0x hex too, as every whole number of the command line
     * ("0x3" had been looked for in the names); "0x" alone is a name. */
    CHECK(vulkan_gpu_match(names, 4, "0x3", err) == 3, "%s", err);
    CHECK(vulkan_gpu_match(names, 4, "0X0", err) == 0, "%s", err);
    CHECK(vulkan_gpu_match(names, 4, "0x4", err) == -1 &&
              strstr(err, "no device 0x4"), "'%s'", err);
    CHECK(vulkan_gpu_match(names, 4, "0x", err) == -1 &&
              strstr(err, "name"), "'%s'", err);
}
#endif

/* A world larger than the device's buffers fails cleanly, in probe. */
WG_TEST(vulkan_layout_fits_the_per_stage_limits)
{
    /* The limits Vulkan guarantees (4 storage buffers a stage, 12 uniform
     * buffers, 16 sampled and 4 storage images, 128 resources) take the
     * stages of terrain, erosion and normals (5 storage buffers) no more
     * than the hydraulic one (8): the device is refused, by name, the
     * limit and the need said. */
    static const VkDescriptorType hyd[] = {
        VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
        VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
        VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER,
        VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER};
    VkPhysicalDeviceLimits lim = {
        .maxPerStageDescriptorStorageBuffers = 4,
        .maxPerStageDescriptorUniformBuffers = 12,
        .maxPerStageDescriptorSampledImages = 16,
        .maxPerStageDescriptorStorageImages = 4,
        .maxPerStageResources = 128,
    };
    char err[WG_ERR_LEN] = "";
    CHECK(vulkan_layout_fits(&lim, "Tiny GPU", "hydraulic", hyd, 12, err) ==
              -1 &&
              strstr(err, "Tiny GPU allows 4 storage buffers a shader stage "
                          "(maxPerStageDescriptorStorageBuffers) but the "
                          "hydraulic stage binds 8"),
          "%s", err);
    lim.maxPerStageDescriptorStorageBuffers = 8;
    CHECK(vulkan_layout_fits(&lim, "Tiny GPU", "hydraulic", hyd, 12, err) == 0,
          "%s", err);
    /* Texel buffers count as images. */
    lim.maxPerStageDescriptorSampledImages = 1;
    CHECK(vulkan_layout_fits(&lim, "Tiny GPU", "hydraulic", hyd, 12, err) ==
              -1 && strstr(err, "1 uniform texel buffers") &&
              strstr(err, "binds 2"),
          "%s", err);
    lim.maxPerStageDescriptorSampledImages = 16;
    lim.maxPerStageResources = 11;
    CHECK(vulkan_layout_fits(&lim, "Tiny GPU", "hydraulic", hyd, 12, err) ==
              -1 && strstr(err, "(maxPerStageResources)"),
          "%s", err);
}

WG_TEST(vulkan_too_large)
{
    if (!vk_test_available())
        return;
    vk_test_job *j = vk_test_job_new(WG_SIZE_MAX, 1, 0, 1);
    CHECK(j != NULL);
    if (!j)
        return;
    char err[WG_ERR_LEN] = "";
    CHECK(vk_test_probe(&j->job, err) == -1);
    CHECK(strstr(err, "65536x65536") != NULL, "reason: '%s'", err);
    wg_fields f;
    CHECK(vk_test_run_raw(&wg_backend_vulkan, &j->job, &f, NULL, 0, err) ==
          -1);
    free(j);
}

WG_TEST(vulkan_vectors_37)
{
    if (vk_test_available())
        vk_test_against_vectors("s37_o3_e5_seed0xdeadbeef", 37, 3, 5,
                                0xdeadbeefull);
}

WG_TEST(vulkan_vectors_64)
{
    if (vk_test_available())
        vk_test_against_vectors("s64_o6_e12_seed1234", 64, 6, 12, 1234);
}

/* The staging path (device-local fields copied to host-visible buffers),
 * which a discrete GPU takes, forced on this device. */
WG_TEST(vulkan_vectors_64_staged)
{
    if (!vk_test_available())
        return;
    setenv("WORLDGEN_VK_STAGING", "1", 1);
    vk_test_against_vectors("s64_o6_e12_seed1234", 64, 6, 12, 1234);
    vk_test_against_scalar(37, 3, 5, 7);
    unsetenv("WORLDGEN_VK_STAGING");
}

/* No erosion, one pass and two: the parity decides which buffer holds the
 * result.  On a CPU device erosion runs 4 passes per dispatch (blocked),
 * plus one dispatch for the rest: 0 to 9 passes cover no blocked dispatch,
 * one and two, each with and without a rest; 133 rows of strips 128 high
 * and 4 wide end mid-strip. */
WG_TEST(vulkan_erosion_parity)
{
    if (!vk_test_available())
        return;
    for (uint32_t passes = 0; passes <= 9; passes++)
        vk_test_against_scalar(100, 4, passes, 42);
    vk_test_against_scalar(133, 3, 13, 5);
}

/* The one-pass-per-dispatch kernel that a GPU takes, and the blocked one,
 * each forced (WORLDGEN_VK_EROSION) on this device. */
WG_TEST(vulkan_erosion_kernels)
{
    if (!vk_test_available())
        return;
    static const char *kernel[] = {"single", "blocked"};
    for (int k = 0; k < 2; k++) {
        setenv("WORLDGEN_VK_EROSION", kernel[k], 1);
        vk_test_against_scalar(37, 3, 5, 7);
        vk_test_against_scalar(130, 2, 13, 3);
        vk_test_against_scalar(2, 6, 4, 1234);
        unsetenv("WORLDGEN_VK_EROSION");
    }
}

WG_TEST(vulkan_octaves_1_and_16)
{
    if (!vk_test_available())
        return;
    vk_test_against_scalar(129, 1, 3, 99);
    vk_test_against_scalar(129, WG_MAX_OCTAVES, 3, 99);
}

/* The smallest world: every cell is a corner. */
WG_TEST(vulkan_size_2)
{
    if (!vk_test_available())
        return;
    vk_test_against_scalar(2, 6, 12, 1234);
    vk_test_against_scalar(3, 6, 1, 1234);
}

/* Not a multiple of any workgroup size, and large. */
WG_TEST(vulkan_size_1000)
{
    if (vk_test_available())
        vk_test_against_scalar(1000, 5, 7, 0x5eed);
}

WG_TEST(vulkan_size_2048)
{
    if (vk_test_available())
        vk_test_against_scalar(2048, 6, 12, 1234);
}

/* The Vulkan options as a user meets them on the command line. */
WG_TEST(vulkan_cli_options)
{
    static const struct {
        const char *script;
        int status;
        const char *out_has, *err_has;
    } cases[] = {
        {"./worldgen --power turbo", 2, "",
         "--power: 'turbo' is not a preference (valid: high-performance, low-power)"},
        {"./worldgen --gpu ''", 2, "", "--gpu: '' names no device"},
        {"VK_ICD_FILENAMES=/nonexistent.json ./worldgen --list-devices", 1, "",
         "--list-devices: no Vulkan driver found"},
        {"VK_ICD_FILENAMES=/nonexistent.json ./worldgen --size 40 --no-image --mesh vulkan", 1,
         "", "--mesh vulkan: not available here: no Vulkan driver found"},
        {"VK_ICD_FILENAMES=/nonexistent.json ./worldgen --size 40 --no-image --mesh all --check",
         0, "skip    vulkan: no Vulkan driver found", ""},
        {"VK_ICD_FILENAMES=/nonexistent.json ./worldgen --size 40 --no-image --mesh auto -q", 0,
         "", ""},
        /* A manifest that is garbage, or a folder: the loader says "out
         * of host memory"; the message names the variable that chose it. */
        {"echo '{garbage' > bad-icd.json; VK_ICD_FILENAMES=$PWD/bad-icd.json ./worldgen "
         "--size 40 --no-image --mesh vulkan", 1, "",
         "/bad-icd.json': does it name readable driver manifests (JSON files)?"},
        {"VK_DRIVER_FILES=/ ./worldgen --size 40 --no-image --mesh vulkan", 1, "",
         "no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER; the "
         "drivers are chosen by VK_DRIVER_FILES='/')"},
        /* Empty: the loader's empty list, said as the cause (it had asked
         * whether a driver is installed). */
        {"VK_ICD_FILENAMES= ./worldgen --list-devices", 1, "",
         "no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER; the "
         "drivers are chosen by VK_ICD_FILENAMES='')"},

    };
#ifndef WG_HAVE_VULKAN
    wg_skip("built without Vulkan");
    return;
#endif
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_cli c = wg_cli_sh(cases[i].script);
        CHECK(c.status == cases[i].status && strstr(c.out, cases[i].out_has) &&
              strstr(c.err, cases[i].err_has), "%s: status %d\n%s%s", cases[i].script,
              c.status, c.out, c.err);
        wg_cli_free(&c);
    }
    /* A driver that loads and finds no device (radeon's, with no such GPU,
     * where mesa-vulkan-drivers put its manifest): no device, not
     * "vkEnumeratePhysicalDevices failed ... at backends/vulkan_device.c:272". */
    const char *radeon = "/usr/share/vulkan/icd.d/radeon_icd.x86_64.json";
    if (access(radeon, R_OK) == 0) {
        char script[256];
        snprintf(script, sizeof script, "VK_ICD_FILENAMES=%s ./worldgen --list-devices",
                 radeon);
        wg_cli r = wg_cli_sh(script);
        CHECK((r.status == 1 && strstr(r.err, "worldgen: --list-devices: no Vulkan "
                                              "device found (the drivers are chosen by "
                                              "VK_ICD_FILENAMES=")) ||
                  (r.status == 0 && strncmp(r.out, "0: ", 3) == 0),
              "status %d: %s%s", r.status, r.out, r.err);
        wg_cli_free(&r);
    }
    /* With the driver: the list has device 0, and --gpu 0, --gpu by name and
     * --power pick it; an index past the list fails and lists the devices. */
    wg_cli c = wg_cli_sh("./worldgen --list-devices");
    if (c.status != 0) {
        wg_skip("no Vulkan device here: %s", c.err);
        wg_cli_free(&c);
        return;
    }
    CHECK(strncmp(c.out, "0: ", 3) == 0, "%s", c.out);
    char name[64] = "";
    sscanf(c.out, "0: %63[^ (]", name);
    wg_cli_free(&c);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "./worldgen --size 40 --no-image --mesh vulkan --gpu '%s' "
             "--power low-power && ./worldgen --size 40 --no-image --mesh vulkan --gpu 0 "
             "--power high-performance -q", name);
    c = wg_cli_sh(cmd);
    CHECK(c.status == 0 && strstr(c.out, "device  vulkan: "), "%s: %s%s", cmd, c.out, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("./worldgen --size 40 --no-image --mesh vulkan --gpu 99");
    CHECK(c.status == 1 && strstr(c.err, "--gpu '99': no device 99 (there are ") &&
          strstr(c.err, "(available: 0: "),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
}

/* The hydraulic stage (SPEC.md stage 3) against scalar: height, water and
 * sediment to the bit, normals within 1e-6, for 0, 1, 2, 7 and 40 steps
 * (no steps, and both parities of the ping-pong), sea levels 0, 0.25 and
 * 0.6, at sizes where every cell is on the border (2, 3), odd and not a
 * multiple of the workgroup (37, 200 is even but not a multiple of 16 by
 * 8 rows), and a multiple of it (64). */
WG_TEST(vulkan_hydraulic_2_and_3)
{
    if (!vk_test_available())
        return;
    vk_test_hydraulic(2, VK_TEST_STEPS, 3, 1234);
    vk_test_hydraulic(3, VK_TEST_STEPS, 1, 99);
}

/* The stage 3 vectors, made from SPEC.md's text alone, under validation. */
WG_TEST(vulkan_matches_hydraulic_vectors)
{
    if (!vk_test_available())
        return;
    setenv("WORLDGEN_VK_VALIDATION", "1", 1);
    unsigned before = wg_vulkan_validation_count();
    wg_spec_check_hydraulic_vectors("vulkan", 0);
    CHECK(wg_vulkan_validation_count() == before, "validation messages");
    unsetenv("WORLDGEN_VK_VALIDATION");
}

WG_TEST(vulkan_hydraulic_37)
{
    if (vk_test_available())
        vk_test_hydraulic(37, VK_TEST_STEPS, 5, 0xdeadbeefull);
}

WG_TEST(vulkan_hydraulic_64)
{
    if (vk_test_available())
        vk_test_hydraulic(64, VK_TEST_STEPS, 12, 1234);
}

WG_TEST(vulkan_hydraulic_200)
{
    if (vk_test_available())
        vk_test_hydraulic(200, VK_TEST_STEPS, 4, 7);
}

/* Which buffers hold the results depends on the parity of the erosion's
 * dispatches and of the steps: every combination, with both erosion
 * kernels (blocked: 0, 1 and 5 passes are 0, 1 and 2 dispatches).  From 32
 * steps on, whole chunks of 32 run as a secondary command buffer and the
 * rest inline: 32, 33 and 64 steps end on either state. */
WG_TEST(vulkan_hydraulic_parity)
{
    if (!vk_test_available())
        return;
    static const char *kernel[] = {"single", "blocked"};
    /* Both parities of the erosion's ping-pong against both of the
     * hydraulic stage's, and step counts around a chunk of 32. */
    static const uint32_t passes[] = {0, 1, 5};
    static const uint32_t steps[] = {0, 1, 2, 33, 64};
    for (int k = 0; k < 2; k++) {
        setenv("WORLDGEN_VK_EROSION", kernel[k], 1);
        for (size_t p = 0; p < sizeof passes / sizeof passes[0]; p++)
            for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
                wg_world w = {.size = 21, .octaves = 5, .passes = passes[p],
                              .steps = steps[i], .sea = 0.25f, .seed = 11};
                vk_test_world_against_scalar(&w);
            }
        unsetenv("WORLDGEN_VK_EROSION");
    }
}

/* The staging path (a discrete GPU's) and the storage-buffer reads (a
 * world larger than maxTexelBufferElements), each forced on this device. */
WG_TEST(vulkan_hydraulic_staged_and_buffers)
{
    if (!vk_test_available())
        return;
    static const char *env[] = {"WORLDGEN_VK_STAGING", "WORLDGEN_VK_TEXELS"};
    static const char *val[] = {"1", "0"};
    for (int e = 0; e < 2; e++) {
        setenv(env[e], val[e], 1);
        static const uint32_t steps[] = {0, 3, 8};
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            wg_world w = {.size = 50, .octaves = 6, .passes = 3,
                          .steps = steps[i], .sea = 0.25f, .seed = 5};
            vk_test_world_against_scalar(&w);
        }
        unsetenv(env[e]);
    }
}

/* The hydraulic state and routing (16 bytes a cell) are bound both as
 * texel views and as storage buffers; with texels the shaders read only
 * the views, so a world whose state is larger than maxStorageBufferRange
 * but whose single fields fit still runs.  Each storage binding must stay
 * within the range even unused: lavapipe allows 128 MiB, and at 2900 (8.4
 * M cells, 134.56 MB of state) its whole-buffer bindings were a validation
 * error (VUID-VkWriteDescriptorSet-descriptorType-00333) in every run with
 * hydraulic steps from 2897 up to 5792.  On a device with a larger range
 * this is one more large world against scalar. */
WG_TEST(vulkan_hydraulic_state_beyond_storage_range)
{
    if (!vk_test_available())
        return;
    wg_world w = {.size = 2900, .octaves = 1, .passes = 0, .steps = 1,
                  .sea = 0.25f, .seed = 3};
    vk_test_world_against_scalar(&w);
}

/* A region 1048577 cells long needs 65537 workgroups of 16 along it, past
 * the 65535 most devices dispatch (maxComputeWorkGroupCount: lavapipe's
 * both sides, an NVIDIA GPU's y).  The refusal must name the limit and
 * what fits; it had said "the ... cells ... needs 1 x 65537 workgroups"
 * with no way out.  A device that dispatches more runs it. */
WG_TEST(vulkan_region_past_workgroup_count)
{
    if (!vk_test_available())
        return;
    static const char *cmd[] = {
        "./worldgen --size 1048577 --region 0,0,1048577,1 --erosion 0 "
        "--hydraulic 0 --no-image -q --mesh vulkan",
        "./worldgen --size 1048577 --region 0,0,1,1048577 --erosion 0 "
        "--hydraulic 0 --no-image -q --mesh vulkan",
    };
    for (size_t i = 0; i < sizeof cmd / sizeof cmd[0]; i++) {
        wg_cli c = wg_cli_sh(cmd[i]);
        CHECK(c.status == 0 ||
                  (c.status == 1 &&
                   strstr(c.err, "(maxComputeWorkGroupCount): use a "
                          "--region whose cells with the halo are at most") &&
                   strstr(c.err, "or a CPU backend") &&
                   strchr(c.err, '\n') == strrchr(c.err, '\n')),
              "%s: status %d\n%s", cmd[i], c.status, c.err);
        wg_cli_free(&c);
    }
}

/* The staged readback (a discrete GPU's) of a region narrower than its
 * rectangle: it had copied each field one region a row, and the validation
 * layer checks a copy's regions pairwise, so a region 20000 rows tall took
 * 176 s under validation (5000: 11 s; a --size 1048577 region 1048560 tall
 * would not end).  Now one span a field: the same values to the bit, at
 * once.  'timeout' ends the old behaviour with 124. */
WG_TEST(vulkan_staged_tall_region)
{
    if (!vk_test_available())
        return;
    static const char *cmd[] = {
        "WORLDGEN_VK_VALIDATION=1 WORLDGEN_VK_STAGING=1 timeout 60 "
        "./worldgen --size 1048577 --region 5,3,1,20000 --erosion 2 "
        "--hydraulic 1 --mesh scalar,vulkan --require vulkan --check "
        "--no-image -q",
        "WORLDGEN_VK_VALIDATION=1 WORLDGEN_VK_STAGING=1 ./worldgen --size 77 "
        "--region 3,5,60,40 --erosion 7 --hydraulic 3 --mesh scalar,vulkan "
        "--require vulkan --check --no-image -q",
    };
    for (size_t i = 0; i < sizeof cmd / sizeof cmd[0]; i++) {
        wg_cli c = wg_cli_sh(cmd[i]);
        CHECK(c.status == 0 && !strstr(c.err, "vulkan validation"),
              "%s: status %d\n%.2000s", cmd[i], c.status, c.err);
        wg_cli_free(&c);
    }
}

/* Every test here requires a silent validation layer, which says nothing
 * about the barriers unless synchronisation validation is really on: the
 * instance asks for it through VK_EXT_validation_features, chained behind
 * the messenger, and a layer that did not take it (or a chain that lost
 * it) would leave every missing barrier unreported while lavapipe, which
 * runs a command buffer's dispatches one after the other, still computed
 * the right fields.  So: the instance vulkan_dev_instance() makes must
 * report a write-after-write hazard (two fills of one buffer, no barrier),
 * and none once vulkan_barrier() orders the two. */
#ifdef WG_HAVE_VULKAN
static unsigned vk_test_two_fills(int barrier, char *err)
{
    vulkan_dev d = {0};
    vulkan_buf b = {0};
    VkCommandPool pool = VK_NULL_HANDLE;
    unsigned before = 0, count = ~0u;

    setenv("WORLDGEN_VK_VALIDATION", "1", 1);
    int rc = vulkan_dev_instance(&d, err);
    unsetenv("WORLDGEN_VK_VALIDATION");
    if (rc || vulkan_dev_pick(&d, NULL, WG_POWER_HIGH, err) ||
        vulkan_dev_create(&d, err) ||
        vulkan_buf_create(&d, &b, 256, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                          VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, err))
        goto fail;
    VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .queueFamilyIndex = d.family,
    };
    VK_CHECK(vkCreateCommandPool(d.device, &pool_info, NULL, &pool));
    VkCommandBufferAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VkCommandBuffer cmd;
    VK_CHECK(vkAllocateCommandBuffers(d.device, &alloc, &cmd));
    VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
    };
    before = wg_vulkan_validation_count();
    VK_CHECK(vkBeginCommandBuffer(cmd, &begin));
    vkCmdFillBuffer(cmd, b.buf, 0, VK_WHOLE_SIZE, 1);
    if (barrier)
        vulkan_barrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_WRITE_BIT);
    vkCmdFillBuffer(cmd, b.buf, 0, VK_WHOLE_SIZE, 2);
    VK_CHECK(vkEndCommandBuffer(cmd));
    count = wg_vulkan_validation_count() - before;
fail:
    if (pool)
        vkDestroyCommandPool(d.device, pool, NULL);
    if (d.device)
        vulkan_buf_destroy(&d, &b);
    vulkan_dev_destroy(&d);
    return count;
}
#endif

WG_TEST(vulkan_sync_validation_is_on)
{
#ifndef WG_HAVE_VULKAN
    wg_skip("built without Vulkan");
#else
    if (!vk_test_available())
        return;
    char err[WG_ERR_LEN] = "";
    /* The hazard is wanted: its message goes to /dev/null, not the log. */
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    if (null >= 0)
        dup2(null, 2);
    unsigned n = vk_test_two_fills(0, err);
    fflush(stderr);
    if (saved >= 0)
        dup2(saved, 2);
    if (saved >= 0)
        close(saved);
    if (null >= 0)
        close(null);
    CHECK(n != ~0u, "%s", err);
    CHECK(n > 0 && n != ~0u, "two fills of one buffer without a barrier "
          "gave no validation message: synchronisation validation is off, "
          "and the other tests' silent layer proves nothing");
    n = vk_test_two_fills(1, err);
    CHECK(n == 0, "two fills ordered by vulkan_barrier: %u messages%s%s", n,
          n == ~0u ? ": " : "", n == ~0u ? err : "");
#endif
}

/* The index of the first CPU Vulkan device (lavapipe) in --list-devices,
 * or -1 after skipping the test when there is none. */
static int vk_cpu_device(void)
{
    wg_cli c = wg_cli_sh("./worldgen --list-devices | grep -m1 '(cpu' | cut -d: -f1");
    int cpu = c.status == 0 && c.out[0] >= '0' && c.out[0] <= '9' ? atoi(c.out) : -1;
    wg_cli_free(&c);
    if (cpu < 0)
        wg_skip("no CPU Vulkan device (lavapipe) here");
    return cpu;
}

/* A device that keeps its buffers in the host's memory (lavapipe) counts
 * them in the memory check: a world the CPU backends' fields fit in, but
 * not the device's twenty floats a cell, is refused before it is made. */
WG_TEST(vulkan_memory_check_counts_a_shared_devices_buffers)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    /* The CPU device by its index, where a GPU is there too. */
    const int cpu = vk_cpu_device();
    if (cpu < 0)
        return;
    wg_cli c;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ulimit -v 2500000; ./worldgen --size 5000 --mesh vulkan "
             "--gpu %d -q --no-image --hydraulic 1 --erosion 1", cpu);
    c = wg_cli_sh(cmd);
    CHECK(c.status == 1 && strstr(c.err, "worldgen: --size 5000 needs 2.33 GiB for the fields "
                                         "of a 5000x5000 world; its address space limit"),
          "%d: %s", c.status, c.err);
    wg_cli_free(&c);
}

/* Under an address space limit that leaves lavapipe too little for its
 * device (its threads' stacks) or its shader compiler, it had crashed: a
 * segmentation fault, or glibc's "double free or corruption", at limits
 * just below the least that runs.  Each limit from there down by 2 MiB
 * steps is now a failure with the reason, exit 1.  The least is found by
 * halving, at 1 MiB. */
WG_TEST(vulkan_tight_address_space_limit_is_said_not_crashed)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    const int cpu = vk_cpu_device();
    if (cpu < 0)
        return;
    wg_cli c;
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "wg() { (ulimit -v $1; exec ./worldgen --size 16 --mesh vulkan --gpu %d -q "
             "--no-image --hydraulic 2 2>>tight.err) 2>/dev/null; }; rm -f tight.err; "
             "lo=65536 hi=4194304; wg $hi || { echo \"none at $hi\"; exit 0; }; "
             "while [ $((hi - lo)) -gt 1024 ]; do mid=$(((lo + hi) / 2)); "
             "if wg $mid; then hi=$mid; else lo=$mid; fi; done; "
             "rm -f tight.err; for k in 1 2 3 4 5 6 7 8 9 10; do wg $((hi - 2048 * k)); printf '%%s ' $?; done; "
             "grep -c 'address space limit (ulimit -v) leaves it' tight.err; "
             "grep -v '^worldgen: ' tight.err | head -n 3",
             cpu);
    c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "1 1 1 1 1 1 1 1 1 1 10\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* Under an address space limit too small for the driver to start
 * (lavapipe loads LLVM), the failure names the limit: it had been
 * "vkEnumeratePhysicalDevices failed: VK_ERROR_INITIALIZATION_FAILED"
 * alone, which says nothing of the cause. */
WG_TEST(vulkan_failure_under_a_limit_names_the_limit)
{
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    const int cpu = vk_cpu_device();
    if (cpu < 0)
        return;
    wg_cli c = wg_cli_sh("(ulimit -v 65536; exec ./worldgen --size 16 --mesh vulkan -q "
                  "--no-image)");
    CHECK(c.status == 1 && strstr(c.err, "vulkan") &&
              strstr(c.err, "the address space limit (ulimit -v) is 64 MiB"),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
}

/* Under a limit on processes that leaves a CPU device (lavapipe) fewer
 * threads than it starts, it did not fail: it waited for ever in its first
 * submit (ulimit -u 2 to 4 with two rasteriser threads), or failed
 * vkCreateDevice with VK_ERROR_UNKNOWN (ulimit -u 1), naming no cause.
 * Each is now a failure naming the limit, exit 1; with room for its
 * threads it runs.  As root, running worldgen as a user of its own (the
 * limit counts every process of the user). */
WG_TEST(vulkan_process_limit_is_said_not_hung)
{
    if (geteuid() != 0) {
        wg_skip("needs root, to run worldgen as another user");
        return;
    }
    const int cpu = vk_cpu_device();
    if (cpu < 0)
        return;
    char cmd[900];
    snprintf(cmd, sizeof cmd,
             "command -v setpriv >/dev/null && command -v prlimit >/dev/null || "
             "{ echo no-setpriv; exit 0; }; d=$(mktemp -d /tmp/wg-nproc.XXXXXX) && chmod 755 $d && "
             "cp ./worldgen $d/wg && u=$((60000 + $$ %% 4000)); "
             "for n in 1 2 3 4 8; do HOME=$d LP_NUM_THREADS=2 timeout 30 prlimit --nproc=$n "
             "setpriv --reuid=$u --regid=$u --clear-groups $d/wg --size 16 --mesh vulkan "
             "--gpu %d -q --no-image 2>>$d/err; printf '%%s ' $?; done; "
             "grep -c 'needs 4 threads beside this one for a 16x16 world, and only "
             "[0-3] could start (Resource temporarily unavailable: a limit on processes, "
             "ulimit -u or a control group.s pids.max): raise the limit, or use another "
             "backend' $d/err; rm -rf $d",
             cpu);
    wg_cli c = wg_cli_sh(cmd);
    if (strcmp(c.out, "no-setpriv\n") == 0) {
        wg_skip("needs setpriv (util-linux)");
        wg_cli_free(&c);
        return;
    }
    CHECK(strcmp(c.out, "1 1 1 1 0 4\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}
