// erosion.comp: one pass of SPEC.md stage 2, thermal erosion, from 'src'
// into 'dst' (two different buffers: the host ping-pongs them).
//
// Every expression is 'precise' (no FMA contraction), and the neighbours are
// visited in the SPEC's order (dy outer, dx inner), because 'moved' is a
// binary32 sum whose rounding depends on the order of its terms.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1) in;

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

void main()
{
    uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
    if (x >= p.n || y >= p.n)
        return; // the grid need not divide by the workgroup size

    int n = int(p.n);
    float t = p.talus, rate = p.rate;
    precise float mt = -t; // exact
    float h = src[y * p.n + x];
    precise float moved = 0.0;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int xx = int(x) + dx, yy = int(y) + dy;
            if ((dx == 0 && dy == 0) || xx < 0 || yy < 0 || xx >= n ||
                yy >= n)
                continue; // outside the grid: no neighbour, no clamping
            precise float d = h - src[yy * n + xx];
            precise float e = d > t ? d - t : (d < mt ? d + t : 0.0);
            moved = moved + e * rate;
        }
    }
    precise float out_h = h - moved;
    dst[y * p.n + x] = out_h;
}
