/* options.c: worldgen's command line: every option read and checked
 * alone, then against the others and the environment; the defaults that
 * follow from them settled; warnings for options that would change
 * nothing; --help, --version and --list-devices answered.  Running what
 * it settles is worldgen.c's. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/vulkan.h"
#include "render/gltf.h"
#include "render/heightmap.h"
#include "render/obj.h"
#include "render/outfile.h"
#include "render/png.h"
#include "render/render.h"
#include "render/window.h"
#include "options.h"
#include "say.h"

static const settings defaults = {
    .world = {.size = 512, .octaves = 6, .seed = 1234, .sea = WG_SEA_DEFAULT},
    /* The fastest backend here: every backend makes the same fields (the
     * heights to the bit), and the hydraulic stage makes scalar's 512 world
     * take 4.3 s against openmp's 0.8 s on two cores. */
    .mesh = "auto",
    .mesh_auto = 1,
    .out = "world.png",
};

static const struct option long_opts[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"octaves", required_argument, NULL, OPT_OCTAVES},
    {"erosion", required_argument, NULL, OPT_EROSION},
    {"hydraulic", required_argument, NULL, OPT_HYDRAULIC},
    {"sea-level", required_argument, NULL, OPT_SEA_LEVEL},
    {"watermap", required_argument, NULL, OPT_WATERMAP},
    {"sedimentmap", required_argument, NULL, OPT_SEDIMENTMAP},
    {"mesh", required_argument, NULL, OPT_MESH},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"check", no_argument, NULL, OPT_CHECK},
    {"json", required_argument, NULL, OPT_JSON},
    {"power", required_argument, NULL, OPT_POWER},
    {"gpu", required_argument, NULL, OPT_GPU},
    {"list-devices", no_argument, NULL, OPT_LIST_DEVICES},
    {"histogram", no_argument, NULL, OPT_HISTOGRAM},
    {"heightmap", required_argument, NULL, OPT_HEIGHTMAP},
    {"heightmap-format", required_argument, NULL, OPT_HEIGHTMAP_FORMAT},
    {"out", required_argument, NULL, OPT_OUT},
    {"no-image", no_argument, NULL, OPT_NO_IMAGE},
    {"width", required_argument, NULL, OPT_WIDTH},
    {"height", required_argument, NULL, OPT_HEIGHT},
    {"aa", required_argument, NULL, OPT_AA},
    {"azimuth", required_argument, NULL, OPT_AZIMUTH},
    {"elevation", required_argument, NULL, OPT_ELEVATION},
    {"distance", required_argument, NULL, OPT_DISTANCE},
    {"fov", required_argument, NULL, OPT_FOV},
    {"look", required_argument, NULL, OPT_LOOK},
    {"sun-azimuth", required_argument, NULL, OPT_SUN_AZIMUTH},
    {"sun-elevation", required_argument, NULL, OPT_SUN_ELEVATION},
    {"no-cull", no_argument, NULL, OPT_NO_CULL},
    {"obj", required_argument, NULL, OPT_OBJ},
    {"show", no_argument, NULL, OPT_SHOW},
    {"require", required_argument, NULL, OPT_REQUIRE},
    {"view", required_argument, NULL, OPT_VIEW},
    {"gltf", required_argument, NULL, OPT_GLTF},
    {"gltf-error", required_argument, NULL, OPT_GLTF_ERROR},
    {"region", required_argument, NULL, OPT_REGION},
    {"normalmap", required_argument, NULL, OPT_NORMALMAP},
    {"albedo", required_argument, NULL, OPT_ALBEDO},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *fp)
{
    fprintf(fp,
"Usage: worldgen [OPTION]...\n"
"Turn a seed into a landscape: terrain, thermal and hydraulic erosion and\n"
"normals on a choice of backends, a timing table, a rendered picture,\n"
"height maps and meshes.\n"
"\n"
"World:\n"
"      --size N             vertices per side, 2..65536, or up to 1048577 with\n"
"                           --region (default 512)\n"
"      --seed S             unsigned 64-bit seed, decimal or 0x hex\n"
"                           (default 1234)\n"
"      --octaves N          noise octaves, 1..16 (default 6)\n"
"      --erosion N          thermal erosion passes, 0..10000 (default: 12 at\n"
"                           513, scaled with the square of the resolution)\n"
"      --hydraulic N        hydraulic erosion steps (rain, rivers, sediment),\n"
"                           0..100000, 0 for none (default: 400 at 513,\n"
"                           scaled with the resolution)\n"
"      --sea-level H        the sea's height, 0..1 (default 0.25)\n"
"      --region X,Y,W,H     make and write only columns X..X+W-1 and rows\n"
"                           Y..Y+H-1 of the world: the same values, to the bit,\n"
"                           as that window of the whole world on the same\n"
"                           backend; writes maps and --json only (no\n"
"                           picture, OBJ or glTF: those are whole worlds)\n"
"\n"
"Backends:\n"
"      --mesh LIST          the backends to run, comma-separated, each\n"
"                           ");
    for (size_t i = 0; wg_backends[i]; i++)
        fprintf(fp, "%s%s", i == 0 ? "" : wg_backends[i + 1] ? ", " : " or ",
                wg_backends[i]->name);
    fprintf(fp, "; all (every one, each\n"
"                           compared with scalar) or auto (the fastest\n"
"                           here for this world); in a list, one not\n"
"                           available here is skipped with a 'skip' line,\n"
"                           and one named alone is an error (default auto)\n"
"      --require LIST       these backends must run: one that is skipped is\n"
"                           a failure (exit 1), so that --check cannot pass\n"
"                           by skipping one; name them in --mesh too (not\n"
"                           auto), or scalar with --check\n"
"      --threads N          CPU threads for openmp and the renderer, 1..1024\n"
"                           (default: every CPU this process may run on,\n"
"                           or OMP_NUM_THREADS; the renderer uses at most\n"
"                           those)\n"
"      --power P            vulkan's device: high-performance (a discrete GPU\n"
"                           first) or low-power (an integrated one first)\n"
"      --gpu N|NAME         vulkan's device by index or name substring\n"
"      --list-devices       list the Vulkan devices and exit\n"
"      --check              exit with status 3 when a backend disagrees with\n"
"                           scalar beyond SPEC.md's tolerances (runs scalar\n"
"                           too when --mesh leaves it out)\n"
"\n"
"Output:\n"
"      --json FILE          the timings and agreement as JSON ('-': stdout)\n"
"      --histogram          print the height distribution and the share of the\n"
"                           world (of the window with --region) under water\n"
"      --heightmap FILE     write the heights: FILE.pfm (binary32), FILE.png\n"
"                           (16-bit grey), FILE.r16 or FILE.raw (raw uint16\n"
"                           LE) or FILE.tif (float32 GeoTIFF; .tiff too, and\n"
"                           any case); .pfm and .r16/.raw get an\n"
"                           ENVI header for GDAL beside them (FILE.r16.hdr);\n"
"                           '-' is standard output (the tables then go to\n"
"                           stderr)\n"
"      --heightmap-format F pfm, png, r16 (or raw) or tif (or tiff): the\n"
"                           format for '-' or to override the extension\n"
"      --watermap FILE      write the water depth (same formats and scale as\n"
"                           --heightmap: height + water is the water surface)\n"
"      --sedimentmap FILE   write the net sediment, laid down (+) or carried\n"
"                           away (-), in --heightmap's formats: .pfm and .tif\n"
"                           exact, .png and .r16 as 32768 + v * 65535\n"
"                           (clamped), so v = (sample - 32768) / 65535\n"
"      --normalmap FILE     write the normals, x east, y north, z up: FILE.tif\n"
"                           (3 bands of float32, georeferenced) or FILE.png\n"
"                           (16-bit RGB, v*0.5+0.5 scaled to 0..65535, with a\n"
"                           FILE.pgw world file)\n"
"      --albedo FILE        write the ground's colour, one pixel a vertex:\n"
"                           FILE.png (8-bit RGB, with a FILE.pgw world file)\n"
"                           or FILE.tif (8-bit RGB GeoTIFF)\n"
"      --obj FILE           also write the mesh as Wavefront OBJ (Y up, metres),\n"
"                           with FILE.mtl and FILE_albedo.png beside it\n"
"                           (FILE less a trailing .obj)\n"
"      --gltf FILE          also write the terrain and its water as binary\n"
"                           glTF 2.0 (FILE.glb, the texture inside; '-' is\n"
"                           standard output) for Blender, Godot, three.js\n"
"                           (Unity through a glTF package)\n"
"      --gltf-error E       simplify the glTF's meshes until a grid point is\n"
"                           up to E off the surface, 0..1 (default 0: every\n"
"                           grid vertex; the world is 6 across)\n"
"  -q, --quiet              print no timing tables (--histogram still\n"
"                           prints its own)\n"
"\n"
"Picture (made unless the run asks for another output: a map, --json,\n"
"--obj or --gltf; then only with --out or --show):\n"
"      --out FILE           the rendered PNG (default world.png; '-' is\n"
"                           standard output, the tables then go to stderr)\n"
"      --no-image           render and write no picture\n"
"      --show               also show the picture in a window (SDL2), whose\n"
"                           view moves: drag or the arrow keys orbit, the\n"
"                           wheel or + and - zoom, Shift with them moves the\n"
"                           sun, r goes back; the last view's options are\n"
"                           printed when it closes (Esc, q)\n"
"      --width N, --height N  pixels, 16..16384 (default 800 x 600)\n"
"      --aa N               N x N samples per pixel, 1..4 (default 2)\n"
"      --azimuth DEG        camera bearing from the centre, 0 north (-Z), 90\n"
"                           east (+X), -360..360 (default 215)\n"
"      --elevation DEG      camera height angle, -89..89 (default 25; below 0\n"
"                           looks up at the terrain from beneath)\n"
"      --distance D         camera distance from the look point, 0.1..1000\n"
"                           (default 9.5, nearer for a wider --fov, or as\n"
"                           far as the whole block needs to fit the\n"
"                           picture; the terrain spans 6)\n"
"      --fov DEG            vertical field of view, 1..150 (default 45)\n"
"      --look Y             height of the point looked at, -10..10 (default 0.2)\n"
"      --sun-azimuth DEG    sun bearing, -360..360 (default 290)\n"
"      --sun-elevation DEG  sun height, -90..90 (default 20: low sun, long\n"
"                           shadows; higher flattens the relief)\n"
"      --no-cull            draw back faces too (the picture is identical)\n"
"      --view V             orbit (the camera above) or map (the whole world\n"
"                           from straight above, north up: hillshade,\n"
"                           materials and water) (default orbit)\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
"\n"
"Exit status: 0 success, 1 runtime failure, 2 usage error, 3 backends\n"
"disagree (--check).\n"
"See worldgen(1) for the formats and examples.\n");
}

