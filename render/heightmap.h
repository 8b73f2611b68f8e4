/* heightmap.h: height map writers, one call per format, for a whole world
 * or a window of one; the water and sediment maps go through them too.
 *
 * PFM holds the exact binary32 heights; PNG (16-bit grey) and R16 (raw
 * little-endian uint16, the layout Unity and Unreal import) map height 0..1
 * to 0..65535 with rounding, the same scale for every world and tile; TIF
 * is a float32 GeoTIFF (render/geotiff.h), exact and georeferenced.  Row
 * y = 0 of the grid is the top row of every image (PFM stores rows bottom
 * to top, as its format says, so it writes them in reverse).
 *
 * The raw formats get a sidecar that GDAL reads (wg_heightmap_save): an
 * ENVI header FILE.r16.hdr / FILE.pfm.hdr with the layout, the
 * georeferencing of geotiff.h, and for R16 the scale back to heights. */
#ifndef WG_HEIGHTMAP_H
#define WG_HEIGHTMAP_H

#include <stdint.h>
#include <stdio.h>

#include "backends/spec.h"
#include "png.h"

typedef enum wg_hm_format {
    WG_HM_NONE = 0,
    WG_HM_PFM,
    WG_HM_PNG,
    WG_HM_R16,
    WG_HM_TIF,
} wg_hm_format;

/* The format called 'name' ("pfm", "png", "r16" or "raw", "tif" or
 * "tiff", any case), or WG_HM_NONE. */
wg_hm_format wg_heightmap_format_named(const char *name);

/* The format a path's extension names, or WG_HM_NONE. */
wg_hm_format wg_heightmap_format_of_path(const char *path);

/* Height 0..1 as a 16-bit sample: round(h * 65535), clamped. */
uint16_t wg_height_to_u16(float h);

/* What a map's values are, which decides their 16-bit samples (PNG and
 * R16; PFM and TIF hold the exact binary32 values either way):
 * WG_HM_HEIGHTS, heights and water depths 0..1 as 0..65535
 * (wg_height_to_u16); WG_HM_SIGNED, a signed field (the sediment, laid
 * down > 0 or carried away < 0) as 32768 + v * 65535 (wg_sediment_to_u16):
 * the height map's step, 1/65535, with 0 at 32768, so that -0.5..+0.49999
 * fits and every sample reads back as (sample - 32768) / 65535. */
typedef enum wg_hm_values {
    WG_HM_HEIGHTS = 0,
    WG_HM_SIGNED,
} wg_hm_values;

/* The sample of a signed value 0, and the samples per unit. */
#define WG_SIGNED_ZERO 32768
#define WG_SIGNED_SCALE 65535.0

/* A signed value as a 16-bit sample: round(32768 + v * 65535), clamped to
 * 0..65535 (v below -32768/65535 or above 32767/65535 is cut there). */
uint16_t wg_sediment_to_u16(float v);

/* The value a signed sample stands for: (q - 32768) / 65535, within half a
 * step (0.5 / 65535) of the value written, inside the range. */
double wg_sediment_of_u16(uint16_t q);

/* Write window r of an N-sided world to fp in format f: 'field' holds its
 * r.w * r.h values, row-major (stride r.w), row 0 the window's top.  The
 * window places a GeoTIFF; the other formats hold its samples alone.
 * 'text' records how the map was made: PNG's tEXt chunks; for TIF the
 * "Software" entry is the Software tag and the others, as "key text"
 * lines, the ImageDescription.  Returns 0, or -1 with the reason in
 * err[WG_ERR_LEN] (a write error, out of memory). */
int wg_heightmap_write_rect(FILE *fp, wg_hm_format f, const float *field,
                            uint32_t n, wg_rect r, const wg_png_text *text,
                            int ntext, char *err);

/* The same for values v (wg_hm_values: the 16-bit samples' mapping). */
int wg_map_write_rect(FILE *fp, wg_hm_format f, wg_hm_values v,
                      const float *field, uint32_t n, wg_rect r,
                      const wg_png_text *text, int ntext, char *err);

/* The same for the whole N x N world. */
int wg_heightmap_write(FILE *fp, wg_hm_format f, const float *h, uint32_t n,
                       const wg_png_text *text, int ntext, char *err);

/* What a format's sidecar adds to the map's name (".hdr" for PFM and R16),
 * or NULL when it has none. */
const char *wg_heightmap_sidecar_suffix(wg_hm_format f);

/* The sidecar's name for a map written to 'path' in format f, in
 * buf[len]: path + ".hdr"; when that name is longer than a file name may
 * be, the extension replaced instead (h.pfm: h.hdr, which GDAL also looks
 * for).  NULL when the map gets none: a format without one, standard
 * output or a descriptor ("-", /dev/stdout, /dev/fd/N), an existing
 * device, FIFO or socket, a name with no room for one.  The command line
 * checks these names against its other outputs. */
