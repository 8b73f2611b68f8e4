/* vulkan.c: the Vulkan compute backend, SPEC.md's three stages as compute
 * shaders (shaders/terrain.comp, erosion.comp, normals.comp, embedded as
 * SPIR-V) recorded into one command buffer per world.
 *
 * Assumptions: a Vulkan 1.1 loader and device with a compute queue; the
 * shaders receive every inexact constant from the host (wg_consts), and mark
 * every expression 'precise', so heights equal the scalar backend's to the
 * bit and normals differ by at most a few ulp (GPU '/' and sqrt).
 *
 * The objects, created in this order by one small function each and
 * destroyed in reverse by vulkan_close() (also after a failure half-way):
 * instance (+ validation messenger) -> physical device -> device and queue
 * -> buffers -> descriptors -> pipelines -> command buffer, query pool and
 * fence.  terrain() and erosion() only record; normals() records, submits
 * once, waits on the fence and reads the stage times from timestamps;
 * readback() copies the mapped results into the host fields.
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
 * terrain writes them through an r32f storage texel view; else buffers.
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
 *   robustBufferAccess is not enabled (vulkan_create_device asks for no
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
 * Left to try: erosion's dst through imageStore without the per-column
 * branch; fusing the normals into the last erosion dispatch (a halo of
 * K + 1).
 * Timestamps: lavapipe's queue has timestampValidBits 64 and a
 * timestampPeriod of 1 ns; their span agrees with the host's submit-to-fence
 * time within 0.3 ms. */
#ifdef WG_HAVE_VULKAN

#include <ctype.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vulkan/vulkan.h>

#include "backend.h"
#include "vulkan.h"

/* The shaders, compiled by the Makefile (glslc -mfmt=c) into C initialiser
 * lists, so the binary runs from any directory. */
static const uint32_t vulkan_terrain_spv[] =
#include "shaders/terrain.spv.inc"
    ;
static const uint32_t vulkan_erosion_spv[] =
#include "shaders/erosion.spv.inc"
    ;
static const uint32_t vulkan_normals_spv[] =
#include "shaders/normals.spv.inc"
    ;

/* The uniform block 'params' of the shaders, std140: the scalars, then the
 * octave table as an array of structs (std140 rounds a struct's alignment
 * and the array stride up to 16 bytes, hence the padding). */
typedef struct vulkan_params {
    uint32_t n, octaves;
    float inv_n, base, inv_norm, talus, rate, k1, k2;
    float pad0[3];
    struct {
        float freq, amp, offs, cosv, sinv, pad[3];
    } oct[WG_MAX_OCTAVES];
} vulkan_params;
_Static_assert(sizeof(vulkan_params) == 48 + 32 * WG_MAX_OCTAVES,
               "vulkan_params must match the shaders' std140 block");

/* The blocked erosion kernel's shape (erosion.comp: W, K, H): each
 * invocation makes W columns and H rows of up to K passes. */
enum { VULKAN_W = 12, VULKAN_K = 4, VULKAN_H = 128 };

/* Descriptor bindings, shared by the three shaders (each declares the ones
 * it uses): one set layout, one pipeline layout, two sets for ping-pong. */
enum {
    VULKAN_B_PARAMS = 0, /* uniform: vulkan_params */
    VULKAN_B_LATTICE,    /* storage: 256*256 floats */
    VULKAN_B_SRC,        /* storage: heights read (erosion, normals) */
    VULKAN_B_DST,        /* storage: heights written (terrain, erosion) */
    VULKAN_B_NX,
    VULKAN_B_NY,
    VULKAN_B_NZ,
    VULKAN_B_SRC_TEXELS, /* uniform texel buffer, r32f: the heights read */
    VULKAN_B_DST_TEXELS, /* storage texel buffer, r32f: heights written */
    VULKAN_BINDINGS
};

/* Timestamps: before terrain, after terrain, after erosion, after normals,
 * after the copies to the staging buffers. */
enum { VULKAN_TS_START, VULKAN_TS_TERRAIN, VULKAN_TS_EROSION,
       VULKAN_TS_NORMALS, VULKAN_TS_COPIES, VULKAN_TS_COUNT };

/* The fields on the device: two heights (ping-pong) and three normals. */
enum { VULKAN_F_HEIGHT_A, VULKAN_F_HEIGHT_B, VULKAN_F_NX, VULKAN_F_NY,
       VULKAN_F_NZ, VULKAN_FIELDS };

/* A buffer with its own memory, mapped for its whole life when the memory
 * is host-visible. */
typedef struct vulkan_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map;    /* NULL unless host-visible */
    int coherent; /* else flush after writing, invalidate before reading */
} vulkan_buf;

typedef struct vulkan_ctx {
    const wg_job *job;
    uint32_t wg_x, wg_y; /* workgroup size (specialisation constants) */
    uint32_t rows;       /* cells down a column per erosion invocation */
    int staged;          /* results go through host-visible staging buffers */
    int blocked;         /* erosion runs VULKAN_K passes per dispatch */
    int texels;          /* erosion reads the heights as texels */

    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice phys;
    VkPhysicalDeviceProperties props;
    VkPhysicalDeviceMemoryProperties mem_props;
    VkDeviceSize max_alloc; /* maxMemoryAllocationSize (Vulkan 1.1) */
    uint32_t family;        /* the compute queue family */
    uint32_t ts_bits;       /* its timestampValidBits; 0: host timing */
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE + 48];

    VkDevice device;
    VkQueue queue;

    vulkan_buf params, lattice, field[VULKAN_FIELDS];
    vulkan_buf upload;   /* staged: params and lattice on their way in */
    vulkan_buf rb[4];    /* staged: height, nx, ny, nz on their way out */

    VkBufferView lat_view, height_view[2];
    VkDescriptorSetLayout set_layout;
    VkDescriptorPool pool;
    VkDescriptorSet set[2]; /* [0]: A -> B, [1]: B -> A */
    VkPipelineLayout pipe_layout;
    VkPipeline terrain, erosion, normals;
    VkPipeline erosion_k, erosion_rest; /* blocked: K passes, passes % K */

    VkCommandPool cmd_pool;
    VkCommandBuffer cmd;
    VkQueryPool queries;
    VkFence fence;
    wg_fields out;         /* host fields, filled and handed over by readback */
    int submitted;         /* the fence has something to wait for */
    double readback_gpu_s; /* staged: the device copies, for readback */
} vulkan_ctx;

/* The validation layer's messages in this process (any thread). */
static atomic_uint vulkan_validation_messages;

unsigned wg_vulkan_validation_count(void)
{
    return atomic_load(&vulkan_validation_messages);
}

