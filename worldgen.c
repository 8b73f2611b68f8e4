/* worldgen.c: the command line.  Parse and check the options, make the
 * world on the chosen backends, report, write the outputs; nothing else.
 *
 * Exit status: 0 success, 1 a runtime failure (a file that cannot be
 * written, no Vulkan device, not enough memory), 2 a usage error (a bad
 * option or value), 130/143 interrupted. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/vulkan.h"
#include "render/geotiff.h"
#include "render/gltf.h"
#include "render/heightmap.h"
#include "render/obj.h"
#include "render/outfile.h"
#include "render/png.h"
#include "render/render.h"
#include "render/report.h"
#include "render/stats.h"
#include "render/window.h"

#ifndef WG_VERSION
#define WG_VERSION "dev"
#endif

enum { EXIT_USAGE = 2, EXIT_DISAGREE = 3 };

enum {
    OPT_SIZE = 256,
    OPT_SEED,
    OPT_OCTAVES,
    OPT_EROSION,
    OPT_HYDRAULIC,
    OPT_SEA_LEVEL,
    OPT_WATERMAP,
    OPT_MESH,
    OPT_HISTOGRAM,
    OPT_HEIGHTMAP,
    OPT_HEIGHTMAP_FORMAT,
    OPT_THREADS,
    OPT_CHECK,
    OPT_JSON,
    OPT_POWER,
    OPT_GPU,
    OPT_LIST_DEVICES,
    OPT_OUT,
    OPT_NO_IMAGE,
    OPT_WIDTH,
    OPT_HEIGHT,
    OPT_AA,
    OPT_AZIMUTH,
    OPT_ELEVATION,
    OPT_DISTANCE,
    OPT_FOV,
    OPT_LOOK,
    OPT_SUN_AZIMUTH,
    OPT_SUN_ELEVATION,
    OPT_NO_CULL,
    OPT_OBJ,
    OPT_SHOW,
    OPT_REQUIRE,
    OPT_VIEW,
    OPT_GLTF,
    OPT_GLTF_ERROR,
    OPT_REGION,
    OPT_NORMALMAP,
    OPT_ALBEDO,
    OPT_SEDIMENTMAP,
    OPT_COUNT
};

/* Everything the command line decides, with the defaults. */
typedef struct settings {
    wg_world world;
    const char *mesh;              /* --mesh as given, for messages */
    unsigned mesh_set;             /* bit i: wg_backends[i] is named */
    int mesh_auto;                 /* --mesh names auto */
    const char *require;           /* --require as given */
    unsigned require_set;          /* the backends that must run */
    int passes_given;              /* --erosion was on the command line */
    int steps_given;               /* --hydraulic was on the command line */
    const char *heightmap;
    wg_hm_format heightmap_format; /* from --heightmap-format, or NONE */
    const char *watermap;          /* --watermap FILE, in heightmap_format's
                                      family: its own extension decides */
    wg_hm_format watermap_format;
    const char *sedimentmap;       /* --sedimentmap FILE, the same family */
    wg_hm_format sedimentmap_format;
    const char *normalmap;         /* --normalmap FILE.png or FILE.tif */
    const char *albedo;            /* --albedo FILE.png or FILE.tif */
    const char *json;              /* --json FILE, "-" for stdout */
    int threads;                   /* 0: all cores, or OMP_NUM_THREADS */
    int check;                     /* exit 3 when a backend disagrees */
    wg_power power;                /* --power: which kind of GPU */
    const char *gpu;               /* --gpu: index or name substring */
    int histogram;
    int quiet;
    wg_render_opts render;         /* the picture: camera, sun, size */
    const char *out;               /* --out FILE, "-" for stdout */
    int out_given;                 /* --out was on the command line */
    int distance_given;            /* --distance was on the command line */
    int no_image;                  /* --no-image: no picture at all */
    const char *obj;               /* --obj FILE, or NULL */
    const char *gltf;              /* --gltf FILE.glb, or NULL */
    float gltf_error;              /* --gltf-error: 0, every grid vertex */
    int show;                      /* --show: the picture in a window */
    long show_timeout;             /* WORLDGEN_SHOW_TIMEOUT_MS, -1: none */
    wg_rect region;                /* --region X,Y,W,H; w = 0: the world */
    const char *region_arg;        /* --region as given, for messages */
    unsigned char given[OPT_COUNT - OPT_SIZE]; /* which options were given */
    /* An option given again with another value: the value it replaced
     * (the first that differs), and the one used, for a warning. */
    const char *replaced[OPT_COUNT - OPT_SIZE];
    const char *value[OPT_COUNT - OPT_SIZE];
} settings;

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
"      --seed S             unsigned 64-bit seed, decimal or 0x hex (default 1234)\n"
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
"      --mesh LIST          the backends to run, comma-separated:");
    for (size_t i = 0; wg_backends[i]; i++)
        fprintf(fp, "%s %s", i ? "," : "", wg_backends[i]->name);
    fprintf(fp, ",\n"
"                           all (every one, each compared with scalar) or\n"
"                           auto (the fastest here for this world); in a\n"
"                           list, one not available here is skipped with a\n"
"                           'skip' line, and one named alone is an error\n"
"                           (default auto)\n"
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
"                           (16-bit grey), FILE.r16 (raw uint16 LE) or\n"
"                           FILE.tif (float32 GeoTIFF); .pfm and .r16 get an\n"
"                           ENVI header for GDAL beside them (FILE.r16.hdr);\n"
"                           '-' is standard output (the tables then go to\n"
"                           stderr)\n"
"      --heightmap-format F pfm, png, r16 or tif: the format for '-' or to\n"
"                           override the extension\n"
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
"      --gltf FILE          also write the terrain and its water as binary\n"
"                           glTF 2.0 (FILE.glb, the texture inside; '-' is\n"
"                           standard output) for Blender, Godot, Unity\n"
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
"                           (default 9.5, or as far as the whole block needs\n"
"                           to fit the picture; the terrain spans 6)\n"
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

/* Print "worldgen: " and the message made from fmt, then a newline, to
 * standard error.  Messages quote values and paths as given: a control
 * character in one (an escape sequence, a newline, a carriage return) is
 * shown as \xNN, so it can neither drive the terminal nor forge a line. */
static void vsay(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    char small[1024], *msg = small;
    int len = vsnprintf(small, sizeof small, fmt, ap);
    if (len >= (int)sizeof small && (msg = malloc((size_t)len + 1)) != NULL) {
        vsnprintf(msg, (size_t)len + 1, fmt, again);
    } else if (len < 0) {
        snprintf(small, sizeof small, "%s", fmt); /* an encoding error */
    } else if (len >= (int)sizeof small) {
        msg = small; /* no memory: cut short, better than nothing */
    }
    va_end(again);
    fputs("worldgen: ", stderr);
    for (const char *p = msg; *p; p++) {
        unsigned char u = (unsigned char)*p;
        if (u < 0x20 || u == 0x7f)
            fprintf(stderr, "\\x%02x", u);
        else
            fputc(u, stderr);
    }
    fputc('\n', stderr);
    if (msg != small)
        free(msg);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

/* A usage error: the message, a pointer to --help, and EXIT_USAGE. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    fputs("Try 'worldgen --help' for more information.\n", stderr);
    return EXIT_USAGE;
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
            return usage_error("--%s: '%.*s'%s is not a backend (valid: "
                               "%s, all%s, or a comma-separated list of "
                               "them)", opt, (int)len, p,
                               len ? "" : " (an empty name)", names,
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

/* Every file the run writes, the side files too (the OBJ's .mtl and
 * texture, the raw maps' headers, the PNG maps' world files), by the
 * option that names it: no two may be one, and only one may be standard
 * output.  Returns -1 to go on, or EXIT_USAGE after printing why. */
static FILE *tables_stream(const settings *s);
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
    if (tables_stream(s) == stderr && (!s->quiet || s->histogram)) {
        const char *taker = NULL;
        for (int i = 0; i < nouts && !taker; i++)
            if (outs[i].path && wg_outfile_is_stdout(outs[i].path))
                taker = outs[i].opt;
        const char *what = s->quiet ? "--histogram's figures" : "the tables";
        const char *fix = !s->histogram ? "give -q"
                          : s->quiet    ? "leave out --histogram"
                                        : "give -q and leave out --histogram";
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
    return -1;
}

/* WORLDGEN_FAULT's forms: 'rename', 'kill', 'show', or a backend's name,
 * alone (a height) or with ':water' (a water depth). */
static int fault_known(const char *v)
{
    if (strcmp(v, "rename") == 0 || strcmp(v, "kill") == 0 ||
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
                           "can ask for (valid: rename, kill, show, a backend "
                           "(%s), or one with :water, or unset)", fault,
                           names);
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

/* The maps a run writes: each one's option, path (NULL: not asked for)
 * and format.  The height, water and sediment maps' formats are settled
 * by parse_args (--heightmap-format, else the extension); the normal
 * map's and the albedo's are their extension's. */
typedef struct map_output {
    const char *opt, *path;
    wg_hm_format f;
} map_output;
enum {
    MAP_HEIGHT, MAP_WATER, MAP_SEDIMENT, /* one field each (height-like) */
    MAP_NORMAL, MAP_ALBEDO,              /* three bands each */
    MAP_OUTPUTS,
    MAP_HEIGHT_LIKE = MAP_NORMAL
};

static void map_outputs(const settings *s, map_output m[MAP_OUTPUTS])
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
 * 124681: the provenance's command line would have been refused). */
static float fitted_distance(const wg_render_opts *o)
{
    const float lo[3] = {-3.0f, WG_BLOCK_FLOOR, -3.0f};
    const float hi[3] = {3.0f, 1.0f, 3.0f};
    const float fit = wg_camera_fit(&o->cam, o->width, o->height, lo, hi, 0.04f);
    const double d = ceil((double)fit * 100.0) / 100.0;
    const float dflt = wg_render_defaults.cam.distance;
    return d > WG_CAMERA_DISTANCE_MAX ? (float)WG_CAMERA_DISTANCE_MAX
           : d > (double)dflt ? (float)d
                              : dflt;
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
        s->world.sea += 0.0f; /* "-0" is the sea level 0 (SPEC.md) */
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
                               "map format (valid: pfm, png, r16, tif)", val);
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
        if (c == ':')
            return usage_error("option '%s' needs a value", argv[optind - 1]);
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
        s->render.cam.distance = fitted_distance(&s->render);
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
                               "(valid: .pfm, .png, .r16, .tif; or give "
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
 * terminal in a strange state: no binary output to standard output when
 * it is one.  Returns -1 to go on, or EXIT_USAGE after printing why. */
static int check_binary_stdout(const settings *s)
{
    const struct { const char *opt, *path, *what; } bins[] = {
        {"out", s->out, "a PNG picture"},
        {"heightmap", s->heightmap, "a binary height map"},
        {"watermap", s->watermap, "a binary water map"},
        {"sedimentmap", s->sedimentmap, "a binary sediment map"},
        {"gltf", s->gltf, "binary glTF"},
    };
    for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++)
        if (bins[i].path && wg_outfile_is_stdout(bins[i].path) &&
            isatty(STDOUT_FILENO))
            return usage_error("--%s %s: standard output is a terminal; "
                               "worldgen does not write %s to it (redirect "
                               "it to a file or a pipe)", bins[i].opt,
                               bins[i].path, bins[i].what);
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

/* Parse argv into s: read every option, then check them against each
 * other and settle what follows from them, in this order (a command line
 * with several faults is refused for the first).  Returns -1 to go on, or
 * the exit status to exit with now (0 after --help or --version). */
static int parse_args(int argc, char **argv, settings *s)
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
    rc = check_binary_stdout(s);
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
    if (rc < 0 && action)
        return act(action);
    if (rc < 0)
        warn_idle_options(s);
    return rc;
}

/* The bytes a control group's limit leaves, walking from the process's
 * group up to the root: 'limit' and 'usage' name the files (v2:
 * memory.max and memory.current; v1: memory.limit_in_bytes and
 * memory.usage_in_bytes).  Returns the least left, or -1 without a limit. */
static double cgroup_left(const char *root, const char *group,
                          const char *limit, const char *usage)
{
    char dir[4096];
    double least = -1;
    snprintf(dir, sizeof dir, "%s%s", root, group);
    for (;;) {
        char path[4200];
        unsigned long long lim = 0, used = 0;
        snprintf(path, sizeof path, "%s/%s", dir, limit);
        FILE *fp = fopen(path, "r");
        int have_lim = fp && fscanf(fp, "%llu", &lim) == 1;
        if (fp)
            fclose(fp);
        snprintf(path, sizeof path, "%s/%s", dir, usage);
        fp = fopen(path, "r");
        if (fp && fscanf(fp, "%llu", &used) != 1)
            used = 0;
        if (fp)
            fclose(fp);
        /* v2 says "max", v1 a number near 2^63, for no limit. */
        if (have_lim && lim < (1ull << 60)) {
            double left = lim > used ? (double)(lim - used) : 0.0;
            if (least < 0 || left < least)
                least = left;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < strlen(root))
            break;
        *slash = '\0';
    }
    return least;
}

/* Bytes of memory this process can take now: the machine's MemAvailable
 * (the physical memory when /proc is not there), or less when a control
 * group limits it (a container's or a Slurm job's memory limit, cgroup v2
 * or v1), or when its address space is limited (ulimit -v): then *limit
 * says which. */
static double available_bytes(const char **limit)
{
    *limit = "this machine has %.2f GiB available";
    FILE *fp = fopen("/proc/meminfo", "r");
    char line[4096];
    unsigned long long kib = 0;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    if (fp)
        fclose(fp);
    double have = kib ? (double)kib * 1024.0
                      : (double)sysconf(_SC_PHYS_PAGES) *
                            (double)sysconf(_SC_PAGESIZE);
    fp = fopen("/proc/self/cgroup", "r");
    while (fp && fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        char *ctl = strchr(line, ':'), *group = ctl ? strchr(ctl + 1, ':') : NULL;
        if (!group)
            continue;
        *group++ = '\0';
        ctl++;
        double left = -1;
        if (strcmp(ctl, "") == 0) /* v2: 0::/path */
            left = cgroup_left(access("/sys/fs/cgroup/cgroup.controllers", F_OK)
                                       == 0 ? "/sys/fs/cgroup"
                                            : "/sys/fs/cgroup/unified",
                               strcmp(group, "/") ? group : "", "memory.max",
                               "memory.current");
        else if (strstr(ctl, "memory")) /* v1: N:memory:/path */
            left = cgroup_left("/sys/fs/cgroup/memory",
                               strcmp(group, "/") ? group : "",
                               "memory.limit_in_bytes", "memory.usage_in_bytes");
        if (left >= 0 && left < have) {
            have = left;
            *limit = "its control group lets it have %.2f GiB more";
        }
    }
    if (fp)
        fclose(fp);
    /* ulimit -v: the limit less what is mapped already (VmSize). */
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        unsigned long long vm = 0;
        fp = fopen("/proc/self/status", "r");
        while (fp && fgets(line, sizeof line, fp))
            if (sscanf(line, "VmSize: %llu kB", &vm) == 1)
                break;
        if (fp)
            fclose(fp);
        double left = (double)rl.rlim_cur - (double)vm * 1024.0;
        left = left > 0 ? left : 0;
        if (left < have) {
            have = left;
            *limit = "its address space limit (ulimit -v) leaves %.2f GiB";
        }
    }
    return have;
}

/* available_bytes, and what limits it in words ("this machine has 1.2
 * GiB available") in left[128]. */
static double memory_left(char left[128])
{
    const char *limit;
    double have = available_bytes(&limit);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(left, 128, limit, have / 1073741824.0);
#pragma GCC diagnostic pop
    return have;
}

/* Refuse a world whose fields cannot fit, before allocating anything.
 * Returns 0, or 1 after saying how much it needs. */
static int check_memory(const settings *s, const wg_job *job,
                        const wg_backend *const *chosen, int backends)
{
    /* A running backend holds the six result fields and a second height
     * (ping-pong), and during the hydraulic stage four more (a second
     * water, a sediment, and the scalar backend's P and Q; the starting
     * ground, the water's running mean and the other sediment take the
     * normals' fields), over the rectangle it
     * computes (a region and its halo, or the world); the window cropped
     * from a region's rectangle at readback holds six, and so does the
     * reference run kept for comparison. */
    double computed = (double)wg_rect_cells(wg_job_rect(job));
    double window = (double)wg_rect_cells(wg_job_window(job));
    int region = !wg_rect_equal(wg_job_window(job), wg_job_rect(job));
    double running = sizeof(float) * (s->world.steps ? 11.0 : 7.0) * computed;
    /* A backend with memory of its own (a Vulkan device that shares the
     * host's) says what it holds; the largest counts, since they run one
     * after another. */
    for (int i = 0; i < backends; i++)
        if (chosen[i]->host_bytes && chosen[i]->host_bytes(job) > running)
            running = chosen[i]->host_bytes(job);
    double need = running + sizeof(float) * 6.0 *
                                ((backends > 1) + region) * window;
    char what[256], left[128];
    if (need <= memory_left(left))
        return 0;
    wg_job_describe(job, what, sizeof what);
    say("--size %" PRIu32 "%s%s needs %.2f GiB for "
        "the fields of %s; %s%s",
        s->world.size, s->region_arg ? " --region " : "",
        s->region_arg ? s->region_arg : "", need / 1073741824.0, what,
        left,
        s->world.steps ? " (--hydraulic 0, or fewer steps, needs less)"
                       : "");
    return 1;
}

/* CPU threads for openmp and the renderer: --threads, else OMP_NUM_THREADS
 * (its first number, as OpenMP reads a list) up to the CPUs this process
 * may use (wg_cpus), else 0: every one of them. */
static int cpu_threads(const settings *s)
{
    if (s->threads > 0)
        return s->threads;
    /* OpenMP's form: a list of positive counts, one per level of
     * nesting, with blanks allowed around them ("4", " 2 , 1"); the first
     * is ours.  Anything else ("1e3", "2abc", "1.5") libgomp ignores,
     * saying so, and so do we: the count before the junk would have been
     * taken for ours while the OpenMP backend used every core. */
    const char *env = getenv("OMP_NUM_THREADS");
    long cores = wg_cpus(), t = 0;
    for (const char *p = env; p && *p;) {
        char *end;
        p += strspn(p, " \t\n\v\f\r");
        if (*p < '0' || *p > '9')
            return 0;
        errno = 0;
        long v = strtol(p, &end, 10);
        end += strspn(end, " \t\n\v\f\r");
        if (errno || v < 1 || (*end && *end != ','))
            return 0;
        t = t ? t : v;
        p = *end ? end + 1 : end;
        if (*end == ',' && !*p)
            return 0; /* a trailing comma */
    }
    if (t < 1)
        return 0;
    return (int)(t < cores ? t : cores);
}

/* The parameters of the run, for the outputs' metadata. */
static void describe(const settings *s, char *buf, size_t len)
{
    int used = snprintf(buf, len, "--size %" PRIu32 " --seed %" PRIu64
                        " --octaves %" PRIu32 " --erosion %" PRIu32
                        " --hydraulic %" PRIu32 " --sea-level %.9g",
                        s->world.size, s->world.seed, s->world.octaves,
                        s->world.passes, s->world.steps, (double)s->world.sea);
    if (s->region.w && used > 0 && (size_t)used < len)
        snprintf(buf + used, len - (size_t)used, " --region %" PRIu32
                 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32, s->region.x, s->region.y,
                 s->region.w, s->region.h);
}

/* The parameters of the run and of the picture: the options that make the
 * picture (and the OBJ) again. */
static void describe_picture(const settings *s, char *buf, size_t len)
{
    describe(s, buf, len);
    size_t used = strlen(buf);
    if (used + 1 < len) {
        buf[used++] = ' ';
        wg_render_describe(&s->render, buf + used, len - used);
    }
}

/* The progress line: on standard error when it is a terminal (and not
 * -q), rewritten in place, from the first second of a run on; silent
 * otherwise, so pipelines and logs never see it. */
static struct {
    int on;
    double start, last;
    const char *who; /* the backend running, or NULL while writing */
    int shown;
} progress_line;

static void progress_say(const char *stage, double done)
{
    if (!progress_line.on)
        return;
    double now = wg_now();
    /* A stage's start shows at once, its percentage ten times a second. */
    if (now - progress_line.start < 1.0 ||
        (done > 0.0 && now - progress_line.last < 0.1))
        return;
    progress_line.last = now;
    fprintf(stderr, "\r\033[Kworldgen: %s%s%s", progress_line.who ?
            progress_line.who : "", progress_line.who ? ": " : "", stage);
    if (done >= 0.0)
        fprintf(stderr, " %3.0f%%", 100.0 * done);
    fprintf(stderr, " (%.0f s)", now - progress_line.start);
    progress_line.shown = 1;
}

/* Clear the progress line, before a table or a message. */
static void progress_clear(void)
{
    if (progress_line.shown)
        fputs("\r\033[K", stderr);
    progress_line.shown = 0;
}

/* "--OPT: cannot write 'PATH': WHY", a long PATH shortened in the middle
 * (wg_outfile_shown). */
static void say_cannot_write(const char *opt, const char *path,
                             const char *why)
{
    char shown[WG_PATH_SHOWN + 1];
    say("--%s: cannot write '%s': %s", opt, wg_outfile_shown(path, shown),
        why);
}

/* The --show window's pictures of other views: the world as write_picture
 * renders it. */
typedef struct show_scene {
    const wg_fields *f;
    const settings *s;
} show_scene;

static int show_render(void *ctx, const wg_render_opts *o, wg_image *img,
                       char *err)
{
    const show_scene *sc = ctx;
    /* Test hook: WORLDGEN_FAULT=show fails every view moved to, as a
     * picture that cannot be allocated fails. */
    const char *fault = getenv("WORLDGEN_FAULT");
    if (fault && strcmp(fault, "show") == 0)
        return wg_fail(err, "out of memory for a %" PRIu32 "x%" PRIu32
                            " picture (WORLDGEN_FAULT=show: a test hook)",
                       o->width, o->height);
    wg_render_stats rs;
    wg_render_opts with = *o;
    with.threads = (uint32_t)cpu_threads(sc->s);
    return wg_render(sc->f, sc->s->world.sea, &with, img, &rs, err);
}

/* Whether the window's controls moved view a from b. */
static int show_moved(const wg_render_opts *a, const wg_render_opts *b)
{
    return a->cam.azimuth != b->cam.azimuth ||
           a->cam.elevation != b->cam.elevation ||
           a->cam.distance != b->cam.distance ||
           a->sun_azimuth != b->sun_azimuth ||
           a->sun_elevation != b->sun_elevation;
}

/* Render the picture and write it (--out), then the OBJ (--obj) and the
 * glTF (--gltf), filling in what they measured.  The picture stays in
 * 'img' for --show.  Returns 0, or 1 after a message. */
static int write_picture(const settings *s, const wg_fields *f,
                         wg_render_report *rep, wg_image *img)
{
    char err[WG_ERR_LEN], params[768];
    describe_picture(s, params, sizeof params);
    if (s->out) {
        wg_render_opts o = s->render;
        o.threads = (uint32_t)cpu_threads(s);
        /* What the renderer will hold at its peak (it works in strips of
         * rows), and the PNG's rows. */
        double need = wg_render_memory(&o, f->n) +
                      (double)s->render.width * s->render.height * 3.0;
        char left[128];
        if (need > memory_left(left)) {
            say("a %" PRIu32 "x%" PRIu32 " picture at "
                "--aa %" PRIu32 " needs %.2f GiB; %s", s->render.width,
                s->render.height, s->render.aa, need / 1073741824.0, left);
            return 1;
        }
        wg_render_stats rs;
        progress_say("rendering", -1);
        if (wg_render(f, s->world.sea, &o, img, &rs, err) != 0) {
            progress_clear();
            say("cannot render: %s", err);
            return 1;
        }
        if (rs.camera_in_water)
            say("warning: the camera is under the water (at height %.3g, "
                "under its surface at %.3g): the picture shows the world "
                "from within it, with holes where the water's surface faces "
                "away; raise --elevation, --distance or --look",
                (double)rs.camera_y, (double)rs.surface_y);
        else if (rs.camera_inside)
            say("warning: the camera is inside the ground (at height %.3g, "
                "under the surface at %.3g): the picture shows the land from "
                "within, with holes where its surface faces away; raise "
                "--elevation, --distance or --look", (double)rs.camera_y,
                (double)rs.surface_y);
        rep->raster = rs.raster;
        rep->shade = rs.shade;
        rep->triangles = rs.triangles;
        rep->drawn = rs.drawn;
        rep->threads = rs.threads;
        double t0 = wg_now();
        const wg_png_text text[] = {
            {"Software", "worldgen " WG_VERSION},
            {"worldgen", params},
        };
        wg_outfile o_png;
        progress_say("writing the picture", -1);
        if (wg_outfile_open(&o_png, s->out, err) != 0 ||
            wg_png_write(o_png.fp, img->w, img->h, 8, 3, img->rgb,
                         (size_t)img->w * 3, text, 2, err) != 0 ||
            wg_outfile_commit(&o_png, err) != 0) {
            wg_outfile_abort(&o_png);
            progress_clear();
            say_cannot_write("out", s->out, err);
            return 1;
        }
        rep->png = wg_now() - t0;
    }
    if (s->obj) {
        char header[1024];
        snprintf(header, sizeof header, "worldgen %s\n%s", WG_VERSION, params);
        double t0 = wg_now();
        progress_say("writing the OBJ", -1);
        if (wg_obj_save(s->obj, f, s->world.sea, header, err) != 0) {
            progress_clear();
            say("--obj: cannot write %s", err);
            return 1;
        }
        rep->obj = wg_now() - t0;
    }
    if (s->gltf) {
        double t0 = wg_now();
        progress_say("writing the glTF", -1);
        if (wg_gltf_save(s->gltf, f, s->world.sea, params, s->gltf_error,
                         NULL, err) != 0) {
            progress_clear();
            say("--gltf: cannot write %s", err);
            return 1;
        }
        rep->gltf = wg_now() - t0;
    }
    return 0;
}

/* Write the maps asked for (--heightmap, --watermap, --sedimentmap: one
 * field each, the last with signed values, render/heightmap.h;
 * --normalmap, --albedo: three bands of the fields' window), each with
 * the options that make the world again (describe()) and its time in
 * 'rep'.  Returns 0, or 1 after a message. */
static int write_maps(const settings *s, const wg_fields *f,
                      wg_render_report *rep)
{
    char err[WG_ERR_LEN], params[256];
    describe(s, params, sizeof params);
    const wg_png_text text[2] = {
        {"Software", "worldgen " WG_VERSION},
        {"worldgen", params},
    };
    map_output m[MAP_OUTPUTS];
    map_outputs(s, m);
    const struct {
        const char *what;    /* the progress line's */
        const float *field;  /* the height-like maps' */
        wg_hm_values values; /* their samples' mapping */
        double *seconds;
    } maps[MAP_OUTPUTS] = {
        [MAP_HEIGHT] = {"writing the height map", f->height,
                        WG_HM_HEIGHTS, &rep->heightmap},
        [MAP_WATER] = {"writing the water map", f->water, WG_HM_HEIGHTS,
                       &rep->watermap},
        [MAP_SEDIMENT] = {"writing the sediment map", f->sediment,
                          WG_HM_SIGNED, &rep->sedimentmap},
        [MAP_NORMAL] = {"writing the normal map", NULL, WG_HM_HEIGHTS,
                        &rep->normalmap},
        [MAP_ALBEDO] = {"writing the colour map", NULL, WG_HM_HEIGHTS,
                        &rep->albedo},
    };
    for (int i = 0; i < MAP_OUTPUTS; i++) {
        if (!m[i].path)
            continue;
        double t0 = wg_now();
        progress_say(maps[i].what, -1);
        int rc = i < MAP_HEIGHT_LIKE
                     ? wg_map_save(m[i].path, m[i].f, maps[i].values,
                                   maps[i].field, f->n, f->r, text, 2, err)
                 : i == MAP_NORMAL
                     ? wg_normalmap_save(m[i].path, m[i].f, f, text, 2, err)
                     : wg_albedomap_save(m[i].path, m[i].f, f, s->world.sea,
                                         (uint32_t)cpu_threads(s), text, 2,
                                         err);
        if (rc != 0) {
            progress_clear();
            say_cannot_write(m[i].opt, m[i].path, err);
            return 1;
        }
        *maps[i].seconds = wg_now() - t0;
    }
    return 0;
}

/* Add backend b, not available here for reason 'why', to the skipped
 * list sk[*nsk], once. */
static void add_skip(wg_skipped *sk, int *nsk, const wg_backend *b,
                     const char *why)
{
    for (int k = 0; k < *nsk; k++)
        if (sk[k].backend == b)
            return;
    sk[*nsk].backend = b;
    snprintf(sk[(*nsk)++].why, WG_ERR_LEN, "%s", why);
}

/* The skipped list sk[*n], for wg_backend_fastest to report the backends
 * --mesh auto could have chosen but are not available (auto_skip). */
typedef struct skip_list {
    wg_skipped *sk;
    int *n;
} skip_list;

static void auto_skip(void *ctx, const wg_backend *b, const char *why)
{
    const skip_list *l = ctx;
    add_skip(l->sk, l->n, b, why);
}

/* Which backends this run uses, in the order they run (the registry's:
 * scalar first, the reference).  Returns their number; -1 after a message
 * when the one backend asked for by name is not available.  In a list,
 * for all and for auto, a backend that is not available is skipped and
 * reported through sk. */
static int choose_backends(const settings *s, const wg_job *job,
                           const wg_backend **run, wg_skipped *sk, int *nsk)
{
    int n = 0;
    char err[WG_ERR_LEN];
    unsigned want = s->mesh_set;
    int lone = !s->mesh_auto && (want & (want - 1)) == 0;
    *nsk = 0;
    if (s->mesh_auto) {
        /* The fastest available, running nothing to find it; a backend
         * that could have won but is not available here is reported. */
        skip_list skips = {sk, nsk};
        const wg_backend *b = wg_backend_fastest(job, auto_skip, &skips);
        for (size_t i = 0; wg_backends[i]; i++)
            if (wg_backends[i] == b)
                want |= 1u << i;
    }
    /* --check compares with scalar, so scalar runs first when not chosen. */
    if (s->check)
        want |= 1u;
    for (size_t i = 0; wg_backends[i]; i++) {
        if (!(want & 1u << i))
            continue;
        if (wg_backends[i]->probe(job, err) == 0) {
            run[n++] = wg_backends[i];
        } else if (lone && (s->mesh_set & 1u << i)) {
            say("--mesh %s: not available here: %s",
                wg_backends[i]->name, err);
            return -1;
        } else {
            add_skip(sk, nsk, wg_backends[i], err);
        }
    }
    return n;
}

/* --require: every backend it names must be among those about to run.
 * Returns 0, or 1 after saying which did not and why. */
static int check_required(const settings *s, const wg_backend *const *run,
                          int n, const wg_skipped *sk, int nsk)
{
    for (size_t i = 0; wg_backends[i]; i++) {
        if (!(s->require_set & 1u << i))
            continue;
        int runs = 0;
        for (int k = 0; k < n; k++)
            runs |= run[k] == wg_backends[i];
        if (runs)
            continue;
        const char *why = "--mesh does not choose it";
        for (int k = 0; k < nsk; k++)
            if (sk[k].backend == wg_backends[i])
                why = sk[k].why;
        say("--require %s: %s does not run: %s",
            s->require, wg_backends[i]->name, why);
        return 1;
    }
    return 0;
}

/* Test hook: WORLDGEN_FAULT=NAME flips the lowest bit of one height that
 * backend NAME read back (NAME:water, one water depth), so the tests can
 * prove that --check fails when a backend disagrees (no real backend can
 * be made to disagree on demand), and says so. */
static void inject_fault(const wg_result *r)
{
    const char *fault = getenv("WORLDGEN_FAULT");
    size_t len = strlen(r->backend->name);
    if (!fault || strncmp(fault, r->backend->name, len) != 0 ||
        (fault[len] != '\0' && strcmp(fault + len, ":water") != 0))
        return;
    float *field = fault[len] ? r->fields.water : r->fields.height;
    float *v = &field[wg_fields_cells(&r->fields) / 2];
    uint32_t bits;
    memcpy(&bits, v, sizeof bits);
    bits ^= 1;
    memcpy(v, &bits, sizeof bits);
    /* Never silently: a variable left set would spoil every output. */
    say("warning: WORLDGEN_FAULT=%s: one %s of %s's is wrong on purpose (a "
        "test hook; unset it for the true world)", fault,
        fault[len] ? "water depth" : "height", r->backend->name);
}

static int write_json(const settings *s, const wg_report_run *run)
{
    char err[WG_ERR_LEN];
    wg_outfile o;
    if (wg_outfile_open(&o, s->json, err) != 0) {
        say_cannot_write("json", s->json, err);
        return 1;
    }
    wg_report_json(o.fp, run);
    if (wg_outfile_commit(&o, err) != 0) {
        wg_outfile_abort(&o);
        say_cannot_write("json", s->json, err);
        return 1;
    }
    return 0;
}

/* Try every output file before the work (wg_outfile_probe): a folder that
 * is missing or takes no files fails the run now, not once the world is
 * made.  Returns 0, or 1 after a message. */
static int probe_outputs(const settings *s)
{
    const struct {
        const char *opt, *path;
    } outs[] = {
        {"heightmap", s->heightmap}, {"watermap", s->watermap},
        {"sedimentmap", s->sedimentmap}, {"normalmap", s->normalmap},
        {"albedo", s->albedo},       {"out", s->out},
        {"obj", s->obj},             {"gltf", s->gltf},
        {"json", s->json},
    };
    char err[WG_ERR_LEN];
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        if (outs[i].path && wg_outfile_probe(outs[i].path, err) != 0) {
            say_cannot_write(outs[i].opt, outs[i].path, err);
            return 1;
        }
    /* A GeoTIFF to a pipe or a device is made in a temporary file under
     * $TMPDIR first (libtiff seeks): try that folder too. */
    map_output tifs[MAP_OUTPUTS];
    map_outputs(s, tifs);
    for (size_t i = 0; i < MAP_OUTPUTS; i++) {
        if (!tifs[i].path || tifs[i].f != WG_HM_TIF)
            continue;
        /* A descriptor (standard output, /dev/fd/N): as libtiff finds it;
         * a device or a FIFO: always. */
        struct stat st;
        int fd = wg_outfile_descriptor(tifs[i].path);
        int pipe = fd >= 0 ? wg_geotiff_needs_temporary(fd)
                           : wg_outfile_is_device(tifs[i].path) ||
                                 (stat(tifs[i].path, &st) == 0 &&
                                  !S_ISREG(st.st_mode) &&
                                  !S_ISDIR(st.st_mode));
        if (pipe && wg_geotiff_try_temporary(err) != 0) {
            say("--%s %s: %s", tifs[i].opt, tifs[i].path, err);
            return 1;
        }
    }
    return 0;
}

/* Why the tables could not be written, when run() found them lost before
 * putting the files in place (errno; 0: not lost, or no reason kept), for
 * close_stdout to say: stdio keeps no reason with the stream's error. */
static int tables_errno;

/* Where the tables go: standard output, unless an output is written
 * there (--heightmap -, --json -, --out -): then standard error. */
static FILE *tables_stream(const settings *s)
{
    const char *outs[] = {s->heightmap, s->watermap, s->sedimentmap, s->json,
                          s->out, s->gltf};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        if (outs[i] && wg_outfile_is_stdout(outs[i]))
            return stderr;
    return stdout;
}

/* Run the chosen backends on the job in turn, each into res[i] (which
 * the caller frees, also after a failure).  Scalar, when chosen, runs
 * first and is the reference (*ref): every backend after it is compared
 * with it as soon as it is done and its own fields freed, so --mesh all
 * holds two worlds at a time, not one per backend.  Returns 0, or 1
 * after a message. */
static int run_backends(const settings *s, const wg_job *job,
                        const wg_backend *const *chosen, int n,
                        wg_result *res, const wg_result **ref)
{
    char err[WG_ERR_LEN];
    *ref = NULL;
    for (int i = 0; i < n; i++) {
        wg_result *r = &res[i];
        r->backend = chosen[i];
        progress_line.who = r->backend->name;
        if (wg_backend_run(r->backend, job, &r->fields, &r->t, r->device,
                           sizeof r->device, err) != 0) {
            progress_clear();
            /* Named as the user chose it: '--mesh openmp' only when they
             * wrote it. */
            if (strcmp(s->mesh, r->backend->name) == 0)
                say("--mesh %s: %s", r->backend->name, err);
            else
                say("the %s backend (of --mesh %s): %s", r->backend->name,
                    s->mesh, err);
            return 1;
        }
        inject_fault(r);
        if (r->backend == &wg_backend_scalar) {
            *ref = r;
        } else if (*ref) {
            r->compared = 1;
            r->agree = wg_agree(&(*ref)->fields, &r->fields, r->backend);
            wg_fields_free(&r->fields);
        }
    }
    progress_line.who = NULL;
    progress_clear();
    return 0;
}

/* The render block before any step has run: the picture's size and the
 * files asked for, every time -1 (not run) until its step fills it in. */
static wg_render_report render_report_start(const settings *s)
{
    return (wg_render_report){
        .width = s->render.width, .height = s->render.height,
        .aa = s->render.aa, .map = s->render.view == WG_VIEW_MAP,
        .raster = -1, .shade = -1,
        .png = -1, .png_path = s->out,
        .obj = -1, .obj_path = s->obj,
        .gltf = -1, .gltf_path = s->gltf,
        .heightmap = -1, .heightmap_path = s->heightmap,
        .watermap = -1, .watermap_path = s->watermap,
        .sedimentmap = -1, .sedimentmap_path = s->sedimentmap,
        .normalmap = -1, .normalmap_path = s->normalmap,
        .albedo = -1, .albedo_path = s->albedo,
    };
}

/* --check's verdict: say which backends disagree with scalar, by how
 * much, each on a line of its own with the first cell and field that
 * break the tolerances (the largest differences alone had left a CI log
 * with nowhere to look).  Returns 0 when none does, else EXIT_DISAGREE. */
static int check_agreement(const wg_result *res, int n)
{
    int status = 0;
    for (int i = 0; i < n; i++)
        if (res[i].compared && !res[i].agree.ok) {
            const wg_agreement *a = &res[i].agree;
            char where[160] = "";
            if (a->bad_field)
                snprintf(where, sizeof where, "; first at x %" PRIu32
                         ", y %" PRIu32 ": %s %.9g, scalar's %.9g", a->bad_x,
                         a->bad_y, a->bad_field, (double)a->bad_value,
                         (double)a->bad_ref);
            say("--check: %s disagrees with scalar: "
                "max dh = %.2e, max dw = %.2e, max dn = %.2e (allowed: "
                "dh 0, dw 0, dn %.0e)%s", res[i].backend->name,
                a->max_dh, a->max_dw, a->max_dn,
                res[i].backend->normal_tolerance, where);
            status = EXIT_DISAGREE;
        }
    return status;
}

/* --show: the picture, already written, in a window until it is closed
 * (the tables printed first), whose view the user may move: the window
 * draws the world f again (show_render), and the options of the view it
 * was left at are said.  Returns 0, or 1 after a message. */
static int show_picture(const settings *s, const wg_fields *f,
                        const wg_image *img, FILE *tables)
{
    char title[128], err[WG_ERR_LEN];
    snprintf(title, sizeof title, "worldgen: seed %" PRIu64 ", %" PRIu32
             "x%" PRIu32 " grid", s->world.seed, s->world.size,
             s->world.size);
    fflush(tables);
    /* An output on standard output (--out -, --heightmap -: the tables
     * are on standard error then) is whole: its reader gets its end now,
     * not when the window closes (a pipe into convert had waited for the
     * window).  Nothing more goes there; the descriptor stays taken, on
     * /dev/null, as wg_outfile_hold_std keeps it. */
    if (tables != stdout && fflush(stdout) == 0 && !ferror(stdout)) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != STDOUT_FILENO) {
            dup2(null, STDOUT_FILENO);
            close(null);
        }
    }
    show_scene sc = {.f = f, .s = s};
    wg_window_scene scene = {.render = show_render, .ctx = &sc,
                             .opts = s->render};
    wg_render_opts last;
    int shown = wg_window_show(img, title, &scene, s->show_timeout, &last,
                               err);
    /* Said even when the window failed, after the user moved it. */
    if (show_moved(&last, &s->render)) {
        char view[512];
        wg_render_describe(&last, view, sizeof view);
        say("--show: the window's last view: %s", view);
    }
    if (shown != 0) {
        say("--show: %s; the picture is in %s",
            err, wg_outfile_is_stdout(s->out) ? "standard output" : s->out);
        return 1;
    }
    return 0;
}

