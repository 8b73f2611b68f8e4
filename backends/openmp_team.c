/* openmp_team.c: the OpenMP backend's team of threads, and libgomp's view
 * of the CPUs.  Built with OpenMP, as the backend's other files are, it
 * also holds what the renderer and the writers need of that view: wg_cpus
 * (how many threads) and wg_thread_unbind (their threads off the main
 * thread's bound place).  The team: worldgen's default wait policy for
 * libgomp's idle threads (openmp_wait_passively), how many threads
 * (openmp_threads) and whether libgomp can start them (openmp_can_start),
 * their forming on CPUs of their own (openmp_team_form), the barrier they
 * meet at within and between the stages (openmp_barrier_wait), and the
 * first failure any of them reports (openmp_team_fail).
 *
 * Measured (medians, from the --json figures) on the 2-core Firecracker VM
 * (AMD EPYC, AVX2, nested: "the VM" below) and on an Intel Xeon VM:
 * - a bounded spin instead of passive waiting (GOMP_SPINCOUNT=30000, about
 *   0.9 ms of PAUSE there) was tried and lost: the VM often runs both
 *   threads on one vCPU, and a spinning thread then holds it for its whole
 *   spin: terrain at 512 took 3.0 ms or, one run in two, 6-9 ms.
 * - the hydraulic steps meet at a barrier of their own that spins up to
 *   0.1 ms before it sleeps, unless the thread it waits for was last seen
 *   on its CPU (openmp_barrier_wait): on an Intel Xeon VM, medians of 11
 *   run in turn with the team's barrier, 512 with 100 steps 96.2 -> 87.1
 *   ms, the default world's stage 336 -> 315 ms; 128 and 256 the same.
 * - one team for all four stages (openmp_stages), which forms on CPUs of
 *   its own and meets at that barrier between stages too: with a region a
 *   stage, each stage began by waking the other thread, which Linux put on
 *   the waking thread's CPU, so that the terrain, erosion and normals at
 *   512 took as long on two threads as on one.  Intel Xeon VM, 512 with 12
 *   passes and 100 steps, medians of 11 run in turn with a region a stage:
 *   terrain 1.33 -> 0.70 ms, erosion 2.45 -> 1.23, hydraulic 106.6 ->
 *   81.6, normals 0.196 -> 0.143; the setup (the team's forming) 1.06 ->
 *   1.18 ms; the same bits.
 */
#define _GNU_SOURCE /* syscall, sched_setaffinity, pthread_setaffinity_np */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend.h"
#include "openmp_team.h"

#ifdef _OPENMP
/* libgomp's threads spin for a while before they sleep, whenever a
 * parallel region ends, unless OMP_WAIT_POLICY says passive.  On a shared
 * 2-core machine the spinning threads take the CPU from the one with work:
 * --size 16 took 35 ms on openmp against 0.5 ms with passive waiting while
 * another program ran (medians of 7); at 512 and 2048 passive waiting
 * costs nothing measurable.  libgomp reads the variable once, in its
 * constructor: the Makefile links it statically, so that this constructor,
 * of a higher priority, runs first and sets worldgen's default.  A user's
 * OMP_WAIT_POLICY or GOMP_SPINCOUNT is kept. */
__attribute__((constructor(101))) static void openmp_wait_passively(void)
{
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT"))
        setenv("OMP_WAIT_POLICY", "passive", 0);
}
#endif

/* The CPUs the process started with, read before libgomp's constructor
 * (of default priority, after this one) binds the main thread to its
 * first place under OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY. */
static cpu_set_t openmp_start_cpus;
static int openmp_start_known;

__attribute__((constructor(101))) static void openmp_start_affinity(void)
{
    openmp_start_known = sched_getaffinity(0, sizeof openmp_start_cpus,
                                           &openmp_start_cpus) == 0;
}

void wg_thread_unbind(void)
{
    /* Failing leaves the thread where it was: slower, not wrong. */
    if (openmp_start_known)
        pthread_setaffinity_np(pthread_self(), sizeof openmp_start_cpus,
                               &openmp_start_cpus);
}