static const char *vulkan_result_name(VkResult r)
{
    switch (r) {
#define VULKAN_CASE(x) case x: return #x;
    VULKAN_CASE(VK_SUCCESS)
    VULKAN_CASE(VK_NOT_READY)
    VULKAN_CASE(VK_TIMEOUT)
    VULKAN_CASE(VK_INCOMPLETE)
    VULKAN_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    VULKAN_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    VULKAN_CASE(VK_ERROR_INITIALIZATION_FAILED)
    VULKAN_CASE(VK_ERROR_DEVICE_LOST)
    VULKAN_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    VULKAN_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    VULKAN_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    VULKAN_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    VULKAN_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    VULKAN_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    VULKAN_CASE(VK_ERROR_UNKNOWN)
#undef VULKAN_CASE
    default:
        return "VkResult (unnamed)";
    }
}

/* Run a Vulkan call; on failure put its name, the VkResult and where into
 * err and jump to 'fail' (every caller has 'char *err' and that label). */
#define VK_CHECK(call)                                                      \
    do {                                                                    \
        VkResult vk_rc_ = (call);                                           \
        if (vk_rc_ != VK_SUCCESS) {                                         \
            wg_fail(err, "vulkan: %.*s failed: %s (%d) at %s:%d",           \
                    (int)strcspn(#call, "("), #call,                        \
                    vulkan_result_name(vk_rc_), (int)vk_rc_, __FILE__,     \
                    __LINE__);                                              \
            goto fail;                                                      \
        }                                                                   \
    } while (0)

static const char *vulkan_type_name(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
    }
}

/* ---------------------------------------------------------------- instance */

static VKAPI_ATTR VkBool32 VKAPI_CALL
vulkan_debug_cb(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                VkDebugUtilsMessageTypeFlagsEXT type,
                const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    (void)severity;
    (void)type;
    (void)user;
    atomic_fetch_add(&vulkan_validation_messages, 1);
    fprintf(stderr, "vulkan validation: %s\n", data->pMessage);
    return VK_FALSE; /* never abort the call that triggered it */
}

static int vulkan_validation_wanted(void)
{
    const char *s = getenv("WORLDGEN_VK_VALIDATION");
    return s && strcmp(s, "1") == 0;
}

/* 1 if the instance extension 'name' is offered by 'layer' (or by the
 * loader and drivers when layer is NULL). */
static int vulkan_has_instance_ext(const char *layer, const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(layer, &n, NULL) != VK_SUCCESS)
        return 0;
    VkExtensionProperties *ext = calloc(n ? n : 1, sizeof *ext);
    int found = 0;
    if (ext && vkEnumerateInstanceExtensionProperties(layer, &n, ext) ==
                   VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(ext[i].extensionName, name) == 0;
    free(ext);
    return found;
}

static int vulkan_has_layer(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS)
        return 0;
    VkLayerProperties *lay = calloc(n ? n : 1, sizeof *lay);
    int found = 0;
    if (lay && vkEnumerateInstanceLayerProperties(&n, lay) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(lay[i].layerName, name) == 0;
    free(lay);
    return found;
}

/* The instance, with the validation layer, synchronisation validation and
 * a messenger when WORLDGEN_VK_VALIDATION=1. */
static int vulkan_create_instance(vulkan_ctx *v, char *err)
{
    static const char layer[] = "VK_LAYER_KHRONOS_validation";
    const char *exts[2];
    uint32_t n_ext = 0;
    int validate = vulkan_validation_wanted();

    uint32_t api = VK_API_VERSION_1_0;
    VK_CHECK(vkEnumerateInstanceVersion(&api));
    if (api < VK_API_VERSION_1_1)
        return wg_fail(err, "vulkan: the loader offers Vulkan %u.%u; "
                       "worldgen needs 1.1", VK_API_VERSION_MAJOR(api),
                       VK_API_VERSION_MINOR(api));

    VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = vulkan_debug_cb,
    };
    /* Synchronisation validation is what checks the barriers between the
     * erosion passes; the core checks alone would not see a missing one. */
    static const VkValidationFeatureEnableEXT features[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT,
    };
    VkValidationFeaturesEXT features_info = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = features,
    };
    if (validate) {
        if (!vulkan_has_layer(layer))
            return wg_fail(err, "vulkan: WORLDGEN_VK_VALIDATION=1 but %s is "
                           "not installed (Debian: vulkan-validationlayers)",
                           layer);
        exts[n_ext++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
        if (vulkan_has_instance_ext(layer,
                                    VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
            exts[n_ext++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
            messenger_info.pNext = &features_info;
        }
    }

    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "worldgen",
        .applicationVersion = VK_MAKE_API_VERSION(0, 0, 1, 0),
        .pEngineName = "worldgen",
        .apiVersion = VK_API_VERSION_1_1,
    };
    VkInstanceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        /* Chained, the messenger also reports vkCreateInstance itself. */
        .pNext = validate ? &messenger_info : NULL,
        .pApplicationInfo = &app,
        .enabledLayerCount = validate ? 1 : 0,
        .ppEnabledLayerNames = validate ? (const char *[]){layer} : NULL,
        .enabledExtensionCount = n_ext,
        .ppEnabledExtensionNames = n_ext ? exts : NULL,
    };
    VkResult rc = vkCreateInstance(&info, NULL, &v->instance);
    if (rc == VK_ERROR_INCOMPATIBLE_DRIVER)
        return wg_fail(err, "no Vulkan driver found (vkCreateInstance: "
                       "VK_ERROR_INCOMPATIBLE_DRIVER; is a driver such as "
                       "mesa-vulkan-drivers installed?)");
    VK_CHECK(rc);

    if (validate) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                v->instance, "vkCreateDebugUtilsMessengerEXT");
        if (!create)
            return wg_fail(err, "vulkan: the validation layer offers no "
                           "vkCreateDebugUtilsMessengerEXT");
        messenger_info.pNext = NULL;
        VK_CHECK(create(v->instance, &messenger_info, NULL, &v->messenger));
    }
    return 0;
fail:
    return -1;
}

/* The messenger and the instance: the first objects made, the last gone.
 * No operation is performed on what was not made. */
static void vulkan_destroy_instance(vulkan_ctx *v)
{
    if (v->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                v->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy)
            destroy(v->instance, v->messenger, NULL);
        v->messenger = VK_NULL_HANDLE;
    }
    if (v->instance)
        vkDestroyInstance(v->instance, NULL);
    v->instance = VK_NULL_HANDLE;
}

/* ---------------------------------------------------------- physical device */

