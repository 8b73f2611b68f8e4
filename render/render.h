/* render.h: the software renderer: an orbit camera, a Z-buffer rasteriser
 * over the height field's mesh, materials from what shaped the ground, water,
 * and light; or a map of the world seen straight down.
 *
 * The picture is made a strip of rows at a time, in two steps over a
 * "visibility buffer" (render.c):
 *
 *   1. raster.c draws every triangle of the closed terrain block (its top
 *      the ground; four side skirts and a floor) and of the water's
 *      surface over it that reaches the strip into one 64-bit key per
 *      sample: depth in the high bits, then a back-face flag, then the
 *      triangle's id.  The nearest is the smallest key, whatever the
 *      order of drawing.
 *   2. shade.c turns each pixel's keys into a colour: the id names the
 *      triangle, the pixel's ray meets it, the fields (ground height,
 *      water, sediment, normal) and the sun's shadow are interpolated there
 *      (barycentric, from the vertices), the ground's material is made
 *      from them (material.c); where the water's surface is nearest, the
 *      ground under it is seen through the water; once per pixel, once
 *      per triangle seen only on silhouettes and shorelines.  Shading
 *      costs per pixel, not per triangle: a 4096
 *      grid shades no more than a 64 one, and a 64 one is as smooth.
 *
 * The map (WG_VIEW_MAP) needs neither: seen straight down, a height field
 * shows one point of its surface at every (X, Z), so each sample of the
 * map is shaded where it falls (shade.c's wg_map_rows), from the same
 * fields, materials, water and sun as step 2 (no haze, no sky).  At
 * --size 512, 800x600, on 2 threads of the loaded CI machine: 39 ms at
 * --aa 1 and 126 ms at --aa 2 (every sample shaded where a pixel is not
 * much smaller than a cell), against 62 ms for the orbit view then.
 *
 * The water is a surface of its own, drawn with the ground in one depth
 * test: over a wet vertex it stands at the water's surface, and at a dry
 * vertex beside one it is held at the water's level or under the ground
 * (wg_water_levels, wg_shore_level), so the two surfaces cross where the
 * water meets the land and the shoreline is their intersection, a line
 * that follows the ground's contour at the water's level, or crosses the
 * cells' edges three quarters of the way from the water beside a river
 * running down.  (It had been drawn
 * on the ground's one surface, height + water, which at a shore cell ran
 * from the water's level up to the dry vertex's ground: sawtooth shores
 * close up, and tilted sheets of water on small grids.)  The whole stays
 * closed: the water's edge lies at or under the ground, and where it
 * reaches the block's border, sides of its own run down from it to the
 * ground's edge, the skirts' top, sharing both edges; so the sheet's
 * underside is never seen and --no-cull stays byte-identical.  Where a
 * cell's water is at or above the ground at every corner, the ground
 * under it is not drawn (WG_CELL_*).
 *
 * Measured on the 2-core CI machine (AMD EPYC VM, gcc -O2), fresh runs of
 * ./worldgen, median of 11, --size 512 at 800x600 --aa 2: rasterise 17 ms
 * and shade 20 ms on 2 threads (31 + 34 ms on one); --size 4096: 0.35 s
 * and 0.25 s.  At 512 a triangle covers about three samples, so setup
 * (projection, bounding box, edge functions: 60%) costs more than filling
 * them (40%); shading is mostly the ray-triangle hit and the field's
 * interpolation.  (Since: cells with no sample centre skipped before
 * setup, wide boxes filled by runs, strips handed out to whichever thread
 * is free, the shadow sweep beside the sky grid, the resolve unrolled per
 * --aa: 22 + 33 ms against 26 + 41 ms for the same runs before, the
 * machine loaded 4 on its 2 cores; the picture unchanged to the byte.)
 * The materials of material.c and the water made shading a third dearer
 * (29 to 40 ms on 2 threads at 512, the two renderers run in turn on the
 * same fields on the shared machine): two lookups of value noise and a
 * dozen blends a pixel, the water's optics, and the pass that makes the
 * surface.  Then, the picture unchanged to the byte (twenty views, sizes
 * 64 to 4096, suns from every quarter): the sky's pixels told from the AND
 * of their keys, the triangles' edge functions kept in registers, wide
 * boxes' bounds walked down their rows, a cell's box from columns shared
 * with the next cell, the fields' interpolation inlined and the sides
 * shaded from the two fields they read; the shadow sweep in bands of rows
 * at large sizes (on one thread, while the others waited), the plan made
 * beside it, the surface's pass testing the wet pairs at once.  At 512,
 * 695 to 622 million instructions a render (valgrind, one thread);
 * rasterise plus shade, the two builds in turn 21 times (three renders
 * each, in one process) on the machine loaded 3 on its 2 cores: medians
 * 64 to 58 ms on 2 threads, 119 to 102 ms on one (fresh runs of ./worldgen
 * varied too much there to tell 10%).  --size 4096 --hydraulic 0
 * --erosion 0, fresh runs, median of 5: 1.28 to 0.89 s, and 1.30 to 1.05
 * s in another round.
 *
 * World coordinates are those of SPEC.md: vertex (x, y) of an N-sided grid
 * stands at X = -3 + x*S, Y = h, Z = -3 + y*S, S = 6/(N-1), Y up.  Angles
 * are in degrees.  An azimuth is a compass bearing seen from above with
 * north = -Z (grid row 0, the top of a height map) and east = +X: 0 puts
 * the camera (or the sun) north of the terrain, 90 east, 180 south. */
