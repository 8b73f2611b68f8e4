/* openmp.c: the OpenMP backend, SPEC.md with rows across threads and the
 * inner loops over x in a shape the compiler vectorises: its opening (the
 * fields' first touch) and closing, stages 1, 2 and 4 (the terrain, the
 * erosion, the normals), and the driver that runs the four stages in one
 * team (openmp_stages).  The team, and libgomp's view of the CPUs
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
 * - terrain: octave-outer, x-inner over one row, summing into a thread's
 *   L1-resident row, lets the coordinates, fades and folds vectorise; the
 *   x-dependent half of the turned coordinate (ux * COS, ux * SIN) is the
 *   same for every row and is tabulated once per octave.  On AVX2 the
 *   lattice's four corners come from a table of quads, one 16-byte load a
 *   cell and a transpose, not four 8-lane gathers (about two cycles a lane
 *   on AMD's cores): one thread, medians of 5 against the build before,
 *   run in turn, 2048 at 6 octaves 64 -> 39 ms, at 12 octaves 184 -> 71
 *   ms; 512 5.4 -> 3.4 ms.  Same bits: the arithmetic is the same IEEE
 *   operations in the same order.
 * - stage 3's start (ground, sea, zero sediment) is a vectorised row, not
 *   the scalar backend's cell by cell: 4096 with no steps, one thread,
 *   0.15-0.24 s -> 0.09-0.11 s, most of it now the faults of the water and
 *   sediment fields' first pages.
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
 * - erosion runs its passes in bands with halos, one barrier per 16 passes
 *   instead of one a pass (openmp_erosion), and its border cells are
 *   computed branch-free (openmp_erode_cell): bench.sh -r 7 on that VM,
 *   12 passes, 512: 7.2-7.7 ms before, 3.7-4.7 ms now; 2048: 38.5-40.6 ms
 *   before, 29.5-31.8 ms now.
 * - the hydraulic steps go in pairs, the second a sweep two rows behind
 *   the first in each band (openmp_hyd_pair), so a pair reads the state
 *   from memory once: Intel Xeon VM, two threads, medians in turn, 20
 *   steps at 2048 319 -> 289 ms, 100 at 512 83.9 -> 78.8 ms; the same bits.
 * - outputs larger than the caches are written past them (streaming
 *   stores): terrain at 2048 went from 31.9 ms to 24.8 ms; the normals at
 *   2048 (48 MiB out) are then bound by memory bandwidth, 2.7 ms for 64 MiB
 *   moved, while at 512 all their 4 MiB stays in cache (0.08 ms).
 */
#define _GNU_SOURCE /* madvise, sched_getaffinity */
#include <math.h>
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
#include "hydraulic.h"
#include "openmp_team.h"
#include "scalar.h"

/* The stages run on the rectangle R = wg_job_rect() (the whole world, or
 * a region and its halo) as on a world of R's width and height: R's edges
 * are its border, where neighbours do not exist.  Where R's edge is the
 * world's, that is the SPEC's rule; elsewhere it makes cells near the edge
 * wrong, but no further in than the halo, which the window does not reach
 * (SPEC.md "Windows and tiles").  Only the terrain needs R's place in the
 * world: it samples the noise at world coordinates.
 *
 * uxc, uxs: the x-dependent halves of an octave's turned coordinates, per
 * row of R: tab[o][x] = {ux * COS[o], ux * SIN[o]}, stored as two rows. */
typedef struct openmp_ctx {
    const wg_job *job;
    int threads;
    wg_rect all, win; /* R, and the window read back */
    wg_fields f;  /* R's fields: handed over or cropped by the readback */
    float *other; /* the second erosion buffer */
    float *uxc, *uxs; /* octaves * R's width each */
    float *quad;  /* the lattice's corners, 4 per point (openmp_quads) */
    size_t stream_bytes; /* outputs larger are streamed (openmp_streams) */
    wg_hyd_buffers hb; /* the hydraulic stage's, during the stage */
    struct openmp_progress *hyd_done; /* [threads], during the stage */
} openmp_ctx;

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
    wg_fields_free(&s->f);
    wg_field_free(s->other);
    free(s->uxc);
    free(s->uxs);
    free(s->quad);
    free(s);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Fault in bytes [a, b) of block p (other threads take the rest): the
 * kernel's MADV_POPULATE_WRITE maps the whole pages in one call, without
 * a trap a page, and the partial pages at the ends are written.  Where
 * the kernel lacks it, every byte is written instead.  Measured on this
 * project's 2-core VM, the five fields of 8192 (1.34 GB) on two threads:
 * 0.31-0.34 s, against 0.50-0.57 s writing them. */
static void openmp_first_touch(char *p, size_t a, size_t b)
{
    if (b <= a)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)(p + a) + page - 1) / page * page;
    uintptr_t hi = (uintptr_t)(p + b) / page * page;
    if (hi > lo && madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0) {
        memset(p + a, 0, lo - (uintptr_t)(p + a));
        memset((char *)hi, 0, (uintptr_t)(p + b) - hi);
        return;
    }
    memset(p + a, 0, b - a);
}

#ifdef OPENMP_X86
static void openmp_quads(const float *restrict lat, float *restrict quad,
                         uint32_t y0, uint32_t y1);
#endif

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

static inline float openmp_cell(const float *lat, int ix, int iy)
{
    return lat[(iy & (WG_LATTICE_R - 1)) * WG_LATTICE_R +
               (ix & (WG_LATTICE_R - 1))];
}

static inline void openmp_normal(float l_h, float r_h, float u_h, float d_h,
                                 float kx, float ky, float *nx, float *ny,
                                 float *nz)
{
    float dx = (r_h - l_h) * kx;
    float dz = (d_h - u_h) * ky;
    float l = sqrtf((dx * dx + 1.0f) + dz * dz);
    *nx = -dx / l;
    *ny = 1.0f / l;
    *nz = -dz / l;
}

/* The widest vector's cells (AVX-512's 16 floats; a multiple of AVX2's 8
 * and SSE's 4): a row's cells are made this many at a time.  gcc's
 * vectorised loops make the cells past the last whole vector one at a
 * time, and an inner row of 512 (510 cells) leaves 14, each costing about
 * as much as a whole vector: the row kernels run whole vectors, and the
 * last OPENMP_LANES cells once more as one vector (openmp_tail). */
#define OPENMP_LANES 16

/* Where a row kernel over [x0, x1) stops its whole vectors: the cells from
 * there to x1 are then made as the last OPENMP_LANES of the span again,
 * from x1 - OPENMP_LANES (a kernel whose cells depend only on its inputs,
 * written where it reads nothing, makes them twice to the same bits).
 * Spans shorter than a vector run whole, one cell at a time. */
static inline size_t openmp_tail(size_t x0, size_t x1)
{
    const size_t len = x1 - x0;
    return len < OPENMP_LANES ? x1 : x0 + len / OPENMP_LANES * OPENMP_LANES;
}

/* The normals of one row, from the rows above and below (which are the row
 * itself at the grid's edges). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void openmp_normals_row(const float *restrict row,
                               const float *restrict up,
                               const float *restrict down, uint32_t n,
                               float k1, float k2, float ky,
                               float *restrict ox, float *restrict oy,
                               float *restrict oz)
{
    const size_t last = n - 1, end = n > 2 ? openmp_tail(1, last) : 1;
#pragma omp simd
    for (size_t x = 1; x < end; x++)
        openmp_normal(row[x - 1], row[x + 1], up[x], down[x], k2, ky, &ox[x],
                      &oy[x], &oz[x]);
    if (end < last) /* the tail, as one vector (openmp_tail) */
#pragma omp simd
        for (size_t i = 0; i < OPENMP_LANES; i++) {
            const size_t x = last - OPENMP_LANES + i;
            openmp_normal(row[x - 1], row[x + 1], up[x], down[x], k2, ky,
                          &ox[x], &oy[x], &oz[x]);
        }
    /* The clamped border columns span one cell (k1). */
    openmp_normal(row[0], row[1], up[0], down[0], k1, ky, &ox[0], &oy[0],
                  &oz[0]);
    openmp_normal(row[last - 1], row[last], up[last], down[last], k1, ky,
                  &ox[last], &oy[last], &oz[last]);
}

/* Copy a row of n floats to memory that will not be read again soon,
 * bypassing the cache where the CPU can: a plain store first reads the line
 * it writes (read-for-ownership), so three output fields cost six streams
 * of memory traffic instead of three. */
