/* obj.c: the Wavefront OBJ and MTL writers, and the wrapper that writes an
 * OBJ, its MTL and its texture together.
 *
 * The OBJ holds two objects: 'terrain', the ground with its texture, and
 * 'water', the surface of the sea, the lakes and the rivers over every cell
 * with a corner under water (deeper than WG_WATER_MIN), with a material of
 * its own, so a modelling tool shows the water over the riverbeds and
 * shores the texture paints.
 *
 * An OBJ is text, and at --size 512 it is 53 MB of numbers.  Every number
 * is made here by hand (fixed-point integers, two digits per table lookup)
 * into a 1 MiB buffer written with one fwrite; each vertex's "i/i/i" is
 * formatted once and copied into the six faces that use it.  Measured: see
 * wg_obj_save(). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "obj.h"
#include "outfile.h"
#include "png.h"

#define OBJ_CHUNK (1 << 20)
#define OBJ_LINE 256 /* longer than any line but the header's */

typedef struct obj_out {
    FILE *fp;
    char *buf, *p;
    int failed;
} obj_out;

static void obj_flush(obj_out *o)
{
    size_t len = (size_t)(o->p - o->buf);
    if (len && fwrite(o->buf, 1, len, o->fp) != len)
        o->failed = 1;
    o->p = o->buf;
}

/* Make room for one more line. */
static inline void obj_room(obj_out *o)
{
    if (o->p - o->buf > OBJ_CHUNK - OBJ_LINE)
        obj_flush(o);
}

static void obj_str(obj_out *o, const char *s)
{
    size_t len = strlen(s);
    if ((size_t)(o->p - o->buf) + len > OBJ_CHUNK)
        obj_flush(o);
    if (len > OBJ_CHUNK) { /* a header longer than the buffer */
        if (fwrite(s, 1, len, o->fp) != len)
            o->failed = 1;
        return;
    }
    memcpy(o->p, s, len);
    o->p += len;
}

/* Each line of 'text' as an OBJ/MTL comment. */
static void obj_comment(obj_out *o, const char *text)
{
    while (text && *text) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        obj_str(o, "# ");
        char *line = strndup(text, len);
        if (!line) {
            o->failed = 1;
            return;
        }
        obj_str(o, line);
        free(line);
        obj_str(o, "\n");
        text += len + (nl != NULL);
    }
}

static const char obj_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