int wg_cpus(void)
{
    int n = 0;
#ifdef _OPENMP
    /* libgomp's count of the affinity it found at start: the main
     * thread's own is one place once OMP_PROC_BIND has bound it. */
    n = omp_get_num_procs();
#else
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
        n = CPU_COUNT(&mask);
#endif
    if (n < 1) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online < 1 ? 1 : online > INT_MAX ? INT_MAX : (int)online;
    }
    return n;
}

int wg_thread_limit(void)
{
#ifdef _OPENMP
    const int limit = omp_get_thread_limit();
    return limit < 1 ? 1 : limit;
#else
    return INT_MAX;
#endif
}

int openmp_threads(const wg_job *job)
{
#ifdef _OPENMP
    if (job->threads > 0)
        return job->threads;
    /* OMP_NUM_THREADS is the user's, unchecked by libgomp: 65536 of them
     * crashed a run (each thread's stack).  Beyond the cores there is
     * nothing to gain, so the default is at most the cores online. */
    int t = omp_get_max_threads(), cores = omp_get_num_procs();
    t = t < 1 ? 1 : t > cores ? cores : t;
    /* OMP_THREAD_LIMIT caps the default as libgomp caps a team. */
    return t > wg_thread_limit() ? wg_thread_limit() : t;
#else
    (void)job;
    return 1;
#endif
}

/* Where libgomp binds thread i of a team of n (team.c, gomp_team_start):
 * the place, or -1 where threads are not bound.  OMP_PROC_BIND=true, as
 * GOMP_CPU_AFFINITY sets it, binds as close does. */
static int openmp_place_of(int i, int n)
{
#ifdef _OPENMP
    const omp_proc_bind_t bind = omp_get_proc_bind();
    const int np = omp_get_num_places();
    if (bind == omp_proc_bind_false || np <= 0)
        return -1;
    int first = omp_get_place_num();
    first = first < 0 ? 0 : first;
    if (bind == omp_proc_bind_master)
        return first;
    if (n > np) /* every place, in blocks of n / np threads */
        return (first + (int)((long)i * np / n)) % np;
    if (bind == omp_proc_bind_spread) { /* the first of a share of places */
        const int share = np / n, rest = np % n;
        return (first + i * share + (i < rest ? i : rest)) % np;
    }
    return (first + i) % np;
#else
    (void)i;
    (void)n;
    return -1;
#endif
}

/* The stack libgomp gives its threads: OMP_STACKSIZE's, else
 * GOMP_STACKSIZE's, each read as libgomp 12 reads it (env.c,
 * parse_stacksize: a decimal number, then B, K, M or G, K where none,
 * spaces around; one it cannot read is passed over).  Returns the bytes
 * and sets *var to the variable's name, or returns 0 where neither
 * gives one (the thread library's default). */
static unsigned long openmp_stack_size(const char **var)
{
    static const char *const names[] = {"OMP_STACKSIZE", "GOMP_STACKSIZE"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *p = getenv(names[i]);
        if (!p)
            continue;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            continue;
        char *end;
        errno = 0;
        const unsigned long v = strtoul(p, &end, 10);
        if (errno)
            continue;
        while (isspace((unsigned char)*end))
            end++;
        unsigned shift = 10;
        if (*end) {
            static const char units[] = "bkmg";
            const char *u = strchr(units, tolower((unsigned char)*end));
            if (!u)
                continue;
            shift = 10u * (unsigned)(u - units);
            for (end++; isspace((unsigned char)*end); end++)
                ;
            if (*end)
                continue;
        }
        if (((v << shift) >> shift) != v)
            continue;
        *var = names[i];
        return v << shift;
    }
    return 0;
}

/* The team openmp_can_start tries: its size, and the place of the thread
 * last tried (-1: not bound). */
typedef struct openmp_trial {
    int threads, place;
} openmp_trial;

/* Team thread i + 1's attributes as libgomp makes them (a
 * wg_thread_attr_fn; thread 0 is the caller): its stack size
 * (OMP_STACKSIZE), and bound to its place's CPUs, so that its creation
 * fails here as it would there.  Returns attr, or NULL where the thread
 * has the thread library's defaults; the trial's place is its place or
 * -1. */
