/* vulkan_device.h: the Vulkan plumbing under the backend in vulkan.c, which
 * knows nothing of worlds or stages: the instance and the validation
 * messenger, the choice of physical device, the logical device and its
 * compute queue, buffers with their own memory, texel views, descriptor
 * set layouts and sets, compute pipelines and barriers.
 *
 * vulkan.c keeps what is specific to worldgen's stages (the shaders, their
 * bindings and specialisation constants, the recording of the dispatches);
 * a stage added later uses these functions and adds only its own shader,
 * its binding table and its recording.
 *
 * Every function that can fail returns 0 on success and -1 with a one-line
 * reason in err[WG_ERR_LEN]; destroy functions accept what was never (or
 * only half) made. */
#ifndef WG_VULKAN_DEVICE_H
#define WG_VULKAN_DEVICE_H

#ifdef WG_HAVE_VULKAN

#include <string.h>

#include <vulkan/vulkan.h>

#include "backend.h"

/* The device the backend runs on, and how it was found. */
typedef struct vulkan_dev {
    char what[192]; /* what runs, for messages: "a 512x512 world" */
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
} vulkan_dev;

/* A buffer with its own memory, mapped for its whole life when the memory
 * is host-visible. */
typedef struct vulkan_buf {
    VkBuffer buf;
    VkDeviceMemory mem;
    VkDeviceSize size;
    void *map;    /* NULL unless host-visible */
    int coherent; /* else flush after writing, invalidate before reading */
} vulkan_buf;

/* What one binding of a descriptor set refers to: a buffer (uniform or
 * storage) or a texel view of one. */
typedef struct vulkan_bind {
    VkDescriptorType type;
    const vulkan_buf *buf; /* uniform and storage buffers */
    VkBufferView view;     /* uniform and storage texel buffers */
} vulkan_bind;

/* The name of a VkResult ("VK_ERROR_DEVICE_LOST"). */
const char *vulkan_result_name(VkResult r);

/* Under an address space limit (ulimit -v), "; the address space limit
 * (ulimit -v) is N MiB" into buf, the likely cause of a driver's failure
 * to make its objects (lavapipe's threads and its shader compiler map
 * their memory from it); "" without a limit. */
void vulkan_limit_note(char *buf, size_t len);

/* Run a Vulkan call; on failure put its name, the VkResult, where, and an
 * address space limit if there is one, into err and jump to 'fail' (every
 * caller has 'char *err' and that label). */
#define VK_CHECK(call)                                                      \
    do {                                                                    \
        VkResult vk_rc_ = (call);                                           \
        if (vk_rc_ != VK_SUCCESS) {                                         \
            char vk_note_[96];                                              \
            vulkan_limit_note(vk_note_, sizeof vk_note_);                   \
            wg_fail(err, "vulkan: %.*s failed: %s (%d) at %s:%d%s",         \
                    (int)strcspn(#call, "("), #call,                        \
                    vulkan_result_name(vk_rc_), (int)vk_rc_, __FILE__,     \
                    __LINE__, vk_note_);                                    \
            goto fail;                                                      \
        }                                                                   \
    } while (0)

/* The instance, with the validation layer, synchronisation validation and
 * a messenger when WORLDGEN_VK_VALIDATION=1 (the messages are counted for
 * wg_vulkan_validation_count()). */
int vulkan_dev_instance(vulkan_dev *d, char *err);

/* The device --gpu names among 'count' devices called names[i]: a
 * decimal index below count, or the one device whose name contains 'gpu'
 * (case-insensitive).  Returns its index, or -1 with the reason in err:
 * no such index, no name has it, or several do (each named). */
int vulkan_gpu_match(const char *const *names, uint32_t count,
                     const char *gpu, char *err);
/* Choose the physical device: 'gpu' (an index or a name substring) when
 * not NULL or empty, else the best usable one for 'power'; fills the
 * properties, the queue family and the name. */
int vulkan_dev_pick(vulkan_dev *d, const char *gpu, wg_power power,
                    char *err);

/* The logical device with one queue of the chosen family. */
int vulkan_dev_create(vulkan_dev *d, char *err);

/* The device and the instance (the caller has destroyed what it made on
 * the device).  No operation is performed on what was not made. */
void vulkan_dev_destroy(vulkan_dev *d);

/* 1 if some memory type of the device has all of 'flags'. */
int vulkan_dev_has_memory(const vulkan_dev *d, VkMemoryPropertyFlags flags);

/* A buffer of 'size' bytes in memory with 'want' (else 'fallback'), mapped
 * and touched (zeroed) if host-visible. */
int vulkan_buf_create(vulkan_dev *d, vulkan_buf *b, VkDeviceSize size,
                      VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                      VkMemoryPropertyFlags fallback, char *err);
void vulkan_buf_destroy(vulkan_dev *d, vulkan_buf *b);

/* Make the host's writes to a mapped buffer visible to the device, and the
 * device's to the host. */
int vulkan_buf_flush(vulkan_dev *d, const vulkan_buf *b, char *err);
int vulkan_buf_invalidate(vulkan_dev *d, const vulkan_buf *b, char *err);

/* A texel view of the first 'range' bytes of 'b'. */
int vulkan_view_create(vulkan_dev *d, const vulkan_buf *b, VkFormat format,
                       VkDeviceSize range, VkBufferView *view, char *err);

/* Whether a compute stage whose one set has binding i (0 .. count-1) of
 * types[i] fits the per-stage limits 'lim' of the device 'device': 0, or
 * -1 with the limit it passes, its value and what the stage ('stage')
 * needs in err.  (Vulkan guarantees only 4 storage buffers a stage, and
 * the hydraulic stage binds 8: such a device failed in
 * vkCreatePipelineLayout with no word of why.) */
int vulkan_layout_fits(const VkPhysicalDeviceLimits *lim, const char *device,
                       const char *stage, const VkDescriptorType *types,
                       uint32_t count, char *err);

/* A set layout whose binding i (0 .. count-1) has types[i], for compute. */
int vulkan_set_layout_create(vulkan_dev *d, const VkDescriptorType *types,
                             uint32_t count, VkDescriptorSetLayout *layout,
                             char *err);

/* Point binding i (0 .. count-1) of 'set' at bind[i], each of its type. */
void vulkan_set_write(vulkan_dev *d, VkDescriptorSet set,
                      const vulkan_bind *bind, uint32_t count);

/* A compute pipeline of the SPIR-V 'code' (size bytes, entry "main") with
 * the specialisation 'spec' (may be NULL). */
int vulkan_pipeline_create(vulkan_dev *d, VkPipelineLayout layout,
                           const uint32_t *code, size_t size,
                           const VkSpecializationInfo *spec, VkPipeline *pipe,
                           char *err);

/* A global memory barrier: every 'src' access of the 'from' stage before it
 * happens-before every 'dst' access of the 'to' stage after it. */
void vulkan_barrier(VkCommandBuffer cmd, VkPipelineStageFlags from,
                    VkAccessFlags src, VkPipelineStageFlags to,
                    VkAccessFlags dst);

#endif /* WG_HAVE_VULKAN */

#endif
