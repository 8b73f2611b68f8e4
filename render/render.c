/* render.c: one picture of a world: the surface of its ground and water,
 * the visibility buffer (raster.c), the sun's shadows and the shading
 * (shade.c), with the timing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render.h"

const wg_render_opts wg_render_defaults = {
    .width = 800,
    .height = 600,
    .aa = 2,
    /* From the south-west and 30 degrees up, nine units out: the whole
     * block fills about 80% of an 800x600 frame's width. */
    .cam = {.azimuth = 215.0f, .elevation = 25.0f, .distance = 9.5f,
            .fov = 45.0f, .look = 0.2f},
    /* Low and from the west-north-west, across the view: long shadows and
     * lit faces turned toward the camera's left. */
    .sun_azimuth = 290.0f,
    .sun_elevation = 20.0f,
    .cull = 1,
};

void wg_image_free(wg_image *img)
{
    free(img->rgb);
    img->rgb = NULL;
}

typedef struct render_part_arg {
    void (*fn)(void *ctx, uint32_t part);
    void *ctx;
    uint32_t part;
} render_part_arg;

static void *render_part_main(void *arg)
{
    render_part_arg *a = arg;
    a->fn(a->ctx, a->part);
    return NULL;
}

void wg_parallel(uint32_t parts, void (*fn)(void *ctx, uint32_t part),
                 void *ctx)
{
    pthread_t tid[WG_THREADS_MAX];
    render_part_arg arg[WG_THREADS_MAX];
    int started[WG_THREADS_MAX] = {0};
    parts = parts > WG_THREADS_MAX ? WG_THREADS_MAX : parts;
    for (uint32_t t = 1; t < parts; t++) {
        arg[t] = (render_part_arg){fn, ctx, t};
        started[t] = pthread_create(&tid[t], NULL, render_part_main,
                                    &arg[t]) == 0;
    }
    fn(ctx, 0);
    for (uint32_t t = 1; t < parts; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            fn(ctx, t);
    }
}

/* Pixel rows per strip.  Each thread draws and shades every parts-th
 * strip with its own keys (32 rows x 1600 samples x 8 bytes = 800 KiB at
 * 800x600 --aa 2, in L2 while it is shaded), so no thread waits for
 * another and the picture is the same for any number of them.
 *
 * Why strips and not one buffer for the whole picture: on the 2-core CI
 * machine (a VM) the first touch of a fresh page costs about 20 us, and
 * the whole picture's keys (15 MB at --aa 2) took 74 ms to touch before
 * a single triangle was drawn.  A piece of the block reaches 1.2 strips on
 * average at the default view, so strips cost 20% more triangle setup. */
#define RENDER_STRIP 32

typedef struct render_job {
    const wg_eye *eye;
    const wg_fields *f;
    const float *top;
    const wg_plan *plan;
    const wg_shader *shader;
    wg_image *img;
    uint32_t aa, parts, strips;
    int cull;
    uint64_t *keys[WG_THREADS_MAX];
    uint64_t drawn[WG_THREADS_MAX];
    double raster[WG_THREADS_MAX];
} render_job;

static void render_part(void *arg, uint32_t part)
{
    render_job *j = arg;
    for (uint32_t k = part; k < j->strips; k += j->parts) {
        uint32_t py0 = k * RENDER_STRIP;
        uint32_t py1 = py0 + RENDER_STRIP < j->img->h ? py0 + RENDER_STRIP
                                                      : j->img->h;
        wg_target t = {.keys = j->keys[part], .w = j->eye->w, .h = j->eye->h,
                       .y0 = py0 * j->aa, .y1 = py1 * j->aa};
        double t0 = wg_now();
        /* Every byte 0xff is WG_KEY_EMPTY: the sky, until a triangle
         * covers it. */
        memset(t.keys, 0xff, (size_t)(t.y1 - t.y0) * t.w * sizeof *t.keys);
        j->drawn[part] += wg_raster_strip(&t, j->eye, j->plan, j->top,
                                          j->f->n, j->cull);
        j->raster[part] += wg_now() - t0;
        wg_shade_rows(j->shader, &t, py0, py1, j->img);
    }
}

