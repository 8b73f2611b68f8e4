/* backend.h: the one small interface every field backend implements.
 *
 * A backend runs the four SPEC.md stages of one world, or of a region of
 * it (wg_job.region), on its own memory (host arrays, a GPU's buffers)
 * and hands the results back in a readback.
 * The CLI drives every backend through wg_backend_run() alone, so a backend
 * is added by writing one file and one line in registry.c. */
#ifndef WG_BACKEND_H
#define WG_BACKEND_H

#include <pthread.h>
#include <stddef.h>

#include "spec.h"

#define WG_ERR_LEN 512

/* Seconds spent in each part of one backend's run.  'setup' is what a
 * backend pays before its first stage (pipeline creation on a GPU) and is
 * kept out of 'total' so the stage columns compare like with like. */
typedef struct wg_times {
    double setup, terrain, erosion, hydraulic, normals, readback;
} wg_times;

/* The fields of one world, or of a window of it, on the host: r.w * r.h
 * floats each, row-major, cell (x, y) of the world at
 * [(y - r.y) * r.w + (x - r.x)].  A whole world has r = wg_rect_world(n),
 * so code that takes only whole worlds may index by n; a region run's
 * fields have r = the region.
 * 'water' is the water depth over the ground and 'sediment' the height the
 * hydraulic stage laid down (positive) or carried away (negative). */
typedef struct wg_fields {
    uint32_t n; /* the world's side N (not the fields' side for a region) */
    wg_rect r;  /* the cells held */
    float *height, *water, *sediment, *nx, *ny, *nz;
} wg_fields;

/* Floats in each field. */
static inline size_t wg_fields_cells(const wg_fields *f)
{
    return wg_rect_cells(f->r);
}

/* Which GPU a GPU backend should use. */
typedef enum wg_power {
    WG_POWER_DEFAULT = 0,
    WG_POWER_HIGH,
    WG_POWER_LOW,
} wg_power;

/* What a backend is asked to run: the world, its lattice (made once on the
 * host and shared byte for byte) and the settings of the backends. */
typedef struct wg_job {
    wg_world world;
    wg_consts consts;
    const float *lattice; /* WG_LATTICE_R^2 floats */
    int threads;          /* CPU threads; 0 means the default */
    wg_power power;       /* GPU preference */
    const char *gpu;      /* device index or name substring, or NULL */
    /* The window of the world to make and read back (--region), inside
     * the world; w = 0 (the default) for the whole world.  A backend
     * computes it from the rectangle wg_job_rect() alone, so memory goes
     * with the region, not N*N (SPEC.md "Windows and tiles"). */
    wg_rect region;
    /* Told what is running, now and then, for a progress line (NULL: no
     * one listens): the stage ("terrain", ..., "readback") and the part of
     * it done, 0 to 1, or -1 when not known.  Called on one thread at a
     * time, often enough to follow (each hydraulic step at most). */
    void (*progress)(const char *stage, double done);
} wg_job;

/* The field stages, in the order they run, as progress and the tables
 * name them. */
#define WG_STAGES 4
extern const char *const wg_stage_names[WG_STAGES];

/* A backend.  Every function that can fail returns 0 on success and -1 on
 * failure with a one-line reason (no trailing newline) in err[WG_ERR_LEN].
 * The stage functions run in order terrain, erosion, hydraulic, normals,
 * readback, each
 * once per open(); each adds its own measured seconds to 't', so a backend
 * that queues work (a GPU) can report device time rather than host time. */
typedef struct wg_backend {
    const char *name;    /* as --mesh spells it */
    const char *summary; /* one line for --help and the manual */

    /* 0 when this backend can run the job here; -1 with the reason when not
     * ("no Vulkan device", "built without OpenMP").  Cheap: no allocation of
     * fields. */
    int (*probe)(const wg_job *job, char *err);

    /* Allocate what the job needs.  NULL with a reason on failure. */
    void *(*open)(const wg_job *job, wg_times *t, char *err);
    int (*terrain)(void *ctx, wg_times *t, char *err);
    int (*erosion)(void *ctx, wg_times *t, char *err);
    int (*hydraulic)(void *ctx, wg_times *t, char *err);
    int (*normals)(void *ctx, wg_times *t, char *err);
    /* Instead of the four above (which are then NULL): all of them in one
     * call, in order, each stage's seconds in its own column and
     * job->progress told of each as it starts, as the driver would.  For
     * a backend whose threads must stay together from stage to stage
     * (openmp's team: openmp_stages says why). */
    int (*stages)(void *ctx, wg_times *t, char *err);
    /* Move the final height, water, sediment and the normals of the
     * window (wg_job_window()) into 'out' (which the caller frees with
     * wg_fields_free()). */
    int (*readback)(void *ctx, wg_fields *out, wg_times *t, char *err);
    /* Free everything open() took.  No operation is performed if ctx is NULL. */
    void (*close)(void *ctx);

    /* The device this backend runs on, for the table's header ("lavapipe
     * (Vulkan 1.3)"), or NULL for CPU backends.  Valid until close(). */
    const char *(*device)(void *ctx);

    /* The host memory, in bytes, this backend holds at its peak while it
     * runs the job, readback included (the fields it hands over): the CPU
     * backends' fields (wg_cpu_host_bytes), a device's buffers where it
     * shares the host's memory.  Called after probe(). */
    double (*host_bytes)(const wg_job *job);

    /* How fast this backend expects to run the job, for --mesh auto: higher
     * is faster, compared between backends only.  Called before probe(),
     * which is then skipped for a backend that cannot win (probing Vulkan
     * costs a fifth of a second, ten times a small world's run): so it must
     * be cheap and return 0 where the backend cannot beat scalar. */
    int (*rank)(const wg_job *job);

    /* SPEC.md's Agreement: the largest |difference| of a normal component
     * from scalar's that is still agreement (0: identical to the bit, as
     * every CPU backend must be; 1e-6 on a GPU, whose / and sqrt are not
     * correctly rounded).  Heights must always be identical. */
    double normal_tolerance;
} wg_backend;

