/* test_window.c: --show.  Under Xvfb the window must show the picture that
 * was written (a screenshot compared with the PNG), and close by itself
 * with WORLDGEN_SHOW_TIMEOUT_MS; its keys and drags (xdotool) must move the
 * view, also when they queue up behind a render; with no display it must
 * say so, exit 1 and still leave the PNG. */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/window.h"
#include "test.h"

/* The next number of a PPM header at *p, skipping space and # comments. */
static int window_ppm_num(const unsigned char *b, size_t len, size_t *p)
{
    for (;;) {
        while (*p < len && (b[*p] == ' ' || b[*p] == '\n' || b[*p] == '\r' ||
                            b[*p] == '\t'))
            (*p)++;
        if (*p < len && b[*p] == '#') {
            while (*p < len && b[*p] != '\n')
                (*p)++;
            continue;
        }
        break;
    }
    int v = -1;
    while (*p < len && b[*p] >= '0' && b[*p] <= '9')
        v = (v < 0 ? 0 : v * 10) + (b[(*p)++] - '0');
    return v;
}

/* The pixels of a binary PPM (P6, maxval 255), as ImageMagick writes it. */
static uint8_t *window_read_ppm(const char *path, int *w, int *h)
{
    size_t len, p = 2;
    unsigned char *b = wg_read_file(path, &len);
    if (!b || len < 2 || b[0] != 'P' || b[1] != '6') {
        free(b);
        return NULL;
    }
    *w = window_ppm_num(b, len, &p);
    *h = window_ppm_num(b, len, &p);
    int maxval = window_ppm_num(b, len, &p);
    p++; /* the one whitespace before the pixels */
    if (*w <= 0 || *h <= 0 || maxval != 255 || p + (size_t)*w * *h * 3 > len) {
        free(b);
        return NULL;
    }
    uint8_t *px = malloc((size_t)*w * *h * 3);
    memcpy(px, b + p, (size_t)*w * *h * 3);
    free(b);
    return px;
}

/* The start of a test's shell under Xvfb (tests/xvfb: a 1024x768 screen,
 * no window manager, a display that answers); the shell's script follows,
 * in single quotes.  %s is the source tree. */
#define WINDOW_XVFB "%s/tests/xvfb sh -c '"

WG_TEST(window_shows_the_picture_under_xvfb)
{
#ifndef WG_HAVE_SDL2
    wg_skip("built without SDL2 (window_without_sdl2 checks the message)");
    return;
#endif
    if (system("command -v xvfb-run >/dev/null && command -v xwd >/dev/null && "
               "command -v convert >/dev/null") != 0) {
        wg_skip("xvfb-run, xwd or ImageMagick's convert is not installed");
        return;
    }
    /* The window opens centred on a 1024x768 screen with no window
     * manager; screenshots are taken until it has drawn (the root window
     * is black until then), then once more, and the window is closed with
     * SIGTERM (worldgen's own handler: status 143).  A second, small one
     * closes itself: WORLDGEN_SHOW_TIMEOUT_MS, status 0. */
    char cmd[1500];
    /* Under make test SAN=1 the leak check is on here too: SDL's X
     * libraries, which it unloads at SDL_Quit, stay loaded there
     * (tests/san/keep_drivers.c), so that tests/lsan.supp names them. */
    snprintf(cmd, sizeof cmd,
             "cd %s && "
             WINDOW_XVFB
             "WORLDGEN_SHOW_TIMEOUT_MS=30000 %s/worldgen --size 48 -q "
             "--out shown.png --width 400 --height 300 --show & pid=$!; "
             "i=0; while [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); "
             "  xwd -root -silent | convert xwd:- -depth 8 ppm:shot.ppm; "
             "  m=$(convert shot.ppm -format \"%%[fx:mean>0.05]\" info:); "
             "  [ \"$m\" = 1 ] && break; done; sleep 0.5; "
             "xwd -root -silent | convert xwd:- -depth 8 ppm:shot.ppm; "
             "kill -TERM $pid; wait $pid; echo \"status $?\"; "
             "WORLDGEN_SHOW_TIMEOUT_MS=100 %s/worldgen --size 16 -q "
             "--out small.png --width 64 --height 48 --show; "
             "echo \"status $?\"'",
             wg_tmpdir(), wg_srcdir(), wg_srcdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "status 143\nstatus 0\n"), "%s %s", c.out, c.err);
    wg_cli_free(&c);

    char shot_path[300], png_path[300];
    snprintf(shot_path, sizeof shot_path, "%s/shot.ppm", wg_tmpdir());
    snprintf(png_path, sizeof png_path, "%s/shown.png", wg_tmpdir());
    int sw = 0, sh = 0;
    uint32_t pw = 0, ph = 0;
    uint8_t *shot = window_read_ppm(shot_path, &sw, &sh);
    uint8_t *pic = wg_read_png(png_path, 8, 3, &pw, &ph, NULL, 0);
    CHECK(shot && sw == 1024 && sh == 768, "no screenshot (%dx%d)", sw, sh);
    CHECK(pic && pw == 400 && ph == 300, "no picture (%ux%u)", pw, ph);
    if (shot && pic && sw == 1024 && pw == 400) {
        /* The window is where the screen is not black: the sky never is. */
        int x0 = sw, y0 = sh, x1 = -1, y1 = -1;
        for (int y = 0; y < sh; y++)
            for (int x = 0; x < sw; x++) {
                const uint8_t *q = shot + ((size_t)y * sw + x) * 3;
                if (q[0] + q[1] + q[2] > 30) {
                    x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1;
                    y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
                }
            }
        CHECK(x1 - x0 + 1 == 400 && y1 - y0 + 1 == 300,
              "the window's picture is %dx%d at (%d, %d)", x1 - x0 + 1,
              y1 - y0 + 1, x0, y0);
        /* At its own size it is shown pixel for pixel. */
        long off = 0, n = 0;
        for (int y = 0; y < (int)ph && y0 + y < sh; y += 7)
            for (int x = 0; x < (int)pw && x0 + x < sw; x += 5, n++) {
                const uint8_t *a = shot + ((size_t)(y0 + y) * sw + x0 + x) * 3;
                const uint8_t *b = pic + ((size_t)y * pw + x) * 3;
                off += abs(a[0] - b[0]) > 2 || abs(a[1] - b[1]) > 2 ||
                       abs(a[2] - b[2]) > 2;
            }
        CHECK(off * 100 <= n, "%ld of %ld pixels differ from the PNG", off, n);
    }
    free(shot);
    free(pic);
}

