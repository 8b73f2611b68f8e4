/* report.h: the reports a run prints: the timing table with its skip and
 * agree lines, the render and writers block, the wall line, the histogram,
 * and all of them as one JSON object. */
#ifndef WG_REPORT_H
#define WG_REPORT_H

#include <stdio.h>

#include "backends/agree.h"
#include "backends/backend.h"
#include "stats.h"

/* One backend's run, as the table shows it. */
typedef struct wg_result {
    const wg_backend *backend;
    char device[256]; /* "" for CPU backends */
    wg_times t;
    wg_fields fields;
    int compared;        /* 'agree' holds this result against scalar's */
    wg_agreement agree;
} wg_result;

/* A backend --mesh all or auto could not run here, and why. */
typedef struct wg_skipped {
    const wg_backend *backend;
    char why[WG_ERR_LEN];
} wg_skipped;

/* Seconds of the stages and the readback; setup is shown but not added. */
double wg_times_total(const wg_times *t);

/* The 'world' line (with the window of a --region run: region.w = 0 for
 * the whole world), a 'device' line per GPU backend, then one row per
 * result: setup, terrain, erosion, hydraulic, normals, readback, total,
 * and the speedup against 'reference' (the scalar result, or NULL: then
 * '-'). */
void wg_report_table(FILE *fp, const wg_world *w, wg_rect region,
                     const wg_result *r, int n, const wg_result *reference);

/* One 'skip' line per backend that is not available here. */
void wg_report_skipped(FILE *fp, const wg_skipped *sk, int n);

/* One 'agree' line per compared result: max |dh|, max |dw|, max |dn| over
 * the three normal components, and identical / within tolerance /
 * DISAGREES. */
void wg_report_agreement(FILE *fp, const wg_result *r, int n);

/* The ten-bin height distribution, the range, the 15th, 50th and 85th
 * percentiles (a report: the materials do not use them), and the shares of
 * the world (or of a --region run's window) under water and under the
 * sea. */
void wg_report_histogram(FILE *fp, const wg_height_stats *s,
                         const wg_water_stats *w);

/* What the renderer and the writers measured, for the render block.  A
 * negative time means that step did not run. */
typedef struct wg_render_report {
    uint32_t width, height, aa, threads;
    int map;              /* --view map: no triangles, no rasterising */
    uint64_t triangles, drawn;
    double raster, shade; /* the picture */
    double png;           /* writing it */
    double obj;           /* writing the OBJ, its MTL and its texture */
    double gltf;          /* writing the binary glTF */
    double heightmap, watermap, sedimentmap, normalmap, albedo;
    const char *png_path, *obj_path, *gltf_path, *heightmap_path,
        *watermap_path, *sedimentmap_path, *normalmap_path, *albedo_path;
} wg_render_report;

/* The render block, after the field stages: a 'render' line (picture size,
 * samples, triangles drawn, or "no picture"), then a row per step that
 * ran: rasterise, shade, and each writer (png, obj, gltf, heightmap,
 * watermap, sedimentmap, normalmap, albedo) with its seconds and the file
 * it wrote. */
void wg_report_render(FILE *fp, const wg_render_report *r);

/* The 'wall' line: the seconds from the run's start to here (setup, the
 * stages, the agreement, the histogram, the picture and the writers), the
 * figure the JSON reports as "wall".  Printed last, after the render
 * block, so it covers everything the tables above it show. */
void wg_report_wall(FILE *fp, double wall);

/* Everything one run measured, for --json. */
typedef struct wg_report_run {
    const wg_world *world;
    wg_rect region;           /* --region's window; w = 0: the world */
    const wg_result *results; /* in the order they ran */
    int n;
    const wg_result *reference; /* scalar's result, or NULL */
    const wg_skipped *skipped;
    int nskipped;
    int checked;                  /* --check was given */
    const wg_render_report *render; /* the picture and the writers */
    const wg_height_stats *heights; /* NULL without --histogram */
    const wg_water_stats *water;
    int threads;        /* CPU threads of openmp and the renderer */
    int argc;           /* the command line, as given */
    char **argv;
    double wall;        /* seconds from start to the JSON */
} wg_report_run;

/* The run as one JSON object: the version and the command line, the host
 * (CPU, cores, threads), the world, each backend's timings and device,
 * the skipped backends, the agreement, the check, the picture's and the
 * writers' times, the histogram when measured, and the wall time.
 * Strings are valid UTF-8 whatever bytes they had (an invalid byte
 * becomes U+FFFD). */
void wg_report_json(FILE *fp, const wg_report_run *run);

#endif
