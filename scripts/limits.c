/* limits.c: what this machine can do at most, for scripts/bench.sh -l.
 *
 * Measures, on one thread and on every core at once (OpenMP):
 * - sustained memory bandwidth of a triad c[i] = a[i] + k * b[i] (two read
 *   streams and one write stream, 12 bytes an element as the program sees
 *   them), with arrays resident in L2 (3 x 32 KiB a thread), in L3 (3 x
 *   1 MiB a thread) and far beyond the caches (3 x 96 MiB, 288 MiB);
 * - the issue rate of 8-lane binary32 AVX2 add, mul, min, max, compare,
 *   divide and square root (the instructions the field kernels use), with
 *   12 independent chains so latency does not count, and of a mix of add,
 *   mul, min and compare interleaved (the pipes working side by side:
 *   what a kernel made of all four can reach);
 * - where the CPU has AVX-512F, the same rates 16 lanes wide (printed as
 *   avx512_NAME): the OpenMP kernels have AVX-512 builds that run there;
 *   its compares write a mask, so their chain goes through the select the
 *   kernels use a compare for, and a compare with its select counts two;
 * - the rate of 8-lane gathers (vgatherdps) from a 256 KiB table, the
 *   size of the terrain's lattice, at random indices;
 * - the rate of quad fetches as the OpenMP terrain makes them on AVX2
 *   (openmp_terrain_octave_quads): for 8 lanes, 8 random 16-byte loads
 *   from 256 KiB of a table of quads (the lattice's four corners a point;
 *   the terrain's fetches along a row stay within a few lines of it, so,
 *   as for the gathers, the table's part in use is in L2), the offsets of
 *   64 lanes stored and then read back one at a time, and a 4 x 4 transpose in
 *   each 128-bit half (4 inserts, 8 shuffles).
 * Each figure is the best of several repetitions; on every core, each
 * thread times its own share and the rates are added, so a thread that
 * another program's process held off the core costs that repetition alone
 * (the machines this runs on are shared).  Prints one "name value"
 * line per figure: bandwidths in GB/s (1e9 bytes), rates in G lane-ops/s
 * (one 8-lane instruction is 8 lane-ops), gathers and quad fetches in G
 * lanes/s (a lane of a quad fetch is its four floats); names end
 * in _1 (one thread) or _all (every core).  Exit 1 when they cannot be
 * written (out.h).
 *
 * Built by bench.sh: cc -O3 -mavx2 -fopenmp -ffp-contract=off. */
#define _DEFAULT_SOURCE
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../backends/cache.h"
#include "out.h"

#define BEST 15 /* repetitions of each measurement: the best counts */

static volatile float sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The triad over n floats, 'reps' times. */
static void triad(float *restrict c, const float *restrict a,
                  const float *restrict b, size_t n, int reps)
{
    const float k = 0.5f;
    for (int r = 0; r < reps; r++) {
        for (size_t i = 0; i < n; i++)
            c[i] = a[i] + k * b[i];
        __asm__ volatile("" ::: "memory");
    }
}

static float *floats(size_t n)
{
    float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "limits: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (float)(i & 1023);
    return p;
}

/* Bandwidth in GB/s with per-thread arrays of n floats each ('threads'
 * threads), the triad run 'reps' times a measurement. */
static double bw_private(int threads, size_t n, int reps)
{
    double best = 0;
    for (int m = 0; m < BEST; m++) {
        double sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        {
            float *a = floats(n), *b = floats(n), *c = floats(n);
            triad(c, a, b, n, 1);
#pragma omp barrier
            double t = now();
            triad(c, a, b, n, reps);
            t = now() - t;
            sum = 12.0 * (double)n * reps / t / 1e9;
            sink = c[n / 2];
            free(a), free(b), free(c);
        }
        if (sum > best)
            best = sum;
    }
    return best;
}

/* Bandwidth in GB/s over shared arrays of n floats, split across threads. */
static double bw_dram(int threads, float *a, float *b, float *c, size_t n)
{
    double best = 0;
    for (int m = 0; m < BEST; m++) {
        double sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        {
            int me = omp_get_thread_num(), nt = omp_get_num_threads();
            size_t lo = n * me / nt, hi = n * (me + 1) / nt;
#pragma omp barrier
            double t = now();
            triad(c + lo, a + lo, b + lo, hi - lo, 1);
            t = now() - t;
            sum = 12.0 * (double)(hi - lo) / t / 1e9;
        }
        sink = c[n / 3];
        if (sum > best)
            best = sum;
    }
    return best;
}

