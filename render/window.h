/* window.h: --show, the finished picture in an SDL2 window, whose view
 * the mouse and the keys move. */
#ifndef WG_WINDOW_H
#define WG_WINDOW_H

#include "render.h"

/* The longest WORLDGEN_SHOW_TIMEOUT_MS: a day, far below where SDL's
 * 32-bit millisecond ticks wrap (49 days). */
#define WG_WINDOW_TIMEOUT_MAX 86400000L

/* WORLDGEN_SHOW_TIMEOUT_MS from the environment: *ms = -1 (no timeout)
 * when it is unset or empty, else its value, decimal digits alone in
 * 0..WG_WINDOW_TIMEOUT_MAX.  Returns 0, or -1 with the reason (naming the
 * variable, the value and the valid range) in err[WG_ERR_LEN].  worldgen
 * checks it with the options, before the world is made. */
int wg_window_timeout(long *ms, char *err);

/* What the window may draw again: the world from other options.  render
 * makes a picture of o->width x o->height into img (which it allocates:
 * wg_image_free); it returns 0, or -1 with the reason in err[WG_ERR_LEN]. */
typedef struct wg_window_scene {
    int (*render)(void *ctx, const wg_render_opts *o, wg_image *img,
                  char *err);
    void *ctx;
    wg_render_opts opts; /* the options img was made with */
} wg_window_scene;

/* Whether a window can be shown here: a display SDL opens (its offscreen
 * or dummy driver only when SDL_VIDEODRIVER asks for it), in a build with
 * SDL2.  worldgen asks before the world is made, so that --show without
 * one fails at once, its outputs untouched; SDL's video stays up for
 * wg_window_show.  Returns 0, or -1 with the reason in err[WG_ERR_LEN]. */
int wg_window_probe(char *err);

/* Show img in a resizable window titled 'title' until Esc, q or the close
 * button, or timeout_ms milliseconds when that is not -1 (from
 * wg_window_timeout).  With a scene, the view can be moved (the mouse and
 * the keys: window.c) and each view is drawn again with scene->render; the
 * options of the last view shown are left in *last (scene->opts when it
 * was not moved).  Returns 0, or -1 with the reason in err[WG_ERR_LEN]: no
 * display, a build without SDL2, or a render that failed. */
int wg_window_show(const wg_image *img, const char *title,
                   const wg_window_scene *scene, long timeout_ms,
                   wg_render_opts *last, char *err);

/* The new view after a step of the window's controls: the orbit camera
 * turned by d_azimuth and d_elevation degrees and its distance times
 * 'zoom', the sun turned by d_sun_azimuth and d_sun_elevation, each kept
 * in its option's range (azimuths wrap into [0, 360)).  Pure: the window's
 * arithmetic, apart from SDL. */
wg_render_opts wg_window_move(const wg_render_opts *o, float d_azimuth,
                              float d_elevation, float zoom,
                              float d_sun_azimuth, float d_sun_elevation);

#endif
