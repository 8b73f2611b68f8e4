/* keep_drivers.c: linked into ./worldgen and tests/run in sanitized builds
 * only (make SAN=1), never into a release.
 *
 * LeakSanitizer looks for leaks when the process exits, after the Vulkan
 * loader has unloaded Mesa's lavapipe: its 2 x 128 bytes of realloc'd
 * driver state (not ours: vulkan_close() destroys every object it made)
 * then have no module name, and tests/lsan.supp's 'leak:libvulkan_lvp.so'
 * cannot match them.  Loading the driver and the validation layer once more,
 * never to be unloaded, keeps their names in the leak report.  In the test
 * runner it must happen before any test runs a Vulkan backend in-process
 * (test_region.c's run before test_vulkan.c's). */
#include <dlfcn.h>

__attribute__((constructor)) static void keep_drivers(void)
{
    (void)dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE);
    (void)dlopen("libVkLayer_khronos_validation.so", RTLD_NOW | RTLD_NODELETE);
}
