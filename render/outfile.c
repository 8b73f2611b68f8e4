/* outfile.c: atomic output files (temporary + rename), what a name means
 * (links followed, descriptors, devices), and the fatal signals that must
 * not leave a temporary behind.
 *
 * A temporary has no name while it is written and held: it is made with
 * O_TMPFILE in the target's folder and given a name (linkat) only when the
 * set it belongs to is put in place, with the signals blocked, just before
 * the renames.  So even SIGKILL, which no handler sees (the OOM killer,
 * timeout -s KILL), leaves nothing behind while the world is made and the
 * files written; before, every finished output's temporary stayed.  Where
 * the file system has no O_TMPFILE (or /proc is missing, and so the way to
 * name one), the temporary is named from the start, as mkstemp makes it.
 *
 * The temporaries' names live in a fixed table of plain char arrays, so the
 * signal handler can unlink them without touching the heap. */
/* O_TMPFILE */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/fs.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/backend.h"
#include "outfile.h"

/* Every file a run writes, sidecars included, held open at once until the
 * run's end (wg_outfile_hold): 16 at most today. */
#define OUTFILE_SLOTS 32
#define OUTFILE_PATH_MAX 4096
#define OUTFILE_HOPS 40 /* links followed before giving up, as the kernel */
/* A temporary is "." + (part of) the name + ".tmp-XXXXXX": 12 bytes more. */
#define OUTFILE_TMP_EXTRA 12

/* How a wg_outfile is written (its 'how'). */
enum {
    OUT_NONE = 0, /* not open (a zeroed one) */
    OUT_STDOUT,   /* the stdio stream stdout */
    OUT_DIRECT,   /* a stream of its own, written in place: a descriptor's
                   * duplicate, a device, a FIFO */
    OUT_TEMP,     /* a temporary, renamed over outfile_dst[slot] */
};

static char outfile_tmp[OUTFILE_SLOTS][OUTFILE_PATH_MAX];
static char outfile_dst[OUTFILE_SLOTS][OUTFILE_PATH_MAX];
static volatile sig_atomic_t outfile_used[OUTFILE_SLOTS];
/* outfile_tmp[slot] is a file of ours: the temporary has been named (or
 * was made with a name); until then outfile_tmp holds its name's template
 * and the file itself is outfile_unnamed[slot]. */
static volatile sig_atomic_t outfile_named[OUTFILE_SLOTS];
/* An unnamed temporary, finished (flushed) and held open until its set is
 * put in place; NULL while it is written (the caller's stream) or named. */
static FILE *outfile_unnamed[OUTFILE_SLOTS];
/* Why a held temporary could not be named when descriptors ran short
 * (errno), failing its set at the commit; 0: none. */
static int outfile_error[OUTFILE_SLOTS];
/* While a set is put in place, a replaced file's old content under a
 * second name (a hard link) beside it: ".name.old-XXXXXX", the
 * temporary's name with "old" for "tmp". */
static char outfile_old[OUTFILE_SLOTS][OUTFILE_PATH_MAX];
/* A raster GDAL opens (wg_outfile_dataset): the name it was given as, for
 * its stale companions to be removed when it is put in place. */
static char outfile_given[OUTFILE_SLOTS][OUTFILE_PATH_MAX];
static int outfile_dataset[OUTFILE_SLOTS];
/* The regular files written in place (a descriptor's, standard output's),
 * which are the run's outputs too when the rasters' companions are
 * removed: --json - >h.tif.aux.xml. */
static struct {
    dev_t dev;
    ino_t ino;
    int fd;      /* the descriptor of ours it came by (1: standard output),
                  * or -1: opened by name (another process's descriptor) */
    off_t start; /* its size (appending) or offset when first written */
} outfile_direct[OUTFILE_SLOTS];
static int outfile_ndirect;
/* The run's held set is in place (wg_outfile_commit_held's renames
 * succeeded): set before their section ends, so that a signal handled
 * after it finds it set and cuts back nothing. */
static atomic_int outfile_committed;

/* Commits held back for the end of the run (wg_outfile_hold): the slots
 * of the files committed since, in order. */
static int outfile_holding, outfile_nheld, outfile_held[OUTFILE_SLOTS];

/* The signal handler and a commit's renames exclude each other, whatever
 * thread the signal lands on: a handler that finds renames under way
 * leaves its signal to the committer, who dies of it once they are done,
 * and a commit that finds the process dying waits for the end.  Lock-free
 * atomics, so the handler may use them. */
enum { STATE_IDLE, STATE_RENAMING, STATE_DYING };
static atomic_int outfile_state;
static atomic_int outfile_deferred; /* a signal left to the committer */
/* The signals outfile_on_signal catches (wg_outfile_catch_signals). */
static sigset_t outfile_caught;

/* ---- messages ---------------------------------------------------------- */

const char *wg_outfile_shown(const char *path, char *buf)
{
    size_t len = strlen(path);
    if (len <= WG_PATH_SHOWN)
        return path;
    /* Keep more of the end, where the file's own name is; cut between
     * UTF-8 characters, not inside one. */
    size_t head = 48, tail = len - (WG_PATH_SHOWN - head - 3);
    while (head > 0 && ((unsigned char)path[head] & 0xC0) == 0x80)
        head--;
    while (tail < len && ((unsigned char)path[tail] & 0xC0) == 0x80)
        tail++;
    memcpy(buf, path, head);
    memcpy(buf + head, "...", 3);
    memcpy(buf + head + 3, path + tail, len - tail + 1);
    return buf;
}

/* The reason for errno e about 'path', clearer than strerror where a name
 * is too long. */
static int outfile_errno(const char *path, int e, char *err)
{
    if (e == ENAMETOOLONG) {
        size_t longest = 0, len = strlen(path);
        int last = 0;
        for (const char *p = path; *p;) {
            size_t n = strcspn(p, "/");
            if (n > longest) {
                longest = n;
                last = p[n] == '\0';
            }
            p += n + (p[n] == '/');
        }
        if (longest > NAME_MAX)
            return wg_fail(err, "%s is %zu bytes long, more than the %d a "
                           "file name may have",
                           last ? "its name" : "a folder's name in it",
                           longest, NAME_MAX);
        return wg_fail(err, "it is %zu bytes long (or its links are), more "
                       "than the %d a path may have", len,
                       OUTFILE_PATH_MAX - 1);
    }
    if (e == ELOOP)
        return wg_fail(err, "%s (more than %d links, or a loop)", strerror(e),
                       OUTFILE_HOPS);
    return wg_fail(err, "%s", strerror(e ? e : EIO));
}

/* ---- what a name means ------------------------------------------------- */

/* Whether the folder 'dir' has been removed (rm -r from another shell
 * while we are in it).  It has no links left, but st_nlink alone does not
 * say so: some file systems (FUSE ones, NFS servers) give 0 for every
 * folder, where every output would have been refused.  The kernel's name
 * for it says " (deleted)" only where it is gone; without /proc, the
 * links alone are taken. */
static int outfile_folder_deleted(const char *dir)
{
    struct stat ds;
    if (stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode) || ds.st_nlink != 0)
        return 0;
    int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char link[64], name[PATH_MAX + 16];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, name, sizeof name - 1);
    close(fd);
    if (len < 0)
        return 1;
    name[len] = '\0';
    static const char mark[] = " (deleted)";
    return (size_t)len >= sizeof mark - 1 &&
           strcmp(name + len - (sizeof mark - 1), mark) == 0;
}

/* The folder 'name' is in: "/" for "/x", "." for "x". */
static void outfile_folder(const char *name, char *dir)
{
    const char *slash = strrchr(name, '/');
    if (!slash)
        strcpy(dir, ".");
    else
        snprintf(dir, OUTFILE_PATH_MAX, "%.*s",
                 slash == name ? 1 : (int)(slash - name), name);
}

/* What writing a name writes. */
typedef struct outfile_target {
    int fd;    /* >= 0: this descriptor of ours */
    int other; /* another process's descriptor (/proc/N/fd/M): open the
                * name itself */
    int guarded; /* resolving failed (EACCES) at the link 'name', which
                  * outfile_link_guarded forbids following */
    char name[OUTFILE_PATH_MAX]; /* else the name, links followed; it may
                                  * not exist */
} outfile_target;

