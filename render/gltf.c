/* gltf.c: the binary glTF 2.0 writer (gltf.h); its meshes simplified
 * (simplify.h) tile by tile on every core.
 *
 * The meshes' attributes and indices are made, on every core, straight into
 * the buffer that becomes the BIN chunk, while the texture is made and
 * compressed into memory on another thread.  The GLB's header and JSON
 * hold the PNG's size, so a regular file gets everything before the PNG
 * as soon as the meshes are done, with room for those numbers, which are
 * written in once the PNG is; a pipe gets the file in order at the end.
 * Either way, a few large fwrite calls.  Measured: see wg_gltf_save(). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gltf.h"
#include "obj.h"
#include "outfile.h"
#include "png.h"
#include "render.h"
#include "simplify.h"
#include "stats.h"

/* GLB is little-endian; the buffers are the host's floats and integers. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the GLB writer stores host-order numbers: little-endian hosts only"
#endif

#define GLTF_FLOAT 5126
#define GLTF_UINT 5125
#define GLTF_ARRAY_BUFFER 34962
#define GLTF_ELEMENT_ARRAY_BUFFER 34963

/* A tile is a triangulation's and the water quadtree's top block. */
_Static_assert(WG_GLTF_TILE <= WG_TIN_SIDE_MAX &&
               (WG_GLTF_TILE & (WG_GLTF_TILE - 1)) == 0,
               "WG_GLTF_TILE: a power of two, at most WG_TIN_SIDE_MAX");

/* --- the meshes ------------------------------------------------------------ */

typedef struct gltf_mesh {
    size_t nv, ni;     /* vertices, indices (0: no mesh) */
    uint32_t *grid;    /* vertex k's grid point; NULL: grid point k */
    uint32_t *idx;     /* NULL: every cell's two triangles, made in place */
    float min[3], max[3];
    size_t pos, nrm, uv, ind; /* byte offsets in the BIN chunk */
} gltf_mesh;

typedef struct gltf_job {
    const wg_fields *f;
    float sea, error;
    const char *params;
    uint32_t n, parts;
    float *shown;      /* wg_water_shown() at every vertex; NULL: no water */
    gltf_mesh mesh[2]; /* terrain, water */
    uint8_t *bin;      /* the meshes' part of the BIN chunk */
    size_t bin_len;
    float pmin[WG_THREADS_MAX][2][3], pmax[WG_THREADS_MAX][2][3];
    /* Simplifying: tasks 0 .. tiles-1 are the terrain's tiles, then the
     * water's. */
    uint32_t tiles_x;
    size_t tiles, tasks;
    atomic_size_t next;
    uint32_t **tri;  /* each terrain tile's triangles */
    size_t *tri_len;
    float *tri_err;  /* each task's largest height difference */
    wg_quad_blocks *blocks; /* each water tile's blocks */
    float *level;    /* the water's level at every grid point */
    uint32_t *wet_sum; /* wet cells north-west of each grid point */
    atomic_int nomem;
    /* The texture, compressed. */
    char *png;
    size_t png_len;
    int png_rc;
    char png_why[WG_ERR_LEN];
    int geo_rc;
    char geo_why[WG_ERR_LEN];
    /* The file: its JSON (the numbers that depend on the PNG's size at
     * at_img and at_buf, 10 characters each), and whether the part before
     * the PNG went out while the texture was still being made. */
    FILE *fp;
    off_t start;
    int seekable, sent;
    char *js;
    size_t js_len, at_img, at_buf;
    double got; /* simplified: the largest height difference left */
} gltf_job;

static inline int gltf_wet(const float *shown, size_t k)
{
    return shown[k] > WG_WATER_MIN;
}

/* Is the cell whose north-west corner is grid point k under water: a
 * corner deeper than WG_WATER_MIN (as the OBJ's water object)? */
static inline int gltf_wet_cell(const float *shown, size_t k, uint32_t n)
{
    return gltf_wet(shown, k) || gltf_wet(shown, k + 1) ||
           gltf_wet(shown, k + n) || gltf_wet(shown, k + n + 1);
}

/* The water's level at vertex (x, y): obj.c's, so the two exports' water
 * surfaces coincide. */
static float gltf_level(const wg_fields *f, const float *shown, uint32_t x,
                        uint32_t y)
{
    size_t row = (size_t)y * f->n;
    return wg_obj_level(f->height + row, shown + row, f->n, x, y > 0,
                        y + 1 < f->n);
}

/* Grid point (x, y) of mesh m (0 terrain, 1 water) in world space. */
static inline void gltf_point(const gltf_job *j, int m, uint32_t x, uint32_t y,
                              float sp, float p[3])
{
    p[0] = wg_block_coord(x, sp);
    p[1] = m ? gltf_level(j->f, j->shown, x, y)
             : j->f->height[(size_t)y * j->n + x];
    p[2] = wg_block_coord(y, sp);
}

