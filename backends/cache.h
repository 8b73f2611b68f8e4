/* cache.h: the size of cpu0's caches, read from Linux's sysfs (sysconf's
 * figures are wrong on some virtual machines): the openmp backend's choice
 * of streaming stores and scripts/limits.c's bandwidth buffers share it. */
#ifndef WG_CACHE_H
#define WG_CACHE_H
#include <stdio.h>
#include <stdlib.h>

/* The largest cache of cpu0 at 'level' (1, 2, 3), or with
 * level 0 at the highest level listed (the last-level cache), in bytes; 0
 * where sysfs does not say. */
static inline size_t wg_cache_bytes(int level)
{
    size_t best = 0;
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        char path[96], buf[64];
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *fp = fopen(path, "r");
        if (!fp)
            break;
        int lv = fgets(buf, sizeof buf, fp) ? atoi(buf) : 0;
        fclose(fp);
        if (level ? lv != level : lv < best_level)
            continue;
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        fp = fopen(path, "r");
        if (!fp)
            continue;
        if (fgets(buf, sizeof buf, fp)) {
            char *end;
            unsigned long long v = strtoull(buf, &end, 10);
            v *= *end == 'K' ? 1024 : *end == 'M' ? 1048576 : 1;
            if (lv > best_level || v > best)
                best = (size_t)v, best_level = lv;
        }
        fclose(fp);
    }
    return best;
}

#endif
