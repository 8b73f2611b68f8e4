/* heightmap.c: the PFM, 16-bit PNG, R16 and GeoTIFF height map writers
 * (the water and sediment maps' too), the ENVI sidecars that let GDAL open
 * the raw ones, and the save that writes a map and its sidecar as one set;
 * then the normal and albedo maps (PNG or GeoTIFF) and the world files
 * that place their PNGs, saved the same way.
 *
 * PFM and R16 stream one row at a time through a row buffer, so writing a
 * huge world costs one row of memory, not a second copy of the field. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "backends/backend.h"
#include "geotiff.h"
#include "heightmap.h"
#include "texture.h"
#include "outfile.h"

wg_hm_format wg_heightmap_format_named(const char *name)
{
    if (strcasecmp(name, "pfm") == 0)
        return WG_HM_PFM;
    if (strcasecmp(name, "png") == 0)
        return WG_HM_PNG;
    if (strcasecmp(name, "r16") == 0 || strcasecmp(name, "raw") == 0)
        return WG_HM_R16;
    if (strcasecmp(name, "tif") == 0 || strcasecmp(name, "tiff") == 0)
        return WG_HM_TIF;
    return WG_HM_NONE;
}

wg_hm_format wg_heightmap_format_of_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        return WG_HM_NONE;
    return wg_heightmap_format_named(dot + 1);
}

uint16_t wg_height_to_u16(float h)
{
    double v = floor((double)h * 65535.0 + 0.5);
    if (!(v > 0.0)) /* also NaN, which a conformant field never holds */
        return 0;
    return v > 65535.0 ? 65535 : (uint16_t)v;
}

uint16_t wg_sediment_to_u16(float v)
{
    double q = floor((double)v * WG_SIGNED_SCALE + WG_SIGNED_ZERO + 0.5);
    if (!(q > 0.0)) /* also NaN, which a conformant field never holds */
        return 0;
    return q > 65535.0 ? 65535 : (uint16_t)q;
}

double wg_sediment_of_u16(uint16_t q)
{
    return ((double)q - WG_SIGNED_ZERO) / WG_SIGNED_SCALE;
}

/* Value x of a map of values v as its 16-bit sample. */
static uint16_t heightmap_u16(wg_hm_values v, float x)
{
    return v == WG_HM_SIGNED ? wg_sediment_to_u16(x) : wg_height_to_u16(x);
}

static int heightmap_put_u16_le(uint8_t *dst, const float *row, uint32_t n,
                                wg_hm_values v)
{
    for (uint32_t x = 0; x < n; x++) {
        uint16_t q = heightmap_u16(v, row[x]);
        dst[2 * x] = (uint8_t)(q & 0xff);
        dst[2 * x + 1] = (uint8_t)(q >> 8);
    }
    return 0;
}

static int heightmap_write_error(char *err)
{
    return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
}

/* The PFM header of a w x h map: a negative scale says little-endian. */
static int heightmap_pfm_header(char *buf, size_t len, uint32_t w, uint32_t h)
{
    return snprintf(buf, len, "Pf\n%u %u\n-1.0\n", w, h);
}

static int heightmap_pfm(FILE *fp, const float *h, wg_rect r, char *err)
{
    char head[40];
    heightmap_pfm_header(head, sizeof head, r.w, r.h);
    if (fputs(head, fp) < 0)
        return heightmap_write_error(err);
    uint8_t *buf = malloc((size_t)r.w * 4);
    if (!buf)
        return wg_fail(err, "out of memory");
    /* The rows run bottom to top. */
    for (uint32_t y = r.h; y-- > 0;) {
        const float *row = h + (size_t)y * r.w;
        for (uint32_t x = 0; x < r.w; x++) {
            uint32_t bits;
            memcpy(&bits, &row[x], 4);
            buf[4 * x] = (uint8_t)bits;
            buf[4 * x + 1] = (uint8_t)(bits >> 8);
            buf[4 * x + 2] = (uint8_t)(bits >> 16);
            buf[4 * x + 3] = (uint8_t)(bits >> 24);
        }
        if (fwrite(buf, 4, r.w, fp) != r.w) {
            free(buf);
            return heightmap_write_error(err);
        }
    }
    free(buf);
    return 0;
}