/* Rows [y0, y1) of a part's share of rows. */
static void gltf_share(size_t count, uint32_t parts, uint32_t part, size_t *a,
                       size_t *b)
{
    *a = count * part / parts;
    *b = count * (part + 1) / parts;
}

static void gltf_shown_part(void *ctx, uint32_t part)
{
    gltf_job *j = ctx;
    size_t y0, y1;
    gltf_share(j->n, j->parts, part, &y0, &y1);
    for (size_t y = y0; y < y1; y++)
        for (uint32_t x = 0; x < j->n; x++)
            j->shown[y * j->n + x] =
                wg_water_shown(j->f, j->sea, x, (uint32_t)y);
}

/* The two triangles of the cell whose north-west corner is grid point a,
 * counter-clockwise seen from +Y as the OBJ's: (a, c, b) and (b, c, d)
 * with b east of a, c south of a, d south-east. */
static inline uint32_t *gltf_cell(uint32_t *p, uint32_t a, uint32_t n)
{
    uint32_t b = a + 1, c = a + n, d = c + 1;
    p[0] = a, p[1] = c, p[2] = b;
    p[3] = b, p[4] = c, p[5] = d;
    return p + 6;
}

/* Number the grid points m->idx uses in grid order (so vertices stay in
 * rows, as in the OBJ), and rewrite the indices with the new numbers.
 * Returns 0, or -1 when out of memory. */
static int gltf_compact(gltf_mesh *m, uint32_t n)
{
    size_t cells = wg_cells(n), nv = 0;
    uint32_t *map = malloc(cells * sizeof *map);
    if (!map)
        return -1;
    memset(map, 0xff, cells * sizeof *map);
    for (size_t i = 0; i < m->ni; i++)
        map[m->idx[i]] = 0;
    for (size_t g = 0; g < cells; g++)
        nv += map[g] == 0;
    m->grid = malloc((nv ? nv : 1) * sizeof *m->grid);
    if (!m->grid) {
        free(map);
        return -1;
    }
    nv = 0;
    for (size_t g = 0; g < cells; g++)
        if (map[g] == 0) {
            m->grid[nv] = (uint32_t)g;
            map[g] = (uint32_t)nv++;
        }
    for (size_t i = 0; i < m->ni; i++)
        m->idx[i] = map[m->idx[i]];
    m->nv = nv;
    free(map);
    return 0;
}

/* The water's triangles over every wet cell, as grid points.  Returns 0,
 * or -1 when out of memory. */
static int gltf_water_cells(gltf_job *j)
{
    uint32_t n = j->n;
    size_t wet = 0;
    for (size_t y = 0; y + 1 < n; y++)
        for (size_t x = 0; x + 1 < n; x++)
            wet += gltf_wet_cell(j->shown, y * n + x, n);
    gltf_mesh *m = &j->mesh[1];
    m->ni = 6 * wet;
    if (!wet)
        return 0;
    uint32_t *p = m->idx = malloc(m->ni * sizeof *m->idx);
    if (!p)
        return -1;
    for (size_t y = 0; y + 1 < n; y++)
        for (size_t x = 0; x + 1 < n; x++)
            if (gltf_wet_cell(j->shown, y * n + x, n))
                p = gltf_cell(p, (uint32_t)(y * n + x), n);
    return gltf_compact(m, n);
}

/* Simplify tiles until none is left: tasks 0 .. tiles-1 are the terrain's
 * tiles, then the water's top blocks. */
static void gltf_tile_part(void *ctx, uint32_t part)
{
    (void)part;
    gltf_job *j = ctx;
    uint32_t n = j->n, T = WG_GLTF_TILE;
    wg_tin *tin = NULL;
    while (!j->nomem) {
        size_t task = atomic_fetch_add(&j->next, 1);
        if (task >= j->tasks)
            break;
        size_t tile = task % j->tiles;
        uint32_t x0 = (uint32_t)(tile % j->tiles_x) * T;
        uint32_t y0 = (uint32_t)(tile / j->tiles_x) * T;
        double worst = 0.0;
        if (task < j->tiles) {
            if (!tin && !(tin = wg_tin_new(T))) {
                j->nomem = 1;
                break;
            }
            uint32_t w = n - 1 - x0 < T ? n - 1 - x0 : T;
            uint32_t h = n - 1 - y0 < T ? n - 1 - y0 : T;
            worst = wg_tin_tile(tin, j->f->height, n, x0, y0, w, h, j->error,
                                &j->tri[task], &j->tri_len[task]);
        } else {
            const wg_quad_grid g = {n, j->level, j->wet_sum};
            if (wg_quad_split(&g, x0, y0, T, j->error, &j->blocks[tile],
                              &worst) != 0)
                worst = -1.0;
        }
        if (worst < 0.0)
            j->nomem = 1;
        j->tri_err[task] = (float)worst;
    }
    wg_tin_free(tin);
}

