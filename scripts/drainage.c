/* drainage.c: where a world's land drains, from the PFM height and water
 * maps worldgen wrote (the README's "Water: the hydraulic stage").
 *
 *   cc -O2 -o drainage scripts/drainage.c -lm
 *   ./worldgen -q --no-image --heightmap h.pfm --watermap w.pfm
 *   ./drainage h.pfm w.pfm 0.25          (SEA: the world's --sea-level)
 *
 * Land is the cells with all eight neighbours whose height is at or above
 * SEA (rounded to binary32, as worldgen does); sea is height below SEA.  On
 * two surfaces, the water's (height + water, added in binary32 as the
 * hydraulic stage does) and the bare ground's (height alone), it prints:
 *
 *   - the pits: land cells with no neighbour strictly lower among the 8;
 *   - where steepest descent ends, from every land cell: D8, each step to
 *     the neighbour with the largest drop (a corner's drop divided by
 *     sqrt(2); only drops over 0; ties go to the first in the order dy =
 *     -1, 0, 1 outer, dx = -1, 0, 1 inner), until a sea cell, a cell on the
 *     world's border, or a pit: the land cells and their share of each;
 *   - the depressions: the surface filled by a priority-flood (Barnes et
 *     al. 2014; the outlets are the sea and the border cells, the lowest
 *     first, each neighbour raised to the level it was reached from), a
 *     pit "deep" when its fill depth (filled - surface) is over 0.001: the
 *     deep pits, the land draining into them and its share, and the mean
 *     fill depth over land.
 *
 * and, on the water surface, where each land cell's water first meets
 * water ("into water"): the same descent, ending also at the first cell
 * that holds more than 0.001 of water (what the picture draws as water: a
 * lake or a river), so it ends in the sea, in a lake or river on land, at
 * the border, or in a dry pit (a pit holding less): the land and its
 * share of each, and the dry pits.
 *
 * Exit 2 on a wrong command line (a missing argument, SEA not a number from
 * 0 to 1), 1 on maps it cannot use (unreadable, not a square grey PFM of
 * finite values, two sizes, under 3 cells a side) and on figures it
 * cannot write (a full disk, a closed standard output: out.h). */
#define _POSIX_C_SOURCE 200809L /* fstat, for pfm.h */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../render/stats.h" /* WG_WATER_MIN */
#include "out.h"
#include "pfm.h"

#define DEEP 1e-3
/* Water the picture draws: a lake or a river, deeper than WG_WATER_MIN. */
#define WET(x) ((x) > WG_WATER_MIN)

static const char *me = "drainage";

static void *alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", me);
        exit(1);
    }
    return p;
}

/* Whether cell i lies on the world's border. */
static int on_border(size_t i, unsigned n)
{
    size_t x = i % n, y = i / n;
    return x == 0 || y == 0 || x == n - 1 || y == n - 1;
}

/* The cell cell i's descent goes to next: i itself for the sea, the border
 * and a pit, and, when 'w' is given, a cell whose water is WET. */
static size_t next_cell(const float *s, const float *h, const float *w,
                        float sea, unsigned n, size_t i)
{
    size_t x = i % n, y = i / n, to = i;
    if (h[i] < sea || on_border(i, n) || (w && WET(w[i])))
        return i;
    double best = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            if (!dx && !dy)
                continue;
            size_t k = (y + dy) * n + (x + dx);
            double d = (double)s[i] - (double)s[k];
            if (dx && dy)
                d /= sqrt(2.0);
            if (d > best)
                best = d, to = k;
        }
    return to;
}

/* Where the descent from cell i ends (next_cell's), with term[] holding
 * the ends found so far (UINT32_MAX: not yet): down to a cell whose end is
 * known, or the end; then the way there is marked with it, so each cell
 * is walked twice at most. */
static uint32_t descend(const float *s, const float *h, const float *w,
                        float sea, unsigned n, uint32_t *term, size_t i)
{
    size_t t = i, nx;
    while (term[t] == UINT32_MAX && (nx = next_cell(s, h, w, sea, n, t)) != t)
        t = nx;
    if (term[t] == UINT32_MAX)
        term[t] = (uint32_t)t;
    uint32_t end = term[t];
    for (size_t k = i; term[k] == UINT32_MAX; k = next_cell(s, h, w, sea, n, k))
        term[k] = end;
    return end;
}