/* No display: exit 1 with worldgen's own message, at once, before the
 * world is made, the outputs as they were (a PNG there before the run
 * kept, none made): it had been found after the world was made and its
 * outputs put in place, which a failed run leaves untouched.  With no
 * XDG_RUNTIME_DIR either (a shell over ssh, cron, a container), it is
 * worldgen's message alone: SDL's try of Wayland had libwayland print
 * "error: XDG_RUNTIME_DIR is invalid or not set in the environment."
 * first. */
WG_TEST(window_without_a_display_fails_before_the_world)
{
    char cmd[900];
    snprintf(cmd, sizeof cmd,
             "cd %s && rm -f nodisplay.png h.pfm && echo mine > nodisplay.png && "
             "env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER "
             "-u XDG_RUNTIME_DIR %s/worldgen --size 24 -q --out nodisplay.png --width 64 "
             "--height 48 --heightmap h.pfm --show; echo \"status $?\"; cat nodisplay.png; "
             "ls h.pfm 2>&1 | grep -c 'No such'",
             wg_tmpdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "status 1\nmine\n1\n") == 0, "%s %s", c.out, c.err);
#ifdef WG_HAVE_SDL2
    CHECK(strstr(c.err, "worldgen: --show: cannot open a window: no display") &&
              !strstr(c.err, "the picture is in") &&
              !strstr(c.err, "XDG_RUNTIME_DIR"), "%s", c.err);
#else
    CHECK(strstr(c.err, "built without SDL2"), "%s", c.err);
#endif
    wg_cli_free(&c);
}

/* A DISPLAY whose server is gone (an ssh -X whose tunnel closed), with no
 * XDG_RUNTIME_DIR: worldgen's message alone, naming the display.  SDL,
 * trying Wayland when X11 failed, had libwayland print "error:
 * XDG_RUNTIME_DIR is invalid or not set in the environment." first.  No
 * X server answers on display 4097 (tests/xvfb's are below 3100 and a
 * few more). */
