/* geotiff.c: the float32 GeoTIFF writer (libtiff + libgeotiff) and the VRT
 * mosaic of GeoTIFF tiles (plain XML).
 *
 * libgeotiff is loaded with dlopen() by the first GeoTIFF written, not
 * linked: it brings PROJ and through it curl, GnuTLS, Kerberos, SQLite and
 * libstdc++, 30 libraries that made every start 12-15 ms slower (measured:
 * 50 starts of a program linked with and without it, 15-18 ms against
 * 3.6 ms each), for the runs that write a .tif and all the others.
 *
 * libtiff writes through client procedures on the caller's stdio stream,
 * so the TIFF goes through render/outfile.h like every other output; it
 * seeks back to finish the header, so a stream that cannot seek gets the
 * TIFF through an anonymous temporary file first. */
#define _GNU_SOURCE /* O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "geotiff.h"

/* Bytes of samples (tiles padded) from which a GeoTIFF is a BigTIFF:
 * classic TIFF's offsets end at 4 GiB. */
#ifndef GEOTIFF_BIG_AT
#define GEOTIFF_BIG_AT 0xF0000000u
#endif

double wg_geo_easting(uint32_t x, uint32_t n)
{
    return -3.0 + 6.0 * (double)x / (double)(n - 1);
}

double wg_geo_northing(uint32_t y, uint32_t n)
{
    return 3.0 - 6.0 * (double)y / (double)(n - 1);
}

void wg_geo_transform(uint32_t n, wg_rect r, double gt[6])
{
    double s = 6.0 / (double)(n - 1);
    /* As GDAL derives it from a PixelIsPoint tie point and scale, so that
     * the VRT's numbers are the ones GDAL reads from the tiles. */
    gt[0] = wg_geo_easting(r.x, n) - 0.5 * s;
    gt[1] = s;
    gt[2] = 0.0;
    gt[3] = wg_geo_northing(r.y, n) + 0.5 * s;
    gt[4] = 0.0;
    gt[5] = -s;
}

/* ---- the VRT mosaic ------------------------------------------------------ */

/* Write s with XML's five special characters escaped.  Control characters
 * other than tab cannot be in an XML 1.0 document at all. */
static int vrt_escaped(FILE *fp, const char *s, char *err)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *e = c == '&' ? "&amp;" : c == '<' ? "&lt;"
                      : c == '>' ? "&gt;" : c == '"' ? "&quot;"
                      : c == '\'' ? "&apos;" : NULL;
        if (c < 0x20 && c != '\t')
            return wg_fail(err, "a name or text with control character "
                           "0x%02x, which XML cannot hold", c);
        if (e ? fputs(e, fp) < 0 : putc(c, fp) == EOF)
            return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
    }
    return 0;
}

