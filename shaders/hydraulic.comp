// hydraulic.comp: SPEC.md's hydraulic stage (between thermal erosion and the
// normals), the arithmetic of backends/hydraulic.h in GLSL, one pass of it
// per pipeline, chosen by the specialisation constant PASS:
//
// - START: from the eroded heights h, the state before the first step,
//   (b, w, s) = (ftz(h), the sea's water, 0), into ST_OUT, and b0 = ftz(h)
//   into SED, kept for the end.
// - START_ONLY, for a world of no steps: the same, straight into the
//   results: ftz(h) into HEIGHT_OUT, the water into WATER_OUT, +0 into SED.
// - ROUTE (pass 1 of a step): (P, Q) from b and w of the 3x3 neighbourhood
//   of ST, into RT_OUT.
// - STEP (pass 2 of a step): the new state from ST and RT of the 3x3
//   neighbourhood, into ST_OUT.
// - SETTLE, after the last step: the heights ftz(b + s) into HEIGHT_OUT,
//   the water into WATER_OUT, the net sediment (height minus b0) over b0 in
//   SED.
//
// The state is one rgba32f texel per cell, (ground b, water w, sediment s,
// 0), ping-ponged by the host (vulkan.c) between two buffers; the routing
// one rgba32f texel, (P, Q, 0, 0).  Packed, a pass fetches a neighbour's
// state in one texel instead of three: on lavapipe every fetch costs as much
// as a few dozen operations (see vulkan.c), and a cell of pass 2 fetches two
// texels a row of its window instead of five.
//
// Bit-exactness with the CPU backends (SPEC.md): every float expression is
// 'precise' (SPIR-V NoContraction: no FMA), in the order hydraulic.h writes
// it; the operations are + - * and comparisons, max and min as the same
// selects as the C (not GLSL's max and min), abs, and bit casts with
// integer subtraction for rcp's seed.  The constants are the host's binary32
// values (push constants), never literals here.  Each cell visits its
// neighbours in the SPEC's order, dy = -1, 0, 1 outer and dx = -1, 0, 1
// inner; a neighbour outside R is a ghost (SPEC.md "The world's edge"),
// made from the window's values by ghost() in the border's invocations
// only; there, in pass 2, a world cell's terms are computed from a clamped
// load and not selected where the neighbour is a ghost, and a ghost's
// where it is a cell, so every sum is the C's, term for term.  The loop
// over rows has a specialisation-constant bound, which glslc cannot unroll (its unroller drops 'precise' from the copies: see
// erosion.comp); the eight neighbours are written out by the preprocessor.
//
// Layout: one invocation makes ROWS cells down a column, sliding a 3x3
// window, so that each texel is fetched three times per cell instead of
// nine.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const uint ROWS = 8u;    // cells down a column
layout(constant_id = 3) const uint PASS = 0u;    // which pass, below
layout(constant_id = 4) const bool TEXELS = true; // texels, else buffers

// vulkan.c's VULKAN_HYD_* in the same order.
const uint START = 0u;
const uint START_ONLY = 1u;
const uint ROUTE = 2u;
const uint STEP = 3u;
const uint SETTLE = 4u;

// The host's binary32 constants of the stage (wg_hyd_consts in spec.h) and
// the size of R, the rectangle computed (the world, or a region and its
// halo), whose edge is treated as the world's border (where it is not, the
// cells it makes wrong lie in the halo): vulkan.c's vulkan_hyd_push.
layout(push_constant, std430) uniform consts {
    float sea;
    float slope_d;
    float kf;
    float f_max;
    float rain;
    float keep;
    float kc;
    float ke;
    float kd;
    float creep_o;
    float creep_d;
    float ka;
    float eps;
    uint w;
    uint h;
} k;

