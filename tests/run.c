/* run.c: the test runner.  Runs every WG_TEST (or those whose names
 * contain argv[1]), two at a time where there are two CPUs (WG_TEST_JOBS
 * sets how many; 1 runs them in file order in this process), prints each
 * test's messages and one line per test as it ends, and ends with
 * "N passed, N failed". */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#define X(name) void wg_test_##name(void);
#include "tests/list.inc"
#undef X

static const struct {
    const char *name;
    void (*fn)(void);
} run_tests[] = {
#define X(name) {#name, wg_test_##name},
#include "tests/list.inc"
#undef X
};

static int run_failures;   /* failed checks in the running test */
static int run_skipped;    /* the running test was skipped */
static char run_tmp[256];  /* the runner's scratch folder */
static char run_src[4096]; /* the source tree */

void wg_check(int ok, const char *file, int line, const char *expr,
              const char *fmt, ...)
{
    if (ok)
        return;
    run_failures++;
    fprintf(stderr, "    %s:%d: check failed: %s", file, line, expr);
    if (fmt[0]) {
        va_list ap;
        va_start(ap, fmt);
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
}

void wg_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("    skipped: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    run_skipped = 1;
}

const char *wg_tmpdir(void)
{
    return run_tmp;
}

const char *wg_srcdir(void)
{
    return run_src;
}

void *wg_read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, fp)) > 0) {
        n += got;
        if (n == cap) {
            char *bigger = realloc(buf, cap * 2 + 1);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(fp);
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

/* How long a command the tests run may take before it is killed, with
 * every process it started, and counted a failure: a command that blocked
 * (a worldgen waiting for a reader on a FIFO, when a test's "missing"
 * folder existed on the machine) had stopped the whole suite, and CI with
 * it, instead of failing one test.  The slowest command, under the
 * sanitizers, takes well under a minute. */
#ifndef RUN_LIMIT_S
#define RUN_LIMIT_S 600
#endif

static volatile sig_atomic_t run_alarmed;

static void run_alarm(int sig)
{
    (void)sig;
    run_alarmed = 1;
}

/* Wait for the command pid (the leader of its own process group), killing
 * the group after RUN_LIMIT_S seconds; returns its wait status. */
static int run_wait(pid_t pid, const char *const *argv)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = run_alarm; /* no SA_RESTART: waitpid returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old);
    run_alarmed = 0;
    alarm(RUN_LIMIT_S);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR)
            break;
        if (run_alarmed) {
            run_alarmed = 0;
            run_failures++;
            fprintf(stderr, "    killed after %d s:", RUN_LIMIT_S);
            for (int i = 0; argv[i]; i++)
                fprintf(stderr, " %s", argv[i]);
            fputc('\n', stderr);
            kill(-pid, SIGKILL);
        }
    }
    alarm(0);
    sigaction(SIGALRM, &old, NULL);
    return st;
}

static wg_cli run_spawn(const char *file, const char *const *argv)
{
    wg_cli c = {0};
    char out_path[300], err_path[300];
    snprintf(out_path, sizeof out_path, "%s/.stdout", run_tmp);
    snprintf(err_path, sizeof err_path, "%s/.stderr", run_tmp);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* a group of its own, for run_wait to kill */
        int in = open("/dev/null", O_RDONLY);
        int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        /* Run in the scratch folder, where ./worldgen is a link to the
         * binary: the default outputs (world.png) land there, not in the
         * source tree. */
        if (chdir(run_tmp) != 0)
            _exit(126);
        execv(file, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    if (pid > 0) {
        setpgid(pid, pid); /* as the child does: whichever runs first */
        st = run_wait(pid, argv);
    } else {
        run_failures++;
        perror("    fork");
    }
    c.status = pid < 0              ? 127
               : WIFEXITED(st)     ? WEXITSTATUS(st)
                                   : 128 + WTERMSIG(st);
    c.out = wg_read_file(out_path, &c.out_len);
    c.err = wg_read_file(err_path, NULL);
    if (!c.out)
        c.out = calloc(1, 1);
    if (!c.err)
        c.err = calloc(1, 1);
    return c;
}

wg_cli wg_cli_run(const char *const *argv)
{
    const char *full[64] = {"./worldgen"};
    int n = 1;
    for (; argv[n - 1] && n < 63; n++)
        full[n] = argv[n - 1];
    full[n] = NULL;
    return run_spawn("./worldgen", full);
}

wg_cli wg_cli_sh(const char *script)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    return run_spawn("/bin/sh", argv);
}

int wg_have_command(const char *name)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "command -v '%s' >/dev/null", name);
    wg_cli c = wg_cli_sh(cmd);
    int have = c.status == 0;
    wg_cli_free(&c);
    return have;
}