/* wg_water_shown at an interior vertex: w and h point at its water and
 * ground, n is the row length.  Most vertices are dry with no water on
 * either side, so the surfaces are read only where both sides of a line
 * are wet. */
static inline float render_gap(const float *w, const float *h, size_t n,
                               float sea)
{
    float ground = h[0], d = w[0];
    if (ground < sea)
        return sea - ground;
    if (d > WG_WATER_MIN)
        return d;
    /* The four lines through the vertex: across x, across y, and the two
     * diagonals. */
    const ptrdiff_t line[4] = {1, (ptrdiff_t)n, (ptrdiff_t)n + 1,
                               (ptrdiff_t)n - 1};
    for (int i = 0; i < 4; i++) {
        ptrdiff_t o = line[i];
        float a = w[-o], b = w[o];
        if (a > WG_WATER_MIN && b > WG_WATER_MIN) {
            float la = h[-o] + a, lb = h[o] + b;
            float l = (la < lb ? la : lb) - ground;
            d = l > d ? l : d;
        }
    }
    return d;
}

float wg_water_shown(const wg_fields *f, float sea, uint32_t x, uint32_t y)
{
    uint32_t n = f->n;
    size_t k = (size_t)y * n + x;
    if (x == 0 || y == 0 || x + 1 == n || y + 1 == n)
        return f->height[k] < sea ? sea - f->height[k] : f->water[k];
    return render_gap(f->water + k, f->height + k, n, sea);
}

/* The surface the picture shows: the ground, and on it the water, for
 * grid rows [y0, y1) of part 'part'. */
typedef struct render_top {
    const wg_fields *f;
    float *top;
    float sea;
    uint32_t parts;
} render_top;

static void render_top_part(void *arg, uint32_t part)
{
    render_top *r = arg;
    uint32_t n = r->f->n;
    uint32_t y0 = (uint32_t)((uint64_t)n * part / r->parts);
    uint32_t y1 = (uint32_t)((uint64_t)n * (part + 1) / r->parts);
    const float *h = r->f->height, *w = r->f->water;
    for (uint32_t y = y0; y < y1; y++) {
        size_t k = (size_t)y * n, end = k + n - 1;
        if (y == 0 || y + 1 == n || n < 3) {
            for (uint32_t x = 0; x < n; x++, k++)
                r->top[k] = h[k] + wg_water_shown(r->f, r->sea, x, y);
            continue;
        }
        r->top[k] = h[k] + wg_water_shown(r->f, r->sea, 0, y);
        for (k++; k < end; k++)
            r->top[k] = h[k] + render_gap(w + k, h + k, n, r->sea);
        r->top[k] = h[k] + wg_water_shown(r->f, r->sea, n - 1, y);
    }
}

