/* pfm.h: reading worldgen's square grey PFM maps, for the measuring tools
 * in scripts/ (resolution.c, roughness.c, drainage.c), each built alone with
 * one cc command, so the reader is static functions in a header.
 *
 * The maps are checked as a hostile file would need: a header of exactly
 * "Pf", a width and a height of digits alone from 1 to PFM_SIDE_MAX, equal,
 * and a finite negative (little-endian) scale; then exactly width * height
 * binary32 values, every one finite, and nothing after them.  Whatever is
 * wrong is said with the file's name and the tool's, and the reader returns
 * NULL for the tool to free its other maps and exit 1.
 *
 * A tool defines _POSIX_C_SOURCE before its first include: fstat() and
 * fileno() give a regular file's size, which the header must match. */
#ifndef WG_SCRIPTS_PFM_H
#define WG_SCRIPTS_PFM_H

#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#error "define _POSIX_C_SOURCE 200809L before the first include (pfm.h uses fstat)"
#endif

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The largest side read: worldgen's largest whole world (WG_SIZE_MAX).  Its
 * 2^32 values of 4 bytes fit a 64-bit size_t; pfm_data_size checks. */
#define PFM_SIDE_MAX 65536u

/* The next header field, after any white space, into tok (at most len - 1
 * characters, NUL-terminated); the white space character that ends it is
 * read too.  0, or -1 when the field is too long or the file ends (or fails)
 * before the white space. */
static int pfm_token(FILE *fp, char *tok, size_t len)
{
    int c;
    size_t k = 0;
    tok[0] = '\0';
    while ((c = fgetc(fp)) != EOF && strchr(" \t\n\v\f\r", c))
        ;
    for (; c != EOF && !strchr(" \t\n\v\f\r", c); c = fgetc(fp)) {
        if (k + 1 >= len) {
            tok[k] = '\0';
            return -1;
        }
        tok[k++] = (char)c;
    }
    tok[k] = '\0';
    return c == EOF || k == 0 ? -1 : 0;
}

/* A side from its header field: digits alone, 1 to PFM_SIDE_MAX; 0 when it
 * is not one. */
static unsigned pfm_side(const char *tok)
{
    size_t len = strspn(tok, "0123456789");
    if (len == 0 || tok[len] || len > 6)
        return 0;
    unsigned long v = strtoul(tok, NULL, 10);
    return v <= PFM_SIDE_MAX ? (unsigned)v : 0;
}

/* The header, up to the data: the side in *n.  0, or -1 after saying what
 * is wrong. */
static int pfm_header(const char *prog, const char *path, FILE *fp,
                      unsigned *n)
{
    char magic[8], tw[16], th[16], ts[64];
    if (pfm_token(fp, magic, sizeof magic) || strcmp(magic, "Pf") != 0) {
        if (ferror(fp))
            fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        else
            fprintf(stderr, "%s: %s is not a grey PFM (it does not start "
                    "with 'Pf'%s)\n", prog, path,
                    strcmp(magic, "PF") ? "" : ": 'PF' is a colour one");
        return -1;
    }
    if (pfm_token(fp, tw, sizeof tw) || pfm_token(fp, th, sizeof th) ||
        pfm_token(fp, ts, sizeof ts)) {
        fprintf(stderr, "%s: %s: the PFM header is cut short or has a field "
                "too long\n", prog, path);
        return -1;
    }
    unsigned w = pfm_side(tw), h = pfm_side(th);
    if (!w || !h) {
        fprintf(stderr, "%s: %s: the PFM's %s '%s' is not a whole number "
                "from 1 to %u\n", prog, path, w ? "height" : "width",
                w ? th : tw, PFM_SIDE_MAX);
        return -1;
    }
    if (w != h) {
        fprintf(stderr, "%s: %s is %u x %u: the map is not square\n", prog,
                path, w, h);
        return -1;
    }
    char *end;
    double scale = strtod(ts, &end);
    if (end == ts || *end || !isfinite(scale) || scale == 0) {
        fprintf(stderr, "%s: %s: the PFM's scale '%s' is not a finite number "
                "other than 0\n", prog, path, ts);
        return -1;
    }
    if (scale > 0) {
        fprintf(stderr, "%s: %s is big-endian (scale %s is positive): only "
                "little-endian PFMs (a negative scale, as worldgen writes) "
                "are read\n", prog, path, ts);
        return -1;
    }
    *n = w;
    return 0;
}