/* Whether the symbolic link 'name' (lstat's 'st') is one the kernel's
 * fs.protected_symlinks forbids following: in a sticky folder anyone may
 * write in (/tmp), a link that is neither ours nor the folder owner's.
 * Such a link is how another user makes a program write over its own
 * user's files (ln -s ~victim/.bashrc /tmp/world.png); open() refuses to
 * follow it (EACCES) where the kernel has the guard on, the default in
 * most distributions, but a link followed by readlink, as worldgen
 * follows them, passes it.  So the rule is applied here, whether or not
 * the kernel has it on (a container's may not). */
static int outfile_link_guarded(const char *name, const struct stat *st)
{
    char dir[OUTFILE_PATH_MAX];
    struct stat ds;
    outfile_folder(name, dir);
    return st->st_uid != geteuid() && stat(dir, &ds) == 0 &&
           (ds.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH) &&
           ds.st_uid != st->st_uid;
}

static int outfile_digits(const char *s)
{
    if (!*s || strlen(s) > 9)
        return 0;
    return strspn(s, "0123456789") == strlen(s);
}

/* The descriptor a name spelled as one means, whether or not /dev and /proc
 * are there to say so; -1 for any other name. */
static int outfile_fd_spelled(const char *p)
{
    static const char *const named[] = {"/dev/stdin", "/dev/stdout",
                                        "/dev/stderr"};
    static const char *const folders[] = {"/dev/fd/", "/proc/self/fd/",
                                          "/proc/thread-self/fd/"};
    for (int i = 0; i < 3; i++)
        if (strcmp(p, named[i]) == 0)
            return i;
    for (int i = 0; i < 3; i++) {
        size_t len = strlen(folders[i]);
        if (strncmp(p, folders[i], len) == 0 && outfile_digits(p + len))
            return atoi(p + len);
    }
    return -1;
}

/* Is 'dir' a descriptor folder of /proc, however it is spelled (a link to
 * /dev/fd, /proc/1234/task/1234/fd)?  1: ours, 2: another process's, 0:
 * not one. */
static int outfile_fd_folder(const char *dir)
{
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return 0;
    int pid, tid, end = 0;
    if (sscanf(real, "/proc/%d/fd%n", &pid, &end) == 1 && end &&
        real[end] == '\0')
        return pid == (int)getpid() ? 1 : 2;
    end = 0;
    if (sscanf(real, "/proc/%d/task/%d/fd%n", &pid, &tid, &end) == 2 && end &&
        real[end] == '\0')
        return pid == (int)getpid() ? 1 : 2;
    return 0;
}

/* Follow 'path' to what writing it writes: symbolic links one at a time
 * (a relative one from its own folder), stopping at a descriptor's name,
 * whose link says nothing useful ("pipe:[123]").  Returns 0, or -1 with
 * errno. */
static int outfile_resolve(const char *path, outfile_target *t)
{
    t->fd = -1;
    t->other = 0;
    t->guarded = 0;
    if (strcmp(path, "-") == 0) {
        t->fd = 1;
        return 0;
    }
    if (strlen(path) >= sizeof t->name) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(t->name, path);
    for (int hop = 0;; hop++) {
        int fd = outfile_fd_spelled(t->name);
        if (fd >= 0) {
            t->fd = fd;
            return 0;
        }
        char *slash = strrchr(t->name, '/');
        if (slash && outfile_digits(slash + 1)) {
            char dir[OUTFILE_PATH_MAX];
            outfile_folder(t->name, dir);
            int kind = outfile_fd_folder(dir);
            if (kind == 1)
                t->fd = atoi(slash + 1);
            t->other = kind == 2;
            if (kind)
                return 0;
        }
        struct stat st;
        if (lstat(t->name, &st) != 0)
            return errno == ENOENT ? 0 : -1; /* to be made */
        if (!S_ISLNK(st.st_mode))
            return 0;
        if (hop == OUTFILE_HOPS) {
            errno = ELOOP;
            return -1;
        }
        if (outfile_link_guarded(t->name, &st)) {
            t->guarded = 1;
            errno = EACCES;
            return -1;
        }
        char link[OUTFILE_PATH_MAX];
        ssize_t n = readlink(t->name, link, sizeof link - 1);
        if (n < 0)
            return -1;
        link[n] = '\0';
        /* A relative link is read from the folder the link is in. */
        size_t dirlen =
            link[0] == '/' || !slash ? 0 : (size_t)(slash - t->name + 1);
        if (dirlen + (size_t)n >= sizeof t->name) {
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(t->name + dirlen, link, (size_t)n + 1);
    }
}

int wg_outfile_descriptor(const char *path)
{
    outfile_target t;
    return outfile_resolve(path, &t) == 0 ? t.fd : -1;
}

/* ---- opening ----------------------------------------------------------- */

/* Note the file descriptor fd writes, where it is a regular one, as
 * written in place (outfile_direct); 'ours' is the descriptor of ours it
 * came by, which stays open to the end (-1: none), and where the file
 * stands now, for wg_outfile_abort_held to cut it back to. */
static void outfile_note_direct(int fd, int ours)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    for (int i = 0; i < outfile_ndirect; i++)
        if (outfile_direct[i].dev == st.st_dev &&
            outfile_direct[i].ino == st.st_ino)
            return;
    if (outfile_ndirect < OUTFILE_SLOTS) {
        int fl = fcntl(fd, F_GETFL);
        off_t at = fl >= 0 && (fl & O_APPEND) ? st.st_size
                                             : lseek(fd, 0, SEEK_CUR);
        outfile_direct[outfile_ndirect].dev = st.st_dev;
        outfile_direct[outfile_ndirect].ino = st.st_ino;
        outfile_direct[outfile_ndirect].fd = at >= 0 ? ours : -1;
        outfile_direct[outfile_ndirect++].start = at;
    }
}

static void outfile_blocking(int fd);
static void outfile_nonblock_restore(void);

/* Descriptors 0, 1 and 2 that were closed when we started, now held on
 * /dev/null (wg_outfile_hold_std). */
static int outfile_std_closed[3];

/* 0 when descriptor fd can be written; else -1 with why.  Checked by
 * wg_outfile_probe before the work and again when opened: a standard
 * output closed or open for reading only (1</dev/null) had been found
 * only when the first output was written, after the whole world was
 * made. */
static int outfile_fd_writable(int fd, char *err)
{
    static const char *const std[3] = {"standard input", "standard output",
                                       "standard error"};
    if (fd < 3 && outfile_std_closed[fd])
        return wg_fail(err, "%s is closed (%s)", std[fd], strerror(EBADF));
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 && fd < 3)
        return wg_fail(err, "%s is not open (%s)", std[fd], strerror(errno));
    if (fl < 0)
        return wg_fail(err, "descriptor %d is not open (%s)", fd,
                       strerror(errno));
    if ((fl & O_ACCMODE) == O_RDONLY && fd < 3)
        return wg_fail(err, "%s is open for reading only (%s)", std[fd],
                       strerror(EBADF));
    if ((fl & O_ACCMODE) == O_RDONLY)
        return wg_fail(err, "descriptor %d is open for reading only (%s)", fd,
                       strerror(EBADF));
    return 0;
}

/* Write to descriptor fd of ours, in place: 1 through stdout itself, so
 * that what else goes there stays in order. */
static int outfile_use_fd(wg_outfile *o, int fd, char *err)
{
    if (outfile_fd_writable(fd, err) != 0)
        return -1;
    if (fd == 1) {
        o->fp = stdout;
        o->how = OUT_STDOUT;
        outfile_note_direct(1, 1);
        return 0;
    }
    outfile_blocking(fd);
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (dup < 0)
        return wg_fail(err, "%s", strerror(errno));
    o->fp = fdopen(dup, "wb");
    if (!o->fp) {
        int e = errno;
        close(dup);
        return wg_fail(err, "%s", strerror(e));
    }
    o->how = OUT_DIRECT;
    outfile_note_direct(dup, fd);
    return 0;
}

/* A device, FIFO or socket, or another process's descriptor: written in
 * place, as renaming over it would replace the node, not write to it. */
