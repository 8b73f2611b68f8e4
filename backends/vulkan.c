/* vulkan.c: the Vulkan compute backend, SPEC.md's four stages as compute
 * shaders (shaders/terrain.comp, erosion.comp, hydraulic.comp,
 * normals.comp, embedded as SPIR-V) recorded into one command buffer per
 * world.  Every field on the device covers the rectangle R = wg_job_rect()
 * (the world, or a region and its halo), which the shaders treat as a
 * world of its own size (the terrain alone places it in the world: the
 * params' ox, oy); the readback takes the window out of it.  The Vulkan
 * plumbing that knows nothing of the stages (instance, device choice,
 * buffers, views, set layouts, pipelines, barriers) is in vulkan_device.c;
 * this file has the stages: their fields, bindings, specialisation
 * constants and recording.
 *
 * Assumptions: a Vulkan 1.1 loader and device with a compute queue; the
 * shaders receive every inexact constant from the host (wg_consts), and mark
 * every expression 'precise', so heights, water and sediment equal the
 * scalar backend's to the bit and normals differ by at most a few ulp (GPU
 * '/' and sqrt).
 *
 * The objects, created in this order by one small function each and
 * destroyed in reverse by vulkan_close() (also after a failure half-way):
 * instance (+ validation messenger) -> physical device -> device and queue
 * -> buffers -> descriptors -> pipelines -> command buffers, query pool and
 * fence.  terrain(), erosion() and hydraulic() only record; normals()
 * records, submits once, waits on the fence and reads the stage times from
 * timestamps; readback() copies the mapped results into the host fields.
 *
 * Adding a stage: its shader (constant ids 0 .. 4 as vulkan_create_pipeline
 * says, its own push constants), a binding table and set layout like the
 * hydraulic stage's (vulkan_hyd_types), its fields in VULKAN_F_*, its sets
 * in vulkan_create_descriptors, its pipelines in vulkan_create_pipelines, a
 * recording function with a timestamp after it, and its results in
 * VULKAN_R_* if it has any.
 *
 * Hydraulic (stage 3 of the SPEC's list of four; hydraulic.comp says how):
 * start, then per step a routing pass and a step pass, then settle, each a
 * dispatch after a barrier.  The state (ground, water, sediment) is one
 * rgba32f texel a cell, ping-ponged between two buffers, and the routing
 * (P, Q) another; start reads the eroded heights and settle writes the
 * final heights into the other height buffer, the water and the sediment
 * into their own.  Whole chunks of VULKAN_HYD_CHUNK steps are one secondary
 * command buffer, executed as often as they fit: the primary stays small
 * at any step count (100000 steps of 2 dispatches each, recorded inline,
 * took lavapipe 175 MB).
 *
 * Readback: where the device has device-local memory that the host can
 * map cached (lavapipe, integrated GPUs) the shaders write it directly and
 * readback() copies it out; elsewhere (discrete GPUs) the command buffer
 * ends with copies into host-visible staging buffers.  WORLDGEN_VK_STAGING=1
 * forces the staging path (the tests use it).
 *
 * Erosion: on a CPU device (lavapipe) VULKAN_K passes per dispatch,
 * blocked in registers, and one dispatch for the remaining passes; on a
 * GPU one pass per dispatch.  WORLDGEN_VK_EROSION=single or blocked forces
 * either (the tests run both).  Where the world fits maxTexelBufferElements
 * the heights are read through r32f texel views (erosion, normals) and the
 * terrain writes them through an r32f storage texel view; else buffers
 * (WORLDGEN_VK_TEXELS=0 forces buffers: the tests use it).
 *
 * Measurements, lavapipe (Mesa 22.3.6, LLVM 15, 256-bit: 8 lanes) on the
 * 2-core CI VM, --size 2048 --octaves 6 --erosion 12, seconds, the least of
 * 9 to 15 interleaved runs (the VM is shared and noisy: medians ran up to
 * 2x the least while other jobs ran):
 *
 *   backend          terrain  erosion  normals  stages
 *   openmp            0.022    0.016    0.003    0.040
 *   vulkan, first     0.109    0.198    0.022    0.329
 *   vulkan, earlier   0.076    0.112    0.023    0.21
 *   vulkan, before    0.027    0.068    0.020    0.115   (2.9x openmp)
 *   vulkan, now       0.027    0.065    0.020    0.112   (2.8x openmp)
 *   at 512 (least of 15): openmp 0.0016/0.0012/0.0001, vulkan earlier
 *   0.0102/0.0095/0.0026, before 0.0057/0.0066/0.0023 (erosion 0.0073
 *   when interleaved with "now"), now erosion 0.0066.
 *
 * Readback 5 ms mapped, 10 ms staged (and 0.2 s more setup for the staging
 * buffers' pages).  The target of 2x openmp is not met.  What costs, and
 * what was tried:
 * - lavapipe 22.3 turns every storage-buffer (and shared-memory) access
 *   into a loop over the 8 lanes with a branch and a bounds check per
 *   lane; texel fetches are gathered with plain loads and no branches.
 *   robustBufferAccess is not enabled (vulkan_dev_create asks for no
 *   features), and changes nothing here: the per-lane checks stay.  An
 *   erosion pass that only copies src to dst (one load, one store per
 *   cell) costs 0.06 to 0.09 s for 12 passes, against OpenMP's 0.016 for
 *   the whole stage: this device cannot reach 2x with per-cell loads and
 *   stores, and the ALU per cell is also several times OpenMP's (8 lanes
 *   against AVX-512's 16, plus lavapipe's exec masks).
 * - terrain: the lattice as quads (texel (ix, iy) holds the four corners
 *   a, b, c, d, an rgba32f uniform texel buffer made on the host from the
 *   same lattice): one gather per octave instead of four lane loops,
 *   0.106 -> 0.077 to 0.081 s.  (A single r32f texel buffer was +7 %.)
 *   The octave count as a specialisation constant (the driver unrolls the
 *   loop; glslc cannot, see below): 0.080 -> 0.051 s; the octave table and
 *   inv_n, base, inv_norm as specialisation constants too (the same host
 *   binary32 values, no longer indexed uniform loads): -> 0.032; the
 *   height stored with imageStore to an r32f storage texel view: -> 0.028.
 *   (imageStore for the erosion's dst was +12 %, for the normals no gain.)
 * - normals: the heights read as r32f texels: 0.024 -> 0.021 s.
 * - erosion, one pass per dispatch (the GPU kernel): 1, 4, 8, 16 cells
 *   down a column sliding a 3x3 window: 0.44, 0.24, 0.19, 0.18 s; 8 kept;
 *   reading src as r32f texels: 0.185 -> 0.17 s.
 * - erosion, temporally blocked (erosion.comp, PASSES > 0, the default on
 *   a CPU device): each invocation keeps K passes' last rows of a strip W
 *   wide (+K each side) in registers, so a pass costs (W+2K)/(W*K) loads
 *   and 1/K stores per cell.  Least of 8 at 2048, when each cell still
 *   computed all eight exchanges: W=8 K=4 0.124, W=4 K=4 0.115, W=8 K=2
 *   0.132, single pass 0.173 s.  Each neighbour pair's term now computed
 *   once for both cells (exact: e(b, a) = -e(a, b) in binary32; each cell
 *   still sums its eight in the SPEC's order, the three upward ones
 *   carried from the row above as one partial sum, which also frees a
 *   row per pass): medians W=4 0.122 -> 0.101 s; with the freed
 *   registers W=8 0.081, W=12 and W=16 about 10 % less again (W=12 kept:
 *   W=16 is slower at 512).  H=256 instead of 128: no gain.  Every loop
 *   variable is written under lavapipe's exec mask (a select on its old
 *   value), so all rows of every pass stay live.  Shared memory (the usual
 *   GPU tiling) would not help here: lavapipe loops over the lanes for
 *   shared loads too.
 * - erosion's term as e = d - clamp(d, lo, hi), the clamp written as two
 *   selects, with the bounds (-T, T) or (-inf, +inf) where the pair does
 *   not exist (made once per strip, and per row for the diagonals): 7
 *   operations a term instead of 9 plus the 'ok' masks.  Interleaved at
 *   2048 (a noisy VM, another job on one core): least of 15 0.068 ->
 *   0.065 s, medians equal (0.076); at 512 (21 runs) medians 0.0076 ->
 *   0.0071, least 0.0073 -> 0.0066.  Tried and dropped, each within the
 *   noise or worse: clamp() itself (lavapipe's fmin and fmax handle NaN:
 *   slower than the selects), selects instead of min/max for the diagonal
 *   bounds, the diagonal terms' row test folded into the multiplier (e *
 *   (rate or +0): least +5 %), K = 6 (W = 12: +6 to +13 %, W = 8: worse),
 *   W = 16 and H = 64 with the new term (+5 to +10 % at 2048 and 512),
 *   the row loop unrolled twice to halve the masked writes of the carried
 *   rows (+25 %: the body no longer fits the caches).
 * - glslc -O's loop unroller drops 'precise' from the copies it makes and
 *   then fuses them into Fma (heights off by 1 ulp): erosion.comp writes
 *   its unrolled loops out with the preprocessor instead of [[unroll]],
 *   and the terrain's loop bound is a specialisation constant, which glslc
 *   cannot unroll (lavapipe's NIR keeps each copy's 'exact').
 * - workgroups 8x8, 16x16, 32x8, 64x4 for terrain and normals: the same
 *   within the noise; 16x16 kept.  LP_NATIVE_VECTOR_WIDTH=512 (16 lanes)
 *   changed nothing measurable.
 * - first touch: lavapipe's memory is fresh host memory and a page fault
 *   costs about 15 us on this VM (0.25 s per 64 MiB).  Untouched, normals
 *   took 0.11 s and the readback 0.2 s; open() now touches every mapped
 *   buffer and the host fields, as the OpenMP backend does, so that cost
 *   shows as setup.
 * - hydraulic, --size 512 --erosion 12 --hydraulic 100, the least of 5
 *   interleaved runs while other jobs kept the VM's load near 3: scalar
 *   1.15 s, openmp 1.32, vulkan 1.93 (pass 1 about 40 %, pass 2 60 %).
 *   Every texel fetch costs lavapipe about as much as a few dozen
 *   operations, so the fetches, not the arithmetic, set the time: pass 2
 *   for 40 steps took 2.40 s with storage-buffer reads, 0.78 s with one
 *   r32f texel per field and value (five fetches per cell of the window),
 *   0.41 s with the state and the routing packed as rgba32f (two; the
 *   three figures span revisions of the stage's arithmetic, so take them
 *   as ratios).  The 3x3 window slides down 8 rows (see vulkan_plan).
 *   Recorded inline, 100000 steps took 175 MB of commands (1.75 KB a
 *   step); as chunks of VULKAN_HYD_CHUNK steps in a secondary command
 *   buffer, the process stays at 80 MB, in the same time (lavapipe pays
 *   about 60 us a dispatch: a small world with many steps is bound by
 *   that).
 * Left to try: erosion's dst through imageStore without the per-column
 * branch; fusing the normals into the last erosion dispatch (a halo of
 * K + 1).
 * Timestamps: lavapipe's queue has timestampValidBits 64 and a
 * timestampPeriod of 1 ns; their span agrees with the host's submit-to-fence
 * time within 0.3 ms. */