// Texels where the world fits maxTexelBufferElements (TEXELS: lavapipe
// gathers and scatters texels with plain loads and stores, but loops over
// the lanes for a storage-buffer access), else storage buffers.
layout(set = 0, binding = 0) uniform samplerBuffer heightT; // eroded heights
layout(set = 0, binding = 1) uniform samplerBuffer stT;     // state read
layout(set = 0, binding = 2) uniform samplerBuffer rtT;     // routing read
layout(set = 0, binding = 3, rgba32f) uniform writeonly imageBuffer stI;
layout(set = 0, binding = 4, rgba32f) uniform writeonly imageBuffer rtI;
layout(std430, set = 0, binding = 5) readonly buffer h_buf { float h_in[]; };
layout(std430, set = 0, binding = 6) readonly buffer st_buf { vec4 st_in[]; };
layout(std430, set = 0, binding = 7) readonly buffer rt_buf { vec4 rt_in[]; };
layout(std430, set = 0, binding = 8) writeonly buffer sto_buf { vec4 st_out[]; };
layout(std430, set = 0, binding = 9) writeonly buffer rto_buf { vec4 rt_out[]; };
// The results (storage buffers in either case).
layout(std430, set = 0, binding = 10) writeonly buffer ho_buf { float height_out[]; };
layout(std430, set = 0, binding = 11) writeonly buffer wo_buf { float water_out[]; };
// b0 from START to SETTLE, which overwrites it with the net sediment.
layout(std430, set = 0, binding = 12) buffer sed_buf { float sed[]; };

float ldh(uint i) { return TEXELS ? texelFetch(heightT, int(i)).x : h_in[i]; }
vec4 ldst(uint i) { return TEXELS ? texelFetch(stT, int(i)) : st_in[i]; }
vec4 ldrt(uint i) { return TEXELS ? texelFetch(rtT, int(i)) : rt_in[i]; }

// The state of a cell: ground, water, sediment and the water's running
// mean.
void store_st(uint i, float b, float w, float s, float a)
{
    if (TEXELS)
        imageStore(stI, int(i), vec4(b, w, s, a));
    else
        st_out[i] = vec4(b, w, s, a);
}

void store_rt(uint i, float p, float q)
{
    if (TEXELS)
        imageStore(rtI, int(i), vec4(p, q, 0.0, 0.0));
    else
        rt_out[i] = vec4(p, q, 0.0, 0.0);
}

// SPEC ftz(x): |x| < EPS gives +0, anything else x.
float ftz(float x)
{
    return abs(x) < k.eps ? 0.0 : x;
}

// SPEC max and min, the selects of hydraulic.h (GLSL's max and min leave
// the choice between equal values and signed zeros to the device).
float max_(float a, float b)
{
    return a < b ? b : a;
}

float min_(float a, float b)
{
    return b < a ? b : a;
}

// SPEC rcp(m), m a normal positive number: the integer seed, then three
// Newton steps.
float rcp(float m)
{
    precise float r = uintBitsToFloat(0x7EF311C3u - floatBitsToUint(m));
    precise float e = 2.0 - m * r;
    r = r * e;
    e = 2.0 - m * r;
    r = r * e;
    e = 2.0 - m * r;
    r = r * e;
    return r;
}

// wg_hyd_weight: the routing weight of a neighbour whose surface lies d
// below the cell's, with slope weight gk and the cell's P: ftz of t^4,
// t = d gk p.  The SPEC flushes t and t^2 too, but where d > 0 (the only
// lanes whose weight is used) t lies in [0, about 1], so if t or t^2 is
// below EPS, t^4 is below EPS as well and the last flush gives +0 as the
// SPEC's earlier ones would (a subnormal t^4, flushed by the device or
// not, is flushed here): the same bits with four operations fewer, as
// the OpenMP backend computes it.
float weight(float d, float gk, float p)
{
    precise float dg = d * gk;
    precise float t = dg * p;
    precise float t2 = t * t;
    precise float t4 = t2 * t2;
    return ftz(t4);
}

// A ghost's value (SPEC.md "The world's edge") from the 3x3 window v (row
// r = 0 above, 1 the cell's, 2 below; column c = 0 left, 1, 2 right) of
// the ghost in row r, column c, whose row (ro) or column (co) or both lie
// outside R: its edge cell e clamped into R, and the value there going on
// at the slope from the cell j one further in, v[e] + (v[e] - v[j]).
float ghost(float v[9], int r, int c, bool ro, bool co)
{
    int cr = ro ? 1 : r, cc = co ? 1 : c;
    int ir = ro ? 2 - r : r, ic = co ? 2 - c : c;
    precise float vc = v[cr * 3 + cc];
    precise float t = vc - v[ir * 3 + ic];
    precise float g = vc + t;
    return g;
}

