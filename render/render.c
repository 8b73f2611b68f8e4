/* render.c: one picture of a world: the surfaces of its ground and water,
 * the visibility buffer (raster.c), the sun's shadows and the shading
 * (shade.c), or the map (shade.c), with the timing, the threads, and the
 * count of the memory it takes. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
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
    wg_block_free(img->rgb);
    img->rgb = NULL;
}

static const char *const render_views[] = {"orbit", "map"};

const char *wg_render_view_name(wg_render_view v)
{
    return (unsigned)v < 2 ? render_views[v] : "?";
}

int wg_render_view_parse(const char *s, wg_render_view *out)
{
    for (int i = 0; i < 2; i++)
        if (strcmp(s, render_views[i]) == 0) {
            *out = (wg_render_view)i;
            return 0;
        }
    return -1;
}

/* Blocks from this size up have their pages populated when allocated:
 * everything the renderer allocates it writes in full, and below this,
 * malloc hands out memory the process holds already. */
#define RENDER_POPULATE ((size_t)64 << 10)

/* The render's memory, all of it but the picture, carved from one block
 * (the pool) that wg_render takes at its start and gives back at its end:
 * a block of a megabyte or more is in huge pages where the kernel has them
 * (wg_block_alloc), and the AMD EPYC VM traps the first write to each 4 KiB
 * page for about 6 us even when it was populated beforehand (fields.c).
 * The keys (two strips of 800 KiB at 800x600 --aa 2), the sun's share, the
 * plan and the sky's grid had each been malloc's own mapping in 4 KiB
 * pages, 630 of them: rasterise + shade of the default world 32.6 -> 30.1
 * ms, medians of 15 run in turn.  A block that does not fit (the estimate,
 * wg_render_memory, is the render's own count) is allocated alone, as
 * before.  Not under AddressSanitizer, which then checks each block's
 * bounds apart. */
#if defined(__SANITIZE_ADDRESS__)
#define RENDER_POOLED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RENDER_POOLED 0
#endif
#endif
#ifndef RENDER_POOLED
#define RENDER_POOLED 1
#endif

/* The bytes of a block in the pool start on a cache line, its head in
 * the line before. */
#define RENDER_ALIGN ((size_t)64)

/* The bytes the calling thread holds through wg_render_alloc, and the most
 * it held since a render last reset the mark.  Per thread: a render
 * allocates only on its caller's thread (its workers allocate nothing), so
 * renders on several threads at once count apart; the pool is the calling
 * thread's too. */
static _Thread_local size_t render_held, render_mark;
static _Thread_local struct {
    char *base;
    size_t size, used;
} render_pool;

/* Each block carries its size and whether it is the pool's in front, in a
 * max_align_t so the bytes handed out stay aligned for anything. */
typedef struct {
    size_t bytes;
    int pooled;
} render_head;
_Static_assert(sizeof(render_head) <= sizeof(max_align_t),
               "a block's head fits in front of it");

/* Open the pool for what a render will allocate (bytes, its own count),
 * its pages populated at once; without it (out of memory, or sanitized)
 * every block is allocated alone. */
static void render_pool_open(size_t bytes)
{
    render_pool.base = NULL;
    render_pool.size = render_pool.used = 0;
    if (!RENDER_POOLED || bytes == 0 || bytes > SIZE_MAX / 4)
        return;
    /* Each block's line for its head and its rounding to a line, for the
     * few dozen blocks a render takes. */
    size_t size = bytes + 64 * 2 * RENDER_ALIGN;
    char *base = wg_block_alloc(size);
    if (!base)
        return;
    wg_populate(base, size);
    render_pool.base = base;
    render_pool.size = size;
}

static void render_pool_close(void)
{
    wg_block_free(render_pool.base);
    render_pool.base = NULL;
    render_pool.size = render_pool.used = 0;
}

void *wg_render_alloc(size_t bytes)
{
    if (bytes > SIZE_MAX / 2 - sizeof(max_align_t) - RENDER_ALIGN)
        return NULL;
    const size_t whole =
        RENDER_ALIGN + ((bytes + RENDER_ALIGN - 1) & ~(RENDER_ALIGN - 1));
    max_align_t *b;
    render_head head = {bytes, 0};
    if (render_pool.base && render_pool.size - render_pool.used >= whole) {
        /* the pool's base is on a line (wg_block_alloc) */
        b = (max_align_t *)(render_pool.base + render_pool.used +
                            RENDER_ALIGN) - 1;
        render_pool.used += whole;
        head.pooled = 1;
    } else {
        if (!(b = wg_block_alloc(sizeof *b + bytes)))
            return NULL;
        /* Its pages at once rather than a trap each as they are first
         * written (wg_populate): at 512 and 800x600 --aa 2, a render's
         * 1.3k faults had been 14 ms of its 38 on the 2-core AMD EPYC
         * VM.  A block from memory the process already holds costs the
         * call next to nothing. */
        if (bytes >= RENDER_POPULATE)
            wg_populate(b + 1, bytes);
    }
    memcpy(b, &head, sizeof head);
    render_held += bytes;
    render_mark = render_held > render_mark ? render_held : render_mark;
    return b + 1;
}