static void openmp_stream_row(float *restrict dst, const float *restrict src,
                              size_t n, int stream)
{
    if (!stream) {
        memcpy(dst, src, n * sizeof *dst);
        return;
    }
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

static int openmp_streams(const openmp_ctx *s, int fields)
{
    return wg_rect_cells(s->all) * sizeof(float) * (size_t)fields >
           s->stream_bytes;
}

/* One octave over one row of n cells: sum[x] += amp * r(x, y)^2 for every
 * x, y the world's row (uxc, uxs hold the columns' halves). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void openmp_terrain_octave(const wg_consts *c, const float *restrict lat,
                                  uint32_t o, uint32_t y, uint32_t n,
                                  const float *restrict uxc,
                                  const float *restrict uxs,
                                  float *restrict sum)
{
    const float uy = (((float)y * c->inv_n) * c->base) * c->freq[o];
    const float uys = uy * c->sin[o], uyc = uy * c->cos[o];
    const float off = c->offs[o], amp = c->amp[o];
#pragma omp simd
    for (uint32_t x = 0; x < n; x++) {
        float px = (uxc[x] - uys) + off;
        float py = (uxs[x] + uyc) + off;
        float flx = floorf(px), fly = floorf(py);
        int ix = (int)flx, iy = (int)fly;
        float fx = px - flx, fy = py - fly;
        float a = openmp_cell(lat, ix, iy);
        float b = openmp_cell(lat, ix + 1, iy);
        float cc = openmp_cell(lat, ix, iy + 1);
        float d = openmp_cell(lat, ix + 1, iy + 1);
        float wx = (fx * fx) * (3.0f - 2.0f * fx);
        float wy = (fy * fy) * (3.0f - 2.0f * fy);
        float lo = a + (b - a) * wx;
        float hi = cc + (d - cc) * wx;
        float v = lo + (hi - lo) * wy;
        float r = 1.0f - fabsf(2.0f * v - 1.0f);
        sum[x] = sum[x] + amp * (r * r);
    }
}

#ifdef OPENMP_X86
/* The lattice as quads: quad[4 * (Y * R + X)] holds the four corners a
 * cell whose lower corner is (X, Y) interpolates, (X, Y), (X + 1, Y),
 * (X, Y + 1), (X + 1, Y + 1), wrapped as openmp_cell wraps them.  Rows
 * [y0, y1) of the lattice. */
static void openmp_quads(const float *restrict lat, float *restrict quad,
                         uint32_t y0, uint32_t y1)
{
    const uint32_t r = WG_LATTICE_R;
    for (uint32_t y = y0; y < y1; y++) {
        const float *a = lat + (size_t)y * r;                /* (X, Y) */
        const float *c = lat + (size_t)((y + 1) & (r - 1)) * r; /* Y + 1 */
        /* Four points at a time, their quads a 4 x 4 transpose of the two
         * rows at X and at X + 1 (SSE: every x86-64 has it). */
        for (uint32_t x = 0; x + 4 < r; x += 4) {
            __m128 q0 = _mm_loadu_ps(a + x), q1 = _mm_loadu_ps(a + x + 1);
            __m128 q2 = _mm_loadu_ps(c + x), q3 = _mm_loadu_ps(c + x + 1);
            _MM_TRANSPOSE4_PS(q0, q1, q2, q3);
            float *q = quad + 4 * ((size_t)y * r + x);
            _mm_store_ps(q, q0);
            _mm_store_ps(q + 4, q1);
            _mm_store_ps(q + 8, q2);
            _mm_store_ps(q + 12, q3);
        }
        for (uint32_t x = r - 4; x < r; x++) { /* the last, wrapping */
            float *q = quad + 4 * ((size_t)y * r + x);
            q[0] = openmp_cell(lat, (int)x, (int)y);
            q[1] = openmp_cell(lat, (int)x + 1, (int)y);
            q[2] = openmp_cell(lat, (int)x, (int)y + 1);
            q[3] = openmp_cell(lat, (int)x + 1, (int)y + 1);
        }
    }
}

/* openmp_terrain_octave on AVX2, with the lattice fetched as quads: one
 * 16-byte load a cell and a 4 x 4 transpose for every 8 cells, instead of
 * four 8-lane gathers, which on AMD's cores are microcoded at about two
 * cycles a lane and were 80% of the stage.  The arithmetic is the same
 * IEEE operations in the same order as openmp_terrain_octave's (no fused
 * multiply-add: each product is rounded before its sum), so the sums are
 * the same to the bit; the tail of fewer than 8 cells is that function's
 * loop body. */
__attribute__((target("avx2")))
static void openmp_terrain_octave_quads(const wg_consts *c,
                                        const float *restrict quad,
                                        uint32_t o, uint32_t y, uint32_t n,
                                        const float *restrict uxc,
                                        const float *restrict uxs,
                                        float *restrict sum)
{
    const float uy = (((float)y * c->inv_n) * c->base) * c->freq[o];
    const float uys = uy * c->sin[o], uyc = uy * c->cos[o];
    const float off = c->offs[o], amp = c->amp[o];
    const __m256 vuys = _mm256_set1_ps(uys), vuyc = _mm256_set1_ps(uyc);
    const __m256 voff = _mm256_set1_ps(off), vamp = _mm256_set1_ps(amp);
    const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
    const __m256 three = _mm256_set1_ps(3.0f), sign = _mm256_set1_ps(-0.0f);
    const __m256i mask = _mm256_set1_epi32(WG_LATTICE_R - 1);
    /* In chunks of up to 64 cells: first the places, weights and quads'
     * offsets of all (stored: the second loop then reads each offset with
     * a plain load, where taking it out of a vector register costs two
     * operations), then the fetches and the blends. */
    _Alignas(32) int32_t at[64];
    _Alignas(32) float wxs[64], wys[64];
    uint32_t x = 0;
    for (; x + 8 <= n; ) {
        const uint32_t m = n - x >= 64 ? 64 : (n - x) & ~7u;
        for (uint32_t k = 0; k < m; k += 8) {
            __m256 px = _mm256_add_ps(
                _mm256_sub_ps(_mm256_loadu_ps(uxc + x + k), vuys), voff);
            __m256 py = _mm256_add_ps(
                _mm256_add_ps(_mm256_loadu_ps(uxs + x + k), vuyc), voff);
            __m256 flx = _mm256_floor_ps(px), fly = _mm256_floor_ps(py);
            __m256i ix = _mm256_and_si256(_mm256_cvttps_epi32(flx), mask);
            __m256i iy = _mm256_and_si256(_mm256_cvttps_epi32(fly), mask);
            /* 4 * (Y * R + X): the quad's first float */
            _mm256_store_si256(
                (__m256i *)(at + k),
                _mm256_slli_epi32(
                    _mm256_add_epi32(_mm256_slli_epi32(iy, 8), ix), 2));
            __m256 fx = _mm256_sub_ps(px, flx), fy = _mm256_sub_ps(py, fly);
            _mm256_store_ps(wxs + k, _mm256_mul_ps(
                _mm256_mul_ps(fx, fx),
                _mm256_sub_ps(three, _mm256_mul_ps(two, fx))));
            _mm256_store_ps(wys + k, _mm256_mul_ps(
                _mm256_mul_ps(fy, fy),
                _mm256_sub_ps(three, _mm256_mul_ps(two, fy))));
        }
        for (uint32_t k = 0; k < m; k += 8) {
            const int32_t *i = at + k;
            /* Lanes j and j + 4 in one register, then transposed in its
             * two halves: a = (a0 .. a3 | a4 .. a7), and so b, c, d. */
            __m256 r0 = _mm256_insertf128_ps(
                _mm256_castps128_ps256(_mm_load_ps(quad + i[0])),
                _mm_load_ps(quad + i[4]), 1);
            __m256 r1 = _mm256_insertf128_ps(
                _mm256_castps128_ps256(_mm_load_ps(quad + i[1])),
                _mm_load_ps(quad + i[5]), 1);
            __m256 r2 = _mm256_insertf128_ps(
                _mm256_castps128_ps256(_mm_load_ps(quad + i[2])),
                _mm_load_ps(quad + i[6]), 1);
            __m256 r3 = _mm256_insertf128_ps(
                _mm256_castps128_ps256(_mm_load_ps(quad + i[3])),
                _mm_load_ps(quad + i[7]), 1);
            __m256 t0 = _mm256_unpacklo_ps(r0, r1);
            __m256 t1 = _mm256_unpackhi_ps(r0, r1);
            __m256 t2 = _mm256_unpacklo_ps(r2, r3);
            __m256 t3 = _mm256_unpackhi_ps(r2, r3);
            __m256 a = _mm256_shuffle_ps(t0, t2, 0x44);
            __m256 b = _mm256_shuffle_ps(t0, t2, 0xee);
            __m256 cc = _mm256_shuffle_ps(t1, t3, 0x44);
            __m256 d = _mm256_shuffle_ps(t1, t3, 0xee);
            __m256 wx = _mm256_load_ps(wxs + k), wy = _mm256_load_ps(wys + k);
            __m256 lo = _mm256_add_ps(a, _mm256_mul_ps(_mm256_sub_ps(b, a), wx));
            __m256 hi = _mm256_add_ps(cc,
                                      _mm256_mul_ps(_mm256_sub_ps(d, cc), wx));
            __m256 v = _mm256_add_ps(lo,
                                     _mm256_mul_ps(_mm256_sub_ps(hi, lo), wy));
            __m256 f = _mm256_andnot_ps(
                sign, _mm256_sub_ps(_mm256_mul_ps(two, v), one));
            __m256 r = _mm256_sub_ps(one, f);
            float *out = sum + x + k;
            _mm256_storeu_ps(out, _mm256_add_ps(_mm256_loadu_ps(out),
                                              _mm256_mul_ps(vamp,
                                                            _mm256_mul_ps(r, r))));
        }
        x += m;
    }
    for (; x < n; x++) {
        float px = (uxc[x] - uys) + off;
        float py = (uxs[x] + uyc) + off;
        float flx = floorf(px), fly = floorf(py);
        int ix = (int)flx & (WG_LATTICE_R - 1), iy = (int)fly & (WG_LATTICE_R - 1);
        const float *q = quad + 4 * ((size_t)iy * WG_LATTICE_R + (size_t)ix);
        float fx = px - flx, fy = py - fly;
        float wx = (fx * fx) * (3.0f - 2.0f * fx);
        float wy = (fy * fy) * (3.0f - 2.0f * fy);
        float lo = q[0] + (q[1] - q[0]) * wx;
        float hi = q[2] + (q[3] - q[2]) * wx;
        float v = lo + (hi - lo) * wy;
        float r = 1.0f - fabsf(2.0f * v - 1.0f);
        sum[x] = sum[x] + amp * (r * r);
    }
}
#endif

/* Stage 1, run by every thread of the team (openmp_stages). */
static void openmp_terrain(openmp_ctx *s, openmp_team *tm, uint32_t id,
                           uint32_t nt)
{
    const wg_consts *c = &s->job->consts;
    const uint32_t n = s->all.w, rows = s->all.h, octaves = c->octaves;
    const uint32_t x0 = s->all.x, y0 = s->all.y; /* R in the world */
    const float *lat = s->job->lattice;
    float *h = s->f.height;
    const int stream = openmp_streams(s, 1);
#ifdef OPENMP_X86
    const int quads = s->quad != NULL; /* made by openmp_open */
#endif
    /* ux depends on x alone: tabulate its turned halves once, an octave
     * a thread. */
    for (uint32_t o = id; o < octaves; o += nt)
        for (uint32_t x = 0; x < n; x++) {
            float ux = (((float)(x0 + x) * c->inv_n) * c->base) * c->freq[o];
            s->uxc[(size_t)o * n + x] = ux * c->cos[o];
            s->uxs[(size_t)o * n + x] = ux * c->sin[o];
        }
    /* Each thread sums a row in an L1-resident buffer, then writes it out
     * once. */
    float *sum = malloc((size_t)n * sizeof *sum);
    if (!sum)
        openmp_team_fail(tm, "openmp: out of memory for the terrain's rows");
    openmp_barrier_wait(&tm->bar, id); /* the tables are whole */
    /* guided, not static: rows carry nothing from one stage to the next
     * here, and a thread that starts late (sharing its core with another
     * program) leaves its rows to the others instead of holding the stage
     * up. */
#pragma omp for schedule(guided) nowait
    for (uint32_t y = 0; y < rows; y++) {
        if (!sum)
            continue;
        memset(sum, 0, n * sizeof *sum); /* sum = 0 */
        for (uint32_t o = 0; o < octaves; o++) {
            const float *uxc = s->uxc + (size_t)o * n;
            const float *uxs = s->uxs + (size_t)o * n;
#ifdef OPENMP_X86
            if (quads) {
                openmp_terrain_octave_quads(c, s->quad, o, y0 + y, n, uxc,
                                            uxs, sum);
                continue;
            }
#endif
            openmp_terrain_octave(c, lat, o, y0 + y, n, uxc, uxs, sum);
        }
        const float inv_norm = c->inv_norm;
#pragma omp simd
        for (uint32_t x = 0; x < n; x++)
            sum[x] = sum[x] * inv_norm;
        openmp_stream_row(h + (size_t)y * n, sum, n, stream);
    }
    free(sum);
#ifdef __SSE__
    if (stream)
        _mm_sfence(); /* streaming stores are weakly ordered: publish them */
#endif
}

/* The SPEC exchange of a cell of height h with one neighbour, as selects. */
static inline float openmp_exchange(float h, float nb, float t, float rate)
{
    float d = h - nb;
    float over = d - t, under = d + t;
    float e = d > t ? over : 0.0f;
    e = d < -t ? under : e;
    return e * rate;
}

/* A neighbour that does not exist, given as the cell's own height h,
 * adds exactly nothing: d = h - h = +0 (or NaN), neither over T nor under
 * -T, so the exchange is +0 * C = +0, and moved + (+0) = moved, since
 * moved is never -0 (it starts at +0, and an exchange is +0 or a nonzero
 * e * C far above the subnormals).  So the border cells run the interior's
 * arithmetic, branch-free, and give the SPEC's sum, which skips those
 * neighbours, to the bit.  The first version walked the neighbours with
 * branches, one cell at a time: the 2 end cells of every row and the first
 * and last rows cost a third of the vector loop over the other cells (perf,
 * 512). */
static inline float openmp_erode_cell(float h, float ul, float u, float ur,
                                      float l, float r, float dl, float d,
                                      float dr, float t, float rate)
{
    float moved = 0.0f;
    moved = moved + openmp_exchange(h, ul, t, rate);
    moved = moved + openmp_exchange(h, u, t, rate);
    moved = moved + openmp_exchange(h, ur, t, rate);
    moved = moved + openmp_exchange(h, l, t, rate);
    moved = moved + openmp_exchange(h, r, t, rate);
    moved = moved + openmp_exchange(h, dl, t, rate);
    moved = moved + openmp_exchange(h, d, t, rate);
    moved = moved + openmp_exchange(h, dr, t, rate);
    return h - moved;
}

/* Cell x of a row of n cells, any x: the neighbours outside the grid (up
 * or down NULL, x at an end) stand in as the cell itself. */
static inline float openmp_erode_any(const float *row, const float *up,
                                     const float *down, uint32_t n,
                                     uint32_t x, float t, float rate)
{
    const float h = row[x];
    const int l = x > 0, r = x + 1 < n;
    const float ul = up && l ? up[x - 1] : h, u = up ? up[x] : h;
    const float ur = up && r ? up[x + 1] : h;
    const float dl = down && l ? down[x - 1] : h, d = down ? down[x] : h;
    const float dr = down && r ? down[x + 1] : h;
    return openmp_erode_cell(h, ul, u, ur, l ? row[x - 1] : h,
                             r ? row[x + 1] : h, dl, d, dr, t, rate);
}

/* One erosion pass of a row of n cells into out, from the row and the rows
 * above and below it (NULL outside the grid). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void openmp_erode_row(const float *restrict row,
                             const float *restrict up,
                             const float *restrict down, uint32_t n,
                             float t, float rate, float *restrict out)
{
    if (n > 2 && up && down) {
        /* The cells between the ends of an inner row, whole vectors, then
         * the tail as one (openmp_tail). */
        const size_t end = openmp_tail(1, n - 1);
#pragma omp simd
        for (size_t x = 1; x < end; x++)
            out[x] = openmp_erode_cell(row[x], up[x - 1], up[x], up[x + 1],
                                       row[x - 1], row[x + 1], down[x - 1],
                                       down[x], down[x + 1], t, rate);
        if (end < n - 1)
#pragma omp simd
            for (size_t i = 0; i < OPENMP_LANES; i++) {
                const size_t x = n - 1 - OPENMP_LANES + i;
                out[x] = openmp_erode_cell(
                    row[x], up[x - 1], up[x], up[x + 1], row[x - 1],
                    row[x + 1], down[x - 1], down[x], down[x + 1], t, rate);
            }
    } else if (n > 2) {
        /* The first or last row: a missing row above or below stands in
         * as the cell itself. */
        const int hu = up != NULL, hd = down != NULL;
        const float *restrict u = hu ? up : row, *restrict d = hd ? down : row;
#pragma omp simd
        for (size_t x = 1; x < n - 1; x++) {
            float h = row[x];
            out[x] = openmp_erode_cell(
                h, hu ? u[x - 1] : h, hu ? u[x] : h, hu ? u[x + 1] : h,
                row[x - 1], row[x + 1], hd ? d[x - 1] : h, hd ? d[x] : h,
                hd ? d[x + 1] : h, t, rate);
        }
    }
    out[0] = openmp_erode_any(row, up, down, n, 0, t, rate);
    if (n > 1)
        out[n - 1] = openmp_erode_any(row, up, down, n, n - 1, t, rate);
}