#ifdef WG_HAVE_VULKAN

#define _GNU_SOURCE /* pthread_getattr_default_np */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <vulkan/vulkan.h>

#include "backend.h"
#include "vulkan.h"
#include "vulkan_device.h"

/* The shaders, compiled by the Makefile (glslc -mfmt=c) into C initialiser
 * lists, so the binary runs from any directory. */
static const uint32_t vulkan_terrain_spv[] =
#include "shaders/terrain.spv.inc"
    ;
static const uint32_t vulkan_erosion_spv[] =
#include "shaders/erosion.spv.inc"
    ;
static const uint32_t vulkan_hydraulic_spv[] =
#include "shaders/hydraulic.spv.inc"
    ;
static const uint32_t vulkan_normals_spv[] =
#include "shaders/normals.spv.inc"
    ;

/* The uniform block 'params' of the shaders, std140: the scalars, then the
 * octave table as an array of structs (std140 rounds a struct's alignment
 * and the array stride up to 16 bytes, hence the padding).  The stages run
 * on the rectangle R (vulkan_ctx.all) as on a world of w x h cells whose
 * border is R's edge (see openmp_stage.h: exact on the window); the terrain
 * alone needs R's place in the world, (ox, oy). */
typedef struct vulkan_params {
    uint32_t w, octaves;
    float inv_n, base, inv_norm, talus, rate, k1, k2;
    uint32_t h, ox, oy;
    struct {
        float freq, amp, offs, cosv, sinv, pad[3];
    } oct[WG_MAX_OCTAVES];
} vulkan_params;
_Static_assert(sizeof(vulkan_params) == 48 + 32 * WG_MAX_OCTAVES,
               "vulkan_params must match the shaders' std140 block");

/* The push constants of hydraulic.comp (std430, in this order): the
 * stage's host constants, copied by name from wg_consts (vulkan_hydraulic),
 * and R's width and height. */
typedef struct vulkan_hyd_consts {
    float sea, slope_d, kf, f_max, rain, keep, kc, ke, kd, creep_o, creep_d, ka,
        eps;
    uint32_t w, h;
} vulkan_hyd_consts;
_Static_assert(sizeof(vulkan_hyd_consts) == 60,
               "vulkan_hyd_consts must match hydraulic.comp's push constants");

/* The blocked erosion kernel's shape (erosion.comp: W, K, H): each
 * invocation makes W columns and H rows of up to K passes. */
enum { VULKAN_W = 12, VULKAN_K = 4, VULKAN_H = 128 };

/* Descriptor bindings of terrain, erosion and normals (each declares the
 * ones it uses): one set layout, one pipeline layout, two sets for
 * ping-pong. */
enum {
    VULKAN_B_PARAMS = 0, /* uniform: vulkan_params */
    VULKAN_B_LATTICE,    /* uniform texel buffer, rgba32f: the lattice quads */
    VULKAN_B_SRC,        /* storage: heights read (erosion, normals) */
    VULKAN_B_DST,        /* storage: heights written (terrain, erosion) */
    VULKAN_B_NX,
    VULKAN_B_NY,
    VULKAN_B_NZ,
    VULKAN_B_SRC_TEXELS, /* uniform texel buffer, r32f: the heights read */
    VULKAN_B_DST_TEXELS, /* storage texel buffer, r32f: heights written */
    VULKAN_BINDINGS
};

static const VkDescriptorType vulkan_types[VULKAN_BINDINGS] = {
    [VULKAN_B_PARAMS] = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
    [VULKAN_B_LATTICE] = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
    [VULKAN_B_SRC] = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
    [VULKAN_B_DST] = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
    [VULKAN_B_NX] = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
    [VULKAN_B_NY] = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
    [VULKAN_B_NZ] = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
    [VULKAN_B_SRC_TEXELS] = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
    [VULKAN_B_DST_TEXELS] = VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER,
};

/* Descriptor bindings of the hydraulic stage (hydraulic.comp): its own set
 * layout, pipeline layout (with the push constants) and two sets, one per
 * parity of the state's ping-pong (see vulkan_create_descriptors). */
enum {
    /* Uniform texel buffers: the eroded heights (r32f), the state and the
     * routing read (rgba32f). */
    VULKAN_H_HEIGHT_TEXELS,
    VULKAN_H_ST_TEXELS,
    VULKAN_H_RT_TEXELS,
    /* Storage texel buffers (rgba32f): the state and the routing written. */
    VULKAN_H_ST_IMAGE,
    VULKAN_H_RT_IMAGE,
    /* Storage buffers: the same five, for a world too large for texels. */
    VULKAN_H_HEIGHT,
    VULKAN_H_ST,
    VULKAN_H_RT,
    VULKAN_H_ST_OUT,
    VULKAN_H_RT_OUT,
    /* Storage buffers: the results, the final heights and water, and the
     * sediment's buffer, which holds b0 from start to settle. */
    VULKAN_H_HEIGHT_OUT,
    VULKAN_H_WATER_OUT,
    VULKAN_H_SED,
    VULKAN_H_BINDINGS
};

static const VkDescriptorType vulkan_hyd_types[VULKAN_H_BINDINGS] = {
#define U VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
#define I VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER
#define S VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
    U, U, U, I, I, S, S, S, S, S, S, S, S,
#undef U
#undef I
#undef S
};

/* Hydraulic steps per secondary command buffer, which the stage executes
 * as often as it fits (even: each starts from state A).  Recorded inline,
 * 100000 steps took lavapipe 175 MB of commands; 32 make the commands
 * of any step count at most about 6 MB, and cost nothing measurable. */
enum { VULKAN_HYD_CHUNK = 32 };
_Static_assert(VULKAN_HYD_CHUNK % 2 == 0, "a chunk must end on state A");

/* The hydraulic passes (hydraulic.comp's PASS), one pipeline each. */
enum { VULKAN_HYD_START, VULKAN_HYD_START_ONLY, VULKAN_HYD_ROUTE,
       VULKAN_HYD_STEP, VULKAN_HYD_SETTLE, VULKAN_HYD_PASSES };

/* Timestamps: before terrain, after terrain, erosion, hydraulic, normals,
 * after the copies to the staging buffers. */
enum { VULKAN_TS_START, VULKAN_TS_TERRAIN, VULKAN_TS_EROSION,
       VULKAN_TS_HYDRAULIC, VULKAN_TS_NORMALS, VULKAN_TS_COPIES,
       VULKAN_TS_COUNT };

/* The fields on the device: two heights (ping-pong), three normals, the
 * water and the sediment, one float a cell each (r32f); and the hydraulic
 * stage's state, two of them (ping-pong), and its routing, four floats a
 * cell each (rgba32f; one texel in all when the world runs no step).  The
 * starting ground b0 waits in the sediment's buffer, which settle
 * overwrites with the net sediment. */
enum { VULKAN_F_HEIGHT_A, VULKAN_F_HEIGHT_B, VULKAN_F_NX, VULKAN_F_NY,
       VULKAN_F_NZ, VULKAN_F_WATER, VULKAN_F_SEDIMENT, VULKAN_F_STATE_A,
       VULKAN_F_STATE_B, VULKAN_F_ROUTE, VULKAN_FIELDS };

/* The results, in the order readback hands them over. */
enum { VULKAN_R_HEIGHT, VULKAN_R_WATER, VULKAN_R_SEDIMENT, VULKAN_R_NX,
       VULKAN_R_NY, VULKAN_R_NZ, VULKAN_RESULTS };

