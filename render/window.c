/* window.c: --show, the finished picture in an SDL2 window, whose view
 * the mouse and the keys move.
 *
 * The window opens at the picture's size (smaller if the screen is), can be
 * resized, and always shows the whole picture scaled to fit with its aspect
 * kept (letterboxed); Esc, q or the window's close button end it.  The PNG
 * is already written when it opens, from the command line's view.
 *
 * The view moves as in a modelling program's turntable:
 *   drag (left button), arrow keys   orbit the camera: left and right turn
 *                                     it round the block (--azimuth), up
 *                                     and down raise and lower it
 *                                     (--elevation)
 *   wheel, + and -                   nearer and farther (--distance)
 *   Shift with a drag or the arrows  the sun instead (--sun-azimuth,
 *                                     --sun-elevation)
 *   r                                back to the command line's view
 * A map (--view map) has no camera to move: the sun moves.  Each view is
 * drawn again with every option but these as given, once the events that
 * came while the last one was drawn are all read (a drag sends dozens);
 * the title says the view, and worldgen prints its options when the
 * window closes, so a view found by hand can be made again with --out.
 * (A draft at one sample a pixel while the view moved, then --aa once
 * still, was tried: the default world took 22 ms against 28, since the
 * rasteriser's work is per triangle, for a picture that flickered
 * between the two.)
 *
 * WORLDGEN_SHOW_TIMEOUT_MS=N in the environment closes the window by itself
 * after N milliseconds (0..WG_WINDOW_TIMEOUT_MAX, decimal digits alone): for
 * tests and automation, not for people.
 *
 * SDL2 is loaded with dlopen() when a window is asked for, not linked:
 * linking it made every run load 40 more libraries (X11, Wayland, audio),
 * 21 ms a start against 7.5 ms without (measured, 20 runs of --version),
 * which every pipeline and test run paid for a window it never opened. */
#include <math.h>
#include <stdio.h>
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

/* An azimuth turned by d degrees, in [0, 360). */
static float window_turn(float a, float d)
{
    if (d == 0.0f)
        return a; /* as given, even outside [0, 360) */
    a = fmodf(a + d, 360.0f);
    return a < 0.0f ? a + 360.0f : a;
}

static float window_clamp(float v, double lo, double hi)
{
    return v < (float)lo ? (float)lo : v > (float)hi ? (float)hi : v;
}

wg_render_opts wg_window_move(const wg_render_opts *o, float d_azimuth,
                              float d_elevation, float zoom,
                              float d_sun_azimuth, float d_sun_elevation)
{
    wg_render_opts m = *o;
    m.cam.azimuth = window_turn(o->cam.azimuth, d_azimuth);
    if (d_elevation != 0.0f)
        m.cam.elevation = window_clamp(o->cam.elevation + d_elevation,
                                       -WG_CAMERA_ELEVATION_MAX,
                                       WG_CAMERA_ELEVATION_MAX);
    if (zoom != 1.0f)
        m.cam.distance = window_clamp(o->cam.distance * zoom,
                                      WG_CAMERA_DISTANCE_MIN,
                                      WG_CAMERA_DISTANCE_MAX);
    m.sun_azimuth = window_turn(o->sun_azimuth, d_sun_azimuth);
    if (d_sun_elevation != 0.0f)
        m.sun_elevation = window_clamp(o->sun_elevation + d_sun_elevation,
                                       -WG_SUN_ELEVATION_MAX,
                                       WG_SUN_ELEVATION_MAX);
    return m;
}

#ifdef WG_HAVE_SDL2

#include <SDL.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#if __has_include(<X11/Xlib.h>)
#include <X11/Xlib.h> /* its types: its functions come from SDL's libX11 */
#define WINDOW_XLIB 1
#endif

/* The SDL2 functions this file calls, looked up in the library at run time
 * with the types its header declares. */
