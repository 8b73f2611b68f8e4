/* heightmap.h: height map writers, one call per format.
 *
 * PFM holds the exact binary32 heights; PNG (16-bit grey) and R16 (raw
 * little-endian uint16, the layout Unity and Unreal import) map height 0..1
 * to 0..65535 with rounding, the same scale for every world and tile.  Row
 * y = 0 of the grid is the top row of every image (PFM stores rows bottom
 * to top, as its format says, so it writes them in reverse). */
#ifndef WG_HEIGHTMAP_H
#define WG_HEIGHTMAP_H

#include <stdint.h>
#include <stdio.h>

#include "png.h"

typedef enum wg_hm_format {
    WG_HM_NONE = 0,
    WG_HM_PFM,
    WG_HM_PNG,
    WG_HM_R16,
} wg_hm_format;

/* The format called 'name' ("pfm", "png", "r16", any case), or WG_HM_NONE. */
wg_hm_format wg_heightmap_format_named(const char *name);

/* The format a path's extension names, or WG_HM_NONE. */
wg_hm_format wg_heightmap_format_of_path(const char *path);

/* Height 0..1 as a 16-bit sample: round(h * 65535), clamped. */
uint16_t wg_height_to_u16(float h);

/* Write the N x N heights 'h' to fp in format 'f'.  'text' (PNG only)
 * records how the map was made.  Returns 0, or -1 with the reason in
 * err[WG_ERR_LEN] (a write error, out of memory). */
int wg_heightmap_write(FILE *fp, wg_hm_format f, const float *h, uint32_t n,
                       const wg_png_text *text, int ntext, char *err);

#endif