/* Where a thread keeps the state after pass j of a group (j = -1: the
 * group's input) of row r: its own rows [y0, y1) in the shared buffer of
 * that pass, the rows of its halo (up to the group's length - 1 on either
 * side) in its own ring. */
typedef struct openmp_erode_band {
    const float *in;  /* the group's input, read only during the group */
    float *buf[2];    /* the shared buffers of even and odd passes */
    float *halo[2][2]; /* [pass parity][0 above y0, 1 from y1 down] */
    uint32_t n, y0, y1;
} openmp_erode_band;

static inline float *openmp_erode_at(const openmp_erode_band *b, int j,
                                     uint32_t r)
{
    if (j < 0)
        return (float *)b->in + (size_t)r * b->n;
    if (r < b->y0)
        return b->halo[j & 1][0] + (size_t)(b->y0 - 1 - r) * b->n;
    if (r >= b->y1)
        return b->halo[j & 1][1] + (size_t)(r - b->y1) * b->n;
    return b->buf[j & 1] + (size_t)r * b->n;
}

/* The longest group of passes run without a barrier: its halo is
 * group - 1 rows on either side of a band, computed by both neighbours
 * (measured at 512, 12 passes, warm, median of 30: 2.9 ms with a
 * barrier a pass, 2.4 ms with one group: each barrier cost the wake of
 * a passively waiting thread; the halo adds 11 rows to a thread's 256,
 * 4 %).  With the team's spinning barrier (openmp_stages) a group of 1,
 * 4 or 16 takes the same time at 512 and 2048 (medians of 9 and 5). */
#define OPENMP_GROUP 16

