/* openmp.c: the OpenMP backend, SPEC.md with rows across threads and the
 * inner loops over x in a shape the compiler vectorises: the backend
 * itself, whether it can run here (openmp_probe) and how it ranks
 * (openmp_rank), its opening (the fields' first touch) and closing, and
 * the driver that runs the four stages in one team (openmp_stages).  Each
 * stage is a file of its own: openmp_terrain.c (1), openmp_erosion.c (2),
 * openmp_hydraulic.c (3), openmp_normals.c (4); a further stage is a file,
 * its line in openmp_stage.h (which holds what the stages share) and its
 * line in openmp_stages' table.  The team, and libgomp's view of the CPUs
 * (wg_cpus, wg_thread_unbind), are openmp_team.c's.
 *
 * Every cell is computed with exactly the operations, in exactly the order,
 * SPEC.md writes, so the result is identical to the scalar backend's to the
 * bit for any thread count: threads split rows, vector lanes split columns,
 * and no cell's arithmetic is ever split or reordered.
 *
 * Measured on the 2-core CI machine (AMD EPYC with AVX-512, gcc 12; medians
 * of 7-9 runs, from the --json figures; 6 octaves, 12 passes):
 * - vectorisation: the row kernels are built three times (AVX-512, AVX2,
 *   baseline SSE2) with target_clones and the widest the CPU has runs; the
 *   result is the same to the bit, since every lane does the same IEEE
 *   operations.  floor() and the lattice gathers vectorise only from AVX2
 *   up: terrain at 512 on one thread took 12.1 ms in SSE2, 3.0 ms now.
 * - threads: 512 on one thread 5.3 ms in all, on two 3.1 ms (1.7x: the
 *   stages are short enough at 512 that the team's barriers show).
 * - schedule(static) over rows, against schedule(runtime) with OMP_SCHEDULE,
 *   total at 512 / 2048: static 3.13 / 41.8 ms, dynamic 4.49 / 50.9 ms,
 *   dynamic,8 3.58 / 46.0 ms, guided 3.05 / 45.7 ms.  Every row costs the
 *   same, and static's contiguous bands keep an erosion pass's rows in the
 *   cache of the thread that wrote them.  The terrain and the normals,
 *   which carry no rows from pass to pass, are guided: on the 2-core
 *   Firecracker VM (AMD EPYC, AVX2, nested) a passively waiting thread
 *   takes about 0.1 ms to wake, the whole of the normals at 512.
 */
#define _GNU_SOURCE /* madvise, sched_getaffinity */
#include <sched.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#else
/* Built without OpenMP (make OPENMP=) the pragmas are ignored and each
 * parallel block runs once, on this thread: a team of one. */
static int omp_get_thread_num(void)
{
    return 0;
}

static int omp_get_num_threads(void)
{
    return 1;
}
#endif

#include "backend.h"
#include "cache.h"
#include "openmp_stage.h"
#include "openmp_team.h"
#include "scalar.h"

static size_t openmp_stream_bytes(void);

static int openmp_probe(const wg_job *job, char *err)
{
#ifdef _OPENMP
    return openmp_can_start(openmp_threads(job), err);
#else
    (void)job;
    return wg_fail(err, "built without OpenMP (the compiler lacks -fopenmp)");
#endif
}

const char *wg_openmp_vector(void)
{
#ifdef OPENMP_X86
    /* The resolver of target_clones("avx512f", "avx2", "default") takes
     * the first the CPU supports. */
#ifndef WG_NO_AVX512
    if (__builtin_cpu_supports("avx512f"))
        return "avx512";
#endif
    return __builtin_cpu_supports("avx2") ? "avx2" : "sse2";
#else
    return "scalar";
#endif
}