static int outfile_in_place(wg_outfile *o, const char *name, char *err)
{
    int fd = open(name, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return outfile_errno(name, errno, err);
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        int e = errno;
        close(fd);
        return wg_fail(err, "%s", strerror(e));
    }
    o->how = OUT_DIRECT;
    outfile_note_direct(fd, -1);
    return 0;
}

/* Enter the section that no fatal signal interrupts, on whatever thread
 * it lands: one thread of ours at a time, the asynchronous signals blocked
 * on it, and the state RENAMING, in which the handler of another thread
 * leaves its signal to us (outfile_leave).  If a signal is already killing
 * the process, wait for it. */
static void outfile_block(sigset_t *old);
/* The section's threads take turns (the OBJ's files finish on two at
 * once): the state below only keeps out the signal handler, and a thread
 * that found it taken by another would wait in pause() for ever. */
static pthread_mutex_t outfile_section = PTHREAD_MUTEX_INITIALIZER;
static void outfile_enter(sigset_t *old)
{
    pthread_mutex_lock(&outfile_section);
    outfile_block(old);
    int idle = STATE_IDLE;
    while (!atomic_compare_exchange_strong(&outfile_state, &idle,
                                           STATE_RENAMING)) {
        pthread_sigmask(SIG_SETMASK, old, NULL);
        pause();
        idle = STATE_IDLE;
    }
}

static void outfile_die(int sig);
static void outfile_cut_direct(int purge);

/* Leave it: a signal that came meanwhile kills the process now. */
static void outfile_leave(const sigset_t *old)
{
    atomic_store(&outfile_state, STATE_IDLE);
    pthread_sigmask(SIG_SETMASK, old, NULL);
    pthread_mutex_unlock(&outfile_section);
    int sig = atomic_load(&outfile_deferred);
    if (sig) {
        /* The handler set it before looking at the state: seen here, or
         * the handler found the state idle and is killing us itself. */
        int idle = STATE_IDLE;
        if (atomic_compare_exchange_strong(&outfile_state, &idle,
                                           STATE_DYING)) {
            outfile_die(sig);
            _exit(128 + sig); /* not reached: sig is not blocked here */
        }
    }
}

/* Descriptors kept free while unnamed temporaries are held open: for the
 * folders' locks at the commit, libtiff's temporary, the libraries. */
#define OUTFILE_SPARE 16

/* How many more descriptors this process may open: the soft limit less
 * those open (/proc/self/fd); LONG_MAX where that cannot be known. */
static long outfile_spare_descriptors(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return LONG_MAX;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return errno == EMFILE || errno == ENFILE ? 0 : LONG_MAX;
    long open = -1; /* the listing's own descriptor */
    for (struct dirent *e; (e = readdir(d));)
        open += e->d_name[0] != '.';
    closedir(d);
    return (long)rl.rlim_cur - open;
}

static int outfile_name(int k);

/* Name slot k's held temporary now, and close it (descriptors are
 * short), in the section no signal interrupts; a failure fails its set
 * at the commit (outfile_error). */
static void outfile_name_held(int k)
{
    sigset_t old;
    outfile_enter(&old);
    if (outfile_name(k) != 0)
        outfile_error[k] = errno ? errno : EIO;
    outfile_leave(&old);
}

/* Opening failed with errno e: where that is for want of descriptors and
 * a temporary is held open unnamed, name one to free its descriptor.
 * Returns 1 when the open may be tried again. */
static int outfile_make_room(int e)
{
    if (e != EMFILE && e != ENFILE)
        return 0;
    for (int k = 0; k < OUTFILE_SLOTS; k++)
        if (outfile_used[k] && outfile_unnamed[k]) {
            outfile_name_held(k);
            return 1;
        }
    return 0;
}

/* Can an unnamed temporary be given a name later?  linkat through
 * /proc/self/fd/N, which any process may use where /proc is mounted. */
static int outfile_can_name(void)
{
    static int known, can;
    if (!known) {
        can = access("/proc/self/fd", X_OK) == 0;
        known = 1;
    }
    return can;
}

/* An unnamed file (O_TMPFILE), mode 0600 as mkstemp's, in the folder that
 * is the first dirlen bytes of name (".": none); or -1 where the file
 * system or the kernel makes none, or it could not be named later: the
 * caller then makes a named one, which also says why a folder takes no
 * files. */
static int outfile_make_unnamed(const char *name, int dirlen)
{
#ifdef O_TMPFILE
    if (!outfile_can_name())
        return -1;
    char dir[OUTFILE_PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", dirlen ? dirlen : 1,
             dirlen ? name : ".");
    return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
#else
    (void)name;
    (void)dirlen;
    return -1;
#endif
}

/* Six characters for a temporary's name, different from run to run and
 * call to call.  They need not be secret: linkat never replaces a file,
 * and the kept old content's name (".NAME.old-XXXXXX", the same six) is
 * made by link first.  Called in the section no signal interrupts, on one
 * thread at a time, so the fallback's state needs no lock. */
static uint64_t outfile_random(void)
{
    static uint64_t state;
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    state += 0x9E3779B97F4A7C15u ^ (uint64_t)getpid() ^ (uint64_t)time(NULL);
    r = state;
    r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9u;
    r = (r ^ (r >> 27)) * 0x94D049BB133111EBu;
    return r ^ (r >> 31);
}

/* Give slot k's unnamed temporary the name outfile_tmp[k] (its template's
 * six X's filled, as mkstemp would), then close it.  Returns 0, or -1 with
 * errno; either way the stream is closed, and the name is ours to remove
 * when outfile_named[k] says so. */
static int outfile_name(int k)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyz"
                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    FILE *fp = outfile_unnamed[k];
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(fp));
    char *x = outfile_tmp[k] + strlen(outfile_tmp[k]) - 6;
    int e = EEXIST;
    for (int tries = 0; tries < 100 && e == EEXIST; tries++) {
        uint64_t r = outfile_random();
        for (int i = 0; i < 6; i++, r /= 62)
            x[i] = chars[r % 62];
        e = linkat(AT_FDCWD, proc, AT_FDCWD, outfile_tmp[k],
                   AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
    }
    if (e == 0)
        outfile_named[k] = 1;
    outfile_unnamed[k] = NULL;
    if (fclose(fp) != 0 && e == 0)
        e = errno ? errno : EIO;
    errno = e;
    return e ? -1 : 0;
}

/* Let slot k's temporary go, named or not, and free the slot. */
static void outfile_drop(int k)
{
    if (outfile_unnamed[k])
        fclose(outfile_unnamed[k]);
    outfile_unnamed[k] = NULL;
    if (outfile_named[k])
        unlink(outfile_tmp[k]);
    outfile_named[k] = 0;
    outfile_error[k] = 0;
    outfile_dataset[k] = 0;
    outfile_used[k] = 0;
}