/* The --help entry of the long option whose code is 'val', on one line
 * ("--size N vertices per side, 2..65536, ... (default 512)"), in
 * buf[len], for the message of an option given without its value, which
 * had named no range; empty where there is none. */
static void option_help(int val, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *name = NULL;
    for (size_t i = 0; long_opts[i].name && !name; i++)
        if (long_opts[i].val == val && long_opts[i].has_arg)
            name = long_opts[i].name;
    char *text = NULL, key[64];
    size_t n = 0;
    FILE *m = name ? open_memstream(&text, &n) : NULL;
    if (!m)
        return;
    usage(m);
    if (fclose(m) != 0 || !text) {
        free(text);
        return;
    }
    /* At the start of an entry: "      --name" or "  -x, --name". */
    snprintf(key, sizeof key, "\n      --%s ", name);
    const char *at = strstr(text, key);
    if (!at) {
        snprintf(key, sizeof key, ", --%s ", name);
        at = strstr(text, key);
    }
    size_t k = 0;
    /* From "--name" to the next option's line (a '-' in its first
     * columns) or a blank one. */
    for (const char *p = at ? strstr(at, "--") : NULL; p && *p && k + 1 < len;
         p++) {
        if (*p == '\n') {
            const char *q = p + 1;
            while (*q == ' ')
                q++;
            if (*q == '\n' || *q == '\0' || (*q == '-' && q - p <= 8))
                break;
        }
        int blank = *p == ' ' || *p == '\n';
        if (blank && (k == 0 || buf[k - 1] == ' '))
            continue;
        buf[k++] = blank ? ' ' : *p;
    }
    while (k > 0 && buf[k - 1] == ' ')
        k--;
    buf[k] = '\0';
    free(text);
}

/* Parse a whole unsigned number, decimal or 0x hex, in [min, max].  Refuses
 * an empty value, signs, spaces, trailing characters and overflow.  Returns
 * 0, or EXIT_USAGE after printing why. */
static int parse_u64_noted(const char *opt, const char *val, uint64_t min,
                           uint64_t max, const char *note, uint64_t *out)
{
    const char *digits = val;
    int base = 10;
    if (val[0] == '0' && (val[1] == 'x' || val[1] == 'X')) {
        digits = val + 2;
        base = 16;
    }
    int ok = digits[0] != '\0';
    for (const char *p = digits; ok && *p; p++)
        ok = base == 16 ? (strchr("0123456789abcdefABCDEF", *p) != NULL)
                        : (*p >= '0' && *p <= '9');
    if (!ok)
        return usage_error("--%s: '%s' is not a whole number (valid: %" PRIu64
                           "..%" PRIu64 "%s, decimal or 0x hex)", opt, val, min,
                           max, note);
    errno = 0;
    char *end;
    unsigned long long v = strtoull(digits, &end, base);
    if (errno == ERANGE || *end || v < min || v > max)
        return usage_error("--%s: '%s' is out of range (valid: %" PRIu64
                           "..%" PRIu64 "%s)", opt, val, min, max,
                           v < min ? "" : note);
    *out = v;
    return 0;
}

static int parse_u64(const char *opt, const char *val, uint64_t min,
                     uint64_t max, uint64_t *out)
{
    return parse_u64_noted(opt, val, min, max, "", out);
}

static int parse_u32(const char *opt, const char *val, uint32_t min,
                     uint32_t max, uint32_t *out)
{
    uint64_t v;
    int rc = parse_u64(opt, val, min, max, &v);
    if (rc == 0)
        *out = (uint32_t)v;
    return rc;
}

/* Parse a whole decimal number ("35", "-12.5", "1e-3") in [min, max].
 * Refuses an empty value, spaces, trailing characters, nan, inf, and
 * values that overflow or underflow a double.  Returns 0, or EXIT_USAGE
 * after printing why. */