static int openmp_rank(const wg_job *job)
{
    /* Beats scalar only with more than one thread, and only when there is
     * enough work to pay for waking the team at every pass and step.
     * Measured on the 2-core CI machine with passive waiting, default
     * counts (medians of 7): 16 scalar 0.37 ms, openmp 0.55; 32: 2.0 and
     * 1.6; 64: 12 and 7.1; 128: 82 and 36. */
    int t = openmp_threads(job);
    return t > 1 && wg_scalar_seconds(job) > 3e-3 ? 1 + t : 0;
}

static void openmp_close(void *ctx)
{
    openmp_ctx *s = ctx;
    if (!s)
        return;
    wg_hyd_buffers_free(&s->hb); /* stage 3's, kept to the end */
    wg_fields_free(&s->f);
    wg_field_free(s->other);
    free(s->uxc);
    free(s->uxs);
    free(s->quad);
    free(s);
}

#if defined(OPENMP_X86) && !defined(WG_NO_AVX512)
/* openmp_stream on AVX-512: whole 64-byte lines. */
__attribute__((target("avx512f")))
static void openmp_stream_avx512(float *restrict dst,
                                 const float *restrict src, size_t n)
{
    size_t x = 0;
    for (; x < n && ((uintptr_t)(dst + x) & 63); x++)
        dst[x] = src[x];
    for (; x + 16 <= n; x += 16)
        _mm512_stream_ps(dst + x, _mm512_loadu_ps(src + x));
    for (; x < n; x++)
        dst[x] = src[x];
}
#endif

void openmp_stream(float *restrict dst, const float *restrict src, size_t n)
{
#if defined(OPENMP_X86) && !defined(WG_NO_AVX512)
    if (__builtin_cpu_supports("avx512f")) {
        openmp_stream_avx512(dst, src, n);
        return;
    }
#endif
    size_t x = 0;
#ifdef __SSE__
    for (; x < n && ((uintptr_t)(dst + x) & 15); x++)
        dst[x] = src[x];
    for (; x + 4 <= n; x += 4)
        _mm_stream_ps(dst + x, _mm_loadu_ps(src + x));
#endif
    for (; x < n; x++)
        dst[x] = src[x];
}

/* Fault in bytes [a, b) of block p (other threads take the rest): the
 * whole pages at once (wg_populate), and the partial pages at the ends
 * written.  Where the kernel cannot populate, every byte is written
 * instead.  Measured on this project's 2-core VM, the five fields of 8192
 * (1.34 GB) on two threads: 0.31-0.34 s, against 0.50-0.57 s writing
 * them. */
void openmp_first_touch(char *p, size_t a, size_t b)
{
    if (b <= a)
        return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)(p + a) + page - 1) / page * page;
    uintptr_t hi = (uintptr_t)(p + b) / page * page;
    if (hi > lo && wg_populate(p + a, b - a) == 0) {
        memset(p + a, 0, lo - (uintptr_t)(p + a));
        memset((char *)hi, 0, (uintptr_t)(p + b) - hi);
        return;
    }
    memset(p + a, 0, b - a);
}