static pthread_attr_t *openmp_trial_attr(int i, void *ctx,
                                         pthread_attr_t *attr)
{
    openmp_trial *trial = ctx;
    int *place = &trial->place;
    *place = openmp_place_of(i + 1, trial->threads);
#ifdef _OPENMP
    const char *var;
    const unsigned long stack = openmp_stack_size(&var);
    const int k = *place < 0 ? 0 : omp_get_place_num_procs(*place);
    int *ids = k > 0 ? malloc((size_t)k * sizeof *ids) : NULL;
    if ((!ids && !stack) || pthread_attr_init(attr) != 0) {
        free(ids);
        return NULL;
    }
    /* libgomp keeps the default where the size is refused (below
     * PTHREAD_STACK_MIN, with its own warning). */
    if (stack)
        pthread_attr_setstacksize(attr, stack);
    if (!ids)
        return attr;
    omp_get_place_proc_ids(*place, ids);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int j = 0; j < k; j++)
        if (ids[j] >= 0 && ids[j] < CPU_SETSIZE)
            CPU_SET(ids[j], &set);
    free(ids);
    pthread_attr_setaffinity_np(attr, sizeof set, &set);
    return attr;
#else
    (void)attr;
    return NULL;
#endif
}

/* Where a bound thread could not start: its place's CPUs and the variable
 * that made the places, for the message. */
static void openmp_place_said(int place, char *buf, size_t len)
{
    const char *var = getenv("OMP_PLACES")          ? "OMP_PLACES"
                      : getenv("GOMP_CPU_AFFINITY") ? "GOMP_CPU_AFFINITY"
                                                    : "OMP_PROC_BIND";
    size_t used = (size_t)snprintf(buf, len, "%s's place %d (CPU", var, place);
#ifdef _OPENMP
    const int k = omp_get_place_num_procs(place);
    int *ids = k > 0 ? malloc((size_t)k * sizeof *ids) : NULL;
    if (ids) {
        omp_get_place_proc_ids(place, ids);
        for (int j = 0; j < k && used + 16 < len; j++)
            used += (size_t)snprintf(buf + used, len - used, "%s%d",
                                     j ? "," : " ", ids[j]);
    }
    free(ids);
#endif
    if (used + 1 < len)
        snprintf(buf + used, len - used, ")");
}

/* The stack of openmp_can_start's second trial: small enough that as
 * many threads fit wherever the default stacks did not for want of
 * address space. */
#define OPENMP_SMALL_STACK ((size_t)128 << 10)

static pthread_attr_t *openmp_small_stack_attr(int i, void *ctx,
                                               pthread_attr_t *attr)
{
    (void)i;
    (void)ctx;
    if (pthread_attr_init(attr) != 0)
        return NULL;
    pthread_attr_setstacksize(attr, OPENMP_SMALL_STACK);
    return attr;
}

/* Whether 'threads' threads can run at once here: libgomp cannot start a
 * team's thread (a process limit: ulimit -u, a control group's pids.max;
 * stacks the address space cannot hold) and exits with its own message
 * (a thread bound to a CPU that is not here, too), so the team is tried
 * first with as many threads, each bound
 * as libgomp would bind it, which are then ended.  Returns 0, or -1 with
 * err naming the limit or the place and the count that can start. */