/* An XML text item of the VRT's metadata, its newlines made spaces. */
static int vrt_mdi(FILE *fp, const char *key, const char *text, char *err)
{
    if (!text)
        return 0;
    char *flat = strdup(text);
    if (!flat)
        return wg_fail(err, "out of memory");
    for (char *p = flat; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(fp, "    <MDI key=\"%s\">", key);
    int rc = vrt_escaped(fp, flat, err);
    free(flat);
    if (rc == 0)
        fputs("</MDI>\n", fp);
    return rc;
}

int wg_vrt_write(FILE *fp, uint32_t n, const char *const *paths,
                 const wg_rect *rects, int ntiles, const char *software,
                 const char *description, char *err)
{
    if (n < 2)
        return wg_fail(err, "a world has at least 2 vertices a side, not %u", n);
    if (ntiles < 1)
        return wg_fail(err, "a mosaic needs at least one tile");
    for (int i = 0; i < ntiles; i++) {
        wg_rect r = rects[i];
        if (r.w == 0 || r.h == 0 || r.x >= n || r.y >= n || r.w > n - r.x ||
            r.h > n - r.y)
            return wg_fail(err, "tile %d (%s): window %ux%u at (%u, %u) is "
                           "not inside the %ux%u world", i, paths[i], r.w,
                           r.h, r.x, r.y, n, n);
        if (paths[i][0] == '\0')
            return wg_fail(err, "tile %d has an empty file name", i);
    }
    errno = 0;
    double gt[6];
    wg_geo_transform(n, wg_rect_world(n), gt);
    fprintf(fp, "<VRTDataset rasterXSize=\"%u\" rasterYSize=\"%u\">\n"
                "  <SRS dataAxisToSRSAxisMapping=\"1,2\">", n, n);
    if (vrt_escaped(fp, WG_GEO_WKT, err) != 0)
        return -1;
    /* %.17g: every double back to the bit. */
    fprintf(fp, "</SRS>\n  <GeoTransform>%.17g, %.17g, %.17g, %.17g, %.17g, "
                "%.17g</GeoTransform>\n  <Metadata>\n"
                "    <MDI key=\"AREA_OR_POINT\">Point</MDI>\n",
            gt[0], gt[1], gt[2], gt[3], gt[4], gt[5]);
    if (vrt_mdi(fp, "TIFFTAG_IMAGEDESCRIPTION", description, err) != 0 ||
        vrt_mdi(fp, "TIFFTAG_SOFTWARE", software, err) != 0)
        return -1;
    fputs("  </Metadata>\n  <VRTRasterBand dataType=\"Float32\" band=\"1\">\n",
          fp);
    for (int i = 0; i < ntiles; i++) {
        wg_rect r = rects[i];
        fprintf(fp, "    <SimpleSource>\n"
                    "      <SourceFilename relativeToVRT=\"%d\">",
                paths[i][0] != '/');
        if (vrt_escaped(fp, paths[i], err) != 0)
            return -1;
        /* The source's properties let GDAL open a tile only when it is
         * read: a mosaic of thousands opens at once. */
        fprintf(fp, "</SourceFilename>\n"
                    "      <SourceBand>1</SourceBand>\n"
                    "      <SourceProperties RasterXSize=\"%u\" "
                    "RasterYSize=\"%u\" DataType=\"Float32\" BlockXSize=\"%d\" "
                    "BlockYSize=\"%d\" />\n"
                    "      <SrcRect xOff=\"0\" yOff=\"0\" xSize=\"%u\" "
                    "ySize=\"%u\" />\n"
                    "      <DstRect xOff=\"%u\" yOff=\"%u\" xSize=\"%u\" "
                    "ySize=\"%u\" />\n"
                    "    </SimpleSource>\n",
                r.w, r.h, WG_GEOTIFF_BLOCK, WG_GEOTIFF_BLOCK, r.w, r.h, r.x,
                r.y, r.w, r.h);
    }
    fputs("  </VRTRasterBand>\n</VRTDataset>\n", fp);
    if (ferror(fp))
        return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
    return 0;
}

/* ---- the GeoTIFF --------------------------------------------------------- */

#ifndef WG_HAVE_GEOTIFF

int wg_geotiff_available(void)
{
    return 0;
}

int wg_geotiff_write_bands(FILE *fp, const void *pixels, int bands, int bits,
                           uint32_t n, wg_rect r, const char *software,
                           const char *description, char *err)
{
    (void)fp, (void)pixels, (void)bands, (void)bits, (void)n, (void)r;
    (void)software, (void)description;
    return wg_fail(err, "this worldgen was built without libtiff and "
                   "libgeotiff (make deps installs libtiff-dev and "
                   "libgeotiff-dev; then make)");
}

#else

#include <dlfcn.h>
#include <pthread.h>

/* Debian's layout: libgeotiff's headers in their own folder, which they
 * include from by quoted names. */
#include <geotiff/geotiffio.h>
#include <geotiff/xtiffio.h>

/* The library's run-time name (Debian 12's libgeotiff5). */
#ifndef WG_GEOTIFF_SONAME
#define WG_GEOTIFF_SONAME "libgeotiff.so.5"
#endif

/* The libgeotiff functions this file calls, looked up at run time with the
 * types its headers declare. */
#define GEOTIFF_FUNCTIONS(X)                                                 \
    X(XTIFFInitialize) X(GTIFNew) X(GTIFKeySet) X(GTIFWriteKeys) X(GTIFFree)

static struct {
#define X(f) __typeof__(f) *f;
    GEOTIFF_FUNCTIONS(X)
#undef X
} geotiff_lib;

/* Why libgeotiff could not be loaded ("" when it was). */
static char geotiff_lib_err[300];

int wg_geotiff_available(void)
{
    return 1;
}

/* The stream libtiff writes to, and what went wrong there or in libtiff. */
typedef struct tif_io {
    FILE *fp;
    int werr;        /* errno of the first failed write or seek */
    char msg[200];   /* libtiff's first complaint */
} tif_io;

static tmsize_t tif_read(thandle_t h, void *buf, tmsize_t len)
{
    /* Writing a new TIFF never reads; a stream open for writing only
     * would fail here anyway. */
    tif_io *io = h;
    return (tmsize_t)fread(buf, 1, (size_t)len, io->fp);
}

static tmsize_t tif_write(thandle_t h, void *buf, tmsize_t len)
{
    tif_io *io = h;
    errno = 0;
    size_t done = fwrite(buf, 1, (size_t)len, io->fp);
    if (done != (size_t)len && !io->werr)
        io->werr = errno ? errno : EIO;
    return (tmsize_t)done;
}

static toff_t tif_seek(thandle_t h, toff_t off, int whence)
{
    tif_io *io = h;
    if (fseeko(io->fp, (off_t)off, whence) != 0) {
        if (!io->werr)
            io->werr = errno ? errno : EIO;
        return (toff_t)-1;
    }
    return (toff_t)ftello(io->fp);
}

static int tif_close(thandle_t h)
{
    (void)h; /* the stream is the caller's */
    return 0;
}

static toff_t tif_size(thandle_t h)
{
    tif_io *io = h;
    off_t at = ftello(io->fp), end;
    if (at < 0 || fseeko(io->fp, 0, SEEK_END) != 0)
        return 0;
    end = ftello(io->fp);
    fseeko(io->fp, at, SEEK_SET);
    return end < 0 ? 0 : (toff_t)end;
}

static int tif_map(thandle_t h, void **base, toff_t *size)
{
    (void)h, (void)base, (void)size;
    return 0;
}

static void tif_unmap(thandle_t h, void *base, toff_t size)
{
    (void)h, (void)base, (void)size;
}

static int tif_complaint(TIFF *tif, void *user, const char *module,
                         const char *fmt, va_list ap)
{
    (void)tif;
    tif_io *io = user;
    if (!io->msg[0]) {
        int k = snprintf(io->msg, sizeof io->msg, "%s: ",
                         module ? module : "libtiff");
        if (k > 0 && (size_t)k < sizeof io->msg)
            vsnprintf(io->msg + k, sizeof io->msg - (size_t)k, fmt, ap);
    }
    return 1; /* handled: nothing on stderr */
}

static int tif_quiet(TIFF *tif, void *user, const char *module,
                     const char *fmt, va_list ap)
{
    (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
    return 1;
}

static pthread_once_t tif_once = PTHREAD_ONCE_INIT;

/* Load libgeotiff (kept to the end: libtiff holds its tag tables) and
 * register the GeoTIFF tags with libtiff, once. */
static void tif_init(void)
{
    void *h = dlopen(WG_GEOTIFF_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(geotiff_lib_err, sizeof geotiff_lib_err,
                 "cannot load libgeotiff: %s (is libgeotiff5 installed?)",
                 dlerror());
        return;
    }
#define X(f)                                                                 \
    if (!(*(void **)&geotiff_lib.f = dlsym(h, #f))) {                        \
        snprintf(geotiff_lib_err, sizeof geotiff_lib_err,                    \
                 "cannot load libgeotiff: " WG_GEOTIFF_SONAME " has no " #f); \
        dlclose(h);                                                          \
        return;                                                              \
    }
    GEOTIFF_FUNCTIONS(X)
#undef X
    geotiff_lib.XTIFFInitialize();
}

/* Can libtiff write to fp in place: a regular file, at its start, that
 * does not append (which would ignore the seeks)? */
static int tif_in_place(FILE *fp)
{
    struct stat st;
    int fd = fileno(fp);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && !(fl & O_APPEND) && ftello(fp) == 0;
}

/* An anonymous temporary file (no name to leave behind), under $TMPDIR. */
static FILE *tif_tmpfile(char *err)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) { /* a file system without O_TMPFILE */
        char name[4096];
        snprintf(name, sizeof name, "%s/worldgen-tif-XXXXXX", dir);
        fd = mkstemp(name);
        if (fd >= 0)
            unlink(name);
    }
    FILE *fp = fd >= 0 ? fdopen(fd, "w+b") : NULL;
    if (!fp) {
        wg_fail(err, "cannot make a temporary file in %s for the TIFF: %s",
                dir, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return fp;
}

/* Write the TIFF itself to a seekable fp: 'bands' samples a pixel,
 * interleaved, float32 (bits 32) or uint8 (bits 8). */
static int tif_write_all(FILE *fp, const void *pixels, int bands, int bits,
                         uint32_t n, wg_rect r, const char *software,
                         const char *description, char *err)
{
    enum { B = WG_GEOTIFF_BLOCK };
    const size_t px = (size_t)bands * (size_t)(bits / 8); /* bytes a pixel */
    const uint8_t *field = pixels;
    tif_io io = {.fp = fp};
    pthread_once(&tif_once, tif_init);
    if (geotiff_lib_err[0])
        return wg_fail(err, "%s", geotiff_lib_err);
    TIFFOpenOptions *opt = TIFFOpenOptionsAlloc();
    if (!opt)
        return wg_fail(err, "out of memory");
    TIFFOpenOptionsSetErrorHandlerExtR(opt, tif_complaint, &io);
    TIFFOpenOptionsSetWarningHandlerExtR(opt, tif_quiet, &io);
    /* BigTIFF when the samples (tiles padded) could pass classic TIFF's 4
     * GiB of offsets; chosen from the size alone, so output stays a
     * function of the input. */
    uint64_t across = (r.w + B - 1) / B, down = (r.h + B - 1) / B;
    int big = across * down * B * B * px > GEOTIFF_BIG_AT;
    TIFF *tif = TIFFClientOpenExt("worldgen", big ? "w8" : "w", &io, tif_read,
                                  tif_write, tif_seek, tif_close, tif_size,
                                  tif_map, tif_unmap, opt);
    TIFFOpenOptionsFree(opt);
    uint8_t *tile = NULL;
    GTIF *gt = NULL;
    int ok = tif != NULL;
    /* 8-bit RGB is a colour picture; other bands past the first are
     * "unspecified" extra samples, which GDAL reads as bands. */
    const int rgb = bits == 8 && bands == 3;
    uint16_t extra[3] = {EXTRASAMPLE_UNSPECIFIED, EXTRASAMPLE_UNSPECIFIED,
                         EXTRASAMPLE_UNSPECIFIED};
    if (ok) {
        ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, r.w) &&
             TIFFSetField(tif, TIFFTAG_IMAGELENGTH, r.h) &&
             TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, bands) &&
             TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bits) &&
             TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT,
                          bits == 32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT) &&
             TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
                          rgb ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK) &&
             (rgb || bands == 1 ||
              TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, bands - 1, extra)) &&
             TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
             TIFFSetField(tif, TIFFTAG_TILEWIDTH, B) &&
             TIFFSetField(tif, TIFFTAG_TILELENGTH, B) &&
             TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE) &&
             TIFFSetField(tif, TIFFTAG_PREDICTOR,
                          bits == 32 ? PREDICTOR_FLOATINGPOINT
                                     : PREDICTOR_HORIZONTAL) &&
             TIFFSetField(tif, TIFFTAG_ZIPQUALITY, 6) &&
             TIFFSetField(tif, TIFFTAG_SOFTWARE, software ? software : "worldgen") &&
             (!description ||
              TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, description));
    }
    if (ok) {
        /* The georeferencing (geotiff.h): the window's first vertex is the
         * tie point, S the pixel scale, in a local CRS in metres. */
        double s = 6.0 / (double)(n - 1);
        double scale[3] = {s, s, 0.0};
        double tie[6] = {0.0, 0.0, 0.0, wg_geo_easting(r.x, n),
                         wg_geo_northing(r.y, n), 0.0};
        gt = geotiff_lib.GTIFNew(tif);
        ok = gt && TIFFSetField(tif, TIFFTAG_GEOPIXELSCALE, 3, scale) &&
             TIFFSetField(tif, TIFFTAG_GEOTIEPOINTS, 6, tie) &&
             geotiff_lib.GTIFKeySet(gt, GTModelTypeGeoKey, TYPE_SHORT, 1, KvUserDefined) &&
             geotiff_lib.GTIFKeySet(gt, GTRasterTypeGeoKey, TYPE_SHORT, 1,
                        RasterPixelIsPoint) &&
             geotiff_lib.GTIFKeySet(gt, GTCitationGeoKey, TYPE_ASCII, 0,
                        "worldgen world units") &&
             geotiff_lib.GTIFKeySet(gt, ProjLinearUnitsGeoKey, TYPE_SHORT, 1, Linear_Meter) &&
             geotiff_lib.GTIFWriteKeys(gt);
    }
    if (ok) {
        tile = malloc((size_t)B * B * px);
        if (!tile) {
            TIFFClose(tif);
            geotiff_lib.GTIFFree(gt);
            return wg_fail(err, "out of memory");
        }
    }
    /* Tile by tile, the edge tiles' outside zero: a function of the window
     * alone. */
    for (uint32_t ty = 0; ok && ty < down; ty++)
        for (uint32_t tx = 0; ok && tx < across; tx++) {
            uint32_t x0 = tx * B, y0 = ty * B;
            uint32_t w = r.w - x0 < B ? r.w - x0 : B;
            uint32_t h = r.h - y0 < B ? r.h - y0 : B;
            if (w < B || h < B)
                memset(tile, 0, (size_t)B * B * px);
            for (uint32_t y = 0; y < h; y++)
                memcpy(tile + (size_t)y * B * px,
                       field + ((size_t)(y0 + y) * r.w + x0) * px, w * px);
            ok = TIFFWriteEncodedTile(tif, TIFFComputeTile(tif, x0, y0, 0, 0),
                                      tile, (tmsize_t)((size_t)B * B * px)) >= 0;
        }
    free(tile);
    /* TIFFClose says nothing of what fails there: flush first. */
    if (ok)
        ok = TIFFFlush(tif) == 1;
    if (gt)
        geotiff_lib.GTIFFree(gt);
    if (tif)
        TIFFClose(tif);
    if (ok && !io.werr)
        return 0;
    if (io.werr)
        return wg_fail(err, "%s", strerror(io.werr));
    return wg_fail(err, "%s", io.msg[0] ? io.msg : "libtiff failed");
}

