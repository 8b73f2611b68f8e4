/* window.h: --show, the finished picture in an SDL2 window. */
#ifndef WG_WINDOW_H
#define WG_WINDOW_H

#include "render.h"

/* Show img in a resizable window titled 'title' until Esc, q or the close
 * button (or WORLDGEN_SHOW_TIMEOUT_MS milliseconds, when that is set).
 * Returns 0, or -1 with the reason in err[WG_ERR_LEN]: no display, or a
 * build without SDL2. */
int wg_window_show(const wg_image *img, const char *title, char *err);

#endif
