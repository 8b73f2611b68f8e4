/* window.h: --show, the finished picture in an SDL2 window. */
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

/* Show img in a resizable window titled 'title' until Esc, q or the close
 * button, or timeout_ms milliseconds when that is not -1 (from
 * wg_window_timeout).  Returns 0, or -1 with the reason in err[WG_ERR_LEN]:
 * no display, or a build without SDL2. */
int wg_window_show(const wg_image *img, const char *title, long timeout_ms,
                   char *err);

#endif