#ifndef WG_RENDER_H
#define WG_RENDER_H

#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"
#include "stats.h"

/* Option ranges, shared by the CLI's checks and its --help. */
#define WG_RENDER_SIDE_MIN 16
#define WG_RENDER_SIDE_MAX 16384
#define WG_RENDER_AA_MAX 4
/* The camera's and the sun's, in degrees and world units: the CLI's
 * checks and the --show window's controls keep to them. */
#define WG_CAMERA_ELEVATION_MAX 89.0 /* |--elevation| */
#define WG_CAMERA_DISTANCE_MIN 0.1
#define WG_CAMERA_DISTANCE_MAX 1000.0
#define WG_AZIMUTH_MAX 360.0       /* |--azimuth|, |--sun-azimuth| */
#define WG_SUN_ELEVATION_MAX 90.0  /* |--sun-elevation| */

/* An orbit camera around the point (0, look, 0). */
typedef struct wg_camera {
    float azimuth;   /* compass bearing of the camera from the centre */
    float elevation; /* above the horizontal plane through the look point;
                        negative looks up from below */
    float distance;  /* from the look point, in world units */
    float fov;       /* vertical field of view */
    float look;      /* height of the point looked at */
} wg_camera;

/* What the picture shows. */
typedef enum wg_render_view {
    /* The closed block in perspective from the orbit camera, under the
     * sky. */
    WG_VIEW_ORBIT = 0,
    /* A map: the whole world seen straight down (orthographic), north
     * (-Z, grid row 0) up and east (+X) right.  The world's 6 x 6 units
     * fill a square of side = min(width, height) pixels from column
     * (width - side) / 2 and row (height - side) / 2 (rounded down); the
     * rest is WG_MAP_BACKGROUND.  Hillshade (the sun, its cast shadows,
     * the sky's fill), the materials and the water of the orbit view.
     * The camera (cam) and cull do not apply. */
    WG_VIEW_MAP,
} wg_render_view;

/* The map's margins, where the picture is not square: sRGB. */
#define WG_MAP_BACKGROUND {40, 42, 46}

/* Everything a picture depends on besides the field. */
typedef struct wg_render_opts {
    uint32_t width, height; /* pixels */
    uint32_t aa;            /* aa x aa samples per pixel, 1..WG_RENDER_AA_MAX */
    wg_camera cam;
    float sun_azimuth, sun_elevation;
    int cull; /* skip back faces; the picture is the same either way */
    uint32_t threads; /* 0: one per CPU; at most one per CPU, and no more
                         than the picture has strips of rows to share
                         out; the picture is the same for any number */
    wg_render_view view; /* WG_VIEW_ORBIT (the default) or WG_VIEW_MAP */
} wg_render_opts;

/* A view's name ("orbit", "map"), and back: 0, or -1 if s names none. */
const char *wg_render_view_name(wg_render_view v);
int wg_render_view_parse(const char *s, wg_render_view *out);

/* The defaults: the whole terrain framed at 800x600 from the south-west,
 * lit by a low sun from the west-north-west. */
extern const wg_render_opts wg_render_defaults;

/* An 8-bit sRGB picture, rows top to bottom, 3 bytes a pixel. */
typedef struct wg_image {
    uint32_t w, h;
    uint8_t *rgb;
} wg_image;

