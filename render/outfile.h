/* outfile.h: output files that appear whole or not at all, and the signal
 * handling that keeps it so.
 *
 * A path is written through a temporary file in the folder of what it
 * names, which is renamed over it only once every byte is written and
 * flushed; on any failure, or a fatal signal, the temporary is removed.
 * The temporary has no name (O_TMPFILE) until the renames, where the file
 * system allows, so that SIGKILL too leaves nothing behind.
 * A symbolic link is written through: the rename goes over its final
 * target, so the link stays a link (a dangling one gets its target made).
 * A replaced file keeps its mode (and its owner and group when we may set
 * them).  "-" is standard output; a name that means an open descriptor
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N) writes to that descriptor, and
 * a device, FIFO or socket is written in place: there is nothing to rename
 * over those.  Every writer in render/ writes to the FILE * this hands
 * out. */
#ifndef WG_OUTFILE_H
#define WG_OUTFILE_H

#include <stdio.h>

/* The longest path a message shows whole; a longer one is elided in the
 * middle, so that the reason after it always fits in WG_ERR_LEN. */
#define WG_PATH_SHOWN 160

typedef struct wg_outfile {
    FILE *fp;         /* where to write: the temporary, the device, stdout */
    const char *path; /* the final name, as given (not copied) */
    int slot;         /* index in the temporaries' table, or -1 */
    int how;          /* how it is written (outfile.c); 0: not open */
} wg_outfile;

/* Catch every asynchronous signal whose default action ends the process
 * (INT, TERM, HUP, QUIT, PIPE, ALRM, USR1, USR2, ...): remove the open
 * temporaries, then die of the same signal.  A signal ignored when the
 * process started stays ignored (nohup).  SIGXFSZ is ignored, so that a
 * file size limit makes the write fail with EFBIG, a reported error.  Call
 * once, early in main. */
void wg_outfile_catch_signals(void);

/* Keep descriptors 0, 1 and 2 taken: one closed by whoever started us is
 * opened read-only on /dev/null, so that no output file is given its
 * number (a message to stderr would land in it) and writing to it still
 * fails (EBADF).  Call first in main. */
void wg_outfile_hold_std(void);

/* Descriptor fd as it came, before it is closed or replaced: where
 * worldgen cleared its O_NONBLOCK (so that writes wait for a slow reader
 * of a pipe that another program made non-blocking), set again, since the
 * open file is that program's too.  Flush what stdio holds for it first.
 * Every such descriptor still open gets it back at exit anyway. */
void wg_outfile_give_back(int fd);

/* Open 'path' ("-" for standard output) for writing.  Returns 0, or -1 with
 * the reason in err[WG_ERR_LEN] (a folder that does not exist, a directory,
 * no permission, a name too long). */
int wg_outfile_open(wg_outfile *o, const char *path, char *err);

/* Flush the file and let go of its stream, keeping its temporary for
 * wg_outfile_commit (an unnamed one stays open until then).
 * May run on another thread than the one that opened it.  Returns 0, or -1
 * with the reason (disk full, a file size limit, a closed descriptor); the
 * caller then aborts. */
int wg_outfile_finish(wg_outfile *o, char *err);

/* Has a file written to standard output failed (wg_outfile_finish said
 * so, with the reason, to its caller)?  Then closing standard output at
 * exit fails too, and need not say so a second time. */
int wg_outfile_stdout_failed(void);

/* Finish (when not done yet), then rename the temporary over the path.
 * Returns 0, or -1 with the reason; the temporary is then removed and the
 * path is left as it was. */
int wg_outfile_commit(wg_outfile *o, char *err);

/* Commit n files as one set: either every one is in place, from this run,
 * or none of them is changed (one already renamed is removed again if it
 * is new, or given back its old content, kept meanwhile under a second
 * name beside it: a hard link, or the file itself moved aside where no
 * link can be made).  A file that can be neither linked nor moved (another
 * user's in a sticky folder, an immutable one) fails the set before any
 * rename.  Other runs committing a set in the same
 * folders wait, and the fatal signals wait, until the renames are done.
 * Returns 0, or -1 with the reason in err and the index of the file that
 * failed in *failed; the n files are then all aborted.  While commits are
 * held (wg_outfile_hold), the files are finished and kept for
 * wg_outfile_commit_held instead. */