int openmp_can_start(int threads, char *err)
{
    static int started_before;
    /* libgomp gives a team no more than OMP_THREAD_LIMIT threads, without
     * a word: --threads 4 under OMP_THREAD_LIMIT=2 had run 2, the JSON
     * saying 4. */
    if (threads > wg_thread_limit())
        return wg_fail(err, "cannot start %d threads, only %d: "
                       "OMP_THREAD_LIMIT='%s' allows no more; give "
                       "--threads %d, or a larger OMP_THREAD_LIMIT", threads,
                       wg_thread_limit(), getenv("OMP_THREAD_LIMIT"),
                       wg_thread_limit());
    if (threads <= 1 || started_before >= threads)
        return 0;
    /* This thread is the team's first; the others are tried, each bound
     * to its place as libgomp binds it: a place with no CPU this machine
     * has (GOMP_CPU_AFFINITY="0 7" on 2 CPUs; libgomp keeps such places
     * from it, not from OMP_PLACES) failed libgomp's pthread_create, and
     * libgomp exited ("Thread creation failed: Invalid argument"), --mesh
     * all too. */
    openmp_trial trial = {threads, -1};
    int e;
    const int n = 1 + wg_threads_try(threads - 1, openmp_trial_attr, &trial, &e);
    const int place = trial.place; /* the last thread tried */
    if (e < 0)
        return wg_fail(err, "openmp: out of memory for %d threads", threads);
    if (n >= threads) {
        started_before = threads;
        return 0;
    }
    if (e == EINVAL && place >= 0) {
        char where[256];
        openmp_place_said(place, where, sizeof where);
        return wg_fail(err, "cannot start %d threads bound to their places, "
                       "only %d: thread %d is bound to %s, none of which "
                       "this process may use (%s); give --threads %d, or "
                       "places of the CPUs here", threads, n, n, where,
                       strerror(e), n);
    }
    /* A stack too large to map (OMP_STACKSIZE=100G) fails as a process
     * limit does, with EAGAIN: a thread with the default stack that
     * starts tells the two apart. */
    const char *var;
    const unsigned long stack = openmp_stack_size(&var);
    int plain_error;
    if (stack && wg_threads_try(1, NULL, NULL, &plain_error) == 1)
        return wg_fail(err, "cannot start %d threads, only %d: each needs "
                       "the stack of %lu bytes that %s='%s' asks for (%s); "
                       "give a smaller %s, or --threads %d", threads, n,
                       stack, var, getenv(var), strerror(e), var, n);
    /* So do threads of the default stack (the stack size limit, ulimit
     * -s) that the address space left cannot hold (ulimit -v): as many
     * that start with a small stack tell that from a process limit (it
     * had been said to be ulimit -u under ulimit -v 1000000 and --threads
     * 1024). */
    pthread_attr_t def;
    size_t each = 0;
    if (pthread_attr_init(&def) == 0) {
        pthread_attr_getstacksize(&def, &each);
        pthread_attr_destroy(&def);
    }
    if (!stack && each > OPENMP_SMALL_STACK &&
        wg_threads_try(threads - 1, openmp_small_stack_attr, NULL,
                       &plain_error) == threads - 1) {
        struct rlimit as;
        const int limited =
            getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
        char size[32];
        return wg_fail(err, "cannot start %d threads, only %d: each needs a "
                       "stack of %s (the stack size limit, ulimit -s), and "
                       "%s holds no more (%s); give --threads %d, or a "
                       "smaller ulimit -s", threads, n,
                       wg_bytes_text((double)each, size),
                       limited ? "the address space limit (ulimit -v)"
                               : "the memory this process may map",
                       strerror(e), n);
    }
    return wg_fail(err, "cannot start %d threads, only %d (%s: a "
                   "limit on processes, ulimit -u or a control group's "
                   "pids.max); give --threads %d", threads, n, strerror(e),
                   n);
}

/* The CPU the calling thread runs on, or -1 where that cannot be told. */
static int openmp_cpu(void)
{
#if defined(__linux__) && defined(SYS_getcpu)
    unsigned cpu;
    if (syscall(SYS_getcpu, &cpu, NULL, NULL) == 0)
        return (int)cpu;
#endif
    return -1;
}

/* Whether thread 'id' may spin: it knows its CPU and no other thread was
 * last seen there (one that has arrived is not on its way, but the
 * barrier does not tell which have; a thread that shares the CPU makes
 * it sleep at once either way). */
static int openmp_barrier_may_spin(const openmp_barrier *b, uint32_t id,
                                   int cpu)
{
    const uint32_t team = atomic_load_explicit(&b->team, memory_order_relaxed);
    if (cpu < 0)
        return 0;
    for (uint32_t i = 0; i < team; i++)
        if (i != id && atomic_load_explicit(&b->cpu[i],
                                            memory_order_relaxed) == cpu)
            return 0;
    return 1;
}