/* What one render measured.  A map draws no triangles: raster, triangles
 * and drawn are 0. */
typedef struct wg_render_stats {
    double raster; /* seconds: projection, triangle setup and fill */
    double shade;  /* seconds: shadows, shading and the resolve */
    /* Submitted (the block's, and the water's over wet cells: its sides
     * at the border are drawn but not counted here); not culled and not
     * degenerate. */
    uint64_t triangles, drawn;
    uint32_t threads;          /* that shaded (and at most that rasterised) */
    double memory; /* bytes the render had allocated at its peak, the
                      picture included (wg_render_memory predicts it) */
    /* The orbit view's camera is inside the block: over its footprint,
     * under the surface drawn (at surface_y: the ground, or the water's
     * surface on it) and above its floor; camera_in_water if it is above
     * the ground there, under the water.  camera_near: over the footprint
     * and over the surface, but by less than the depth the rasteriser
     * clips at (wg_eye.near), so the surface close by may be cut away. */
    int camera_inside, camera_in_water, camera_near;
    float camera_y, surface_y;
} wg_render_stats;

/* Render the fields f of a world whose sea stands at height 'sea' into img
 * (which the caller frees with wg_image_free()).  Returns 0, or -1 with the
 * reason in err[WG_ERR_LEN] (out of memory); img then holds nothing. */
int wg_render(const wg_fields *f, float sea, const wg_render_opts *o,
              wg_image *img, wg_render_stats *rs, char *err);

/* Free the pixels.  No operation is performed if img->rgb is NULL. */
void wg_image_free(wg_image *img);

/* The bytes wg_render(f, .., o, ..) will have allocated at its peak for a
 * world of n-sided fields: the picture, the strips' keys, the shadow map,
 * the surface, the rasteriser's plan and the shader's sky (threads' stacks
 * and the caller's fields not counted).  It depends on the number of CPUs
 * here as the render does.  This function can't fail. */
double wg_render_memory(const wg_render_opts *o, uint32_t n);

/* The render options as command-line options that make the same picture
 * again ("--width 800 --height 600 --aa 2 --azimuth 35 ..."), every number
 * in the shortest form that reads back to the same float.  A map is
 * "--view map --width .. --height .. --aa .. --sun-azimuth ..
 * --sun-elevation ..": the camera does not change it. */
void wg_render_describe(const wg_render_opts *o, char *buf, size_t len);

/* v in the shortest form (%g, 6 to 9 digits) that reads back to the same
 * float, as wg_render_describe writes its numbers. */
void wg_float_text(char *buf, size_t len, float v);

/* ---- camera.c: the orbit camera and the perspective projection ---- */

/* A camera made ready for one picture of w x h samples. */
typedef struct wg_eye {
    float pos[3];
    float right[3], up[3], fwd[3]; /* orthonormal, right-handed with -fwd */
    float focal;                   /* samples per unit of x/z at depth 1 */
    float cx, cy;                  /* the centre of the picture, in samples */
    float near;                    /* nearest depth drawn: WG_EYE_NEAR */
    uint32_t w, h;                 /* samples */
} wg_eye;

/* The nearest depth drawn, in world units: a millimetre in a six-metre
 * world.  A camera nearer the surface than this sees it cut away. */
#define WG_EYE_NEAR 1e-3f

/* Make the view of camera c for a picture of w x h samples.  This function
 * can't fail: the CLI keeps elevation within (-90, 90). */
void wg_eye_make(wg_eye *v, const wg_camera *c, uint32_t w, uint32_t h);

/* The tangent of half a vertical field of view of fov degrees: the
 * picture's half-height at a distance of one.  This function can't fail. */
double wg_camera_half_tan(float fov);

/* The least distance at which camera c (its own distance aside) sees the
 * whole box lo..hi (world coordinates) inside a w x h picture, each side
 * of the frame kept 'margin' (a share of the half-frame, 0..1) clear.
 * This function can't fail. */
float wg_camera_fit(const wg_camera *c, uint32_t w, uint32_t h,
                    const float lo[3], const float hi[3], float margin);

/* A world point in camera space: x right, y up, z the depth ahead. */
void wg_eye_to_camera(const wg_eye *v, const float p[3], float out[3]);

/* The direction (not normalised, z component 1 in camera space) of the ray
 * through the sample position (sx, sy), y down, in world coordinates.
 * Inline: the shading asks it of every point it shades. */
