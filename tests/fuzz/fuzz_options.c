/* fuzz_options.c: a libFuzzer target for worldgen's option parser.
 *
 * The input is split at NUL bytes and newlines into an argv; parse_args()
 * must return without crashing, and when it accepts the line, every setting
 * must lie in its documented range.  It is linked with options.c and
 * say.c, the parser worldgen's main calls: the fuzzer tests exactly the
 * code the binary runs.  worldgen has no file readers (its inputs are
 * options), so this is its one fuzz target.
 *
 *   make fuzz                       run for FUZZ_SECONDS (default 30) on the corpus
 *   make fuzz FUZZ_SECONDS=3600     longer, by hand */
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"
#include "say.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* --help and --version write to stdout: keep the fuzzer's output
     * readable (make fuzz also passes -close_fd_mask=2 for the usage
     * errors; libFuzzer still reports crashes). */
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        dup2(fd, 1);
        close(fd);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    char *argv[130];
    int argc = 0;
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    argv[argc++] = "worldgen";
    char *start = buf;
    for (size_t i = 0; i <= size && argc < 128; i++)
        if (buf[i] == '\0' || buf[i] == '\n') {
            buf[i] = '\0';
            argv[argc++] = start;
            start = buf + i + 1;
        }
    argv[argc] = NULL;

    settings s;
    optind = 0; /* GNU getopt: start over, reinitialising its state */
    int rc = parse_args(argc, argv, &s);
    if (rc == -1) {
        /* Accepted: every value lies in its documented range. */
        if (s.world.size < WG_SIZE_MIN || s.world.size > WG_SIZE_MAX ||
            s.world.octaves < 1 || s.world.octaves > WG_MAX_OCTAVES ||
            s.world.passes > WG_EROSION_MAX || s.threads < 0 ||
            s.threads > 1024 ||
            (s.heightmap && s.heightmap_format == WG_HM_NONE))
            __builtin_trap();
    } else if (rc != 0 && rc != EXIT_USAGE) {
        __builtin_trap(); /* the parser exits 0 or 2, nothing else */
    }
    free(buf);
    return 0;
}
