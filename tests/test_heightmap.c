/* test_heightmap.c: the height map writers, read back: PFM exact, PNG and
 * R16 rounded to 16 bits, row y = 0 at the top, windows of a world, the
 * raw formats' ENVI sidecars, nothing left behind when a write fails; the
 * water map in the same formats and scale.  GDAL reads them in
 * test_gdal.c. */
#include <dirent.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "render/geotiff.h"
#include "render/heightmap.h"
#include "test.h"

static const wg_world hm_world = {.size = 45, .octaves = 4, .passes = 3,
                                  .steps = 30, .sea = 0.25f, .seed = 42};

static wg_cli hm_run_map(const char *opt, const char *path, const char *format)
{
    const char *argv[] = {"--size", "45", "--octaves", "4", "--erosion", "3",
                          "--hydraulic", "30", "--seed", "42", "-q", "--no-image",
                          opt, path, format ? "--heightmap-format" : NULL,
                          format, NULL};
    return wg_cli_run(argv);
}

static wg_cli hm_run(const char *path, const char *format)
{
    return hm_run_map("--heightmap", path, format);
}

static void hm_path(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", wg_tmpdir(), name);
}

WG_TEST(heightmap_u16_rounding)
{
    CHECK(wg_height_to_u16(0.0f) == 0);
    CHECK(wg_height_to_u16(1.0f) == 65535);
    CHECK(wg_height_to_u16(0.5f) == 32768, "0.5 * 65535 = 32767.5 rounds up");
    CHECK(wg_height_to_u16(1.0f / 65535.0f) == 1);
    CHECK(wg_height_to_u16(0.49f / 65535.0f) == 0);
    CHECK(wg_height_to_u16(-0.25f) == 0 && wg_height_to_u16(2.0f) == 65535);
}

WG_TEST(heightmap_format_names)
{
    CHECK(wg_heightmap_format_of_path("a/b.pfm") == WG_HM_PFM);
    CHECK(wg_heightmap_format_of_path("x.PNG") == WG_HM_PNG);
    CHECK(wg_heightmap_format_of_path("x.r16") == WG_HM_R16);
    CHECK(wg_heightmap_format_of_path("x.tif") == WG_HM_TIF);
    CHECK(wg_heightmap_format_of_path("x.TIFF") == WG_HM_TIF);
    CHECK(wg_heightmap_format_named("raw") == WG_HM_R16);
    CHECK(wg_heightmap_format_of_path("dir.png/x") == WG_HM_NONE);
    CHECK(wg_heightmap_format_of_path("x") == WG_HM_NONE);
}

/* What wg_heightmap_write_rect writes for window r of field f (an n x n
 * world, the window copied out first), in memory.  Caller frees. */
static char *hm_window_bytes(wg_hm_format fmt, const float *f, uint32_t n,
                             wg_rect r, size_t *len)
{
    float *win = malloc(wg_rect_cells(r) * sizeof *win);
    char *buf = NULL, err[WG_ERR_LEN] = "";
    *len = 0;
    FILE *fp = open_memstream(&buf, len);
    for (uint32_t y = 0; win && y < r.h; y++)
        memcpy(win + (size_t)y * r.w, f + (size_t)(r.y + y) * n + r.x,
               r.w * sizeof *win);
    int rc = fp && win ? wg_heightmap_write_rect(fp, fmt, win, n, r, NULL, 0, err)
                       : -1;
    CHECK(rc == 0, "%s", err);
    if (fp)
        fclose(fp);
    free(win);
    return buf;
}

