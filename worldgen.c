/* worldgen.c: the command line.  Parse and check the options, make the
 * world on the chosen backends, report, write the outputs; nothing else.
 *
 * Exit status: 0 success, 1 a runtime failure (a file that cannot be
 * written, no Vulkan device, not enough memory), 2 a usage error (a bad
 * option or value), 130/143 interrupted. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/vulkan.h"
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

/* Everything the command line decides, with the defaults. */
typedef struct settings {
    wg_world world;
    const char *mesh;
    int passes_given;              /* --erosion was on the command line */
    int steps_given;               /* --hydraulic was on the command line */
    const char *heightmap;
    wg_hm_format heightmap_format; /* from --heightmap-format, or NONE */
    const char *watermap;          /* --watermap FILE, in heightmap_format's
                                      family: its own extension decides */
    wg_hm_format watermap_format;
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
    int no_image;                  /* --no-image: no picture at all */
    const char *obj;               /* --obj FILE, or NULL */
    int show;                      /* --show: the picture in a window */
} settings;

static const settings defaults = {
    .world = {.size = 512, .octaves = 6, .seed = 1234, .sea = WG_SEA_DEFAULT},
    /* The fastest backend here: every backend makes the same fields (the
     * heights to the bit), and the hydraulic stage makes scalar's 512 world
     * take 4.3 s against openmp's 0.8 s on two cores. */
    .mesh = "auto",
    .out = "world.png",
};

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
};

static const struct option long_opts[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"octaves", required_argument, NULL, OPT_OCTAVES},
    {"erosion", required_argument, NULL, OPT_EROSION},
    {"hydraulic", required_argument, NULL, OPT_HYDRAULIC},
    {"sea-level", required_argument, NULL, OPT_SEA_LEVEL},
    {"watermap", required_argument, NULL, OPT_WATERMAP},
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
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static void usage(FILE *fp)
{
    fprintf(fp,
"Usage: worldgen [OPTION]...\n"
"Turn a seed into a landscape: terrain, erosion and normals on a choice of\n"
"backends, a timing table, a rendered picture, height maps and OBJ meshes.\n"
"\n"
"World:\n"
"      --size N             vertices per side, 2..65536 (default 512)\n"
"      --seed S             unsigned 64-bit seed, decimal or 0x hex (default 1234)\n"
"      --octaves N          noise octaves, 1..16 (default 6)\n"
"      --erosion N          thermal erosion passes, 0..10000 (default: 12 at\n"
"                           513, scaled with the square of the resolution)\n"
"      --hydraulic N        hydraulic erosion steps (rain, rivers, sediment),\n"
"                           0..100000, 0 for none (default: 400 at 513,\n"
"                           scaled with the resolution)\n"
"      --sea-level H        the sea's height, 0..1 (default 0.25)\n"
"\n"
"Backends:\n"
"      --mesh NAME          backend to run:");
    for (size_t i = 0; wg_backends[i]; i++)
        fprintf(fp, "%s %s", i ? "," : "", wg_backends[i]->name);
    fprintf(fp, ",\n"
"                           all (each in turn, compared with scalar) or auto\n"
"                           (the fastest here) (default auto)\n"
"      --threads N          CPU threads for openmp and the renderer, 1..1024\n"
"                           (default: all cores, or OMP_NUM_THREADS)\n"
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
"                           world under water\n"
"      --heightmap FILE     write the heights: FILE.pfm (binary32), FILE.png\n"
"                           (16-bit grey) or FILE.r16 (raw uint16 LE); '-' is\n"
"                           standard output (the tables then go to stderr)\n"
"      --heightmap-format F pfm, png or r16: the format for '-' or to override\n"
"                           the extension\n"
"      --watermap FILE      write the water depth (same formats and scale as\n"
"                           --heightmap: height + water is the water surface)\n"
"      --obj FILE           also write the mesh as Wavefront OBJ (Y up, metres),\n"
"                           with FILE.mtl and FILE_albedo.png beside it\n"
"  -q, --quiet              print no tables\n"
"\n"
"Picture (a run ends with one):\n"
"      --out FILE           the rendered PNG (default world.png; '-' is\n"
"                           standard output, the tables then go to stderr)\n"
"      --no-image           render and write no picture\n"
"      --show               also show the picture in a window (SDL2)\n"
"      --width N, --height N  pixels, 16..16384 (default 800 x 600)\n"
"      --aa N               N x N samples per pixel, 1..4 (default 2)\n"
"      --azimuth DEG        camera bearing from the centre, 0 north (-Z), 90\n"
"                           east (+X), -360..360 (default 215)\n"
"      --elevation DEG      camera height angle, -89..89 (default 25; below 0\n"
"                           looks up at the terrain from beneath)\n"
"      --distance D         camera distance from the look point, 0.1..1000\n"
"                           (default 9.5; the terrain spans 6)\n"
"      --fov DEG            vertical field of view, 1..150 (default 45)\n"
"      --look Y             height of the point looked at, -10..10 (default 0.2)\n"
"      --sun-azimuth DEG    sun bearing, -360..360 (default 290)\n"
"      --sun-elevation DEG  sun height, -90..90 (default 20: low sun, long\n"
"                           shadows; higher flattens the relief)\n"
"      --no-cull            draw back faces too (the picture is identical)\n"
"  -h, --help               show this help and exit\n"
"  -V, --version            show the version and exit\n"
"\n"
"Exit status: 0 success, 1 runtime failure, 2 usage error, 3 backends\n"
"disagree (--check).\n"
"See worldgen(1) for the formats and examples.\n");
}

