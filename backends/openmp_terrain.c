/* openmp_terrain.c: stage 1 of the OpenMP backend, the terrain: the noise
 * summed octave by octave over each row (openmp_terrain_octave), on AVX2
 * with the lattice's corners fetched as quads (openmp_quads, made once by
 * openmp_open beside the fields' first touch, and
 * openmp_terrain_octave_quads).  The same bits as scalar.c for any thread
 * count, as the backend's other stages (openmp.c says how).
 *
 * Measured on the 2-core CI machine (AMD EPYC with AVX-512, gcc 12; medians
 * of 7-9 runs, from the --json figures; 6 octaves, 12 passes):
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
 * - outputs larger than the caches are written past them (streaming
 *   stores, openmp_stream_row): terrain at 2048 went from 31.9 ms to
 *   24.8 ms.
 */
#define _GNU_SOURCE /* cpu_set_t (openmp_team.h) */
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "openmp_stage.h"
#include "openmp_team.h"

static inline float openmp_cell(const float *lat, int ix, int iy)
{
    return lat[(iy & (WG_LATTICE_R - 1)) * WG_LATTICE_R +
               (ix & (WG_LATTICE_R - 1))];
}

/* One octave over one row of n cells: sum[x] += amp * r(x, y)^2 for every
 * x, y the world's row (uxc, uxs hold the columns' halves). */
OPENMP_CLONES
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
void openmp_quads(const float *restrict lat, float *restrict quad,
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
void openmp_terrain(openmp_ctx *s, openmp_team *tm, uint32_t id,
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
