/* stats.c: height histogram and percentiles in one pass over the field, and
 * the share of the world under water.
 *
 * Percentiles come from a 65536-bin histogram of the 16-bit quantised
 * heights rather than a sort: O(n) and 256 KiB whatever the world's size,
 * and exact at the resolution the 16-bit height maps store anyway. */
#include <stdint.h>
#include <stdlib.h>

#include "heightmap.h"
#include "stats.h"

/* A percentile is its bin's height, up to half a step (1/131070) off the
 * heights in the bin: kept within the field's range, so that p85 is never
 * above the max (a 2x2 world's p85 was 0.740978122, its max 0.74097693)
 * nor p15 below the min. */
static float stats_within(float v, float lo, float hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int wg_height_stats_measure(const float *h, size_t n, wg_height_stats *s)
{
    uint32_t *bin = calloc(65536, sizeof *bin);
    if (!bin)
        return -1;
    size_t tenth[10] = {0};
    float lo = h[0], hi = h[0];
    for (size_t i = 0; i < n; i++) {
        float v = h[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        bin[wg_height_to_u16(v)]++;
        int t = (int)(v * 10.0f);
        tenth[t < 0 ? 0 : t > 9 ? 9 : t]++;
    }
    s->min = lo;
    s->max = hi;
    for (int i = 0; i < 10; i++)
        s->percent[i] = 100.0 * (double)tenth[i] / (double)n;

    const double pct[3] = {0.15, 0.50, 0.85};
    float *out[3] = {&s->p15, &s->p50, &s->p85};
    size_t acc = 0;
    int j = 0;
    for (uint32_t q = 0; q < 65536 && j < 3; q++) {
        acc += bin[q];
        while (j < 3 && (double)acc >= pct[j] * (double)n)
            *out[j++] = stats_within((float)q / 65535.0f, lo, hi);
    }
    free(bin);
    return 0;
}

void wg_water_stats_measure(const float *h, const float *w, size_t n,
                            float sea_level, wg_water_stats *s)
{
    size_t wet = 0, sea = 0;
    for (size_t i = 0; i < n; i++) {
        wet += w[i] > WG_WATER_MIN;
        sea += h[i] < sea_level;
    }
    s->water = n ? 100.0 * (double)wet / (double)n : 0.0;
    s->sea = n ? 100.0 * (double)sea / (double)n : 0.0;
    s->sea_level = sea_level;
}