static int heightmap_r16(FILE *fp, const float *h, wg_rect r, wg_hm_values v,
                         char *err)
{
    uint8_t *buf = malloc((size_t)r.w * 2);
    if (!buf)
        return wg_fail(err, "out of memory");
    for (uint32_t y = 0; y < r.h; y++) {
        heightmap_put_u16_le(buf, h + (size_t)y * r.w, r.w, v);
        if (fwrite(buf, 2, r.w, fp) != r.w) {
            free(buf);
            return heightmap_write_error(err);
        }
    }
    free(buf);
    return 0;
}

static int heightmap_png(FILE *fp, const float *h, wg_rect r, wg_hm_values v,
                         const wg_png_text *text, int ntext, char *err)
{
    /* libpng wants whole rows; quantise the field once (2 bytes a cell, half
     * of the field itself). */
    uint16_t *q = wg_block_alloc(wg_rect_cells(r) * sizeof *q);
    if (!q)
        return wg_fail(err, "out of memory for a %ux%u PNG", r.w, r.h);
    for (size_t i = 0; i < wg_rect_cells(r); i++)
        q[i] = heightmap_u16(v, h[i]);
    int rc = wg_png_write(fp, r.w, r.h, 16, 1, q, (size_t)r.w * 2, text, ntext,
                          err);
    wg_block_free(q);
    return rc;
}

/* The entries of 'text' but "Software", as "key text" lines: with
 * worldgen's entries, the command line that makes the map again.  NULL
 * when there are none (or no memory). */
static char *heightmap_description(const wg_png_text *text, int ntext)
{
    size_t len = 1;
    for (int i = 0; i < ntext; i++)
        if (strcmp(text[i].key, "Software") != 0)
            len += strlen(text[i].key) + strlen(text[i].text) + 2;
    if (len == 1)
        return NULL;
    char *d = malloc(len), *p = d;
    for (int i = 0; d && i < ntext; i++)
        if (strcmp(text[i].key, "Software") != 0)
            p += sprintf(p, "%s%s %s", p == d ? "" : "\n", text[i].key,
                         text[i].text);
    return d;
}

static const char *heightmap_software(const wg_png_text *text, int ntext)
{
    for (int i = 0; i < ntext; i++)
        if (strcmp(text[i].key, "Software") == 0)
            return text[i].text;
    return NULL;
}

static int heightmap_tif(FILE *fp, const float *h, uint32_t n, wg_rect r,
                         const wg_png_text *text, int ntext, char *err)
{
    char *desc = heightmap_description(text, ntext);
    int rc = wg_geotiff_write(fp, h, n, r, heightmap_software(text, ntext),
                              desc, err);
    free(desc);
    return rc;
}

static int heightmap_window_ok(uint32_t n, wg_rect r, char *err)
{
    if (n < 2 || r.w == 0 || r.h == 0 || r.x >= n || r.y >= n ||
        r.w > n - r.x || r.h > n - r.y)
        return wg_fail(err, "window %ux%u at (%u, %u) is not inside the "
                       "%ux%u world", r.w, r.h, r.x, r.y, n, n);
    return 0;
}

int wg_map_write_rect(FILE *fp, wg_hm_format f, wg_hm_values v,
                      const float *field, uint32_t n, wg_rect r,
                      const wg_png_text *text, int ntext, char *err)
{
    if (heightmap_window_ok(n, r, err) != 0)
        return -1;
    errno = 0;
    switch (f) {
    case WG_HM_PFM:
        return heightmap_pfm(fp, field, r, err);
    case WG_HM_PNG:
        return heightmap_png(fp, field, r, v, text, ntext, err);
    case WG_HM_R16:
        return heightmap_r16(fp, field, r, v, err);
    case WG_HM_TIF:
        return heightmap_tif(fp, field, n, r, text, ntext, err);
    case WG_HM_NONE:
        break;
    }
    return wg_fail(err, "no height map format given");
}

int wg_heightmap_write_rect(FILE *fp, wg_hm_format f, const float *field,
                            uint32_t n, wg_rect r, const wg_png_text *text,
                            int ntext, char *err)
{
    return wg_map_write_rect(fp, f, WG_HM_HEIGHTS, field, n, r, text, ntext,
                             err);
}

int wg_heightmap_write(FILE *fp, wg_hm_format f, const float *h, uint32_t n,
                       const wg_png_text *text, int ntext, char *err)
{
    return wg_heightmap_write_rect(fp, f, h, n, wg_rect_world(n), text, ntext,
                                   err);
}