#define WINDOW_SDL_FUNCTIONS(X)                                              \
    X(SDL_CreateRenderer) X(SDL_CreateTexture) X(SDL_CreateWindow)           \
    X(SDL_DestroyRenderer) X(SDL_DestroyTexture) X(SDL_DestroyWindow)        \
    X(SDL_GetCurrentVideoDriver) X(SDL_GetDisplayUsableBounds)               \
    X(SDL_GetError) X(SDL_GetModState) X(SDL_GetTicks) X(SDL_Init)          \
    X(SDL_PollEvent) X(SDL_Quit) X(SDL_RenderClear) X(SDL_RenderCopy)        \
    X(SDL_RenderPresent) X(SDL_RenderSetLogicalSize) X(SDL_SetHint)          \
    X(SDL_SetRenderDrawColor) X(SDL_SetWindowTitle) X(SDL_UpdateTexture)     \
    X(SDL_WaitEventTimeout)

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
    if (!h) {
        /* The hint only where a library is missing, as for libgeotiff:
         * under ulimit -v, "libffi.so.8: failed to map segment from
         * shared object" had been given it too. */
        const char *why = dlerror();
        return wg_fail(err, "cannot load SDL2: %s%s", why,
                       strstr(why, "cannot open shared object file: No such file")
                           ? " (is libsdl2-2.0-0 installed?)"
                           : "");
    }
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
#define SDL_GetModState window_sdl.SDL_GetModState
#define SDL_GetTicks window_sdl.SDL_GetTicks
#define SDL_Init window_sdl.SDL_Init
#define SDL_PollEvent window_sdl.SDL_PollEvent
#define SDL_Quit window_sdl.SDL_Quit
#define SDL_RenderClear window_sdl.SDL_RenderClear
#define SDL_RenderCopy window_sdl.SDL_RenderCopy
#define SDL_RenderPresent window_sdl.SDL_RenderPresent
#define SDL_RenderSetLogicalSize window_sdl.SDL_RenderSetLogicalSize
#define SDL_SetHint window_sdl.SDL_SetHint
#define SDL_SetRenderDrawColor window_sdl.SDL_SetRenderDrawColor
#define SDL_SetWindowTitle window_sdl.SDL_SetWindowTitle
#define SDL_UpdateTexture window_sdl.SDL_UpdateTexture
#define SDL_WaitEventTimeout window_sdl.SDL_WaitEventTimeout

/* Degrees the view turns for a pixel dragged, and for an arrow key (the
 * sun twice as far: its light changes less for a degree than the view);
 * the distance's factor for a step of the wheel or of + and -. */
#define WINDOW_DRAG_DEG 0.25f
#define WINDOW_KEY_DEG 5.0f
#define WINDOW_ZOOM 0.9f

/* A moved view: what the input since the last picture asks for. */
typedef struct window_input {
    float azimuth, elevation, zoom, sun_azimuth, sun_elevation;
    int reset, quit, redraw;
} window_input;

/* Add one event's part to 'in'.  *shift is whether Shift is held as of
 * this event: a key's event records the modifiers at its own time, and
 * the mouse's events after it go by that.  (SDL_GetModState() is the
 * state once every waiting event has been read: the events that came
 * while a view was drawn are read together, and a Shift+Up or a Shift+drag
 * among them, its Shift released by then, had moved the camera, not the
 * sun.) */
static void window_event(const SDL_Event *ev, int map, int *shift,
                         window_input *in)
{
    if (ev->type == SDL_KEYDOWN || ev->type == SDL_KEYUP)
        *shift = (ev->key.keysym.mod & KMOD_SHIFT) != 0;
    /* The sun when Shift is held, or when there is no camera to move. */
    const int sun = *shift || map;
    switch (ev->type) {
    case SDL_QUIT:
        in->quit = 1;
        break;
    case SDL_KEYDOWN:
        switch (ev->key.keysym.sym) {
        case SDLK_ESCAPE:
        case SDLK_q:
            in->quit = 1;
            break;
        case SDLK_LEFT:
        case SDLK_RIGHT: {
            const float d = ev->key.keysym.sym == SDLK_RIGHT ? 1.0f : -1.0f;
            if (sun)
                in->sun_azimuth += 2.0f * WINDOW_KEY_DEG * d;
            else
                in->azimuth += WINDOW_KEY_DEG * d;
            break;
        }
        case SDLK_UP:
        case SDLK_DOWN: {
            const float d = ev->key.keysym.sym == SDLK_UP ? 1.0f : -1.0f;
            if (sun)
                in->sun_elevation += WINDOW_KEY_DEG * d;
            else
                in->elevation += WINDOW_KEY_DEG * d;
            break;
        }
        case SDLK_PLUS:
        case SDLK_EQUALS:
        case SDLK_KP_PLUS:
            in->zoom *= map ? 1.0f : WINDOW_ZOOM;
            break;
        case SDLK_MINUS:
        case SDLK_KP_MINUS:
            in->zoom /= map ? 1.0f : WINDOW_ZOOM;
            break;
        case SDLK_r:
            /* Back to the start: the moves before it no longer count (an
             * Esc or q before it still does, and so does a redraw). */
            in->azimuth = in->elevation = 0.0f;
            in->sun_azimuth = in->sun_elevation = 0.0f;
            in->zoom = 1.0f;
            in->reset = 1;
            break;
        default:
            break;
        }
        break;
    case SDL_MOUSEMOTION:
        if (!(ev->motion.state & SDL_BUTTON_LMASK))
            break;
        /* The world follows the hand: dragged right it turns right (the
         * camera goes the other way round), dragged down it tips toward
         * the viewer (the camera rises); the sun rises dragged up. */
        if (sun) {
            in->sun_azimuth += 2.0f * WINDOW_DRAG_DEG * (float)ev->motion.xrel;
            in->sun_elevation -= WINDOW_DRAG_DEG * (float)ev->motion.yrel;
        } else {
            in->azimuth += WINDOW_DRAG_DEG * (float)ev->motion.xrel;
            in->elevation += WINDOW_DRAG_DEG * (float)ev->motion.yrel;
        }
        break;
    case SDL_MOUSEWHEEL: {
        /* Wheel up (away from the user) comes nearer. */
        int steps = ev->wheel.y;
        if (ev->wheel.direction == SDL_MOUSEWHEEL_FLIPPED)
            steps = -steps;
        for (; !map && steps > 0; steps--)
            in->zoom *= WINDOW_ZOOM;
        for (; !map && steps < 0; steps++)
            in->zoom /= WINDOW_ZOOM;
        break;
    }
    case SDL_WINDOWEVENT:
        if (ev->window.event == SDL_WINDOWEVENT_EXPOSED ||
            ev->window.event == SDL_WINDOWEVENT_SIZE_CHANGED)
            in->redraw = 1;
        break;
    case SDL_RENDER_TARGETS_RESET:
    case SDL_RENDER_DEVICE_RESET:
        in->redraw = 2; /* the texture's pixels are lost too */
        break;
    default:
        break;
    }
}