const char *wg_heightmap_sidecar_of(const char *path, wg_hm_format f,
                                    char *buf, size_t len);

/* Write the sidecar of a map of window r of an N-sided world in format f:
 * an ENVI header, with the non-Software entries of 'text' as its
 * description.  Returns 0, or -1 with the reason. */
int wg_heightmap_write_sidecar(FILE *fp, wg_hm_format f, uint32_t n,
                               wg_rect r, const wg_png_text *text, int ntext,
                               char *err);

/* The same for values v: R16's gain and offset take its samples back to
 * values (heights: gain 1/65535, offset 0; signed: gain 1/65535, offset
 * -32768/65535). */
int wg_map_write_sidecar(FILE *fp, wg_hm_format f, wg_hm_values v,
                         uint32_t n, wg_rect r, const wg_png_text *text,
                         int ntext, char *err);

/* Write the map to 'path' through render/outfile.h, with its sidecar
 * (wg_heightmap_sidecar_of) when the map is a file renamed into place,
 * both committed as one set: both appear, or neither.  "-", a descriptor,
 * a device or a FIFO gets the map alone (there is no folder to put a
 * sidecar in); a TIF to one of those goes through an anonymous temporary
 * file, as libtiff seeks.  Returns 0, or -1 with the
 * reason in err (naming the sidecar when it is the one that failed). */
int wg_heightmap_save(const char *path, wg_hm_format f, const float *field,
                      uint32_t n, wg_rect r, const wg_png_text *text,
                      int ntext, char *err);

/* The same for values v: --heightmap and --watermap save WG_HM_HEIGHTS,
 * --sedimentmap WG_HM_SIGNED. */
int wg_map_save(const char *path, wg_hm_format f, wg_hm_values v,
                const float *field, uint32_t n, wg_rect r,
                const wg_png_text *text, int ntext, char *err);

/* ---- normal and albedo maps (--normalmap, --albedo) ----------------------
 *
 * One pixel a vertex of the fields' window (f->r), row 0 its top, in PNG
 * or TIF (wg_heightmap_format_of_path: only those two).  The normal map's
 * three bands are the normal in map axes: x east, y north, z up, that is
 * nx, -nz, ny of the world's (Y up, Z south); its TIF is float32, exact,
 * its PNG 16-bit RGB, each component v as round((v * 0.5 + 0.5) * 65535)
 * (wg_normal_to_u16).  The albedo map is 8-bit RGB (wg_albedo_map_make)
 * in both.  A TIF is georeferenced as the height map's; a PNG gets a
 * world file beside it (wg_worldfile_of), which GDAL reads for its
 * geotransform, so gdalbuildvrt places PNG tiles too. */

/* A normal component -1..1 as a 16-bit sample: round((v*0.5+0.5)*65535),
 * clamped. */
uint16_t wg_normal_to_u16(float v);

struct wg_fields; /* backends/backend.h */

/* The world file's name for a PNG map written to 'path', in buf[len]:
 * the extension's first and last letters and 'w' in its place (map.png:
 * map.pgw; MAP.PNG: MAP.PGW), as GDAL looks for it.  NULL when it gets
 * none: not a .png, standard output, a descriptor, a device, FIFO or
 * socket, a name with no room. */
const char *wg_worldfile_of(const char *path, char *buf, size_t len);

/* Write the world file of window r of an N-sided world: the pixel size
 * S, 0, 0, -S and the centre of the top-left pixel (its first vertex,
 * wg_geo_easting / wg_geo_northing), each to 17 digits.  Returns 0, or
 * -1 with the reason in err. */
int wg_worldfile_write(FILE *fp, uint32_t n, wg_rect r, char *err);

/* Write the normal map of fields f to 'path' in format fmt (WG_HM_PNG or
 * WG_HM_TIF), with its world file for a PNG as one set (both or neither,
 * as wg_heightmap_save).  'text' as wg_heightmap_write_rect.  Returns 0,
 * or -1 with the reason in err. */
int wg_normalmap_save(const char *path, wg_hm_format fmt,
                      const struct wg_fields *f, const wg_png_text *text,
                      int ntext, char *err);

/* The same for the albedo map of f (the sea at 'sea'), made on 'threads'
 * threads (0: one per CPU). */
int wg_albedomap_save(const char *path, wg_hm_format fmt,
                      const struct wg_fields *f, float sea, uint32_t threads,
                      const wg_png_text *text, int ntext, char *err);

#endif
