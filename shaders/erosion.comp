// erosion.comp: SPEC.md stage 2, thermal erosion, from 'src' into 'dst'
// (two different buffers: the host ping-pongs them).  Two kernels, chosen by
// the specialisation constant PASSES:
//
// - PASSES = 0: one pass per dispatch.  One invocation erodes ROWS cells
//   down a column, sliding a 3x3 window (3 loads per cell instead of 9).
//   The choice for GPUs.
// - PASSES = 1..K: that many passes per dispatch, temporally blocked in
//   registers.  One invocation owns a strip of W columns and H rows of the
//   output; it reads the strip widened by a halo of K cells on every side
//   (row by row, top to bottom) and carries each pass's last two rows in
//   registers, pass k running k rows behind pass k - 1, so that only the
//   last pass's rows are stored.  A pass's valid width shrinks by one cell
//   on each side per pass.  Per cell and pass that is (W + 2K) / (W * P)
//   loads and 1 / P stores, against 3 and 1: on lavapipe, where every
//   per-invocation load or store is a loop over the SIMD lanes, the memory
//   accesses are the cost (see vulkan.c for the measurements).  Each
//   neighbour pair's term is computed once for both cells (term()).
//
// Every expression is 'precise' (no FMA contraction), and each cell adds
// its neighbours' terms in the SPEC's order (dy outer, dx inner), because
// 'moved' is a binary32 sum whose rounding depends on the order of its
// terms.  Neighbours outside R (the rectangle computed, p.w x p.h: the
// world, or a region and its halo; R's coordinates, not the strip's) add
// nothing: the term is replaced by +0, and moved + 0 = moved exactly (moved
// is never -0: it starts at +0 and a sum that cancels to zero is +0).
// Where R's edge is not the world's, the cells it makes wrong lie in the
// halo, outside the window read back (SPEC.md "Windows and tiles").
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const uint ROWS = 8u;   // PASSES = 0: cells per column
layout(constant_id = 3) const uint PASSES = 0u; // 0, or 1..K passes blocked
layout(constant_id = 4) const bool TEXELS = true; // src through srcT

// The blocked kernel's shape, fixed at compile time so that its arrays
// live in registers (vulkan.c's VULKAN_W, VULKAN_K and VULKAN_H must match):
// W output columns, a halo of K, H output rows per invocation; W + 2K <= 24
// (EACH_COL) and K <= 4 (the PASS lines of blocked()).
const int W = 12;
const int K = 4;
const int WK = W + 2 * K;
const int H = 128;

// Only the members this stage reads; the layout is the same block as in
// terrain.comp (std140 offsets 0..39).
layout(std140, set = 0, binding = 0) uniform params {
    uint w; // R's width
    uint octaves;
    float inv_n;
    float base;
    float inv_norm;
    float talus;
    float rate;
    float k1;
    float k2;
    uint h; // R's height
} p;

layout(std430, set = 0, binding = 2) readonly buffer src_buf {
    float src[];
};
layout(std430, set = 0, binding = 3) writeonly buffer dst_buf {
    float dst[];
};
// The same heights as src, as an r32f texel buffer: lavapipe gathers
// texels with plain loads, but loops over the lanes for a buffer access.
// Used when the world fits maxTexelBufferElements (TEXELS).
layout(set = 0, binding = 7) uniform samplerBuffer srcT;

float ld(uint i)
{
    return TEXELS ? texelFetch(srcT, int(i)).x : src[i];
}

float t, mt, rate, inf, ninf;

// moved + (what one neighbour of height nb takes from a cell of height h),
// where the neighbour exists when 'ok'.
float exchange(float moved, float h, float nb, bool ok)
{
    precise float d = h - nb;
    precise float dm = d - t, dp = d + t;
    float e = d > t ? dm : (d < mt ? dp : 0.0);
    float te = ok ? e : 0.0;
    precise float m = moved + te * rate;
    return m;
}

// ------------------------------------------------------------ one pass

