/* obj.c: the Wavefront OBJ and MTL writers, and the wrapper that writes an
 * OBJ, its MTL and its texture together.
 *
 * The OBJ holds two objects: 'terrain', the ground with its texture, and
 * 'water', the surface of the sea, the lakes and the rivers over every cell
 * with a corner under water (deeper than WG_WATER_MIN), with a material of
 * its own, so a modelling tool shows the water over the riverbeds and
 * shores the texture paints.
 *
 * The layout.  Most of an OBJ of a grid is its faces, and most of a face
 * is its indices: with absolute indices ('f 1/1/1 513/513/513 2/2/2') they
 * were 60% of the file.  Here each terrain vertex is written as its three
 * lines, 'v', 'vt' and 'vn', followed by the two faces of the cell whose
 * south-east corner it is, with indices relative to the end of each list
 * (OBJ's negative indices: -1 is the last one read; Blender's importer and
 * three.js's OBJLoader both read them), so those two faces are the same
 * text for every cell of the world:
 *
 *     f -(N+2)/-(N+2)/-(N+2) -2/-2/-2 -(N+1)/-(N+1)/-(N+1)
 *     f -(N+1)/-(N+1)/-(N+1) -2/-2/-2 -1/-1/-1
 *
 * The vertices, texture coordinates and normals keep their order (row by
 * row, north to south, each row west to east: vertex (x, y) is the
 * y*N+x+1-th of each list), and so do the faces.  The water's vertices
 * come a row at a time, each row before the faces that use it, with their
 * own indices relative too; their texture coordinate is the terrain's at
 * the same grid point, by its absolute index.
 *
 * The precision, chosen for what a reader of the mesh can see:
 *  - positions (X, the height Y, Z): 6 decimals, a micrometre, on a world
 *    6 m across and at most 1 m tall: 1/700 of the finest grid spacing
 *    (0.73 mm at --size 8192).  The exact float would take 8 or 9
 *    significant digits, one or two bytes more a number, for digits below
 *    a micrometre; the GLB (gltf.c) has the floats themselves, and the two
 *    agree within 5e-7.
 *  - normals: 4 decimals: each component within 5e-5, so the direction
 *    within 1e-4 radian (0.006 degrees) and a light's N.L within 1e-4, a
 *    fortieth of an 8-bit step.  (Blender normalises them again.)
 *  - texture coordinates: to a fiftieth of a texel: the fewest decimals d
 *    with 10^d >= 25 * side (5 from 400 to 4000 texels, 6 up to 8192).
 * Every number is rounded half away from zero and written without trailing
 * zeros ("-3", "0.5"), never as "-0".
 *
 * The speed.  The text is cut into blocks (4096 terrain vertices, or a few
 * rows of water) that every thread formats, each into a buffer of its
 * own, and the blocks are written in order by whichever thread finished
 * the next one to write: the file is the same bytes for any number of
 * threads.  Measured: see wg_obj_save(). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "obj.h"
#include "outfile.h"
#include "png.h"

/* Terrain vertices in a block: about 600 KB of text. */
#define OBJ_BLOCK 4096u
#define OBJ_LINE 256 /* longer than any line but the header's */
/* The decimals and their scales (see above). */
#define OBJ_POS_DEC 6
#define OBJ_POS_SCALE 1000000u
#define OBJ_NRM_DEC 4
#define OBJ_NRM_SCALE 10000u
/* The most bytes obj_num writes: a sign, 20 digits, a point, decimals
 * (and room for the tables' whole copies). */
#define OBJ_NUM_MAX 32
/* A cell's faces are copied in one move of this many bytes when they fit
 * (below --size 99998). */
#define OBJ_FACES_COPY 160

/* ---- numbers ---------------------------------------------------------- */

static const char obj_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

