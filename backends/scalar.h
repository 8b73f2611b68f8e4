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

/* One thermal erosion pass over 'win' (stage 2).  src->r must contain win grown by
 * one cell on each side (clipped to the world); dst->r must contain win;
 * src and dst must not overlap. */
void wg_scalar_erosion_pass(const wg_consts *c, const wg_view *src,
                            wg_rect win, const wg_view *dst);

/* Stage 3, hydraulic erosion, over 'win' (see SPEC.md for the state and
 * the halo: a step reads two cells around each cell).
 *
 * start:  the state (b, w, s, a) before the first step, from the heights h
 *         (b may be h: in place).
 * route:  pass 1 of a step, P and Q from b and w (which contain win grown
 *         by one cell, clipped to the world).
 * step:   pass 2 of a step, in = {b, w, s, P, Q, b0} (each containing win
 *         grown by one cell; b0 is the ground before the first step, which
 *         the ghosts beyond the world's edge read) to out = {b, w, s},
 *         which must not overlap in, and the water's running mean a,
 *         updated in place.
 * settle: after the last step, the final heights h, water wo and the net
 *         sediment from b, w, a and the starting ground b0 (h may be b, wo
 *         may be w). */
void wg_scalar_hydraulic_start(const wg_consts *c, const wg_view *h,
                               wg_rect win, const wg_view *b,
                               const wg_view *w, const wg_view *s,
                               const wg_view *a);
void wg_scalar_hydraulic_route(const wg_consts *c, const wg_view *b,
                               const wg_view *w, wg_rect win,
                               const wg_view *p, const wg_view *q);
void wg_scalar_hydraulic_step(const wg_consts *c, const wg_view *const in[6],
                              wg_rect win, const wg_view *const out[3],
                              const wg_view *a);
/* The same two passes over cells x0 <= x < x1 of row y alone, from row
 * pointers indexed by world x (rows above and below the world are NULL):
 * what wg_scalar_hydraulic_route and _step call with their views' rows. */
struct wg_hyd_rows;
void wg_scalar_hydraulic_route_row(const wg_consts *c,
                                   const struct wg_hyd_rows *in, uint32_t y,
                                   uint32_t x0, uint32_t x1, float *p,
                                   float *q);
void wg_scalar_hydraulic_step_row(const wg_consts *c,
                                  const struct wg_hyd_rows *in, uint32_t y,
                                  uint32_t x0, uint32_t x1, float *bo,
                                  float *wo, float *so);
void wg_scalar_hydraulic_settle(const wg_consts *c, const wg_view *b,
                                const wg_view *w, const wg_view *a,
                                const wg_view *b0, wg_rect win,
                                const wg_view *h, const wg_view *wo,
                                const wg_view *sed);

/* Normals of 'win' (stage 4) from the heights in h (which must contain win
 * grown by one cell, clipped to the world), into three views. */
void wg_scalar_normals(const wg_consts *c, const wg_view *h, wg_rect win,
                       const wg_view *nx, const wg_view *ny,
                       const wg_view *nz);

#endif
