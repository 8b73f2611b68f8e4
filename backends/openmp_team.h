/* openmp_team.h: the OpenMP backend's team of threads (openmp_team.c), as
 * its stages see it: how many threads and whether they can start, the
 * barrier they meet at, and the first failure any of them reports.
 * Private to the backend's files (backends/openmp*.c), which define
 * _GNU_SOURCE before any include, for cpu_set_t. */
#ifndef WG_OPENMP_TEAM_H
#define WG_OPENMP_TEAM_H

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "backend.h"

/* x86: the PAUSE the team's spins wait with, and the vector intrinsics
 * of the stages' kernels. */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define OPENMP_X86 1
#endif

/* The team.  One parallel region spans the four stages (openmp_stages):
 * between stages, and within them, the threads meet at a barrier of their
 * own (openmp_barrier_wait) rather than libgomp's, and a region's end
 * never sends them to sleep.  On the 2-core VMs this project measures on,
 * a sleeping thread woken by another is put on the waker's CPU (ten of ten
 * tries: the idle vCPU counts as preempted to the kernel), where it waits
 * for the waker to sleep, and forcing it onto the idle vCPU takes 0.05 ms
 * to several ms; with a region a stage and passive waiting, the terrain,
 * erosion and normals at 512 took as long on two threads as on one. */

/* A barrier: a thread that arrives first spins for a while (below), then
 * sleeps (a futex on Linux).  libgomp's own barrier, under the passive
 * waiting worldgen sets, sleeps at once.  The kernel sometimes runs the
 * team's threads on one CPU, and there a spin only holds the CPU from the
 * thread it waits for (a spin regardless made 200 hydraulic steps at 128
 * take 50 ms against 31, in most runs): a thread spins only when no thread
 * still on its way was last seen on its CPU.  Releases and acquires order
 * each phase's writes before the next one's reads.
 *
 * How long: each sleep risks the wake onto the waker's CPU that
 * openmp_barrier_move undoes, so a team with a CPU each spins up to 1 ms,
 * about a hydraulic step at 512 (100 steps, 20 runs in turn: 76-94 ms with
 * 0.1 ms, mean 82; 76-81 ms with 1 ms, mean 78; 128 and 16 the same).  A
 * team with more threads than CPUs spins 0.1 ms: there the longer spin
 * only held CPUs that teammates needed (four threads on two CPUs, 512:
 * 89 -> 118 ms); and so does a team once a 1 ms spin has ended with the
 * barrier still shut, the sign of another program taking its CPUs (with
 * one beside it, 1 ms spins made 128 take 38 ms instead of 33: a sleeping
 * thread lets the other program move off its teammate's CPU). */
#define OPENMP_SPIN_S 1e-3
#define OPENMP_SPIN_SHARED_S 100e-6
typedef struct openmp_barrier {
    _Atomic uint32_t arrived; /* threads at the barrier now */
    _Atomic uint32_t gen;     /* how many times it has opened */
    _Atomic uint32_t team;    /* threads in the team (each sets it) */
    _Atomic int *cpu; /* [team]: the CPU each thread last arrived on */
    double opened; /* wg_now() as it last opened, by the last to arrive */
    /* *stop_if as it last opened: read by every thread after the barrier,
     * it is the same for all of them, where *stop_if itself may already
     * have been set by a fast thread in the next phase (its readers would
     * then part ways, and wait for each other for ever). */
    const _Atomic int *stop_if;
    int stop;
    _Atomic int patient; /* spin OPENMP_SPIN_S, else OPENMP_SPIN_SHARED_S */
} openmp_barrier;

/* What the team shares: its barrier, and the first failure of any of its
 * threads (a stage's memory), which every thread reads from the barrier
 * after it (bar.stop), so that all of them stop together. */
typedef struct openmp_team {
    openmp_barrier bar;
    _Atomic int failed;
    char why[WG_ERR_LEN]; /* written by the thread that set 'failed' */
#ifdef __linux__
    int *at;            /* [team]: each thread's CPU as the team forms */
    cpu_set_t *allowed; /* [team]: the CPUs each thread may run on */
#endif
} openmp_team;

/* The threads a job runs on: --threads, else libgomp's default
 * (OMP_NUM_THREADS) at most the cores and OMP_THREAD_LIMIT; 1 in a build
 * without OpenMP. */
int openmp_threads(const wg_job *job);

/* 0 where 'threads' threads can start here, else -1 with the reason in
 * err (openmp_team.c says how it tries them). */
int openmp_can_start(int threads, char *err);

/* Wait at the team's barrier until every thread of it has arrived. */
void openmp_barrier_wait(openmp_barrier *b, uint32_t id);

/* Record the team's first failure, which every thread then reads from
 * the next barrier (bar.stop). */
__attribute__((format(printf, 2, 3)))
void openmp_team_fail(openmp_team *tm, const char *fmt, ...);

/* The team's start, by each of its nt threads: threads that share a CPU
 * move to free ones; it ends at the barrier. */
void openmp_team_form(openmp_team *tm, uint32_t id, uint32_t nt);

#endif