void wg_cli_free(wg_cli *c)
{
    free(c->out);
    free(c->err);
    c->out = c->err = NULL;
}

static void run_cleanup(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", run_tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", run_tmp);
}

/* The process's scratch folder, with ./worldgen a link to the tree's
 * binary (each worker has its own: the tests write fixed names there).
 * Returns 0, or -1 with the reason on stderr. */
static int run_scratch(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(run_tmp, sizeof run_tmp, "%s/worldgen-test-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(run_tmp)) {
        perror("mkdtemp");
        return -1;
    }
    atexit(run_cleanup);
    char self[4200], link[300];
    snprintf(self, sizeof self, "%s/worldgen", run_src);
    snprintf(link, sizeof link, "%s/worldgen", run_tmp);
    if (symlink(self, link) != 0) {
        perror("symlink");
        return -1;
    }
    return 0;
}

/* Whether test i checks a shell script's plumbing, which the sanitized
 * suite leaves to the plain one: the tests of scripts/tiles and
 * scripts/bench.sh (tiles_*, bench_*), 4.5 of the sanitized suite's 8.5
 * minutes on the 2-core machine, whose worldgen runs are the region and
 * command-line runs that the suite's own tests make under the sanitizers.
 * Those that run worldgen options no other test runs (a tile's normals and
 * albedo, --shared-edges) stay. */
static int run_script_test(size_t i)
{
    const char *n = run_tests[i].name;
    if (!strcmp(n, "tiles_normals_and_albedo_are_the_whole_runs") ||
        !strcmp(n, "tiles_shared_edges_r16_are_the_whole_worlds_windows"))
        return 0;
    return !strncmp(n, "tiles_", 6) || !strncmp(n, "bench_", 6);
}

#if defined(__SANITIZE_ADDRESS__)
#define RUN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RUN_SANITIZED 1
#endif
#endif

/* Seconds on the monotonic clock. */
static double run_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The status line of test i, which took 'took' seconds: a test of a
 * second or more says how long, so that a slow CI can be read off its log
 * (its 15 minutes had become 16 with nothing to say where). */
static int run_status(char *line, size_t size, const char *st, size_t i,
                      double took)
{
    if (took < 1.0)
        return snprintf(line, size, "%s %s\n", st, run_tests[i].name);
    return snprintf(line, size, "%s %s (%.1f s)\n", st, run_tests[i].name,
                    took);
}

/* Run test i; returns its status line's word: "ok  ", "FAIL" or "skip". */
static const char *run_one(size_t i)
{
    run_failures = 0;
    run_skipped = 0;
#ifdef RUN_SANITIZED
    if (run_script_test(i)) {
        wg_skip("checks a script's plumbing: the plain suite runs it");
        return "skip";
    }
#else
    (void)run_script_test;
#endif
    run_tests[i].fn();
    return run_failures ? "FAIL" : run_skipped ? "skip" : "ok  ";
}

/* Tests that must not run beside each other, kept to worker 0: the Slurm
 * cluster (one munged, one spool). */
static int run_pinned(size_t i)
{
    return strstr(run_tests[i].name, "slurm") != NULL;
}

/* Tests that must run alone, after the others, one at a time: the X
 * window tests, which drive a window by its timing (under the sanitizers,
 * beside another worker's test, one had waited 73 s for a window that
 * xdotool then could not find), and bench.sh's signal tests, which give
 * the script 10 s to end (a CI run saw one end with status 2, once). */
static int run_solo(size_t i)
{
    return strncmp(run_tests[i].name, "window_", 7) == 0 ||
           strncmp(run_tests[i].name, "bench_signal", 12) == 0;
}

/* A worker: reads test numbers (uint32) from fd 'cmd' until EOF, runs
 * each, and writes its record to fd 'rep': what the test wrote to stderr,
 * then its status line.  Its stderr goes to a file of its scratch folder
 * in between, so that a record holds its own test's messages. */