int wg_geotiff_write_bands(FILE *fp, const void *pixels, int bands, int bits,
                           uint32_t n, wg_rect r, const char *software,
                           const char *description, char *err)
{
    if (bands < 1 || bands > 4 || (bits != 8 && bits != 32))
        return wg_fail(err, "%d bands of %d bits: not a GeoTIFF worldgen "
                       "writes", bands, bits);
    if (n < 2 || r.w == 0 || r.h == 0 || r.x >= n || r.y >= n ||
        r.w > n - r.x || r.h > n - r.y)
        return wg_fail(err, "window %ux%u at (%u, %u) is not inside the "
                       "%ux%u world", r.w, r.h, r.x, r.y, n, n);
    if (tif_in_place(fp))
        return tif_write_all(fp, pixels, bands, bits, n, r, software,
                             description, err);
    FILE *tmp = tif_tmpfile(err);
    if (!tmp)
        return -1;
    int rc = tif_write_all(tmp, pixels, bands, bits, n, r, software,
                           description, err);
    if (rc == 0 && fflush(tmp) != 0)
        rc = wg_fail(err, "the temporary TIFF: %s", strerror(errno));
    if (rc == 0)
        rewind(tmp);
    enum { CHUNK = 1 << 16 };
    char *buf = rc == 0 ? malloc(CHUNK) : NULL;
    if (rc == 0 && !buf)
        rc = wg_fail(err, "out of memory");
    size_t got;
    while (rc == 0 && (got = fread(buf, 1, CHUNK, tmp)) > 0) {
        errno = 0;
        if (fwrite(buf, 1, got, fp) != got)
            rc = wg_fail(err, "%s", errno ? strerror(errno) : "write error");
    }
    if (rc == 0 && ferror(tmp))
        rc = wg_fail(err, "reading the temporary TIFF back: %s",
                     strerror(errno));
    free(buf);
    fclose(tmp);
    return rc;
}

#endif

/* One band of float32: the height and water maps (with or without
 * libtiff: wg_geotiff_write_bands says which). */
int wg_geotiff_write(FILE *fp, const float *field, uint32_t n, wg_rect r,
                     const char *software, const char *description,
                     char *err)
{
    return wg_geotiff_write_bands(fp, field, 1, 32, n, r, software,
                                  description, err);
}