static int parse_float(const char *opt, const char *val, double min,
                       double max, float *out)
{
    char *end;
    errno = 0;
    /* strtod also reads hex ("0x20" would be 32) and infinities: a number
     * option takes decimal alone. */
    const char *digits = val + (val[0] == '-' || val[0] == '+');
    if (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X'))
        return usage_error("--%s: '%s' is not a decimal number (valid: "
                           "%g..%g)", opt, val, min, max);
    double v = strtod(val, &end);
    /* strtod skips leading white space (\v, \f and \r too) and reads "nan"
     * and "inf" as numbers; a number too large for a double (1e999) is
     * infinite too, with ERANGE: out of range, below. */
    if (end == val || *end || isspace((unsigned char)val[0]) ||
        (v - v != 0.0 && errno != ERANGE)) /* nan and inf */
        return usage_error("--%s: '%s' is not a number (valid: %g..%g)", opt,
                           val, min, max);
    /* ERANGE for a tiny value (1e-310, 1e-400) means it underflowed to a
     * subnormal or zero: a number in range like any other, not an
     * overflow. */
    if (errno == ERANGE && fabs(v) <= DBL_MIN)
        errno = 0;
    if (errno == ERANGE || v < min || v > max)
        return usage_error("--%s: '%s' is out of range (valid: %g..%g)", opt,
                           val, min, max);
    *out = (float)v;
    return 0;
}

/* A --size beyond a whole world's limit that a region run may have (in
 * (WG_SIZE_MAX, WG_REGION_SIZE_MAX], decimal or 0x hex): 1 with it in
 * *out, else 0 and nothing said (parse_u32 then says why). */
static int parse_region_size(const char *val, uint32_t *out)
{
    const char *d = val;
    int hex = d[0] == '0' && (d[1] == 'x' || d[1] == 'X');
    d += hex ? 2 : 0;
    if (!*d || d[strspn(d, hex ? "0123456789abcdefABCDEF" : "0123456789")])
        return 0;
    errno = 0;
    unsigned long long v = strtoull(d, NULL, hex ? 16 : 10);
    if (errno || v <= WG_SIZE_MAX || v > WG_REGION_SIZE_MAX)
        return 0;
    *out = (uint32_t)v;
    return 1;
}

/* Parse --region X,Y,W,H: four whole numbers, each decimal or 0x hex as
 * every whole-number option, W and H at least 1 (the world's size is
 * checked by check_region, once every option is known).  Returns 0, or
 * EXIT_USAGE after printing why. */
static int parse_region(const char *val, wg_rect *r)
{
    uint32_t v[4];
    const char *p = val;
    for (int i = 0; i < 4; i++) {
        int hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
        const char *d = p + (hex ? 2 : 0);
        size_t len = strspn(d, hex ? "0123456789abcdefABCDEF" : "0123456789");
        /* More than 9 digits (8 in hex) is beyond any world: check_region
         * says so.  Leading zeros do not count, as they do not for --size
         * ('0000000001' had been taken for beyond the world). */
        const size_t zeros = strspn(d, "0");
        unsigned long long x = len - zeros > (hex ? 8u : 9u)
                                   ? UINT32_MAX
                                   : strtoull(d, NULL, hex ? 16 : 10);
        if (len == 0 || d[len] != (i < 3 ? ',' : '\0'))
            return usage_error("--region: '%s' is not four whole numbers "
                               "X,Y,W,H (valid: columns X..X+W-1 and rows "
                               "Y..Y+H-1 of the world, such as 0,0,256,256)",
                               val);
        v[i] = (uint32_t)x;
        p = d + len + 1;
    }
    if (v[2] == 0 || v[3] == 0)
        return usage_error("--region: '%s' is out of range (valid: W and H "
                           "at least 1, X + W and Y + H at most --size)", val);
    *r = (wg_rect){v[0], v[1], v[2], v[3]};
    return 0;
}

/* --size and --region against each other: a region lies inside the world,
 * and only a region's world may be larger than WG_SIZE_MAX.  Returns -1 to
 * go on, or EXIT_USAGE after printing why. */
static int check_region(const settings *s)
{
    const uint32_t n = s->world.size;
    const wg_rect r = s->region;
    if (!r.w && n > WG_SIZE_MAX)
        return usage_error("--size: '%" PRIu32 "' is out of range (valid: "
                           "%u..%u; up to %u with --region)", n, WG_SIZE_MIN,
                           WG_SIZE_MAX, WG_REGION_SIZE_MAX);
    if (r.w && ((uint64_t)r.x + r.w > n || (uint64_t)r.y + r.h > n))
        return usage_error("--region: '%s' is outside the %" PRIu32 "x%" PRIu32
                           " world (valid: W and H 1..%" PRIu32 ", X + W and "
                           "Y + H at most %" PRIu32 ")", s->region_arg, n, n,
                           n, n);
    return -1;
}

/* The names --mesh accepts, for its error message. */
static void mesh_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; wg_backends[i] && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                                 wg_backends[i]->name);
}

/* Parse --mesh's or --require's comma-separated backend names into a set
 * (bit i: wg_backends[i]); 'all' names every backend, and with 'is_auto'
 * (NULL where auto is not allowed) 'auto' sets *is_auto.  Refuses an empty
 * list or name and an unknown name.  Returns 0, or EXIT_USAGE after
 * printing why. */