typedef struct vulkan_ctx {
    const wg_job *job;
    wg_rect all, win;    /* the rectangle computed (R), the window read back */
    uint32_t wg_x, wg_y; /* workgroup size (specialisation constants) */
    uint32_t rows;       /* cells down a column per erosion invocation */
    uint32_t hyd_rows;   /* the same for the hydraulic passes */
    int staged;          /* results go through host-visible staging buffers */
    int blocked;         /* erosion runs VULKAN_K passes per dispatch */
    int texels;          /* fields are read (and the hydraulic state
                            written) through texel views, else buffers */

    vulkan_dev d; /* instance, physical device, device, queue */

    vulkan_buf params, lattice, field[VULKAN_FIELDS];
    vulkan_buf upload;             /* staged: params and lattice going in */
    vulkan_buf rb[VULKAN_RESULTS]; /* staged: the results coming out */

    VkBufferView lat_view, field_view[VULKAN_FIELDS];
    VkDescriptorPool pool;
    VkDescriptorSetLayout set_layout, hyd_set_layout;
    VkDescriptorSet set[2];     /* [0]: A -> B, [1]: B -> A */
    VkDescriptorSet hyd_set[2]; /* [a]: read state a, write 1 - a */
    VkPipelineLayout pipe_layout, hyd_pipe_layout;
    VkPipeline terrain, erosion, normals;
    VkPipeline erosion_k, erosion_rest; /* blocked: K passes, passes % K */
    VkPipeline hyd[VULKAN_HYD_PASSES];  /* those this world runs */

    VkCommandPool cmd_pool;
    VkCommandBuffer cmd;
    VkCommandBuffer hyd_chunk; /* VULKAN_HYD_CHUNK hydraulic steps, or NULL */
    VkQueryPool queries;
    VkFence fence;
    wg_fields out;         /* host fields, filled and handed over by readback */
    int submitted;         /* the fence has something to wait for */
    double readback_gpu_s; /* staged: the device copies, for readback */
} vulkan_ctx;

/* ------------------------------------------------------------ the world */

/* Bytes in MiB, for the limits' messages: rounded to 0.01 MiB, so that a
 * world one row too large does not read "needs 128 MiB, allows 128 MiB". */
static double vulkan_mib(uint64_t bytes)
{
    return (double)bytes / 1048576.0;
}

/* The largest N whose N*N cells of 'floats' floats each fit in 'limit'
 * bytes. */
static uint32_t vulkan_largest_side(uint64_t limit, uint64_t floats)
{
    uint64_t cells = limit / (floats * sizeof(float));
    uint64_t side = (uint64_t)sqrt((double)cells);
    while (side * side > cells)
        side--;
    while ((side + 1) * (side + 1) <= cells)
        side++;
    return side > UINT32_MAX ? UINT32_MAX : (uint32_t)side;
}

/* The workgroup size, the readback strategy and the limits of the world on
 * the chosen device.  -1 with a reason when the world does not fit. */
static int vulkan_plan(vulkan_ctx *v, char *err)
{
    const VkPhysicalDeviceLimits *lim = &v->d.props.limits;
    const uint32_t n = v->job->world.size;
    const int region = v->job->region.w != 0;

    /* 16x16, the usual choice on GPUs: on lavapipe the shape changes
     * nothing beyond the noise (see the measurements at the top); 8x8 where
     * a device allows fewer than 256 invocations (the guaranteed minimum is
     * 128).  Eight rows per erosion invocation: 1, 4, 8 and 16 rows took
     * 0.44, 0.24, 0.19 and 0.18 s of erosion on lavapipe. */
    v->wg_x = v->wg_y = 16;
    if (lim->maxComputeWorkGroupInvocations < 256 ||
        lim->maxComputeWorkGroupSize[0] < 16 ||
        lim->maxComputeWorkGroupSize[1] < 16)
        v->wg_x = v->wg_y = 8;
    v->rows = 8;
    /* The hydraulic passes: one row per invocation took about 2.5 times as
     * long as 8 on lavapipe (each texel fetched nine times a cell instead
     * of three); 4, 8 and 16 were within the noise. */
    v->hyd_rows = 8;

    /* Erosion: on a CPU device (lavapipe) K passes per dispatch, blocked in
     * registers; a GPU gets one pass per dispatch.  WORLDGEN_VK_EROSION=
     * single or blocked overrides (the tests run both).  The heights are
     * read as texels where the world fits a texel buffer (below). */
    const char *ero = getenv("WORLDGEN_VK_EROSION");
    v->blocked = v->d.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (ero && strcmp(ero, "single") == 0)
        v->blocked = 0;
    else if (ero && strcmp(ero, "blocked") == 0)
        v->blocked = 1;
    v->texels = wg_rect_cells(v->all) <= lim->maxTexelBufferElements;
    /* WORLDGEN_VK_TEXELS=0: storage-buffer reads everywhere, as on a
     * device whose texel buffers are too small for the world (the tests
     * use it). */
    const char *tex = getenv("WORLDGEN_VK_TEXELS");
    if (tex && strcmp(tex, "0") == 0)
        v->texels = 0;

    /* Where the device's own memory is host-visible and cached (lavapipe,
     * most integrated GPUs), the shaders write straight into memory the
     * host reads; otherwise (a discrete GPU) they write device-local
     * buffers that the command buffer copies to host-visible staging ones.
     * WORLDGEN_VK_STAGING=1 forces the staging path, to test and measure
     * it on a unified-memory device. */
    const char *force = getenv("WORLDGEN_VK_STAGING");
    v->staged = (force && strcmp(force, "1") == 0) ||
                !vulkan_dev_has_memory(&v->d,
                                       VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                           VK_MEMORY_PROPERTY_HOST_CACHED_BIT);

    /* Each field is one storage buffer with its own allocation.  A region
     * run's messages name the rectangle it computes, not the world. */
    uint64_t bytes = (uint64_t)wg_rect_cells(v->all) * sizeof(float);
    uint64_t limit = lim->maxStorageBufferRange;
    if (v->d.max_alloc < limit)
        limit = v->d.max_alloc;
    if (bytes > limit && region)
        return wg_fail(err, "vulkan: %s need %.2f MiB per field but %s "
                       "allows at most %.2f MiB per buffer: use a smaller "
                       "--region, fewer --erosion passes and --hydraulic "
                       "steps (a smaller halo), or a CPU backend",
                       v->d.what, vulkan_mib(bytes), v->d.props.deviceName,
                       vulkan_mib(limit));
    if (bytes > limit)
        return wg_fail(err, "vulkan: a %ux%u world needs %.2f MiB per field "
                       "but %s allows at most %.2f MiB per buffer (the "
                       "largest world it takes is %" PRIu32 "x%" PRIu32
                       "): use a smaller --size or a CPU backend", n, n,
                       vulkan_mib(bytes), v->d.props.deviceName,
                       vulkan_mib(limit), vulkan_largest_side(limit, 1),
                       vulkan_largest_side(limit, 1));
    /* The hydraulic stage's state and routing: four floats a cell, as
     * texels (one allocation each) or storage buffers. */
    uint64_t packed = 4 * bytes, plimit = v->texels ? v->d.max_alloc : limit;
    if (v->job->world.steps > 0 && packed > plimit && region)
        return wg_fail(err, "vulkan: the hydraulic stage of %s needs %.2f "
                       "MiB per buffer but %s allows at most %.2f MiB: use "
                       "a smaller --region, fewer --hydraulic steps or a "
                       "CPU backend", v->d.what, vulkan_mib(packed),
                       v->d.props.deviceName, vulkan_mib(plimit));
    if (v->job->world.steps > 0 && packed > plimit)
        return wg_fail(err, "vulkan: the hydraulic stage of a %ux%u world "
                       "needs %.2f MiB per buffer but %s allows at most %.2f "
                       "MiB (the largest world it takes with the hydraulic "
                       "stage is %" PRIu32 "x%" PRIu32 "): use a smaller "
                       "--size, --hydraulic 0 or a CPU backend", n, n,
                       vulkan_mib(packed), v->d.props.deviceName,
                       vulkan_mib(plimit), vulkan_largest_side(plimit, 4),
                       vulkan_largest_side(plimit, 4));
    /* Each pipeline's bindings within the device's per-stage limits (the
     * hydraulic one is made whatever the steps). */
    if (vulkan_layout_fits(lim, v->d.props.deviceName,
                           "terrain, erosion and normals", vulkan_types,
                           VULKAN_BINDINGS, err) != 0 ||
        vulkan_layout_fits(lim, v->d.props.deviceName, "hydraulic",
                           vulkan_hyd_types, VULKAN_H_BINDINGS, err) != 0)
        return -1;
    uint64_t gx = (v->all.w + v->wg_x - 1) / v->wg_x,
             gy = (v->all.h + v->wg_y - 1) / v->wg_y;
    if (gx > lim->maxComputeWorkGroupCount[0] ||
        gy > lim->maxComputeWorkGroupCount[1])
        /* Only a region this long reaches it (1048560 cells a side on a
         * device with the minimum 65535): say what fits. */
        return wg_fail(err, "vulkan: computing %s takes %llu x %llu "
                       "workgroups of %ux%u cells, but %s dispatches at "
                       "most %u x %u (maxComputeWorkGroupCount): use a "
                       "--region whose cells with the halo are at most "
                       "%llu across and %llu down, or a CPU backend",
                       v->d.what, (unsigned long long)gx,
                       (unsigned long long)gy, v->wg_x, v->wg_y,
                       v->d.props.deviceName,
                       lim->maxComputeWorkGroupCount[0],
                       lim->maxComputeWorkGroupCount[1],
                       (unsigned long long)lim->maxComputeWorkGroupCount[0] *
                           v->wg_x,
                       (unsigned long long)lim->maxComputeWorkGroupCount[1] *
                           v->wg_y);
    return 0;
}

/* The erosion's dispatches: one per pass, or blocked one per K passes and
 * one for the rest. */
static uint32_t vulkan_erosion_dispatches(const vulkan_ctx *v)
{
    uint32_t passes = v->job->world.passes;
    if (!v->blocked)
        return passes;
    return passes / VULKAN_K + (passes % VULKAN_K != 0);
}

/* Which height buffer (0: A, 1: B) holds the heights after the erosion:
 * terrain writes A, each erosion dispatch the other one. */
static int vulkan_eroded(const vulkan_ctx *v)
{
    return (int)(vulkan_erosion_dispatches(v) & 1u);
}

