/* test_gdal.c: GDAL (gdal-bin, which make deps installs) opens every map
 * worldgen writes, as it is: the float32 GeoTIFF, R16 and PFM through
 * their ENVI sidecars, the PNG; sizes, types and values are the world's,
 * the georeferencing is SPEC.md's, and windows of one world, mosaicked by
 * gdalbuildvrt or by worldgen's own VRT, are the whole world to the bit. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "render/geotiff.h"
#include "render/heightmap.h"
#include "render/obj.h"
#include "render/outfile.h"
#include "test.h"

#define GD_N 45 /* S = 6/44 is no binary fraction: the geotransforms must
                 * still agree to the bit */

static const wg_world gd_world = {.size = GD_N, .octaves = 4, .passes = 3,
                                  .steps = 30, .sea = 0.25f, .seed = 42};
static const wg_png_text gd_text[] = {
    {"Software", "worldgen test"},
    {"worldgen", "--size 45 --seed 42 --octaves 4 --erosion 3"},
};

/* The test's folder + name, in buf[512]. */
static const char *gd_path(char *buf, const char *name)
{
    snprintf(buf, 512, "%s/%s", wg_tmpdir(), name);
    return buf;
}

/* Run a shell command (printf-style) in the test's folder. */
static wg_cli gd_sh(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static wg_cli gd_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return wg_cli_sh(cmd);
}

/* The heights of the test world (whole), or NULL after a failed check. */
static float *gd_heights(void)
{
    wg_fields f;
    if (wg_make_world("scalar", &gd_world, 0, &f) != 0)
        return NULL;
    float *h = malloc(wg_cells(GD_N) * sizeof *h);
    if (h)
        memcpy(h, f.height, wg_cells(GD_N) * sizeof *h);
    wg_fields_free(&f);
    return h;
}

/* Window r of a whole N x N field, as its own r.w * r.h array. */
static float *gd_crop(const float *f, uint32_t n, wg_rect r)
{
    float *c = malloc(wg_rect_cells(r) * sizeof *c);
    for (uint32_t y = 0; c && y < r.h; y++)
        memcpy(c + (size_t)y * r.w, f + (size_t)(r.y + y) * n + r.x,
               r.w * sizeof *c);
    return c;
}

/* What gdalinfo -json says of a raster. */
typedef struct gd_info {
    int ok;
    char driver[32], type[16];
    long w, h;
    int has_gt;
    double gt[6];
    double scale; /* the band's, 1 when none */
    double offset; /* the band's, 0 when none */
} gd_info;

/* The JSON text after "key": (from 'from' on), or NULL. */
static const char *gd_json_at(const char *from, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = from ? strstr(from, pat) : NULL;
    if (!p)
        return NULL;
    p += strlen(pat);
    while (*p == ' ' || *p == '\n')
        p++;
    return p;
}

static void gd_json_string(const char *p, char *out, size_t len)
{
    out[0] = '\0';
    if (p && *p == '"') {
        size_t k = strcspn(p + 1, "\"");
        snprintf(out, len, "%.*s", (int)k, p + 1);
    }
}

static gd_info gd_gdalinfo(const char *path)
{
    gd_info i;
    memset(&i, 0, sizeof i);
    i.scale = 1.0;
    /* GDAL 3.6's -json complains on stderr of an engineering CRS (its
     * issue 9396, fixed in 3.8.5), and says all the same. */
    wg_cli c = gd_sh("gdalinfo -json '%s'", path);
    const char *j = c.out;
    CHECK(c.status == 0, "gdalinfo %s: %s", path, c.err);
    if (c.status == 0) {
        gd_json_string(gd_json_at(j, "driverShortName"), i.driver,
                       sizeof i.driver);
        const char *p = gd_json_at(j, "size");
        if (p && *p == '[') {
            char *e;
            i.w = strtol(p + 1, &e, 10);
            i.h = strtol(e + strspn(e, ", \n"), NULL, 10);
        }
        const char *bands = gd_json_at(j, "bands");
        gd_json_string(gd_json_at(bands, "type"), i.type, sizeof i.type);
        p = gd_json_at(bands, "scale");
        if (p)
            i.scale = strtod(p, NULL);
        p = gd_json_at(bands, "offset");
        if (p)
            i.offset = strtod(p, NULL);
        i.ok = 1;
    }
    wg_cli_free(&c);
    /* JSON shows 16 digits; a VRT's GeoTransform holds every bit. */
    c = gd_sh("gdal_translate -q -of VRT '%s' gd-gt.vrt && cat gd-gt.vrt", path);
    const char *p = strstr(c.out, "<GeoTransform>");
    if (c.status == 0 && p) {
        char *e = (char *)p + strlen("<GeoTransform>");
        for (int k = 0; k < 6; k++)
            i.gt[k] = strtod(e + strspn(e, ", \n"), &e);
        i.has_gt = 1;
    }
    wg_cli_free(&c);
    return i;
}

/* The raster's band 1 as GDAL reads it (gdal_translate to raw ENVI): rows
 * in GDAL's order, samples in host order.  Caller frees. */
static void *gd_samples(const char *path, size_t *len)
{
    static int serial;
    char raw[512], name[64];
    snprintf(name, sizeof name, "gd-samples-%d.raw", serial++);
    gd_path(raw, name);
    wg_cli c = gd_sh("gdal_translate -q -of ENVI '%s' '%s'", path, raw);
    CHECK(c.status == 0, "gdal_translate %s: %s", path, c.err);
    wg_cli_free(&c);
    *len = 0;
    return wg_read_file(raw, len);
}

/* The values GDAL finds at the world positions of vertices (xs[i], ys[i])
 * of an N-sided world (gdallocationinfo -geoloc), into v. */
static int gd_geoloc(const char *path, uint32_t n, const uint32_t *xs,
                     const uint32_t *ys, int count, double *v)
{
    char pts[512];
    FILE *fp = fopen(gd_path(pts, "gd-points.txt"), "w");
    if (!fp)
        return -1;
    for (int i = 0; i < count; i++)
        fprintf(fp, "%.17g %.17g\n", wg_geo_easting(xs[i], n),
                wg_geo_northing(ys[i], n));
    fclose(fp);
    wg_cli c = gd_sh("gdallocationinfo -valonly -geoloc '%s' < '%s'", path, pts);
    CHECK(c.status == 0, "gdallocationinfo %s: %s", path, c.err);
    char *p = c.out, *e;
    int got = 0;
    for (; c.status == 0 && got < count; got++) {
        v[got] = strtod(p, &e);
        if (e == p)
            break;
        p = e;
    }
    wg_cli_free(&c);
    return got == count ? 0 : -1;
}

