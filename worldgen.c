/* worldgen.c: main and the run.  Make the world on the chosen backends,
 * report, write the outputs; nothing else.  The command line it runs is
 * read and checked by options.c.
 *
 * Exit status: 0 success, 1 a runtime failure (a file that cannot be
 * written, no Vulkan device, not enough memory), 2 a usage error (a bad
 * option or value), 130/143 interrupted. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
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
#include "options.h"
#include "say.h"

/* The bytes of a control group's file cache, which the kernel takes back
 * as the group needs memory (as the machine's MemAvailable counts the
 * page cache): the group's memory.stat lines KEY_active_file and
 * KEY_inactive_file, KEY "" in v2 and "total_" in v1 (the group and those
 * under it, as usage_in_bytes counts).  Shared memory and tmpfs are not
 * among them (the kernel keeps them with the anonymous pages). */
static unsigned long long cgroup_file_cache(const char *dir, const char *key)
{
    char path[4200], line[256], active[64], inactive[64];
    snprintf(path, sizeof path, "%s/memory.stat", dir);
    snprintf(active, sizeof active, "%sactive_file %%llu", key);
    snprintf(inactive, sizeof inactive, "%sinactive_file %%llu", key);
    FILE *fp = fopen(path, "r");
    unsigned long long cache = 0, v;
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, active, &v) == 1 || sscanf(line, inactive, &v) == 1)
            cache += v;
    if (fp)
        fclose(fp);
    return cache;
}

/* The bytes a control group's limit leaves, walking from the process's
 * group up to the root: 'limit' and 'usage' name the files (v2:
 * memory.max and memory.current; v1: memory.limit_in_bytes and
 * memory.usage_in_bytes), and 'key' the memory.stat lines of the file
 * cache the usage includes (cgroup_file_cache), which is left too: a job
 * that had written 250 MB before worldgen in a group of 300 MiB was
 * refused a world of 112 MiB ("lets it have 42.1 MiB more"), which the
 * kernel would have made room for.  Returns the least left, or -1 without
 * a limit. */
static double cgroup_left(const char *root, const char *group,
                          const char *limit, const char *usage,
                          const char *key)
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
            unsigned long long cache = cgroup_file_cache(dir, key);
            used = used > cache ? used - cache : 0;
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
    *limit = "this machine has %s available";
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
                               "memory.current", "");
        else if (strstr(ctl, "memory")) /* v1: N:memory:/path */
            left = cgroup_left("/sys/fs/cgroup/memory",
                               strcmp(group, "/") ? group : "",
                               "memory.limit_in_bytes", "memory.usage_in_bytes",
                               "total_");
        if (left >= 0 && left < have) {
            have = left;
            *limit = "its control group lets it have %s more";
        }
    }
    if (fp)
        fclose(fp);
    /* ulimit -v: the limit less what is mapped already (VmSize); ulimit
     * -d: since Linux 4.7 it bounds the private writable memory (VmData:
     * the heap and every anonymous mapping, where the fields are), the
     * limit less what is there already.  Not counted, a world over -d was
     * made until its first allocation failed ("out of memory" after
     * minutes), or drawn until the picture's did. */
    static const struct {
        int resource;
        const char *field, *says;
    } limits[] = {
        {RLIMIT_AS, "VmSize: %llu kB",
         "its address space limit (ulimit -v) leaves %s"},
        {RLIMIT_DATA, "VmData: %llu kB",
         "its data size limit (ulimit -d) leaves %s"},
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        struct rlimit rl;
        if (getrlimit(limits[i].resource, &rl) != 0 ||
            rl.rlim_cur == RLIM_INFINITY)
            continue;
        unsigned long long used = 0;
        fp = fopen("/proc/self/status", "r");
        while (fp && fgets(line, sizeof line, fp))
            if (sscanf(line, limits[i].field, &used) == 1)
                break;
        if (fp)
            fclose(fp);
        double left = (double)rl.rlim_cur - (double)used * 1024.0;
        left = left > 0 ? left : 0;
        if (left < have) {
            have = left;
            *limit = limits[i].says;
        }
    }
    return have;
}

