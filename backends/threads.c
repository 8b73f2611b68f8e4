/* threads.c: whether a backend's threads can all run at once here
 * (wg_threads_try).  Under a limit on processes (ulimit -u, a control
 * group's pids.max) fewer start, and what then happens is the thread
 * library's: libgomp exits with its own message, and lavapipe waits for
 * ever in its first submit; so the backends try their threads first. */
#include <pthread.h>
#include <stdlib.h>

#include "backend.h"

/* The tried threads wait here until every one is started (or one could
 * not be), so that they are all alive at once. */
typedef struct threads_trial {
    pthread_mutex_t lock;
    pthread_cond_t go;
    int released;
} threads_trial;

static void *threads_trial_main(void *arg)
{
    threads_trial *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->released)
        pthread_cond_wait(&t->go, &t->lock);
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

int wg_threads_try(int count, wg_thread_attr_fn attr, void *ctx, int *error)
{
    *error = 0;
    if (count <= 0)
        return 0;
    pthread_t *tid = malloc((size_t)count * sizeof *tid);
    if (!tid) {
        *error = -1;
        return 0;
    }
    threads_trial t = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    int n = 0;
    while (n < count) {
        pthread_attr_t store, *a = attr ? attr(n, ctx, &store) : NULL;
        int e = pthread_create(&tid[n], a, threads_trial_main, &t);
        if (a)
            pthread_attr_destroy(a);
        if (e != 0) {
            *error = e;
            break;
        }
        n++;
    }
    pthread_mutex_lock(&t.lock);
    t.released = 1;
    pthread_cond_broadcast(&t.go);
    pthread_mutex_unlock(&t.lock);
    for (int i = 0; i < n; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    return n;
}