static int parse_backends(const char *opt, const char *val, unsigned *set,
                          int *is_auto)
{
    char names[256];
    mesh_names(names, sizeof names);
    *set = 0;
    if (is_auto)
        *is_auto = 0;
    const char *p = val;
    for (;;) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (size_t i = 0; wg_backends[i]; i++)
            if (strlen(wg_backends[i]->name) == len &&
                strncmp(p, wg_backends[i]->name, len) == 0) {
                *set |= 1u << i;
                found = 1;
            }
        if (len == 3 && strncmp(p, "all", 3) == 0) {
            for (size_t i = 0; wg_backends[i]; i++)
                *set |= 1u << i;
            found = 1;
        }
        if (is_auto && len == 4 && strncmp(p, "auto", 4) == 0)
            found = *is_auto = 1;
        if (!found)
            /* In a list, the list too: '' alone had named no value. */
            return usage_error("--%s: '%.*s'%s%s%s%s is not a backend "
                               "(valid: %s, all%s, or a comma-separated "
                               "list of them)", opt, (int)len, p,
                               len ? "" : " (an empty name)",
                               strchr(val, ',') ? " in '" : "",
                               strchr(val, ',') ? val : "",
                               strchr(val, ',') ? "'" : "", names,
                               is_auto ? ", auto" : "");
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* The picture's options against each other.  Returns -1 to go on, or
 * EXIT_USAGE after printing why. */
static int check_picture_args(settings *s)
{
    if (s->no_image && s->out_given)
        return usage_error("--no-image and --out '%s': choose one", s->out);
    if (s->no_image && s->show)
        return usage_error("--show needs the picture: drop --no-image");
    /* The window's timeout, now: a bad one found after the world is made
     * would have cost the whole run. */
    char terr[WG_ERR_LEN];
    if (s->show && wg_window_timeout(&s->show_timeout, terr) != 0)
        return usage_error("--show: %s", terr);
    if (s->no_image)
        s->out = NULL;
    if (s->out && s->out[0] == '\0')
        return usage_error("--out: '' is not a file name (for no picture, "
                           "give --no-image)");
    return -1;
}

/* The OBJ's file name, which the OBJ and its .mtl write into lines of
 * text and beside which they write two more files.  Returns -1 to go on,
 * or EXIT_USAGE after printing why. */
static int check_obj_name(const settings *s)
{
    if (s->obj && strcmp(s->obj, "-") == 0)
        return usage_error("--obj: '-' is not supported: the OBJ names its "
                           ".mtl and texture, which must be files beside it");
    if (s->obj && s->obj[0] == '\0')
        return usage_error("--obj: '' is not a file name");
    /* Nor a device or a descriptor by its own name: FILE.mtl and
     * FILE_albedo.png would be made beside it (/dev/null.mtl in /dev).  A
     * link to one (x.obj to /dev/full) has them beside the link. */
    if (s->obj && wg_outfile_is_device(s->obj))
        return usage_error("--obj: '%s' is a device or a descriptor, not a "
                           "file: the OBJ names its .mtl and texture, which "
                           "must be files beside it", s->obj);
    /* The OBJ names its .mtl, and that its texture, on a line of text: a
     * control character in the file name would break the line.  Spaces
     * are fine (the readers take the rest of the line). */
    const char *base = s->obj ? strrchr(s->obj, '/') : NULL;
    const char *file = base = base ? base + 1 : s->obj;
    for (; base && *base; base++)
        if ((unsigned char)*base < 0x20 || *base == 0x7f) {
            static char shown[4 * 4096 + 4];
            size_t k = 0;
            for (const char *c = s->obj; *c && k < sizeof shown - 8; c++) {
                unsigned char u = (unsigned char)*c;
                if (u == '\n' || u == '\r' || u == '\t')
                    k += (size_t)sprintf(shown + k, "\\%c",
                                         u == '\n' ? 'n' : u == '\r' ? 'r' : 't');
                else if (u < 0x20 || u == 0x7f)
                    k += (size_t)sprintf(shown + k, "\\x%02x", u);
                else
                    shown[k++] = (char)u;
            }
            shown[k] = '\0';
            return usage_error("--obj: '%s': a control character in the file "
                               "name would break the OBJ's mtllib line "
                               "(valid: any name without one; spaces are "
                               "fine)", shown);
        }
    /* Nor a backslash: the readers take it for a folder's end (Blender
     * looked for 'a\b.mtl' as 'b.mtl' in a folder 'a\', and found
     * neither the material nor the texture), and OBJ has no escape. */
    if (file && strchr(file, '\\'))
        return usage_error("--obj: '%s': a backslash in the file name would be "
                           "read as a folder's end on the OBJ's mtllib line "
                           "and the MTL's map_Kd line (valid: any name "
                           "without one)", s->obj);
    return -1;
}

FILE *tables_stream(const settings *s)
{
    const char *outs[] = {s->heightmap, s->watermap, s->sedimentmap, s->json,
                          s->out, s->gltf};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        if (outs[i] && wg_outfile_is_stdout(outs[i]))
            return stderr;
    return stdout;
}

/* Every file the run writes, the side files too (the OBJ's .mtl and
 * texture, the raw maps' headers, the PNG maps' world files), by the
 * option that names it: no two may be one, and only one may be standard
 * output.  Returns -1 to go on, or EXIT_USAGE after printing why. */
static int check_outputs_distinct(const settings *s)
{
    char mtl[4096], tex[4096];
    if (s->obj && wg_obj_siblings(s->obj, mtl, tex, sizeof mtl) != 0)
        return usage_error("--obj: '%s' is too long a path", s->obj);
    /* The raw maps' ENVI headers, beside them. */
    char hdr[3][4096 + 8];
    const struct { const char *opt, *path, *side; } maps[3] = {
        {"heightmap", s->heightmap, s->heightmap ?
             wg_heightmap_sidecar_of(s->heightmap, s->heightmap_format,
                                     hdr[0], sizeof hdr[0]) : NULL},
        {"watermap", s->watermap, s->watermap ?
             wg_heightmap_sidecar_of(s->watermap, s->watermap_format,
                                     hdr[1], sizeof hdr[1]) : NULL},
        {"sedimentmap", s->sedimentmap, s->sedimentmap ?
             wg_heightmap_sidecar_of(s->sedimentmap, s->sedimentmap_format,
                                     hdr[2], sizeof hdr[2]) : NULL},
    };
    /* The PNG maps' world files, beside them. */
    char wld[2][4096 + 8];
    const char *nwld = s->normalmap ? wg_worldfile_of(s->normalmap, wld[0],
                                                      sizeof wld[0]) : NULL;
    const char *awld = s->albedo ? wg_worldfile_of(s->albedo, wld[1],
                                                   sizeof wld[1]) : NULL;
    struct { const char *opt, *path; } outs[] = {
        {"normalmap", s->normalmap}, {"albedo", s->albedo},
        {"normalmap", nwld},         {"albedo", awld},
        {"out", s->out},           {"heightmap", s->heightmap},
        {"watermap", s->watermap}, {"sedimentmap", s->sedimentmap},
        {"json", s->json},
        {"obj", s->obj},           {"obj", s->obj ? mtl : NULL},
        {"obj", s->obj ? tex : NULL}, {"gltf", s->gltf},
        {"heightmap", maps[0].side}, {"watermap", maps[1].side},
        {"sedimentmap", maps[2].side},
    };
    const int nouts = (int)(sizeof outs / sizeof outs[0]);
    for (int i = 0; i < nouts; i++)
        for (int j = i + 1; j < nouts; j++) {
            /* By identity, not spelling: a link, a hard link, ./a.png and
             * /dev/stdout against - name one file twice. */
            const char *a = outs[i].path, *b = outs[j].path;
            if (!a || !b || !wg_outfile_same(a, b))
                continue;
            /* The OBJ's .mtl or texture, whichever side of the pair it
             * is on (--gltf and the headers come after it). */
            const int jo = strcmp(outs[j].opt, "obj") == 0,
                      io = strcmp(outs[i].opt, "obj") == 0;
            if ((jo && b != s->obj) || (io && a != s->obj))
                return usage_error("--obj '%s' writes '%s', which --%s "
                                   "writes too", s->obj, jo ? b : a,
                                   jo ? outs[i].opt : outs[j].opt);
            const char *w = a == nwld || b == nwld ? nwld
                            : a == awld || b == awld ? awld : NULL;
            if (w)
                return usage_error("--%s '%s' writes its world file '%s', "
                                   "which --%s writes too",
                                   w == nwld ? "normalmap" : "albedo",
                                   w == nwld ? s->normalmap : s->albedo, w,
                                   a == w ? outs[j].opt : outs[i].opt);
            for (int k = 0; k < 3; k++)
                if (maps[k].side && (a == maps[k].side || b == maps[k].side))
                    return usage_error("--%s '%s' writes its header '%s', "
                                       "which --%s writes too", maps[k].opt,
                                       maps[k].path, maps[k].side,
                                       b == maps[k].side ? outs[i].opt
                                                         : outs[j].opt);
            return usage_error(wg_outfile_is_stdout(a) &&
                                       wg_outfile_is_stdout(b)
                                   ? "--%s %s and --%s %s both want standard "
                                     "output; send one to a file"
                                   : "--%s '%s' and --%s '%s' are the same "
                                     "file",
                               outs[i].opt, a, outs[j].opt, b);
        }
    /* With an output on standard output the tables go to standard error
     * (--histogram's with -q too): an output that is standard error's
     * file as well (--json /dev/stderr, or --out - with 2>&1 into one
     * file) had them written into it, a PNG or a JSON no reader takes,
     * with exit 0. */
    const int tables = !s->quiet || s->histogram; /* printed at all */
    const char *what = s->quiet ? "--histogram's figures" : "the tables";
    const char *fix = !s->histogram ? "give -q"
                      : s->quiet    ? "leave out --histogram"
                                    : "give -q and leave out --histogram";
    if (tables && tables_stream(s) == stderr) {
        const char *taker = NULL;
        for (int i = 0; i < nouts && !taker; i++)
            if (outs[i].path && wg_outfile_is_stdout(outs[i].path))
                taker = outs[i].opt;
        for (int i = 0; i < nouts; i++) {
            const char *p = outs[i].path;
            if (!p || !wg_outfile_same(p, "/dev/stderr"))
                continue;
            if (wg_outfile_is_stdout(p))
                return usage_error("--%s %s: standard output is standard "
                                   "error's file too (2>&1), where %s go "
                                   "when an output takes standard output; "
                                   "%s, or send --%s to a file", outs[i].opt,
                                   p, what, fix, outs[i].opt);
            return usage_error("--%s %s: %s go to standard error when --%s "
                               "takes standard output; %s, or send --%s to "
                               "a file", outs[i].opt, p, what, taker, fix,
                               outs[i].opt);
        }
    }
    /* Any other output that is standard error's file (--json /dev/stderr,
     * --out - 2>&1 into one file or pipe): worldgen's warnings and errors
     * go there whatever -q says, and a warning had been written into the
     * JSON or the map, with exit 0.  Not where standard error is a sink
     * such as /dev/null, which nothing reads (wg_outfile_is_stderr). */
    for (int i = 0; i < nouts; i++) {
        const char *p = outs[i].path;
        if (p && wg_outfile_is_stderr(p))
            return usage_error(
                wg_outfile_is_stdout(p)
                    ? "--%s %s: standard output is standard error's file "
                      "too (2>&1), where worldgen writes its warnings and "
                      "errors; send one of them elsewhere"
                    : "--%s %s: that is standard error, where worldgen "
                      "writes its warnings and errors; send --%s to a file "
                      "or to standard output (-)",
                outs[i].opt, p, outs[i].opt);
    }
    /* An output that is this program's own file (--out worldgen,
     * --out /proc/self/exe): it had been replaced by the picture, exit
     * 0, the program gone. */
    for (int i = 0; i < nouts; i++)
        if (outs[i].path && wg_outfile_same(outs[i].path, "/proc/self/exe"))
            return usage_error("--%s %s: that is worldgen itself, the program "
                               "running; send --%s to another file",
                               outs[i].opt, outs[i].path, outs[i].opt);
    /* Likewise an output that is standard output's file while the tables
     * go there (--json f > f): the output, renamed into place, replaced
     * the file the tables were written into, and they were lost, with
     * exit 0.  (A device, /dev/null, is never the same file.) */
    if (tables && tables_stream(s) == stdout) {
        for (int i = 0; i < nouts; i++)
            if (outs[i].path && wg_outfile_same(outs[i].path, "/dev/stdout"))
                return usage_error("--%s writes '%s', standard output's "
                                   "file too, where %s go; %s, or send --%s "
                                   "to another file", outs[i].opt,
                                   outs[i].path, what, fix, outs[i].opt);
    }
    return -1;
}

/* WORLDGEN_FAULT's forms: 'rename', 'signal', 'kill', 'kill-placing',
 * 'show', or a
 * backend's name, alone (a height) or with ':water' (a water depth). */
static int fault_known(const char *v)
{
    if (strcmp(v, "rename") == 0 || strcmp(v, "signal") == 0 ||
        strcmp(v, "kill") == 0 || strcmp(v, "kill-placing") == 0 ||
        strcmp(v, "show") == 0)
        return 1;
    for (size_t i = 0; wg_backends[i]; i++) {
        size_t len = strlen(wg_backends[i]->name);
        if (strncmp(v, wg_backends[i]->name, len) == 0 &&
            (v[len] == '\0' || strcmp(v + len, ":water") == 0))
            return 1;
    }
    return 0;
}

/* The variables for tests and measurements that worldgen reads (the
 * manual's ENVIRONMENT), checked with the options: a value they do not
 * know had been taken for unset, so WORLDGEN_VK_VALIDATION=yes ran a CI
 * job without the validation it asked for, and WORLDGEN_VK_EROSION=Single
 * measured the other kernel.  Empty is unset.  Returns -1 to go on, or
 * EXIT_USAGE after naming the variable, the value and the valid ones. */
static int check_environment(void)
{
    static const struct { const char *name, *valid[3]; } vars[] = {
        {"WORLDGEN_VK_VALIDATION", {"0", "1"}},
        {"WORLDGEN_VK_STAGING", {"0", "1"}},
        {"WORLDGEN_VK_TEXELS", {"0", "1"}},
        {"WORLDGEN_VK_EROSION", {"single", "blocked"}},
        {"WORLDGEN_WIDE", {"0", "1"}},
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i].name);
        if (!v || !*v || strcmp(v, vars[i].valid[0]) == 0 ||
            strcmp(v, vars[i].valid[1]) == 0)
            continue;
        return usage_error("%s: '%s' is not a value it takes (valid: %s or "
                           "%s, or unset)", vars[i].name, v, vars[i].valid[0],
                           vars[i].valid[1]);
    }
    const char *fault = getenv("WORLDGEN_FAULT");
    if (fault && *fault && !fault_known(fault)) {
        char names[256];
        mesh_names(names, sizeof names);
        return usage_error("WORLDGEN_FAULT: '%s' is not a fault the tests "
                           "can ask for (valid: rename, signal, kill, "
                           "kill-placing, show, "
                           "a backend (%s), or one with :water, or unset)",
                           fault, names);
    }
    return -1;
}