/* The physical devices of the instance; caller frees.  NULL with a reason
 * when there are none. */
static VkPhysicalDevice *vulkan_devices(VkInstance inst, uint32_t *count,
                                        char *err)
{
    VkPhysicalDevice *dev = NULL;
    *count = 0;
    VK_CHECK(vkEnumeratePhysicalDevices(inst, count, NULL));
    if (*count == 0) {
        wg_fail(err, "no Vulkan device found (is a driver such as "
                "mesa-vulkan-drivers installed?)");
        return NULL;
    }
    dev = calloc(*count, sizeof *dev);
    if (!dev) {
        wg_fail(err, "vulkan: out of memory");
        return NULL;
    }
    VK_CHECK(vkEnumeratePhysicalDevices(inst, count, dev));
    return dev;
fail:
    free(dev);
    return NULL;
}

/* The queue family to use on 'pd': the first with compute and timestamps,
 * else the first with compute.  Returns -1 when there is no compute queue.
 * *ts_bits receives the family's timestampValidBits. */
static int vulkan_queue_family(VkPhysicalDevice pd, uint32_t *ts_bits)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties *q = calloc(n ? n : 1, sizeof *q);
    if (!q)
        return -1;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    int best = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0)
            continue;
        if (best < 0 || (q[i].timestampValidBits > 0 &&
                         q[best].timestampValidBits == 0))
            best = (int)i;
    }
    *ts_bits = best >= 0 ? q[best].timestampValidBits : 0;
    free(q);
    return best;
}

/* Why 'pd' cannot run worldgen, or NULL when it can. */
static const char *vulkan_unusable(VkPhysicalDevice pd)
{
    VkPhysicalDeviceProperties p;
    uint32_t bits;
    vkGetPhysicalDeviceProperties(pd, &p);
    if (p.apiVersion < VK_API_VERSION_1_1)
        return "it supports only Vulkan 1.0 (worldgen needs 1.1)";
    if (vulkan_queue_family(pd, &bits) < 0)
        return "it has no compute queue";
    return NULL;
}

/* How much 'power' wants a device of type 't': higher is better. */
static int vulkan_rank(VkPhysicalDeviceType t, wg_power power)
{
    static const VkPhysicalDeviceType fast[] = {
        VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
        VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
        VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, VK_PHYSICAL_DEVICE_TYPE_CPU};
    static const VkPhysicalDeviceType frugal[] = {
        VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
        VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
        VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU, VK_PHYSICAL_DEVICE_TYPE_CPU};
    const VkPhysicalDeviceType *order = power == WG_POWER_LOW ? frugal : fast;
    for (int i = 0; i < 4; i++)
        if (order[i] == t)
            return 4 - i;
    return 0; /* VK_PHYSICAL_DEVICE_TYPE_OTHER */
}

/* 1 if 'hay' contains 'needle', ignoring ASCII case. */
static int vulkan_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) ==
                   tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* Append "0: name (type), 1: ..." to err, for messages that must say what
 * there is to choose from. */
static void vulkan_append_list(char *err, const VkPhysicalDevice *dev,
                               uint32_t count)
{
    size_t len = strlen(err);
    for (uint32_t i = 0; i < count && len < WG_ERR_LEN - 1; i++) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(dev[i], &p);
        int k = snprintf(err + len, WG_ERR_LEN - len, "%s%u: %s (%s)",
                         i ? ", " : "", i, p.deviceName,
                         vulkan_type_name(p.deviceType));
        if (k < 0)
            break;
        len += (size_t)k;
    }
    if (len < WG_ERR_LEN - 1)
        snprintf(err + len, WG_ERR_LEN - len, ")");
}

/* Choose the physical device: job->gpu (an index or a name substring) if
 * given, else the best usable one for job->power; the first in enumeration
 * order wins a tie. */
static int vulkan_pick_device(vulkan_ctx *v, char *err)
{
    const wg_job *job = v->job;
    uint32_t count = 0;
    VkPhysicalDevice *dev = vulkan_devices(v->instance, &count, err);
    if (!dev)
        return -1;

    int chosen = -1;
    if (job->gpu && *job->gpu) {
        const char *g = job->gpu;
        int is_index = g[strspn(g, "0123456789")] == '\0';
        for (uint32_t i = 0; i < count && chosen < 0; i++) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(dev[i], &p);
            if (is_index ? strtoul(g, NULL, 10) == i
                         : vulkan_contains(p.deviceName, g))
                chosen = (int)i;
        }
        if (chosen < 0) {
            wg_fail(err, "vulkan: no device matches --gpu '%s' (available: ",
                    g);
            vulkan_append_list(err, dev, count);
            goto fail;
        }
        const char *why = vulkan_unusable(dev[chosen]);
        if (why) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(dev[chosen], &p);
            wg_fail(err, "vulkan: device %d (%s) cannot run worldgen: %s",
                    chosen, p.deviceName, why);
            goto fail;
        }
    } else {
        int best_rank = -1;
        for (uint32_t i = 0; i < count; i++) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(dev[i], &p);
            int rank = vulkan_rank(p.deviceType, job->power);
            if (!vulkan_unusable(dev[i]) && rank > best_rank) {
                best_rank = rank;
                chosen = (int)i;
            }
        }
        if (chosen < 0) {
            wg_fail(err, "vulkan: no device has Vulkan 1.1 and a compute "
                    "queue (available: ");
            vulkan_append_list(err, dev, count);
            goto fail;
        }
    }

    v->phys = dev[chosen];
    free(dev);
    v->family = (uint32_t)vulkan_queue_family(v->phys, &v->ts_bits);

    VkPhysicalDeviceMaintenance3Properties m3 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
    };
    VkPhysicalDeviceProperties2 p2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
        .pNext = &m3,
    };
    vkGetPhysicalDeviceProperties2(v->phys, &p2);
    v->props = p2.properties;
    v->max_alloc = m3.maxMemoryAllocationSize;
    vkGetPhysicalDeviceMemoryProperties(v->phys, &v->mem_props);
    snprintf(v->name, sizeof v->name, "%s (Vulkan %u.%u, %s)",
             v->props.deviceName, VK_API_VERSION_MAJOR(v->props.apiVersion),
             VK_API_VERSION_MINOR(v->props.apiVersion),
             vulkan_type_name(v->props.deviceType));
    return 0;
fail:
    free(dev);
    return -1;
}

/* 1 if some memory type has all of 'flags'. */
static int vulkan_has_memory(const vulkan_ctx *v, VkMemoryPropertyFlags flags)
{
    for (uint32_t i = 0; i < v->mem_props.memoryTypeCount; i++)
        if ((v->mem_props.memoryTypes[i].propertyFlags & flags) == flags)
            return 1;
    return 0;
}

