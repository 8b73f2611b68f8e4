/* scalar.h: the scalar C stage functions, SPEC.md written out plainly.
 *
 * They compute a window of a world: 'win' is the rectangle of the world's
 * grid to produce, and the views say where the input and output cells live.
 * The whole world is the window wg_rect_world(N); a tile of a huge world is
 * any smaller rectangle.  These are the reference every other backend is
 * tested against.  None of them can fail. */
#ifndef WG_SCALAR_H
#define WG_SCALAR_H

#include "spec.h"

/* Heights of 'win' (stage 1).  dst->r must contain win. */
void wg_scalar_terrain(const wg_consts *c, const float *lat, wg_rect win,
                       const wg_view *dst);

/* One erosion pass over 'win' (stage 2).  src->r must contain win grown by
 * one cell on each side (clipped to the world); dst->r must contain win;
 * src and dst must not overlap. */
void wg_scalar_erosion_pass(const wg_consts *c, const wg_view *src,
                            wg_rect win, const wg_view *dst);

/* Normals of 'win' (stage 3) from the heights in h (which must contain win
 * grown by one cell, clipped to the world), into three views. */
void wg_scalar_normals(const wg_consts *c, const wg_view *h, wg_rect win,
                       const wg_view *nx, const wg_view *ny,
                       const wg_view *nz);

#endif