static inline void wg_eye_ray(const wg_eye *v, float sx, float sy,
                              float dir[3])
{
    float x = (sx - v->cx) / v->focal, y = (v->cy - sy) / v->focal;
    for (int i = 0; i < 3; i++)
        dir[i] = v->fwd[i] + x * v->right[i] + y * v->up[i];
}

/* Unit vector toward a light at compass bearing az, elevation el. */
void wg_direction(float az, float el, float out[3]);

/* ---- raster.c: the visibility buffer ---- */

#define WG_KEY_EMPTY UINT64_MAX /* a sample no triangle covers: sky */

/* Fixed point: screen positions carry 8 bits below the sample. */
#define WG_SUBPIXEL_BITS 8

/* A vertex after projection: its snapped position in 1/256 sample, and
 * 1/depth, which is affine in screen space. */
typedef struct wg_svert {
    int32_t x, y;
    float iw;
} wg_svert;

/* What the rasteriser draws: the closed block of the ground, and the
 * water over it.  The block's surface triangles come first, two per cell;
 * then the skirts' and the floor's; then the water's surface, two per cell
 * in the block's order (water id wg_block_water() + k over the block's
 * surface triangle k), then its sides, two per border step, from its
 * surface down to the ground where it stands at the border.  ids below
 * wg_block_surface() are cells: id/2 is y*(N-1)+x, id%2 the half. */
uint64_t wg_block_surface(uint32_t n); /* 2(N-1)^2 */
uint64_t wg_block_skirts(uint32_t n);  /* first floor id: + 8(N-1) */
uint64_t wg_block_triangles(uint32_t n); /* the block's: + 4(N-1) */
uint64_t wg_block_water(uint32_t n);     /* first water id: the same */
uint64_t wg_block_water_sides(uint32_t n); /* + 2(N-1)^2 */
uint64_t wg_block_all(uint32_t n);         /* + 8(N-1): every id */

/* The heights the block and the water stand on, n x n each, row-major:
 * 'ground' the block's top, 'level' the water's surface
 * (wg_water_levels), and 'top' the ground with the water shown on it
 * (wg_water_shown), which the materials and the shadows read. */
typedef struct wg_block {
    const float *ground, *top, *level;
    uint32_t n;
} wg_block;

/* What is drawn over a cell (wg_plan.cells): WG_CELL_WATER, the water's
 * surface, where a corner has water over it (its level above the ground);
 * WG_CELL_GROUND, the ground, where no corner has, or where a corner's
 * level is under the ground (a bank the water's surface runs into).  Where
 * every corner's level is at or above the ground, so is the water's
 * surface everywhere over the cell (the two are planes over the same
 * triangles), and the ground under it is not drawn: the sea's floor, and
 * a river running down a slope. */
enum { WG_CELL_WATER = 1, WG_CELL_GROUND = 2 };

/* The grid spacing S and the world coordinate of grid line i, as SPEC.md
 * places vertices: every part of the renderer and the OBJ writer computes
 * positions through these, so a vertex shared by two parts is the same
 * float in both. */
static inline float wg_block_spacing(uint32_t n)
{
    return 6.0f / (float)(n - 1);
}
static inline float wg_block_coord(uint32_t i, float spacing)
{
    return -3.0f + (float)i * spacing;
}

/* Height of the block's floor, below every field height. */
#define WG_BLOCK_FLOOR (-0.12f)

/* The three world-space corners of triangle 'id' of b, in the winding
 * that faces out of the block (counter-clockwise seen from outside; the
 * water's, from above). */
void wg_block_triangle(const wg_block *b, uint64_t id, float p[3][3]);

/* The key of a sample covered by triangle id at inverse depth iw.  Nearer
 * is smaller; on equal depth a front face wins, then the lower id. */
uint64_t wg_key_make(float iw, int back, uint64_t id);
static inline uint64_t wg_key_id(uint64_t key)
{
    return key & ((UINT64_C(1) << 35) - 1);
}

/* Where triangles are drawn: the keys of sample rows [y0, y1) of a picture
 * of w x h samples, row y at keys + (y - y0) * w.  The picture is drawn a
 * strip of rows at a time, so the keys stay small (and in cache) whatever
 * the picture's size. */
typedef struct wg_target {
    uint64_t *keys;
    uint32_t w, h, y0, y1;
} wg_target;

