/* spec.h: the constants, the lattice and the world description of SPEC.md,
 * in one place that every backend includes.
 *
 * Assumptions: IEEE-754 binary32 floats, 32-bit two's-complement int, and a
 * compiler that neither contracts a*b+c into an FMA nor reassociates
 * (every file that includes this is built with -ffp-contract=off and never
 * with -ffast-math).  The host computes every inexact constant once, in
 * binary32, so that the CPU backends and the GPU shaders start from the same
 * bits. */
#ifndef WG_SPEC_H
#define WG_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define WG_SPEC_VERSION 2
#define WG_WORLD_UNITS 6.0f  /* the grid spans 6 units on X and Z */
#define WG_HEIGHT_UNITS 1.0f /* a height of 1 stands 1 unit tall */
#define WG_LATTICE_R 256     /* the lattice is R*R floats */
#define WG_BASE 4.0f         /* lattice cells across the world at octave 0 */
#define WG_RATE 0.1f         /* erosion rate C; <= 1/8 keeps it stable */
#define WG_MAX_OCTAVES 16

#define WG_SIZE_MIN 2u
#define WG_SIZE_MAX 65536u /* a whole world: its N*N fields are in memory */
/* A world of which only a region is made (wg_job.region): memory goes with
 * the region, not N*N.  2^20 + 1 is as far as SPEC.md's subnormal analysis
 * of the hydraulic constants goes (RAIN >= 2^-30). */
#define WG_REGION_SIZE_MAX 1048577u
#define WG_EROSION_MAX 10000u
#define WG_HYDRAULIC_MAX 100000u
#define WG_SEA_DEFAULT 0.25f

/* One world: everything that decides its fields. */
typedef struct wg_world {
    uint32_t size;    /* N: vertices per side, WG_SIZE_MIN..WG_SIZE_MAX
                         (WG_REGION_SIZE_MAX when a region is made) */
    uint32_t octaves; /* 1..WG_MAX_OCTAVES */
    uint32_t passes;  /* erosion passes, 0..WG_EROSION_MAX */
    uint32_t steps;   /* hydraulic steps, 0..WG_HYDRAULIC_MAX */
    float sea;        /* sea level, a height in [0, 1] */
    uint64_t seed;
} wg_world;

/* The host constants of SPEC.md's hydraulic stage (stage 3), binary32. */
typedef struct wg_hyd_consts {
    float sea;    /* SEA: the sea level */
    float slope_d; /* GD: a corner's drop counts 1/sqrt(2) (one cell apart on
                      the diagonal is sqrt(2) cells) */
    float kf;     /* KF: the share of the steepest drop that water may level
                     in a step (at most 1/2: more overshoots) */
    float f_max;  /* FMAX: the most of its water a cell sends out a step */
    float rain;   /* RAIN: water added to every cell each step */
    float keep;   /* KEEP: the share of water left after evaporation */
    float kc;     /* KC: sediment capacity per unit of discharge and drop */
    float ke;     /* KE: the share of the capacity deficit eroded a step */
    float kd;     /* KD: the share of the capacity excess deposited a step */
    float creep_o; /* KS: soil creep towards a side neighbour, per unit of
                      height difference */
    float creep_d; /* KS / 4: the same towards a corner neighbour */
    float ka;     /* KA: the weight of a step in the water's running mean */
    float eps;    /* EPS: magnitudes below this are flushed to zero */
} wg_hyd_consts;

/* The host constants of SPEC.md for one world, binary32 as the SPEC says.
 * Backends read these; none recomputes them. */