/* Vertices to sample: the corners, the middle and a few between. */
static const uint32_t gd_xs[] = {0, 44, 0, 44, 22, 7, 31, 13};
static const uint32_t gd_ys[] = {0, 0, 44, 44, 22, 38, 5, 17};
#define GD_SAMPLES 8

/* The geotransform SPEC.md's coordinates give window r: its first
 * vertex's corner cell, S = 6/(N-1) (computed here independently of
 * wg_geo_transform). */
static void gd_check_gt(const gd_info *i, uint32_t n, wg_rect r,
                        const char *what)
{
    double s = 6.0 / (n - 1);
    double want[6] = {-3.0 + r.x * s - s / 2, s, 0, 3.0 - r.y * s + s / 2, 0, -s};
    double exact[6];
    wg_geo_transform(n, r, exact);
    CHECK(i->has_gt, "%s: no geotransform", what);
    int near = 1, same = 1;
    for (int k = 0; k < 6; k++) {
        double d = i->gt[k] - want[k];
        near &= d < 1e-12 && d > -1e-12;
        same &= i->gt[k] == exact[k];
    }
    CHECK(near && same, "%s: geotransform %.17g %.17g %.17g %.17g %.17g %.17g, "
          "want %.17g %.17g 0 %.17g 0 %.17g", what, i->gt[0], i->gt[1],
          i->gt[2], i->gt[3], i->gt[4], i->gt[5], want[0], want[1], want[3],
          want[5]);
}

static int gd_save(const char *path, wg_hm_format f, const float *field,
                   uint32_t n, wg_rect r)
{
    char err[WG_ERR_LEN];
    int rc = wg_heightmap_save(path, f, field, n, r, gd_text, 2, err);
    CHECK(rc == 0, "%s: %s", path, err);
    return rc;
}