/* Stage 2 by bands: each thread erodes its band of rows for a group of
 * passes with no barrier in between, computing as well the rows of its
 * neighbours' bands that its band's next passes read (a halo that shrinks
 * by a row a pass), in a ring of its own, so that no thread reads a row
 * that another writes during the group.  The group reads its input and
 * ping-pongs between the other two of three buffers (the third is the
 * normals' nx, free until the normals write all of it: no memory more);
 * one barrier between groups.  Every cell is computed by the same function of the same
 * neighbours, so the result is the same to the bit whichever thread, and
 * however many times, computes it. */
static void openmp_erosion(openmp_ctx *s, openmp_team *tm, uint32_t id,
                           uint32_t nt)
{
    const wg_consts *c = &s->job->consts;
    const uint32_t n = s->all.w, rows = s->all.h;
    const uint32_t passes = s->job->world.passes;
    /* The group: at most OPENMP_GROUP passes, and a halo at most a quarter
     * of the thinnest band (so thin bands, many threads on few rows, stay
     * cheap: a group of 1 is a barrier a pass). */
    uint32_t group = rows / nt / 4 + 1;
    group = group > OPENMP_GROUP ? OPENMP_GROUP : group;
    openmp_erode_band b;
    b.n = n;
    b.y0 = (uint32_t)((uint64_t)rows * id / nt);
    b.y1 = (uint32_t)((uint64_t)rows * (id + 1) / nt);
    const size_t hrows = group - 1;
    float *ring = hrows ? malloc(4 * hrows * n * sizeof(float)) : NULL;
    if (hrows && !ring)
        openmp_team_fail(tm, "openmp: out of memory for the erosion's halos");
    for (int k = 0; k < 4; k++)
        b.halo[k / 2][k % 2] = ring ? ring + (size_t)k * hrows * n : NULL;
    /* Read by every thread before the barrier; thread 0 writes them back
     * at the end. */
    float *in = s->f.height, *p = s->other, *q = s->f.nx;
    openmp_barrier_wait(&tm->bar, id);
    const int failed = tm->bar.stop;
    for (uint32_t done = 0; done < passes && !failed;) {
        const uint32_t g = passes - done < group ? passes - done : group;
        b.in = in;
        b.buf[0] = p;
        b.buf[1] = q;
        for (uint32_t j = 0; j < g; j++) {
            const uint32_t h = g - 1 - j; /* the halo of pass j */
            const uint32_t lo = b.y0 > h ? b.y0 - h : 0;
            const uint32_t hi = rows - b.y1 > h ? b.y1 + h : rows;
            for (uint32_t r = lo; r < hi; r++)
                openmp_erode_row(
                    openmp_erode_at(&b, (int)j - 1, r),
                    r > 0 ? openmp_erode_at(&b, (int)j - 1, r - 1) : NULL,
                    r + 1 < rows ? openmp_erode_at(&b, (int)j - 1, r + 1)
                                 : NULL,
                    n, c->talus, c->rate, openmp_erode_at(&b, (int)j, r));
        }
        /* The group's result is in the buffer of its last pass; the next
         * group reads it, and ping-pongs between the other two. */
        float *out = b.buf[(g - 1) & 1], *other = b.buf[g & 1];
        q = in;
        p = other;
        in = out;
        done += g;
        if (done < passes)
            openmp_barrier_wait(&tm->bar, id);
    }
    free(ring);
    if (id == 0 && !failed) {
        s->f.height = in;
        s->other = p;
        s->f.nx = q;
    }
}

/* Stage 3, the fast way to the same bits.  SPEC.md's pass 2 recomputes,
 * for each of a cell's eight neighbours, the share of water it sends the
 * cell (its weight times its Q) and the cell's own shares; here pass 1
 * computes every cell's eight shares once, in a ring of three rows that
 * stays in the cache, and pass 2 reads them.  A share is the SPEC's
 * ftz(weight(d, g, P) * Q) when the surface drop d > 0 and +0 otherwise; a
 * cell adds w[k] * share and s[k] * share for every neighbour, which for a
 * neighbour that sends nothing adds +0 and changes no bit (water and
 * sediment are never negative), so the sums are the SPEC's.  scalar.c keeps
 * the SPEC's plain form, and the tests hold the two to the bit.  Measured
 * on one thread (AVX2, medians of 3): 19.8 ns a cell-step at 512 and 18.8
 * at 2048 with the SPEC's form, 13.4 and 16.4 with the shares.
 *
 * Directions are numbered in SPEC order, i = 0..7 for (dy, dx) = (-1,-1),
 * (-1,0), (-1,1), (0,-1), (0,1), (1,-1), (1,0), (1,1); the neighbour in
 * direction i sees the cell in direction 7 - i. */
static const int openmp_dx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
static const int openmp_dy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};

/* A thread's ring: the shares of three rows, and the water
 * surface b + w of three rows (pass 1 reads each row's surface three
 * times, and each cell's nine times), row y in slot (y + 1) % 3; NULL rows
 * stand outside the world.
 *
 * The surface rows have a ghost cell at each end, and 'none' is a row of
 * ghosts for the rows outside the world: a ghost's surface is +inf, so a
 * cell's drop towards it, ftz(h - inf) flushed as pass 1 flushes drops,
 * is +0, exactly as if the neighbour were not there (it adds +0 to every
 * sum and gets a share of +0).  So pass 1 runs the vector kernel over
 * every cell of every row; it had taken the cell-by-cell path on the
 * border, a tenth of the stage at 512. */
typedef struct openmp_ring {
    float *share[3][8];
    float *surf[3];
    const float *none;
} openmp_ring;

/* The rows pass 1 or 2 of row y reads: the state rows y-1..y+1 (NULL
 * outside the world) and, for pass 2, the ring and the row's running mean
 * of the water (updated in place). */
typedef struct openmp_hyd_in {
    const float *b[3], *w[3], *s[3];
    const float *h[3]; /* pass 1: the surface rows, b + w */
    const float *share[3][8];
    float *a;
} openmp_hyd_in;

/* SPEC weight(d, g, p) for d = +0 or d >= EPS, with one flush where the
 * SPEC has three: t = (d g) p lies in [0, about 1], so if t or t^2 is
 * below EPS, t^4 is below EPS too and the last flush makes it +0 as the
 * SPEC's earlier ones would; otherwise those flushes change nothing.  The
 * same bits whether the CPU keeps subnormals or flushes them (an
 * unflushed t^4 may be subnormal; the last flush takes it to +0 either
 * way).  Four operations fewer of the nine a neighbour: a cell-step at
 * 512 on one thread went from 10.6 to 10.1 ns (medians of 9, 100 steps). */
static inline float openmp_hyd_weight(float d, float g, float p, float eps)
{
    float t = (d * g) * p, t2 = t * t;
    return wg_hyd_ftz_nn(t2 * t2, eps);
}

/* The statements for the first of a loop pass's J cells (j = 0), and for
 * the others (j = 1 .. J - 1) when J is larger: J is a constant where it is
 * used, so the tests fold away and gcc vectorises the loop (loops over j
 * stopped it: "two or more consecutive inner loops"). */
#define OMP_J(...)                                                           \
    do {                                                                     \
        {                                                                    \
            const int j = 0;                                                 \
            __VA_ARGS__;                                                     \
        }                                                                    \
        if (J > 1) {                                                         \
            const int j = 1;                                                 \
            __VA_ARGS__;                                                     \
        }                                                                    \
        if (J > 2) {                                                         \
            const int j = 2;                                                 \
            __VA_ARGS__;                                                     \
        }                                                                    \
        if (J > 3) {                                                         \
            const int j = 3;                                                 \
            __VA_ARGS__;                                                     \
        }                                                                    \
    } while (0)

/* Pass 1 of the cells x0 + j * off + [0, x1 - x0) of a row for j < J,
 * every cell with eight neighbours, ghosts standing in for those outside
 * the world (openmp_ring).  Its first half is hydraulic.h's
 * wg_hyd_route_row; sharing it through an inline helper with array
 * out-parameters stopped gcc 12 from vectorising either loop (measured:
 * 8.4 to 46 ns a cell-step at 2048), so the two stay apart and the tests
 * hold them to the same bits.
 *
 * Each pass of the loop makes J cells, one from each of J stretches of the
 * row, their operations interleaved: a cell's operations are one long
 * chain (the steepest drop, rcp, the weights' sum, rcp again, the shares),
 * longer than the CPU's scheduler looks ahead, and the other stretches'
 * cells give it independent work beside it.
 *
 * The steepest drop is the SPEC's running max taken as a tree: every
 * d * g is +0 or positive (a drop below EPS, or towards a higher
 * neighbour, is flushed to +0 here, as pass 1 needs only d > 0), and the
 * max of such numbers is the greatest of them whatever the order, so the
 * bits are the SPEC's and the chain is three maxes long instead of eight. */
