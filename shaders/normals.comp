// normals.comp: SPEC.md stage 4, normals by central differences (a gather:
// each invocation reads four neighbours and writes only its own cell), into
// three separate buffers so each comes back to the host in one copy.  R's
// edge (p.w x p.h) is treated as the world's border: where it is not, the
// edge cells are wrong but lie in the halo, outside the window read back.
//
// '/' and sqrt() are not correctly rounded on every GPU, so these may differ
// from the CPU backends by a few units in the last place (SPEC.md allows
// 1e-6); 'precise' still keeps the products and sums unfused.
#version 450

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 4) const bool TEXELS = true; // h through hT
// The host's binary32 k1, k2 (vulkan.c), as specialisation constants.
layout(constant_id = 11) const float K1 = 0.0;
layout(constant_id = 12) const float K2 = 0.0;

// The same block as in terrain.comp, up to h (std140 offsets 0..39).
layout(std140, set = 0, binding = 0) uniform params {
    uint w;
    uint octaves;
    float inv_n;
    float base;
    float inv_norm;
    float talus;
    float rate;
    float k1;
    float k2;
    uint h;
} p;

layout(std430, set = 0, binding = 2) readonly buffer height_buf {
    float h[];
};
// The same heights as an r32f texel buffer (lavapipe gathers texels with
// plain loads, but loops over the lanes for a buffer access), where the
// world fits maxTexelBufferElements (TEXELS).
layout(set = 0, binding = 7) uniform samplerBuffer hT;

float ld(uint i)
{
    return TEXELS ? texelFetch(hT, int(i)).x : h[i];
}

layout(std430, set = 0, binding = 4) writeonly buffer nx_buf {
    float nx[];
};
layout(std430, set = 0, binding = 5) writeonly buffer ny_buf {
    float ny[];
};
layout(std430, set = 0, binding = 6) writeonly buffer nz_buf {
    float nz[];
};

void main()
{
    uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
    uint n = p.w;
    if (x >= n || y >= p.h)
        return; // R need not divide by the workgroup size

    uint lastx = n - 1u, lasty = p.h - 1u;
    uint xm = x > 0u ? x - 1u : 0u, xp = x < lastx ? x + 1u : lastx;
    uint ym = y > 0u ? y - 1u : 0u, yp = y < lasty ? y + 1u : lasty;
    // The clamped border spans one cell, not two (k1, not k2).
    float kx = (xp - xm == 2u) ? K2 : K1;
    float ky = (yp - ym == 2u) ? K2 : K1;

    precise float dx = (ld(y * n + xp) - ld(y * n + xm)) * kx;
    precise float dz = (ld(yp * n + x) - ld(ym * n + x)) * ky;
    precise float l = sqrt((dx * dx + 1.0) + dz * dz);
    precise float ox = -dx / l, oy = 1.0 / l, oz = -dz / l;
    uint i = y * n + x;
    nx[i] = ox;
    ny[i] = oy;
    nz[i] = oz;
}
