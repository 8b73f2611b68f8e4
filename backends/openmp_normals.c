/* openmp_normals.c: stage 4 of the OpenMP backend, the normals: each
 * row's from the rows above and below (openmp_normals_row), written
 * straight into the fields, or past the cache (openmp_stream_row) where
 * they are too big to stay in it.  The same bits as scalar.c for any
 * thread count, as the backend's other stages (openmp.c says how).
 *
 * Measured on the 2-core CI machine (AMD EPYC with AVX-512, gcc 12; medians
 * of 7-9 runs, from the --json figures; 6 octaves, 12 passes):
 * - outputs larger than the caches are written past them (streaming
 *   stores, openmp_stream_row): the normals at 2048 (48 MiB out) are then
 *   bound by memory bandwidth, 2.7 ms for 64 MiB moved, while at 512 all
 *   their 4 MiB stays in cache (0.08 ms).
 */
#define _GNU_SOURCE /* cpu_set_t (openmp_team.h) */
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "backend.h"
#include "openmp_stage.h"
#include "openmp_team.h"

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

/* The normals of one row, from the rows above and below (which are the row
 * itself at the grid's edges). */
OPENMP_CLONES
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

void openmp_normals(openmp_ctx *s, openmp_team *tm, uint32_t id,
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
