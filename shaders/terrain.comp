// terrain.comp: SPEC.md stage 1, ridged fractal value noise, one invocation
// per cell of the rectangle R (p.w x p.h cells at (p.ox, p.oy) in the
// world: the whole world, or a region and its halo), sampled at the cell's
// world coordinates.
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
// The world's octave count (p.octaves), so that the driver unrolls the
// loop after specialisation (glslc cannot: an unroll in glslc -O drops
// 'precise' from the copies).
layout(constant_id = 5) const uint OCTAVES = 1u;
// The host's binary32 constants (vulkan.c), as specialisation constants:
// still the host's values to the bit, but constants to the driver's compiler.
layout(constant_id = 6) const float INV_N = 0.0;
layout(constant_id = 7) const float BASE = 0.0;
layout(constant_id = 8) const float INV_NORM = 0.0;
// The octave table: cos, sin, freq, amp, offs of octave o are constants
// 16 + o, 32 + o, 48 + o, 64 + o and 80 + o.
#define OCT(o)                                                             \
    layout(constant_id = 16 + o) const float C##o = 0.0;                   \
    layout(constant_id = 32 + o) const float S##o = 0.0;                   \
    layout(constant_id = 48 + o) const float F##o = 0.0;                   \
    layout(constant_id = 64 + o) const float A##o = 0.0;                   \
    layout(constant_id = 80 + o) const float O##o = 0.0;
OCT(0) OCT(1) OCT(2) OCT(3) OCT(4) OCT(5) OCT(6) OCT(7)
OCT(8) OCT(9) OCT(10) OCT(11) OCT(12) OCT(13) OCT(14) OCT(15)
#define TABLE(X)                                                           \
    float[16](X##0, X##1, X##2, X##3, X##4, X##5, X##6, X##7, X##8, X##9,   \
              X##10, X##11, X##12, X##13, X##14, X##15)

// The host constants of one world and R (vulkan_params in vulkan.c
// mirrors this std140 layout).
struct octave {
    float freq, amp, offs, cosv, sinv;
};
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
    uint h;  // R's height
    uint ox; // R's first column and row in the world
    uint oy;
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
layout(constant_id = 4) const bool TEXELS = true; // height through heightT
layout(set = 0, binding = 8, r32f) uniform writeonly imageBuffer heightT;

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
    if (x >= p.w || y >= p.h)
        return; // R need not divide by the workgroup size

    // The table as arrays, indexed by the (unrolled) loop.
    float COSV[16] = TABLE(C);
    float SINV[16] = TABLE(S);
    float FREQ[16] = TABLE(F);
    float AMP[16] = TABLE(A);
    float OFFS[16] = TABLE(O);

    // World coordinates, exact below 2^24 (N <= 2^20 + 1).
    precise float fxc = float(x + p.ox), fyc = float(y + p.oy);
    precise float sum = 0.0;
    for (uint o = 0u; o < OCTAVES; o++) {
        precise float ux = ((fxc * INV_N) * BASE) * FREQ[o];
        precise float uy = ((fyc * INV_N) * BASE) * FREQ[o];
        precise float px = (ux * COSV[o] - uy * SINV[o]) +
                           OFFS[o];
        precise float py = (ux * SINV[o] + uy * COSV[o]) +
                           OFFS[o];
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
        sum = sum + AMP[o] * (r * r);
    }
    precise float h = sum * INV_NORM;
    if (TEXELS)
        imageStore(heightT, int(y * p.w + x), vec4(h));
    else
        height[y * p.w + x] = h;
}