static int run_worker(int cmd, int rep)
{
    if (run_scratch() != 0)
        return 1;
    char log[300];
    snprintf(log, sizeof log, "%s/.log", run_tmp);
    int fd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0)
        return 1;
    uint32_t i;
    while (read(cmd, &i, sizeof i) == (ssize_t)sizeof i) {
        double t0 = run_now();
        const char *st = run_one(i);
        double took = run_now() - t0;
        fflush(NULL);
        size_t len = 0;
        char *msg = wg_read_file(log, &len);
        char line[300];
        int n = run_status(line, sizeof line, st, i, took);
        size_t total = len + (size_t)n;
        char *rec = malloc(total + 4);
        if (!rec)
            return 1;
        uint32_t t = (uint32_t)total;
        memcpy(rec, &t, 4);
        if (msg)
            memcpy(rec + 4, msg, len);
        memcpy(rec + 4 + len, line, (size_t)n);
        free(msg);
        for (size_t off = 0; off < total + 4;) {
            ssize_t w = write(rep, rec + off, total + 4 - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return 1;
            off += (size_t)w;
        }
        free(rec);
        if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
            return 1;
    }
    return 0;
}

/* Read exactly n bytes; returns 0, or -1 at EOF or on an error. */
static int run_read(int fd, void *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* The tests, 'jobs' at a time: each worker a process of its own with its
 * own scratch folder, handed the next test when it reports one.  Counts
 * into the three totals. */
static void run_parallel(const size_t *todo, size_t count, int jobs,
                         int *passed, int *failed, int *skipped)
{
    enum { MAXJ = 16 };
    int cmd[MAXJ], rep[MAXJ];
    pid_t pid[MAXJ];
    long busy[MAXJ]; /* the test a worker runs, or -1 */
    char *taken = calloc(count ? count : 1, 1);
    if (!taken) {
        perror("calloc");
        exit(1);
    }
    fflush(NULL);
    for (int j = 0; j < jobs; j++) {
        int c[2], r[2];
        if (pipe(c) != 0 || pipe(r) != 0) {
            perror("pipe");
            exit(1);
        }
        /* Not inherited by the tests' commands, which could read or write
         * them (a make among them takes the fds its MAKEFLAGS names). */
        for (int k = 0; k < 2; k++) {
            fcntl(c[k], F_SETFD, FD_CLOEXEC);
            fcntl(r[k], F_SETFD, FD_CLOEXEC);
        }
        pid[j] = fork();
        if (pid[j] < 0) {
            perror("fork");
            exit(1);
        }
        if (pid[j] == 0) {
            for (int k = 0; k < j; k++) { /* the earlier workers' ends */
                close(cmd[k]);
                close(rep[k]);
            }
            close(c[1]);
            close(r[0]);
            exit(run_worker(c[0], r[1]));
        }
        close(c[0]);
        close(r[1]);
        cmd[j] = c[1];
        rep[j] = r[0];
        busy[j] = -1;
    }
    /* A worker that died leaves its pipe without a reader: the parent
     * counts its test failed rather than dying of SIGPIPE (only here:
     * an ignored signal stays ignored across exec, and the workers' own
     * commands must see the default). */
    signal(SIGPIPE, SIG_IGN);
    /* Hand worker j the next test it may take (pinned ones to worker 0
     * only); returns 0 when none is left for it. */
#define RUN_HAND(j)                                                          \
    do {                                                                     \
        busy[j] = -1;                                                        \
        for (size_t k_ = 0; k_ < count; k_++) {                              \
            if (taken[k_] || (j != 0 && run_pinned(todo[k_])))               \
                continue;                                                    \
            uint32_t t_ = (uint32_t)todo[k_];                                \
            if (write(cmd[j], &t_, sizeof t_) != (ssize_t)sizeof t_)         \
                break;                                                       \
            taken[k_] = 1;                                                   \
            busy[j] = (long)todo[k_];                                        \
            break;                                                           \
        }                                                                    \
        if (busy[j] < 0 && cmd[j] >= 0) {                                    \
            close(cmd[j]);                                                   \
            cmd[j] = -1;                                                     \
        }                                                                    \
    } while (0)
    for (int j = 0; j < jobs; j++)
        RUN_HAND(j);
    int alive = jobs;
    while (alive > 0) {
        fd_set rd;
        FD_ZERO(&rd);
        int top = -1;
        for (int j = 0; j < jobs; j++)
            if (rep[j] >= 0) {
                FD_SET(rep[j], &rd);
                top = rep[j] > top ? rep[j] : top;
            }
        if (select(top + 1, &rd, NULL, NULL, NULL) < 0) {
            if (errno == EINTR)
                continue;
            perror("select");
            exit(1);
        }
        for (int j = 0; j < jobs; j++) {
            if (rep[j] < 0 || !FD_ISSET(rep[j], &rd))
                continue;
            uint32_t len;
            char *rec = NULL;
            if (run_read(rep[j], &len, 4) == 0 && (rec = malloc(len + 1)) &&
                run_read(rep[j], rec, len) == 0) {
                fwrite(rec, 1, len, stdout);
                fflush(stdout);
                /* The status line is the record's last. */
                char *last = rec + len - 1;
                while (last > rec && last[-1] != '\n')
                    last--;
                if (!strncmp(last, "FAIL", 4))
                    (*failed)++;
                else if (!strncmp(last, "skip", 4))
                    (*skipped)++;
                else
                    (*passed)++;
                free(rec);
                RUN_HAND(j);
                continue;
            }
            free(rec);
            /* The worker is gone: its test failed, and it takes no more. */
            int st = 0;
            waitpid(pid[j], &st, 0);
            if (busy[j] >= 0) {
                printf("FAIL %s (the test's process ended: %s %d)\n",
                       run_tests[busy[j]].name,
                       WIFSIGNALED(st) ? "signal" : "status",
                       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
                (*failed)++;
            }
            close(rep[j]);
            rep[j] = -1;
            if (cmd[j] >= 0)
                close(cmd[j]);
            cmd[j] = -1;
            pid[j] = -1;
            alive--;
        }
    }
#undef RUN_HAND
    for (int j = 0; j < jobs; j++)
        if (pid[j] > 0)
            waitpid(pid[j], NULL, 0);
    /* Tests no worker was left to take (a worker that ended early). */
    for (size_t k = 0; k < count; k++)
        if (!taken[k]) {
            printf("FAIL %s (not run: no worker left)\n",
                   run_tests[todo[k]].name);
            (*failed)++;
        }
    free(taken);
}

/* How many tests run at once: WG_TEST_JOBS, else the CPUs up to 2 (the
 * tests' own commands use every CPU; two at once halve the suite where a
 * test waits on files, daemons or a shell). */
static int run_jobs(void)
{
    const char *e = getenv("WG_TEST_JOBS");
    if (e && *e) {
        int j = atoi(e);
        return j < 1 ? 1 : j > 16 ? 16 : j;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 2 ? 2 : 1;
}

int main(int argc, char **argv)
{
    /* Started by 'make -j test', the runner holds no token of make's
     * jobserver, so no make its tests start may use it: MAKEFLAGS had
     * named descriptors 3 and 4, which here were a worker's pipes, and a
     * test's make read and wrote them (CI: a worker "ended" mid-test). */
    unsetenv("MAKEFLAGS");
    unsetenv("MFLAGS");
    unsetenv("MAKELEVEL");
    unsetenv("MAKEOVERRIDES");
    if (!getcwd(run_src, sizeof run_src)) {
        perror("getcwd");
        return 1;
    }
    size_t all = sizeof run_tests / sizeof run_tests[0], count = 0;
    size_t *todo = malloc(all * sizeof *todo);
    if (!todo) {
        perror("malloc");
        return 1;
    }
    for (size_t i = 0; i < all; i++)
        if (argc <= 1 || strstr(run_tests[i].name, argv[1]))
            todo[count++] = i;

    int passed = 0, failed = 0, skipped = 0, jobs = run_jobs();
    if (jobs > 1 && count > 1) {
        /* The solo tests to the end of the list, in their order, and run
         * by one worker once the others are done. */
        size_t shared = 0, solo = 0;
        size_t *order = malloc(count * sizeof *order);
        if (!order) {
            perror("malloc");
            return 1;
        }
        for (size_t k = 0; k < count; k++)
            if (!run_solo(todo[k]))
                order[shared++] = todo[k];
        for (size_t k = 0; k < count; k++)
            if (run_solo(todo[k]))
                order[shared + solo++] = todo[k];
        if (shared)
            run_parallel(order, shared, jobs, &passed, &failed, &skipped);
        if (solo)
            run_parallel(order + shared, solo, 1, &passed, &failed, &skipped);
        free(order);
    } else {
        if (run_scratch() != 0)
            return 1;
        for (size_t k = 0; k < count; k++) {
            double t0 = run_now();
            const char *st = run_one(todo[k]);
            char line[300];
            run_status(line, sizeof line, st, todo[k], run_now() - t0);
            fputs(line, stdout);
            fflush(stdout);
            passed += st[0] == 'o';
            failed += st[0] == 'F';
            skipped += st[0] == 's';
        }
    }
    free(todo);
    if (skipped)
        printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
