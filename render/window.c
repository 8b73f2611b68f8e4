/* window.c: --show, the finished picture in an SDL2 window.
 *
 * The window opens at the picture's size (smaller if the screen is), can be
 * resized, and always shows the whole picture scaled to fit with its aspect
 * kept (letterboxed); Esc, q or the window's close button end it.  It only
 * shows: the PNG is already written when it opens.
 *
 * WORLDGEN_SHOW_TIMEOUT_MS=N in the environment closes the window by itself
 * after N milliseconds (0..WG_WINDOW_TIMEOUT_MAX, decimal digits alone): for
 * tests and automation, not for people.
 *
 * SDL2 is loaded with dlopen() when a window is asked for, not linked:
 * linking it made every run load 40 more libraries (X11, Wayland, audio),
 * 21 ms a start against 7.5 ms without (measured, 20 runs of --version),
 * which every pipeline and test run paid for a window it never opened. */
#include <stdlib.h>
#include <string.h>

#include "window.h"

int wg_window_timeout(long *ms, char *err)
{
    const char *env = getenv("WORLDGEN_SHOW_TIMEOUT_MS");
    *ms = -1;
    if (!env || !*env)
        return 0;
    /* Digits alone: strtol took "abc" for 0, "2000junk" for 2000, "-5" for
     * no timeout at all, and the cast to 32 bits made 4294967296 0. */
    size_t n = strspn(env, "0123456789");
    if (env[n] != '\0')
        return wg_fail(err, "WORLDGEN_SHOW_TIMEOUT_MS: '%s' is not a whole "
                            "number of milliseconds (valid: 0..%ld, or unset "
                            "for no timeout)", env, WG_WINDOW_TIMEOUT_MAX);
    long v = 0;
    for (const char *p = env; *p && v <= WG_WINDOW_TIMEOUT_MAX; p++)
        v = v * 10 + (*p - '0');
    if (v > WG_WINDOW_TIMEOUT_MAX)
        return wg_fail(err, "WORLDGEN_SHOW_TIMEOUT_MS: '%s' is out of range "
                            "(valid: 0..%ld, or unset for no timeout)", env,
                       WG_WINDOW_TIMEOUT_MAX);
    *ms = v;
    return 0;
}

#ifdef WG_HAVE_SDL2

#include <SDL.h>
#include <dlfcn.h>

/* The SDL2 functions this file calls, looked up in the library at run time
 * with the types its header declares. */
#define WINDOW_SDL_FUNCTIONS(X)                                              \
    X(SDL_CreateRenderer) X(SDL_CreateTexture) X(SDL_CreateWindow)           \
    X(SDL_DestroyRenderer) X(SDL_DestroyTexture) X(SDL_DestroyWindow)        \
    X(SDL_GetCurrentVideoDriver) X(SDL_GetDisplayUsableBounds)               \
    X(SDL_GetError) X(SDL_GetTicks) X(SDL_Init) X(SDL_Quit)                  \
    X(SDL_RenderClear) X(SDL_RenderCopy) X(SDL_RenderPresent)                \
    X(SDL_RenderSetLogicalSize) X(SDL_SetHint) X(SDL_SetRenderDrawColor)     \
    X(SDL_UpdateTexture) X(SDL_WaitEventTimeout)

static struct {
#define X(f) __typeof__(f) *f;
    WINDOW_SDL_FUNCTIONS(X)
#undef X
} window_sdl;

/* Load SDL2 once.  Returns 0, or -1 with the reason. */
static int window_load_sdl(char *err)
{
    static void *lib;
    if (lib)
        return 0;
    void *h = dlopen("libSDL2-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return wg_fail(err, "cannot load SDL2: %s (is libsdl2-2.0-0 "
                            "installed?)", dlerror());
#define X(f)                                                                 \
    if (!(*(void **)&window_sdl.f = dlsym(h, #f))) {                         \
        dlclose(h);                                                          \
        return wg_fail(err, "cannot load SDL2: it has no " #f);              \
    }
    WINDOW_SDL_FUNCTIONS(X)
#undef X
    lib = h; /* kept to the end: SDL's threads may outlive SDL_Quit */
    return 0;
}

/* From here on, every SDL_ call goes through the loaded table. */
#define SDL_CreateRenderer window_sdl.SDL_CreateRenderer
#define SDL_CreateTexture window_sdl.SDL_CreateTexture
#define SDL_CreateWindow window_sdl.SDL_CreateWindow
#define SDL_DestroyRenderer window_sdl.SDL_DestroyRenderer
#define SDL_DestroyTexture window_sdl.SDL_DestroyTexture
#define SDL_DestroyWindow window_sdl.SDL_DestroyWindow
#define SDL_GetCurrentVideoDriver window_sdl.SDL_GetCurrentVideoDriver
#define SDL_GetDisplayUsableBounds window_sdl.SDL_GetDisplayUsableBounds
#define SDL_GetError window_sdl.SDL_GetError
#define SDL_GetTicks window_sdl.SDL_GetTicks
#define SDL_Init window_sdl.SDL_Init
#define SDL_Quit window_sdl.SDL_Quit
#define SDL_RenderClear window_sdl.SDL_RenderClear
#define SDL_RenderCopy window_sdl.SDL_RenderCopy
#define SDL_RenderPresent window_sdl.SDL_RenderPresent
#define SDL_RenderSetLogicalSize window_sdl.SDL_RenderSetLogicalSize
#define SDL_SetHint window_sdl.SDL_SetHint
#define SDL_SetRenderDrawColor window_sdl.SDL_SetRenderDrawColor
#define SDL_UpdateTexture window_sdl.SDL_UpdateTexture
#define SDL_WaitEventTimeout window_sdl.SDL_WaitEventTimeout

int wg_window_show(const wg_image *img, const char *title, long timeout,
                   char *err)
{
    /* Nowhere to show it: no X display, no Wayland socket named or
     * findable (libwayland looks in XDG_RUNTIME_DIR), no driver asked
     * for.  Said here: SDL, trying Wayland after X11, had libwayland
     * print "error: XDG_RUNTIME_DIR is invalid or not set" before our
     * own message. */
    if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY") &&
        !getenv("XDG_RUNTIME_DIR") && !getenv("SDL_VIDEODRIVER"))
        return wg_fail(err, "cannot open a window: no display (DISPLAY=%s, "
                            "WAYLAND_DISPLAY=%s)", "(unset)", "(unset)");
    if (window_load_sdl(err) != 0)
        return -1;
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

int wg_window_show(const wg_image *img, const char *title, long timeout,
                   char *err)
{
    (void)img;
    (void)title;
    (void)timeout;
    return wg_fail(err, "this worldgen was built without SDL2 (install "
                        "libsdl2-dev and rebuild)");
}

#endif
