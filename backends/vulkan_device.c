/* vulkan_device.c: the Vulkan plumbing under the backend (see
 * vulkan_device.h): instance, device choice, device, buffers, views,
 * descriptor sets, pipelines.  Nothing here knows the stages; vulkan.c
 * does. */
#ifdef WG_HAVE_VULKAN

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "vulkan.h"
#include "vulkan_device.h"

/* The validation layer's messages in this process (any thread). */
static atomic_uint vulkan_validation_messages;

unsigned wg_vulkan_validation_count(void)
{
    return atomic_load(&vulkan_validation_messages);
}

const char *vulkan_result_name(VkResult r)
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

void vulkan_limit_note(char *buf, size_t len)
{
    struct rlimit rl;
    buf[0] = '\0';
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(buf, len, "; the address space limit (ulimit -v) is %llu "
                 "MiB", (unsigned long long)(rl.rlim_cur >> 20));
}

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

/* The variables that choose the Vulkan drivers, where they are set (an
 * empty one too: the loader takes it for an empty list, so no driver at
 * all), as "VK_ICD_FILENAMES='...', ..."; "" where none is. */
static void vulkan_driver_vars(char *set, size_t len)
{
    static const char *const vars[] = {"VK_DRIVER_FILES", "VK_ICD_FILENAMES",
                                       "VK_ADD_DRIVER_FILES"};
    set[0] = '\0';
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        size_t l = strlen(set);
        if (v)
            snprintf(set + l, len - l, "%s%s='%.150s'", l ? ", " : "",
                     vars[i], v);
    }
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
int vulkan_dev_instance(vulkan_dev *d, char *err)
{
    static const char layer[] = "VK_LAYER_KHRONOS_validation";
    const char *exts[2];
    uint32_t n_ext = 0;
    int validate = vulkan_validation_wanted();

    /* Mesa's device-select layer, asked for its list, prints it and ends
     * the process with exit(0) when the devices are enumerated: --mesh
     * vulkan had exited 0 having written nothing, and --check and
     * --require vulkan had passed. */
    const char *select = getenv("MESA_VK_DEVICE_SELECT");
    if (select && strcmp(select, "list") == 0)
        return wg_fail(err, "vulkan: MESA_VK_DEVICE_SELECT=list makes Mesa's "
                       "device-select layer print the devices and end the "
                       "process; unset it (worldgen --list-devices lists "
                       "them, --gpu N|NAME chooses one)");

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
    VkResult rc = vkCreateInstance(&info, NULL, &d->instance);
    if (rc != VK_SUCCESS) {
        /* The variables that chose the drivers, where they are set: the
         * loader says VK_ERROR_OUT_OF_HOST_MEMORY of a list that names a
         * broken manifest (garbage, a folder). */
        char set[600];
        vulkan_driver_vars(set, sizeof set);
        if (rc == VK_ERROR_INCOMPATIBLE_DRIVER)
            return wg_fail(err, "no Vulkan driver found (vkCreateInstance: "
                           "VK_ERROR_INCOMPATIBLE_DRIVER; %s%s)",
                           set[0] ? "the drivers are chosen by "
                                  : "is a driver such as "
                                    "mesa-vulkan-drivers installed?",
                           set);
        char note[96];
        vulkan_limit_note(note, sizeof note);
        return wg_fail(err, "vulkan: vkCreateInstance failed: %s (%d)%s%s%s%s",
                       vulkan_result_name(rc), (int)rc,
                       set[0] ? "; the drivers are chosen by " : "", set,
                       set[0] ? ": does it name readable driver manifests "
                                "(JSON files)?" : "", note);
    }

    if (validate) {
        PFN_vkCreateDebugUtilsMessengerEXT create =
            (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                d->instance, "vkCreateDebugUtilsMessengerEXT");
        if (!create)
            return wg_fail(err, "vulkan: the validation layer offers no "
                           "vkCreateDebugUtilsMessengerEXT");
        messenger_info.pNext = NULL;
        VK_CHECK(create(d->instance, &messenger_info, NULL, &d->messenger));
    }
    return 0;
fail:
    return -1;
}

/* The messenger and the instance: the first objects made, the last gone.
 * No operation is performed on what was not made. */