/* Print a usage error naming the option and the value; returns EXIT_USAGE. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("worldgen: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'worldgen --help' for more information.\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

/* Parse a whole unsigned number, decimal or 0x hex, in [min, max].  Refuses
 * an empty value, signs, spaces, trailing characters and overflow.  Returns
 * 0, or EXIT_USAGE after printing why. */
static int parse_u64(const char *opt, const char *val, uint64_t min,
                     uint64_t max, uint64_t *out)
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
                           "..%" PRIu64 ", decimal or 0x hex)", opt, val, min,
                           max);
    errno = 0;
    char *end;
    unsigned long long v = strtoull(digits, &end, base);
    if (errno == ERANGE || *end || v < min || v > max)
        return usage_error("--%s: '%s' is out of range (valid: %" PRIu64
                           "..%" PRIu64 ")", opt, val, min, max);
    *out = v;
    return 0;
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
    /* strtod skips leading space and reads "nan" and "inf" as numbers. */
    if (end == val || *end || val[0] == ' ' || val[0] == '\t' ||
        val[0] == '\n' || v - v != 0.0) /* nan and inf */
        return usage_error("--%s: '%s' is not a number (valid: %g..%g)", opt,
                           val, min, max);
    if (errno == ERANGE || v < min || v > max)
        return usage_error("--%s: '%s' is out of range (valid: %g..%g)", opt,
                           val, min, max);
    *out = (float)v;
    return 0;
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

/* The picture's and the OBJ's options against each other and the other
 * outputs.  Returns -1 to go on, or EXIT_USAGE after printing why. */
