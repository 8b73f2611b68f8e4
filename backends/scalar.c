/* scalar.c: the scalar C backend, SPEC.md as plain loops over one cell at a
 * time, in the order and with the operations the SPEC writes.
 *
 * This is the reference: clarity over speed.  It still meets the 60 ms
 * budget at 512 (see scripts/bench.sh) because the lattice fits in L2 and
 * the compiler keeps everything in registers; anything cleverer belongs in
 * the OpenMP backend, which is tested against this one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "hydraulic.h"
#include "scalar.h"

static inline float *scalar_at(const wg_view *v, uint32_t x, uint32_t y)
{
    return v->p + (size_t)(y - v->r.y) * v->r.w + (x - v->r.x);
}

static inline float scalar_cell(const float *lat, int ix, int iy)
{
    return lat[(iy & (WG_LATTICE_R - 1)) * WG_LATTICE_R +
               (ix & (WG_LATTICE_R - 1))];
}

void wg_scalar_terrain(const wg_consts *c, const float *lat, wg_rect win,
                       const wg_view *dst)
{
    for (uint32_t y = win.y; y < win.y + win.h; y++) {
        float *out = scalar_at(dst, win.x, y);
        for (uint32_t x = win.x; x < win.x + win.w; x++) {
            float sum = 0.0f;
            for (uint32_t o = 0; o < c->octaves; o++) {
                float ux = (((float)x * c->inv_n) * c->base) * c->freq[o];
                float uy = (((float)y * c->inv_n) * c->base) * c->freq[o];
                float px = (ux * c->cos[o] - uy * c->sin[o]) + c->offs[o];
                float py = (ux * c->sin[o] + uy * c->cos[o]) + c->offs[o];
                float flx = floorf(px), fly = floorf(py);
                int ix = (int)flx, iy = (int)fly;
                float fx = px - flx, fy = py - fly;
                float a = scalar_cell(lat, ix, iy);
                float b = scalar_cell(lat, ix + 1, iy);
                float cc = scalar_cell(lat, ix, iy + 1);
                float d = scalar_cell(lat, ix + 1, iy + 1);
                float wx = (fx * fx) * (3.0f - 2.0f * fx);
                float wy = (fy * fy) * (3.0f - 2.0f * fy);
                float lo = a + (b - a) * wx;
                float hi = cc + (d - cc) * wx;
                float v = lo + (hi - lo) * wy;
                float r = 1.0f - fabsf(2.0f * v - 1.0f);
                sum = sum + c->amp[o] * (r * r);
            }
            out[x - win.x] = sum * c->inv_norm;
        }
    }
}

/* What one neighbour takes from (or gives to) a cell of height h. */
static inline float scalar_exchange(float h, float nb, float t, float rate)
{
    float d = h - nb;
    /* SPEC: e = d > T ? d - T : (d < -T ? d + T : 0), written as two
     * selects of precomputed values so the compiler can vectorise it;
     * the two cases cannot both hold, so the result is the same. */
    float over = d - t, under = d + t;
    float e = d > t ? over : 0.0f;
    e = d < -t ? under : e;
    return e * rate;
}

/* A cell on the world's border: skip the neighbours that do not exist. */
static float scalar_erode_border(const wg_consts *c, const wg_view *src,
                                 uint32_t x, uint32_t y)
{
    const int n = (int)c->n;
    float h = *scalar_at(src, x, y);
    float moved = 0.0f;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int xx = (int)x + dx, yy = (int)y + dy;
            if ((dx == 0 && dy == 0) || xx < 0 || yy < 0 || xx >= n ||
                yy >= n)
                continue; /* outside the grid: no neighbour */
            moved = moved + scalar_exchange(h, *scalar_at(src, (uint32_t)xx,
                                                          (uint32_t)yy),
                                            c->talus, c->rate);
        }
    }
    return h - moved;
}