/* Make the world, report, write.  Returns the exit status. */
static int run(const settings *s, int argc, char **argv)
{
    const double start = wg_now();
    const wg_backend *chosen[8];
    wg_skipped skipped[8];
    wg_result res[8];
    int n = 0, nsk = 0, status = 1;
    char err[WG_ERR_LEN];
    float *lattice = NULL;
    const wg_result *ref = NULL;
    wg_image img = {0};
    FILE *tables = tables_stream(s);
    memset(res, 0, sizeof res);

    wg_job job = {.world = s->world, .threads = s->threads,
                  .power = s->power, .gpu = s->gpu,
                  .progress = progress_say, .region = s->region};
    wg_consts_init(&job.consts, &job.world);
    if (probe_outputs(s) != 0)
        return 1;
    n = choose_backends(s, &job, chosen, skipped, &nsk);
    if (n <= 0) {
        if (n == 0)
            say("--mesh %s: no backend is available "
                "here", s->mesh);
        return 1;
    }
    if (check_required(s, chosen, n, skipped, nsk) != 0)
        return 1;
    /* --check with scalar alone, chosen by auto or left alone by the
     * skips (--mesh scalar got its warning with the options). */
    if (s->check && n == 1 && (s->mesh_auto || s->mesh_set != 1u))
        say("warning: --check compares nothing: only scalar runs (%s)",
            s->mesh_auto ? "--mesh auto chose it for this world"
                         : "the other backends are not available here");
    if (check_memory(s, &job, chosen, n) != 0)
        return 1;
    lattice = malloc((size_t)WG_LATTICE_R * WG_LATTICE_R * sizeof *lattice);
    if (!lattice) {
        say("out of memory for the lattice");
        goto out;
    }
    wg_lattice_fill(lattice, s->world.seed);
    job.lattice = lattice;

    progress_line.on = !s->quiet && isatty(STDERR_FILENO);
    progress_line.start = start;
    if (run_backends(s, &job, chosen, n, res, &ref) != 0)
        goto out;
    if (!s->quiet) {
        wg_report_skipped(tables, skipped, nsk);
        wg_report_table(tables, &s->world, s->region, res, n, ref);
        wg_report_agreement(tables, res, n);
    }
    /* The outputs come from the reference when it ran (every other backend
     * agrees with it or the run says so), else from the one backend. */
    const wg_fields *f = ref ? &ref->fields : &res[n - 1].fields;
    wg_height_stats st;
    wg_water_stats ws;
    if (s->histogram) {
        if (wg_height_stats_measure(f->height, wg_fields_cells(f), &st) != 0) {
            say("out of memory for the histogram");
            goto out;
        }
        wg_water_stats_measure(f->height, f->water, wg_fields_cells(f),
                               s->world.sea, &ws);
        if (!s->quiet)
            fputc('\n', tables);
        wg_report_histogram(tables, &st, &ws);
    }
    wg_render_report rep = render_report_start(s);
    /* Every file is put in place at the end, together: a run that fails
     * part way (its last output, a signal) replaces none of them. */
    wg_outfile_hold();
    if (write_maps(s, f, &rep) != 0)
        goto out;
    /* The picture last: the other outputs do not wait for it. */
    if ((s->out || s->obj || s->gltf) &&
        write_picture(s, f, &rep, &img) != 0)
        goto out;
    progress_clear();
    if (!s->quiet && (s->out || s->obj || s->gltf || s->heightmap ||
                       s->watermap || s->sedimentmap || s->normalmap ||
                       s->albedo)) {
        fputc('\n', tables);
        wg_report_render(tables, &rep);
    }
    /* What openmp and the renderer take: under taskset or a cpuset (a
     * Slurm job) the CPUs allowed, not the cores online (2 had been
     * reported where openmp ran 1 thread). */
    int threads = cpu_threads(s) ? cpu_threads(s) : wg_cpus();
    wg_report_run jr = {
        .world = &s->world, .region = s->region, .results = res, .n = n,
        .reference = ref,
        .skipped = skipped, .nskipped = nsk, .checked = s->check,
        .render = &rep, .heights = s->histogram ? &st : NULL,
        .water = s->histogram ? &ws : NULL, .threads = threads,
        .argc = argc, .argv = argv, .wall = wg_now() - start,
    };
    if (!s->quiet)
        wg_report_wall(tables, jr.wall);
    /* The JSON after every other step, so it carries all their times. */
    if (s->json && write_json(s, &jr) != 0)
        goto out;
    /* Test hook: WORLDGEN_FAULT=kill dies here of SIGKILL, which no
     * handler sees, with every output written and held, as the OOM killer
     * or 'timeout -s KILL' could kill a run. */
    const char *fault = getenv("WORLDGEN_FAULT");
    if (fault && strcmp(fault, "kill") == 0)
        raise(SIGKILL);
    /* The tables are written whole before any file is put in place: one
     * lost (standard output on a full disk, or closed) had failed the run
     * (exit 1) after every file was replaced.  Standard output's loss is
     * said at exit (close_stdout); standard error's has nowhere to be. */
    errno = 0;
    if (fflush(tables) != 0 || ferror(tables)) {
        tables_errno = errno;
        goto out;
    }
    if (wg_outfile_commit_held(err) != 0) {
        say("cannot put the outputs in place: %s",
            err);
        goto out;
    }
    if (s->show && show_picture(s, f, &img, tables) != 0)
        goto out;
    status = s->check ? check_agreement(res, n) : 0;
out:
    wg_outfile_abort_held(); /* nothing, once they are in place */
    progress_clear();
    wg_image_free(&img);
    for (int i = 0; i < n; i++)
        wg_fields_free(&res[i].fields);
    free(lattice);
    return status;
}

