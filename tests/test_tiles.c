/* test_tiles.c: scripts/tiles.  A world made as uneven tiles (1000 in
 * tiles of 300, thermal and hydraulic erosion on, small counts so the
 * halos stay small) through GNU parallel and through a real one-node Slurm
 * cluster, mosaicked by its VRTs, is the whole run's world to the bit,
 * heights and water, on scalar, openmp and vulkan.  A tile that fails is
 * reported (exit 1, no mosaic) and made again alone by the next run; a
 * finished tile is never made twice; a folder planned with other options
 * is refused.  The tools (parallel, gdal-bin, time, slurm-wlm, munge) are
 * make deps' to install: a missing one fails the test. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render/geotiff.h"
#include "test.h"

#define TL_N 1000
#define TL_T 300
#define TL_OPTS "--erosion 4 --hydraulic 20"
#define TL_FAIL_REGION "300,300,300,300" /* tile r1/r1c1 */

/* Run a shell command (printf-style) in the runner's folder. */
static wg_cli tl_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static wg_cli tl_sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return wg_cli_sh(cmd);
}

/* The script's status; its outputs are freed unless kept in *keep. */
static int tl_run(wg_cli *keep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int tl_run(wg_cli *keep, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    wg_cli c = wg_cli_sh(cmd);
    int st = c.status;
    if (keep)
        *keep = c;
    else
        wg_cli_free(&c);
    return st;
}

/* What every tiles test needs: the tools (make deps installs them) and a
 * worldgen that writes GeoTIFF windows.  0, or -1 after a failed check. */
static int tl_ready(void)
{
    wg_cli c = tl_sh("for t in parallel gdalbuildvrt gdal_translate gdalinfo "
                     "/usr/bin/time; do command -v $t >/dev/null || echo $t; done");
    int ok = c.status == 0 && !c.out[0];
    CHECK(ok, "missing: %s(make deps installs parallel, gdal-bin and time)",
          c.out);
    wg_cli_free(&c);
    if (!ok)
        return -1;
    CHECK(wg_geotiff_available(), "worldgen was built without libtiff and "
          "libgeotiff: make deps, then make");
    return wg_geotiff_available() ? 0 : -1;
}

/* A fresh folder 'name' under the runner's; its path in buf[512]. */
static const char *tl_dir(char *buf, const char *name)
{
    snprintf(buf, 512, "%s/%s", wg_tmpdir(), name);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", buf, buf);
    CHECK(system(cmd) == 0, "%s", cmd);
    return buf;
}

/* Write 'dir'/wrap: a worldgen that logs each --region to dir/regions and
 * fails the tile TL_FAIL_REGION while dir/fail exists. */
static void tl_wrapper(const char *dir)
{
    wg_cli c = tl_sh(
        "cat > '%s/wrap' <<'EOF'\n"
        "#!/bin/sh\n"
        "prev=; region=; check=\n"
        "for a; do [ \"$prev\" = --region ] && region=$a; [ \"$a\" = --version ] && check=1; "
        "prev=$a; done\n"
        "[ -n \"$check\" ] && region= # the options' check, not a tile\n"
        "d=$(dirname \"$0\")\n"
        "[ -n \"$region\" ] && echo \"$region\" >> \"$d/regions\"\n"
        "if [ -e \"$d/fail\" ] && [ \"$region\" = " TL_FAIL_REGION " ]; then\n"
        "    echo 'injected failure' >&2; exit 1\n"
        "fi\n"
        "exec '%s/worldgen' \"$@\"\n"
        "EOF\n"
        "chmod +x '%s/wrap'", dir, wg_srcdir(), dir);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
}

/* A raster as raw float32 (gdal_translate to ENVI): n*n floats or NULL. */
static float *tl_raw(const char *dir, const char *src, const char *raw,
                     uint32_t n)
{
    wg_cli c = tl_sh("cd '%s' && gdal_translate -q -of ENVI -ot Float32 '%s' "
                     "'%s' && gdalinfo '%s' | grep -e '^Size is' -e '^Origin' "
                     "-e '^Pixel Size' -e 'Type='", dir, src, raw, src);
    CHECK(c.status == 0, "%s: %s", src, c.err);
    /* Float32, as worldgen wrote it: no conversion hides a difference. */
    CHECK(strstr(c.out, "Type=Float32"), "%s: %s", src, c.out);
    wg_cli_free(&c);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, raw);
    size_t len = 0;
    float *f = wg_read_file(path, &len);
    CHECK(f && len == (size_t)n * n * sizeof *f, "%s: %zu bytes", path, len);
    if (f && len != (size_t)n * n * sizeof *f) {
        free(f);
        f = NULL;
    }
    return f;
}

/* The mosaics in 'dir' against one whole run of the same world (made in
 * dir/whole with 'opts'): heights and water identical to the bit, the
 * geotransforms too. */
static void tl_check_mosaic(const char *dir, uint32_t n, const char *opts)
{
    wg_cli c = tl_sh("mkdir -p '%s/whole' && ./worldgen %s --size %u "
                     "--heightmap '%s/whole/height.tif' --watermap "
                     "'%s/whole/water.tif' --no-image -q", dir, opts, n, dir,
                     dir);
    int st = c.status;
    CHECK(st == 0, "the whole run: %s", c.err);
    wg_cli_free(&c);
    if (st != 0)
        return;
    static const char *const kind[] = {"height", "water"};
    for (int k = 0; k < 2; k++) {
        char vrt[32], tif[48], a[48], b[48];
        snprintf(vrt, sizeof vrt, "%s.vrt", kind[k]);
        snprintf(tif, sizeof tif, "whole/%s.tif", kind[k]);
        snprintf(a, sizeof a, "mosaic-%s.raw", kind[k]);
        snprintf(b, sizeof b, "whole-%s.raw", kind[k]);
        float *m = tl_raw(dir, vrt, a, n), *w = tl_raw(dir, tif, b, n);
        if (m && w) {
            int same = 0;
            double d = wg_max_diff(m, w, (size_t)n * n, &same);
            CHECK(same, "%s: the tiles' mosaic differs from the whole run "
                  "(max %g)", kind[k], d);
        }
        free(m);
        free(w);
        /* The same place in the world: origin, pixel size, size. */
        c = tl_sh("cd '%s' && for f in %s %s; do gdalinfo $f | grep -e "
                  "'^Size is' -e '^Origin' -e '^Pixel Size' > $f.geo; done && "
                  "cmp %s.geo %s.geo", dir, vrt, tif, vrt, tif);
        CHECK(c.status == 0, "%s: georeferencing differs: %s%s", kind[k],
              c.out, c.err);
        wg_cli_free(&c);
    }
}

/* The checks of a finished run's outputs: the tiles' names, the report. */
static void tl_check_outputs(const char *dir, const wg_cli *c, int ntiles)
{
    static const char *const files[] = {
        "plan", "report.txt", "height.vrt", "water.vrt",
        "tiles/r0/r0c0-height.tif", "tiles/r0/r0c0-water.tif",
        "tiles/r0/r0c0.done", "tiles/r0/r0c0.json",
        "tiles/r3/r3c3-height.tif", "tiles/r3/r3c3-water.tif",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[700];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        CHECK(stat(p, &st) == 0, "no %s", p);
    }
    char want[64];
    snprintf(want, sizeof want, "in %d tiles of %d", ntiles, TL_T);
    CHECK(strstr(c->out, want), "report: %s", c->out);
    /* The uneven corner tile, its time and its peak memory. */
    char *row = strstr(c->out, "  r3/r3c3 ");
    double wall = 0, mib = 0;
    unsigned x, y, w, h;
    CHECK(row && sscanf(row, " r3/r3c3 %u %u %u %u %lf %lf", &x, &y, &w, &h,
                        &wall, &mib) == 6 && x == 900 && y == 900 &&
              w == 100 && h == 100 && wall > 0 && mib > 0,
          "report: %s", c->out);
    CHECK(strstr(c->out, "peak memory a tile: mean") &&
              strstr(c->out, "tile wall: total") &&
              strstr(c->out, "cells computed per cell written"),
          "report: %s", c->out);
    snprintf(want, sizeof want, "[%d/%d] ", ntiles, ntiles);
    CHECK(strstr(c->err, want), "no progress to %s: %s", want, c->err);
}

/* A run through GNU parallel with these worldgen options. */
static void tl_parallel(const char *name, const char *jobs, const char *opts)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, name);
    wg_cli c;
    int st = tl_run(&c, "'%s/scripts/tiles' --size %d --tile %d -j %s --out "
                    "'%s' -- %s", wg_srcdir(), TL_N, TL_T, jobs, dir, opts);
    CHECK(st == 0, "status %d: %s%s", st, c.out, c.err);
    if (st == 0) {
        tl_check_outputs(dir, &c, 16);
        tl_check_mosaic(dir, TL_N, opts);
    }
    wg_cli_free(&c);
}

WG_TEST(tiles_parallel_scalar_is_the_whole_world)
{
    tl_parallel("tl-scalar", "2", TL_OPTS " --mesh scalar");
}

WG_TEST(tiles_parallel_openmp_is_the_whole_world)
{
    tl_parallel("tl-openmp", "1", TL_OPTS " --mesh openmp --threads 2");
}

WG_TEST(tiles_parallel_vulkan_is_the_whole_world)
{
    wg_cli c = tl_sh("./worldgen --size 16 --mesh vulkan --require vulkan "
                     "--no-image -q");
    int vk = c.status == 0;
    if (!vk)
        wg_skip("vulkan cannot run here: %s", c.err);
    wg_cli_free(&c);
    if (!vk || tl_ready() != 0)
        return;
    /* Lavapipe is slow: a small world, 200 in tiles of 64 (the last 8). */
    char dir[512];
    tl_dir(dir, "tl-vulkan");
    const char *opts = TL_OPTS " --mesh vulkan";
    int st = tl_run(&c, "'%s/scripts/tiles' --size 200 --tile 64 -j 2 --out "
                    "'%s' -- %s", wg_srcdir(), dir, opts);
    CHECK(st == 0, "status %d: %s%s", st, c.out, c.err);
    CHECK(strstr(c.out, "in 16 tiles of 64") && strstr(c.err, "[16/16] "),
          "%s%s", c.out, c.err);
    wg_cli_free(&c);
    if (st == 0)
        tl_check_mosaic(dir, 200, opts);
}

/* The tiles' .done records, concatenated in plan order (their times and
 * hosts: a tile made again changes its own). */
static char *tl_records(const char *dir)
{
    wg_cli c = tl_sh("cd '%s' && cat tiles/*/*.done", dir);
    char *out = c.out;
    c.out = NULL;
    wg_cli_free(&c);
    return out;
}

/* Count the lines of dir/regions equal to 'region' and all of them. */
static int tl_regions(const char *dir, const char *region, int *all)
{
    char p[600];
    snprintf(p, sizeof p, "%s/regions", dir);
    char *s = wg_read_file(p, NULL);
    int n = 0, lines = 0;
    for (char *l = s, *e; l && *l; l = e + 1) {
        e = strchr(l, '\n');
        if (!e)
            break;
        *e = '\0';
        lines++;
        n += strcmp(l, region) == 0;
    }
    free(s);
    *all = lines;
    return n;
}

/* One tile fails: the run says which and exits 1, with no mosaic; the
 * next run makes that tile alone; one more makes nothing. */