static inline __attribute__((always_inline)) void
openmp_hyd_route_kernel(const wg_hyd_consts *k, const openmp_hyd_in *in,
                        size_t x0, size_t x1, size_t off, const int J,
                        float *const share[8])
{
    const float eps = k->eps, gd = k->slope_d;
    const float *restrict hu = in->h[0], *restrict h1 = in->h[1],
                          *restrict hd = in->h[2];
    const float *restrict w = in->w[1];
    float *restrict s0 = share[0], *restrict s1 = share[1],
                    *restrict s2 = share[2], *restrict s3 = share[3],
                    *restrict s4 = share[4], *restrict s5 = share[5],
                    *restrict s6 = share[6], *restrict s7 = share[7];
#pragma omp simd
    for (size_t x = x0; x < x1; x++) {
        float h[4], d[8][4], dmax[4], sum[4], p[4], wt[8][4], q[4];
        OMP_J(h[j] = h1[x + j * off]);
#define OMP_D(i, row, dx)                                                    \
        OMP_J(d[i][j] = wg_hyd_ftz_nn(h[j] - row[x + j * off + dx], eps))
        OMP_D(0, hu, -1); OMP_D(1, hu, 0); OMP_D(2, hu, 1);
        OMP_D(3, h1, -1); OMP_D(4, h1, 1);
        OMP_D(5, hd, -1); OMP_D(6, hd, 0); OMP_D(7, hd, 1);
#undef OMP_D
        /* Corners (0, 2, 5, 7) weighted by GD, sides by 1. */
        OMP_J(dmax[j] = wg_hyd_max(
                  wg_hyd_max(wg_hyd_max(d[0][j] * gd, d[1][j]),
                             wg_hyd_max(d[2][j] * gd, d[3][j])),
                  wg_hyd_max(wg_hyd_max(d[4][j], d[5][j] * gd),
                             wg_hyd_max(d[6][j], d[7][j] * gd))));
        OMP_J(p[j] = wg_hyd_inv(dmax[j]); sum[j] = 0.0f);
#define OMP_W(i, g)                                                          \
        OMP_J(wt[i][j] = openmp_hyd_weight(d[i][j], g, p[j], eps);           \
              sum[j] = sum[j] + wt[i][j])
        OMP_W(0, gd); OMP_W(1, 1.0f); OMP_W(2, gd); OMP_W(3, 1.0f);
        OMP_W(4, 1.0f); OMP_W(5, gd); OMP_W(6, 1.0f); OMP_W(7, gd);
#undef OMP_W
        OMP_J(q[j] = wg_hyd_route(k, dmax[j], sum[j], w[x + j * off]));
        OMP_J(const size_t xx = x + j * off;
              s0[xx] = wg_hyd_ftz_nn(wt[0][j] * q[j], eps);
              s1[xx] = wg_hyd_ftz_nn(wt[1][j] * q[j], eps);
              s2[xx] = wg_hyd_ftz_nn(wt[2][j] * q[j], eps);
              s3[xx] = wg_hyd_ftz_nn(wt[3][j] * q[j], eps);
              s4[xx] = wg_hyd_ftz_nn(wt[4][j] * q[j], eps);
              s5[xx] = wg_hyd_ftz_nn(wt[5][j] * q[j], eps);
              s6[xx] = wg_hyd_ftz_nn(wt[6][j] * q[j], eps);
              s7[xx] = wg_hyd_ftz_nn(wt[7][j] * q[j], eps));
    }
}

/* Pass 1 of the cells [x0, x1) of a row: four stretches of whole vectors
 * interleaved, then what is left as two halves (sharing the middle cell
 * when the span is odd: pass 1 writes only the cell's shares, from inputs,
 * so a cell made twice gets the same bits).  Two stretches had been 7.0
 * cycles a cell in llvm-mca's model of pass 1 (Sapphire Rapids), bound by
 * the chain; four are 4.9, with the tree above. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void openmp_hyd_route_cells(const wg_hyd_consts *k,
                                   const openmp_hyd_in *in, size_t x0,
                                   size_t x1, float *const share[8])
{
    const size_t m = (x1 - x0) / (4 * OPENMP_LANES) * OPENMP_LANES;
    if (m > 0)
        openmp_hyd_route_kernel(k, in, x0, x0 + m, m, 4, share);
    x0 += 4 * m;
    if (x0 < x1) {
        const size_t len = x1 - x0, half = (len + 1) / 2;
        openmp_hyd_route_kernel(k, in, x0, x0 + half, len - half, 2, share);
    }
}

/* Pass 2 of one cell, with only the neighbours that exist. */
static void openmp_hyd_step_cell(const wg_hyd_consts *k,
                                 const openmp_hyd_in *in, size_t x,
                                 const int has[8], float *bo, float *wo,
                                 float *so)
{
    const float eps = k->eps, b = in->b[1][x];
    float win = 0.0f, sin = 0.0f, drop = 0.0f, creep = 0.0f;
    for (int i = 0; i < 8; i++) {
        if (!has[i])
            continue;
        size_t xx = x + (size_t)(ptrdiff_t)openmp_dx[i];
        int r = 1 + openmp_dy[i], corner = openmp_dx[i] && openmp_dy[i];
        float f = in->share[r][7 - i][xx];
        win = win + in->w[r][xx] * f;
        sin = sin + in->s[r][xx] * f;
        float e = wg_hyd_ftz(b - in->b[r][xx], eps);
        drop = wg_hyd_max(drop, e * (corner ? k->slope_d : 1.0f));
        creep = creep + e * (corner ? k->creep_d : k->creep_o);
    }
    /* 'out', the sum of the cell's own shares in SPEC order (a share to
     * a neighbour that is not there is +0, which adds nothing). */
    float out = 0.0f;
    for (int i = 0; i < 8; i++)
        out = out + in->share[1][i][x];
    wg_hyd_finish(k, b, in->w[1][x], in->s[1][x], out, win, sin,
                  drop, creep, &bo[x], &wo[x], &so[x], &in->a[x]);
}

/* One neighbour's terms of pass 2 for the cell of ground b: the water and
 * the sediment it sends (its share f of them), and the drop and the creep
 * towards it (g, c: side or corner); at index xk of its rows, added into
 * the cell's sums win, sin, drop and creep.  The vector kernel and the edge
 * cells (openmp_hyd_step_side) share it. */
#define OMP_NB(f, wr, zr, br, xk, g, c, b, win, sin, drop, creep)             \
    do {                                                                     \
        win = win + wr[xk] * f[xk];                                          \
        sin = sin + zr[xk] * f[xk];                                          \
        float e_ = wg_hyd_ftz(b - br[xk], eps);                              \
        drop = wg_hyd_max(drop, e_ * (g));                                   \
        creep = creep + e_ * (c);                                            \
    } while (0)

/* Pass 2 of the cells [x0, x1) of a row, and with J = 2 of the cells off
 * further on too, interleaved as in pass 1 (openmp_hyd_route_cells); none
 * of them in the first or the last column: with the row above if 'up',
 * the row below if 'down' (constants where it is inlined, so each case is
 * its own loop).  The halves must not overlap: the running mean a is
 * updated in place. */
static inline __attribute__((always_inline)) void
openmp_hyd_step_kernel(const wg_hyd_consts *k, const openmp_hyd_in *in,
                       size_t x0, size_t x1, size_t off, const int J,
                       float *restrict bo, float *restrict wo,
                       float *restrict so, const int up, const int down)
{
    const wg_hyd_consts kk = *k;
    const float eps = kk.eps, gd = kk.slope_d;
    const float co = kk.creep_o, cd = kk.creep_d;
    const float *restrict b0 = in->b[0], *restrict b1 = in->b[1],
                          *restrict b2 = in->b[2];
    const float *restrict w0 = in->w[0], *restrict w1 = in->w[1],
                          *restrict w2 = in->w[2];
    const float *restrict z0 = in->s[0], *restrict z1 = in->s[1],
                          *restrict z2 = in->s[2];
    /* The share each neighbour sends the cell: direction 7 - i of the
     * neighbour in direction i. */
    const float *restrict f0 = in->share[0][7], *restrict f1 = in->share[0][6],
                          *restrict f2 = in->share[0][5];
    const float *restrict f3 = in->share[1][4], *restrict f4 = in->share[1][3];
    const float *restrict f5 = in->share[2][2], *restrict f6 = in->share[2][1],
                          *restrict f7 = in->share[2][0];
    const float *restrict o0 = in->share[1][0], *restrict o1 = in->share[1][1],
                          *restrict o2 = in->share[1][2], *restrict o3 = in->share[1][3],
                          *restrict o4 = in->share[1][4], *restrict o5 = in->share[1][5],
                          *restrict o6 = in->share[1][6], *restrict o7 = in->share[1][7];
    float *restrict am = in->a;
#pragma omp simd
    for (size_t x = x0; x < x1; x++) {
        float b[2], win[2], sin[2], drop[2], creep[2], out[2];
        OMP_J(b[j] = b1[x + j * off];
              win[j] = sin[j] = drop[j] = creep[j] = out[j] = 0.0f);
        /* 'out' is summed here from the cell's own shares, in SPEC
         * order, not at the end of pass 1: there it lengthened the chain
         * of dependent operations that bounds pass 1 (the shares wait for
         * rcp(sum), which waits for the weights); here it runs beside the
         * neighbours' sums.  Two threads, 400 steps at 512: 0.575 ->
         * 0.544 s (medians of 9, run in turn); one thread at 2048 the
         * same; the same bits. */
#define OMP_OUT(o)                                                           \
        OMP_J(out[j] = out[j] + o[x + j * off])
        OMP_OUT(o0); OMP_OUT(o1); OMP_OUT(o2); OMP_OUT(o3);
        OMP_OUT(o4); OMP_OUT(o5); OMP_OUT(o6); OMP_OUT(o7);
#undef OMP_OUT
        /* The neighbours that exist, in SPEC order. */
#define OMP_NBJ(f, wr, zr, br, dx, g, c)                                     \
        OMP_J(OMP_NB(f, wr, zr, br, x + j * off + dx, g, c, b[j], win[j],  \
                     sin[j], drop[j], creep[j]))
        if (up) {
            OMP_NBJ(f0, w0, z0, b0, -1, gd, cd);
            OMP_NBJ(f1, w0, z0, b0, 0, 1.0f, co);
            OMP_NBJ(f2, w0, z0, b0, 1, gd, cd);
        }
        OMP_NBJ(f3, w1, z1, b1, -1, 1.0f, co);
        OMP_NBJ(f4, w1, z1, b1, 1, 1.0f, co);
        if (down) {
            OMP_NBJ(f5, w2, z2, b2, -1, gd, cd);
            OMP_NBJ(f6, w2, z2, b2, 0, 1.0f, co);
            OMP_NBJ(f7, w2, z2, b2, 1, gd, cd);
        }
#undef OMP_NBJ
        float nb[2], nw[2], ns[2], na[2];
        OMP_J(na[j] = am[x + j * off]);
        OMP_J(wg_hyd_finish(&kk, b[j], w1[x + j * off], z1[x + j * off],
                            out[j], win[j], sin[j], drop[j], creep[j],
                            &nb[j], &nw[j], &ns[j], &na[j]));
        OMP_J(bo[x + j * off] = nb[j]; wo[x + j * off] = nw[j];
              so[x + j * off] = ns[j]; am[x + j * off] = na[j]);
    }
}

