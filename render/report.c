/* report.c: the timing table with its skip and agree lines, the render
 * and writers block, the wall line, the histogram, and the JSON. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

#include "report.h"

double wg_times_total(const wg_times *t)
{
    return t->terrain + t->erosion + t->hydraulic + t->normals + t->readback;
}

/* A float as few digits as read back to it (6 to 9): the sea level
 * 0.99999994 had read "1" and 0.2500001 "0.25" in the world line and
 * the histogram, levels the run did not use. */
static const char *report_float(char *buf, size_t len, float v)
{
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, len, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v)
            break;
    }
    return buf;
}

/* A name in a table: a path as given, a driver's device name, a skipped
 * backend's reason.  A control character (an escape sequence, a newline)
 * is shown as \xNN, as worldgen's messages show it, so it can neither
 * drive the terminal nor forge a line of the table. */
static void report_text(FILE *fp, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            fprintf(fp, "\\x%02x", *p);
        else
            fputc(*p, fp);
}

void wg_report_table(FILE *fp, const wg_world *w, wg_rect region,
                     const wg_result *r, int n, const wg_result *reference)
{
    char sea[32];
    fprintf(fp, "world   %" PRIu32 "x%" PRIu32 " grid, %" PRIu32
                " octave%s, %" PRIu32 " erosion pass%s, %" PRIu32
                " hydraulic step%s, sea level %s, seed %" PRIu64,
            w->size, w->size, w->octaves, w->octaves == 1 ? "" : "s",
            w->passes, w->passes == 1 ? "" : "es", w->steps,
            w->steps == 1 ? "" : "s",
            report_float(sea, sizeof sea, w->sea), w->seed);
    /* A window's run says so: its histogram and maps are the window's. */
    if (region.w)
        fprintf(fp, ", region %" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32,
                region.x, region.y, region.w, region.h);
    fputc('\n', fp);
    for (int i = 0; i < n; i++)
        if (r[i].device[0]) {
            fprintf(fp, "device  %s: ", r[i].backend->name);
            report_text(fp, r[i].device);
            fputc('\n', fp);
        }
    fprintf(fp, "\n  %-8s %9s %9s %9s %9s %9s %9s %9s %8s\n", "backend",
            "setup", "terrain", "erosion", "hydraulic", "normals", "readback",
            "total", "speedup");
    double ref = reference ? wg_times_total(&reference->t) : 0.0;
    for (int i = 0; i < n; i++) {
        const wg_times *t = &r[i].t;
        double total = wg_times_total(t);
        fprintf(fp, "  %-8s %8.4fs %8.4fs %8.4fs %8.4fs %8.4fs %8.4fs %8.4fs",
                r[i].backend->name, t->setup, t->terrain, t->erosion,
                t->hydraulic, t->normals, t->readback, total);
        /* Below 0.05 one decimal would read 0.0x, as if the backend had
         * not moved: two significant digits there (0.0041x). */
        if (reference && total > 0.0)
            fprintf(fp, ref / total < 0.05 ? " %7.2gx\n" : " %7.1fx\n",
                    ref / total);
        else
            fprintf(fp, " %8s\n", "-");
    }
}

void wg_report_wall(FILE *fp, double wall)
{
    fprintf(fp, "\nwall    %.3fs for the whole run (setup, stages, "
                "outputs)\n", wall);
}

void wg_report_skipped(FILE *fp, const wg_skipped *sk, int n)
{
    for (int i = 0; i < n; i++) {
        fprintf(fp, "skip    %s: ", sk[i].backend->name);
        report_text(fp, sk[i].why);
        fputc('\n', fp);
    }
}

void wg_report_agreement(FILE *fp, const wg_result *r, int n)
{
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (!r[i].compared)
            continue;
        const wg_agreement *a = &r[i].agree;
        fprintf(fp, "%s  agree   %-6s vs scalar   max dh = %.2e   max dw = %.2e   "
                "max dn = %.2e   ", any++ ? "" : "\n", r[i].backend->name,
                a->max_dh, a->max_dw, a->max_dn);
        if (a->identical)
            fprintf(fp, "identical\n");
        else if (a->ok)
            fprintf(fp, "heights and water identical, normals within %.0e\n",
                    r[i].backend->normal_tolerance);
        else
            fprintf(fp, "DISAGREES\n");
    }
}