/* The water's triangles from its blocks, as grid points.  Returns 0, or
 * -1 when out of memory. */
static int gltf_water_blocks(gltf_job *j)
{
    gltf_mesh *m = &j->mesh[1];
    if (wg_quad_triangles(j->blocks, j->tiles, j->n, &m->idx, &m->ni) != 0)
        return -1;
    return m->ni ? gltf_compact(m, j->n) : 0;
}

static void gltf_level_part(void *ctx, uint32_t part)
{
    gltf_job *j = ctx;
    size_t y0, y1;
    gltf_share(j->n, j->parts, part, &y0, &y1);
    for (size_t y = y0; y < y1; y++)
        for (uint32_t x = 0; x < j->n; x++)
            j->level[y * j->n + x] = gltf_level(j->f, j->shown, x, (uint32_t)y);
}

/* Simplify both meshes into j->mesh[].  Returns 0, or -1 when out of
 * memory. */
static int gltf_simplify_all(gltf_job *j)
{
    uint32_t n = j->n, T = WG_GLTF_TILE;
    j->tiles_x = (n - 1 + T - 1) / T;
    j->tiles = (size_t)j->tiles_x * j->tiles_x;
    j->tasks = j->tiles * (j->shown ? 2 : 1);
    j->tri = calloc(j->tiles, sizeof *j->tri);
    j->tri_len = calloc(j->tiles, sizeof *j->tri_len);
    j->tri_err = calloc(j->tasks, sizeof *j->tri_err);
    j->blocks = calloc(j->tiles, sizeof *j->blocks);
    int rc = -1;
    if (!j->tri || !j->tri_len || !j->tri_err || !j->blocks)
        goto out;
    if (j->shown) {
        /* The water's levels, and a summed table of its wet cells. */
        j->level = malloc(wg_cells(n) * sizeof *j->level);
        j->wet_sum = malloc(wg_cells(n) * sizeof *j->wet_sum);
        if (!j->level || !j->wet_sum)
            goto out;
        wg_parallel(j->parts, gltf_level_part, j);
        for (uint32_t y = 0; y < n; y++)
            for (uint32_t x = 0; x < n; x++) {
                size_t k = (size_t)y * n + x;
                j->wet_sum[k] = !x || !y ? 0
                    : j->wet_sum[k - 1] + j->wet_sum[k - n] - j->wet_sum[k - n - 1] +
                      (uint32_t)gltf_wet_cell(j->shown, k - n - 1, n);
            }
    }
    atomic_store(&j->next, 0);
    j->nomem = 0;
    wg_parallel(j->parts, gltf_tile_part, j);
    if (j->nomem)
        goto out;
    for (size_t t = 0; t < j->tasks; t++)
        j->got = fmax(j->got, j->tri_err[t]);
    gltf_mesh *g = &j->mesh[0];
    for (size_t t = 0; t < j->tiles; t++)
        g->ni += j->tri_len[t];
    uint32_t *p = g->idx = malloc(g->ni * sizeof *g->idx);
    if (!p)
        goto out;
    for (size_t t = 0; t < j->tiles; t++) {
        memcpy(p, j->tri[t], j->tri_len[t] * sizeof *p);
        p += j->tri_len[t];
    }
    if (gltf_compact(g, n) != 0 || (j->shown && gltf_water_blocks(j) != 0))
        goto out;
    rc = 0;
out:
    for (size_t t = 0; t < j->tiles; t++) {
        if (j->tri)
            free(j->tri[t]);
        if (j->blocks)
            free(j->blocks[t].b);
    }
    free(j->tri);
    free(j->tri_len);
    free(j->tri_err);
    free(j->blocks);
    j->tri = NULL, j->blocks = NULL;
    return rc;
}