/* gdalinfo names worldgen's local CRS for 'path'. */
static void gd_check_crs(const char *path)
{
    wg_cli c = gd_sh("gdalinfo '%s'", path);
    CHECK(c.status == 0 && strstr(c.out, "ENGCRS[\"worldgen world units\"") &&
          strstr(c.out, "LENGTHUNIT[\""), "%s: %s%s", path, c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(gdal_geotiff_is_float32_georeferenced_and_exact)
{
    CHECK(wg_geotiff_available(), "worldgen was built without libtiff and "
          "libgeotiff: make deps, then make");
    float *h = gd_heights();
    char path[512];
    gd_path(path, "gd-h.tif");
    if (!h || gd_save(path, WG_HM_TIF, h, GD_N, wg_rect_world(GD_N)) != 0) {
        free(h);
        return;
    }
    gd_info i = gd_gdalinfo(path);
    CHECK(strcmp(i.driver, "GTiff") == 0 && i.w == GD_N && i.h == GD_N &&
          strcmp(i.type, "Float32") == 0 && i.scale == 1.0,
          "%s %ldx%ld %s", i.driver, i.w, i.h, i.type);
    gd_check_gt(&i, GD_N, wg_rect_world(GD_N), "gd-h.tif");

    size_t len;
    float *v = gd_samples(path, &len);
    CHECK(v && len == wg_cells(GD_N) * 4 &&
          memcmp(v, h, len) == 0, "the samples are not the heights to the bit");
    free(v);

    double at[GD_SAMPLES];
    CHECK(gd_geoloc(path, GD_N, gd_xs, gd_ys, GD_SAMPLES, at) == 0);
    for (int k = 0; k < GD_SAMPLES; k++)
        CHECK((float)at[k] == h[gd_ys[k] * GD_N + gd_xs[k]],
              "vertex (%u, %u): %.9g, want %.9g", gd_xs[k], gd_ys[k], at[k],
              (double)h[gd_ys[k] * GD_N + gd_xs[k]]);

    /* The provenance, the CRS and the layout, as gdalinfo shows them. */
    wg_cli c = gd_sh("gdalinfo '%s'", path);
    const char *want[] = {
        "ENGCRS[\"worldgen world units\"", "LENGTHUNIT[\"metre\",1",
        "AREA_OR_POINT=Point", "TIFFTAG_SOFTWARE=worldgen test",
        "TIFFTAG_IMAGEDESCRIPTION=worldgen --size 45 --seed 42",
        "COMPRESSION=DEFLATE", "PREDICTOR=3", "Block=256x256 Type=Float32",
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++)
        CHECK(strstr(c.out, want[k]), "gdalinfo lacks '%s':\n%s", want[k], c.out);
    wg_cli_free(&c);
    free(h);
}

WG_TEST(gdal_r16_opens_through_its_envi_header)
{
    float *h = gd_heights();
    char path[512], hdr[512];
    gd_path(path, "gd-h.r16");
    if (!h || gd_save(path, WG_HM_R16, h, GD_N, wg_rect_world(GD_N)) != 0) {
        free(h);
        return;
    }
    struct stat st;
    CHECK(stat(gd_path(hdr, "gd-h.r16.hdr"), &st) == 0, "no sidecar h.r16.hdr");
    size_t len;
    unsigned char *raw = wg_read_file(path, &len);
    CHECK(raw && len == wg_cells(GD_N) * 2, "the R16 is not bare samples");
    free(raw);

    gd_info i = gd_gdalinfo(path);
    CHECK(strcmp(i.driver, "ENVI") == 0 && i.w == GD_N && i.h == GD_N &&
          strcmp(i.type, "UInt16") == 0, "%s %ldx%ld %s", i.driver, i.w, i.h,
          i.type);
    CHECK(i.scale > 0.999999999 / 65535 && i.scale < 1.000000001 / 65535,
          "scale %.17g", i.scale);
    gd_check_gt(&i, GD_N, wg_rect_world(GD_N), "gd-h.r16");
    gd_check_crs(path);

    uint16_t *v = gd_samples(path, &len);
    CHECK(v && len == wg_cells(GD_N) * 2);
    int bad = 0, far = 0;
    for (size_t k = 0; v && k < wg_cells(GD_N) && len == wg_cells(GD_N) * 2; k++) {
        bad += v[k] != wg_height_to_u16(h[k]);
        double d = v[k] * i.scale - h[k];
        far += d > 1.0 / 65535 || d < -1.0 / 65535;
    }
    CHECK(bad == 0 && far == 0, "%d samples differ, %d further than 1/65535",
          bad, far);
    free(v);

    double at[GD_SAMPLES];
    CHECK(gd_geoloc(path, GD_N, gd_xs, gd_ys, GD_SAMPLES, at) == 0);
    for (int k = 0; k < GD_SAMPLES; k++)
        CHECK(at[k] == wg_height_to_u16(h[gd_ys[k] * GD_N + gd_xs[k]]),
              "vertex (%u, %u): %g", gd_xs[k], gd_ys[k], at[k]);
    free(h);
}

WG_TEST(gdal_pfm_opens_bottom_to_top_through_its_envi_header)
{
    float *h = gd_heights();
    char path[512];
    gd_path(path, "gd-h.pfm");
    if (!h || gd_save(path, WG_HM_PFM, h, GD_N, wg_rect_world(GD_N)) != 0) {
        free(h);
        return;
    }
    size_t len;
    char *pfm = wg_read_file(path, &len);
    CHECK(pfm && strncmp(pfm, "Pf\n45 45\n-1.0\n", 14) == 0 &&
          len == 14 + wg_cells(GD_N) * 4, "the PFM itself changed");
    free(pfm);

    gd_info i = gd_gdalinfo(path);
    CHECK(strcmp(i.driver, "ENVI") == 0 && i.w == GD_N && i.h == GD_N &&
          strcmp(i.type, "Float32") == 0, "%s %ldx%ld %s", i.driver, i.w, i.h,
          i.type);
    /* South-up: GDAL's first row is the file's, the world's last. */
    double s = 6.0 / (GD_N - 1);
    CHECK(i.has_gt && i.gt[1] == s && i.gt[5] == s && i.gt[2] == 0 &&
          i.gt[4] == 0 && i.gt[0] == -3 - s / 2 && i.gt[3] == -3 - s / 2,
          "geotransform %.17g %.17g %.17g %.17g", i.gt[0], i.gt[1], i.gt[3],
          i.gt[5]);

    float *v = gd_samples(path, &len);
    int bad = 0;
    for (size_t y = 0; v && y < GD_N && len == wg_cells(GD_N) * 4; y++)
        bad += memcmp(v + (GD_N - 1 - y) * GD_N, h + y * GD_N, GD_N * 4) != 0;
    CHECK(v && len == wg_cells(GD_N) * 4 && bad == 0, "%d rows differ", bad);
    free(v);

    gd_check_crs(path);
    /* Each value where SPEC.md puts its vertex. */
    double at[GD_SAMPLES];
    CHECK(gd_geoloc(path, GD_N, gd_xs, gd_ys, GD_SAMPLES, at) == 0);
    for (int k = 0; k < GD_SAMPLES; k++)
        CHECK((float)at[k] == h[gd_ys[k] * GD_N + gd_xs[k]],
              "vertex (%u, %u): %.9g", gd_xs[k], gd_ys[k], at[k]);
    free(h);
}

WG_TEST(gdal_png_opens_as_16bit)
{
    float *h = gd_heights();
    char path[512];
    gd_path(path, "gd-h.png");
    if (!h || gd_save(path, WG_HM_PNG, h, GD_N, wg_rect_world(GD_N)) != 0) {
        free(h);
        return;
    }
    gd_info i = gd_gdalinfo(path);
    CHECK(strcmp(i.driver, "PNG") == 0 && i.w == GD_N && i.h == GD_N &&
          strcmp(i.type, "UInt16") == 0, "%s %ldx%ld %s", i.driver, i.w, i.h,
          i.type);
    size_t len;
    uint16_t *v = gd_samples(path, &len);
    int bad = 0;
    for (size_t k = 0; v && k < wg_cells(GD_N) && len == wg_cells(GD_N) * 2; k++)
        bad += v[k] != wg_height_to_u16(h[k]);
    CHECK(v && len == wg_cells(GD_N) * 2 && bad == 0, "%d samples differ", bad);
    free(v);
    free(h);
}

/* Windows of the test world: rows split unevenly, the lower band in two
 * that share column 22 (overlapping tiles agree where they overlap). */
static const wg_rect gd_wins[] = {
    {0, 0, GD_N, 17}, {0, 17, 23, GD_N - 17}, {22, 17, GD_N - 22, GD_N - 17},
};
#define GD_WINS 3

/* Write the windows as GeoTIFFs named fmt % k (under the test folder);
 * returns 0 when every one was written. */
static int gd_write_tiles(const float *h, const char *fmt)
{
    int bad = 0;
    for (int k = 0; k < GD_WINS; k++) {
        char name[256], path[512];
        snprintf(name, sizeof name, fmt, k);
        float *t = gd_crop(h, GD_N, gd_wins[k]);
        bad += !t || gd_save(gd_path(path, name), WG_HM_TIF, t, GD_N,
                             gd_wins[k]) != 0;
        free(t);
    }
    return bad ? -1 : 0;
}

/* The mosaic 'path' is the whole world: its size, type, geotransform and
 * samples, those to the bit. */
static void gd_check_mosaic(const char *path, const char *driver,
                            const float *h)
{
    gd_info i = gd_gdalinfo(path);
    CHECK(strcmp(i.driver, driver) == 0 && i.w == GD_N && i.h == GD_N &&
          strcmp(i.type, "Float32") == 0, "%s: %s %ldx%ld %s", path, i.driver,
          i.w, i.h, i.type);
    gd_check_gt(&i, GD_N, wg_rect_world(GD_N), path);
    size_t len;
    float *v = gd_samples(path, &len);
    CHECK(v && len == wg_cells(GD_N) * 4 && memcmp(v, h, len) == 0,
          "%s: the samples are not the world's to the bit", path);
    free(v);
}

WG_TEST(gdal_tiles_line_up_in_gdalbuildvrt)
{
    CHECK(wg_geotiff_available(), "built without GeoTIFF");
    float *h = gd_heights();
    char whole[512];
    if (!h || gd_write_tiles(h, "gd-tile%d.tif") != 0 ||
        gd_save(gd_path(whole, "gd-whole.tif"), WG_HM_TIF, h, GD_N,
                wg_rect_world(GD_N)) != 0) {
        free(h);
        return;
    }
    /* Each tile where its window is. */
    for (int k = 0; k < GD_WINS; k++) {
        char name[64], path[512];
        snprintf(name, sizeof name, "gd-tile%d.tif", k);
        gd_info i = gd_gdalinfo(gd_path(path, name));
        CHECK(i.w == gd_wins[k].w && i.h == gd_wins[k].h, "%s %ldx%ld", name,
              i.w, i.h);
        gd_check_gt(&i, GD_N, gd_wins[k], name);
    }
    wg_cli c = gd_sh("gdalbuildvrt -q gd-built.vrt gd-tile0.tif gd-tile1.tif "
                     "gd-tile2.tif && gdal_translate -q -ot Float32 "
                     "gd-built.vrt gd-built.tif");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    /* gdalbuildvrt placed every tile on whole pixels: no resampling. */
    c = gd_sh("grep -c '<DstRect xOff=\"[0-9]*\" yOff=\"[0-9]*\" "
              "xSize=\"[0-9]*\" ySize=\"[0-9]*\"' gd-built.vrt");
    CHECK(c.status == 0 && atoi(c.out) == GD_WINS, "%s", c.out);
    wg_cli_free(&c);
    char path[512];
    gd_check_mosaic(gd_path(path, "gd-built.vrt"), "VRT", h);
    gd_check_mosaic(gd_path(path, "gd-built.tif"), "GTiff", h);
    gd_check_mosaic(whole, "GTiff", h);
    free(h);
}

WG_TEST(gdal_vrt_writer_mosaics_the_world)
{
    CHECK(wg_geotiff_available(), "built without GeoTIFF");
    float *h = gd_heights();
    char dir[512], abs0[512], err[WG_ERR_LEN];
    wg_cli mk = gd_sh("mkdir -p gd-tiles gd-mosaic");
    CHECK(mk.status == 0);
    wg_cli_free(&mk);
    /* Names XML must escape, a relative name and an absolute one. */
    if (!h || gd_write_tiles(h, "gd-tiles/t%d &<'\">.tif") != 0) {
        free(h);
        return;
    }
    gd_path(abs0, "gd-tiles/t0 &<'\">.tif");
    const char *names[GD_WINS] = {abs0, "../gd-tiles/t1 &<'\">.tif",
                                  "../gd-tiles/t2 &<'\">.tif"};
    wg_outfile o;
    gd_path(dir, "gd-mosaic/world.vrt");
    CHECK(wg_outfile_open(&o, dir, err) == 0 &&
          wg_vrt_write(o.fp, GD_N, names, gd_wins, GD_WINS, "worldgen test",
                       "worldgen --size 45 <&>", err) == 0 &&
          wg_outfile_commit(&o, err) == 0, "%s", err);
    wg_outfile_abort(&o);
    gd_check_mosaic(dir, "VRT", h);

    wg_cli c = gd_sh("gdal_translate -q gd-mosaic/world.vrt "
                     "gd-mosaic/world.tif && gdalinfo gd-mosaic/world.tif");
    CHECK(c.status == 0 && strstr(c.out, "ENGCRS[\"worldgen world units\"") &&
          strstr(c.out, "AREA_OR_POINT=Point") &&
          strstr(c.out, "TIFFTAG_IMAGEDESCRIPTION=worldgen --size 45 <&>") &&
          strstr(c.out, "TIFFTAG_SOFTWARE=worldgen test"), "%s%s", c.out, c.err);
    wg_cli_free(&c);
    char path[512];
    gd_check_mosaic(gd_path(path, "gd-mosaic/world.tif"), "GTiff", h);

    /* What it refuses. */
    wg_rect outside = {40, 0, 6, 45};
    const char *ctl[1] = {"a\nb.tif"};
    FILE *null = fopen("/dev/null", "w");
    CHECK(wg_vrt_write(null, GD_N, names, &outside, 1, NULL, NULL, err) != 0 &&
          strstr(err, "not inside"), "%s", err);
    CHECK(wg_vrt_write(null, GD_N, ctl, gd_wins, 1, NULL, NULL, err) != 0 &&
          strstr(err, "control character"), "%s", err);
    fclose(null);
    free(h);
}

/* The bytes of a file; NULL if none. */
static unsigned char *gd_bytes(const char *path, size_t *len)
{
    *len = 0;
    return wg_read_file(path, len);
}

WG_TEST(gdal_geotiff_is_deterministic_and_pipes)
{
    CHECK(wg_geotiff_available(), "built without GeoTIFF");
    float *h = gd_heights();
    char a[512], b[512], piped[512], app[512], cmd[600], err[WG_ERR_LEN];
    if (!h || gd_save(gd_path(a, "gd-a.tif"), WG_HM_TIF, h, GD_N,
                      wg_rect_world(GD_N)) != 0 ||
        gd_save(gd_path(b, "gd-b.tif"), WG_HM_TIF, h, GD_N,
                wg_rect_world(GD_N)) != 0) {
        free(h);
        return;
    }
    size_t la, lb;
    unsigned char *ba = gd_bytes(a, &la), *bb = gd_bytes(b, &lb);
    CHECK(ba && la > 8 && la == lb && memcmp(ba, bb, la) == 0,
          "two writes differ");
    CHECK(ba && la > 8 && memcmp(ba, "II*\0", 4) == 0, "not a little-endian "
          "classic TIFF");
    free(bb);

    /* A pipe cannot seek, an appending stream ignores seeks: both get the
     * TIFF through a temporary, the same bytes. */
    snprintf(cmd, sizeof cmd, "cat > '%s'", gd_path(piped, "gd-piped.tif"));
    FILE *p = popen(cmd, "w");
    CHECK(p && wg_heightmap_write(p, WG_HM_TIF, h, GD_N, gd_text, 2, err) == 0,
          "%s", err);
    CHECK(p && pclose(p) == 0);
    FILE *f = fopen(gd_path(app, "gd-append.tif"), "ab");
    CHECK(f && wg_heightmap_write(f, WG_HM_TIF, h, GD_N, gd_text, 2, err) == 0,
          "%s", err);
    CHECK(f && fclose(f) == 0);
    const char *others[] = {piped, app};
    for (int k = 0; k < 2; k++) {
        unsigned char *bo = gd_bytes(others[k], &lb);
        CHECK(bo && lb == la && memcmp(ba, bo, la) == 0, "%s differs",
              others[k]);
        free(bo);
    }
    free(ba);
    free(h);
}

WG_TEST(gdal_raw_windows_are_georeferenced)
{
    float *h = gd_heights();
    if (!h)
        return;
    const wg_rect r = gd_wins[2];
    float *t = gd_crop(h, GD_N, r);
    char r16[512], pfm[512];
    if (!t || gd_save(gd_path(r16, "gd-win.r16"), WG_HM_R16, t, GD_N, r) != 0 ||
        gd_save(gd_path(pfm, "gd-win.pfm"), WG_HM_PFM, t, GD_N, r) != 0) {
        free(t);
        free(h);
        return;
    }
    gd_info i = gd_gdalinfo(r16);
    CHECK(i.w == r.w && i.h == r.h, "%ldx%ld", i.w, i.h);
    gd_check_gt(&i, GD_N, r, "gd-win.r16");
    i = gd_gdalinfo(pfm);
    CHECK(i.w == r.w && i.h == r.h, "%ldx%ld", i.w, i.h);
    /* Vertices of the window, by their world positions. */
    uint32_t xs[4] = {r.x, r.x + r.w - 1, r.x, r.x + 5};
    uint32_t ys[4] = {r.y, r.y, r.y + r.h - 1, r.y + 9};
    double at[4];
    CHECK(gd_geoloc(pfm, GD_N, xs, ys, 4, at) == 0);
    for (int k = 0; k < 4; k++)
        CHECK((float)at[k] == h[ys[k] * GD_N + xs[k]], "pfm (%u, %u): %.9g",
              xs[k], ys[k], at[k]);
    CHECK(gd_geoloc(r16, GD_N, xs, ys, 4, at) == 0);
    for (int k = 0; k < 4; k++)
        CHECK(at[k] == wg_height_to_u16(h[ys[k] * GD_N + xs[k]]),
              "r16 (%u, %u): %g", xs[k], ys[k], at[k]);
    free(t);
    free(h);
}

WG_TEST(gdal_sidecar_and_map_appear_together_or_not_at_all)
{
    float h[4] = {0, 0.25f, 0.5f, 1};
    char path[512], err[WG_ERR_LEN];
    struct stat st;
    /* The header's name is taken by a folder: neither file appears. */
    wg_cli c = gd_sh("mkdir -p gd-blocked.r16.hdr");
    wg_cli_free(&c);
    gd_path(path, "gd-blocked.r16");
    CHECK(wg_heightmap_save(path, WG_HM_R16, h, 2, wg_rect_world(2), gd_text,
                            2, err) != 0 &&
          strstr(err, "its header") && strstr(err, "directory"), "%s", err);
    CHECK(stat(path, &st) != 0, "the map appeared without its header");
    c = gd_sh("ls -a | grep -c tmp-");
    CHECK(atoi(c.out) == 0, "a temporary was left: %s", c.out);
    wg_cli_free(&c);

    /* A device gets the map alone: no /dev/null.hdr. */
    CHECK(wg_heightmap_save("/dev/null", WG_HM_R16, h, 2, wg_rect_world(2),
                            gd_text, 2, err) == 0, "%s", err);
    CHECK(stat("/dev/null.hdr", &st) != 0, "a sidecar beside a device");

    /* A full device: the TIFF's failure is reported. */
    if (wg_geotiff_available())
        CHECK(wg_heightmap_save("/dev/full", WG_HM_TIF, h, 2, wg_rect_world(2),
                                gd_text, 2, err) != 0 &&
              strstr(err, "No space left"), "%s", err);

    /* A window outside its world is refused before anything is made. */
    wg_rect bad = {1, 0, 2, 2};
    gd_path(path, "gd-outside.tif");
    CHECK(wg_heightmap_save(path, WG_HM_TIF, h, 2, bad, gd_text, 2, err) != 0 &&
          strstr(err, "not inside"), "%s", err);
    CHECK(stat(path, &st) != 0);
}

/* ---- the command line (with worldgen.c's wiring of tif and sidecars) ---- */

static wg_cli gd_run(const char *maps)
{
    return gd_sh("./worldgen --size 45 --octaves 4 --erosion 3 --hydraulic 30 "
                 "--seed 42 -q --no-image %s", maps);
}

WG_TEST(gdal_cli_writes_tif_and_sidecars)
{
    wg_cli c = gd_run("--heightmap gd-h.tif --watermap gd-w.r16");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    wg_fields f;
    if (wg_make_world("scalar", &gd_world, 0, &f) != 0)
        return;
    char path[512];
    size_t len;
    gd_info i = gd_gdalinfo(gd_path(path, "gd-h.tif"));
    CHECK(strcmp(i.driver, "GTiff") == 0 && strcmp(i.type, "Float32") == 0);
    gd_check_gt(&i, GD_N, wg_rect_world(GD_N), "gd-h.tif");
    float *v = gd_samples(path, &len);
    CHECK(v && len == wg_cells(GD_N) * 4 && memcmp(v, f.height, len) == 0,
          "--heightmap h.tif is not the heights to the bit");
    free(v);
    c = gd_sh("gdalinfo gd-h.tif");
    CHECK(strstr(c.out, "TIFFTAG_IMAGEDESCRIPTION=worldgen --size 45 --seed 42") &&
          strstr(c.out, "TIFFTAG_SOFTWARE=worldgen "), "%s", c.out);
    wg_cli_free(&c);

    i = gd_gdalinfo(gd_path(path, "gd-w.r16"));
    CHECK(strcmp(i.driver, "ENVI") == 0 && strcmp(i.type, "UInt16") == 0,
          "w.r16: %s %s", i.driver, i.type);
    uint16_t *q = gd_samples(path, &len);
    int bad = 0;
    for (size_t k = 0; q && k < wg_cells(GD_N) && len == wg_cells(GD_N) * 2; k++)
        bad += q[k] != wg_height_to_u16(f.water[k]);
    CHECK(q && len == wg_cells(GD_N) * 2 && bad == 0, "%d samples differ", bad);
    free(q);
    wg_fields_free(&f);
}

WG_TEST(gdal_cli_tif_to_stdout_and_pipes)
{
    wg_cli c = gd_run("--heightmap gd-f.tif");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    c = gd_run("--heightmap - --heightmap-format tif > gd-s.tif");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    c = gd_run("--heightmap - --heightmap-format tiff | cat > gd-p.tif");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    c = gd_sh("cmp gd-f.tif gd-s.tif && cmp gd-f.tif gd-p.tif");
    CHECK(c.status == 0, "standard output's TIFF differs: %s%s", c.out, c.err);
    wg_cli_free(&c);
}

/* A map that replaces one takes away what GDAL kept beside the old one
 * about its content: NAME.aux.xml (statistics, metadata) and NAME.ovr
 * (overviews), by the name given and, for a link, its target's, as GDAL's
 * own writers do when they replace a raster.  Left there, GDAL and QGIS
 * had shown the old world's statistics and, zoomed out, its overviews.
 * One that is an output of the run itself (--json n.png.aux.xml) stays. */
WG_TEST(gdal_replaced_map_leaves_no_stale_statistics_or_overviews)
{
    const char *w = "./worldgen --size 45 --octaves 4 --erosion 3 --hydraulic 30 -q "
                    "--no-image --heightmap st/h.r16 --watermap st/l.tif --normalmap st/n.png";
    wg_cli c = gd_sh("rm -rf st real && mkdir st real && ln -s ../real/w.tif st/l.tif && "
                     "%s --seed 1 && gdalinfo -stats st/h.r16 > /dev/null && "
                     "gdaladdo st/h.r16 2 > /dev/null && gdalinfo -stats st/l.tif > /dev/null && "
                     "gdaladdo -ro st/l.tif 2 > /dev/null && gdalinfo -stats real/w.tif > "
                     "/dev/null && gdaladdo -ro real/w.tif 2 > /dev/null && gdalinfo -stats "
                     "st/n.png > /dev/null && ls -A st real | tr '\\n' ' '", w);
    CHECK(strcmp(c.out, "real: w.tif w.tif.aux.xml w.tif.ovr  st: h.r16 h.r16.aux.xml "
                        "h.r16.hdr h.r16.ovr l.tif l.tif.aux.xml l.tif.ovr n.pgw n.png "
                        "n.png.aux.xml ") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
    c = gd_sh("%s --seed 2 --json st/n.png.aux.xml && ls -A st real | tr '\\n' ' ' && "
              "head -c 1 st/n.png.aux.xml && gdalinfo st/h.r16 | grep -c Overviews", w);
    CHECK(strcmp(c.out, "real: w.tif  st: h.r16 h.r16.hdr l.tif n.pgw n.png "
                        "n.png.aux.xml {0\n") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* Nor is one the run writes in place taken for GDAL's: the JSON through a
 * descriptor (--json /dev/fd/3 3>h.r16.aux.xml) or standard output
 * (--json - >h.r16.aux.xml), or a FIFO of that name it was written to.
 * Only the renamed outputs had been looked for, and the run had removed
 * the JSON it had just written, and the user's FIFO. */
WG_TEST(gdal_replaced_map_keeps_what_the_run_wrote_in_place)
{
    const char *w = "./worldgen --size 17 -q --no-image --heightmap ip/h.r16";
    wg_cli c = gd_sh("rm -rf ip && mkdir ip && %s --json /dev/fd/3 3>ip/h.r16.aux.xml && "
                     "head -c 1 ip/h.r16.aux.xml && %s --json - >ip/h.r16.ovr && "
                     "head -c 1 ip/h.r16.ovr && rm ip/h.r16.* && mkfifo ip/h.r16.aux.xml && "
                     "{ cat ip/h.r16.aux.xml >ip/got & } && %s --json ip/h.r16.aux.xml && "
                     "wait && test -p ip/h.r16.aux.xml && head -c 1 ip/got && ls ip | tr "
                     "'\\n' ' '",
                     w, w, w);
    CHECK(c.status == 0 && strcmp(c.out, "{{{got h.r16 h.r16.aux.xml h.r16.hdr ") == 0,
          "%d %s %s", c.status, c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(gdal_cli_sidecar_names_are_outputs_too)
{
    wg_cli c = gd_run("--heightmap gd-h.r16 --json gd-h.r16.hdr");
    CHECK(c.status == 2 && strstr(c.err, "writes its header 'gd-h.r16.hdr'"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    c = gd_run("--heightmap gd-h.pfm --watermap gd-w.pfm && "
               "ls gd-h.pfm.hdr gd-w.pfm.hdr");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
}

WG_TEST(gdal_sedimentmap_unscales_to_the_sediment)
{
    /* The sediment R16's ENVI header gives GDAL the band's scale and
     * offset (sample * 1/65535 - 32768/65535), so gdal_translate -unscale
     * turns it back into sediment within half a 16-bit step; the TIF is
     * the field, exact. */
    CHECK(wg_geotiff_available(), "built without GeoTIFF");
    wg_cli c = gd_run("--sedimentmap gd-s.r16 && ./worldgen --size 45 "
                      "--octaves 4 --erosion 3 --hydraulic 30 --seed 42 -q "
                      "--no-image --sedimentmap gd-s.tif && gdal_translate -q "
                      "-unscale -ot Float32 -of ENVI gd-s.r16 gd-s.f32");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    wg_fields f;
    if (wg_make_world("scalar", &gd_world, 0, &f) != 0)
        return;
    char path[512];
    gd_info i = gd_gdalinfo(gd_path(path, "gd-s.r16"));
    CHECK(strcmp(i.driver, "ENVI") == 0 && strcmp(i.type, "UInt16") == 0 &&
              i.scale > 0.999999999 / 65535 && i.scale < 1.000000001 / 65535 &&
              i.offset < -0.4999999 * 65536 / 65535 &&
              i.offset > -0.5000001 * 65536 / 65535,
          "%s %s scale %.17g offset %.17g", i.driver, i.type, i.scale,
          i.offset);
    gd_check_gt(&i, GD_N, wg_rect_world(GD_N), "gd-s.r16");
    size_t len = 0;
    float *v = wg_read_file(gd_path(path, "gd-s.f32"), &len);
    CHECK(v && len == wg_cells(GD_N) * 4, "%zu bytes", len);
    int far = 0, moved = 0;
    for (size_t k = 0; v && len == wg_cells(GD_N) * 4 && k < wg_cells(GD_N);
         k++) {
        /* GDAL's float32 of the unscaled sample: half a step, and the
         * float32 rounding of a value near 0.1 (1e-8). */
        double d = (double)v[k] - f.sediment[k];
        far += d > 0.5 / 65535 + 1e-8 || d < -0.5 / 65535 - 1e-8;
        moved += f.sediment[k] != 0.0f;
    }
    CHECK(far == 0 && moved > 100, "%d samples further than half a step "
          "(%d cells moved)", far, moved);
    free(v);
    i = gd_gdalinfo(gd_path(path, "gd-s.tif"));
    CHECK(strcmp(i.driver, "GTiff") == 0 && strcmp(i.type, "Float32") == 0 &&
          i.scale == 1.0 && i.offset == 0.0);
    gd_check_gt(&i, GD_N, wg_rect_world(GD_N), "gd-s.tif");
    v = gd_samples(path, &len);
    CHECK(v && len == wg_cells(GD_N) * 4 &&
              memcmp(v, f.sediment, len) == 0,
          "--sedimentmap s.tif is not the sediment to the bit");
    free(v);
    wg_fields_free(&f);
}

/* ---- normal and albedo maps: whole and tiled runs line up ---------------- */

#define GD_NM 100
#define GD_NM_RUN "./worldgen --size 100 --erosion 2 --hydraulic 5 --mesh scalar " \
                  "-q --no-image"

/* Four uneven tiles of the 100-sided world. */
static const wg_rect gd_nm_wins[4] = {
    {0, 0, 60, 45}, {60, 0, 40, 45}, {0, 45, 37, 55}, {37, 45, 63, 55},
};

/* The world the CLI lines above make (its defaults: octaves 6, seed 1234,
 * sea 0.25). */
static const wg_world gd_nm_world = {.size = GD_NM, .octaves = 6,
                                     .passes = 2, .steps = 5, .sea = 0.25f,
                                     .seed = 1234};

/* Band 1..3 of 'path' as GDAL reads them, band after band (BSQ).  Caller
 * frees. */
static void *gd_bands(const char *path, size_t *len)
{
    static int serial;
    char raw[512], name[64];
    snprintf(name, sizeof name, "gd-bands-%d.raw", serial++);
    gd_path(raw, name);
    wg_cli c = gd_sh("gdal_translate -q -of ENVI -co INTERLEAVE=BSQ '%s' '%s'",
                     path, raw);
    CHECK(c.status == 0, "gdal_translate %s: %s", path, c.err);
    wg_cli_free(&c);
    *len = 0;
    return wg_read_file(raw, len);
}

/* 'path' has three bands of 'type' and w x h pixels. */
static void gd_check_rgb(const char *path, const char *driver,
                         const char *type, uint32_t w, uint32_t h)
{
    gd_info i = gd_gdalinfo(path);
    CHECK(strcmp(i.driver, driver) == 0 && strcmp(i.type, type) == 0 &&
          i.w == w && i.h == h, "%s: %s %s %ldx%ld", path, i.driver, i.type,
          i.w, i.h);
    wg_cli c = gd_sh("gdalinfo '%s'", path);
    CHECK(c.status == 0 && strstr(c.out, "Band 3 ") && !strstr(c.out, "Band 4 "),
          "%s: not three bands: %s", path, c.out);
    wg_cli_free(&c);
}

/* Write --opt as whole-world files gd-OPT-whole.EXT and the four tiles
 * gd-OPT-K.EXT; check each tile's size and geotransform (the height
 * GeoTIFF's for the same window), then that the tiles, mosaicked by
 * gdalbuildvrt and gdal_translate, are the whole world's map to the bit. */
static void gd_nm_tiles(const char *opt, const char *ext, const char *driver,
                        const char *type)
{
    wg_cli c = gd_sh(GD_NM_RUN " --%s gd-%s-whole.%s --heightmap gd-%s-h.tif",
                     opt, opt, ext, opt);
    CHECK(c.status == 0, "--%s whole: %s", opt, c.err);
    wg_cli_free(&c);
    char path[512], name[128];
    snprintf(name, sizeof name, "gd-%s-whole.%s", opt, ext);
    gd_check_rgb(gd_path(path, name), driver, type, GD_NM, GD_NM);
    gd_info i = gd_gdalinfo(path);
    gd_check_gt(&i, GD_NM, wg_rect_world(GD_NM), name);
    for (int k = 0; k < 4; k++) {
        wg_rect r = gd_nm_wins[k];
        c = gd_sh(GD_NM_RUN " --region %u,%u,%u,%u --%s gd-%s-%d.%s "
                  "--heightmap gd-%s-h%d.tif", r.x, r.y, r.w, r.h, opt, opt,
                  k, ext, opt, k);
        CHECK(c.status == 0, "--%s tile %d: %s", opt, k, c.err);
        wg_cli_free(&c);
        snprintf(name, sizeof name, "gd-%s-%d.%s", opt, k, ext);
        gd_check_rgb(gd_path(path, name), driver, type, r.w, r.h);
        i = gd_gdalinfo(path);
        gd_check_gt(&i, GD_NM, r, name);
        /* The height GeoTIFF of the same window says the same. */
        snprintf(name, sizeof name, "gd-%s-h%d.tif", opt, k);
        gd_info hi = gd_gdalinfo(gd_path(path, name));
        CHECK(hi.has_gt && memcmp(hi.gt, i.gt, sizeof i.gt) == 0,
              "--%s tile %d: not the height map's geotransform", opt, k);
    }
    c = gd_sh("gdalbuildvrt -q gd-%s-m.vrt gd-%s-0.%s gd-%s-1.%s gd-%s-2.%s "
              "gd-%s-3.%s && gdal_translate -q gd-%s-m.vrt gd-%s-m.tif", opt,
              opt, ext, opt, ext, opt, ext, opt, ext, opt, opt);
    CHECK(c.status == 0, "--%s mosaic: %s", opt, c.err);
    wg_cli_free(&c);
    snprintf(name, sizeof name, "gd-%s-m.tif", opt);
    i = gd_gdalinfo(gd_path(path, name));
    CHECK(i.w == GD_NM && i.h == GD_NM, "%s: %ldx%ld", name, i.w, i.h);
    gd_check_gt(&i, GD_NM, wg_rect_world(GD_NM), name);
    size_t la, lb;
    unsigned char *a = gd_bands(path, &la);
    snprintf(name, sizeof name, "gd-%s-whole.%s", opt, ext);
    unsigned char *b = gd_bands(gd_path(path, name), &lb);
    size_t at = 0;
    while (a && b && at < la && at < lb && a[at] == b[at])
        at++;
    CHECK(a && b && la == lb && la > 0 && at == la,
          "--%s .%s: the mosaic of the tiles is not the whole map to the bit "
          "(%zu and %zu bytes, the first difference at byte %zu)", opt, ext,
          la, lb, at);
    free(a);
    free(b);
}

WG_TEST(gdal_normalmap_tif_tiles_line_up)
{
    CHECK(wg_geotiff_available(), "built without GeoTIFF");
    gd_nm_tiles("normalmap", "tif", "GTiff", "Float32");
}

WG_TEST(gdal_normalmap_png_tiles_line_up)
{
    gd_nm_tiles("normalmap", "png", "PNG", "UInt16");
}

WG_TEST(gdal_albedo_tif_tiles_line_up)
{
    CHECK(wg_geotiff_available(), "built without GeoTIFF");
    gd_nm_tiles("albedo", "tif", "GTiff", "Byte");
}

WG_TEST(gdal_albedo_png_tiles_line_up)
{
    gd_nm_tiles("albedo", "png", "PNG", "Byte");
}

/* The maps hold the world's values: the normal x east, y north, z up
 * (exact in the TIF, v*0.5+0.5 of 65535 in the PNG) and the albedo of
 * wg_albedo_map_make. */
WG_TEST(gdal_normal_and_albedo_maps_hold_the_world)
{
    CHECK(wg_geotiff_available(), "built without GeoTIFF");
    wg_cli c = gd_sh(GD_NM_RUN " --normalmap gd-v.tif "
                     "--albedo gd-v-a.tif && " GD_NM_RUN " --normalmap gd-v.png "
                     "--albedo gd-v-a.png");
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    wg_fields f;
    if (wg_make_world("scalar", &gd_nm_world, 0, &f) != 0)
        return;
    size_t cells = wg_fields_cells(&f), len;
    char path[512];
    const float *comp[3] = {f.nx, f.nz, f.ny};
    float *v = gd_bands(gd_path(path, "gd-v.tif"), &len);
    int bad = 0;
    for (size_t k = 0; v && len == cells * 12 && k < cells; k++)
        for (int b = 0; b < 3; b++)
            bad += v[b * cells + k] != (b == 1 ? -comp[b][k] : comp[b][k]);
    CHECK(v && len == cells * 12 && bad == 0, "normal TIF: %d samples differ",
          bad);
    free(v);
    /* Its bands named, as GDAL reads them (it had said Gray and
     * Undefined). */
    c = gd_sh("gdalinfo gd-v.tif | grep Description");
    CHECK(strcmp(c.out, "  Description = x (east)\n  Description = y (north)\n"
                        "  Description = z (up)\n") == 0,
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
    uint16_t *q = gd_bands(gd_path(path, "gd-v.png"), &len);
    bad = 0;
    for (size_t k = 0; q && len == cells * 6 && k < cells; k++)
        for (int b = 0; b < 3; b++)
            bad += q[b * cells + k] !=
                   wg_normal_to_u16(b == 1 ? -comp[b][k] : comp[b][k]);
    CHECK(q && len == cells * 6 && bad == 0, "normal PNG: %d samples differ",
          bad);
    free(q);
    CHECK(wg_normal_to_u16(-1.0f) == 0 && wg_normal_to_u16(1.0f) == 65535 &&
          wg_normal_to_u16(0.0f) == 32768);
    uint8_t *want = malloc(cells * 3);
    if (want)
        wg_albedo_map_make(&f, gd_nm_world.sea, 0, want);
    const char *names[2] = {"gd-v-a.tif", "gd-v-a.png"};
    for (int n = 0; want && n < 2; n++) {
        uint8_t *a = gd_bands(gd_path(path, names[n]), &len);
        bad = 0;
        for (size_t k = 0; a && len == cells * 3 && k < cells; k++)
            for (int b = 0; b < 3; b++)
                bad += a[b * cells + k] != want[3 * k + b];
        CHECK(a && len == cells * 3 && bad == 0, "%s: %d samples differ",
              names[n], bad);
        free(a);
    }
    free(want);
    wg_fields_free(&f);
}

/* The PNG maps' world files are outputs of the run (checked against the
 * others) and part of the map's set; the extension must be .png or .tif. */
WG_TEST(gdal_cli_normal_and_albedo_names)
{
    wg_cli c = gd_run("--normalmap gd-n.png --json gd-n.pgw");
    CHECK(c.status == 2 && strstr(c.err, "writes its world file 'gd-n.pgw'"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);
    c = gd_run("--albedo gd-a.png --normalmap gd-a.png");
    CHECK(c.status == 2 && strstr(c.err, "same file"), "%d %s", c.status,
          c.err);
    wg_cli_free(&c);
    c = gd_run("--albedo gd-a.jpg");
    CHECK(c.status == 2 && strstr(c.err, "not a .png or .tif"), "%d %s",
          c.status, c.err);
    wg_cli_free(&c);
    c = gd_run("--normalmap - ");
    CHECK(c.status == 2, "%d %s", c.status, c.err);
    wg_cli_free(&c);
    c = gd_run("--albedo gd-a.png --normalmap gd-b.PNG && ls gd-a.pgw "
               "gd-b.PGW && test ! -e gd-a.png.pgw");
    CHECK(c.status == 0, "%s%s", c.out, c.err);
    wg_cli_free(&c);
    /* A world file that cannot be written: neither file appears. */
    c = gd_sh("mkdir gd-wld.pgw && ./worldgen --size 45 -q --no-image "
              "--albedo gd-wld.png; s=$?; test ! -e gd-wld.png && exit $s");
    CHECK(c.status == 1 && strstr(c.err, "world file"), "%d %s", c.status,
          c.err);
    wg_cli_free(&c);
}
