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
 * over 0.001, what the picture draws as water, 0.003 and 0.01) at each
 * size.
 *
 * Exit 2 on a wrong command line, 1 on maps it cannot use: unreadable, not
 * square grey PFMs of finite values, the small world's three maps or the
 * big world's two of different sizes, sizes that share no vertices (the
 * small one at least 2, the big one as big or bigger), or an erosion that
 * changed no height at the small size (no change to measure against); 1
 * too on figures it cannot write (out.h). */
#define _POSIX_C_SOURCE 200809L /* fstat, for pfm.h */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../render/stats.h" /* WG_WATER_MIN */
#include "out.h"
#include "pfm.h"

static double wet_share(const float *w, size_t cells, float depth)
{
    size_t wet = 0;
    for (size_t i = 0; i < cells; i++)
        wet += w[i] > depth;
    return 100.0 * (double)wet / (double)cells;
}

/* The spacing k of the small world's vertices in the big one (vertex (x,
 * y) of the small world is vertex (x k, y k) of the big one), or 0 after
 * saying why there is none. */
static unsigned shared_step(unsigned n1, unsigned n2)
{
    if (n1 < 2 || n2 < n1 || (n2 - 1) % (n1 - 1) != 0) {
        fprintf(stderr, "resolution: sizes %u and %u share no vertices (the "
                "big side minus one must be the small side minus one times "
                "1, 2, 3 or more, and the small side at least 2)\n", n1, n2);
        return 0;
    }
    return (n2 - 1) / (n1 - 1);
}

/* The five maps, in the order of the command line, their sides in n[5];
 * 0, or -1 with every map freed after saying why they cannot be used. */
static int read_maps(char **path, float **map, unsigned *n)
{
    static const char *const role[5] = {"small world's", "small world's",
                                        "small world's", "big world's",
                                        "big world's"};
    for (int i = 0; i < 5; i++)
        map[i] = NULL;
    for (int i = 0; i < 5; i++) {
        map[i] = pfm_read("resolution", path[i], &n[i]);
        int first = i < 3 ? 0 : 3;
        if (map[i] && n[i] != n[first]) {
            fprintf(stderr, "resolution: %s is %u a side and %s %u: the %s "
                    "maps must be one size\n", path[i], n[i], path[first],
                    n[first], role[i]);
            free(map[i]);
            map[i] = NULL;
        }
        if (!map[i]) {
            for (int k = 0; k < i; k++)
                free(map[k]);
            return -1;
        }
    }
    return 0;
}

/* The figures of the maps t1, h1, w1 (n1 a side) and h2, w2 (n2); 0, or 1
 * after saying why there are none. */
static int compare(const float *t1, const float *h1, const float *w1,
                   unsigned n1, const float *h2, const float *w2, unsigned n2,
                   char **path)
{
    unsigned k = shared_step(n1, n2);
    if (!k)
        return 1;
    double diff = 0, change = 0;
    for (unsigned y = 0; y < n1; y++)
        for (unsigned x = 0; x < n1; x++) {
            size_t i = (size_t)y * n1 + x, j = (size_t)y * k * n2 + (size_t)x * k;
            diff += fabs((double)h1[i] - (double)h2[j]);
            change += fabs((double)h1[i] - (double)t1[i]);
        }
    if (change == 0) {
        fprintf(stderr, "resolution: erosion changed no height at %u (%s and "
                "%s are the same): there is no change to measure the "
                "difference against\n", n1, path[0], path[1]);
        return 1;
    }
    size_t c1 = (size_t)n1 * n1, c2 = (size_t)n2 * n2;
    printf("mean |dh| at shared vertices %.3e, mean erosion change at %u "
           "%.3e: %.1f%%\n", diff / (double)c1, n1, change / (double)c1,
           100.0 * diff / change);
    /* The first: the water the picture draws. */
    static const float depths[] = {WG_WATER_MIN, 0.003f, 0.01f};
    for (int d = 0; d < 3; d++) {
        float depth = depths[d];
        double a = wet_share(w1, c1, depth), b = wet_share(w2, c2, depth);
        printf("water deeper than %g: %.2f%% of %u, %.2f%% of %u (%+.2f points)\n",
               (double)depth, a, n1, b, n2, b - a);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: resolution T1.pfm H1.pfm W1.pfm H2.pfm W2.pfm\n");
        return 2;
    }
    float *map[5];
    unsigned side[5];
    if (read_maps(argv + 1, map, side) != 0)
        return 1;
    int rc = compare(map[0], map[1], map[2], side[0], map[3], map[4], side[3],
                     argv + 1);
    for (int i = 0; i < 5; i++)
        free(map[i]);
    return rc ? rc : out_close("resolution");
}