/* Fill a part's share of every mesh's vertices and indices in j->bin. */
static void gltf_fill_part(void *ctx, uint32_t part)
{
    gltf_job *j = ctx;
    uint32_t n = j->n;
    float sp = wg_block_spacing(n);
    uint32_t side = wg_texture_side(n);
    double ts = (double)(side - 1) / (double)(n - 1);
    for (int m = 0; m < 2; m++) {
        gltf_mesh *g = &j->mesh[m];
        float *mn = j->pmin[part][m], *mx = j->pmax[part][m];
        mn[0] = mn[1] = mn[2] = INFINITY;
        mx[0] = mx[1] = mx[2] = -INFINITY;
        if (!g->ni)
            continue;
        size_t k0, k1;
        gltf_share(g->nv, j->parts, part, &k0, &k1);
        float *pos = (float *)(j->bin + g->pos) + 3 * k0;
        float *nrm = (float *)(j->bin + g->nrm) + 3 * k0;
        float *uv = m ? NULL : (float *)(j->bin + g->uv) + 2 * k0;
        for (size_t k = k0; k < k1; k++) {
            size_t gp = g->grid ? g->grid[k] : k;
            uint32_t x = (uint32_t)(gp % n), y = (uint32_t)(gp / n);
            gltf_point(j, m, x, y, sp, pos);
            for (int c = 0; c < 3; c++) {
                mn[c] = pos[c] < mn[c] ? pos[c] : mn[c];
                mx[c] = pos[c] > mx[c] ? pos[c] : mx[c];
            }
            pos += 3;
            if (m) { /* the water is level */
                nrm[0] = 0.0f, nrm[1] = 1.0f, nrm[2] = 0.0f;
            } else {
                /* Unit length to float precision, as glTF asks: the
                 * fields' normals are within a few ulps of it. */
                double a = j->f->nx[gp], b = j->f->ny[gp], c = j->f->nz[gp];
                double len = sqrt(a * a + b * b + c * c);
                if (!(len > 0.0))
                    a = 0.0, b = len = 1.0, c = 0.0;
                nrm[0] = (float)(a / len);
                nrm[1] = (float)(b / len);
                nrm[2] = (float)(c / len);
                /* Texel centres, as the OBJ's; glTF's v = 0 is the top
                 * row of the image, where grid row 0 is. */
                uv[0] = (float)(((double)x * ts + 0.5) / side);
                uv[1] = (float)(((double)y * ts + 0.5) / side);
                uv += 2;
            }
            nrm += 3;
        }
        uint32_t *ind = (uint32_t *)(j->bin + g->ind);
        if (g->idx) {
            size_t i0, i1;
            gltf_share(g->ni / 3, j->parts, part, &i0, &i1);
            memcpy(ind + 3 * i0, g->idx + 3 * i0, 3 * (i1 - i0) * sizeof *ind);
        } else {
            size_t y0, y1;
            gltf_share(n - 1, j->parts, part, &y0, &y1);
            uint32_t *p = ind + y0 * (n - 1) * 6;
            for (size_t y = y0; y < y1; y++)
                for (size_t x = 0; x + 1 < n; x++)
                    p = gltf_cell(p, (uint32_t)(y * n + x), n);
        }
    }
}

/* The most bytes of meshes a GLB takes: its 4 GiB, less a MiB for the
 * rest (its JSON; the texture comes on top).  wg_gltf_check refuses up
 * front a full grid past it. */
#define GLTF_MESHES_MAX ((double)UINT32_MAX - (double)(1u << 20))

/* The meshes, into j->bin.  Returns 0, or -1 with the reason. */
static int gltf_geometry(gltf_job *j, char *err)
{
    uint32_t n = j->n;
    size_t cells = wg_cells(n);
    /* No water, no water mesh (as the OBJ: wg_water_shown is no deeper
     * than the water beside it). */
    size_t any = 0;
    while (any < cells && !(j->f->water[any] > WG_WATER_MIN))
        any++;
    if (any < cells) {
        if (!(j->shown = malloc(cells * sizeof *j->shown)))
            return wg_fail(err, "out of memory");
        wg_parallel(j->parts, gltf_shown_part, j);
    }
    gltf_mesh *t = &j->mesh[0];
    if (j->error > 0.0f) {
        if (gltf_simplify_all(j) != 0)
            return wg_fail(err, "out of memory");
    } else {
        t->nv = cells;
        t->ni = 6 * wg_cells(n - 1);
        if (j->shown && gltf_water_cells(j) != 0)
            return wg_fail(err, "out of memory");
    }
    /* The layout: each mesh's positions, normals, texture coordinates and
     * indices, every one a multiple of 4 bytes long. */
    size_t at = 0;
    for (int m = 0; m < 2; m++) {
        gltf_mesh *g = &j->mesh[m];
        if (!g->ni)
            continue;
        g->pos = at, at += g->nv * 12;
        g->nrm = at, at += g->nv * 12;
        g->uv = at, at += m ? 0 : g->nv * 8;
        g->ind = at, at += g->ni * 4;
    }
    j->bin_len = at;
    /* Over 4 GiB the GLB cannot say its own length. */
    if (at > GLTF_MESHES_MAX)
        return wg_fail(err, "a %ux%u glTF would be %.1f GiB, over the format's "
                       "4 GiB: simplify it (--gltf-error E over 0)", n, n, at / 1073741824.0);
    /* Written once, in full: huge pages, populated at once (at 2048, 262
     * MB in 4 KiB pages had faulted 64k times, a second of the 2 s). */
    char size[32];
    if (!(j->bin = wg_block_alloc(at ? at : 1)))
        return wg_fail(err, "out of memory for %s of meshes",
                       wg_bytes_text((double)at, size));
    wg_populate(j->bin, at);
    wg_parallel(j->parts, gltf_fill_part, j);
    for (int m = 0; m < 2; m++)
        for (int c = 0; c < 3; c++) {
            j->mesh[m].min[c] = INFINITY, j->mesh[m].max[c] = -INFINITY;
            for (uint32_t p = 0; p < j->parts; p++) {
                j->mesh[m].min[c] = fminf(j->mesh[m].min[c], j->pmin[p][m][c]);
                j->mesh[m].max[c] = fmaxf(j->mesh[m].max[c], j->pmax[p][m][c]);
            }
        }
    return 0;
}

