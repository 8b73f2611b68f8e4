/* test_obj.c: the OBJ export, read back: the counts, SPEC coordinates,
 * normals and texture coordinates of every vertex, faces counter-clockwise
 * seen from above, the water as its own object over the cells under water,
 * the .mtl with both materials and the texture the right size and the right
 * way round, a texture made from each vertex's own values, and nothing left
 * behind when a write fails. */
#define _GNU_SOURCE /* O_TMPFILE */
#include <fcntl.h>
#include <unistd.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "render/obj.h"
#include "test.h"

#define OBJ_N 33

static const wg_world obj_world = {.size = OBJ_N, .octaves = 4, .passes = 3,
                                   .steps = 20, .sea = 0.25f, .seed = 5};

/* The parsed file: positions, texture coordinates, normals, faces (their
 * indices made absolute and 1-based, as an importer makes them: -1 is the
 * last of its list read so far), and where each object begins. */
typedef struct obj_read {
    size_t nv, nvt, nvn, nf, bad;
    size_t cv, cvt, cvn, cf; /* their capacities */
    float (*v)[3], (*vt)[2], (*vn)[3];
    long (*f)[3][3];
    char mtllib[256], usemtl[64];
    char header[1024];
    int objects;           /* 'o' lines */
    char object[2][64];    /* their names */
    char material[2][64];  /* each one's usemtl */
    size_t first_v[2], first_f[2]; /* its first vertex and face, 0-based */
} obj_read;

/* Room for one more of n items of 'size' bytes in *a (capacity *cap). */
static int obj_grow(void *a, size_t n, size_t *cap, size_t size)
{
    void **p = a;
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 4096;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Index s (1-based, or negative: from the end) of a list of 'count'. */
static long obj_index(long s, size_t count)
{
    return s < 0 ? (long)count + s + 1 : s;
}

static int obj_parse(const char *path, obj_read *o)
{
    memset(o, 0, sizeof *o);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    char line[512];
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#') {
            strncat(o->header, line, sizeof o->header - strlen(o->header) - 1);
        } else if (strncmp(line, "v ", 2) == 0) {
            if (obj_grow(&o->v, o->nv, &o->cv, sizeof *o->v) != 0)
                break;
            float *p = o->v[o->nv++];
            o->bad += sscanf(line + 2, "%f %f %f", &p[0], &p[1], &p[2]) != 3;
        } else if (strncmp(line, "vt ", 3) == 0) {
            if (obj_grow(&o->vt, o->nvt, &o->cvt, sizeof *o->vt) != 0)
                break;
            float *p = o->vt[o->nvt++];
            o->bad += sscanf(line + 3, "%f %f", &p[0], &p[1]) != 2;
        } else if (strncmp(line, "vn ", 3) == 0) {
            if (obj_grow(&o->vn, o->nvn, &o->cvn, sizeof *o->vn) != 0)
                break;
            float *p = o->vn[o->nvn++];
            o->bad += sscanf(line + 3, "%f %f %f", &p[0], &p[1], &p[2]) != 3;
        } else if (strncmp(line, "f ", 2) == 0) {
            if (obj_grow(&o->f, o->nf, &o->cf, sizeof *o->f) != 0)
                break;
            long(*q)[3] = o->f[o->nf++];
            o->bad += sscanf(line + 2, "%ld/%ld/%ld %ld/%ld/%ld %ld/%ld/%ld",
                             &q[0][0], &q[0][1], &q[0][2], &q[1][0], &q[1][1],
                             &q[1][2], &q[2][0], &q[2][1], &q[2][2]) != 9;
            for (int k = 0; k < 3; k++) {
                q[k][0] = obj_index(q[k][0], o->nv);
                q[k][1] = obj_index(q[k][1], o->nvt);
                q[k][2] = obj_index(q[k][2], o->nvn);
            }
        } else if (strncmp(line, "o ", 2) == 0) {
            if (o->objects < 2) {
                sscanf(line, "o %63s", o->object[o->objects]);
                o->first_v[o->objects] = o->nv;
                o->first_f[o->objects] = o->nf;
            }
            o->objects++;
        } else if (sscanf(line, "usemtl %63s", o->usemtl) == 1) {
            if (o->objects >= 1 && o->objects <= 2)
                snprintf(o->material[o->objects - 1], 64, "%s", o->usemtl);
        } else if (sscanf(line, "mtllib %255s", o->mtllib) == 1) {
        } else if (strcmp(line, "s 1\n") != 0 && strcmp(line, "s off\n") != 0) {
            o->bad++; /* a line of no kind written */
        }
    }
    o->bad += !feof(fp);
    fclose(fp);
    return 0;
}

static void obj_free(obj_read *o)
{
    free(o->v);
    free(o->vt);
    free(o->vn);
    free(o->f);
}