/* The decimal digits of v at p; returns the end. */
static inline char *obj_u64(char *p, uint64_t v)
{
    char tmp[20], *t = tmp + sizeof tmp;
    while (v >= 100) {
        uint32_t r = (uint32_t)(v % 100);
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

/* v to 'dec' decimals (scale = 10^dec), rounded half away from zero (as
 * printf's %.*f but for the last digit's ties), without trailing zeros
 * and without "-0": "0.482136", "-3", "0.5".  At most OBJ_NUM_MAX bytes:
 * a magnitude past 10^18 / scale (or NaN) is written as that bound. */
static char *obj_num(char *p, double v, int dec, uint32_t scale)
{
    double s = v * scale;
    int neg = s < 0.0;
    double a = (neg ? -s : s) + 0.5;
    uint64_t m = a < 1e18 ? (uint64_t)a : (uint64_t)1000000000000000000u;
    if (neg && m)
        *p++ = '-';
    uint64_t whole = m / scale;
    uint32_t frac = (uint32_t)(m - whole * scale);
    if (whole < 10)
        *p++ = (char)('0' + whole);
    else
        p = obj_u64(p, whole);
    if (frac) {
        int d = dec;
        while (frac % 10 == 0) {
            frac /= 10;
            d--;
        }
        *p = '.';
        for (int i = d; i > 0; i--) {
            p[i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        p += d + 1;
    }
    return p;
}

/* The hot numbers, the heights and the normals, the same text as
 * obj_num's from tables: "000" to "999" (each in 4 bytes, copied whole)
 * and how many zeros each ends with. */
static char obj_d3[1000][4];
static uint8_t obj_tz3[1000];
static pthread_once_t obj_tables_once = PTHREAD_ONCE_INIT;

static void obj_tables(void)
{
    for (int i = 0; i < 1000; i++) {
        obj_d3[i][0] = (char)('0' + i / 100);
        obj_d3[i][1] = (char)('0' + i / 10 % 10);
        obj_d3[i][2] = (char)('0' + i % 10);
        obj_tz3[i] = (uint8_t)(i == 0 ? 3 : i % 100 == 0 ? 2 : i % 10 == 0);
    }
}

/* obj_num(p, v, 6, 10^6): below 10 in magnitude from the tables.  May
 * write 3 bytes past its end. */
static inline __attribute__((always_inline)) char *obj_pos(char *p, double v)
{
    double s = v * (double)OBJ_POS_SCALE;
    int neg = s < 0.0;
    double a = (neg ? -s : s) + 0.5;
    if (!(a < 1e7))
        return obj_num(p, v, OBJ_POS_DEC, OBJ_POS_SCALE);
    uint32_t m = (uint32_t)a;
    if (neg && m)
        *p++ = '-';
    uint32_t whole = m / OBJ_POS_SCALE, frac = m - whole * OBJ_POS_SCALE;
    *p++ = (char)('0' + whole);
    if (frac) {
        uint32_t hi = frac / 1000, lo = frac - hi * 1000;
        *p = '.';
        memcpy(p + 1, obj_d3[hi], 4);
        if (lo) {
            memcpy(p + 4, obj_d3[lo], 4);
            p += 7 - obj_tz3[lo];
        } else {
            p += 4 - obj_tz3[hi];
        }
    }
    return p;
}

/* obj_num(p, v, 4, 10^4): below 10 in magnitude from the tables.  May
 * write 3 bytes past its end. */
static inline __attribute__((always_inline)) char *obj_nrm(char *p, double v)
{
    double s = v * (double)OBJ_NRM_SCALE;
    int neg = s < 0.0;
    double a = (neg ? -s : s) + 0.5;
    if (!(a < 1e5))
        return obj_num(p, v, OBJ_NRM_DEC, OBJ_NRM_SCALE);
    uint32_t m = (uint32_t)a;
    if (neg && m)
        *p++ = '-';
    uint32_t whole = m / OBJ_NRM_SCALE, frac = m - whole * OBJ_NRM_SCALE;
    *p++ = (char)('0' + whole);
    if (frac) {
        /* Four decimals: the first three and the last one. */
        uint32_t hi = frac / 10, lo = frac - hi * 10;
        *p = '.';
        memcpy(p + 1, obj_d3[hi], 4);
        if (lo) {
            p[4] = (char)('0' + lo);
            p += 5;
        } else {
            p += 4 - obj_tz3[hi];
        }
    }
    return p;
}

/* The decimals of texture coordinates on a texture 'side' texels wide: the
 * fewest with 10^d >= 25 side, so a coordinate is within 1/50 texel. */
static int obj_uv_decimals(uint32_t side, uint32_t *scale)
{
    int d = 0;
    uint64_t s = 1;
    while (s < 25 * (uint64_t)side && d < 9) {
        s *= 10;
        d++;
    }
    *scale = (uint32_t)s;
    return d;
}

/* ---- growing buffers -------------------------------------------------- */

typedef struct obj_buf {
    char *base;
    size_t len, cap;
} obj_buf;

/* Room for 'more' bytes after len.  Returns 0, or -1 when out of memory. */
static int obj_reserve(obj_buf *b, size_t more)
{
    if (b->cap - b->len >= more)
        return 0;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap - b->len < more)
        cap *= 2;
    char *p = realloc(b->base, cap);
    if (!p)
        return -1;
    b->base = p;
    b->cap = cap;
    return 0;
}

static int obj_append(obj_buf *b, const char *s, size_t len)
{
    if (obj_reserve(b, len) != 0)
        return -1;
    memcpy(b->base + b->len, s, len);
    b->len += len;
    return 0;
}

/* Each line of 'text' as an OBJ/MTL comment. */
static int obj_comment(obj_buf *b, const char *text)
{
    while (text && *text) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        if (obj_append(b, "# ", 2) || obj_append(b, text, len) ||
            obj_append(b, "\n", 1))
            return -1;
        text += len + (nl != NULL);
    }
    return 0;
}

/* Write len bytes; returns 0 or the errno of the failure. */
static int obj_fwrite(FILE *fp, const char *s, size_t len)
{
    errno = 0;
    if (len && fwrite(s, 1, len, fp) != len)
        return errno ? errno : EIO;
    return 0;
}

/* ---- the plan of the file --------------------------------------------- */

/* A string made once and copied many times: copies take all 32 bytes (one
 * fixed-size move) and advance by len. */
typedef struct obj_piece {
    char s[32];
    uint8_t len;
} obj_piece;

static inline char *obj_put(char *p, const obj_piece *s)
{
    memcpy(p, s->s, sizeof s->s);
    return p + s->len;
}

typedef struct obj_plan {
    const wg_fields *f;
    float sea, sp;
    uint32_t n, side;
    const char *header, *mtl_name;
    obj_piece *vx; /* column x: "v X " */
    obj_piece *vu; /* column x: "U " (its texture coordinate's u) */
    double ts;     /* texel per grid step */
    int uv_dec;
    uint32_t uv_scale;
    char faces[256]; /* "\nf ...\nf ...\n": a cell's faces, relative */
    size_t faces_len;
    size_t vmax; /* the most bytes a terrain vertex takes, with slack */
    uint64_t cells, terrain_blocks, blocks;
    uint32_t water_rows; /* grid rows in a water block */
    int water;           /* is there a water object */
} obj_plan;

/* "-i/-i/-i " for relative index i. */
static char *obj_rel3(char *p, uint64_t i)
{
    char num[24];
    num[0] = '-';
    size_t l = (size_t)(obj_u64(num + 1, i) - num);
    for (int k = 0; k < 3; k++) {
        memcpy(p, num, l);
        p += l;
        *p++ = k < 2 ? '/' : ' ';
    }
    return p;
}

static int obj_plan_make(obj_plan *pl, const wg_fields *f, float sea,
                         const char *header, const char *mtl_name,
                         uint32_t tex_side)
{
    uint32_t n = f->n;
    pthread_once(&obj_tables_once, obj_tables);
    memset(pl, 0, sizeof *pl);
    pl->f = f, pl->sea = sea, pl->n = n, pl->side = tex_side;
    pl->header = header, pl->mtl_name = mtl_name;
    pl->sp = wg_block_spacing(n);
    pl->cells = wg_cells(n);
    pl->vx = malloc((size_t)n * sizeof *pl->vx);
    pl->vu = malloc((size_t)n * sizeof *pl->vu);
    if (!pl->vx || !pl->vu)
        return -1;
    /* Texel centres: vertex x sits at texel x (N-1 -> side-1 scaled). */
    pl->ts = (double)(tex_side - 1) / (double)(n - 1);
    pl->uv_dec = obj_uv_decimals(tex_side, &pl->uv_scale);
    for (uint32_t x = 0; x < n; x++) {
        char *p = pl->vx[x].s;
        *p++ = 'v';
        *p++ = ' ';
        p = obj_num(p, wg_block_coord(x, pl->sp), OBJ_POS_DEC, OBJ_POS_SCALE);
        *p++ = ' ';
        pl->vx[x].len = (uint8_t)(p - pl->vx[x].s);
        p = obj_num(pl->vu[x].s, ((double)x * pl->ts + 0.5) / tex_side,
                    pl->uv_dec, pl->uv_scale);
        *p++ = ' ';
        pl->vu[x].len = (uint8_t)(p - pl->vu[x].s);
    }
    /* Written after vertex (x, y), x and y >= 1: a (x-1, y-1) is N+2 back,
     * b (x, y-1) N+1, c (x-1, y) 2 and d (x, y) the last.  (a, c, b) and
     * (b, c, d) turn counter-clockwise seen from +Y, as the renderer's
     * triangles do (raster.c). */
    uint64_t back[2][3] = {{(uint64_t)n + 2, 2, (uint64_t)n + 1},
                           {(uint64_t)n + 1, 2, 1}};
    char *p = pl->faces;
    *p++ = '\n';
    for (int h = 0; h < 2; h++) {
        *p++ = 'f';
        *p++ = ' ';
        for (int k = 0; k < 3; k++)
            p = obj_rel3(p, back[h][k]);
        p[-1] = '\n';
    }
    pl->faces_len = (size_t)(p - pl->faces);
    /* v piece, height, row piece, u piece, row piece, three normals, the
     * faces; the pieces are copied 32 bytes at a time. */
    pl->vmax = 4 * sizeof(obj_piece) + 4 * OBJ_NUM_MAX +
               (pl->faces_len > OBJ_FACES_COPY ? pl->faces_len : OBJ_FACES_COPY);
    pl->terrain_blocks = (pl->cells + OBJ_BLOCK - 1) / OBJ_BLOCK;
    /* No water, no object (wg_water_shown is no deeper than the water
     * beside it). */
    for (size_t k = 0; k < pl->cells && !pl->water; k++)
        pl->water = f->water[k] > WG_WATER_MIN;
    pl->water_rows = OBJ_BLOCK / n > 8 ? OBJ_BLOCK / n : 8;
    pl->blocks = pl->terrain_blocks +
                 (pl->water ? (n + pl->water_rows - 1) / pl->water_rows : 0);
    return 0;
}

static void obj_plan_free(obj_plan *pl)
{
    free(pl->vx);
    free(pl->vu);
}

/* A file beside the OBJ as its mtllib or map_Kd line names it.  The
 * readers take the rest of the line as the name, but trim the spaces it
 * starts with (' w.mtl' was read as 'w.mtl', not found), and a map_Kd
 * name that starts with '-' is read as the statement's options ('-bm 2
 * x_albedo.png' as bump 2 on x_albedo.png, another file; '-clamp
 * on_albedo.png' as no texture): such a name is written as './' and the
 * name, the same file to every reader. */
static int obj_append_name(obj_buf *b, const char *name)
{
    if ((name[0] == ' ' || name[0] == '-') && obj_append(b, "./", 2) != 0)
        return -1;
    return obj_append(b, name, strlen(name));
}

/* What the file starts with: the header as comments, the material file
 * and the terrain object. */
static int obj_start(const obj_plan *pl, obj_buf *b)
{
    char line[OBJ_LINE];
    snprintf(line, sizeof line,
             "# %u x %u vertices, Y up, metres; faces counter-clockwise "
             "seen from +Y\n"
             "# each vertex's v, vt and vn, then the faces of the cell north-"
             "west of it; face indices relative (-1: the last read)\n",
             pl->n, pl->n);
    if (obj_comment(b, pl->header) || obj_append(b, line, strlen(line)) ||
        obj_append(b, "mtllib ", 7) || obj_append_name(b, pl->mtl_name))
        return -1;
    static const char s[] = "\no terrain\nusemtl terrain\ns 1\n";
    return obj_append(b, s, sizeof s - 1);
}

/* Terrain vertices [v0, v1): each one's v, vt and vn lines, and the faces
 * of the cell north-west of it. */
static int obj_terrain(const obj_plan *pl, uint64_t v0, uint64_t v1,
                       obj_buf *b)
{
    const wg_fields *f = pl->f;
    uint32_t n = pl->n;
    if (obj_reserve(b, (size_t)(v1 - v0) * pl->vmax) != 0)
        return -1;
    char *p = b->base + b->len;
    for (uint64_t i = v0; i < v1;) {
        uint32_t y = (uint32_t)(i / n), x = (uint32_t)(i % n);
        uint64_t row_end = (uint64_t)(y + 1) * n;
        uint32_t xe = v1 < row_end ? (uint32_t)(v1 - (uint64_t)y * n) : n;
        /* " Z\nvt " and "V\nvn ": OBJ's v = 0 is the bottom row of the
         * image, where grid row N-1 is. */
        obj_piece zr, vr;
        char *q = zr.s;
        *q++ = ' ';
        q = obj_num(q, wg_block_coord(y, pl->sp), OBJ_POS_DEC, OBJ_POS_SCALE);
        memcpy(q, "\nvt ", 4);
        zr.len = (uint8_t)(q + 4 - zr.s);
        q = obj_num(vr.s, 1.0 - ((double)y * pl->ts + 0.5) / pl->side,
                    pl->uv_dec, pl->uv_scale);
        memcpy(q, "\nvn ", 4);
        vr.len = (uint8_t)(q + 4 - vr.s);
        size_t k = (size_t)y * n;
        const float *h = f->height + k, *nx = f->nx + k, *ny = f->ny + k,
                    *nz = f->nz + k;
        for (; x < xe; x++) {
            p = obj_put(p, &pl->vx[x]);
            p = obj_pos(p, h[x]);
            p = obj_put(p, &zr);
            p = obj_put(p, &pl->vu[x]);
            p = obj_put(p, &vr);
            p = obj_nrm(p, nx[x]);
            *p++ = ' ';
            p = obj_nrm(p, ny[x]);
            *p++ = ' ';
            p = obj_nrm(p, nz[x]);
            if (x && y) {
                if (pl->faces_len <= OBJ_FACES_COPY)
                    memcpy(p, pl->faces, OBJ_FACES_COPY);
                else
                    memcpy(p, pl->faces, pl->faces_len);
                p += pl->faces_len;
            } else {
                *p++ = '\n';
            }
        }
        i = (uint64_t)y * n + xe;
    }
    b->len = (size_t)(p - b->base);
    return 0;
}

/* ---- the water -------------------------------------------------------- */

float wg_obj_level(const float *h, const float *w, uint32_t n, uint32_t x,
                   int above, int below)
{
    float d = w[x], ground = h[x];
    if (d > WG_WATER_MIN)
        return ground + d;
    float best = -INFINITY, shallow = INFINITY;
    ptrdiff_t j0 = above ? -(ptrdiff_t)n : 0, j1 = below ? (ptrdiff_t)n : 0;
    uint32_t i0 = x ? x - 1 : 0, i1 = x + 1 < n ? x + 1 : x;
    for (ptrdiff_t j = j0; j <= j1; j += n)
        for (uint32_t i = i0; i <= i1; i++) {
            float dq = w[j + i];
            float l = h[j + i] + dq;
            if (dq > WG_WATER_MIN) {
                /* The depth as the picture has it, its surface less the
                 * ground (wg_water_levels), to the bit. */
                float depth = l - h[j + i];
                best = l > best ? l : best;
                shallow = depth < shallow ? depth : shallow;
            }
        }
    if (best == -INFINITY)
        return ground;
    /* The neighbours wg_shore_bridge reads, those outside the world dry. */
    const ptrdiff_t up = -(ptrdiff_t)n, down = (ptrdiff_t)n;
    const int left = x > 0, right = x + 1 < n;
#define OBJ_WET(on, j, i) ((on) && w[(j) + (ptrdiff_t)(i)] > WG_WATER_MIN)
    int bridge = wg_shore_bridge(
        OBJ_WET(left, 0, x - 1), OBJ_WET(below, down, x),
        OBJ_WET(left && below, down, x - 1), OBJ_WET(above, up, x),
        OBJ_WET(right, 0, x + 1), OBJ_WET(above && right, up, x + 1));
#undef OBJ_WET
    return wg_shore_level(ground, best, shallow, bridge);
}

/* A thread's working rows for the water: the water shown (wg_water_shown)
 * on the rows around a block, and for two rows the rank of each vertex the
 * water uses among the row's used ones. */
typedef struct obj_scratch {
    float *shown;   /* rows lo.. of the block, n each */
    uint8_t *wet;   /* the same rows: shown deeper than WG_WATER_MIN */
    uint8_t *colwet; /* n */
    uint32_t *rank[2];
    size_t rows; /* that shown holds */
} obj_scratch;

#define OBJ_UNUSED UINT32_MAX

static void obj_scratch_free(obj_scratch *s)
{
    free(s->shown);
    free(s->wet);
    free(s->colwet);
    free(s->rank[0]);
    free(s->rank[1]);
}

/* Is vertex x of row r under water (the scratch rows start at row lo)? */
static inline int obj_wet(const obj_plan *pl, const obj_scratch *s,
                          uint32_t lo, uint32_t r, uint32_t x)
{
    return s->wet[(size_t)(r - lo) * pl->n + x];
}

/* The vertices of row r that the water uses (one of the cells around it
 * has a corner under water: a vertex of its 3 x 3 is), ranked in order
 * into rank[], OBJ_UNUSED for the rest; returns how many. */
static uint32_t obj_used(const obj_plan *pl, obj_scratch *s, uint32_t lo,
                         uint32_t r, uint32_t *rank)
{
    uint32_t n = pl->n, r0 = r ? r - 1 : 0, r1 = r + 1 < n ? r + 1 : r;
    memcpy(s->colwet, s->wet + (size_t)(r0 - lo) * n, n);
    for (uint32_t j = r0 + 1; j <= r1; j++) {
        const uint8_t *w = s->wet + (size_t)(j - lo) * n;
        for (uint32_t x = 0; x < n; x++)
            s->colwet[x] |= w[x];
    }
    uint32_t count = 0;
    for (uint32_t x = 0; x < n; x++) {
        int used = s->colwet[x] || (x && s->colwet[x - 1]) ||
                   (x + 1 < n && s->colwet[x + 1]);
        rank[x] = used ? count++ : OBJ_UNUSED;
    }
    return count;
}

/* One corner of a water face: "-v/t/-1 " (its vertex relative, the
 * terrain's texture coordinate at its grid point, the water's normal: the
 * last one read). */
static inline char *obj_corner(char *p, uint64_t back, uint64_t t)
{
    *p++ = '-';
    p = obj_u64(p, back);
    *p++ = '/';
    p = obj_u64(p, t);
    memcpy(p, "/-1 ", 4);
    return p + 4;
}

/* Water rows [y0, y1): each row's vertices (at the water's level), then
 * the faces of the cells between it and the row before, in the terrain's
 * winding.  Vertex indices are relative to the end of the row's own
 * vertices, so a block needs nothing from the blocks before it. */
static int obj_water(const obj_plan *pl, uint32_t y0, uint32_t y1,
                     obj_scratch *s, obj_buf *b)
{
    const wg_fields *f = pl->f;
    uint32_t n = pl->n;
    uint32_t lo = y0 >= 2 ? y0 - 2 : 0, hi = y1 < n ? y1 : n - 1;
    size_t rows = (size_t)(hi - lo + 1);
    if (rows > s->rows || !s->shown || !s->wet) {
        free(s->shown);
        free(s->wet);
        s->shown = malloc(rows * n * sizeof *s->shown);
        s->wet = malloc(rows * n);
        s->rows = s->shown && s->wet ? rows : 0;
    }
    if (!s->colwet)
        s->colwet = malloc(n);
    for (int i = 0; i < 2; i++)
        if (!s->rank[i])
            s->rank[i] = malloc((size_t)n * sizeof *s->rank[i]);
    if (!s->shown || !s->wet || !s->colwet || !s->rank[0] || !s->rank[1])
        return -1;
    for (uint32_t r = lo; r <= hi; r++)
        for (uint32_t x = 0; x < n; x++) {
            size_t k = (size_t)(r - lo) * n + x;
            s->shown[k] = wg_water_shown(f, pl->sea, x, r);
            s->wet[k] = s->shown[k] > WG_WATER_MIN;
        }

    uint32_t *prev = s->rank[0], *cur = s->rank[1];
    uint32_t nprev = y0 ? obj_used(pl, s, lo, y0 - 1, prev) : 0;
    for (uint32_t y = y0; y < y1; y++) {
        uint32_t ncur = obj_used(pl, s, lo, y, cur);
        /* A vertex line is a v piece, a number and " Z\n"; a face line
         * two spaces, three corners and a new line. */
        if (obj_reserve(b, (size_t)ncur * (sizeof(obj_piece) + 2 * OBJ_NUM_MAX) +
                               (size_t)(n - 1) * 2 * (4 + 3 * (3 * 24)) + 64) != 0)
            return -1;
        char *p = b->base + b->len;
        obj_piece zr;
        char *q = zr.s;
        *q++ = ' ';
        q = obj_num(q, wg_block_coord(y, pl->sp), OBJ_POS_DEC, OBJ_POS_SCALE);
        *q++ = '\n';
        zr.len = (uint8_t)(q - zr.s);
        const float *h = f->height + (size_t)y * n;
        const float *w = s->shown + (size_t)(y - lo) * n;
        for (uint32_t x = 0; x < n; x++) {
            if (cur[x] == OBJ_UNUSED)
                continue;
            p = obj_put(p, &pl->vx[x]);
            p = obj_pos(p, wg_obj_level(h, w, n, x, y > 0, y + 1 < n));
            p = obj_put(p, &zr);
        }
        for (uint32_t x = 0; y && x + 1 < n; x++) {
            if (!(obj_wet(pl, s, lo, y - 1, x) || obj_wet(pl, s, lo, y, x) ||
                  obj_wet(pl, s, lo, y - 1, x + 1) ||
                  obj_wet(pl, s, lo, y, x + 1)))
                continue;
            /* a (x, y-1), b (x+1, y-1), c (x, y), d (x+1, y), as the
             * terrain's faces: how far back each is, and the terrain's
             * index at its grid point. */
            uint64_t back[4] = {(uint64_t)ncur + nprev - prev[x],
                                (uint64_t)ncur + nprev - prev[x + 1],
                                (uint64_t)ncur - cur[x],
                                (uint64_t)ncur - cur[x + 1]};
            uint64_t t[4] = {(uint64_t)(y - 1) * n + x + 1,
                             (uint64_t)(y - 1) * n + x + 2,
                             (uint64_t)y * n + x + 1, (uint64_t)y * n + x + 2};
            static const int tri[2][3] = {{0, 2, 1}, {1, 2, 3}};
            for (int k = 0; k < 2; k++) {
                *p++ = 'f';
                *p++ = ' ';
                for (int i = 0; i < 3; i++)
                    p = obj_corner(p, back[tri[k][i]], t[tri[k][i]]);
                p[-1] = '\n';
            }
        }
        b->len = (size_t)(p - b->base);
        uint32_t *tmp = prev;
        prev = cur;
        cur = tmp;
        nprev = ncur;
    }
    return 0;
}

/* Block k of the file into b. */
static int obj_block(const obj_plan *pl, uint64_t k, obj_scratch *s,
                     obj_buf *b)
{
    if (k == 0 && obj_start(pl, b) != 0)
        return -1;
    if (k < pl->terrain_blocks) {
        uint64_t v0 = k * OBJ_BLOCK;
        uint64_t v1 = v0 + OBJ_BLOCK < pl->cells ? v0 + OBJ_BLOCK : pl->cells;
        return obj_terrain(pl, v0, v1, b);
    }
    uint64_t w = k - pl->terrain_blocks;
    /* The water's own level normal, for all of it. */
    static const char start[] = "o water\nvn 0 1 0\nusemtl water\ns off\n";
    if (w == 0 && obj_append(b, start, sizeof start - 1) != 0)
        return -1;
    uint32_t y0 = (uint32_t)(w * pl->water_rows);
    uint32_t y1 = pl->n - y0 > pl->water_rows ? y0 + pl->water_rows : pl->n;
    return obj_water(pl, y0, y1, s, b);
}

/* ---- formatting on every thread, written in order --------------------- */

typedef struct obj_slot {
    obj_buf b;
    int ready; /* formatted, not yet written */
} obj_slot;

typedef struct obj_pool {
    const obj_plan *pl;
    FILE *fp;
    pthread_mutex_t m;
    pthread_cond_t cv;
    uint64_t claimed, written; /* blocks taken to format, and written */
    uint32_t slots;            /* block k is formatted into slot k % slots */
    obj_slot *slot;
    int writing; /* a thread is writing the blocks out */
    int stop;    /* a failure: take no more blocks */
    int nomem;
    int werr; /* the failed write's errno */
    void (*failed)(void *ctx); /* called at once when a write fails */
    void *ctx;
} obj_pool;

/* Take the next block, format it into its slot, and when it is the next
 * one to be written and nobody is writing, write it and every one ready
 * after it.  A thread waits only when it is a whole ring of slots ahead of
 * the writing. */
static void obj_worker(void *arg, uint32_t part)
{
    obj_pool *o = arg;
    obj_scratch s = {0};
    (void)part;
    pthread_mutex_lock(&o->m);
    for (;;) {
        while (!o->stop && o->claimed < o->pl->blocks &&
               o->claimed >= o->written + o->slots)
            pthread_cond_wait(&o->cv, &o->m);
        if (o->stop || o->claimed >= o->pl->blocks)
            break;
        uint64_t k = o->claimed++;
        obj_slot *sl = &o->slot[k % o->slots];
        pthread_mutex_unlock(&o->m);
        sl->b.len = 0;
        int rc = obj_block(o->pl, k, &s, &sl->b);
        pthread_mutex_lock(&o->m);
        if (rc != 0) {
            o->nomem = o->stop = 1;
            pthread_cond_broadcast(&o->cv);
            break;
        }
        sl->ready = 1;
        if (o->writing)
            continue;
        o->writing = 1;
        while (!o->stop && o->written < o->pl->blocks &&
               o->slot[o->written % o->slots].ready) {
            obj_slot *w = &o->slot[o->written % o->slots];
            pthread_mutex_unlock(&o->m);
            int e = obj_fwrite(o->fp, w->b.base, w->b.len);
            pthread_mutex_lock(&o->m);
            w->ready = 0;
            o->written++;
            if (e && !o->werr) {
                o->werr = e;
                o->stop = 1;
                if (o->failed)
                    o->failed(o->ctx);
            }
            pthread_cond_broadcast(&o->cv);
        }
        o->writing = 0;
    }
    pthread_mutex_unlock(&o->m);
    obj_scratch_free(&s);
}

/* The threads for 'threads' (0: one per CPU), at most one per block. */
static uint32_t obj_threads(uint32_t threads, uint64_t blocks)
{
    long cpus = wg_cpus();
    uint64_t t = threads ? threads : cpus < 1 ? 1 : (uint64_t)cpus;
    t = t > WG_THREADS_MAX ? WG_THREADS_MAX : t;
    t = t > blocks ? blocks : t;
    return t ? (uint32_t)t : 1;
}

static int obj_write(FILE *fp, const wg_fields *f, float sea,
                     const char *header, const char *mtl_name,
                     uint32_t tex_side, uint32_t threads,
                     void (*failed)(void *ctx), void *ctx, char *err)
{
    obj_plan pl;
    obj_pool o = {.pl = &pl, .fp = fp, .failed = failed, .ctx = ctx};
    if (obj_plan_make(&pl, f, sea, header, mtl_name, tex_side) != 0) {
        obj_plan_free(&pl);
        return wg_fail(err, "out of memory");
    }
    uint32_t t = obj_threads(threads, pl.blocks);
    o.slots = 2 * t;
    o.slot = calloc(o.slots, sizeof *o.slot);
    int sync = o.slot ? pthread_mutex_init(&o.m, NULL) : -1;
    if (sync == 0 && pthread_cond_init(&o.cv, NULL) != 0) {
        pthread_mutex_destroy(&o.m);
        sync = -1;
    }
    if (sync != 0) {
        free(o.slot);
        obj_plan_free(&pl);
        return wg_fail(err, "out of memory");
    }
    wg_parallel(t, obj_worker, &o);
    pthread_cond_destroy(&o.cv);
    pthread_mutex_destroy(&o.m);
    for (uint32_t i = 0; i < o.slots; i++)
        free(o.slot[i].b.base);
    free(o.slot);
    obj_plan_free(&pl);
    if (o.werr)
        return wg_fail(err, "%s", strerror(o.werr));
    if (o.nomem)
        return wg_fail(err, "out of memory");
    return 0;
}

int wg_obj_write_threads(FILE *fp, const wg_fields *f, float sea,
                         const char *header, const char *mtl_name,
                         uint32_t tex_side, uint32_t threads, char *err)
{
    return obj_write(fp, f, sea, header, mtl_name, tex_side, threads, NULL,
                     NULL, err);
}

int wg_obj_write(FILE *fp, const wg_fields *f, float sea, const char *header,
                 const char *mtl_name, uint32_t tex_side, char *err)
{
    return obj_write(fp, f, sea, header, mtl_name, tex_side, 0, NULL, NULL,
                     err);
}

/* ---- the material file and the set ------------------------------------ */

int wg_mtl_write(FILE *fp, const char *header, const char *texture_name,
                 char *err)
{
    obj_buf b = {0};
    /* Diffuse only: Blender makes a Principled BSDF whose base colour is
     * the map, with no specular shine on the ground. */
    static const char terrain[] = "newmtl terrain\n"
                                  "Ka 0.000000 0.000000 0.000000\n"
                                  "Kd 1.000000 1.000000 1.000000\n"
                                  "Ks 0.000000 0.000000 0.000000\n"
                                  "Ns 1.000000\n"
                                  "d 1.000000\n"
                                  "illum 1\n"
                                  "map_Kd ";
    /* The water: blue, glossy and partly transparent, so the riverbeds and
     * the seabed the texture paints show through where it is shallow.
     * Tr before d: some importers read Tr as the opacity, others as its
     * complement; the standard d, last, wins in both. */
    static const char water[] = "\n\nnewmtl water\n"
                                "Ka 0.000000 0.000000 0.000000\n"
                                "Kd 0.020000 0.120000 0.220000\n"
                                "Ks 0.500000 0.500000 0.500000\n"
                                "Ns 300.000000\n"
                                "Ni 1.330000\n"
                                "Tr 0.400000\n"
                                "d 0.600000\n"
                                "illum 2\n";
    if (obj_comment(&b, header) || obj_append(&b, terrain, sizeof terrain - 1) ||
        obj_append_name(&b, texture_name) ||
        obj_append(&b, water, sizeof water - 1)) {
        free(b.base);
        return wg_fail(err, "out of memory");
    }
    int e = obj_fwrite(fp, b.base, b.len);
    free(b.base);
    if (e)
        return wg_fail(err, "%s", strerror(e));
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

/* The two halves of wg_obj_save's work, one per thread.  Each file is
 * finished (flushed and closed) on the thread that wrote it, and a failure
 * takes a ticket there and then: on a full disk both threads fail, and the
 * file to blame is the one that failed first, not the one looked at
 * first. */
typedef struct obj_job {
    const wg_fields *f;
    float sea;
    const char *header, *mtl_name, *tex_name;
    uint32_t side;
    uint8_t *rgb;
    wg_outfile *out; /* texture, mtl, obj */
    atomic_uint tickets;
    unsigned order[3]; /* 0: written, else its failure's ticket (from 1) */
    char why[3][WG_ERR_LEN];
} obj_job;

static void obj_ticket(obj_job *j, int i)
{
    if (!j->order[i])
        j->order[i] = atomic_fetch_add(&j->tickets, 1) + 1;
}

static void obj_done(obj_job *j, int i, int rc)
{
    if (rc == 0)
        rc = wg_outfile_finish(&j->out[i], j->why[i]);
    if (rc != 0)
        obj_ticket(j, i);
}

/* The OBJ's write failed, on whichever thread was writing: its ticket
 * now, not once the other threads have stopped. */
static void obj_failed(void *arg)
{
    obj_ticket(arg, 2);
}

static void obj_part(void *arg, uint32_t part)
{
    obj_job *j = arg;
    if (part == 0) {
        wg_texture_make(j->f, j->sea, j->side, j->rgb);
        /* Its worldgen text is the options alone, as in every other PNG
         * worldgen writes: the header's first line, the version, is the
         * Software text (it had been in both, and a tool reading the
         * options back from the PNGs misread this one). */
        const char *opts = strchr(j->header, '\n');
        const wg_png_text text[] = {
            {"Software", "worldgen " WG_VERSION},
            {"worldgen", opts ? opts + 1 : j->header},
        };
        obj_done(j, 0, wg_png_write(j->out[0].fp, j->side, j->side, 8, 3,
                                    j->rgb, (size_t)j->side * 3, text, 2,
                                    j->why[0]));
        obj_done(j, 1, wg_mtl_write(j->out[1].fp, j->header, j->tex_name,
                                    j->why[1]));
    } else {
        obj_done(j, 2, obj_write(j->out[2].fp, j->f, j->sea, j->header,
                                 j->mtl_name, j->side, 0, obj_failed, j,
                                 j->why[2]));
    }
}

/* All or nothing: the three files are written to temporaries, and only
 * when all three are complete does wg_outfile_commit_set rename them into
 * place, as one set: it holds an exclusive flock on their folder (so a
 * concurrent run's renames come wholly before or after ours) and keeps the
 * fatal signals waiting (so an interrupt cannot fall between two renames);
 * a rename that fails takes back those before it.  The lock is on the
 * folder itself, opened read-only: no lock file to create or to leave
 * behind, and the kernel drops it if the process dies.
 *
 * The texture is made on every thread and compressed on one, while the
 * OBJ is formatted on every thread.  Measured on the 2-core CI machine
 * (shared, so run at a real-time priority to have its CPUs), --hydraulic 0,
 * medians: formatting alone into /dev/null, 42 MB at --size 512 in 9 ms
 * on 2 threads (15 ms on one; 4.7 and 2.9 GB/s), 720 MB at 2048 in 0.13 s
 * (0.26 s; 5.6 and 2.8 GB/s); the absolute indices and fixed decimals
 * before this layout made 57.5 MB and 1014 MB at 0.9 and 1.2 GB/s on one
 * thread.  All three files: 57 ms at 512 and 0.85 s at 2048 on a tmpfs,
 * 74 ms and 1.2 s on the disk (107 ms and 1.77 s, 111 ms and 2.7 s
 * before). */
int wg_obj_save(const char *path, const wg_fields *f, float sea,
                const char *header, char *err)
{
    char mtl[4096], tex[4096], why[WG_ERR_LEN], shown[WG_PATH_SHOWN + 1];
    const char *failed = path;
    if (wg_obj_siblings(path, mtl, tex, sizeof mtl) != 0)
        return wg_fail(err, "'%s': path too long",
                       wg_outfile_shown(path, shown));
    uint32_t side = wg_texture_side(f->n);
    uint8_t *rgb = wg_block_alloc((size_t)side * side * 3);
    wg_outfile out[3] = {{0}}; /* a zeroed one aborts as a no-op */
    const char *paths[3] = {tex, mtl, path};
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
    int first = -1;
    for (int i = 0; i < 3; i++)
        if (job.order[i] && (first < 0 || job.order[i] < job.order[first]))
            first = i;
    if (first >= 0) {
        failed = paths[first];
        snprintf(why, sizeof why, "%s", job.why[first]);
        goto err;
    }
    /* In the order of paths[]: the OBJ last, so where it exists, so do the
     * files it names. */
    int bad;
    if (wg_outfile_commit_set(out, 3, &bad, why) != 0) {
        failed = paths[bad];
        goto err;
    }
    wg_block_free(rgb);
    return 0;
err:
    for (int i = 0; i < 3; i++)
        wg_outfile_abort(&out[i]);
    wg_block_free(rgb);
    return wg_fail(err, "'%s': %s", wg_outfile_shown(failed, shown), why);
}