#define CHAINS 12
#define ITERS 200000

/* One 8-lane operation OP on 12 independent chains, ITERS times:
 * returns G lane-ops/s over 'threads' threads. */
/* One 8-lane operation on 12 independent chains (named variables, so
 * they stay in registers), ITERS times; rate() turns that into G
 * lane-ops/s.  OP(x, j) is the next value of chain x (j: its number). */
#define RATE(name, OP)                                                      \
    __attribute__((noinline)) static void name##_run(void)                  \
    {                                                                       \
        const __m256 k = _mm256_set1_ps(0.999999f);                         \
        const __m256 k2 = _mm256_set1_ps(1.000001f);                        \
        (void)k, (void)k2;                                                  \
        __m256 v0 = _mm256_set1_ps(1.000f), v1 = _mm256_set1_ps(1.001f),    \
               v2 = _mm256_set1_ps(1.002f), v3 = _mm256_set1_ps(1.003f),    \
               v4 = _mm256_set1_ps(1.004f), v5 = _mm256_set1_ps(1.005f),    \
               v6 = _mm256_set1_ps(1.006f), v7 = _mm256_set1_ps(1.007f),    \
               v8 = _mm256_set1_ps(1.008f), v9 = _mm256_set1_ps(1.009f),    \
               v10 = _mm256_set1_ps(1.010f), v11 = _mm256_set1_ps(1.011f);  \
        for (long i = 0; i < ITERS; i++) {                                  \
            const __m256 km = (i & 1) ? k2 : k;                             \
            (void)km;                                                       \
            v0 = OP(v0, 0), v1 = OP(v1, 1), v2 = OP(v2, 2), v3 = OP(v3, 3);  \
            v4 = OP(v4, 0), v5 = OP(v5, 1), v6 = OP(v6, 2), v7 = OP(v7, 3);  \
            v8 = OP(v8, 0), v9 = OP(v9, 1), v10 = OP(v10, 2),                \
            v11 = OP(v11, 3);                                               \
            __asm__("" : "+x"(v0), "+x"(v1), "+x"(v2), "+x"(v3), "+x"(v4),  \
                    "+x"(v5), "+x"(v6), "+x"(v7), "+x"(v8), "+x"(v9),       \
                    "+x"(v10), "+x"(v11));                                  \
        }                                                                   \
        __m256 s = _mm256_add_ps(_mm256_add_ps(v0, v1), v2);                \
        s = _mm256_add_ps(_mm256_add_ps(s, v3), _mm256_add_ps(v4, v5));     \
        s = _mm256_add_ps(_mm256_add_ps(s, v6), _mm256_add_ps(v7, v8));     \
        s = _mm256_add_ps(_mm256_add_ps(s, v9), _mm256_add_ps(v10, v11));   \
        sink = _mm256_cvtss_f32(s);                                         \
    }
#define OP_ADD(x, j) _mm256_add_ps(x, k)
#define OP_MUL(x, j) _mm256_mul_ps(x, km)
#define OP_MIN(x, j) _mm256_min_ps(x, k)
#define OP_MAX(x, j) _mm256_max_ps(x, k)
#define OP_CMP(x, j) _mm256_cmp_ps(x, k, _CMP_LT_OQ)
#define OP_DIV(x, j) _mm256_div_ps(k, x)
#define OP_SQRT(x, j) _mm256_sqrt_ps(x)
/* add, mul, min and compare, a quarter each, on independent chains. */
#define OP_MIX(x, j)                                                        \
    ((j) == 0 ? OP_ADD(x, j) : (j) == 1 ? OP_MUL(x, j)                      \
                           : (j) == 2 ? OP_MIN(x, j) : OP_CMP(x, j))
RATE(add, OP_ADD)
RATE(mul, OP_MUL)
RATE(min, OP_MIN)
RATE(max, OP_MAX)
RATE(cmp, OP_CMP)
RATE(div, OP_DIV)
RATE(sqrt, OP_SQRT)
RATE(mix, OP_MIX)

