/* say.h: worldgen's messages on standard error, and the exit statuses
 * beyond 0 and 1.  The command line's checks (options.c) and the run
 * (worldgen.c) both speak through these, so a message looks the same
 * wherever it comes from. */
#ifndef WG_SAY_H
#define WG_SAY_H

enum { EXIT_USAGE = 2, EXIT_DISAGREE = 3 };

/* "worldgen: " and the message made from fmt, then a newline, on standard
 * error; a control character in it is shown as \xNN (say.c). */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A usage error: the message, a pointer to --help, and EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