/* Which height buffer (0: A, 1: B) holds the final heights: the hydraulic
 * stage reads the eroded ones and writes the other. */
static int vulkan_final(const vulkan_ctx *v)
{
    return 1 - vulkan_eroded(v);
}

/* The field that holds result r (VULKAN_R_*) once every stage has run. */
static int vulkan_result_field(const vulkan_ctx *v, int r)
{
    static const int field[VULKAN_RESULTS] = {
        [VULKAN_R_WATER] = VULKAN_F_WATER, [VULKAN_R_SEDIMENT] = VULKAN_F_SEDIMENT,
        [VULKAN_R_NX] = VULKAN_F_NX,       [VULKAN_R_NY] = VULKAN_F_NY,
        [VULKAN_R_NZ] = VULKAN_F_NZ,
    };
    return r == VULKAN_R_HEIGHT ? VULKAN_F_HEIGHT_A + vulkan_final(v)
                                : field[r];
}

/* Floats a cell of field f holds: 4 for the hydraulic state and routing,
 * else 1. */
static uint32_t vulkan_floats(int f)
{
    return f >= VULKAN_F_STATE_A ? 4 : 1;
}

/* Cells of field f: one for the state and the routing of a world without
 * steps (they must exist, but nothing reads or writes them). */
static VkDeviceSize vulkan_cells(const vulkan_ctx *v, int f)
{
    if (f >= VULKAN_F_STATE_A && v->job->world.steps == 0)
        return 1;
    return wg_rect_cells(v->all);
}

/* The staging buffers' layout (staged): the window's rows at R's stride,
 * from the window's first cell to its last, one contiguous span of R
 * (the window itself when it spans R's width).  One copy a field: a copy
 * region per row had made a tall region's readback 6 x rows copies, and
 * the validation layer checks their overlaps pairwise (20000 rows took it
 * 176 s, a region 1048560 rows tall would not end). */
static wg_rect vulkan_span(const vulkan_ctx *v)
{
    return (wg_rect){v->win.x, v->win.y, v->all.w, v->win.h};
}

/* Floats of the span: its rows but the last one whole, then the window's
 * part of that. */
static VkDeviceSize vulkan_span_floats(const vulkan_ctx *v)
{
    return (VkDeviceSize)(v->win.h - 1) * v->all.w + v->win.w;
}

/* ----------------------------------------------------------------- buffers */

/* The params block of the shaders, from the job's host constants and R. */
static void vulkan_fill_params(const wg_consts *c, wg_rect all,
                               vulkan_params *p)
{
    memset(p, 0, sizeof *p);
    p->w = all.w;
    p->h = all.h;
    p->ox = all.x;
    p->oy = all.y;
    p->octaves = c->octaves;
    p->inv_n = c->inv_n;
    p->base = c->base;
    p->inv_norm = c->inv_norm;
    p->talus = c->talus;
    p->rate = c->rate;
    p->k1 = c->k1;
    p->k2 = c->k2;
    for (int o = 0; o < WG_MAX_OCTAVES; o++) {
        p->oct[o].freq = c->freq[o];
        p->oct[o].amp = c->amp[o];
        p->oct[o].offs = c->offs[o];
        p->oct[o].cosv = c->cos[o];
        p->oct[o].sinv = c->sin[o];
    }
}

/* The lattice as quads: texel (ix, iy) holds cell(ix, iy), cell(ix + 1,
 * iy), cell(ix, iy + 1), cell(ix + 1, iy + 1), the four corners one octave
 * of one cell reads, so that the shader fetches them as one vec4. */
static void vulkan_fill_quads(const float *lat, float *quad)
{
    const uint32_t r = WG_LATTICE_R, m = WG_LATTICE_R - 1;
    for (uint32_t iy = 0; iy < r; iy++)
        for (uint32_t ix = 0; ix < r; ix++) {
            float *q = quad + 4 * ((size_t)iy * r + ix);
            q[0] = lat[iy * r + ix];
            q[1] = lat[iy * r + ((ix + 1) & m)];
            q[2] = lat[((iy + 1) & m) * r + ix];
            q[3] = lat[((iy + 1) & m) * r + ((ix + 1) & m)];
        }
}

/* The fields, the params and the lattice, and (staged) the staging buffers;
 * the inputs are written into whichever of them the host can map. */
static int vulkan_create_buffers(vulkan_ctx *v, char *err)
{
    const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                coherent = host |
                                           VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                cached = host |
                                         VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    const VkBufferUsageFlags xfer = VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                    VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    vulkan_dev *d = &v->d;
    /* The results come back as the window's span (vulkan_span). */
    VkDeviceSize field = vulkan_span_floats(v) * sizeof(float);
    VkDeviceSize lat = (VkDeviceSize)WG_LATTICE_R * WG_LATTICE_R * 4 *
                       sizeof(float);
    /* Staged: everything the shaders touch is device-local (else any
     * memory).  Mapped: it also lives where the host reads and writes it
     * (else any host-visible memory: it must be mapped). */
    VkMemoryPropertyFlags in = v->staged ? local : local | coherent,
                          out = v->staged ? local : local | cached,
                          other = v->staged ? 0 : host;

    if (vulkan_buf_create(d, &v->params, sizeof(vulkan_params),
                          VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | xfer, in,
                          other, err) ||
        vulkan_buf_create(d, &v->lattice, lat,
                          VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT | xfer, in,
                          other, err))
        return -1;
    for (int f = 0; f < VULKAN_FIELDS; f++) {
        VkDeviceSize size = vulkan_cells(v, f) * vulkan_floats(f) *
                            sizeof(float);
        if (vulkan_buf_create(d, &v->field[f], size,
                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                  VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                                  VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT |
                                  xfer, out,
                              other, err))
            return -1;
    }

    vulkan_params params;
    vulkan_fill_params(&v->job->consts, v->all, &params);
    float *quad = malloc(lat);
    if (!quad)
        return wg_fail(err, "vulkan: out of memory");
    vulkan_fill_quads(v->job->lattice, quad);
    if (v->staged) {
        /* params at 0, the lattice after it; the copies are the first
         * commands of the command buffer. */
        if (vulkan_buf_create(d, &v->upload, sizeof params + lat,
                              VK_BUFFER_USAGE_TRANSFER_SRC_BIT, coherent,
                              host, err))
            goto fail;
        for (int i = 0; i < VULKAN_RESULTS; i++)
            if (vulkan_buf_create(d, &v->rb[i], field,
                                  VK_BUFFER_USAGE_TRANSFER_DST_BIT, cached,
                                  host, err))
                goto fail;
        if (!v->upload.map) {
            wg_fail(err, "vulkan: the upload buffer is not mapped");
            goto fail;
        }
        memcpy(v->upload.map, &params, sizeof params);
        memcpy((char *)v->upload.map + sizeof params, quad, lat);
        free(quad);
        return vulkan_buf_flush(d, &v->upload, err);
    }
    if (!v->params.map || !v->lattice.map) {
        wg_fail(err, "vulkan: the input buffers are not mapped");
        goto fail;
    }
    memcpy(v->params.map, &params, sizeof params);
    memcpy(v->lattice.map, quad, lat);
    free(quad);
    if (vulkan_buf_flush(d, &v->params, err) ||
        vulkan_buf_flush(d, &v->lattice, err))
        return -1;
    return 0;
fail:
    free(quad);
    return -1;
}

/* ------------------------------------------------------------- descriptors */

/* Add the descriptors of 'sets' sets of a layout with 'count' bindings of
 * 'types' to the pool sizes (one per VkDescriptorType up to
 * STORAGE_BUFFER). */
static void vulkan_count_types(VkDescriptorPoolSize *sizes,
                               const VkDescriptorType *types, uint32_t count,
                               uint32_t sets)
{
    for (uint32_t b = 0; b < count; b++)
        sizes[types[b]].descriptorCount += sets;
}