/* G lane-ops/s of fn (CHAINS chains of ITERS operations of 'lanes' lanes,
 * each 'ops' lane-ops: a compare and its select count two) on 'threads'
 * threads at once: the best of BEST. */
static double rate(void (*fn)(void), int threads, int lanes, double ops)
{
    double best = 0;
    for (int m = 0; m < BEST; m++) {
        double sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        {
            double t = now();
            fn();
            t = now() - t;
            sum = lanes * ops * CHAINS * (double)ITERS / t / 1e9;
        }
        if (sum > best)
            best = sum;
    }
    return best;
}

/* The same operations 16 lanes wide (AVX-512F), for a CPU that has it: the
 * OpenMP kernels are built for AVX-512 too (target_clones) and run that way
 * there, so its rates are the machine's limit.  An AVX-512 compare writes a
 * mask register, not a vector: the compare's chain takes it through the
 * select the kernels use it for (a blend), two lane-ops a step. */
#define RATE512(name, OP)                                                   \
    __attribute__((noinline, target("avx512f"))) static void name##_run512( \
        void)                                                               \
    {                                                                       \
        const __m512 k = _mm512_set1_ps(0.999999f);                         \
        const __m512 k2 = _mm512_set1_ps(1.000001f);                        \
        (void)k, (void)k2;                                                  \
        __m512 v0 = _mm512_set1_ps(1.000f), v1 = _mm512_set1_ps(1.001f),    \
               v2 = _mm512_set1_ps(1.002f), v3 = _mm512_set1_ps(1.003f),    \
               v4 = _mm512_set1_ps(1.004f), v5 = _mm512_set1_ps(1.005f),    \
               v6 = _mm512_set1_ps(1.006f), v7 = _mm512_set1_ps(1.007f),    \
               v8 = _mm512_set1_ps(1.008f), v9 = _mm512_set1_ps(1.009f),    \
               v10 = _mm512_set1_ps(1.010f), v11 = _mm512_set1_ps(1.011f);  \
        for (long i = 0; i < ITERS; i++) {                                  \
            const __m512 km = (i & 1) ? k2 : k;                             \
            (void)km;                                                       \
            v0 = OP(v0, 0), v1 = OP(v1, 1), v2 = OP(v2, 2), v3 = OP(v3, 3);  \
            v4 = OP(v4, 0), v5 = OP(v5, 1), v6 = OP(v6, 2), v7 = OP(v7, 3);  \
            v8 = OP(v8, 0), v9 = OP(v9, 1), v10 = OP(v10, 2),                \
            v11 = OP(v11, 3);                                               \
            __asm__("" : "+v"(v0), "+v"(v1), "+v"(v2), "+v"(v3), "+v"(v4),  \
                    "+v"(v5), "+v"(v6), "+v"(v7), "+v"(v8), "+v"(v9),       \
                    "+v"(v10), "+v"(v11));                                  \
        }                                                                   \
        __m512 s = _mm512_add_ps(_mm512_add_ps(v0, v1), v2);                \
        s = _mm512_add_ps(_mm512_add_ps(s, v3), _mm512_add_ps(v4, v5));     \
        s = _mm512_add_ps(_mm512_add_ps(s, v6), _mm512_add_ps(v7, v8));     \
        s = _mm512_add_ps(_mm512_add_ps(s, v9), _mm512_add_ps(v10, v11));   \
        sink = _mm512_reduce_add_ps(s);                                     \
    }
#define OP512_ADD(x, j) _mm512_add_ps(x, k)
#define OP512_MUL(x, j) _mm512_mul_ps(x, km)
#define OP512_MIN(x, j) _mm512_min_ps(x, k)
#define OP512_MAX(x, j) _mm512_max_ps(x, k)
#define OP512_CMP(x, j)                                                     \
    _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, k, _CMP_LT_OQ), x, k2)
#define OP512_DIV(x, j) _mm512_div_ps(k, x)
#define OP512_SQRT(x, j) _mm512_sqrt_ps(x)
#define OP512_MIX(x, j)                                                     \
    ((j) == 0 ? OP512_ADD(x, j) : (j) == 1 ? OP512_MUL(x, j)                \
                              : (j) == 2 ? OP512_MIN(x, j) : OP512_CMP(x, j))