/* The texture, made and compressed into memory. */
static int gltf_texture(gltf_job *j, char *err)
{
    uint32_t side = wg_texture_side(j->n);
    uint8_t *rgb = wg_block_alloc((size_t)side * side * 3);
    if (!rgb)
        return wg_fail(err, "out of memory for a %ux%u texture", side, side);
    wg_texture_make(j->f, j->sea, side, rgb);
    const wg_png_text text[] = {
        {"Software", "worldgen " WG_VERSION},
        {"worldgen", j->params},
    };
    FILE *ms = open_memstream(&j->png, &j->png_len);
    int rc = ms ? wg_png_write(ms, side, side, 8, 3, rgb, (size_t)side * 3,
                               text, 2, err)
                : wg_fail(err, "out of memory");
    if (ms && fclose(ms) != 0 && rc == 0)
        rc = wg_fail(err, "out of memory");
    wg_block_free(rgb);
    return rc;
}

static int gltf_send(gltf_job *j, char *err);

/* The geometry on the caller's thread (and on every core from there), the
 * texture on a second. */
static void gltf_halves(void *ctx, uint32_t part)
{
    gltf_job *j = ctx;
    if (part == 1) {
        j->png_rc = gltf_texture(j, j->png_why);
        return;
    }
    j->geo_rc = gltf_geometry(j, j->geo_why);
    if (j->geo_rc == 0)
        j->geo_rc = gltf_send(j, j->geo_why);
}

/* --- the JSON chunk -------------------------------------------------------- */

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t gltf_utf8(const unsigned char *s)
{
    unsigned c = s[0];
    size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2
               : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    unsigned lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    for (size_t i = 1; i < len; i++) {
        unsigned b = s[i];
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF))
            return 0;
    }
    return len;
}

/* s as a JSON string: escapes, and U+FFFD for bytes that are not UTF-8
 * (a path in the parameters may be in any encoding; JSON must be UTF-8). */
static void gltf_json_str(FILE *js, const char *s)
{
    fputc('"', js);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t len = gltf_utf8(p);
        if (*p == '"' || *p == '\\')
            fprintf(js, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(js, "\\u%04x", *p);
        else if (len)
            fwrite(p, 1, len, js);
        else
            fputs("\\ufffd", js);
        p += len ? len : 1;
    }
    fputc('"', js);
}

/* A float exactly: 17 digits make the double that is the float, which is
 * what a validator compares min and max with. */
static void gltf_json_vec3(FILE *js, const char *key, const float v[3])
{
    fprintf(js, ",\"%s\":[%.17g,%.17g,%.17g]", key, (double)v[0],
            (double)v[1], (double)v[2]);
}

/* The JSON of the file, into a memory buffer (*js_len bytes), but for the
 * PNG's size (see gltf_finish).  Returns 0, or -1 when out of memory. */
