/* registry.c: the list of backends built into this binary, and the driver
 * that runs one of them through its stages. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"

const wg_backend *const wg_backends[] = {
    &wg_backend_scalar,
    &wg_backend_openmp,
    &wg_backend_vulkan, /* without Vulkan, a stand-in that says so */
    NULL,
};

const wg_backend *wg_backend_find(const char *name)
{
    for (size_t i = 0; wg_backends[i]; i++)
        if (strcmp(wg_backends[i]->name, name) == 0)
            return wg_backends[i];
    return NULL;
}

const wg_backend *wg_backend_fastest(const wg_job *job,
                                     void (*skipped)(const wg_backend *b,
                                                     const char *why))
{
    const wg_backend *best = NULL;
    int best_rank = 0;
    char err[WG_ERR_LEN];
    for (size_t i = 0; wg_backends[i]; i++) {
        const wg_backend *b = wg_backends[i];
        if (b->probe(job, err) != 0) {
            if (skipped)
                skipped(b, err);
            continue;
        }
        int rank = b->rank ? b->rank(job) : 1;
        if (!best || rank > best_rank) {
            best = b;
            best_rank = rank;
        }
    }
    return best;
}

double wg_scalar_seconds(const wg_world *w)
{
    /* Nanoseconds a cell: 3 an octave, 3 a thermal pass, 40 a hydraulic
     * step at small sizes (where the rows are too short to vectorise
     * well), 2 for the normals; scripts/bench.sh -b scalar -t measures
     * them. */
    return (double)wg_cells(w->size) *
           (3.0 * w->octaves + 3.0 * w->passes + 40.0 * w->steps + 2.0) * 1e-9;
}

int wg_backend_run(const wg_backend *b, const wg_job *job, wg_fields *out,
                   wg_times *t, char *dev, size_t dev_len, char *err)
{
    memset(out, 0, sizeof *out);
    memset(t, 0, sizeof *t);
    if (dev_len)
        dev[0] = '\0';

    double t0 = wg_now();
    void *ctx = b->open(job, t, err);
    if (!ctx)
        return -1;
    t->setup = wg_now() - t0; /* allocation, upload, pipeline creation */
    if (b->device && dev_len && b->device(ctx))
        snprintf(dev, dev_len, "%s", b->device(ctx));
    int rc = -1;
    if (b->terrain(ctx, t, err) == 0 && b->erosion(ctx, t, err) == 0 &&
        b->hydraulic(ctx, t, err) == 0 && b->normals(ctx, t, err) == 0 &&
        b->readback(ctx, out, t, err) == 0)
        rc = 0;
    b->close(ctx);
    if (rc != 0)
        wg_fields_free(out);
    return rc;
}

int wg_fields_alloc(wg_fields *f, uint32_t n)
{
    size_t bytes = wg_cells(n) * sizeof(float);
    memset(f, 0, sizeof *f);
    f->n = n;
    f->height = malloc(bytes);
    f->water = malloc(bytes);
    f->sediment = malloc(bytes);
    f->nx = malloc(bytes);
    f->ny = malloc(bytes);
    f->nz = malloc(bytes);
    if (f->height && f->water && f->sediment && f->nx && f->ny && f->nz)
        return 0;
    wg_fields_free(f);
    return -1;
}

void wg_fields_free(wg_fields *f)
{
    free(f->height);
    free(f->water);
    free(f->sediment);
    free(f->nx);
    free(f->ny);
    free(f->nz);
    f->height = f->water = f->sediment = f->nx = f->ny = f->nz = NULL;
}

double wg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int wg_fail(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, WG_ERR_LEN, fmt, ap);
    va_end(ap);
    return -1;
}