/* Whether the input moves the view. */
static int window_moves(const window_input *in)
{
    return in->reset || in->azimuth != 0.0f || in->elevation != 0.0f ||
           in->zoom != 1.0f || in->sun_azimuth != 0.0f ||
           in->sun_elevation != 0.0f;
}

/* The title: the world's, then the view (none for a still picture). */
static void window_title(SDL_Window *win, const char *title,
                         const wg_render_opts *o)
{
    char buf[320];
    if (!o)
        snprintf(buf, sizeof buf, "%s", title);
    else if (o->view == WG_VIEW_MAP)
        snprintf(buf, sizeof buf, "%s - map, sun %.4g/%.4g", title,
                 (double)o->sun_azimuth, (double)o->sun_elevation);
    else
        snprintf(buf, sizeof buf,
                 "%s - azimuth %.4g, elevation %.4g, distance %.4g, sun "
                 "%.4g/%.4g", title, (double)o->cam.azimuth,
                 (double)o->cam.elevation, (double)o->cam.distance,
                 (double)o->sun_azimuth, (double)o->sun_elevation);
    SDL_SetWindowTitle(win, buf);
}

/* Draw the view o into the texture: scene->render into *held, then its
 * pixels.  The last view's picture is let go first: the window holds the
 * command line's and this one, not a third while it is made (a view that
 * cannot be drawn ends the window, which needs the last one no more). */
static int window_draw(const wg_window_scene *scene, const wg_render_opts *o,
                       SDL_Texture *tex, wg_image *held, char *err)
{
    wg_image_free(held);
    if (scene->render(scene->ctx, o, held, err) != 0)
        return -1;
    if (SDL_UpdateTexture(tex, NULL, held->rgb, (int)held->w * 3) != 0)
        return wg_fail(err, "cannot show the picture: %s", SDL_GetError());
    return 0;
}

/* $DISPLAY as a message shows it: "(unset)", or its bytes with nothing
 * that could drive the terminal. */