WG_TEST(heightmap_windows_hold_their_rows)
{
    /* A window's map is the window alone, top row first (PFM: last row
     * first), whatever world it is cut from. */
    enum { N = 9 };
    float f[N * N];
    for (int i = 0; i < N * N; i++)
        f[i] = (float)i / (N * N);
    const wg_rect r = {2, 3, 5, 4};
    size_t len;
    char *b = hm_window_bytes(WG_HM_R16, f, N, r, &len);
    CHECK(b && len == 5 * 4 * 2, "%zu bytes", len);
    int bad = 0;
    for (uint32_t y = 0; b && len == 40 && y < r.h; y++)
        for (uint32_t x = 0; x < r.w; x++) {
            const unsigned char *p = (unsigned char *)b + 2 * (y * r.w + x);
            bad += (p[0] | p[1] << 8) != wg_height_to_u16(f[(r.y + y) * N + r.x + x]);
        }
    CHECK(bad == 0, "%d R16 samples differ", bad);
    free(b);

    b = hm_window_bytes(WG_HM_PFM, f, N, r, &len);
    const char *head = "Pf\n5 4\n-1.0\n";
    size_t hl = strlen(head);
    CHECK(b && len == hl + 5 * 4 * 4 && memcmp(b, head, hl) == 0, "%zu bytes", len);
    bad = 0;
    for (uint32_t y = 0; b && len == hl + 80 && y < r.h; y++)
        bad += memcmp(b + hl + (r.h - 1 - y) * r.w * 4,
                      f + (r.y + y) * N + r.x, r.w * 4) != 0;
    CHECK(bad == 0, "%d PFM rows differ", bad);
    free(b);

    if (wg_geotiff_available()) {
        b = hm_window_bytes(WG_HM_TIF, f, N, r, &len);
        CHECK(b && len > 8 && memcmp(b, "II*\0", 4) == 0, "not a TIFF");
        free(b);
    }
    /* A window must lie in its world. */
    char err[WG_ERR_LEN];
    const wg_rect out = {5, 0, 5, 1};
    FILE *null = fopen("/dev/null", "w");
    CHECK(wg_heightmap_write_rect(null, WG_HM_R16, f, N, out, NULL, 0, err) != 0 &&
          strstr(err, "not inside the 9x9 world"), "%s", err);
    fclose(null);
}