/* The backends, each defined in its own file. */
extern const wg_backend wg_backend_scalar;
extern const wg_backend wg_backend_openmp;
extern const wg_backend wg_backend_vulkan;

/* All the backends built into this binary, in the order --mesh all runs
 * them (scalar first: it is the reference the others are compared to),
 * terminated by NULL. */
extern const wg_backend *const wg_backends[];

/* The backend called 'name', or NULL. */
const wg_backend *wg_backend_find(const char *name);

/* The available backend that expects to run 'job' fastest (the highest
 * rank), or NULL when none is available; it runs nothing.  Each backend that
 * is not available here has its reason reported through 'skipped' (which
 * may be NULL), called with 'ctx'. */
const wg_backend *wg_backend_fastest(const wg_job *job,
                                     void (*skipped)(void *ctx,
                                                     const wg_backend *b,
                                                     const char *why),
                                     void *ctx);

/* The seconds the scalar backend is expected to take for 'job' (the cells
 * of wg_job_rect()), from its measured costs per cell on the 2-core CI
 * machine: for --mesh auto, which must not pick a parallel backend where
 * waking it costs more than the work.  In scalar.c, beside the backend it
 * models. */
double wg_scalar_seconds(const wg_job *job);

/* The window a job reads back: its region, or the whole world. */
wg_rect wg_job_window(const wg_job *job);

/* The rectangle a job computes: the window grown by the pipeline's halo
 * (wg_halo()), cut at the world's border; the whole world for a whole
 * run.  Every stage runs on it, the world's border rule applying where it
 * touches the world's border; what its other edges make wrong reaches at
 * most the halo inward, so the window is exact. */
wg_rect wg_job_rect(const wg_job *job);

/* "a 512x512 world", or "the 306x306 cells (a 256x256 region and its
 * halo) of a 1048577x1048577 world", for backends' messages. */
void wg_job_describe(const wg_job *job, char *buf, size_t len);

/* Run every stage of 'b' on 'job' and read the fields back into 'out'.
 * Returns 0, or -1 with the reason in err (a region not inside the world
 * among them); on failure 'out' holds nothing to free.  The device
 * description, if any, is copied to dev[dev_len]. */
int wg_backend_run(const wg_backend *b, const wg_job *job, wg_fields *out,
                   wg_times *t, char *dev, size_t dev_len, char *err);

/* The fields' memory (fields.c). */

/* One field of 'cells' floats, or NULL when memory runs out; free it with
 * wg_field_free() (so can any field of wg_fields and the backends' own
 * field-sized buffers, which the stages swap among themselves).  'slot'
 * staggers it: fields of different slots start at different offsets
 * within a 4 KiB page (slot mod 15, 256 bytes apart), because a kernel
 * that reads and writes several fields at the same cell would otherwise
 * have every stream in the same cache sets and its loads wait on stores
 * to other fields with the same low 12 address bits (4K aliasing): the
 * OpenMP hydraulic step at 2048, whose row is 8 KiB, ran a quarter
 * slower than at 1536.  A field of half a huge page or more is a mapping
 * of its own in huge pages where the kernel has them free (fields.c). */
float *wg_field_alloc(size_t cells, unsigned slot);

/* A block of 'bytes' on a cache line, for data about to be written in
 * full (a writer's mesh buffer): in huge pages of its own where it is half
 * a huge page or more and the kernel has them free, as the fields are
 * (fields.c says why), or malloc's.  NULL when memory runs out; free it
 * with wg_block_free(). */
void *wg_block_alloc(size_t bytes);
void wg_block_free(void *p);

/* The slots, one list so that no two buffers a stage touches share one:
 * the six result fields, the CPU backends' second height, and stage 3's
 * own buffers (hydraulic.c). */