#ifdef __linux__
/* Move the calling thread to CPU 'to': its affinity narrowed to that CPU,
 * which the kernel moves it to at once, then widened back to 'mask', so
 * nothing stays bound (a thread it starts later, lavapipe's, inherits the
 * whole mask).  Returns 0, or -1 where the kernel refused the CPU. */
static int openmp_move_to(int to, const cpu_set_t *mask)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(to, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return -1;
    sched_setaffinity(0, sizeof *mask, mask);
    return 0;
}

/* A waiting thread finds a teammate last seen on its CPU: woken from a
 * sleep, Linux put it on its waker's CPU, and there the two take turns
 * (every later wait sleeps at once, and each sleep moves them together
 * again).  It moves to a CPU of its mask where no teammate was last seen,
 * if there is one (openmp_move_to).  Returns the CPU it is on.  Measured
 * at 512 with 100 steps: runs that had fallen together took 90-110 ms
 * against 78. */
static int openmp_barrier_move(openmp_barrier *b, uint32_t id, int cpu)
{
    cpu_set_t mine, taken, both, to;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0)
        return cpu;
    const uint32_t team = atomic_load_explicit(&b->team, memory_order_relaxed);
    CPU_ZERO(&taken);
    for (uint32_t i = 0; i < team; i++) {
        const int c = atomic_load_explicit(&b->cpu[i], memory_order_relaxed);
        if (c >= 0 && c < CPU_SETSIZE)
            CPU_SET(c, &taken);
    }
    CPU_AND(&both, &mine, &taken);
    CPU_XOR(&to, &mine, &both); /* mine and not taken */
    if (CPU_COUNT(&to) == 0)
        return cpu;
    int k = 0;
    while (!CPU_ISSET(k, &to))
        k++;
    if (openmp_move_to(k, &mine) != 0)
        return cpu;
    const int now = openmp_cpu();
    atomic_store_explicit(&b->cpu[id], now, memory_order_relaxed);
    return now;
}
#endif

/* Wait until every thread of the team has arrived, spinning for up to
 * 'spin' seconds where openmp_barrier_may_spin allows; or, with 'yield',
 * for up to 'spin' seconds in any case, giving the CPU to whatever else
 * waits for it at every turn (a thread of the team woken onto it). */
static void openmp_barrier_wait_spin(openmp_barrier *b, uint32_t id,
                                     double spin, int yield)
{
    const int cpu = openmp_cpu();
    const uint32_t team = atomic_load_explicit(&b->team, memory_order_relaxed);
    atomic_store_explicit(&b->cpu[id], cpu, memory_order_relaxed);
    const uint32_t gen = atomic_load_explicit(&b->gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->arrived, 1, memory_order_acq_rel) + 1 ==
        team) {
        b->opened = wg_now(); /* published by the release below */
        b->stop = b->stop_if && atomic_load(b->stop_if);
        atomic_store_explicit(&b->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->gen, 1, memory_order_release);
#ifdef __linux__
        syscall(SYS_futex, &b->gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#endif
        return;
    }
    int may = yield || openmp_barrier_may_spin(b, id, cpu);
#ifdef __linux__
    if (!may)
        may = openmp_barrier_may_spin(b, id, openmp_barrier_move(b, id, cpu));
#endif
    if (may) {
        const double until = wg_now() + spin;
        for (unsigned k = 1;; k++) {
            if (atomic_load_explicit(&b->gen, memory_order_acquire) != gen)
                return;
            if ((yield || (k & 63) == 0) && wg_now() > until) {
                if (!yield && spin >= OPENMP_SPIN_S)
                    atomic_store_explicit(&b->patient, 0,
                                          memory_order_relaxed);
                break;
            }
            if (yield)
                sched_yield();
#ifdef OPENMP_X86
            else
                _mm_pause();
#endif
        }
    }
    while (atomic_load_explicit(&b->gen, memory_order_acquire) == gen) {
#ifdef __linux__
        syscall(SYS_futex, &b->gen, FUTEX_WAIT_PRIVATE, gen, NULL, NULL, 0);
#else
        sched_yield();
#endif
    }
}