/* The decimal digits of v at p; returns the end. */
static inline char *obj_u32(char *p, uint32_t v)
{
    char tmp[10], *t = tmp + sizeof tmp;
    while (v >= 100) {
        uint32_t r = v % 100;
        v /= 100;
        t -= 2;
        memcpy(t, obj_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        t -= 2;
        memcpy(t, obj_pairs + 2 * v, 2);
    } else {
        *--t = (char)('0' + v);
    }
    size_t len = (size_t)(tmp + sizeof tmp - t);
    memcpy(p, t, len);
    return p + len;
}

/* The decimal digits of a 64-bit v at p (a water vertex's index passes
 * 2^32 above --size 46341); returns the end. */
static inline char *obj_u64(char *p, uint64_t v)
{
    if (v >> 32 == 0)
        return obj_u32(p, (uint32_t)v);
    char tmp[20], *t = tmp + sizeof tmp;
    while (v) {
        *--t = (char)('0' + v % 10);
        v /= 10;
    }
    size_t len = (size_t)(tmp + sizeof tmp - t);
    memcpy(p, t, len);
    return p + len;
}

/* v with exactly 'dec' decimals (scale = 10^dec), rounded half away from
 * zero, as printf's %.*f would print it but for the last-digit ties; no
 * "-0.000000".  |v| is at most a few units here. */
static inline char *obj_fixed(char *p, double v, int dec, uint32_t scale)
{
    double s = v * scale;
    int neg = s < 0.0;
    uint64_t m = (uint64_t)((neg ? -s : s) + 0.5);
    if (neg && m)
        *p++ = '-';
    p = obj_u32(p, (uint32_t)(m / scale));
    *p++ = '.';
    uint32_t frac = (uint32_t)(m % scale);
    for (int i = dec - 1; i >= 0; i--) {
        p[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    return p + dec;
}

/* "i/i/i " for vertex index i (1-based), formatted once per vertex. */
typedef struct obj_ref {
    char s[3 * 10 + 3];
    uint8_t len;
} obj_ref;

static void obj_refs(obj_ref *row, uint64_t first, uint32_t n)
{
    for (uint32_t x = 0; x < n; x++) {
        char num[10];
        char *e = obj_u32(num, (uint32_t)(first + x));
        size_t l = (size_t)(e - num);
        char *p = row[x].s;
        memcpy(p, num, l);
        p[l] = '/';
        memcpy(p + l + 1, num, l);
        p[2 * l + 1] = '/';
        memcpy(p + 2 * l + 2, num, l);
        p[3 * l + 2] = ' ';
        row[x].len = (uint8_t)(3 * l + 3);
    }
}

static inline char *obj_face(char *p, const obj_ref *a, const obj_ref *b,
                             const obj_ref *c)
{
    *p++ = 'f';
    *p++ = ' ';
    memcpy(p, a->s, sizeof a->s);
    p += a->len;
    memcpy(p, b->s, sizeof b->s);
    p += b->len;
    memcpy(p, c->s, sizeof c->s);
    p += c->len;
    p[-1] = '\n';
    return p;
}

/* Three grid rows of the water the picture shows (wg_water_shown), the
 * rows around the one being written: row y of the grid is w[y % 3]. */
typedef struct obj_rows {
    float *w[3];
    uint32_t n;
    float sea;
} obj_rows;

static void obj_rows_fill(obj_rows *r, const wg_fields *f, uint32_t y)
{
    float *w = r->w[y % 3];
    for (uint32_t x = 0; x < r->n; x++)
        w[x] = wg_water_shown(f, r->sea, x, y);
}

/* The water's level at vertex (x, y) of a water cell: height + water where
 * it is under water.  A dry corner takes the highest level of the water
 * beside it, but never above its own ground: the flat surface of a lake
 * then runs on under the bank, and the tool draws the shoreline where the
 * two meet, inside the cell; where the water beside stands higher than the
 * dry ground (a river running down past it) the surface comes down to that
 * ground. */
static float obj_level(const obj_rows *r, const wg_fields *f, uint32_t x,
                       uint32_t y)
{
    uint32_t n = f->n;
    float d = r->w[y % 3][x], ground = f->height[(size_t)y * n + x];
    if (d > WG_WATER_MIN)
        return ground + d;
    float best = -INFINITY;
    for (uint32_t j = y ? y - 1 : 0; j <= y + 1 && j < n; j++)
        for (uint32_t i = x ? x - 1 : 0; i <= x + 1 && i < n; i++) {
            float dq = r->w[j % 3][i];
            float l = f->height[(size_t)j * n + i] + dq;
            if (dq > WG_WATER_MIN && l > best)
                best = l;
        }
    return best < ground ? best : ground;
}

/* Is any vertex of rows [y0, y1] and columns [x0, x1] under water? */
static int obj_any_wet(const obj_rows *r, uint32_t x0, uint32_t x1,
                       uint32_t y0, uint32_t y1)
{
    for (uint32_t j = y0; j <= y1; j++)
        for (uint32_t i = x0; i <= x1; i++)
            if (r->w[j % 3][i] > WG_WATER_MIN)
                return 1;
    return 0;
}

/* The water object, after the terrain's N*N vertices, texture coordinates
 * and normals: one level normal for all of it, each vertex the terrain's
 * texture coordinate at the same grid point (some importers take a face
 * without texture coordinates for a line), and the faces of every cell
 * with a corner under water, in the terrain's winding; nothing when no
 * vertex is under water.  Vertices are written a grid row at a time, each
 * before the faces that use it, so only a few rows are kept whatever the
 * size.  Returns 0, or -1 when out of memory. */
static int obj_water(obj_out *o, const wg_fields *f, float sea)
{
    uint32_t n = f->n;
    uint64_t cells = wg_cells(n), next = cells + 1, up = cells + 1;
    float sp = wg_block_spacing(n);
    /* No water, no object (wg_water_shown is no deeper than the water
     * beside it). */
    size_t any = 0;
    while (any < cells && !(f->water[any] > WG_WATER_MIN))
        any++;
    if (any == cells)
        return 0;
    uint64_t *idx = malloc(2 * (size_t)n * sizeof *idx);
    float *rows = malloc(3 * (size_t)n * sizeof *rows);
    if (!idx || !rows) {
        free(idx);
        free(rows);
        return -1;
    }
    uint64_t *prev = idx, *cur = idx + n;
    obj_rows r = {{rows, rows + n, rows + 2 * (size_t)n}, n, sea};
    obj_rows_fill(&r, f, 0);
    obj_str(o, "o water\nvn 0.00000 1.00000 0.00000\nusemtl water\ns off\n");
    for (uint32_t y = 0; y < n; y++) {
        uint32_t y0 = y ? y - 1 : 0, y1 = y + 1 < n ? y + 1 : y;
        if (y1 > y)
            obj_rows_fill(&r, f, y1);
        float z = wg_block_coord(y, sp);
        /* A vertex is used by a water cell when one of the cells around
         * it has a corner under water: a vertex of its 3 x 3. */
        for (uint32_t x = 0; x < n; x++) {
            cur[x] = 0;
            if (!obj_any_wet(&r, x ? x - 1 : 0, x + 1 < n ? x + 1 : x, y0, y1))
                continue;
            obj_room(o);
            char *p = o->p;
            *p++ = 'v';
            *p++ = ' ';
            p = obj_fixed(p, wg_block_coord(x, sp), 6, 1000000);
            *p++ = ' ';
            p = obj_fixed(p, obj_level(&r, f, x, y), 6, 1000000);
            *p++ = ' ';
            p = obj_fixed(p, z, 6, 1000000);
            *p++ = '\n';
            o->p = p;
            cur[x] = next++;
        }
        for (uint32_t x = 0; y && x + 1 < n; x++) {
            if (!obj_any_wet(&r, x, x + 1, y - 1, y))
                continue;
            /* a (x, y-1), b (x+1, y-1), c (x, y), d (x+1, y), as the
             * terrain's faces; texture coordinate: the terrain vertex's. */
            uint64_t v[4] = {prev[x], prev[x + 1], cur[x], cur[x + 1]};
            uint64_t t[4] = {(uint64_t)(y - 1) * n + x + 1,
                             (uint64_t)(y - 1) * n + x + 2,
                             (uint64_t)y * n + x + 1, (uint64_t)y * n + x + 2};
            static const int tri[2][3] = {{0, 2, 1}, {1, 2, 3}};
            for (int h = 0; h < 2; h++) {
                obj_room(o);
                char *p = o->p;
                *p++ = 'f';
                for (int i = 0; i < 3; i++) {
                    int c = tri[h][i];
                    *p++ = ' ';
                    p = obj_u64(p, v[c]);
                    *p++ = '/';
                    p = obj_u64(p, t[c]);
                    *p++ = '/';
                    p = obj_u64(p, up);
                }
                *p++ = '\n';
                o->p = p;
            }
        }
        uint64_t *tmp = prev;
        prev = cur;
        cur = tmp;
    }
    free(idx);
    free(rows);
    return 0;
}

int wg_obj_write(FILE *fp, const wg_fields *f, float sea, const char *header,
                 const char *mtl_name, uint32_t tex_side, char *err)
{
    uint32_t n = f->n;
    obj_out o = {.fp = fp, .buf = malloc(OBJ_CHUNK)};
    obj_ref *refs = malloc(2 * (size_t)n * sizeof *refs);
    if (!o.buf || !refs) {
        free(o.buf);
        free(refs);
        return wg_fail(err, "out of memory");
    }
    o.p = o.buf;
    errno = 0;

    obj_comment(&o, header);
    char line[OBJ_LINE];
    snprintf(line, sizeof line,
             "# %u x %u vertices, Y up, metres; faces counter-clockwise "
             "seen from +Y\n", n, n);
    obj_str(&o, line);
    obj_str(&o, "mtllib ");
    obj_str(&o, mtl_name);
    obj_str(&o, "\no terrain\n");

    float sp = wg_block_spacing(n);
    for (uint32_t y = 0; y < n; y++) {
        float z = wg_block_coord(y, sp);
        const float *h = f->height + (size_t)y * n;
        for (uint32_t x = 0; x < n; x++) {
            obj_room(&o);
            char *p = o.p;
            *p++ = 'v';
            *p++ = ' ';
            p = obj_fixed(p, wg_block_coord(x, sp), 6, 1000000);
            *p++ = ' ';
            p = obj_fixed(p, h[x], 6, 1000000);
            *p++ = ' ';
            p = obj_fixed(p, z, 6, 1000000);
            *p++ = '\n';
            o.p = p;
        }
    }
    /* Texel centres: vertex x sits at texel x (N-1 -> side-1 scaled), and
     * OBJ's v = 0 is the bottom row of the image, where grid row N-1 is. */
    double ts = (double)(tex_side - 1) / (double)(n - 1);
    for (uint32_t y = 0; y < n; y++) {
        double v = 1.0 - ((double)y * ts + 0.5) / tex_side;
        char vbuf[16];
        size_t vlen = (size_t)(obj_fixed(vbuf, v, 6, 1000000) - vbuf);
        for (uint32_t x = 0; x < n; x++) {
            obj_room(&o);
            char *p = o.p;
            memcpy(p, "vt ", 3);
            p = obj_fixed(p + 3, ((double)x * ts + 0.5) / tex_side, 6, 1000000);
            *p++ = ' ';
            memcpy(p, vbuf, vlen);
            p += vlen;
            *p++ = '\n';
            o.p = p;
        }
    }
    for (size_t i = 0; i < wg_cells(n); i++) {
        obj_room(&o);
        char *p = o.p;
        memcpy(p, "vn ", 3);
        p = obj_fixed(p + 3, f->nx[i], 5, 100000);
        *p++ = ' ';
        p = obj_fixed(p, f->ny[i], 5, 100000);
        *p++ = ' ';
        p = obj_fixed(p, f->nz[i], 5, 100000);
        *p++ = '\n';
        o.p = p;
    }

    obj_str(&o, "usemtl terrain\ns 1\n");
    obj_ref *top = refs, *bot = refs + n;
    obj_refs(top, 1, n);
    for (uint32_t y = 1; y < n; y++) {
        obj_refs(bot, (uint64_t)y * n + 1, n);
        for (uint32_t x = 0; x + 1 < n; x++) {
            /* a (x, y-1), b (x+1, y-1), c (x, y), d (x+1, y): (a, c, b) and
             * (b, c, d) turn counter-clockwise seen from +Y, as the
             * renderer's triangles do (raster.c). */
            obj_room(&o);
            o.p = obj_face(o.p, &top[x], &bot[x], &top[x + 1]);
            o.p = obj_face(o.p, &top[x + 1], &bot[x], &bot[x + 1]);
        }
        obj_ref *t = top;
        top = bot;
        bot = t;
    }
    int nomem = obj_water(&o, f, sea) != 0;
    obj_flush(&o);
    free(o.buf);
    free(refs);
    if (nomem)
        return wg_fail(err, "out of memory");
    if (o.failed || ferror(fp))
        return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
    return 0;
}

int wg_mtl_write(FILE *fp, const char *header, const char *texture_name,
                 char *err)
{
    obj_out o = {.fp = fp, .buf = malloc(OBJ_CHUNK)};
    if (!o.buf)
        return wg_fail(err, "out of memory");
    o.p = o.buf;
    errno = 0;
    obj_comment(&o, header);
    /* Diffuse only: Blender makes a Principled BSDF whose base colour is
     * the map, with no specular shine on the ground. */
    obj_str(&o, "newmtl terrain\n"
                "Ka 0.000000 0.000000 0.000000\n"
                "Kd 1.000000 1.000000 1.000000\n"
                "Ks 0.000000 0.000000 0.000000\n"
                "Ns 1.000000\n"
                "d 1.000000\n"
                "illum 1\n"
                "map_Kd ");
    obj_str(&o, texture_name);
    obj_str(&o, "\n");
    /* The water: blue, glossy and partly transparent, so the riverbeds and
     * the seabed the texture paints show through where it is shallow.
     * Tr before d: some importers read Tr as the opacity, others as its
     * complement; the standard d, last, wins in both. */
    obj_str(&o, "\nnewmtl water\n"
                "Ka 0.000000 0.000000 0.000000\n"
                "Kd 0.020000 0.120000 0.220000\n"
                "Ks 0.500000 0.500000 0.500000\n"
                "Ns 300.000000\n"
                "Ni 1.330000\n"
                "Tr 0.400000\n"
                "d 0.600000\n"
                "illum 2\n");
    obj_flush(&o);
    free(o.buf);
    if (o.failed || ferror(fp))
        return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
    return 0;
}

int wg_obj_siblings(const char *obj, char *mtl, char *texture, size_t len)
{
    size_t base = strlen(obj);
    if (base > 4 && strcasecmp(obj + base - 4, ".obj") == 0)
        base -= 4;
    int a = snprintf(mtl, len, "%.*s.mtl", (int)base, obj);
    int b = snprintf(texture, len, "%.*s_albedo.png", (int)base, obj);
    return a < 0 || b < 0 || (size_t)a >= len || (size_t)b >= len ? -1 : 0;
}

/* The file part of a path. */
static const char *obj_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The two halves of wg_obj_save's work, one per thread. */
typedef struct obj_job {
    const wg_fields *f;
    float sea;
    const char *header, *mtl_name, *tex_name;
    uint32_t side;
    uint8_t *rgb;
    wg_outfile *out; /* texture, mtl, obj */
    int rc[3];
    char why[3][WG_ERR_LEN];
} obj_job;

static void obj_part(void *arg, uint32_t part)
{
    obj_job *j = arg;
    if (part == 0) {
        wg_texture_make(j->f, j->sea, j->side, j->rgb);
        const wg_png_text text[] = {
            {"Software", "worldgen " WG_VERSION},
            {"worldgen", j->header},
        };
        j->rc[0] = wg_png_write(j->out[0].fp, j->side, j->side, 8, 3, j->rgb,
                                (size_t)j->side * 3, text, 2, j->why[0]);
        j->rc[1] = wg_mtl_write(j->out[1].fp, j->header, j->tex_name,
                                j->why[1]);
    } else {
        j->rc[2] = wg_obj_write(j->out[2].fp, j->f, j->sea, j->header,
                                j->mtl_name, j->side, j->why[2]);
    }
}

/* Measured at --size 512 on the 2-core CI machine, fresh runs, median of
 * 9: the OBJ (53 MB), the MTL and the 512x512 texture in 69 ms, the texture
 * compressed on a second thread meanwhile (124 ms one after the other).
 * The same OBJ with one fprintf per line takes 337 ms. */
int wg_obj_save(const char *path, const wg_fields *f, float sea,
                const char *header, char *err)
{
    char mtl[4096], tex[4096], why[WG_ERR_LEN];
    const char *failed = path;
    if (wg_obj_siblings(path, mtl, tex, sizeof mtl) != 0)
        return wg_fail(err, "'%s': path too long", path);
    uint32_t side = wg_texture_side(f->n);
    uint8_t *rgb = malloc((size_t)side * side * 3);
    wg_outfile out[3] = {{0}}; /* a zeroed one aborts as a no-op */
    const char *paths[3] = {tex, mtl, path};
    int renamed[3] = {0};
    if (!rgb) {
        wg_fail(why, "out of memory for a %ux%u texture", side, side);
        failed = tex;
        goto err;
    }
    for (int i = 0; i < 3; i++)
        if (wg_outfile_open(&out[i], paths[i], why) != 0) {
            failed = paths[i];
            goto err;
        }

    /* The texture is made and compressed on one thread while the OBJ is
     * formatted on another: they share nothing but the fields. */
    obj_job job = {.f = f, .sea = sea, .header = header, .side = side,
                   .rgb = rgb, .out = out, .mtl_name = obj_basename(mtl),
                   .tex_name = obj_basename(tex)};
    wg_parallel(2, obj_part, &job);
    for (int i = 0; i < 3; i++)
        if (job.rc[i] != 0) {
            failed = paths[i];
            snprintf(why, sizeof why, "%s", job.why[i]);
            goto err;
        }
    /* The OBJ last: where it exists, so do the files it names. */
    for (int i = 0; i < 3; i++) {
        if (wg_outfile_commit(&out[i], why) != 0) {
            failed = paths[i];
            goto err;
        }
        renamed[i] = 1;
    }
    free(rgb);
    return 0;
err:
    /* A file already renamed into place is complete, but without the rest
     * it is an orphan: take it away too. */
    for (int i = 0; i < 3; i++) {
        if (renamed[i])
            remove(paths[i]);
        else
            wg_outfile_abort(&out[i]);
    }
    free(rgb);
    return wg_fail(err, "'%s': %s", failed, why);
}
