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
#include "render/heightmap.h"
#include "render/outfile.h"
#include "render/report.h"
#include "render/stats.h"

#ifndef WG_VERSION
#define WG_VERSION "dev"
#endif

enum { EXIT_USAGE = 2, EXIT_DISAGREE = 3 };

/* Everything the command line decides, with the defaults. */
typedef struct settings {
    wg_world world;
    const char *mesh;
    const char *heightmap;
    wg_hm_format heightmap_format; /* from --heightmap-format, or NONE */
    const char *json;              /* --json FILE, "-" for stdout */
    int threads;                   /* 0: all cores, or OMP_NUM_THREADS */
    int check;                     /* exit 3 when a backend disagrees */
    int histogram;
    int quiet;
} settings;

static const settings defaults = {
    .world = {.size = 512, .octaves = 6, .passes = 12, .seed = 1234},
    .mesh = "scalar",
};

enum {
    OPT_SIZE = 256,
    OPT_SEED,
    OPT_OCTAVES,
    OPT_EROSION,
    OPT_MESH,
    OPT_HISTOGRAM,
    OPT_HEIGHTMAP,
    OPT_HEIGHTMAP_FORMAT,
    OPT_THREADS,
    OPT_CHECK,
    OPT_JSON,
};

static const struct option long_opts[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"seed", required_argument, NULL, OPT_SEED},
    {"octaves", required_argument, NULL, OPT_OCTAVES},
    {"erosion", required_argument, NULL, OPT_EROSION},
    {"mesh", required_argument, NULL, OPT_MESH},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"check", no_argument, NULL, OPT_CHECK},
    {"json", required_argument, NULL, OPT_JSON},
    {"histogram", no_argument, NULL, OPT_HISTOGRAM},
    {"heightmap", required_argument, NULL, OPT_HEIGHTMAP},
    {"heightmap-format", required_argument, NULL, OPT_HEIGHTMAP_FORMAT},
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
"backends, a timing table, and height maps.\n"
"\n"
"World:\n"
"      --size N             vertices per side, 2..65536 (default 512)\n"
"      --seed S             unsigned 64-bit seed, decimal or 0x hex (default 1234)\n"
"      --octaves N          noise octaves, 1..16 (default 6)\n"
"      --erosion N          thermal erosion passes, 0..10000 (default 12)\n"
"\n"
"Backends:\n"
"      --mesh NAME          backend to run:");
    for (size_t i = 0; wg_backends[i]; i++)
        fprintf(fp, "%s %s", i ? "," : "", wg_backends[i]->name);
    fprintf(fp, ",\n"
"                           all (each in turn, compared with scalar) or auto\n"
"                           (the fastest here) (default scalar)\n"
"      --threads N          CPU threads for openmp, 1..1024 (default: all\n"
"                           cores, or OMP_NUM_THREADS)\n"
"      --check              exit with status 3 when a backend disagrees with\n"
"                           scalar beyond SPEC.md's tolerances (runs scalar\n"
"                           too when --mesh leaves it out)\n"
"\n"
"Output:\n"
"      --json FILE          the timings and agreement as JSON ('-': stdout)\n"
"      --histogram          print the height distribution and material bounds\n"
"      --heightmap FILE     write the heights: FILE.pfm (binary32), FILE.png\n"
"                           (16-bit grey) or FILE.r16 (raw uint16 LE); '-' is\n"
"                           standard output (the tables then go to stderr)\n"
"      --heightmap-format F pfm, png or r16: the format for '-' or to override\n"
"                           the extension\n"
"  -q, --quiet              print no tables\n"
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

/* The names --mesh accepts, for its error message. */
static void mesh_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; wg_backends[i] && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                                 wg_backends[i]->name);
}

/* Parse argv into s.  Returns -1 to go on, or the exit status to exit with
 * now (0 after --help or --version). */