static void tl_fail_and_resume(const char *dir, const char *engine_args,
                               const char *opts)
{
    tl_wrapper(dir);
    char cmd[2048];
    /* timeout: a stalled engine fails the test rather than hanging it. */
    snprintf(cmd, sizeof cmd, "timeout 300 '%s/scripts/tiles' --size %d --tile %d %s "
             "--worldgen '%s/wrap' --out '%s/out' -- %s", wg_srcdir(), TL_N,
             TL_T, engine_args, dir, dir, opts);
    char out[600];
    snprintf(out, sizeof out, "%s/out", dir);

    wg_cli c;
    int st = tl_run(&c, "touch '%s/fail' && %s", dir, cmd);
    CHECK(st == 1, "a failed tile: status %d: %s%s", st, c.out, c.err);
    CHECK(strstr(c.err, "tile r1/r1c1 failed") &&
              strstr(c.err, "injected failure") &&
              strstr(c.err, "1 of 16 tiles not made (1 failed)"),
          "%s", c.err);
    char vrt[700];
    snprintf(vrt, sizeof vrt, "%s/height.vrt", out);
    CHECK(access(vrt, F_OK) != 0, "a mosaic of a failed run: %s", vrt);
    wg_cli_free(&c);
    int all = 0, n = tl_regions(dir, TL_FAIL_REGION, &all);
    CHECK(n == 1 && all == 16, "%d regions run", all);
    char *before = tl_records(out);

    st = tl_run(&c, "rm -f '%s/fail' '%s/regions' && %s", dir, dir, cmd);
    CHECK(st == 0, "the second run: status %d: %s%s", st, c.out, c.err);
    CHECK(strstr(c.err, "16 tiles of 300 in") && strstr(c.err, "1 to make, 15 kept"),
          "%s", c.err);
    n = tl_regions(dir, TL_FAIL_REGION, &all);
    CHECK(n == 1 && all == 1,
          "the second run made %d tiles, not the failed one alone", all);
    /* The 15 kept tiles' records are untouched. */
    char *after = tl_records(out);
    CHECK(before && after && strlen(after) > strlen(before),
          "records: %s\nthen %s", before, after);
    for (char *l = before, *e; before && after && *l; l = e + 1) {
        e = strchr(l, '\n');
        if (!e)
            break;
        *e = '\0';
        CHECK(strstr(after, l), "tile record changed: %s", l);
    }
    free(before);
    free(after);
    if (st == 0) {
        tl_check_outputs(out, &c, 16);
        tl_check_mosaic(out, TL_N, opts);
    }
    wg_cli_free(&c);

    st = tl_run(&c, "rm -f '%s/regions' && %s", dir, cmd);
    CHECK(st == 0 && strstr(c.err, "0 to make, 16 kept") &&
              strstr(c.out, "in 16 tiles of 300"),
          "a third run: status %d: %s%s", st, c.out, c.err);
    n = tl_regions(dir, TL_FAIL_REGION, &all);
    CHECK(n == 0 && all == 0, "a third run made %d tiles", all);
    wg_cli_free(&c);
}

WG_TEST(tiles_parallel_failed_tile_is_made_again_alone)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-resume");
    tl_fail_and_resume(dir, "-j 2", TL_OPTS " --mesh scalar");

    /* Other options in the same folder: refused, the plan kept. */
    wg_cli c;
    int st = tl_run(&c, "'%s/scripts/tiles' --size %d --tile %d --worldgen "
                    "'%s/wrap' --out '%s/out' -- --erosion 5 --hydraulic 20 "
                    "--mesh scalar", wg_srcdir(), TL_N, TL_T, dir, dir);
    CHECK(st == 2 && strstr(c.err, "holds a plan with other options") &&
              strstr(c.err, "--erosion 4") && strstr(c.err, "--erosion 5"),
          "status %d: %s", st, c.err);
    wg_cli_free(&c);
    st = tl_run(&c, "'%s/scripts/tiles' --size %d --tile 250 --out '%s/out' "
                "-- " TL_OPTS " --mesh scalar", wg_srcdir(), TL_N, dir);
    CHECK(st == 2 && strstr(c.err, "tile 250"), "status %d: %s", st, c.err);
    wg_cli_free(&c);
    st = tl_run(&c, "grep -x 'options --erosion 4 --hydraulic 20 --mesh "
                "scalar' '%s/out/plan'", dir);
    CHECK(st == 0, "the plan was changed");
    wg_cli_free(&c);
}

/* Tiles damaged after they were made: a map cut short, a map removed and a
 * .done emptied.  Their maps had been taken as whole because they exist:
 * status said 4/4 done, the next run made nothing and exited 0, and
 * gdalbuildvrt left the cut map out of the mosaic (a hole) with a
 * warning.  Now status names each, the run says so and makes those three
 * alone (status does not call them killed: they were made), and the
 * mosaic is the whole run's; a map damaged without a
 * change of size, which gdalbuildvrt cannot open, fails the mosaic. */