static void *openmp_open(const wg_job *job, wg_times *t, char *err)
{
    (void)t;
    const wg_rect all = wg_job_rect(job);
    const uint32_t w = all.w;
    openmp_ctx *s = calloc(1, sizeof *s);
    if (!s)
        goto oom;
    s->job = job;
    s->threads = openmp_threads(job);
    if (openmp_can_start(s->threads, err) != 0) {
        openmp_close(s);
        return NULL;
    }
    /* The team is the size asked for: under OMP_DYNAMIC=true libgomp sized
     * it by the load average, 1 thread of --threads 4 on the shared 2-core
     * machine, the JSON saying 4. */
#ifdef _OPENMP
    omp_set_dynamic(0);
#endif
    s->all = all;
    s->win = wg_job_window(job);
    s->stream_bytes = openmp_stream_bytes();
    if (wg_fields_alloc_rect(&s->f, job->world.size, all) != 0)
        goto oom;
    s->other = wg_field_alloc(wg_rect_cells(all), WG_SLOT_OTHER);
    s->uxc = malloc((size_t)job->world.octaves * w * sizeof(float));
    s->uxs = malloc((size_t)job->world.octaves * w * sizeof(float));
    if (!s->other || !s->uxc || !s->uxs)
        goto oom;
#ifdef OPENMP_X86
    /* The lattice as quads for the terrain, where the CPU has AVX2: 1 MiB
     * made once, beside the fields' first touch (in the terrain stage, its
     * page faults and writing were 0.2-0.5 ms of the 2.5 ms at 512). */
    if (__builtin_cpu_supports("avx2") &&
        !(s->quad = aligned_alloc(64, 4 * sizeof(float) * WG_LATTICE_R *
                                          WG_LATTICE_R)))
        goto oom;
#endif
    /* First touch by the threads that will write each band, so the pages
     * are faulted in setup rather than in the first stage (and, on a
     * multi-socket machine, land on the node of the thread that uses them).
     * With hydraulic steps, ny and nz are left to stage 3, which takes them
     * as buffers of its own (wg_hyd_buffers) and touches them in its
     * bands; nx is the erosion's third buffer. */
    float *fields[5] = {s->f.height, s->f.nx, s->other, s->f.ny, s->f.nz};
    const int touched = job->world.steps > 0 ? 3 : 5;
#pragma omp parallel num_threads(s->threads)
    {
        size_t nt = (size_t)omp_get_num_threads();
        size_t id = (size_t)omp_get_thread_num();
        /* Whole rows a thread, as the stages' static bands. */
        size_t a = (size_t)all.h * id / nt * w * sizeof(float);
        size_t b = (size_t)all.h * (id + 1) / nt * w * sizeof(float);
        for (int k = 0; k < touched; k++)
            openmp_first_touch((char *)fields[k], a, b);
#ifdef OPENMP_X86
        if (s->quad) {
#pragma omp for schedule(static)
            for (uint32_t y = 0; y < WG_LATTICE_R; y += 16) {
                const size_t row = 4 * sizeof(float) * WG_LATTICE_R;
                openmp_first_touch((char *)s->quad, y * row, (y + 16) * row);
                openmp_quads(job->lattice, s->quad, y, y + 16);
            }
        }
#endif
    }
    return s;
oom:
    openmp_close(s);
    char what[160];
    wg_job_describe(job, what, sizeof what);
    wg_fail(err, "openmp: out of memory for %s", what);
    return NULL;
}

/* Whether a stage's output, 'fields' fields of R, is too big to stay in
 * cache, so that streaming it past the cache pays: above a quarter of the
 * last-level cache, and at least 8 MiB.  Streamed, an output that would
 * have stayed in cache costs the stage its whole trip to memory; an output
 * too big to stay saves the read of each line it writes.  Measured, medians
 * of 5: on the AMD EPYC machine (32 MiB of L3) the normals at 512 (3 MiB)
 * streamed 1.0 ms against 0.2 ms, and at 2048 (48 MiB) streaming saved a
 * third; on an Intel Xeon with 480 MiB of L3, at 2048 the normals streamed
 * took 4.2-4.9 ms against 1.7-1.9 ms and the terrain 14.9 against 9.8 ms,
 * and at 4096 either way was the same within 2 ms. */
static size_t openmp_stream_bytes(void)
{
    size_t quarter = wg_cache_bytes(0) / 4; /* of the last level */
    return quarter > ((size_t)8 << 20) ? quarter : (size_t)8 << 20;
}

/* The four stages in one parallel region: the team forms (openmp_team_form,
 * counted as setup), then runs each stage and meets at the barrier after
 * it, where every thread sees whether one failed.  A stage's time is from
 * the opening of the barrier before it to the opening of the one after
 * (taken by the last thread to arrive): thread 0, if it slept, wakes after
 * the others have started the next stage, and its own clock would give
 * that stage's start to the one before (the normals at 512 on four
 * threads read 0.008 ms). */
