/* out.h: the measuring tools' standard output (scripts/resolution.c,
 * roughness.c, drainage.c, limits.c), each built alone with one cc
 * command, so its one function is static in a header.
 *
 * Figures that could not be written (a full disk, a closed descriptor)
 * are a failure, said with the cause, exit 1: the tools had exited 0 with
 * them lost, and bench.sh -l, which takes limits' status for its
 * success, had kept a cut or empty build/limits.txt as the machine's
 * limits. */
#ifndef WG_SCRIPTS_OUT_H
#define WG_SCRIPTS_OUT_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Flush and close standard output: 0, or 1 after saying, with the
 * program's name 'prog', why what was written to it is lost (an earlier
 * write's failure too, which stdio remembers but fclose() does not
 * report). */
static int out_close(const char *prog)
{
    int lost = ferror(stdout), e = 0;
    if (fflush(stdout) != 0) {
        lost = 1;
        e = errno;
    }
    if (fclose(stdout) != 0) {
        lost = 1;
        e = e ? e : errno;
    }
    if (lost)
        fprintf(stderr, "%s: cannot write to standard output: %s\n", prog,
                e ? strerror(e) : "write error");
    return lost;
}

#endif