/* ---- sidecars ------------------------------------------------------------ */

const char *wg_heightmap_sidecar_suffix(wg_hm_format f)
{
    /* Appended, not replacing the extension: GDAL's ENVI driver looks for
     * FILE.r16.hdr first, and h.r16 and h.pfm in one folder keep apart. */
    return f == WG_HM_PFM || f == WG_HM_R16 ? ".hdr" : NULL;
}

int wg_heightmap_write_sidecar(FILE *fp, wg_hm_format f, uint32_t n,
                               wg_rect r, const wg_png_text *text, int ntext,
                               char *err)
{
    return wg_map_write_sidecar(fp, f, WG_HM_HEIGHTS, n, r, text, ntext, err);
}

int wg_map_write_sidecar(FILE *fp, wg_hm_format f, wg_hm_values v,
                         uint32_t n, wg_rect r, const wg_png_text *text,
                         int ntext, char *err)
{
    if (heightmap_window_ok(n, r, err) != 0)
        return -1;
    if (!wg_heightmap_sidecar_suffix(f))
        return wg_fail(err, "this format has no sidecar");
    errno = 0;
    char head[40];
    int pfm = f == WG_HM_PFM;
    int offset = pfm ? heightmap_pfm_header(head, sizeof head, r.w, r.h) : 0;
    fprintf(fp, "ENVI\n");
    char *desc = heightmap_description(text, ntext);
    if (desc) {
        /* A brace would end ENVI's value; one line reads everywhere. */
        for (char *p = desc; *p; p++)
            *p = *p == '{' ? '(' : *p == '}' ? ')' : *p == '\n' ? ' ' : *p;
        fprintf(fp, "description = {%s}\n", desc);
        free(desc);
    }
    double s = wg_geo_spacing(n);
    /* ENVI's reference pixel (1.5, 1.5) is the first sample's centre: the
     * vertex geotiff.h places.  PFM's first row is the window's last, so
     * its northing is that row's and the rows go north (a negative y
     * size: GDAL shows it south-up, each value where it belongs). */
    fprintf(fp, "samples = %u\nlines = %u\nbands = 1\nheader offset = %d\n"
                "file type = ENVI Standard\ndata type = %d\n"
                "interleave = bsq\nbyte order = 0\n"
                "map info = {Arbitrary, 1.5, 1.5, %.17g, %.17g, %.17g, %.17g, "
                "units=Meters}\ncoordinate system string = {%s}\n",
            r.w, r.h, offset, pfm ? 4 : 12, wg_geo_easting(r.x, n),
            wg_geo_northing(pfm ? r.y + r.h - 1 : r.y, n), s, pfm ? -s : s,
            WG_GEO_WKT);
    /* R16's samples back to values: GDAL's band scale and offset (value =
     * sample * gain + offset). */
    if (!pfm && v == WG_HM_SIGNED)
        fprintf(fp, "data gain values = {%.17g}\ndata offset values = "
                    "{%.17g}\n", 1.0 / WG_SIGNED_SCALE,
                -WG_SIGNED_ZERO / WG_SIGNED_SCALE);
    else if (!pfm)
        fprintf(fp, "data gain values = {%.17g}\ndata offset values = {0}\n",
                1.0 / 65535.0);
    if (ferror(fp))
        return heightmap_write_error(err);
    return 0;
}

/* Whether a file may be made beside the map at 'path' (a sidecar, a world
 * file): not standard output or a descriptor by its name ("-",
 * /dev/stdout, /dev/fd/N, /proc/...), nor an existing device, FIFO or
 * socket, none of which has a folder of its own to put one in. */
static int heightmap_has_folder(const char *path)
{
    if (wg_outfile_is_stdout(path) || strncmp(path, "/dev/fd/", 8) == 0 ||
        strncmp(path, "/dev/std", 8) == 0 || strncmp(path, "/proc/", 6) == 0)
        return 0;
    struct stat st;
    return !(stat(path, &st) == 0 && !S_ISREG(st.st_mode));
}

