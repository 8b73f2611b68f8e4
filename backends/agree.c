/* agree.c: the agreement of two backends' fields (the table's 'agree'
 * lines and the --check gate). */
#include <math.h>
#include <string.h>

#include "agree.h"

/* Largest |a - b| over n floats; NaN on either side counts as infinite. */
static double agree_max(const float *a, const float *b, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (isnan(d))
            return INFINITY;
        worst = d > worst ? d : worst;
    }
    return worst;
}

wg_agreement wg_agree(const wg_fields *ref, const wg_fields *f,
                      const wg_backend *b)
{
    wg_agreement a = {0};
    size_t n = wg_fields_cells(ref), bytes = n * sizeof(float);
    if (f->n != ref->n || !wg_rect_equal(f->r, ref->r)) {
        a.max_dh = a.max_dw = a.max_dn = INFINITY;
        return a;
    }
    a.max_dh = agree_max(ref->height, f->height, n);
    a.max_dw = agree_max(ref->water, f->water, n);
    double ds = agree_max(ref->sediment, f->sediment, n);
    a.max_dw = ds > a.max_dw ? ds : a.max_dw;
    a.max_dn = agree_max(ref->nx, f->nx, n);
    double dy = agree_max(ref->ny, f->ny, n), dz = agree_max(ref->nz, f->nz, n);
    a.max_dn = dy > a.max_dn ? dy : a.max_dn;
    a.max_dn = dz > a.max_dn ? dz : a.max_dn;
    a.heights_identical = memcmp(ref->height, f->height, bytes) == 0 &&
                          memcmp(ref->water, f->water, bytes) == 0 &&
                          memcmp(ref->sediment, f->sediment, bytes) == 0;
    a.identical = a.heights_identical && memcmp(ref->nx, f->nx, bytes) == 0 &&
                  memcmp(ref->ny, f->ny, bytes) == 0 &&
                  memcmp(ref->nz, f->nz, bytes) == 0;
    a.ok = a.heights_identical &&
           (b->normal_tolerance == 0.0 ? a.identical
                                       : a.max_dn <= b->normal_tolerance);
    return a;
}
