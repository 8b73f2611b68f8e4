/* agree.h: how far two backends' fields are apart, and whether that is
 * agreement as SPEC.md defines it. */
#ifndef WG_AGREE_H
#define WG_AGREE_H

#include "backend.h"

typedef struct wg_agreement {
    double max_dh;       /* largest |height difference| */
    double max_dw;       /* largest |difference| of water or sediment */
    double max_dn;       /* largest |difference| of any normal component */
    int heights_identical; /* heights, water and sediment equal to the bit */
    int identical;         /* all six fields equal to the bit */
    int ok;                /* within SPEC.md's Agreement tolerances */
} wg_agreement;

/* Compare 'f' (made by 'b') with the reference fields 'ref' (scalar's): the
 * heights, water and sediment must be identical to the bit, the normals within
 * b->normal_tolerance.  NaN anywhere, and fields of another world or
 * window, count as an infinite difference.
 * This function can't fail. */
wg_agreement wg_agree(const wg_fields *ref, const wg_fields *f,
                      const wg_backend *b);

#endif