WG_TEST(heightmap_sidecars_describe_the_raw_layouts)
{
    /* ENVI headers: PFM's header skipped and its rows going north, R16's
     * samples scaled back to heights, both placed where SPEC.md puts the
     * window (GDAL reads them: test_gdal.c). */
    const wg_rect r = {4, 8, 6, 3};
    const wg_png_text text[] = {{"Software", "worldgen x"},
                                {"worldgen", "--size 17 {x}"}};
    char *buf = NULL, err[WG_ERR_LEN] = "";
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    CHECK(wg_heightmap_write_sidecar(fp, WG_HM_PFM, 17, r, text, 2, err) == 0,
          "%s", err);
    fclose(fp);
    const char *want[] = {"ENVI\n", "description = {worldgen --size 17 (x)}\n",
                          "samples = 6\n", "lines = 3\n",
                          "header offset = 12\n", "data type = 4\n",
                          "byte order = 0\n",
                          "map info = {Arbitrary, 1.5, 1.5, -1.5, -0.75, 0.375, "
                          "-0.375, units=Meters}\n",
                          "coordinate system string = "
                          "{LOCAL_CS[\"worldgen world units\""};
    for (size_t i = 0; buf && i < sizeof want / sizeof want[0]; i++)
        CHECK(strstr(buf, want[i]), "PFM header lacks '%s':\n%s", want[i], buf);
    free(buf);
    buf = NULL;
    fp = open_memstream(&buf, &len);
    CHECK(wg_heightmap_write_sidecar(fp, WG_HM_R16, 17, r, NULL, 0, err) == 0,
          "%s", err);
    fclose(fp);
    const char *want16[] = {"header offset = 0\n", "data type = 12\n",
                            "map info = {Arbitrary, 1.5, 1.5, -1.5, 0, 0.375, "
                            "0.375, units=Meters}\n",
                            "data gain values = {1.5259021896696422e-05}\n"};
    for (size_t i = 0; buf && i < sizeof want16 / sizeof want16[0]; i++)
        CHECK(strstr(buf, want16[i]), "R16 header lacks '%s':\n%s", want16[i], buf);
    CHECK(buf && !strstr(buf, "description"), "%s", buf);
    free(buf);
    /* Its name: appended; the extension replaced where that is too long
     * a name; none for standard output, descriptors and devices. */
    char side[600], name[300];
    CHECK(wg_heightmap_sidecar_of("d/h.r16", WG_HM_R16, side, sizeof side) &&
          strcmp(side, "d/h.r16.hdr") == 0);
    memset(name, 'n', sizeof name);
    memcpy(name + 255 - 4, ".pfm", 5);
    CHECK(wg_heightmap_sidecar_of(name, WG_HM_PFM, side, sizeof side) &&
          strlen(side) == 255 && strcmp(side + 251, ".hdr") == 0, "%s", side);
    name[251] = 'n';
    CHECK(!wg_heightmap_sidecar_of(name, WG_HM_PFM, side, sizeof side));
    CHECK(!wg_heightmap_sidecar_of("-", WG_HM_R16, side, sizeof side) &&
          !wg_heightmap_sidecar_of("/dev/stdout", WG_HM_R16, side, sizeof side) &&
          !wg_heightmap_sidecar_of("/dev/fd/7", WG_HM_R16, side, sizeof side) &&
          !wg_heightmap_sidecar_of("/dev/null", WG_HM_R16, side, sizeof side) &&
          !wg_heightmap_sidecar_of("h.tif", WG_HM_TIF, side, sizeof side));
    CHECK(wg_heightmap_sidecar_suffix(WG_HM_R16) &&
          strcmp(wg_heightmap_sidecar_suffix(WG_HM_PFM), ".hdr") == 0 &&
          !wg_heightmap_sidecar_suffix(WG_HM_PNG) &&
          !wg_heightmap_sidecar_suffix(WG_HM_TIF));
}

WG_TEST(heightmap_pfm_is_exact_bottom_to_top)
{
    char path[300];
    hm_path(path, sizeof path, "h.pfm");
    wg_cli c = hm_run(path, NULL);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    wg_fields f;
    CHECK(wg_make_world("scalar", &hm_world, 0, &f) == 0);
    size_t len;
    unsigned char *b = wg_read_file(path, &len);
    const char *header = "Pf\n45 45\n-1.0\n";
    size_t hl = strlen(header), n = 45;
    CHECK(b && len == hl + n * n * 4, "length %zu", len);
    if (b && f.height && len == hl + n * n * 4) {
        CHECK(memcmp(b, header, hl) == 0, "header");
        int bad = 0;
        for (size_t y = 0; y < n; y++) /* file row 0 is the grid's last row */
            bad += memcmp(b + hl + (n - 1 - y) * n * 4, f.height + y * n, n * 4) != 0;
        CHECK(bad == 0, "%d rows differ", bad);
    }
    free(b);
    wg_fields_free(&f);
}

WG_TEST(heightmap_r16_little_endian_top_row_first)
{
    char path[300];
    hm_path(path, sizeof path, "h.r16");
    wg_cli c = hm_run(path, NULL);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    wg_fields f;
    CHECK(wg_make_world("scalar", &hm_world, 0, &f) == 0);
    size_t len;
    unsigned char *b = wg_read_file(path, &len);
    CHECK(b && len == 45 * 45 * 2, "length %zu", len);
    if (b && f.height && len == 45 * 45 * 2) {
        int bad = 0;
        for (size_t i = 0; i < 45 * 45; i++)
            bad += (b[2 * i] | b[2 * i + 1] << 8) != wg_height_to_u16(f.height[i]);
        CHECK(bad == 0, "%d samples differ", bad);
    }
    free(b);
    wg_fields_free(&f);
}

