/* test_obj.c: the OBJ export, read back: the counts, SPEC coordinates,
 * normals and texture coordinates of every vertex, faces counter-clockwise
 * seen from above, the water as its own object over the cells under water,
 * the .mtl with both materials and the texture the right size and the right
 * way round, a texture made from each vertex's own values, and nothing left
 * behind when a write fails. */
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

/* The parsed file: positions, texture coordinates, normals, faces, and
 * where each object begins. */
typedef struct obj_read {
    size_t nv, nvt, nvn, nf, bad;
    float (*v)[3], (*vt)[2], (*vn)[3];
    long (*f)[3][3];
    char mtllib[256], usemtl[64];
    char header[1024];
    int objects;           /* 'o' lines */
    char object[2][64];    /* their names */
    char material[2][64];  /* each one's usemtl */
    size_t first_v[2], first_f[2]; /* its first vertex and face, 0-based */
} obj_read;

static int obj_parse(const char *path, obj_read *o)
{
    memset(o, 0, sizeof *o);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    size_t cap = (size_t)OBJ_N * OBJ_N * 4 + 16;
    o->v = calloc(cap, sizeof *o->v);
    o->vt = calloc(cap, sizeof *o->vt);
    o->vn = calloc(cap, sizeof *o->vn);
    o->f = calloc(cap, sizeof *o->f);
    char line[512];
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#') {
            strncat(o->header, line, sizeof o->header - strlen(o->header) - 1);
        } else if (strncmp(line, "v ", 2) == 0 && o->nv < cap) {
            float *p = o->v[o->nv++];
            o->bad += sscanf(line + 2, "%f %f %f", &p[0], &p[1], &p[2]) != 3;
        } else if (strncmp(line, "vt ", 3) == 0 && o->nvt < cap) {
            float *p = o->vt[o->nvt++];
            o->bad += sscanf(line + 3, "%f %f", &p[0], &p[1]) != 2;
        } else if (strncmp(line, "vn ", 3) == 0 && o->nvn < cap) {
            float *p = o->vn[o->nvn++];
            o->bad += sscanf(line + 3, "%f %f %f", &p[0], &p[1], &p[2]) != 3;
        } else if (strncmp(line, "f ", 2) == 0 && o->nf < cap) {
            long(*q)[3] = o->f[o->nf++];
            o->bad += sscanf(line + 2, "%ld/%ld/%ld %ld/%ld/%ld %ld/%ld/%ld",
                             &q[0][0], &q[0][1], &q[0][2], &q[1][0], &q[1][1],
                             &q[1][2], &q[2][0], &q[2][1], &q[2][2]) != 9;
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
        }
    }
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
    CHECK(obj_parse(path, &o) == 0 && o.first_v[1] == wg_cells(OBJ_N));
    double s = 6.0 / (OBJ_N - 1), dp = 0, dh = 0, dn = 0, duv = 0;
    for (uint32_t y = 0; y < OBJ_N && o.first_v[1] == wg_cells(OBJ_N); y++)
        for (uint32_t x = 0; x < OBJ_N; x++) {
            size_t i = (size_t)y * OBJ_N + x;
            /* X = -3 + x*S, Y = h (Y up, metres), Z = -3 + y*S. */
            dp = fmax(dp, fabs(o.v[i][0] - (-3.0 + x * s)));
            dp = fmax(dp, fabs(o.v[i][2] - (-3.0 + y * s)));
            dh = fmax(dh, fabs(o.v[i][1] - f.height[i]));
            dn = fmax(dn, fabs(o.vn[i][0] - f.nx[i]));
            dn = fmax(dn, fabs(o.vn[i][1] - f.ny[i]));
            dn = fmax(dn, fabs(o.vn[i][2] - f.nz[i]));
            /* Texel centres: vertex (x, y) is texel (x, y) of the image,
             * whose row 0 is at the top, and OBJ's v = 0 at the bottom. */
            duv = fmax(duv, fabs(o.vt[i][0] - (x + 0.5) / OBJ_N));
            duv = fmax(duv, fabs(o.vt[i][1] - (1.0 - (y + 0.5) / OBJ_N)));
        }
    CHECK(dp < 1e-6 && dh < 1e-6 && dn < 1e-5 && duv < 1e-6,
          "max error: position %g height %g normal %g uv %g", dp, dh, dn, duv);
    obj_free(&o);
    wg_fields_free(&f);
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
    uint8_t *got = wg_read_png(tex, 8, 3, &w, &h, NULL, 0);
    CHECK(got && w == OBJ_N && h == OBJ_N, "the texture does not read back as "
          "%ux%u RGB", OBJ_N, OBJ_N);
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
    wg_cli c = obj_run("/nonexistent/w.obj");
    CHECK(c.status == 1 && strstr(c.err, "--obj: cannot write '/nonexistent/w"),
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
