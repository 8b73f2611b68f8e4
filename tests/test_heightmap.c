/* test_heightmap.c: the height map writers, read back: PFM exact, PNG and
 * R16 rounded to 16 bits, row y = 0 at the top, nothing left behind when a
 * write fails; the water map in the same formats and scale. */
#include <dirent.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
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
    CHECK(wg_heightmap_format_of_path("dir.png/x") == WG_HM_NONE);
    CHECK(wg_heightmap_format_of_path("x") == WG_HM_NONE);
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
