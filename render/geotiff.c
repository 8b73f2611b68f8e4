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

/* The world's side in world units, centred on 0: -3 .. 3. */
#define GEOTIFF_SIDE ((double)WG_WORLD_UNITS)

double wg_geo_easting(uint32_t x, uint32_t n)
{
    return -GEOTIFF_SIDE / 2 + GEOTIFF_SIDE * (double)x / (double)(n - 1);
}

double wg_geo_northing(uint32_t y, uint32_t n)
{
    return GEOTIFF_SIDE / 2 - GEOTIFF_SIDE * (double)y / (double)(n - 1);
}

double wg_geo_spacing(uint32_t n)
{
    return GEOTIFF_SIDE / (double)(n - 1);
}

void wg_geo_transform(uint32_t n, wg_rect r, double gt[6])
{
    double s = wg_geo_spacing(n);
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

/* Nothing to try: every GeoTIFF fails as above. */
int wg_geotiff_needs_temporary(int fd)
{
    (void)fd;
    return 0;
}

int wg_geotiff_try_temporary(char *err)
{
    (void)err;
    return 0;
}

#else

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#include "render.h" /* wg_parallel */

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
    int oom;         /* an allocation failed (ENOMEM at a complaint, or
                      * the TIFF in memory could not grow) */
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
    /* A complaint of an allocation that failed ("No space for output
     * buffer") leaves ENOMEM: said as that, not as a full disk. */
    if (errno == ENOMEM)
        io->oom = 1;
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

/* GDAL's own tag (42112, GDAL_METADATA: an XML of items), which libtiff
 * does not know: where GDAL reads a band's description.  Registered for
 * every TIFF opened, before the tags that were registered already. */
#define TIF_GDAL_METADATA 42112
static TIFFExtendProc tif_parent_extender;

static void tif_extend(TIFF *tif)
{
    static const TIFFFieldInfo gdal = {
        TIF_GDAL_METADATA, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0,
        (char *)"GDALMetadata"};
    TIFFMergeFieldInfo(tif, &gdal, 1);
    if (tif_parent_extender)
        tif_parent_extender(tif);
}

/* Load libgeotiff (kept to the end: libtiff holds its tag tables) and
 * register the GeoTIFF tags with libtiff, once. */
static void tif_init(void)
{
    void *h = dlopen(WG_GEOTIFF_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        /* The hint only where a library is missing: mapping one can fail
         * for want of memory too (ulimit -v), and opening it for want of
         * descriptors ("cannot open shared object file: Too many open
         * files", ulimit -n), and then it is there. */
        const char *why = dlerror();
        snprintf(geotiff_lib_err, sizeof geotiff_lib_err,
                 "cannot load libgeotiff: %s%s", why,
                 strstr(why, "cannot open shared object file: No such file")
                     ? " (is libgeotiff5 installed?)"
                 : strstr(why, "failed to map segment")
                     ? " (out of memory to map it: an address space limit, "
                       "ulimit -v?)"
                     : "");
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
    tif_parent_extender = TIFFSetTagExtender(tif_extend);
}

/* Is descriptor fd a regular file that does not append (which would
 * ignore libtiff's seeks)? */
static int tif_seekable(int fd)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && !(fl & O_APPEND);
}

/* Can libtiff write to fp in place: such a file, at its start? */
static int tif_in_place(FILE *fp)
{
    return tif_seekable(fileno(fp)) && ftello(fp) == 0;
}

int wg_geotiff_needs_temporary(int fd)
{
    return !tif_seekable(fd) || lseek(fd, 0, SEEK_CUR) != 0;
}

/* The folder of tif_tmpfile's file: $TMPDIR, else /tmp. */
static const char *tif_tmpdir(void)
{
    const char *dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

/* An anonymous temporary file (no name to leave behind), under $TMPDIR. */
static FILE *tif_tmpfile(char *err)
{
    const char *dir = tif_tmpdir();
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

int wg_geotiff_try_temporary(char *err)
{
    FILE *fp = tif_tmpfile(err);
    if (!fp)
        return -1;
    fclose(fp);
    return 0;
}

/* The tags that decide how the samples are laid out and compressed, the
 * same for the file and for the one-tile TIFFs its tiles are encoded in
 * (tif_encode_tile). */
static int tif_set_layout(TIFF *tif, uint32_t w, uint32_t h, int bands,
                          int bits)
{
    enum { B = WG_GEOTIFF_BLOCK };
    /* 8-bit RGB is a colour picture; other bands past the first are
     * "unspecified" extra samples, which GDAL reads as bands. */
    const int rgb = bits == 8 && bands == 3;
    uint16_t extra[3] = {EXTRASAMPLE_UNSPECIFIED, EXTRASAMPLE_UNSPECIFIED,
                         EXTRASAMPLE_UNSPECIFIED};
    return TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w) &&
           TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h) &&
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
           TIFFSetField(tif, TIFFTAG_ZIPQUALITY, 6);
}

/* ---- tiles encoded on every core ------------------------------------------
 *
 * libtiff compresses the tiles of one file one after another on the
 * calling thread: at 2049 the two GeoTIFF maps took 0.9 s of a tile's
 * 2.1 s.  So each tile is encoded by libtiff itself, on whichever thread
 * is free, in a TIFF of its own held in memory (the same tags:
 * tif_set_layout), and its compressed bytes are written into the file in
 * order with TIFFWriteRawTile: the file is byte for byte the one a single
 * thread writes, whichever libtiff and compressor do the encoding. */

/* A TIFF in memory: what libtiff wrote, and where it is. */
typedef struct tif_mem {
    uint8_t *buf;
    size_t len, cap, at;
    tif_io io; /* libtiff's complaints */
} tif_mem;

static tmsize_t tif_mem_read(thandle_t h, void *buf, tmsize_t len)
{
    tif_mem *m = h;
    size_t n = m->at < m->len ? m->len - m->at : 0;
    n = (size_t)len < n ? (size_t)len : n;
    memcpy(buf, m->buf + m->at, n);
    m->at += n;
    return (tmsize_t)n;
}

static tmsize_t tif_mem_write(thandle_t h, void *buf, tmsize_t len)
{
    tif_mem *m = h;
    size_t end = m->at + (size_t)len;
    if (end > m->cap) {
        size_t cap = m->cap ? m->cap : 1 << 16;
        while (cap < end)
            cap *= 2;
        uint8_t *grown = realloc(m->buf, cap);
        if (!grown) {
            m->io.oom = 1; /* libtiff says only "Write error" */
            return 0;
        }
        m->buf = grown;
        m->cap = cap;
    }
    if (m->at > m->len) /* a seek past the end: the gap reads as zeros */
        memset(m->buf + m->len, 0, m->at - m->len);
    memcpy(m->buf + m->at, buf, (size_t)len);
    m->at = end;
    m->len = end > m->len ? end : m->len;
    return len;
}

static toff_t tif_mem_seek(thandle_t h, toff_t off, int whence)
{
    tif_mem *m = h;
    uint64_t base = whence == SEEK_CUR ? m->at : whence == SEEK_END ? m->len : 0;
    m->at = (size_t)(base + off);
    return (toff_t)m->at;
}

static toff_t tif_mem_size(thandle_t h)
{
    return (toff_t)((tif_mem *)h)->len;
}

/* Encode one tile (B x B pixels of 'px' bytes, modified: the predictor
 * works in place) as libtiff writes it into a file laid out by
 * tif_set_layout; its bytes are left in *data (malloc'd) and *size.
 * Returns 0, or -1 with m->io.msg saying why (or empty: out of memory). */
static int tif_encode_tile(tif_mem *m, uint8_t *tile, int bands, int bits,
                           size_t px, uint8_t **data, tmsize_t *size)
{
    enum { B = WG_GEOTIFF_BLOCK };
    m->len = m->at = 0;
    TIFFOpenOptions *opt = TIFFOpenOptionsAlloc();
    if (!opt)
        return -1;
    TIFFOpenOptionsSetErrorHandlerExtR(opt, tif_complaint, &m->io);
    TIFFOpenOptionsSetWarningHandlerExtR(opt, tif_quiet, &m->io);
    TIFF *tif = TIFFClientOpenExt("worldgen tile", "w", m, tif_mem_read,
                                  tif_mem_write, tif_mem_seek, tif_close,
                                  tif_mem_size, tif_map, tif_unmap, opt);
    TIFFOpenOptionsFree(opt);
    if (!tif)
        return -1;
    uint64_t *offsets = NULL, *counts = NULL;
    int ok = tif_set_layout(tif, B, B, bands, bits) &&
             TIFFWriteEncodedTile(tif, 0, tile, (tmsize_t)((size_t)B * B * px)) >= 0 &&
             TIFFGetField(tif, TIFFTAG_TILEOFFSETS, &offsets) == 1 &&
             TIFFGetField(tif, TIFFTAG_TILEBYTECOUNTS, &counts) == 1 &&
             offsets && counts && offsets[0] + counts[0] <= m->len;
    if (ok) {
        *size = (tmsize_t)counts[0];
        *data = malloc(counts[0] ? (size_t)counts[0] : 1);
        ok = *data != NULL;
        if (ok)
            memcpy(*data, m->buf + offsets[0], (size_t)counts[0]);
    }
    TIFFClose(tif);
    return ok ? 0 : -1;
}

/* A batch of tiles to encode: 'count' tiles from number 'first' (row by
 * row, 'across' a row) of the window r of 'field'. */
typedef struct tif_batch {
    const uint8_t *field;
    wg_rect r;
    int bands, bits;
    size_t px;
    uint32_t across, first, count, parts;
    atomic_uint next;     /* tiles of the batch handed out */
    uint8_t **data;       /* per tile: its encoded bytes */
    tmsize_t *size;
    tif_mem mem[WG_THREADS_MAX];
    uint8_t *tile[WG_THREADS_MAX];
    atomic_uint failed;   /* 1 + the first thread that failed (its mem's
                             io.msg says why), or 0 */
} tif_batch;

static void tif_batch_part(void *arg, uint32_t part)
{
    enum { B = WG_GEOTIFF_BLOCK };
    tif_batch *j = arg;
    uint8_t *tile = j->tile[part];
    for (;;) {
        uint32_t k = atomic_fetch_add_explicit(&j->next, 1,
                                               memory_order_relaxed);
        if (k >= j->count)
            return;
        uint32_t t = j->first + k;
        uint32_t x0 = t % j->across * B, y0 = t / j->across * B;
        uint32_t w = j->r.w - x0 < B ? j->r.w - x0 : B;
        uint32_t h = j->r.h - y0 < B ? j->r.h - y0 : B;
        /* The edge tiles' outside zero: a function of the window alone. */
        if (w < B || h < B)
            memset(tile, 0, (size_t)B * B * j->px);
        for (uint32_t y = 0; y < h; y++)
            memcpy(tile + (size_t)y * B * j->px,
                   j->field + ((size_t)(y0 + y) * j->r.w + x0) * j->px,
                   w * j->px);
        if (tif_encode_tile(&j->mem[part], tile, j->bands, j->bits, j->px,
                            &j->data[k], &j->size[k]) != 0) {
            unsigned none = 0;
            atomic_compare_exchange_strong(&j->failed, &none, part + 1);
            return;
        }
    }
}

/* Write the TIFF itself to a seekable fp: 'bands' samples a pixel,
 * interleaved, float32 (bits 32) or uint8 (bits 8). */
static int tif_write_all(FILE *fp, const char *where, const void *pixels,
                         int bands, int bits, uint32_t n, wg_rect r,
                         const char *software, const char *description,
                         char *err)
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
    GTIF *gt = NULL;
    int ok = tif != NULL;
    if (ok)
        ok = tif_set_layout(tif, r.w, r.h, bands, bits) &&
             TIFFSetField(tif, TIFFTAG_SOFTWARE, software ? software : "worldgen") &&
             (!description ||
              TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, description)) &&
             /* The normal map's bands named as GDAL reads them (QGIS
              * shows them): it had said Gray, Undefined, Undefined. */
             (bands != 3 || bits != 32 ||
              TIFFSetField(tif, TIF_GDAL_METADATA,
                           "<GDALMetadata>"
                           "<Item name=\"DESCRIPTION\" sample=\"0\" "
                           "role=\"description\">x (east)</Item>"
                           "<Item name=\"DESCRIPTION\" sample=\"1\" "
                           "role=\"description\">y (north)</Item>"
                           "<Item name=\"DESCRIPTION\" sample=\"2\" "
                           "role=\"description\">z (up)</Item>"
                           "</GDALMetadata>"));
    if (ok) {
        /* The georeferencing (geotiff.h): the window's first vertex is the
         * tie point, S the pixel scale, in a local CRS in metres. */
        double s = wg_geo_spacing(n);
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
    /* The tiles in batches of a few a thread: encoded on every core
     * (tif_batch_part), then written in order. */
    long cpus = wg_cpus();
    uint32_t tiles = (uint32_t)(across * down);
    tif_batch *j = ok ? calloc(1, sizeof *j) : NULL;
    if (ok && !j)
        ok = 0, snprintf(io.msg, sizeof io.msg, "out of memory");
    if (j) {
        j->field = field, j->r = r, j->bands = bands, j->bits = bits;
        j->px = px, j->across = (uint32_t)across;
        j->parts = cpus < 1 ? 1 : cpus > WG_THREADS_MAX ? WG_THREADS_MAX
                                                       : (uint32_t)cpus;
        j->parts = j->parts < tiles ? j->parts : tiles;
        uint32_t most = 4 * j->parts;
        j->data = calloc(most, sizeof *j->data);
        j->size = calloc(most, sizeof *j->size);
        ok = j->data && j->size;
        for (uint32_t t = 0; ok && t < j->parts; t++)
            ok = (j->tile[t] = malloc((size_t)B * B * px)) != NULL;
        if (!ok)
            io.oom = 1;
        for (uint32_t first = 0; ok && first < tiles; first += most) {
            j->first = first;
            j->count = tiles - first < most ? tiles - first : most;
            atomic_store(&j->next, 0);
            wg_parallel(j->parts, tif_batch_part, j);
            unsigned failed = atomic_load(&j->failed);
            if (failed) {
                /* The tile's reason is the file's (said below). */
                const tif_io *t = &j->mem[failed - 1].io;
                snprintf(io.msg, sizeof io.msg, "%s", t->msg);
                io.oom = t->oom || !t->msg[0];
                ok = 0;
            }
            for (uint32_t k = 0; k < j->count; k++) {
                if (ok && TIFFWriteRawTile(tif, first + k, j->data[k],
                                           j->size[k]) < 0)
                    ok = 0;
                free(j->data[k]);
                j->data[k] = NULL;
            }
        }
        for (uint32_t t = 0; t < WG_THREADS_MAX; t++) {
            free(j->tile[t]);
            free(j->mem[t].buf);
        }
        free(j->data);
        free(j->size);
        free(j);
    }
    /* TIFFClose says nothing of what fails there: flush first. */
    if (ok)
        ok = TIFFFlush(tif) == 1;
    if (gt)
        geotiff_lib.GTIFFree(gt);
    if (tif)
        TIFFClose(tif);
    if (ok && !io.werr)
        return 0;
    /* A write to the temporary file names it: a full $TMPDIR is not a
     * full disk under the output. */
    if (io.werr)
        return wg_fail(err, "%s%s%s", where ? where : "", where ? ": " : "",
                       strerror(io.werr));
    if (io.oom)
        return wg_fail(err, "out of memory%s%s%s",
                       io.msg[0] ? " (libtiff: " : "", io.msg,
                       io.msg[0] ? ")" : "");
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
        return tif_write_all(fp, NULL, pixels, bands, bits, n, r, software,
                             description, err);
    FILE *tmp = tif_tmpfile(err);
    if (!tmp)
        return -1;
    char where[4200];
    snprintf(where, sizeof where, "the temporary TIFF it is copied from, in "
             "%s%s", tif_tmpdir(), getenv("TMPDIR") && *getenv("TMPDIR")
                                       ? " ($TMPDIR)" : "");
    int rc = tif_write_all(tmp, where, pixels, bands, bits, n, r, software,
                           description, err);
    if (rc == 0 && fflush(tmp) != 0)
        rc = wg_fail(err, "%s: %s", where, strerror(errno));
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
