/* vulkan.h: what the Vulkan compute backend offers beyond wg_backend.
 *
 * The backend itself is wg_backend_vulkan (backend.h).  These two functions
 * serve the CLI (--list-devices) and the tests (the validation layer's
 * verdict).  In a build without Vulkan (no WG_HAVE_VULKAN) they still link:
 * the list fails with a reason and the count is 0. */
#ifndef WG_VULKAN_H
#define WG_VULKAN_H

#include <stdio.h>

/* Print one line per Vulkan physical device to 'out', in enumeration order
 * (the order --gpu's index counts in): index, name, type, API version.
 * Returns 0, or -1 with the reason in err[WG_ERR_LEN] when there is no
 * loader, no driver or no device. */
int wg_vulkan_list_devices(FILE *out, char *err);

/* Warnings and errors the validation layer has reported in this process
 * (each also printed to stderr, prefixed "vulkan validation: ").  Only
 * counted when WORLDGEN_VK_VALIDATION=1 was set when the backend made its
 * instance.  This function can't fail. */
unsigned wg_vulkan_validation_count(void);

#endif
