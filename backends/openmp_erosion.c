/* openmp_erosion.c: stage 2 of the OpenMP backend, the thermal erosion:
 * the row kernel of a pass (openmp_erode_row, its border cells branch-free
 * through openmp_erode_cell), and the bands with halos that run a group of
 * passes between barriers (openmp_erosion).  The same bits as scalar.c for
 * any thread count, as the backend's other stages (openmp.c says how).
 *
 * Measured on the 2-core Firecracker VM (AMD EPYC, AVX2, nested):
 * - erosion runs its passes in bands with halos, one barrier per 16 passes
 *   instead of one a pass (openmp_erosion), and its border cells are
 *   computed branch-free (openmp_erode_cell): bench.sh -r 7 on that VM,
 *   12 passes, 512: 7.2-7.7 ms before, 3.7-4.7 ms now; 2048: 38.5-40.6 ms
 *   before, 29.5-31.8 ms now.
 */
#define _GNU_SOURCE /* cpu_set_t (openmp_team.h) */
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "backend.h"
#include "openmp_stage.h"
#include "openmp_team.h"

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
OPENMP_CLONES
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
void openmp_erosion(openmp_ctx *s, openmp_team *tm, uint32_t id,
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