/* Rasterise one triangle into t, the coverage test following the sign of
 * its screen area, decided once: a front face (counter-clockwise seen from
 * the camera) has negative area, because the screen's y runs down.  Back
 * faces are skipped when cull is set; zero-area triangles always.  Returns
 * 1 if the triangle was drawn and t holds the first sample row it touches
 * (so a triangle drawn across several strips counts once), else 0. */
int wg_raster_triangle(const wg_target *t, const wg_svert *a,
                       const wg_svert *b, const wg_svert *c, uint64_t id,
                       int cull);

/* The triangles in pieces, each with the sample rows it can cover:
 * squares of WG_PIECE_CELLS cells of the surface (the ground and the water
 * over it), and runs as long of the skirts, of the floor and of the
 * water's sides (where it has any).  A strip draws only the pieces that
 * reach it. */
#define WG_PIECE_CELLS 16
enum {
    WG_PIECE_SURFACE,
    WG_PIECE_SKIRT,
    WG_PIECE_FLOOR,
    WG_PIECE_WATER_SIDE
};
typedef struct wg_piece {
    uint32_t kind;
    uint32_t a, b;      /* surface: first column, row; else side, first step */
    uint32_t ea, eb;    /* surface: last column, row (vertices) */
    int mixed;          /* surface: has water, so wg_plan.cells decides */
    int32_t ymin, ymax; /* sample rows it can cover, conservatively */
} wg_piece;

typedef struct wg_plan {
    wg_piece *pieces;
    size_t count;
    /* What each cell of a square with water draws (WG_CELL_*), cell
     * (x, y) at y*(N-1)+x; the others' are not written. */
    uint8_t *cells;
} wg_plan;

/* Cut b into pieces for view v, leaving out those wholly outside the
 * picture and the water's sides where it has none.  Returns 0, or -1 when
 * out of memory. */
int wg_plan_make(wg_plan *pl, const wg_eye *v, const wg_block *b);
/* wg_plan_make in two: the allocation (0, or -1 when out of memory), on
 * the thread that counts the render's memory, and the cutting, which can
 * then run on another (render.c runs it beside the shadows' sweep). */
int wg_plan_alloc(wg_plan *pl, uint32_t n);
void wg_plan_fill(wg_plan *pl, const wg_eye *v, const wg_block *b);
void wg_plan_free(wg_plan *pl);
/* The bytes wg_plan_make allocates for an N-sided block. */
size_t wg_plan_bytes(uint32_t n);

/* Draw every triangle of the plan that can reach t's rows.  Returns how
 * many were drawn and first drawn in this strip. */
uint64_t wg_raster_strip(const wg_target *t, const wg_eye *v,
                         const wg_plan *pl, const wg_block *b, int cull);

/* Linear RGB. */
typedef struct wg_rgb {
    float r, g, b;
} wg_rgb;

/* a at t = 0 and b at t = 1, exactly. */
static inline wg_rgb wg_mix(wg_rgb a, wg_rgb b, float t)
{
    float s = 1.0f - t;
    wg_rgb c = {a.r * s + b.r * t, a.g * s + b.g * t, a.b * s + b.b * t};
    return c;
}

/* An sRGB colour as a painter picks it (0..255 a channel), in linear RGB. */
wg_rgb wg_from_srgb(float r, float g, float b);

/* ---- material.c: what the ground is made of ---- */

/* What the materials read at one point of the ground: values of that point
 * alone (interpolated from its triangle's vertices), never a statistic of
 * the whole field, so a tile of a world is coloured as the whole world is
 * there, and a preview as the full-size world at the vertices they share. */
typedef struct wg_ground {
    float x, z;     /* world position, SPEC coordinates */
    float h;        /* ground height */
    float water;    /* water depth over the ground */
    float sediment; /* net height laid down (+) or carried away (-) */
    float n[3];     /* the ground's unit normal */
} wg_ground;

/* The materials' colours (linear) and the one number of the world they
 * depend on: the sea level. */
typedef struct wg_materials {
    float sea;
    float inv_span; /* 1 / (1 - sea): altitude 0 at the sea, 1 at height 1 */
    wg_rgb sand, silt, soil, gravel, meadow, grass, forest, heath, rock, snow;
} wg_materials;

/* Fill m for a world whose sea stands at 'sea' (0..1).  This function
 * can't fail. */
void wg_materials_make(wg_materials *m, float sea);

/* The water below which the materials see dry ground: the rain's film on
 * a slope is thinner (wg_albedo). */
