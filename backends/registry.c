/* registry.c: the list of backends built into this binary, the driver
 * that runs one of them through its stages, what every backend needs of a
 * job's region (wg_job_rect), and the clock and error message every one
 * uses (wg_now, wg_fail, wg_bytes_text).  The fields' memory is fields.c's. */
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "backend.h"

const wg_backend *const wg_backends[] = {
    &wg_backend_scalar,
    &wg_backend_openmp,
    &wg_backend_vulkan, /* without Vulkan, a stand-in that says so */
    NULL,
};

const char *const wg_stage_names[WG_STAGES] = {"terrain", "erosion",
                                               "hydraulic", "normals"};

const wg_backend *wg_backend_find(const char *name)
{
    for (size_t i = 0; wg_backends[i]; i++)
        if (strcmp(wg_backends[i]->name, name) == 0)
            return wg_backends[i];
    return NULL;
}

const wg_backend *wg_backend_fastest(const wg_job *job,
                                     void (*skipped)(void *ctx,
                                                     const wg_backend *b,
                                                     const char *why),
                                     void *ctx)
{
    const wg_backend *best = NULL;
    int best_rank = 0;
    char err[WG_ERR_LEN];
    for (size_t i = 0; wg_backends[i]; i++) {
        const wg_backend *b = wg_backends[i];
        int rank = b->rank ? b->rank(job) : 1;
        if (best && rank <= best_rank)
            continue; /* it cannot win: no need to probe it */
        if (b->probe(job, err) != 0) {
            if (skipped)
                skipped(ctx, b, err);
            continue;
        }
        best = b;
        best_rank = rank;
    }
    return best;
}

wg_rect wg_job_window(const wg_job *job)
{
    return job->region.w ? job->region : wg_rect_world(job->world.size);
}

wg_rect wg_job_rect(const wg_job *job)
{
    if (!job->region.w)
        return wg_rect_world(job->world.size);
    return wg_rect_grow(job->region, wg_halo(&job->world), job->world.size);
}

void wg_job_describe(const wg_job *job, char *buf, size_t len)
{
    uint32_t n = job->world.size;
    wg_rect r = wg_job_rect(job), win = wg_job_window(job);
    if (!job->region.w)
        snprintf(buf, len, "a %ux%u world", n, n);
    else
        snprintf(buf, len, "the %ux%u cells (a %ux%u region and its halo) "
                 "of a %ux%u world", r.w, r.h, win.w, win.h, n, n);
}

/* Whether the job's region is inside its world (or the whole world), as
 * every backend assumes.  Returns 0, or -1 with the reason in err. */
static int registry_job_check(const wg_job *job, char *err)
{
    const wg_rect r = job->region;
    const uint64_t n = job->world.size;
    if (!r.w && !r.h && !r.x && !r.y)
        return 0;
    if (!r.w || !r.h || r.x + (uint64_t)r.w > n || r.y + (uint64_t)r.h > n)
        return wg_fail(err, "the region %u,%u,%u,%u is not inside the "
                       "%ux%u world", r.x, r.y, r.w, r.h, job->world.size,
                       job->world.size);
    return 0;
}

int wg_backend_run(const wg_backend *b, const wg_job *job, wg_fields *out,
                   wg_times *t, char *dev, size_t dev_len, char *err)
{
    memset(out, 0, sizeof *out);
    memset(t, 0, sizeof *t);
    if (dev_len)
        dev[0] = '\0';

    if (registry_job_check(job, err) != 0)
        return -1;
    double t0 = wg_now();
    void *ctx = b->open(job, t, err);
    if (!ctx)
        return -1;
    t->setup = wg_now() - t0; /* allocation, upload, pipeline creation */
    if (b->device && dev_len && b->device(ctx))
        snprintf(dev, dev_len, "%s", b->device(ctx));
    int (*const stages[WG_STAGES])(void *, wg_times *, char *) = {
        b->terrain, b->erosion, b->hydraulic, b->normals};
    int rc = 0;
    if (b->stages)
        rc = b->stages(ctx, t, err);
    for (int i = 0; i < WG_STAGES && rc == 0 && !b->stages; i++) {
        if (job->progress)
            job->progress(wg_stage_names[i], 0);
        rc = stages[i](ctx, t, err);
    }
    if (rc == 0 && job->progress)
        job->progress("readback", -1);
    if (rc == 0)
        rc = b->readback(ctx, out, t, err);
    b->close(ctx);
    if (rc != 0)
        wg_fields_free(out);
    return rc;
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

const char *wg_bytes_text(double bytes, char buf[32])
{
    if (bytes >= 1073741824.0)
        snprintf(buf, 32, "%.2f GiB", bytes / 1073741824.0);
    else
        snprintf(buf, 32, "%.1f MiB", bytes / 1048576.0);
    return buf;
}
