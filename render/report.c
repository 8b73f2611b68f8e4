/* report.c: the timing table, the JSON and the histogram. */
#include <inttypes.h>
#include <string.h>
#include <math.h>

#include "report.h"

double wg_times_total(const wg_times *t)
{
    return t->terrain + t->erosion + t->hydraulic + t->normals + t->readback;
}

void wg_report_table(FILE *fp, const wg_world *w, const wg_result *r, int n,
                     const wg_result *reference)
{
    fprintf(fp, "world   %" PRIu32 "x%" PRIu32 " grid, %" PRIu32
                " octave%s, %" PRIu32 " erosion pass%s, %" PRIu32
                " hydraulic step%s, sea level %g, seed %" PRIu64 "\n",
            w->size, w->size, w->octaves, w->octaves == 1 ? "" : "s",
            w->passes, w->passes == 1 ? "" : "es", w->steps,
            w->steps == 1 ? "" : "s", (double)w->sea, w->seed);
    for (int i = 0; i < n; i++)
        if (r[i].device[0])
            fprintf(fp, "device  %s: %s\n", r[i].backend->name, r[i].device);
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
        if (reference && total > 0.0)
            fprintf(fp, " %7.1fx\n", ref / total);
        else
            fprintf(fp, " %8s\n", "-");
    }
}

void wg_report_skipped(FILE *fp, const wg_skipped *sk, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(fp, "skip    %s: %s\n", sk[i].backend->name, sk[i].why);
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

/* A JSON string: our strings are ASCII names and messages, but escape
 * whatever a driver might put in a device name. */
static void report_json_str(FILE *fp, const char *str)
{
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}

void wg_report_json(FILE *fp, const wg_world *w, const wg_result *r, int n,
                    const wg_result *reference, const wg_skipped *sk,
                    int nskipped, int checked)
{
    fprintf(fp, "{\n  \"worldgen\": \"%s\",\n", WG_VERSION);
    fprintf(fp, "  \"world\": {\"size\": %" PRIu32 ", \"octaves\": %" PRIu32
                ", \"passes\": %" PRIu32 ", \"steps\": %" PRIu32
                ", \"sea\": %.9g, \"seed\": %" PRIu64
                ", \"seed_hex\": \"0x%" PRIx64 "\"},\n",
            w->size, w->octaves, w->passes, w->steps, (double)w->sea, w->seed,
            w->seed);
    fputs("  \"backends\": [", fp);
    double ref = reference ? wg_times_total(&reference->t) : 0.0;
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
        report_json_num(fp, reference && total > 0.0 ? ref / total : NAN);
        fputc('}', fp);
    }
    fputs("\n  ],\n  \"skipped\": [", fp);
    for (int i = 0; i < nskipped; i++) {
        fprintf(fp, "%s\n    {\"name\": ", i ? "," : "");
        report_json_str(fp, sk[i].backend->name);
        fputs(", \"reason\": ", fp);
        report_json_str(fp, sk[i].why);
        fputc('}', fp);
    }
    fputs(nskipped ? "\n  ],\n" : "],\n", fp);
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
    fprintf(fp, "  \"check\": %s\n}\n",
            !checked ? "null" : all_ok ? "\"pass\"" : "\"fail\"");
}

void wg_report_histogram(FILE *fp, const wg_height_stats *s,
                         const wg_water_stats *w)
{
    fprintf(fp, "heights  ");
    for (int i = 0; i < 10; i++)
        fprintf(fp, " %d:%.0f%%", i, s->percent[i]);
    fprintf(fp, "\nrange     min %.4f  max %.4f\n", s->min, s->max);
    fprintf(fp, "quantiles p15 %.4f  p50 %.4f  p85 %.4f\n", s->p15, s->p50,
            s->p85);
    fprintf(fp, "water     %.1f%% under water (deeper than %g), %.1f%% under "
                "the sea (below %g)\n",
            w->water, (double)WG_WATER_MIN, w->sea, (double)w->sea_level);
}

void wg_report_render(FILE *fp, const wg_render_report *r)
{
    if (r->raster >= 0.0)
        fprintf(fp, "render  %" PRIu32 "x%" PRIu32 " pixels, %" PRIu32 "x%" PRIu32
                    " samples each, %" PRIu64 " of %" PRIu64
                    " triangles drawn, %" PRIu32 " thread%s\n",
                r->width, r->height, r->aa, r->aa, r->drawn, r->triangles,
                r->threads, r->threads == 1 ? "" : "s");
    else
        fprintf(fp, "render  no picture\n");
    fprintf(fp, "\n  %-9s %9s  %s\n", "step", "time", "output");
    if (r->raster >= 0.0) {
        fprintf(fp, "  %-9s %8.4fs\n", "rasterise", r->raster);
        fprintf(fp, "  %-9s %8.4fs\n", "shade", r->shade);
    }
    if (r->png >= 0.0)
        fprintf(fp, "  %-9s %8.4fs  %s\n", "png", r->png,
                strcmp(r->png_path, "-") == 0 ? "(standard output)"
                                               : r->png_path);
    if (r->obj >= 0.0)
        fprintf(fp, "  %-9s %8.4fs  %s (+ .mtl, _albedo.png)\n", "obj",
                r->obj, r->obj_path);
}