/* Width and height from a PNG's IHDR. */
static int obj_png_size(const char *path, uint32_t *w, uint32_t *h)
{
    size_t len;
    unsigned char *b = wg_read_file(path, &len);
    int ok = b && len > 24 && memcmp(b, "\x89PNG", 4) == 0;
    if (ok) {
        *w = (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | b[18] << 8 | b[19];
        *h = (uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | b[22] << 8 | b[23];
    }
    free(b);
    return ok ? 0 : -1;
}

static wg_cli obj_run(const char *path)
{
    const char *argv[] = {"--size", "33", "--octaves", "4", "--erosion", "3",
                          "--hydraulic", "20", "--seed", "5", "--no-image",
                          "--obj", path, NULL};
    return wg_cli_run(argv);
}

/* Is vertex k of f under water as the OBJ and the picture show it? */
static int obj_test_wet(const wg_fields *f, size_t k)
{
    return wg_water_shown(f, obj_world.sea, (uint32_t)(k % f->n),
                          (uint32_t)(k / f->n)) >
           WG_WATER_MIN;
}

/* The cells of f with a corner under water. */
static size_t obj_wet_cells(const wg_fields *f)
{
    size_t wet = 0, n = f->n;
    for (size_t y = 0; y + 1 < n; y++)
        for (size_t x = 0; x + 1 < n; x++) {
            size_t k = y * n + x;
            wet += obj_test_wet(f, k) || obj_test_wet(f, k + 1) ||
                   obj_test_wet(f, k + n) || obj_test_wet(f, k + n + 1);
        }
    return wet;
}

WG_TEST(obj_counts_winding_and_material)
{
    char path[300], mtl[300], tex[300];
    snprintf(path, sizeof path, "%s/w.obj", wg_tmpdir());
    snprintf(mtl, sizeof mtl, "%s/w.mtl", wg_tmpdir());
    snprintf(tex, sizeof tex, "%s/w_albedo.png", wg_tmpdir());
    wg_cli c = obj_run(path);
    CHECK(c.status == 0, "%s", c.err);
    CHECK(strstr(c.out, "obj ") && !strstr(c.out, "rasterise"), "%s", c.out);
    wg_cli_free(&c);

    obj_read o;
    CHECK(obj_parse(path, &o) == 0);
    size_t n = OBJ_N;
    CHECK(o.bad == 0, "%zu lines did not parse", o.bad);
    /* The terrain: N*N of each, two faces a cell; then the water, with one
     * normal of its own. */
    CHECK(o.objects == 2 && strcmp(o.object[0], "terrain") == 0 &&
          strcmp(o.object[1], "water") == 0, "%d objects: '%s' '%s'",
          o.objects, o.object[0], o.object[1]);
    CHECK(o.first_v[1] == n * n && o.nvt == n * n && o.nvn == n * n + 1,
          "terrain v %zu, vt %zu vn %zu", o.first_v[1], o.nvt, o.nvn);
    CHECK(o.first_f[1] == 2 * (n - 1) * (n - 1), "terrain f %zu", o.first_f[1]);
    CHECK(o.nf > o.first_f[1] && o.nv > o.first_v[1], "no water: f %zu, v %zu",
          o.nf, o.nv);
    CHECK(strcmp(o.mtllib, "w.mtl") == 0 &&
          strcmp(o.material[0], "terrain") == 0 &&
          strcmp(o.material[1], "water") == 0,
          "mtllib '%s' usemtl '%s' '%s'", o.mtllib, o.material[0],
          o.material[1]);
    CHECK(strstr(o.header, "# worldgen ") && strstr(o.header, "--size 33") &&
          strstr(o.header, "--seed 5") && strstr(o.header, "--erosion 3") &&
          strstr(o.header, "--hydraulic 20") && strstr(o.header, "--sea-level 0.25"),
          "%s", o.header);

    /* Every terrain face: one index for v, vt and vn; counter-clockwise
     * seen from +Y, so its normal points up and agrees with the vertex
     * normals. */
    size_t wrong = 0, mixed = 0;
    for (size_t i = 0; i < o.first_f[1]; i++) {
        long(*q)[3] = o.f[i];
        for (int k = 0; k < 3; k++)
            mixed += q[k][0] != q[k][1] || q[k][0] != q[k][2] || q[k][0] < 1 ||
                     q[k][0] > (long)(n * n);
        if (mixed)
            break;
        float *a = o.v[q[0][0] - 1], *b = o.v[q[1][0] - 1], *d = o.v[q[2][0] - 1];
        float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float w[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
        float cy = u[2] * w[0] - u[0] * w[2];
        wrong += !(cy > 0.0f);
    }
    CHECK(mixed == 0, "a face's v/vt/vn indices differ or are out of range");
    CHECK(wrong == 0, "%zu faces are not counter-clockwise seen from +Y", wrong);
    /* The faces of the cells in order, row by row: the cell whose corners
     * are a (x, y), b (x+1, y), c (x, y+1), d (x+1, y+1) as (a, c, b) then
     * (b, c, d). */
    size_t order = 0;
    for (size_t y = 0; y + 1 < n && !mixed && o.first_f[1] == 2 * (n - 1) * (n - 1); y++)
        for (size_t x = 0; x + 1 < n; x++) {
            long a = (long)(y * n + x + 1), b = a + 1, cc = a + (long)n, d = cc + 1;
            long(*p)[3] = o.f[2 * (y * (n - 1) + x)], (*q)[3] = p + 3;
            order += p[0][0] != a || p[1][0] != cc || p[2][0] != b ||
                     q[0][0] != b || q[1][0] != cc || q[2][0] != d;
        }
    CHECK(order == 0, "%zu cells' faces out of order or of other corners", order);

    /* The materials: the terrain diffuse, its map the texture beside it;
     * the water blue and partly transparent. */
    char *m = wg_read_file(mtl, NULL);
    CHECK(m && strstr(m, "newmtl terrain\n") && strstr(m, "map_Kd w_albedo.png\n") &&
          strstr(m, "--size 33"), "%s", m ? m : "(no .mtl)");
    const char *wm = m ? strstr(m, "newmtl water\n") : NULL;
    float kd[3] = {0}, d = 1.0f, tr = 0.0f;
    CHECK(wm && sscanf(strstr(wm, "\nKd ") + 1, "Kd %f %f %f", &kd[0], &kd[1],
                       &kd[2]) == 3 && sscanf(strstr(wm, "\nd ") + 1, "d %f", &d) == 1 &&
          sscanf(strstr(wm, "\nTr ") + 1, "Tr %f", &tr) == 1,
          "%s", m ? m : "(no .mtl)");
    CHECK(kd[2] > kd[0] && d > 0.2f && d < 0.9f && fabsf(tr - (1.0f - d)) < 1e-6f,
          "water: Kd %g %g %g, d %g, Tr %g", kd[0], kd[1], kd[2], d, tr);
    free(m);
    uint32_t w = 0, h = 0;
    CHECK(obj_png_size(tex, &w, &h) == 0 && w == n && h == n, "texture %ux%u", w, h);
    obj_free(&o);
}

/* The largest errors of o's terrain against the fields f: positions
 * against -3 + x*S exactly (dp) and against the floats the renderer places
 * (dg), heights, normals, and texture coordinates against the texel
 * centres of a texture of f's size. */
typedef struct obj_errors {
    double dp, dg, dh, dn, duv;
} obj_errors;

static obj_errors obj_compare(const obj_read *o, const wg_fields *f)
{
    obj_errors e = {0};
    uint32_t n = f->n;
    double s = 6.0 / (n - 1);
    float sp = wg_block_spacing(n);
    for (uint32_t y = 0; y < n && o->first_v[1] >= wg_cells(n) &&
                         o->nvt >= wg_cells(n) && o->nvn >= wg_cells(n); y++)
        for (uint32_t x = 0; x < n; x++) {
            size_t i = (size_t)y * n + x;
            /* X = -3 + x*S, Y = h (Y up, metres), Z = -3 + y*S. */
            e.dp = fmax(e.dp, fabs(o->v[i][0] - (-3.0 + x * s)));
            e.dp = fmax(e.dp, fabs(o->v[i][2] - (-3.0 + y * s)));
            e.dg = fmax(e.dg, fabs(o->v[i][0] - wg_block_coord(x, sp)));
            e.dg = fmax(e.dg, fabs(o->v[i][2] - wg_block_coord(y, sp)));
            e.dh = fmax(e.dh, fabs(o->v[i][1] - f->height[i]));
            e.dn = fmax(e.dn, fabs(o->vn[i][0] - f->nx[i]));
            e.dn = fmax(e.dn, fabs(o->vn[i][1] - f->ny[i]));
            e.dn = fmax(e.dn, fabs(o->vn[i][2] - f->nz[i]));
            /* Texel centres: vertex (x, y) is texel (x, y) of the image,
             * whose row 0 is at the top, and OBJ's v = 0 at the bottom. */
            e.duv = fmax(e.duv, fabs(o->vt[i][0] - (x + 0.5) / n));
            e.duv = fmax(e.duv, fabs(o->vt[i][1] - (1.0 - (y + 0.5) / n)));
        }
    return e;
}

/* Within the precision obj.c states: positions and heights to 6 decimals,
 * normals to 4, texture coordinates to a fiftieth of a texel; each plus
 * the rounding of the float it is read into (half an ulp: 1.2e-7 at 2 to
 * 4, 6e-8 below 1). */
static void obj_check_precision(const obj_read *o, const wg_fields *f)
{
    obj_errors e = obj_compare(o, f);
    CHECK(o->first_v[1] == wg_cells(f->n), "%zu terrain vertices", o->first_v[1]);
    CHECK(e.dg <= 0.5e-6 + 1.2e-7 && e.dp < 1e-6 && e.dh <= 0.5e-6 + 1.2e-7 &&
              e.dn <= 0.5e-4 + 6e-8 && e.duv <= 1.0 / (50.0 * f->n) + 6e-8,
          "size %u, max error: position %g (%g from the exact grid) height %g "
          "normal %g uv %g (1/50 texel: %g)", f->n, e.dg, e.dp, e.dh, e.dn,
          e.duv, 1.0 / (50.0 * f->n));
}

WG_TEST(obj_vertices_are_the_fields_in_spec_coordinates)
{
    char path[300];
    snprintf(path, sizeof path, "%s/s.obj", wg_tmpdir());
    wg_cli c = obj_run(path);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    wg_fields f;
    CHECK(wg_make_world("scalar", &obj_world, 0, &f) == 0);
    obj_read o;
    CHECK(obj_parse(path, &o) == 0 && o.bad == 0);
    obj_check_precision(&o, &f);
    obj_free(&o);
    wg_fields_free(&f);
}

/* The OBJ and the texture are formatted on every thread, in blocks (4096
 * terrain vertices, rows of water): the same bytes for 1, 2 and 3 threads,
 * on worlds of one block and of many, and a mesh that reads back as the
 * fields. */
WG_TEST(obj_is_the_same_for_any_number_of_threads)
{
    static const uint32_t sizes[] = {2, 17, 129};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        wg_world w = obj_world;
        w.size = sizes[i];
        wg_fields f;
        if (wg_make_world("scalar", &w, 0, &f) != 0) {
            CHECK(0, "no world of %u", w.size);
            continue;
        }
        uint32_t side = wg_texture_side(f.n);
        size_t len[3] = {0};
        char *text[3] = {NULL};
        uint8_t *tex[3] = {NULL};
        char path[300], err[WG_ERR_LEN];
        for (uint32_t t = 1; t <= 3; t++) {
            snprintf(path, sizeof path, "%s/threads%u.obj", wg_tmpdir(), t);
            FILE *fp = fopen(path, "w");
            int rc = fp ? wg_obj_write_threads(fp, &f, w.sea, "test", "t.mtl", side, t,
                                               err) : -1;
            if (fp && fclose(fp) != 0)
                rc = -1;
            CHECK(rc == 0, "%u threads: %s", t, rc ? err : "");
            text[t - 1] = wg_read_file(path, &len[t - 1]);
            tex[t - 1] = malloc((size_t)side * side * 3);
            if (tex[t - 1])
                wg_texture_make_threads(&f, w.sea, side, t, tex[t - 1]);
        }
        for (int t = 1; t < 3; t++) {
            CHECK(text[0] && text[t] && len[t] == len[0] &&
                      memcmp(text[0], text[t], len[0]) == 0,
                  "size %u: the OBJ of %d threads (%zu bytes) is not one thread's "
                  "(%zu)", w.size, t + 1, len[t], len[0]);
            CHECK(tex[0] && tex[t] && memcmp(tex[0], tex[t], (size_t)side * side * 3) == 0,
                  "size %u: the texture of %d threads is not one thread's", w.size, t + 1);
        }
        obj_read o;
        snprintf(path, sizeof path, "%s/threads1.obj", wg_tmpdir());
        CHECK(obj_parse(path, &o) == 0 && o.bad == 0 && o.objects >= 1 &&
                  o.first_f[o.objects > 1] == 2 * (size_t)(f.n - 1) * (f.n - 1),
              "size %u: %zu lines did not parse, %d objects", w.size, o.bad, o.objects);
        obj_check_precision(&o, &f);
        for (int t = 0; t < 3; t++) {
            free(text[t]);
            free(tex[t]);
        }
        obj_free(&o);
        wg_fields_free(&f);
    }
}

WG_TEST(obj_texture_is_the_albedo_right_way_up)
{
    /* Texel (x, y) of the PNG is the albedo of vertex (x, y): row 0 north
     * (Z = -3) at the top, as in the height maps. */
    char path[300], tex[300];
    snprintf(path, sizeof path, "%s/t.obj", wg_tmpdir());
    snprintf(tex, sizeof tex, "%s/t_albedo.png", wg_tmpdir());
    wg_cli c = obj_run(path);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    wg_fields f;
    CHECK(wg_make_world("scalar", &obj_world, 0, &f) == 0);
    uint8_t *want = malloc(wg_cells(OBJ_N) * 3);
    wg_texture_make(&f, obj_world.sea, OBJ_N, want);

    uint32_t w = 0, h = 0;
    char text[1024] = "";
    uint8_t *got = wg_read_png(tex, 8, 3, &w, &h, text, sizeof text);
    CHECK(got && w == OBJ_N && h == OBJ_N, "the texture does not read back as "
          "%ux%u RGB", OBJ_N, OBJ_N);
    /* Its worldgen text is the options alone, as every PNG's (the version
     * is the Software text): it had been the OBJ's header, both lines. */
    CHECK(strstr(text, "Software=worldgen ") && strstr(text, "\nworldgen=--size ") &&
              !strstr(text, "worldgen=worldgen"),
          "the texture's text: %s", text);
    if (got && w == OBJ_N && h == OBJ_N)
        CHECK(memcmp(got, want, wg_cells(OBJ_N) * 3) == 0,
              "the texture is not the albedo, texel for vertex");
    /* And it is a picture of materials: the highest vertex is lighter
     * than the lowest (snow or rock over the seabed). */
    size_t lo = 0, hi = 0;
    for (size_t i = 1; i < wg_cells(OBJ_N); i++) {
        lo = f.height[i] < f.height[lo] ? i : lo;
        hi = f.height[i] > f.height[hi] ? i : hi;
    }
    CHECK(want[hi * 3 + 2] > want[lo * 3 + 2], "snow is not lighter");
    free(got);
    free(want);
    wg_fields_free(&f);
}

WG_TEST(obj_water_is_its_own_object_over_the_water)
{
    /* The water object: a face pair over every cell with a corner under
     * water and no other, counter-clockwise seen from +Y as the terrain's;
     * each vertex at the water's level where it is under water, and at
     * most at its ground where it is dry (the surface runs on under the
     * bank), all with the one level normal and the terrain's texture
     * coordinate at the same grid point. */
    char path[300];
    snprintf(path, sizeof path, "%s/water.obj", wg_tmpdir());
    wg_cli c = obj_run(path);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    wg_fields f;
    CHECK(wg_make_world("scalar", &obj_world, 0, &f) == 0);
    obj_read o;
    CHECK(obj_parse(path, &o) == 0 && o.objects == 2 && o.bad == 0);
    size_t n = OBJ_N, cells = wg_cells(OBJ_N), wet = obj_wet_cells(&f);
    CHECK(wet > 0 && o.nf - o.first_f[1] == 2 * wet, "%zu water faces for "
          "%zu wet cells", o.nf - o.first_f[1], wet);
    CHECK(o.nvn == cells + 1 && o.vn[cells][0] == 0.0f &&
          o.vn[cells][1] == 1.0f && o.vn[cells][2] == 0.0f, "the water's normal");
    double s = 6.0 / (OBJ_N - 1);
    size_t off = 0, wrong = 0, high = 0, level = 0, seen = 0;
    for (size_t i = o.first_f[1]; i < o.nf; i++) {
        long(*q)[3] = o.f[i];
        float *p[3];
        for (int k = 0; k < 3; k++) {
            long v = q[k][0] - 1, t = q[k][1] - 1;
            if (v < (long)cells || v >= (long)o.nv || t < 0 || t >= (long)cells ||
                q[k][2] != (long)cells + 1) {
                off++;
                p[k] = NULL;
                continue;
            }
            p[k] = o.v[v];
            /* Where it stands: the grid point of its texture coordinate. */
            size_t gx = (size_t)t % n, gy = (size_t)t / n;
            off += fabs(p[k][0] - (-3.0 + gx * s)) > 1e-6 ||
                   fabs(p[k][2] - (-3.0 + gy * s)) > 1e-6;
            float ground = f.height[t];
            float shown = wg_water_shown(&f, obj_world.sea, (uint32_t)gx,
                                         (uint32_t)gy);
            if (shown > WG_WATER_MIN) {
                level += fabsf(p[k][1] - (ground + shown)) > 2e-6f;
                seen++;
            } else {
                high += p[k][1] > ground + 1e-6f;
            }
        }
        if (!p[0] || !p[1] || !p[2])
            continue;
        float u[3] = {p[1][0] - p[0][0], p[1][1] - p[0][1], p[1][2] - p[0][2]};
        float w[3] = {p[2][0] - p[0][0], p[2][1] - p[0][1], p[2][2] - p[0][2]};
        wrong += !(u[2] * w[0] - u[0] * w[2] > 0.0f);
    }
    CHECK(off == 0, "%zu water vertices out of place or badly indexed", off);
    CHECK(wrong == 0, "%zu water faces not counter-clockwise from +Y", wrong);
    CHECK(seen > 0 && level == 0, "%zu of %zu wet vertices not at height + "
          "water", level, seen);
    CHECK(high == 0, "%zu dry vertices above their ground", high);
    obj_free(&o);
    wg_fields_free(&f);

    /* No water, no water object: the OBJ is the terrain alone. */
    const char *argv[] = {"--size", "33", "--hydraulic", "0", "--sea-level",
                          "0", "--no-image", "--obj", path, NULL};
    c = wg_cli_run(argv);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    CHECK(obj_parse(path, &o) == 0 && o.objects == 1 && o.nvn == cells &&
          o.nf == 2 * (n - 1) * (n - 1), "%d objects, %zu faces", o.objects,
          o.nf);
    obj_free(&o);
}

/* The water object's level at every vertex inside the border is the
 * picture's (wg_water_levels), so Blender shows the shore the picture
 * draws: dry vertices beside a river under their ground by the water beside
 * them, except where they join a river a vertex wide across a cell's split. */
WG_TEST(obj_water_level_is_the_pictures_inside_the_border)
{
    wg_fields f;
    CHECK(wg_make_world("scalar", &obj_world, 0, &f) == 0);
    const uint32_t n = OBJ_N;
    size_t cells = wg_cells(n);
    float *shown = malloc(cells * sizeof *shown);
    float *top = malloc(cells * sizeof *top);
    float *level = malloc(cells * sizeof *level);
    CHECK(shown && top && level);
    if (shown && top && level) {
        for (uint32_t y = 0; y < n; y++)
            for (uint32_t x = 0; x < n; x++)
                shown[(size_t)y * n + x] =
                    wg_water_shown(&f, obj_world.sea, x, y);
        wg_water_tops(&f, obj_world.sea, 0, n, top);
        wg_water_levels(f.height, top, n, 0, n, level);
        size_t differ = 0, under = 0;
        for (uint32_t y = 1; y + 1 < n; y++)
            for (uint32_t x = 1; x + 1 < n; x++) {
                size_t k = (size_t)y * n + x;
                float l = wg_obj_level(f.height + (size_t)y * n,
                                       shown + (size_t)y * n, n, x, 1, 1);
                differ += l != level[k];
                under += l < f.height[k] && shown[k] <= WG_WATER_MIN;
            }
        CHECK(differ == 0, "%zu of %zu vertices differ", differ,
              (size_t)(n - 2) * (n - 2));
        CHECK(under > 0, "no dry vertex under the water's edge");
    }
    free(shown);
    free(top);
    free(level);
    wg_fields_free(&f);
}

WG_TEST(obj_texture_is_made_of_each_vertex_alone)
{
    /* A tile must be coloured as the whole world is there: a texel depends
     * on its vertex's values and world position alone (and on the water of
     * its eight neighbours, wg_water_shown), never on the rest of the
     * field.  Raise the east half of a world: the west half's texels do not
     * change.  Give a world of 65 the 33 world's values at the vertices
     * they share: those texels are the same. */
    wg_fields f, g;
    CHECK(wg_make_world("scalar", &obj_world, 0, &f) == 0);
    size_t cells = wg_cells(OBJ_N);
    uint8_t *a = malloc(cells * 3), *b = malloc(cells * 3);
    wg_texture_make(&f, 0.25f, OBJ_N, a);
    for (size_t y = 0; y < OBJ_N; y++)
        for (size_t x = OBJ_N / 2; x < OBJ_N; x++) {
            f.height[y * OBJ_N + x] += 0.3f;
            f.water[y * OBJ_N + x] = 0.0f;
        }
    wg_texture_make(&f, 0.25f, OBJ_N, b);
    size_t changed = 0, east = 0;
    for (size_t y = 0; y < OBJ_N; y++)
        for (size_t x = 0; x < OBJ_N; x++) {
            int differs = memcmp(a + (y * OBJ_N + x) * 3,
                                 b + (y * OBJ_N + x) * 3, 3) != 0;
            if (x + 1 < OBJ_N / 2) /* its neighbours are all west too */
                changed += differs;
            else
                east += differs;
        }
    CHECK(changed == 0, "%zu west texels changed with the east", changed);
    CHECK(east > OBJ_N, "raising the east changed only %zu texels", east);

    CHECK(wg_fields_alloc(&g, 65) == 0);
    for (size_t k = 0; k < wg_cells(65); k++) {
        g.height[k] = 0.9f, g.water[k] = 0.05f, g.sediment[k] = 0.1f;
        g.nx[k] = g.nz[k] = 0.0f, g.ny[k] = 1.0f;
    }
    for (size_t y = 0; y < OBJ_N; y++)
        for (size_t x = 0; x < OBJ_N; x++) {
            size_t i = y * OBJ_N + x, k = 2 * y * 65 + 2 * x;
            g.height[k] = f.height[i], g.water[k] = f.water[i];
            g.sediment[k] = f.sediment[i];
            g.nx[k] = f.nx[i], g.ny[k] = f.ny[i], g.nz[k] = f.nz[i];
        }
    /* wg_water_shown reads neighbours: compare with it out of the way. */
    for (size_t k = 0; k < wg_cells(65); k++)
        g.water[k] = 0.0f;
    for (size_t k = 0; k < cells; k++)
        f.water[k] = 0.0f;
    uint8_t *big = malloc(wg_cells(65) * 3);
    wg_texture_make(&f, 0.25f, OBJ_N, a);
    wg_texture_make(&g, 0.25f, 65, big);
    size_t differ = 0;
    for (size_t y = 0; y < OBJ_N; y++)
        for (size_t x = 0; x < OBJ_N; x++)
            differ += memcmp(a + (y * OBJ_N + x) * 3,
                             big + (2 * y * 65 + 2 * x) * 3, 3) != 0;
    CHECK(differ == 0, "%zu shared vertices coloured differently at 65", differ);
    free(a);
    free(b);
    free(big);
    wg_fields_free(&f);
    wg_fields_free(&g);
}

WG_TEST(obj_failures_leave_nothing_behind)
{
    wg_cli c = obj_run("no-such-folder/w.obj");
    CHECK(c.status == 1 && strstr(c.err, "--obj: cannot write 'no-such-folder/w"),
          "%d %s", c.status, c.err);
    wg_cli_free(&c);

    /* The texture's name is taken by a folder: the OBJ and MTL must not
     * appear (nor any temporary), and the folder is untouched. */
    char cmd[700];
    snprintf(cmd, sizeof cmd,
             "cd %s && mkdir -p fail/x_albedo.png && cd fail && %s/worldgen "
             "--size 17 -q --no-image --obj x.obj; echo \"status $?\"; ls -A; "
             "ls -A x_albedo.png",
             wg_tmpdir(), wg_srcdir());
    c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "status 1\nx_albedo.png\n") == 0, "%s", c.out);
    CHECK(strstr(c.err, "x_albedo.png': it is a directory"), "%s", c.err);
    wg_cli_free(&c);

    /* A full disk part way: nothing of the three is left. */
    snprintf(cmd, sizeof cmd,
             "cd %s && mkdir -p full && cd full && ln -sf /dev/full x.obj && "
             "%s/worldgen --size 17 -q --no-image --obj x.obj; echo \"status $?\"; "
             "ls -A",
             wg_tmpdir(), wg_srcdir());
    c = wg_cli_sh(cmd);
    CHECK(strcmp(c.out, "status 1\nx.obj\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

WG_TEST(obj_names_beside_it)
{
    char mtl[64], tex[64];
    CHECK(wg_obj_siblings("dir/world.obj", mtl, tex, sizeof mtl) == 0);
    CHECK(strcmp(mtl, "dir/world.mtl") == 0 && strcmp(tex, "dir/world_albedo.png") == 0);
    CHECK(wg_obj_siblings("x.OBJ", mtl, tex, sizeof mtl) == 0);
    CHECK(strcmp(mtl, "x.mtl") == 0 && strcmp(tex, "x_albedo.png") == 0);
    CHECK(wg_obj_siblings("mesh", mtl, tex, sizeof mtl) == 0);
    CHECK(strcmp(mtl, "mesh.mtl") == 0 && strcmp(tex, "mesh_albedo.png") == 0);
    CHECK(wg_obj_siblings("a-very-long-name.obj", mtl, tex, 8) == -1);
    CHECK(wg_texture_side(33) == 33 && wg_texture_side(65536) == WG_TEXTURE_MAX);
}

/* The seed each of the three files of the set 'dir/w' was made with (the
 * OBJ's and MTL's header comments, the texture's tEXt chunk), one line
 * each, and the temporaries left in the folder: a shell fragment. */
#define OBJ_SET_SEEDS(dir)                                                            \
    "for f in " dir "/w.obj " dir "/w.mtl " dir "/w_albedo.png; do "                \
    "  grep -a -m1 -o -- '--seed [0-9]*' $f | head -n 1 || echo none; done | uniq | " \
    "wc -l; ls -A " dir " | grep -c tmp-; "

/* Many runs writing one --obj name at once: the set on disk always comes
 * from one run (the renames are done under the folder's lock). */
WG_TEST(obj_concurrent_runs_leave_one_runs_set)
{
    wg_cli c = wg_cli_sh(
        "mkdir -p conc && for r in 1 2 3 4 5; do "
        "  for s in 1 2 3 4 5 6; do ./worldgen --size 17 --mesh scalar --seed $r$s -q "
        "    --no-image --obj conc/w.obj & done; wait; " OBJ_SET_SEEDS("conc") "done | "
        "sort | uniq -c | sed 's/^ *//'");
    /* 5 rounds: each time one seed for the three, no temporary. */
    CHECK(strcmp(c.out, "5 0\n5 1\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
    /* While another holds the folder's lock (flock(1) here), the three
     * wait as temporaries without names (nothing in the folder yet, not
     * even a temporary); they go into place once it is let go. */
    c = wg_cli_sh("mkdir -p held && { flock held sleep 1 & } && sleep 0.2 && "
                  "./worldgen --size 17 --mesh scalar -q --no-image --obj held/w.obj & "
                  "sleep 0.5; ls -A held | grep -c tmp-; ls -A held | grep -vc tmp-; "
                  "wait; ls -A held | LC_ALL=C sort | tr '\\n' ' '");
    /* Named temporaries where the file system makes no unnamed ones. */
    int fd = open(wg_tmpdir(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    const char *want = fd >= 0 ? "0\n0\nw.mtl w.obj w_albedo.png "
                               : "3\n0\nw.mtl w.obj w_albedo.png ";
    if (fd >= 0)
        close(fd);
    CHECK(strcmp(c.out, want) == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* Runs killed at every moment of their short life (0 to 16 ms; a run
 * takes about 15): the set on disk is the last whole one, never a mix,
 * and no temporary is left. */
WG_TEST(obj_interrupted_runs_leave_one_runs_set)
{
    wg_cli c = wg_cli_sh(
        "mkdir -p intr && ./worldgen --size 17 --mesh scalar --seed 1 -q --no-image "
        "--obj intr/w.obj && k=0; while [ $k -lt 32 ]; do k=$((k+1)); "
        "  ./worldgen --size 17 --mesh scalar --seed $((k+100)) -q --no-image --obj intr/w.obj & "
        "  pid=$!; sleep $(printf 0.%03d $((k / 2))); kill -TERM $pid 2>/dev/null; wait $pid; "
        "  " OBJ_SET_SEEDS("intr") "done | sort | uniq -c | sed 's/^ *//'");
    CHECK(strcmp(c.out, "32 0\n32 1\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A failure names the file that failed, with its real cause, whichever
 * thread wrote it. */
WG_TEST(obj_a_failure_names_the_file_that_failed)
{
    static const struct {
        const char *link, *err_has;
    } cases[] = {
        {"x_albedo.png", "--obj: cannot write 'x_albedo.png': No space left on device"},
        {"x.mtl", "--obj: cannot write 'x.mtl': No space left on device"},
        {"x.obj", "--obj: cannot write 'x.obj': No space left on device"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[600];
        snprintf(cmd, sizeof cmd,
                 "rm -rf one-full && mkdir one-full && cd one-full && ln -s /dev/full %s && "
                 "../worldgen --size 17 --mesh scalar -q --no-image --obj x.obj; "
                 "echo \"status $?\"; ls -A",
                 cases[i].link);
        wg_cli c = wg_cli_sh(cmd);
        char want[100];
        snprintf(want, sizeof want, "status 1\n%s\n", cases[i].link);
        CHECK(strcmp(c.out, want) == 0 && strstr(c.err, cases[i].err_has), "%s: %s %s",
              cases[i].link, c.out, c.err);
        wg_cli_free(&c);
    }
    /* A real full disk (a small tmpfs, where we may mount one): the
     * message names one of the three and its cause, and nothing is left. */
    wg_cli c = wg_cli_sh(
        "mkdir -p small && mount -t tmpfs -o size=256k tmpfs small 2>/dev/null || exit 77; "
        "./worldgen --size 129 --mesh scalar -q --no-image --obj small/x.obj; st=$?; "
        "ls -A small; umount small; exit $st");
    if (c.status == 77) {
        wg_skip("cannot mount a tmpfs here");
    } else {
        CHECK(c.status == 1 && c.out_len == 0, "%d %s", c.status, c.out);
        CHECK(strstr(c.err, "--obj: cannot write 'small/x") &&
                  strstr(c.err, "': No space left on device"),
              "%s", c.err);
    }
    wg_cli_free(&c);
}

/* Spaces in the name are fine: the mtllib line names the real .mtl and
 * its map_Kd line the real texture (importers take the rest of the line). */
WG_TEST(obj_name_with_spaces_round_trips)
{
    char path[300], mtl[300];
    snprintf(path, sizeof path, "%s/spaced dir/my world.obj", wg_tmpdir());
    snprintf(mtl, sizeof mtl, "%s/spaced dir/my world.mtl", wg_tmpdir());
    wg_cli c = wg_cli_sh("mkdir -p 'spaced dir'");
    wg_cli_free(&c);
    c = obj_run(path);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    char *o = wg_read_file(path, NULL), *m = wg_read_file(mtl, NULL);
    CHECK(o && strstr(o, "\nmtllib my world.mtl\n"), "no mtllib line");
    CHECK(m && strstr(m, "\nmap_Kd my world_albedo.png\n"), "no map_Kd line");
    free(o);
    free(m);
    uint32_t w, h;
    char tex[300];
    snprintf(tex, sizeof tex, "%s/spaced dir/my world_albedo.png", wg_tmpdir());
    CHECK(obj_png_size(tex, &w, &h) == 0 && w == OBJ_N && h == OBJ_N);
}

/* The name on a line of mtllib or map_Kd as the readers take it: the rest
 * of the line, its leading spaces trimmed, and options (a word that
 * starts with '-') skipped as Blender's MTL reader skips them; NULL when
 * the line is not there. */
static char *obj_named(const char *text, const char *key)
{
    char want[32];
    snprintf(want, sizeof want, "\n%s ", key);
    const char *p = text ? strstr(text, want) : NULL;
    if (!p)
        return NULL;
    p += strlen(want);
    while (*p == ' ')
        p++;
    if (*p == '-') /* an option, and its value: not the file */
        return strdup("(an option)");
    size_t len = strcspn(p, "\n");
    char *name = malloc(len + 1);
    memcpy(name, p, len);
    name[len] = '\0';
    return name;
}

/* A name that starts with a space (trimmed by the readers) or with '-'
 * (taken for map_Kd's options: '-bm 2 x_albedo.png' is bump 2 on another
 * file) is written as './' and the name: the readers find the files. */
WG_TEST(obj_name_with_leading_space_or_dash_is_found)
{
    static const char *const names[] = {" lead", "-bm 2 x", "-clamp on", "-o 1"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[300], mtl[300], want[300];
        snprintf(path, sizeof path, "%s/%s.obj", wg_tmpdir(), names[i]);
        snprintf(mtl, sizeof mtl, "%s/%s.mtl", wg_tmpdir(), names[i]);
        wg_cli c = obj_run(path);
        CHECK(c.status == 0, "%s", c.err);
        wg_cli_free(&c);
        char *o = wg_read_file(path, NULL), *m = wg_read_file(mtl, NULL);
        char *lib = obj_named(o, "mtllib"), *map = obj_named(m, "map_Kd");
        snprintf(want, sizeof want, "./%s.mtl", names[i]);
        CHECK(lib && strcmp(lib, want) == 0, "'%s': mtllib '%s'", names[i],
              lib ? lib : "(none)");
        snprintf(want, sizeof want, "./%s_albedo.png", names[i]);
        CHECK(map && strcmp(map, want) == 0, "'%s': map_Kd '%s'", names[i],
              map ? map : "(none)");
        free(lib);
        free(map);
        free(o);
        free(m);
    }
    /* Other names as they are. */
    char path[300];
    snprintf(path, sizeof path, "%s/in-side.obj", wg_tmpdir());
    wg_cli c = obj_run(path);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    char *o = wg_read_file(path, NULL);
    CHECK(o && strstr(o, "\nmtllib in-side.mtl\n"), "no plain mtllib line");
    free(o);
}

/* A control character in the file name would break the mtllib line: a
 * usage error that names --obj, shows the name escaped and says why. */
WG_TEST(obj_control_characters_in_the_name_are_refused)
{
    static const struct {
        const char *name, *shown;
    } cases[] = {
        {"a\nb.obj", "'a\\nb.obj'"},
        {"a\rb.obj", "'a\\rb.obj'"},
        {"tab\there.obj", "'tab\\there.obj'"},
        {"esc\x1b.obj", "'esc\\x1b.obj'"},
        {"del\x7f.obj", "'del\\x7f.obj'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wg_cli c = obj_run(cases[i].name);
        CHECK(c.status == 2 && strstr(c.err, "--obj: ") &&
                  strstr(c.err, cases[i].shown) && strstr(c.err, "mtllib"),
              "%s: %d %s", cases[i].shown, c.status, c.err);
        wg_cli_free(&c);
    }
    /* In a folder's name it never reaches the file: fine. */
    wg_cli c = wg_cli_sh("mkdir -p 'ctl\ndir' && ./worldgen --size 17 --mesh scalar -q "
                         "--no-image --obj 'ctl\ndir/w.obj' && grep -c '^mtllib w.mtl$' "
                         "'ctl\ndir/w.obj'");
    CHECK(c.status == 0 && strcmp(c.out, "1\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* A backslash in the file name is a folder's end to the readers (Blender
 * looked for 'a\\b.mtl' as 'b.mtl' in a folder 'a\\': no material, no
 * texture), and OBJ has no escape for it: a usage error that writes
 * nothing.  In a folder's name it never reaches the file: fine. */
WG_TEST(obj_backslash_in_the_name_is_refused)
{
    wg_cli c = wg_cli_sh("mkdir -p bs && cd bs && ../worldgen --size 17 --mesh scalar "
                         "-q --no-image --obj 'a\\b.obj'; echo \"rc=$?\"; ls");
    CHECK(strstr(c.out, "rc=2\n") && !strstr(c.out, ".mtl") &&
              !strstr(c.out, ".obj") && strstr(c.err, "--obj: 'a\\b.obj'") &&
              strstr(c.err, "backslash"),
          "%s %s", c.out, c.err);
    wg_cli_free(&c);
    c = wg_cli_sh("mkdir -p 'bs\\dir' && ./worldgen --size 17 --mesh scalar -q "
                  "--no-image --obj 'bs\\dir/w.obj' && grep -c '^mtllib w.mtl$' "
                  "'bs\\dir/w.obj'");
    CHECK(c.status == 0 && strcmp(c.out, "1\n") == 0, "%s %s", c.out, c.err);
    wg_cli_free(&c);
}

/* Blender (where it is on PATH) imports the relative indices as the
 * mesh: both objects with their materials, N*N terrain vertices and two
 * triangles a cell, every corner with its texture coordinate, and the
 * water's faces as the file has them. */
WG_TEST(obj_blender_imports_the_mesh)
{
    if (!wg_have_command("blender")) {
        wg_skip("needs blender on PATH");
        return;
    }
    char path[300], cmd[2048];
    snprintf(path, sizeof path, "%s/b.obj", wg_tmpdir());
    wg_cli c = obj_run(path);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    obj_read o;
    CHECK(obj_parse(path, &o) == 0 && o.objects == 2);
    /* The importer of Blender 3.2 on, else the add-on before it. */
    snprintf(cmd, sizeof cmd,
             "blender -b --factory-startup --python-expr \""
             "import bpy\n"
             "bpy.ops.wm.read_factory_settings(use_empty=True)\n"
             "if hasattr(bpy.ops.wm, 'obj_import'):\n"
             "    bpy.ops.wm.obj_import(filepath='%s')\n"
             "else:\n"
             "    bpy.ops.import_scene.obj(filepath='%s')\n"
             "for o in sorted(bpy.data.objects, key=lambda o: o.name):\n"
             "    m = o.data\n"
             "    print('OBJECT', o.name, len(m.vertices), len(m.polygons),\n"
             "          sum(len(p.vertices) == 3 for p in m.polygons),\n"
             "          len(m.uv_layers[0].data) if m.uv_layers else 0,\n"
             "          m.materials[0].name if m.materials else '-')\n"
             "\" 2>&1", path, path);
    c = wg_cli_sh(cmd);
    size_t n = OBJ_N, tf = 2 * (n - 1) * (n - 1), wf = o.nf - tf;
    char want[200];
    snprintf(want, sizeof want,
             "OBJECT terrain %zu %zu %zu %zu terrain\nOBJECT water %zu %zu %zu %zu water\n",
             n * n, tf, tf, 3 * tf, o.nv - n * n, wf, wf, 3 * wf);
    const char *line = strstr(c.out, "OBJECT ");
    CHECK(c.status == 0 && line && strncmp(line, want, strlen(want)) == 0,
          "want:\n%sgot:\n%s", want, line ? line : c.out);
    wg_cli_free(&c);
    obj_free(&o);
}

/* assimp (the Open Asset Import Library, which many engines and tools
 * load OBJ with) reads the relative indices as the mesh too: its command
 * line tool's summary names both objects with N*N-cell counts of
 * triangles, the file's bounds, and the texture on the terrain's
 * material. */
WG_TEST(obj_assimp_imports_the_mesh)
{
    if (!wg_have_command("assimp")) {
        wg_skip("needs assimp on PATH (make deps installs assimp-utils)");
        return;
    }
    char path[300], cmd[600];
    snprintf(path, sizeof path, "%s/a.obj", wg_tmpdir());
    wg_cli c = obj_run(path);
    CHECK(c.status == 0, "%s", c.err);
    wg_cli_free(&c);
    obj_read o;
    CHECK(obj_parse(path, &o) == 0 && o.objects == 2);
    snprintf(cmd, sizeof cmd, "assimp info '%s' 2>&1 | grep -v '%%$'", path);
    c = wg_cli_sh(cmd);
    size_t n = OBJ_N, tf = 2 * (n - 1) * (n - 1), wf = o.nf - tf;
    char terrain[100], water[100], faces[60];
    snprintf(terrain, sizeof terrain, "0 (terrain): [");
    snprintf(faces, sizeof faces, "/ 0 / %zu | triangle]", tf);
    snprintf(water, sizeof water, "/ 0 / %zu | triangle]", wf);
    const char *t = strstr(c.out, terrain), *w = strstr(c.out, "1 (water): [");
    CHECK(c.status == 0 && strstr(c.out, "Importing file ...                   OK") &&
              t && strstr(t, faces) && w && strstr(w, water) &&
              strstr(c.out, "Minimum point      (-3.000000 ") &&
              strstr(c.out, "Maximum point      (3.000000 ") &&
              strstr(c.out, "_albedo.png"),
          "want terrain '%s', water '%s':\n%s", faces, water, c.out);
    wg_cli_free(&c);
    obj_free(&o);
}