static int openmp_stages(void *ctx, wg_times *t, char *err)
{
    openmp_ctx *s = ctx;
    static const struct {
        void (*run)(openmp_ctx *, openmp_team *, uint32_t, uint32_t);
        size_t time; /* the stage's column in wg_times */
    } stage[WG_STAGES] = {
        {openmp_terrain, offsetof(wg_times, terrain)},
        {openmp_erosion, offsetof(wg_times, erosion)},
        {openmp_hydraulic, offsetof(wg_times, hydraulic)},
        {openmp_normals, offsetof(wg_times, normals)},
    };
    openmp_team tm;
    memset(&tm, 0, sizeof tm);
    const size_t nt = (size_t)s->threads;
    tm.bar.cpu = malloc(nt * sizeof *tm.bar.cpu);
#ifdef __linux__
    tm.at = malloc(nt * sizeof *tm.at);
    tm.allowed = malloc(nt * sizeof *tm.allowed);
    if (!tm.at || !tm.allowed) {
        free(tm.at);
        free(tm.allowed);
        free(tm.bar.cpu);
        tm.bar.cpu = NULL;
    }
#endif
    if (!tm.bar.cpu)
        return wg_fail(err, "openmp: out of memory for a team of %d threads",
                       s->threads);
    for (size_t i = 0; i < nt; i++)
        atomic_init(&tm.bar.cpu[i], -1);
    tm.bar.stop_if = &tm.failed;
    int patient = 1;
#ifdef __linux__
    cpu_set_t mask;
    patient = sched_getaffinity(0, sizeof mask, &mask) == 0 &&
              (size_t)CPU_COUNT(&mask) >= nt;
#endif
    atomic_init(&tm.bar.patient, patient);
    double t0 = wg_now();
#pragma omp parallel num_threads(s->threads)
    {
        const uint32_t id = (uint32_t)omp_get_thread_num();
        const uint32_t team = (uint32_t)omp_get_num_threads();
        /* Every thread stores the same size before it first waits. */
        atomic_store_explicit(&tm.bar.team, team, memory_order_relaxed);
        openmp_team_form(&tm, id, team);
        double at = 0;
        if (id == 0) {
            at = tm.bar.opened; /* formed */
            t->setup += at - t0;
        }
        for (int k = 0; k < WG_STAGES; k++) {
            if (id == 0 && s->job->progress)
                s->job->progress(wg_stage_names[k], 0);
            stage[k].run(s, &tm, id, team);
            openmp_barrier_wait(&tm.bar, id);
            if (id == 0) {
                const double now = tm.bar.opened;
                *(double *)(void *)((char *)t + stage[k].time) += now - at;
                at = now;
            }
            if (tm.bar.stop)
                break;
        }
    }
#ifdef __linux__
    free(tm.at);
    free(tm.allowed);
#endif
    free(tm.bar.cpu);
    if (atomic_load(&tm.failed))
        return wg_fail(err, "%s", tm.why);
    return 0;
}

static int openmp_readback(void *ctx, wg_fields *out, wg_times *t, char *err)
{
    (void)err;
    openmp_ctx *s = ctx;
    double t0 = wg_now();
    /* Host memory already: hand the fields over, cut to the window. */
    wg_fields_take(&s->f, s->win, out);
    t->readback += wg_now() - t0;
    return 0;
}

/* Its fields, without p and q: pass 1's shares stay in each thread's
 * rows (wg_cpu_host_bytes). */
static double openmp_host_bytes(const wg_job *job)
{
    return wg_cpu_host_bytes(job, 0);
}

const wg_backend wg_backend_openmp = {
    .name = "openmp",
    .summary = "rows across threads, vectorised rows (--threads)",
    .probe = openmp_probe,
    .open = openmp_open,
    .stages = openmp_stages,
    .readback = openmp_readback,
    .close = openmp_close,
    .device = NULL,
    .host_bytes = openmp_host_bytes,
    .rank = openmp_rank,
    .normal_tolerance = 0.0,
};