/* A binary min-heap of cells by level, for the priority-flood. */
typedef struct {
    float v;
    uint32_t i;
} node;
static node *heap;
static size_t heap_n, heap_cap;

static void heap_push(float v, uint32_t i)
{
    if (heap_n == heap_cap) {
        heap_cap = heap_cap ? 2 * heap_cap : 4096;
        node *p = realloc(heap, heap_cap * sizeof *heap);
        if (!p) {
            fprintf(stderr, "%s: out of memory\n", me);
            exit(1);
        }
        heap = p;
    }
    size_t k = heap_n++;
    for (; k > 0 && heap[(k - 1) / 2].v > v; k = (k - 1) / 2)
        heap[k] = heap[(k - 1) / 2];
    heap[k] = (node){v, i};
}

static node heap_pop(void)
{
    node top = heap[0], last = heap[--heap_n];
    size_t k = 0;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= heap_n)
            break;
        if (c + 1 < heap_n && heap[c + 1].v < heap[c].v)
            c++;
        if (!(heap[c].v < last.v))
            break;
        heap[k] = heap[c];
        k = c;
    }
    heap[k] = last;
    return top;
}

/* The surface s filled to its spill levels into 'filled'. */
static void fill(const float *s, const float *h, float sea, unsigned n,
                 float *filled, unsigned char *closed)
{
    size_t cells = (size_t)n * n;
    for (size_t i = 0; i < cells; i++) {
        closed[i] = h[i] < sea || on_border(i, n);
        if (closed[i])
            filled[i] = s[i], heap_push(s[i], (uint32_t)i);
    }
    while (heap_n) {
        node c = heap_pop();
        size_t x = c.i % n, y = c.i / n;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                if ((!dx && !dy) || (x == 0 && dx < 0) || (y == 0 && dy < 0) ||
                    (x == n - 1 && dx > 0) || (y == n - 1 && dy > 0))
                    continue;
                size_t k = (y + dy) * n + (x + dx);
                if (closed[k])
                    continue;
                closed[k] = 1;
                filled[k] = s[k] > c.v ? s[k] : c.v;
                heap_push(filled[k], (uint32_t)k);
            }
    }
}

/* Every figure of the surface s, on lines that start with 'name'. */
static void drainage(const char *name, const float *s, const float *h,
                     float sea, unsigned n, uint32_t *term, float *filled,
                     unsigned char *closed)
{
    size_t cells = (size_t)n * n;
    long land = 0, pits = 0, deep_pits = 0, to_sea = 0, to_border = 0,
         to_pit = 0, to_deep = 0;
    double fill_sum = 0;
    fill(s, h, sea, n, filled, closed);
    for (size_t i = 0; i < cells; i++)
        term[i] = UINT32_MAX;
    for (size_t y = 1; y + 1 < n; y++)
        for (size_t x = 1; x + 1 < n; x++) {
            size_t i = y * n + x;
            if (h[i] < sea)
                continue;
            land++;
            fill_sum += (double)filled[i] - (double)s[i];
            if (next_cell(s, h, NULL, sea, n, i) == i) {
                pits++;
                deep_pits += (double)filled[i] - (double)s[i] > DEEP;
            }
            uint32_t end = descend(s, h, NULL, sea, n, term, i);
            if (h[end] < sea)
                to_sea++;
            else if (on_border(end, n))
                to_border++;
            else {
                to_pit++;
                to_deep += (double)filled[end] - (double)s[end] > DEEP;
            }
        }
    double share = land ? 100.0 / (double)land : 0.0;
    printf("%s pits: %ld\n", name, pits);
    printf("%s to sea: %ld cells, %.2f%%\n", name, to_sea, to_sea * share);
    printf("%s to border: %ld cells, %.2f%%\n", name, to_border,
           to_border * share);
    printf("%s to pits: %ld cells, %.2f%%\n", name, to_pit, to_pit * share);
    printf("%s deep pits: %ld (fill depth over %g)\n", name, deep_pits, DEEP);
    printf("%s to deep pits: %ld cells, %.2f%%\n", name, to_deep,
           to_deep * share);
    printf("%s mean fill depth: %.6e\n", name,
           land ? fill_sum / (double)land : 0.0);
}

