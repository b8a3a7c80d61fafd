/* A one-shot watchdog on its own POSIX thread: after `milliseconds` it calls `fire(context)`
   once, unless stopped first. ServiceDeadline uses it to cancel a GDBus connect that takes no
   timeout of its own. Not libdispatch: an unprivileged process's libdispatch worker threads
   fail to raise their priority and log "Failed to set thread priority for worker thread ...
   errno=13" to syslog on every run (issue 16). No state outside the malloc'd watchdog. */
#ifndef KEYGATE_CSYSTEM_WATCHDOG_H
#define KEYGATE_CSYSTEM_WATCHDOG_H

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct keygate_watchdog {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int stopped;
    struct timespec deadline;   /* CLOCK_MONOTONIC */
    void (*fire)(void *);
    void *context;
    pthread_t thread;
};

static void *keygate_watchdog_main(void *argument) {
    struct keygate_watchdog *w = argument;
    pthread_mutex_lock(&w->mutex);
    int timed_out = 0;
    while (!w->stopped && !timed_out) {
        timed_out = pthread_cond_timedwait(&w->cond, &w->mutex, &w->deadline) == ETIMEDOUT;
    }
    int fire = !w->stopped;
    pthread_mutex_unlock(&w->mutex);
    if (fire) w->fire(w->context);
    return NULL;
}

/* Starts the watchdog; NULL when no thread could be made (the caller then has no deadline). */
static inline struct keygate_watchdog *keygate_watchdog_start(long milliseconds, void (*fire)(void *), void *context) {
    struct keygate_watchdog *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_mutex_init(&w->mutex, NULL);
    pthread_cond_init(&w->cond, &attributes);
    pthread_condattr_destroy(&attributes);
    clock_gettime(CLOCK_MONOTONIC, &w->deadline);
    w->deadline.tv_sec += milliseconds / 1000;
    w->deadline.tv_nsec += (milliseconds % 1000) * 1000000L;
    if (w->deadline.tv_nsec >= 1000000000L) { w->deadline.tv_sec += 1; w->deadline.tv_nsec -= 1000000000L; }
    w->fire = fire;
    w->context = context;
    if (pthread_create(&w->thread, NULL, keygate_watchdog_main, w) != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->mutex);
        free(w);
        return NULL;
    }
    return w;
}

/* Stops the watchdog (it no longer fires once this returns) and frees it. NULL is allowed. */
static inline void keygate_watchdog_stop(struct keygate_watchdog *w) {
    if (!w) return;
    pthread_mutex_lock(&w->mutex);
    w->stopped = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->mutex);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mutex);
    free(w);
}

#endif