/* The edit distance of a and b (insertions, deletions, substitutions and
 * swaps of neighbours), for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40)
        return 99;
    size_t d[41][41];
    for (size_t i = 0; i <= la; i++)
        for (size_t j = 0; j <= lb; j++) {
            if (i == 0 || j == 0) {
                d[i][j] = i + j;
                continue;
            }
            size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

/* The message for an option getopt_long refused: 'arg' is the argument it
 * stopped at, 'opt' its optopt.  Names the options an abbreviation could
 * mean, the one a typo was probably meant to be, or says that an option
 * takes no value.  Returns EXIT_USAGE. */
static int bad_option(const char *arg, int opt)
{
    if (opt >= OPT_SIZE || opt == 'q' || opt == 'h' || opt == 'V') {
        for (const struct option *o = long_opts; o->name; o++)
            if (o->val == opt)
                return usage_error("option '--%s' takes no value (given: "
                                   "'%s')", o->name, arg);
    }
    if (opt || strncmp(arg, "--", 2) != 0)
        return usage_error("unknown option '-%c'", opt ? opt : arg[1]);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
    char list[512];
    size_t used = 0, matches = 0;
    list[0] = '\0';
    for (const struct option *o = long_opts; o->name; o++)
        if (name[0] && strncmp(o->name, name, strlen(name)) == 0) {
            matches++;
            used += (size_t)snprintf(list + used, used < sizeof list ?
                                     sizeof list - used : 0, "%s--%s",
                                     used ? ", " : "", o->name);
        }
    if (matches > 1)
        return usage_error("option '--%s' is ambiguous: it could be %s",
                           name, list);
    const char *best = NULL;
    size_t best_d = 99;
    for (const struct option *o = long_opts; o->name; o++) {
        size_t d = edit_distance(name, o->name);
        if (d < best_d) {
            best_d = d;
            best = o->name;
        }
    }
    if (best && best_d <= (strlen(name) < 5 ? 1u : 2u))
        return usage_error("unknown option '--%s'; did you mean '--%s'?",
                           name, best);
    return usage_error("unknown option '%s'", arg);
}

void map_outputs(const settings *s, map_output m[MAP_OUTPUTS])
{
    m[MAP_HEIGHT] = (map_output){"heightmap", s->heightmap,
                                 s->heightmap_format};
    m[MAP_WATER] = (map_output){"watermap", s->watermap, s->watermap_format};
    m[MAP_SEDIMENT] = (map_output){"sedimentmap", s->sedimentmap,
                                   s->sedimentmap_format};
    m[MAP_NORMAL] = (map_output){"normalmap", s->normalmap,
                                 s->normalmap
                                     ? wg_heightmap_format_of_path(s->normalmap)
                                     : WG_HM_NONE};
    m[MAP_ALBEDO] = (map_output){"albedo", s->albedo,
                                 s->albedo ? wg_heightmap_format_of_path(s->albedo)
                                           : WG_HM_NONE};
}

/* --list-devices lists the devices and ends: every other option given
 * does nothing, said (a --json or an --out had been dropped without a
 * word, exit 0). */
static void warn_listing_only(const settings *s)
{
    char names[256] = "";
    size_t len = 0;
    int n = 0;
    for (const struct option *o = long_opts; o->name; o++)
        if (o->val >= OPT_SIZE && o->val < OPT_COUNT &&
            o->val != OPT_LIST_DEVICES && s->given[o->val - OPT_SIZE]) {
            int k = snprintf(names + len, sizeof names - len, "%s--%s",
                             n++ ? ", " : "", o->name);
            if (k < 0 || (size_t)k >= sizeof names - len)
                break;
            len += (size_t)k;
        }
    if (n)
        say("warning: %s %s nothing with --list-devices, which lists the "
            "Vulkan devices and makes no world", names, n > 1 ? "do" : "does");
}

/* Warn about options given that will change nothing in this run, so a
 * user does not wonder why they had no effect. */
static void warn_idle_options(const settings *s)
{
    static const int camera[] = {OPT_WIDTH, OPT_HEIGHT, OPT_AA, OPT_AZIMUTH,
                                 OPT_ELEVATION, OPT_DISTANCE, OPT_FOV,
                                 OPT_LOOK, OPT_SUN_AZIMUTH, OPT_SUN_ELEVATION,
                                 OPT_NO_CULL};
    const char *name[OPT_COUNT - OPT_SIZE] = {0};
    for (const struct option *o = long_opts; o->name; o++)
        if (o->val >= OPT_SIZE && o->val < OPT_COUNT)
            name[o->val - OPT_SIZE] = o->name;
#define GIVEN(opt) (s->given[(opt) - OPT_SIZE])
    /* The last of an option's values is the one used: a value given
     * before it (another output's name, another size) is dropped. */
    for (int k = 0; k < OPT_COUNT - OPT_SIZE; k++)
        if (s->replaced[k])
            say("warning: --%s is given more than once: "
                "the last, '%s', is used, not '%s'", name[k],
                s->value[k], s->replaced[k]);
    for (size_t i = 0; !s->out && i < sizeof camera / sizeof camera[0]; i++)
        if (GIVEN(camera[i]))
            say("warning: --%s does nothing: this run "
                "makes no picture (%s)", name[camera[i] - OPT_SIZE],
                s->no_image ? "--no-image" : "give --out FILE for one");
    if (!s->out && GIVEN(OPT_VIEW))
        say("warning: --view does nothing: this run "
            "makes no picture");
    /* The camera as far as it may stand, and the block still wider than
     * the frame (a picture 16 wide and 4096 tall): cut at its edges, said
     * (it had been drawn so without a word). */
    if (s->out && s->render.view == WG_VIEW_ORBIT && s->distance_needed > 0)
        say("warning: the whole block would fit a %" PRIu32 "x%" PRIu32
            " picture at --distance %.0f; the camera stands at %.0f, "
            "the farthest, and the frame cuts the block (a wider "
            "--width, or a wider --fov, shows it whole)",
            s->render.width, s->render.height, (double)s->distance_needed,
            (double)WG_CAMERA_DISTANCE_MAX);
    /* The map is seen from straight above: no camera to place. */
    static const int orbit[] = {OPT_AZIMUTH, OPT_ELEVATION, OPT_DISTANCE,
                                OPT_FOV, OPT_LOOK, OPT_NO_CULL};
    for (size_t i = 0; s->out && s->render.view == WG_VIEW_MAP &&
                       i < sizeof orbit / sizeof orbit[0]; i++)
        if (GIVEN(orbit[i]))
            say("warning: --%s does nothing with --view "
                "map (the map is seen from straight above)",
                name[orbit[i] - OPT_SIZE]);
    /* Which backends can run: auto may choose any. */
    unsigned may = s->mesh_auto ? ~0u : s->mesh_set | (s->check ? 1u : 0u);
    int vulkan = 0, openmp = 0;
    for (size_t i = 0; wg_backends[i]; i++) {
        vulkan |= (may & 1u << i) && wg_backends[i] == &wg_backend_vulkan;
        openmp |= (may & 1u << i) && wg_backends[i] == &wg_backend_openmp;
    }
    if (!vulkan && (GIVEN(OPT_GPU) || GIVEN(OPT_POWER)))
        say("warning: --%s does nothing: --mesh %s "
            "runs no Vulkan backend", GIVEN(OPT_GPU) ? "gpu" : "power",
            s->mesh);
    if (!openmp && !s->out && GIVEN(OPT_THREADS))
        say("warning: --threads does nothing: --mesh "
            "%s runs no threaded backend and there is no picture",
            s->mesh);
    if (GIVEN(OPT_GLTF_ERROR) && !s->gltf)
        say("warning: --gltf-error does nothing without "
            "--gltf");
    if (s->gltf && !GIVEN(OPT_GLTF_ERROR) && s->world.size > 2049)
        say("note: --gltf keeps all %" PRIu32 "x%" PRIu32
            " grid vertices; --gltf-error 0.001 makes a file some 20 "
            "times smaller", s->world.size, s->world.size);
    if (GIVEN(OPT_HEIGHTMAP_FORMAT) && !s->heightmap && !s->watermap &&
        !s->sedimentmap)
        say("warning: --heightmap-format does nothing "
            "without --heightmap, --watermap or --sedimentmap");
    /* Without the hydraulic stage no ground moves (SPEC.md: sediment =
     * 0): the map is written, all zeros, which is likely not what was
     * meant. */
    if (s->sedimentmap && s->world.steps == 0)
        say("warning: --sedimentmap '%s' is all zeros: "
            "--hydraulic 0 moves no sediment", s->sedimentmap);
    if (s->check && !s->mesh_auto && s->mesh_set == 1u)
        say("warning: --check does nothing with --mesh "
            "scalar: there is no other backend to compare");
#undef GIVEN
    /* A name with another extension (not a device such as /dev/null). */
    const char *base = s->out ? strrchr(s->out, '/') : NULL;
    base = base ? base + 1 : s->out;
    const char *dot = base ? strrchr(base, '.') : NULL;
    if (dot && dot != base && strcasecmp(dot, ".png") != 0)
        say("warning: --out '%s': the picture is a "
            "PNG whatever the name says", s->out);
    /* A map's name whose extension says another format than the one
     * --heightmap-format gave it. */
    map_output maps[MAP_OUTPUTS];
    map_outputs(s, maps);
    static const char *const upper[] = {"", "PFM", "PNG", "R16", "TIFF"};
    for (size_t i = 0; i < MAP_HEIGHT_LIKE; i++) {
        wg_hm_format named =
            maps[i].path ? wg_heightmap_format_of_path(maps[i].path) : WG_HM_NONE;
        if (named != WG_HM_NONE && named != maps[i].f)
            say("warning: --%s '%s': the map is %s (--heightmap-format) "
                "whatever the name says", maps[i].opt, maps[i].path,
                upper[maps[i].f]);
    }
    /* The same for the glTF, which is binary: a .gltf file is read as the
     * JSON form by every importer, and this one would not parse. */
    base = s->gltf ? strrchr(s->gltf, '/') : NULL;
    base = base ? base + 1 : s->gltf;
    dot = base ? strrchr(base, '.') : NULL;
    if (dot && dot != base && strcasecmp(dot, ".glb") != 0)
        say("warning: --gltf '%s': the file is binary "
            "glTF (.glb) whatever the name says%s", s->gltf,
            strcasecmp(dot, ".gltf") == 0 ? "; importers read a .gltf "
            "name as the JSON form" : "");
}