/* The workgroup size, the readback strategy and the limits of the world on
 * the chosen device.  -1 with a reason when the world does not fit. */
static int vulkan_plan(vulkan_ctx *v, char *err)
{
    const VkPhysicalDeviceLimits *lim = &v->props.limits;
    uint32_t n = v->job->world.size;

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

    /* Erosion: on a CPU device (lavapipe) K passes per dispatch, blocked in
     * registers; a GPU gets one pass per dispatch.  WORLDGEN_VK_EROSION=
     * single or blocked overrides (the tests run both).  The heights are
     * read as texels where the world fits a texel buffer. */
    const char *ero = getenv("WORLDGEN_VK_EROSION");
    v->blocked = v->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (ero && strcmp(ero, "single") == 0)
        v->blocked = 0;
    else if (ero && strcmp(ero, "blocked") == 0)
        v->blocked = 1;
    v->texels = wg_cells(n) <= lim->maxTexelBufferElements;

    /* Where the device's own memory is host-visible and cached (lavapipe,
     * most integrated GPUs), the shaders write straight into memory the
     * host reads; otherwise (a discrete GPU) they write device-local
     * buffers that the command buffer copies to host-visible staging ones.
     * WORLDGEN_VK_STAGING=1 forces the staging path, to test and measure
     * it on a unified-memory device. */
    const char *force = getenv("WORLDGEN_VK_STAGING");
    v->staged = (force && strcmp(force, "1") == 0) ||
                !vulkan_has_memory(v, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT |
                                          VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                          VK_MEMORY_PROPERTY_HOST_CACHED_BIT);

    /* Each field is one storage buffer with its own allocation. */
    uint64_t bytes = (uint64_t)wg_cells(n) * sizeof(float);
    uint64_t limit = lim->maxStorageBufferRange;
    if (v->max_alloc < limit)
        limit = v->max_alloc;
    if (bytes > limit)
        return wg_fail(err, "vulkan: a %ux%u world needs %llu MiB per field "
                       "but %s allows %llu MiB per buffer (the largest world "
                       "it takes is about %ux%u): use a smaller --size or a "
                       "CPU backend", n, n,
                       (unsigned long long)(bytes >> 20), v->props.deviceName,
                       (unsigned long long)(limit >> 20),
                       (unsigned)sqrt((double)(limit / sizeof(float))),
                       (unsigned)sqrt((double)(limit / sizeof(float))));
    uint64_t groups = (n + v->wg_x - 1) / v->wg_x;
    if (groups > lim->maxComputeWorkGroupCount[0] ||
        groups > lim->maxComputeWorkGroupCount[1])
        return wg_fail(err, "vulkan: a %ux%u world needs %llu workgroups "
                       "per side, but %s dispatches at most %u x %u",
                       n, n, (unsigned long long)groups, v->props.deviceName,
                       lim->maxComputeWorkGroupCount[0],
                       lim->maxComputeWorkGroupCount[1]);
    return 0;
}

/* ------------------------------------------------------------------ device */

static int vulkan_create_device(vulkan_ctx *v, char *err)
{
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = v->family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    VkDeviceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue,
    };
    VK_CHECK(vkCreateDevice(v->phys, &info, NULL, &v->device));
    vkGetDeviceQueue(v->device, v->family, 0, &v->queue);
    return 0;
fail:
    return -1;
}

/* ----------------------------------------------------------------- buffers */

/* Make the host's writes to a mapped buffer visible to the device. */
static int vulkan_flush(vulkan_ctx *v, const vulkan_buf *b, char *err)
{
    if (b->coherent)
        return 0;
    VkMappedMemoryRange range = {
        .sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
        .memory = b->mem,
        .size = VK_WHOLE_SIZE,
    };
    VK_CHECK(vkFlushMappedMemoryRanges(v->device, 1, &range));
    return 0;
fail:
    return -1;
}

/* Make the device's writes to a mapped buffer visible to the host. */
static int vulkan_invalidate(vulkan_ctx *v, const vulkan_buf *b, char *err)
{
    if (b->coherent)
        return 0;
    VkMappedMemoryRange range = {
        .sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
        .memory = b->mem,
        .size = VK_WHOLE_SIZE,
    };
    VK_CHECK(vkInvalidateMappedMemoryRanges(v->device, 1, &range));
    return 0;
fail:
    return -1;
}

/* A memory type allowed by 'bits' with all of 'want'; -1 if none. */
static int vulkan_memory_type(const vulkan_ctx *v, uint32_t bits,
                              VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < v->mem_props.memoryTypeCount; i++)
        if ((bits & (1u << i)) &&
            (v->mem_props.memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    return -1;
}

/* A buffer of 'size' bytes in memory with 'want' (else 'fallback'), mapped
 * if host-visible. */
static int vulkan_create_buf(vulkan_ctx *v, vulkan_buf *b, VkDeviceSize size,
                             VkBufferUsageFlags usage,
                             VkMemoryPropertyFlags want,
                             VkMemoryPropertyFlags fallback, char *err)
{
    b->size = size;
    VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VK_CHECK(vkCreateBuffer(v->device, &info, NULL, &b->buf));

    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(v->device, b->buf, &req);
    int type = vulkan_memory_type(v, req.memoryTypeBits, want);
    if (type < 0)
        type = vulkan_memory_type(v, req.memoryTypeBits, fallback);
    if (type < 0)
        return wg_fail(err, "vulkan: %s has no suitable memory type for a "
                       "buffer", v->props.deviceName);
    VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = (uint32_t)type,
    };
    VkResult rc = vkAllocateMemory(v->device, &alloc, NULL, &b->mem);
    if (rc == VK_ERROR_OUT_OF_DEVICE_MEMORY || rc == VK_ERROR_OUT_OF_HOST_MEMORY)
        return wg_fail(err, "vulkan: %s is out of memory for a %ux%u world "
                       "(%s allocating %llu MiB): use a smaller --size",
                       v->props.deviceName, v->job->world.size,
                       v->job->world.size, vulkan_result_name(rc),
                       (unsigned long long)(req.size >> 20));
    VK_CHECK(rc);
    VK_CHECK(vkBindBufferMemory(v->device, b->buf, b->mem, 0));

    VkMemoryPropertyFlags flags =
        v->mem_props.memoryTypes[type].propertyFlags;
    if (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        VK_CHECK(vkMapMemory(v->device, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map));
        b->coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
        /* First touch here, so that the stages do not pay the page faults
         * (lavapipe's memory is fresh host memory: 0.25 s per 64 MiB on the
         * CI machine); the OpenMP backend does the same in its open(). */
        memset(b->map, 0, size);
        if (vulkan_flush(v, b, err))
            return -1;
    }
    return 0;
fail:
    return -1;
}