// ---------------------------------------------------------------- pass 1

// wg_hyd_inv: P = rcp(dmax), or 0 when no neighbour's surface is lower.
float inv(float dmax)
{
    float r = rcp(dmax > 0.0 ? dmax : 1.0);
    return dmax > 0.0 ? r : 0.0;
}

// wg_hyd_route: Q = F rcp(sum), F = min(FMAX, KF dmax rcp(max(w, EPS))).
float route(float dmax, float sum, float w)
{
    precise float dk = dmax * k.kf;
    precise float fw = dk * rcp(max_(w, k.eps));
    float f = min_(k.f_max, fw);
    float r = rcp(sum > 0.0 ? sum : 1.0);
    precise float q = f * r;
    return sum > 0.0 ? q : 0.0;
}

// The window: rows above (a), at (b) and below (c) the cell, columns left
// (0), centre (1) and right (2).  A load clamps its row and column only to
// stay inside R: a clamped value is never selected.

// Pass 1 of one cell: its surface drop to neighbour k (surface hk, a
// ghost's GH beyond the edge), flushed, into d, and the steepest weighted
// drop ...
#define DROP(d, hk, gk)                                                    \
    {                                                                      \
        precise float dh_ = h - (hk);                                      \
        d = ftz(dh_);                                                      \
        precise float dg_ = d * (gk);                                      \
        dmax = max_(dmax, dg_);                                            \
    }
// ... and the sum of the weights of the lower neighbours.
#define SUM(d, gk)                                                         \
    {                                                                      \
        precise float t_ = sum + weight(d, gk, p);                         \
        sum = d > 0.0 ? t_ : sum;                                          \
    }

void route_pass(uint x, uint y0, uint y1)
{
    uint n = k.w, last = k.h - 1u;
    bool hl = x > 0u, hr = x < n - 1u;
    uint xl = hl ? x - 1u : x, xr = hr ? x + 1u : x;
    float gd = k.slope_d;

    // Each cell of the window as its surface b + w.
#define SURF(dst, i)                                                       \
    {                                                                      \
        vec4 v_ = ldst(i);                                                 \
        precise float s_ = v_.x + v_.y;                                    \
        dst = s_;                                                          \
    }
    uint ra = (y0 > 0u ? y0 - 1u : 0u) * n, rb = y0 * n;
    float a0, a1, a2, b0, b1, b2, wc, wn;
    SURF(a0, ra + xl) SURF(a1, ra + x) SURF(a2, ra + xr)
    SURF(b0, rb + xl) SURF(b2, rb + xr)
    {
        vec4 v = ldst(rb + x);
        precise float s = v.x + v.y;
        b1 = s;
        wc = v.y;
    }

    for (uint y = y0; y < y1; y++) {
        bool hu = y > 0u, hd = y < last;
        uint rc = (hd ? y + 1u : y) * n;
        float c0, c1, c2;
        SURF(c0, rc + xl) SURF(c2, rc + xr)
        {
            vec4 v = ldst(rc + x);
            precise float s = v.x + v.y;
            c1 = s;
            wn = v.y;
        }

        // The neighbours' surfaces, ghosts' beyond the edge.
        float n0 = a0, n1 = a1, n2 = a2, n3 = b0, n4 = b2, n5 = c0, n6 = c1,
              n7 = c2;
        if (!(hu && hd && hl && hr)) {
            float v[9] = float[9](a0, a1, a2, b0, b1, b2, c0, c1, c2);
            n0 = hu && hl ? n0 : ghost(v, 0, 0, !hu, !hl);
            n1 = hu ? n1 : ghost(v, 0, 1, true, false);
            n2 = hu && hr ? n2 : ghost(v, 0, 2, !hu, !hr);
            n3 = hl ? n3 : ghost(v, 1, 0, false, true);
            n4 = hr ? n4 : ghost(v, 1, 2, false, true);
            n5 = hd && hl ? n5 : ghost(v, 2, 0, !hd, !hl);
            n6 = hd ? n6 : ghost(v, 2, 1, true, false);
            n7 = hd && hr ? n7 : ghost(v, 2, 2, !hd, !hr);
        }
        float h = b1, dmax = 0.0, sum = 0.0;
        float d0, d1, d2, d3, d4, d5, d6, d7;
        DROP(d0, n0, gd) // dy = -1
        DROP(d1, n1, 1.0)
        DROP(d2, n2, gd)
        DROP(d3, n3, 1.0) // dy = 0
        DROP(d4, n4, 1.0)
        DROP(d5, n5, gd) // dy = 1
        DROP(d6, n6, 1.0)
        DROP(d7, n7, gd)
        float p = inv(dmax);
        SUM(d0, gd)
        SUM(d1, 1.0)
        SUM(d2, gd)
        SUM(d3, 1.0)
        SUM(d4, 1.0)
        SUM(d5, gd)
        SUM(d6, 1.0)
        SUM(d7, gd)
        store_rt(y * n + x, p, route(dmax, sum, wc));

        a0 = b0; a1 = b1; a2 = b2;
        b0 = c0; b1 = c1; b2 = c2;
        wc = wn;
    }
#undef SURF
}
#undef DROP
#undef SUM