RATE512(add, OP512_ADD)
RATE512(mul, OP512_MUL)
RATE512(min, OP512_MIN)
RATE512(max, OP512_MAX)
RATE512(cmp, OP512_CMP)
RATE512(div, OP512_DIV)
RATE512(sqrt, OP512_SQRT)
RATE512(mix, OP512_MIX)

/* Gathers: 8 independent chains of indices (a linear congruential step
 * in 32-bit lanes) into a 256x256 float table. */
#define GCHAINS 8
#define GITERS 100000
static const float *gtab, *qtab;
__attribute__((noinline)) static void gather_run(void)
{
    __m256i idx[GCHAINS];
    __m256 acc[GCHAINS];
    const __m256i mul = _mm256_set1_epi32(1664525),
                  add = _mm256_set1_epi32(1013904223),
                  mask = _mm256_set1_epi32(65535);
    for (int j = 0; j < GCHAINS; j++) {
        idx[j] = _mm256_setr_epi32(j, j + 8, j + 16, j + 24, j + 32, j + 40,
                                   j + 48, j + 56);
        acc[j] = _mm256_setzero_ps();
    }
    for (long i = 0; i < GITERS; i++)
        for (int j = 0; j < GCHAINS; j++) {
            idx[j] = _mm256_add_epi32(_mm256_mullo_epi32(idx[j], mul), add);
            __m256i at = _mm256_and_si256(_mm256_srli_epi32(idx[j], 8), mask);
            acc[j] = _mm256_add_ps(acc[j], _mm256_i32gather_ps(gtab, at, 4));
        }
    __m256 s = acc[0];
    for (int j = 1; j < GCHAINS; j++)
        s = _mm256_add_ps(s, acc[j]);
    sink = _mm256_cvtss_f32(s);
}

/* Lanes a second, in billions, of run() (8 lanes on each of GCHAINS
 * chains, GITERS times) on 'threads' threads at once: the best of BEST. */
static double lane_rate(void (*run)(void), int threads)
{
    double best = 0;
    for (int m = 0; m < BEST; m++) {
        double sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        {
            double t = now();
            run();
            t = now() - t;
            sum = 8.0 * GCHAINS * (double)GITERS / t / 1e9;
        }
        if (sum > best)
            best = sum;
    }
    return best;
}

/* Quad fetches: 8 independent chains of indices, as gather_run, into the
 * first 16384 quads of a 256 x 256 table of 4-float quads; each chain's 8 lanes fetched and
 * transposed as the terrain does, the four results summed into its
 * accumulator. */
__attribute__((noinline)) static void quad_run(void)
{
    __m256i idx[GCHAINS];
    __m256 acc[GCHAINS];
    const __m256i mul = _mm256_set1_epi32(1664525),
                  add = _mm256_set1_epi32(1013904223),
                  mask = _mm256_set1_epi32(1023 << 2);
    for (int j = 0; j < GCHAINS; j++) {
        idx[j] = _mm256_setr_epi32(j, j + 8, j + 16, j + 24, j + 32, j + 40,
                                   j + 48, j + 56);
        acc[j] = _mm256_setzero_ps();
    }
    _Alignas(32) int32_t ats[GCHAINS][8];
    for (long i = 0; i < GITERS; i++) {
        /* The offsets of all chains first, read back after (as the
         * kernel's 64-cell chunks: a load right after the vector store
         * it reads would wait for the store to forward). */
        for (int j = 0; j < GCHAINS; j++) {
            idx[j] = _mm256_add_epi32(_mm256_mullo_epi32(idx[j], mul), add);
            _mm256_store_si256((__m256i *)ats[j],
                               _mm256_and_si256(_mm256_srli_epi32(idx[j], 6),
                                                mask));
        }
        __asm__("" ::"m"(ats));
        for (int j = 0; j < GCHAINS; j++) {
            const int32_t *at = ats[j];
            __m256 r0 = _mm256_insertf128_ps(
                _mm256_castps128_ps256(_mm_load_ps(qtab + at[0])),
                _mm_load_ps(qtab + at[4]), 1);
            __m256 r1 = _mm256_insertf128_ps(
                _mm256_castps128_ps256(_mm_load_ps(qtab + at[1])),
                _mm_load_ps(qtab + at[5]), 1);
            __m256 r2 = _mm256_insertf128_ps(
                _mm256_castps128_ps256(_mm_load_ps(qtab + at[2])),
                _mm_load_ps(qtab + at[6]), 1);
            __m256 r3 = _mm256_insertf128_ps(
                _mm256_castps128_ps256(_mm_load_ps(qtab + at[3])),
                _mm_load_ps(qtab + at[7]), 1);
            __m256 t0 = _mm256_unpacklo_ps(r0, r1);
            __m256 t1 = _mm256_unpackhi_ps(r0, r1);
            __m256 t2 = _mm256_unpacklo_ps(r2, r3);
            __m256 t3 = _mm256_unpackhi_ps(r2, r3);
            __m256 a = _mm256_shuffle_ps(t0, t2, 0x44);
            __m256 b = _mm256_shuffle_ps(t0, t2, 0xee);
            __m256 c = _mm256_shuffle_ps(t1, t3, 0x44);
            __m256 d = _mm256_shuffle_ps(t1, t3, 0xee);
            acc[j] = _mm256_add_ps(acc[j], _mm256_add_ps(_mm256_add_ps(a, b),
                                                         _mm256_add_ps(c, d)));
        }
    }
    __m256 s = acc[0];
    for (int j = 1; j < GCHAINS; j++)
        s = _mm256_add_ps(s, acc[j]);
    sink = _mm256_cvtss_f32(s);
}