void wg_scalar_erosion_pass(const wg_consts *c, const wg_view *src,
                            wg_rect win, const wg_view *dst)
{
    const uint32_t last = c->n - 1;
    const float t = c->talus, rate = c->rate;

    for (uint32_t y = win.y; y < win.y + win.h; y++) {
        float *out = scalar_at(dst, win.x, y) - win.x;
        if (y == 0 || y == last) {
            for (uint32_t x = win.x; x < win.x + win.w; x++)
                out[x] = scalar_erode_border(c, src, x, y);
            continue;
        }
        /* An interior row: all eight neighbours exist except at the two
         * ends, so the same eight terms in SPEC order, no bounds checks. */
        const float *restrict row = scalar_at(src, src->r.x, y) - src->r.x;
        const float *restrict up = row - src->r.w;
        const float *restrict down = row + src->r.w;
        float *restrict o = out;
        uint32_t x0 = win.x, x1 = win.x + win.w; /* [x0, x1) */
        uint32_t i0 = x0 > 1 ? x0 : 1, i1 = x1 < last ? x1 : last;
        if (x0 == 0)
            out[0] = scalar_erode_border(c, src, 0, y);
        for (size_t x = i0; x < i1; x++) {
            float h = row[x], moved = 0.0f;
            moved = moved + scalar_exchange(h, up[x - 1], t, rate);
            moved = moved + scalar_exchange(h, up[x], t, rate);
            moved = moved + scalar_exchange(h, up[x + 1], t, rate);
            moved = moved + scalar_exchange(h, row[x - 1], t, rate);
            moved = moved + scalar_exchange(h, row[x + 1], t, rate);
            moved = moved + scalar_exchange(h, down[x - 1], t, rate);
            moved = moved + scalar_exchange(h, down[x], t, rate);
            moved = moved + scalar_exchange(h, down[x + 1], t, rate);
            o[x] = h - moved;
        }
        if (x1 == c->n)
            out[last] = scalar_erode_border(c, src, last, y);
    }
}

/* Stage 3: every cell visits its neighbours in SPEC order (dy outer, dx
 * inner), skipping itself; those outside the world are ghosts. */

void wg_scalar_hydraulic_start(const wg_consts *c, const wg_view *h,
                               wg_rect win, const wg_view *b,
                               const wg_view *w, const wg_view *s,
                               const wg_view *a)
{
    for (uint32_t y = win.y; y < win.y + win.h; y++)
        for (uint32_t x = win.x; x < win.x + win.w; x++)
            wg_hyd_start(&c->hyd, *scalar_at(h, x, y), scalar_at(b, x, y),
                         scalar_at(w, x, y), scalar_at(s, x, y),
                         scalar_at(a, x, y));
}

/* The eight neighbours of (x, y) in SPEC order: offsets, slope weight (1
 * for a side, GD for a corner) and creep rate; a neighbour outside the
 * world is a ghost (SPEC.md "The world's edge"), standing for the land
 * going on, made from its edge cell e (the ghost clamped into the world)
 * and j = e + (e - ghost), given as offsets from (x, y). */
typedef struct scalar_nb {
    int dx, dy, ghost;
    int cx, cy, ix, iy; /* a ghost's e and j */
    float g, c;
} scalar_nb;

static void scalar_hyd_neighbours(const wg_consts *c, uint32_t x, uint32_t y,
                                  scalar_nb nb[8])
{
    const int n = (int)c->n;
    int m = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            if (dx == 0 && dy == 0)
                continue;
            scalar_nb *k = &nb[m++];
            int gx = (int)x + dx, gy = (int)y + dy;
            int cx = gx < 0 ? 0 : gx >= n ? n - 1 : gx;
            int cy = gy < 0 ? 0 : gy >= n ? n - 1 : gy;
            k->dx = dx;
            k->dy = dy;
            k->ghost = cx != gx || cy != gy;
            k->cx = cx - (int)x;
            k->cy = cy - (int)y;
            k->ix = 2 * cx - gx - (int)x;
            k->iy = 2 * cy - gy - (int)y;
            k->c = dx && dy ? c->hyd.creep_d : c->hyd.creep_o;
            k->g = dx && dy ? c->hyd.slope_d : 1.0f;
        }
}

/* Field f's value at offset (dx, dy) from cell x of the middle row. */
#define SCALAR_AT(f, dx, dy) (in->f[1 + (dy)][x + (size_t)(ptrdiff_t)(dx)])