void openmp_barrier_wait(openmp_barrier *b, uint32_t id)
{
    openmp_barrier_wait_spin(b, id,
                             atomic_load_explicit(&b->patient,
                                                  memory_order_relaxed)
                                 ? OPENMP_SPIN_S
                                 : OPENMP_SPIN_SHARED_S,
                             0);
}

__attribute__((format(printf, 2, 3)))
void openmp_team_fail(openmp_team *tm, const char *fmt, ...)
{
    int none = 0;
    if (!atomic_compare_exchange_strong(&tm->failed, &none, 1))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tm->why, sizeof tm->why, fmt, ap);
    va_end(ap);
}

#ifdef __linux__
/* Where each thread should go as the team forms, into to[team]: a CPU
 * that no thread of the team is on, or -1 to stay.  Every thread computes
 * the same answer from the same snapshot: each CPU is kept by the first
 * thread found on it; a thread that found its CPU taken goes to the lowest
 * CPU it may run on that nobody holds, if there is one. */
static void openmp_team_place(const openmp_team *tm, uint32_t nt, int *to)
{
    cpu_set_t held, kept, any, free;
    CPU_ZERO(&held);
    CPU_ZERO(&kept);
    CPU_ZERO(&any);
    for (uint32_t i = 0; i < nt; i++) {
        if (tm->at[i] >= 0 && tm->at[i] < CPU_SETSIZE)
            CPU_SET(tm->at[i], &held);
        CPU_OR(&any, &any, &tm->allowed[i]);
    }
    /* free = any CPU a thread may run on that nobody holds.  With more
     * threads than CPUs it empties, and the rest stay at once (a search of
     * every CPU for each thread had made 1024 threads take 0.44 s). */
    CPU_AND(&free, &any, &held);
    CPU_XOR(&free, &any, &free);
    for (uint32_t i = 0; i < nt; i++) {
        const int c = tm->at[i];
        to[i] = -1;
        if (c >= 0 && c < CPU_SETSIZE && !CPU_ISSET(c, &kept)) {
            CPU_SET(c, &kept);
            continue;
        }
        cpu_set_t mine;
        CPU_AND(&mine, &tm->allowed[i], &free);
        if (CPU_COUNT(&mine) == 0)
            continue;
        for (int k = 0; k < CPU_SETSIZE && to[i] < 0; k++)
            if (CPU_ISSET(k, &mine))
                to[i] = k;
        CPU_CLR(to[i], &free);
    }
}
#endif

/* The team's start: threads that share a CPU move to CPUs of their own
 * where there are free ones (openmp_move_to: nothing stays bound).  Its
 * barriers spin for up to OPENMP_FORM_SPIN_S, yielding: a thread woken
 * onto a busy CPU runs at once, and a moved thread may wait milliseconds
 * for its vCPU, where a thread that slept through it would be woken onto
 * the mover's CPU.  Its time is counted as setup. */
#define OPENMP_FORM_SPIN_S 10e-3
void openmp_team_form(openmp_team *tm, uint32_t id, uint32_t nt)
{
#ifdef __linux__
    tm->at[id] = openmp_cpu();
    if (sched_getaffinity(0, sizeof tm->allowed[id], &tm->allowed[id]) != 0)
        CPU_ZERO(&tm->allowed[id]);
    /* The snapshot is complete after this barrier. */
    openmp_barrier_wait_spin(&tm->bar, id, OPENMP_FORM_SPIN_S, 1);
    int *to = malloc(nt * sizeof *to);
    if (to) {
        openmp_team_place(tm, nt, to);
        if (to[id] >= 0)
            openmp_move_to(to[id], &tm->allowed[id]);
        free(to);
    }
#else
    (void)nt;
#endif
    openmp_barrier_wait_spin(&tm->bar, id, OPENMP_FORM_SPIN_S, 1);
}