#define WG_WATER_DAMP 2e-4f

/* The bare colour (no light) of the ground g: sand on the beach and the
 * seabed, grass and forest by altitude above the sea and slope, alpine
 * heath higher up, rock where steep, snow high up and on slopes facing
 * north (none on cliffs), deposited sediment as sand and soil, carved wet
 * riverbeds as gravel, wet ground darker; every boundary blended and moved
 * a little by noise of the world position, so no contour lines show. */
wg_rgb wg_albedo(const wg_materials *m, const wg_ground *g);

/* Tilt the unit normal n of the ground g by its relief finer than the grid
 * (two octaves of noise of the world position, rougher on steep ground,
 * none under 'depth' of water over 0.002), for the light to see: the mesh
 * holds only what the grid does, and the erosion and the creep leave
 * little of the finest octaves, so without it the ground read as smooth
 * as clay.  'foot' is the world units a pixel spans there: an octave
 * fades out as it grows from a quarter to half the octave's wavelength, so
 * that a far slope or a small picture does not alias it into speckle. */
void wg_relief(const wg_ground *g, float depth, float foot, float n[3]);

/* The wide paths: eight triangles rasterised at once (raster.c), eight
 * rays met and eight points of the ground or the water shaded at once,
 * the sun's sweep eight vertices at a time (shade.c, material.c), in AVX2
 * (wide.h), each lane's result the same to the bit as the one-at-a-time
 * code gives it.  WG_WIDE: compiled in (x86-64, gcc or clang); wg_wide(): and
 * the processor has AVX2, and WORLDGEN_WIDE is not 0 in the environment
 * (to measure the difference).  wg_wide_set(0) turns them off, 1 back to
 * that, for the tests. */
#if defined(__x86_64__) && defined(__GNUC__)
#define WG_WIDE 1
#else
#define WG_WIDE 0
#endif
int wg_wide(void);
void wg_wide_set(int on);

typedef struct wg_ground8 {
    float x[8], z[8], h[8], water[8], sediment[8], n[3][8];
} wg_ground8;
#if WG_WIDE
/* wg_albedo and wg_relief for eight grounds, lane by lane. */
void wg_albedo8(const wg_materials *m, const wg_ground8 *g, float rgb[3][8]);
void wg_relief8(const wg_ground8 *g, const float depth[8],
                const float foot[8], float n[3][8]);
#endif

/* The finest of the relief's octaves that a footprint of 'foot' still
 * shows, in cycles per world unit (0: none). */
float wg_relief_finest(float foot);

/* Value noise of the world position (x, z) on a lattice of unit spacing,
 * smooth, in [-1, 1]; the same at a position whatever the grid. */
float wg_noise(float x, float z);

/* The finest noise wg_albedo uses, in lattice cells per world unit: the
 * map shades a pixel once only where it is much smaller than that. */
#define WG_MATERIAL_GRAIN 24.0f

/* ---- shade.c: light, sky, water ---- */

/* The palette of one picture: the materials and the light. */
typedef struct wg_palette {
    wg_materials mat;
    float sun[3];   /* unit vector toward the sun */
    float sun_elevation;
    wg_rgb soil, rock; /* the block's cut sides */
    wg_rgb zenith, horizon, glow; /* the sky */
    wg_rgb sunlight;              /* the sun's light: warmer when it is low */
    float glow_gain;              /* the glow toward the sun: 1 by day */
    wg_rgb deep, shallow; /* what deep and shallow water scatter back */
    float haze_start;   /* distance where haze begins (the caller sets it) */
    float haze_density; /* per unit of distance beyond haze_start */
    int sun_in_water;   /* the water mirrors the sun (1, the default), or
                         * the sky alone (0: the map, where a sun near the
                         * zenith would shine off every lake at once) */
    /* 1 by day.  sun_light: the share of the sun's disc above the horizon
     * (0 from half a degree below it); sky_light: the sky and its fill
     * dimming through twilight, to a night's 0.08 at 10 degrees below. */
    float sun_light, sky_light;
} wg_palette;

void wg_palette_make(wg_palette *p, float sea, float sun_az, float sun_el);

/* Hermite smoothstep of t clamped to [0, 1]. */
float wg_smoothstep(float t);

/* Sun (Lambert, times the unshadowed fraction 'lit') plus cool sky fill on
 * a surface of colour c with unit normal n. */
wg_rgb wg_light(const wg_palette *p, wg_rgb c, const float n[3], float lit);