// ---------------------------------------------------------------- pass 2

// A ghost's terms where the neighbour is one ('ok'): with its surface GH
// (hk) its share of the water leaves the world, and its ground GB (bk)
// counts in the steepest drop; it gives nothing and takes no creep.
#define GHOST(hk, bk, gk, ok)                                              \
    {                                                                      \
        precise float dh_ = h - (hk);                                      \
        precise float d_ = ftz(dh_);                                       \
        precise float oq_ = weight(d_, gk, p) * q;                         \
        precise float o_ = out_ + ftz(oq_);                                \
        precise float db_ = b - (bk);                                      \
        precise float e_ = ftz(db_);                                       \
        precise float g_ = e_ * (gk);                                      \
        out_ = (ok) && d_ > 0.0 ? o_ : out_;                               \
        drop = (ok) ? max_(drop, g_) : drop;                               \
    }

// WG_HYD_GATHER of hydraulic.h for one neighbour (ground bk, water wk,
// sediment sk, routing pk and qk, surface hk = bk + wk) of the cell (ground
// b, surface h, routing p and q), where it exists ('ok'); gk is 1 for a
// side and GD for a corner, ck the creep KS or KS / 4.
#define GATHER(bk, wk, sk, pk, qk, hk, gk, ck, ok)                         \
    {                                                                      \
        precise float dh_ = h - (hk);                                      \
        precise float d_ = ftz(dh_);                                       \
        precise float oq_ = weight(d_, gk, p) * q;                         \
        precise float o_ = out_ + ftz(oq_);                                \
        precise float nd_ = -d_;                                           \
        precise float fq_ = weight(nd_, gk, pk) * (qk);                    \
        precise float f_ = ftz(fq_);                                       \
        precise float wf_ = (wk) * f_;                                     \
        precise float wi_ = win + wf_;                                     \
        precise float sf_ = (sk) * f_;                                     \
        precise float si_ = sin_ + sf_;                                    \
        precise float db_ = b - (bk);                                      \
        precise float e_ = ftz(db_);                                       \
        precise float g_ = e_ * (gk);                                      \
        precise float ec_ = e_ * (ck);                                     \
        precise float cr_ = creep + ec_;                                   \
        creep = (ok) ? cr_ : creep;                                        \
        out_ = (ok) && d_ > 0.0 ? o_ : out_;                               \
        win = (ok) && d_ < 0.0 ? wi_ : win;                                \
        sin_ = (ok) && d_ < 0.0 ? si_ : sin_;                              \
        drop = (ok) ? max_(drop, g_) : drop;                               \
    }