static int gltf_json(gltf_job *j, char **js_buf, size_t *js_len)
{
    FILE *js = open_memstream(js_buf, js_len);
    if (!js)
        return -1;
    int water = j->mesh[1].ni > 0;
    fprintf(js, "{\"asset\":{\"version\":\"2.0\",\"generator\":\"worldgen "
                WG_VERSION "\",\"extras\":{\"worldgen\":\"" WG_VERSION
                "\",\"parameters\":");
    gltf_json_str(js, j->params ? j->params : "");
    if (j->error > 0.0f)
        fprintf(js, ",\"simplified\":{\"method\":\"greedy Delaunay insertion "
                    "(terrain), quadtree (water)\",\"max_error\":%.9g,"
                    "\"error\":%.9g,\"tile\":%d}",
                (double)j->error, j->got, WG_GLTF_TILE);
    fprintf(js, "}},\"scene\":0,\"scenes\":[{\"name\":\"world\",\"nodes\":[0%s]}],"
                "\"nodes\":[{\"name\":\"terrain\",\"mesh\":0}%s],",
            water ? ",1" : "", water ? ",{\"name\":\"water\",\"mesh\":1}" : "");
    fprintf(js, "\"meshes\":[{\"name\":\"terrain\",\"primitives\":[{"
                "\"attributes\":{\"POSITION\":0,\"NORMAL\":1,\"TEXCOORD_0\":2},"
                "\"indices\":3,\"material\":0}]}%s],",
            water ? ",{\"name\":\"water\",\"primitives\":[{\"attributes\":"
                    "{\"POSITION\":4,\"NORMAL\":5},\"indices\":6,"
                    "\"material\":1}]}" : "");
    /* The terrain: its texture as the base colour, matte; the water: the
     * OBJ's Kd and d, glossy. */
    fprintf(js, "\"materials\":[{\"name\":\"terrain\",\"pbrMetallicRoughness\":"
                "{\"baseColorTexture\":{\"index\":0},\"metallicFactor\":0,"
                "\"roughnessFactor\":0.9}}%s],",
            water ? ",{\"name\":\"water\",\"pbrMetallicRoughness\":{"
                    "\"baseColorFactor\":[0.02,0.12,0.22,0.6],"
                    "\"metallicFactor\":0,\"roughnessFactor\":0.05},"
                    "\"alphaMode\":\"BLEND\"}" : "");
    int image_view = water ? 7 : 4;
    fprintf(js, "\"textures\":[{\"sampler\":0,\"source\":0}],"
                "\"samplers\":[{\"magFilter\":9729,\"minFilter\":9987,"
                "\"wrapS\":33071,\"wrapT\":33071}],"
                "\"images\":[{\"name\":\"albedo\",\"bufferView\":%d,"
                "\"mimeType\":\"image/png\"}],", image_view);
    /* Accessor i is bufferView i: positions, normals, (texture
     * coordinates,) indices of each mesh. */
    fputs("\"accessors\":[", js);
    int view = 0;
    for (int m = 0; m <= water; m++) {
        const gltf_mesh *g = &j->mesh[m];
        fprintf(js, "%s{\"bufferView\":%d,\"componentType\":%d,\"count\":%zu,"
                    "\"type\":\"VEC3\"", m ? "," : "", view++, GLTF_FLOAT, g->nv);
        gltf_json_vec3(js, "min", g->min);
        gltf_json_vec3(js, "max", g->max);
        fprintf(js, "},{\"bufferView\":%d,\"componentType\":%d,\"count\":%zu,"
                    "\"type\":\"VEC3\"}", view++, GLTF_FLOAT, g->nv);
        if (!m)
            fprintf(js, ",{\"bufferView\":%d,\"componentType\":%d,\"count\":%zu,"
                        "\"type\":\"VEC2\"}", view++, GLTF_FLOAT, g->nv);
        fprintf(js, ",{\"bufferView\":%d,\"componentType\":%d,\"count\":%zu,"
                    "\"type\":\"SCALAR\"}", view++, GLTF_UINT, g->ni);
    }
    fputs("],\"bufferViews\":[", js);
    for (int m = 0; m <= water; m++) {
        const gltf_mesh *g = &j->mesh[m];
        const char *sep = m ? "," : "";
        fprintf(js, "%s{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu,"
                    "\"target\":%d}", sep, g->pos, g->nv * 12, GLTF_ARRAY_BUFFER);
        fprintf(js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu,"
                    "\"target\":%d}", g->nrm, g->nv * 12, GLTF_ARRAY_BUFFER);
        if (!m)
            fprintf(js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu,"
                        "\"target\":%d}", g->uv, g->nv * 8, GLTF_ARRAY_BUFFER);
        fprintf(js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":%zu,"
                    "\"target\":%d}", g->ind, g->ni * 4,
                GLTF_ELEMENT_ARRAY_BUFFER);
    }
    /* The PNG last: the meshes' offsets do not depend on its size, and
     * the two numbers that do are written later, 10 characters wide. */
    fprintf(js, ",{\"buffer\":0,\"byteOffset\":%zu,\"byteLength\":", j->bin_len);
    long img = ftell(js);
    fprintf(js, "%10u}],\"buffers\":[{\"byteLength\":", 0u);
    long buf = ftell(js);
    fprintf(js, "%10u}]}", 0u);
    /* The chunk is padded with spaces to 4 bytes, as GLB asks. */
    long end = ftell(js);
    fputs(&"   "[3 - (4 - end % 4) % 4], js);
    if (fclose(js) != 0 || img < 0 || buf < 0 || end < 0)
        return -1;
    j->at_img = (size_t)img, j->at_buf = (size_t)buf;
    return 0;
}

/* --- the file -------------------------------------------------------------- */

static void gltf_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