/* Close standard output, saying why when something written to it was
 * lost (a full disk, a closed descriptor): an earlier write's error too,
 * which stdio remembers but fclose() does not report.  Returns 0 or -1. */
static int close_stdout(void)
{
    errno = 0;
    int lost = ferror(stdout);
    int e = lost && tables_errno ? tables_errno : errno;
    if (fclose(stdout) != 0) {
        lost = 1;
        e = errno;
    }
    /* An output written to standard output (--heightmap -, --out -) that
     * failed has said why already: a second line would only name a
     * vaguer cause (EIO) for the same loss. */
    if (lost && !wg_outfile_stdout_failed())
        say("cannot write to standard output: %s",
            strerror(e ? e : EIO));
    return lost ? -1 : 0;
}

/* The stack a run needs, with room to spare: its deepest paths (the
 * option checks' path buffers, the writers under libpng and libtiff)
 * take some 50 KiB, on the main thread and on the workers alike, whose
 * stacks glibc sizes by the same limit. */
#define WG_STACK_MIN (256u * 1024u)

/* Refuse a stack size limit (ulimit -s) too small to run in, which would
 * end the run in a segmentation fault part way.  A constructor, so that
 * it runs before main, whose frame (with the option checks inlined) is
 * itself larger than the smallest limits. */