/* openmp_hyd_step_kernel with the rows that exist as constants: the cells
 * [x0, x1) as two interleaved halves when there are two whole vectors or
 * more, and what is left over alone. */
static inline __attribute__((always_inline)) void
openmp_hyd_step_rows(const wg_hyd_consts *k, const openmp_hyd_in *in,
                     size_t x0, size_t x1, float *restrict bo,
                     float *restrict wo, float *restrict so, int up, int down)
{
    const size_t m = (x1 - x0) / (2 * OPENMP_LANES) * OPENMP_LANES;
#define OMP_ROWS(a0, a1, off, J)                                             \
    do {                                                                     \
        if (up && down)                                                      \
            openmp_hyd_step_kernel(k, in, a0, a1, off, J, bo, wo, so, 1, 1); \
        else if (up)                                                         \
            openmp_hyd_step_kernel(k, in, a0, a1, off, J, bo, wo, so, 1, 0); \
        else if (down)                                                       \
            openmp_hyd_step_kernel(k, in, a0, a1, off, J, bo, wo, so, 0, 1); \
        else                                                                 \
            openmp_hyd_step_kernel(k, in, a0, a1, off, J, bo, wo, so, 0, 0); \
    } while (0)
    if (m > 0)
        OMP_ROWS(x0, x0 + m, m, 2);
    if (x0 + 2 * m < x1)
        OMP_ROWS(x0 + 2 * m, x1, 0, 1);
#undef OMP_ROWS
}

/* 'in' with every row moved 'by' cells on: the copy's cell x is in's cell
 * x + by (rows that are not there stay NULL). */
static openmp_hyd_in openmp_hyd_shift(const openmp_hyd_in *in, size_t by)
{
    openmp_hyd_in t = *in;
    for (int r = 0; r < 3; r++) {
        t.b[r] = in->b[r] ? in->b[r] + by : NULL;
        t.w[r] = in->w[r] ? in->w[r] + by : NULL;
        t.s[r] = in->s[r] ? in->s[r] + by : NULL;
        t.h[r] = in->h[r] ? in->h[r] + by : NULL;
        for (int i = 0; i < 8; i++)
            t.share[r][i] = in->share[r][i] ? in->share[r][i] + by : NULL;
    }
    t.a = in->a ? in->a + by : NULL;
    return t;
}

/* Pass 2 of the cells [x0, x1) of a row, as openmp_hyd_step_kernel: the
 * first and the last row of the world run the vector kernel too, without
 * the row that is not there (they had taken the cell-by-cell path).
 *
 * Whole vectors only: the r cells past the last whole vector are made as
 * the last OPENMP_LANES cells of the row again, one vector, into scratch,
 * of which the r are kept.  gcc's loop had made them one at a time: at
 * 512 a row's 510 inner cells left 14, a quarter of the pass's time (a
 * tenth of the stage).  Not in place: a cell's running mean a is updated
 * in place, and the cells before the r must not be made twice. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void openmp_hyd_step_cells(const wg_hyd_consts *k,
                                  const openmp_hyd_in *in, size_t x0,
                                  size_t x1, float *restrict bo,
                                  float *restrict wo, float *restrict so,
                                  int up, int down)
{
    const size_t end = openmp_tail(x0, x1);
    openmp_hyd_step_rows(k, in, x0, end, bo, wo, so, up, down);
    if (end == x1)
        return;
    /* The copy's cells 1..LANES are in's x1 - LANES .. x1 - 1 (from 1, so
     * that the kernel's x - 1 stays an index); in's first cell, x0, is at
     * least 1 (column 0 is the edge code's), so the copy's rows start at
     * in's cell x1 - LANES - 1 >= 0. */
    const size_t r = x1 - end, by = x1 - OPENMP_LANES - 1;
    openmp_hyd_in t = openmp_hyd_shift(in, by);
    float tb[OPENMP_LANES + 1], tw[OPENMP_LANES + 1], ts[OPENMP_LANES + 1];
    float ta[OPENMP_LANES + 1];
    memcpy(ta + 1, in->a + by + 1, OPENMP_LANES * sizeof *ta);
    t.a = ta;
    openmp_hyd_step_rows(k, &t, 1, OPENMP_LANES + 1, tb, tw, ts, up, down);
    const size_t from = OPENMP_LANES + 1 - r; /* in's cell 'end' */
    memcpy(bo + end, tb + from, r * sizeof *tb);
    memcpy(wo + end, tw + from, r * sizeof *tw);
    memcpy(so + end, ts + from, r * sizeof *ts);
    memcpy(in->a + end, ta + from, r * sizeof *ta);
}

/* Which of cell x's neighbours exist in row y of a grid of n columns and
 * 'rows' rows. */
static void openmp_hyd_has(uint32_t n, uint32_t rows, uint32_t x, uint32_t y,
                           int has[8])
{
    for (int i = 0; i < 8; i++) {
        int64_t xx = (int64_t)x + openmp_dx[i], yy = (int64_t)y + openmp_dy[i];
        has[i] = xx >= 0 && yy >= 0 && xx < n && yy < rows;
    }
}

/* Pass 2 of cell x of the first (left) or the last (right) column, with
 * the neighbours that exist as constants: openmp_hyd_step_cell's
 * operations in its order, unrolled.  The loop over eight neighbours with
 * a test each had cost 6% of the stage at 512 on AVX2 (two such cells a
 * row of 513; measured by leaving them out). */
static inline __attribute__((always_inline)) void
openmp_hyd_step_side(const wg_hyd_consts *k, const openmp_hyd_in *in,
                     size_t x, const int left, const int right, const int up,
                     const int down, float *bo, float *wo, float *so)
{
    const float eps = k->eps, gd = k->slope_d, co = k->creep_o,
                cd = k->creep_d, b = in->b[1][x];
    float win = 0.0f, sin = 0.0f, drop = 0.0f, creep = 0.0f;
    /* Neighbour i (SPEC order) in row r (0 above, 1 the cell's, 2 below)
     * at column xx: the share it sends is its own share 7 - i. */
#define OMP_SIDE(i, r, xx, g, c)                                             \
    OMP_NB(in->share[r][7 - (i)], in->w[r], in->s[r], in->b[r], xx, g, c, b, \
           win, sin, drop, creep)
    if (up) {
        if (left)
            OMP_SIDE(0, 0, x - 1, gd, cd);
        OMP_SIDE(1, 0, x, 1.0f, co);
        if (right)
            OMP_SIDE(2, 0, x + 1, gd, cd);
    }
    if (left)
        OMP_SIDE(3, 1, x - 1, 1.0f, co);
    if (right)
        OMP_SIDE(4, 1, x + 1, 1.0f, co);
    if (down) {
        if (left)
            OMP_SIDE(5, 2, x - 1, gd, cd);
        OMP_SIDE(6, 2, x, 1.0f, co);
        if (right)
            OMP_SIDE(7, 2, x + 1, gd, cd);
    }
#undef OMP_SIDE
#undef OMP_NB
    float out = 0.0f;
    for (int i = 0; i < 8; i++)
        out = out + in->share[1][i][x];
    wg_hyd_finish(k, b, in->w[1][x], in->s[1][x], out, win, sin, drop, creep,
                  &bo[x], &wo[x], &so[x], &in->a[x]);
}

/* openmp_hyd_step_side for the first column (first != 0) or the last, of
 * a row with the rows above and below that exist. */
static void openmp_hyd_step_edge(const wg_hyd_consts *k,
                                 const openmp_hyd_in *in, size_t x, int first,
                                 int up, int down, float *bo, float *wo,
                                 float *so)
{
#define OMP_EDGE(l, r)                                                       \
    do {                                                                     \
        if (up && down)                                                      \
            openmp_hyd_step_side(k, in, x, l, r, 1, 1, bo, wo, so);          \
        else if (up)                                                         \
            openmp_hyd_step_side(k, in, x, l, r, 1, 0, bo, wo, so);          \
        else if (down)                                                       \
            openmp_hyd_step_side(k, in, x, l, r, 0, 1, bo, wo, so);          \
        else                                                                 \
            openmp_hyd_step_side(k, in, x, l, r, 0, 0, bo, wo, so);          \
    } while (0)
    if (first)
        OMP_EDGE(0, 1);
    else
        OMP_EDGE(1, 0);
#undef OMP_EDGE
}