int wg_outfile_commit_set(wg_outfile *o, int n, int *failed, char *err);

/* Mark o, an open file, as a raster GDAL opens: when it is put in place,
 * the files GDAL kept beside the one it replaces, about that one's
 * content (NAME.aux.xml: statistics and metadata; NAME.ovr: overviews),
 * are removed, as GDAL's own writers remove them.  Nothing for a
 * descriptor, a device or a FIFO, which are written in place. */
void wg_outfile_dataset(wg_outfile *o);

/* Hold every commit from now on until wg_outfile_commit_held, which puts
 * all the files in place as one set, or wg_outfile_abort_held, which
 * removes them: so a run that fails part way, at its last output or by a
 * signal, replaces none of the files it was to write. */
void wg_outfile_hold(void);

/* Put every held file in place, as one set (wg_outfile_commit_set), and
 * stop holding.  Returns 0, or -1 with the file that failed and why in
 * err. */
int wg_outfile_commit_held(char *err);

/* Remove every held file's temporary, and stop holding. */
void wg_outfile_abort_held(void);

/* Could 'path' be written: its folder there and taking files, the name
 * not a directory, not another user's file in a sticky folder, not an
 * immutable or append-only file?  Tried by making and removing a
 * temporary beside it, so a run fails before its work, not after.
 * Descriptors, devices and FIFOs are not opened (they are when written).
 * Returns 0, or -1 with the reason in err, as wg_outfile_open. */
int wg_outfile_probe(const char *path, char *err);

/* Give up: close and remove the temporary.  No operation is performed if
 * the file is not open (a zeroed wg_outfile). */
void wg_outfile_abort(wg_outfile *o);

/* Remove every temporary still open.  Async-signal-safe: the signal
 * handler calls it before the process dies. */
void wg_outfile_remove_all(void);

/* Are a and b one file?  Both that exist: the same device and inode, links
 * followed; one or both not there yet: the same folder (by identity) and
 * the same final name.  "-", /dev/stdout, /dev/fd/1 and /proc/self/fd/1
 * are all standard output.  Character devices (/dev/null, a terminal) take
 * any number of writers and are one file only under one descriptor. */
int wg_outfile_same(const char *a, const char *b);

/* Does 'path' name standard output by its descriptor: "-", /dev/stdout,
 * /dev/fd/1, /proc/self/fd/1, or a link to one of them? */
int wg_outfile_is_stdout(const char *path);

/* Does 'path' name a terminal: a descriptor of ours that is one
 * (/dev/stderr on a terminal), or a terminal device (/dev/tty, a
 * /dev/pts/N), links followed?  Nothing is written to find out. */
int wg_outfile_is_terminal(const char *path);

/* Is 'path' standard error's file (wg_outfile_same), where the run's
 * messages go, and standard error something that is read: not a sink such
 * as /dev/null (a character device other than a terminal)? */
int wg_outfile_is_stderr(const char *path);

/* The descriptor of ours that 'path' names ("-": 1, /dev/fd/N, a link
 * to one), or -1 where it names none. */
int wg_outfile_descriptor(const char *path);

/* Is 'path', as spelled, a descriptor ("-", /dev/stdout, /dev/fd/N,
 * /proc/self/fd/N) or a character or block device (/dev/null) itself?
 * Such a name has no folder of the user's to put files beside it in.  A
 * link to a device is not: what goes beside it goes beside the link. */
int wg_outfile_is_device(const char *path);

/* 'path' for a message: itself when it has at most WG_PATH_SHOWN bytes,
 * else its start and end around "...", in buf[WG_PATH_SHOWN + 1]. */
const char *wg_outfile_shown(const char *path, char *buf);

#endif
