/* obj.h: the Wavefront OBJ export: the height field's mesh, its material
 * file and its colour texture, written side by side.
 *
 * The mesh is in SPEC.md coordinates, Y up, one unit a metre: vertex (x, y)
 * at (-3 + x*S, h, -3 + y*S), so a world is 6 m across and at most 1 m
 * tall, and Blender's default importer (forward -Z, up Y) stands it the
 * right way up at its true size.  Every vertex has one position, one normal
 * (the field's nx, ny, nz) and one texture coordinate, all with the same
 * index, and every cell two faces counter-clockwise seen from above.  The
 * water is a second object over the terrain, with its own material.  The
 * file's layout and the precision of its numbers: obj.c. */
#ifndef WG_OBJ_H
#define WG_OBJ_H

#include <stdint.h>
#include <stdio.h>

#include "backends/backend.h"
#include "render.h"
#include "stats.h"
#include "texture.h"

/* Write the OBJ of field f (its sea at 'sea') to fp: the lines of 'header'
 * as comments, then 'mtllib mtl_name', object 'terrain' (its N*N
 * vertices, texture coordinates for a texture of tex_side texels, normals
 * and faces, material 'terrain'), then object 'water' (the water's surface
 * as the picture shows it, wg_water_shown(), over every cell with a corner
 * deeper than WG_WATER_MIN, material 'water'; left out when there is no
 * water).  Returns 0, or -1 with the reason in err[WG_ERR_LEN] (a write
 * error, out of memory). */
int wg_obj_write(FILE *fp, const wg_fields *f, float sea, const char *header,
                 const char *mtl_name, uint32_t tex_side, char *err);

/* wg_obj_write formatting on 'threads' threads (0: one per CPU; it uses
 * every CPU): the file is the same bytes for any number of them. */
int wg_obj_write_threads(FILE *fp, const wg_fields *f, float sea,
                         const char *header, const char *mtl_name,
                         uint32_t tex_side, uint32_t threads, char *err);

/* The water object's height at vertex x of a grid row of n vertices: h and
 * w point at the row's heights and its water shown (wg_water_shown), and
 * the rows before and after lie n floats before and after them (read only
 * where 'above' and 'below' say those rows exist).  Under water (deeper
 * than WG_WATER_MIN) it is height + water; a dry vertex beside water
 * takes the picture's level (wg_shore_level): the highest level of the
 * water on the vertices beside it, where that is under its ground by more
 * than a third of their shallowest water (the flat surface of a lake then
 * runs on under the bank, and a modelling tool draws the shoreline where
 * the two meet, inside the cell), else its ground less that (a river
 * running down past it: the shore crosses the cells' edges three quarters
 * of the way from the water).  This
 * function can't fail. */
float wg_obj_level(const float *h, const float *w, uint32_t n, uint32_t x,
                   int above, int below);

/* Write the material file to fp: 'terrain', diffuse only, whose colour map
 * is texture_name, and 'water', blue, glossy and partly transparent.
 * Returns 0, or -1 with the reason. */
int wg_mtl_write(FILE *fp, const char *header, const char *texture_name,
                 char *err);

/* The names beside an OBJ: "dir/world.obj" gives "dir/world.mtl" and
 * "dir/world_albedo.png" (an extension other than .obj is kept: "x.mesh"
 * gives "x.mesh.mtl").  Returns 0, or -1 if they do not fit in len. */
int wg_obj_siblings(const char *obj, char *mtl, char *texture, size_t len);

/* Write all three files, with 'header' (the options that make them again)
 * in each, as one set: each goes to a temporary, and the three are renamed
 * into place together only once all are complete, under their folder's
 * lock and with the fatal signals held, so the set on disk is always one
 * run's, whole (render/outfile.h, wg_outfile_commit_set).  Returns 0, or
 * -1 with the reason in err, which names the file that failed first and
 * why. */
int wg_obj_save(const char *path, const wg_fields *f, float sea,
                const char *header, char *err);

#endif