// wg_hyd_finish: the cell's new state, into cell i (a: its running mean).
void finish(uint i, float b, float w, float s, float a, float out_,
            float win, float sin_, float drop, float creep)
{
    precise float wm = w * out_;
    precise float wo = ftz(wm);
    precise float w1s = (w - wo) + win;
    precise float w1 = ftz(max_(w1s, 0.0));
    precise float so = s * out_;
    precise float s1s = (s - so) + sin_;
    precise float s1 = ftz(max_(s1s, 0.0));
    precise float ww = wo * wo;
    precise float cw = ftz(ww) * drop;
    precise float cm = cw * k.kc;
    precise float cap = ftz(cm);
    // Erode the deficit (at most half the steepest drop), or deposit the
    // excess; then the creep.
    precise float ed = cap - s1;
    precise float em = ed * k.ke;
    precise float hd = drop * 0.5;
    precise float e = min_(ftz(em), hd);
    precise float dd = s1 - cap;
    precise float dm = dd * k.kd;
    precise float dep = ftz(dm);
    precise float be = b - e;
    precise float bd = b + dep;
    precise float se = s1 + e;
    precise float sd = s1 - dep;
    bool erode = s1 < cap;
    precise float bc = ftz(erode ? be : bd) - creep;
    precise float b1 = ftz(bc);
    precise float s2 = ftz(erode ? se : sd);
    precise float wr = w1 + k.rain;
    precise float wk = wr * k.keep;
    precise float w2 = ftz(wk);
    precise float sl = k.sea - b1;
    precise float sea = ftz(sl);
    float wn = b1 < k.sea ? sea : w2;
    precise float ad = wn - a;
    precise float am = ad * k.ka;
    precise float as_ = a + ftz(am);
    store_st(i, b1, wn, s2, ftz(as_));
}