int wg_render(const wg_fields *f, float sea, const wg_render_opts *o,
              wg_image *img, wg_render_stats *rs, char *err)
{
    double t0 = wg_now();
    uint32_t sw = o->width * o->aa, sh = o->height * o->aa;
    long cpus = o->threads ? (long)o->threads : sysconf(_SC_NPROCESSORS_ONLN);
    render_job j = {.f = f, .img = img, .aa = o->aa, .cull = o->cull,
                    .strips = (o->height + RENDER_STRIP - 1) / RENDER_STRIP};
    j.parts = cpus < 1 ? 1 : cpus > WG_THREADS_MAX ? WG_THREADS_MAX
                                                   : (uint32_t)cpus;
    j.parts = j.parts > j.strips ? j.strips : j.parts;
    wg_plan plan = {0};
    wg_shader *shader = NULL;
    uint8_t *lit = malloc(wg_cells(f->n));
    float *top = malloc(wg_cells(f->n) * sizeof *top);
    img->w = o->width;
    img->h = o->height;
    img->rgb = malloc((size_t)o->width * o->height * 3);
    memset(rs, 0, sizeof *rs);
    int ok = lit && top && img->rgb;
    for (uint32_t t = 0; ok && t < j.parts; t++)
        ok = (j.keys[t] = malloc((size_t)RENDER_STRIP * o->aa * sw *
                                 sizeof *j.keys[t])) != NULL;
    if (!ok) {
        wg_fail(err, "out of memory for a %ux%u picture", o->width, o->height);
        goto err;
    }

    wg_eye eye;
    wg_eye_make(&eye, &o->cam, sw, sh);
    j.eye = &eye;
    wg_palette pal;
    wg_palette_make(&pal, sea, o->sun_azimuth, o->sun_elevation);
    /* Haze begins about where the terrain's near edge stands. */
    pal.haze_start = o->cam.distance > 3.0f ? o->cam.distance - 3.0f : 0.0f;
    /* The water's surface is drawn as the top of the block (render.h says
     * why): one pass over the grid, a millisecond at 512 on one core. */
    render_top rt = {.f = f, .top = top, .sea = sea, .parts = j.parts};
    wg_parallel(j.parts, render_top_part, &rt);
    j.top = top;
    double t1 = wg_now();
    if (wg_plan_make(&plan, &eye, top, f->n) != 0) {
        wg_fail(err, "out of memory for the rasteriser");
        goto err;
    }
    double t2 = wg_now();
    if (wg_shadow_sweep(&pal, top, f->n, lit) != 0 ||
        !(shader = wg_shader_new(&pal, &eye, f, top, lit, o->aa, o->width,
                                 o->height))) {
        wg_fail(err, "out of memory for the shading");
        goto err;
    }
    j.plan = &plan;
    j.shader = shader;
    wg_parallel(j.parts, render_part, &j);
    double t3 = wg_now();

    /* The threads interleave drawing and shading: rasterise is the plan
     * plus the threads' drawing (their mean: each ran that long while the
     * others did the same), shade is the rest. */
    double raster = 0.0;
    for (uint32_t t = 0; t < j.parts; t++) {
        raster += j.raster[t];
        rs->drawn += j.drawn[t];
    }
    rs->raster = (t2 - t1) + raster / j.parts;
    rs->shade = (t3 - t0) - rs->raster;
    rs->triangles = wg_block_triangles(f->n);
    rs->threads = j.parts;
    for (uint32_t t = 0; t < j.parts; t++)
        free(j.keys[t]);
    wg_shader_free(shader);
    wg_plan_free(&plan);
    free(lit);
    free(top);
    return 0;
err:
    for (uint32_t t = 0; t < WG_THREADS_MAX; t++)
        free(j.keys[t]);
    wg_shader_free(shader);
    wg_plan_free(&plan);
    free(lit);
    free(top);
    wg_image_free(img);
    return -1;
}

/* The shortest %g that reads back as the same float. */
static void render_num(char *buf, size_t len, float v)
{
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, len, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v)
            return;
    }
}

void wg_render_describe(const wg_render_opts *o, char *buf, size_t len)
{
    char az[32], el[32], dist[32], fov[32], look[32], saz[32], sel[32];
    render_num(az, sizeof az, o->cam.azimuth);
    render_num(el, sizeof el, o->cam.elevation);
    render_num(dist, sizeof dist, o->cam.distance);
    render_num(fov, sizeof fov, o->cam.fov);
    render_num(look, sizeof look, o->cam.look);
    render_num(saz, sizeof saz, o->sun_azimuth);
    render_num(sel, sizeof sel, o->sun_elevation);
    snprintf(buf, len,
             "--width %u --height %u --aa %u --azimuth %s --elevation %s "
             "--distance %s --fov %s --look %s --sun-azimuth %s "
             "--sun-elevation %s",
             o->width, o->height, o->aa, az, el, dist, fov, look, saz, sel);
}