/* The sky seen along the unit direction d: deep overhead, pale at the
 * horizon, warm around the sun. */
wg_rgb wg_sky(const wg_palette *p, const float d[3]);

/* Water of depth d (height units) over a bed whose lit colour is 'bed',
 * seen along the unit direction 'dir' (from the eye), at a surface of unit
 * normal n that the sun reaches by 'lit' (0..1): the bed through the water,
 * dimmed and tinted with depth (clear, then turquoise, then deep blue),
 * the sky reflected by the Fresnel term of the view angle, and the sun's
 * glint (the sun's disc and glint only where p->sun_in_water).  Where the
 * land stands in the mirror direction, 'land' is its lit colour, which the
 * water reflects instead of the sky, and no glint; NULL: the sky. */
wg_rgb wg_water(const wg_palette *p, wg_rgb bed, float d, const float dir[3],
                const float n[3], float lit, const wg_rgb *land);

/* wg_water where the land covers a share 'cover' (0..1) of the mirror:
 * the water mirroring *land, mixed by 'cover' with the water mirroring the
 * sky (land is read only where cover > 0).  The parts both share (the bed
 * through the water, the Fresnel term) are made once. */
wg_rgb wg_water_covered(const wg_palette *p, wg_rgb bed, float d,
                        const float dir[3], const float n[3], float lit,
                        const wg_rgb *land, float cover);

/* How far each vertex of the field clears the sight line toward the sun,
 * in one sweep across the grid from the sun's side: lit[N*N], 0 deep in
 * shadow, 255 fully lit, the edge of the shadow at 2/5 and full light from
 * 3/5 (shade.c's SHADE_LIT_REACH; the shader interpolates it and takes the
 * light from it per point, so the edge runs between the vertices).
 * Returns 0, or -1 when out of memory. */
int wg_shadow_sweep(const wg_palette *p, const float *h, uint32_t n,
                    uint8_t *lit);

/* The sun's share, 0..1, at a value of wg_shadow_sweep's lit (or one
 * interpolated between vertices). */
float wg_sunlit(float lit);

/* Linear 0..1 to 8-bit sRGB. */
uint8_t wg_srgb8(float linear);

/* The map view (WG_VIEW_MAP): rows [py0, py1) of img, each pixel the
 * mean of aa x aa samples of the fields f and the water b seen straight
 * down, lit by p with the sun's share 'lit' at every vertex
 * (wg_shadow_sweep); a pixel much smaller than a cell and than the
 * materials' noise is shaded once, at its centre, unless the water's edge
 * crosses it.  This function can't fail. */
void wg_map_rows(const wg_palette *p, const wg_fields *f, const wg_block *b,
                 const uint8_t *lit, uint32_t aa, uint32_t py0, uint32_t py1,
                 wg_image *img);

/* Everything the resolve needs that does not change from strip to strip:
 * the scene (the fields, what was rasterised, b, and the sun's share 'lit'
 * at every vertex), and the sky evaluated on a grid.  NULL when out of
 * memory.  The sky is made after: wg_shader_sky(s) on one thread or
 * several at once, once per shader (each call makes rows of the sky's grid
 * that none has taken yet, until none is left, so a thread with other work
 * first, the shadow sweep or the plan, takes fewer), then
 * wg_shader_sky_done, before the first wg_shade_rows. */
typedef struct wg_shader wg_shader;
wg_shader *wg_shader_new(const wg_palette *p, const wg_eye *v,
                         const wg_fields *f, const wg_block *b,
                         const uint8_t *lit, uint32_t aa, uint32_t w,
                         uint32_t h);
void wg_shader_sky(wg_shader *s);
void wg_shader_sky_done(wg_shader *s);
void wg_shader_free(wg_shader *s);
/* The bytes wg_shader_new allocates for a w x h pixel picture. */
size_t wg_shader_bytes(uint32_t w, uint32_t h);

/* Turn the keys of t (aa x aa samples per pixel) into the pixels of rows
 * [py0, py1) of img; t must hold sample rows py0*aa to py1*aa. */
void wg_shade_rows(const wg_shader *s, const wg_target *t, uint32_t py0,
                   uint32_t py1, wg_image *img);

/* ---- render.c ---- */