/* Where the water surface s leads each land cell's water, down to the
 * first cell whose water (w) is WET: the sea, water on land
 * (a lake or a river), the border, or a dry pit. */
static void into_water(const float *s, const float *h, const float *w,
                       float sea, unsigned n, uint32_t *term)
{
    size_t cells = (size_t)n * n;
    long land = 0, to_sea = 0, to_water = 0, to_border = 0, to_pit = 0,
         pits = 0;
    for (size_t i = 0; i < cells; i++)
        term[i] = UINT32_MAX;
    for (size_t y = 1; y + 1 < n; y++)
        for (size_t x = 1; x + 1 < n; x++) {
            size_t i = y * n + x;
            if (h[i] < sea)
                continue;
            land++;
            uint32_t end = descend(s, h, w, sea, n, term, i);
            if (h[end] < sea)
                to_sea++;
            else if (WET(w[end]))
                to_water++;
            else if (on_border(end, n))
                to_border++;
            else {
                to_pit++;
                pits += end == i;
            }
        }
    double share = land ? 100.0 / (double)land : 0.0;
    printf("into water to sea: %ld cells, %.2f%%\n", to_sea, to_sea * share);
    printf("into water to lakes and rivers: %ld cells, %.2f%%\n", to_water,
           to_water * share);
    printf("into water to border: %ld cells, %.2f%%\n", to_border,
           to_border * share);
    printf("into water to dry pits: %ld cells, %.2f%%\n", to_pit,
           to_pit * share);
    printf("into water dry pits: %ld\n", pits);
}

/* Whether maps of sides n and m can be measured; says why not. */
static int sides_fit(unsigned n, unsigned m)
{
    if (n != m) {
        fprintf(stderr, "%s: the maps differ in size (%u and %u)\n", me, n, m);
        return 0;
    }
    if (n < 3 || n > 65535) {
        fprintf(stderr, "%s: a %u-sided map is not one it can measure (3 to "
                "65535)\n", me, n);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: drainage HEIGHT.pfm WATER.pfm SEA\n"
                        "  (SEA: the world's --sea-level, 0.25 by default)\n");
        return 2;
    }
    char *end;
    double sea_d = strtod(argv[3], &end);
    if (end == argv[3] || *end || !(sea_d >= 0 && sea_d <= 1)) {
        fprintf(stderr, "%s: SEA must be a number from 0 to 1 (the world's "
                "--sea-level), not '%s'\n", me, argv[3]);
        return 2;
    }
    float sea = (float)sea_d;
    if (sea < 0x1p-40f) /* flushed, as worldgen does (SPEC.md) */
        sea = 0.0f;
    unsigned n = 0, m = 0;
    float *h = pfm_read(me, argv[1], &n), *w = h ? pfm_read(me, argv[2], &m) : NULL;
    if (!w || !sides_fit(n, m)) {
        free(h);
        free(w);
        return 1;
    }
    size_t cells = (size_t)n * n;
    float *s = alloc(cells * sizeof *s), *filled = alloc(cells * sizeof *filled);
    uint32_t *term = alloc(cells * sizeof *term);
    unsigned char *closed = alloc(cells);
    long land = 0;
    for (size_t y = 1; y + 1 < n; y++)
        for (size_t x = 1; x + 1 < n; x++)
            land += h[y * n + x] >= sea;
    printf("land cells: %ld (all eight neighbours, height at or above %g)\n",
           land, (double)sea);
    for (size_t i = 0; i < cells; i++)
        s[i] = h[i] + w[i];
    drainage("water surface", s, h, sea, n, term, filled, closed);
    drainage("ground", h, h, sea, n, term, filled, closed);
    into_water(s, h, w, sea, n, term);
    free(heap);
    free(closed);
    free(term);
    free(filled);
    free(s);
    free(w);
    free(h);
    return out_close(me);
}