/* The water surface b + w at offset (dx, dy) from cell x. */
static float scalar_hyd_surface(const wg_hyd_rows *in, uint32_t x, int dx,
                                int dy)
{
    return SCALAR_AT(b, dx, dy) + SCALAR_AT(w, dx, dy);
}

/* A neighbour's water surface: its b + w, or a ghost's GH, the surface
 * going on beyond the edge at its slope there. */
static float scalar_hyd_nb_surface(const wg_hyd_rows *in, uint32_t x,
                                   const scalar_nb *k)
{
    if (!k->ghost)
        return scalar_hyd_surface(in, x, k->dx, k->dy);
    float hc = scalar_hyd_surface(in, x, k->cx, k->cy);
    return hc + (hc - scalar_hyd_surface(in, x, k->ix, k->iy));
}

/* A ghost's ground GB: the starting ground of its edge cell e, a fixed
 * base level. */
static float scalar_hyd_ghost_ground(const wg_hyd_rows *in, uint32_t x,
                                     const scalar_nb *k)
{
    return SCALAR_AT(b0, k->cx, k->cy);
}

/* Pass 1 of cell x of the middle row of 'in' (b and w), anywhere. */
static void scalar_hyd_route_cell(const wg_consts *c, const wg_hyd_rows *in,
                                  uint32_t x, uint32_t y, float *p, float *q)
{
    const wg_hyd_consts *k = &c->hyd;
    scalar_nb nb[8];
    float d[8];
    scalar_hyd_neighbours(c, x, y, nb);
    float wc = in->w[1][x], h = in->b[1][x] + wc;
    float dmax = 0.0f, sum = 0.0f;
    for (int i = 0; i < 8; i++) {
        d[i] = wg_hyd_ftz(h - scalar_hyd_nb_surface(in, x, &nb[i]), k->eps);
        dmax = wg_hyd_max(dmax, d[i] * nb[i].g);
    }
    float pc = wg_hyd_inv(dmax);
    for (int i = 0; i < 8; i++)
        if (d[i] > 0.0f)
            sum = sum + wg_hyd_weight(d[i], nb[i].g, pc, k->eps);
    *p = pc;
    *q = wg_hyd_route(k, dmax, sum, wc);
}

/* Pass 2 of cell x of the middle row of 'in', anywhere. */
static void scalar_hyd_step_cell(const wg_consts *c, const wg_hyd_rows *in,
                                 uint32_t x, uint32_t y, float *bo, float *wo,
                                 float *so)
{
    const wg_hyd_consts *k = &c->hyd;
    scalar_nb nb[8];
    scalar_hyd_neighbours(c, x, y, nb);
    float bc = in->b[1][x], wc = in->w[1][x];
    float pc = in->p[1][x], qc = in->q[1][x];
    float h = bc + wc;
    float out_ = 0.0f, win = 0.0f, sin = 0.0f, drop = 0.0f, creep = 0.0f;
    for (int i = 0; i < 8; i++) {
        const scalar_nb *n = &nb[i];
        if (n->ghost) {
            /* It takes water and gives none, and no soil creeps to it. */
            float d = wg_hyd_ftz(h - scalar_hyd_nb_surface(in, x, n), k->eps);
            if (d > 0.0f)
                out_ = out_ + wg_hyd_ftz(wg_hyd_weight(d, n->g, pc, k->eps) *
                                         qc, k->eps);
            float e = wg_hyd_ftz(bc - scalar_hyd_ghost_ground(in, x, n),
                                 k->eps);
            drop = wg_hyd_max(drop, e * n->g);
            continue;
        }
        WG_HYD_GATHER(out_, win, sin, drop, creep, bc, h, pc, qc,
                      SCALAR_AT(b, n->dx, n->dy), SCALAR_AT(w, n->dx, n->dy),
                      SCALAR_AT(s, n->dx, n->dy), SCALAR_AT(p, n->dx, n->dy),
                      SCALAR_AT(q, n->dx, n->dy), n->g, n->c, k->eps);
    }
    wg_hyd_finish(k, bc, wc, in->s[1][x], out_, win, sin, drop, creep, &bo[x],
                  &wo[x], &so[x], &in->a[x]);
}
#undef SCALAR_AT