/* --help, --version or --list-devices: they act once every option has
 * been read and checked, alone and with the others (a bad value anywhere
 * on the line is still a usage error, exit 2), so that 'worldgen OPTIONS
 * --version' checks a command line without running it.  Returns the exit
 * status. */
static int act(int action)
{
    if (action == 'h') {
        usage(stdout);
        return 0;
    }
    if (action == 'V') {
        printf("worldgen %s (field spec %d)\n", WG_VERSION, WG_SPEC_VERSION);
        return 0;
    }
    char err[WG_ERR_LEN];
    if (wg_vulkan_list_devices(stdout, err) != 0) {
        say("--list-devices: %s", err);
        return 1;
    }
    return 0;
}

/* The orbit camera's distance when --distance is not given: the
 * default's, unless the block (6 units across, from its floor to the
 * highest a field can reach, 1) would then reach past the frame; then the
 * least that keeps it 4% of the half-frame inside, rounded up to a
 * hundredth so the picture's provenance says it short and exactly, and
 * no farther than --distance may be (--fov 1 in a picture 16 wide needs
 * 124681: the provenance's command line would have been refused).
 * A lens wider than the default's comes nearer, as far as keeps the
 * block about as large in the picture (the default distance times the
 * ratio of the half-angles' tangents), never nearer than the fit, which
 * keeps the camera outside the block: at the default's 9.5, --fov 90 had
 * drawn the world a third of the picture wide, --fov 150 70 pixels of
 * 800. */
static float fitted_distance(const wg_render_opts *o, float *needed)
{
    const float lo[3] = {-3.0f, WG_BLOCK_FLOOR, -3.0f};
    const float hi[3] = {3.0f, 1.0f, 3.0f};
    const float fit = wg_camera_fit(&o->cam, o->width, o->height, lo, hi, 0.04f);
    const double d = ceil((double)fit * 100.0) / 100.0;
    const wg_camera *dc = &wg_render_defaults.cam;
    double dflt = dc->distance;
    if (o->cam.fov > dc->fov)
        dflt = ceil(dflt * wg_camera_half_tan(dc->fov) /
                    wg_camera_half_tan(o->cam.fov) * 100.0) / 100.0;
    *needed = d > WG_CAMERA_DISTANCE_MAX ? (float)d : 0.0f;
    return d > WG_CAMERA_DISTANCE_MAX ? (float)WG_CAMERA_DISTANCE_MAX
           : d > dflt ? (float)d
                      : (float)dflt;
}

/* A number option's value as a number: a whole number (decimal or 0x
 * hex) exactly, else a decimal one; 0 where it is neither (a refused
 * value, said by its parser). */
static int number_of(const char *v, unsigned long long *whole, double *real,
                     int *is_whole)
{
    const int hex = v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
    const char *d = v + (hex ? 2 : 0);
    const char *digits = hex ? "0123456789abcdefABCDEF" : "0123456789";
    char *end;
    errno = 0;
    if (*d && !d[strspn(d, digits)]) {
        *whole = strtoull(d, NULL, hex ? 16 : 10);
        *real = (double)*whole;
        *is_whole = 1;
        return errno == 0;
    }
    *is_whole = 0;
    *real = strtod(v, &end);
    return !hex && end != v && !*end && !isspace((unsigned char)v[0]) &&
           isfinite(*real);
}

/* Whether a and b are one value of option c, for the warning of an option
 * given twice: the same text, or for a number option the same number
 * (16 and 0x10, 0.5 and .50), which changes nothing. */
static int same_value(int c, const char *a, const char *b)
{
    static const int numbers[] = {
        OPT_SIZE, OPT_SEED, OPT_OCTAVES, OPT_EROSION, OPT_HYDRAULIC,
        OPT_SEA_LEVEL, OPT_THREADS, OPT_WIDTH, OPT_HEIGHT, OPT_AA,
        OPT_AZIMUTH, OPT_ELEVATION, OPT_DISTANCE, OPT_FOV, OPT_LOOK,
        OPT_SUN_AZIMUTH, OPT_SUN_ELEVATION, OPT_GLTF_ERROR};
    if (strcmp(a, b) == 0)
        return 1;
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        if (numbers[i] != c)
            continue;
        unsigned long long wa, wb;
        double ra, rb;
        int ia, ib;
        if (!number_of(a, &wa, &ra, &ia) || !number_of(b, &wb, &rb, &ib))
            return 0;
        return ia && ib ? wa == wb : ra == rb;
    }
    return 0;
}

/* What a parse_*_option says of an option that is not of its group. */
enum { NOT_MINE = -2 };

/* The World options (the help's sections, in its order) into s.  Returns
 * 0, EXIT_USAGE after printing why, or NOT_MINE. */