/* A JSON number; JSON has no infinity, so a non-finite value is null. */
static void report_json_num(FILE *fp, double v)
{
    if (isfinite(v))
        fprintf(fp, "%.9g", v);
    else
        fputs("null", fp);
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0 when the
 * bytes there are not one (a stray continuation byte, an overlong form, a
 * surrogate, a code point beyond U+10FFFF, a sequence cut short). */
static int report_utf8_len(const unsigned char *p)
{
    int len;
    uint32_t cp;
    if (p[0] < 0x80)
        return 1;
    else if ((p[0] & 0xe0) == 0xc0)
        len = 2, cp = p[0] & 0x1f;
    else if ((p[0] & 0xf0) == 0xe0)
        len = 3, cp = p[0] & 0x0f;
    else if ((p[0] & 0xf8) == 0xf0)
        len = 4, cp = p[0] & 0x07;
    else
        return 0;
    for (int i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the terminating 0 */
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* A JSON string.  Names, paths and the command line are the user's bytes
 * and device names the driver's: quotes, backslashes and control
 * characters are escaped, and a byte that is not valid UTF-8 becomes
 * U+FFFD, so the document stays valid JSON. */
static void report_json_str(FILE *fp, const char *str)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)str; *p;) {
        int len = report_utf8_len(p);
        if (len == 0) {
            fputs("\\ufffd", fp);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fprintf(fp, "\\%c", *p++);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(fp, "\\u%04x", *p++);
        } else {
            fwrite(p, 1, (size_t)len, fp);
            p += len;
        }
    }
    fputc('"', fp);
}

/* The CPU's model name from /proc/cpuinfo, or "unknown". */
static void report_cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *fp = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (fp && fgets(line, sizeof line, fp)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 1 + (colon[1] == ' ');
            snprintf(buf, len, "%.*s", (int)strcspn(colon, "\n"), colon);
            break;
        }
    }
    if (fp)
        fclose(fp);
}

/* "key": seconds, or null when the step did not run (negative). */
static void report_json_time(FILE *fp, const char *key, double v, int comma)
{
    fprintf(fp, "%s\"%s\": ", comma ? ", " : "", key);
    report_json_num(fp, v >= 0.0 ? v : NAN);
}