static void vulkan_destroy_buf(vulkan_ctx *v, vulkan_buf *b)
{
    if (b->map)
        vkUnmapMemory(v->device, b->mem);
    if (b->buf)
        vkDestroyBuffer(v->device, b->buf, NULL);
    if (b->mem)
        vkFreeMemory(v->device, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

/* The params block of the shaders, from the job's host constants. */
static void vulkan_fill_params(const wg_consts *c, vulkan_params *p)
{
    memset(p, 0, sizeof *p);
    p->n = c->n;
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
    VkDeviceSize field = wg_cells(v->job->world.size) * sizeof(float);
    VkDeviceSize lat = (VkDeviceSize)WG_LATTICE_R * WG_LATTICE_R * 4 *
                       sizeof(float);
    /* Staged: everything the shaders touch is device-local (else any
     * memory).  Mapped: it also lives where the host reads and writes it
     * (else any host-visible memory: it must be mapped). */
    VkMemoryPropertyFlags in = v->staged ? local : local | coherent,
                          out = v->staged ? local : local | cached,
                          other = v->staged ? 0 : host;

    if (vulkan_create_buf(v, &v->params, sizeof(vulkan_params),
                          VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | xfer, in,
                          other, err) ||
        vulkan_create_buf(v, &v->lattice, lat,
                          VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT | xfer, in,
                          other, err))
        return -1;
    for (int f = 0; f < VULKAN_FIELDS; f++)
        if (vulkan_create_buf(v, &v->field[f], field,
                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                  VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                                  VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT |
                                  xfer, out,
                              other, err))
            return -1;

    vulkan_params params;
    vulkan_fill_params(&v->job->consts, &params);
    float *quad = malloc(lat);
    if (!quad)
        return wg_fail(err, "vulkan: out of memory");
    vulkan_fill_quads(v->job->lattice, quad);
    if (v->staged) {
        /* params at 0, the lattice after it; the copies are the first
         * commands of the command buffer. */
        if (vulkan_create_buf(v, &v->upload, sizeof params + lat,
                              VK_BUFFER_USAGE_TRANSFER_SRC_BIT, coherent,
                              host, err))
            return -1;
        for (int i = 0; i < 4; i++)
            if (vulkan_create_buf(v, &v->rb[i], field,
                                  VK_BUFFER_USAGE_TRANSFER_DST_BIT, cached,
                                  host, err))
                return -1;
        if (!v->upload.map)
            return wg_fail(err, "vulkan: the upload buffer is not mapped");
        memcpy(v->upload.map, &params, sizeof params);
        memcpy((char *)v->upload.map + sizeof params, quad, lat);
        free(quad);
        return vulkan_flush(v, &v->upload, err);
    }
    if (!v->params.map || !v->lattice.map) {
        free(quad);
        return wg_fail(err, "vulkan: the input buffers are not mapped");
    }
    memcpy(v->params.map, &params, sizeof params);
    memcpy(v->lattice.map, quad, lat);
    free(quad);
    if (vulkan_flush(v, &v->params, err) || vulkan_flush(v, &v->lattice, err))
        return -1;
    return 0;
}

/* ------------------------------------------------------------- descriptors */

static VkDescriptorType vulkan_binding_type(uint32_t b)
{
    switch (b) {
    case VULKAN_B_PARAMS:
        return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    case VULKAN_B_LATTICE:
    case VULKAN_B_SRC_TEXELS:
        return VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    case VULKAN_B_DST_TEXELS:
        return VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
    default:
        return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    }
}

static int vulkan_create_view(vulkan_ctx *v, const vulkan_buf *b,
                              VkFormat format, VkDeviceSize range,
                              VkBufferView *view, char *err)
{
    VkBufferViewCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
        .buffer = b->buf,
        .format = format,
        .offset = 0,
        .range = range,
    };
    VK_CHECK(vkCreateBufferView(v->device, &info, NULL, view));
    return 0;
fail:
    return -1;
}

static int vulkan_create_descriptors(vulkan_ctx *v, char *err)
{
    /* Texel views: the lattice quads (one rgba32f texel each) and the two
     * heights (r32f), as far as maxTexelBufferElements reaches. */
    VkDeviceSize cells = wg_cells(v->job->world.size),
                 max_texels = v->props.limits.maxTexelBufferElements;
    if (cells > max_texels)
        cells = max_texels;
    if (vulkan_create_view(v, &v->lattice, VK_FORMAT_R32G32B32A32_SFLOAT,
                           VK_WHOLE_SIZE, &v->lat_view, err) ||
        vulkan_create_view(v, &v->field[VULKAN_F_HEIGHT_A],
                           VK_FORMAT_R32_SFLOAT, cells * sizeof(float),
                           &v->height_view[0], err) ||
        vulkan_create_view(v, &v->field[VULKAN_F_HEIGHT_B],
                           VK_FORMAT_R32_SFLOAT, cells * sizeof(float),
                           &v->height_view[1], err))
        return -1;

    VkDescriptorSetLayoutBinding bind[VULKAN_BINDINGS];
    for (uint32_t b = 0; b < VULKAN_BINDINGS; b++)
        bind[b] = (VkDescriptorSetLayoutBinding){
            .binding = b,
            .descriptorType = vulkan_binding_type(b),
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    VkDescriptorSetLayoutCreateInfo layout = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = VULKAN_BINDINGS,
        .pBindings = bind,
    };
    VK_CHECK(vkCreateDescriptorSetLayout(v->device, &layout, NULL,
                                         &v->set_layout));

    VkDescriptorPoolSize sizes[] = {
        {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 2},
        {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 2 * 2},
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 * (VULKAN_BINDINGS - 4)},
        {VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, 2},
    };
    VkDescriptorPoolCreateInfo pool = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .maxSets = 2,
        .poolSizeCount = 4,
        .pPoolSizes = sizes,
    };
    VK_CHECK(vkCreateDescriptorPool(v->device, &pool, NULL, &v->pool));

    VkDescriptorSetLayout layouts[2] = {v->set_layout, v->set_layout};
    VkDescriptorSetAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = v->pool,
        .descriptorSetCount = 2,
        .pSetLayouts = layouts,
    };
    VK_CHECK(vkAllocateDescriptorSets(v->device, &alloc, v->set));

    /* set[s] reads height s and writes the other one. */
    for (int s = 0; s < 2; s++) {
        const vulkan_buf *buf[VULKAN_BINDINGS] = {
            [VULKAN_B_PARAMS] = &v->params,
            [VULKAN_B_LATTICE] = &v->lattice,
            [VULKAN_B_SRC] = &v->field[VULKAN_F_HEIGHT_A + s],
            [VULKAN_B_DST] = &v->field[VULKAN_F_HEIGHT_B - s],
            [VULKAN_B_NX] = &v->field[VULKAN_F_NX],
            [VULKAN_B_NY] = &v->field[VULKAN_F_NY],
            [VULKAN_B_NZ] = &v->field[VULKAN_F_NZ],
            [VULKAN_B_SRC_TEXELS] = &v->field[VULKAN_F_HEIGHT_A + s],
            [VULKAN_B_DST_TEXELS] = &v->field[VULKAN_F_HEIGHT_B - s],
        };
        const VkBufferView *view[VULKAN_BINDINGS] = {
            [VULKAN_B_LATTICE] = &v->lat_view,
            [VULKAN_B_SRC_TEXELS] = &v->height_view[s],
            [VULKAN_B_DST_TEXELS] = &v->height_view[1 - s],
        };
        VkDescriptorBufferInfo info[VULKAN_BINDINGS];
        VkWriteDescriptorSet write[VULKAN_BINDINGS];
        for (uint32_t b = 0; b < VULKAN_BINDINGS; b++) {
            info[b] = (VkDescriptorBufferInfo){
                .buffer = buf[b]->buf,
                .offset = 0,
                .range = VK_WHOLE_SIZE,
            };
            write[b] = (VkWriteDescriptorSet){
                .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                .dstSet = v->set[s],
                .dstBinding = b,
                .descriptorCount = 1,
                .descriptorType = bind[b].descriptorType,
                .pBufferInfo = view[b] ? NULL : &info[b],
                .pTexelBufferView = view[b],
            };
        }
        vkUpdateDescriptorSets(v->device, VULKAN_BINDINGS, write, 0, NULL);
    }
    return 0;
