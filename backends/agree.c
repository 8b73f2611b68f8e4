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

/* Whether a and b differ beyond 'tol': any bit when tol is 0, else by
 * more than tol (NaN on either side always). */
static int agree_breaks(float a, float b, double tol)
{
    if (tol == 0.0)
        return memcmp(&a, &b, sizeof a) != 0;
    double d = fabs((double)a - (double)b);
    return isnan(d) || d > tol;
}

/* Fill in a's first cell and field that break the tolerances: heights,
 * water and sediment to the bit, the normals within 'tol'. */
static void agree_where(wg_agreement *a, const wg_fields *ref,
                        const wg_fields *f, double tol)
{
    static const char *const names[6] = {"height", "water", "sediment",
                                         "nx", "ny", "nz"};
    const float *rf[6] = {ref->height, ref->water, ref->sediment,
                          ref->nx, ref->ny, ref->nz};
    const float *ff[6] = {f->height, f->water, f->sediment,
                          f->nx, f->ny, f->nz};
    size_t n = wg_fields_cells(ref);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 6; k++)
            if (agree_breaks(rf[k][i], ff[k][i], k < 3 ? 0.0 : tol)) {
                a->bad_field = names[k];
                a->bad_x = ref->r.x + (uint32_t)(i % ref->r.w);
                a->bad_y = ref->r.y + (uint32_t)(i / ref->r.w);
                a->bad_ref = rf[k][i];
                a->bad_value = ff[k][i];
                return;
            }
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
    /* Only for a disagreement: an agreeing run pays nothing more. */
    if (!a.ok)
        agree_where(&a, ref, f, b->normal_tolerance);
    return a;
}
