/* geotiff.h: float32 GeoTIFF height maps and the VRT mosaic of their tiles,
 * georeferenced in world units, so that GIS tools place a world, or a
 * window of it, where SPEC.md puts it.
 *
 * The georeferencing: easting = X, northing = -Z (SPEC.md: north is -Z, so
 * row y = 0 is the top, north-up).  Vertex (x, y) of an N-sided world is
 * at easting -3 + x*S, northing 3 - y*S, S = 6/(N-1).  Vertices are
 * samples, so the GeoTIFF says PixelIsPoint with its tie point on the
 * window's first vertex; GDAL's geotransform (a pixel's corner) is then
 * half a cell further out (wg_geo_transform).  The CRS is a local
 * (engineering) one, "worldgen world units", in metres: the unit of the
 * heights as well, so that slope and hillshade tools measure true angles.
 * Tiles of one world, each written with its own window, line up exactly. */
#ifndef WG_GEOTIFF_H
#define WG_GEOTIFF_H

#include <stdint.h>
#include <stdio.h>

#include "backends/spec.h"

/* The TIFF tiles' side: every GeoTIFF worldgen writes is tiled this way
 * (the VRT mosaic tells GDAL so, to open its tiles only when read). */
#define WG_GEOTIFF_BLOCK 256

/* The coordinate system GDAL reads from worldgen's GeoTIFFs, as WKT 1:
 * the VRT mosaic names it too. */
#define WG_GEO_WKT "LOCAL_CS[\"worldgen world units\",UNIT[\"metre\",1," \
                   "AUTHORITY[\"EPSG\",\"9001\"]],AXIS[\"Easting\",EAST]," \
                   "AXIS[\"Northing\",NORTH]]"

/* Whether this worldgen was built with libtiff and libgeotiff. */
int wg_geotiff_available(void);

/* The world position of vertex column x and row y of an N-sided world:
 * easting -3 + x*S, northing 3 - y*S (computed as 6x/(N-1), one rounding
 * fewer than x*S, so tiles agree with the whole world to the last bit). */
double wg_geo_easting(uint32_t x, uint32_t n);
double wg_geo_northing(uint32_t y, uint32_t n);

/* S, the distance between neighbouring vertices of an N-sided world (N >=
 * 2): the world's 6 units (WG_WORLD_UNITS) over its N - 1 cells; a pixel's
 * size in every georeferenced map. */
double wg_geo_spacing(uint32_t n);

/* GDAL's geotransform of window r of an N-sided world (N >= 2): gt[0],
 * gt[3] the outer corner of its first cell (half a cell north-west of its
 * first vertex), gt[1] = S, gt[5] = -S, no rotation. */
void wg_geo_transform(uint32_t n, wg_rect r, double gt[6]);

/* Write window r of an N-sided world as a GeoTIFF to fp: one band of
 * float32 (the exact values), 256 x 256 tiles, deflate with the
 * floating-point predictor, byte-deterministic; BigTIFF when the samples
 * pass 3.75 GiB.  'field' holds r.w * r.h floats, row-major (stride r.w),
 * row 0 the window's top.  'software' goes into the Software tag,
 * 'description' (how it was made; may be NULL) into ImageDescription.
 * fp may be a pipe: a stream that cannot seek (or appends) gets the TIFF
 * through an anonymous temporary file under $TMPDIR, then copied.  Returns
 * 0, or -1 with the reason in err[WG_ERR_LEN]. */
int wg_geotiff_write(FILE *fp, const float *field, uint32_t n, wg_rect r,
                     const char *software, const char *description,
                     char *err);

/* Would a GeoTIFF written to descriptor fd go through the temporary file
 * (fd is not a regular file at its start, or it appends)? */
int wg_geotiff_needs_temporary(int fd);

/* Make and drop the temporary file a GeoTIFF to a pipe is written to, so
 * that a $TMPDIR that takes no files fails a run before its work.
 * Returns 0, or -1 with the reason (the folder and its errno). */
int wg_geotiff_try_temporary(char *err);

/* The same for a raster of 'bands' (1..4) samples a pixel, interleaved
 * (pixel-major), each a float32 (bits 32) or a uint8 (bits 8): 'pixels'
 * holds r.w * r.h of them, row-major.  Deflate with the floating-point
 * predictor for float32, the horizontal one for uint8; 3 bands of uint8
 * are RGB, other bands past the first extra samples (GDAL reads them all
 * as bands), georeferenced as above. */
int wg_geotiff_write_bands(FILE *fp, const void *pixels, int bands, int bits,
                           uint32_t n, wg_rect r, const char *software,
                           const char *description, char *err);

/* Write to fp the VRT (GDAL's virtual raster) of the whole N-sided world
 * made of 'ntiles' worldgen GeoTIFFs: tile i is the file paths[i] (a
 * relative name is taken relative to the VRT's folder, as GDAL does) and
 * holds window rects[i].  Float32, the geotransform and CRS of the tiles;
 * where tiles overlap the later one shows, and cells no tile covers read 0.
 * 'software' and 'description' (either may be NULL) become the metadata
 * items TIFFTAG_SOFTWARE and TIFFTAG_IMAGEDESCRIPTION, which
 * gdal_translate writes back into those tags.  Returns 0, or -1 with the
 * reason (a window outside the world, a name XML cannot hold, a write
 * error). */
int wg_vrt_write(FILE *fp, uint32_t n, const char *const *paths,
                 const wg_rect *rects, int ntiles, const char *software,
                 const char *description, char *err);

#endif