void wg_scalar_hydraulic_route_row(const wg_consts *c, const wg_hyd_rows *in,
                                   uint32_t y, uint32_t x0, uint32_t x1,
                                   float *p, float *q)
{
    const uint32_t last = c->n - 1;
    if (y == 0 || y == last) {
        for (uint32_t x = x0; x < x1; x++)
            scalar_hyd_route_cell(c, in, x, y, &p[x], &q[x]);
        return;
    }
    /* An interior row: the same eight terms in SPEC order, no bounds
     * checks, except at the world's first and last columns. */
    uint32_t i0 = x0 > 1 ? x0 : 1, i1 = x1 < last ? x1 : last;
    if (x0 == 0)
        scalar_hyd_route_cell(c, in, 0, y, &p[0], &q[0]);
    if (i0 < i1)
        wg_hyd_route_row(&c->hyd, in->b[0], in->b[1], in->b[2], in->w[0],
                         in->w[1], in->w[2], i0, i1, p, q);
    if (x1 == c->n && last > 0)
        scalar_hyd_route_cell(c, in, last, y, &p[last], &q[last]);
}

void wg_scalar_hydraulic_step_row(const wg_consts *c, const wg_hyd_rows *in,
                                  uint32_t y, uint32_t x0, uint32_t x1,
                                  float *bo, float *wo, float *so)
{
    const uint32_t last = c->n - 1;
    if (y == 0 || y == last) {
        for (uint32_t x = x0; x < x1; x++)
            scalar_hyd_step_cell(c, in, x, y, bo, wo, so);
        return;
    }
    uint32_t i0 = x0 > 1 ? x0 : 1, i1 = x1 < last ? x1 : last;
    if (x0 == 0)
        scalar_hyd_step_cell(c, in, 0, y, bo, wo, so);
    if (i0 < i1)
        wg_hyd_step_row(&c->hyd, in, i0, i1, bo, wo, so);
    if (x1 == c->n && last > 0)
        scalar_hyd_step_cell(c, in, last, y, bo, wo, so);
}

/* Row y of a view, indexed by world x; rows outside the world are NULL. */
static const float *scalar_row(const wg_view *v, uint32_t y, uint32_t n)
{
    if (y >= n) /* y - 1 of row 0 wraps to UINT32_MAX */
        return NULL;
    return v->p + (size_t)(y - v->r.y) * v->r.w - v->r.x;
}

void wg_scalar_hydraulic_route(const wg_consts *c, const wg_view *b,
                               const wg_view *w, wg_rect win,
                               const wg_view *p, const wg_view *q)
{
    const uint32_t n = c->n;
    for (uint32_t y = win.y; y < win.y + win.h; y++) {
        wg_hyd_rows rows;
        memset(&rows, 0, sizeof rows); /* s, p, q: pass 1 reads none */
        for (int k = 0; k < 3; k++) {
            rows.b[k] = scalar_row(b, y - 1 + (uint32_t)k, n);
            rows.w[k] = scalar_row(w, y - 1 + (uint32_t)k, n);
        }
        wg_scalar_hydraulic_route_row(c, &rows, y, win.x, win.x + win.w,
                                      (float *)scalar_row(p, y, n),
                                      (float *)scalar_row(q, y, n));
    }
}

void wg_scalar_hydraulic_step(const wg_consts *c, const wg_view *const in[6],
                              wg_rect win, const wg_view *const out[3],
                              const wg_view *a)
{
    const uint32_t n = c->n;
    for (uint32_t y = win.y; y < win.y + win.h; y++) {
        wg_hyd_rows rows;
        rows.a = (float *)scalar_row(a, y, n);
        for (int k = 0; k < 3; k++) {
            uint32_t yy = y - 1 + (uint32_t)k;
            rows.b[k] = scalar_row(in[0], yy, n);
            rows.w[k] = scalar_row(in[1], yy, n);
            rows.s[k] = scalar_row(in[2], yy, n);
            rows.p[k] = scalar_row(in[3], yy, n);
            rows.q[k] = scalar_row(in[4], yy, n);
            rows.b0[k] = scalar_row(in[5], yy, n);
        }
        wg_scalar_hydraulic_step_row(c, &rows, y, win.x, win.x + win.w,
                                     (float *)scalar_row(out[0], y, n),
                                     (float *)scalar_row(out[1], y, n),
                                     (float *)scalar_row(out[2], y, n));
    }
}

