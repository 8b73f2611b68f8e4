/* render.h: the software renderer: an orbit camera, a Z-buffer rasteriser
 * over the height field's mesh, materials and light measured on the field.
 *
 * The picture is made a strip of rows at a time, in two steps over a
 * "visibility buffer" (render.c):
 *
 *   1. raster.c draws every triangle of the closed terrain block (the height
 *      field, four side skirts and a floor) that reaches the strip into one
 *      64-bit key per sample: depth in the high bits, then a back-face
 *      flag, then the triangle's id.  The nearest is the smallest key,
 *      whatever the order of drawing.
 *   2. shade.c turns each pixel's keys into a colour: the id names the
 *      triangle, the pixel's ray meets it, the field's normal, height and
 *      sun shadow are interpolated there (barycentric, from the vertices)
 *      and shaded once per pixel, once per triangle seen only on
 *      silhouettes.  Shading costs per pixel, not per triangle: a 4096 grid
 *      shades no more than a 64 one, and a 64 one is as smooth.
 *
 * Measured on the 2-core CI machine (AMD EPYC VM, gcc -O2), fresh runs of
 * ./worldgen, median of 11, --size 512 at 800x600 --aa 2: rasterise 17 ms
 * and shade 20 ms on 2 threads (31 + 34 ms on one); --size 4096: 0.35 s
 * and 0.25 s.  At 512 a triangle covers about three samples, so setup
 * (projection, bounding box, edge functions: 60%) costs more than filling
 * them (40%); shading is mostly the ray-triangle hit and the field's
 * interpolation.
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

/* An orbit camera around the point (0, look, 0). */
typedef struct wg_camera {
    float azimuth;   /* compass bearing of the camera from the centre */
    float elevation; /* above the horizontal plane through the look point;
                        negative looks up from below */
    float distance;  /* from the look point, in world units */
    float fov;       /* vertical field of view */
    float look;      /* height of the point looked at */
} wg_camera;

/* Everything a picture depends on besides the field. */
typedef struct wg_render_opts {
    uint32_t width, height; /* pixels */
    uint32_t aa;            /* aa x aa samples per pixel, 1..WG_RENDER_AA_MAX */
    wg_camera cam;
    float sun_azimuth, sun_elevation;
    int cull; /* skip back faces; the picture is the same either way */
    uint32_t threads; /* 0: one per CPU (at most WG_THREADS_MAX); the
                         picture is the same for any number */
} wg_render_opts;

/* The defaults: the whole terrain framed at 800x600 from the south-west,
 * lit by a low sun from the west-north-west. */
extern const wg_render_opts wg_render_defaults;

/* An 8-bit sRGB picture, rows top to bottom, 3 bytes a pixel. */
typedef struct wg_image {
    uint32_t w, h;
    uint8_t *rgb;
} wg_image;

/* What one render measured. */
typedef struct wg_render_stats {
    double raster; /* seconds: projection, triangle setup and fill */
    double shade;  /* seconds: shadows, shading and the resolve */
    uint64_t triangles, drawn; /* submitted; not culled and not degenerate */
    uint32_t threads;          /* that shaded (and at most that rasterised) */
} wg_render_stats;

/* Render the field f, with its measured heights st, into img (which the
 * caller frees with wg_image_free()).  Returns 0, or -1 with the reason in
 * err[WG_ERR_LEN] (out of memory); img then holds nothing. */
int wg_render(const wg_fields *f, const wg_height_stats *st,
              const wg_render_opts *o, wg_image *img, wg_render_stats *rs,
              char *err);

/* Free the pixels.  No operation is performed if img->rgb is NULL. */
void wg_image_free(wg_image *img);

/* The render options as command-line options that make the same picture
 * again ("--width 800 --height 600 --aa 2 --azimuth 35 ..."), every number
 * in the shortest form that reads back to the same float. */
void wg_render_describe(const wg_render_opts *o, char *buf, size_t len);

/* ---- camera.c: the orbit camera and the perspective projection ---- */

/* A camera made ready for one picture of w x h samples. */
typedef struct wg_eye {
    float pos[3];
    float right[3], up[3], fwd[3]; /* orthonormal, right-handed with -fwd */
    float focal;                   /* samples per unit of x/z at depth 1 */
    float cx, cy;                  /* the centre of the picture, in samples */
    float near;                    /* nearest depth drawn */
    uint32_t w, h;                 /* samples */
} wg_eye;

/* Make the view of camera c for a picture of w x h samples.  This function
 * can't fail: the CLI keeps elevation within (-90, 90). */
void wg_eye_make(wg_eye *v, const wg_camera *c, uint32_t w, uint32_t h);

/* A world point in camera space: x right, y up, z the depth ahead. */
void wg_eye_to_camera(const wg_eye *v, const float p[3], float out[3]);

/* The direction (not normalised, z component 1 in camera space) of the ray
 * through the sample position (sx, sy), y down, in world coordinates. */
void wg_eye_ray(const wg_eye *v, float sx, float sy, float dir[3]);

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

/* The closed block the rasteriser draws.  Surface triangles come first,
 * two per cell; then the skirts' and the floor's.  ids below
 * wg_block_surface() are cells: id/2 is y*(N-1)+x, id%2 the half. */
