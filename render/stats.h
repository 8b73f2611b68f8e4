/* stats.h: the height distribution of a field, measured: ten bins and the
 * 15th, 50th and 85th percentiles that place the material boundaries. */
#ifndef WG_STATS_H
#define WG_STATS_H

#include <stddef.h>

typedef struct wg_height_stats {
    double percent[10]; /* share of cells with h in [i/10, (i+1)/10) */
    float min, max;
    float p15, p50, p85; /* material boundaries */
} wg_height_stats;

/* Measure the n heights in h (expected in [0, 1]; values outside count in
 * the end bins).  Percentiles are exact to 1/65535.  Returns 0, or -1 when
 * out of memory. */
int wg_height_stats_measure(const float *h, size_t n, wg_height_stats *s);

#endif
