/* stats.h: what --histogram reports about a field, measured: the height
 * distribution in ten bins, its 15th, 50th and 85th percentiles, and how
 * much of the world is under water.  A report only: nothing the picture or
 * the OBJ shows depends on it (their materials are local, material.c). */
#ifndef WG_STATS_H
#define WG_STATS_H

#include <stddef.h>

/* Open water: a cell whose water is deeper than this (in height units) is
 * under water.  The renderer draws a water surface there, the OBJ puts it
 * in its water object and --histogram counts it.  The sea is deep (0.01
 * and more), a river or a lake a few thousandths; rain on a slope leaves a
 * film of 1e-4 to 5e-4 that runs off, which is not water to show (at 512,
 * seed 1234, 44% of the land holds 1e-4..1e-3, 18% more than 1e-3). */
#define WG_WATER_MIN 1e-3f

typedef struct wg_height_stats {
    double percent[10]; /* share of cells with h in [i/10, (i+1)/10) */
    float min, max;
    float p15, p50, p85; /* percentiles */
} wg_height_stats;

/* Measure the n heights in h (expected in [0, 1]; values outside count in
 * the end bins).  Percentiles are exact to 1/65535.  Returns 0, or -1 when
 * out of memory. */
int wg_height_stats_measure(const float *h, size_t n, wg_height_stats *s);

/* The share of the world under water. */
typedef struct wg_water_stats {
    double water; /* percent of cells with water deeper than WG_WATER_MIN */
    double sea;   /* percent of cells whose ground is below the sea level */
    float sea_level;
} wg_water_stats;

/* Measure the n cells of ground h and water w of a world whose sea stands
 * at sea_level.  This function can't fail. */
void wg_water_stats_measure(const float *h, const float *w, size_t n,
                            float sea_level, wg_water_stats *s);

#endif
