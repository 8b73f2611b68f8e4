/* texture.c: the top-down colour texture of the terrain that the OBJ's
 * material shows: the renderer's materials (sand, grass, forest, snow,
 * rock) without light, one texel per grid vertex.
 *
 * Albedo rather than the lit picture: a modelling tool lights the mesh
 * itself, and a texture with the sun baked in would be lit twice, its
 * shadows fixed whichever way the tool's light falls. */
#include "obj.h"

uint32_t wg_texture_side(uint32_t n)
{
    return n < WG_TEXTURE_MAX ? n : WG_TEXTURE_MAX;
}

void wg_texture_make(const wg_fields *f, const wg_height_stats *st,
                     uint32_t side, uint8_t *rgb)
{
    wg_palette pal;
    wg_palette_make(&pal, st, 0.0f, 90.0f); /* the sun plays no part */
    uint32_t n = f->n;
    for (uint32_t j = 0; j < side; j++) {
        /* Texel j stands on grid row round(j (N-1)/(side-1)): the same
         * row when side is N. */
        uint32_t y = side == n ? j
                               : (uint32_t)(((uint64_t)j * (n - 1) +
                                             (side - 1) / 2) / (side - 1));
        uint8_t *out = rgb + (size_t)j * side * 3;
        for (uint32_t i = 0; i < side; i++, out += 3) {
            uint32_t x = side == n ? i
                                   : (uint32_t)(((uint64_t)i * (n - 1) +
                                                 (side - 1) / 2) / (side - 1));
            size_t k = (size_t)y * n + x;
            wg_rgb c = wg_albedo(&pal, f->height[k], f->ny[k]);
            out[0] = wg_srgb8(c.r);
            out[1] = wg_srgb8(c.g);
            out[2] = wg_srgb8(c.b);
        }
    }
}