void wg_report_json(FILE *fp, const wg_report_run *run)
{
    const wg_world *w = run->world;
    const wg_result *r = run->results;
    const int n = run->n;
    fprintf(fp, "{\n  \"worldgen\": \"%s\",\n  \"version\": \"%s\", "
                "\"spec\": %d,\n  \"command\": [", WG_VERSION, WG_VERSION,
            WG_SPEC_VERSION);
    for (int i = 0; i < run->argc; i++) {
        if (i)
            fputs(", ", fp);
        report_json_str(fp, run->argv[i]);
    }
    char cpu[256];
    report_cpu_model(cpu, sizeof cpu);
    fputs("],\n  \"host\": {\"cpu\": ", fp);
    report_json_str(fp, cpu);
    fprintf(fp, ", \"cores\": %ld, \"threads\": %d, \"vector\": \"%s\"},\n",
            sysconf(_SC_NPROCESSORS_ONLN), run->threads, wg_openmp_vector());
    fprintf(fp, "  \"world\": {\"size\": %" PRIu32 ", \"octaves\": %" PRIu32
                ", \"passes\": %" PRIu32 ", \"steps\": %" PRIu32
                ", \"sea\": %.9g, \"seed\": %" PRIu64
                ", \"seed_hex\": \"0x%" PRIx64 "\", \"region\": ",
            w->size, w->octaves, w->passes, w->steps, (double)w->sea, w->seed,
            w->seed);
    /* The window a --region run made (its histogram is the window's). */
    if (run->region.w)
        fprintf(fp, "{\"x\": %" PRIu32 ", \"y\": %" PRIu32 ", \"width\": %"
                    PRIu32 ", \"height\": %" PRIu32 "}},\n", run->region.x,
                run->region.y, run->region.w, run->region.h);
    else
        fputs("null},\n", fp);
    fputs("  \"backends\": [", fp);
    double ref = run->reference ? wg_times_total(&run->reference->t) : 0.0;
    for (int i = 0; i < n; i++) {
        const wg_times *t = &r[i].t;
        double total = wg_times_total(t);
        fprintf(fp, "%s\n    {\"name\": ", i ? "," : "");
        report_json_str(fp, r[i].backend->name);
        fputs(", \"device\": ", fp);
        if (r[i].device[0])
            report_json_str(fp, r[i].device);
        else
            fputs("null", fp);
        const char *keys[] = {"setup", "terrain", "erosion", "hydraulic",
                              "normals", "readback", "total"};
        const double vals[] = {t->setup, t->terrain, t->erosion, t->hydraulic,
                               t->normals, t->readback, total};
        for (int k = 0; k < 7; k++) {
            fprintf(fp, ", \"%s\": ", keys[k]);
            report_json_num(fp, vals[k]);
        }
        fputs(", \"speedup\": ", fp);
        report_json_num(fp, run->reference && total > 0.0 ? ref / total : NAN);
        fputc('}', fp);
    }
    fputs("\n  ],\n  \"skipped\": [", fp);
    for (int i = 0; i < run->nskipped; i++) {
        fprintf(fp, "%s\n    {\"name\": ", i ? "," : "");
        report_json_str(fp, run->skipped[i].backend->name);
        fputs(", \"reason\": ", fp);
        report_json_str(fp, run->skipped[i].why);
        fputc('}', fp);
    }
    fputs(run->nskipped ? "\n  ],\n" : "],\n", fp);
    fputs("  \"agree\": [", fp);
    int any = 0, all_ok = 1;
    for (int i = 0; i < n; i++) {
        if (!r[i].compared)
            continue;
        const wg_agreement *a = &r[i].agree;
        all_ok &= a->ok;
        fprintf(fp, "%s\n    {\"backend\": ", any++ ? "," : "");
        report_json_str(fp, r[i].backend->name);
        fputs(", \"reference\": \"scalar\", \"max_dh\": ", fp);
        report_json_num(fp, a->max_dh);
        fputs(", \"max_dw\": ", fp);
        report_json_num(fp, a->max_dw);
        fputs(", \"max_dn\": ", fp);
        report_json_num(fp, a->max_dn);
        fprintf(fp, ", \"identical\": %s, \"ok\": %s}",
                a->identical ? "true" : "false", a->ok ? "true" : "false");
    }
    fputs(any ? "\n  ],\n" : "],\n", fp);
    fprintf(fp, "  \"check\": %s,\n",
            !run->checked ? "null" : all_ok ? "\"pass\"" : "\"fail\"");
    const wg_render_report *rr = run->render;
    fputs("  \"render\": ", fp);
    if (rr && rr->raster >= 0.0) {
        fprintf(fp, "{\"width\": %" PRIu32 ", \"height\": %" PRIu32
                    ", \"aa\": %" PRIu32 ", \"threads\": %" PRIu32,
                rr->width, rr->height, rr->aa, rr->threads);
        /* The map view draws no triangles: its counts do not apply. */
        if (rr->map)
            fputs(", \"triangles\": null, \"drawn\": null", fp);
        else
            fprintf(fp, ", \"triangles\": %" PRIu64 ", \"drawn\": %" PRIu64,
                    rr->triangles, rr->drawn);
        fprintf(fp, ", \"view\": \"%s\"", rr->map ? "map" : "orbit");
        report_json_time(fp, "rasterise", rr->map ? -1.0 : rr->raster, 1);
        report_json_time(fp, "shade", rr->shade, 1);
        fputs("},\n", fp);
    } else {
        fputs("null,\n", fp);
    }
    fputs("  \"writers\": [", fp);
    any = 0;
    if (rr) {
        const struct { const char *name, *path; double t; } wr[] = {
            {"heightmap", rr->heightmap_path, rr->heightmap},
            {"watermap", rr->watermap_path, rr->watermap},
            {"sedimentmap", rr->sedimentmap_path, rr->sedimentmap},
            {"normalmap", rr->normalmap_path, rr->normalmap},
            {"albedo", rr->albedo_path, rr->albedo},
            {"png", rr->png_path, rr->png},
            {"obj", rr->obj_path, rr->obj},
            {"gltf", rr->gltf_path, rr->gltf},
        };
        for (size_t i = 0; i < sizeof wr / sizeof wr[0]; i++) {
            if (wr[i].t < 0.0 || !wr[i].path)
                continue;
            fprintf(fp, "%s\n    {\"format\": \"%s\", \"path\": ",
                    any++ ? "," : "", wr[i].name);
            report_json_str(fp, wr[i].path);
            report_json_time(fp, "seconds", wr[i].t, 1);
            fputc('}', fp);
        }
    }
    fputs(any ? "\n  ],\n" : "],\n", fp);
    fputs("  \"histogram\": ", fp);
    if (run->heights && run->water) {
        const wg_height_stats *hs = run->heights;
        fputs("{\"percent\": [", fp);
        for (int i = 0; i < 10; i++) {
            fputs(i ? ", " : "", fp);
            report_json_num(fp, hs->percent[i]);
        }
        fputs("], \"min\": ", fp);
        report_json_num(fp, hs->min);
        fputs(", \"max\": ", fp);
        report_json_num(fp, hs->max);
        fputs(", \"p15\": ", fp);
        report_json_num(fp, hs->p15);
        fputs(", \"p50\": ", fp);
        report_json_num(fp, hs->p50);
        fputs(", \"p85\": ", fp);
        report_json_num(fp, hs->p85);
        fputs(", \"water_percent\": ", fp);
        report_json_num(fp, run->water->water);
        fputs(", \"sea_percent\": ", fp);
        report_json_num(fp, run->water->sea);
        fputs("},\n", fp);
    } else {
        fputs("null,\n", fp);
    }
    fputs("  \"wall\": ", fp);
    report_json_num(fp, run->wall);
    fputs("\n}\n", fp);
}