const char *wg_heightmap_sidecar_of(const char *path, wg_hm_format f,
                                    char *buf, size_t len)
{
    const char *suffix = wg_heightmap_sidecar_suffix(f);
    if (!suffix || !heightmap_has_folder(path))
        return NULL;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t keep = strlen(path);
    if (strlen(base) + strlen(suffix) > NAME_MAX) {
        const char *dot = strrchr(base, '.');
        if (!dot || (size_t)(dot - base) + strlen(suffix) > NAME_MAX)
            return NULL;
        keep = (size_t)(dot - path);
    }
    if (keep + strlen(suffix) >= len)
        return NULL;
    memcpy(buf, path, keep);
    strcpy(buf + keep, suffix);
    return buf;
}

/* Commit a map (o[0]) and, when files is 2, its sidecar (o[1]) named
 * 'side', a 'what' ("header", "world file"), as one set.  Returns 0, or -1
 * with the reason in err, naming the sidecar when it is what failed. */
static int heightmap_commit(wg_outfile o[2], int files, const char *what,
                            const char *side, char *err)
{
    char why[WG_ERR_LEN], shown[WG_PATH_SHOWN + 1];
    int failed = 0;
    if (wg_outfile_commit_set(o, files, &failed, why) == 0)
        return 0;
    if (failed == 1)
        return wg_fail(err, "its %s '%s': %s", what,
                       wg_outfile_shown(side, shown), why);
    return wg_fail(err, "%s", why);
}

int wg_heightmap_save(const char *path, wg_hm_format f, const float *field,
                      uint32_t n, wg_rect r, const wg_png_text *text,
                      int ntext, char *err)
{
    return wg_map_save(path, f, WG_HM_HEIGHTS, field, n, r, text, ntext, err);
}

int wg_map_save(const char *path, wg_hm_format f, wg_hm_values v,
                const float *field, uint32_t n, wg_rect r,
                const wg_png_text *text, int ntext, char *err)
{
    wg_outfile o[2];
    memset(o, 0, sizeof o);
    char side[4096 + 8], why[WG_ERR_LEN], shown[WG_PATH_SHOWN + 1];
    if (wg_outfile_open(&o[0], path, err) != 0)
        return -1;
    wg_outfile_dataset(&o[0]);
    if (wg_map_write_rect(o[0].fp, f, v, field, n, r, text, ntext, err) != 0)
        goto fail;
    /* A sidecar only beside a file renamed into place (slot >= 0). */
    int files = 1;
    if (o[0].slot >= 0 && wg_heightmap_sidecar_of(path, f, side, sizeof side)) {
        if (wg_outfile_open(&o[1], side, why) != 0 ||
            wg_map_write_sidecar(o[1].fp, f, v, n, r, text, ntext, why) != 0) {
            wg_fail(err, "its header '%s': %s", wg_outfile_shown(side, shown),
                    why);
            goto fail;
        }
        files = 2;
    }
    return heightmap_commit(o, files, "header", side, err);
fail:
    wg_outfile_abort(&o[1]);
    wg_outfile_abort(&o[0]);
    return -1;
}

/* ---- normal and albedo maps ---------------------------------------------- */

uint16_t wg_normal_to_u16(float v)
{
    double q = floor(((double)v * 0.5 + 0.5) * 65535.0 + 0.5);
    if (!(q > 0.0))
        return 0;
    return q > 65535.0 ? 65535 : (uint16_t)q;
}

const char *wg_worldfile_of(const char *path, char *buf, size_t len)
{
    if (wg_heightmap_format_of_path(path) != WG_HM_PNG ||
        !heightmap_has_folder(path))
        return NULL;
    const char *dot = strrchr(path, '.');
    size_t keep = (size_t)(dot - path) + 1;
    if (keep + 4 > len)
        return NULL;
    int upper = strcmp(dot + 1, "PNG") == 0;
    memcpy(buf, path, keep);
    strcpy(buf + keep, upper ? "PGW" : "pgw");
    return buf;
}

int wg_worldfile_write(FILE *fp, uint32_t n, wg_rect r, char *err)
{
    if (heightmap_window_ok(n, r, err) != 0)
        return -1;
    errno = 0;
    double s = wg_geo_spacing(n);
    fprintf(fp, "%.17g\n0\n0\n%.17g\n%.17g\n%.17g\n", s, -s,
            wg_geo_easting(r.x, n), wg_geo_northing(r.y, n));
    if (ferror(fp))
        return heightmap_write_error(err);
    return 0;
}

/* Write an image map, 'bands' samples a pixel of 'bits' (8, 16 for PNG, 32
 * for TIF), interleaved, to fp in format fmt. */
