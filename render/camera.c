/* camera.c: the orbit camera and the perspective projection.
 *
 * The camera stands on a sphere around (0, look, 0) and looks at its centre
 * with world Y up.  Camera space is x right, y up, z the depth ahead; the
 * screen's y runs down, so projecting flips y, and a flip is a reflection:
 * a triangle counter-clockwise as the camera sees it arrives on the screen
 * with negative signed area (raster.c). */
#include <math.h>

#include "render.h"

static const double camera_rad = 3.14159265358979323846 / 180.0;

static void camera_normalize(float v[3])
{
    float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    v[0] /= l;
    v[1] /= l;
    v[2] /= l;
}

static void camera_cross(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

void wg_direction(float az, float el, float out[3])
{
    double a = az * camera_rad, e = el * camera_rad;
    /* Bearing 0 is north (-Z), 90 east (+X). */
    out[0] = (float)(cos(e) * sin(a));
    out[1] = (float)sin(e);
    out[2] = (float)(-cos(e) * cos(a));
}

void wg_eye_make(wg_eye *v, const wg_camera *c, uint32_t w, uint32_t h)
{
    float dir[3];
    wg_direction(c->azimuth, c->elevation, dir);
    for (int i = 0; i < 3; i++) {
        v->pos[i] = dir[i] * c->distance;
        v->fwd[i] = -dir[i];
    }
    v->pos[1] += c->look;
    const float world_up[3] = {0.0f, 1.0f, 0.0f};
    camera_cross(v->fwd, world_up, v->right);
    camera_normalize(v->right);
    camera_cross(v->right, v->fwd, v->up);
    v->w = w;
    v->h = h;
    v->cx = 0.5f * (float)w;
    v->cy = 0.5f * (float)h;
    v->focal = (float)(0.5 * h / wg_camera_half_tan(c->fov));
    /* Nothing of the terrain comes nearer than this and still matters: a
     * millimetre in a six-metre world.  Clipping there keeps every drawn
     * depth finite; raster.c's guard band keeps the positions finite. */
    v->near = WG_EYE_NEAR;
}

void wg_eye_to_camera(const wg_eye *v, const float p[3], float out[3])
{
    float d[3] = {p[0] - v->pos[0], p[1] - v->pos[1], p[2] - v->pos[2]};
    out[0] = d[0] * v->right[0] + d[1] * v->right[1] + d[2] * v->right[2];
    out[1] = d[0] * v->up[0] + d[1] * v->up[1] + d[2] * v->up[2];
    out[2] = d[0] * v->fwd[0] + d[1] * v->fwd[1] + d[2] * v->fwd[2];
}

double wg_camera_half_tan(float fov)
{
    return tan(0.5 * fov * camera_rad);
}

float wg_camera_fit(const wg_camera *c, uint32_t w, uint32_t h,
                    const float lo[3], const float hi[3], float margin)
{
    /* The camera at the look point: a corner's depth at distance D is its
     * depth here plus D, and its x and y do not change with D. */
    wg_camera at = *c;
    at.distance = 0.0f;
    wg_eye v;
    wg_eye_make(&v, &at, w, h);
    double ty = wg_camera_half_tan(c->fov) * (1.0 - margin);
    double tx = ty * (double)w / (double)h;
    double need = 0.0;
    for (int k = 0; k < 8; k++) {
        float p[3] = {k & 1 ? hi[0] : lo[0], k & 2 ? hi[1] : lo[1],
                      k & 4 ? hi[2] : lo[2]}, q[3];
        wg_eye_to_camera(&v, p, q);
        double dx = fabs((double)q[0]) / tx - (double)q[2];
        double dy = fabs((double)q[1]) / ty - (double)q[2];
        need = dx > need ? dx : need;
        need = dy > need ? dy : need;
    }
    return (float)need;
}
