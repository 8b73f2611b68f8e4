/* simplify.h: a grid's surface in fewer triangles, every grid point still
 * within a given height difference E of it: the glTF writer's
 * --gltf-error (gltf.c runs these on every core, a tile a task;
 * simplify.c says how).  The terrain, a height at every grid point, as a
 * triangulated irregular network (wg_tin); the water, flat where it is
 * wet, as a quadtree of flat blocks (wg_quad).
 *
 * Both make triangles of grid points, numbered y * n + x on the n x n
 * grid, counter-clockwise seen from above (+Y in the meshes' world, with
 * grid row y running south): the writers' winding. */
#ifndef WG_SIMPLIFY_H
#define WG_SIMPLIFY_H

#include <stddef.h>
#include <stdint.h>

/* The largest tile, in cells a side: the triangulation's tests are exact
 * in 64-bit integers up to it (12 s^4 < 2^63), and a tile's points and
 * triangles are numbered in int32_t. */
#define WG_TIN_SIDE_MAX 16384

/* One tile's working memory, reused from tile to tile on one thread. */
typedef struct wg_tin wg_tin;

/* Memory for tiles of at most 'side' (<= WG_TIN_SIDE_MAX) cells a side.
 * Returns NULL when out of memory. */
wg_tin *wg_tin_new(uint32_t side);
void wg_tin_free(wg_tin *m);

/* Simplify the terrain of the tile at grid point (x0, y0), w x h cells
 * (each at most wg_tin_new's side), of the n x n 'height' grid, within e,
 * into triangles of grid points: *out (malloc'ed, the caller frees it),
 * *len indices.  The tile's borders are simplified as lines of their own
 * heights alone, so neighbouring tiles join without a crack.  Returns the
 * largest height difference left, or -1 when out of memory. */
double wg_tin_tile(wg_tin *m, const float *height, uint32_t n, uint32_t x0,
                   uint32_t y0, uint32_t w, uint32_t h, float e,
                   uint32_t **out, size_t *len);

/* The water's grid: n x n points, the water's level at each, and a summed
 * table of wet cells (wet_sum[y * n + x]: how many of the cells in columns
 * 0 .. x-1 and rows 0 .. y-1 are wet, a cell numbered as its north-west
 * corner). */
typedef struct wg_quad_grid {
    uint32_t n;
    const float *level;
    const uint32_t *wet_sum;
} wg_quad_grid;

/* A block: (x, y) its north-west grid point, s cells a side. */
typedef struct wg_quad_block {
    uint32_t x, y, s;
} wg_quad_block;

/* A growing list of blocks; zeroed is empty.  The caller frees b. */
typedef struct wg_quad_blocks {
    wg_quad_block *b;
    size_t n, cap;
} wg_quad_blocks;

/* Add to *out the blocks of the quadtree under block (x, y, s) (s a power
 * of two): whole where every cell is wet and the levels lie within e/2 of
 * a plane, single wet cells where not, nothing where none is wet.  Raises
 * *worst to the largest height difference left (a bound).  Returns 0, or
 * -1 when out of memory. */
int wg_quad_split(const wg_quad_grid *g, uint32_t x, uint32_t y, uint32_t s,
                  float e, wg_quad_blocks *out, double *worst);

/* The triangles of every block in the 'count' lists, as grid points of the
 * n x n grid: blocks of different sizes meet without a crack.  *idx
 * (malloc'ed, NULL when there are none) holds *ni indices.  Returns 0, or
 * -1 when out of memory. */
int wg_quad_triangles(const wg_quad_blocks *blocks, size_t count, uint32_t n,
                      uint32_t **idx, size_t *ni);

#endif