fail:
    return -1;
}

/* --------------------------------------------------------------- pipelines */

static int vulkan_create_pipeline(vulkan_ctx *v, const uint32_t *code,
                                  size_t size, uint32_t wg_x, uint32_t wg_y,
                                  uint32_t passes, VkPipeline *pipe,
                                  char *err)
{
    VkShaderModule module = VK_NULL_HANDLE;
    VkShaderModuleCreateInfo mod = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = size,
        .pCode = code,
    };
    VK_CHECK(vkCreateShaderModule(v->device, &mod, NULL, &module));

    /* The workgroup size (local_size_x_id = 0, local_size_y_id = 1) and
     * the erosion's rows per invocation (constant_id = 2), passes per
     * dispatch (3) and texel reads (4, a VkBool32); the host's binary32
     * constants inv_n, base, inv_norm, talus, rate, k1, k2 (6 .. 12: the
     * terrain and the normals use theirs; the erosion reads talus and rate
     * from the block, 12 % faster than as constants); the terrain's octave
     * count (5) and octave table (16 + o: cos, 32 + o: sin, 48 + o: freq,
     * 64 + o: amp, 80 + o: offs), so that the driver unrolls the octave
     * loop around constants.  An entry the shader lacks is ignored. */
    _Static_assert(WG_MAX_OCTAVES == 16, "terrain.comp's constant ids");
    enum { NSCAL = 13, NSPEC = NSCAL + 5 * WG_MAX_OCTAVES };
    const wg_consts *c = &v->job->consts;
    uint32_t consts[NSPEC] = {wg_x, wg_y, v->rows, passes,
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
    VkComputePipelineCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = VK_SHADER_STAGE_COMPUTE_BIT,
            .module = module,
            .pName = "main",
            .pSpecializationInfo = &spec,
        },
        .layout = v->pipe_layout,
    };
    VK_CHECK(vkCreateComputePipelines(v->device, VK_NULL_HANDLE, 1, &info,
                                      NULL, pipe));
    vkDestroyShaderModule(v->device, module, NULL);
    return 0;
fail:
    if (module)
        vkDestroyShaderModule(v->device, module, NULL);
    return -1;
}

static int vulkan_create_pipelines(vulkan_ctx *v, char *err)
{
    VkPipelineLayoutCreateInfo layout = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &v->set_layout,
    };
    VK_CHECK(vkCreatePipelineLayout(v->device, &layout, NULL,
                                    &v->pipe_layout));
    uint32_t passes = v->job->world.passes, rest = passes % VULKAN_K;
    if (vulkan_create_pipeline(v, vulkan_terrain_spv,
                               sizeof vulkan_terrain_spv, v->wg_x, v->wg_y,
                               0, &v->terrain, err) ||
        vulkan_create_pipeline(v, vulkan_normals_spv,
                               sizeof vulkan_normals_spv, v->wg_x, v->wg_y,
                               0, &v->normals, err))
        return -1;
    /* Only the erosion pipelines this world runs: each costs a JIT. */
    if (!v->blocked && passes > 0 &&
        vulkan_create_pipeline(v, vulkan_erosion_spv,
                               sizeof vulkan_erosion_spv, v->wg_x, v->wg_y,
                               0, &v->erosion, err))
        return -1;
    /* Blocked: a row of 8 invocations (one SIMD vector on lavapipe). */
    if (v->blocked && passes >= VULKAN_K &&
        vulkan_create_pipeline(v, vulkan_erosion_spv,
                               sizeof vulkan_erosion_spv, 8, 1, VULKAN_K,
                               &v->erosion_k, err))
        return -1;
    if (v->blocked && rest > 0 &&
        vulkan_create_pipeline(v, vulkan_erosion_spv,
                               sizeof vulkan_erosion_spv, 8, 1, rest,
                               &v->erosion_rest, err))
        return -1;
    return 0;
fail:
    return -1;
}

/* ---------------------------------------- command buffer, queries, fence */