WG_TEST(tiles_damaged_tiles_are_named_and_made_again)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-damaged");
    const char *opts = "--erosion 2 --hydraulic 4 --mesh scalar";
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s/scripts/tiles' --size 65 --tile 33 -j 2 "
             "--out '%s' -- %s", wg_srcdir(), dir, opts);
    wg_cli c;
    int st = tl_run(&c, "%s && cd '%s/tiles' && truncate -s 1000 r0/r0c1-height.tif "
                    "&& rm r1/r1c0-water.tif && : >r1/r1c1.done && '%s/scripts/tiles' "
                    "status '%s'", cmd, dir, wg_srcdir(), dir);
    CHECK(st == 3 && strstr(c.out, "1/4 tiles done") &&
              strstr(c.out, "tile r0/r0c1 is damaged (its height.tif is 1000 bytes, ") &&
              strstr(c.out, "tile r1/r1c0 is damaged (its water map is gone)") &&
              strstr(c.out, "tile r1/r1c1 is damaged (its .done record is not whole)") &&
              /* made, then damaged: not a job that ended with no record */
              !strstr(c.out, "was not made"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    st = tl_run(&c, "%s", cmd);
    CHECK(st == 0 && strstr(c.err, "tile r0/r0c1 is damaged (its height.tif is 1000 bytes, ") &&
              strstr(c.err, "3 to make, 1 kept"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    if (st == 0)
        tl_check_mosaic(dir, 65, opts);
    /* The same size, but no TIFF: the mosaic fails, and none is left. */
    st = tl_run(&c, "dd if=/dev/zero of='%s/tiles/r1/r1c1-water.tif' bs=16 count=1 "
                "conv=notrunc 2>/dev/null && %s", dir, cmd);
    CHECK(st == 1 && strstr(c.err, "0 to make, 4 kept") &&
              strstr(c.err, "gdalbuildvrt left 1 of the water maps out of the mosaic"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    snprintf(cmd, sizeof cmd, "%s/water.vrt", dir);
    CHECK(access(cmd, F_OK) != 0, "a mosaic with a hole: %s", cmd);
}

/* A record whose figures were damaged (a word, a number out of range),
 * whose place is not the plan's, or with a line more is not whole: the
 * tile is made again.  Such records had been taken, and the report said
 * "max 0.000 s" and "mean inf MiB", or counted the tile twice ("17 tiles
 * of 16"). */
WG_TEST(tiles_damaged_record_figures_are_not_taken)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-figures");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s/scripts/tiles' --size 33 --tile 10 --out '%s' -- "
             "--mesh scalar --erosion 1 --hydraulic 1", wg_srcdir(), dir);
    wg_cli c;
    int st = tl_run(&c, "%s >/dev/null 2>&1 && cd '%s/tiles' && "
                    "sed -i 's/^\\(0 r0\\/r0c0 0 0 10 10\\) [^ ]* [^ ]*/\\1 abc 1e400/' r0/r0c0.done && "
                    "sed -i 's/^\\(1 r0\\/r0c1\\) 10 /\\1 11 /' r0/r0c1.done && "
                    "sed -i 's/^\\(2 r0\\/r0c2 20 0 10 10\\) [^ ]*/\\1 1e999/' r0/r0c2.done && "
                    "head -n 1 r1/r1c0.done >> r1/r1c0.done && '%s/scripts/tiles' status '%s'",
                    cmd, dir, wg_srcdir(), dir);
    CHECK(st == 3 && strstr(c.out, "12/16 tiles done") &&
              strstr(c.out, "tile r0/r0c0 is damaged (its .done record is not whole)") &&
              strstr(c.out, "tile r0/r0c1 is damaged (its .done record is not whole)") &&
              strstr(c.out, "tile r0/r0c2 is damaged (its .done record is not whole)") &&
              strstr(c.out, "tile r1/r1c0 is damaged (its .done record is not whole)"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    st = tl_run(&c, "%s", cmd);
    CHECK(st == 0 && strstr(c.err, "4 to make, 12 kept") && !strstr(c.out, "inf") &&
              strstr(c.out, "16 tiles of 10"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    /* Whole again: status says so with 0 (3 above, while tiles remained). */
    st = tl_run(&c, "'%s/scripts/tiles' status '%s'", wg_srcdir(), dir);
    CHECK(st == 0 && strstr(c.out, "16/16 tiles done"), "status %d: %s%s", st, c.out,
          c.err);
    wg_cli_free(&c);
}

/* The report's span from the first tile's start to the last's end says
 * how much of it no tile was running, in pauses over 10 s: a resume's
 * records are of two runs, and the span had read 1262 s for 23 s of work
 * and the 20 minutes between.  One tile's record moved 100 s on stands
 * for a tile made again in a later run. */
WG_TEST(tiles_report_says_the_pauses_between_runs)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-pause");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s/scripts/tiles' --size 65 --tile 33 -j 2 -q "
             "--out '%s' -- --erosion 2 --hydraulic 4 --mesh scalar", wg_srcdir(), dir);
    wg_cli c;
    int st = tl_run(&c, "%s && grep '^rate' '%s/report.txt'", cmd, dir);
    CHECK(st == 0 && strstr(c.out, "first tile start to last end ") &&
              !strstr(c.out, "no tile running"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    st = tl_run(&c, "cd '%s/tiles' && awk '{ $10 = sprintf(\"%%.6f\", $10 + 100); "
                "$11 = sprintf(\"%%.6f\", $11 + 100); print }' r1/r1c1.done "
                "> moved && mv moved r1/r1c1.done && %s && grep '^rate' '%s/report.txt'",
                dir, cmd, dir);
    double span = 0, idle = 0;
    const char *at = strstr(c.out, "last end ");
    CHECK(st == 0 && at && sscanf(at, "last end %lf s, %lf s of it with no tile running",
                                  &span, &idle) == 2 &&
              strstr(c.out, "(1 pause over 10 s: another run, a queue)") &&
              span >= 100.0 && idle > 90.0 && idle < span,
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* A tile's record names the host that made it, by hostname: bash keeps a
 * HOSTNAME it inherits, and sbatch passes the login node's (RHEL's profile
 * exports it), so $HOSTNAME would have named the login node for every
 * tile.  And the tiles are made where bash has no EPOCHREALTIME (before
 * 5.0: RHEL 8, Ubuntu 18.04), from date's clock: under set -u every tile
 * had failed there. */
WG_TEST(tiles_records_name_the_node_and_need_no_bash5_clock)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-host");
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && sed '/^export LC_ALL=C$/a unset EPOCHREALTIME' "
                    "'%s/scripts/tiles' > tiles4 && chmod +x tiles4 && "
                    "HOSTNAME=login01 ./tiles4 --worldgen '%s/worldgen' --size 40 "
                    "--tile 33 -j 2 -q --out w -- --erosion 2 --hydraulic 4 --mesh scalar "
                    ">/dev/null && grep -c unset tiles4 && cut -d' ' -f9-11 w/tiles/*/*.done "
                    "&& hostname", dir, wg_srcdir(), wg_srcdir());
    char host[256] = "";
    const char *last = c.out ? strrchr(c.out, '\n') : NULL;
    if (last && last > c.out) {
        const char *b = last - 1;
        while (b > c.out && b[-1] != '\n')
            b--;
        snprintf(host, sizeof host, "%.*s", (int)(last - b), b);
    }
    int named = 0, timed = 0;
    for (const char *p = c.out; host[0] && (p = strstr(p, host)); p += strlen(host)) {
        double a = 0, b = 0;
        named++;
        if (sscanf(p + strlen(host), " %lf %lf", &a, &b) == 2 && a > 1e9 && b >= a)
            timed++;
    }
    /* Four records and the hostname line itself. */
    CHECK(st == 0 && strncmp(c.out, "1\n", 2) == 0 && named == 5 && timed == 4 &&
              !strstr(c.out, "login01"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* Tiles of two option sets in one folder: a tile copied in from a folder
 * made with other options, then the plan removed and the folder planned
 * with those options.  Each tile's .done had recorded no plan, so the
 * stranger was kept and mosaicked with the others (exit 0), as were all
 * the old tiles under the new plan; now each is said and made again, and
 * the mosaic is the whole run's of the folder's options. */
WG_TEST(tiles_tiles_of_another_plan_are_made_again)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-mixed");
    const char *a = "--erosion 2 --hydraulic 4 --mesh scalar";
    const char *b = "--erosion 2 --hydraulic 5 --mesh scalar";
    char run[1200];
    snprintf(run, sizeof run, "'%s/scripts/tiles' --size 40 --tile 20 -j 2 --out",
             wg_srcdir());
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && %s a -- %s >/dev/null 2>&1 && %s b -- %s >/dev/null "
                    "2>&1 && cp -f b/tiles/r1/r1c0[-.]* a/tiles/r1/ && %s a -- %s",
                    dir, run, a, run, b, run, a);
    CHECK(st == 0 && strstr(c.err, "tile r1/r1c0 was made under another plan, with other "
                            "options: made again") &&
              strstr(c.err, "1 to make, 3 kept"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/a", dir);
    if (st == 0)
        tl_check_mosaic(sub, 40, a);
    st = tl_run(&c, "cd '%s' && rm a/plan && %s a -- %s", dir, run, b);
    CHECK(st == 0 && strstr(c.err, "tile r1/r1c1 was made under another plan") &&
              strstr(c.err, "4 to make, 0 kept"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    if (st == 0)
        tl_check_mosaic(sub, 40, b);
}

/* Two tiles of 40 in tiles of 20 killed: r0/r0c1's worldgen by SIGKILL (as
 * the OOM killer does), which had been said as "status 137: no message",
 * and r1/r1c0's tile job with its shell (a node lost, a task cancelled),
 * which left no record and had been counted alone, "2 of 4 tiles not made
 * (1 failed)", no word saying which.  Both are named, in the run's end and
 * in status ('more': how the second is named, by Slurm its task's output;
 * 'progress': the first's progress line), and the next run makes those
 * two alone. */
static void tl_killed_tiles(const char *dir, const char *engine_args,
                            const char *more, const char *progress)
{
    wg_cli c = tl_sh(
        "cat > '%s/wrap' <<'EOF'\n"
        "#!/bin/sh\n"
        "d=$(dirname \"$0\")\n"
        "case \"$*\" in\n"
        "*--version*) ;;\n"
        "*'--region 20,0,'*) [ -e \"$d/kill\" ] && kill -9 $$; echo \"$*\" >>\"$d/regions\" ;;\n"
        "*'--region 0,20,'*) if [ ! -e \"$d/kill\" ]; then echo \"$*\" >>\"$d/regions\"; else\n"
        "    p=$$ k=; while [ \"$p\" -gt 1 ]; do\n"
        "        case \"$(tr '\\0' ' ' </proc/$p/cmdline)\" in\n"
        "        *'scripts/tiles tile '*|*'scripts/tiles slurm-task '*) k=\"$k $p\" ;;\n"
        "        esac\n"
        "        p=$(awk '{ print $4 }' /proc/$p/stat)\n"
        "    done; kill -9 $k; exit 1; fi ;;\n"
        "*--region*) echo \"$*\" >>\"$d/regions\" ;;\n"
        "esac\n"
        "exec '%s/worldgen' \"$@\"\n"
        "EOF\n"
        "chmod +x '%s/wrap'", dir, wg_srcdir(), dir);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "timeout 120 '%s/scripts/tiles' --size 40 --tile 20 %s "
             "--worldgen '%s/wrap' --out '%s/out' -- --erosion 2 --hydraulic 4 "
             "--mesh scalar", wg_srcdir(), engine_args, dir, dir);
    int st = tl_run(&c, "touch '%s/kill' && %s", dir, cmd);
    CHECK(st == 1 && strstr(c.err, progress) &&
              strstr(c.err, "tile r0/r0c1 failed: status 137 (killed by SIGKILL) on ") &&
              strstr(c.err, "tile r1/r1c0 was not made: its ") &&
              strstr(c.err, more) &&
              strstr(c.err, "2 of 4 tiles not made (1 failed, 1 with no record or not started)"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    st = tl_run(&c, "'%s/scripts/tiles' status '%s/out'", wg_srcdir(), dir);
    CHECK(st == 3 && strstr(c.out, "2/4 tiles done") &&
              strstr(c.out, "failed: r0/r0c1 (status 137 (killed by SIGKILL) on ") &&
              strstr(c.out, "tile r1/r1c0 was not made: its ") && strstr(c.out, more),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    st = tl_run(&c, "rm -f '%s/kill' '%s/regions' && %s >/dev/null && sort '%s/regions' | "
                "grep -o 'region [0-9,]*' | tr '\\n' ' '", dir, dir, cmd, dir);
    CHECK(st == 0 && strstr(c.err, "2 to make, 2 kept") &&
              !strcmp(c.out, "region 0,20,20,20 region 20,0,20,20 "),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(tiles_parallel_killed_tiles_are_named)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-killed");
    tl_killed_tiles(dir, "-j 2", "(killed with its shell: a node lost, a cancel, a time "
                    "limit; or a full disk)", "r0/r0c1 FAILED (status 137): killed by "
                    "SIGKILL (kill -9, or out of memory");
}

/* --normals and --albedo: each tile's normal map (3 bands of float32) and
 * albedo (8-bit RGB) GeoTIFFs, mosaicked in normal.vrt and albedo.vrt,
 * are the whole run's to the bit, placed as its (PixelIsPoint); with
 * --format png, PNGs, and no mosaic (PNG tiles get none, the README
 * says, as for the heights).  The script had refused both ("make it from the
 * mosaic", which no tool here can: worldgen reads no height map), though
 * a --region run writes them exactly. */
WG_TEST(tiles_normals_and_albedo_are_the_whole_runs)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-normals");
    const char *opts = "--erosion 2 --hydraulic 4 --mesh scalar --seed 0x5eed";
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && '%s/scripts/tiles' --size 65 --tile 33 --normals "
                    "--albedo -j 2 --out t -- %s && '%s/worldgen' --size 65 %s "
                    "--normalmap n.tif --albedo a.tif --no-image -q && "
                    "for k in normal:n albedo:a; do "
                    "gdal_translate -q -of ENVI -co INTERLEAVE=BSQ t/${k%%:*}.vrt m.raw && "
                    "gdal_translate -q -of ENVI -co INTERLEAVE=BSQ ${k#*:}.tif w.raw && "
                    "cmp m.raw w.raw && echo \"${k%%:*} same\"; "
                    "for f in t/${k%%:*}.vrt ${k#*:}.tif; do gdalinfo $f | grep -e '^Size is' "
                    "-e '^Origin' -e '^Pixel Size' -e AREA_OR_POINT -e '^Band' | "
                    "sed 's/Block=[0-9x]* //' >$f.geo; done; "
                    "cmp t/${k%%:*}.vrt.geo ${k#*:}.tif.geo && grep -c 'AREA_OR_POINT=Point' "
                    "${k#*:}.tif.geo; done",
                    dir, wg_srcdir(), opts, wg_srcdir(), opts);
    CHECK(st == 0 && strstr(c.out, "mosaic: height.vrt, water.vrt, normal.vrt, albedo.vrt") &&
              strstr(c.out, "normal same\n1\nalbedo same\n1\n"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    st = tl_run(&c, "cd '%s' && '%s/scripts/tiles' -q --size 65 --tile 33 --normals "
                "--albedo --format png --out p -- %s >/dev/null && "
                "! ls p/*.vrt 2>/dev/null && ls p/tiles/r1 | "
                "grep -c -e 'r1c1-normal.png' -e 'r1c1-albedo.png' && od -An "
                "-tu1 -j16 -N10 p/tiles/r1/r1c1-normal.png | tr -s ' ' ' '",
                dir, wg_srcdir(), opts);
    /* The PNG's IHDR (od: file(1) is not on a fresh Debian): 32 x 32, 16
     * bits, colour type 2 (RGB). */
    CHECK(st == 0 && strstr(c.out, "2\n") && strstr(c.out, " 0 0 0 32 0 0 0 32 16 2"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* A tiling that costs more than it saves is said before it runs: 40 in
 * tiles of 20 with worldgen's default counts (30 steps at 40, a halo of
 * 61, wider than the world) makes each tile compute the whole world, four
 * times one run, which a run had said only in its report's figures.  Fixed
 * small counts, and a run with nothing left to make, say nothing. */
WG_TEST(tiles_costly_tiling_is_said)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-costly");
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && '%s/scripts/tiles' -q --size 40 --tile 20 -j 2 --out d -- "
                    "--mesh scalar >/dev/null && '%s/scripts/tiles' -q --size 40 --tile 20 -j 2 "
                    "--out d -- --mesh scalar >/dev/null && echo again && '%s/scripts/tiles' -q "
                    "--size 40 --tile 20 -j 2 --out f -- --ero 1 --hyd=2 --mesh scalar >/dev/null",
                    dir, wg_srcdir(), wg_srcdir(), wg_srcdir());
    CHECK(st == 0 && !strcmp(c.err, "scripts/tiles: warning: halo 61 (0 thermal passes + 2 x 30 "
                             "hydraulic steps + 1, worldgen's defaults at this size): the tiles "
                             "compute 4.0 times the cells they write, a tile up to 40x40: a larger "
                             "--tile, or fixed and fewer --erosion passes and --hydraulic steps, "
                             "cost less (--plan-only gives the costs)\n") &&
              !strcmp(c.out, "again\n"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* A Slurm run into a folder whose name sh and sbatch would read: a tab, a
 * byte beyond ASCII (printf %q wrote $'...' for both, which the tasks'
 * /bin/sh read as '$' and backslashes: every task failed), sbatch's '%j'
 * and '%' (its --output pattern: no task's log could be opened), and
 * $(...), '"' and ';' (run as a command by none).  Made whole, mosaic
 * and all, and the marker never made. */
static void tl_slurm_hostile_folder(const char *dir)
{
    char out[700]; /* a printf format for the shell's printf */
    snprintf(out, sizeof out, "%s/h\\t\\303\\251 %%%%j 100%%%% $(touch pwned)\"x;y", dir);
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && '%s/scripts/tiles' -q --size 33 --tile 17 --engine slurm "
                    "--wait --out \"$(printf '%s')\" -- --erosion 1 --hydraulic 2 "
                    "--mesh scalar && cd \"$(printf '%s')\" && ls slurm/tile-*_3.out && "
                    "gdalinfo height.vrt | grep -c 'Size is 33, 33'; "
                    "find '%s' -name pwned | grep -q . && echo PWNED; true",
                    dir, wg_srcdir(), out, out, dir);
    CHECK(strstr(c.out, "tiles of 17 (2x2") && strstr(c.out, "_3.out\n1\n") &&
              !strstr(c.out, "PWNED"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* A one-node Slurm cluster: slurmctld, slurmd and munged of their own
 * (tests/slurm/cluster.sh), stopped whatever happens, also if the runner
 * dies (the script watches its process). */
WG_TEST(tiles_slurm_array_is_the_whole_world)
{
#if defined(__SANITIZE_ADDRESS__)
    /* Slurm's plumbing, not worldgen's code, which the sanitized tiles
     * beside it run under GNU parallel with the same commands; half a
     * minute of CI, most of it the cluster's start. */
    wg_skip("checks the Slurm plumbing: the plain suite runs it");
    return;
#endif
    if (tl_ready() != 0)
        return;
    char dir[512], cl[600];
    tl_dir(dir, "tl-slurm");
    snprintf(cl, sizeof cl, "%s/cluster", dir);
    wg_cli c;
    int st = tl_run(&c, "'%s/tests/slurm/cluster.sh' start '%s' %ld",
                    wg_srcdir(), cl, (long)getpid());
    CHECK(st == 0, "no cluster (make deps installs slurm-wlm and munge): %s",
          c.err);
    wg_cli_free(&c);
    if (st == 0) {
        char conf[700];
        snprintf(conf, sizeof conf, "%s/slurm.conf", cl);
        setenv("SLURM_CONF", conf, 1);
        setenv("WG_TILES_POLL", "0.3", 1);
        tl_fail_and_resume(dir, "--engine slurm --wait",
                           TL_OPTS " --mesh openmp --threads 1");
        st = tl_run(&c, "ls '%s'/out/slurm/tile-*.out | wc -l", dir);
        CHECK(st == 0 && atoi(c.out) == 17, "array tasks' logs: %s", c.out);
        wg_cli_free(&c);
        tl_slurm_hostile_folder(dir);
        char killed[600];
        snprintf(killed, sizeof killed, "%s/killed", dir);
        CHECK(mkdir(killed, 0755) == 0, "%s", killed);
        tl_killed_tiles(killed, "--engine slurm --wait",
                        "its task ended with no record; see ", "r0/r0c1 FAILED: ");
        unsetenv("WG_TILES_POLL");
        unsetenv("SLURM_CONF");
    }
    st = tl_run(&c, "'%s/tests/slurm/cluster.sh' stop '%s'", wg_srcdir(), cl);
    CHECK(st == 0, "stopping the cluster: %s", c.err);
    wg_cli_free(&c);
}

/* --shared-edges --format r16: 129 in tiles of 33 sharing their edge
 * vertices (4 x 4 tiles of exactly 33, the Unity/Unreal layout), each tile
 * the same window of one whole run's .r16, neighbours' shared row and
 * column byte-identical; --format png: 16-bit PNG tiles of 33 x 33. */
#define TL_SE_N 129
#define TL_SE_T 33
#define TL_SE_OPTS "--erosion 2 --hydraulic 5 --mesh scalar"

WG_TEST(tiles_shared_edges_r16_are_the_whole_worlds_windows)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-shared");
    wg_cli c;
    int st = tl_run(&c, "'%s/scripts/tiles' --size %d --tile %d --shared-edges "
                    "--format r16 --sediment -j 2 --out '%s/r16' -- " TL_SE_OPTS,
                    wg_srcdir(), TL_SE_N, TL_SE_T, dir);
    CHECK(st == 0 && strstr(c.out, "in 16 tiles of 33 (4x4, the last column "
                            "and row 33), sharing their edge vertices") &&
              strstr(c.out, "mosaic: height.vrt, water.vrt, sediment.vrt "
                            "(UInt16, scale 1/65535; the sediment offset "
                            "-32768/65535)") &&
              strstr(c.err, "[16/16] "),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    if (st != 0)
        return;
    st = tl_run(&c, "./worldgen --size %d " TL_SE_OPTS " --heightmap "
                "'%s/whole-height.r16' --watermap '%s/whole-water.r16' "
                "--sedimentmap '%s/whole-sediment.r16' --no-image -q",
                TL_SE_N, dir, dir, dir);
    CHECK(st == 0, "the whole run: %s", c.err);
    wg_cli_free(&c);
    if (st != 0)
        return;
    enum { N = TL_SE_N, T = TL_SE_T, K = 4 };
    static const char *const kind[] = {"height", "water", "sediment"};
    for (int k = 0; k < 3; k++) {
        char p[700];
        size_t len = 0;
        snprintf(p, sizeof p, "%s/whole-%s.r16", dir, kind[k]);
        unsigned char *whole = wg_read_file(p, &len);
        CHECK(whole && len == (size_t)N * N * 2, "%s: %zu bytes", p, len);
        if (!whole || len != (size_t)N * N * 2) {
            free(whole);
            return;
        }
        static unsigned char *tile[K][K];
        int ok = 1;
        for (int r = 0; r < K; r++)
            for (int col = 0; col < K; col++) {
                snprintf(p, sizeof p, "%s/r16/tiles/r%d/r%dc%d-%s.r16", dir, r,
                         r, col, kind[k]);
                tile[r][col] = wg_read_file(p, &len);
                CHECK(tile[r][col] && len == (size_t)T * T * 2,
                      "%s: %zu bytes, not %d", p, len, T * T * 2);
                if (!tile[r][col] || len != (size_t)T * T * 2) {
                    ok = 0;
                    continue;
                }
                /* The window of the whole run, row by row. */
                int same = 1;
                for (int y = 0; y < T && same; y++)
                    same = memcmp(tile[r][col] + (size_t)y * T * 2,
                                  whole + ((size_t)(r * (T - 1) + y) * N +
                                           (size_t)col * (T - 1)) * 2,
                                  (size_t)T * 2) == 0;
                CHECK(same, "%s differs from the whole run's window", p);
            }
        /* Neighbours share a column (east) and a row (south), byte for byte. */
        for (int r = 0; ok && r < K; r++)
            for (int col = 0; col < K; col++) {
                const unsigned char *a = tile[r][col];
                if (col + 1 < K) {
                    const unsigned char *b = tile[r][col + 1];
                    int same = 1;
                    for (int y = 0; y < T; y++)
                        same &= memcmp(a + ((size_t)y * T + T - 1) * 2,
                                       b + (size_t)y * T * 2, 2) == 0;
                    CHECK(same, "%s: r%dc%d and r%dc%d differ on their shared "
                          "column", kind[k], r, col, r, col + 1);
                }
                if (r + 1 < K)
                    CHECK(memcmp(a + (size_t)(T - 1) * T * 2, tile[r + 1][col],
                                 (size_t)T * 2) == 0,
                          "%s: r%dc%d and r%dc%d differ on their shared row",
                          kind[k], r, col, r + 1, col);
            }
        for (int r = 0; r < K; r++)
            for (int col = 0; col < K; col++) {
                free(tile[r][col]);
                tile[r][col] = NULL;
            }
        free(whole);
        /* The mosaic (through the tiles' .r16.hdr) is the whole run's. */
        st = tl_run(&c, "cd '%s' && gdal_translate -q -of ENVI r16/%s.vrt "
                    "m-%s.raw && cmp m-%s.raw whole-%s.r16 && gdalinfo "
                    "r16/%s.vrt | grep -e '^Size is 129, 129' -e "
                    "'^Origin = (-3.0234375' | wc -l", dir, kind[k], kind[k],
                    kind[k], kind[k], kind[k]);
        CHECK(st == 0 && atoi(c.out) == 2, "%s mosaic: %s%s", kind[k], c.out,
              c.err);
        wg_cli_free(&c);
    }
    /* The sediment mosaic keeps its tiles' scale and offset for GDAL. */
    st = tl_run(&c, "cd '%s' && gdalinfo r16/sediment.vrt | grep -c -e "
                "'^  Offset: -0.5000076.*Scale:1.5259.*e-05$'", dir);
    CHECK(st == 0 && atoi(c.out) == 1, "sediment.vrt: %s%s", c.out, c.err);
    wg_cli_free(&c);
    /* Run again: every tile kept (found by its .r16 maps), none made. */
    st = tl_run(&c, "'%s/scripts/tiles' --size %d --tile %d --shared-edges "
                "--format r16 --sediment -j 2 --out '%s/r16' -- " TL_SE_OPTS,
                wg_srcdir(), TL_SE_N, TL_SE_T, dir);
    CHECK(st == 0 && strstr(c.err, "0 to make, 16 kept"), "status %d: %s",
          st, c.err);
    wg_cli_free(&c);
    /* The plan records the layout: without --shared-edges, refused. */
    st = tl_run(&c, "'%s/scripts/tiles' --size %d --tile %d --format r16 "
                "--plan-only --out '%s/r16' -- " TL_SE_OPTS, wg_srcdir(),
                TL_SE_N, TL_SE_T, dir);
    CHECK(st == 2 && strstr(c.err, "planned: edges shared"), "status %d: %s",
          st, c.err);
    wg_cli_free(&c);

    /* png: 16-bit PNG tiles of 33 x 33, no mosaic.  Their header read
     * with od (coreutils), not file(1), which a fresh Debian 12 lacks:
     * the signature, IHDR, 33, 33, 16 bits, colour type 0 (grey). */
    st = tl_run(&c, "'%s/scripts/tiles' --size %d --tile %d --shared-edges "
                "--format png -j 2 --out '%s/png' -- " TL_SE_OPTS " && for f in "
                "'%s'/png/tiles/r*/*.png; do od -An -tx1 -N26 \"$f\" | "
                "tr -d ' \\n'; echo; done | grep -c "
                "'^89504e470d0a1a0a0000000d4948445200000021000000211000$' && "
                "ls '%s/png' | grep -c vrt",
                wg_srcdir(), TL_SE_N, TL_SE_T, dir, dir, dir);
    CHECK(strstr(c.out, "mosaic: none") && strstr(c.out, "\n32\n0\n"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* --shared-edges when N-1 is not a multiple of T-1: the plan says so and
 * gives the sizes that make whole tiles. */
WG_TEST(tiles_shared_edges_plan_suggests_whole_tiles)
{
    wg_cli c;
    int st = tl_run(&c, "'%s/scripts/tiles' --size 130 --tile 33 "
                    "--shared-edges --plan-only --out tl-plan-se -- " TL_SE_OPTS
                    " && sed -n '/^--$/,$p' tl-plan-se/plan | sed -n '2p;$p'",
                    wg_srcdir());
    CHECK(st == 0 && strstr(c.out, "25 tiles of 33 (5x5), sharing their edge") &&
              strstr(c.out, "the last column and row are 2 wide, not 33: "
                            "--size 161 gives 5x5 whole tiles, --size 129 4x4") &&
              strstr(c.out, "\n0 0 0 33 33 r0/r0c0\n24 128 128 2 2 r4/r4c4\n"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* The mosaic's geotransform is the whole run's to the bit.  gdalbuildvrt's
 * default resolution is the mean of the tiles' pixel sizes: 9 equal
 * 6/7's summed and divided by 9 came out 1 ulp small (0.857142857142857
 * against 0.8571428571428571), and 100 tiles of 1 in a world of 10 were 3
 * ulp off, a mosaic a little smaller than the world it claims to be.
 * gdalinfo -json gives the doubles whole (its text form rounds to 15
 * digits, which hid this). */
WG_TEST(tiles_mosaic_geotransform_is_the_whole_runs_to_the_bit)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-geo");
    wg_cli c;
    int st = tl_run(&c, "'%s/scripts/tiles' --size 8 --tile 3 -q --no-water "
                    "--out '%s' -- --erosion 1 --hydraulic 1 --mesh scalar "
                    ">/dev/null && ./worldgen --size 8 --erosion 1 "
                    "--hydraulic 1 --mesh scalar -q --no-image --heightmap "
                    "'%s/whole.tif' && cd '%s' && for f in height.vrt whole.tif; do "
                    "gdalinfo -json \"$f\" 2>/dev/null | tr -d ' \\n' | "
                    "grep -o '\"geoTransform\":\\[[^]]*\\]'; done",
                    wg_srcdir(), dir, dir, dir);
    char *nl = c.out ? strchr(c.out, '\n') : NULL;
    CHECK(st == 0 && nl && strncmp(c.out, nl + 1, (size_t)(nl - c.out)) == 0 &&
              strstr(c.out, "geoTransform"),
          "status %d: the mosaic, then the whole run:\n%s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* A GeoTIFF mosaic says what the whole run's GeoTIFF says: PixelIsPoint,
 * and the run's options and version, so `gdal_translate height.vrt
 * world.tif` is the whole run's map in its metadata too.  gdalbuildvrt
 * carries no metadata: the mosaic read as AREA_OR_POINT=Area, and the
 * GeoTIFF made of it said PixelIsArea where the whole run's said
 * PixelIsPoint. */
WG_TEST(tiles_mosaic_metadata_is_the_whole_runs)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-meta");
    wg_cli c;
    int st = tl_run(&c, "'%s/scripts/tiles' --size 8 --tile 3 -q --sediment "
                    "--out '%s' -- --erosion 1 --hydraulic 1 --mesh scalar "
                    ">/dev/null && ./worldgen --size 8 --erosion 1 "
                    "--hydraulic 1 --mesh scalar -q --no-image --heightmap "
                    "'%s/h.tif' --watermap '%s/w.tif' --sedimentmap "
                    "'%s/s.tif' && cd '%s' && md() { gdalinfo \"$1\" | sed -n "
                    "'/^Metadata:/,/^[A-Z]/p' | grep '^  '; } && "
                    "for k in height water sediment; do f=$(echo $k | cut -c1); "
                    "gdal_translate -q $k.vrt $k.tif && md $f.tif >$k.want && "
                    "grep -q AREA_OR_POINT=Point $k.want && md $k.vrt | "
                    "diff $k.want - && md $k.tif | diff $k.want - || exit 1; "
                    "done",
                    wg_srcdir(), dir, dir, dir, dir, dir);
    CHECK(st == 0 && !c.out[0], "status %d: the whole run's metadata, "
          "then the mosaic's:\n%s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* An .r16 mosaic unscaled is the whole run's .r16 unscaled, to the bit.
 * gdalbuildvrt (GDAL 3.6) writes a band's <Scale> and <Offset> with 16
 * digits, and 1/65535 and -32768/65535 need 17: the sediment's offset
 * came out -0.5000076295109483 for the tiles' -0.50000762951094835, so a
 * cell with no sediment (32768) read -1.1e-16 from the mosaic and 0 from
 * the whole run's map (one cell of 21 x 21 here). */
WG_TEST(tiles_r16_mosaic_unscales_as_the_whole_run)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-r16-unscale");
    wg_cli c;
    int st = tl_run(&c, "'%s/scripts/tiles' --size 21 --tile 4 --format r16 "
                    "--sediment -q --out '%s' -- --erosion 2 --hydraulic 5 "
                    "--mesh scalar >/dev/null && ./worldgen --size 21 "
                    "--erosion 2 --hydraulic 5 --mesh scalar -q --no-image "
                    "--heightmap '%s/h.r16' --watermap '%s/w.r16' "
                    "--sedimentmap '%s/s.r16' && cd '%s' && for k in height "
                    "water sediment; do f=$(echo $k | cut -c1); "
                    "for m in $k.vrt $f.r16; do gdal_translate -q -of ENVI "
                    "-ot Float32 -unscale $m $m.raw >/dev/null || exit 1; "
                    "done; cmp $k.vrt.raw $f.r16.raw || "
                    "grep -e Offset -e Scale $k.vrt; done",
                    wg_srcdir(), dir, dir, dir, dir, dir);
    CHECK(st == 0 && !c.out[0], "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(tiles_usage_errors)
{
    static const struct {
        const char *args, *says;
    } bad[] = {
        {"--tile 10", "--size is required"},
        {"--size 100", "--tile is required"},
        {"--size 100 --tile 0", "--tile '0'"},
        {"--size 100 --tile 101", "--tile '101'"},
        {"--size 1048578 --tile 10", "--size '1048578'"},
        {"--size 100 --tile 10 --engine make", "--engine 'make'"},
        {"--size 100 --tile 10 --wait", "are for --engine slurm"},
        {"--size 100 --tile 10 --engine slurm -j 2", "are for --engine parallel"},
        {"--size 100 --tile 10 --transfer", "--transfer needs --sshlogin"},
        {"--size 100 --tile 10 --transfer -S :", "cannot be a host"},
        {"--size 100 --tile 10 -- --region 0,0,5,5", "sets --region"},
        {"--size 100 --tile 10 -- --heightmap h.png", "sets --heightmap"},
        {"--size 100 --tile 10 -- --heightm h.png", "sets --heightmap"},
        {"--size 100 --tile 10 -- --json=j.json", "sets --json"},
        /* -V in a cluster printed the version in every tile, and the plan
         * kept it. */
        {"--size 100 --tile 10 -- -qV", "worldgen option '-qV': the script runs worldgen itself"},
        {"--size 100 --tile 10 -- -hq", "worldgen option '-hq': the script runs worldgen itself"},
        {"--size 100 --tile 10 -- --show", "a tile makes maps, no picture or mesh (--show"},
        {"--size 100 --tile 10 -- --gl g.glb", "a tile makes maps, no picture or mesh (--gltf"},
        {"--size 100 --tile 10 -- --sedimentmap s.tif",
         "sets --sedimentmap for each tile (give --sediment)"},
        {"--size 100 --tile 10 -- --size 5", "sets --size"},
        {"--size 100 --tile 10 -- --normalmap n.tif", "sets --normalmap for each tile (give --normals before --)"},
        {"--size 100 --tile 10 -- --albe a.png", "sets --albedo for each tile (give --albedo before --)"},
        {"--size 100 --tile 10 --bogus", "unknown option '--bogus'"},
        {"--size 100 --tile 10 --format jpg", "--format 'jpg'"},
        {"--size 100 --tile 1 --shared-edges", "--shared-edges needs --tile 2"},
        /* worldgen's own options, checked by worldgen before anything is
         * planned: they had failed every tile, and left a plan that
         * refused the corrected command. */
        {"--size 100 --tile 10 -- --octaves 99",
         "worldgen options after --: --octaves: '99' is out of range (valid: 1..16)"},
        {"--size 100 --tile 10 -- --threads 0", "--threads: '0' is out of range"},
        {"--size 100 --tile 10 -- --bogus", "unknown option '--bogus'"},
        /* A last option without its value: it had taken the script's
         * --size for it ("--seed: '--size' is not a whole number"). */
        {"--size 100 --tile 10 -- --seed", "after --: option '--seed' needs a value"},
        {"--size 100 --tile 10 -- --gpu", "after --: option '--gpu' needs a value"},
        {"--size 100 --tile 10 -- --seed 5 --", "worldgen option '--': worldgen takes no"},
        {"--size 100 --tile 10 -j abc", "-j 'abc': N tiles at once"},
        {"--size 100 --tile 10 -j 2x", "-j '2x'"},
        {"--size 100 --tile 10 -j 0%", "-j '0%': N tiles"}, /* parallel: no job */
        {"--size 100 --tile 10 -j 0", "-j '0': N tiles"}, /* parallel: every tile at once */
        /* A plan of a line a tile, bounded: 1.1e12 lines had filled the
         * disk and left plan.tmp. */
        {"--size 1048577 --tile 1",
         "--tile 1 makes 1099513724929 tiles of the 1048577 world; at most 1000000 "
         "(--tile 1049 or more)"},
        {"--size 1048577 --tile 1049 --shared-edges", "(--tile 1050 or more)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wg_cli c;
        int st = tl_run(&c, "'%s/scripts/tiles' --out tl-usage %s; st=$?; "
                        "test -e tl-usage && echo left; exit $st",
                        wg_srcdir(), bad[i].args);
        CHECK(st == 2 && strstr(c.err, bad[i].says) && c.out_len == 0,
              "%s: status %d: %s %s", bad[i].args, st, c.out, c.err);
        wg_cli_free(&c);
    }
    /* parallel's forms of -j pass; a folder named like an option is a
     * folder (mkdir and readlink had taken it for their options). */
    wg_cli d;
    int dst = tl_run(&d, "'%s/scripts/tiles' --size 40 --tile 20 -q -j 50%% --out -d "
                     "--plan-only && test -s ./-d/plan && rm -r ./-d && echo ok",
                     wg_srcdir());
    CHECK(dst == 0 && strcmp(d.out + d.out_len - 3, "ok\n") == 0, "status %d: %s %s", dst,
          d.out, d.err);
    wg_cli_free(&d);
    /* WG_TILES_POLL, --wait's pause: one that sleep refuses had made the
     * wait poll Slurm without a pause, a sleep error a poll. */
    static const char *const polls[] = {"%n", "-1", "0", "0.0", "1e3", "2s", "1.2.3"};
    for (size_t i = 0; i < sizeof polls / sizeof polls[0]; i++) {
        dst = tl_run(&d, "WG_TILES_POLL='%s' '%s/scripts/tiles' --size 40 --tile 20 "
                     "--engine slurm --wait --out tl-poll; st=$?; test -e tl-poll && echo left; "
                     "exit $st", polls[i], wg_srcdir());
        char says[200];
        snprintf(says, sizeof says, "WG_TILES_POLL '%s': the seconds between --wait's polls, "
                 "a number over 0", polls[i]);
        CHECK(dst == 2 && strstr(d.err, says) && d.out_len == 0, "'%s': status %d: %s %s",
              polls[i], dst, d.out, d.err);
        wg_cli_free(&d);
    }
    /* A --worldgen named like an option is a file too. */
    dst = tl_run(&d, "rm -rf tl-wg && mkdir tl-wg && cd tl-wg && cp '%s/worldgen' ./-wg && "
                 "'%s/scripts/tiles' --size 40 --tile 20 -q --plan-only --worldgen -wg --out o "
                 ">/dev/null && grep '^worldgen ' o/plan", wg_srcdir(), wg_srcdir());
    CHECK(dst == 0 && strstr(d.out, "/tl-wg/-wg\n") && !d.err[0], "status %d: %s %s", dst,
          d.out, d.err);
    wg_cli_free(&d);
    /* status of such a folder, of one named '-' and of one that CDPATH
     * names elsewhere too is of the folder here: cd had taken -d for its
     * option ("-d holds no plan"), - for $OLDPWD, and CDPATH's for this. */
    dst = tl_run(&d, "rm -rf tl-st && mkdir -p tl-st && cd tl-st && t='%s/scripts/tiles' && "
                 "$t --size 40 --tile 10 --plan-only --out elsewhere/x >/dev/null && "
                 "for o in -d - x; do $t --size 40 --tile 20 --plan-only --out \"$o\" >/dev/null "
                 "&& { OLDPWD=$PWD/elsewhere/x CDPATH=$PWD/elsewhere $t status \"$o\"; "
                 "echo \"status $?\"; }; done",
                 wg_srcdir());
    CHECK(dst == 0 &&
              strcmp(d.out, "0/4 tiles done\nstatus 3\n0/4 tiles done\nstatus 3\n"
                            "0/4 tiles done\nstatus 3\n") == 0 &&
              !d.err[0],
          "status %d: %s %s", dst, d.out, d.err);
    wg_cli_free(&d);
    wg_cli c;
    int st = tl_run(&c, "'%s/scripts/tiles' --help", wg_srcdir());
    CHECK(st == 0 && strstr(c.out, "Usage: scripts/tiles"), "%s", c.err);
    wg_cli_free(&c);
    /* status of a folder whose plan is empty or cut short: said so, exit 1
     * (it had printed a shell error and '9/ tiles done', exit 0). */
    st = tl_run(&c, "mkdir -p tl-cut && : > tl-cut/plan && '%s/scripts/tiles' status tl-cut; "
                "echo \"status $?\"; printf 'size 9\\ntiles 4\\n--\\n0 0 0 5 5 r0/r0c0\\n' "
                "> tl-cut/plan && '%s/scripts/tiles' status tl-cut; echo \"status $?\"",
                wg_srcdir(), wg_srcdir());
    CHECK(strcmp(c.out, "status 1\nstatus 1\n") == 0 &&
              strstr(c.err, "tl-cut/plan is not a whole plan") && !strstr(c.err, "syntax"),
          "%s%s", c.out, c.err);
    wg_cli_free(&c);
    /* status '': a usage error (it had been ./, " holds no plan", exit 1). */
    st = tl_run(&c, "'%s/scripts/tiles' status ''", wg_srcdir());
    CHECK(st == 2 && strstr(c.err, "scripts/tiles: status: '' names no folder") &&
              !strstr(c.err, "holds no plan"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    /* status of a folder that is not there, or of a file: said so (both
     * had been "holds no plan"). */
    st = tl_run(&c, "t='%s/scripts/tiles'; $t status tl-none; echo $?; "
                "touch tl-file && $t status tl-file; echo $?", wg_srcdir());
    CHECK(strcmp(c.out, "1\n1\n") == 0 &&
              strstr(c.err, "tl-none: No such file or directory") &&
              strstr(c.err, "tl-file: Not a directory") &&
              !strstr(c.err, "holds no plan"),
          "%s%s", c.out, c.err);
    wg_cli_free(&c);
    /* An empty value names the option and what it takes (it had said
     * "needs a value", as of a missing one). */
    st = tl_run(&c, "'%s/scripts/tiles' --size 40 --tile= --out x", wg_srcdir());
    CHECK(st == 2 && strstr(c.err, "--tile '': an empty value (valid: a decimal "
                                   "whole number 1..--size)"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    /* --plan-only: the plan and its halos, nothing run. */
    st = tl_run(&c, "'%s/scripts/tiles' --size %d --tile %d --out "
                "tl-plan --plan-only -- " TL_OPTS " && wc -l < tl-plan/plan && "
                "ls tl-plan/tiles | wc -l", wg_srcdir(), TL_N, TL_T);
    CHECK(st == 0 && strstr(c.out, "16 tiles of 300 (4x4)") &&
              strstr(c.out, "halo 45 (4 thermal passes + 2 x 20") &&
              strstr(c.out, "largest task: 390x390") &&
              strstr(c.out, "\n26\n0\n"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    /* The counts by worldgen's prefixes: the halo had been the default
     * counts' (1649 at 1025 for --hyd 0 --ero 0). */
    st = tl_run(&c, "'%s/scripts/tiles' --size 1025 --tile 256 --out tl-plan-abbr "
                "--plan-only -- --ero 0 --hyd=3", wg_srcdir());
    CHECK(st == 0 && strstr(c.out, "halo 7 (0 thermal passes + 2 x 3 hydraulic steps + 1)"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* Under a locale whose decimal point is a comma the report's figures are
 * the tiles' own: mawk had read their seconds (0.012, 2.5e-05) as 0 and 2,
 * so the walls were 0,000 s, the stages whole seconds and the rate inf. */
WG_TEST(tiles_report_in_a_comma_locale)
{
    const char *loc = wg_comma_locale();
    if (!loc) {
        wg_skip("localedef cannot make de_DE.UTF-8 here");
        return;
    }
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-comma");
    wg_cli c;
    int st = tl_run(&c, "%s '%s/scripts/tiles' --size 40 --tile 20 -j 2 --out '%s/out' "
                    "-- --erosion 2 --hydraulic 4 --mesh scalar 2>&1 && "
                    "grep -c '[0-9],[0-9]' '%s/out/report.txt'; "
                    "grep '^tile wall' '%s/out/report.txt'",
                    loc, wg_srcdir(), dir, dir, dir);
    CHECK(st == 0 && strstr(c.out, "\n0\ntile wall: total 0.") &&
              !strstr(c.out, "mean 0.000 s") && !strstr(c.out, "rate inf"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* The report's options are the plan's, and --plan-only's folder is the
 * folder, backslashes and all.  Given to awk by -v, which reads escapes,
 * the options --gpu 'a\tb\\c' (the plan's %q: a\\tb\\\\c) had been said
 * as a\tb\\c, and a folder x\ny had been printed on two lines. */
WG_TEST(tiles_report_says_the_plans_options)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-escapes");
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && '%s/scripts/tiles' --size 20 --tile 20 -q --out out -- "
                    "--erosion 1 --hydraulic 1 --mesh scalar --gpu 'a\\tb\\\\c' && "
                    "grep '^options ' out/plan | cut -c9- > plan.opts && "
                    "sed -n 's/^worldgen options: //p' out/report.txt | cmp - plan.opts && "
                    "'%s/scripts/tiles' --size 20 --tile 20 --plan-only --out 'x\\ny' | head -n 1",
                    dir, wg_srcdir(), wg_srcdir());
    CHECK(st == 0 && strstr(c.out, "/x\\ny/plan: 1 tiles of 20"), "status %d: %s%s", st, c.out,
          c.err);
    wg_cli_free(&c);
}

/* --transfer's plan for the hosts names the copy of worldgen in DIR/.xfer
 * as it is (here a stand-in parallel shows it): sed had read the folder's
 * '&' as its match (another worldgen), and its '|' and '\1' as its own
 * syntax (a failure that left .xfer behind).  A folder with a newline,
 * which the plan cannot hold on a line, is refused. */
WG_TEST(tiles_transfer_plan_names_the_copy)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-xfer");
    wg_cli c;
    tl_run(&c, "cd '%s' && mkdir bin && printf '#!/bin/sh\\ngrep \"^worldgen \" plan >&2\\n"
               "exit 1\\n' > bin/parallel && chmod +x bin/parallel && "
               "for d in 'a&b' 'a|b' 'a\\1b'; do PATH=$PWD/bin:$PATH '%s/scripts/tiles' "
               "--size 20 --tile 10 -q --transfer -S h --out \"$d\" 2>&1 | grep '^worldgen '; "
               "ls -A \"$d\" | grep -x .xfer; done; PATH=$PWD/bin:$PATH '%s/scripts/tiles' "
               "--size 20 --tile 10 -q --transfer -S h --out \"$(printf 'n\\ny')\"; "
               "echo \"status $?\"",
               dir, wg_srcdir(), wg_srcdir());
    char want[2048];
    snprintf(want, sizeof want, "worldgen %s/a&b/.xfer/bin/worldgen\nworldgen %s/a|b/.xfer/"
             "bin/worldgen\nworldgen %s/a\\1b/.xfer/bin/worldgen\nstatus 2\n", dir, dir, dir);
    CHECK(strcmp(c.out, want) == 0 && strstr(c.err, "has a newline"), "%s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* A host's tiles (-S, here an ssh stand-in that runs the command as a
 * login shell of sh would) in a folder caf\303\251: printf %q had quoted
 * it as $'caf\303\251', which sh read as '$' and backslashes, and every
 * tile had failed ("no folder").  And in $'...' the folder's braces were
 * bare: GNU parallel read its {} as the tile, and a {=`touch pwned`=} as
 * Perl to run, here on this machine too. */
WG_TEST(tiles_ssh_host_with_a_login_shell_of_sh)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-sh-host");
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && cat > ssh <<'E'\n#!/bin/sh\n"
                    "while [ $# -gt 0 ]; do case $1 in -[opliSF]) shift 2 ;; -*) shift ;;\n"
                    "*) shift; [ \"$1\" = -- ] && shift; break ;; esac; done\n"
                    "exec /bin/sh -c \"$*\"\nE\nchmod +x ssh; tiles() { '%s/scripts/tiles' "
                    "--size 20 --tile 10 -q \"$@\" -- --erosion 1 --hydraulic 1 --mesh scalar | "
                    "grep -c '^world 20x20 in 4 tiles of 10 '; }; SHELL=/bin/sh tiles -S "
                    "\"$PWD/ssh h\" --out \"$(printf 'caf\\303\\251{}{.}{=1=}')\"; "
                    "tiles --out \"$(printf 'caf\\303\\251{=`touch pwned`=}')\"; "
                    "test -e pwned && echo PWNED",
                    dir, wg_srcdir());
    CHECK(st == 1 && strcmp(c.out, "1\n1\n") == 0, "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* A worldgen whose path has a newline is refused before anything is
 * planned: the plan keeps the path on a line, so its second part had
 * become a key, every tile had failed, and the plan had refused the next
 * command, with the right worldgen, for ever. */
WG_TEST(tiles_worldgen_path_with_a_newline)
{
    char dir[512];
    tl_dir(dir, "tl-newline");
    wg_cli c;
    tl_run(&c, "cd '%s' && mkdir 'wg\nx' && cp '%s/worldgen' 'wg\nx/worldgen' && "
                    "'%s/scripts/tiles' --size 40 --tile 20 --plan-only -q --worldgen "
                    "\"$PWD/wg\nx/worldgen\" --out out; echo \"status $?\"; "
                    "'%s/scripts/tiles' --size 40 --tile 20 --plan-only -q --out out",
                    dir, wg_srcdir(), wg_srcdir(), wg_srcdir());
    CHECK(strstr(c.out, "status 2\n") &&
              strstr(c.err, "a path with a newline cannot go in the plan"),
          "%s%s", c.out, c.err);
    CHECK(c.status == 0 && strstr(c.out, "plan ") && !strstr(c.err, "other options"),
          "the right worldgen refused after it: status %d: %s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* An --out folder that takes no files (read-only; here its .lock is a
 * folder, which root cannot write either) is said to be so: it had been
 * called busy, "another scripts/tiles is running". */
WG_TEST(tiles_out_that_takes_no_files)
{
    char dir[512];
    tl_dir(dir, "tl-nolock");
    wg_cli c;
    int st = tl_run(&c, "mkdir -p '%s/out/.lock' && '%s/scripts/tiles' --size 40 --tile 20 "
                    "--plan-only -q --out '%s/out'", dir, wg_srcdir(), dir);
    CHECK(st == 1 && strstr(c.err, "tl-nolock/out: Is a directory") &&
              !strstr(c.err, "another scripts/tiles is running") && !c.out[0],
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* An append-only --out (chattr +a) takes new names but renames and removes
 * none: plan.tmp had been left in it, with "cannot write DIR/plan".  Now
 * refused first, saying why, with nothing made in it. */
WG_TEST(tiles_append_only_out_leaves_no_temporary)
{
    char dir[512];
    tl_dir(dir, "tl-append");
    wg_cli c;
    int st = tl_run(&c, "mkdir -p '%s/out' && chattr +a '%s/out' 2>/dev/null || "
                    "{ echo no-chattr; exit 0; }; '%s/scripts/tiles' --size 40 --tile 20 "
                    "--plan-only -q --out '%s/out'; st=$?; ls -A '%s/out'; chattr -a '%s/out'; "
                    "exit $st", dir, dir, wg_srcdir(), dir, dir, dir);
    if (strcmp(c.out, "no-chattr\n") == 0) {
        wg_skip("chattr +a does not work here (root on a file system with it)");
        wg_cli_free(&c);
        return;
    }
    CHECK(st == 1 && strstr(c.err, "tl-append/out is append-only or immutable") && !c.out[0],
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* A folder whose name has a newline and, after it, an 'a' or an 'i' is no
 * append-only or immutable one: lsattr's second line (the name's rest)
 * had been read as its flags. */
WG_TEST(tiles_out_with_a_newline_is_no_append_only_folder)
{
    char dir[512];
    tl_dir(dir, "tl-nl-ai");
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && '%s/scripts/tiles' --size 40 --tile 20 --plan-only -q "
                    "--out \"$(printf 'x\\nai')\" && test -s \"$(printf 'x\\nai')/plan\"",
                    dir, wg_srcdir());
    CHECK(st == 0 && !c.err[0], "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* GNU parallel failing before any tile (a TMPDIR it cannot use) is said to
 * be parallel's failure: the run had said 'the same command again makes
 * them', which meets the same failure. */
WG_TEST(tiles_parallel_failing_before_any_tile)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-parfail");
    wg_cli c;
    int st = tl_run(&c, "touch '%s/file' && TMPDIR='%s/file' '%s/scripts/tiles' --size 40 "
                    "--tile 20 -q -j 2 --out '%s/out' -- --erosion 2 --hydraulic 4 "
                    "--mesh scalar", dir, dir, wg_srcdir(), dir);
    CHECK(st == 1 && strstr(c.err, "GNU parallel failed (status ") &&
              strstr(c.err, "before any tile: none made") &&
              !strstr(c.err, "the same command again"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* A run interrupted (SIGINT to its process group, as Ctrl-C or timeout
 * send it) leaves no temporary in its folder: wrappers interrupt it inside
 * a tile's worldgen, just after parallel's last tile, and in the water's
 * gdalbuildvrt, and then a run completes.  A tile had left its .rss, the
 * mosaic its .water.list and .water.vrt.tmp, and the run after the last
 * tile its .todo, which no later run removed (it had nothing to make). */
WG_TEST(tiles_interrupted_leaves_no_temporaries)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-interrupt");
    wg_cli c = tl_sh(
        "cd '%s' && mkdir bin && cat > run.sh <<'EOF'\n"
        "d=$PWD src=$1\n"
        "for t in parallel gdalbuildvrt; do\n"
        "    printf '#!/bin/sh\\n%%s \"$@\"; st=$?\\n' \"$(command -v $t)\" > bin/$t\n"
        "done\n"
        "echo \"[ -e '$d/int-par' ] && kill -INT 0; exit \\$st\" >> bin/parallel\n"
        "echo \"case \\\"\\$*\\\" in *.water.vrt.tmp*) [ -e '$d/int-vrt' ] && kill -INT 0;; esac; exit \\$st\" >> bin/gdalbuildvrt\n"
        "printf '#!/bin/sh\\nfor a; do [ \"$a\" = --version ] && exec %%s/worldgen \"$@\"; done\\n"
        "[ -e %%s/int-wg ] && kill -INT 0\\nexec %%s/worldgen \"$@\"\\n' \"$src\" \"$d\" \"$src\" > bin/wg\n"
        "chmod +x bin/*\n"
        "r() {\n"
        "    rm -f int-*; [ $# = 0 ] || touch \"$@\"\n"
        "    PATH=$d/bin:$PATH setsid -w \"$src/scripts/tiles\" --size 21 --tile 8 --format r16 --sediment \\\n"
        "        -q --out out --worldgen \"$d/bin/wg\" -- --erosion 2 --hydraulic 3 >/dev/null 2>&1\n"
        "    echo \"${1:-done} $(cd out && find . ! -name .lock ! -name plan ! -name '*.vrt' ! -name report.txt \\\n"
        "        ! -name '*.r16' ! -name '*.hdr' ! -name '*.json' ! -name '*.log' ! -name '*.done' \\\n"
        "        ! -name '*.failed' ! -type d | sort | tr '\\n' ' ')\"\n"
        "}\n"
        "r int-wg; r int-par; r int-vrt; r\n"
        "EOF\n"
        "bash run.sh '%s'", dir, wg_srcdir());
    CHECK(c.status == 0 && !strcmp(c.out, "int-wg \nint-par \nint-vrt \ndone \n"),
          "status %d: left behind:\n%s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* A TERM to the script alone (kill PID, as a service manager or a CI
 * runner stops it), not to its process group, stops its jobs too, before
 * it ends: parallel and the tiles' worldgen runs had gone on without it,
 * holding the lock (the same command again was told "another
 * scripts/tiles is running").  The wrapper's tile runs stand in for long
 * ones (each records its process and sleeps), until the marker goes; then
 * the same command makes the world.  (A process ended but not yet reaped,
 * a zombie, does not run on.) */
WG_TEST(tiles_term_to_the_script_alone_stops_its_jobs)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-term");
    wg_cli c = tl_sh(
        "cd '%s' && mkdir bin && cat > run.sh <<'EOF'\n"
        "d=$PWD src=$1\n"
        "printf '#!/bin/sh\\nfor a; do [ \"$a\" = --version ] && exec %%s/worldgen \"$@\"; done\\n"
        "[ -e %%s/hold ] && echo $$ >> %%s/pids && exec sleep 60\\nexec %%s/worldgen \"$@\"\\n' "
        "\"$src\" \"$d\" \"$d\" \"$src\" > bin/wg\n"
        "chmod +x bin/wg; touch hold\n"
        "t() { \"$src/scripts/tiles\" --size 21 --tile 8 -q --out out --worldgen \"$d/bin/wg\" \\\n"
        "      -- --erosion 2 --hydraulic 3 --mesh scalar; }\n"
        "(exec setsid \"$src/scripts/tiles\" --size 21 --tile 8 -q --out out \\\n"
        "    --worldgen \"$d/bin/wg\" -- --erosion 2 --hydraulic 3 --mesh scalar) >/dev/null 2>&1 & p=$!\n"
        "i=0; until [ -s pids ] || [ $i -ge 200 ]; do sleep 0.1; i=$((i + 1)); done\n"
        "[ -s pids ] || { echo 'no tile started'; exit 1; }\n"
        "case $(ps -o args= -p $p) in *scripts/tiles*) ;; *) echo \"$p is not the script\";; esac\n"
        "kill -TERM $p; wait $p; echo \"status $?\"\n"
        "for q in $(cat pids); do\n"
        "    ps -o stat= -p $q | grep -qv Z && echo \"tile's worldgen $q runs on\"\n"
        "done\n"
        "pgrep -f \"parallel.*$d/out\" >/dev/null && echo 'parallel runs on'\n"
        "rm hold; t >/dev/null 2>&1; echo \"again $?\"\n"
        "EOF\n"
        "bash run.sh '%s'", dir, wg_srcdir());
    CHECK(c.status == 0 && !strcmp(c.out, "status 143\nagain 0\n"),
          "status %d:\n%s%s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

/* A tiles' folder that fills up: each failed tile says why (worldgen's own
 * "No space left on device"), though its log could not be written (it had
 * said "failed: ; see" an empty log); a failed Slurm submission takes its
 * list of tiles back (each try had left one). */
WG_TEST(tiles_failures_say_why_and_leave_no_list)
{
    if (tl_ready() != 0)
        return;
    /* The mount goes with the shell that made it, however that ends. */
    wg_cli c;
    int st = tl_run(&c, "mkdir -p tl-full && mount -t tmpfs -o size=300k tmpfs tl-full || "
                    "exit 77; trap 'umount tl-full' EXIT; '%s/scripts/tiles' --size 257 "
                    "--tile 128 --out tl-full/t -- --hydraulic 20 --erosion 2 --mesh scalar",
                    wg_srcdir());
    if (st == 77)
        wg_skip("cannot mount a small tmpfs here (not root?)");
    else
        CHECK(st == 1 && strstr(c.err, "FAILED (status 1): worldgen: --") &&
                  strstr(c.err, ": No space left on device; see ") &&
                  !strstr(c.err, "write error") && !strstr(c.err, "failed: ;"),
              "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    /* Slurm's commands as stand-ins whose sbatch fails at once (a real
     * one without a cluster retries for two minutes). */
    st = tl_run(&c, "mkdir -p tl-sb && cd tl-sb && "
                "printf '#!/bin/sh\\necho \"sbatch: error: no cluster\" >&2; exit 1\\n' > sbatch && "
                "printf '#!/bin/sh\\nexit 1\\n' > scontrol && printf '#!/bin/sh\\n' > squeue && "
                "chmod +x sbatch scontrol squeue && cd .. && PATH=$PWD/tl-sb:$PATH "
                "'%s/scripts/tiles' --size 65 --tile 32 --out tl-nosb --engine slurm -- "
                "--hydraulic 2 --mesh scalar; echo \"status $?\"; ls -A tl-nosb/slurm",
                wg_srcdir());
    CHECK(strcmp(c.out, "status 1\n") == 0 && strstr(c.err, "sbatch failed"),
          "%s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* A resume on a full disk: the plan, the same, is not written again (it
 * had been, so the resume stopped on the shell's and awk's raw write
 * errors and "cannot write .../plan" without a reason); a new plan that
 * cannot be written says why. */
WG_TEST(tiles_resume_on_a_full_disk_keeps_its_plan)
{
    if (tl_ready() != 0)
        return;
    wg_cli c;
    int st = tl_run(&c, "mkdir -p tl-fullp && mount -t tmpfs -o size=400k tmpfs tl-fullp || "
                    "exit 77; trap 'umount tl-fullp' EXIT; t='%s/scripts/tiles'; "
                    "$t --size 64 --tile 32 --out tl-fullp/t --plan-only -- --hydraulic 2 "
                    ">/dev/null || exit 3; cp tl-fullp/t/plan before; "
                    "dd if=/dev/zero of=tl-fullp/fill bs=4k 2>/dev/null; "
                    "$t --size 64 --tile 32 --out tl-fullp/t --plan-only -- --hydraulic 2 "
                    ">/dev/null || exit 4; cmp -s before tl-fullp/t/plan || exit 5; "
                    "$t --size 64 --tile 16 --out tl-fullp/u --plan-only -- --hydraulic 2; "
                    "echo \"status $?\"",
                    wg_srcdir());
    if (st == 77)
        wg_skip("cannot mount a small tmpfs here (not root?)");
    else
        CHECK(st == 0 && strcmp(c.out, "status 1\n") == 0 &&
                  strstr(c.err, "cannot write ") &&
                  strstr(c.err, "/plan: No space left on device") &&
                  !strstr(c.err, "write error") && !strstr(c.err, "awk"),
              "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* The same full folder under -q: the tiles' records of why they failed
 * (tiles/NAME.failed) could not be written either, and -q had said only
 * "N of M tiles not made (0 failed)".  Now each failure without a record
 * is said as it comes, and the count has it among the failed, with no
 * record of why; it is not said again as a job that ended with no record
 * (killed with its shell), as it had been after its own failure. */
WG_TEST(tiles_quiet_on_a_full_disk_says_why)
{
    if (tl_ready() != 0)
        return;
    wg_cli c;
    int st = tl_run(&c, "mkdir -p tl-fullq && mount -t tmpfs -o size=300k tmpfs tl-fullq || "
                    "exit 77; trap 'umount tl-fullq' EXIT; '%s/scripts/tiles' --size 257 "
                    "--tile 128 -q --out tl-fullq/t -- --hydraulic 20 --erosion 2 --mesh scalar",
                    wg_srcdir());
    if (st == 77)
        wg_skip("cannot mount a small tmpfs here (not root?)");
    else
        CHECK(st == 1 && strstr(c.err, "FAILED (status 1): worldgen: --") &&
                  strstr(c.err, ": No space left on device; see ") &&
                  strstr(c.err, " of them with no record of why in ") &&
                  !strstr(c.err, "(0 failed)") && !strstr(c.err, "was not made: its job ended") &&
                  !strstr(c.err, "with no record or not started"),
              "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* The default -j reads worldgen's --threads and --mesh as worldgen does,
 * by a prefix too (--thr 2, --t=2, --me=scalar), the last one given, a
 * value as a value: with --thr 2 the tiles had run one at a time, and
 * --gpu scalar had been taken for --mesh scalar.  A stand-in parallel
 * records its -j. */
WG_TEST(tiles_default_jobs_read_threads_by_prefix)
{
    char dir[512];
    tl_dir(dir, "tl-jobs");
    static const struct { const char *opts, *want; } runs[] = {
        {"--threads 2", "-j 50%"},
        {"--thr 2", "-j 50%"},
        {"--t=4", "-j 25%"},
        {"--threads 1 --thr 5", "-j 20%"},
        {"--mesh openmp", "-j 1 "},
        {"--mesh scalar", "-j 100%"},
        {"--me=scalar", "-j 100%"},
        {"--mesh scalar,openmp", "-j 1 "},
        {"--gpu scalar --mesh openmp", "-j 1 "},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        wg_cli c;
        tl_run(&c, "mkdir -p '%s/bin' && printf '#!/bin/sh\\necho \"$*\" "
               ">>\"$0.args\"\\n' >'%s/bin/parallel' && chmod +x "
               "'%s/bin/parallel' && rm -rf '%s/out' '%s/bin/parallel.args' "
               "&& PATH='%s/bin':$PATH '%s/scripts/tiles' --size 20 --tile 10 "
               "-q --out '%s/out' -- %s >/dev/null 2>&1; cat "
               "'%s/bin/parallel.args'",
               dir, dir, dir, dir, dir, dir, wg_srcdir(), dir, runs[i].opts,
               dir);
        CHECK(strstr(c.out, runs[i].want), "-- %s: wanted '%s' in: %s",
              runs[i].opts, runs[i].want, c.out);
        wg_cli_free(&c);
    }
}

/* A folder's control characters are shown as \xNN in the script's own
 * messages, as worldgen shows them: the byte itself had gone to the
 * terminal, which acts on it. */
WG_TEST(tiles_messages_show_control_characters)
{
    wg_cli c = tl_sh("'%s/scripts/tiles' --size 64 --tile 32 --out \"/proc/q$(printf '\\001')\"",
                     wg_srcdir());
    CHECK(c.status == 1 && strstr(c.err, "scripts/tiles: cannot make /proc/q\\x01\n") &&
              !strchr(c.err, '\001'),
          "status %d: %s", c.status, c.err);
    wg_cli_free(&c);
}

/* A Slurm run's tasks and mosaic job hold no lock: while its jobs are
 * queued, a run of the parallel engine on the same folder is refused as
 * a Slurm run is (it had made the tiles the tasks were making, and the
 * mosaic beside the mosaic job's).  squeue is a stand-in that names the
 * job queued. */
WG_TEST(tiles_parallel_run_waits_for_queued_slurm_jobs)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-queued");
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && mkdir bin && printf '#!/bin/sh\\necho 4242\\n' >bin/squeue "
                    "&& chmod +x bin/squeue && T='%s/scripts/tiles --size 33 --tile 17 -q "
                    "--out out -- --hydraulic 2 --mesh scalar' && $T >/dev/null && "
                    "rm out/tiles/r0/r0c0.done && mkdir -p out/slurm && echo 4242 >out/slurm/jobs && "
                    "PATH=$PWD/bin:$PATH $T; echo \"status $?\"; ls out/tiles/r0",
                    dir, wg_srcdir());
    CHECK(st == 0 && strstr(c.out, "status 1\n") && !strstr(c.out, "r0c0.done") &&
              strstr(c.err, "scripts/tiles: the last run's Slurm jobs are still queued "
                            "(4242): wait, or scancel them"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* A tile's .done record that is no file is not read: a folder had ended
 * the reading awk with a read error, and every tile was taken as made
 * (status said 4/4, and a run went on to the mosaic); a FIFO had made
 * status and every run wait for a writer for ever.  Each is damaged and
 * made again, and a record that cannot be removed (the folder) is said
 * by its name, not as the tile's folder that cannot be made. */
WG_TEST(tiles_record_that_is_no_file_is_damaged)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-norec");
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && T='%s/scripts/tiles --size 33 --tile 17 -q --out out -- "
                    "--hydraulic 2 --mesh scalar' && $T >/dev/null && cd out/tiles/r0 && "
                    "rm r0c0.done r0c1.done && mkfifo r0c0.done && mkdir r0c1.done && cd ../../.. "
                    "&& timeout 10 %s/scripts/tiles status out",
                    dir, wg_srcdir(), wg_srcdir());
    CHECK(st == 3 && strstr(c.out, "2/4 tiles done\n") &&
              strstr(c.out, "tile r0/r0c0 is damaged (its .done record is not a file)") &&
              strstr(c.out, "tile r0/r0c1 is damaged (its .done record is not a file)"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
    st = tl_run(&c, "cd '%s' && timeout 30 %s/scripts/tiles --size 33 --tile 17 -q --out out -- "
                "--hydraulic 2 --mesh scalar; echo \"status $?\"; test -f out/tiles/r0/r0c0.done "
                "&& echo remade", dir, wg_srcdir());
    CHECK(strcmp(c.out, "status 1\nremade\n") == 0 &&
              strstr(c.err, "r0/r0c1 FAILED (status 1): cannot remove "
                            "'tiles/r0/r0c1.done': Is a directory"),
          "%s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* GNU parallel's own configuration ($PARALLEL, ~/.parallel/config) is not
 * read: the progress reads each tile's line as its job printed it, and
 * the jobs run as planned.  --tag had put the index before each line (no
 * '[1/4]' progress, a failure not counted as one) and --dry-run had made
 * no tile and said that the same command again would. */
WG_TEST(tiles_parallel_reads_no_configuration_of_its_own)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-parconf");
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && mkdir -p home/.parallel && echo --dry-run "
                    ">home/.parallel/config && T='%s/scripts/tiles --size 33 --tile 17' && "
                    "W='--hydraulic 2 --mesh scalar' && PARALLEL=--tag $T --out a -- $W "
                    ">/dev/null && HOME=$PWD/home $T --out b -- $W >/dev/null && "
                    "ls a/tiles/r1 b/tiles/r1",
                    dir, wg_srcdir());
    CHECK(st == 0 && strstr(c.err, "[1/4] ") && strstr(c.err, "[4/4] r") &&
              strstr(c.out, "r1c1.done") && !strstr(c.err, "not made"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}

/* --out through another user's symbolic link in a sticky folder anyone
 * may write in (/tmp) is refused, as worldgen refuses it for its outputs:
 * mkdir and readlink -f had followed it past fs.protected_symlinks, and
 * the tiles had been made in the folder the planted link named.  The
 * folder owner's link, and our own, are followed. */
WG_TEST(tiles_out_through_another_users_link_in_a_sticky_folder)
{
    if (geteuid() != 0) {
        wg_skip("needs root, to give a link to another user");
        return;
    }
    if (tl_ready() != 0)
        return;
    wg_cli c = tl_sh("rm -rf tg && mkdir -p tg/st tg/victim tg/mine && chmod 1777 tg/st && "
                     "ln -s ../victim tg/st/planted && ln -s ../mine tg/st/own && "
                     "chown -h 65534 tg/st/planted");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    c = tl_sh("'%s/scripts/tiles' --size 9 --tile 9 --out tg/st/planted -q "
              "-- --mesh scalar >/dev/null; echo \"status $?\"; ls -A tg/victim",
              wg_srcdir());
    CHECK(strcmp(c.out, "status 1\n") == 0, "%s %s", c.out, c.err);
    CHECK(strstr(c.err, "--out 'tg/st/planted': Permission denied (the symbolic link is "
                        "another user's, in a sticky folder anyone may write in: not "
                        "followed, as fs.protected_symlinks has it)"),
          "%s", c.err);
    wg_cli_free(&c);
    c = tl_sh("'%s/scripts/tiles' --size 9 --tile 9 --out tg/st/own -q -- --mesh scalar "
              ">/dev/null; echo \"status $?\"; ls tg/mine/height.vrt",
              wg_srcdir());
    CHECK(strcmp(c.out, "status 0\ntg/mine/height.vrt\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A file where a row's folder goes (tiles/r1) fails that row's tiles
 * saying so, with no log named (none can be made there), and the same
 * command makes them once it is gone: "cannot make tiles/r1: File
 * exists; see .../tiles/r1/r1c0.log" had said neither which nor what to
 * do, and sent the user to a log that cannot exist. */
WG_TEST(tiles_row_folder_that_is_a_file_is_named)
{
    if (tl_ready() != 0)
        return;
    char dir[512];
    tl_dir(dir, "tl-rowfile");
    wg_cli c;
    int st = tl_run(&c, "cd '%s' && T='%s/scripts/tiles --size 5 --tile 2 --out out -- "
                    "--mesh scalar --hydraulic 1' && $T >/dev/null 2>&1 && rm -r "
                    "out/tiles/r1 && echo x > out/tiles/r1 && $T >/dev/null; echo \"status $?\"; "
                    "rm out/tiles/r1 && $T >/dev/null 2>&1 && echo made",
                    dir, wg_srcdir());
    CHECK(st == 0 && strcmp(c.out, "status 1\nmade\n") == 0 &&
              strstr(c.err, "r1/r1c0 FAILED (status 1): cannot make the folder "
                            "tiles/r1: a file of that name is there (not a folder): "
                            "remove it\n") &&
              !strstr(c.err, ".log"),
          "status %d: %s%s", st, c.out, c.err);
    wg_cli_free(&c);
}
