/* keep_drivers.c: linked into ./worldgen and tests/run in sanitized builds
 * only (make SAN=1), never into a release.
 *
 * LeakSanitizer looks for leaks when the process exits, after the Vulkan
 * loader has unloaded Mesa's lavapipe: its 2 x 128 bytes of realloc'd
 * driver state (not ours: vulkan_close() destroys every object it made)
 * then have no module name, and tests/lsan.supp's 'leak:libvulkan_lvp.so'
 * cannot match them.  Loading the driver and the validation layer once more,
 * never to be unloaded, keeps their names in the leak report.
 *
 * They are loaded by the process's first call into the Vulkan loader, not
 * when it starts: lavapipe brings LLVM, whose loading took 0.15 s of every
 * sanitized start (0.05 s without), and most runs of the sanitized suite
 * never touch Vulkan (the bad option values alone start ./worldgen 272
 * times).  The four calls below are the loader's entry points worldgen and
 * the tests can call first (the loader loads drivers from any of them);
 * defined here, in the executable, they come before libvulkan's, load the
 * two, and go on to libvulkan's own. */
#ifdef WG_HAVE_VULKAN
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <stdatomic.h>
#include <vulkan/vulkan.h>

static void keep_drivers(void)
{
    static atomic_int kept;
    if (atomic_exchange(&kept, 1))
        return;
    (void)dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE);
    (void)dlopen("libVkLayer_khronos_validation.so", RTLD_NOW | RTLD_NODELETE);
}

/* libvulkan's function of this name, the one the executable's hides. */
static void *keep_next(const char *name)
{
    keep_drivers();
    return dlsym(RTLD_NEXT, name);
}

VkResult vkEnumerateInstanceVersion(uint32_t *api)
{
    PFN_vkEnumerateInstanceVersion f =
        (PFN_vkEnumerateInstanceVersion)keep_next("vkEnumerateInstanceVersion");
    return f ? f(api) : VK_ERROR_INITIALIZATION_FAILED;
}

VkResult vkEnumerateInstanceExtensionProperties(const char *layer, uint32_t *n,
                                                VkExtensionProperties *p)
{
    PFN_vkEnumerateInstanceExtensionProperties f =
        (PFN_vkEnumerateInstanceExtensionProperties)keep_next(
            "vkEnumerateInstanceExtensionProperties");
    return f ? f(layer, n, p) : VK_ERROR_INITIALIZATION_FAILED;
}

VkResult vkEnumerateInstanceLayerProperties(uint32_t *n, VkLayerProperties *p)
{
    PFN_vkEnumerateInstanceLayerProperties f =
        (PFN_vkEnumerateInstanceLayerProperties)keep_next(
            "vkEnumerateInstanceLayerProperties");
    return f ? f(n, p) : VK_ERROR_INITIALIZATION_FAILED;
}

VkResult vkCreateInstance(const VkInstanceCreateInfo *info,
                          const VkAllocationCallbacks *alloc,
                          VkInstance *instance)
{
    PFN_vkCreateInstance f = (PFN_vkCreateInstance)keep_next("vkCreateInstance");
    return f ? f(info, alloc, instance) : VK_ERROR_INITIALIZATION_FAILED;
}
#else
/* Built without Vulkan: no driver to keep. */
typedef int keep_drivers_unused;
#endif