static int vulkan_create_commands(vulkan_ctx *v, char *err)
{
    VkCommandPoolCreateInfo pool = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
        .queueFamilyIndex = v->family,
    };
    VK_CHECK(vkCreateCommandPool(v->device, &pool, NULL, &v->cmd_pool));
    VkCommandBufferAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = v->cmd_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    VK_CHECK(vkAllocateCommandBuffers(v->device, &alloc, &v->cmd));
    if (v->ts_bits > 0) {
        VkQueryPoolCreateInfo queries = {
            .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
            .queryType = VK_QUERY_TYPE_TIMESTAMP,
            .queryCount = VULKAN_TS_COUNT,
        };
        VK_CHECK(vkCreateQueryPool(v->device, &queries, NULL, &v->queries));
    }
    VkFenceCreateInfo fence = {
        .sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO,
    };
    VK_CHECK(vkCreateFence(v->device, &fence, NULL, &v->fence));
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
    if (v->device) {
        /* Nothing may be destroyed while the queue still uses it (a stage
         * that failed after the submit). */
        if (v->submitted)
            vkDeviceWaitIdle(v->device);
        if (v->fence)
            vkDestroyFence(v->device, v->fence, NULL);
        if (v->queries)
            vkDestroyQueryPool(v->device, v->queries, NULL);
        if (v->cmd_pool) /* frees v->cmd */
            vkDestroyCommandPool(v->device, v->cmd_pool, NULL);
        if (v->normals)
            vkDestroyPipeline(v->device, v->normals, NULL);
        if (v->erosion_rest)
            vkDestroyPipeline(v->device, v->erosion_rest, NULL);
        if (v->erosion_k)
            vkDestroyPipeline(v->device, v->erosion_k, NULL);
        if (v->erosion)
            vkDestroyPipeline(v->device, v->erosion, NULL);
        if (v->terrain)
            vkDestroyPipeline(v->device, v->terrain, NULL);
        if (v->pipe_layout)
            vkDestroyPipelineLayout(v->device, v->pipe_layout, NULL);
        if (v->pool) /* frees v->set */
            vkDestroyDescriptorPool(v->device, v->pool, NULL);
        if (v->set_layout)
            vkDestroyDescriptorSetLayout(v->device, v->set_layout, NULL);
        for (int i = 1; i >= 0; i--)
            if (v->height_view[i])
                vkDestroyBufferView(v->device, v->height_view[i], NULL);
        if (v->lat_view)
            vkDestroyBufferView(v->device, v->lat_view, NULL);
        for (int i = 3; i >= 0; i--)
            vulkan_destroy_buf(v, &v->rb[i]);
        vulkan_destroy_buf(v, &v->upload);
        for (int f = VULKAN_FIELDS - 1; f >= 0; f--)
            vulkan_destroy_buf(v, &v->field[f]);
        vulkan_destroy_buf(v, &v->lattice);
        vulkan_destroy_buf(v, &v->params);
        vkDestroyDevice(v->device, NULL);
    }
    vulkan_destroy_instance(v);
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
    if (vulkan_create_instance(v, err) || vulkan_pick_device(v, err) ||
        vulkan_plan(v, err)) {
        vulkan_close(v);
        return NULL;
    }
    return v;
}

static int vulkan_probe(const wg_job *job, char *err)
{
    vulkan_ctx *v = vulkan_start(job, err);
    if (!v)
        return -1;
    vulkan_close(v);
    return 0;
}

/* For --mesh auto: a real GPU wins from the reference chapter's crossover
 * (about 100 cells a side) up; a CPU implementation such as lavapipe runs
 * the same two cores as openmp, slower, so it ranks between scalar and
 * openmp. */
static int vulkan_auto_rank(const wg_job *job)
{
    char err[WG_ERR_LEN];
    vulkan_ctx *v = vulkan_start(job, err);
    if (!v)
        return 0;
    int gpu = v->props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    vulkan_close(v);
    return gpu && job->world.size >= 128 ? 100 : 2;
}

static void *vulkan_open(const wg_job *job, wg_times *t, char *err)
{
    (void)t; /* registry.c times all of open() as the setup */
    vulkan_ctx *v = vulkan_start(job, err);
    if (!v)
        return NULL;
    if (vulkan_create_device(v, err) || vulkan_create_buffers(v, err) ||
        vulkan_create_descriptors(v, err) ||
        vulkan_create_pipelines(v, err) || vulkan_create_commands(v, err))
        goto fail;
    /* The host fields, touched now for the same reason as the buffers. */
    uint32_t n = job->world.size;
    if (wg_fields_alloc(&v->out, n) != 0) {
        wg_fail(err, "vulkan: out of memory for a %ux%u world", n, n);
        goto fail;
    }
    float *f[4] = {v->out.height, v->out.nx, v->out.ny, v->out.nz};
    for (int i = 0; i < 4; i++)
        memset(f[i], 0, wg_cells(n) * sizeof(float));
    return v;
fail:
    vulkan_close(v);
    return NULL;
}

/* A global memory barrier: every 'src' access of the 'from' stage before it
 * happens-before every 'dst' access of the 'to' stage after it. */
static void vulkan_barrier(vulkan_ctx *v, VkPipelineStageFlags from,
                           VkAccessFlags src, VkPipelineStageFlags to,
                           VkAccessFlags dst)
{
    VkMemoryBarrier b = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = src,
        .dstAccessMask = dst,
    };
    vkCmdPipelineBarrier(v->cmd, from, to, 0, 1, &b, 0, NULL, 0, NULL);
}

static void vulkan_timestamp(vulkan_ctx *v, uint32_t which)
{
    /* Bottom of pipe: written once every earlier command has finished. */
    if (v->queries)
        vkCmdWriteTimestamp(v->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                            v->queries, which);
}

/* Run 'pipe' (workgroups of wg_x by wg_y) over the grid, each invocation
 * 'cols' cells across and 'rows' cells down. */
