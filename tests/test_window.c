/* test_window.c: --show.  Under Xvfb the window must show the picture that
 * was written (a screenshot compared with the PNG), and close by itself
 * with WORLDGEN_SHOW_TIMEOUT_MS; with no display it must say so, exit 1 and
 * still leave the PNG. */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    /* Under make test SAN=1, SDL dlopens X11 libraries and unloads them at
     * SDL_Quit, so LeakSanitizer cannot even name what they keep: leak
     * checking is off for these two runs (ASan's other checks stay on). */
    snprintf(cmd, sizeof cmd,
             "cd %s && export ASAN_OPTIONS=detect_leaks=0 && "
             "xvfb-run -a -s '-screen 0 1024x768x24' sh -c '"
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
             wg_tmpdir(), wg_srcdir(), wg_srcdir());
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

/* No display: exit 1 with worldgen's own message and the PNG kept.  With
 * no XDG_RUNTIME_DIR either (a shell over ssh, cron, a container), it is
 * worldgen's message alone: SDL's try of Wayland had libwayland print
 * "error: XDG_RUNTIME_DIR is invalid or not set in the environment."
 * first. */
WG_TEST(window_without_a_display_fails_but_keeps_the_png)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd,
             "cd %s && env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER "
             "-u XDG_RUNTIME_DIR %s/worldgen --size 24 -q --out nodisplay.png --width 64 "
             "--height 48 --show; echo \"status $?\"; ls nodisplay.png",
             wg_tmpdir(), wg_srcdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(strstr(c.out, "status 1\nnodisplay.png\n"), "%s %s", c.out, c.err);
#ifdef WG_HAVE_SDL2
    CHECK(strstr(c.err, "worldgen: --show: cannot open a window") &&
              strstr(c.err, "the picture is in nodisplay.png") &&
              !strstr(c.err, "XDG_RUNTIME_DIR"), "%s", c.err);
#else
    CHECK(strstr(c.err, "built without SDL2"), "%s", c.err);
#endif
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