static int check_picture_args(settings *s)
{
    if (s->no_image && s->out_given)
        return usage_error("--no-image and --out '%s': choose one", s->out);
    if (s->no_image && s->show)
        return usage_error("--show needs the picture: drop --no-image");
    if (s->no_image)
        s->out = NULL;
    if (s->out && s->out[0] == '\0')
        return usage_error("--out: '' is not a file name (for no picture, "
                           "give --no-image)");
    if (s->obj && strcmp(s->obj, "-") == 0)
        return usage_error("--obj: '-' is not supported: the OBJ names its "
                           ".mtl and texture, which must be files beside it");
    if (s->obj && s->obj[0] == '\0')
        return usage_error("--obj: '' is not a file name");
    char mtl[4096], tex[4096];
    if (s->obj && wg_obj_siblings(s->obj, mtl, tex, sizeof mtl) != 0)
        return usage_error("--obj: '%s' is too long a path", s->obj);
    /* Every file the run writes, by the option that names it: no two may
     * be one, and only one may be standard output. */
    struct { const char *opt, *path; } outs[] = {
        {"out", s->out},           {"heightmap", s->heightmap},
        {"watermap", s->watermap}, {"json", s->json},
        {"obj", s->obj},           {"obj", s->obj ? mtl : NULL},
        {"obj", s->obj ? tex : NULL},
    };
    const int nouts = (int)(sizeof outs / sizeof outs[0]);
    for (int i = 0; i < nouts; i++)
        for (int j = i + 1; j < nouts; j++) {
            const char *a = outs[i].path, *b = outs[j].path;
            if (!a || !b || strcmp(a, b) != 0)
                continue;
            if (strcmp(outs[j].opt, "obj") == 0)
                return usage_error("--obj '%s' writes '%s', which --%s "
                                   "writes too", s->obj, b, outs[i].opt);
            return usage_error(strcmp(a, "-") == 0
                                   ? "--%s %s and --%s %s both want standard "
                                     "output; send one to a file"
                                   : "--%s '%s' and --%s '%s' are the same "
                                     "file",
                               outs[i].opt, a, outs[j].opt, b);
        }
    return -1;
}

/* Parse argv into s.  Returns -1 to go on, or the exit status to exit with
 * now (0 after --help or --version). */