enum {
    WG_SLOT_HEIGHT, WG_SLOT_WATER, WG_SLOT_SEDIMENT,
    WG_SLOT_NX, WG_SLOT_NY, WG_SLOT_NZ,
    WG_SLOT_OTHER,
    WG_SLOT_WATER2, WG_SLOT_SEDIMENT0, WG_SLOT_P, WG_SLOT_Q,
};
void wg_field_free(float *p);

/* Map the whole pages inside bytes [0, bytes) of p at once, without the
 * trap a page of their first touch (the kernel's MADV_POPULATE_WRITE,
 * Linux 5.14); the partial pages at the ends are left to the first write.
 * Returns 0, or -1 where the kernel cannot (nothing is then done, and the
 * pages fault in as they are written).  For memory about to be written in
 * full: on this project's 2-core VMs a page's first-touch trap costs
 * 10-20 us and the call about 0.5 us a page (measured on the AMD EPYC VM,
 * 16 MiB: 42 ms touched page by page, 2.2 ms populated).  Memory from
 * wg_field_alloc or wg_block_alloc is in huge pages already where the
 * kernel had them (fields.c, wg_thp, says why). */
int wg_populate(void *p, size_t bytes);

/* Allocate the six fields of an N-sided world.  Returns 0, or -1 when
 * memory runs out (nothing is then left allocated). */
int wg_fields_alloc(wg_fields *f, uint32_t n);

/* The same for the cells 'r' of an N-sided world. */
int wg_fields_alloc_rect(wg_fields *f, uint32_t n, wg_rect r);

/* Hand the fields 'f' over to 'out', cut down in place to the window
 * 'win' (which f's cells contain): each field's rows are moved to its
 * start and the pages past them given back to the system, so a region's
 * readback takes no second copy of the fields (at the peak of a 2049
 * tile's run, 6 fields of the window).  f is left empty. */
void wg_fields_take(wg_fields *f, wg_rect win, wg_fields *out);

/* Free the fields.  No operation is performed on NULL members. */
void wg_fields_free(wg_fields *f);

/* The bytes a CPU backend's fields take at its peak, for its host_bytes:
 * the six results and the second height over the rectangle it computes,
 * and with hydraulic steps the second water and sediment, and pass 1's p
 * and q where it keeps them in fields ('routing': the scalar backend's;
 * OpenMP keeps its shares in rows of each thread's).  A region's window is
 * cut from them in place (wg_fields_take): nothing more. */
double wg_cpu_host_bytes(const wg_job *job, int routing);

/* Seconds on a monotonic clock, for backends' own timing. */
double wg_now(void);

/* The CPUs this process may run on, at least 1: those of its affinity as
 * it started (taskset, a control group's cpuset: a container, a Slurm
 * job), not every core online.  In openmp_team.c, built with OpenMP:
 * libgomp's own count, where the main thread's affinity may since
 * have been narrowed to one place (OMP_PROC_BIND). */
int wg_cpus(void);

/* The most threads libgomp lets a team have (OMP_THREAD_LIMIT), at least
 * 1; INT_MAX in a build without OpenMP.  In openmp_team.c. */
int wg_thread_limit(void);

/* The widest vector the OpenMP backend's kernels run on this CPU, as
 * their target_clones choose: "avx512", "avx2" or "sse2" ('make
 * AVX512=0' leaves the first out), or "scalar" off x86.  For the JSON's
 * host, which bench.sh takes the limits' width from. */
const char *wg_openmp_vector(void);

/* Give the calling thread the CPUs the process started with.  libgomp
 * binds the main thread to one place at start (OMP_PROC_BIND, OMP_PLACES,
 * GOMP_CPU_AFFINITY), and a thread the main one starts inherits that:
 * the renderer's and the writers' threads, wg_cpus() of them, had all run
 * on the one CPU.  In openmp_team.c, beside wg_cpus.  This function can't
 * fail (where the affinity cannot be set, the thread stays as it was). */
void wg_thread_unbind(void);

/* Thread i's attributes for wg_threads_try (i from 0), into store: returns
 * store, or NULL for the thread library's defaults. */
typedef pthread_attr_t *(*wg_thread_attr_fn)(int i, void *ctx,
                                             pthread_attr_t *store);

/* Start 'count' threads that stay alive until all are started (or one
 * could not be), each with attr's attributes (attr may be NULL), then end
 * them: whether a backend's threads can run at once here.  Returns how
 * many started; *error is pthread_create's error for the one that did not
 * (-1: out of memory), else 0.  In threads.c. */
int wg_threads_try(int count, wg_thread_attr_fn attr, void *ctx, int *error);

/* Format an error message into err[WG_ERR_LEN].  Always returns -1, so a
 * failing function can 'return wg_fail(err, ...)'. */
int wg_fail(char *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A size in bytes in words, in buf[32], for a message: GiB to two places
 * from 1 GiB up, else MiB to one ("needs 0.04 GiB ... leaves 0.04 GiB" had
 * hidden why a small world was refused under ulimit -v, and "out of memory
 * for 0.0 GiB of meshes" the glTF's 14 MB).  Returns buf. */
const char *wg_bytes_text(double bytes, char buf[32]);

#endif