static void vulkan_dispatch(vulkan_ctx *v, VkPipeline pipe, int set,
                            uint32_t wg_x, uint32_t wg_y, uint32_t cols,
                            uint32_t rows)
{
    uint32_t n = v->job->world.size, w = (n + cols - 1) / cols,
             h = (n + rows - 1) / rows;
    vkCmdBindPipeline(v->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(v->cmd, VK_PIPELINE_BIND_POINT_COMPUTE,
                            v->pipe_layout, 0, 1, &v->set[set], 0, NULL);
    /* ceil(N / wg) per side; the shaders skip the cells past N. */
    vkCmdDispatch(v->cmd, (w + wg_x - 1) / wg_x, (h + wg_y - 1) / wg_y, 1);
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

/* The set whose 'src' holds the heights after all the erosion passes, and
 * whose 'dst' is height A (terrain writes through set 1). */
static int vulkan_final_set(const vulkan_ctx *v)
{
    return (int)(vulkan_erosion_dispatches(v) & 1u); /* parity decides */
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
        vulkan_barrier(v, VK_PIPELINE_STAGE_TRANSFER_BIT,
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
        vulkan_barrier(v, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
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

/* Seconds between two timestamps, which wrap at timestampValidBits. */
static double vulkan_elapsed(const vulkan_ctx *v, const uint64_t *ts,
                             int from, int to)
{
    uint64_t mask = v->ts_bits >= 64 ? ~0ull : (1ull << v->ts_bits) - 1;
    uint64_t ticks = (ts[to] - ts[from]) & mask;
    return (double)ticks * (double)v->props.limits.timestampPeriod * 1e-9;
}

static int vulkan_normals(void *ctx, wg_times *t, char *err)
{
    vulkan_ctx *v = ctx;
    int final = vulkan_final_set(v);

    /* The normals read the last heights written. */
    vulkan_barrier(v, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT);
    vulkan_dispatch(v, v->normals, final, v->wg_x, v->wg_y, 1, 1);
    vulkan_timestamp(v, VULKAN_TS_NORMALS);
    if (v->staged) {
        /* The copies read the final heights and the normals. */
        vulkan_barrier(v, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT,
                       VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_READ_BIT);
        const vulkan_buf *from[4] = {
            &v->field[final ? VULKAN_F_HEIGHT_B : VULKAN_F_HEIGHT_A],
            &v->field[VULKAN_F_NX], &v->field[VULKAN_F_NY],
            &v->field[VULKAN_F_NZ]};
        for (int i = 0; i < 4; i++) {
            VkBufferCopy region = {0, 0, v->rb[i].size};
            vkCmdCopyBuffer(v->cmd, from[i]->buf, v->rb[i].buf, 1, &region);
        }
        vulkan_timestamp(v, VULKAN_TS_COPIES);
        /* The host reads the staging buffers after the fence. */
        vulkan_barrier(v, VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    } else {
        /* The host reads the fields themselves after the fence. */
        vulkan_barrier(v, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
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
    VK_CHECK(vkQueueSubmit(v->queue, 1, &submit, v->fence));
    v->submitted = 1;
    /* Wait: the fields and the timestamps exist once the queue has run the
     * whole command buffer. */
    VK_CHECK(vkWaitForFences(v->device, 1, &v->fence, VK_TRUE, UINT64_MAX));
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
    VK_CHECK(vkGetQueryPoolResults(v->device, v->queries, 0, count,
                                   sizeof ts, ts, sizeof ts[0],
                                   VK_QUERY_RESULT_64_BIT |
                                       VK_QUERY_RESULT_WAIT_BIT));
    t->terrain += vulkan_elapsed(v, ts, VULKAN_TS_START, VULKAN_TS_TERRAIN);
    t->erosion += vulkan_elapsed(v, ts, VULKAN_TS_TERRAIN, VULKAN_TS_EROSION);
    t->normals += vulkan_elapsed(v, ts, VULKAN_TS_EROSION, VULKAN_TS_NORMALS);
    if (v->staged)
        v->readback_gpu_s =
            vulkan_elapsed(v, ts, VULKAN_TS_NORMALS, VULKAN_TS_COPIES);
    return 0;
fail:
    return -1;
}

/* DEV: stage 3 is not on the device yet. */
static int vulkan_hydraulic(void *ctx, wg_times *t, char *err)
{
    (void)t;
    vulkan_ctx *v = ctx;
    if (v->job->world.steps)
        return wg_fail(err, "vulkan: hydraulic stage not implemented yet");
    return 0;
}

static int vulkan_readback(void *ctx, wg_fields *out, wg_times *t, char *err)
{
    vulkan_ctx *v = ctx;
    uint32_t n = v->job->world.size;
    int final = vulkan_final_set(v);
    double t0 = wg_now();

    const vulkan_buf *from[4];
    if (v->staged) {
        for (int i = 0; i < 4; i++)
            from[i] = &v->rb[i];
    } else {
        from[0] = &v->field[final ? VULKAN_F_HEIGHT_B : VULKAN_F_HEIGHT_A];
        from[1] = &v->field[VULKAN_F_NX];
        from[2] = &v->field[VULKAN_F_NY];
        from[3] = &v->field[VULKAN_F_NZ];
    }
    for (int i = 0; i < 4; i++) {
        if (!from[i]->map)
            return wg_fail(err, "vulkan: a result buffer is not mapped");
        if (vulkan_invalidate(v, from[i], err))
            return -1;
    }
    /* One bulk copy per field, each from its own buffer. */
    size_t bytes = wg_cells(n) * sizeof(float);
    memcpy(v->out.height, from[0]->map, bytes);
    memcpy(v->out.nx, from[1]->map, bytes);
    memcpy(v->out.ny, from[2]->map, bytes);
    memcpy(v->out.nz, from[3]->map, bytes);
    *out = v->out;
    memset(&v->out, 0, sizeof v->out);
    t->readback += wg_now() - t0 + v->readback_gpu_s;
    return 0;
}

static const char *vulkan_device(void *ctx)
{
    vulkan_ctx *v = ctx;
    return v->name;
}

int wg_vulkan_list_devices(FILE *out, char *err)
{
    wg_job job = {0};
    vulkan_ctx v = {.job = &job};
    uint32_t count = 0;
    VkPhysicalDevice *dev = NULL;
    int rc = -1;

    if (vulkan_create_instance(&v, err) == 0 &&
        (dev = vulkan_devices(v.instance, &count, err)) != NULL) {
        for (uint32_t i = 0; i < count; i++) {
            VkPhysicalDeviceProperties p;
            vkGetPhysicalDeviceProperties(dev[i], &p);
            const char *why = vulkan_unusable(dev[i]);
            fprintf(out, "%u: %s (%s, Vulkan %u.%u.%u)%s%s\n", i,
                    p.deviceName, vulkan_type_name(p.deviceType),
                    VK_API_VERSION_MAJOR(p.apiVersion),
                    VK_API_VERSION_MINOR(p.apiVersion),
                    VK_API_VERSION_PATCH(p.apiVersion),
                    why ? ": unusable, " : "", why ? why : "");
        }
        rc = 0;
    }
    free(dev);
    vulkan_destroy_instance(&v);
    return rc;
}

const wg_backend wg_backend_vulkan = {
    .name = "vulkan",
    .summary = "Vulkan compute shaders, one command buffer per world",
    .probe = vulkan_probe,
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

/* Built without Vulkan: the CLI still links and says why. */
#include "backend.h"
#include "vulkan.h"

int wg_vulkan_list_devices(FILE *out, char *err)
{
    (void)out;
    return wg_fail(err, "this worldgen was built without Vulkan (libvulkan-dev "
                   "and glslc were missing at build time)");
}

unsigned wg_vulkan_validation_count(void)
{
    return 0;
}

#endif