static int vulkan_create_descriptors(vulkan_ctx *v, char *err)
{
    vulkan_dev *d = &v->d;

    /* Texel views: the lattice quads (one rgba32f texel each) and every
     * field (r32f, or rgba32f), as far as maxTexelBufferElements reaches. */
    VkDeviceSize max_texels = d->props.limits.maxTexelBufferElements;
    if (vulkan_view_create(d, &v->lattice, VK_FORMAT_R32G32B32A32_SFLOAT,
                           VK_WHOLE_SIZE, &v->lat_view, err))
        return -1;
    for (int f = 0; f < VULKAN_FIELDS; f++) {
        VkDeviceSize cells = vulkan_cells(v, f);
        if (cells > max_texels)
            cells = max_texels;
        VkFormat format = vulkan_floats(f) == 4
                              ? VK_FORMAT_R32G32B32A32_SFLOAT
                              : VK_FORMAT_R32_SFLOAT;
        if (vulkan_view_create(d, &v->field[f], format,
                               cells * vulkan_floats(f) * sizeof(float),
                               &v->field_view[f], err))
            return -1;
    }

    if (vulkan_set_layout_create(d, vulkan_types, VULKAN_BINDINGS,
                                 &v->set_layout, err) ||
        vulkan_set_layout_create(d, vulkan_hyd_types, VULKAN_H_BINDINGS,
                                 &v->hyd_set_layout, err))
        return -1;

    VkDescriptorPoolSize sizes[VK_DESCRIPTOR_TYPE_STORAGE_BUFFER + 1];
    for (uint32_t t = 0; t <= VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; t++)
        sizes[t] = (VkDescriptorPoolSize){(VkDescriptorType)t, 0};
    vulkan_count_types(sizes, vulkan_types, VULKAN_BINDINGS, 2);
    vulkan_count_types(sizes, vulkan_hyd_types, VULKAN_H_BINDINGS, 2);
    VkDescriptorPoolSize used[VK_DESCRIPTOR_TYPE_STORAGE_BUFFER + 1];
    uint32_t n_used = 0;
    for (uint32_t t = 0; t <= VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; t++)
        if (sizes[t].descriptorCount)
            used[n_used++] = sizes[t];
    VkDescriptorPoolCreateInfo pool = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 4,
        .poolSizeCount = n_used,
        .pPoolSizes = used,
    };
    VK_CHECK(vkCreateDescriptorPool(d->device, &pool, NULL, &v->pool));

    VkDescriptorSetLayout layouts[4] = {v->set_layout, v->set_layout,
                                        v->hyd_set_layout, v->hyd_set_layout};
    VkDescriptorSet sets[4];
    VkDescriptorSetAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = v->pool,
        .descriptorSetCount = 4,
        .pSetLayouts = layouts,
    };
    VK_CHECK(vkAllocateDescriptorSets(d->device, &alloc, sets));
    memcpy(v->set, sets, sizeof v->set);
    memcpy(v->hyd_set, sets + 2, sizeof v->hyd_set);

    /* set[s] reads height s and writes the other one. */
    for (int s = 0; s < 2; s++) {
        int src = VULKAN_F_HEIGHT_A + s, dst = VULKAN_F_HEIGHT_B - s;
        vulkan_bind b[VULKAN_BINDINGS] = {
            [VULKAN_B_PARAMS] = {.buf = &v->params},
            [VULKAN_B_LATTICE] = {.view = v->lat_view},
            [VULKAN_B_SRC] = {.buf = &v->field[src]},
            [VULKAN_B_DST] = {.buf = &v->field[dst]},
            [VULKAN_B_NX] = {.buf = &v->field[VULKAN_F_NX]},
            [VULKAN_B_NY] = {.buf = &v->field[VULKAN_F_NY]},
            [VULKAN_B_NZ] = {.buf = &v->field[VULKAN_F_NZ]},
            [VULKAN_B_SRC_TEXELS] = {.view = v->field_view[src]},
            [VULKAN_B_DST_TEXELS] = {.view = v->field_view[dst]},
        };
        for (int i = 0; i < VULKAN_BINDINGS; i++)
            b[i].type = vulkan_types[i];
        vulkan_set_write(d, v->set[s], b, VULKAN_BINDINGS);
    }

    /* hyd_set[a] reads state a (A or B) and writes the other; both read
     * the eroded heights and write the other height buffer.  Step i uses
     * hyd_set[i & 1], start hyd_set[1] (it writes state A), settle the set
     * that reads what the last step wrote. */
    int eroded = VULKAN_F_HEIGHT_A + vulkan_eroded(v),
        final = VULKAN_F_HEIGHT_A + vulkan_final(v);
    for (int a = 0; a < 2; a++) {
        int st = VULKAN_F_STATE_A + a, st_out = VULKAN_F_STATE_B - a,
            rt = VULKAN_F_ROUTE;
        vulkan_bind b[VULKAN_H_BINDINGS] = {
            [VULKAN_H_HEIGHT_TEXELS] = {.view = v->field_view[eroded]},
            [VULKAN_H_ST_TEXELS] = {.view = v->field_view[st]},
            [VULKAN_H_RT_TEXELS] = {.view = v->field_view[rt]},
            [VULKAN_H_ST_IMAGE] = {.view = v->field_view[st_out]},
            [VULKAN_H_RT_IMAGE] = {.view = v->field_view[rt]},
            [VULKAN_H_HEIGHT] = {.buf = &v->field[eroded]},
            [VULKAN_H_ST] = {.buf = &v->field[st]},
            [VULKAN_H_RT] = {.buf = &v->field[rt]},
            [VULKAN_H_ST_OUT] = {.buf = &v->field[st_out]},
            [VULKAN_H_RT_OUT] = {.buf = &v->field[rt]},
            [VULKAN_H_HEIGHT_OUT] = {.buf = &v->field[final]},
            [VULKAN_H_WATER_OUT] = {.buf = &v->field[VULKAN_F_WATER]},
            [VULKAN_H_SED] = {.buf = &v->field[VULKAN_F_SEDIMENT]},
        };
        for (int i = 0; i < VULKAN_H_BINDINGS; i++)
            b[i].type = vulkan_hyd_types[i];
        vulkan_set_write(d, v->hyd_set[a], b, VULKAN_H_BINDINGS);
    }
    return 0;
fail:
    return -1;
}

/* --------------------------------------------------------------- pipelines */

/* A pipeline of one of the shaders, specialised for this world. */
static int vulkan_create_pipeline(vulkan_ctx *v, VkPipelineLayout layout,
                                  const uint32_t *code, size_t size,
                                  uint32_t wg_x, uint32_t wg_y, uint32_t rows,
                                  uint32_t select, VkPipeline *pipe,
                                  char *err)
{
    /* The workgroup size (local_size_x_id = 0, local_size_y_id = 1), the
     * rows per invocation (constant_id = 2: erosion, hydraulic), the
     * stage's own selector (3: the erosion's passes per dispatch, the
     * hydraulic pass) and texel reads (4, a VkBool32); the host's binary32
     * constants inv_n, base, inv_norm, talus, rate, k1, k2 (6 .. 12: the
     * terrain and the normals use theirs; the erosion reads talus and rate
     * from the block, 12 % faster than as constants); the terrain's octave
     * count (5) and octave table (16 + o: cos, 32 + o: sin, 48 + o: freq,
     * 64 + o: amp, 80 + o: offs), so that the driver unrolls the octave
     * loop around constants.  An entry the shader lacks is ignored. */
    _Static_assert(WG_MAX_OCTAVES == 16, "terrain.comp's constant ids");
    enum { NSCAL = 13, NSPEC = NSCAL + 5 * WG_MAX_OCTAVES };
    const wg_consts *c = &v->job->consts;
    uint32_t consts[NSPEC] = {wg_x, wg_y, rows, select,
                              v->texels ? VK_TRUE : VK_FALSE,
                              v->job->world.octaves};
    const float scal[NSCAL - 6] = {c->inv_n, c->base,  c->inv_norm, c->talus,
                                   c->rate,  c->k1,    c->k2};
    memcpy(&consts[6], scal, sizeof scal);
    VkSpecializationMapEntry entries[NSPEC];
    for (uint32_t i = 0; i < NSCAL; i++)
        entries[i] = (VkSpecializationMapEntry){
            .constantID = i, .offset = 4 * i, .size = sizeof(uint32_t)};
    const float *table[5] = {c->cos, c->sin, c->freq, c->amp, c->offs};
    for (uint32_t t = 0; t < 5; t++)
        for (uint32_t o = 0; o < WG_MAX_OCTAVES; o++) {
            uint32_t i = NSCAL + t * WG_MAX_OCTAVES + o;
            memcpy(&consts[i], &table[t][o], sizeof(uint32_t));
            entries[i] = (VkSpecializationMapEntry){
                .constantID = 16 * (t + 1) + o, .offset = 4 * i,
                .size = sizeof(uint32_t)};
        }
    VkSpecializationInfo spec = {
        .mapEntryCount = NSPEC,
        .pMapEntries = entries,
        .dataSize = sizeof consts,
        .pData = consts,
    };
    return vulkan_pipeline_create(&v->d, layout, code, size, &spec, pipe,
                                  err);
}

static int vulkan_create_pipelines(vulkan_ctx *v, char *err)
{
    VkDevice dev = v->d.device;
    VkPipelineLayoutCreateInfo layout = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &v->set_layout,
    };
    VK_CHECK(vkCreatePipelineLayout(dev, &layout, NULL, &v->pipe_layout));
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0,
                                sizeof(vulkan_hyd_consts)};
    VkPipelineLayoutCreateInfo hyd_layout = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &v->hyd_set_layout,
        .pushConstantRangeCount = 1,
        .pPushConstantRanges = &push,
    };
    VK_CHECK(vkCreatePipelineLayout(dev, &hyd_layout, NULL,
                                    &v->hyd_pipe_layout));

    VkPipelineLayout pl = v->pipe_layout;
    uint32_t passes = v->job->world.passes, rest = passes % VULKAN_K;
    if (vulkan_create_pipeline(v, pl, vulkan_terrain_spv,
                               sizeof vulkan_terrain_spv, v->wg_x, v->wg_y,
                               v->rows, 0, &v->terrain, err) ||
        vulkan_create_pipeline(v, pl, vulkan_normals_spv,
                               sizeof vulkan_normals_spv, v->wg_x, v->wg_y,
                               v->rows, 0, &v->normals, err))
        return -1;
    /* Only the erosion pipelines this world runs: each costs a JIT. */
    if (!v->blocked && passes > 0 &&
        vulkan_create_pipeline(v, pl, vulkan_erosion_spv,
                               sizeof vulkan_erosion_spv, v->wg_x, v->wg_y,
                               v->rows, 0, &v->erosion, err))
        return -1;
    /* Blocked: a row of 8 invocations (one SIMD vector on lavapipe). */
    if (v->blocked && passes >= VULKAN_K &&
        vulkan_create_pipeline(v, pl, vulkan_erosion_spv,
                               sizeof vulkan_erosion_spv, 8, 1, v->rows,
                               VULKAN_K, &v->erosion_k, err))
        return -1;
    if (v->blocked && rest > 0 &&
        vulkan_create_pipeline(v, pl, vulkan_erosion_spv,
                               sizeof vulkan_erosion_spv, 8, 1, v->rows,
                               rest, &v->erosion_rest, err))
        return -1;
    /* The hydraulic passes this world runs. */
    for (uint32_t p = 0; p < VULKAN_HYD_PASSES; p++) {
        int used = v->job->world.steps ? p != VULKAN_HYD_START_ONLY
                                       : p == VULKAN_HYD_START_ONLY;
        if (used &&
            vulkan_create_pipeline(v, v->hyd_pipe_layout,
                                   vulkan_hydraulic_spv,
                                   sizeof vulkan_hydraulic_spv, v->wg_x,
                                   v->wg_y, v->hyd_rows, p, &v->hyd[p], err))
            return -1;
    }
    return 0;
