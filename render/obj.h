/* obj.h: the Wavefront OBJ export: the height field's mesh, its material
 * file and its colour texture, written side by side.
 *
 * The mesh is in SPEC.md coordinates, Y up, one unit a metre: vertex (x, y)
 * at (-3 + x*S, h, -3 + y*S), so a world is 6 m across and at most 1 m
 * tall, and Blender's default importer (forward -Z, up Y) stands it the
 * right way up at its true size.  Every vertex has one position, one normal
 * (the field's nx, ny, nz) and one texture coordinate, all with the same
 * index, and every cell two faces counter-clockwise seen from above.  The
 * water is a second object over the terrain, with its own material. */
#ifndef WG_OBJ_H
#define WG_OBJ_H

#include <stdint.h>
#include <stdio.h>

#include "backends/backend.h"
#include "render.h"
#include "stats.h"

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

/* Write the material file to fp: 'terrain', diffuse only, whose colour map
 * is texture_name, and 'water', blue, glossy and partly transparent.
 * Returns 0, or -1 with the reason. */
int wg_mtl_write(FILE *fp, const char *header, const char *texture_name,
                 char *err);

/* The names beside an OBJ: "dir/world.obj" gives "dir/world.mtl" and
 * "dir/world_albedo.png" (an extension other than .obj is kept: "x.mesh"
 * gives "x.mesh.mtl").  Returns 0, or -1 if they do not fit in len. */
int wg_obj_siblings(const char *obj, char *mtl, char *texture, size_t len);

/* Write all three files (each to a temporary renamed into place only once
 * all three are complete, so a failure leaves none of them half-written),
 * with 'header' (the options that make them again) in each.  Returns 0, or
 * -1 with the reason in err (which names the file). */
int wg_obj_save(const char *path, const wg_fields *f, float sea,
                const char *header, char *err);

#endif