void wg_scalar_hydraulic_settle(const wg_consts *c, const wg_view *b,
                                const wg_view *w, const wg_view *a,
                                const wg_view *b0, wg_rect win,
                                const wg_view *h, const wg_view *wo,
                                const wg_view *sed)
{
    for (uint32_t y = win.y; y < win.y + win.h; y++)
        for (uint32_t x = win.x; x < win.x + win.w; x++)
            wg_hyd_settle(&c->hyd, *scalar_at(b, x, y), *scalar_at(w, x, y),
                          *scalar_at(a, x, y), *scalar_at(b0, x, y),
                          scalar_at(h, x, y), scalar_at(wo, x, y),
                          scalar_at(sed, x, y));
}

/* The normal of one cell from its four neighbours' heights. */
static inline void scalar_normal(float l_h, float r_h, float u_h, float d_h,
                                 float kx, float ky, float *nx, float *ny,
                                 float *nz)
{
    float dx = (r_h - l_h) * kx;
    float dz = (d_h - u_h) * ky;
    float l = sqrtf((dx * dx + 1.0f) + dz * dz);
    *nx = -dx / l;
    *ny = 1.0f / l;
    *nz = -dz / l;
}

void wg_scalar_normals(const wg_consts *c, const wg_view *h, wg_rect win,
                       const wg_view *nx, const wg_view *ny,
                       const wg_view *nz)
{
    const uint32_t last = c->n - 1;
    const float k1 = c->k1, k2 = c->k2; /* in registers, not re-read */

    for (uint32_t y = win.y; y < win.y + win.h; y++) {
        uint32_t ym = y > 0 ? y - 1 : 0, yp = y < last ? y + 1 : last;
        float ky = (yp - ym == 2) ? k2 : k1;
        /* Row pointers indexed by world x. */
        const float *restrict row = scalar_at(h, h->r.x, y) - h->r.x;
        const float *restrict up = scalar_at(h, h->r.x, ym) - h->r.x;
        const float *restrict down = scalar_at(h, h->r.x, yp) - h->r.x;
        float *restrict ox = scalar_at(nx, win.x, y) - win.x;
        float *restrict oy = scalar_at(ny, win.x, y) - win.x;
        float *restrict oz = scalar_at(nz, win.x, y) - win.x;
        uint32_t x0 = win.x, x1 = win.x + win.w;
        uint32_t i0 = x0 > 1 ? x0 : 1, i1 = x1 < last ? x1 : last;

        /* The clamped border columns span one cell, not two (k1, not k2). */
        if (x0 == 0)
            scalar_normal(row[0], row[1], up[0], down[0], k1, ky, &ox[0],
                          &oy[0], &oz[0]);
        for (size_t x = i0; x < i1; x++)
            scalar_normal(row[x - 1], row[x + 1], up[x], down[x], k2, ky,
                          &ox[x], &oy[x], &oz[x]);
        if (x1 == c->n && last > 0)
            scalar_normal(row[last - 1], row[last], up[last], down[last],
                          k1, ky, &ox[last], &oy[last], &oz[last]);
    }
}

/* The backend, on host arrays covering the rectangle R = wg_job_rect()
 * (the whole world, or a region and its halo).  Each stage computes only
 * the cells the later ones read: the window grown by the halo still
 * needed (scalar_need), so no cell is computed from one that was not;
 * for a whole world every such rectangle is the world. */

typedef struct scalar_ctx {
    const wg_job *job;
    wg_rect all, win; /* R, and the window read back */
    uint32_t halo;    /* wg_halo(): R is win grown by it */
    wg_fields f;      /* R's fields: handed over or cropped by readback */
    float *other;     /* the second erosion buffer */
} scalar_ctx;

/* The window grown by 'left' cells of halo: what a stage must make for
 * the stages after it, which read 'left' cells beyond the window. */
static wg_rect scalar_need(const scalar_ctx *s, uint32_t left)
{
    return wg_rect_grow(s->win, left, s->job->world.size);
}

