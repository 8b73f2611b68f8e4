/* options.h: the settings worldgen's command line decides (options.c
 * reads and checks them), and two things the run reads off them: the
 * maps asked for and where the tables go. */
#ifndef WG_OPTIONS_H
#define WG_OPTIONS_H

#include <stdio.h>

#include "backends/backend.h"
#include "render/heightmap.h"
#include "render/render.h"

/* The version --version says and the outputs carry (the Makefile's). */
#ifndef WG_VERSION
#define WG_VERSION "dev"
#endif

/* The long options, by getopt_long's value: settings.given and its
 * fellows are indexed by them. */
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
    float distance_needed;         /* the fit past --distance's most, or 0 */
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

/* Parse argv into s: read every option, then check them against each
 * other and settle what follows from them, in this order (a command line
 * with several faults is refused for the first).  Returns -1 to go on, or
 * the exit status to exit with now (0 after --help or --version). */
int parse_args(int argc, char **argv, settings *s);

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
void map_outputs(const settings *s, map_output m[MAP_OUTPUTS]);

/* Where the tables go: standard output, unless an output is written
 * there (--heightmap -, --json -, --out -): then standard error. */
FILE *tables_stream(const settings *s);

#endif
