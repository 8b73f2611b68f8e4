/* helpers.c: what several test files need: make a world, compare fields. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "test.h"

int wg_make_world(const char *backend, const wg_world *w, int threads,
                  wg_fields *out)
{
    static float lat[WG_LATTICE_R * WG_LATTICE_R];
    const wg_backend *b = wg_backend_find(backend);
    char err[WG_ERR_LEN], dev[256];
    wg_times t;
    wg_job job = {.world = *w, .lattice = lat, .threads = threads};
    if (!b) {
        fprintf(stderr, "    no backend '%s'\n", backend);
        return -1;
    }
    wg_consts_init(&job.consts, w);
    wg_lattice_fill(lat, w->seed);
    if (b->probe(&job, err) != 0 ||
        wg_backend_run(b, &job, out, &t, dev, sizeof dev, err) != 0) {
        fprintf(stderr, "    %s: %s\n", backend, err);
        return -1;
    }
    return 0;
}

double wg_max_diff(const float *a, const float *b, size_t n, int *identical)
{
    double worst = 0.0;
    *identical = memcmp(a, b, n * sizeof *a) == 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > worst || d != d)
            worst = d;
    }
    return worst;
}