int main(void)
{
    const int cores = omp_get_num_procs();
    const int ts[2] = {1, cores};
    const char *sfx[2] = {"1", "all"};
    long l2 = (long)wg_cache_bytes(2), l3 = (long)wg_cache_bytes(3);
    printf("cores %d\nl2_bytes %ld\nl3_bytes %ld\n", cores, l2 > 0 ? l2 : 0,
           l3 > 0 ? l3 : 0);

    const size_t big = (size_t)96 << 20 >> 2; /* 96 MiB of floats */
    float *a = floats(big), *b = floats(big), *c = floats(big);
    for (int k = 0; k < 2; k++) {
        printf("bw_l2_%s %.2f\n", sfx[k], bw_private(ts[k], 8192, 400));
        printf("bw_l3_%s %.2f\n", sfx[k], bw_private(ts[k], 262144, 12));
        printf("bw_dram_%s %.2f\n", sfx[k], bw_dram(ts[k], a, b, c, big));
    }
    free(a), free(b), free(c);

    static const struct {
        const char *name;
        void (*fn)(void);
    } ops[] = {{"add", add_run}, {"mul", mul_run}, {"min", min_run},
               {"max", max_run}, {"cmp", cmp_run}, {"div", div_run},
               {"sqrt", sqrt_run}, {"mix", mix_run}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        for (int k = 0; k < 2; k++)
            printf("%s_%s %.2f\n", ops[i].name, sfx[k],
                   rate(ops[i].fn, ts[k], 8, 1));
    /* 16 lanes, where the CPU has them; the mix's compares count two. */
    static const struct {
        const char *name;
        void (*fn)(void);
        double ops;
    } ops512[] = {{"add", add_run512, 1},   {"mul", mul_run512, 1},
                  {"min", min_run512, 1},   {"max", max_run512, 1},
                  {"cmp", cmp_run512, 2},   {"div", div_run512, 1},
                  {"sqrt", sqrt_run512, 1}, {"mix", mix_run512, 1.25}};
    if (__builtin_cpu_supports("avx512f"))
        for (size_t i = 0; i < sizeof ops512 / sizeof ops512[0]; i++)
            for (int k = 0; k < 2; k++)
                printf("avx512_%s_%s %.2f\n", ops512[i].name, sfx[k],
                       rate(ops512[i].fn, ts[k], 16, ops512[i].ops));

    float *tab = floats(65536);
    gtab = tab;
    for (int k = 0; k < 2; k++)
        printf("gather_%s %.3f\n", sfx[k], lane_rate(gather_run, ts[k]));
    free(tab);

    float *quads = floats(4 * 65536);
    qtab = quads;
    for (int k = 0; k < 2; k++)
        printf("quad_%s %.3f\n", sfx[k], lane_rate(quad_run, ts[k]));
    free(quads);
    return out_close("limits");
}
