/* openmp_stage.h: what the OpenMP backend's stages share across its
 * files: the context they run on (openmp_ctx), the rule for a row's last
 * cells (OPENMP_LANES, openmp_tail), a row written past the cache
 * (openmp_stream_row, openmp_streams), and the stages, each in a file of
 * its own (stage 1: openmp_terrain.c, with the quads openmp_open makes;
 * stage 2: openmp_erosion.c; stage 3: openmp_hydraulic.c; stage 4:
 * openmp_normals.c), which openmp.c's driver (openmp_stages) runs.  Private to the backend's files (backends/openmp*.c),
 * which define _GNU_SOURCE before any include, for openmp_team.h's
 * cpu_set_t. */
#ifndef WG_OPENMP_STAGE_H
#define WG_OPENMP_STAGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backend.h"
#include "hydraulic.h"
#include "openmp_team.h"

/* The stages run on the rectangle R = wg_job_rect() (the whole world, or
 * a region and its halo) as on a world of R's width and height: R's edges
 * are its border, where neighbours do not exist (stage 3 puts its ghosts
 * beyond it).  Where R's edge is the
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
    wg_hyd_buffers hb; /* the hydraulic stage's, from it to the close */
    struct openmp_progress *hyd_done; /* [threads], during the stage */
} openmp_ctx;

/* The builds of a row kernel: AVX-512, AVX2 and the baseline (SSE2), the
 * widest the CPU has chosen when the program starts.  'make AVX512=0'
 * leaves AVX-512 out, so that a machine that has it runs the AVX2 builds,
 * as a CPU without it does: to measure them (README, Performance), the
 * results the same bits either way. */
#if !defined(OPENMP_X86)
/* Off x86 (aarch64, ...): one build, the compiler's own vectors; x86's
 * clones there are no target the compiler knows, and had failed the
 * build. */
#define OPENMP_CLONES
#elif defined(WG_NO_AVX512)
#define OPENMP_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define OPENMP_CLONES                                                        \
    __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

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

/* Copy n floats to dst past the cache (openmp.c): streaming stores, in
 * whole 64-byte lines where the CPU has AVX-512. */
void openmp_stream(float *restrict dst, const float *restrict src, size_t n);

/* Copy a row of n floats to memory that will not be read again soon,
 * bypassing the cache where the CPU can: a plain store first reads the line
 * it writes (read-for-ownership), so three output fields cost six streams
 * of memory traffic instead of three. */
static inline void openmp_stream_row(float *restrict dst,
                                     const float *restrict src, size_t n,
                                     int stream)
{
    if (!stream) {
        memcpy(dst, src, n * sizeof *dst);
        return;
    }
    openmp_stream(dst, src, n);
}

static inline int openmp_streams(const openmp_ctx *s, int fields)
{
    return wg_rect_cells(s->all) * sizeof(float) * (size_t)fields >
           s->stream_bytes;
}

/* The stages, each in a file of its own and run by every thread of the
 * team (openmp_stages): stage 1, the terrain (openmp_terrain.c), stage 2,
 * the erosion (openmp_erosion.c), stage 3, the hydraulic erosion
 * (openmp_hydraulic.c), and stage 4, the normals (openmp_normals.c). */
void openmp_terrain(openmp_ctx *s, openmp_team *tm, uint32_t id,
                    uint32_t nt);
void openmp_erosion(openmp_ctx *s, openmp_team *tm, uint32_t id,
                    uint32_t nt);
void openmp_hydraulic(openmp_ctx *s, openmp_team *tm, uint32_t id,
                      uint32_t nt);
void openmp_normals(openmp_ctx *s, openmp_team *tm, uint32_t id,
                    uint32_t nt);

/* Fault in bytes [a, b) of block p, which the calling thread will write
 * (openmp.c): the band of a field that a thread's rows cover. */
void openmp_first_touch(char *p, size_t a, size_t b);

#ifdef OPENMP_X86
/* The lattice's rows [y0, y1) as the terrain's quads (openmp_terrain.c),
 * made by openmp_open beside the fields' first touch. */
void openmp_quads(const float *restrict lat, float *restrict quad,
                  uint32_t y0, uint32_t y1);
#endif

#endif
