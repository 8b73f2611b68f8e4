// erosion.comp: one pass of SPEC.md stage 2, thermal erosion, from 'src'
// into 'dst' (two different buffers: the host ping-pongs them).
//
// Every expression is 'precise' (no FMA contraction), and each cell adds
// its neighbours' terms in the SPEC's order (dy outer, dx inner), because
// 'moved' is a binary32 sum whose rounding depends on the order of its terms.
//
// One invocation erodes ROWS cells down a column, sliding a 3x3 window: each
// new row costs 3 loads instead of 9.  On lavapipe every storage-buffer
// access is a loop over the SIMD lanes, so the loads are the cost; on a GPU
// the window also saves cache traffic.  See vulkan.c for the measurements.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const uint ROWS = 8u;

// Only the members this stage reads; the layout is the same block as in
// terrain.comp (std140 offsets 0..27).
layout(std140, set = 0, binding = 0) uniform params {
    uint n;
    uint octaves;
    float inv_n;
    float base;
    float inv_norm;
    float talus;
    float rate;
} p;

layout(std430, set = 0, binding = 2) readonly buffer src_buf {
    float src[];
};
layout(std430, set = 0, binding = 3) writeonly buffer dst_buf {
    float dst[];
};

float t, mt, rate;

// moved + (what one neighbour of height nb takes from a cell of height h).
float exchange(float moved, float h, float nb)
{
    precise float d = h - nb;
    precise float e = d > t ? d - t : (d < mt ? d + t : 0.0);
    precise float m = moved + e * rate;
    return m;
}

void main()
{
    uint n = p.n;
    uint x = gl_GlobalInvocationID.x, y0 = gl_GlobalInvocationID.y * ROWS;
    if (x >= n || y0 >= n)
        return; // the grid need not divide by the workgroup size

    t = p.talus;
    rate = p.rate;
    mt = -t; // exact
    // Neighbours outside the grid do not exist: their terms are skipped
    // (not clamped, not wrapped).  The loads clamp their index only to
    // stay inside the buffer; a clamped value is never used.
    bool has_l = x > 0u, has_r = x + 1u < n;
    uint xl = has_l ? x - 1u : x, xr = has_r ? x + 1u : x;

    // The window: row y-1 (a), row y (b), row y+1 (c); left, centre, right.
    float a0 = 0.0, a1 = 0.0, a2 = 0.0;
    if (y0 > 0u) {
        uint r = (y0 - 1u) * n;
        a0 = src[r + xl];
        a1 = src[r + x];
        a2 = src[r + xr];
    }
    uint r = y0 * n;
    float b0 = src[r + xl], b1 = src[r + x], b2 = src[r + xr];

    uint y1 = min(y0 + ROWS, n);
    for (uint y = y0; y < y1; y++) {
        bool has_up = y > 0u, has_down = y + 1u < n;
        float c0 = 0.0, c1 = 0.0, c2 = 0.0;
        if (has_down) {
            uint rd = (y + 1u) * n;
            c0 = src[rd + xl];
            c1 = src[rd + x];
            c2 = src[rd + xr];
        }
        float h = b1;
        float moved = 0.0;
        if (has_up) { // dy = -1
            if (has_l)
                moved = exchange(moved, h, a0);
            moved = exchange(moved, h, a1);
            if (has_r)
                moved = exchange(moved, h, a2);
        }
        if (has_l) // dy = 0
            moved = exchange(moved, h, b0);
        if (has_r)
            moved = exchange(moved, h, b2);
        if (has_down) { // dy = 1
            if (has_l)
                moved = exchange(moved, h, c0);
            moved = exchange(moved, h, c1);
            if (has_r)
                moved = exchange(moved, h, c2);
        }
        precise float out_h = h - moved;
        dst[y * n + x] = out_h;
        a0 = b0; a1 = b1; a2 = b2;
        b0 = c0; b1 = c1; b2 = c2;
    }
}
