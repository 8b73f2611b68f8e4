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

/* --heightmap-format over a name whose extension says another format:
 * written in the format given, with a warning per map, as --out's name
 * (it had been silent); a name with no known extension, or the same one,
 * none. */
WG_TEST(heightmap_format_over_another_extension_warns)
{
    wg_cli c = wg_cli_sh("./worldgen --size 17 -q --heightmap-format pfm --heightmap fx.png "
                         "--watermap fx.tif --sedimentmap fx.pfm --normalmap fn.png && "
                         "head -c 2 fx.png && head -c 2 fx.tif");
    CHECK(c.status == 0 && strcmp(c.out, "PfPf") == 0 &&
              strcmp(c.err, "worldgen: warning: --heightmap 'fx.png': the map is PFM "
                            "(--heightmap-format) whatever the name says\n"
                            "worldgen: warning: --watermap 'fx.tif': the map is PFM "
                            "(--heightmap-format) whatever the name says\n") == 0,
          "%d: %s %s", c.status, c.out, c.err);
    wg_cli_free(&c);
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

/* A PNG map wider or taller than libpng's readers open (a million pixels
 * a side; GDAL keeps that limit) is refused before the world is made,
 * naming the option, the size and the formats that can hold it; a million
 * is written. */
WG_TEST(heightmap_png_over_a_million_a_side_is_refused)
{
    static const char *const outs[] = {"--heightmap", "--watermap",
                                       "--sedimentmap", "--normalmap",
                                       "--albedo"};
    char cmd[600];
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        snprintf(cmd, sizeof cmd,
                 "mkdir -p wide && cd wide && ../worldgen --size 1048577 "
                 "--region 0,0,1,1000001 --erosion 0 --hydraulic 0 -q %s m.png; "
                 "echo $?; ls -A", outs[i]);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(strcmp(c.out, "2\n") == 0 &&
                  strstr(c.err, "m.png: a PNG of 1 x 1000001 pixels; PNG readers "
                                "(libpng, GDAL) open at most 1000000 a side (valid: "
                                "up to 1000000, or write .tif"),
              "%s: %s %s", outs[i], c.out, c.err);
        wg_cli_free(&c);
    }
    wg_cli c = wg_cli_sh("cd wide && ../worldgen --size 1048577 --region "
                         "0,0,1000000,1 --erosion 0 --hydraulic 0 -q --heightmap m.png");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    char path[300];
    snprintf(path, sizeof path, "%s/wide/m.png", wg_tmpdir());
    uint32_t w = 0, h = 0;
    uint16_t *px = wg_read_png(path, 16, 1, &w, &h, NULL, 0);
    CHECK(px && w == 1000000 && h == 1, "cannot read %s as 1000000 x 1", path);
    free(px);
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

/* ---- the sediment map (--sedimentmap) ------------------------------------ */

/* The test world on the command line (hm_world), less its step count. */
#define HM_SED_WORLD "./worldgen --size 45 --octaves 4 --erosion 3 --seed 42 " \
                     "-q --no-image"

/* A PFM of the 45-sided test world as the grid, row 0 the top (the file's
 * last row), or NULL after a failed check.  Caller frees. */
static float *hm_read_pfm45(const char *name)
{
    const size_t n = 45;
    const char *header = "Pf\n45 45\n-1.0\n";
    const size_t hl = strlen(header);
    char path[300];
    hm_path(path, sizeof path, name);
    size_t len = 0;
    unsigned char *b = wg_read_file(path, &len);
    int ok = b && len == hl + n * n * 4 && memcmp(b, header, hl) == 0;
    CHECK(ok, "%s: not a 45x45 PFM (%zu bytes)", name, len);
    float *g = ok ? malloc(n * n * sizeof *g) : NULL;
    for (size_t y = 0; g && y < n; y++)
        memcpy(g + y * n, b + hl + (n - 1 - y) * n * 4, n * 4);
    free(b);
    return g;
}

WG_TEST(sedimentmap_pfm_is_ground_minus_starting_ground)
{
    /* SPEC.md, stage 3, "After the last step": sediment = b - b0 in
     * binary32, b the final ground (what --heightmap writes) and b0 =
     * ftz(h), stage 2's heights: what --heightmap writes for the same
     * world with --hydraulic 0.  So the PFM sediment map is the difference
     * of those two height maps, to the bit; and with --hydraulic 0 it is
     * all zeros (+0), with a warning saying so. */
    wg_cli c = wg_cli_sh(HM_SED_WORLD " --hydraulic 30 --heightmap sd-h.pfm "
                         "--sedimentmap sd-s.pfm --json sd-j.json");
    CHECK(c.status == 0 && c.err[0] == '\0', "%d %s", c.status, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh(HM_SED_WORLD " --hydraulic 0 --heightmap sd-h0.pfm "
                  "--sedimentmap sd-s0.pfm");
    CHECK(c.status == 0 &&
              strstr(c.err, "worldgen: warning: --sedimentmap 'sd-s0.pfm' is all "
                            "zeros: --hydraulic 0 moves no sediment"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    const size_t cells = 45 * 45;
    float *h = hm_read_pfm45("sd-h.pfm"), *h0 = hm_read_pfm45("sd-h0.pfm"),
          *s = hm_read_pfm45("sd-s.pfm"), *s0 = hm_read_pfm45("sd-s0.pfm");
    wg_fields f;
    CHECK(wg_make_world("scalar", &hm_world, 0, &f) == 0);
    if (h && h0 && s && s0 && f.sediment) {
        size_t bad = 0, field = 0, up = 0, down = 0, moved = 0, zero0 = 0;
        for (size_t i = 0; i < cells; i++) {
            volatile float d = h[i] - h0[i]; /* binary32, as SPEC.md */
            float dv = d;
            bad += memcmp(&dv, &s[i], 4) != 0;
            field += memcmp(&s[i], &f.sediment[i], 4) != 0;
            up += s[i] > 0.0f;
            down += s[i] < 0.0f;
            moved += h[i] != h0[i];
            uint32_t bits;
            memcpy(&bits, &s0[i], 4);
            zero0 += bits == 0;
        }
        /* The world must move ground both ways, or the check proves
         * nothing. */
        CHECK(up > 50 && down > 50 && moved > 100,
              "the test world moves too little: %zu up, %zu down", up, down);
        CHECK(bad == 0, "%zu cells: sediment map != height - height at "
              "--hydraulic 0", bad);
        CHECK(field == 0, "%zu cells differ from the sediment field", field);
        CHECK(zero0 == cells, "--hydraulic 0: %zu of %zu cells are +0",
              zero0, cells);
    }
    free(h);
    free(h0);
    free(s);
    free(s0);
    wg_fields_free(&f);
    /* Reported with the other writers, and only the map asked for. */
    char path[300];
    hm_path(path, sizeof path, "sd-j.json");
    size_t len = 0;
    char *j = wg_read_file(path, &len);
    CHECK(j && strstr(j, "{\"format\": \"sedimentmap\", \"path\": \"sd-s.pfm\", "
                         "\"seconds\": "), "%s", j ? j : "no JSON");
    free(j);
    c = wg_cli_sh("./worldgen --size 45 --octaves 4 --erosion 3 --seed 42 "
                  "--hydraulic 3 --sedimentmap sd-t.pfm --json /dev/null | "
                  "sed -n '/^  step/,/^$/p'");
    CHECK(c.status == 0 &&
              strcmp(c.out, "  step             time  output\n") > 0 &&
              strstr(c.out, "  step             time  output\n"
                            "  sedimentmap ") &&
              strstr(c.out, "s  sd-t.pfm\n") && !strstr(c.out, "heightmap"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(sedimentmap_clashes_are_refused_naming_both)
{
    /* --sedimentmap is one more file of the run: checked against every
     * other output (and its ENVI header too) before any work, exit 2, the
     * message naming both options; nothing is written. */
    static const struct {
        const char *args, *err_has;
    } cases[] = {
        {"--heightmap s.pfm --sedimentmap s.pfm",
         "--heightmap 's.pfm' and --sedimentmap 's.pfm' are the same file"},
        {"--watermap w.r16 --sedimentmap ./w.r16",
         "--watermap 'w.r16' and --sedimentmap './w.r16' are the same file"},
        {"--sedimentmap p.png --out p.png",
         "--out 'p.png' and --sedimentmap 'p.png' are the same file"},
        {"--sedimentmap j.tif --json j.tif",
         "--sedimentmap 'j.tif' and --json 'j.tif' are the same file"},
        {"--sedimentmap s.r16 --json s.r16.hdr",
         "--sedimentmap 's.r16' writes its header 's.r16.hdr', which --json "
         "writes too"},
        {"--heightmap h.r16 --sedimentmap h.r16.hdr --heightmap-format r16",
         "--heightmap 'h.r16' writes its header 'h.r16.hdr', which "
         "--sedimentmap writes too"},
        {"--sedimentmap n.png --normalmap n.png",
         "--normalmap 'n.png' and --sedimentmap 'n.png' are the same file"},
        {"--heightmap - --sedimentmap - --heightmap-format pfm",
         "--heightmap - and --sedimentmap - both want standard output"},
        {"--sedimentmap /dev/stdout --json - --heightmap-format r16",
         "--sedimentmap /dev/stdout and --json - both want standard output"},
        {"--sedimentmap -",
         "--sedimentmap -: give the format with --heightmap-format"},
        {"--sedimentmap s.jpg",
         "--sedimentmap: 's.jpg' has no known extension"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf d && mkdir d && cd d && ../worldgen "
                 "--size 16 -q %s; echo \"status $?\"; ls -A",
                 cases[i].args);
        wg_cli c = wg_cli_sh(cmd);
        CHECK(strcmp(c.out, "status 2\n") == 0 &&
                  strstr(c.err, cases[i].err_has) &&
                  strstr(c.err, "Try 'worldgen --help'"),
              "%s: %s %s", cases[i].args, c.out, c.err);
        wg_cli_free(&c);
    }
    /* Its header beside another map's is no clash. */
    wg_cli c = wg_cli_sh("rm -rf d && mkdir d && cd d && ../worldgen --size 16 "
                         "-q --heightmap a.r16 --watermap b.r16 --sedimentmap "
                         "c.r16 && ls -A");
    CHECK(c.status == 0 && strcmp(c.out, "a.r16\na.r16.hdr\nb.r16\nb.r16.hdr\n"
                                         "c.r16\nc.r16.hdr\n") == 0,
          "%d %s %s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(sedimentmap_16bit_round_trips_within_half_a_step)
{
    /* PNG and R16 hold 32768 + v * 65535, rounded and clamped: the height
     * map's step with 0 in the middle, so (q - 32768) / 65535 is within
     * half a step of v over -32768/65535..32767/65535. */
    const double half = 0.5 / 65535.0 + 1e-15;
    CHECK(wg_sediment_to_u16(0.0f) == 32768 && wg_sediment_to_u16(-0.0f) == 32768);
    CHECK(wg_sediment_to_u16(1.0f / 65535.0f) == 32769);
    CHECK(wg_sediment_to_u16(-1.0f / 65535.0f) == 32767);
    CHECK(wg_sediment_to_u16(0.49f / 65535.0f) == 32768 &&
          wg_sediment_to_u16(-0.49f / 65535.0f) == 32768);
    CHECK(wg_sediment_to_u16(-32768.0f / 65535.0f) == 0 &&
          wg_sediment_to_u16(32767.0f / 65535.0f) == 65535);
    CHECK(wg_sediment_to_u16(-1.0f) == 0 && wg_sediment_to_u16(1.0f) == 65535,
          "out of range is clamped");
    CHECK(wg_sediment_of_u16(32768) == 0.0 && wg_sediment_of_u16(0) ==
          -32768.0 / 65535.0 && wg_sediment_of_u16(65535) == 32767.0 / 65535.0);
    int far = 0, off = 0;
    for (int k = -70000; k <= 70000; k++) {
        float v = (float)k * 7.3e-6f; /* -0.511..0.511, off the grid */
        uint16_t q = wg_sediment_to_u16(v);
        double back = wg_sediment_of_u16(q);
        if (v >= -32768.0f / 65535.0f && v <= 32767.0f / 65535.0f)
            far += back - v > half || v - back > half;
        else
            off += q != (v < 0 ? 0 : 65535);
    }
    CHECK(far == 0 && off == 0, "%d further than half a step, %d not clamped",
          far, off);

    /* The maps the command line writes: each 16-bit sample is the PFM's
     * value mapped, also through standard output. */
    wg_cli c = wg_cli_sh(HM_SED_WORLD " --hydraulic 30 --sedimentmap sd-s.pfm && "
                         HM_SED_WORLD " --hydraulic 30 --sedimentmap sd-s.png && "
                         HM_SED_WORLD " --hydraulic 30 --sedimentmap sd-s.r16 && "
                         HM_SED_WORLD " --hydraulic 30 --sedimentmap - "
                         "--heightmap-format r16 > sd-o.r16 && cmp sd-s.r16 sd-o.r16 && "
                         HM_SED_WORLD " --hydraulic 0 --sedimentmap sd-z.png 2> /dev/null");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    const size_t cells = 45 * 45;
    float *s = hm_read_pfm45("sd-s.pfm");
    char png[300], r16[300], zpng[300], hdr[300], text[1024];
    hm_path(png, sizeof png, "sd-s.png");
    hm_path(r16, sizeof r16, "sd-s.r16");
    hm_path(zpng, sizeof zpng, "sd-z.png");
    hm_path(hdr, sizeof hdr, "sd-s.r16.hdr");
    uint32_t w = 0, h = 0;
    uint16_t *px = wg_read_png(png, 16, 1, &w, &h, text, sizeof text);
    CHECK(px && w == 45 && h == 45, "cannot read %s as 16-bit grey", png);
    size_t len = 0;
    unsigned char *raw = wg_read_file(r16, &len);
    CHECK(raw && len == cells * 2, "%s: %zu bytes", r16, len);
    if (s && px && raw && len == cells * 2) {
        int bad = 0, far16 = 0, above = 0, below = 0;
        for (size_t i = 0; i < cells; i++) {
            uint16_t q = (uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
            bad += px[i] != wg_sediment_to_u16(s[i]) || q != px[i];
            double d = wg_sediment_of_u16(px[i]) - s[i];
            far16 += d > half || d < -half;
            above += px[i] > 32768;
            below += px[i] < 32768;
        }
        CHECK(bad == 0 && far16 == 0, "%d samples are not the mapping, %d "
              "further than half a step", bad, far16);
        CHECK(above > 50 && below > 50, "%d above 32768, %d below", above, below);
        CHECK(strstr(text, "--hydraulic 30"), "%s", text);
    }
    free(px);
    free(raw);
    free(s);
    px = wg_read_png(zpng, 16, 1, &w, &h, NULL, 0);
    int mid = 0;
    for (size_t i = 0; px && i < cells; i++)
        mid += px[i] == 32768;
    CHECK(px && mid == (int)cells, "--hydraulic 0: %d of %zu samples 32768",
          mid, cells);
    free(px);
    /* The R16's header takes samples back to values for GDAL. */
    char *side = wg_read_file(hdr, &len);
    CHECK(side && strstr(side, "data gain values = {1.5259021896696422e-05}\n") &&
              strstr(side, "data offset values = {-0.50000762951094835}\n"),
          "%s", side ? side : "no header");
    free(side);
}

WG_TEST(sedimentmap_region_is_the_window_of_the_whole)
{
    /* A --region run's sediment map is the window of the whole world's,
     * to the bit, as its height and water maps are. */
    wg_cli c = wg_cli_sh(HM_SED_WORLD " --hydraulic 30 --sedimentmap sd-w.pfm && "
                         HM_SED_WORLD " --hydraulic 30 --region 7,11,20,30 "
                         "--sedimentmap sd-r.pfm");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    float *whole = hm_read_pfm45("sd-w.pfm");
    char path[300];
    hm_path(path, sizeof path, "sd-r.pfm");
    size_t len = 0;
    unsigned char *b = wg_read_file(path, &len);
    const char *header = "Pf\n20 30\n-1.0\n";
    size_t hl = strlen(header);
    CHECK(b && len == hl + 20 * 30 * 4 && memcmp(b, header, hl) == 0,
          "%zu bytes", len);
    if (whole && b && len == hl + 20 * 30 * 4) {
        int bad = 0;
        for (size_t y = 0; y < 30; y++)
            bad += memcmp(b + hl + (29 - y) * 20 * 4,
                          whole + (11 + y) * 45 + 7, 20 * 4) != 0;
        CHECK(bad == 0, "%d rows differ from the whole world's", bad);
    }
    free(b);
    free(whole);
}
