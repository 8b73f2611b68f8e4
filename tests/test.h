/* test.h: the test runner's small vocabulary.
 *
 * A test is 'WG_TEST(name) { ... }' at the start of a line in any tests/ C
 * file; the Makefile collects the names into build/tests/list.inc and
 * tests/run.c runs them in file order.  A check that fails records why and
 * the test goes on, so one run shows every failure. */
#ifndef WG_TEST_H
#define WG_TEST_H

#include <stddef.h>
#include <stdint.h>

#define WG_TEST(name) void wg_test_##name(void)

/* Record a failure of the running test unless 'cond' holds. */
#define CHECK(cond, ...) \
    wg_check((cond) != 0, __FILE__, __LINE__, #cond, "" __VA_ARGS__)
void wg_check(int ok, const char *file, int line, const char *expr,
              const char *fmt, ...);

/* Mark the running test skipped, with the reason (a missing device). */
void wg_skip(const char *fmt, ...);

/* Skip the running test, and return, in an AddressSanitizer build: its
 * shadow memory takes terabytes of address space, so a test that limits
 * it (ulimit -v) cannot run there. */
#if defined(__SANITIZE_ADDRESS__)
#define WG_SKIP_UNDER_ASAN_ULIMIT_V()                                          \
    do {                                                                       \
        wg_skip("AddressSanitizer reserves terabytes of shadow: ulimit -v "    \
                "cannot apply");                                               \
        return;                                                                \
    } while (0)
/* ... and a test that holds a run to its own peak (a memory control group
 * just over it): the shadow and the freed blocks' quarantine take more. */
#define WG_SKIP_UNDER_ASAN_PEAK()                                              \
    do {                                                                       \
        wg_skip("AddressSanitizer's shadow and quarantine pass the run's own " \
                "peak");                                                       \
        return;                                                                \
    } while (0)
#else
#define WG_SKIP_UNDER_ASAN_ULIMIT_V() ((void)0)
#define WG_SKIP_UNDER_ASAN_PEAK() ((void)0)
#endif

/* The result of running ./worldgen once. */
typedef struct wg_cli {
    int status;  /* exit status, or 128 + signal */
    char *out;   /* standard output, NUL-terminated (may hold binary) */
    size_t out_len;
    char *err;   /* standard error, NUL-terminated */
} wg_cli;

/* Run ./worldgen with the given arguments (NULL-terminated; no shell), with
 * stdin from /dev/null, capturing both outputs.  Free with wg_cli_free(). */
wg_cli wg_cli_run(const char *const *argv);
/* The same through /bin/sh -c, for pipes and redirections. */
wg_cli wg_cli_sh(const char *script);
/* Whether the program 'name' is on PATH (command -v), for tests that need
 * a tool make deps installs and skip without it. */
int wg_have_command(const char *name);
void wg_cli_free(wg_cli *c);

/* Read a whole file; NULL if it cannot be read.  Caller frees. */
void *wg_read_file(const char *path, size_t *len);

/* The runner's folder for test files (under $TMPDIR), removed when the
 * runner exits.  It is one folder shared by every test of the run, not one
 * per test: a test that replaces a file others use (./worldgen) works in a
 * subfolder of its own.  wg_cli_run() and wg_cli_sh() run there, with
 * ./worldgen a link to the binary under test. */
const char *wg_tmpdir(void);

/* A locale whose decimal point is a comma (de_DE.UTF-8, made once by
 * localedef in the runner's folder): the shell assignments that select it,
 * "LOCPATH='...' LC_ALL=de_DE.UTF-8", or NULL where it cannot be made (no
 * localedef or no locale sources: the caller skips). */
const char *wg_comma_locale(void);

/* The source tree the runner started in (where ./worldgen was built). */
const char *wg_srcdir(void);

/* Fields of a world made by the named backend (scalar is the reference).
 * Returns 0, or -1 with the reason printed.  Free with wg_fields_free(). */
struct wg_fields;
struct wg_world;
int wg_make_world(const char *backend, const struct wg_world *w, int threads,
                  struct wg_fields *out);

/* Read a PNG that must have 'depth' bits (8 or 16) and 'channels' (1 grey,
 * 3 RGB): rows top to bottom, 16-bit samples in host order.  Its tEXt chunks
 * go to text[text_len] as "key=text" lines (text may be NULL).  NULL when the
 * file cannot be read or is another kind of PNG.  Caller frees. */
void *wg_read_png(const char *path, int depth, int channels, uint32_t *w,
                  uint32_t *h, char *text, size_t text_len);

/* Check that 'backend' (with 'threads', 0 for its default) reproduces the
 * stage 3 conformance vectors in tests/vectors to the bit (test_spec.c). */
void wg_spec_check_hydraulic_vectors(const char *backend, int threads);

/* Largest |a[i] - b[i]| over n floats, and whether they are identical to
 * the bit. */
double wg_max_diff(const float *a, const float *b, size_t n, int *identical);

#endif