static int rgbmap_write(FILE *fp, wg_hm_format fmt, const void *pix,
                        int bits, uint32_t n, wg_rect r,
                        const wg_png_text *text, int ntext, char *err)
{
    errno = 0;
    if (fmt == WG_HM_PNG)
        return wg_png_write(fp, r.w, r.h, bits, 3, pix,
                            (size_t)r.w * 3 * (size_t)(bits / 8), text, ntext,
                            err);
    char *desc = heightmap_description(text, ntext);
    int rc = wg_geotiff_write_bands(fp, pix, 3, bits, n, r,
                                    heightmap_software(text, ntext), desc, err);
    free(desc);
    return rc;
}

/* Save an image map and, for a PNG renamed into place, its world file, as
 * one set (wg_heightmap_save). */
static int rgbmap_save(const char *path, wg_hm_format fmt, const void *pix,
                       int bits, uint32_t n, wg_rect r,
                       const wg_png_text *text, int ntext, char *err)
{
    wg_outfile o[2];
    memset(o, 0, sizeof o);
    char side[4096 + 8], why[WG_ERR_LEN], shown[WG_PATH_SHOWN + 1];
    if (wg_outfile_open(&o[0], path, err) != 0)
        return -1;
    wg_outfile_dataset(&o[0]);
    if (rgbmap_write(o[0].fp, fmt, pix, bits, n, r, text, ntext, err) != 0)
        goto fail;
    int files = 1;
    if (o[0].slot >= 0 && fmt == WG_HM_PNG &&
        wg_worldfile_of(path, side, sizeof side)) {
        if (wg_outfile_open(&o[1], side, why) != 0 ||
            wg_worldfile_write(o[1].fp, n, r, why) != 0) {
            wg_fail(err, "its world file '%s': %s",
                    wg_outfile_shown(side, shown), why);
            goto fail;
        }
        files = 2;
    }
    return heightmap_commit(o, files, "world file", side, err);
fail:
    wg_outfile_abort(&o[1]);
    wg_outfile_abort(&o[0]);
    return -1;
}

static int rgbmap_check(wg_hm_format fmt, const wg_fields *f, char *err)
{
    if (fmt != WG_HM_PNG && fmt != WG_HM_TIF)
        return wg_fail(err, "a normal or albedo map is .png or .tif");
    return heightmap_window_ok(f->n, f->r, err);
}

int wg_normalmap_save(const char *path, wg_hm_format fmt, const wg_fields *f,
                      const wg_png_text *text, int ntext, char *err)
{
    if (rgbmap_check(fmt, f, err) != 0)
        return -1;
    size_t cells = wg_fields_cells(f);
    int png = fmt == WG_HM_PNG;
    void *pix =
        wg_block_alloc(cells * 3 * (png ? sizeof(uint16_t) : sizeof(float)));
    if (!pix)
        return wg_fail(err, "out of memory for a %ux%u normal map", f->r.w,
                       f->r.h);
    /* Map axes: x east (X), y north (-Z), z up (Y). */
    for (size_t k = 0; k < cells; k++) {
        float v[3] = {f->nx[k], -f->nz[k], f->ny[k]};
        for (int c = 0; c < 3; c++) {
            if (png)
                ((uint16_t *)pix)[3 * k + c] = wg_normal_to_u16(v[c]);
            else
                ((float *)pix)[3 * k + c] = v[c];
        }
    }
    int rc = rgbmap_save(path, fmt, pix, png ? 16 : 32, f->n, f->r, text,
                         ntext, err);
    wg_block_free(pix);
    return rc;
}

int wg_albedomap_save(const char *path, wg_hm_format fmt, const wg_fields *f,
                      float sea, uint32_t threads, const wg_png_text *text,
                      int ntext, char *err)
{
    if (rgbmap_check(fmt, f, err) != 0)
        return -1;
    uint8_t *rgb = wg_block_alloc(wg_fields_cells(f) * 3);
    if (!rgb)
        return wg_fail(err, "out of memory for a %ux%u albedo map", f->r.w,
                       f->r.h);
    wg_albedo_map_make(f, sea, threads, rgb);
    int rc = rgbmap_save(path, fmt, rgb, 8, f->n, f->r, text, ntext, err);
    wg_block_free(rgb);
    return rc;
}
