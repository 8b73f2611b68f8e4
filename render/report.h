/* report.h: the text reports a run prints: the timing table of the
 * reference chapter and the height histogram. */
#ifndef WG_REPORT_H
#define WG_REPORT_H

#include <stdio.h>

#include "backends/backend.h"
#include "stats.h"

/* One backend's run, as the table shows it. */
typedef struct wg_result {
    const wg_backend *backend;
    char device[256]; /* "" for CPU backends */
    wg_times t;
    wg_fields fields;
} wg_result;

/* Seconds of the stages and the readback; setup is shown but not added. */
double wg_times_total(const wg_times *t);

/* The 'world' line, a 'device' line per GPU backend, then one row per
 * result: setup, terrain, erosion, normals, readback, total, and the
 * speedup against 'reference' (the scalar result, or NULL: then '-'). */
void wg_report_table(FILE *fp, const wg_world *w, const wg_result *r, int n,
                     const wg_result *reference);

/* The ten-bin height distribution and the material boundaries. */
void wg_report_histogram(FILE *fp, const wg_height_stats *s);

#endif