void wg_render_free(void *p)
{
    if (!p)
        return;
    max_align_t *b = (max_align_t *)p - 1;
    render_head head;
    memcpy(&head, b, sizeof head);
    render_held -= head.bytes;
    if (!head.pooled) /* the pool's go back with it (render_pool_close) */
        wg_block_free(b);
}

/* wg_wide's answer: -1 not yet asked. */
static atomic_int render_wide = -1;

int wg_wide(void)
{
    int w = atomic_load_explicit(&render_wide, memory_order_relaxed);
    if (w < 0) {
        const char *env = getenv("WORLDGEN_WIDE");
#if WG_WIDE
        w = __builtin_cpu_supports("avx2") && !(env && strcmp(env, "0") == 0);
#else
        (void)env;
        w = 0;
#endif
        atomic_store_explicit(&render_wide, w, memory_order_relaxed);
    }
    return w;
}

void wg_wide_set(int on)
{
    atomic_store_explicit(&render_wide, on ? -1 : 0, memory_order_relaxed);
}

typedef struct render_part_arg {
    void (*fn)(void *ctx, uint32_t part);
    void *ctx;
    uint32_t part;
} render_part_arg;

static void *render_part_main(void *arg)
{
    render_part_arg *a = arg;
    wg_thread_unbind(); /* not the main thread's one place (libgomp's) */
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

/* The team of a render's threads waits here between its steps: each
 * arrival spins a while (RENDER_SPINS polls: 10 to 100 us, as long as the
 * CPU's pause instruction takes), then yields the CPU at every poll.  A
 * thread per step had been made and joined three times a render: on the
 * 2-core CI machine (a VM) making one and joining it took 30 to 540 us,
 * mostly the wake-up of the idle CPU. */
typedef struct render_barrier {
    atomic_uint arrived, round;
    uint32_t parts;
} render_barrier;

#define RENDER_SPINS 2000

static void render_barrier_wait(render_barrier *b)
{
    const uint32_t round =
        atomic_load_explicit(&b->round, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) + 1 ==
        b->parts) {
        /* The last: the count is ready for the next round before the
         * others see this one end. */
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->round, 1, memory_order_release);
        return;
    }
    for (uint32_t polls = 0;
         atomic_load_explicit(&b->round, memory_order_acquire) == round;
         polls++) {
        if (polls >= RENDER_SPINS)
            sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
    }
}

/* Pixel rows per strip.  Each thread draws and shades the next strip not
 * yet taken with its own keys (64 rows x 1600 samples x 8 bytes = 1.6 MiB
 * at 800x600 --aa 2), so no thread waits for another and the picture is
 * the same for any number of them.
 *
 * Why strips and not one buffer for the whole picture: the keys stay in
 * the caches between the drawing and the shading, and the first touch of
 * a fresh page had cost about 20 us on the 2-core CI machine (a VM): the
 * whole picture's keys (15 MB at --aa 2) took 74 ms to touch before a
 * single triangle was drawn.  A piece of the block that reaches two
 * strips is set up in each.  With the keys in the pool's huge pages, 64
 * rows measured best on the AMD EPYC VM (medians of 15 run in turn, the
 * default world): 32 rows 24.9 ms, 48 24.0, 64 23.9 (22.5 in a quieter
 * run), 96 24.2 (seven strips for two threads), 128 25.7. */
#define RENDER_STRIP 64

typedef struct render_job {
    const wg_eye *eye;
    const wg_fields *f;
    const wg_block *blk;
    const wg_plan *plan;
    const wg_shader *shader;
    const wg_palette *pal; /* the map's */
    const uint8_t *lit;    /* the map's */
    wg_image *img;
    uint32_t aa, parts, strips;
    int cull, map;
    atomic_uint next; /* strips handed out so far */
    uint64_t *keys[WG_THREADS_MAX];
    uint64_t drawn[WG_THREADS_MAX];
    double raster[WG_THREADS_MAX];
} render_job;

