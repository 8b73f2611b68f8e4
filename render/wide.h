/* wide.h: the words of the renderer's wide paths (render.h, WG_WIDE):
 * eight floats at once in AVX2, in functions built for AVX2 alone
 * (W8_FN), each an operation the one-at-a-time code makes, so that every
 * lane's result is that code's to the bit.  For material.c, raster.c and
 * shade.c. */
#ifndef WG_WIDE_H
#define WG_WIDE_H

#include "render.h"

#if WG_WIDE
#include <immintrin.h>

/* A helper, inlined into its AVX2 caller. */
#define W8_FN __attribute__((target("avx2"), always_inline)) static inline

typedef __m256 w8f;
typedef __m256i w8i;

/* x in every lane */
W8_FN w8f w8_k(float x)
{
    return _mm256_set1_ps(x);
}

/* c ? a : b, lane by lane (c from a comparison) */
W8_FN w8f w8_sel(w8f c, w8f a, w8f b)
{
    return _mm256_blendv_ps(b, a, c);
}

/* fabsf and -x, exactly */
W8_FN w8f w8_abs(w8f a)
{
    return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a);
}

W8_FN w8f w8_neg(w8f a)
{
    return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f));
}

#define W8_ADD _mm256_add_ps
#define W8_SUB _mm256_sub_ps
#define W8_MUL _mm256_mul_ps
#define W8_DIV _mm256_div_ps
/* C's comparisons: false where either side is NaN */
#define W8_LT(a, b) _mm256_cmp_ps((a), (b), _CMP_LT_OQ)
#define W8_GT(a, b) _mm256_cmp_ps((a), (b), _CMP_GT_OQ)
#define W8_LE(a, b) _mm256_cmp_ps((a), (b), _CMP_LE_OQ)
#define W8_GE(a, b) _mm256_cmp_ps((a), (b), _CMP_GE_OQ)
#define W8_EQ(a, b) _mm256_cmp_ps((a), (b), _CMP_EQ_OQ)

#endif
#endif