/* Pass 2 of row y of a grid of n columns and 'rows' rows: the vector
 * kernel but in the first and the last column, which take the edge code
 * (the cell code, with the neighbours that exist, on a grid narrower than
 * three). */
static void openmp_hyd_row(const wg_consts *c, const openmp_hyd_in *in,
                           uint32_t n, uint32_t rows, uint32_t y, float *o0,
                           float *o1, float *o2)
{
    const int up = y > 0, down = y < rows - 1;
    if (n >= 3) {
        openmp_hyd_step_edge(&c->hyd, in, 0, 1, up, down, o0, o1, o2);
        openmp_hyd_step_cells(&c->hyd, in, 1, n - 1, o0, o1, o2, up, down);
        openmp_hyd_step_edge(&c->hyd, in, n - 1, 0, up, down, o0, o1, o2);
        return;
    }
    int has[8];
    for (uint32_t x = 0; x < n; x++) {
        openmp_hyd_has(n, rows, x, y, has);
        openmp_hyd_step_cell(&c->hyd, in, x, has, o0, o1, o2);
    }
}

/* Row y of a field of n columns and 'rows' rows, or NULL outside it. */
static inline float *openmp_row(float *f, uint32_t y, uint32_t n,
                                uint32_t rows)
{
    return y < rows ? f + (size_t)y * n : NULL;
}

/* The water surface b + w of a row, which pass 1 reads. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void openmp_surface_row(const float *restrict b,
                               const float *restrict w, float *restrict h,
                               uint32_t n)
{
#pragma omp simd
    for (uint32_t x = 0; x < n; x++)
        h[x] = b[x] + w[x];
}

#define SLOT(y) (((y) + 1) % 3)
#define ROW(f, y) openmp_row(f, y, n, rows)

/* The start of a sweep whose pass 2 begins at row y0: the water surface of
 * the two rows before the first row pass 1 makes (y0 - 1, or 0). */
static void openmp_hyd_sweep_start(const wg_hyd_state *st, uint32_t n,
                                   uint32_t rows, uint32_t y0,
                                   const openmp_ring *ring)
{
    const uint32_t first = y0 > 0 ? y0 - 1 : 0;
    for (uint32_t y = first > 0 ? first - 1 : 0; y <= first && y < rows; y++)
        openmp_surface_row(ROW(st->b, y), ROW(st->w, y),
                           ring->surf[SLOT(y)], n);
}

/* Iteration y of a sweep that makes pass 2 of the rows [y0, y1): the
 * surface of row y + 1, pass 1 of row y into the ring, then pass 2 of row
 * y - 1, whose three rows of shares are ready now (and of row y itself
 * when it is the last), where they lie in [y0, y1).  A sweep runs its
 * iterations from y0 - 1 (or 0) to y1 (or the last row): pass 1 of its
 * edge rows is made again rather than waited for from the neighbouring
 * bands, which make the same bits. */
static void openmp_hyd_sweep_row(const wg_consts *c, const wg_hyd_state *st,
                                 uint32_t n, uint32_t rows, uint32_t y0,
                                 uint32_t y1, const openmp_ring *ring,
                                 uint32_t y)
{
    openmp_hyd_in in;
    memset(&in, 0, sizeof in);
    if (y + 1 < rows)
        openmp_surface_row(ROW(st->b, y + 1), ROW(st->w, y + 1),
                           ring->surf[SLOT(y + 1)], n);
    for (int k = 0; k < 3; k++) {
        uint32_t yy = y - 1 + (uint32_t)k;
        in.b[k] = ROW(st->b, yy);
        in.w[k] = ROW(st->w, yy);
        in.h[k] = yy < rows ? ring->surf[SLOT(yy)] : ring->none;
    }
    openmp_hyd_route_cells(&c->hyd, &in, 0, n, ring->share[SLOT(y)]);
    uint32_t ys[2] = {y - 1, y};
    for (int j = 0; j < 2; j++) {
        uint32_t r = ys[j];
        int ready = j == 0 ? y >= 1 : y == rows - 1;
        if (!ready || r < y0 || r >= y1)
            continue;
        for (int k = 0; k < 3; k++) {
            uint32_t yy = r - 1 + (uint32_t)k;
            in.b[k] = ROW(st->b, yy);
            in.w[k] = ROW(st->w, yy);
            in.s[k] = ROW(st->s, yy);
            for (int i = 0; i < 8; i++)
                in.share[k][i] = yy < rows ? ring->share[SLOT(yy)][i] : NULL;
        }
        in.a = ROW(st->a, r);
        openmp_hyd_row(c, &in, n, rows, r, ROW(st->bo, r), ROW(st->wo, r),
                       ROW(st->so, r));
    }
}
#undef ROW
#undef SLOT

/* The last iteration of a sweep over the band [y0, y1). */
static uint32_t openmp_hyd_sweep_last(uint32_t y1, uint32_t rows)
{
    return y1 < rows ? y1 : rows - 1;
}

/* One step over the rows [y0, y1) of a thread's band: pass 1 of a row runs
 * just before pass 2 first needs it, into the thread's ring, so the shares
 * never go to memory. */
static void openmp_hyd_band(const wg_consts *c, const wg_hyd_state *st,
                            uint32_t n, uint32_t rows, uint32_t y0,
                            uint32_t y1, const openmp_ring *ring)
{
    openmp_hyd_sweep_start(st, n, rows, y0, ring);
    for (uint32_t y = y0 > 0 ? y0 - 1 : 0; y <= openmp_hyd_sweep_last(y1, rows);
         y++)
        openmp_hyd_sweep_row(c, st, n, rows, y0, y1, ring, y);
}

/* How far each thread's sweep of the first step of a pair has gone: the
 * pair's number in the high half, the iterations done in the low; on a
 * cache line of its own. */
typedef struct openmp_progress {
    _Atomic uint64_t done;
    char pad[64 - sizeof(uint64_t)];
} openmp_progress;

static void openmp_progress_wait(openmp_progress *p, uint64_t want)
{
    for (unsigned k = 0;
         atomic_load_explicit(&p->done, memory_order_acquire) < want; k++) {
#ifdef OPENMP_X86
        if (k < 4096) {
            _mm_pause();
            continue;
        }
#endif
        sched_yield();
    }
}

/* How many iterations step i + 1 runs behind step i in a pair: its
 * iteration z reads the rows step i makes up to z + 1, made by step i's
 * iteration z + 2, and writes row z - 1 of the buffers step i reads, which
 * step i's later iterations (from z + 3 on) no longer read. */
#define OPENMP_PAIR_LAG 2

/* The fewest rows a band may have for the steps to go in pairs. */
#define OPENMP_PAIR_ROWS 8

/* Two steps, i (st0) and i + 1 (st1), in one sweep of a thread's band
 * [y0, y1): each row step i makes goes through step i + 1 a few rows
 * later, while its rows are still in the cache, so each pair of steps
 * reads the state from memory once.  Step i + 1 reads what the
 * neighbouring bands make in step i beside its edges, and writes rows
 * that they read in step i:
 * - its first rows (pass 2 of y0 and y0 + 1, after another band's) wait
 *   until the band above has finished step i, and run last;
 * - its last rows (from the iteration that first reads row y1) wait until
 *   the band below has made step i's rows y1 and y1 + 1, which it does
 *   first (it has long done so by then).
 * 'pair' numbers the pairs from 1; 'done' is every thread's progress. */
static void openmp_hyd_pair(const wg_consts *c, const wg_hyd_state *st0,
                            const wg_hyd_state *st1, uint32_t n,
                            uint32_t rows, uint32_t y0, uint32_t y1,
                            const openmp_ring *r0, const openmp_ring *r1,
                            openmp_progress *done, uint32_t id, uint32_t nt,
                            uint64_t pair)
{
    const uint64_t tag = pair << 32;
    const uint32_t last = openmp_hyd_sweep_last(y1, rows);
    const uint32_t first0 = y0 > 0 ? y0 - 1 : 0;
    /* Step i + 1's pass 2 from row 'top' on in the sweep, the rows before
     * it after the band above is done. */
    const uint32_t top = id > 0 ? y0 + 2 : y0;
    const uint32_t first1 = top > 0 ? top - 1 : 0;
    openmp_hyd_sweep_start(st0, n, rows, y0, r0);
    int below = id + 1 == nt; /* the band below made rows y1, y1 + 1 */
    for (uint32_t y = first0; y <= last + OPENMP_PAIR_LAG; y++) {
        if (y <= last) {
            openmp_hyd_sweep_row(c, st0, n, rows, y0, y1, r0, y);
            atomic_store_explicit(&done[id].done, tag | (y + 1u),
                                  memory_order_release);
        }
        if (y < first1 + OPENMP_PAIR_LAG)
            continue;
        const uint32_t z = y - OPENMP_PAIR_LAG;
        if (z == first1)
            openmp_hyd_sweep_start(st1, n, rows, top, r1);
        if (!below && z + 1 >= y1) {
            /* Its iteration y1 + 2 has made pass 2 of row y1 + 1. */
            openmp_progress_wait(&done[id + 1], tag | (y1 + 3u));
            below = 1;
        }
        openmp_hyd_sweep_row(c, st1, n, rows, top, y1, r1, z);
    }
    if (top > y0) {
        /* The band above ends its sweep of step i at row y0. */
        openmp_progress_wait(&done[id - 1], tag | (y0 + 1u));
        openmp_hyd_sweep_start(st1, n, rows, y0, r1);
        for (uint32_t z = y0 - 1; z <= top; z++)
            openmp_hyd_sweep_row(c, st1, n, rows, y0, top, r1, z);
    }
}