int wg_gltf_check(uint32_t n, float max_error, char *err)
{
    if (!(max_error >= 0.0f && max_error <= WG_GLTF_ERROR_MAX))
        return wg_fail(err, "the simplification error %g is not in 0..%g",
                       (double)max_error, (double)WG_GLTF_ERROR_MAX);
    /* Every grid vertex is 32 bytes and every cell 24 bytes of indices:
     * the land's mesh alone, which gltf_geometry refuses past
     * GLTF_MESHES_MAX, after the world is made. */
    double least = 32.0 * wg_cells(n) + 24.0 * wg_cells(n - 1);
    if (max_error == 0.0f && least > GLTF_MESHES_MAX) {
        /* The largest side whose land fits, said with the way out:
         * "simplify it" had named neither.  Not a side that surely fits:
         * the water's mesh and the texture (up to 8192 a side) come on
         * top, and they are known only once the world is made (8758, said
         * before, failed at the end of its run). */
        uint32_t most = 2;
        while (32.0 * wg_cells(most + 1) + 24.0 * wg_cells(most) <=
               GLTF_MESHES_MAX)
            most++;
        return wg_fail(err, "a %ux%u glTF would be over %.1f GiB, past the "
                       "format's 4 GiB (valid: --gltf-error E over 0, such "
                       "as 0.0001; with every grid vertex, the land alone "
                       "fits up to --size %u, its water and texture less)",
                       n, n, least / 1073741824.0, most);
    }
    return 0;
}

/* The header, the JSON and the meshes, with the PNG's size still unknown
 * (zero) where it counts, when the file can be patched afterwards
 * (gltf_finish): so they are written while the texture is compressed.
 * Returns 0, or -1 with the reason. */
static int gltf_send(gltf_job *j, char *err)
{
    if (gltf_json(j, &j->js, &j->js_len) != 0)
        return wg_fail(err, "out of memory");
    if (!j->seekable)
        return 0;
    uint8_t head[20], bin_head[8] = {0, 0, 0, 0, 'B', 'I', 'N', 0};
    memcpy(head, "glTF\2\0\0\0\0\0\0\0", 12);
    gltf_u32(head + 12, (uint32_t)(j->js_len));
    memcpy(head + 16, "JSON", 4);
    errno = 0;
    if (fwrite(head, 1, 20, j->fp) != 20 ||
        fwrite(j->js, 1, j->js_len, j->fp) != j->js_len ||
        fwrite(bin_head, 1, 8, j->fp) != 8 ||
        fwrite(j->bin, 1, j->bin_len, j->fp) != j->bin_len)
        return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
    j->sent = 1;
    return 0;
}

/* n as the 10 characters the JSON keeps for it. */
static void gltf_number(char *p, uint32_t n)
{
    char tmp[16];
    snprintf(tmp, sizeof tmp, "%10u", n);
    memcpy(p, tmp, 10);
}

/* Put the numbers that depend on the PNG's size, 'at' bytes into the file,
 * in place. */
static int gltf_patch(gltf_job *j, size_t at, const void *p, size_t len)
{
    return fseeko(j->fp, j->start + (off_t)at, SEEK_SET) == 0 &&
           fwrite(p, 1, len, j->fp) == len ? 0 : -1;
}

/* The rest of the file once the PNG is made: all of it, or the PNG and the
 * numbers its size changes.  Returns 0, or -1 with the reason. */
static int gltf_finish(gltf_job *j, uint32_t *total_out, char *err)
{
    static const uint8_t zeros[4] = {0};
    size_t bin = j->bin_len + j->png_len, bin_pad = (4 - bin % 4) % 4;
    size_t total = 12 + 8 + j->js_len + 8 + bin + bin_pad;
    if (total > UINT32_MAX)
        return wg_fail(err, "the glTF would be %.1f GiB, over the format's "
                       "4 GiB: simplify it (--gltf-error E over 0)", total / 1073741824.0);
    uint8_t head[20], bin_head[8];
    memcpy(head, "glTF", 4);
    gltf_u32(head + 4, 2);
    gltf_u32(head + 8, (uint32_t)total);
    gltf_u32(head + 12, (uint32_t)(j->js_len));
    memcpy(head + 16, "JSON", 4);
    gltf_u32(bin_head, (uint32_t)(bin + bin_pad));
    memcpy(bin_head + 4, "BIN", 4);
    gltf_number(j->js + j->at_img, (uint32_t)j->png_len);
    gltf_number(j->js + j->at_buf, (uint32_t)bin);
    errno = 0;
    int bad;
    if (j->sent) {
        bad = fwrite(j->png, 1, j->png_len, j->fp) != j->png_len ||
              fwrite(zeros, 1, bin_pad, j->fp) != bin_pad ||
              gltf_patch(j, 8, head + 8, 4) != 0 ||
              gltf_patch(j, 20 + j->at_img, j->js + j->at_img, 10) != 0 ||
              gltf_patch(j, 20 + j->at_buf, j->js + j->at_buf, 10) != 0 ||
              gltf_patch(j, 20 + j->js_len, bin_head, 4) != 0 ||
              fseeko(j->fp, 0, SEEK_END) != 0;
    } else {
        bad = fwrite(head, 1, 20, j->fp) != 20 ||
              fwrite(j->js, 1, j->js_len, j->fp) != j->js_len ||
              fwrite(bin_head, 1, 8, j->fp) != 8 ||
              fwrite(j->bin, 1, j->bin_len, j->fp) != j->bin_len ||
              fwrite(j->png, 1, j->png_len, j->fp) != j->png_len ||
              fwrite(zeros, 1, bin_pad, j->fp) != bin_pad;
    }
    if (bad || ferror(j->fp))
        return wg_fail(err, "%s", errno ? strerror(errno) : "write error");
    *total_out = (uint32_t)total;
    return 0;
}