static void vulkan_dev_destroy_instance(vulkan_dev *d)
{
    if (d->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                d->instance, "vkDestroyDebugUtilsMessengerEXT");
        if (destroy)
            destroy(d->instance, d->messenger, NULL);
        d->messenger = VK_NULL_HANDLE;
    }
    if (d->instance)
        vkDestroyInstance(d->instance, NULL);
    d->instance = VK_NULL_HANDLE;
}

/* ---------------------------------------------------------- physical device */

/* The physical devices of the instance; caller frees.  NULL with a reason
 * when there are none. */
static VkPhysicalDevice *vulkan_devices(VkInstance inst, uint32_t *count,
                                        char *err)
{
    VkPhysicalDevice *dev = NULL;
    *count = 0;
    /* No device: a count of 0, or the loader's "initialization failed"
     * where the drivers it loaded found none (radeon's or intel's on a
     * machine without their GPU), which had been said as an internal
     * failure at a line of this file. */
    VkResult rc = vkEnumeratePhysicalDevices(inst, count, NULL);
    if (rc == VK_ERROR_INITIALIZATION_FAILED || (rc == VK_SUCCESS && !*count)) {
        /* Under an address space limit a driver that cannot start says
         * the same: the limit named, first. */
        char set[600], note[96];
        vulkan_driver_vars(set, sizeof set);
        vulkan_limit_note(note, sizeof note);
        wg_fail(err, "no Vulkan device found (%s%s)%s",
                set[0] ? "the drivers are chosen by "
                : note[0] ? "its driver could not start"
                          : "is a driver such as mesa-vulkan-drivers installed?",
                set, note);
        *count = 0;
        return NULL;
    }
    VK_CHECK(rc);
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

int vulkan_gpu_match(const char *const *names, uint32_t count,
                     const char *gpu, char *err)
{
    /* An index: decimal, or 0x hex as every whole number of the command
     * line may be ("0x0" had been looked for in the devices' names). */
    const int hex = (gpu[0] == '0' && (gpu[1] == 'x' || gpu[1] == 'X') &&
                     gpu[2] != '\0' &&
                     gpu[2 + strspn(gpu + 2, "0123456789abcdefABCDEF")] == '\0');
    if (hex || gpu[strspn(gpu, "0123456789")] == '\0') {
        errno = 0;
        unsigned long i = strtoul(hex ? gpu + 2 : gpu, NULL, hex ? 16 : 10);
        if (errno == 0 && i < count)
            return (int)i;
        return wg_fail(err, "no device %s (there are %u)", gpu, count);
    }
    int chosen = -1;
    for (uint32_t i = 0; i < count; i++) {
        if (!vulkan_contains(names[i], gpu))
            continue;
        if (chosen >= 0) {
            /* A cluster node's four identical GPUs would all have run on
             * the first: name every one that matches. */
            size_t len = (size_t)snprintf(err, WG_ERR_LEN, "'%s' is in the "
                                          "name of more than one device "
                                          "(give its index):", gpu);
            for (uint32_t k = (uint32_t)chosen; k < count; k++) {
                if (len >= WG_ERR_LEN || !vulkan_contains(names[k], gpu))
                    continue;
                int n = snprintf(err + len, WG_ERR_LEN - len, "%s %u: %s",
                                 k == (uint32_t)chosen ? "" : ",", k,
                                 names[k]);
                if (n < 0)
                    break;
                len += (size_t)n;
            }
            return -1;
        }
        chosen = (int)i;
    }
    if (chosen < 0)
        return wg_fail(err, "no device's name has '%s'", gpu);
    return chosen;
}

/* Choose the physical device: 'gpu' (an index or a name substring) if
 * given, else the best usable one for 'power'; the first in enumeration
 * order wins a tie. */
int vulkan_dev_pick(vulkan_dev *d, const char *gpu, wg_power power, char *err)
{
    uint32_t count = 0;
    VkPhysicalDevice *dev = vulkan_devices(d->instance, &count, err);
    if (!dev)
        return -1;

    int chosen = -1;
    if (gpu && *gpu) {
        const char *g = gpu;
        VkPhysicalDeviceProperties *props = calloc(count, sizeof *props);
        const char **names = calloc(count, sizeof *names);
        char reason[WG_ERR_LEN] = "";
        if (props && names) {
            for (uint32_t i = 0; i < count; i++) {
                vkGetPhysicalDeviceProperties(dev[i], &props[i]);
                names[i] = props[i].deviceName;
            }
            chosen = vulkan_gpu_match(names, count, g, reason);
        } else {
            snprintf(reason, sizeof reason, "out of memory");
        }
        free(props);
        free(names);
        if (chosen < 0) {
            wg_fail(err, "vulkan: --gpu '%s': %s (available: ", g, reason);
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
            int rank = vulkan_rank(p.deviceType, power);
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

    d->phys = dev[chosen];
    free(dev);
    d->family = (uint32_t)vulkan_queue_family(d->phys, &d->ts_bits);

    VkPhysicalDeviceMaintenance3Properties m3 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
    };
    VkPhysicalDeviceProperties2 p2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
        .pNext = &m3,
    };
    vkGetPhysicalDeviceProperties2(d->phys, &p2);
    d->props = p2.properties;
    d->max_alloc = m3.maxMemoryAllocationSize;
    vkGetPhysicalDeviceMemoryProperties(d->phys, &d->mem_props);
    snprintf(d->name, sizeof d->name, "%s (Vulkan %u.%u, %s)",
             d->props.deviceName, VK_API_VERSION_MAJOR(d->props.apiVersion),
             VK_API_VERSION_MINOR(d->props.apiVersion),
             vulkan_type_name(d->props.deviceType));
    return 0;
fail:
    free(dev);
    return -1;
}

/* --list-devices: one line per device, in enumeration order. */
int wg_vulkan_list_devices(FILE *out, char *err)
{
    vulkan_dev v = {0};
    uint32_t count = 0;
    VkPhysicalDevice *dev = NULL;
    int rc = -1;

    if (vulkan_dev_instance(&v, err) == 0 &&
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
    vulkan_dev_destroy_instance(&v);
    return rc;
}

/* 1 if some memory type has all of 'flags'. */
int vulkan_dev_has_memory(const vulkan_dev *d, VkMemoryPropertyFlags flags)
{
    for (uint32_t i = 0; i < d->mem_props.memoryTypeCount; i++)
        if ((d->mem_props.memoryTypes[i].propertyFlags & flags) == flags)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ device */

int vulkan_dev_create(vulkan_dev *d, char *err)
{
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = d->family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    VkDeviceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue,
    };
    VK_CHECK(vkCreateDevice(d->phys, &info, NULL, &d->device));
    vkGetDeviceQueue(d->device, d->family, 0, &d->queue);
    return 0;
fail:
    return -1;
}

/* ----------------------------------------------------------------- buffers */

/* Flush or invalidate the whole of a mapped buffer, unless its memory is
 * coherent (the parameter is named for VK_CHECK's message). */
static int
vulkan_buf_sync(vulkan_dev *d, const vulkan_buf *b,
                PFN_vkFlushMappedMemoryRanges vkFlushOrInvalidateMappedMemoryRanges,
                char *err)
{
    if (b->coherent)
        return 0;
    VkMappedMemoryRange range = {
        .sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
        .memory = b->mem,
        .size = VK_WHOLE_SIZE,
    };
    VK_CHECK(vkFlushOrInvalidateMappedMemoryRanges(d->device, 1, &range));
    return 0;
fail:
    return -1;
}

/* Make the host's writes to a mapped buffer visible to the device. */
int vulkan_buf_flush(vulkan_dev *d, const vulkan_buf *b, char *err)
{
    return vulkan_buf_sync(d, b, vkFlushMappedMemoryRanges, err);
}

/* Make the device's writes to a mapped buffer visible to the host. */
int vulkan_buf_invalidate(vulkan_dev *d, const vulkan_buf *b, char *err)
{
    return vulkan_buf_sync(d, b, vkInvalidateMappedMemoryRanges, err);
}

/* A memory type allowed by 'bits' with all of 'want'; -1 if none. */
static int vulkan_memory_type(const vulkan_dev *d, uint32_t bits,
                              VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < d->mem_props.memoryTypeCount; i++)
        if ((bits & (1u << i)) &&
            (d->mem_props.memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    return -1;
}

/* A buffer of 'size' bytes in memory with 'want' (else 'fallback'), mapped
 * if host-visible. */
int vulkan_buf_create(vulkan_dev *d, vulkan_buf *b, VkDeviceSize size,
                      VkBufferUsageFlags usage, VkMemoryPropertyFlags want,
                      VkMemoryPropertyFlags fallback, char *err)
{
    b->size = size;
    VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = usage,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VK_CHECK(vkCreateBuffer(d->device, &info, NULL, &b->buf));

    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(d->device, b->buf, &req);
    int type = vulkan_memory_type(d, req.memoryTypeBits, want);
    if (type < 0)
        type = vulkan_memory_type(d, req.memoryTypeBits, fallback);
    if (type < 0)
        return wg_fail(err, "vulkan: %s has no suitable memory type for a "
                       "buffer", d->props.deviceName);
    VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = (uint32_t)type,
    };
    VkResult rc = vkAllocateMemory(d->device, &alloc, NULL, &b->mem);
    if (rc == VK_ERROR_OUT_OF_DEVICE_MEMORY || rc == VK_ERROR_OUT_OF_HOST_MEMORY) {
        char note[96];
        vulkan_limit_note(note, sizeof note);
        return wg_fail(err, "vulkan: %s is out of memory for %s (%s "
                       "allocating %llu MiB%s): use a smaller --size%s",
                       d->props.deviceName, d->what[0] ? d->what : "the world",
                       vulkan_result_name(rc),
                       (unsigned long long)(req.size >> 20), note,
                       note[0] ? ", or raise the limit" : "");
    }
    VK_CHECK(rc);
    VK_CHECK(vkBindBufferMemory(d->device, b->buf, b->mem, 0));

    VkMemoryPropertyFlags flags =
        d->mem_props.memoryTypes[type].propertyFlags;
    if (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) {
        VK_CHECK(vkMapMemory(d->device, b->mem, 0, VK_WHOLE_SIZE, 0, &b->map));
        b->coherent = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
        /* First touch here, so that the stages do not pay the page faults
         * (lavapipe's memory is fresh host memory: 0.25 s per 64 MiB on the
         * CI machine); the OpenMP backend does the same in its open(). */
        memset(b->map, 0, size);
        if (vulkan_buf_flush(d, b, err))
            return -1;
    }
    return 0;
fail:
    return -1;
}

void vulkan_buf_destroy(vulkan_dev *d, vulkan_buf *b)
{
    if (b->map)
        vkUnmapMemory(d->device, b->mem);
    if (b->buf)
        vkDestroyBuffer(d->device, b->buf, NULL);
    if (b->mem)
        vkFreeMemory(d->device, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------- views, sets, pipelines */

int vulkan_view_create(vulkan_dev *d, const vulkan_buf *b, VkFormat format,
                       VkDeviceSize range, VkBufferView *view, char *err)
{
    VkBufferViewCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
        .buffer = b->buf,
        .format = format,
        .offset = 0,
        .range = range,
    };
    VK_CHECK(vkCreateBufferView(d->device, &info, NULL, view));
    return 0;
fail:
    return -1;
}

int vulkan_layout_fits(const VkPhysicalDeviceLimits *lim, const char *device,
                       const char *stage, const VkDescriptorType *types,
                       uint32_t count, char *err)
{
    /* Texel buffers count as images: uniform ones as sampled images,
     * storage ones as storage images. */
    uint32_t storage = 0, uniform = 0, sampled = 0, images = 0;
    for (uint32_t b = 0; b < count; b++) {
        storage += types[b] == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        uniform += types[b] == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
        sampled += types[b] == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
        images += types[b] == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
    }
    const struct {
        const char *limit, *what;
        uint32_t has, needs;
    } per[] = {
        {"maxPerStageDescriptorStorageBuffers", "storage buffers",
         lim->maxPerStageDescriptorStorageBuffers, storage},
        {"maxPerStageDescriptorUniformBuffers", "uniform buffers",
         lim->maxPerStageDescriptorUniformBuffers, uniform},
        {"maxPerStageDescriptorSampledImages", "uniform texel buffers",
         lim->maxPerStageDescriptorSampledImages, sampled},
        {"maxPerStageDescriptorStorageImages", "storage texel buffers",
         lim->maxPerStageDescriptorStorageImages, images},
        {"maxPerStageResources", "resources", lim->maxPerStageResources,
         count},
    };
    for (size_t i = 0; i < sizeof per / sizeof per[0]; i++)
        if (per[i].needs > per[i].has)
            return wg_fail(err, "vulkan: %s allows %u %s a shader stage (%s) "
                           "but the %s stage binds %u: use a CPU backend",
                           device, per[i].has, per[i].what, per[i].limit,
                           stage, per[i].needs);
    return 0;
}

int vulkan_set_layout_create(vulkan_dev *d, const VkDescriptorType *types,
                             uint32_t count, VkDescriptorSetLayout *layout,
                             char *err)
{
    VkDescriptorSetLayoutBinding *bind = calloc(count ? count : 1,
                                                sizeof *bind);
    if (!bind)
        return wg_fail(err, "vulkan: out of memory");
    for (uint32_t b = 0; b < count; b++)
        bind[b] = (VkDescriptorSetLayoutBinding){
            .binding = b,
            .descriptorType = types[b],
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    VkDescriptorSetLayoutCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = count,
        .pBindings = bind,
    };
    VK_CHECK(vkCreateDescriptorSetLayout(d->device, &info, NULL, layout));
    free(bind);
    return 0;
fail:
    free(bind);
    return -1;
}

void vulkan_set_write(vulkan_dev *d, VkDescriptorSet set,
                      const vulkan_bind *bind, uint32_t count)
{
    const VkPhysicalDeviceLimits *lim = &d->props.limits;
    for (uint32_t b = 0; b < count; b++) {
        /* The whole buffer, up to the device's range for the type: a
         * binding the world's pipelines never read may be larger (the
         * hydraulic state, 16 bytes a cell, also bound as a storage buffer
         * while the shaders read it through texel views), and a range past
         * the limit is invalid even unused.  vulkan_plan() refuses a world
         * whose used bindings would not fit. */
        VkDeviceSize range = bind[b].buf ? bind[b].buf->size : 0;
        if (bind[b].type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER &&
            range > lim->maxStorageBufferRange)
            range = lim->maxStorageBufferRange;
        if (bind[b].type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER &&
            range > lim->maxUniformBufferRange)
            range = lim->maxUniformBufferRange;
        VkDescriptorBufferInfo info = {
            .buffer = bind[b].buf ? bind[b].buf->buf : VK_NULL_HANDLE,
            .offset = 0,
            .range = range,
        };
        int texel =
            bind[b].type == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER ||
            bind[b].type == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
        VkWriteDescriptorSet write = {
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = set,
            .dstBinding = b,
            .descriptorCount = 1,
            .descriptorType = bind[b].type,
            .pBufferInfo = texel ? NULL : &info,
            .pTexelBufferView = texel ? &bind[b].view : NULL,
        };
        vkUpdateDescriptorSets(d->device, 1, &write, 0, NULL);
    }
}

int vulkan_pipeline_create(vulkan_dev *d, VkPipelineLayout layout,
                           const uint32_t *code, size_t size,
                           const VkSpecializationInfo *spec, VkPipeline *pipe,
                           char *err)
{
    VkShaderModule module = VK_NULL_HANDLE;
    VkShaderModuleCreateInfo mod = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = size,
        .pCode = code,
    };
    VK_CHECK(vkCreateShaderModule(d->device, &mod, NULL, &module));
    VkComputePipelineCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {
            .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
            .stage = VK_SHADER_STAGE_COMPUTE_BIT,
            .module = module,
            .pName = "main",
            .pSpecializationInfo = spec,
        },
        .layout = layout,
    };
    VK_CHECK(vkCreateComputePipelines(d->device, VK_NULL_HANDLE, 1, &info,
                                      NULL, pipe));
    vkDestroyShaderModule(d->device, module, NULL);
    return 0;
fail:
    if (module)
        vkDestroyShaderModule(d->device, module, NULL);
    return -1;
}

void vulkan_barrier(VkCommandBuffer cmd, VkPipelineStageFlags from,
                    VkAccessFlags src, VkPipelineStageFlags to,
                    VkAccessFlags dst)
{
    VkMemoryBarrier b = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
        .srcAccessMask = src,
        .dstAccessMask = dst,
    };
    vkCmdPipelineBarrier(cmd, from, to, 0, 1, &b, 0, NULL, 0, NULL);
}

void vulkan_dev_destroy(vulkan_dev *d)
{
    if (d->device)
        vkDestroyDevice(d->device, NULL);
    d->device = VK_NULL_HANDLE;
    d->queue = VK_NULL_HANDLE;
    vulkan_dev_destroy_instance(d);
}

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
