/* gltf.h: the binary glTF 2.0 export (.glb): the height field's mesh, the
 * water's and the colour texture in one file.
 *
 * Same coordinates as the OBJ (obj.h): Y up, one unit a metre, vertex
 * (x, y) at (-3 + x*S, h, -3 + y*S), triangles counter-clockwise seen from
 * +Y, so a world's OBJ and GLB line up in one scene.  The GLB holds two
 * nodes: 'terrain' (POSITION, NORMAL from the fields, TEXCOORD_0, 32-bit
 * indices; material 'terrain', the texture of wg_texture_make() as its
 * base colour) and 'water' (the OBJ's water surface over the same cells,
 * material 'water', blue and partly transparent; left out when there is no
 * water).  asset.generator is "worldgen VERSION" and asset.extras holds the
 * version and the parameters that make the world again.
 *
 * With max_error E > 0 both meshes are simplified (simplify.c says how), in
 * tiles of WG_GLTF_TILE cells that join without cracks: every triangle
 * still counter-clockwise seen from above, the world still square, its
 * vertices grid points, and every grid point's height (the water's level)
 * within E of the simplified surface. */
#ifndef WG_GLTF_H
#define WG_GLTF_H

#include <stdint.h>
#include <stdio.h>

#include "backends/backend.h"

/* Cells a side of a simplification tile. */
#define WG_GLTF_TILE 256

/* The largest --gltf-error, in metres (a world is at most 1 m tall). */
#define WG_GLTF_ERROR_MAX 1.0f

/* What a write made. */
typedef struct wg_gltf_stats {
    uint64_t vertices[2], triangles[2]; /* terrain, water (0: none) */
    uint64_t bytes;                     /* the whole file */
    double error; /* simplified: the largest height difference left
                   * at a grid point (the water's: a bound), metres */
} wg_gltf_stats;

/* Can an N-sided world be written with max_error: is it in range, and
 * does the full grid (max_error 0) fit in glTF's 4 GiB (up to about 8750
 * a side)?  For refusing the options before the world is made.  Returns
 * 0, or -1 with the reason in err[WG_ERR_LEN]. */
int wg_gltf_check(uint32_t n, float max_error, char *err);

/* Write the GLB of field f (its sea at 'sea') to fp, from where it stands
 * (a regular file, not in append mode, is patched in place once the
 * texture's size is known).  'params' is the options that make the world
 * again (asset.extras.parameters).  max_error is 0 for every grid vertex,
 * or the height difference in metres (0 < E <= WG_GLTF_ERROR_MAX) the
 * simplified surfaces may have at a grid point.  stats may be NULL.
 * Returns 0, or -1 with the reason in err[WG_ERR_LEN] (out of memory, over
 * glTF's 4 GiB, a write error). */
int wg_gltf_write(FILE *fp, const wg_fields *f, float sea, const char *params,
                  float max_error, wg_gltf_stats *stats, char *err);

/* The same into 'path' ("-" for standard output) through a temporary
 * renamed into place once complete.  Returns 0, or -1 with the reason in
 * err (which names the file). */
int wg_gltf_save(const char *path, const wg_fields *f, float sea,
                 const char *params, float max_error, wg_gltf_stats *stats,
                 char *err);

#endif
