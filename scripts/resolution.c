/* resolution.c: how alike two resolutions of one world are, from the PFM
 * height and water maps worldgen wrote (scripts/resolution.sh runs it).
 *
 *   resolution SMALL_TERRAIN.pfm SMALL_HEIGHT.pfm SMALL_WATER.pfm
 *              BIG_HEIGHT.pfm BIG_WATER.pfm
 *
 * The big world's side minus one must be a multiple of the small one's:
 * vertex (x, y) of the small world stands where vertex (x k, y k) of the
 * big one does.  Prints the mean |height difference| at those shared
 * vertices, as a share of the mean change that erosion (thermal and
 * hydraulic) made at the small size, and the share of water cells (depth
 * over 0.003 and 0.01) at each size. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pfm.h"

static double wet_share(const float *w, size_t cells, float depth)
{
    size_t wet = 0;
    for (size_t i = 0; i < cells; i++)
        wet += w[i] > depth;
    return 100.0 * (double)wet / (double)cells;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: resolution T1.pfm H1.pfm W1.pfm H2.pfm W2.pfm\n");
        return 2;
    }
    unsigned n1, n, n2, m;
    const char *me = "resolution";
    float *t1 = pfm_read(me, argv[1], &n1), *h1 = pfm_read(me, argv[2], &n),
          *w1 = pfm_read(me, argv[3], &n), *h2 = pfm_read(me, argv[4], &n2),
          *w2 = pfm_read(me, argv[5], &m);
    if (n != n1 || m != n2 || (n2 - 1) % (n1 - 1) != 0) {
        fprintf(stderr, "resolution: sizes %u and %u share no vertices\n", n1, n2);
        return 1;
    }
    unsigned k = (n2 - 1) / (n1 - 1);
    double diff = 0, change = 0;
    for (unsigned y = 0; y < n1; y++)
        for (unsigned x = 0; x < n1; x++) {
            size_t i = (size_t)y * n1 + x, j = (size_t)y * k * n2 + (size_t)x * k;
            diff += fabs((double)h1[i] - (double)h2[j]);
            change += fabs((double)h1[i] - (double)t1[i]);
        }
    size_t c1 = (size_t)n1 * n1, c2 = (size_t)n2 * n2;
    printf("mean |dh| at shared vertices %.3e, mean erosion change at %u "
           "%.3e: %.1f%%\n", diff / (double)c1, n1, change / (double)c1,
           100.0 * diff / change);
    for (int d = 0; d < 2; d++) {
        float depth = d ? 0.01f : 0.003f;
        double a = wet_share(w1, c1, depth), b = wet_share(w2, c2, depth);
        printf("water deeper than %g: %.2f%% of %u, %.2f%% of %u (%+.2f points)\n",
               (double)depth, a, n1, b, n2, b - a);
    }
    return 0;
}
