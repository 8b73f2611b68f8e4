/* outfile.c: atomic output files (temporary + rename) and their cleanup on
 * interrupt.
 *
 * The temporaries' names live in a fixed table of plain char arrays, so the
 * signal handler can unlink them without touching the heap. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "outfile.h"

#define OUTFILE_SLOTS 8
#define OUTFILE_PATH_MAX 4096

static char outfile_tmp[OUTFILE_SLOTS][OUTFILE_PATH_MAX];
static volatile sig_atomic_t outfile_used[OUTFILE_SLOTS];

int wg_outfile_open(wg_outfile *o, const char *path, char *err)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->slot = -1;
    if (strcmp(path, "-") == 0) {
        o->fp = stdout;
        o->is_stdout = 1;
        return 0;
    }
    if (path[0] == '\0')
        return wg_fail(err, "empty file name");

    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return wg_fail(err, "it is a directory");
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device, FIFO or socket (/dev/stdout, a named pipe): write to it
         * directly; renaming a temporary over it would replace the node. */
        o->fp = fopen(path, "wb");
        if (!o->fp)
            return wg_fail(err, "%s", strerror(errno));
        return 0;
    }

    int slot = -1;
    for (int i = 0; i < OUTFILE_SLOTS; i++)
        if (!outfile_used[i]) {
            slot = i;
            break;
        }
    if (slot < 0)
        return wg_fail(err, "too many open outputs");

    /* The temporary sits beside the path, so the rename stays within one
     * file system and is atomic. */
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    int len = snprintf(outfile_tmp[slot], OUTFILE_PATH_MAX, "%.*s.%s.tmp-XXXXXX",
                       dirlen, path, slash ? slash + 1 : path);
    if (len < 0 || len >= OUTFILE_PATH_MAX)
        return wg_fail(err, "path too long");

    outfile_used[slot] = 1;
    int fd = mkstemp(outfile_tmp[slot]);
    if (fd < 0) {
        int e = errno;
        outfile_used[slot] = 0;
        if (e == ENOENT)
            return wg_fail(err, "the folder '%.*s' does not exist",
                           dirlen ? dirlen : 1, dirlen ? path : ".");
        return wg_fail(err, "%s", strerror(e));
    }
    /* mkstemp makes the file 0600; give it the mode a plain open would. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);

    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        int e = errno;
        close(fd);
        unlink(outfile_tmp[slot]);
        outfile_used[slot] = 0;
        return wg_fail(err, "%s", strerror(e));
    }
    o->slot = slot;
    return 0;
}

int wg_outfile_commit(wg_outfile *o, char *err)
{
    if (o->is_stdout) {
        /* stdout is closed by the caller at exit; flush now to report. */
        if (fflush(stdout) != 0 || ferror(stdout))
            return wg_fail(err, "%s", strerror(errno));
        o->fp = NULL;
        return 0;
    }
    int failed = fflush(o->fp) != 0 || ferror(o->fp);
    int e = errno;
    if (fclose(o->fp) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    o->fp = NULL;
    if (o->slot < 0) /* written in place: nothing to rename */
        return failed ? wg_fail(err, "%s", strerror(e ? e : EIO))
                      : 0;
    if (!failed && rename(outfile_tmp[o->slot], o->path) != 0) {
        failed = 1;
        e = errno;
    }
    if (failed) {
        unlink(outfile_tmp[o->slot]);
        outfile_used[o->slot] = 0;
        o->slot = -1;
        return wg_fail(err, "%s", strerror(e));
    }
    outfile_used[o->slot] = 0;
    o->slot = -1;
    return 0;
}

void wg_outfile_abort(wg_outfile *o)
{
    if (!o->fp)
        return;
    if (o->is_stdout) {
        o->fp = NULL;
        return;
    }
    fclose(o->fp);
    o->fp = NULL;
    if (o->slot >= 0) { /* a device written in place has no temporary */
        unlink(outfile_tmp[o->slot]);
        outfile_used[o->slot] = 0;
        o->slot = -1;
    }
}

void wg_outfile_remove_all(void)
{
    for (int i = 0; i < OUTFILE_SLOTS; i++)
        if (outfile_used[i])
            unlink(outfile_tmp[i]);
}