/* available_bytes, and what limits it in words ("this machine has 1.20
 * GiB available") in left[128]. */
static double memory_left(char left[128])
{
    const char *limit;
    char size[32];
    double have = available_bytes(&limit);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(left, 128, limit, wg_bytes_text(have, size));
#pragma GCC diagnostic pop
    return have;
}

static int cpu_threads(const settings *s);

/* What drawing the picture holds at its peak besides the world's fields
 * (the renderer works in strips of rows; then the PNG's rows), or 0 with
 * no picture. */
static double picture_bytes(const settings *s, uint32_t n)
{
    if (!s->out)
        return 0.0;
    wg_render_opts o = s->render;
    o.threads = (uint32_t)cpu_threads(s);
    return wg_render_memory(&o, n) +
           (double)s->render.width * s->render.height * 3.0;
}

/* 0 when 'need' bytes for the picture fit in what is left; else 1 after
 * saying so. */
static int picture_fits(const settings *s, double need)
{
    char left[128], size[32];
    if (need <= memory_left(left))
        return 0;
    say("a %" PRIu32 "x%" PRIu32 " picture at --aa %" PRIu32 " needs %s; %s",
        s->render.width, s->render.height, s->render.aa,
        wg_bytes_text(need, size), left);
    return 1;
}

/* Refuse a world whose fields cannot fit, before allocating anything, and
 * a picture that cannot be drawn from them (it had been found after the
 * world was made).  Returns 0, or 1 after saying how much it needs. */