WG_TEST(heightmap_png_16bit_grey_with_parameters)
{
    char path[300], text[1024];
    hm_path(path, sizeof path, "h.png");
    wg_cli c = hm_run(path, NULL);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    wg_fields f;
    CHECK(wg_make_world("scalar", &hm_world, 0, &f) == 0);
    uint32_t w = 0, h = 0;
    uint16_t *px = wg_read_png(path, 16, 1, &w, &h, text, sizeof text);
    CHECK(px && w == 45 && h == 45, "cannot read %s as 16-bit grey", path);
    if (px && f.height) {
        int bad = 0;
        for (size_t i = 0; i < 45 * 45; i++)
            bad += px[i] != wg_height_to_u16(f.height[i]);
        CHECK(bad == 0, "%d samples differ", bad);
        CHECK(strstr(text, "Software=worldgen ") &&
              strstr(text, "--size 45 --seed 42 --octaves 4 --erosion 3"), "%s", text);
    }
    free(px);
    wg_fields_free(&f);
}

WG_TEST(watermap_pfm_is_the_water_field)
{
    /* --watermap writes the water depth as --heightmap writes the heights:
     * PFM exact (rows bottom to top), PNG and R16 on the same fixed scale,
     * depth 0..1 to 0..65535, so height + water is the water's surface in
     * either's units. */
    char pfm[300], png[300], r16[300], text[1024];
    hm_path(pfm, sizeof pfm, "w.pfm");
    hm_path(png, sizeof png, "w.png");
    hm_path(r16, sizeof r16, "w.r16");
    const char *maps[3] = {pfm, png, r16};
    for (int i = 0; i < 3; i++) {
        wg_cli c = hm_run_map("--watermap", maps[i], NULL);
        CHECK(c.status == 0, "%s: %s", maps[i], c.err);
        wg_cli_free(&c);
    }
    wg_fields f;
    CHECK(wg_make_world("scalar", &hm_world, 0, &f) == 0);
    size_t n = 45, wet = 0;
    for (size_t i = 0; f.water && i < n * n; i++)
        wet += f.water[i] > 1e-3f;
    CHECK(wet > 20, "the test world has no water to map (%zu cells)", wet);

    size_t len;
    unsigned char *b = wg_read_file(pfm, &len);
    const char *header = "Pf\n45 45\n-1.0\n";
    size_t hl = strlen(header);
    CHECK(b && len == hl + n * n * 4 && memcmp(b, header, hl) == 0, "length %zu", len);
    if (b && f.water && len == hl + n * n * 4) {
        int bad = 0;
        for (size_t y = 0; y < n; y++)
            bad += memcmp(b + hl + (n - 1 - y) * n * 4, f.water + y * n, n * 4) != 0;
        CHECK(bad == 0, "%d rows differ from the water field", bad);
    }
    free(b);

    uint32_t w = 0, h = 0;
    uint16_t *px = wg_read_png(png, 16, 1, &w, &h, text, sizeof text);
    CHECK(px && w == 45 && h == 45, "cannot read %s as 16-bit grey", png);
    if (px && f.water) {
        int bad = 0, nonzero = 0;
        for (size_t i = 0; i < n * n; i++) {
            bad += px[i] != wg_height_to_u16(f.water[i]);
            nonzero += px[i] != 0;
        }
        CHECK(bad == 0 && nonzero > 20, "%d samples differ, %d not 0", bad, nonzero);
        CHECK(strstr(text, "--hydraulic 30") && strstr(text, "--sea-level 0.25"),
              "%s", text);
    }
    free(px);

    b = wg_read_file(r16, &len);
    CHECK(b && len == n * n * 2, "length %zu", len);
    if (b && f.water && len == n * n * 2) {
        int bad = 0;
        for (size_t i = 0; i < n * n; i++)
            bad += (b[2 * i] | b[2 * i + 1] << 8) != wg_height_to_u16(f.water[i]);
        CHECK(bad == 0, "%d samples differ", bad);
    }
    free(b);
    wg_fields_free(&f);
}

