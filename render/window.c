/* window.c: --show, the finished picture in an SDL2 window.
 *
 * The window opens at the picture's size (smaller if the screen is), can be
 * resized, and always shows the whole picture scaled to fit with its aspect
 * kept (letterboxed); Esc, q or the window's close button end it.  It only
 * shows: the PNG is already written when it opens.
 *
 * WORLDGEN_SHOW_TIMEOUT_MS=N in the environment closes the window by itself
 * after N milliseconds: for tests and automation, not for people. */
#include <stdlib.h>
#include <string.h>

#include "window.h"

#ifdef WG_HAVE_SDL2

#include <SDL.h>

int wg_window_show(const wg_image *img, const char *title, char *err)
{
    /* worldgen handles SIGINT and SIGTERM itself (removing half-written
     * files); SDL must not turn them into a quit event instead. */
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
    if (SDL_Init(SDL_INIT_VIDEO) != 0)
        return wg_fail(err, "cannot open a window: %s (is there a display? "
                            "DISPLAY=%s)", SDL_GetError(),
                       getenv("DISPLAY") ? getenv("DISPLAY") : "(unset)");
    /* With no display SDL falls back to its offscreen driver, whose window
     * nobody can see or close: refuse it unless it was asked for. */
    const char *driver = SDL_GetCurrentVideoDriver();
    const char *asked = getenv("SDL_VIDEODRIVER");
    if (driver && (strcmp(driver, "offscreen") == 0 ||
                   strcmp(driver, "dummy") == 0) &&
        !(asked && strcmp(asked, driver) == 0)) {
        SDL_Quit();
        return wg_fail(err, "cannot open a window: no display (DISPLAY=%s, "
                            "WAYLAND_DISPLAY=%s)",
                       getenv("DISPLAY") ? getenv("DISPLAY") : "(unset)",
                       getenv("WAYLAND_DISPLAY") ? getenv("WAYLAND_DISPLAY")
                                                 : "(unset)");
    }
    SDL_Window *win = NULL;
    SDL_Renderer *ren = NULL;
    SDL_Texture *tex = NULL;
    int rc = -1;

    /* Start at the picture's size, shrunk to fit the usable screen. */
    int w = (int)img->w, h = (int)img->h;
    SDL_Rect usable;
    if (SDL_GetDisplayUsableBounds(0, &usable) == 0 && usable.w > 0 &&
        usable.h > 0 && (w > usable.w || h > usable.h)) {
        double k = (double)usable.w / w < (double)usable.h / h
                       ? (double)usable.w / w
                       : (double)usable.h / h;
        w = (int)(w * k);
        h = (int)(h * k);
    }
    win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED,
                           SDL_WINDOWPOS_CENTERED, w, h, SDL_WINDOW_RESIZABLE);
    if (!win) {
        wg_fail(err, "cannot open a window: %s", SDL_GetError());
        goto out;
    }
    ren = SDL_CreateRenderer(win, -1, 0);
    if (!ren) /* no GPU driver: SDL's software renderer always works */
        ren = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    if (!ren) {
        wg_fail(err, "cannot draw in the window: %s", SDL_GetError());
        goto out;
    }
    /* Smooth scaling; the logical size keeps the aspect, with bars. */
    SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "linear");
    tex = SDL_CreateTexture(ren, SDL_PIXELFORMAT_RGB24,
                            SDL_TEXTUREACCESS_STATIC, (int)img->w,
                            (int)img->h);
    if (!tex || SDL_UpdateTexture(tex, NULL, img->rgb, (int)img->w * 3) != 0 ||
        SDL_RenderSetLogicalSize(ren, (int)img->w, (int)img->h) != 0) {
        wg_fail(err, "cannot show the picture: %s", SDL_GetError());
        goto out;
    }

    const char *env = getenv("WORLDGEN_SHOW_TIMEOUT_MS");
    long timeout = env && *env ? strtol(env, NULL, 10) : -1;
    Uint32 start = SDL_GetTicks();
    int redraw = 1;
    for (;;) {
        if (redraw) {
            SDL_SetRenderDrawColor(ren, 0, 0, 0, 255);
            SDL_RenderClear(ren);
            SDL_RenderCopy(ren, tex, NULL, NULL);
            SDL_RenderPresent(ren);
            redraw = 0;
        }
        SDL_Event ev;
        /* Wake now and then only to honour the timeout. */
        if (!SDL_WaitEventTimeout(&ev, timeout >= 0 ? 50 : 1000)) {
            if (timeout >= 0 && SDL_GetTicks() - start >= (Uint32)timeout)
                break;
            continue;
        }
        if (ev.type == SDL_QUIT)
            break;
        if (ev.type == SDL_KEYDOWN && (ev.key.keysym.sym == SDLK_ESCAPE ||
                                       ev.key.keysym.sym == SDLK_q))
            break;
        if (ev.type == SDL_WINDOWEVENT &&
            (ev.window.event == SDL_WINDOWEVENT_EXPOSED ||
             ev.window.event == SDL_WINDOWEVENT_SIZE_CHANGED))
            redraw = 1;
        if (ev.type == SDL_RENDER_TARGETS_RESET ||
            ev.type == SDL_RENDER_DEVICE_RESET) {
            SDL_UpdateTexture(tex, NULL, img->rgb, (int)img->w * 3);
            redraw = 1;
        }
    }
    rc = 0;
out:
    if (tex)
        SDL_DestroyTexture(tex);
    if (ren)
        SDL_DestroyRenderer(ren);
    if (win)
        SDL_DestroyWindow(win);
    SDL_Quit();
    return rc;
}

#else

int wg_window_show(const wg_image *img, const char *title, char *err)
{
    (void)img;
    (void)title;
    return wg_fail(err, "this worldgen was built without SDL2 (install "
                        "libsdl2-dev and rebuild)");
}

#endif