typedef struct wg_consts {
    uint32_t n;
    uint32_t octaves;
    float inv_n;    /* 1.0f / (N - 1) */
    float base;     /* BASE */
    float inv_norm; /* 1.0f / (sum of octave amplitudes) */
    float talus;    /* T = 4.0f / (N - 1) */
    float rate;     /* C */
    float k1;       /* HEIGHT / S, for the clamped edge rows and columns */
    float k2;       /* HEIGHT / (2 * S), for interior cells */
    wg_hyd_consts hyd; /* stage 3, hydraulic */
    float freq[WG_MAX_OCTAVES]; /* 2^o, exact */
    float amp[WG_MAX_OCTAVES];  /* 2^-o, exact */
    float offs[WG_MAX_OCTAVES]; /* (float)(o * 17) */
    float cos[WG_MAX_OCTAVES];  /* the octave turn table of SPEC.md */
    float sin[WG_MAX_OCTAVES];
} wg_consts;

/* A rectangle of a world's grid, in world cell coordinates. */
typedef struct wg_rect {
    uint32_t x, y, w, h;
} wg_rect;

/* A field, or the part of one that covers 'r': r.w * r.h floats, row-major,
 * row stride r.w.  Cell (x, y) of the world is p[(y - r.y) * r.w + (x - r.x)].
 * Stage functions read and write through views so that a tile of a huge
 * world can be computed with only its neighbourhood in memory. */
typedef struct wg_view {
    float *p;
    wg_rect r;
} wg_view;

/* Fill 'c' from 'w'.  This function can't fail ('w' must be valid). */
void wg_consts_init(wg_consts *c, const wg_world *w);

/* Stage 3's EPS: magnitudes below it are flushed to zero (SPEC.md). */
#define WG_HYD_EPS 0x1p-40f

/* SPEC.md's SEA of the sea level v: v flushed as the stage's values are
 * (-0 and any magnitude below EPS are +0).  The constants and the command
 * line both take it, so the JSON and the renderer use the fields' SEA. */
float wg_sea_of(float v);

/* Fill 'h' (stage 3's constants) from 'w'; wg_consts_init() calls it.
 * This function can't fail. */
void wg_hyd_init(wg_hyd_consts *h, const wg_world *w);

/* The thermal passes and hydraulic steps that an N-sided world runs when
 * the command line names no count: the counts that make the same landscape
 * at every resolution (SPEC.md, "Defaults in world terms").  These
 * functions can't fail. */
uint32_t wg_default_passes(uint32_t n);
uint32_t wg_default_steps(uint32_t n);

/* Fill lat[0 .. R*R-1] from 'seed' with splitmix64, as SPEC.md says.
 * This function can't fail. */
void wg_lattice_fill(float *lat, uint64_t seed);

/* The whole-world rectangle of an N-sided grid. */
static inline wg_rect wg_rect_world(uint32_t n)
{
    wg_rect r = {0, 0, n, n};
    return r;
}

/* Cells of an N-sided world, as size_t (N*N does not fit in 32 bits). */
static inline size_t wg_cells(uint32_t n)
{
    return (size_t)n * (size_t)n;
}

/* Cells of a rectangle, as size_t. */
static inline size_t wg_rect_cells(wg_rect r)
{
    return (size_t)r.w * (size_t)r.h;
}

static inline int wg_rect_equal(wg_rect a, wg_rect b)
{
    return a.x == b.x && a.y == b.y && a.w == b.w && a.h == b.h;
}

/* r grown by g cells on every side, cut at the N-sided world's border. */
static inline wg_rect wg_rect_grow(wg_rect r, uint32_t g, uint32_t n)
{
    uint64_t x1 = (uint64_t)r.x + r.w + g, y1 = (uint64_t)r.y + r.h + g;
    uint32_t x0 = r.x > g ? r.x - g : 0, y0 = r.y > g ? r.y - g : 0;
    wg_rect o = {x0, y0, (uint32_t)(x1 < n ? x1 : n) - x0,
                 (uint32_t)(y1 < n ? y1 : n) - y0};
    return o;
}

/* SPEC.md "Windows and tiles": how many cells beyond a window's edge the
 * whole pipeline reads, terrain to normals: one a thermal pass, two a
 * hydraulic step, one for the normals. */
static inline uint32_t wg_halo(const wg_world *w)
{
    return w->passes + 2u * w->steps + 1u;
}

#endif