static int parse_world_option(settings *s, int c, const char *val)
{
    int rc;
    switch (c) {
    case OPT_SIZE: {
        /* Beyond a whole world's limit only with --region (which may
         * come later: check_region). */
        if (parse_region_size(val, &s->world.size))
            return 0;
        /* Say the larger limit too: a user past both needs it. */
        char note[64];
        uint64_t v;
        snprintf(note, sizeof note, "; up to %u with --region",
                 WG_REGION_SIZE_MAX);
        rc = parse_u64_noted("size", val, WG_SIZE_MIN, WG_SIZE_MAX, note, &v);
        if (rc == 0)
            s->world.size = (uint32_t)v;
        return rc;
    }
    case OPT_SEED:
        return parse_u64("seed", val, 0, UINT64_MAX, &s->world.seed);
    case OPT_OCTAVES:
        return parse_u32("octaves", val, 1, WG_MAX_OCTAVES, &s->world.octaves);
    case OPT_EROSION:
        s->passes_given = 1;
        return parse_u32("erosion", val, 0, WG_EROSION_MAX, &s->world.passes);
    case OPT_HYDRAULIC:
        s->steps_given = 1;
        return parse_u32("hydraulic", val, 0, WG_HYDRAULIC_MAX,
                         &s->world.steps);
    case OPT_SEA_LEVEL:
        rc = parse_float("sea-level", val, 0, 1, &s->world.sea);
        /* SPEC.md's SEA: "-0" is the sea level 0, and so is a level below
         * the stage's flush (1e-45 had been reported in the JSON and drawn
         * by the renderer while the fields used 0). */
        s->world.sea = wg_sea_of(s->world.sea);
        return rc;
    case OPT_REGION:
        s->region_arg = val;
        return parse_region(val, &s->region);
    }
    return NOT_MINE;
}

/* The Backends options into s (--list-devices is an action:
 * parse_action_option).  Returns 0, EXIT_USAGE after printing why, or
 * NOT_MINE. */
static int parse_backend_option(settings *s, int c, const char *val)
{
    int rc;
    switch (c) {
    case OPT_MESH:
        s->mesh = val;
        return parse_backends("mesh", val, &s->mesh_set, &s->mesh_auto);
    case OPT_REQUIRE:
        s->require = val;
        return parse_backends("require", val, &s->require_set, NULL);
    case OPT_THREADS: {
        uint32_t t;
        rc = parse_u32("threads", val, 1, 1024, &t);
        if (rc == 0)
            s->threads = (int)t;
        return rc;
    }
    case OPT_POWER:
        if (strcmp(val, "high-performance") == 0)
            s->power = WG_POWER_HIGH;
        else if (strcmp(val, "low-power") == 0)
            s->power = WG_POWER_LOW;
        else
            return usage_error("--power: '%s' is not a preference (valid: "
                               "high-performance, low-power)", val);
        return 0;
    case OPT_GPU:
        if (val[0] == '\0')
            return usage_error("--gpu: '' names no device (valid: an "
                               "index or a name substring, see "
                               "--list-devices)");
        s->gpu = val;
        return 0;
    case OPT_CHECK:
        s->check = 1;
        return 0;
    }
    return NOT_MINE;
}

/* The Output options into s.  Returns 0, EXIT_USAGE after printing why, or
 * NOT_MINE. */
static int parse_output_option(settings *s, int c, const char *val)
{
    switch (c) {
    case OPT_JSON:
        if (val[0] == '\0') /* refused now, not after the world */
            return usage_error("--json: '' is not a file name ('-' is "
                               "standard output)");
        s->json = val;
        return 0;
    case OPT_HISTOGRAM:
        s->histogram = 1;
        return 0;
    case OPT_HEIGHTMAP_FORMAT:
        s->heightmap_format = wg_heightmap_format_named(val);
        if (s->heightmap_format == WG_HM_NONE)
            return usage_error("--heightmap-format: '%s' is not a height "
                               "map format (valid: pfm, png, r16 or raw, tif or "
                               "tiff)", val);
        return 0;
    case OPT_HEIGHTMAP:
    case OPT_WATERMAP:
    case OPT_SEDIMENTMAP:
        /* Refused now, as --json's and --gltf's: with --heightmap-format
         * it had reached the writer, a runtime failure (exit 1) found
         * after the options. */
        if (val[0] == '\0')
            return usage_error("--%s: '' is not a file name ('-' is "
                               "standard output)",
                               c == OPT_HEIGHTMAP  ? "heightmap"
                               : c == OPT_WATERMAP ? "watermap"
                                                   : "sedimentmap");
        *(c == OPT_HEIGHTMAP  ? &s->heightmap
          : c == OPT_WATERMAP ? &s->watermap
                              : &s->sedimentmap) = val;
        return 0;
    case OPT_NORMALMAP:
    case OPT_ALBEDO: {
        wg_hm_format f = wg_heightmap_format_of_path(val);
        if (f != WG_HM_PNG && f != WG_HM_TIF)
            return usage_error("--%s: '%s' is not a .png or .tif file "
                               "name (the extension gives the format)",
                               c == OPT_ALBEDO ? "albedo" : "normalmap", val);
        if (c == OPT_ALBEDO)
            s->albedo = val;
        else
            s->normalmap = val;
        return 0;
    }
    case OPT_OBJ:
        s->obj = val;
        return 0;
    case OPT_GLTF:
        if (val[0] == '\0')
            return usage_error("--gltf: '' is not a file name ('-' is "
                               "standard output)");
        s->gltf = val;
        return 0;
    case OPT_GLTF_ERROR:
        return parse_float("gltf-error", val, 0, WG_GLTF_ERROR_MAX,
                           &s->gltf_error);
    case 'q':
        s->quiet = 1;
        return 0;
    }
    return NOT_MINE;
}

/* The Picture options into s.  Returns 0, EXIT_USAGE after printing why,
 * or NOT_MINE. */
static int parse_picture_option(settings *s, int c, const char *val)
{
    wg_render_opts *r = &s->render;
    switch (c) {
    case OPT_OUT:
        s->out = val;
        s->out_given = 1;
        return 0;
    case OPT_NO_IMAGE:
        s->no_image = 1;
        return 0;
    case OPT_SHOW:
        s->show = 1;
        return 0;
    case OPT_WIDTH:
        return parse_u32("width", val, WG_RENDER_SIDE_MIN, WG_RENDER_SIDE_MAX,
                         &r->width);
    case OPT_HEIGHT:
        return parse_u32("height", val, WG_RENDER_SIDE_MIN,
                         WG_RENDER_SIDE_MAX, &r->height);
    case OPT_AA:
        return parse_u32("aa", val, 1, WG_RENDER_AA_MAX, &r->aa);
    case OPT_AZIMUTH:
        return parse_float("azimuth", val, -WG_AZIMUTH_MAX, WG_AZIMUTH_MAX,
                           &r->cam.azimuth);
    case OPT_ELEVATION:
        return parse_float("elevation", val, -WG_CAMERA_ELEVATION_MAX,
                           WG_CAMERA_ELEVATION_MAX, &r->cam.elevation);
    case OPT_DISTANCE:
        s->distance_given = 1;
        return parse_float("distance", val, WG_CAMERA_DISTANCE_MIN,
                           WG_CAMERA_DISTANCE_MAX, &r->cam.distance);
    case OPT_FOV:
        return parse_float("fov", val, 1, 150, &r->cam.fov);
    case OPT_LOOK:
        return parse_float("look", val, -10, 10, &r->cam.look);
    case OPT_SUN_AZIMUTH:
        return parse_float("sun-azimuth", val, -WG_AZIMUTH_MAX,
                           WG_AZIMUTH_MAX, &r->sun_azimuth);
    case OPT_SUN_ELEVATION:
        return parse_float("sun-elevation", val, -WG_SUN_ELEVATION_MAX,
                           WG_SUN_ELEVATION_MAX, &r->sun_elevation);
    case OPT_NO_CULL:
        r->cull = 0;
        return 0;
    case OPT_VIEW:
        if (wg_render_view_parse(val, &r->view) != 0)
            return usage_error("--view: '%s' is not a view (valid: orbit, "
                               "map)", val);
        return 0;
    }
    return NOT_MINE;
}

/* --help, --version and --list-devices: noted in *action (the first of
 * --help and --version; act() runs it once every option is checked).
 * Returns 0, or NOT_MINE. */
static int parse_action_option(int c, int *action)
{
    switch (c) {
    case OPT_LIST_DEVICES:
        *action = c;
        return 0;
    case 'h':
    case 'V':
        *action = *action ? *action : c; /* the first of them */
        return 0;
    }
    return NOT_MINE;
}

/* Read every option on the command line into s, each checked alone, and
 * which action (--help, --version, --list-devices) it asks for into
 * *action.  Returns -1 to go on, or EXIT_USAGE after printing why. */