static int parse_args(int argc, char **argv, settings *s)
{
    *s = defaults;
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
        case OPT_JSON:
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

    if (s->json && s->heightmap && strcmp(s->json, "-") == 0 &&
        strcmp(s->heightmap, "-") == 0)
        return usage_error("--json - and --heightmap - both want standard "
                           "output; send one to a file");
    if (s->heightmap && s->heightmap_format == WG_HM_NONE) {
        if (strcmp(s->heightmap, "-") == 0)
            return usage_error("--heightmap -: give the format with "
                               "--heightmap-format (pfm, png or r16)");
        s->heightmap_format = wg_heightmap_format_of_path(s->heightmap);
        if (s->heightmap_format == WG_HM_NONE)
            return usage_error("--heightmap: '%s' has no known extension "
                               "(valid: .pfm, .png, .r16; or give "
                               "--heightmap-format)", s->heightmap);
    }
    return -1;
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
    /* A running backend holds 6 fields (two heights for ping-pong, three
     * normals, and one more on a GPU's staging side); each finished run
     * that is kept for comparison holds 4. */
    double fields = 6.0 + 4.0 * (backends > 1 ? 1 : 0);
    double need = (double)wg_cells(s->world.size) * sizeof(float) * fields;
    double have = available_bytes();
    if (need <= have)
        return 0;
    fprintf(stderr, "worldgen: --size %" PRIu32 " needs %.1f GiB for its "
            "fields; this machine has %.1f GiB available\n", s->world.size,
            need / 1073741824.0, have / 1073741824.0);
    return 1;
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    /* Remove every half-written output, then die of the same signal so the
     * parent sees the conventional status (130 for SIGINT, 143 for SIGTERM). */
    wg_outfile_remove_all();
    interrupted = sig;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* The parameters of the run, for the outputs' metadata. */
static void describe(const settings *s, char *buf, size_t len)
{
    snprintf(buf, len, "--size %" PRIu32 " --seed %" PRIu64
             " --octaves %" PRIu32 " --erosion %" PRIu32,
             s->world.size, s->world.seed, s->world.octaves, s->world.passes);
}

static int write_heightmap(const settings *s, const wg_fields *f)
{
    char err[WG_ERR_LEN], params[256];
    describe(s, params, sizeof params);
    const wg_png_text text[] = {
        {"Software", "worldgen " WG_VERSION},
        {"worldgen", params},
    };
    wg_outfile o;
    if (wg_outfile_open(&o, s->heightmap, err) != 0 ||
        wg_heightmap_write(o.fp, s->heightmap_format, f->height, f->n, text,
                           2, err) != 0 ||
        wg_outfile_commit(&o, err) != 0) {
        wg_outfile_abort(&o);
        fprintf(stderr, "worldgen: --heightmap: cannot write '%s': %s\n",
                s->heightmap, err);
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
 * backend NAME read back, so the tests can prove that --check fails when a
 * backend disagrees (no real backend can be made to disagree on demand). */
static void inject_fault(const wg_result *r)
{
    const char *fault = getenv("WORLDGEN_FAULT");
    if (fault && strcmp(fault, r->backend->name) == 0) {
        uint32_t bits;
        float *h = &r->fields.height[wg_cells(r->fields.n) / 2];
        memcpy(&bits, h, sizeof bits);
        bits ^= 1;
        memcpy(h, &bits, sizeof bits);
    }
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
                    (s->json && strcmp(s->json, "-") == 0);
    FILE *tables = to_stdout ? stderr : stdout;
    memset(res, 0, sizeof res);

    wg_job job = {.world = s->world, .threads = s->threads};
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
        if (wg_height_stats_measure(f->height, wg_cells(s->world.size), &st) != 0) {
            fprintf(stderr, "worldgen: out of memory for the histogram\n");
            goto out;
        }
        if (!s->quiet)
            fputc('\n', tables);
        wg_report_histogram(tables, &st);
    }
    if (s->json && write_json(s, res, n, ref, skipped, nsk) != 0)
        goto out;
    if (s->heightmap && write_heightmap(s, f) != 0)
        goto out;
    status = 0;
    for (int i = 0; s->check && i < n; i++)
        if (res[i].compared && !res[i].agree.ok) {
            fprintf(stderr, "worldgen: --check: %s disagrees with scalar: "
                    "max dh = %.2e, max dn = %.2e (allowed: dh 0, dn %.0e)\n",
                    res[i].backend->name, res[i].agree.max_dh,
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