void single_pass()
{
    uint n = p.w, rows = p.h;
    uint x = gl_GlobalInvocationID.x, y0 = gl_GlobalInvocationID.y * ROWS;
    if (x >= n || y0 >= rows)
        return; // R need not divide by the workgroup size

    // The loads clamp their index only to stay inside the buffer; a
    // clamped value is never used.
    bool has_l = x > 0u, has_r = x + 1u < n;
    uint xl = has_l ? x - 1u : x, xr = has_r ? x + 1u : x;

    // The window: row y-1 (a), row y (b), row y+1 (c); left, centre, right.
    float a0 = 0.0, a1 = 0.0, a2 = 0.0;
    if (y0 > 0u) {
        uint r = (y0 - 1u) * n;
        a0 = ld(r + xl);
        a1 = ld(r + x);
        a2 = ld(r + xr);
    }
    uint r = y0 * n;
    float b0 = ld(r + xl), b1 = ld(r + x), b2 = ld(r + xr);

    uint y1 = min(y0 + ROWS, rows);
    for (uint y = y0; y < y1; y++) {
        bool has_up = y > 0u, has_down = y + 1u < rows;
        float c0 = 0.0, c1 = 0.0, c2 = 0.0;
        if (has_down) {
            uint rd = (y + 1u) * n;
            c0 = ld(rd + xl);
            c1 = ld(rd + x);
            c2 = ld(rd + xr);
        }
        float h = b1;
        float moved = 0.0;
        moved = exchange(moved, h, a0, has_up && has_l); // dy = -1
        moved = exchange(moved, h, a1, has_up);
        moved = exchange(moved, h, a2, has_up && has_r);
        moved = exchange(moved, h, b0, has_l); // dy = 0
        moved = exchange(moved, h, b2, has_r);
        moved = exchange(moved, h, c0, has_down && has_l); // dy = 1
        moved = exchange(moved, h, c1, has_down);
        moved = exchange(moved, h, c2, has_down && has_r);
        precise float out_h = h - moved;
        dst[y * n + x] = out_h;
        a0 = b0; a1 = b1; a2 = b2;
        b0 = c0; b1 = c1; b2 = c2;
    }
}

// ------------------------------------------------------- PASSES passes

// The loops over the strip's columns are written out by the preprocessor:
// glslc -O's loop unroller drops 'precise' (NoContraction) from the copies
// it makes, after which its folding fuses products and sums into Fma.
#define EACH_COL(M, a, b, c, d, e)                                         \
    M(0, a, b, c, d, e) M(1, a, b, c, d, e) M(2, a, b, c, d, e)            \
    M(3, a, b, c, d, e) M(4, a, b, c, d, e) M(5, a, b, c, d, e)            \
    M(6, a, b, c, d, e) M(7, a, b, c, d, e) M(8, a, b, c, d, e)            \
    M(9, a, b, c, d, e) M(10, a, b, c, d, e) M(11, a, b, c, d, e)          \
    M(12, a, b, c, d, e) M(13, a, b, c, d, e) M(14, a, b, c, d, e)         \
    M(15, a, b, c, d, e) M(16, a, b, c, d, e) M(17, a, b, c, d, e)          \
    M(18, a, b, c, d, e) M(19, a, b, c, d, e) M(20, a, b, c, d, e)          \
    M(21, a, b, c, d, e) M(22, a, b, c, d, e) M(23, a, b, c, d, e)

// Strip column i (0 .. WK-1) is R's column x0 - K + i; col_ok[i]: it is
// inside R; pair_ok[i]: columns i and i + 1 both are.
// plo[i], phi[i]: the clamp's bounds for the pair (i, i + 1), -T and T, or
// -inf and +inf where pair_ok[i] is false.
bool col_ok[WK], pair_ok[WK];
float plo[WK], phi[WK];

// What a cell of height h gives a neighbour of height nb, e * C of SPEC.md,
// or +-0 where the pair does not exist.  SPEC's e (d - T where d > T, d + T
// where d < -T, else 0) is d - clamp(d, -T, T): the same subtraction where
// |d| > T (d + T is d - (-T) exactly), and +-0 otherwise, which adds nothing
// to a sum that is never -0 (see the top).  A pair that does not exist gets
// the bounds -inf, +inf: d - d = +0.  The neighbour's term for the same pair
// is exactly its negation: nb - h = -(h - nb), the clamp is symmetric and
// the rounding of -, + and * is too.  So each pair is computed once, and a
// cell subtracts the term its neighbour computed (m - x equals m + (-x)
// exactly): only the terms are shared, every cell still sums its own eight
// in the SPEC's order.
float term(float h, float nb, float lo, float hi)
{
    precise float d = h - nb;
    float c = d > hi ? hi : d; // not clamp(): lavapipe's fmin and fmax
    c = c < lo ? lo : c;       // add NaN handling
    precise float e = d - c;
    precise float m = e * rate;
    return m;
}