static int check_memory(const settings *s, const wg_job *job,
                        const wg_backend *const *chosen, int backends)
{
    /* Each backend says what it holds at its peak, its fields cut to the
     * window in place (host_bytes: a region's window had been counted
     * again, six fields more, and OpenMP's p and q it never takes, so a
     * Slurm task of 3 GiB was refused an 8193 tile whose peak is 2.36
     * GiB); the largest counts, since they run one after another.  The
     * reference run kept for comparison holds the window's six. */
    double window = (double)wg_rect_cells(wg_job_window(job));
    int region = !wg_rect_equal(wg_job_window(job), wg_job_rect(job));
    double running = 0.0;
    for (int i = 0; i < backends; i++) {
        double held = chosen[i]->host_bytes(job);
        running = held > running ? held : running;
    }
    double need = running + sizeof(float) * 6.0 * (backends > 1) * window;
    char what[256], left[128];
    if (need <= memory_left(left))
        /* The picture is drawn from the six fields of the whole world
         * (a picture is of whole worlds only), the backends' own memory
         * given back. */
        return picture_fits(s, sizeof(float) * 6.0 * window +
                                   picture_bytes(s, s->world.size));
    /* What takes less: no hydraulic stage (four fields fewer), and for a
     * region a smaller halo (fewer passes and steps, of those it has).  A
     * whole world's fields do not depend on the counts: "or fewer steps"
     * had been said of it too; nor does a region's without them, whose
     * halo is the normals' one cell ("fewer --erosion passes" had been
     * said with --erosion 0). */
    const int passes = s->world.passes > 0, steps = s->world.steps > 0;
    const char *less =
        region && passes && steps
            ? " (fewer --erosion passes and --hydraulic steps, a smaller "
              "halo, or --hydraulic 0, need less)"
        : region && steps
            ? " (fewer --hydraulic steps, a smaller halo, or --hydraulic 0, "
              "need less)"
        : region && passes ? " (fewer --erosion passes, a smaller halo, "
                             "need less)"
        : steps ? " (--hydraulic 0 needs less)"
                : "";
    char size[32];
    wg_job_describe(job, what, sizeof what);
    say("--size %" PRIu32 "%s%s needs %s for "
        "the fields of %s; %s%s",
        s->world.size, s->region_arg ? " --region " : "",
        s->region_arg ? s->region_arg : "", wg_bytes_text(need, size), what,
        left, less);
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
    /* OMP_THREAD_LIMIT caps the default as it caps openmp's team. */
    const long limit = wg_thread_limit();
    if (t < 1)
        return limit < cores ? (int)limit : 0;
    t = t < cores ? t : cores;
    return (int)(t < limit ? t : limit);
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
    char line[160];
    int n = snprintf(line, sizeof line, "worldgen: %s%s%s",
                     progress_line.who ? progress_line.who : "",
                     progress_line.who ? ": " : "", stage);
    if (n >= 0 && (size_t)n < sizeof line && done >= 0.0)
        n += snprintf(line + n, sizeof line - (size_t)n, " %3.0f%%",
                      100.0 * done);
    if (n >= 0 && (size_t)n < sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, " (%.0f s)",
                 now - progress_line.start);
    /* Cut to the terminal's width, less one column: a line that wrapped
     * left a row behind each time it was rewritten (the clear wipes only
     * the last row). */
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 &&
        (size_t)ws.ws_col - 1 < strlen(line))
        line[ws.ws_col - 1] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
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
        /* Again, the fields now made: what is left is measured with them
         * in it. */
        if (picture_fits(s, picture_bytes(s, f->n)) != 0)
            return 1;
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
        else if (rs.camera_near)
            say("warning: the camera is %.2g over the surface (at height "
                "%.6g, the surface at %.6g), nearer than the %g the "
                "picture is cut at: the surface close by is cut away, with "
                "holes; raise --elevation, --distance or --look",
                (double)(rs.camera_y - rs.surface_y), (double)rs.camera_y,
                (double)rs.surface_y, (double)WG_EYE_NEAR);
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
    /* The meshes' provenance: the world's options, which make them again;
     * not the picture's camera and sun, which change nothing in them (a
     * texture is the ground's own colour), and for the glTF its
     * --gltf-error, which does (its parameters had made the full mesh). */
    char mesh_params[512];
    describe(s, mesh_params, sizeof mesh_params);
    if (s->obj) {
        char header[1024];
        snprintf(header, sizeof header, "worldgen %s\n%s", WG_VERSION,
                 mesh_params);
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
        size_t used = strlen(mesh_params);
        char e[32];
        wg_float_text(e, sizeof e, s->gltf_error);
        if (s->gltf_error > 0.0f)
            snprintf(mesh_params + used, sizeof mesh_params - used,
                     " --gltf-error %s", e);
        if (wg_gltf_save(s->gltf, f, s->world.sea, mesh_params, s->gltf_error,
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
        /* Said as for a --mesh without vulkan (options.c): auto's choice is
         * known only now. */
        if (b && b != &wg_backend_vulkan &&
            (s->gpu || s->power != WG_POWER_DEFAULT))
            say("warning: --%s does nothing: --mesh auto chose %s, which "
                "is no Vulkan backend (--mesh vulkan runs it)",
                s->gpu ? "gpu" : "power", b->name);
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
    /* A Vulkan run asked for by name, among others that --mesh names (all,
     * or a list): a device by --gpu, or the validation layers.  Skipped, it
     * had let `--mesh all --check --gpu 7` (no device 7) or validation that
     * is not installed pass a CI gate that checked no Vulkan, exit 0. */
    const char *validation = getenv("WORLDGEN_VK_VALIDATION");
    char gpu[96];
    snprintf(gpu, sizeof gpu, "--gpu '%.80s'", s->gpu ? s->gpu : "");
    const char *asked = s->gpu ? gpu
                        : validation && strcmp(validation, "1") == 0
                            ? "WORLDGEN_VK_VALIDATION=1"
                            : NULL;
    for (size_t i = 0; wg_backends[i]; i++) {
        const int named = asked && wg_backends[i] == &wg_backend_vulkan &&
                          (s->mesh_set & 1u << i);
        if (!(s->require_set & 1u << i) && !named)
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
        if (s->require_set & 1u << i)
            say("--require %s: %s does not run: %s",
                s->require, wg_backends[i]->name, why);
        else
            say("%s asks for the vulkan backend, which does not run: %s "
                "(--mesh without vulkan runs the others)", asked, why);
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
    /* And the files written beside them, which are put in place with
     * them: a header or a world file that was a folder, immutable, or
     * another user's in a sticky folder had failed the run only at its
     * end, after the work. */
    map_output maps[MAP_OUTPUTS];
    map_outputs(s, maps);
    char side[4096 + 8], why[WG_ERR_LEN], shown[WG_PATH_SHOWN + 1],
        said[WG_ERR_LEN + WG_PATH_SHOWN + 32];
    for (size_t i = 0; i < MAP_OUTPUTS; i++) {
        if (!maps[i].path)
            continue;
        const char *what = i < MAP_HEIGHT_LIKE ? "its header" : "its world file";
        const char *p = i < MAP_HEIGHT_LIKE
                            ? wg_heightmap_sidecar_of(maps[i].path, maps[i].f,
                                                      side, sizeof side)
                            : wg_worldfile_of(maps[i].path, side, sizeof side);
        if (p && wg_outfile_probe(p, why) != 0) {
            snprintf(said, sizeof said, "%s '%s': %s", what,
                     wg_outfile_shown(p, shown), why);
            say_cannot_write(maps[i].opt, maps[i].path, said);
            return 1;
        }
    }
    char mtl[4096], tex[4096];
    if (s->obj && wg_obj_siblings(s->obj, mtl, tex, sizeof mtl) == 0)
        for (int i = 0; i < 2; i++)
            if (wg_outfile_probe(i ? mtl : tex, err) != 0) {
                say_cannot_write("obj", i ? mtl : tex, err);
                return 1;
            }
    /* A GeoTIFF to a pipe or a device is made in a temporary file under
     * $TMPDIR first (libtiff seeks): try that folder too. */
    for (size_t i = 0; i < MAP_OUTPUTS; i++) {
        if (!maps[i].path || maps[i].f != WG_HM_TIF)
            continue;
        /* A descriptor (standard output, /dev/fd/N): as libtiff finds it;
         * a device or a FIFO: always. */
        struct stat st;
        int fd = wg_outfile_descriptor(maps[i].path);
        int pipe = fd >= 0 ? wg_geotiff_needs_temporary(fd)
                           : wg_outfile_is_device(maps[i].path) ||
                                 (stat(maps[i].path, &st) == 0 &&
                                  !S_ISREG(st.st_mode) &&
                                  !S_ISDIR(st.st_mode));
        if (pipe && wg_geotiff_try_temporary(err) != 0) {
            say("--%s %s: %s", maps[i].opt, maps[i].path, err);
            return 1;
        }
    }
    return 0;
}

/* Why the tables could not be written, when run() found them lost before
 * putting the files in place (errno; 0: not lost, or no reason kept), for
 * close_stdout to say: stdio keeps no reason with the stream's error. */
static int tables_errno;

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
                "dh 0, dw 0, dn %g)%s", res[i].backend->name,
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
        wg_outfile_give_back(STDOUT_FILENO);
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
    /* A window that cannot open is found now, before the world is made
     * and the outputs replaced (it had been found after both, exit 1). */
    if (s->show && wg_window_probe(err) != 0) {
        say("--show: %s", err);
        return 1;
    }
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
    /* Flushed while writes still wait for a slow reader, then given back
     * as it came (non-blocking, if it was: wg_outfile_give_back). */
    if (fflush(stdout) != 0) {
        lost = 1;
        e = errno;
    }
    wg_outfile_give_back(STDOUT_FILENO);
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
 * it runs before main, whose first call (parse_args, with the option
 * checks inlined) takes more stack than the smallest limits. */
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