WG_TEST(window_with_a_dead_display_says_so_alone)
{
#ifndef WG_HAVE_SDL2
    wg_skip("built without SDL2 (window_without_sdl2 checks the message)");
    return;
#endif
    char cmd[700];
    snprintf(cmd, sizeof cmd,
             "cd %s && env -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER -u XDG_RUNTIME_DIR "
             "DISPLAY=:4097 %s/worldgen --size 16 --mesh scalar -q --out deaddisplay.png "
             "--width 16 --height 16 --show; echo \"status $?\"; ls deaddisplay.png 2>&1 "
             "| grep -c 'No such'",
             wg_tmpdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    /* Found before the world is made: no picture. */
    CHECK(strcmp(c.out, "status 1\n1\n") == 0, "%s %s", c.out, c.err);
    CHECK(strncmp(c.err, "worldgen: --show: cannot open a window: ", 40) == 0 &&
              strstr(c.err, "DISPLAY=:4097") &&
              !strstr(c.err, "XDG_RUNTIME_DIR"), "%s", c.err);
    wg_cli_free(&c);
}

/* SDL2 that cannot be mapped under an address space limit (ulimit -v) is
 * said as that, not as a library to install: dlopen's "failed to map
 * segment from shared object" had been given "is libsdl2-2.0-0
 * installed?" too.  The limits run from one too small to map every
 * library to one that maps them all (then the dead display is said). */
WG_TEST(window_sdl2_that_cannot_be_mapped_is_not_a_missing_library)
{
#ifndef WG_HAVE_SDL2
    wg_skip("built without SDL2 (window_without_sdl2 checks the message)");
    return;
#endif
    WG_SKIP_UNDER_ASAN_ULIMIT_V();
    char cmd[700];
    snprintf(cmd, sizeof cmd,
             "cd %s && for v in 16000 20000 22000 24000 26000 28000 30000 35000 40000 50000; do "
             "(ulimit -v $v && exec env -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER -u "
             "XDG_RUNTIME_DIR DISPLAY=:4097 %s/worldgen --size 16 --mesh scalar -q --out "
             "unmapped.png --width 16 --height 16 --show) 2>&1 | grep 'cannot load SDL2'; done",
             wg_tmpdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "worldgen: --show: cannot load SDL2: ") &&
              strstr(c.out, "failed to map segment") && !strstr(c.out, "installed?"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* WORLDGEN_SHOW_TIMEOUT_MS is decimal digits alone, 0..86400000 (a day):
 * anything else is a usage error (exit 2) naming the variable, the value
 * and the range, found with the options, before the world is made (no
 * PNG).  strtol and a 32-bit cast had taken "abc" for 0, "2000junk" for
 * 2000, 4294967296 for 0 and -5 for no timeout.  Empty is unset. */
WG_TEST(window_timeout_must_be_whole_milliseconds)
{
    static const struct { const char *val, *why; } bad[] = {
        {"abc", "is not a whole number of milliseconds"},
        {"2000junk", "is not a whole number of milliseconds"},
        {"-5", "is not a whole number of milliseconds"},
        {"+5", "is not a whole number of milliseconds"},
        {" 5", "is not a whole number of milliseconds"},
        {"0x10", "is not a whole number of milliseconds"},
        {"4294967296", "is out of range"},
        {"86400001", "is out of range"},
        {"99999999999999999999999", "is out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[700], msg[200];
        snprintf(cmd, sizeof cmd,
                 "cd %s && rm -f t.png && env -u DISPLAY -u WAYLAND_DISPLAY "
                 "-u SDL_VIDEODRIVER WORLDGEN_SHOW_TIMEOUT_MS='%s' "
                 "%s/worldgen --size 16 -q --out t.png --width 64 --height 48 "
                 "--show; echo \"status $?\"; ls t.png 2>/dev/null",
                 wg_tmpdir(), bad[i].val, wg_srcdir());
        wg_cli c = wg_cli_sh(cmd);
        CHECK(strcmp(c.out, "status 2\n") == 0, "'%s': %s %s", bad[i].val,
              c.out, c.err);
        snprintf(msg, sizeof msg,
                 "worldgen: --show: WORLDGEN_SHOW_TIMEOUT_MS: '%s' %s (valid: "
                 "0..86400000, or unset for no timeout)", bad[i].val,
                 bad[i].why);
        CHECK(strstr(c.err, msg), "'%s': not \"%s\" in: %s", bad[i].val, msg,
              c.err);
        wg_cli_free(&c);
    }
    /* Without --show nothing reads it: a bad value is no error there, as
     * the manual says ("With --show"), and the README now too. */
    wg_cli q = wg_cli_sh("WORLDGEN_SHOW_TIMEOUT_MS=abc ./worldgen --size 16 "
                         "-q --no-image");
    CHECK(q.status == 0 && q.err[0] == '\0', "without --show: %d %s",
          q.status, q.err);
    wg_cli_free(&q);
    /* In range, or empty: taken (--version checks the line alone). */
    static const char *const good[] = {"", "0", "86400000", "0100"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char cmd[700];
        snprintf(cmd, sizeof cmd,
                 "cd %s && env -u DISPLAY -u WAYLAND_DISPLAY -u "
                 "SDL_VIDEODRIVER WORLDGEN_SHOW_TIMEOUT_MS='%s' %s/worldgen "
                 "--size 16 -q --out t.png --width 64 --height 48 --show "
                 "--version",
                 wg_tmpdir(), good[i], wg_srcdir());
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 0, "'%s': status %d: %s", good[i], c.status, c.err);
        wg_cli_free(&c);
    }
}

/* The window's arithmetic: a turn wraps the azimuths into [0, 360), the
 * elevations and the distance stay in their options' ranges, and what is
 * not moved keeps its value as given (an azimuth of -45 stays -45). */
WG_TEST(window_move_keeps_the_options_ranges)
{
    wg_render_opts o = wg_render_defaults;
    o.cam.azimuth = -45.0f;
    o.sun_azimuth = 350.0f;
    wg_render_opts m = wg_window_move(&o, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    CHECK(m.cam.azimuth == -45.0f && m.sun_azimuth == 350.0f &&
              m.cam.elevation == o.cam.elevation &&
              m.cam.distance == o.cam.distance &&
              m.sun_elevation == o.sun_elevation,
          "an empty move changed the view");
    m = wg_window_move(&o, -20.0f, 70.0f, 1e-6f, 15.0f, -200.0f);
    CHECK(m.cam.azimuth == 295.0f, "azimuth %g", (double)m.cam.azimuth);
    CHECK(m.sun_azimuth == 5.0f, "sun azimuth %g", (double)m.sun_azimuth);
    CHECK(m.cam.elevation == (float)WG_CAMERA_ELEVATION_MAX, "elevation %g",
          (double)m.cam.elevation);
    CHECK(m.cam.distance == (float)WG_CAMERA_DISTANCE_MIN, "distance %g",
          (double)m.cam.distance);
    CHECK(m.sun_elevation == (float)-WG_SUN_ELEVATION_MAX, "sun elevation %g",
          (double)m.sun_elevation);
    m = wg_window_move(&o, 0.0f, -200.0f, 1e9f, 0.0f, 0.0f);
    CHECK(m.cam.elevation == (float)-WG_CAMERA_ELEVATION_MAX &&
              m.cam.distance == (float)WG_CAMERA_DISTANCE_MAX,
          "elevation %g, distance %g", (double)m.cam.elevation,
          (double)m.cam.distance);
    /* What the window never moves stays. */
    CHECK(m.width == o.width && m.aa == o.aa && m.cam.fov == o.cam.fov &&
              m.cam.look == o.cam.look && m.view == o.view,
          "a move changed what the controls do not");
}

/* Whether the tests that drive a window with xdotool can run here: SDL2
 * in the build, xvfb-run, xwd (tests/xvfb's check of the display) and
 * xdotool installed (else skipped, saying which). */
static int window_can_drive(void)
{
#ifndef WG_HAVE_SDL2
    wg_skip("built without SDL2");
    return 0;
#else
    if (!wg_have_command("xvfb-run") || !wg_have_command("xwd") ||
        !wg_have_command("xdotool")) {
        wg_skip("xvfb-run, xwd or xdotool is not installed");
        return 0;
    }
    return 1;
#endif
}

/* Shell, within a test's sh -c '...': wid becomes the window once its
 * title shows its view (it reads events from then on), looked for every
 * 0.1 s for 30 s at most. */
#define WINDOW_FIND                                                           \
    "i=0; wid=; while [ -z \"$wid\" ] && [ $i -lt 300 ]; do "                \
    "  sleep 0.1; i=$((i+1)); "                                               \
    "  wid=$(xdotool search --name \"^worldgen: seed.* - azimuth\" "          \
    "  2>/dev/null | head -1); done; "

/* Shell, within a test's sh -c '...' (WINDOW_XVFB): worldgen's --show of
 * a 48 world as a 400x300 picture, NAME.png, its messages in NAME.err,
 * its process $pid, its window $wid (WINDOW_FIND); %s is the source
 * tree. */
#define WINDOW_SHOW(name)                                                     \
    "WORLDGEN_SHOW_TIMEOUT_MS=60000 %s/worldgen --size 48 -q --out " name     \
    ".png --width 400 --height 300 --show 2>" name ".err & pid=$!; "         \
    WINDOW_FIND

/* Shell: wait until the title is no longer $t0 (a moved view drawn), 30 s
 * at most. */
#define WINDOW_AWAIT_DRAWN                                                    \
    "i=0; while [ $i -lt 300 ] && "                                           \
    "  [ \"$(xdotool getwindowname $wid 2>/dev/null)\" = \"$t0\" ]; "          \
    "  do sleep 0.1; i=$((i+1)); done; "

/* Under Xvfb, keys and a drag sent to the window (xdotool) move the view:
 * two steps of the right arrow and a drag of 40 pixels to the right turn
 * it 5 + 5 + 10 degrees, '-' takes it a step farther, Shift+Up raises the
 * sun 5 degrees.  The window then shows, pixel for pixel, the picture
 * that worldgen makes of those options, and worldgen says them when it
 * closes; a second window, moved and then put back with 'r', shows the
 * command line's picture again and says nothing. */
WG_TEST(window_keys_and_drag_move_the_view_under_xvfb)
{
#ifndef WG_HAVE_SDL2
    wg_skip("built without SDL2");
    return;
#endif
    if (!wg_have_command("xvfb-run") || !wg_have_command("xwd") ||
        !wg_have_command("convert") || !wg_have_command("compare") ||
        !wg_have_command("xdotool")) {
        wg_skip("xvfb-run, xwd, ImageMagick or xdotool is not installed");
        return;
    }
    const float distance = 9.5f * (1.0f / 0.9f);
    char cmd[4000];
    /* The window is centred on the 1024x768 screen (no window manager):
     * its picture at (312, 234).  Screenshots until it shows the picture
     * expected (or 30 s), then q.  xdotool's own complaints (a key's
     * release sent to a window already closed) are dropped. */
#define WINDOW_AWAIT(png)                                                     \
    "i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); "                   \
    "  xwd -root -silent | convert xwd:- -crop 400x300+312+234 +repage "      \
    "    shot.png; "                                                          \
    "  [ \"$(compare -metric AE shot.png " png " null: 2>&1)\" = 0 ] && "     \
    "    break; done; echo \"matched " png " $i\"; "
/* The window found by the title it has once it reads events
 * (WINDOW_FIND): found by the world's title alone, which it has from its
 * start, the keys could go to a window not yet shown, and be lost. */
/* q, then its release given to the server (XTEST): xdotool sends the
 * release to the window that q closed, which is gone, so the key stayed
 * down in the server, which (-noreset: tests/xvfb) the next window shares,
 * and that window's q was never a new press: it closed by its timeout.
 * "closed by q" once the window is gone, within 10 s. */
#define WINDOW_QUIT                                                           \
    "xdotool key --window $wid q 2>/dev/null; xdotool keyup q 2>/dev/null; "   \
    "i=0; while [ $i -lt 100 ] && xdotool getwindowname $wid >/dev/null "     \
    "  2>&1; do sleep 0.1; i=$((i+1)); done; "                                \
    "[ $i -lt 100 ] && echo \"closed by q\"; "
#define WINDOW_OPEN(err)                                                      \
    "WORLDGEN_SHOW_TIMEOUT_MS=60000 %s/worldgen --size 48 -q --out "          \
    "shown.png --width 400 --height 300 --show 2>" err " & pid=$!; "          \
    WINDOW_FIND
    snprintf(cmd, sizeof cmd,
             "cd %s && rm -f moved.png "
             "&& %s/worldgen --size 48 -q --out moved.png --width 400 "
             "--height 300 --azimuth 235 --distance %.9g --sun-elevation 25 "
             "&& " WINDOW_XVFB
             WINDOW_OPEN("moved.err")
             "xdotool key --window $wid Right Right minus shift+Up "
             "2>/dev/null; "
             "xdotool mousemove --window $wid 200 150 mousedown 1 "
             "mousemove_relative 40 0 mouseup 1 2>/dev/null; "
             WINDOW_AWAIT("moved.png")
             WINDOW_QUIT
             "wait $pid; echo \"status $?\"; "
             WINDOW_OPEN("back.err")
             "t0=$(xdotool getwindowname $wid); "
             "xdotool key --window $wid Left Down shift+Left 2>/dev/null; "
             WINDOW_AWAIT_DRAWN
             "[ \"$(xdotool getwindowname $wid 2>/dev/null)\" = \"$t0\" ] "
             "|| echo \"moved $i\"; "
             "xdotool key --window $wid r 2>/dev/null; "
             WINDOW_AWAIT("shown.png")
             WINDOW_QUIT
             "wait $pid; echo \"status $?\"' && echo '-- moved' && "
             "cat moved.err && echo '-- back' && cat back.err",
             wg_tmpdir(), wg_srcdir(), (double)distance, wg_srcdir(),
             wg_srcdir(), wg_srcdir());
#undef WINDOW_AWAIT
#undef WINDOW_OPEN
#undef WINDOW_QUIT
    wg_cli c = wg_cli_sh(cmd);
    /* Matched before the 300th screenshot, and closed by q (status 0). */
    /* The second window's keys moved its view before r put it back. */
    CHECK(strstr(c.out, "\nmoved "),
          "the second window's keys did not move its view: %s %s", c.out,
          c.err);
    CHECK(strstr(c.out, "matched moved.png ") &&
              !strstr(c.out, "matched moved.png 300\n") &&
              strstr(c.out, "matched shown.png ") &&
              !strstr(c.out, "matched shown.png 300\n"),
          "the window never showed the view expected: %s %s", c.out, c.err);
    const char *first = strstr(c.out, "closed by q\nstatus 0\n");
    CHECK(first && strstr(first + 1, "closed by q\nstatus 0\n"),
          "each window closed by q, status 0: %s %s", c.out, c.err);
    char line[400];
    snprintf(line, sizeof line,
             "worldgen: --show: the window's last view: --width 400 --height "
             "300 --aa 2 --azimuth 235 --elevation 25 --distance %.9g --fov 45 "
             "--look 0.2 --sun-azimuth 290 --sun-elevation 25\n",
             (double)distance);
    /* The distance as render_num writes it: the shortest that reads back. */
    char *d = strstr(line, "--distance ") + strlen("--distance ");
    for (int prec = 6; prec <= 9; prec++) {
        char num[32], rest[300];
        snprintf(num, sizeof num, "%.*g", prec, (double)distance);
        if (strtof(num, NULL) == distance) {
            snprintf(rest, sizeof rest, "%s", strstr(d, " --fov"));
            snprintf(d, sizeof line - (size_t)(d - line), "%s%s", num, rest);
            break;
        }
    }
    const char *moved = strstr(c.out, "-- moved\n");
    const char *back = moved ? strstr(moved, "-- back\n") : NULL;
    CHECK(moved && back, "%s %s", c.out, c.err);
    if (moved && back) {
        const char *said = strstr(moved, line);
        CHECK(said && said < back, "not \"%s\" in: %s", line, c.out);
        /* The second window was put back where it began: no view to say. */
        CHECK(!strstr(back, "last view"), "%s", back);
    }
    wg_cli_free(&c);
}

/* The events that come while a view is drawn are read together: each is
 * taken as it came.  With worldgen stopped (SIGSTOP) the keys and a drag
 * queue up as they do behind a slow render: Right, Shift+Up, and a drag
 * of 40 pixels with Shift held, released before worldgen reads any of
 * them, turn the camera 5 degrees and raise the sun 5 and turn it 20.
 * Shift had been read as it was once all were read (released): the Up
 * and the drag moved the camera.  Then q and r, queued alike, close the
 * window on that view: r had undone the q, and the window stayed open. */
WG_TEST(window_events_read_together_each_as_it_came_under_xvfb)
{
    if (!window_can_drive())
        return;
    /* The window is waited for by the title it has once it reads events
     * (its view: before, a drag could miss a window not yet shown); the
     * title changes once the queued events are drawn; then the window's
     * end is waited for, 30 s at most (then it is killed, status 143). */
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "cd %s && "
             WINDOW_XVFB WINDOW_SHOW("batch")
             "t0=$(xdotool getwindowname $wid); kill -STOP $pid; "
             "xdotool key --window $wid Right shift+Up keydown shift "
             "mousemove --window $wid 200 150 mousedown 1 "
             "mousemove_relative 40 0 mouseup 1 keyup shift 2>/dev/null; "
             "kill -CONT $pid; "
             WINDOW_AWAIT_DRAWN
             "kill -STOP $pid; xdotool key --window $wid q r 2>/dev/null; "
             "kill -CONT $pid; "
             "i=0; while [ $i -lt 300 ] && kill -0 $pid 2>/dev/null; do "
             "  sleep 0.1; i=$((i+1)); done; "
             "kill -TERM $pid 2>/dev/null; wait $pid; echo \"status $?\"' && "
             "cat batch.err",
             wg_tmpdir(), wg_srcdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "status 0\nworldgen: --show: the window's last view: "
                        "--width 400 --height 300 --aa 2 --azimuth 220 "
                        "--elevation 25 --distance 9.5 --fov 45 --look 0.2 "
                        "--sun-azimuth 310 --sun-elevation 25\n"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* The click that focuses the window starts a drag: with worldgen stopped
 * (as behind a slow render) the focus is taken away and given back, and a
 * drag of 40 pixels begins; read together, the drag turns the view 10
 * degrees.  SDL dropped a click read within 10 ms of a focus, and the drag
 * had done nothing. */
WG_TEST(window_click_that_focuses_starts_a_drag_under_xvfb)
{
    if (!window_can_drive())
        return;
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "cd %s && "
             WINDOW_XVFB WINDOW_SHOW("focus")
             "t0=$(xdotool getwindowname $wid); "
             "xdotool mousemove --window $wid 100 75 2>/dev/null; "
             "root=$(xdotool search --maxdepth 0 --name \"\" | head -1); "
             "kill -STOP $pid; "
             "xdotool windowfocus --sync $root windowfocus --sync $wid "
             "mousedown 1 mousemove_relative 40 0 mouseup 1 2>/dev/null; "
             "kill -CONT $pid; "
             WINDOW_AWAIT_DRAWN
             "xdotool key --window $wid q 2>/dev/null; "
             "wait $pid; echo \"status $?\"' && cat focus.err",
             wg_tmpdir(), wg_srcdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "status 0\nworldgen: --show: the window's last view: "
                        "--width 400 --height 300 --aa 2 --azimuth 225 "
                        "--elevation 25 "),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A drag turns the view by the pixels the hand moves on the screen,
 * whatever the window's size beside the picture's: in a window made half
 * the picture's size, 40 pixels to the right turn it 10 degrees, as at
 * full size.  SDL had given the motion in the picture's pixels (the
 * renderer's logical size), 80 here: a picture shrunk to fit the screen,
 * or a window made smaller, turned two, four, ten times as far. */
WG_TEST(window_drag_goes_by_the_screens_pixels_under_xvfb)
{
    if (!window_can_drive())
        return;
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "cd %s && "
             WINDOW_XVFB WINDOW_SHOW("drag")
             "t0=$(xdotool getwindowname $wid); "
             "xdotool windowsize --sync $wid 200 150 mousemove --window $wid "
             "100 75 mousedown 1 mousemove_relative 40 0 mouseup 1 "
             "2>/dev/null; "
             WINDOW_AWAIT_DRAWN
             "xdotool key --window $wid q 2>/dev/null; "
             "wait $pid; echo \"status $?\"' && cat drag.err",
             wg_tmpdir(), wg_srcdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "status 0\nworldgen: --show: the window's last view: "
                        "--width 400 --height 300 --aa 2 --azimuth 225 "
                        "--elevation 25 "),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A view the window cannot draw (WORLDGEN_FAULT=show: as out of memory)
 * ends the window with status 1 and the reason, and is not said as the
 * view the window was left at: it showed the command line's alone.  (The
 * view that failed, Right's, had been said.)  The PNG is the command
 * line's, whole, with nothing left beside it. */
WG_TEST(window_view_that_cannot_be_drawn_ends_it_under_xvfb)
{
    if (!window_can_drive())
        return;
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "cd %s && rm -rf vf && mkdir vf && cd vf && "
             ""
             WINDOW_XVFB
             "WORLDGEN_FAULT=show WORLDGEN_SHOW_TIMEOUT_MS=60000 "
             "%s/worldgen --size 48 -q --out vf.png --width 400 --height 300 "
             "--show 2>vf.err & pid=$!; "
             WINDOW_FIND
             "xdotool key --window $wid Right 2>/dev/null; "
             "i=0; while [ $i -lt 300 ] && kill -0 $pid 2>/dev/null; do "
             "  sleep 0.1; i=$((i+1)); done; "
             "kill -TERM $pid 2>/dev/null; wait $pid; echo \"status $?\"' && "
             "cat vf.err && ls -A && %s/worldgen --size 48 --width 400 "
             "--height 300 -q --out again.png && cmp vf.png again.png && "
             "echo same",
             wg_tmpdir(), wg_srcdir(), wg_srcdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "status 1\nworldgen: --show: out of memory for a "
                        "400x300 picture (WORLDGEN_FAULT=show: a test hook); "
                        "the picture is in vf.png\nvf.err\nvf.png\nsame\n") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* --out - with --show: the PNG's reader gets its end before the window
 * opens, not once it closes (worldgen | convert png:- ... had waited for
 * the window).  The reader, at its end, finds the window (opened then)
 * and closes it with q; the PNG is the one worldgen makes without the
 * window. */
WG_TEST(window_out_to_a_pipe_ends_before_the_window_under_xvfb)
{
    if (!window_can_drive())
        return;
    /* The pipe is a FIFO, opened by a subshell that execs worldgen, so
     * that worldgen alone holds its writing end (sh's | and sh's own
     * redirection of a command keep it too).  The window closes itself after
     * 20 s; the reader looks for it for 10 s after its end: before, the
     * end came with the window's. */
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "cd %s && "
             "rm -f pipe.fifo && mkfifo pipe.fifo && "
             WINDOW_XVFB
             "{ cat > piped.png; i=0; wid=; "
             "while [ -z \"$wid\" ] && [ $i -lt 100 ]; do sleep 0.1; "
             "  i=$((i+1)); wid=$(xdotool search --name "
             "  \"^worldgen: seed.* - azimuth\" 2>/dev/null | head -1); done; "
             "if [ -n \"$wid\" ]; then echo \"open at the end\"; "
             "  xdotool key --window $wid q 2>/dev/null; fi; } <pipe.fifo & "
             "r=$!; (WORLDGEN_SHOW_TIMEOUT_MS=20000 exec %s/worldgen --size 48 "
             "-q --width 400 --height 300 --out - --show >pipe.fifo "
             "2>pipe.err); echo \"status $?\"; wait $r'; cat pipe.err && "
             "%s/worldgen --size 48 -q --width 400 --height 300 --out - | "
             "cmp - piped.png && echo same",
             wg_tmpdir(), wg_srcdir(), wg_srcdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "open at the end\nstatus 0\nsame\n") == 0, "%s %s",
          c.out, c.err);
    wg_cli_free(&c);
}

/* Another program destroys the window (xdotool windowclose, as a session
 * tool may) or kills its connection to the server (windowkill, as xkill
 * does): worldgen says so, exit 1, and the picture written before the
 * window opened stays, whole.  Xlib's own handlers had printed the raw
 * request ("X Error of failed request: BadWindow", "X connection to :N
 * broken") with no word of worldgen's. */
WG_TEST(window_destroyed_or_killed_by_another_program_is_said_under_xvfb)
{
    if (!window_can_drive())
        return;
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "cd %s && rm -rf xk && mkdir xk && cd xk && "
             WINDOW_XVFB WINDOW_SHOW("gone")
             "xdotool windowclose $wid 2>/dev/null; wait $pid; "
             "echo \"status $?\"; " WINDOW_SHOW("killed")
             "xdotool windowkill $wid 2>/dev/null; wait $pid; "
             "echo \"status $?\"' && cat gone.err killed.err && ls -A && "
             "%s/worldgen --size 48 --width 400 --height 300 -q --out "
             "again.png && cmp gone.png again.png && cmp killed.png "
             "again.png && echo same",
             wg_tmpdir(), wg_srcdir(), wg_srcdir(), wg_srcdir(),
             wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "status 1\nstatus 1\n"), "%s %s", c.out, c.err);
    CHECK(strstr(c.out, "\nworldgen: --show: the X server refused a request "
                        "for the window: ") &&
              strstr(c.out, " (was it destroyed by another program?); the "
                            "picture is in gone.png\n"),
          "%s %s", c.out, c.err);
    CHECK(strstr(c.out, "\nworldgen: --show: the connection to the display "
                        "(DISPLAY=:") &&
              strstr(c.out, ") was lost: the window was killed by another "
                            "program, or the X server ended; the outputs "
                            "were written before the window opened\n"),
          "%s %s", c.out, c.err);
    CHECK(strstr(c.out, "\ngone.err\ngone.png\nkilled.err\nkilled.png\n"
                        "same\n"),
          "%s %s", c.out, c.err);
    CHECK(!strstr(c.out, "X Error") && !strstr(c.out, "broken"), "%s",
          c.out);
    wg_cli_free(&c);
}
