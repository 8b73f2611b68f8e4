/* pfm.h: reading worldgen's square grey PFM maps, for the measuring tools
 * in scripts/ (resolution.c, roughness.c), each built alone with one cc
 * command, so the reader is a static function in a header. */
#ifndef WG_SCRIPTS_PFM_H
#define WG_SCRIPTS_PFM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A square grey PFM map as rows y = 0 first (PFM stores the bottom row
 * first), its side in *n.  On any failure, says why with the program's
 * name 'prog' and exits 1. */
static float *pfm_read(const char *prog, const char *path, unsigned *n)
{
    FILE *fp = fopen(path, "rb");
    char magic[3] = "";
    unsigned w, h;
    double scale;
    if (!fp || fscanf(fp, "%2s %u %u %lf", magic, &w, &h, &scale) != 4 ||
        strcmp(magic, "Pf") != 0 || w != h || scale >= 0 || fgetc(fp) == EOF) {
        fprintf(stderr, "%s: %s is not a square grey PFM\n", prog, path);
        exit(1);
    }
    float *f = malloc((size_t)w * h * sizeof *f);
    if (!f) {
        fprintf(stderr, "%s: out of memory for %s\n", prog, path);
        exit(1);
    }
    for (unsigned y = 0; y < h; y++)
        if (fread(f + (size_t)(h - 1 - y) * w, sizeof *f, w, fp) != w) {
            fprintf(stderr, "%s: %s is short\n", prog, path);
            exit(1);
        }
    fclose(fp);
    *n = w;
    return f;
}

#endif
