/* png.c: PNG encoding through libpng (8-bit sRGB pictures, 16-bit data
 * maps), errors turned into messages rather than longjmp-ing out of the
 * caller.
 *
 * libpng writes through our own callbacks, which keep the errno of a write
 * that failed: the message is then its cause (No space left on device,
 * File too large, Bad file descriptor), not libpng's "Write Error". */
#include <errno.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "png.h"

/* Where libpng's output and errors go. */
typedef struct png_sink {
    FILE *fp;
    int err;   /* errno of the write or flush that failed, else 0 */
    char *why; /* err[WG_ERR_LEN] of the caller */
} png_sink;

static void png_on_error(png_structp p, png_const_charp msg)
{
    png_sink *s = png_get_error_ptr(p);
    if (s->err)
        snprintf(s->why, WG_ERR_LEN, "%s", strerror(s->err));
    else
        snprintf(s->why, WG_ERR_LEN, "PNG: %s", msg);
    png_longjmp(p, 1);
}

static void png_on_warning(png_structp p, png_const_charp msg)
{
    (void)p;
    (void)msg; /* libpng warnings are about odd input we never produce */
}

static void png_on_write(png_structp p, png_bytep data, size_t len)
{
    png_sink *s = png_get_io_ptr(p);
    errno = 0;
    if (fwrite(data, 1, len, s->fp) != len) {
        s->err = errno ? errno : EIO;
        png_error(p, "write failed");
    }
}

static void png_on_flush(png_structp p)
{
    png_sink *s = png_get_io_ptr(p);
    errno = 0;
    if (fflush(s->fp) != 0) {
        s->err = errno ? errno : EIO;
        png_error(p, "flush failed");
    }
}

int wg_png_write(FILE *fp, uint32_t w, uint32_t h, int depth, int channels,
                 const void *pixels, size_t stride, const wg_png_text *text,
                 int ntext, char *err)
{
    png_sink sink = {.fp = fp, .why = err};
    /* Everything that must be freed exists before setjmp and is not
     * changed after it: a local assigned after setjmp is indeterminate
     * once libpng longjmps back, and would leak. */
    png_textp const chunks =
        ntext > 0 ? calloc((size_t)ntext, sizeof(png_text)) : NULL;
    if (ntext > 0 && !chunks)
        return wg_fail(err, "PNG: out of memory");
    png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink,
                                            png_on_error, png_on_warning);
    png_infop info = p ? png_create_info_struct(p) : NULL;
    if (!info) {
        png_destroy_write_struct(&p, NULL);
        free(chunks);
        return wg_fail(err, "PNG: out of memory");
    }
    if (setjmp(png_jmpbuf(p))) {
        png_destroy_write_struct(&p, &info);
        free(chunks);
        return -1; /* png_on_error wrote the reason */
    }
    png_set_write_fn(p, &sink, png_on_write, png_on_flush);
    /* zlib level 1 with the SUB filter.  Measured on the default 800x600
     * render (best of 5): level 6 with libpng's adaptive filters 38.4 ms and
     * 219 KB, level 1 adaptive 16.0 ms / 264 KB, level 1 SUB 8.8 ms /
     * 266 KB, level 9 167 ms / 212 KB.  A fifth more bytes for a quarter of
     * the time: the PNG was the slowest step of a run. */
    png_set_compression_level(p, 1);
    png_set_filter(p, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    png_set_IHDR(p, info, w, h, depth,
                 channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    /* An 8-bit RGB image is a colour picture (the render, the ground's
     * colour), its samples sRGB: said so (sRGB, with the gAMA and cHRM that
     * readers without sRGB support take instead), so that colour-managed
     * viewers and editors do not take it for an unknown space.  The 16-bit
     * maps are data (heights, normals): left untagged. */
    if (depth == 8 && channels == 3)
        png_set_sRGB_gAMA_and_cHRM(p, info, PNG_sRGB_INTENT_PERCEPTUAL);
    if (ntext > 0) {
        for (int i = 0; i < ntext; i++) {
            chunks[i].compression = PNG_TEXT_COMPRESSION_NONE;
            chunks[i].key = (png_charp)text[i].key;
            chunks[i].text = (png_charp)text[i].text;
        }
        png_set_text(p, info, chunks, ntext);
    }
    png_write_info(p, info);
    if (depth == 16) {
        uint16_t probe = 1;
        if (*(uint8_t *)&probe == 1)
            png_set_swap(p); /* PNG stores 16-bit samples big-endian */
    }
    for (uint32_t y = 0; y < h; y++)
        png_write_row(p, (png_const_bytep)pixels + (size_t)y * stride);
    png_write_end(p, info);
    png_destroy_write_struct(&p, &info);
    free(chunks);
    return 0;
}