/* Whether an n-sided map fits in memory here and a regular file holds
 * exactly its data after the header just read.  Other files (a pipe) are
 * checked as they are read.  0, or -1 after saying what is wrong. */
static int pfm_data_size(const char *prog, const char *path, FILE *fp,
                         unsigned n)
{
    if ((unsigned long long)n * n > SIZE_MAX / sizeof(float)) {
        fprintf(stderr, "%s: %s: a %u x %u map does not fit in memory here\n",
                prog, path, n, n);
        return -1;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode))
        return 0;
    long at = ftell(fp);
    if (at < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    unsigned long long want = (unsigned long long)n * n * sizeof(float),
                       have = (unsigned long long)st.st_size - (unsigned long long)at;
    if (have != want) {
        fprintf(stderr, "%s: %s holds %llu bytes after its header, and a %u x "
                "%u PFM %llu: %s\n", prog, path, have, n, n, want,
                have < want ? "it is cut short" : "something follows the data");
        return -1;
    }
    return 0;
}

/* The first value of v[cells] that is not finite, as a vertex (x, y) of an
 * n-sided map; 0 when all are finite, else -1 after saying so. */
static int pfm_finite(const char *prog, const char *path, const float *v,
                      unsigned n)
{
    size_t cells = (size_t)n * n, bad = 0, first = 0;
    for (size_t i = 0; i < cells; i++)
        if (!isfinite(v[i]) && bad++ == 0)
            first = i;
    if (bad)
        fprintf(stderr, "%s: %s holds %zu values that are not finite, the "
                "first %g at vertex (%zu, %zu)\n", prog, path, bad,
                (double)v[first], first % n, first / n);
    return bad ? -1 : 0;
}

/* The rows of an n-sided map, y = 0 first (PFM stores the bottom row
 * first), and nothing after them.  0, or -1 after saying what is wrong. */
static int pfm_rows(const char *prog, const char *path, FILE *fp, float *f,
                    unsigned n)
{
    for (unsigned y = 0; y < n; y++)
        if (fread(f + (size_t)(n - 1 - y) * n, sizeof *f, n, fp) != n) {
            if (ferror(fp))
                fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
            else
                fprintf(stderr, "%s: %s is cut short: %u rows of %u\n", prog,
                        path, y, n);
            return -1;
        }
    if (fgetc(fp) != EOF) {
        fprintf(stderr, "%s: %s: something follows the data of a %u x %u "
                "PFM\n", prog, path, n, n);
        return -1;
    }
    return 0;
}

/* A square grey PFM map as rows y = 0 first, its side in *n; NULL after
 * saying why, with the program's name 'prog', when it cannot be read or is
 * not such a map. */
static float *pfm_read(const char *prog, const char *path, unsigned *n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(EISDIR));
        fclose(fp);
        return NULL;
    }
    unsigned side = 0;
    float *f = NULL;
    if (pfm_header(prog, path, fp, &side) == 0 &&
        pfm_data_size(prog, path, fp, side) == 0) {
        f = malloc((size_t)side * side * sizeof *f);
        if (!f)
            fprintf(stderr, "%s: out of memory for %s (%u x %u)\n", prog,
                    path, side, side);
    }
    if (f && (pfm_rows(prog, path, fp, f, side) != 0 ||
              pfm_finite(prog, path, f, side) != 0)) {
        free(f);
        f = NULL;
    }
    fclose(fp);
    if (f)
        *n = side;
    return f;
}

#endif