int wg_outfile_open(wg_outfile *o, const char *path, char *err)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->slot = -1;
    if (strcmp(path, "-") == 0)
        return outfile_use_fd(o, 1, err);
    if (path[0] == '\0')
        return wg_fail(err, "empty file name");

    outfile_target t;
    if (outfile_resolve(path, &t) != 0) {
        char shown[WG_PATH_SHOWN + 1];
        if (t.guarded)
            return wg_fail(err, "%s (the symbolic link '%s' is another "
                           "user's, in a sticky folder anyone may write in: "
                           "not followed, as fs.protected_symlinks has it)",
                           strerror(EACCES), wg_outfile_shown(t.name, shown));
        return outfile_errno(path, errno, err);
    }
    if (t.fd >= 0)
        return outfile_use_fd(o, t.fd, err);
    if (t.other)
        return outfile_in_place(o, t.name, err);
    const char *slash = strrchr(t.name, '/');
    const char *base = slash ? slash + 1 : t.name;
    size_t blen = strlen(base);
    struct stat st;
    int exists = stat(t.name, &st) == 0;
    if (!exists && errno != ENOENT)
        return outfile_errno(t.name, errno, err);
    if (exists && S_ISDIR(st.st_mode))
        return wg_fail(err, "it is a directory");
    if (blen == 0)
        return wg_fail(err, "a file name cannot end in '/'");
    if (blen > NAME_MAX)
        return wg_fail(err, "its name is %zu bytes long, more than the %d a "
                       "file name may have", blen, NAME_MAX);
    if (exists && S_ISSOCK(st.st_mode))
        return wg_fail(err, "it is a socket, which cannot be opened (%s); "
                       "give a connected one as a descriptor, /dev/fd/N",
                       strerror(ENXIO));
    if (exists && !S_ISREG(st.st_mode))
        return outfile_in_place(o, t.name, err);
    /* A file we may not write (chmod a-w) is not ours to replace either,
     * though the rename would be allowed by its folder: refuse as a plain
     * open would.  (root may write any file, as with open.) */
    if (exists && faccessat(AT_FDCWD, t.name, W_OK, AT_EACCESS) != 0 &&
        errno == EACCES)
        return outfile_errno(t.name, EACCES, err);

    int slot = -1;
    for (int i = 0; i < OUTFILE_SLOTS; i++)
        if (!outfile_used[i]) {
            slot = i;
            break;
        }
    if (slot < 0)
        return wg_fail(err, "too many open outputs");

    /* The temporary sits beside the target, so the rename stays within one
     * file system and is atomic.  Its name copies as much of the target's
     * as still fits in NAME_MAX (cut between UTF-8 characters). */
    int dirlen = slash ? (int)(slash - t.name + 1) : 0;
    size_t keep = blen;
    if (keep > NAME_MAX - OUTFILE_TMP_EXTRA) {
        keep = NAME_MAX - OUTFILE_TMP_EXTRA;
        while (keep > 0 && ((unsigned char)base[keep] & 0xC0) == 0x80)
            keep--;
    }
    int len = snprintf(outfile_tmp[slot], OUTFILE_PATH_MAX,
                       "%.*s.%.*s.tmp-XXXXXX", dirlen, t.name, (int)keep, base);
    if (len < 0 || len >= OUTFILE_PATH_MAX)
        return wg_fail(err, "it is %zu bytes long (or its links are), and "
                       "the temporary file beside it (%d bytes more) would "
                       "pass the %d a path may have: give a shorter path "
                       "(from a folder nearer to it)", strlen(t.name),
                       OUTFILE_TMP_EXTRA, OUTFILE_PATH_MAX - 1);
    snprintf(outfile_dst[slot], OUTFILE_PATH_MAX, "%s", t.name);

    /* Nor in a folder removed while we are in it (the current folder,
     * rm -r from another shell; outfile_folder_deleted).  Asked first:
     * ext4 then refuses the temporary (ENOENT), but tmpfs makes it, and
     * the run failed only at the end, when the name could not be made. */
    {
        char dir[OUTFILE_PATH_MAX], shown[WG_PATH_SHOWN + 1];
        snprintf(dir, sizeof dir, "%.*s", dirlen ? dirlen : 1,
                 dirlen ? t.name : ".");
        if (outfile_folder_deleted(dir))
            return wg_fail(err, "the folder '%s' has been deleted (it is in "
                           "no folder any more), so nothing can be written "
                           "there", wg_outfile_shown(dir, shown));
    }

    outfile_used[slot] = 1;
    outfile_unnamed[slot] = NULL;
    outfile_error[slot] = 0;
    int fd;
    while ((fd = outfile_make_unnamed(t.name, dirlen)) < 0 &&
           outfile_make_room(errno)) {
    }
    outfile_named[slot] = fd < 0;
    if (fd < 0) {
        char templ[OUTFILE_PATH_MAX];
        strcpy(templ, outfile_tmp[slot]);
        while ((fd = mkstemp(outfile_tmp[slot])) < 0 &&
               outfile_make_room(errno))
            strcpy(outfile_tmp[slot], templ);
    }
    if (fd < 0) {
        int e = errno;
        outfile_used[slot] = 0;
        outfile_named[slot] = 0;
        if (e == ENOENT) {
            char dir[OUTFILE_PATH_MAX], shown[WG_PATH_SHOWN + 1];
            snprintf(dir, sizeof dir, "%.*s", dirlen ? dirlen : 1,
                     dirlen ? t.name : ".");
            /* A folder that is there but makes no new files (/proc,
             * /proc/self/) says ENOENT too: not that it is missing. */
            struct stat ds;
            if (stat(dir, &ds) == 0 && S_ISDIR(ds.st_mode))
                return wg_fail(err, "the folder '%s' takes no new files "
                               "(%s), so none can be written there",
                               wg_outfile_shown(dir, shown), strerror(e));
            return wg_fail(err, "the folder '%s'%s does not exist",
                           wg_outfile_shown(dir, shown),
                           strcmp(t.name, path) ? " (where its link points)"
                                                : "");
        }
        /* The folder's permission, not the file's: outputs are made beside
         * their name and renamed into place, so a file anyone may write
         * in a folder we may not is still refused, and "Permission
         * denied" of the file alone had pointed at the file. */
        if (e == EACCES) {
            char dir[OUTFILE_PATH_MAX], shown[WG_PATH_SHOWN + 1];
            snprintf(dir, sizeof dir, "%.*s", dirlen ? dirlen : 1,
                     dirlen ? t.name : ".");
            return wg_fail(err, "%s (no new file can be made in the folder "
                           "'%s': an output is made beside its name and "
                           "renamed into place)", strerror(e),
                           wg_outfile_shown(dir, shown));
        }
        return outfile_errno(t.name, e, err);
    }
    if (exists) {
        /* Replacing a file: it keeps its owner and group where we may set
         * them (as root; our own file's group), then its mode, after the
         * owner as chown clears set-id bits.  Failing that is no error. */
        if (fchown(fd, st.st_uid, st.st_gid) != 0 &&
            fchown(fd, (uid_t)-1, st.st_gid) != 0) {
            /* not ours to give away */
        }
        fchmod(fd, st.st_mode & 07777);
    } else {
        /* mkstemp makes the file 0600; give it the mode a plain open
         * would. */
        mode_t mask = umask(0);
        umask(mask);
        fchmod(fd, 0666 & ~mask);
    }

    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        int e = errno;
        close(fd);
        if (outfile_named[slot])
            unlink(outfile_tmp[slot]);
        outfile_named[slot] = 0;
        outfile_used[slot] = 0;
        return wg_fail(err, "%s", strerror(e));
    }
    o->slot = slot;
    o->how = OUT_TEMP;
    return 0;
}

/* ---- finishing --------------------------------------------------------- */

/* A write to standard output failed, and its caller was told why. */
static int outfile_stdout_failed;

int wg_outfile_stdout_failed(void)
{
    return outfile_stdout_failed;
}