static int scalar_probe(const wg_job *job, char *err)
{
    (void)job;
    (void)err;
    return 0; /* plain C runs anywhere */
}

double wg_scalar_seconds(const wg_job *job)
{
    /* Nanoseconds a cell: 3 an octave, 3 a thermal pass, 40 a hydraulic
     * step at small sizes (where the rows are too short to vectorise
     * well), 2 for the normals; scripts/bench.sh -b scalar -t measures
     * them. */
    const wg_world *w = &job->world;
    return (double)wg_rect_cells(wg_job_rect(job)) *
           (3.0 * w->octaves + 3.0 * w->passes + 40.0 * w->steps + 2.0) * 1e-9;
}

static int scalar_rank(const wg_job *job)
{
    (void)job;
    return 1; /* one core: every other backend should beat it */
}

static void scalar_close(void *ctx)
{
    scalar_ctx *s = ctx;
    if (!s)
        return;
    wg_fields_free(&s->f);
    wg_field_free(s->other);
    free(s);
}

static void *scalar_open(const wg_job *job, wg_times *t, char *err)
{
    (void)t;
    scalar_ctx *s = calloc(1, sizeof *s);
    if (!s)
        goto oom;
    s->job = job;
    s->all = wg_job_rect(job);
    s->win = wg_job_window(job);
    s->halo = wg_halo(&job->world);
    size_t bytes = wg_rect_cells(s->all) * sizeof(float);
    if (wg_fields_alloc_rect(&s->f, job->world.size, s->all) != 0)
        goto oom;
    s->other = wg_field_alloc(wg_rect_cells(s->all), WG_SLOT_OTHER);
    if (!s->other)
        goto oom;
    /* Touch every page now, in setup, rather than in the first stage that
     * writes it: first-touch page faults cost this VM 2-3 ms a field at 512,
     * which would otherwise be billed to whichever stage came first. */
    memset(s->f.height, 0, bytes);
    memset(s->f.nx, 0, bytes);
    memset(s->f.ny, 0, bytes);
    memset(s->f.nz, 0, bytes);
    memset(s->other, 0, bytes);
    return s;
oom:
    scalar_close(s);
    char what[160];
    wg_job_describe(job, what, sizeof what);
    wg_fail(err, "scalar: out of memory for %s", what);
    return NULL;
}

static int scalar_terrain(void *ctx, wg_times *t, char *err)
{
    (void)err;
    scalar_ctx *s = ctx;
    wg_view dst = {s->f.height, s->all};
    double t0 = wg_now();
    wg_scalar_terrain(&s->job->consts, s->job->lattice, s->all, &dst);
    t->terrain += wg_now() - t0;
    return 0;
}

static int scalar_erosion(void *ctx, wg_times *t, char *err)
{
    (void)err;
    scalar_ctx *s = ctx;
    const uint32_t passes = s->job->world.passes;
    float *src = s->f.height, *dst = s->other;
    double t0 = wg_now();
    for (uint32_t pass = 0; pass < passes; pass++) {
        wg_view vs = {src, s->all}, vd = {dst, s->all};
        wg_scalar_erosion_pass(&s->job->consts, &vs,
                               scalar_need(s, s->halo - pass - 1), &vd);
        float *tmp = src; /* ping-pong: the next pass reads what this wrote */
        src = dst;
        dst = tmp;
    }
    s->f.height = src; /* parity decides which buffer holds the result */
    s->other = dst;
    t->erosion += wg_now() - t0;
    return 0;
}

/* Stage 3: ping-pong pairs of ground, water and sediment, the routing P
 * and Q, and the starting ground b0 (kept for the net sediment).  Step i
 * routes the window grown by 2 (steps - i) and steps it grown by one
 * less; settle makes the window grown by 1, for the normals. */