void step_pass(uint x, uint y0, uint y1)
{
    uint n = k.w, last = k.h - 1u;
    bool hl = x > 0u, hr = x < n - 1u;
    uint xl = hl ? x - 1u : x, xr = hr ? x + 1u : x;
    float gd = k.slope_d, co = k.creep_o, cd = k.creep_d;

    // One cell of the window: ground, water, sediment, P, Q and surface.
#define CELL(c, i)                                                         \
    {                                                                      \
        vec4 v_ = ldst(i);                                                 \
        vec4 r_ = ldrt(i);                                                 \
        c##b = v_.x;                                                       \
        c##w = v_.y;                                                       \
        c##s = v_.z;                                                       \
        c##p = r_.x;                                                       \
        c##q = r_.y;                                                       \
        precise float s_ = c##b + c##w;                                    \
        c##h = s_;                                                         \
    }
#define DECL(c) float c##b, c##w, c##s, c##p, c##q, c##h;
    DECL(a0) DECL(a1) DECL(a2) DECL(b0) DECL(b1) DECL(b2)
    DECL(c0) DECL(c1) DECL(c2)
#undef DECL
    uint ra = (y0 > 0u ? y0 - 1u : 0u) * n, rb = y0 * n;
    CELL(a0, ra + xl) CELL(a1, ra + x) CELL(a2, ra + xr)
    CELL(b0, rb + xl) CELL(b1, rb + x) CELL(b2, rb + xr)

    for (uint y = y0; y < y1; y++) {
        bool hu = y > 0u, hd = y < last;
        uint rc = (hd ? y + 1u : y) * n;
        CELL(c0, rc + xl) CELL(c1, rc + x) CELL(c2, rc + xr)

        float b = b1b, h = b1h, p = b1p, q = b1q;
        float out_ = 0.0, win = 0.0, sin_ = 0.0, drop = 0.0, creep = 0.0;
#define NB(c, gk, ck, ok)                                                  \
        GATHER(c##b, c##w, c##s, c##p, c##q, c##h, gk, ck, ok)
        if (hu && hd && hl && hr) {
            NB(a0, gd, cd, true) // dy = -1
            NB(a1, 1.0, co, true)
            NB(a2, gd, cd, true)
            NB(b0, 1.0, co, true) // dy = 0
            NB(b2, 1.0, co, true)
            NB(c0, gd, cd, true) // dy = 1
            NB(c1, 1.0, co, true)
            NB(c2, gd, cd, true)
        } else {
            // On the border: the ghosts' surfaces from the window's, their
            // ground the starting ground b0 of their edge cell e (in SED
            // until settle).
            uint ya = hu ? y - 1u : y, yc = hd ? y + 1u : y;
            float v[9] = float[9](a0h, a1h, a2h, b0h, b1h, b2h, c0h, c1h,
                                  c2h);
            float g[9] = float[9](sed[ya * n + xl], sed[ya * n + x],
                                  sed[ya * n + xr], sed[y * n + xl],
                                  sed[y * n + x], sed[y * n + xr],
                                  sed[yc * n + xl], sed[yc * n + x],
                                  sed[yc * n + xr]);
#define NG(c, r_, c_, ro, co_, gk, ck)                                     \
            {                                                              \
                bool ok_ = !(ro) && !(co_);                                \
                NB(c, gk, ck, ok_)                                         \
                float gh_ = ok_ ? 0.0 : ghost(v, r_, c_, ro, co_);         \
                float gb_ = g[((ro) ? 1 : r_) * 3 + ((co_) ? 1 : c_)];     \
                GHOST(gh_, gb_, gk, !ok_)                                  \
            }
            NG(a0, 0, 0, !hu, !hl, gd, cd) // dy = -1
            NG(a1, 0, 1, !hu, false, 1.0, co)
            NG(a2, 0, 2, !hu, !hr, gd, cd)
            NG(b0, 1, 0, false, !hl, 1.0, co) // dy = 0
            NG(b2, 1, 2, false, !hr, 1.0, co)
            NG(c0, 2, 0, !hd, !hl, gd, cd) // dy = 1
            NG(c1, 2, 1, !hd, false, 1.0, co)
            NG(c2, 2, 2, !hd, !hr, gd, cd)
#undef NG
        }
#undef NB
        finish(y * n + x, b, b1w, b1s, ldst(y * n + x).w, out_, win, sin_,
               drop, creep);

#define SHIFT(c, d)                                                        \
    c##b = d##b; c##w = d##w; c##s = d##s; c##p = d##p; c##q = d##q;       \
    c##h = d##h;
        SHIFT(a0, b0) SHIFT(a1, b1) SHIFT(a2, b2)
        SHIFT(b0, c0) SHIFT(b1, c1) SHIFT(b2, c2)
#undef SHIFT
    }
#undef CELL
}
#undef GATHER
#undef GHOST

// ------------------------------------------------------ before and after

// wg_hyd_start of cell i.
void start(uint i)
{
    float b = ftz(ldh(i));
    precise float sl = k.sea - b;
    precise float sea = ftz(sl);
    float w = b < k.sea ? sea : 0.0;
    if (PASS == START) {
        store_st(i, b, w, 0.0, w);
        sed[i] = b;
    } else {
        height_out[i] = b;
        water_out[i] = w;
        sed[i] = 0.0;
    }
}

// wg_hyd_settle of cell i: the ground, the water (the sea's, or on land
// its running mean), and the net sediment over b0 (the sediment still
// carried stays in the water).
void settle(uint i)
{
    vec4 v = ldst(i);
    precise float net = v.x - sed[i];
    height_out[i] = v.x;
    water_out[i] = v.x < k.sea ? v.y : v.w;
    sed[i] = net;
}

void main()
{
    uint n = k.w;
    uint x = gl_GlobalInvocationID.x, y0 = gl_GlobalInvocationID.y * ROWS;
    if (x >= n || y0 >= k.h)
        return; // R need not divide by the workgroup size
    uint y1 = min(y0 + ROWS, k.h);
    if (PASS == ROUTE) {
        route_pass(x, y0, y1);
    } else if (PASS == STEP) {
        step_pass(x, y0, y1);
    } else {
        for (uint y = y0; y < y1; y++) {
            if (PASS == SETTLE)
                settle(y * n + x);
            else
                start(y * n + x);
        }
    }
}