fail:
    return -1;
}

/* ---------------------------------------- command buffer, queries, fence */

static int vulkan_create_commands(vulkan_ctx *v, char *err)
{
    VkDevice dev = v->d.device;
    VkCommandPoolCreateInfo pool = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
        .queueFamilyIndex = v->d.family,
    };
    VK_CHECK(vkCreateCommandPool(dev, &pool, NULL, &v->cmd_pool));
    VkCommandBufferAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = v->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VK_CHECK(vkAllocateCommandBuffers(dev, &alloc, &v->cmd));
    if (v->job->world.steps >= VULKAN_HYD_CHUNK) {
        alloc.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
        VK_CHECK(vkAllocateCommandBuffers(dev, &alloc, &v->hyd_chunk));
    }
    if (v->d.ts_bits > 0) {
        VkQueryPoolCreateInfo queries = {
            .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
            .queryType = VK_QUERY_TYPE_TIMESTAMP,
            .queryCount = VULKAN_TS_COUNT,
        };
        VK_CHECK(vkCreateQueryPool(dev, &queries, NULL, &v->queries));
    }
    VkFenceCreateInfo fence = {
        .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO,
    };
    VK_CHECK(vkCreateFence(dev, &fence, NULL, &v->fence));
    return 0;
fail:
    return -1;
}

/* ----------------------------------------------------------------- backend */

static void vulkan_close(void *ctx)
{
    vulkan_ctx *v = ctx;
    if (!v)
        return;
    VkDevice dev = v->d.device;
    if (dev) {
        /* Nothing may be destroyed while the queue still uses it (a stage
         * that failed after the submit). */
        if (v->submitted)
            vkDeviceWaitIdle(dev);
        if (v->fence)
            vkDestroyFence(dev, v->fence, NULL);
        if (v->queries)
            vkDestroyQueryPool(dev, v->queries, NULL);
        if (v->cmd_pool) /* frees v->cmd and v->hyd_chunk */
            vkDestroyCommandPool(dev, v->cmd_pool, NULL);
        VkPipeline pipes[] = {v->normals, v->erosion_rest, v->erosion_k,
                              v->erosion, v->terrain};
        for (int p = VULKAN_HYD_PASSES - 1; p >= 0; p--)
            if (v->hyd[p])
                vkDestroyPipeline(dev, v->hyd[p], NULL);
        for (size_t p = 0; p < sizeof pipes / sizeof pipes[0]; p++)
            if (pipes[p])
                vkDestroyPipeline(dev, pipes[p], NULL);
        if (v->hyd_pipe_layout)
            vkDestroyPipelineLayout(dev, v->hyd_pipe_layout, NULL);
        if (v->pipe_layout)
            vkDestroyPipelineLayout(dev, v->pipe_layout, NULL);
        if (v->pool) /* frees the sets */
            vkDestroyDescriptorPool(dev, v->pool, NULL);
        if (v->hyd_set_layout)
            vkDestroyDescriptorSetLayout(dev, v->hyd_set_layout, NULL);
        if (v->set_layout)
            vkDestroyDescriptorSetLayout(dev, v->set_layout, NULL);
        for (int f = VULKAN_FIELDS - 1; f >= 0; f--)
            if (v->field_view[f])
                vkDestroyBufferView(dev, v->field_view[f], NULL);
        if (v->lat_view)
            vkDestroyBufferView(dev, v->lat_view, NULL);
        for (int i = VULKAN_RESULTS - 1; i >= 0; i--)
            vulkan_buf_destroy(&v->d, &v->rb[i]);
        vulkan_buf_destroy(&v->d, &v->upload);
        for (int f = VULKAN_FIELDS - 1; f >= 0; f--)
            vulkan_buf_destroy(&v->d, &v->field[f]);
        vulkan_buf_destroy(&v->d, &v->lattice);
        vulkan_buf_destroy(&v->d, &v->params);
    }
    vulkan_dev_destroy(&v->d);
    wg_fields_free(&v->out);
    free(v);
}

/* Instance, device choice and the world's limits: all probe() needs. */
static vulkan_ctx *vulkan_start(const wg_job *job, char *err)
{
    vulkan_ctx *v = calloc(1, sizeof *v);
    if (!v) {
        wg_fail(err, "vulkan: out of memory");
        return NULL;
    }
    v->job = job;
    v->all = wg_job_rect(job);
    v->win = wg_job_window(job);
    wg_job_describe(job, v->d.what, sizeof v->d.what);
    if (vulkan_dev_instance(&v->d, err) ||
        vulkan_dev_pick(&v->d, job->gpu, job->power, err) ||
        vulkan_plan(v, err)) {
        vulkan_close(v);
        return NULL;
    }
    return v;
}

/* Whether the device the last probe chose keeps its memory in the host's
 * (a CPU implementation such as lavapipe, an integrated GPU): then its
 * buffers count against the machine's memory (vulkan_host_bytes).  -1: no
 * probe yet. */
static int vulkan_probed_shared = -1;

static int vulkan_probe(const wg_job *job, char *err)
{
    vulkan_ctx *v = vulkan_start(job, err);
    if (!v)
        return -1;
    VkPhysicalDeviceType type = v->d.props.deviceType;
    vulkan_probed_shared = type == VK_PHYSICAL_DEVICE_TYPE_CPU ||
                           type == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
    vulkan_close(v);
    return 0;
}

/* The host memory of a run: on a device that shares it, every field
 * buffer (seven of a float a cell, and with hydraulic steps the state's
 * two and the routing, of four); else the staging buffers (six results);
 * and the results read back (six fields of the window).  lavapipe at
 * 2048 and 4096 with steps: 97 bytes a cell measured, 100 counted. */
static double vulkan_host_bytes(const wg_job *job)
{
    double cells = (double)wg_rect_cells(wg_job_rect(job));
    double window = (double)wg_rect_cells(wg_job_window(job));
    double device = vulkan_probed_shared != 0
                        ? 7.0 + (job->world.steps > 0 ? 12.0 : 0.0)
                        : 6.0;
    return sizeof(float) * (device * cells + 6.0 * window);
}

/* For --mesh auto: a real GPU wins from the reference chapter's crossover
 * (about 100 cells a side, a few ms of scalar work) up, counting the
 * stages alone.  But a user waits for its set-up too, and only asking
 * which devices there are loads every driver: lavapipe's (with LLVM) took
 * 35 ms of a 45 ms run at --size 64 on the 2-core CI machine, against 10
 * ms with --mesh openmp; a GPU's instance, device and pipelines take
 * more.  So below VULKAN_AUTO_MIN seconds of scalar work, where no device
 * can win back its set-up, auto does not look (--size 64 and 128 with the
 * default counts; 256 and up do).  A CPU implementation such as lavapipe
 * runs on the same cores as openmp and is slower than scalar itself (the
 * default 512 world: 5.6 s against 4.0 s on the 2-core CI machine), so
 * auto never picks it, and where the machine has no GPU's device node at
 * all (vulkan_gpu_node) it does not look either: the default world's
 * probe of lavapipe alone was 30-35 ms of its 0.65 s. */
#define VULKAN_AUTO_MIN 0.25

/* Whether a GPU driver could be here: a DRM render node (Mesa's and
 * AMD's, Intel's, virtio's), NVIDIA's control node, or WSL's GPU. */
static int vulkan_gpu_node(void)
{
    static const char *const nodes[] = {"/dev/nvidiactl", "/dev/dxg"};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        if (access(nodes[i], F_OK) == 0)
            return 1;
    DIR *d = opendir("/dev/dri");
    int found = 0;
    for (struct dirent *e; d && !found && (e = readdir(d));)
        found = strncmp(e->d_name, "renderD", 7) == 0;
    if (d)
        closedir(d);
    return found;
}

static int vulkan_auto_rank(const wg_job *job)
{
    if (wg_scalar_seconds(job) < VULKAN_AUTO_MIN || !vulkan_gpu_node())
        return 0;
    char err[WG_ERR_LEN];
    vulkan_ctx *v = vulkan_start(job, err);
    if (!v) /* it might have won: probe() then says why it cannot run */
        return 100;
    int gpu = v->d.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    vulkan_close(v);
    return gpu ? 100 : 0;
}

/* The threads a CPU device starts with its device, for its stacks: a
 * rasteriser thread per CPU online (LP_NUM_THREADS, where it says more)
 * and four more (two of its queue, its disk cache's and one other), as
 * lavapipe (Mesa 22.3) starts them on 2 CPUs. */
static long vulkan_cpu_device_threads(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *lp = getenv("LP_NUM_THREADS");
    long asked = lp ? strtol(lp, NULL, 10) : 0;
    cpus = cpus < 1 ? 1 : cpus;
    return (asked > cpus && asked < 1024 ? asked : cpus) + 4;
}

/* Under an address space limit (ulimit -v), a CPU device's driver maps
 * what its device needs from what the limit leaves, and lavapipe did not
 * survive too little: a segmentation fault (or glibc's "double free or
 * corruption") in vkCreateDevice when a thread of its pool got no stack,
 * and in vkCreateComputePipelines when LLVM got no memory for its code.
 * Measured with one malloc arena (main keeps one under a limit), --size
 * 16 on 2 CPUs: the device 52.7 MiB (six threads of 8 MiB stacks), the
 * pipelines 6 MiB, and every run with less than 8 MiB left by then
 * crashed.  So the device is counted as a stack for each of its threads
 * (vulkan_cpu_device_threads), the run's host memory (vulkan_host_bytes:
 * its buffers and the fields read back) and 32 MiB for the shader
 * compiler, against the limit less what is mapped now (the instance made:
 * the driver and LLVM loaded).  Returns 0, or -1 with err saying both. */