/* Can the file be written out of order: a regular file, not in append
 * mode (every write would go to its end)? */
static int gltf_seekable(FILE *fp, off_t *start)
{
    struct stat st;
    int fd = fileno(fp), fl = fd < 0 ? -1 : fcntl(fd, F_GETFL);
    *start = ftello(fp);
    return fd >= 0 && fl >= 0 && !(fl & O_APPEND) && fstat(fd, &st) == 0 &&
           S_ISREG(st.st_mode) && *start >= 0;
}

int wg_gltf_write(FILE *fp, const wg_fields *f, float sea, const char *params,
                  float max_error, wg_gltf_stats *stats, char *err)
{
    uint32_t n = f->n;
    if (wg_gltf_check(n, max_error, err) != 0)
        return -1;
    long cpus = wg_cpus();
    gltf_job *j = calloc(1, sizeof *j);
    if (!j)
        return wg_fail(err, "out of memory");
    j->f = f, j->sea = sea, j->error = max_error, j->n = n;
    j->params = params ? params : "";
    j->parts = cpus < 1 ? 1 : cpus > WG_THREADS_MAX ? WG_THREADS_MAX
                                                    : (uint32_t)cpus;
    j->fp = fp;
    j->seekable = gltf_seekable(fp, &j->start);
    int rc = -1;
    uint32_t total = 0;
    wg_parallel(2, gltf_halves, j);
    if (j->geo_rc != 0 || j->png_rc != 0) {
        snprintf(err, WG_ERR_LEN, "%s", j->geo_rc ? j->geo_why : j->png_why);
        goto out;
    }
    if (gltf_finish(j, &total, err) != 0)
        goto out;
    if (stats) {
        for (int m = 0; m < 2; m++) {
            stats->vertices[m] = j->mesh[m].ni ? j->mesh[m].nv : 0;
            stats->triangles[m] = j->mesh[m].ni / 3;
        }
        stats->bytes = total;
        stats->error = j->got;
    }
    rc = 0;
out:
    for (int m = 0; m < 2; m++) {
        free(j->mesh[m].grid);
        free(j->mesh[m].idx);
    }
    free(j->shown);
    free(j->level);
    free(j->wet_sum);
    wg_block_free(j->bin);
    free(j->png);
    free(j->js);
    free(j);
    return rc;
}

/* Measured on the 2-core CI machine (busy: medians of 5, --hydraulic 0):
 * at --size 512 the GLB (16.6 MB) in 0.08 s, the OBJ (58 MB in its three
 * files) in 0.16 s; at 2048, 261 MB in 1.7 s against 1017 MB in 3.7 s,
 * and simplified within 1 mm, 13 MB (262k of 8.4M terrain triangles) in
 * 1.4 s.  The texture (made and compressed: 0.7 s at 2048, the same as the
 * OBJ's) is the longest part of the full grid's; the greedy insertion's
 * scans of its triangles the longest of a simplified one. */
int wg_gltf_save(const char *path, const wg_fields *f, float sea,
                 const char *params, float max_error, wg_gltf_stats *stats,
                 char *err)
{
    char why[WG_ERR_LEN], shown[WG_PATH_SHOWN + 1];
    wg_outfile out = {0}; /* a zeroed one aborts as a no-op */
    if (wg_outfile_open(&out, path, why) != 0 ||
        wg_gltf_write(out.fp, f, sea, params, max_error, stats, why) != 0 ||
        wg_outfile_commit(&out, why) != 0) {
        wg_outfile_abort(&out);
        /* A long path elided in the middle, so the reason fits whole. */
        return wg_fail(err, "'%s': %s", wg_outfile_shown(path, shown), why);
    }
    return 0;
}
