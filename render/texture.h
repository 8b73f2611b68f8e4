/* texture.h: the ground's colours seen from above, without light: the
 * texture the OBJ's and the glTF's materials show, and the albedo map
 * (--albedo).  Made in texture.c from the renderer's materials
 * (material.c). */
#ifndef WG_TEXTURE_H
#define WG_TEXTURE_H

#include <stdint.h>

#include "backends/backend.h"

/* The texture is N x N texels up to this side, and this side beyond (a
 * 8192x8192 PNG is already 200 MB of pixels). */
#define WG_TEXTURE_MAX 8192

/* The side of the texture of an N-sided world. */
uint32_t wg_texture_side(uint32_t n);

/* Fill rgb[side * side * 3] with the ground's albedo (material.c, the sea
 * at 'sea') seen from above, without the water: row 0 of the image is grid
 * row 0 (north, Z = -3), column 0 is grid column 0 (west, X = -3).  This
 * function can't fail. */
void wg_texture_make(const wg_fields *f, float sea, uint32_t side,
                     uint8_t *rgb);

/* The same on 'threads' threads (0: one per CPU): the same bytes for any
 * number of them. */
void wg_texture_make_threads(const wg_fields *f, float sea, uint32_t side,
                             uint32_t threads, uint8_t *rgb);

/* The albedo map (--albedo) of f, whole or a window (f->r): one texel a
 * vertex, rgb[r.w * r.h * 3], texel (i, j) vertex (r.x + i, r.y + j) of
 * the world, coloured as wg_texture_make colours it but from the vertex's
 * own values alone (its water too: the depth to the sea under the sea,
 * else its own depth, without wg_water_shown's filling of gaps from the
 * neighbours), so that a tile's map is the whole world's, bit for bit.
 * 'threads' as wg_texture_make_threads.  This function can't fail. */
void wg_albedo_map_make(const wg_fields *f, float sea, uint32_t threads,
                        uint8_t *rgb);

#endif