// One row of pass k, centred on R's row rc, from pass k-1's rows rc (b)
// and rc + 1 (c), and s, the sum of each cell's three upward terms (made
// from the negated downward terms of row rc - 1 by the same pass).  Strip
// columns k .. WK-1-k are made (valid); a pair term is made where one of
// its cells is.  EACH_COL runs i up to 15 whatever WK is; IC, IL, IR keep
// the indices of the cells that are not made inside the arrays, for
// glslang's constant index checks.
#define IC(i) min(i, WK - 1)
#define IL(i) clamp(i - 1, 0, WK - 1)
#define IR(i) min(i + 1, WK - 1)
#define MADE(i, k) (i >= k && i < WK - k)
// The terms: hz[i] of (b[i], b[i+1]), dl[i] of (b[i], c[i-1]), vv[i] of
// (b[i], c[i]), dr[i] of (b[i], c[i+1]).
// dlo, dhi: the bounds of the diagonal pairs (i, i + 1) across rows rc and
// rc + 1 (both pairs exist: the row pair (rlo, rhi) and the column pair).
#define DBOUNDS(i, k, _b, _c, _d, _e)                                      \
    if (i >= k - 1 && i < WK - k) {                                        \
        dlo[IC(i)] = min(plo[IC(i)], rlo);                                 \
        dhi[IC(i)] = max(phi[IC(i)], rhi);                                 \
    }
#define TERMS(i, k, b, c, _d, _e)                                          \
    if (i >= k - 1 && i < WK - k) {                                        \
        hz[IC(i)] = term(b[IC(i)], b[IR(i)], plo[IC(i)], phi[IC(i)]);      \
        dr[IC(i)] = term(b[IC(i)], c[IR(i)], dlo[IC(i)], dhi[IC(i)]);      \
    }                                                                      \
    if (i >= k && i < WK - k + 1 && i < WK)                                \
        dl[IC(i)] = term(b[IC(i)], c[IL(i)], dlo[IL(i)], dhi[IL(i)]);      \
    if (MADE(i, k))                                                        \
        vv[IC(i)] = term(b[IC(i)], c[IC(i)], rlo, rhi);
// SPEC order: the three upward terms (s), left, right, the three downward.
#define CELL(i, k, b, s, _d, _e)                                           \
    if (MADE(i, k)) {                                                      \
        precise float m = s[IC(i)];                                        \
        m = m - hz[IL(i)];                                                 \
        m = m + hz[IC(i)];                                                 \
        m = m + dl[IC(i)];                                                 \
        m = m + vv[IC(i)];                                                 \
        m = m + dr[IC(i)];                                                 \
        precise float out_h = b[IC(i)] - m;                                \
        row[IC(i)] = out_h;                                                \
    }
// The next row's upward sums: 0 + up-left + up + up-right, each the
// negation of this row's term for the pair.
#define UPSUM(i, k, s, _c, _d, _e)                                         \
    if (MADE(i, k)) {                                                      \
        precise float u = 0.0 - dr[IL(i)];                                 \
        u = u - vv[IC(i)];                                                 \
        u = u - dl[IR(i)];                                                 \
        s[IC(i)] = u;                                                      \
    }

#define COL_OK(i, a, b, c, d, e)                                           \
    if (i < WK)                                                            \
        col_ok[IC(i)] = x0 - K + i >= 0 && x0 - K + i < int(n);
#define PAIR_OK(i, a, b, c, d, e)                                          \
    if (i < WK) {                                                          \
        pair_ok[IC(i)] = i + 1 < WK && col_ok[IC(i)] && col_ok[IR(i)];     \
        plo[IC(i)] = pair_ok[IC(i)] ? mt : ninf;                           \
        phi[IC(i)] = pair_ok[IC(i)] ? t : inf;                             \
    }
