/* say.c: worldgen's messages on standard error (say.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "say.h"

/* Print "worldgen: " and the message made from fmt, then a newline, to
 * standard error.  Messages quote values and paths as given: a control
 * character in one (an escape sequence, a newline, a carriage return) is
 * shown as \xNN, so it can neither drive the terminal nor forge a line. */
static void vsay(const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    char small[1024], *msg = small;
    int len = vsnprintf(small, sizeof small, fmt, ap);
    if (len >= (int)sizeof small && (msg = malloc((size_t)len + 1)) != NULL) {
        vsnprintf(msg, (size_t)len + 1, fmt, again);
    } else if (len < 0) {
        snprintf(small, sizeof small, "%s", fmt); /* an encoding error */
    } else if (len >= (int)sizeof small) {
        msg = small; /* no memory: cut short, better than nothing */
    }
    va_end(again);
    fputs("worldgen: ", stderr);
    for (const char *p = msg; *p; p++) {
        unsigned char u = (unsigned char)*p;
        if (u < 0x20 || u == 0x7f)
            fprintf(stderr, "\\x%02x", u);
        else
            fputc(u, stderr);
    }
    fputc('\n', stderr);
    if (msg != small)
        free(msg);
}

void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    fputs("Try 'worldgen --help' for more information.\n", stderr);
    return EXIT_USAGE;
}