static void window_display_shown(char *buf, size_t len)
{
    snprintf(buf, len, "%s", getenv("DISPLAY") ? getenv("DISPLAY") : "(unset)");
    for (char *c = buf; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

/* How long SDL may take to reach the display before worldgen gives up. */
#define WINDOW_DISPLAY_WAIT_S 10

/* The watch over SDL_Init: a display that takes the connection and never
 * answers (a stuck X server, an ssh -X tunnel whose far end is gone, a
 * TCP display whose packets are dropped) had held --show there for ever,
 * before the world was made, with nothing said. */
typedef struct window_watch {
    atomic_int done;
    char msg[320];
} window_watch;

static void *window_watch_main(void *arg)
{
    window_watch *w = arg;
    const struct timespec step = {0, 50 * 1000 * 1000};
    for (int i = 0; i < WINDOW_DISPLAY_WAIT_S * 20; i++) {
        if (atomic_load(&w->done))
            return NULL;
        nanosleep(&step, NULL);
    }
    if (atomic_load(&w->done))
        return NULL;
    /* Nothing of the run is written yet (the window is tried first):
     * said, and the process ends, SDL_Init still waiting. */
    ssize_t r = write(STDERR_FILENO, w->msg, strlen(w->msg));
    (void)r;
    _exit(1);
}

/* SDL's video, where a window can be seen: SDL loaded and initialised,
 * on a display (not SDL's offscreen or dummy driver, unless asked for).
 * It is kept up for the window (wg_window_show's own call counts one
 * more; its SDL_Quit ends both): an X server whose last client leaves
 * resets, and a window opened while Xvfb reset after a probe that had
 * quit found "x11 not available".  Returns 0, or -1 with the reason in
 * err (SDL quit again). */
int wg_window_probe(char *err)
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
    /* X11 alone where Wayland cannot be found (no XDG_RUNTIME_DIR for
     * libwayland to look in, no WAYLAND_DISPLAY path): SDL tries Wayland
     * when X11 fails, and with a DISPLAY whose server is gone (an ssh -X
     * whose tunnel closed) libwayland printed "error: XDG_RUNTIME_DIR is
     * invalid or not set" before our own message. */
    const char *wayland = getenv("WAYLAND_DISPLAY");
    if (getenv("DISPLAY") && !getenv("XDG_RUNTIME_DIR") &&
        !(wayland && wayland[0] == '/') && !getenv("SDL_VIDEODRIVER"))
        SDL_SetHint(SDL_HINT_VIDEODRIVER, "x11");
    window_watch watch = {.done = 0};
    char shown[160];
    window_display_shown(shown, sizeof shown);
    snprintf(watch.msg, sizeof watch.msg,
             "worldgen: --show: cannot open a window: the display (DISPLAY=%s) "
             "did not answer in %d s (a stuck server, or an ssh tunnel whose "
             "far end is gone?)\n", shown, WINDOW_DISPLAY_WAIT_S);
    pthread_t watcher;
    const int watching =
        pthread_create(&watcher, NULL, window_watch_main, &watch) == 0;
    const int up = SDL_Init(SDL_INIT_VIDEO);
    atomic_store(&watch.done, 1);
    if (watching)
        pthread_join(watcher, NULL);
    if (up != 0)
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
    return 0;
}

/* X's errors, said as worldgen's.  Xlib's own handlers print the raw
 * request ("X Error of failed request: BadWindow", "X connection to :0
 * broken") and exit: as another program destroys the window (xdotool
 * windowclose, a session tool) or kills its connection (xkill, xdotool
 * windowkill), or the server ends.  An error is kept (the first) and ends
 * the window as any failure does, saying where the picture is; a lost
 * connection cannot be returned from (Xlib ends the process when its
 * handler returns), so it is said and the process ends there, as Xlib's
 * would, with exit's clean-up: the outputs were all written before the
 * window opened. */
static char window_x_failed[256];
static char window_x_display[160];

#ifdef WINDOW_XLIB
static int (*window_x_error_text)(Display *, int, char *, int);

static int window_x_error(Display *d, XErrorEvent *e)
{
    if (window_x_failed[0])
        return 0;
    char what[120] = "";
    if (window_x_error_text)
        window_x_error_text(d, e->error_code, what, (int)sizeof what);
    const int gone = strstr(what, "Window") || strstr(what, "Drawable");
    snprintf(window_x_failed, sizeof window_x_failed,
             "the X server refused a request for the window: %s%s",
             what[0] ? what : "an X error",
             gone ? " (was it destroyed by another program?)" : "");
    return 0;
}

static int window_x_lost(Display *d)
{
    (void)d;
    char msg[400];
    int n = snprintf(msg, sizeof msg,
                     "worldgen: --show: the connection to the display "
                     "(DISPLAY=%s) was lost: the window was killed by "
                     "another program, or the X server ended; the outputs "
                     "were written before the window opened\n",
                     window_x_display);
    if (n > 0) {
        ssize_t r = write(STDERR_FILENO, msg, (size_t)n);
        (void)r;
    }
    exit(1);
}
#endif

/* Our handlers in the libX11 that SDL's X11 driver loaded, if it is
 * that driver. */
static void window_x_handlers(void)
{
    window_x_failed[0] = '\0';
#ifdef WINDOW_XLIB
    const char *driver = SDL_GetCurrentVideoDriver();
    if (!driver || strcmp(driver, "x11") != 0)
        return;
    void *x = dlopen("libX11.so.6", RTLD_NOW | RTLD_NOLOAD);
    if (!x)
        return;
    XErrorHandler (*set_error)(XErrorHandler);
    XIOErrorHandler (*set_lost)(XIOErrorHandler);
    *(void **)&set_error = dlsym(x, "XSetErrorHandler");
    *(void **)&set_lost = dlsym(x, "XSetIOErrorHandler");
    *(void **)&window_x_error_text = dlsym(x, "XGetErrorText");
    window_display_shown(window_x_display, sizeof window_x_display);
    if (set_error)
        set_error(window_x_error);
    if (set_lost)
        set_lost(window_x_lost);
    dlclose(x); /* the count NOLOAD took: SDL holds it loaded */
#endif
}

int wg_window_show(const wg_image *img, const char *title,
                   const wg_window_scene *scene, long timeout,
                   wg_render_opts *last, char *err)
{
    if (scene)
        *last = scene->opts;
    if (wg_window_probe(err) != 0)
        return -1;
    window_x_handlers();
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
    /* A drag's motion in the screen's pixels, which WINDOW_DRAG_DEG is
     * for: by default SDL gives it in the picture's (the logical size
     * below), so a picture shrunk to fit, a big one or a window made
     * smaller, turned a degree for every pixel of a 4000-wide picture in a
     * 1000-pixel window.  Read when the renderer is made. */
    SDL_SetHint(SDL_HINT_MOUSE_RELATIVE_SCALING, "0");
    /* The click that focuses the window starts a drag too: SDL drops a
     * click read within 10 ms of the focus, and the events that queue up
     * behind a render are read together, so a drag begun as the window
     * was focused then (and a test's, at once) did nothing. */
    SDL_SetHint(SDL_HINT_MOUSE_FOCUS_CLICKTHROUGH, "1");
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

    window_title(win, title, scene ? &scene->opts : NULL);
    wg_image held = {0}; /* the picture of the view moved to */
    wg_render_opts view = scene ? scene->opts : (wg_render_opts){0};
    const Uint32 start = SDL_GetTicks();
    int shift = (SDL_GetModState() & KMOD_SHIFT) != 0; /* window_event */
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
        int got = SDL_WaitEventTimeout(&ev, timeout >= 0 ? 50 : 1000);
        if (timeout >= 0 && SDL_GetTicks() - start >= (Uint32)timeout)
            break;
        window_input in = {.zoom = 1.0f};
        /* Every event waiting, before anything is drawn: a drag sends
         * dozens while one view renders (28 ms for the default world). */
        for (; got; got = SDL_PollEvent(&ev))
            window_event(&ev, scene && scene->opts.view == WG_VIEW_MAP,
                         &shift, &in);
        if (window_x_failed[0]) {
            wg_fail(err, "%s", window_x_failed);
            goto moved_out;
        }
        if (in.quit)
            break;
        if (in.redraw == 2 &&
            SDL_UpdateTexture(tex, NULL, held.rgb ? held.rgb : img->rgb,
                              (int)img->w * 3) != 0) {
            wg_fail(err, "cannot show the picture: %s", SDL_GetError());
            goto moved_out;
        }
        redraw |= in.redraw != 0;
        if (scene && window_moves(&in)) {
            const wg_render_opts *from = in.reset ? &scene->opts : &view;
            view = wg_window_move(from, in.azimuth, in.elevation, in.zoom,
                                  in.sun_azimuth, in.sun_elevation);
            window_title(win, title, &view); /* while it is drawn */
            if (window_draw(scene, &view, tex, &held, err) != 0)
                goto moved_out;
            /* Only a view shown is the last: one that could not be drawn
             * had been said as the view the window was left at. */
            *last = view;
            redraw = 1;
        }
    }
    rc = 0;
moved_out:
    wg_image_free(&held);
out:
    /* After an X error, nothing more is asked of the server: SDL_Quit
     * gives Xlib its own handler back before it closes the display, and
     * the error of a request still on its way (the window's destruction)
     * was printed raw and ended the process. */
    if (window_x_failed[0])
        return rc;
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

int wg_window_probe(char *err)
{
    return wg_fail(err, "this worldgen was built without SDL2 (install "
                        "libsdl2-dev and rebuild)");
}

int wg_window_show(const wg_image *img, const char *title,
                   const wg_window_scene *scene, long timeout,
                   wg_render_opts *last, char *err)
{
    (void)img;
    (void)title;
    (void)timeout;
    if (scene)
        *last = scene->opts;
    return wg_fail(err, "this worldgen was built without SDL2 (install "
                        "libsdl2-dev and rebuild)");
}

#endif