static void render_part(void *arg, uint32_t part)
{
    render_job *j = arg;
    for (;;) {
        /* Strips are handed out one at a time to whichever thread is
         * free, so a thread that drew the sky does not wait for one that
         * drew the mountains; the picture is the same, each strip being
         * drawn and shaded alone.  Bottom first: the ground is most often
         * there, and the dear strips go out before the cheap ones. */
        uint32_t got = atomic_fetch_add_explicit(&j->next, 1,
                                                 memory_order_relaxed);
        if (got >= j->strips)
            break;
        uint32_t k = j->strips - 1 - got;
        uint32_t py0 = k * RENDER_STRIP;
        uint32_t py1 = py0 + RENDER_STRIP < j->img->h ? py0 + RENDER_STRIP
                                                      : j->img->h;
        if (j->map) {
            wg_map_rows(j->pal, j->f, j->blk, j->lit, j->aa, py0, py1,
                        j->img);
            continue;
        }
        wg_target t = {.keys = j->keys[part], .w = j->eye->w, .h = j->eye->h,
                       .y0 = py0 * j->aa, .y1 = py1 * j->aa};
        double t0 = wg_now();
        /* Every byte 0xff is WG_KEY_EMPTY: the sky, until a triangle
         * covers it. */
        memset(t.keys, 0xff, (size_t)(t.y1 - t.y0) * t.w * sizeof *t.keys);
        j->drawn[part] += wg_raster_strip(&t, j->eye, j->plan, j->blk,
                                          j->cull);
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
    /* Most dry vertices have no wet pair around them: the eight tests at
     * once, without a branch, then the lines in order only where one is.
     * (Before, the lines' loop: at --size 4096, 874 million instructions
     * for the surface on one thread, now 710.) */
    const float *up = w - n, *down = w + n;
    int pair = ((w[-1] > WG_WATER_MIN) & (w[1] > WG_WATER_MIN)) |
               ((up[0] > WG_WATER_MIN) & (down[0] > WG_WATER_MIN)) |
               ((up[-1] > WG_WATER_MIN) & (down[1] > WG_WATER_MIN)) |
               ((up[1] > WG_WATER_MIN) & (down[-1] > WG_WATER_MIN));
    if (!pair)
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

/* Whether the water shown on vertex k is deep enough to draw. */
static inline int render_wet(const float *ground, const float *top, size_t k)
{
    return top[k] - ground[k] > WG_WATER_MIN;
}

/* Columns a chunk of wg_water_levels takes at once, its flags on the
 * stack. */
#define RENDER_LEVEL_CHUNK 1024

uint64_t wg_water_levels(const float *restrict ground,
                         const float *restrict top, uint32_t n, uint32_t y0,
                         uint32_t y1, float *restrict level)
{
    uint64_t cells = 0;
    /* A chunk of columns at a time, and one each side, down the rows: the
     * wet flags of three rows, row y at wet[y % 3][x - c0 + 1] (0 outside
     * the grid), each row's made once. */
    uint8_t wet[3][RENDER_LEVEL_CHUNK + 2];
    for (uint32_t c0 = 0; c0 < n; c0 += RENDER_LEVEL_CHUNK) {
        const uint32_t c1 =
            n - c0 < RENDER_LEVEL_CHUNK ? n : c0 + RENDER_LEVEL_CHUNK;
        /* The chunk's columns with one to their right (a flag, a cell). */
        const uint32_t last = c1 < n ? c1 : n - 1;
        const uint32_t xa = c0 ? c0 - 1 : 0, w = c1 - c0;
        uint32_t made = 0; /* rows [first, made) have flags */
        const uint32_t first = y0 ? y0 - 1 : 0;
        for (uint32_t y = y0; y < y1; y++) {
            for (uint32_t fy = made > first ? made : first;
                 fy <= (y + 1 < n ? y + 1 : y); fy++) {
                uint8_t *f = wet[fy % 3];
                f[0] = f[w + 1] = 0;
                const size_t at = (size_t)fy * n;
                for (uint32_t x = xa; x <= last; x++)
                    f[x - c0 + 1] = render_wet(ground, top, at + x);
                made = fy + 1;
            }
            static const uint8_t none[RENDER_LEVEL_CHUNK + 2];
            const uint8_t *up = y ? wet[(y - 1) % 3] : none;
            const uint8_t *mid = wet[y % 3];
            const uint8_t *down = y + 1 < n ? wet[(y + 1) % 3] : none;
            const size_t r = (size_t)y * n, ra = y ? r - n : r,
                         rb = y + 1 < n ? r + n : r;
            /* First every vertex as if no water were near it: its
             * surface where it is wet, else its ground. */
            for (uint32_t x = c0; x < c1; x++) {
                const uint32_t i = x - c0 + 1;
                level[r + x] = mid[i] ? top[r + x] : ground[r + x];
            }
            /* The cells to the right of the vertices, rows y..y+1, with
             * a wet corner. */
            for (uint32_t x = c0; y + 1 < n && x < last; x++) {
                const uint32_t i = x - c0 + 1;
                cells += (uint64_t)(mid[i] | mid[i + 1] | down[i] |
                                    down[i + 1]);
            }
            /* Then the dry vertices next to wet ones (wg_shore_level):
             * under their ground by a third of the shallowest water
             * beside them, so the shore crosses the edges three quarters
             * of the way from the water, or at a lake's level
             * where the bank is higher.  Not on the border: there the
             * water's surface must not pass under the ground between two
             * vertices, where its side, drawn from its surface down to
             * the ground, would stand upside down in the block's side. */
            if (y == 0 || y + 1 == n)
                continue;
            const uint8_t *const around[3] = {up, mid, down};
            const size_t rows[3] = {ra, r, rb};
            for (uint32_t x = c0 ? c0 : 1; x < last; x++) {
                const uint32_t i = x - c0 + 1;
                if (mid[i] || !(up[i - 1] | up[i] | up[i + 1] | mid[i - 1] |
                                mid[i + 1] | down[i - 1] | down[i] |
                                down[i + 1]))
                    continue;
                float best = -INFINITY, shallow = INFINITY;
                for (int j = 0; j < 3; j++)
                    for (uint32_t d = 0; d < 3; d++) {
                        const size_t q = rows[j] + x - 1 + d;
                        const int on = around[j][i - 1 + d];
                        const float l = on ? top[q] : -INFINITY;
                        const float s = on ? top[q] - ground[q] : INFINITY;
                        best = l > best ? l : best;
                        shallow = s < shallow ? s : shallow;
                    }
                const int bridge =
                    wg_shore_bridge(mid[i - 1], down[i], down[i - 1], up[i],
                                    mid[i + 1], up[i + 1]);
                level[r + x] =
                    wg_shore_level(ground[r + x], best, shallow, bridge);
            }
        }
    }
    return cells;
}

/* The ground with the water shown on it, 'top' (what the materials, the
 * shadows and the water's surface read), for grid rows [y0, y1) of part
 * 'part'; then the water's surface (wg_water_levels) on those of its rows
 * whose neighbours are its own too, all but the first and the last, which
 * render_levels_seams makes once every part's top is there. */
typedef struct render_top {
    const wg_fields *f;
    float *top, *level;
    float sea;
    uint32_t parts;
    uint64_t wet[WG_THREADS_MAX]; /* cells with water drawn, by part */
} render_top;

/* The rows [y0, y1) of part 'part' of a grid of n rows. */
static void render_rows(uint32_t n, uint32_t part, uint32_t parts,
                        uint32_t *y0, uint32_t *y1)
{
    *y0 = (uint32_t)((uint64_t)n * part / parts);
    *y1 = (uint32_t)((uint64_t)n * (part + 1) / parts);
}

/* Columns render_top_inner takes at once, its flags on the stack. */
#define RENDER_TOP_CHUNK 256

/* top = h + render_gap for the inner vertices 1..n-2 of a row that is not
 * the grid's first or last (h, w, top: the row's vertex 0).  First every
 * vertex as render_gap's two early answers would have it, the sea's depth
 * or the vertex's own water, with the flag of those that have neither and
 * a wet pair of neighbours, without a branch (so that it vectorises);
 * then render_gap again for the flagged few.  The same bits as render_gap
 * alone: h + (sea - h) and h + w are the sums it made.  (render_gap
 * vertex by vertex: 1.7 ms of the default render on two threads, in its
 * eight loads and tests of every dry vertex.) */
static void render_top_inner(const float *restrict h, const float *restrict w,
                             size_t n, float sea, float *restrict top)
{
    uint8_t flag[RENDER_TOP_CHUNK];
    const float *restrict up = w - n, *restrict down = w + n;
    for (size_t c0 = 1; c0 < n - 1; c0 += RENDER_TOP_CHUNK) {
        const size_t c1 = n - 1 - c0 < RENDER_TOP_CHUNK ? n - 1
                                                        : c0 + RENDER_TOP_CHUNK;
        uint32_t any = 0;
        for (size_t x = c0; x < c1; x++) {
            const float g = h[x], d = w[x];
            const int sea_under = g < sea, own = d > WG_WATER_MIN;
            top[x] = g + (sea_under ? sea - g : d);
            const int pair =
                ((w[x - 1] > WG_WATER_MIN) & (w[x + 1] > WG_WATER_MIN)) |
                ((up[x] > WG_WATER_MIN) & (down[x] > WG_WATER_MIN)) |
                ((up[x - 1] > WG_WATER_MIN) & (down[x + 1] > WG_WATER_MIN)) |
                ((up[x + 1] > WG_WATER_MIN) & (down[x - 1] > WG_WATER_MIN));
            const uint8_t f = (uint8_t)(!sea_under & !own & pair);
            flag[x - c0] = f;
            any |= f;
        }
        if (!any)
            continue;
        for (size_t x = c0; x < c1; x++)
            if (flag[x - c0])
                top[x] = h[x] + render_gap(w + x, h + x, n, sea);
    }
}

void wg_water_tops(const wg_fields *f, float sea, uint32_t y0, uint32_t y1,
                   float *top)
{
    const uint32_t n = f->n;
    const float *h = f->height, *w = f->water;
    for (uint32_t y = y0; y < y1; y++) {
        size_t k = (size_t)y * n;
        if (y == 0 || y + 1 == n || n < 3) {
            for (uint32_t x = 0; x < n; x++, k++)
                top[k] = h[k] + wg_water_shown(f, sea, x, y);
            continue;
        }
        top[k] = h[k] + wg_water_shown(f, sea, 0, y);
        render_top_inner(h + k, w + k, n, sea, top + k);
        k += n - 1;
        top[k] = h[k] + wg_water_shown(f, sea, n - 1, y);
    }
}

static void render_top_part(void *arg, uint32_t part)
{
    render_top *r = arg;
    uint32_t n = r->f->n, y0, y1;
    render_rows(n, part, r->parts, &y0, &y1);
    const float *h = r->f->height;
    wg_water_tops(r->f, r->sea, y0, y1, r->top);
    r->wet[part] = y1 - y0 >= 3 ? wg_water_levels(h, r->top, n, y0 + 1,
                                                  y1 - 1, r->level)
                                : 0;
}

/* The water's surface on the rows render_top_part left: each part's
 * first and last.  Returns the cells with water drawn over them, in all
 * (render_top_part's counted). */
static uint64_t render_levels_seams(const render_top *r)
{
    uint32_t n = r->f->n;
    uint64_t wet = 0;
    for (uint32_t p = 0; p < r->parts; p++) {
        uint32_t y0, y1;
        render_rows(n, p, r->parts, &y0, &y1);
        if (y1 - y0 >= 3)
            wet += r->wet[p] +
                   wg_water_levels(r->f->height, r->top, n, y0, y0 + 1,
                                   r->level) +
                   wg_water_levels(r->f->height, r->top, n, y1 - 1, y1,
                                   r->level);
        else
            wet += wg_water_levels(r->f->height, r->top, n, y0, y1,
                                   r->level);
    }
    return wet;
}

/* What runs before the strips: the sun's sweep on part 0 (the caller's
 * thread, which holds what it allocates), the water's surface on the rows
 * between the parts of render_top (render_levels_seams) and then the
 * rasteriser's plan (allocated before) on the last part, and the sky
 * grid's rows on every part, as each comes to them.  (The water's
 * surface had a pass of its own
 * over the grid, on every thread: 0.9 ms at --size 512 on two; all on the
 * last part here, it took 1.5 ms beside the sweep's 1.3, and at 4096 it
 * made the render a quarter slower than before the water had a surface
 * of its own.)  The plan was made alone before the sweep: at --size 4096
 * it took 222 million instructions on one thread while the other waited
 * (30 ms or more); beside it, it is hidden (at 4096 the sweep is the
 * longer by far; at 512 the sweep and the plan with the sky were about
 * even, 12 million instructions each). */
typedef struct render_prep {
    const wg_palette *pal;
    const wg_eye *eye;
    const wg_block *blk;
    const render_top *rt;  /* whose seams are made here */
    uint64_t wet;          /* cells with water drawn over them */
    uint8_t *lit;
    uint32_t n, parts;
    wg_shader *shader; /* NULL for a map */
    wg_plan *plan;     /* NULL for a map */
    double plan_time;  /* seconds the plan took */
    int failed;
} render_prep;

static void render_prep_part(void *arg, uint32_t part)
{
    render_prep *r = arg;
    if (part == 0)
        r->failed = wg_shadow_sweep(r->pal, r->blk->top, r->n, r->lit) != 0;
    if (part == r->parts - 1)
        r->wet = render_levels_seams(r->rt);
    if (!r->shader)
        return;
    if (part == r->parts - 1) {
        double t0 = wg_now();
        wg_plan_fill(r->plan, r->eye, r->blk);
        r->plan_time = wg_now() - t0;
    }
    /* The sky's rows, taken by each part as it comes to them: a part that
     * made the sweep or the plan first takes fewer (at --size 512 the
     * sweep took 1.2 ms, the plan 0.9 and the sky 1.1; with the sky on
     * the sweep's part alone, the plan's waited a millisecond). */
    wg_shader_sky(r->shader);
}

/* How many threads share the strips: as many as asked (0: one per CPU),
 * but never more than there are CPUs or strips.  A thread beyond either
 * would only take its strip's keys (64 MiB at 16384 wide --aa 4) and a
 * start, and run in turn with the others. */
static uint32_t render_parts(const wg_render_opts *o, uint32_t strips)
{
    long cpus = wg_cpus();
    uint32_t cores = cpus < 1 ? 1 : cpus > WG_THREADS_MAX ? WG_THREADS_MAX
                                                         : (uint32_t)cpus;
    uint32_t parts = o->threads ? o->threads : cores;
    parts = parts > cores ? cores : parts;
    parts = parts > strips ? strips : parts;
    return parts ? parts : 1;
}

static uint32_t render_strips(const wg_render_opts *o)
{
    return (o->height + RENDER_STRIP - 1) / RENDER_STRIP;
}

/* One thread's keys: a strip of sample rows. */
static size_t render_keys_bytes(const wg_render_opts *o)
{
    return (size_t)RENDER_STRIP * o->aa * o->width * o->aa * sizeof(uint64_t);
}

/* wg_render's allocations, in its order: the picture, the sun's share and
 * the two surfaces (top and the water's level), the keys and the plan,
 * the shader (none of the three for a map), then for a while
 * wg_shadow_sweep's two lines. */
double wg_render_memory(const wg_render_opts *o, uint32_t n)
{
    double held = (double)o->width * o->height * 3 +
                  (double)wg_cells(n) * (1 + 2 * sizeof(float));
    double sweep = 2.0 * n * sizeof(float);
    if (o->view == WG_VIEW_MAP)
        return held + sweep;
    held += (double)render_parts(o, render_strips(o)) *
                (double)render_keys_bytes(o) +
            (double)wg_plan_bytes(n);
    return held + (double)wg_shader_bytes(o->width, o->height) + sweep;
}

/* The height of the surface h (n x n) under world (x, z), bilinear
 * between the corners of the cell there (the two triangles bend a little
 * from it), or NAN off the grid's footprint. */
static float render_under(const float *h, uint32_t n, float x, float z)
{
    const float sp = wg_block_spacing(n);
    const float gx = (x + 3.0f) / sp, gz = (z + 3.0f) / sp;
    if (!(gx >= 0.0f && gz >= 0.0f && gx <= (float)(n - 1) &&
          gz <= (float)(n - 1)))
        return NAN;
    uint32_t i = (uint32_t)gx, j = (uint32_t)gz;
    i = i > n - 2 ? n - 2 : i;
    j = j > n - 2 ? n - 2 : j;
    const float u = gx - (float)i, v = gz - (float)j;
    const float *r0 = h + (size_t)j * n + i, *r1 = r0 + n;
    const float a = r0[0] + (r0[1] - r0[0]) * u;
    const float b = r1[0] + (r1[1] - r1[0]) * u;
    return a + (b - a) * v;
}

/* Whether the camera at 'pos' is inside the block of ground f->height with
 * the water 'top' on it: over its footprint, under the surface and above
 * the floor; in the water if above the ground there.  Or over the surface
 * by less than 'near', the depth the rasteriser clips at: the surface
 * under it is then nearer than that and cut away, with holes as from
 * inside (half a millimetre over level ground, looking down, had shown
 * the sky where the ground was, and no warning). */
static void render_inside(const wg_fields *f, const float *top,
                          const float pos[3], float near,
                          wg_render_stats *rs)
{
    const float s = render_under(top, f->n, pos[0], pos[2]);
    const float g = render_under(f->height, f->n, pos[0], pos[2]);
    rs->surface_y = s;
    rs->camera_inside = pos[1] < s && pos[1] > WG_BLOCK_FLOOR;
    rs->camera_in_water = rs->camera_inside && pos[1] >= g;
    rs->camera_near = pos[1] >= s && pos[1] - s < near;
}

/* Where the haze begins: about where the terrain's near edge stands,
 * half the block's width (3) nearer than its centre line, at the height
 * looked at held within the block's (its floor to 1).  A point looked at
 * above or below the block is not where the block stands: the distance
 * to it had put the haze's start 5 units too near for --look 10 (the
 * whole block hazed grey) and 3 too far for --look -10.  The eye is
 * at look + D dir, so its distance to the line's point s below the point
 * looked at is sqrt(D^2 + 2 D s dir_y + s^2), in double: exactly D where s
 * is 0, so a look point within the block's height changes nothing. */
static float render_haze_start(const wg_camera *c)
{
    const float ref = c->look < WG_BLOCK_FLOOR ? WG_BLOCK_FLOOR
                      : c->look > 1.0f         ? 1.0f
                                               : c->look;
    const double s = (double)c->look - (double)ref, d = c->distance;
    float dir[3];
    wg_direction(c->azimuth, c->elevation, dir);
    const double from = sqrt(d * d + 2.0 * d * s * dir[1] + s * s);
    return from > 3.0 ? (float)(from - 3.0) : 0.0f;
}

/* A render's steps, run by one team of threads (wg_render): the ground
 * with the water shown on it, then what comes before the strips (the
 * sweep, the plan, the sky), then the grid of the sky marked, then the
 * strips, with a barrier between. */
typedef struct render_team {
    render_top *rt;
    render_prep *prep;
    render_job *j;
    wg_shader *shader;
    render_barrier bar;
    atomic_int go; /* 1: every thread started; -1: one did not */
} render_team;

#define RENDER_STEPS 4

static void render_team_step(render_team *tm, int step, uint32_t part)
{
    switch (step) {
    case 0:
        render_top_part(tm->rt, part);
        break;
    case 1:
        render_prep_part(tm->prep, part);
        break;
    case 2:
        if (part == 0 && tm->shader)
            wg_shader_sky_done(tm->shader);
        break;
    default:
        if (!tm->prep->failed)
            render_part(tm->j, part);
        break;
    }
}

typedef struct render_member {
    render_team *tm;
    uint32_t part;
} render_member;

static void *render_member_main(void *arg)
{
    const render_member *m = arg;
    int go;
    wg_thread_unbind(); /* not the main thread's one place (libgomp's) */
    while ((go = atomic_load_explicit(&m->tm->go, memory_order_acquire)) == 0)
        sched_yield();
    for (int step = 0; go > 0 && step < RENDER_STEPS; step++) {
        if (step)
            render_barrier_wait(&m->tm->bar);
        render_team_step(m->tm, step, m->part);
    }
    return NULL;
}

/* Run the steps on 'parts' threads, the caller's as part 0; if a thread
 * cannot be started, every step on the caller's alone, part by part
 * (as wg_parallel does), since a team short of a thread would wait for it
 * at the first barrier.  Returns how many threads ran them: parts, or 1. */
static uint32_t render_team_run(render_team *tm, uint32_t parts)
{
    pthread_t tid[WG_THREADS_MAX];
    render_member m[WG_THREADS_MAX];
    uint32_t started = 1;
    parts = parts > WG_THREADS_MAX ? WG_THREADS_MAX : parts;
    tm->bar.parts = parts;
    for (uint32_t t = 1; t < parts; t++, started++) {
        m[t] = (render_member){tm, t};
        if (pthread_create(&tid[t], NULL, render_member_main, &m[t]) != 0)
            break;
    }
    const int all = started == parts;
    atomic_store_explicit(&tm->go, all ? 1 : -1, memory_order_release);
    for (int step = 0; all && step < RENDER_STEPS; step++) {
        if (step)
            render_barrier_wait(&tm->bar);
        render_team_step(tm, step, 0);
    }
    for (uint32_t t = 1; t < started; t++)
        pthread_join(tid[t], NULL);
    if (!all)
        for (int step = 0; step < RENDER_STEPS; step++)
            for (uint32_t p = 0; p < parts; p++)
                render_team_step(tm, step, p);
    return all ? parts : 1;
}

int wg_render(const wg_fields *f, float sea, const wg_render_opts *o,
              wg_image *img, wg_render_stats *rs, char *err)
{
    double t0 = wg_now();
    int rc = -1;
    /* The peak is counted from what this thread held before. */
    size_t before = render_held;
    render_mark = before;
    size_t pixels = (size_t)o->width * o->height * 3;
    uint32_t sw = o->width * o->aa, sh = o->height * o->aa;
    render_job j = {.f = f, .img = img, .aa = o->aa, .cull = o->cull,
                    .map = o->view == WG_VIEW_MAP,
                    .strips = render_strips(o)};
    j.parts = render_parts(o, j.strips);
    atomic_init(&j.next, 0);
    wg_plan plan = {0};
    wg_shader *shader = NULL;
    /* All that follows but the picture, from the pool. */
    render_pool_open((size_t)(wg_render_memory(o, f->n) - (double)pixels));
    uint8_t *lit = wg_render_alloc(wg_cells(f->n));
    float *top = wg_render_alloc(wg_cells(f->n) * sizeof *top);
    float *level = wg_render_alloc(wg_cells(f->n) * sizeof *level);
    img->w = o->width;
    img->h = o->height;
    /* malloc: the caller frees it with wg_image_free(). */
    img->rgb = wg_block_alloc(pixels);
    if (img->rgb && pixels >= RENDER_POPULATE)
        wg_populate(img->rgb, pixels);
    memset(rs, 0, sizeof *rs);
    int ok = lit && top && level && img->rgb;
    for (uint32_t t = 0; ok && !j.map && t < j.parts; t++)
        ok = (j.keys[t] = wg_render_alloc(render_keys_bytes(o))) != NULL;
    if (!ok) {
        wg_fail(err, "out of memory for a %ux%u picture", o->width, o->height);
        goto done;
    }

    wg_eye eye;
    wg_eye_make(&eye, &o->cam, sw, sh);
    j.eye = &eye;
    wg_palette pal;
    wg_palette_make(&pal, sea, o->sun_azimuth, o->sun_elevation);
    /* A map's water mirrors the sky, not the sun: wg_palette. */
    pal.sun_in_water = !j.map;
    pal.haze_start = render_haze_start(&o->cam);
    /* First the ground with the water shown on it, and the water's
     * surface but on the rows between the parts (render_prep_part): one
     * pass over the grid, 1.3 ms at 512 on two threads. */
    render_top rt = {.f = f, .top = top, .level = level, .sea = sea,
                     .parts = j.parts};
    const wg_block blk = {.ground = f->height, .top = top, .level = level,
                          .n = f->n};
    j.blk = &blk;
    j.lit = lit;
    j.pal = &pal;
    if (!j.map && wg_plan_alloc(&plan, f->n) != 0) {
        wg_fail(err, "out of memory for the rasteriser");
        goto done;
    }
    /* Then the shadows' sweep (one thread: it walks the grid line by
     * line), the plan and the shader's sky grid at once. */
    render_prep prep = {.pal = &pal, .eye = &eye, .blk = &blk, .rt = &rt,
                        .lit = lit,
                        .n = f->n, .parts = j.parts,
                        .plan = j.map ? NULL : &plan};
    if (!j.map &&
        !(shader = prep.shader = wg_shader_new(&pal, &eye, f, &blk, lit, o->aa,
                                               o->width, o->height))) {
        wg_fail(err, "out of memory for the shading");
        goto done;
    }
    wg_srgb8(0.0f); /* fill its table before any thread reads it */
    j.plan = &plan;
    j.shader = shader;
    /* Then the strips. */
    render_team tm = {.rt = &rt, .prep = &prep, .j = &j, .shader = shader};
    const uint32_t ran = render_team_run(&tm, j.parts);
    double t3 = wg_now();
    if (prep.failed) {
        wg_fail(err, "out of memory for the shading");
        goto done;
    }
    rs->camera_y = eye.pos[1];
    if (!j.map)
        render_inside(f, top, eye.pos, eye.near, rs);

    /* The threads interleave drawing and shading: rasterise is the plan
     * plus the threads' drawing (their mean: each ran that long while the
     * others did the same), shade is the rest.  A map draws nothing.
     * The threads are those that ran: where no second could be started
     * (ulimit -u, a control group's pids.max), the one that drew every
     * part (the render had said 2). */
    double raster = 0.0;
    for (uint32_t t = 0; t < j.parts; t++) {
        raster += j.raster[t];
        rs->drawn += j.drawn[t];
    }
    rs->raster = j.map ? 0.0 : prep.plan_time + raster / ran;
    rs->shade = (t3 - t0) - rs->raster;
    rs->triangles = j.map ? 0 : wg_block_triangles(f->n) + 2 * prep.wet;
    rs->threads = ran;
    rs->memory = (double)(render_mark - before) + (double)pixels;
    rc = 0;
done:
    for (uint32_t t = 0; t < WG_THREADS_MAX; t++)
        wg_render_free(j.keys[t]);
    wg_shader_free(shader);
    wg_plan_free(&plan);
    wg_render_free(lit);
    wg_render_free(top);
    wg_render_free(level);
    render_pool_close();
    if (rc != 0)
        wg_image_free(img); /* the picture is the caller's only when made */
    return rc;
}

/* The shortest %g that reads back as the same float. */
void wg_float_text(char *buf, size_t len, float v)
{
    if (!buf || len == 0) /* gcc's sanitized builds ask */
        return;
    for (int prec = 6; prec <= 9; prec++) {
        snprintf(buf, len, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v)
            return;
    }
}

void wg_render_describe(const wg_render_opts *o, char *buf, size_t len)
{
    char az[32], el[32], dist[32], fov[32], look[32], saz[32], sel[32];
    wg_float_text(saz, sizeof saz, o->sun_azimuth);
    wg_float_text(sel, sizeof sel, o->sun_elevation);
    if (o->view == WG_VIEW_MAP) {
        snprintf(buf, len,
                 "--view map --width %u --height %u --aa %u --sun-azimuth %s "
                 "--sun-elevation %s",
                 o->width, o->height, o->aa, saz, sel);
        return;
    }
    wg_float_text(az, sizeof az, o->cam.azimuth);
    wg_float_text(el, sizeof el, o->cam.elevation);
    wg_float_text(dist, sizeof dist, o->cam.distance);
    wg_float_text(fov, sizeof fov, o->cam.fov);
    wg_float_text(look, sizeof look, o->cam.look);
    snprintf(buf, len,
             "--width %u --height %u --aa %u --azimuth %s --elevation %s "
             "--distance %s --fov %s --look %s --sun-azimuth %s "
             "--sun-elevation %s",
             o->width, o->height, o->aa, az, el, dist, fov, look, saz, sel);
}