static int read_options(int argc, char **argv, settings *s, int *action)
{
    *s = defaults;
    s->render = wg_render_defaults;
    opterr = 0; /* our messages name the option and the valid values */
    int c;
    while ((c = getopt_long(argc, argv, ":qhV", long_opts, NULL)) != -1) {
        if (c >= OPT_SIZE && c < OPT_COUNT) {
            const int k = c - OPT_SIZE;
            if (optarg && s->given[k] && !s->replaced[k] &&
                !same_value(c, s->value[k], optarg))
                s->replaced[k] = s->value[k];
            s->given[k] = 1;
            s->value[k] = optarg;
        }
        if (c == ':') {
            char help[400];
            option_help(optopt, help, sizeof help);
            return usage_error("option '%s' needs a value%s%s",
                               argv[optind - 1], help[0] ? ": " : "", help);
        }
        int rc = parse_world_option(s, c, optarg);
        if (rc == NOT_MINE)
            rc = parse_backend_option(s, c, optarg);
        if (rc == NOT_MINE)
            rc = parse_output_option(s, c, optarg);
        if (rc == NOT_MINE)
            rc = parse_picture_option(s, c, optarg);
        if (rc == NOT_MINE)
            rc = parse_action_option(c, action);
        if (rc == NOT_MINE)
            return bad_option(argv[optind - 1], optopt);
        if (rc)
            return rc;
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    return -1;
}

/* The defaults that follow other options: the counts not given follow the
 * resolution, so that every size makes the same landscape (SPEC.md,
 * "Defaults in world terms"); and a distance not given is the default, or
 * farther where the whole block would not fit the frame (a camera high
 * above it, a narrow --fov, a tall picture) and was cut at the frame's
 * edges. */
static void settle_defaults(settings *s)
{
    if (!s->passes_given)
        s->world.passes = wg_default_passes(s->world.size);
    if (!s->steps_given)
        s->world.steps = wg_default_steps(s->world.size);
    if (!s->distance_given)
        s->render.cam.distance =
            fitted_distance(&s->render, &s->distance_needed);
}

/* A map's format: --heightmap-format for '-' or to override, else its
 * extension.  Returns -1 to go on, or EXIT_USAGE after printing why. */
static int settle_map_formats(settings *s)
{
    struct { const char *opt, *path; wg_hm_format *f; } maps[] = {
        {"heightmap", s->heightmap, &s->heightmap_format},
        {"watermap", s->watermap, &s->watermap_format},
        {"sedimentmap", s->sedimentmap, &s->sedimentmap_format},
    };
    const wg_hm_format given = s->heightmap_format;
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        if (!maps[i].path)
            continue;
        *maps[i].f = given;
        if (*maps[i].f != WG_HM_NONE)
            continue;
        if (strcmp(maps[i].path, "-") == 0)
            return usage_error("--%s -: give the format with "
                               "--heightmap-format (pfm, png, r16 or tif)",
                               maps[i].opt);
        *maps[i].f = wg_heightmap_format_of_path(maps[i].path);
        if (*maps[i].f == WG_HM_NONE)
            return usage_error("--%s: '%s' has no known extension "
                               "(valid: .pfm, .png, .r16 or .raw, .tif or "
                               ".tiff, in any case; or give "
                               "--heightmap-format)", maps[i].opt,
                               maps[i].path);
    }
    return -1;
}

/* The outputs against the world: the picture and the meshes show the
 * whole world (a region run, a tile, writes its maps and its JSON); no
 * PNG map too large for its readers.  Returns -1 to go on, or EXIT_USAGE
 * after printing why. */
static int check_outputs_fit(const settings *s)
{
    const char *whole = s->out_given ? "--out" : s->obj ? "--obj"
                        : s->gltf ? "--gltf" : s->show ? "--show" : NULL;
    if (s->region.w && whole)
        return usage_error("%s with --region %s: the picture and the meshes "
                           "are made of whole worlds; a region run writes "
                           "--heightmap, --watermap, --sedimentmap, "
                           "--normalmap, --albedo and --json", whole,
                           s->region_arg);
    /* libpng's readers (GDAL's among them) open no PNG over a million
     * pixels a side, so none is written: refused now, not after the
     * world is made. */
    const uint32_t mw = s->region.w ? s->region.w : s->world.size,
                   mh = s->region.w ? s->region.h : s->world.size;
    map_output pngs[MAP_OUTPUTS];
    map_outputs(s, pngs);
    for (size_t i = 0; i < MAP_OUTPUTS; i++)
        if (pngs[i].path && pngs[i].f == WG_HM_PNG &&
            (mw > WG_PNG_MAX || mh > WG_PNG_MAX))
            return usage_error("--%s %s: a PNG of %" PRIu32 " x %" PRIu32
                               " pixels; PNG readers (libpng, GDAL) open at "
                               "most %d a side (valid: up to %d, or write "
                               ".tif%s)", pngs[i].opt, pngs[i].path, mw, mh,
                               WG_PNG_MAX, WG_PNG_MAX,
                               i < MAP_HEIGHT_LIKE ? ", .pfm or .r16" : "");
    return -1;
}

/* A picture nobody asked for is not made when the run makes other
 * outputs: a pipeline's data on standard output, --json for CI, a height
 * map.  world.png is the default of a run that asks for nothing else. */
static void settle_picture(settings *s)
{
    if (!s->out_given && !s->show &&
        (s->heightmap || s->watermap || s->sedimentmap || s->json || s->obj ||
         s->gltf || s->normalmap || s->albedo || s->region.w))
        s->out = NULL;
}

/* Binary data on a terminal is garbage on the screen and can leave the
 * terminal in a strange state: no binary output to a terminal, standard
 * output or any other (/dev/stderr, /dev/tty: only standard output's had
 * been refused).  Returns -1 to go on, or EXIT_USAGE after printing why. */
static int check_binary_terminal(const settings *s)
{
    const struct { const char *opt, *path, *what; } bins[] = {
        {"out", s->out, "a PNG picture"},
        {"heightmap", s->heightmap, "a binary height map"},
        {"watermap", s->watermap, "a binary water map"},
        {"sedimentmap", s->sedimentmap, "a binary sediment map"},
        {"gltf", s->gltf, "binary glTF"},
    };
    for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++) {
        if (!bins[i].path || !wg_outfile_is_terminal(bins[i].path))
            continue;
        if (wg_outfile_is_stdout(bins[i].path))
            return usage_error("--%s %s: standard output is a terminal; "
                               "worldgen does not write %s to it (redirect "
                               "it to a file or a pipe)", bins[i].opt,
                               bins[i].path, bins[i].what);
        return usage_error("--%s %s: that is a terminal; worldgen does not "
                           "write %s to one (give a file or a pipe)",
                           bins[i].opt, bins[i].path, bins[i].what);
    }
    return -1;
}

/* --require against --mesh: every backend it names must be one --mesh
 * runs (or scalar with --check).  Returns -1 to go on, or EXIT_USAGE
 * after printing why. */
static int check_require(const settings *s)
{
    if (s->require_set && !s->mesh_auto &&
        (s->require_set & ~(s->mesh_set | (s->check ? 1u : 0u))))
        return usage_error("--require %s: --mesh %s does not run every "
                           "backend it names", s->require, s->mesh);
    /* auto's choice is made by speed, on the machine and the size: what
     * it runs cannot be required (it was a failure, exit 1, or not,
     * depending on where the same command ran). */
    if (s->require_set && s->mesh_auto &&
        (s->require_set & ~(s->check ? 1u : 0u)))
        return usage_error("--require %s: --mesh auto runs whichever backend "
                           "is fastest here, which it may not be; name the "
                           "backends to run: --mesh %s", s->require,
                           s->require);
    return -1;
}

int parse_args(int argc, char **argv, settings *s)
{
    int action = 0; /* 'h', 'V' or OPT_LIST_DEVICES */
    int rc = read_options(argc, argv, s, &action);
    if (rc >= 0)
        return rc;
    rc = check_region(s);
    if (rc >= 0)
        return rc;
    settle_defaults(s);
    rc = settle_map_formats(s);
    if (rc < 0)
        rc = check_outputs_fit(s);
    if (rc >= 0)
        return rc;
    settle_picture(s);
    char gerr[WG_ERR_LEN];
    if (s->gltf && wg_gltf_check(s->world.size, s->gltf_error, gerr) != 0)
        return usage_error("--gltf: %s", gerr);
    rc = check_binary_terminal(s);
    if (rc < 0)
        rc = check_require(s);
    if (rc < 0)
        rc = check_picture_args(s);
    if (rc < 0)
        rc = check_obj_name(s);
    if (rc < 0)
        rc = check_outputs_distinct(s);
    /* The environment is not the command line: --help shows the help
     * whatever it holds (the message's "Try 'worldgen --help'" too). */
    if (rc < 0 && action != 'h')
        rc = check_environment();
    if (rc < 0 && action == OPT_LIST_DEVICES)
        warn_listing_only(s);
    if (rc < 0 && action)
        return act(action);
    if (rc < 0)
        warn_idle_options(s);
    return rc;
}
