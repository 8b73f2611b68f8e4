/* test_obj.c: the OBJ export, read back: the counts, SPEC coordinates,
 * normals and texture coordinates of every vertex, faces counter-clockwise
 * seen from above, the .mtl and its texture the right size and the right
 * way round, and nothing left behind when a write fails. */
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
                                   .seed = 5};

/* The parsed file: positions, texture coordinates, normals, faces. */
typedef struct obj_read {
    size_t nv, nvt, nvn, nf, bad;
    float (*v)[3], (*vt)[2], (*vn)[3];
    long (*f)[3][3];
    char mtllib[256], usemtl[64];
    char header[1024];
} obj_read;

static int obj_parse(const char *path, obj_read *o)
{
    memset(o, 0, sizeof *o);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    size_t cap = (size_t)OBJ_N * OBJ_N * 2 + 16;
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
        } else if (sscanf(line, "mtllib %255s", o->mtllib) == 1 ||
                   sscanf(line, "usemtl %63s", o->usemtl) == 1) {
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
                          "--seed", "5", "--no-image", "--obj", path, NULL};
    return wg_cli_run(argv);
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
    CHECK(o.nv == n * n && o.nvt == n * n && o.nvn == n * n,
          "v %zu vt %zu vn %zu", o.nv, o.nvt, o.nvn);
    CHECK(o.nf == 2 * (n - 1) * (n - 1), "f %zu", o.nf);
    CHECK(strcmp(o.mtllib, "w.mtl") == 0 && strcmp(o.usemtl, "terrain") == 0,
          "mtllib '%s' usemtl '%s'", o.mtllib, o.usemtl);
    CHECK(strstr(o.header, "# worldgen ") && strstr(o.header, "--size 33") &&
          strstr(o.header, "--seed 5") && strstr(o.header, "--erosion 3"),
          "%s", o.header);

    /* Every face: one index for v, vt and vn; counter-clockwise seen from
     * +Y, so its normal points up and agrees with the vertex normals. */
    size_t wrong = 0, mixed = 0;
    for (size_t i = 0; i < o.nf; i++) {
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

    /* The material: diffuse, its map the texture beside it. */
    char *m = wg_read_file(mtl, NULL);
    CHECK(m && strstr(m, "newmtl terrain\n") && strstr(m, "map_Kd w_albedo.png\n") &&
          strstr(m, "--size 33"), "%s", m ? m : "(no .mtl)");
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
    CHECK(obj_parse(path, &o) == 0 && o.nv == wg_cells(OBJ_N));
    double s = 6.0 / (OBJ_N - 1), dp = 0, dh = 0, dn = 0, duv = 0;
    for (uint32_t y = 0; y < OBJ_N && o.nv == wg_cells(OBJ_N); y++)
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
    wg_height_stats st;
    CHECK(wg_height_stats_measure(f.height, wg_cells(OBJ_N), &st) == 0);
    uint8_t *want = malloc(wg_cells(OBJ_N) * 3);
    wg_texture_make(&f, &st, OBJ_N, want);

    uint32_t w = 0, h = 0;
    uint8_t *got = wg_read_png(tex, 8, 3, &w, &h, NULL, 0);
    CHECK(got && w == OBJ_N && h == OBJ_N, "the texture does not read back as "
          "%ux%u RGB", OBJ_N, OBJ_N);
    if (got && w == OBJ_N && h == OBJ_N)
        CHECK(memcmp(got, want, wg_cells(OBJ_N) * 3) == 0,
              "the texture is not the albedo, texel for vertex");
    /* And it is a picture of materials: the highest vertex is lighter
     * than the lowest (snow or rock over sand or grass). */
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