uint64_t wg_block_surface(uint32_t n); /* 2(N-1)^2 */
uint64_t wg_block_skirts(uint32_t n);  /* first floor id: + 8(N-1) */
uint64_t wg_block_triangles(uint32_t n); /* all: + 4(N-1) */

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

/* The three world-space corners of triangle 'id' of the block of heights h
 * (N-sided), in the winding that faces out of the block (counter-clockwise
 * seen from outside). */
void wg_block_triangle(const float *h, uint32_t n, uint64_t id, float p[3][3]);

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

/* The block's triangles in pieces, each with the sample rows it can cover:
 * squares of WG_PIECE_CELLS cells of the surface, and runs as long of the
 * skirts and of the floor.  A strip draws only the pieces that reach it. */
#define WG_PIECE_CELLS 16
enum { WG_PIECE_SURFACE, WG_PIECE_SKIRT, WG_PIECE_FLOOR };
typedef struct wg_piece {
    uint32_t kind;
    uint32_t a, b;      /* surface: first column, row; else side, first step */
    int32_t ymin, ymax; /* sample rows it can cover, conservatively */
} wg_piece;

typedef struct wg_plan {
    wg_piece *pieces;
    size_t count;
} wg_plan;

/* Cut the block of the N-sided heights h into pieces for view v, leaving
 * out those wholly outside the picture.  Returns 0, or -1 when out of
 * memory. */
int wg_plan_make(wg_plan *pl, const wg_eye *v, const float *h, uint32_t n);
void wg_plan_free(wg_plan *pl);

/* Draw every triangle of the plan that can reach t's rows.  Returns how
 * many were drawn and first drawn in this strip. */
uint64_t wg_raster_strip(const wg_target *t, const wg_eye *v,
                         const wg_plan *pl, const float *h, uint32_t n,
                         int cull);

/* ---- shade.c: materials, light, sky ---- */

/* Linear RGB. */
typedef struct wg_rgb {
    float r, g, b;
} wg_rgb;

/* The palette of one field: material boundaries at its measured 15th, 50th
 * and 85th height percentiles, and the light. */
typedef struct wg_palette {
    float bound[3]; /* p15, p50, p85 */
    float blend;    /* half-width of the band each boundary is blended over */
    float sun[3];   /* unit vector toward the sun */
    float sun_elevation;
    wg_rgb mat[4];  /* sand, grass, forest, snow: below p15 .. above p85 */
    wg_rgb rock, soil;
    wg_rgb zenith, horizon, glow; /* the sky */
    float haze_start;   /* distance where haze begins (the caller sets it) */
    float haze_density; /* per unit of distance beyond haze_start */
} wg_palette;

void wg_palette_make(wg_palette *p, const wg_height_stats *st, float sun_az,
                     float sun_el);

/* Hermite smoothstep of t clamped to [0, 1]. */
float wg_smoothstep(float t);

/* The bare colour of ground at height h whose normal has vertical part ny:
 * sand, grass, forest, snow by the percentiles, blended; rock where steep. */
wg_rgb wg_albedo(const wg_palette *p, float h, float ny);

/* Sun (Lambert, times the unshadowed fraction 'lit') plus cool sky fill on
 * a surface of colour c with unit normal n. */
wg_rgb wg_light(const wg_palette *p, wg_rgb c, const float n[3], float lit);

/* The sky seen along the unit direction d: deep overhead, pale at the
 * horizon, warm around the sun. */
wg_rgb wg_sky(const wg_palette *p, const float d[3]);

/* How much of the sun reaches each vertex of the field, 0 (none) to 255
 * (all), in one sweep across the grid from the sun's side: lit[N*N].
 * Returns 0, or -1 when out of memory. */
int wg_shadow_sweep(const wg_palette *p, const float *h, uint32_t n,
                    uint8_t *lit);

/* Linear 0..1 to 8-bit sRGB. */
uint8_t wg_srgb8(float linear);

/* Everything the resolve needs that does not change from strip to strip:
 * the scene, and the sky evaluated on a grid.  NULL when out of memory. */
typedef struct wg_shader wg_shader;
wg_shader *wg_shader_new(const wg_palette *p, const wg_eye *v,
                         const wg_fields *f, const uint8_t *lit, uint32_t aa,
                         uint32_t w, uint32_t h);
void wg_shader_free(wg_shader *s);

/* Turn the keys of t (aa x aa samples per pixel) into the pixels of rows
 * [py0, py1) of img; t must hold sample rows py0*aa to py1*aa. */
void wg_shade_rows(const wg_shader *s, const wg_target *t, uint32_t py0,
                   uint32_t py1, wg_image *img);

/* ---- render.c ---- */

/* Run fn(ctx, part) for part = 0 .. parts-1, each on its own thread (part
 * 0 on the caller's), and return when all are done.  This function can't
 * fail: a part whose thread cannot be started runs on the caller's. */
#define WG_THREADS_MAX 64
void wg_parallel(uint32_t parts, void (*fn)(void *ctx, uint32_t part),
                 void *ctx);

#endif