static int vulkan_address_space_check(const vulkan_ctx *v, char *err)
{
    struct rlimit rl;
    if (v->d.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU ||
        getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    unsigned long long vm_kib = 0;
    char line[256];
    FILE *fp = fopen("/proc/self/status", "r");
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "VmSize: %llu kB", &vm_kib) == 1)
            break;
    if (fp)
        fclose(fp);
    if (vm_kib == 0) /* no /proc: what is mapped is not known */
        return 0;
    size_t stack = 8u << 20;
    pthread_attr_t attr;
    if (pthread_getattr_default_np(&attr) == 0) {
        pthread_attr_getstacksize(&attr, &stack);
        pthread_attr_destroy(&attr);
    }
    const double mib = 1048576.0;
    const double need = (double)vulkan_cpu_device_threads() * (double)stack +
                        vulkan_host_bytes(v->job) + 32.0 * mib;
    double left = (double)rl.rlim_cur - (double)vm_kib * 1024.0;
    left = left > 0 ? left : 0;
    if (left >= need)
        return 0;
    return wg_fail(err, "vulkan: %s needs %.0f MiB more address space for "
                   "%s (its threads' stacks, the buffers and its shader "
                   "compiler), and the address space limit (ulimit -v) "
                   "leaves it %.0f MiB: raise the limit, or use another "
                   "backend", v->d.props.deviceName, ceil(need / mib), v->d.what,
                   floor(left / mib));
}

/* The threads lavapipe (Mesa 22.3) cannot run without: its queue's, and
 * with two or more rasteriser threads (LP_NUM_THREADS, else one per CPU
 * online, 32 at most) those and two more.  Measured under ulimit -u
 * with its disk cache unwritable: it runs with exactly these beside the
 * main thread, and with one fewer it waits for ever in its first submit
 * (with a writable cache one fewer ran: a limit that tight is refused). */
static int vulkan_cpu_device_needs_threads(void)
{
    const char *lp = getenv("LP_NUM_THREADS");
    long n = lp ? strtol(lp, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    n = n < 1 ? 1 : n > 32 ? 32 : n;
    return n <= 1 ? 1 : (int)n + 2;
}

/* Under a limit on processes (ulimit -u, a control group's pids.max), a
 * CPU device whose threads could not all start did not fail: lavapipe
 * waited for ever in its first submit (on 2 CPUs, any limit that left it
 * fewer than 4 threads).  So the threads it needs are started here first,
 * all at once, and ended.  Returns 0, or -1 with err naming the limit. */
static int vulkan_threads_check(const vulkan_ctx *v, char *err)
{
    if (v->d.props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU)
        return 0;
    const int need = vulkan_cpu_device_needs_threads();
    int e;
    const int n = wg_threads_try(need, NULL, NULL, &e);
    if (n == need)
        return 0;
    if (e < 0)
        return wg_fail(err, "vulkan: out of memory for %d threads", need);
    return wg_fail(err, "vulkan: %s needs %d threads beside this one for %s, "
                   "and only %d could start (%s: a limit on processes, "
                   "ulimit -u or a control group's pids.max): raise the "
                   "limit, or use another backend", v->d.props.deviceName,
                   need, v->d.what, n, strerror(e));
}

static void *vulkan_open(const wg_job *job, wg_times *t, char *err)
{
    (void)t; /* registry.c times all of open() as the setup */
    vulkan_ctx *v = vulkan_start(job, err);
    if (!v)
        return NULL;
    if (vulkan_address_space_check(v, err) || vulkan_threads_check(v, err) ||
        vulkan_dev_create(&v->d, err) || vulkan_create_buffers(v, err) ||
        vulkan_create_descriptors(v, err) ||
        vulkan_create_pipelines(v, err) || vulkan_create_commands(v, err))
        goto fail;
    /* The host fields (the window), touched now for the same reason as
     * the buffers. */
    if (wg_fields_alloc_rect(&v->out, job->world.size, v->win) != 0) {
        wg_fail(err, "vulkan: out of memory for %s", v->d.what);
        goto fail;
    }
    float *f[VULKAN_RESULTS] = {v->out.height, v->out.water, v->out.sediment,
                                v->out.nx,     v->out.ny,    v->out.nz};
    for (int i = 0; i < VULKAN_RESULTS; i++)
        memset(f[i], 0, wg_rect_cells(v->win) * sizeof(float));
    return v;
fail:
    vulkan_close(v);
    return NULL;
}

/* ------------------------------------------------------------------ stages */

/* Each compute pass reads what the one before wrote, and overwrites what
 * the ones before read and wrote. */
static void vulkan_compute_barrier(VkCommandBuffer cmd)
{
    vulkan_barrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

static void vulkan_timestamp(vulkan_ctx *v, uint32_t which)
{
    /* Bottom of pipe: written once every earlier command has finished. */
    if (v->queries)
        vkCmdWriteTimestamp(v->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                            v->queries, which);
}

/* Dispatch the bound pipeline over R, in workgroups of wg_x by wg_y, each
 * invocation 'cols' cells across and 'rows' cells down. */
static void vulkan_grid(const vulkan_ctx *v, VkCommandBuffer cmd,
                        uint32_t wg_x, uint32_t wg_y, uint32_t cols,
                        uint32_t rows)
{
    uint32_t w = (v->all.w + cols - 1) / cols,
             h = (v->all.h + rows - 1) / rows;
    /* ceil(side / wg); the shaders skip the cells past R's edge. */
    vkCmdDispatch(cmd, (w + wg_x - 1) / wg_x, (h + wg_y - 1) / wg_y, 1);
}

/* Run 'pipe' of the terrain, erosion or normals with set[set]. */
static void vulkan_dispatch(vulkan_ctx *v, VkPipeline pipe, int set,
                            uint32_t wg_x, uint32_t wg_y, uint32_t cols,
                            uint32_t rows)
{
    vkCmdBindPipeline(v->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(v->cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
                            v->pipe_layout, 0, 1, &v->set[set], 0, NULL);
    vulkan_grid(v, v->cmd, wg_x, wg_y, cols, rows);
}

static int vulkan_terrain(void *ctx, wg_times *t, char *err)
{
    (void)t; /* the stage times come from the timestamps, in normals() */
    vulkan_ctx *v = ctx;
    VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    VK_CHECK(vkBeginCommandBuffer(v->cmd, &begin));
    if (v->queries)
        vkCmdResetQueryPool(v->cmd, v->queries, 0, VULKAN_TS_COUNT);
    if (v->staged) {
        VkBufferCopy params = {0, 0, sizeof(vulkan_params)};
        VkBufferCopy lat = {sizeof(vulkan_params), 0, v->lattice.size};
        vkCmdCopyBuffer(v->cmd, v->upload.buf, v->params.buf, 1, &params);
        vkCmdCopyBuffer(v->cmd, v->upload.buf, v->lattice.buf, 1, &lat);
        /* The shaders read the params and the lattice just copied. */
        vulkan_barrier(v->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_UNIFORM_READ_BIT | VK_ACCESS_SHADER_READ_BIT);
    }
    vulkan_timestamp(v, VULKAN_TS_START);
    /* set 1 writes height A */
    vulkan_dispatch(v, v->terrain, 1, v->wg_x, v->wg_y, 1, 1);
    vulkan_timestamp(v, VULKAN_TS_TERRAIN);
    return 0;
fail:
    return -1;
}

static int vulkan_erosion(void *ctx, wg_times *t, char *err)
{
    (void)t;
    (void)err;
    vulkan_ctx *v = ctx;
    uint32_t count = vulkan_erosion_dispatches(v);
    for (uint32_t i = 0; i < count; i++) {
        /* Ping-pong: even dispatches read A and write B, odd ones the
         * reverse.  Each reads what the previous one (or terrain) wrote,
         * and overwrites what the one before read and wrote. */
        vulkan_compute_barrier(v->cmd);
        int set = (int)(i & 1u);
        if (!v->blocked)
            vulkan_dispatch(v, v->erosion, set, v->wg_x, v->wg_y, 1,
                            v->rows);
        else
            vulkan_dispatch(v, i < v->job->world.passes / VULKAN_K
                                   ? v->erosion_k
                                   : v->erosion_rest,
                            set, 8, 1, VULKAN_W, VULKAN_H);
    }
    vulkan_timestamp(v, VULKAN_TS_EROSION);
    return 0;
}

/* The hydraulic stage's constants, for the passes recorded into 'cmd'
 * after it (a secondary command buffer inherits no state, and a primary
 * keeps none across vkCmdExecuteCommands). */
static void vulkan_hyd_push(const vulkan_ctx *v, VkCommandBuffer cmd)
{
    const wg_hyd_consts *k = &v->job->consts.hyd;
    vulkan_hyd_consts push = {
        .sea = k->sea,   .slope_d = k->slope_d, .kf = k->kf, .f_max = k->f_max,
        .rain = k->rain, .keep = k->keep,       .kc = k->kc,
        .ke = k->ke,     .kd = k->kd,           .creep_o = k->creep_o,
        .creep_d = k->creep_d, .ka = k->ka,     .eps = k->eps,
        .w = v->all.w,
        .h = v->all.h,
    };
    vkCmdPushConstants(cmd, v->hyd_pipe_layout, VK_SHADER_STAGE_COMPUTE_BIT,
                       0, sizeof push, &push);
}

/* One hydraulic pass with hyd_set[set] (see vulkan_create_descriptors),
 * after everything recorded before it. */
static void vulkan_hyd_pass(const vulkan_ctx *v, VkCommandBuffer cmd,
                            int pass, int set)
{
    vulkan_compute_barrier(cmd);
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, v->hyd[pass]);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
                            v->hyd_pipe_layout, 0, 1, &v->hyd_set[set], 0,
                            NULL);
    vulkan_grid(v, cmd, v->wg_x, v->wg_y, 1, v->hyd_rows);
}

/* Steps first .. first + count - 1 into 'cmd': step i reads state i & 1
 * and writes the other. */
static void vulkan_hyd_steps(const vulkan_ctx *v, VkCommandBuffer cmd,
                             uint32_t first, uint32_t count)
{
    for (uint32_t i = first; i < first + count; i++) {
        int a = (int)(i & 1u);
        vulkan_hyd_pass(v, cmd, VULKAN_HYD_ROUTE, a);
        vulkan_hyd_pass(v, cmd, VULKAN_HYD_STEP, a);
    }
}

static int vulkan_hydraulic(void *ctx, wg_times *t, char *err)
{
    (void)t; /* the stage time comes from the timestamps, in normals() */
    vulkan_ctx *v = ctx;
    uint32_t steps = v->job->world.steps, i = 0;

    /* Start reads the eroded heights and writes state A and b0 (or,
     * without steps, the results). */
    int start = steps ? VULKAN_HYD_START : VULKAN_HYD_START_ONLY;
    vulkan_hyd_push(v, v->cmd);
    vulkan_hyd_pass(v, v->cmd, start, 1);
    if (v->hyd_chunk) {
        /* Whole chunks: the secondary command buffer again and again (its
         * step count is even, so each starts from state A). */
        VkCommandBufferInheritanceInfo inherit = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        };
        VkCommandBufferBeginInfo begin = {
            .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
            .flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT,
            .pInheritanceInfo = &inherit,
        };
        VK_CHECK(vkBeginCommandBuffer(v->hyd_chunk, &begin));
        vulkan_hyd_push(v, v->hyd_chunk);
        vulkan_hyd_steps(v, v->hyd_chunk, 0, VULKAN_HYD_CHUNK);
        VK_CHECK(vkEndCommandBuffer(v->hyd_chunk));
        for (; i + VULKAN_HYD_CHUNK <= steps; i += VULKAN_HYD_CHUNK)
            vkCmdExecuteCommands(v->cmd, 1, &v->hyd_chunk);
        vulkan_hyd_push(v, v->cmd);
    }
    /* The steps left, and settle: it reads the last step's state and b0,
     * and writes the results. */
    vulkan_hyd_steps(v, v->cmd, i, steps - i);
    if (steps)
        vulkan_hyd_pass(v, v->cmd, VULKAN_HYD_SETTLE, (int)(steps & 1u));
    vulkan_timestamp(v, VULKAN_TS_HYDRAULIC);
    return 0;
fail:
    return -1;
}