/* The water the picture and the OBJ show at vertex (x, y) of f, in a
 * world whose sea stands at 'sea': under the sea, the depth to the sea
 * level (the sea is flat; the hydraulic stage lays its last sediment down
 * after the sea's water was set, up to 0.01 above the sea at 512); else
 * the water's depth, or, where the vertex lies between two wet ones on
 * opposite sides (a river one cell wide that the hydraulic stage left
 * dotted, every other cell wet), up to the lower of their surfaces.  It
 * fills such gaps and widens nothing, and it reads the vertex's eight
 * neighbours only, so a tile with a one-vertex margin shows what the whole
 * world shows.  This function can't fail. */
float wg_water_shown(const wg_fields *f, float sea, uint32_t x, uint32_t y);

/* top = height + wg_water_shown at every vertex of rows [y0, y1) of f,
 * the same bits, row by row without a call a vertex.  It reads the rows
 * next to its own, and writes only its own.  This function can't fail. */
void wg_water_tops(const wg_fields *f, float sea, uint32_t y0, uint32_t y1,
                   float *top);

/* The water's surface drawn at the vertices of rows [y0, y1) of an
 * n-sided grid, into level: where the water on a vertex is deeper than
 * WG_WATER_MIN (top - ground, top being the ground plus wg_water_shown),
 * its surface, top; at any other vertex beside such water,
 * wg_shore_level of the highest such surface among its eight neighbours
 * and their shallowest water, or its ground where no neighbour is wet or
 * the vertex is on the border.  So the
 * sheet over a wet cell meets the land at the ground's contour at the
 * water's level (as the OBJ's water does inside the border:
 * wg_obj_level), and its edge lies at or under the ground.  It
 * reads the rows next to its own, and writes only its own.  Returns the
 * number of cells with water drawn over them (WG_CELL_WATER) whose first
 * row is one of these.  This function can't fail. */
uint64_t wg_water_levels(const float *ground, const float *top, uint32_t n,
                         uint32_t y0, uint32_t y1, float *level);

/* The water's level at a dry vertex beside wet ones (wg_water_levels and
 * wg_obj_level share it): 'best' the highest surface of the wet vertices
 * around it, 'shallow' the least depth of water on them.  The sheet comes
 * down to a third of 'shallow' under the vertex's ground, so from a wet
 * neighbour of that depth it meets the ground three quarters of the way
 * along the edge between them, and the shoreline of a river running down a
 * slope crosses every edge alike (a sheet held at the dry ground met it
 * at the vertex, and the shore was a comb of points, one at each dry
 * vertex; halfway made the rivers of the default picture, a cell or two
 * wide, half as wide); a lake's or the sea's flat surface, 'best', where
 * the bank stands higher.
 * 'bridge': the vertex ends the diagonal that splits a cell into its two
 * triangles, the other end is dry too, and the cell's other two corners
 * are wet (a river a vertex wide crossing the split): there the sheet is
 * held at the ground, or the river would be beads, one round each wet
 * vertex. */
static inline float wg_shore_level(float ground, float best, float shallow,
                                   int bridge)
{
    const float under = bridge ? ground : ground - shallow * (1.0f / 3.0f);
    return best < under ? best : under;
}

/* wg_shore_level's 'bridge' from whether the vertex's neighbours are wet
 * (1) or dry (0), a neighbour outside the world dry: the split of cell
 * (x, y) runs from (x + 1, y) to (x, y + 1), as the terrain's faces, so
 * the vertex ends that of the cell to its lower left (its other corners
 * 'left' and 'below', the split's far end 'below_left') and of the one to
 * its upper right ('above' and 'right', the far end 'above_right'). */
static inline int wg_shore_bridge(int left, int below, int below_left,
                                  int above, int right, int above_right)
{
    return (left & below & !below_left) | (above & right & !above_right);
}

/* Every allocation of a render (render.c, raster.c, shade.c) but the
 * picture (which the caller frees) goes through these, which count the
 * bytes the calling thread holds, so a render can report its peak
 * (wg_render_stats.memory).  wg_render_alloc returns NULL
 * when out of memory; wg_render_free(NULL) does nothing. */
void *wg_render_alloc(size_t bytes);
void wg_render_free(void *p);

/* Run fn(ctx, part) for part = 0 .. parts-1, each on its own thread (part
 * 0 on the caller's), and return when all are done.  This function can't
 * fail: a part whose thread cannot be started runs on the caller's. */
#define WG_THREADS_MAX 64
void wg_parallel(uint32_t parts, void (*fn)(void *ctx, uint32_t part),
                 void *ctx);

#endif
