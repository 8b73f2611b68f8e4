/* report.c: the timing table and the histogram, as plain aligned text. */
#include <inttypes.h>

#include "report.h"

double wg_times_total(const wg_times *t)
{
    return t->terrain + t->erosion + t->normals + t->readback;
}

void wg_report_table(FILE *fp, const wg_world *w, const wg_result *r, int n,
                     const wg_result *reference)
{
    fprintf(fp, "world   %" PRIu32 "x%" PRIu32 " grid, %" PRIu32
                " octave%s, %" PRIu32 " erosion pass%s, seed %" PRIu64 "\n",
            w->size, w->size, w->octaves, w->octaves == 1 ? "" : "s",
            w->passes, w->passes == 1 ? "" : "es", w->seed);
    for (int i = 0; i < n; i++)
        if (r[i].device[0])
            fprintf(fp, "device  %s: %s\n", r[i].backend->name, r[i].device);
    fprintf(fp, "\n  %-8s %9s %9s %9s %9s %9s %9s %8s\n", "backend", "setup",
            "terrain", "erosion", "normals", "readback", "total", "speedup");
    double ref = reference ? wg_times_total(&reference->t) : 0.0;
    for (int i = 0; i < n; i++) {
        const wg_times *t = &r[i].t;
        double total = wg_times_total(t);
        fprintf(fp, "  %-8s %8.4fs %8.4fs %8.4fs %8.4fs %8.4fs %8.4fs",
                r[i].backend->name, t->setup, t->terrain, t->erosion,
                t->normals, t->readback, total);
        if (reference && total > 0.0)
            fprintf(fp, " %7.1fx\n", ref / total);
        else
            fprintf(fp, " %8s\n", "-");
    }
}

void wg_report_histogram(FILE *fp, const wg_height_stats *s)
{
    fprintf(fp, "heights  ");
    for (int i = 0; i < 10; i++)
        fprintf(fp, " %d:%.0f%%", i, s->percent[i]);
    fprintf(fp, "\nrange     min %.4f  max %.4f\n", s->min, s->max);
    fprintf(fp, "bounds    p15 %.4f  p50 %.4f  p85 %.4f\n", s->p15, s->p50,
            s->p85);
}