/* Seconds between two timestamps, which wrap at timestampValidBits. */
static double vulkan_elapsed(const vulkan_ctx *v, const uint64_t *ts,
                             int from, int to)
{
    uint64_t mask = v->d.ts_bits >= 64 ? ~0ull : (1ull << v->d.ts_bits) - 1;
    uint64_t ticks = (ts[to] - ts[from]) & mask;
    return (double)ticks * (double)v->d.props.limits.timestampPeriod * 1e-9;
}

static int vulkan_normals(void *ctx, wg_times *t, char *err)
{
    vulkan_ctx *v = ctx;

    /* The normals read the heights the hydraulic stage wrote (set[s]
     * reads height s). */
    vulkan_compute_barrier(v->cmd);
    vulkan_dispatch(v, v->normals, vulkan_final(v), v->wg_x, v->wg_y, 1, 1);
    vulkan_timestamp(v, VULKAN_TS_NORMALS);
    if (v->staged) {
        /* The copies read the results. */
        vulkan_barrier(v->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_READ_BIT);
        /* The window's span of R (vulkan_span), one copy a field. */
        VkBufferCopy span = {
            .srcOffset = (((VkDeviceSize)(v->win.y - v->all.y) * v->all.w) +
                          (v->win.x - v->all.x)) * sizeof(float),
            .dstOffset = 0,
            .size = vulkan_span_floats(v) * sizeof(float),
        };
        for (int i = 0; i < VULKAN_RESULTS; i++)
            vkCmdCopyBuffer(v->cmd, v->field[vulkan_result_field(v, i)].buf,
                            v->rb[i].buf, 1, &span);
        vulkan_timestamp(v, VULKAN_TS_COPIES);
        /* The host reads the staging buffers after the fence. */
        vulkan_barrier(v->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    } else {
        /* The host reads the fields themselves after the fence. */
        vulkan_barrier(v->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    }
    VK_CHECK(vkEndCommandBuffer(v->cmd));

    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &v->cmd,
    };
    double t0 = wg_now();
    VK_CHECK(vkQueueSubmit(v->d.queue, 1, &submit, v->fence));
    v->submitted = 1;
    /* Wait: the fields and the timestamps exist once the queue has run the
     * whole command buffer. */
    VK_CHECK(vkWaitForFences(v->d.device, 1, &v->fence, VK_TRUE,
                             UINT64_MAX));
    double host_s = wg_now() - t0;
    v->submitted = 0;

    if (!v->queries) {
        /* No timestamps on this queue: the stages ran as one submission
         * and only its total is known; it is reported under normals, the
         * stage that waited for it. */
        t->normals += host_s;
        return 0;
    }
    uint64_t ts[VULKAN_TS_COUNT] = {0};
    uint32_t count = v->staged ? VULKAN_TS_COUNT : VULKAN_TS_NORMALS + 1;
    /* WAIT_BIT costs nothing here: the fence says they are written. */
    VK_CHECK(vkGetQueryPoolResults(v->d.device, v->queries, 0, count,
                                   sizeof ts, ts, sizeof ts[0],
                                   VK_QUERY_RESULT_64_BIT |
                                       VK_QUERY_RESULT_WAIT_BIT));
    t->terrain += vulkan_elapsed(v, ts, VULKAN_TS_START, VULKAN_TS_TERRAIN);
    t->erosion += vulkan_elapsed(v, ts, VULKAN_TS_TERRAIN, VULKAN_TS_EROSION);
    t->hydraulic +=
        vulkan_elapsed(v, ts, VULKAN_TS_EROSION, VULKAN_TS_HYDRAULIC);
    t->normals += vulkan_elapsed(v, ts, VULKAN_TS_HYDRAULIC,
                                 VULKAN_TS_NORMALS);
    if (v->staged)
        v->readback_gpu_s =
            vulkan_elapsed(v, ts, VULKAN_TS_NORMALS, VULKAN_TS_COPIES);
    return 0;
fail:
    return -1;
}

static int vulkan_readback(void *ctx, wg_fields *out, wg_times *t, char *err)
{
    vulkan_ctx *v = ctx;
    double t0 = wg_now();

    float *to[VULKAN_RESULTS] = {v->out.height, v->out.water,
                                 v->out.sediment, v->out.nx,
                                 v->out.ny,      v->out.nz};
    /* One bulk copy per field, each from its own buffer (staged: the
     * window's span; mapped: R), the window's rows when they are not all
     * of it. */
    const wg_rect win = v->win, all = v->staged ? vulkan_span(v) : v->all;
    for (int i = 0; i < VULKAN_RESULTS; i++) {
        const vulkan_buf *from =
            v->staged ? &v->rb[i] : &v->field[vulkan_result_field(v, i)];
        if (!from->map)
            return wg_fail(err, "vulkan: a result buffer is not mapped");
        if (vulkan_buf_invalidate(&v->d, from, err))
            return -1;
        if (wg_rect_equal(win, all)) {
            memcpy(to[i], from->map, wg_rect_cells(win) * sizeof(float));
            continue;
        }
        const float *src = from->map;
        for (uint32_t y = 0; y < win.h; y++)
            memcpy(to[i] + (size_t)y * win.w,
                   src + (size_t)(win.y + y - all.y) * all.w +
                       (win.x - all.x),
                   win.w * sizeof(float));
    }
    *out = v->out;
    memset(&v->out, 0, sizeof v->out);
    t->readback += wg_now() - t0 + v->readback_gpu_s;
    return 0;
}

static const char *vulkan_device(void *ctx)
{
    vulkan_ctx *v = ctx;
    return v->d.name;
}

const wg_backend wg_backend_vulkan = {
    .name = "vulkan",
    .summary = "Vulkan compute shaders, one command buffer per world",
    .probe = vulkan_probe,
    .host_bytes = vulkan_host_bytes,
    .open = vulkan_open,
    .terrain = vulkan_terrain,
    .erosion = vulkan_erosion,
    .hydraulic = vulkan_hydraulic,
    .normals = vulkan_normals,
    .readback = vulkan_readback,
    .close = vulkan_close,
    .device = vulkan_device,
    .rank = vulkan_auto_rank,
    /* SPEC.md: a GPU's / and sqrt are not correctly rounded. */
    .normal_tolerance = 1e-6,
};

#else /* !WG_HAVE_VULKAN */

/* Built without Vulkan: vulkan_device.c has the stand-ins of vulkan.h, and
 * the backend is a stand-in whose probe says how to get the real one, so
 * --mesh all shows a skip line for it and --mesh vulkan fails with that
 * reason.  probe() always fails, so nothing else is ever called. */
#include "backend.h"

static int vulkan_unbuilt_probe(const wg_job *job, char *err)
{
    (void)job;
    return wg_fail(err, "this worldgen was built without Vulkan: install "
                   "libvulkan-dev and glslc (make deps) and rebuild (make)");
}

const wg_backend wg_backend_vulkan = {
    .name = "vulkan",
    .summary = "Vulkan compute shaders (not in this build: see make deps)",
    .probe = vulkan_unbuilt_probe,
};

#endif
