/* texture.c: the top-down colour texture of the terrain that the OBJ's
 * material shows: the renderer's materials (material.c) without light, one
 * texel per grid vertex.
 *
 * Albedo rather than the lit picture: a modelling tool lights the mesh
 * itself, and a texture with the sun baked in would be lit twice, its
 * shadows fixed whichever way the tool's light falls.  The water is not in
 * it: the OBJ has the water as its own object, so the texture shows what is
 * under it, the riverbeds, the seabed and the shores.
 *
 * The same colours make the albedo map (--albedo, wg_albedo_map_make) of
 * a whole world or a --region window: one texel a vertex, from the
 * vertex's own values alone (its water too), at its global position, so
 * that tiles match the whole world's map bit for bit.
 *
 * A texel depends on its vertex alone (and the water of its neighbours),
 * so the rows are shared among the threads in strips, each texel made as
 * one thread would make it: at 2048 the texture takes 0.55 s on one
 * thread. */
#include <unistd.h>

#include "render.h"
#include "texture.h"

/* Texture rows in a strip; thread t makes strips t, t + threads, ... */
#define TEXTURE_STRIP 16u

uint32_t wg_texture_side(uint32_t n)
{
    return n < WG_TEXTURE_MAX ? n : WG_TEXTURE_MAX;
}

typedef struct texture_job {
    const wg_fields *f;
    float sea;
    uint32_t side, parts;
    /* The albedo map (wg_albedo_map_make): texel (i, j) is vertex
     * (r.x + i, r.y + j), its water its own; the image r.w x r.h. */
    int map;
    uint32_t cols, rows;
    uint8_t *rgb;
    wg_materials mat;
} texture_job;

/* Texel j stands on grid row (or column) round(j (N-1)/(side-1)): the
 * same one when side is N. */
static inline uint32_t texture_grid(uint32_t j, uint32_t side, uint32_t n)
{
    return side == n ? j
                     : (uint32_t)(((uint64_t)j * (n - 1) + (side - 1) / 2) /
                                  (side - 1));
}

static void texture_rows(void *arg, uint32_t part)
{
    const texture_job *t = arg;
    const wg_fields *f = t->f;
    uint32_t n = f->n, side = t->side, rows = t->rows, cols = t->cols;
    float sp = wg_block_spacing(n);
    for (uint32_t j0 = part * TEXTURE_STRIP; j0 < rows;
         j0 += t->parts * TEXTURE_STRIP) {
        uint32_t j1 = rows - j0 > TEXTURE_STRIP ? j0 + TEXTURE_STRIP : rows;
        for (uint32_t j = j0; j < j1; j++) {
            uint32_t y = t->map ? f->r.y + j : texture_grid(j, side, n);
            uint8_t *out = t->rgb + (size_t)j * cols * 3;
            for (uint32_t i = 0; i < cols; i++, out += 3) {
                uint32_t x = t->map ? f->r.x + i : texture_grid(i, side, n);
                /* The map's fields hold its window; the texture's the
                 * world. */
                size_t k = t->map ? (size_t)j * f->r.w + i
                                  : (size_t)y * n + x;
                /* The map's water is the vertex's own (wg_water_shown's
                 * rule at the world's border), so that a texel of a tile
                 * is the whole world's; the texture's fills the gaps of
                 * dotted rivers from the neighbours. */
                float water = !t->map ? wg_water_shown(f, t->sea, x, y)
                              : f->height[k] < t->sea ? t->sea - f->height[k]
                                                      : f->water[k];
                /* The world position from the global vertex: the
                 * materials' noise matches across tiles. */
                wg_ground g = {
                    .x = wg_block_coord(x, sp), .z = wg_block_coord(y, sp),
                    .h = f->height[k],
                    .water = water,
                    .sediment = f->sediment[k],
                    .n = {f->nx[k], f->ny[k], f->nz[k]},
                };
                wg_rgb c = wg_albedo(&t->mat, &g);
                out[0] = wg_srgb8(c.r);
                out[1] = wg_srgb8(c.g);
                out[2] = wg_srgb8(c.b);
            }
        }
    }
}

static void texture_run(texture_job *t, uint32_t threads)
{
    wg_materials_make(&t->mat, t->sea);
    long cpus = wg_cpus();
    uint32_t strips = (t->rows + TEXTURE_STRIP - 1) / TEXTURE_STRIP;
    uint32_t parts = threads ? threads : cpus < 1 ? 1 : (uint32_t)cpus;
    parts = parts > WG_THREADS_MAX ? WG_THREADS_MAX : parts;
    t->parts = parts > strips ? strips : parts ? parts : 1;
    wg_parallel(t->parts, texture_rows, t);
}

void wg_texture_make_threads(const wg_fields *f, float sea, uint32_t side,
                             uint32_t threads, uint8_t *rgb)
{
    texture_job t = {.f = f, .sea = sea, .side = side, .rgb = rgb,
                     .cols = side, .rows = side};
    texture_run(&t, threads);
}

void wg_albedo_map_make(const wg_fields *f, float sea, uint32_t threads,
                        uint8_t *rgb)
{
    texture_job t = {.f = f, .sea = sea, .side = f->r.w, .rgb = rgb,
                     .map = 1, .cols = f->r.w, .rows = f->r.h};
    texture_run(&t, threads);
}

void wg_texture_make(const wg_fields *f, float sea, uint32_t side,
                     uint8_t *rgb)
{
    wg_texture_make_threads(f, sea, side, 0, rgb);
}
