// terrain.comp: SPEC.md stage 1, ridged fractal value noise, one invocation
// per cell.
//
// Every expression is 'precise' (SPIR-V NoContraction) so that no compiler
// fuses a*b+c into an FMA: the heights must equal the scalar backend's to
// the bit.  Every inexact constant (inv_n, base, inv_norm and the octave
// table) comes from the host in binary32; the shader only adds, subtracts
// and multiplies, which are correctly rounded on every Vulkan device.
#version 450

// The workgroup size is chosen by the host (vulkan.c) as specialisation
// constants 0 and 1.
layout(local_size_x_id = 0, local_size_y_id = 1) in;

// The host constants of one world (vk_params in vulkan.c mirrors this
// std140 layout).
struct octave {
    float freq, amp, offs, cosv, sinv;
};
layout(std140, set = 0, binding = 0) uniform params {
    uint n;
    uint octaves;
    float inv_n;
    float base;
    float inv_norm;
    float talus;
    float rate;
    float k1;
    float k2;
    octave oct[16];
} p;

// The lattice as quads, an rgba32f uniform texel buffer of 256 * 256
// texels made by the host from the shared lattice (vulkan_fill_quads):
// texel (ix, iy) holds cell(ix, iy), cell(ix + 1, iy), cell(ix, iy + 1) and
// cell(ix + 1, iy + 1), the four corners an octave reads, in one fetch.
// (lavapipe gathers texels with plain loads; a storage-buffer read is a
// loop over the SIMD lanes.)
layout(set = 0, binding = 1) uniform samplerBuffer lat4;
layout(std430, set = 0, binding = 3) writeonly buffer height_buf {
    float height[];
};

// cell(ix, iy) of SPEC.md and its three neighbours towards +x and +y: '&
// 255' on 32-bit two's-complement ints, so the lattice wraps for negative
// coordinates too.
vec4 cells(int ix, int iy)
{
    return texelFetch(lat4, (iy & 255) * 256 + (ix & 255));
}

void main()
{
    uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y;
    if (x >= p.n || y >= p.n)
        return; // the grid need not divide by the workgroup size

    precise float fxc = float(x), fyc = float(y); // exact below 2^24
    precise float sum = 0.0;
    for (uint o = 0u; o < p.octaves; o++) {
        precise float ux = ((fxc * p.inv_n) * p.base) * p.oct[o].freq;
        precise float uy = ((fyc * p.inv_n) * p.base) * p.oct[o].freq;
        precise float px = (ux * p.oct[o].cosv - uy * p.oct[o].sinv) +
                           p.oct[o].offs;
        precise float py = (ux * p.oct[o].sinv + uy * p.oct[o].cosv) +
                           p.oct[o].offs;
        precise float flx = floor(px), fly = floor(py);
        int ix = int(flx), iy = int(fly);
        precise float fx = px - flx, fy = py - fly;
        vec4 q = cells(ix, iy);
        float a = q.x, b = q.y, c = q.z, d = q.w;
        precise float wx = (fx * fx) * (3.0 - 2.0 * fx);
        precise float wy = (fy * fy) * (3.0 - 2.0 * fy);
        precise float lo = a + (b - a) * wx;
        precise float hi = c + (d - c) * wx;
        precise float v = lo + (hi - lo) * wy;
        precise float r = 1.0 - abs(2.0 * v - 1.0); // fold each octave
        sum = sum + p.oct[o].amp * (r * r);
    }
    precise float h = sum * p.inv_norm;
    height[y * p.n + x] = h;
}