__attribute__((constructor)) static void check_stack_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= WG_STACK_MIN)
        return;
    say("the stack size limit is %llu KiB (ulimit -s); "
        "worldgen needs at least %u KiB: raise it (ulimit -s 8192)",
        (unsigned long long)rl.rlim_cur / 1024, WG_STACK_MIN / 1024);
    _exit(1);
}

/* Under an address space limit (ulimit -v), one malloc arena: glibc gives
 * each thread that meets another in malloc an arena of its own, 64 MiB of
 * address space reserved apiece, up to eight a CPU, until the limit is
 * used up.  The threads of lavapipe's device took what the limit left
 * after every check, and its shader compiler then crashed (vulkan.c,
 * vulkan_address_space_check).  A constructor, before any thread. */
__attribute__((constructor)) static void one_arena_under_a_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        mallopt(M_ARENA_MAX, 1);
}

int main(int argc, char **argv)
{
    settings s;
    wg_outfile_hold_std();
    /* Text for a file or a pipe is written at exit in one piece, so a
     * failure shows up in fclose() with its cause (a full disk). */
    static char stdout_buf[1 << 16]; /* glibc ignores the size without one */
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, stdout_buf, _IOFBF, sizeof stdout_buf);
    int rc = parse_args(argc, argv, &s);
    if (rc >= 0) {
        /* --help or --version to a full disk or a closed pipe says so. */
        if (close_stdout() != 0 && rc == 0)
            return 1;
        return rc;
    }

    /* A fatal signal removes the temporaries, then kills (render/outfile.c). */
    wg_outfile_catch_signals();

    rc = run(&s, argc, argv);
    /* A table that could not be written (a closed pipe, a full disk) is a
     * failure too, not a silent success. */
    if (close_stdout() != 0 && rc == 0)
        rc = 1;
    return rc;
}
