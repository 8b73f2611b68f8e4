/* fields.c: the fields' memory (backend.h): each field allocated on its
 * own slot of a page (wg_field_alloc says why), the six of a world or a
 * region together, a region's cut down in place to its window when handed
 * over, and freed; and the populating of fresh memory's pages at once
 * (wg_populate), which the backends and the renderer use for theirs. */
#define _DEFAULT_SOURCE /* madvise */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend.h"

int wg_fields_alloc(wg_fields *f, uint32_t n)
{
    return wg_fields_alloc_rect(f, n, wg_rect_world(n));
}

/* The stagger between slots and how many slots there are before they
 * repeat: 15 x 256 bytes fit in a 4 KiB page with the lead's line. */
#define WG_FIELD_STAGGER 256
#define WG_FIELD_SLOTS 15

float *wg_field_alloc(size_t cells, unsigned slot)
{
    /* The block's address before the field, where wg_field_free finds
     * it; the field starts on a cache line, slot * STAGGER past the first
     * one after that. */
    size_t lead = 64 + (size_t)(slot % WG_FIELD_SLOTS) * WG_FIELD_STAGGER;
    if (cells > (SIZE_MAX - lead - 64) / sizeof(float))
        return NULL;
    char *block = malloc(cells * sizeof(float) + lead + 64);
    if (!block)
        return NULL;
    uintptr_t at = ((uintptr_t)block + lead + 63) & ~(uintptr_t)63;
    char *p = (char *)at;
    memcpy(p - sizeof block, &block, sizeof block);
    return (float *)(void *)p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* The size of a transparent huge page, or 0 where the kernel has none. */
static size_t wg_huge_page(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    unsigned long long size = 0;
    if (f) {
        if (fscanf(f, "%llu", &size) != 1)
            size = 0;
        fclose(f);
    }
    return (size_t)size;
}

/* Whether the kernel has 'pages' pages free in blocks of at least
 * 'huge' bytes (its buddy allocator's free lists, /proc/buddyinfo), so
 * that huge pages come without compacting memory for them. */
static int wg_huge_free(size_t pages, size_t page, size_t huge)
{
    FILE *f = fopen("/proc/buddyinfo", "r");
    if (!f)
        return 0;
    size_t free_pages = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* "Node 0, zone   Normal   n0 n1 ... n10": n_k free blocks of
         * 2^k pages. */
        char *p = strstr(line, "zone");
        if (!p)
            continue;
        p += 4;
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++; /* the zone's name */
        for (unsigned k = 0;; k++) {
            char *end;
            unsigned long long n = strtoull(p, &end, 10);
            if (end == p || k >= 8 * sizeof(size_t) - 1)
                break;
            p = end;
            if (((size_t)1 << k) * page >= huge)
                free_pages += (size_t)n << k;
        }
    }
    fclose(f);
    return free_pages >= pages;
}

int wg_populate(void *p, size_t bytes)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) / page * page;
    uintptr_t hi = ((uintptr_t)p + bytes) / page * page;
    if (hi <= lo)
        return 0;
    /* Huge pages where the range holds one and the kernel has them free
     * with as much again to spare: never where it would compact memory for
     * them, which had cost 0.5-1.2 s at 8192. */
    const size_t huge = wg_huge_page();
    if (huge > page && (huge & (huge - 1)) == 0 &&
        ((lo + huge - 1) & ~(uintptr_t)(huge - 1)) + huge <= hi &&
        wg_huge_free(2 * ((hi - lo) / page), page, huge))
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    return madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
}

void wg_field_free(float *p)
{
    if (!p)
        return;
    char *block;
    memcpy(&block, (char *)p - sizeof block, sizeof block);
    free(block);
}

int wg_fields_alloc_rect(wg_fields *f, uint32_t n, wg_rect r)
{
    size_t cells = wg_rect_cells(r);
    memset(f, 0, sizeof *f);
    f->n = n;
    f->r = r;
    f->height = wg_field_alloc(cells, WG_SLOT_HEIGHT);
    f->water = wg_field_alloc(cells, WG_SLOT_WATER);
    f->sediment = wg_field_alloc(cells, WG_SLOT_SEDIMENT);
    f->nx = wg_field_alloc(cells, WG_SLOT_NX);
    f->ny = wg_field_alloc(cells, WG_SLOT_NY);
    f->nz = wg_field_alloc(cells, WG_SLOT_NZ);
    if (f->height && f->water && f->sediment && f->nx && f->ny && f->nz)
        return 0;
    wg_fields_free(f);
    return -1;
}

void wg_fields_take(wg_fields *f, wg_rect win, wg_fields *out)
{
    if (!wg_rect_equal(f->r, win)) {
        float *fields[6] = {f->height, f->water, f->sediment,
                            f->nx,     f->ny,    f->nz};
        const size_t had = wg_rect_cells(f->r), keep = wg_rect_cells(win);
        const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        for (int i = 0; i < 6; i++) {
            /* Row y goes from (win.y + y - r.y) * r.w + (win.x - r.x) to
             * y * win.w, never later: front to back, memmove is safe. */
            for (uint32_t y = 0; y < win.h; y++)
                memmove(fields[i] + (size_t)y * win.w,
                        fields[i] + (size_t)(win.y + y - f->r.y) * f->r.w +
                            (win.x - f->r.x),
                        win.w * sizeof(float));
            /* The whole pages past the window: zero-fill on demand again,
             * and out of the process's memory until then. */
            uintptr_t lo = ((uintptr_t)(fields[i] + keep) + page - 1) /
                           page * page;
            uintptr_t hi = (uintptr_t)(fields[i] + had) / page * page;
            if (hi > lo)
                (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
        }
        f->r = win;
    }
    *out = *f;
    memset(f, 0, sizeof *f);
}

void wg_fields_free(wg_fields *f)
{
    wg_field_free(f->height);
    wg_field_free(f->water);
    wg_field_free(f->sediment);
    wg_field_free(f->nx);
    wg_field_free(f->ny);
    wg_field_free(f->nz);
    f->height = f->water = f->sediment = f->nx = f->ny = f->nz = NULL;
}
