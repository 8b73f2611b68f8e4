/* texture.c: the top-down colour texture of the terrain that the OBJ's
 * material shows: the renderer's materials (material.c) without light, one
 * texel per grid vertex.
 *
 * Albedo rather than the lit picture: a modelling tool lights the mesh
 * itself, and a texture with the sun baked in would be lit twice, its
 * shadows fixed whichever way the tool's light falls.  The water is not in
 * it: the OBJ has the water as its own object, so the texture shows what is
 * under it, the riverbeds, the seabed and the shores. */
#include "obj.h"

uint32_t wg_texture_side(uint32_t n)
{
    return n < WG_TEXTURE_MAX ? n : WG_TEXTURE_MAX;
}

void wg_texture_make(const wg_fields *f, float sea, uint32_t side,
                     uint8_t *rgb)
{
    wg_materials mat;
    wg_materials_make(&mat, sea);
    uint32_t n = f->n;
    float sp = wg_block_spacing(n);
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
            wg_ground g = {
                .x = wg_block_coord(x, sp), .z = wg_block_coord(y, sp),
                .h = f->height[k], .water = wg_water_shown(f, sea, x, y),
                .sediment = f->sediment[k],
                .n = {f->nx[k], f->ny[k], f->nz[k]},
            };
            wg_rgb c = wg_albedo(&mat, &g);
            out[0] = wg_srgb8(c.r);
            out[1] = wg_srgb8(c.g);
            out[2] = wg_srgb8(c.b);
        }
    }
}