/* The start of stage 3 (wg_hyd_start) over one row, in place: h becomes
 * the ground b; w the sea's depth, s zero and a the water (a may be w,
 * as when there are no steps: wg_hyd_buffers_alloc). */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void openmp_hyd_start_row(const wg_hyd_consts *k, float *restrict h,
                                 float *w, float *restrict sed, float *a,
                                 uint32_t n)
{
    const float eps = k->eps, sea = k->sea;
#pragma omp simd
    for (uint32_t x = 0; x < n; x++) {
        float b = wg_hyd_ftz(h[x], eps);
        float depth = wg_hyd_ftz(sea - b, eps);
        h[x] = b;
        w[x] = b < sea ? depth : 0.0f;
        sed[x] = 0.0f;
    }
    if (a != w)
        memcpy(a, w, n * sizeof *a);
}

/* Stage 3: the steps run over bands of rows, one band a thread, both
 * passes fused, two steps to a sweep (openmp_hyd_pair; one alone where a
 * band is thinner than OPENMP_PAIR_ROWS, and for an odd last step:
 * openmp_hyd_band), with one barrier after each sweep: the next reads
 * rows that the neighbouring bands wrote in this one. */
static void openmp_hydraulic(openmp_ctx *s, openmp_team *tm, uint32_t id,
                             uint32_t nt)
{
    const wg_consts *c = &s->job->consts;
    const uint32_t steps = s->job->world.steps;
    const wg_rect all = s->all;
    const uint32_t n = all.w, rows = all.h;
    const uint32_t y0 = (uint32_t)((uint64_t)rows * id / nt);
    const uint32_t y1 = (uint32_t)((uint64_t)rows * (id + 1) / nt);
    wg_hyd_buffers *hb = &s->hb;
    if (id == 0 && wg_hyd_buffers_alloc(hb, &s->f, s->other,
                                        wg_rect_cells(all), steps) != 0) {
        char what[160];
        wg_job_describe(s->job, what, sizeof what);
        openmp_team_fail(tm, "openmp: out of memory for the hydraulic stage "
                         "of %s", what);
    }
    /* How far each thread has gone, for the steps in pairs. */
    const int paired = steps >= 2 && rows / nt >= OPENMP_PAIR_ROWS;
    if (id == 0 && paired) {
        s->hyd_done = aligned_alloc(64, nt * sizeof *s->hyd_done);
        if (s->hyd_done)
            for (uint32_t t = 0; t < nt; t++)
                atomic_init(&s->hyd_done[t].done, 0);
        else
            openmp_team_fail(tm, "openmp: out of memory for the hydraulic "
                             "stage's progress");
    }
    /* Two rings, one for each step of a pair: 3 rows of 8 shares and the
     * surface each, and the row of ghosts they share, 55 rows in all, each
     * 80 bytes past a multiple of the row: rows a power of two apart (8
     * KiB at 2048) would fall in the same L1 sets and evict each other
     * (measured at 2048, one thread: 28.3 ns a cell-step unpadded, 16.4
     * padded; 512 is 13.4 either way). */
    const size_t stride = (size_t)n + 20;
    float *pq = malloc(55 * stride * sizeof(float));
    openmp_ring ring[2];
    if (pq) {
        float *none = pq + 54 * stride;
        for (size_t x = 0; x < (size_t)n + 2; x++)
            none[x] = INFINITY;
        for (int k = 0; k < 2; k++) {
            float *at = pq + (size_t)(27 * k) * stride;
            for (int r = 0; r < 3; r++) {
                for (int i = 0; i < 8; i++)
                    ring[k].share[r][i] = at + (size_t)(9 * r + i) * stride;
                /* A surface row and its two ghosts. */
                ring[k].surf[r] = at + (size_t)(9 * r + 8) * stride + 1;
                ring[k].surf[r][-1] = ring[k].surf[r][n] = INFINITY;
            }
            ring[k].none = none + 1;
        }
    } else {
        openmp_team_fail(tm, "openmp: out of memory for the hydraulic "
                         "stage's rows");
    }
    openmp_barrier_wait(&tm->bar, id); /* the buffers are made, or not */
    const int failed = tm->bar.stop;
    for (uint32_t y = y0; y < y1 && !failed; y++) {
        const size_t at = (size_t)y * n;
        /* In place: the heights become the starting ground, kept. */
        openmp_hyd_start_row(&c->hyd, hb->b[0] + at, hb->w[0] + at,
                             hb->s[0] + at, hb->a + at, n);
        if (steps > 0)
            memcpy(hb->b0 + at, hb->b[0] + at, n * sizeof(float));
    }
    openmp_barrier_wait(&tm->bar, id);
    for (uint32_t i = 0; i < steps && !failed;) {
        wg_hyd_state st = wg_hyd_buffers_step(hb, i);
        if (paired && i + 1 < steps) {
            wg_hyd_state st1 = wg_hyd_buffers_step(hb, i + 1);
            openmp_hyd_pair(c, &st, &st1, n, rows, y0, y1, &ring[0],
                            &ring[1], s->hyd_done, id, nt, i / 2 + 1);
            i += 2;
        } else {
            if (y0 < y1)
                openmp_hyd_band(c, &st, n, rows, y0, y1, &ring[0]);
            i++;
        }
        if (id == 0 && s->job->progress) /* one thread tells */
            s->job->progress("hydraulic", (double)i / steps);
        openmp_barrier_wait(&tm->bar, id);
    }
    free(pq);
    if (!failed && steps > 0) {
        /* With no steps the start has written everything: the ground, the
         * sea, and zero sediment into the field. */
        wg_hyd_state st = wg_hyd_buffers_step(hb, steps);
#define V(p) ((wg_view){(p), all})
        for (uint32_t y = y0; y < y1; y++) {
            wg_rect row = {all.x, all.y + y, n, 1};
            wg_scalar_hydraulic_settle(c, &V(st.b), &V(st.w), &V(st.a),
                                       &V(hb->b0), row, &V(s->f.height),
                                       &V(st.w), &V(s->f.sediment));
        }
#undef V
    }
    openmp_barrier_wait(&tm->bar, id); /* every row is settled */
    if (id == 0) {
        free(s->hyd_done);
        s->hyd_done = NULL;
        if (!failed)
            wg_hyd_buffers_finish(hb, &s->f, steps);
        wg_hyd_buffers_free(hb);
        memset(hb, 0, sizeof *hb);
    }
}

static void openmp_normals(openmp_ctx *s, openmp_team *tm, uint32_t id,
                           uint32_t nt)
{
    (void)id;
    (void)nt;
    const wg_consts *c = &s->job->consts;
    const uint32_t n = s->all.w, rows = s->all.h, last = rows - 1;
    const float k1 = c->k1, k2 = c->k2;
    const float *h = s->f.height;
    const int stream = openmp_streams(s, 3);
    /* Each thread computes a row into L1-sized buffers, then writes them
     * out. */
    float *buf = stream ? malloc(3 * (size_t)n * sizeof *buf) : NULL;
    if (stream && !buf)
        openmp_team_fail(tm, "openmp: out of memory for the normals' rows");
    /* guided, as the terrain. */
#pragma omp for schedule(guided) nowait
    for (uint32_t y = 0; y < rows; y++) {
        if (stream && !buf)
            continue;
        uint32_t ym = y > 0 ? y - 1 : 0, yp = y < last ? y + 1 : last;
        const float ky = (yp - ym == 2) ? k2 : k1;
        const float *restrict row = h + (size_t)y * n;
        const float *restrict up = h + (size_t)ym * n;
        const float *restrict down = h + (size_t)yp * n;
        /* Straight into the fields when they stay in cache; through the
         * row buffers when they are streamed out. */
        float *restrict ox = stream ? buf : s->f.nx + (size_t)y * n;
        float *restrict oy = stream ? buf + n : s->f.ny + (size_t)y * n;
        float *restrict oz = stream ? buf + 2 * (size_t)n
                                    : s->f.nz + (size_t)y * n;
        openmp_normals_row(row, up, down, n, k1, k2, ky, ox, oy, oz);
        if (stream) {
            openmp_stream_row(s->f.nx + (size_t)y * n, ox, n, 1);
            openmp_stream_row(s->f.ny + (size_t)y * n, oy, n, 1);
            openmp_stream_row(s->f.nz + (size_t)y * n, oz, n, 1);
        }
    }
    free(buf);
#ifdef __SSE__
    if (stream)
        _mm_sfence(); /* streaming stores are weakly ordered: publish them */
#endif
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

const wg_backend wg_backend_openmp = {
    .name = "openmp",
    .summary = "rows across threads, vectorised rows (--threads)",
    .probe = openmp_probe,
    .open = openmp_open,
    .stages = openmp_stages,
    .readback = openmp_readback,
    .close = openmp_close,
    .device = NULL,
    .rank = openmp_rank,
    .normal_tolerance = 0.0,
};
