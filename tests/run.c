/* run.c: the test runner.  Runs every WG_TEST in file order (or those whose
 * names contain argv[1]), prints one line per test and ends with
 * "N passed, N failed". */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(run_tmp, sizeof run_tmp, "%s/worldgen-test-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(run_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    atexit(run_cleanup);
    char self[4200], link[300];
    if (!getcwd(run_src, sizeof run_src)) {
        perror("getcwd");
        return 1;
    }
    snprintf(self, sizeof self, "%s/worldgen", run_src);
    snprintf(link, sizeof link, "%s/worldgen", run_tmp);
    if (symlink(self, link) != 0) {
        perror("symlink");
        return 1;
    }

    int passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < sizeof run_tests / sizeof run_tests[0]; i++) {
        if (argc > 1 && !strstr(run_tests[i].name, argv[1]))
            continue;
        run_failures = 0;
        run_skipped = 0;
        run_tests[i].fn();
        if (run_failures) {
            failed++;
            printf("FAIL %s\n", run_tests[i].name);
        } else if (run_skipped) {
            skipped++;
            printf("skip %s\n", run_tests[i].name);
        } else {
            passed++;
            printf("ok   %s\n", run_tests[i].name);
        }
        fflush(stdout);
    }
    if (skipped)
        printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    else
        printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
