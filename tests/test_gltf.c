/* test_gltf.c: the binary glTF export, read back: the GLB's header and
 * chunks, every accessor against the fields (positions, their min and max,
 * unit normals, texture coordinates, indices in range and counter-clockwise
 * seen from above), the water over the cells under water, the same points
 * as the OBJ's, the embedded PNG that decodes to the texture, the
 * provenance in asset.extras, the same bytes through a pipe or after other
 * bytes, nothing left behind by a failed write; the simplified meshes
 * (square, without cracks or folds, every grid point within the error);
 * and, where they are installed, the Khronos validator and Blender. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/backend.h"
#include "render/gltf.h"
#include "render/obj.h"
#include "test.h"

/* --- a small JSON reader -------------------------------------------------- */

typedef struct gj {
    enum { GJ_NULL, GJ_BOOL, GJ_NUM, GJ_STR, GJ_ARR, GJ_OBJ } type;
    double num;
    char *str;        /* GJ_STR, NUL-terminated UTF-8 */
    size_t len;       /* items of an array or object */
    char **keys;      /* GJ_OBJ */
    struct gj *items; /* GJ_ARR, GJ_OBJ */
} gj;

static const char *gj_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

static void gj_free(gj *v)
{
    for (size_t i = 0; i < v->len; i++) {
        gj_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    memset(v, 0, sizeof *v);
}

/* A string at p (after its quote) into *out; returns the end, or NULL. */
static const char *gj_string(const char *p, char **out)
{
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    while (s && *p && *p != '"') {
        if (n + 8 > cap)
            s = realloc(s, cap *= 2);
        if (!s)
            break;
        if ((unsigned char)*p < 0x20) {
            free(s);
            return NULL;
        }
        if (*p != '\\') {
            s[n++] = *p++;
            continue;
        }
        p++;
        const char *esc = strchr("\"\\/bfnrt", *p);
        if (*p && esc) {
            s[n++] = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
            p++;
        } else if (*p == 'u') {
            unsigned c = 0;
            for (int i = 1; i <= 4; i++) {
                char h = p[i];
                unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0')
                           : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                           : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 99;
                if (d == 99) {
                    free(s);
                    return NULL;
                }
                c = c * 16 + d;
            }
            p += 5;
            if (c < 0x80) {
                s[n++] = (char)c;
            } else if (c < 0x800) {
                s[n++] = (char)(0xC0 | c >> 6);
                s[n++] = (char)(0x80 | (c & 0x3F));
            } else {
                s[n++] = (char)(0xE0 | c >> 12);
                s[n++] = (char)(0x80 | (c >> 6 & 0x3F));
                s[n++] = (char)(0x80 | (c & 0x3F));
            }
        } else {
            free(s);
            return NULL;
        }
    }
    if (!s || *p != '"') {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    *out = s;
    return p + 1;
}

/* A value at p into v; returns the end, or NULL. */
static const char *gj_value(const char *p, gj *v, int depth)
{
    memset(v, 0, sizeof *v);
    p = gj_ws(p);
    if (depth > 64)
        return NULL;
    if (*p == '"') {
        v->type = GJ_STR;
        return gj_string(p + 1, &v->str);
    }
    if (*p == '[' || *p == '{') {
        int obj = *p == '{';
        char close = obj ? '}' : ']';
        v->type = obj ? GJ_OBJ : GJ_ARR;
        p = gj_ws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            v->items = realloc(v->items, (v->len + 1) * sizeof *v->items);
            if (obj)
                v->keys = realloc(v->keys, (v->len + 1) * sizeof *v->keys);
            if (!v->items || (obj && !v->keys))
                return NULL;
            if (obj) {
                p = gj_ws(p);
                v->keys[v->len] = NULL;
                if (*p != '"' || !(p = gj_string(p + 1, &v->keys[v->len]))) {
                    memset(&v->items[v->len++], 0, sizeof *v->items);
                    return NULL;
                }
                p = gj_ws(p);
                if (*p++ != ':') {
                    memset(&v->items[v->len++], 0, sizeof *v->items);
                    return NULL;
                }
            }
            p = gj_value(p, &v->items[v->len++], depth + 1);
            if (!p)
                return NULL;
            p = gj_ws(p);
            if (*p == close)
                return p + 1;
            if (*p++ != ',')
                return NULL;
        }
    }
    if (strncmp(p, "true", 4) == 0 || strncmp(p, "false", 5) == 0) {
        v->type = GJ_BOOL;
        v->num = *p == 't';
        return p + (*p == 't' ? 4 : 5);
    }
    if (strncmp(p, "null", 4) == 0)
        return p + 4;
    char *end;
    v->type = GJ_NUM;
    v->num = strtod(p, &end);
    return end == p ? NULL : end;
}

static const gj *gj_get(const gj *v, const char *key)
{
    for (size_t i = 0; v && v->type == GJ_OBJ && i < v->len; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

static const gj *gj_at(const gj *v, size_t i)
{
    return v && v->type == GJ_ARR && i < v->len ? &v->items[i] : NULL;
}

static double gj_num(const gj *v, double otherwise)
{
    return v && v->type == GJ_NUM ? v->num : otherwise;
}

static const char *gj_str(const gj *v)
{
    return v && v->type == GJ_STR ? v->str : "";
}

/* --- the GLB ---------------------------------------------------------------- */

typedef struct glb {
    uint8_t *file;
    size_t len;
    gj json;
    const uint8_t *bin;
    size_t bin_len;
    int ok;
} glb;

static uint32_t glb_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* Read and check the container: the header, a JSON chunk that parses and
 * a BIN chunk, each 4-byte aligned, lengths that add up. */
static int glb_read(const char *path, glb *g)
{
    memset(g, 0, sizeof *g);
    g->file = wg_read_file(path, &g->len);
    CHECK(g->file && g->len >= 28, "%s: no GLB", path);
    if (!g->file || g->len < 28)
        return -1;
    uint8_t *f = g->file;
    CHECK(memcmp(f, "glTF", 4) == 0 && glb_u32(f + 4) == 2 &&
          glb_u32(f + 8) == g->len, "header: magic, version 2, length %u of "
          "%zu", glb_u32(f + 8), g->len);
    uint32_t jl = glb_u32(f + 12);
    CHECK(memcmp(f + 16, "JSON", 4) == 0 && jl % 4 == 0 && 20 + (size_t)jl + 8 <= g->len,
          "JSON chunk: length %u", jl);
    if (20 + (size_t)jl + 8 > g->len)
        return -1;
    uint8_t *b = f + 20 + jl;
    uint32_t bl = glb_u32(b);
    CHECK(memcmp(b + 4, "BIN\0", 4) == 0 && bl % 4 == 0 &&
          20 + (size_t)jl + 8 + bl == g->len, "BIN chunk: length %u", bl);
    if (20 + (size_t)jl + 8 + bl != g->len)
        return -1;
    g->bin = b + 8;
    g->bin_len = bl;
    char *text = strndup((char *)f + 20, jl);
    const char *end = text ? gj_value(text, &g->json, 0) : NULL;
    CHECK(end && *gj_ws(end) == '\0', "the JSON chunk does not parse");
    /* Padding with spaces: the chunk's text is all JSON. */
    free(text);
    if (!end)
        return -1;
    const gj *buf = gj_at(gj_get(&g->json, "buffers"), 0);
    double blen = gj_num(gj_get(buf, "byteLength"), -1);
    CHECK(blen >= 0 && blen <= bl && bl - blen < 4, "buffer 0: %g bytes in a "
          "BIN chunk of %u", blen, bl);
    g->ok = 1;
    return 0;
}

static void glb_free(glb *g)
{
    gj_free(&g->json);
    free(g->file);
}

/* Accessor i's data, checked against its bufferView: tightly packed,
 * 4-byte aligned, inside the buffer. */
static const void *glb_accessor(const glb *g, int i, int ctype,
                                const char *type, size_t *count)
{
    const gj *a = gj_at(gj_get(&g->json, "accessors"), (size_t)i);
    const gj *v = gj_at(gj_get(&g->json, "bufferViews"),
                        (size_t)gj_num(gj_get(a, "bufferView"), -1));
    size_t comps = strcmp(type, "SCALAR") == 0 ? 1 : type[3] - '0';
    *count = (size_t)gj_num(gj_get(a, "count"), 0);
    size_t off = (size_t)gj_num(gj_get(v, "byteOffset"), 0) +
                 (size_t)gj_num(gj_get(a, "byteOffset"), 0);
    size_t len = (size_t)gj_num(gj_get(v, "byteLength"), 0);
    int ok = a && v && gj_num(gj_get(a, "componentType"), 0) == ctype &&
             strcmp(gj_str(gj_get(a, "type")), type) == 0 && off % 4 == 0 &&
             len == *count * comps * 4 && off + len <= g->bin_len &&
             !gj_get(v, "byteStride") && *count > 0;
    CHECK(ok, "accessor %d: not %zu tightly packed %s of type %d in the buffer",
          i, *count, type, ctype);
    return ok ? g->bin + off : NULL;
}

/* --- worlds --------------------------------------------------------------- */

static wg_world gltf_world(uint32_t n, int water)
{
    wg_world w = {.size = n, .octaves = 4, .passes = 3, .steps = water ? 20 : 0,
                  .sea = water ? 0.25f : 0.0f, .seed = 5};
    return w;
}

static int gltf_shown_wet(const wg_fields *f, float sea, uint32_t x, uint32_t y)
{
    return wg_water_shown(f, sea, x, y) > WG_WATER_MIN;
}

/* The cells with a corner under water, as the OBJ's water object. */
static size_t gltf_wet_cells(const wg_fields *f, float sea)
{
    size_t wet = 0;
    for (uint32_t y = 0; y + 1 < f->n; y++)
        for (uint32_t x = 0; x + 1 < f->n; x++)
            wet += gltf_shown_wet(f, sea, x, y) ||
                   gltf_shown_wet(f, sea, x + 1, y) ||
                   gltf_shown_wet(f, sea, x, y + 1) ||
                   gltf_shown_wet(f, sea, x + 1, y + 1);
    return wet;
}

/* A path in this file's own folder of the test directory. */
static void gltf_path(char *path, size_t len, const char *name)
{
    snprintf(path, len, "%s/gltf", wg_tmpdir());
    mkdir(path, 0777); /* there already, from an earlier test, is fine */
    snprintf(path, len, "%s/gltf/%s", wg_tmpdir(), name);
}

/* The 'v' lines of an OBJ of f, in order, with where the water's begin. */
static float (*gltf_obj_vertices(const wg_fields *f, float sea, size_t *nv,
                                 size_t *first_water))[3]
{
    char path[400], err[WG_ERR_LEN];
    gltf_path(path, sizeof path, "lineup.obj");
    FILE *fp = fopen(path, "w");
    int rc = fp ? wg_obj_write(fp, f, sea, "test", "lineup.mtl",
                               wg_texture_side(f->n), err) : -1;
    if (fp)
        fclose(fp);
    CHECK(rc == 0, "the OBJ: %s", rc ? err : "");
    fp = fopen(path, "r");
    size_t cap = wg_cells(f->n) * 2 + 16;
    float(*v)[3] = calloc(cap, sizeof *v);
    char line[256];
    *nv = 0;
    *first_water = SIZE_MAX;
    while (fp && v && fgets(line, sizeof line, fp)) {
        if (strncmp(line, "o water", 7) == 0)
            *first_water = *nv;
        else if (strncmp(line, "v ", 2) == 0 && *nv < cap &&
                 sscanf(line + 2, "%f %f %f", &v[*nv][0], &v[*nv][1],
                        &v[*nv][2]) == 3)
            (*nv)++;
    }
    if (fp)
        fclose(fp);
    return v;
}

/* Check a full-resolution GLB of f against the fields and the OBJ. */
static void gltf_check_full(const char *path, const wg_fields *f, float sea,
                            const char *params)
{
    glb g;
    if (glb_read(path, &g) != 0) {
        glb_free(&g);
        return;
    }
    uint32_t n = f->n;
    const gj *j = &g.json, *asset = gj_get(j, "asset");
    CHECK(strcmp(gj_str(gj_get(asset, "version")), "2.0") == 0 &&
          strcmp(gj_str(gj_get(asset, "generator")), "worldgen " WG_VERSION) == 0,
          "asset: version '%s', generator '%s'",
          gj_str(gj_get(asset, "version")), gj_str(gj_get(asset, "generator")));
    const gj *extras = gj_get(asset, "extras");
    CHECK(strcmp(gj_str(gj_get(extras, "worldgen")), WG_VERSION) == 0 &&
          strcmp(gj_str(gj_get(extras, "parameters")), params) == 0,
          "asset.extras: '%s' '%s'", gj_str(gj_get(extras, "worldgen")),
          gj_str(gj_get(extras, "parameters")));

    /* Every bufferView 4-byte aligned and inside the buffer. */
    const gj *views = gj_get(j, "bufferViews");
    for (size_t i = 0; views && i < views->len; i++) {
        double off = gj_num(gj_get(&views->items[i], "byteOffset"), 0);
        double len = gj_num(gj_get(&views->items[i], "byteLength"), -1);
        CHECK(fmod(off, 4) == 0 && len > 0 && off + len <= g.bin_len,
              "bufferView %zu: %g bytes at %g", i, len, off);
    }

    /* The nodes: the terrain, and the water when there is any. */
    size_t wet = gltf_wet_cells(f, sea);
    const gj *nodes = gj_get(j, "nodes");
    const gj *scene = gj_at(gj_get(j, "scenes"), (size_t)gj_num(gj_get(j, "scene"), -1));
    size_t want = wet ? 2 : 1;
    CHECK(nodes && nodes->len == want && gj_get(scene, "nodes") &&
          gj_get(scene, "nodes")->len == want, "%zu nodes for %zu wet cells",
          nodes ? nodes->len : 0, wet);
    CHECK(strcmp(gj_str(gj_get(gj_at(nodes, 0), "name")), "terrain") == 0 &&
          (!wet || strcmp(gj_str(gj_get(gj_at(nodes, 1), "name")), "water") == 0),
          "node names");
    const gj *meshes = gj_get(j, "meshes");
    CHECK(meshes && meshes->len == want, "meshes");

    /* The terrain: N*N vertices at (-3 + x*S, h, -3 + y*S), the min and
     * max of exactly those, unit normals along the fields', texel centres,
     * two counter-clockwise triangles a cell. */
    const gj *prim = gj_at(gj_get(gj_at(meshes, 0), "primitives"), 0);
    const gj *attr = gj_get(prim, "attributes");
    size_t cp = 0, cn = 0, ct = 0, ci = 0;
    const float *pos = glb_accessor(&g, (int)gj_num(gj_get(attr, "POSITION"), -1),
                                    5126, "VEC3", &cp);
    const float *nrm = glb_accessor(&g, (int)gj_num(gj_get(attr, "NORMAL"), -1),
                                    5126, "VEC3", &cn);
    const float *uv = glb_accessor(&g, (int)gj_num(gj_get(attr, "TEXCOORD_0"), -1),
                                   5126, "VEC2", &ct);
    int iacc = (int)gj_num(gj_get(prim, "indices"), -1);
    const uint32_t *ind = glb_accessor(&g, iacc, 5125, "SCALAR", &ci);
    size_t cells = wg_cells(n);
    CHECK(cp == cells && cn == cells && ct == cells && ci == 6 * wg_cells(n - 1),
          "terrain: %zu positions %zu normals %zu uvs %zu indices", cp, cn, ct, ci);
    CHECK(!gj_get(prim, "mode") || gj_num(gj_get(prim, "mode"), 0) == 4, "mode");
    if (pos && nrm && uv && ind && cp == cells && ct == cells && cn == cells) {
        double dp = 0, dn = 0, dl = 0, duv = 0, s = 6.0 / (n - 1);
        uint32_t side = wg_texture_side(n);
        double ts = (double)(side - 1) / (n - 1);
        float mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (size_t k = 0; k < cells; k++) {
            size_t x = k % n, y = k / n;
            const float *p = pos + 3 * k, *q = nrm + 3 * k;
            dp = fmax(dp, fabs(p[0] - (-3.0 + x * s)));
            dp = fmax(dp, fabs(p[2] - (-3.0 + y * s)));
            dp = fmax(dp, p[1] == f->height[k] ? 0.0 : 1.0);
            dn = fmax(dn, fabs(q[0] - f->nx[k]) + fabs(q[1] - f->ny[k]) +
                              fabs(q[2] - f->nz[k]));
            dl = fmax(dl, fabs(sqrt((double)q[0] * q[0] + (double)q[1] * q[1] +
                                    (double)q[2] * q[2]) - 1.0));
            duv = fmax(duv, fabs(uv[2 * k] - (x * ts + 0.5) / side));
            duv = fmax(duv, fabs(uv[2 * k + 1] - (y * ts + 0.5) / side));
            for (int c = 0; c < 3; c++) {
                mn[c] = fminf(mn[c], p[c]);
                mx[c] = fmaxf(mx[c], p[c]);
            }
        }
        CHECK(dp < 1e-6 && dn < 1e-5 && dl < 1e-6 && duv < 1e-7,
              "max error: position %g normal %g length %g uv %g", dp, dn, dl, duv);
        const gj *a = gj_at(gj_get(j, "accessors"),
                            (size_t)gj_num(gj_get(attr, "POSITION"), -1));
        for (int c = 0; c < 3; c++)
            CHECK((float)gj_num(gj_at(gj_get(a, "min"), (size_t)c), NAN) == mn[c] &&
                  (float)gj_num(gj_at(gj_get(a, "max"), (size_t)c), NAN) == mx[c],
                  "POSITION min/max[%d]: %.9g %.9g, the data's %.9g %.9g", c,
                  gj_num(gj_at(gj_get(a, "min"), (size_t)c), NAN),
                  gj_num(gj_at(gj_get(a, "max"), (size_t)c), NAN),
                  (double)mn[c], (double)mx[c]);
        size_t out = 0, wrong = 0;
        for (size_t t = 0; t + 2 < ci; t += 3) {
            if (ind[t] >= cells || ind[t + 1] >= cells || ind[t + 2] >= cells) {
                out++;
                continue;
            }
            const float *a0 = pos + 3 * ind[t], *b0 = pos + 3 * ind[t + 1],
                        *c0 = pos + 3 * ind[t + 2];
            float u[3] = {b0[0] - a0[0], b0[1] - a0[1], b0[2] - a0[2]};
            float w[3] = {c0[0] - a0[0], c0[1] - a0[1], c0[2] - a0[2]};
            wrong += !(u[2] * w[0] - u[0] * w[2] > 0.0f);
        }
        CHECK(out == 0 && wrong == 0, "%zu indices out of range, %zu triangles "
              "not counter-clockwise from +Y", out, wrong);
    }

    /* The texture: a PNG in a bufferView, which decodes to the albedo. */
    const gj *mat = gj_at(gj_get(j, "materials"),
                          (size_t)gj_num(gj_get(prim, "material"), -1));
    const gj *pbr = gj_get(mat, "pbrMetallicRoughness");
    const gj *tex = gj_at(gj_get(j, "textures"),
                          (size_t)gj_num(gj_get(gj_get(pbr, "baseColorTexture"), "index"), -1));
    const gj *img = gj_at(gj_get(j, "images"), (size_t)gj_num(gj_get(tex, "source"), -1));
    const gj *iv = gj_at(views, (size_t)gj_num(gj_get(img, "bufferView"), -1));
    CHECK(strcmp(gj_str(gj_get(img, "mimeType")), "image/png") == 0 && iv &&
          gj_num(gj_get(pbr, "metallicFactor"), -1) == 0 &&
          gj_num(gj_get(pbr, "roughnessFactor"), 0) >= 0.5,
          "the terrain's material and image");
    if (iv) {
        size_t off = (size_t)gj_num(gj_get(iv, "byteOffset"), 0);
        size_t len = (size_t)gj_num(gj_get(iv, "byteLength"), 0);
        char png[400];
        gltf_path(png, sizeof png, "embedded.png");
        FILE *fp = fopen(png, "wb");
        if (fp && off + len <= g.bin_len) {
            fwrite(g.bin + off, 1, len, fp);
        }
        if (fp)
            fclose(fp);
        uint32_t side = wg_texture_side(n), w = 0, h = 0;
        char text[1024] = "";
        uint8_t *got = wg_read_png(png, 8, 3, &w, &h, text, sizeof text);
        uint8_t *want_rgb = malloc((size_t)side * side * 3);
        wg_texture_make(f, sea, side, want_rgb);
        CHECK(got && w == side && h == side &&
              memcmp(got, want_rgb, (size_t)side * side * 3) == 0,
              "the embedded PNG is not the %ux%u texture", side, side);
        CHECK(strstr(text, params) != NULL, "the PNG's text: %s", text);
        free(got);
        free(want_rgb);
    }

    /* The water: 2 triangles a wet cell, counter-clockwise; blue and
     * blended. */
    if (wet) {
        const gj *wp = gj_at(gj_get(gj_at(meshes, 1), "primitives"), 0);
        const gj *wa = gj_get(wp, "attributes");
        size_t wn = 0, wi = 0, wnn = 0;
        const float *wpos = glb_accessor(&g, (int)gj_num(gj_get(wa, "POSITION"), -1),
                                         5126, "VEC3", &wn);
        const float *wnrm = glb_accessor(&g, (int)gj_num(gj_get(wa, "NORMAL"), -1),
                                         5126, "VEC3", &wnn);
        const uint32_t *wind = glb_accessor(&g, (int)gj_num(gj_get(wp, "indices"), -1),
                                            5125, "SCALAR", &wi);
        CHECK(wi == 6 * wet && wnn == wn, "%zu water indices for %zu wet cells",
              wi, wet);
        size_t out = 0, up = 0;
        for (size_t i = 0; wind && i < wi; i++)
            out += wind[i] >= wn;
        for (size_t k = 0; wnrm && k < wnn; k++)
            up += wnrm[3 * k] != 0.0f || wnrm[3 * k + 1] != 1.0f ||
                  wnrm[3 * k + 2] != 0.0f;
        CHECK(out == 0 && up == 0, "%zu water indices out of range, %zu "
              "normals not up", out, up);
        const gj *wm = gj_at(gj_get(j, "materials"),
                             (size_t)gj_num(gj_get(wp, "material"), -1));
        const gj *bc = gj_get(gj_get(wm, "pbrMetallicRoughness"), "baseColorFactor");
        CHECK(strcmp(gj_str(gj_get(wm, "alphaMode")), "BLEND") == 0 &&
              gj_num(gj_at(bc, 2), 0) > gj_num(gj_at(bc, 0), 1) &&
              gj_num(gj_at(bc, 3), 1) < 1.0, "the water's material");

        /* The same points as the OBJ's, terrain and water, in the same
         * order: a user's two exports line up. */
        size_t onv, ofw;
        float(*ov)[3] = gltf_obj_vertices(f, sea, &onv, &ofw);
        CHECK(ov && ofw == cells && onv == cells + wn, "the OBJ has %zu vertices, "
              "water from %zu; the GLB %zu + %zu", onv, ofw, cells, wn);
        double d = 0;
        for (size_t k = 0; ov && pos && wpos && onv == cells + wn && k < onv; k++) {
            const float *p = k < cells ? pos + 3 * k : wpos + 3 * (k - cells);
            for (int c = 0; c < 3; c++)
                d = fmax(d, fabs(p[c] - ov[k][c]));
        }
        CHECK(d <= 5.1e-7, "the GLB's vertices are up to %g from the OBJ's", d);
        free(ov);
    }
    glb_free(&g);
}

WG_TEST(gltf_full_meshes_match_the_fields)
{
    /* Odd and even sizes, the smallest, a world with water and one
     * without. */
    static const struct {
        uint32_t n;
        int water;
    } worlds[] = {{33, 1}, {18, 1}, {17, 0}, {2, 0}, {2, 1}};
    for (size_t i = 0; i < sizeof worlds / sizeof *worlds; i++) {
        wg_world w = gltf_world(worlds[i].n, worlds[i].water);
        wg_fields f;
        if (wg_make_world("scalar", &w, 0, &f) != 0) {
            CHECK(0, "no world");
            continue;
        }
        char path[400], err[WG_ERR_LEN], params[64];
        snprintf(params, sizeof params, "--size %u --seed 5", worlds[i].n);
        gltf_path(path, sizeof path, "full.glb");
        wg_gltf_stats st;
        int rc = wg_gltf_save(path, &f, w.sea, params, 0.0f, &st, err);
        CHECK(rc == 0, "%s", err);
        if (rc == 0) {
            gltf_check_full(path, &f, w.sea, params);
            size_t wet = gltf_wet_cells(&f, w.sea);
            CHECK(worlds[i].n == 2 || (wet > 0) == worlds[i].water,
                  "size %u: %zu wet cells", worlds[i].n, wet);
            CHECK(st.vertices[0] == wg_cells(f.n) &&
                  st.triangles[0] == 2 * wg_cells(f.n - 1) &&
                  st.triangles[1] == 2 * wet && st.error == 0.0,
                  "stats: %llu %llu %llu", (unsigned long long)st.vertices[0],
                  (unsigned long long)st.triangles[0],
                  (unsigned long long)st.triangles[1]);
        }
        wg_fields_free(&f);
    }
}

WG_TEST(gltf_provenance_is_json_whatever_the_bytes)
{
    /* Quotes, backslashes, a newline, a tab and bytes that are not UTF-8
     * in the parameters (a path may hold any of them): the JSON still
     * parses, and reads back the same, with U+FFFD for the stray bytes. */
    wg_world w = gltf_world(5, 0);
    wg_fields f;
    CHECK(wg_make_world("scalar", &w, 0, &f) == 0);
    const char *params = "--out \"a\\b\"\n\tc \xff\xc3\xa9 \xe2\x82";
    const char *want = "--out \"a\\b\"\n\tc \xef\xbf\xbd\xc3\xa9 \xef\xbf\xbd\xef\xbf\xbd";
    char path[400], err[WG_ERR_LEN];
    gltf_path(path, sizeof path, "params.glb");
    CHECK(wg_gltf_save(path, &f, 0.0f, params, 0.0f, NULL, err) == 0, "%s", err);
    glb g;
    if (glb_read(path, &g) == 0) {
        const char *got = gj_str(gj_get(gj_get(gj_get(&g.json, "asset"), "extras"),
                                        "parameters"));
        CHECK(strcmp(got, want) == 0, "parameters read back as '%s'", got);
    }
    glb_free(&g);
    wg_fields_free(&f);
}

/* From the command line, the meshes' provenance is the world's options
 * and, for the glTF, --gltf-error (which changes it), in the shortest form
 * that reads back: its parameters had made the full mesh again.  Not the
 * picture's camera and sun, which change nothing in either mesh or in
 * the texture (the OBJ's header and texture had carried them). */
WG_TEST(gltf_and_obj_provenance_is_what_makes_them)
{
    char glb_path[400], cmd[1400];
    gltf_path(glb_path, sizeof glb_path, "prov.glb");
    snprintf(cmd, sizeof cmd,
             "./worldgen --size 17 --mesh scalar -q --no-image --azimuth 100 "
             "--sun-elevation 30 --gltf '%s' --gltf-error 0.01 --obj gltf/prov.obj && "
             "head -n 2 gltf/prov.obj && grep -a -c -- '--azimuth' gltf/prov_albedo.png",
             glb_path);
    wg_cli c = wg_cli_sh(cmd);
    const char *world = "--size 17 --seed 1234 --octaves 6 --erosion ";
    CHECK(c.status == 1 && strstr(c.out, "# worldgen " WG_VERSION "\n# ") &&
              strstr(c.out, world) && !strstr(c.out, "--azimuth") &&
              !strstr(c.out, "--gltf-error") && strstr(c.out, "\n0\n"),
          "status %d: %s %s", c.status, c.out, c.err);
    wg_cli_free(&c);
    glb g;
    if (glb_read(glb_path, &g) == 0) {
        const char *got = gj_str(gj_get(gj_get(gj_get(&g.json, "asset"), "extras"),
                                        "parameters"));
        const char *e = " --gltf-error 0.01";
        size_t len = strlen(got);
        CHECK(strncmp(got, world, strlen(world)) == 0 && len > strlen(e) &&
                  strcmp(got + len - strlen(e), e) == 0 &&
                  !strstr(got, "--azimuth") && !strstr(got, "--sun"),
              "parameters '%s'", got);
    }
    glb_free(&g);
}

WG_TEST(gltf_failed_write_leaves_nothing)
{
    wg_world w = gltf_world(9, 1);
    wg_fields f;
    CHECK(wg_make_world("scalar", &w, 0, &f) == 0);
    char path[500], dir[400], err[WG_ERR_LEN] = "";
    gltf_path(dir, sizeof dir, "fail");
    snprintf(path, sizeof path, "%s/no/such/folder/w.glb", dir);
    CHECK(wg_gltf_save(path, &f, w.sea, "x", 0.0f, NULL, err) != 0 &&
          strstr(err, "w.glb"), "%s", err);
    /* An error out of range, and a directory in the way: nothing is
     * written, no temporary stays. */
    char cmd[500];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/d.glb'", dir);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/d.glb", dir);
    CHECK(wg_gltf_save(path, &f, w.sea, "x", 0.0f, NULL, err) != 0, "a directory");
    snprintf(path, sizeof path, "%s/e.glb", dir);
    CHECK(wg_gltf_save(path, &f, w.sea, "x", -1.0f, NULL, err) != 0 &&
          wg_gltf_save(path, &f, w.sea, "x", NAN, NULL, err) != 0 &&
          wg_gltf_save(path, &f, w.sea, "x", 2.0f, NULL, err) != 0,
          "an error out of range was taken");
    /* Refused before the world is made: out of range, and a full grid
     * over glTF's 4 GiB, as the writer counts it (its meshes within 4 GiB
     * less a MiB): 8757 and 8758, passed here and said to fit, had failed
     * at the end of their runs. */
    double land8756 = 32.0 * 8756 * 8756 + 24.0 * 8755 * 8755,
           land8757 = 32.0 * 8757 * 8757 + 24.0 * 8756 * 8756;
    CHECK(land8756 <= 4294967295.0 - 1048576.0 && land8757 > 4294967295.0 - 1048576.0);
    CHECK(wg_gltf_check(8192, 0.0f, err) == 0 && wg_gltf_check(9000, 0.0f, err) != 0 &&
          strstr(err, "4 GiB (valid: --gltf-error E over 0, such as 0.0001; with every "
                      "grid vertex, the land alone fits up to --size 8756, its water "
                      "and texture less)") &&
          wg_gltf_check(8756, 0.0f, err) == 0 && wg_gltf_check(8757, 0.0f, err) != 0 &&
          wg_gltf_check(65536, 0.001f, err) == 0 &&
          wg_gltf_check(33, -0.0001f, err) != 0 && wg_gltf_check(33, INFINITY, err) != 0,
          "%s", err);
    DIR *d = opendir(dir);
    int entries = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            entries++;
            CHECK(strcmp(e->d_name, "d.glb") == 0, "left behind: %s", e->d_name);
        }
    if (d)
        closedir(d);
    CHECK(entries == 1, "%d entries", entries);
    /* And a good one leaves the file alone, whole. */
    CHECK(wg_gltf_save(path, &f, w.sea, "x", 0.0f, NULL, err) == 0, "%s", err);
    size_t len = 0;
    uint8_t *b = wg_read_file(path, &len);
    CHECK(b && len > 20 && glb_u32(b + 8) == len, "the whole file");
    free(b);
    wg_fields_free(&f);
}

WG_TEST(gltf_same_bytes_to_a_pipe_after_other_bytes_and_appended)
{
    /* A regular file is patched once the PNG's size is known; a pipe, or
     * a file in append mode, is written in order: the same bytes, from
     * wherever the stream stands. */
    wg_world w = gltf_world(21, 1);
    wg_fields f;
    CHECK(wg_make_world("scalar", &w, 0, &f) == 0);
    char ref[400], pipe_to[400], after[400], cmd[600], err[WG_ERR_LEN];
    gltf_path(ref, sizeof ref, "ref.glb");
    gltf_path(pipe_to, sizeof pipe_to, "pipe.glb");
    gltf_path(after, sizeof after, "after.glb");
    CHECK(wg_gltf_save(ref, &f, w.sea, "p", 0.0f, NULL, err) == 0, "%s", err);
    size_t len = 0, got_len = 0;
    uint8_t *want = wg_read_file(ref, &len), *got;

    snprintf(cmd, sizeof cmd, "cat > '%s'", pipe_to);
    FILE *fp = popen(cmd, "w");
    CHECK(fp && wg_gltf_write(fp, &f, w.sea, "p", 0.0f, NULL, err) == 0, "%s", err);
    CHECK(fp && pclose(fp) == 0);
    got = wg_read_file(pipe_to, &got_len);
    CHECK(want && got && got_len == len && memcmp(got, want, len) == 0,
          "through a pipe: %zu bytes, not the file's %zu", got_len, len);
    free(got);

    for (int append = 0; append < 2; append++) {
        fp = fopen(after, "wb");
        CHECK(fp && fwrite("HEAD!", 1, 5, fp) == 5);
        if (fp && append) {
            fclose(fp);
            fp = fopen(after, "ab");
        }
        CHECK(fp && wg_gltf_write(fp, &f, w.sea, "p", 0.0f, NULL, err) == 0,
              "%s", err);
        if (fp)
            fclose(fp);
        got = wg_read_file(after, &got_len);
        CHECK(want && got && got_len == len + 5 && memcmp(got, "HEAD!", 5) == 0 &&
              memcmp(got + 5, want, len) == 0, "after 5 bytes%s: %zu bytes, "
              "not 5 + %zu", append ? ", appending" : "", got_len, len);
        free(got);
    }
    free(want);
    wg_fields_free(&f);
}

/* The simplified mesh 'mesh' of g over the grid whose heights (the water's
 * levels) are ref[] (NaN: not in the mesh): every vertex a grid point at
 * its height, every triangle counter-clockwise seen from above, covering
 * 'area' square metres once; every edge shared by two triangles, in
 * opposite directions, or open, and the open ones 'rim' metres long (the
 * border of the square; of the wet cells), so there is no crack.  Returns
 * the largest height difference between the grid and the surface at the
 * grid points under it. */
typedef struct gltf_edge {
    uint64_t a, b;
} gltf_edge;

static int gltf_edge_cmp(const void *p, const void *q)
{
    const gltf_edge *e = p, *g = q;
    uint64_t x = e->a < e->b ? e->a << 32 | e->b : e->b << 32 | e->a;
    uint64_t y = g->a < g->b ? g->a << 32 | g->b : g->b << 32 | g->a;
    return x < y ? -1 : x > y;
}

static double gltf_check_simplified(const glb *g, int mesh, uint32_t n,
                                    const float *ref, double area_want,
                                    double rim_want, size_t *triangles)
{
    const gj *meshes = gj_get(&g->json, "meshes");
    const gj *prim = gj_at(gj_get(gj_at(meshes, (size_t)mesh), "primitives"), 0);
    const gj *attr = gj_get(prim, "attributes");
    size_t nv = 0, ni = 0;
    const float *pos = glb_accessor(g, (int)gj_num(gj_get(attr, "POSITION"), -1),
                                    5126, "VEC3", &nv);
    const uint32_t *ind = glb_accessor(g, (int)gj_num(gj_get(prim, "indices"), -1),
                                       5125, "SCALAR", &ni);
    *triangles = ni / 3;
    if (!pos || !ind)
        return INFINITY;
    double s = 6.0 / (n - 1), area = 0, worst = 0, rim = 0;
    size_t out = 0, wrong = 0, off = 0;
    /* Each vertex a grid point, at its height. */
    uint64_t *gp = malloc(nv * sizeof *gp);
    for (size_t k = 0; k < nv; k++) {
        double gx = (pos[3 * k] + 3.0) / s, gy = (pos[3 * k + 2] + 3.0) / s;
        uint64_t x = (uint64_t)llround(gx), y = (uint64_t)llround(gy);
        int bad = fabs(gx - x) > 1e-3 || fabs(gy - y) > 1e-3 || x >= n || y >= n;
        gp[k] = bad ? 0 : y * n + x;
        off += bad || pos[3 * k + 1] != ref[gp[k]];
    }
    CHECK(off == 0, "%zu vertices are not grid points at their height", off);
    gltf_edge *e = malloc(ni * sizeof *e);
    char *seen = calloc(wg_cells(n), 1);
    for (size_t t = 0; t + 2 < ni; t += 3) {
        const uint32_t *q = ind + t;
        if (q[0] >= nv || q[1] >= nv || q[2] >= nv) {
            out++;
            continue;
        }
        const float *a = pos + 3 * q[0], *b = pos + 3 * q[1], *c = pos + 3 * q[2];
        double cy = ((double)b[2] - a[2]) * ((double)c[0] - a[0]) -
                    ((double)b[0] - a[0]) * ((double)c[2] - a[2]);
        wrong += !(cy > 0.0);
        area += cy / 2;
        for (int i = 0; i < 3; i++)
            e[t + i] = (gltf_edge){gp[q[i]], gp[q[(i + 1) % 3]]};
        /* The surface at the grid points under the triangle. */
        double x0 = fmin(a[0], fmin(b[0], c[0])), x1 = fmax(a[0], fmax(b[0], c[0]));
        double z0 = fmin(a[2], fmin(b[2], c[2])), z1 = fmax(a[2], fmax(b[2], c[2]));
        for (long y = lround((z0 + 3) / s); cy > 0 && y <= lround((z1 + 3) / s); y++)
            for (long x = lround((x0 + 3) / s); x <= lround((x1 + 3) / s); x++) {
                double px = -3 + x * s, pz = -3 + y * s;
                double w0 = ((b[2] - pz) * (c[0] - px) - (b[0] - px) * (c[2] - pz)) / cy;
                double w1 = ((c[2] - pz) * (a[0] - px) - (c[0] - px) * (a[2] - pz)) / cy;
                double w2 = 1 - w0 - w1;
                if (w0 < -1e-9 || w1 < -1e-9 || w2 < -1e-9)
                    continue;
                double h = w0 * a[1] + w1 * b[1] + w2 * c[1];
                seen[y * n + x] = 1;
                worst = fmax(worst, fabs(h - ref[y * n + x]));
            }
    }
    CHECK(out == 0 && wrong == 0, "%zu indices out of range, %zu triangles not "
          "counter-clockwise from +Y", out, wrong);
    CHECK(fabs(area - area_want) < 1e-6 * (1 + area_want), "the triangles cover "
          "%.9g m^2 of %.9g", area, area_want);
    size_t missed = 0, extra = 0;
    for (size_t k = 0; k < wg_cells(n); k++) {
        missed += !isnan(ref[k]) && !seen[k] && !mesh;
        extra += isnan(ref[k]) && seen[k];
    }
    CHECK(missed == 0 && extra == 0, "%zu grid points under no triangle, %zu "
          "outside the mesh under one", missed, extra);
    /* Edges: twice, once each way, or open; the open ones make the rim. */
    qsort(e, ni, sizeof *e, gltf_edge_cmp);
    size_t bad = 0;
    for (size_t i = 0; i < ni;) {
        size_t k = i + 1;
        while (k < ni && gltf_edge_cmp(&e[i], &e[k]) == 0)
            k++;
        if (k - i == 1) {
            double dx = (double)(e[i].a % n) - (double)(e[i].b % n);
            double dy = (double)(e[i].a / n) - (double)(e[i].b / n);
            rim += sqrt(dx * dx + dy * dy) * s;
        } else {
            bad += k - i != 2 || e[i].a != e[i + 1].b;
        }
        i = k;
    }
    CHECK(bad == 0, "%zu edges shared wrongly", bad);
    CHECK(fabs(rim - rim_want) < 1e-6 * (1 + rim_want), "open edges %.9g m long, "
          "the rim %.9g: a crack", rim, rim_want);
    free(gp);
    free(e);
    free(seen);
    return worst;
}

/* The water's level at every grid point of the full GLB's water (NaN
 * elsewhere), the area of its wet cells and the length of their rim. */
static float *gltf_levels(const char *full, uint32_t n, double *area, double *rim)
{
    float *lv = malloc(wg_cells(n) * sizeof *lv);
    for (size_t k = 0; k < wg_cells(n); k++)
        lv[k] = NAN;
    glb g;
    double s = 6.0 / (n - 1);
    *area = *rim = 0;
    if (glb_read(full, &g) == 0) {
        const gj *prim = gj_at(gj_get(gj_at(gj_get(&g.json, "meshes"), 1),
                                      "primitives"), 0);
        size_t nv = 0, ni = 0;
        const float *pos = glb_accessor(&g, (int)gj_num(gj_get(gj_get(prim, "attributes"),
                                                               "POSITION"), -1),
                                        5126, "VEC3", &nv);
        const uint32_t *ind = glb_accessor(&g, (int)gj_num(gj_get(prim, "indices"), -1),
                                           5125, "SCALAR", &ni);
        for (size_t k = 0; pos && k < nv; k++)
            lv[(size_t)llround((pos[3 * k + 2] + 3) / s) * n +
               (size_t)llround((pos[3 * k] + 3) / s)] = pos[3 * k + 1];
        /* Wet cells: one per pair of triangles, at the north-west corner
         * of the first's (a, c, b). */
        char *wet = calloc(wg_cells(n), 1);
        for (size_t t = 0; pos && ind && t + 5 < ni; t += 6) {
            const float *a = pos + 3 * ind[t];
            wet[(size_t)llround((a[2] + 3) / s) * n + (size_t)llround((a[0] + 3) / s)] = 1;
            *area += s * s;
        }
        for (uint32_t y = 0; y + 1 < n; y++)
            for (uint32_t x = 0; x + 1 < n; x++) {
                size_t k = (size_t)y * n + x;
                if (!wet[k])
                    continue;
                *rim += s * ((x == 0 || !wet[k - 1]) + (x + 2 == n || !wet[k + 1]) +
                             (y == 0 || !wet[k - n]) + (y + 2 == n || !wet[k + n]));
            }
        free(wet);
    }
    glb_free(&g);
    return lv;
}

WG_TEST(gltf_simplified_is_watertight_square_and_close)
{
    /* 300: tiles of 256 and 43 cells, so the seams are tested too; the
     * smallest worlds and one tile one cell wide (258). */
    static const struct {
        uint32_t n;
        float e;
    } worlds[] = {{300, 0.002f}, {300, 0.0005f}, {258, 0.01f}, {2, 0.01f},
                  {3, 0.5f}, {65, 0.3f}};
    for (size_t i = 0; i < sizeof worlds / sizeof *worlds; i++) {
        wg_world w = gltf_world(worlds[i].n, 1);
        wg_fields f;
        CHECK(wg_make_world("scalar", &w, 0, &f) == 0);
        char path[400], full[400], err[WG_ERR_LEN];
        gltf_path(path, sizeof path, "simple.glb");
        gltf_path(full, sizeof full, "simple-full.glb");
        float e = worlds[i].e;
        uint32_t n = f.n;
        wg_gltf_stats st, fs;
        CHECK(wg_gltf_save(path, &f, w.sea, "s", e, &st, err) == 0, "%s", err);
        CHECK(wg_gltf_save(full, &f, w.sea, "s", 0.0f, &fs, err) == 0, "%s", err);
        glb g;
        if (glb_read(path, &g) == 0) {
            size_t tt = 0, wt = 0;
            double warea = 0, wrim = 0;
            float *lv = gltf_levels(full, n, &warea, &wrim);
            double worst = gltf_check_simplified(&g, 0, n, f.height, 36.0, 24.0, &tt);
            double wworst = fs.triangles[1]
                ? gltf_check_simplified(&g, 1, n, lv, warea, wrim, &wt) : 0.0;
            fprintf(stderr, "    %ux%u within %g m: terrain %zu of %llu "
                    "triangles, water %zu of %llu; height difference %.3g, "
                    "water %.3g (reported %.3g); %llu of %llu bytes\n", n, n,
                    (double)e, tt, (unsigned long long)fs.triangles[0], wt,
                    (unsigned long long)fs.triangles[1], worst, wworst, st.error,
                    (unsigned long long)st.bytes, (unsigned long long)fs.bytes);
            CHECK(tt == st.triangles[0] && wt == st.triangles[1] &&
                  (wt > 0) == (fs.triangles[1] > 0));
            CHECK(n < 10 || (tt < fs.triangles[0] && wt < fs.triangles[1] &&
                             (e < 0.002f || tt < fs.triangles[0] / 2)),
                  "hardly simplified");
            /* Exact but for the rounding of the positions to floats. */
            CHECK(worst <= e + 1e-6 && wworst <= e + 1e-6 && st.error <= e &&
                  st.error >= worst - 1e-6,
                  "height difference %g, water %g, reported %g, over %g",
                  worst, wworst, st.error, (double)e);
            const gj *sim = gj_get(gj_get(gj_get(&g.json, "asset"), "extras"),
                                   "simplified");
            CHECK(fabs(gj_num(gj_get(sim, "max_error"), 0) - e) < 1e-9, "extras");
            free(lv);
        }
        glb_free(&g);
        wg_fields_free(&f);
    }
}

/* The GLBs the validator and Blender read: small worlds, with water and
 * without, the smallest, and a simplified one. */
static size_t gltf_samples(char paths[][400], size_t max)
{
    static const struct {
        uint32_t n;
        int water;
        float error;
    } worlds[] = {{33, 1, 0}, {18, 1, 0}, {17, 0, 0}, {2, 1, 0}, {65, 1, 0.002f}};
    char err[WG_ERR_LEN];
    size_t count = 0;
    for (size_t i = 0; i < sizeof worlds / sizeof *worlds && count < max; i++) {
        wg_world w = gltf_world(worlds[i].n, worlds[i].water);
        wg_fields f;
        if (wg_make_world("scalar", &w, 0, &f) != 0)
            continue;
        char name[64];
        snprintf(name, sizeof name, "sample-%u-%d%s.glb", worlds[i].n,
                 worlds[i].water, worlds[i].error > 0 ? "-simple" : "");
        gltf_path(paths[count], 400, name);
        int rc = wg_gltf_save(paths[count], &f, w.sea, "--seed 5", worlds[i].error,
                              NULL, err);
        CHECK(rc == 0, "%s", err);
        count += rc == 0;
        wg_fields_free(&f);
    }
    return count;
}

/* Whether the GLB at path has the water's node beside the terrain's. */
static int gltf_has_water(const char *path)
{
    glb g;
    int water = glb_read(path, &g) == 0 && gj_get(&g.json, "nodes")->len == 2;
    glb_free(&g);
    return water;
}

WG_TEST(gltf_khronos_validator_finds_no_error)
{
    char node[1024], paths[8][400];
    snprintf(node, sizeof node, "command -v node >/dev/null && node '%s/tests/gltf_validate.js' --check",
             wg_srcdir());
    wg_cli c = wg_cli_sh(node);
    if (c.status != 0) {
        wg_skip("needs node and gltf-validator (make deps installs them): %s",
                c.out[0] ? c.out : c.err);
        wg_cli_free(&c);
        return;
    }
    wg_cli_free(&c);
    size_t count = gltf_samples(paths, 8);
    char cmd[4096];
    int used = snprintf(cmd, sizeof cmd, "node '%s/tests/gltf_validate.js'", wg_srcdir());
    for (size_t i = 0; i < count; i++)
        used += snprintf(cmd + used, sizeof cmd - (size_t)used, " '%s'", paths[i]);
    c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "the validator: %s%s", c.out, c.err);
    /* One line a file, "FILE: E errors, W warnings, ...". */
    size_t files = 0, errors = 0;
    for (const char *p = c.out; (p = strstr(p, " errors, ")); p++) {
        const char *q = p;
        while (q > c.out && q[-1] != ' ')
            q--;
        errors += strtoul(q, NULL, 10);
        files++;
    }
    CHECK(files == count && errors == 0, "%zu files, %zu errors: %s", files,
          errors, c.out);
    if (strstr(c.out, "warning "))
        fprintf(stderr, "    the validator warns:\n%s", c.out);
    wg_cli_free(&c);
}

/* Debian 12's Blender 3.4.1 imports with import_shading 'SMOOTH' (the
 * terrain is smooth everywhere): its default, 'NORMALS', guesses flat
 * faces with np.bool, which Debian 12's numpy 1.24 removed, and fails on
 * every glTF with normals, this one or any other (README, "glTF"). */
WG_TEST(gltf_blender_imports_both_objects)
{
    if (!wg_have_command("blender")) {
        wg_skip("needs blender on PATH");
        return;
    }
    char paths[8][400], cmd[4096];
    size_t count = gltf_samples(paths, 8);
    for (size_t i = 0; i < count; i++) {
        const int water = gltf_has_water(paths[i]);
        snprintf(cmd, sizeof cmd,
                 "blender -b --factory-startup --python-expr \""
                 "import bpy\n"
                 "bpy.ops.wm.read_factory_settings(use_empty=True)\n"
                 "bpy.ops.import_scene.gltf(filepath='%s', "
                 "import_shading='SMOOTH')\n"
                 "print('OBJECTS', ' '.join(sorted(o.name for o in bpy.data.objects)))\n"
                 "\" 2>&1", paths[i]);
        wg_cli c = wg_cli_sh(cmd);
        const char *line = strstr(c.out, "OBJECTS ");
        CHECK(c.status == 0 && line &&
              strncmp(line, water ? "OBJECTS terrain water\n" : "OBJECTS terrain\n",
                      water ? 22 : 16) == 0,
              "%s: %s", paths[i], line ? line : c.out);
        wg_cli_free(&c);
    }
}

/* assimp (the Open Asset Import Library, which many engines and tools
 * load glTF with) imports every sample: the terrain with its N*N vertices
 * and two triangles a cell (where not simplified), the water as a mesh of
 * its own where there is water, and the texture embedded. */
WG_TEST(gltf_assimp_imports_every_sample)
{
    if (!wg_have_command("assimp")) {
        wg_skip("needs assimp on PATH (make deps installs assimp-utils)");
        return;
    }
    char paths[8][400], cmd[4096];
    size_t count = gltf_samples(paths, 8);
    for (size_t i = 0; i < count; i++) {
        const int water = gltf_has_water(paths[i]);
        unsigned n = 0;
        const char *base = strrchr(paths[i], '/');
        sscanf(base ? base + 1 : paths[i], "sample-%u-", &n);
        snprintf(cmd, sizeof cmd, "assimp info '%s' 2>&1 | grep -v '%%$'",
                 paths[i]);
        wg_cli c = wg_cli_sh(cmd);
        char terrain[120];
        if (strstr(paths[i], "-simple"))
            snprintf(terrain, sizeof terrain, "0 (terrain): [");
        else
            snprintf(terrain, sizeof terrain,
                     "0 (terrain): [%u / 0 / %u | triangle]", n * n,
                     2 * (n - 1) * (n - 1));
        CHECK(c.status == 0 &&
                  strstr(c.out, "Importing file ...                   OK") &&
                  strstr(c.out, terrain) &&
                  !strstr(c.out, "1 (water): [") == !water &&
                  strstr(c.out, "Textures (embed.):  1"),
              "%s: want '%s'%s:\n%s", paths[i], terrain,
              water ? " and the water" : "", c.out);
        wg_cli_free(&c);
    }
}