static int parse_args(int argc, char **argv, settings *s)
{
    *s = defaults;
    s->render = wg_render_defaults;
    opterr = 0; /* our messages name the option and the valid values */
    int c, rc = 0;
    while ((c = getopt_long(argc, argv, ":qhV", long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_SIZE:
            rc = parse_u32("size", optarg, WG_SIZE_MIN, WG_SIZE_MAX,
                           &s->world.size);
            break;
        case OPT_SEED:
            rc = parse_u64("seed", optarg, 0, UINT64_MAX, &s->world.seed);
            break;
        case OPT_OCTAVES:
            rc = parse_u32("octaves", optarg, 1, WG_MAX_OCTAVES,
                           &s->world.octaves);
            break;
        case OPT_EROSION:
            rc = parse_u32("erosion", optarg, 0, WG_EROSION_MAX,
                           &s->world.passes);
            s->passes_given = 1;
            break;
        case OPT_HYDRAULIC:
            rc = parse_u32("hydraulic", optarg, 0, WG_HYDRAULIC_MAX,
                           &s->world.steps);
            s->steps_given = 1;
            break;
        case OPT_SEA_LEVEL:
            rc = parse_float("sea-level", optarg, 0, 1, &s->world.sea);
            s->world.sea += 0.0f; /* "-0" is the sea level 0 (SPEC.md) */
            break;
        case OPT_WATERMAP:
            s->watermap = optarg;
            break;
        case OPT_MESH:
            if (!wg_backend_find(optarg) && strcmp(optarg, "all") != 0 &&
                strcmp(optarg, "auto") != 0) {
                char names[256];
                mesh_names(names, sizeof names);
                return usage_error("--mesh: '%s' is not a backend (valid: %s, "
                                   "all, auto)", optarg, names);
            }
            s->mesh = optarg;
            break;
        case OPT_THREADS: {
            uint32_t t;
            rc = parse_u32("threads", optarg, 1, 1024, &t);
            s->threads = (int)t;
            break;
        }
        case OPT_CHECK:
            s->check = 1;
            break;
        case OPT_POWER:
            if (strcmp(optarg, "high-performance") == 0)
                s->power = WG_POWER_HIGH;
            else if (strcmp(optarg, "low-power") == 0)
                s->power = WG_POWER_LOW;
            else
                return usage_error("--power: '%s' is not a preference (valid: "
                                   "high-performance, low-power)", optarg);
            break;
        case OPT_GPU:
            if (optarg[0] == '\0')
                return usage_error("--gpu: '' names no device (valid: an "
                                   "index or a name substring, see "
                                   "--list-devices)");
            s->gpu = optarg;
            break;
        case OPT_LIST_DEVICES: {
            char err[WG_ERR_LEN];
            if (wg_vulkan_list_devices(stdout, err) != 0) {
                fprintf(stderr, "worldgen: --list-devices: %s\n", err);
                return 1;
            }
            return 0;
        }
        case OPT_JSON:
            if (optarg[0] == '\0') /* refused now, not after the world */
                return usage_error("--json: '' is not a file name ('-' is "
                                   "standard output)");
            s->json = optarg;
            break;
        case OPT_HISTOGRAM:
            s->histogram = 1;
            break;
        case OPT_HEIGHTMAP:
            s->heightmap = optarg;
            break;
        case OPT_HEIGHTMAP_FORMAT:
            s->heightmap_format = wg_heightmap_format_named(optarg);
            if (s->heightmap_format == WG_HM_NONE)
                return usage_error("--heightmap-format: '%s' is not a height "
                                   "map format (valid: pfm, png, r16)", optarg);
            break;
        case OPT_OUT:
            s->out = optarg;
            s->out_given = 1;
            break;
        case OPT_NO_IMAGE:
            s->no_image = 1;
            break;
        case OPT_WIDTH:
            rc = parse_u32("width", optarg, WG_RENDER_SIDE_MIN,
                           WG_RENDER_SIDE_MAX, &s->render.width);
            break;
        case OPT_HEIGHT:
            rc = parse_u32("height", optarg, WG_RENDER_SIDE_MIN,
                           WG_RENDER_SIDE_MAX, &s->render.height);
            break;
        case OPT_AA:
            rc = parse_u32("aa", optarg, 1, WG_RENDER_AA_MAX, &s->render.aa);
            break;
        case OPT_AZIMUTH:
            rc = parse_float("azimuth", optarg, -360, 360,
                             &s->render.cam.azimuth);
            break;
        case OPT_ELEVATION:
            rc = parse_float("elevation", optarg, -89, 89,
                             &s->render.cam.elevation);
            break;
        case OPT_DISTANCE:
            rc = parse_float("distance", optarg, 0.1, 1000,
                             &s->render.cam.distance);
            break;
        case OPT_FOV:
            rc = parse_float("fov", optarg, 1, 150, &s->render.cam.fov);
            break;
        case OPT_LOOK:
            rc = parse_float("look", optarg, -10, 10, &s->render.cam.look);
            break;
        case OPT_SUN_AZIMUTH:
            rc = parse_float("sun-azimuth", optarg, -360, 360,
                             &s->render.sun_azimuth);
            break;
        case OPT_SUN_ELEVATION:
            rc = parse_float("sun-elevation", optarg, -90, 90,
                             &s->render.sun_elevation);
            break;
        case OPT_NO_CULL:
            s->render.cull = 0;
            break;
        case OPT_OBJ:
            s->obj = optarg;
            break;
        case OPT_SHOW:
            s->show = 1;
            break;
        case 'q':
            s->quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("worldgen %s (field spec %d)\n", WG_VERSION, WG_SPEC_VERSION);
            return 0;
        case ':':
            return usage_error("option '%s' needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option '%s'", argv[optind - 1]);
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    /* Counts not given follow the resolution, so that every size makes the
     * same landscape (SPEC.md, "Defaults in world terms"). */
    if (!s->passes_given)
        s->world.passes = wg_default_passes(s->world.size);
    if (!s->steps_given)
        s->world.steps = wg_default_steps(s->world.size);

    /* A map's format: --heightmap-format for '-' or to override, else its
     * extension. */
    struct { const char *opt, *path; wg_hm_format *f; } maps[] = {
        {"heightmap", s->heightmap, &s->heightmap_format},
        {"watermap", s->watermap, &s->watermap_format},
    };
    const wg_hm_format given = s->heightmap_format;
    for (int i = 0; i < 2; i++) {
        if (!maps[i].path)
            continue;
        *maps[i].f = given;
        if (*maps[i].f != WG_HM_NONE)
            continue;
        if (strcmp(maps[i].path, "-") == 0)
            return usage_error("--%s -: give the format with "
                               "--heightmap-format (pfm, png or r16)",
                               maps[i].opt);
        *maps[i].f = wg_heightmap_format_of_path(maps[i].path);
        if (*maps[i].f == WG_HM_NONE)
            return usage_error("--%s: '%s' has no known extension "
                               "(valid: .pfm, .png, .r16; or give "
                               "--heightmap-format)", maps[i].opt,
                               maps[i].path);
    }
    return check_picture_args(s);
}

/* Bytes of memory this machine can give us now: MemAvailable, or the
 * physical memory when /proc is not there. */
static double available_bytes(void)
{
    FILE *fp = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kib = 0;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
            break;
    if (fp)
        fclose(fp);
    if (kib)
        return (double)kib * 1024.0;
    return (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
}

/* Refuse a world whose fields cannot fit, before allocating anything.
 * Returns 0, or 1 after saying how much it needs. */
static int check_memory(const settings *s, int backends)
{
    /* A running backend holds the six result fields and a second height
     * (ping-pong), and during the hydraulic stage five more (a second water
     * and two sediments, R, the starting ground); the reference run kept
     * for comparison holds six. */
    double fields = (s->world.steps ? 12.0 : 7.0) + 6.0 * (backends > 1 ? 1 : 0);
    double need = (double)wg_cells(s->world.size) * sizeof(float) * fields;
    double have = available_bytes();
    if (need <= have)
        return 0;
    fprintf(stderr, "worldgen: --size %" PRIu32 " needs %.1f GiB for its "
            "fields; this machine has %.1f GiB available\n", s->world.size,
            need / 1073741824.0, have / 1073741824.0);
    return 1;
}

static void on_signal(int sig)
{
    /* Remove every half-written output, then die of the same signal so the
     * parent sees the conventional status (130 for SIGINT, 143 for SIGTERM). */
    wg_outfile_remove_all();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The parameters of the run, for the outputs' metadata. */
static void describe(const settings *s, char *buf, size_t len)
{
    snprintf(buf, len, "--size %" PRIu32 " --seed %" PRIu64
             " --octaves %" PRIu32 " --erosion %" PRIu32 " --hydraulic %" PRIu32
             " --sea-level %.9g", s->world.size, s->world.seed,
             s->world.octaves, s->world.passes, s->world.steps,
             (double)s->world.sea);
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

/* Render the picture and write it (--out), write the OBJ (--obj), print the
 * render block, then open the window (--show): the PNG is on disk before
 * the window opens, so a missing display loses nothing.  Returns 0, or 1
 * after a message. */
static int write_picture(const settings *s, const wg_fields *f, FILE *tables)
{
    char err[WG_ERR_LEN], params[768];
    wg_render_report rep = {
        .width = s->render.width, .height = s->render.height,
        .aa = s->render.aa, .raster = -1, .shade = -1, .png = -1, .obj = -1,
        .png_path = s->out, .obj_path = s->obj,
    };
    wg_image img = {0};
    int status = 1;
    describe_picture(s, params, sizeof params);
    if (s->out) {
        /* Keys of 8 bytes a sample, the shadow map and the surface of
         * ground and water, the pixels. */
        double samples = (double)s->render.width * s->render.height *
                         s->render.aa * s->render.aa;
        double need = samples * 8.0 + (double)wg_cells(f->n) * 5.0 +
                      (double)s->render.width * s->render.height * 3.0;
        if (need > available_bytes()) {
            fprintf(stderr, "worldgen: a %" PRIu32 "x%" PRIu32 " picture at "
                    "--aa %" PRIu32 " needs %.1f GiB; this machine has %.1f "
                    "GiB available\n", s->render.width, s->render.height,
                    s->render.aa, need / 1073741824.0,
                    available_bytes() / 1073741824.0);
            return 1;
        }
        wg_render_opts o = s->render;
        o.threads = (uint32_t)s->threads;
        wg_render_stats rs;
        if (wg_render(f, s->world.sea, &o, &img, &rs, err) != 0) {
            fprintf(stderr, "worldgen: cannot render: %s\n", err);
            return 1;
        }
        rep.raster = rs.raster;
        rep.shade = rs.shade;
        rep.triangles = rs.triangles;
        rep.drawn = rs.drawn;
        rep.threads = rs.threads;
        double t0 = wg_now();
        const wg_png_text text[] = {
            {"Software", "worldgen " WG_VERSION},
            {"worldgen", params},
        };
        wg_outfile o_png;
        if (wg_outfile_open(&o_png, s->out, err) != 0 ||
            wg_png_write(o_png.fp, img.w, img.h, 8, 3, img.rgb,
                         (size_t)img.w * 3, text, 2, err) != 0 ||
            wg_outfile_commit(&o_png, err) != 0) {
            wg_outfile_abort(&o_png);
            fprintf(stderr, "worldgen: --out: cannot write '%s': %s\n", s->out,
                    err);
            goto out;
        }
        rep.png = wg_now() - t0;
    }
    if (s->obj) {
        char header[1024];
        snprintf(header, sizeof header, "worldgen %s\n%s", WG_VERSION, params);
        double t0 = wg_now();
        if (wg_obj_save(s->obj, f, s->world.sea, header, err) != 0) {
            fprintf(stderr, "worldgen: --obj: cannot write %s\n", err);
            goto out;
        }
        rep.obj = wg_now() - t0;
    }
    if (!s->quiet) {
        fputc('\n', tables);
        wg_report_render(tables, &rep);
    }
    if (s->show) {
        char title[128];
        snprintf(title, sizeof title, "worldgen: seed %" PRIu64 ", %" PRIu32
                 "x%" PRIu32 " grid", s->world.seed, s->world.size,
                 s->world.size);
        fflush(tables);
        if (wg_window_show(&img, title, err) != 0) {
            fprintf(stderr, "worldgen: --show: %s; the picture is in %s\n",
                    err, strcmp(s->out, "-") == 0 ? "standard output"
                                                  : s->out);
            goto out;
        }
    }
    status = 0;
out:
    wg_image_free(&img);
    return status;
}

/* Write one N x N field as a map (--heightmap, --watermap).  Returns 0,
 * or 1 after a message. */
static int write_map(const settings *s, const char *opt, const char *path,
                     wg_hm_format format, const float *field, uint32_t n)
{
    char err[WG_ERR_LEN], params[256];
    describe(s, params, sizeof params);
    const wg_png_text text[] = {
        {"Software", "worldgen " WG_VERSION},
        {"worldgen", params},
    };
    wg_outfile o;
    if (wg_outfile_open(&o, path, err) != 0 ||
        wg_heightmap_write(o.fp, format, field, n, text, 2, err) != 0 ||
        wg_outfile_commit(&o, err) != 0) {
        wg_outfile_abort(&o);
        fprintf(stderr, "worldgen: --%s: cannot write '%s': %s\n", opt, path,
                err);
        return 1;
    }
    return 0;
}

/* Which backends this run uses, in the order they run.  Returns their
 * number; -1 after a message when the one asked for is not available. */
static int choose_backends(const settings *s, const wg_job *job,
                           const wg_backend **run, wg_skipped *sk, int *nsk)
{
    int n = 0;
    char err[WG_ERR_LEN];
    *nsk = 0;
    if (strcmp(s->mesh, "all") == 0) {
        for (size_t i = 0; wg_backends[i]; i++) {
            if (wg_backends[i]->probe(job, err) == 0)
                run[n++] = wg_backends[i];
            else {
                sk[*nsk].backend = wg_backends[i];
                snprintf(sk[(*nsk)++].why, WG_ERR_LEN, "%s", err);
            }
        }
        return n;
    }
    const wg_backend *b = wg_backend_find(s->mesh);
    if (!b) { /* auto: the fastest available, running nothing to find it */
        for (size_t i = 0; wg_backends[i]; i++)
            if (wg_backends[i]->probe(job, err) != 0) {
                sk[*nsk].backend = wg_backends[i];
                snprintf(sk[(*nsk)++].why, WG_ERR_LEN, "%s", err);
            }
        b = wg_backend_fastest(job, NULL);
    } else if (b->probe(job, err) != 0) {
        fprintf(stderr, "worldgen: --mesh %s: not available here: %s\n",
                b->name, err);
        return -1;
    }
    /* --check compares with scalar, so scalar runs first when not chosen. */
    if (s->check && b != &wg_backend_scalar)
        run[n++] = &wg_backend_scalar;
    run[n++] = b;
    return n;
}

/* Test hook: WORLDGEN_FAULT=NAME flips the lowest bit of one height that
 * backend NAME read back (NAME:water, one water depth), so the tests can
 * prove that --check fails when a backend disagrees (no real backend can
 * be made to disagree on demand). */
static void inject_fault(const wg_result *r)
{
    const char *fault = getenv("WORLDGEN_FAULT");
    size_t len = strlen(r->backend->name);
    if (!fault || strncmp(fault, r->backend->name, len) != 0 ||
        (fault[len] != '\0' && strcmp(fault + len, ":water") != 0))
        return;
    float *field = fault[len] ? r->fields.water : r->fields.height;
    float *v = &field[wg_cells(r->fields.n) / 2];
    uint32_t bits;
    memcpy(&bits, v, sizeof bits);
    bits ^= 1;
    memcpy(v, &bits, sizeof bits);
}

static int write_json(const settings *s, const wg_result *r, int n,
                      const wg_result *ref, const wg_skipped *sk, int nsk)
{
    char err[WG_ERR_LEN];
    wg_outfile o;
    if (wg_outfile_open(&o, s->json, err) != 0) {
        fprintf(stderr, "worldgen: --json: cannot write '%s': %s\n", s->json, err);
        return 1;
    }
    wg_report_json(o.fp, &s->world, r, n, ref, sk, nsk, s->check);
    if (wg_outfile_commit(&o, err) != 0) {
        wg_outfile_abort(&o);
        fprintf(stderr, "worldgen: --json: cannot write '%s': %s\n", s->json, err);
        return 1;
    }
    return 0;
}

/* Make the world, report, write.  Returns the exit status. */
static int run(const settings *s)
{
    const wg_backend *chosen[8];
    wg_skipped skipped[8];
    wg_result res[8];
    int n = 0, nsk = 0, status = 1;
    char err[WG_ERR_LEN];
    float *lattice = NULL;
    const wg_result *ref = NULL;
    int to_stdout = (s->heightmap && strcmp(s->heightmap, "-") == 0) ||
                    (s->watermap && strcmp(s->watermap, "-") == 0) ||
                    (s->json && strcmp(s->json, "-") == 0) ||
                    (s->out && strcmp(s->out, "-") == 0);
    FILE *tables = to_stdout ? stderr : stdout;
    memset(res, 0, sizeof res);

    wg_job job = {.world = s->world, .threads = s->threads,
                  .power = s->power, .gpu = s->gpu};
    wg_consts_init(&job.consts, &job.world);
    n = choose_backends(s, &job, chosen, skipped, &nsk);
    if (n <= 0) {
        if (n == 0)
            fprintf(stderr, "worldgen: --mesh %s: no backend is available "
                    "here\n", s->mesh);
        return 1;
    }
    if (check_memory(s, n) != 0)
        return 1;
    lattice = malloc((size_t)WG_LATTICE_R * WG_LATTICE_R * sizeof *lattice);
    if (!lattice) {
        fprintf(stderr, "worldgen: out of memory for the lattice\n");
        goto out;
    }
    wg_lattice_fill(lattice, s->world.seed);
    job.lattice = lattice;

    for (int i = 0; i < n; i++) {
        wg_result *r = &res[i];
        r->backend = chosen[i];
        if (wg_backend_run(r->backend, &job, &r->fields, &r->t, r->device,
                           sizeof r->device, err) != 0) {
            fprintf(stderr, "worldgen: --mesh %s: %s\n", r->backend->name, err);
            goto out;
        }
        inject_fault(r);
        if (r->backend == &wg_backend_scalar) {
            ref = r;
        } else if (ref) {
            /* Compare now and keep only the reference's fields, so --mesh
             * all holds two worlds at a time, not one per backend. */
            r->compared = 1;
            r->agree = wg_agree(&ref->fields, &r->fields, r->backend);
            wg_fields_free(&r->fields);
        }
    }
    if (!s->quiet) {
        wg_report_skipped(tables, skipped, nsk);
        wg_report_table(tables, &s->world, res, n, ref);
        wg_report_agreement(tables, res, n);
    }
    /* The outputs come from the reference when it ran (every other backend
     * agrees with it or the run says so), else from the one backend. */
    const wg_fields *f = ref ? &ref->fields : &res[n - 1].fields;
    if (s->histogram) {
        wg_height_stats st;
        wg_water_stats ws;
        if (wg_height_stats_measure(f->height, wg_cells(f->n), &st) != 0) {
            fprintf(stderr, "worldgen: out of memory for the histogram\n");
            goto out;
        }
        wg_water_stats_measure(f->height, f->water, wg_cells(f->n),
                               s->world.sea, &ws);
        if (!s->quiet)
            fputc('\n', tables);
        wg_report_histogram(tables, &st, &ws);
    }
    if (s->json && write_json(s, res, n, ref, skipped, nsk) != 0)
        goto out;
    if (s->heightmap && write_map(s, "heightmap", s->heightmap,
                                  s->heightmap_format, f->height, f->n) != 0)
        goto out;
    if (s->watermap && write_map(s, "watermap", s->watermap,
                                 s->watermap_format, f->water, f->n) != 0)
        goto out;
    /* The picture last: the other outputs do not wait for it. */
    if ((s->out || s->obj) && write_picture(s, f, tables) != 0)
        goto out;
    status = 0;
    for (int i = 0; s->check && i < n; i++)
        if (res[i].compared && !res[i].agree.ok) {
            fprintf(stderr, "worldgen: --check: %s disagrees with scalar: "
                    "max dh = %.2e, max dw = %.2e, max dn = %.2e (allowed: "
                    "dh 0, dw 0, dn %.0e)\n", res[i].backend->name,
                    res[i].agree.max_dh, res[i].agree.max_dw,
                    res[i].agree.max_dn, res[i].backend->normal_tolerance);
            status = EXIT_DISAGREE;
        }
out:
    for (int i = 0; i < n; i++)
        wg_fields_free(&res[i].fields);
    free(lattice);
    return status;
}

int main(int argc, char **argv)
{
    settings s;
    int rc = parse_args(argc, argv, &s);
    if (rc >= 0)
        return fclose(stdout) == 0 || rc ? rc : 1;

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    rc = run(&s);
    /* A table that could not be written (a closed pipe, a full disk) is a
     * failure too, not a silent success. */
    if (fclose(stdout) != 0 && rc == 0) {
        fprintf(stderr, "worldgen: cannot write to standard output: %s\n",
                strerror(errno));
        rc = 1;
    }
    return rc;
}