WG_TEST(heightmap_to_stdout_keeps_tables_on_stderr)
{
    wg_cli c = wg_cli_sh("./worldgen --size 45 --octaves 4 --erosion 3 --seed 42 "
                         "--heightmap - --heightmap-format r16");
    CHECK(c.status == 0, "%s", c.err);
    CHECK(c.out_len == 45 * 45 * 2, "stdout holds %zu bytes", c.out_len);
    CHECK(strstr(c.err, "world   45x45"), "table not on stderr: %s", c.err);
    wg_cli_free(&c);
    /* and the format option overrides the extension */
    char path[300];
    hm_path(path, sizeof path, "h_as_pfm.png");
    c = hm_run(path, "pfm");
    size_t len = 0;
    char *b = wg_read_file(path, &len);
    CHECK(c.status == 0 && b && strncmp(b, "Pf\n", 3) == 0);
    free(b);
    wg_cli_free(&c);
}

/* No file named like 'prefix' (its temporaries included) is left in dir. */
static int hm_leftovers(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)) != NULL)
        n += strstr(e->d_name, prefix) != NULL;
    if (d)
        closedir(d);
    return n;
}

WG_TEST(heightmap_failures_leave_nothing_behind)
{
    char cmd[600];
    /* A folder that does not exist, a directory, a full device. */
    static const struct {
        const char *target, *err_has;
    } cases[] = {
        {"/nonexistent-dir/h.pfm", "the folder '/nonexistent-dir/' does not exist"},
        {"/tmp", "has no known extension"},
        {"/dev/full --heightmap-format r16", "cannot write '/dev/full': No space left on device"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(cmd, sizeof cmd, "./worldgen --size 64 -q --heightmap %s", cases[i].target);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(c.status == 1 || c.status == 2, "%s: status %d", cmd, c.status);
        CHECK(strstr(c.err, cases[i].err_has), "%s: %s", cmd, c.err);
        wg_cli_free(&c);
    }
    /* A directory named like the output: refused, and no temporary left. */
    snprintf(cmd, sizeof cmd, "mkdir -p %s/d.pfm && ./worldgen --size 64 -q "
             "--heightmap %s/d.pfm", wg_tmpdir(), wg_tmpdir());
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 1 && strstr(c.err, "it is a directory"), "%d %s", c.status, c.err);
    wg_cli_free(&c);
    /* A read-only folder (as root, permissions do not bind: skip then). */
    snprintf(cmd, sizeof cmd, "mkdir -p %s/ro && chmod 555 %s/ro && "
             "./worldgen --size 64 -q --heightmap %s/ro/h.pfm",
             wg_tmpdir(), wg_tmpdir(), wg_tmpdir());
    c = wg_cli_sh(cmd);
    char ro[300];
    snprintf(ro, sizeof ro, "%s/ro", wg_tmpdir());
    if (c.status == 0)
        CHECK(hm_leftovers(ro, ".tmp-") == 0);
    else
        CHECK(c.status == 1 && strstr(c.err, "Permission denied"), "%s", c.err);
    CHECK(hm_leftovers(wg_tmpdir(), ".tmp-") == 0, "a temporary was left behind");
    wg_cli_free(&c);
}

WG_TEST(heightmap_replaces_an_existing_file_whole)
{
    char path[300], cmd[700];
    hm_path(path, sizeof path, "old.r16");
    snprintf(cmd, sizeof cmd, "echo old > %s && ./worldgen --size 45 --octaves 4 "
             "--erosion 3 --seed 42 -q --heightmap %s", path, path);
    wg_cli c = wg_cli_sh(cmd);
    size_t len = 0;
    free(wg_read_file(path, &len));
    CHECK(c.status == 0 && len == 45 * 45 * 2, "status %d, %zu bytes", c.status, len);
    wg_cli_free(&c);
}