int wg_outfile_finish(wg_outfile *o, char *err)
{
    if (!o->fp)
        return 0;
    errno = 0;
    int failed = fflush(o->fp) != 0;
    int e = errno;
    if (!failed && ferror(o->fp)) {
        /* An earlier write failed, and the stream kept no reason. */
        failed = 1;
        e = 0;
    }
    if (o->how == OUT_STDOUT) { /* closed by main at exit */
        o->fp = NULL;
        if (!failed)
            return 0;
        /* The caller says why: closing stdout at exit need not again. */
        outfile_stdout_failed = 1;
        return wg_fail(err, "%s", e ? strerror(e) : "write error");
    }
    if (!failed && o->how == OUT_TEMP && !outfile_named[o->slot]) {
        /* Held open, unnamed, until its set is put in place; where few
         * descriptors are left (ulimit -n, many inherited), named now so
         * that it can be closed. */
        outfile_unnamed[o->slot] = o->fp;
        o->fp = NULL;
        if (outfile_spare_descriptors() < OUTFILE_SPARE)
            outfile_name_held(o->slot);
        return 0;
    }
    if (fclose(o->fp) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    o->fp = NULL;
    return failed ? wg_fail(err, "%s", e ? strerror(e) : "write error") : 0;
}

/* The process dies of sig: remove the temporaries, then take the default
 * action.  In a handler sig is blocked, and kills on return. */
static void outfile_die(int sig)
{
    wg_outfile_remove_all();
    if (!atomic_load(&outfile_committed))
        outfile_cut_direct(0);
    outfile_nonblock_restore();
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* The folders of the targets of slots k[0..n), each once, opened and
 * locked exclusively in (device, inode) order, so two runs cannot
 * deadlock.  Returns how many are held in fds.  A file system without
 * flock is not locked: the renames still happen, only without the
 * exclusion. */
static int outfile_lock(const int *k, int n, int *fds)
{
    struct { int fd; dev_t dev; ino_t ino; } d[OUTFILE_SLOTS];
    int nd = 0;
    for (int i = 0; i < n && nd < OUTFILE_SLOTS; i++) {
        char dir[OUTFILE_PATH_MAX];
        outfile_folder(outfile_dst[k[i]], dir);
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        if (fd < 0)
            continue;
        if (fstat(fd, &st) != 0) {
            close(fd);
            continue;
        }
        int j = 0;
        while (j < nd && (d[j].dev < st.st_dev ||
                          (d[j].dev == st.st_dev && d[j].ino < st.st_ino)))
            j++;
        if (j < nd && d[j].dev == st.st_dev && d[j].ino == st.st_ino) {
            close(fd);
            continue;
        }
        memmove(&d[j + 1], &d[j], (size_t)(nd - j) * sizeof d[0]);
        d[j].fd = fd;
        d[j].dev = st.st_dev;
        d[j].ino = st.st_ino;
        nd++;
    }
    for (int j = 0; j < nd; j++) {
        while (flock(d[j].fd, LOCK_EX) != 0 && errno == EINTR) {
        }
        fds[j] = d[j].fd;
    }
    return nd;
}

/* The asynchronous signals, blocked on this thread around the renames so
 * that nothing runs between them.  Not the ones a fault raises. */
static void outfile_block(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP,
                                 SIGSYS};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&all, faults[i]);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

/* Is 'st', in the folder 'dir', another user's file in a sticky folder
 * (/tmp), which we may neither replace nor move (unless root)? */
static int outfile_not_ours(const struct stat *st, const struct stat *dir)
{
    uid_t me = geteuid();
    return (dir->st_mode & S_ISVTX) && me != 0 && st->st_uid != me &&
           dir->st_uid != me;
}

/* Is the file 'name' a mount point: a file mounted over another, as a
 * container's bind mount of one file (docker run -v $PWD/w.png:/w.png)?
 * No rename may replace it (EBUSY).  As the kernel says (statx, Linux 5.8
 * on); not from st_dev, which overlayfs gives a file from the layer below
 * and its folder from itself.  Headers that do not know it (glibc before
 * 2.33 with Linux's before 5.8) leave the question out, as an older
 * kernel does: the rename then says EBUSY at the end. */
static int outfile_mount_point(const char *name)
{
#ifdef STATX_ATTR_MOUNT_ROOT
    struct statx sx;
    return statx(AT_FDCWD, name, 0, 0, &sx) == 0 &&
           (sx.stx_attributes_mask & sx.stx_attributes &
            STATX_ATTR_MOUNT_ROOT) != 0;
#else
    (void)name;
    return 0;
#endif
}

/* Is 'entry' (a name in slot k's folder) a temporary or a kept old
 * content of slot k's target: ".NAME.tmp-XXXXXX" or ".NAME.old-XXXXXX",
 * as outfile_tmp[k] but for its last ten characters? */
static int outfile_is_leftover(int k, const char *entry)
{
    const char *base = strrchr(outfile_tmp[k], '/');
    base = base ? base + 1 : outfile_tmp[k];
    size_t len = strlen(base);
    if (len < 10 || strlen(entry) != len || strncmp(entry, base, len - 10) != 0)
        return 0;
    const char *tail = entry + len - 10;
    if (strncmp(tail, "tmp-", 4) != 0 && strncmp(tail, "old-", 4) != 0)
        return 0;
    for (int i = 4; i < 10; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789", tail[i]) || !tail[i])
            return 0;
    return 1;
}

/* What runs killed while they put their sets in place (SIGKILL: the OOM
 * killer, timeout -s KILL, a scheduler's kill at a time limit; no handler
 * sees it) left beside the targets of slots k[0..n): their temporaries
 * and their kept old contents (outfile_is_leftover), each a whole copy,
 * which no run had removed (seven later runs left them all).  Only slots
 * whose temporaries are unnamed (O_TMPFILE) look: where those are made, a
 * name of that form exists only inside another run's section, which
 * holds the folder's lock (outfile_lock), so one seen with the lock held
 * is a dead run's; where temporaries are named from the start, a live
 * run's could be among them.  (Left: a live run short of descriptors
 * names its finished temporaries early, outside the section; one writing
 * the same name at the same time would lose its temporary and fail.)
 * Removes them when 'remove' (the caller holds the locks), else only
 * counts them.  Returns how many. */
static int outfile_leftovers(const int *k, int n, int remove)
{
    int found = 0;
    for (int j = 0; j < n; j++) {
        char dir[OUTFILE_PATH_MAX], other[OUTFILE_PATH_MAX];
        char path[OUTFILE_PATH_MAX];
        outfile_folder(outfile_dst[k[j]], dir);
        /* Each folder read once, for every slot in it (an OBJ's three
         * files share one). */
        int seen = !outfile_unnamed[k[j]];
        for (int i = 0; i < j && !seen; i++) {
            outfile_folder(outfile_dst[k[i]], other);
            seen = outfile_unnamed[k[i]] && strcmp(dir, other) == 0;
        }
        DIR *d = seen ? NULL : opendir(dir);
        if (!d)
            continue;
        int here[OUTFILE_SLOTS];
        for (int i = j; i < n; i++) {
            outfile_folder(outfile_dst[k[i]], other);
            here[i] = outfile_unnamed[k[i]] && strcmp(dir, other) == 0;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            for (int i = j; i < n; i++) {
                if (!here[i] || !outfile_is_leftover(k[i], e->d_name))
                    continue;
                found++;
                if (remove && snprintf(path, sizeof path, "%s/%s", dir,
                                       e->d_name) < (int)sizeof path)
                    unlink(path);
                break;
            }
        closedir(d);
    }
    return found;
}

/* Why the last set could not be put in place, beyond its errno, or NULL. */
static const char *outfile_why;

/* How a set's target is kept while the set is put in place. */
enum { KEEP_NEW, KEEP_LINKED, KEEP_MOVED };

/* Keep what slot k's target holds under a second name, outfile_old[k]
 * (".NAME.old-XXXXXX", the temporary's name with "old" for "tmp"), before
 * any of the set is renamed: a hard link where the file system makes one,
 * so the target stays in place; else the target itself moved there (then
 * it is missing until its new content lands, which only another process
 * could see).  Returns KEEP_NEW where nothing is there, KEEP_LINKED or
 * KEEP_MOVED; or -1 with errno when the target can be neither linked nor
 * moved, and so could not be replaced either (another user's file in a
 * sticky folder, an immutable file): the set then fails before it changes
 * anything. */
static int outfile_keep(int k)
{
    struct stat st, dir;
    char folder[OUTFILE_PATH_MAX];
    if (lstat(outfile_dst[k], &st) != 0)
        return KEEP_NEW;
    outfile_folder(outfile_dst[k], folder);
    /* A link to it would be ours to make but not to remove again. */
    if (stat(folder, &dir) == 0 && outfile_not_ours(&st, &dir)) {
        outfile_why = "another user's file in a sticky folder";
        errno = EPERM;
        return -1;
    }
    strcpy(outfile_old[k], outfile_tmp[k]);
    char *dot = strrchr(outfile_old[k], '.'); /* ".tmp-XXXXXX" */
    memcpy(dot + 1, "old", 3);
    if (link(outfile_dst[k], outfile_old[k]) == 0)
        return KEEP_LINKED;
    if (rename(outfile_dst[k], outfile_old[k]) == 0)
        return KEEP_MOVED;
    return -1;
}

/* Give slot k's target back what outfile_keep kept, 'placed' saying
 * whether the new content had been renamed over it.  Returns 0, or -1
 * when the old content stays under its second name. */
static int outfile_give_back(int k, int kept, int placed)
{
    if (kept == KEEP_NEW) {
        if (placed)
            unlink(outfile_dst[k]);
        return 0;
    }
    if (kept == KEEP_LINKED && !placed)
        return unlink(outfile_old[k]) == 0 || errno == ENOENT ? 0 : -1;
    return rename(outfile_old[k], outfile_dst[k]) == 0 ? 0 : -1;
}

/* The files GDAL keeps beside a raster NAME about its content, which no
 * longer describe a raster that has been replaced: NAME.aux.xml (its
 * statistics, histograms and metadata) and NAME.ovr (its overviews, the
 * picture it shows zoomed out).  GDAL's own writers remove them when they
 * replace a raster; left there, GDAL and QGIS had shown the statistics
 * and, zoomed out, the overviews of the world the map had held before. */
static const char *const outfile_gdal_sides[] = {".aux.xml", ".ovr"};

/* Remove those of the rasters among slots k[0..n), just put in place, by
 * the name each was given and by its target's (a link's), but for any
 * that is one of the run's own files: of the set (--json h.tif.aux.xml),
 * or written in place (--json - >h.tif.aux.xml; outfile_direct).  Only a
 * file or a link, as GDAL makes them: not a FIFO, a device or a socket of
 * that name, which no GDAL wrote (a FIFO the JSON was written to had been
 * removed).  One that cannot be removed is left, as GDAL leaves it. */
static void outfile_forget_datasets(const int *k, int n)
{
    for (int j = 0; j < n; j++) {
        if (!outfile_dataset[k[j]])
            continue;
        const char *names[2] = {outfile_given[k[j]], outfile_dst[k[j]]};
        for (int i = 0; i < 2; i++) {
            if (i == 1 && strcmp(names[0], names[1]) == 0)
                break;
            for (size_t x = 0; x < sizeof outfile_gdal_sides /
                                      sizeof outfile_gdal_sides[0]; x++) {
                char side[OUTFILE_PATH_MAX];
                struct stat st, own;
                int len = snprintf(side, sizeof side, "%s%s", names[i],
                                   outfile_gdal_sides[x]);
                if (len < 0 || (size_t)len >= sizeof side ||
                    lstat(side, &st) != 0 ||
                    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
                    continue;
                /* A link is the run's when what it names is. */
                int ours = 0;
                if (S_ISLNK(st.st_mode) && stat(side, &st) != 0)
                    st.st_ino = 0, st.st_dev = 0;
                for (int m = 0; m < outfile_ndirect && !ours; m++)
                    ours = outfile_direct[m].dev == st.st_dev &&
                           outfile_direct[m].ino == st.st_ino;
                for (int m = 0; m < n && !ours; m++)
                    ours = stat(outfile_dst[k[m]], &own) == 0 &&
                           own.st_dev == st.st_dev && own.st_ino == st.st_ino;
                if (!ours)
                    unlink(side);
            }
        }
    }
}

/* Whether a fatal signal has come during the section (outfile_enter):
 * one another thread's handler left to us, or one pending on this thread,
 * which blocks them. */
static int outfile_signalled(void)
{
    if (atomic_load(&outfile_deferred))
        return 1;
    sigset_t pending;
    if (sigpending(&pending) != 0)
        return 0;
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(&outfile_caught, sig) == 1 &&
            sigismember(&pending, sig) == 1)
            return 1;
    return 0;
}

/* Rename the temporaries of slots k[0..n) over their targets, all of them
 * or none: each replaced file is kept first (outfile_keep), and when a
 * rename fails, every target gets back what it held.  The slots are free
 * afterwards.  Returns 0, or the errno of what failed, with its index in
 * *bad and in *lost how many files could not be given their old content
 * back (it stays beside them, under its second name). */
static int outfile_place(const int *k, int n, int final, int *bad,
                         int *lost)
{
    *bad = 0;
    *lost = 0;
    outfile_why = NULL;
    /* Hold the folders' locks, so another run's set is renamed wholly
     * before or after ours, never between, and what a killed run left
     * beside ours is removed while no live run is in its section (one
     * file's too: its temporary is named in there). */
    const int leftovers = outfile_leftovers(k, n, 0);
    int locks[OUTFILE_SLOTS], nlocks = outfile_lock(k, n, locks);
    sigset_t old;
    outfile_enter(&old);
    if (leftovers)
        outfile_leftovers(k, n, 1);
    /* The unnamed temporaries get their names, now that nothing can run
     * before the renames but SIGKILL. */
    int kept[OUTFILE_SLOTS], nkept = 0, placed = 0, e = 0;
    for (int j = 0; j < n && !e; j++)
        if ((e = outfile_error[k[j]]) != 0 ||
            (!outfile_named[k[j]] && outfile_name(k[j]) != 0 &&
             (e = errno ? errno : EIO)))
            *bad = j;
    /* One file needs no keeping: its rename alone changes it, or not. */
    for (; !e && n > 1 && nkept < n; nkept++)
        if ((kept[nkept] = outfile_keep(k[nkept])) < 0) {
            e = errno;
            *bad = nkept;
            break;
        }
    for (int j = nkept; j < n; j++)
        kept[j] = KEEP_NEW;
    /* Test hook: WORLDGEN_FAULT=rename fails a set's last rename (EIO),
     * so the tests can see every target given back what it held. */
    const char *fault = getenv("WORLDGEN_FAULT");
    int fail_last = n > 1 && fault && strcmp(fault, "rename") == 0;
    /* Test hook: WORLDGEN_FAULT=signal sends this thread SIGTERM here, as
     * a kill that comes during the renames (it waits, blocked, until the
     * section ends). */
    if (n > 0 && fault && strcmp(fault, "signal") == 0)
        raise(SIGTERM);
    /* Test hook: WORLDGEN_FAULT=kill-placing dies of SIGKILL after a
     * set's first rename, as the OOM killer could kill it there. */
    const int kill_placing = n > 1 && fault && strcmp(fault, "kill-placing") == 0;
    for (; !e && placed < n; placed++)
        if ((kill_placing && placed == 1 && raise(SIGKILL) != 0) ||
            (fail_last && placed == n - 1 && (errno = EIO)) ||
            (n == 1 && outfile_signalled() && (errno = EINTR)) ||
            rename(outfile_tmp[k[placed]], outfile_dst[k[placed]]) != 0) {
            e = errno;
            *bad = placed;
            break;
        }
    /* A fatal signal that came while they were renamed (a large file's
     * rename waits for its data to reach the disk on ext4: 28 ms for a
     * 180 MB OBJ) kills the run when the section ends: every target gets
     * back what it held first, so a run that dies of a signal has changed
     * nothing.  (They had all been replaced, and the run died of it
     * after.)  One file is looked at before its rename instead: it is not
     * kept, and its rename is the whole change. */
    if (!e && n > 1 && outfile_signalled()) {
        e = EINTR;
        *bad = n - 1;
    }
    if (e) {
        for (int j = 0; j < n; j++) {
            if (j < nkept && outfile_give_back(k[j], kept[j], j < placed) != 0)
                (*lost)++;
            if (j < placed)
                outfile_named[k[j]] = 0; /* renamed: no longer ours */
            outfile_drop(k[j]);
        }
    } else {
        for (int j = 0; j < n; j++)
            if (kept[j] != KEEP_NEW)
                unlink(outfile_old[k[j]]);
        outfile_forget_datasets(k, n);
    }
    for (int j = 0; j < n; j++) {
        outfile_named[k[j]] = 0;
        outfile_error[k[j]] = 0;
        outfile_dataset[k[j]] = 0;
        outfile_used[k[j]] = 0;
    }
    for (int j = 0; j < nlocks; j++)
        close(locks[j]); /* releases the lock */
    if (!e && final)
        atomic_store(&outfile_committed, 1);
    outfile_leave(&old);
    return e;
}

int wg_outfile_commit_set(wg_outfile *o, int n, int *failed, char *err)
{
    *failed = 0;
    for (int i = 0; i < n; i++)
        if (wg_outfile_finish(&o[i], err) != 0) {
            *failed = i;
            for (int j = 0; j < n; j++)
                wg_outfile_abort(&o[j]);
            return -1;
        }
    int k[OUTFILE_SLOTS], at[OUTFILE_SLOTS], ns = 0;
    for (int i = 0; i < n; i++) {
        if (o[i].how == OUT_TEMP) {
            k[ns] = o[i].slot;
            at[ns++] = i;
        }
        o[i].how = OUT_NONE; /* the slots are ours from here */
        o[i].slot = -1;
    }
    if (outfile_holding) {
        for (int j = 0; j < ns; j++)
            outfile_held[outfile_nheld++] = k[j];
        return 0;
    }
    int bad, lost;
    int e = outfile_place(k, ns, 0, &bad, &lost);
    if (e == 0)
        return 0;
    *failed = at[bad];
    return wg_fail(err, "%s%s%s%s", strerror(e), outfile_why ? " (" : "",
                   outfile_why ? outfile_why : "", outfile_why ? ")" : "");
}

void wg_outfile_dataset(wg_outfile *o)
{
    if (o->how != OUT_TEMP || strlen(o->path) >= OUTFILE_PATH_MAX)
        return;
    strcpy(outfile_given[o->slot], o->path);
    outfile_dataset[o->slot] = 1;
}

void wg_outfile_hold(void)
{
    outfile_holding = 1;
}

int wg_outfile_commit_held(char *err)
{
    int n = outfile_nheld, k[OUTFILE_SLOTS], bad, lost;
    memcpy(k, outfile_held, (size_t)n * sizeof k[0]);
    outfile_holding = 0;
    outfile_nheld = 0;
    int e = outfile_place(k, n, 1, &bad, &lost);
    if (e == 0)
        return 0;
    char shown[WG_PATH_SHOWN + 1], why[160] = "";
    if (outfile_why)
        snprintf(why, sizeof why, " (%s)", outfile_why);
    if (lost)
        return wg_fail(err, "'%s': %s%s; %d file%s could not be given back "
                       "%s old content, kept beside %s as .NAME.old-* "
                       "(until a run writes that name again)",
                       wg_outfile_shown(outfile_dst[k[bad]], shown),
                       strerror(e), why, lost, lost > 1 ? "s" : "",
                       lost > 1 ? "their" : "its", lost > 1 ? "them" : "it");
    return wg_fail(err, "'%s': %s%s; no output was changed",
                   wg_outfile_shown(outfile_dst[k[bad]], shown), strerror(e),
                   why);
}

void wg_outfile_abort_held(void)
{
    for (int j = 0; j < outfile_nheld; j++)
        outfile_drop(outfile_held[j]);
    outfile_nheld = 0;
    outfile_holding = 0;
    if (atomic_load(&outfile_committed))
        return;
    outfile_cut_direct(1);
}

/* The regular files written in place, through a descriptor the shell
 * opened (> f, >> log, 7> f), cannot be renamed into place with the
 * others: cut back to where they stood, so that a run that fails or dies
 * of a signal leaves no half of a map in them (a full disk had left 64 KiB
 * of a PFM in the file standard output was, and appended it to a log; a
 * SIGTERM, 196 KiB of a PNG).  With purge, what stdio still holds for
 * standard output is dropped, or its close would write it after the cut;
 * without, only calls safe in a signal handler are made (the process then
 * dies without flushing stdio). */
static void outfile_cut_direct(int purge)
{
    for (int i = 0; i < outfile_ndirect; i++) {
        int fd = outfile_direct[i].fd;
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
            st.st_dev != outfile_direct[i].dev ||
            st.st_ino != outfile_direct[i].ino)
            continue;
        if (fd == 1 && purge)
            __fpurge(stdout);
        if (st.st_size > outfile_direct[i].start &&
            ftruncate(fd, outfile_direct[i].start) == 0) {
            int fl = fcntl(fd, F_GETFL);
            if (fl >= 0 && !(fl & O_APPEND))
                lseek(fd, outfile_direct[i].start, SEEK_SET);
        }
    }
}

int wg_outfile_probe(const char *path, char *err)
{
    if (strcmp(path, "-") == 0)
        return outfile_fd_writable(1, err);
    outfile_target t;
    if (path[0] != '\0' && outfile_resolve(path, &t) == 0) {
        struct stat st, dir;
        char folder[OUTFILE_PATH_MAX];
        int exists = t.fd < 0 && !t.other && stat(t.name, &st) == 0;
        /* One of our descriptors (/dev/fd/N, /dev/stdout): open for
         * writing? */
        if (t.fd >= 0)
            return outfile_fd_writable(t.fd, err);
        /* A device, a FIFO: nothing to make beside it, and opening a FIFO
         * would wait for its reader. */
        if (t.other ||
            (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
             !S_ISSOCK(st.st_mode)))
            return 0;
        /* A file the final rename could not replace. */
        if (exists && S_ISREG(st.st_mode)) {
            outfile_folder(t.name, folder);
            if (stat(folder, &dir) == 0 && outfile_not_ours(&st, &dir))
                return wg_fail(err, "%s (another user's file in a sticky "
                               "folder)", strerror(EPERM));
            if (outfile_mount_point(t.name))
                return wg_fail(err, "%s (the file is a mount point, as a "
                               "container's bind mount of one file: outputs "
                               "are renamed into place whole, and no rename "
                               "can replace it; mount its folder instead)",
                               strerror(EBUSY));
            int fd = open(t.name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            int flags = 0;
            if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
                (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
                close(fd);
                return wg_fail(err, "%s (the file is %s: chattr -%c)",
                               strerror(EPERM),
                               flags & FS_IMMUTABLE_FL ? "immutable"
                                                       : "append-only",
                               flags & FS_IMMUTABLE_FL ? 'i' : 'a');
            }
            if (fd >= 0)
                close(fd);
        }
        /* A folder whose entries can be added but not renamed or removed
         * (chattr +a): the temporary was made and named there, its rename
         * failed, and it could not be removed either, left behind beside
         * "no output was changed".  An immutable one takes no new file:
         * said why, not only "Operation not permitted".  Not where the
         * target is a folder itself: wg_outfile_open says that, the cause
         * whatever its folder's flags. */
        outfile_folder(t.name, folder);
        int dfd = exists && S_ISDIR(st.st_mode)
                      ? -1
                      : open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int dflags = 0;
        if (dfd >= 0 && ioctl(dfd, FS_IOC_GETFLAGS, &dflags) == 0 &&
            (dflags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
            char shown[WG_PATH_SHOWN + 1];
            close(dfd);
            return wg_fail(err, "%s (the folder '%s' is %s: chattr -%c; %s)",
                           strerror(EPERM), wg_outfile_shown(folder, shown),
                           dflags & FS_IMMUTABLE_FL ? "immutable" : "append-only",
                           dflags & FS_IMMUTABLE_FL ? 'i' : 'a',
                           dflags & FS_IMMUTABLE_FL
                               ? "no file can be made there"
                               : "a file is written there under a temporary "
                                 "name and renamed, which it forbids");
        }
        if (dfd >= 0)
            close(dfd);
    }
    wg_outfile o;
    if (wg_outfile_open(&o, path, err) != 0)
        return -1;
    wg_outfile_abort(&o);
    return 0;
}

int wg_outfile_commit(wg_outfile *o, char *err)
{
    int failed;
    return wg_outfile_commit_set(o, 1, &failed, err);
}

void wg_outfile_abort(wg_outfile *o)
{
    /* Given up on standard output after a failed write: the caller is
     * about to say why. */
    if (o->how == OUT_STDOUT && ferror(stdout))
        outfile_stdout_failed = 1;
    if (o->fp && o->how != OUT_STDOUT)
        fclose(o->fp);
    o->fp = NULL;
    if (o->how == OUT_TEMP && o->slot >= 0)
        outfile_drop(o->slot);
    o->slot = -1;
    o->how = OUT_NONE;
}

void wg_outfile_remove_all(void)
{
    for (int i = 0; i < OUTFILE_SLOTS; i++)
        if (outfile_used[i] && outfile_named[i])
            unlink(outfile_tmp[i]);
}

/* ---- signals ----------------------------------------------------------- */

static void outfile_on_signal(int sig)
{
    /* Left for the committer first: it may end its renames between our
     * two steps, and would then miss a signal set after it looked. */
    atomic_store(&outfile_deferred, sig);
    int idle = STATE_IDLE;
    if (atomic_compare_exchange_strong(&outfile_state, &idle, STATE_DYING))
        outfile_die(sig);
    /* else renames are under way (their committer dies of it when done),
     * or another thread is already killing the process */
}

void wg_outfile_catch_signals(void)
{
    /* Every signal whose default action ends the process and that comes
     * from outside (not a fault of ours, after which nothing is to be
     * trusted), the real-time ones too. */
    static const int named[] = {
        SIGHUP,  SIGINT,  SIGQUIT, SIGABRT, SIGUSR1,   SIGUSR2, SIGPIPE,
        SIGALRM, SIGTERM, SIGXCPU, SIGVTALRM, SIGPROF,
#ifdef SIGSTKFLT
        SIGSTKFLT,
#endif
#ifdef SIGPOLL
        SIGPOLL,
#endif
#ifdef SIGPWR
        SIGPWR,
#endif
    };
    const int nnamed = (int)(sizeof named / sizeof named[0]);
    int sigs[sizeof named / sizeof named[0] + 64], n = 0;
    for (int i = 0; i < nnamed; i++)
        sigs[n++] = named[i];
    for (int s = SIGRTMIN; s <= SIGRTMAX && n < nnamed + 64; s++)
        sigs[n++] = s;

    sigemptyset(&outfile_caught);
    /* The handler runs with all of them blocked: one cleanup at a time. */
    struct sigaction sa = {.sa_handler = outfile_on_signal};
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < n; i++)
        sigaddset(&sa.sa_mask, sigs[i]);
    for (int i = 0; i < n; i++) {
        struct sigaction old;
        /* Ignored by whoever started us (nohup, trap '' HUP, a shell's
         * background job): it stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
        sigaddset(&outfile_caught, sigs[i]);
    }
    /* A size limit (ulimit -f) makes write fail with EFBIG, reported like
     * a full disk, instead of killing the run with its temporaries. */
    signal(SIGXFSZ, SIG_IGN);
}

/* The descriptors whose O_NONBLOCK outfile_blocking cleared, to be set
 * again when the process ends. */
#define OUTFILE_NONBLOCK_MAX 8
static int outfile_nonblock[OUTFILE_NONBLOCK_MAX];
static atomic_int outfile_nnonblock;

/* Their O_NONBLOCK again, for whoever shares them (only calls safe in a
 * signal handler). */
static void outfile_nonblock_restore(void)
{
    int n = atomic_exchange(&outfile_nnonblock, 0);
    for (int i = 0; i < n; i++) {
        int fl = fcntl(outfile_nonblock[i], F_GETFL);
        if (fl >= 0)
            fcntl(outfile_nonblock[i], F_SETFL, fl | O_NONBLOCK);
    }
}

/* At exit: what stdio holds written first, while writes still wait. */
static void outfile_nonblock_at_exit(void)
{
    fflush(NULL);
    outfile_nonblock_restore();
}

void wg_outfile_give_back(int fd)
{
    int n = atomic_load(&outfile_nnonblock);
    for (int i = 0; i < n; i++)
        if (outfile_nonblock[i] == fd) {
            int fl = fcntl(fd, F_GETFL);
            if (fl >= 0)
                fcntl(fd, F_SETFL, fl | O_NONBLOCK);
            outfile_nonblock[i] = outfile_nonblock[n - 1];
            atomic_store(&outfile_nnonblock, n - 1);
            return;
        }
}

/* Writes to descriptor fd wait for room, while we run: one open with
 * O_NONBLOCK (a pipe from a program that set it on its end, as Node.js
 * does, and passed it on) had failed a run with "Resource temporarily
 * unavailable" after the first 64 KiB, the pipe's buffer, when its reader
 * was slower.  The flag belongs to the open file, shared with whoever
 * passed it: it is set again when the process ends (exit, or a signal
 * worldgen catches).  A regular file never waits: left alone. */
static void outfile_blocking(int fd)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || !(fl & O_NONBLOCK) || fstat(fd, &st) != 0 ||
        S_ISREG(st.st_mode))
        return;
    int n = atomic_load(&outfile_nnonblock);
    for (int i = 0; i < n; i++)
        if (outfile_nonblock[i] == fd)
            return;
    if (n == OUTFILE_NONBLOCK_MAX || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        return;
    if (n == 0)
        atexit(outfile_nonblock_at_exit);
    outfile_nonblock[n] = fd;
    atomic_store(&outfile_nnonblock, n + 1);
}

void wg_outfile_hold_std(void)
{
    for (int fd = 0; fd < 3; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int got = open("/dev/null", O_RDONLY);
            if (got >= 0 && got != fd) { /* fd was taken meanwhile */
                close(got);
            }
            outfile_std_closed[fd] = got == fd;
        }
    /* Standard output and error: the tables, the messages, '-'. */
    outfile_blocking(1);
    outfile_blocking(2);
}

/* ---- identity ---------------------------------------------------------- */

/* What a name refers to, for wg_outfile_same. */
typedef struct outfile_id {
    int fd;      /* our descriptor, or -1 */
    int exists;  /* dev, ino and mode are the file's */
    int parent;  /* dev and ino are the folder's, name the final name */
    dev_t dev;
    ino_t ino;
    mode_t mode;
    char name[OUTFILE_PATH_MAX];
} outfile_id;

static void outfile_identify(const char *path, outfile_id *id)
{
    outfile_target t;
    struct stat st;
    memset(id, 0, sizeof *id);
    id->fd = -1;
    if (outfile_resolve(path, &t) != 0) {
        snprintf(id->name, sizeof id->name, "%s", path);
        return;
    }
    id->fd = t.fd;
    snprintf(id->name, sizeof id->name, "%s", t.fd >= 0 ? "" : t.name);
    if (t.fd >= 0 ? fstat(t.fd, &st) == 0 : stat(t.name, &st) == 0) {
        id->exists = 1;
    } else if (t.fd < 0) {
        /* Not there yet: its folder's identity and its name. */
        char dir[OUTFILE_PATH_MAX];
        outfile_folder(t.name, dir);
        if (stat(dir, &st) != 0)
            return;
        const char *slash = strrchr(t.name, '/');
        id->parent = 1;
        snprintf(id->name, sizeof id->name, "%s", slash ? slash + 1 : t.name);
    } else {
        return;
    }
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->mode = st.st_mode;
}

int wg_outfile_same(const char *a, const char *b)
{
    outfile_id x, y;
    outfile_identify(a, &x);
    outfile_identify(b, &y);
    if (x.fd >= 0 && x.fd == y.fd)
        return 1;
    if (x.exists && y.exists)
        return x.dev == y.dev && x.ino == y.ino && !S_ISCHR(x.mode);
    if (x.parent && y.parent)
        return x.dev == y.dev && x.ino == y.ino && strcmp(x.name, y.name) == 0;
    /* Neither can be looked at (a folder that does not exist): by name. */
    return !x.exists && !y.exists && !x.parent && !y.parent && x.fd < 0 &&
           y.fd < 0 && strcmp(x.name, y.name) == 0;
}

int wg_outfile_is_device(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || outfile_fd_spelled(path) >= 0)
        return 1;
    const char *slash = strrchr(path, '/');
    if (slash && outfile_digits(slash + 1)) {
        char dir[OUTFILE_PATH_MAX];
        if (strlen(path) >= sizeof dir)
            return 0;
        outfile_folder(path, dir);
        if (outfile_fd_folder(dir))
            return 1;
    }
    /* The name itself, not where a link in a folder of ours points. */
    return lstat(path, &st) == 0 &&
           (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
}

int wg_outfile_is_stderr(const char *path)
{
    struct stat st;
    if (fstat(STDERR_FILENO, &st) != 0 ||
        (S_ISCHR(st.st_mode) && !isatty(STDERR_FILENO)))
        return 0;
    return wg_outfile_same(path, "/dev/stderr");
}

int wg_outfile_is_terminal(const char *path)
{
    outfile_target t;
    struct stat st;
    if (outfile_resolve(path, &t) != 0)
        return 0;
    if (t.fd >= 0)
        return isatty(t.fd);
    /* Only a character device is opened to ask (a FIFO would wait, a
     * file has nothing to say). */
    if (stat(t.name, &st) != 0 || !S_ISCHR(st.st_mode))
        return 0;
    int fd = open(t.name, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int tty = isatty(fd);
    close(fd);
    return tty;
}

int wg_outfile_is_stdout(const char *path)
{
    outfile_target t;
    return outfile_resolve(path, &t) == 0 && t.fd == 1;
}
