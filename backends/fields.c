/* fields.c: the fields' memory (backend.h): each field allocated on its
 * own slot of a page (wg_field_alloc says why), in huge pages where the
 * kernel has them (wg_thp), the six of a world or a region together, a
 * region's cut down in place to its window when handed over, and freed;
 * the same memory for any big block written in full (wg_block_alloc); and
 * the populating of fresh memory's pages at once (wg_populate), which the
 * backends and the renderer use for theirs. */
#define _DEFAULT_SOURCE /* madvise */
#include <pthread.h>
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

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Huge pages for the fields and blocks (wg_lead_alloc), where the kernel
 * has them.
 * On the 2-core AMD EPYC VM (its hypervisor, PVM, keeps shadow page
 * tables) a 4 KiB page costs about 6 us at the program's first write to
 * it even when populated beforehand, and a huge page nothing: 64 MiB
 * written once ran at 0.7 GB/s populated in 4 KiB pages and at 18 GB/s in
 * huge ones.  They are asked for only while the kernel has them free
 * (its buddy allocator's lists of blocks of a huge page or more,
 * /proc/buddyinfo, read once), half of those at most, so that it never
 * compacts memory for them: a try without that guard waited 0.5-1.2 s at
 * 8192. */
static struct {
    pthread_once_t once;
    pthread_mutex_t lock;
    size_t page, huge; /* bytes; huge 0 where there are none */
    size_t left;       /* huge pages still to ask for */
} wg_thp = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};

static void wg_thp_init(void)
{
    wg_thp.page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned long long huge = 0;
    FILE *f =
        fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
    if (f) {
        if (fscanf(f, "%llu", &huge) != 1)
            huge = 0;
        fclose(f);
    }
    if (huge <= wg_thp.page || (huge & (huge - 1)) || huge > SIZE_MAX / 4)
        return;
    if (!(f = fopen("/proc/buddyinfo", "r")))
        return;
    size_t pages = 0; /* free, in blocks of a huge page or more */
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* "Node 0, zone   Normal   n0 n1 ... n10": n_k free blocks of
         * 2^k pages. */
        char *p = strstr(line, "zone");
        if (!p)
            continue;
        for (p += 4; *p == ' '; p++)
            ;
        while (*p && *p != ' ')
            p++; /* the zone's name */
        for (unsigned k = 0; k < 8 * sizeof(size_t) - 1; k++) {
            char *end;
            unsigned long long n = strtoull(p, &end, 10);
            if (end == p)
                break;
            p = end;
            if (((size_t)1 << k) * wg_thp.page >= huge)
                pages += (size_t)n << k;
        }
    }
    fclose(f);
    wg_thp.huge = (size_t)huge;
    wg_thp.left = pages / (huge / wg_thp.page) / 2;
}

/* The huge page's size, or 0 where the kernel has none. */
static size_t wg_thp_size(void)
{
    pthread_once(&wg_thp.once, wg_thp_init);
    return wg_thp.huge;
}

/* Ask for huge pages over [p, p + bytes), huge-page aligned, where the
 * kernel has that many free. */
static void wg_thp_advise(void *p, size_t bytes)
{
    const size_t n = bytes / wg_thp_size();
    if (n == 0)
        return;
    pthread_mutex_lock(&wg_thp.lock);
    const int grant = wg_thp.left >= n;
    if (grant)
        wg_thp.left -= n;
    pthread_mutex_unlock(&wg_thp.lock);
    if (grant)
        (void)madvise(p, bytes, MADV_HUGEPAGE);
}

/* The header before a field or a block: its memory and, for a mapping of
 * its own, the mapping's length (0 for malloc's). */
typedef struct {
    char *block;
    size_t mapped;
} wg_block_head;

/* 'bytes' starting on a cache line 'lead' bytes or more past the start of
 * a block: a mapping of its own in huge pages where the bytes are half a
 * huge page or more and the kernel has them free, or malloc's.  The
 * header before the bytes says which, for wg_block_free. */
static void *wg_lead_alloc(size_t bytes, size_t lead)
{
    if (bytes > SIZE_MAX / 2 - lead - 64)
        return NULL;
    const size_t total = bytes + lead + 64;
    wg_block_head head = {NULL, 0};
    /* A mapping aligned to huge pages, its length rounded up to them (at
     * 512, 1 MiB fields in 2 MiB pages: the terrain and the erosion had
     * spent a third of their time on the first writes to 4 KiB pages). */
    const size_t huge = wg_thp_size();
    if (huge && total >= huge / 2 && total <= SIZE_MAX / 2 - 2 * huge) {
        const size_t len = (total + huge - 1) / huge * huge;
        char *m = mmap(NULL, len + huge, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            char *at = (char *)(((uintptr_t)m + huge - 1) &
                                ~(uintptr_t)(huge - 1));
            if (at > m)
                munmap(m, (size_t)(at - m));
            munmap(at + len, (size_t)(m + len + huge - (at + len)));
            wg_thp_advise(at, len);
            head.block = at;
            head.mapped = len;
        }
    }
    if (!head.block && !(head.block = malloc(total)))
        return NULL;
    char *p = (char *)(((uintptr_t)head.block + lead + 63) & ~(uintptr_t)63);
    memcpy(p - sizeof head, &head, sizeof head);
    return p;
}

float *wg_field_alloc(size_t cells, unsigned slot)
{
    /* The field starts slot * STAGGER past the block's first cache line
     * after its header. */
    const size_t lead =
        64 + (size_t)(slot % WG_FIELD_SLOTS) * WG_FIELD_STAGGER;
    if (cells > SIZE_MAX / 4 / sizeof(float))
        return NULL;
    return wg_lead_alloc(cells * sizeof(float), lead);
}

void *wg_block_alloc(size_t bytes)
{
    return wg_lead_alloc(bytes, 64);
}

int wg_populate(void *p, size_t bytes)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) / page * page;
    uintptr_t hi = ((uintptr_t)p + bytes) / page * page;
    if (hi <= lo)
        return 0;
    return madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
}

void wg_field_free(float *p)
{
    wg_block_free(p);
}

void wg_block_free(void *p)
{
    if (!p)
        return;
    wg_block_head head;
    memcpy(&head, (char *)p - sizeof head, sizeof head);
    if (head.mapped)
        munmap(head.block, head.mapped);
    else
        free(head.block);
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

double wg_cpu_host_bytes(const wg_job *job, int routing)
{
    const double fields =
        7.0 + (job->world.steps > 0 ? (routing ? 4.0 : 2.0) : 0.0);
    return sizeof(float) * fields * (double)wg_rect_cells(wg_job_rect(job));
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
