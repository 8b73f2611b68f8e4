/* helpers.c: what several test files need: make a world, compare fields. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "test.h"

int wg_make_world(const char *backend, const wg_world *w, int threads,
                  wg_fields *out)
{
    static float lat[WG_LATTICE_R * WG_LATTICE_R];
    const wg_backend *b = wg_backend_find(backend);
    char err[WG_ERR_LEN], dev[256];
    wg_times t;
    wg_job job = {.world = *w, .lattice = lat, .threads = threads};
    if (!b) {
        fprintf(stderr, "    no backend '%s'\n", backend);
        return -1;
    }
    wg_consts_init(&job.consts, w);
    wg_lattice_fill(lat, w->seed);
    if (b->probe(&job, err) != 0 ||
        wg_backend_run(b, &job, out, &t, dev, sizeof dev, err) != 0) {
        fprintf(stderr, "    %s: %s\n", backend, err);
        return -1;
    }
    return 0;
}

double wg_max_diff(const float *a, const float *b, size_t n, int *identical)
{
    double worst = 0.0;
    *identical = memcmp(a, b, n * sizeof *a) == 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > worst || d != d)
            worst = d;
    }
    return worst;
}

void *wg_read_png(const char *path, int depth, int channels, uint32_t *w,
                  uint32_t *h, char *text, size_t text_len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    png_structp p = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(p);
    uint8_t *volatile px = NULL;
    if (setjmp(png_jmpbuf(p))) {
        free(px);
        png_destroy_read_struct(&p, &info, NULL);
        fclose(fp);
        return NULL;
    }
    png_init_io(p, fp);
    png_read_info(p, info);
    *w = png_get_image_width(p, info);
    *h = png_get_image_height(p, info);
    int type = channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY;
    if (png_get_bit_depth(p, info) != depth || png_get_color_type(p, info) != type)
        png_error(p, "not the kind of PNG expected");
    if (depth == 16)
        png_set_swap(p); /* PNG's big-endian samples to host order */
    size_t row = (size_t)*w * (size_t)channels * (size_t)(depth / 8);
    px = malloc(row * *h);
    for (uint32_t y = 0; px && y < *h; y++)
        png_read_row(p, px + y * row, NULL);
    png_read_end(p, info);
    if (text && text_len) {
        png_textp t;
        int nt = 0;
        text[0] = '\0';
        png_get_text(p, info, &t, &nt);
        for (int i = 0; i < nt; i++) {
            size_t used = strlen(text);
            snprintf(text + used, text_len - used, "%s=%s\n", t[i].key, t[i].text);
        }
    }
    png_destroy_read_struct(&p, &info, NULL);
    fclose(fp);
    return px;
}

const char *wg_comma_locale(void)
{
    static char env[1200];
    static int made = 0; /* 1 made, -1 cannot be made */
    if (made == 0) {
        /* localedef writes a locale to a path of one's own: LOCPATH finds
         * it, no root needed and nothing installed. */
        wg_cli c = wg_cli_sh("rm -rf comma-locale && mkdir comma-locale && "
                             "localedef -i de_DE -f UTF-8 comma-locale/de_DE.UTF-8 "
                             ">/dev/null 2>&1; LOCPATH=$PWD/comma-locale "
                             "LC_ALL=de_DE.UTF-8 awk 'BEGIN { printf \"%.1f\", 0.5 }'");
        made = strcmp(c.out, "0,5") == 0 ? 1 : -1;
        wg_cli_free(&c);
        snprintf(env, sizeof env, "LOCPATH='%s/comma-locale' LC_ALL=de_DE.UTF-8",
                 wg_tmpdir());
    }
    return made == 1 ? env : NULL;
}
