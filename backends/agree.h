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
    /* Where it breaks them, when !ok and the fields are of one window:
     * the first cell in row order that does, in world coordinates, and
     * the first of its fields that does ("height", "water", "sediment",
     * "nx", "ny", "nz"; NULL when there is none to name), with its value
     * on each side, so that a failed --check says where to look. */
    const char *bad_field;
    uint32_t bad_x, bad_y;
    float bad_ref, bad_value;
} wg_agreement;

/* Compare 'f' (made by 'b') with the reference fields 'ref' (scalar's): the
 * heights, water and sediment must be identical to the bit, the normals within
 * b->normal_tolerance.  NaN anywhere, and fields of another world or
 * window, count as an infinite difference.
 * This function can't fail. */
wg_agreement wg_agree(const wg_fields *ref, const wg_fields *f,
                      const wg_backend *b);

#endif