static int scalar_hydraulic(void *ctx, wg_times *t, char *err)
{
    scalar_ctx *s = ctx;
    const wg_consts *c = &s->job->consts;
    const uint32_t steps = s->job->world.steps;
    const size_t bytes = wg_rect_cells(s->all) * sizeof(float);
    const wg_rect all = s->all;
    double t0 = wg_now();
    wg_hyd_buffers hb;
    int rc = -1;
    if (wg_hyd_buffers_alloc(&hb, &s->f, s->other, wg_rect_cells(all),
                             steps, 1) != 0) {
        char what[160];
        wg_job_describe(s->job, what, sizeof what);
        wg_fail(err, "scalar: out of memory for the hydraulic stage of %s",
                what);
        goto out;
    }
#define V(p) ((wg_view){(p), all})
    /* In place: the heights become the starting ground, kept in b0. */
    wg_scalar_hydraulic_start(c, &V(s->f.height), scalar_need(s, 2 * steps + 1),
                              &V(hb.b[0]), &V(hb.w[0]), &V(hb.s[0]),
                              &V(hb.a));
    if (steps > 0)
        memcpy(hb.b0, hb.b[0], bytes);
    for (uint32_t i = 0; i < steps; i++) {
        wg_hyd_state st = wg_hyd_buffers_step(&hb, i);
        uint32_t left = 2 * (steps - i); /* + 1 for the normals, - 1 */
        wg_scalar_hydraulic_route(c, &V(st.b), &V(st.w), scalar_need(s, left),
                                  &V(hb.p), &V(hb.q));
        const wg_view in[6] = {V(st.b), V(st.w),  V(st.s),
                               V(hb.p), V(hb.q), V(hb.b0)};
        const wg_view out[3] = {V(st.bo), V(st.wo), V(st.so)};
        const wg_view *const pin[6] = {&in[0], &in[1], &in[2],
                                       &in[3], &in[4], &in[5]};
        const wg_view *const pout[3] = {&out[0], &out[1], &out[2]};
        wg_scalar_hydraulic_step(c, pin, scalar_need(s, left - 1), pout,
                                 &V(st.a));
        if (s->job->progress)
            s->job->progress("hydraulic", (double)(i + 1) / steps);
    }
    if (steps == 0) {
        memset(s->f.sediment, 0, bytes); /* the ground stays, the sea fills */
    } else {
        wg_hyd_state st = wg_hyd_buffers_step(&hb, steps);
        wg_scalar_hydraulic_settle(c, &V(st.b), &V(st.w), &V(st.a), &V(hb.b0),
                                   scalar_need(s, 1), &V(s->f.height),
                                   &V(st.w), &V(s->f.sediment));
    }
#undef V
    wg_hyd_buffers_finish(&hb, &s->f, steps);
    rc = 0;
out:
    wg_hyd_buffers_free(&hb);
    t->hydraulic += wg_now() - t0;
    return rc;
}

static int scalar_normals(void *ctx, wg_times *t, char *err)
{
    (void)err;
    scalar_ctx *s = ctx;
    wg_rect r = s->all;
    wg_view h = {s->f.height, r}, nx = {s->f.nx, r}, ny = {s->f.ny, r},
            nz = {s->f.nz, r};
    double t0 = wg_now();
    wg_scalar_normals(&s->job->consts, &h, s->win, &nx, &ny, &nz);
    t->normals += wg_now() - t0;
    return 0;
}

static int scalar_readback(void *ctx, wg_fields *out, wg_times *t, char *err)
{
    (void)err;
    scalar_ctx *s = ctx;
    double t0 = wg_now();
    /* Host memory already: hand the fields over, cut to the window. */
    wg_fields_take(&s->f, s->win, out);
    t->readback += wg_now() - t0;
    return 0;
}

/* Its fields, p and q among them (wg_cpu_host_bytes). */
static double scalar_host_bytes(const wg_job *job)
{
    return wg_cpu_host_bytes(job, 1);
}

const wg_backend wg_backend_scalar = {
    .name = "scalar",
    .summary = "plain C, one cell at a time: the reference",
    .probe = scalar_probe,
    .open = scalar_open,
    .terrain = scalar_terrain,
    .erosion = scalar_erosion,
    .hydraulic = scalar_hydraulic,
    .normals = scalar_normals,
    .readback = scalar_readback,
    .close = scalar_close,
    .device = NULL,
    .host_bytes = scalar_host_bytes,
    .rank = scalar_rank,
    .normal_tolerance = 0.0,
};