#define ZERO(i, a, b, c, d, e)                                             \
    if (i < WK) {                                                          \
        b0[IC(i)] = 0.0; c0[IC(i)] = 0.0; b1[IC(i)] = 0.0;                 \
        c1[IC(i)] = 0.0; b2[IC(i)] = 0.0; c2[IC(i)] = 0.0;                 \
        b3[IC(i)] = 0.0; c3[IC(i)] = 0.0; s1[IC(i)] = 0.0;                 \
        s2[IC(i)] = 0.0; s3[IC(i)] = 0.0; s4[IC(i)] = 0.0;                 \
    }
#define LOAD(i, a, b, c, d, e)                                             \
    if (i < WK)                                                            \
        c0[IC(i)] = ld(yc + uint(clamp(x0 - K + i, 0, nm)));
#define STORE(i, a, b, c, d, e)                                            \
    if (i >= K && i < K + W && col_ok[IC(i)])                              \
        dst[uint(rc) * n + uint(x0 - K + i)] = row[IC(i)];

// Pass k (1 .. PASSES) on the rows rc (b) and rc + 1 (c) of pass k-1, with
// its upward sums s: the last pass stores its row, the others rotate it
// into their own two (nb, nc).
#define PASS(k, b, c, s, nb, nc)                                           \
    if (k <= int(PASSES)) {                                                \
        int rc = yy - k;                                                   \
        bool vr = rc >= 0 && rc + 1 < int(rows); /* rc, rc+1 exist */   \
        float rlo = vr ? mt : ninf, rhi = vr ? t : inf;                    \
        float hz[WK], dl[WK], vv[WK], dr[WK], row[WK], dlo[WK], dhi[WK];   \
        EACH_COL(DBOUNDS, k, _, _, _, _)                                   \
        EACH_COL(TERMS, k, b, c, _, _)                                     \
        EACH_COL(CELL, k, b, s, _, _)                                      \
        EACH_COL(UPSUM, k, s, _, _, _)                                     \
        if (k == int(PASSES)) {                                            \
            if (rc >= int(y0) && rc < y_end) {                             \
                EACH_COL(STORE, _, _, _, _, _)                             \
            }                                                              \
        } else {                                                           \
            nb = nc;                                                       \
            nc = row;                                                      \
        }                                                                  \
    }

void blocked()
{
    uint n = p.w, rows = p.h;
    int nm = int(n) - 1, hm = int(rows) - 1;
    int x0 = int(gl_GlobalInvocationID.x) * W;
    uint y0 = gl_GlobalInvocationID.y * uint(H);
    if (x0 >= int(n) || y0 >= rows)
        return; // R need not divide by the strip size

    EACH_COL(COL_OK, _, _, _, _, _)
    EACH_COL(PAIR_OK, _, _, _, _, _)
    int y_end = int(min(y0 + uint(H), rows));

    // Each pass's last two rows, oldest first, and its upward sums.  Rows
    // above R or not yet read are never used by a valid cell:
    // zeros keep them defined.
    float b0[WK], c0[WK], b1[WK], c1[WK], b2[WK], c2[WK], b3[WK], c3[WK];
    float s1[WK], s2[WK], s3[WK], s4[WK];
    EACH_COL(ZERO, _, _, _, _, _)

    // Row yy of the source enters; pass k then makes row yy - k.  The last
    // pass's row yy - PASSES runs from y0 to y_end - 1.  A pass's first row
    // (made with zero upward sums) is never used.
    int last = y_end - 1 + int(PASSES);
    for (int yy = int(y0) - K; yy <= last; yy++) {
        b0 = c0;
        uint yc = uint(clamp(yy, 0, hm)) * n;
        EACH_COL(LOAD, _, _, _, _, _)
        PASS(1, b0, c0, s1, b1, c1)
        PASS(2, b1, c1, s2, b2, c2)
        if (K >= 3)
            PASS(3, b2, c2, s3, b3, c3)
        if (K >= 4)
            PASS(4, b3, c3, s4, b3, c3) // never rotates: K <= 4
    }
}

void main()
{
    t = p.talus;
    rate = p.rate;
    mt = -t; // exact
    inf = uintBitsToFloat(0x7f800000u);
    ninf = -inf;
    if (PASSES == 0u)
        single_pass();
    else
        blocked();
}
