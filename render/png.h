/* png.h: PNG encoding through libpng, with tEXt chunks that record how the
 * image was made. */
#ifndef WG_PNG_H
#define WG_PNG_H

#include <stdint.h>
#include <stdio.h>

/* The most pixels a side of a PNG that libpng writes, or reads, unless
 * told otherwise (its default user limit; GDAL keeps it). */
#define WG_PNG_MAX 1000000

/* One tEXt chunk: a Latin-1 keyword (1..79 bytes) and its text. */
typedef struct wg_png_text {
    const char *key;
    const char *text;
} wg_png_text;

/* Write a w x h image to fp.  'depth' is 8 or 16 bits per sample,
 * 'channels' is 1 (grey) or 3 (RGB); 'pixels' holds the rows top to bottom,
 * 'stride' bytes apart, 16-bit samples as host-order uint16_t; 8-bit RGB
 * is a colour picture, tagged sRGB, and the rest data, untagged.  Returns 0,
 * or -1 with the reason in err[WG_ERR_LEN]: the cause of the write that
 * failed (strerror), or libpng's own complaint. */
int wg_png_write(FILE *fp, uint32_t w, uint32_t h, int depth, int channels,
                 const void *pixels, size_t stride, const wg_png_text *text,
                 int ntext, char *err);

#endif
