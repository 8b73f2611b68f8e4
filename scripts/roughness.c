/* roughness.c: how many single cells stand out of a world's ground and
 * water surface, from the PFM height and water maps worldgen wrote (the
 * README's table in "Water: the hydraulic stage").
 *
 *   cc -O2 -o roughness scripts/roughness.c
 *   ./worldgen --size 1025 --no-image -q --heightmap h.pfm --watermap w.pfm
 *   ./roughness h.pfm w.pfm
 *
 * Counts, over the cells with all eight neighbours, the peaks (more than
 * 0.001 above every neighbour) and pits (more than 0.001 below every
 * neighbour) of the ground and of the water surface (ground + water), in
 * double precision.  Exit 2 on a wrong command line, 1 on maps it cannot
 * use (unreadable, not a square grey PFM of finite values, two sizes, under
 * 3 cells a side) and on figures it cannot write (out.h). */
#define _POSIX_C_SOURCE 200809L /* fstat, for pfm.h */
#include <stdio.h>
#include <stdlib.h>

#include "out.h"
#include "pfm.h"

/* Peaks and pits of the field v (+ add, when not NULL), n a side. */
static void count(const float *v, const float *add, unsigned n,
                  long *peaks, long *pits)
{
    *peaks = *pits = 0;
    for (unsigned y = 1; y + 1 < n; y++)
        for (unsigned x = 1; x + 1 < n; x++) {
            size_t i = (size_t)y * n + x;
            double c = (double)v[i] + (add ? add[i] : 0.0), hi = -1e30,
                   lo = 1e30;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    if (!dx && !dy)
                        continue;
                    size_t k = (size_t)(y + dy) * n + (x + dx);
                    double e = (double)v[k] + (add ? add[k] : 0.0);
                    hi = e > hi ? e : hi;
                    lo = e < lo ? e : lo;
                }
            *peaks += c - hi > 1e-3;
            *pits += lo - c > 1e-3;
        }
}

/* Whether maps of sides n and m can be measured; says why not. */
static int sides_fit(unsigned n, unsigned m)
{
    if (n != m) {
        fprintf(stderr, "roughness: the maps differ in size (%u and %u)\n",
                n, m);
        return 0;
    }
    if (n < 3) {
        fprintf(stderr, "roughness: a %u-sided map has no cell with eight "
                "neighbours\n", n);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: roughness HEIGHT.pfm WATER.pfm\n");
        return 2;
    }
    unsigned n = 0, m = 0;
    float *h = pfm_read("roughness", argv[1], &n),
          *w = h ? pfm_read("roughness", argv[2], &m) : NULL;
    if (!w || !sides_fit(n, m)) {
        free(h);
        free(w);
        return 1;
    }
    long peaks, pits;
    count(h, NULL, n, &peaks, &pits);
    printf("ground:        %ld peaks, %ld pits (cells more than 0.001 above "
           "or below all eight neighbours)\n", peaks, pits);
    count(h, w, n, &peaks, &pits);
    printf("water surface: %ld peaks, %ld pits\n", peaks, pits);
    free(h);
    free(w);
    return out_close("roughness");
}
