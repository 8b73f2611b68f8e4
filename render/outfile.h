/* outfile.h: output files that appear whole or not at all.
 *
 * A path is written through a temporary file in the same folder, which is
 * renamed over the path only once every byte is written and flushed; on any
 * failure, or an interrupt, the temporary is removed.  "-" is standard
 * output.  Every writer in render/ writes to the FILE * this hands out. */
#ifndef WG_OUTFILE_H
#define WG_OUTFILE_H

#include <stdio.h>

typedef struct wg_outfile {
    FILE *fp;         /* where to write: the temporary, or stdout */
    const char *path; /* the final name, as given (not copied) */
    int slot;         /* index in the interrupt cleanup table, or -1 */
    int is_stdout;
} wg_outfile;

/* Open 'path' ("-" for standard output) for writing.  Returns 0, or -1 with
 * the reason in err[WG_ERR_LEN] (a folder
 * that does not exist, a directory, no permission). */
int wg_outfile_open(wg_outfile *o, const char *path, char *err);

/* Finish: flush, close and rename the temporary over the path.  Returns 0,
 * or -1 with the reason (disk full, I/O error); the temporary is then
 * removed and the path is left as it was. */
int wg_outfile_commit(wg_outfile *o, char *err);

/* Give up: close and remove the temporary.  No operation is performed if
 * the file is not open. */
void wg_outfile_abort(wg_outfile *o);

/* Remove every temporary still open.  Async-signal-safe: the interrupt
 * handler calls it before the process exits. */
void wg_outfile_remove_all(void);

#endif