/* A share in percent with 'prec' decimals, or as many more as it takes
 * (up to 12) not to read 0 or 100 when it is neither: one cell of 10000
 * above the sea had read "100.0% under the sea", a bin holding the
 * highest peaks "9:0%". */
static void report_share(FILE *fp, double pct, int prec)
{
    char buf[64];
    for (;; prec++) {
        snprintf(buf, sizeof buf, "%.*f", prec, pct);
        double shown = strtod(buf, NULL);
        if (prec >= 12 || ((shown != 0.0 || pct <= 0.0) &&
                           (shown != 100.0 || pct >= 100.0)))
            break;
    }
    fprintf(fp, "%s%%", buf);
}

void wg_report_histogram(FILE *fp, const wg_height_stats *s,
                         const wg_water_stats *w)
{
    fprintf(fp, "heights  ");
    for (int i = 0; i < 10; i++) {
        fprintf(fp, " %d:", i);
        report_share(fp, s->percent[i], 0);
    }
    fprintf(fp, "\nrange     min %.4f  max %.4f\n", s->min, s->max);
    fprintf(fp, "quantiles p15 %.4f  p50 %.4f  p85 %.4f\n", s->p15, s->p50,
            s->p85);
    fputs("water     ", fp);
    report_share(fp, w->water, 1);
    fprintf(fp, " under water (deeper than %g), ", (double)WG_WATER_MIN);
    report_share(fp, w->sea, 1);
    char sea[32];
    fprintf(fp, " under the sea (below %s)\n",
            report_float(sea, sizeof sea, w->sea_level));
}

void wg_report_render(FILE *fp, const wg_render_report *r)
{
    if (r->raster >= 0.0 && r->map)
        fprintf(fp, "render  %" PRIu32 "x%" PRIu32 " pixels, %" PRIu32 "x%" PRIu32
                    " samples each, a map from straight above, %" PRIu32
                    " thread%s\n", r->width, r->height, r->aa, r->aa,
                r->threads, r->threads == 1 ? "" : "s");
    else if (r->raster >= 0.0)
        fprintf(fp, "render  %" PRIu32 "x%" PRIu32 " pixels, %" PRIu32 "x%" PRIu32
                    " samples each, %" PRIu64 " of %" PRIu64
                    " triangles drawn, %" PRIu32 " thread%s\n",
                r->width, r->height, r->aa, r->aa, r->drawn, r->triangles,
                r->threads, r->threads == 1 ? "" : "s");
    else
        fprintf(fp, "render  no picture\n");
    fprintf(fp, "\n  %-11s %9s  %s\n", "step", "time", "output");
    if (r->raster >= 0.0 && !r->map) {
        fprintf(fp, "  %-11s %8.4fs\n", "rasterise", r->raster);
        fprintf(fp, "  %-11s %8.4fs\n", "shade", r->shade);
    } else if (r->raster >= 0.0) {
        fprintf(fp, "  %-11s %8.4fs\n", "shade", r->shade);
    }
    const struct { const char *name, *path, *more; double t; } wr[] = {
        {"heightmap", r->heightmap_path, "", r->heightmap},
        {"watermap", r->watermap_path, "", r->watermap},
        {"sedimentmap", r->sedimentmap_path, "", r->sedimentmap},
        {"normalmap", r->normalmap_path, "", r->normalmap},
        {"albedo", r->albedo_path, "", r->albedo},
        {"png", r->png_path, "", r->png},
        {"obj", r->obj_path, " (+ .mtl, _albedo.png)", r->obj},
        {"gltf", r->gltf_path, "", r->gltf},
    };
    for (size_t i = 0; i < sizeof wr / sizeof wr[0]; i++)
        if (wr[i].t >= 0.0 && wr[i].path) {
            fprintf(fp, "  %-11s %8.4fs  ", wr[i].name, wr[i].t);
            report_text(fp, strcmp(wr[i].path, "-") == 0 ? "(standard output)"
                                                         : wr[i].path);
            fprintf(fp, "%s\n", wr[i].more);
        }
}
