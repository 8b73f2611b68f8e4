/* heightmap.c: the PFM, 16-bit PNG and R16 height map writers.
 *
 * Each streams one row at a time through a row buffer, so writing a huge
 * world costs one row of memory, not a second copy of the field. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/backend.h"
#include "heightmap.h"

wg_hm_format wg_heightmap_format_named(const char *name)
{
    if (strcasecmp(name, "pfm") == 0)
        return WG_HM_PFM;
    if (strcasecmp(name, "png") == 0)
        return WG_HM_PNG;
    if (strcasecmp(name, "r16") == 0 || strcasecmp(name, "raw") == 0)
        return WG_HM_R16;
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

static int heightmap_put_u16_le(uint8_t *dst, const float *row, uint32_t n)
{
    for (uint32_t x = 0; x < n; x++) {
        uint16_t q = wg_height_to_u16(row[x]);
        dst[2 * x] = (uint8_t)(q & 0xff);
        dst[2 * x + 1] = (uint8_t)(q >> 8);
    }
    return 0;
}

static int heightmap_write_error(char *err)
{
    return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
}

static int heightmap_pfm(FILE *fp, const float *h, uint32_t n, char *err)
{
    /* A negative scale says little-endian; the rows run bottom to top. */
    if (fprintf(fp, "Pf\n%u %u\n-1.0\n", n, n) < 0)
        return heightmap_write_error(err);
    uint8_t *buf = malloc((size_t)n * 4);
    if (!buf)
        return wg_fail(err, "out of memory");
    for (uint32_t y = n; y-- > 0;) {
        const float *row = h + (size_t)y * n;
        for (uint32_t x = 0; x < n; x++) {
            uint32_t bits;
            memcpy(&bits, &row[x], 4);
            buf[4 * x] = (uint8_t)bits;
            buf[4 * x + 1] = (uint8_t)(bits >> 8);
            buf[4 * x + 2] = (uint8_t)(bits >> 16);
            buf[4 * x + 3] = (uint8_t)(bits >> 24);
        }
        if (fwrite(buf, 4, n, fp) != n) {
            free(buf);
            return heightmap_write_error(err);
        }
    }
    free(buf);
    return 0;
}

static int heightmap_r16(FILE *fp, const float *h, uint32_t n, char *err)
{
    uint8_t *buf = malloc((size_t)n * 2);
    if (!buf)
        return wg_fail(err, "out of memory");
    for (uint32_t y = 0; y < n; y++) {
        heightmap_put_u16_le(buf, h + (size_t)y * n, n);
        if (fwrite(buf, 2, n, fp) != n) {
            free(buf);
            return heightmap_write_error(err);
        }
    }
    free(buf);
    return 0;
}

static int heightmap_png(FILE *fp, const float *h, uint32_t n,
                         const wg_png_text *text, int ntext, char *err)
{
    /* libpng wants whole rows; quantise the field once (2 bytes a cell, half
     * of the field itself). */
    uint16_t *q = malloc(wg_cells(n) * sizeof *q);
    if (!q)
        return wg_fail(err, "out of memory for a %ux%u PNG", n, n);
    for (size_t i = 0; i < wg_cells(n); i++)
        q[i] = wg_height_to_u16(h[i]);
    int rc = wg_png_write(fp, n, n, 16, 1, q, (size_t)n * 2, text, ntext, err);
    free(q);
    return rc;
}

int wg_heightmap_write(FILE *fp, wg_hm_format f, const float *h, uint32_t n,
                       const wg_png_text *text, int ntext, char *err)
{
    errno = 0;
    switch (f) {
    case WG_HM_PFM:
        return heightmap_pfm(fp, h, n, err);
    case WG_HM_PNG:
        return heightmap_png(fp, h, n, text, ntext, err);
    case WG_HM_R16:
        return heightmap_r16(fp, h, n, err);
    case WG_HM_NONE:
        break;
    }
    return wg_fail(err, "no height map format given");
}
