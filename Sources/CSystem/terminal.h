/* The C side of the terminal echo guard (Sources/KeygateAuthentication/TerminalEchoGuard.swift,
   its only caller): the saved terminal settings, the signal actions it replaced and the
   signal handler all live here, in C storage of C's own size.

   Why in C: swiftc -O lowers a zero-initialised Swift global of an imported C struct to a
   packed LLVM constant without the struct's inner padding. A `static var x = sigaction()`
   gets 148 bytes where C's struct sigaction has 152, so sigaction(2) writing the old action
   into it overruns the next global (a Mutex) and a typed password crashes the release binary
   (docs/DECISIONS.md, "The terminal prompt's state lives in C"). Debug builds lay globals
   out differently.

   The handler only records the signal and wakes the reader through a pipe, whichever thread
   the kernel chose to run it on. The reader restores the terminal and the handlers, then
   passes the signal on: a stop (Ctrl-Z) stops the process and the prompt starts again after
   `fg`, as sudo's tgetpass does; anything else goes to the action that was there before.

   Static state in a header is one copy per object file that calls these functions, so
   exactly one Swift file may call them (and one prompt at a time: the Swift side holds a lock). */
#ifndef KEYGATE_CSYSTEM_TERMINAL_H
#define KEYGATE_CSYSTEM_TERMINAL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

enum { KEYGATE_TTY_NSIGNALS = 7 };
/* The guarded signals, by index (a function: see keygate_tty below). */
static inline int keygate_tty_signal(int i) {
    static const int signals[KEYGATE_TTY_NSIGNALS] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU };
    return signals[i];
}
/* Everything the guard keeps between begin and end. One instance, behind an accessor: the
   Swift importer emits a header's functions, with their local statics, but not file-scope
   static variables. */
struct keygate_tty_state {
    struct sigaction previous[KEYGATE_TTY_NSIGNALS];
    unsigned installed;            /* bit i: our handler is in for signals[i] */
    struct termios saved;
    int fd;
    int changed;                   /* echo was turned off: restore on end */
    int wake[2];                   /* the handler writes, the reader polls */
    volatile sig_atomic_t caught;
};

static inline struct keygate_tty_state *keygate_tty(void) {
    static struct keygate_tty_state state = { .fd = -1, .wake = { -1, -1 } };
    return &state;
}

/* True for the job-control stops: Ctrl-Z, and a background read or write of the terminal. */
static inline int keygate_tty_is_stop(int sig) {
    return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Async-signal-safe: records the signal (a stop never hides an ending one) and wakes the reader. */
static void keygate_tty_on_signal(int sig) {
    struct keygate_tty_state *t = keygate_tty();
    int saved_errno = errno;
    if (t->caught == 0 || keygate_tty_is_stop(t->caught)) t->caught = sig;
    if (t->wake[1] >= 0) {
        ssize_t ignored = write(t->wake[1], "", 1);
        (void)ignored;
    }
    errno = saved_errno;
}

/* Puts the terminal and the previous signal actions back and closes the wake pipe.
   Returns the guarded signal that arrived (0 if none); the caller passes it on. */
static inline int keygate_tty_end(void) {
    struct keygate_tty_state *t = keygate_tty();
    if (t->changed && t->fd >= 0) {
        /* With SIGTTOU blocked the kernel lets even a background process (a job sent on with
           `bg` at the prompt) put back the settings it changed, instead of interrupting the
           call forever (our handler is still in) or stopping with echo off. */
        sigset_t ttou, previous_mask;
        sigemptyset(&ttou);
        sigaddset(&ttou, SIGTTOU);
        pthread_sigmask(SIG_BLOCK, &ttou, &previous_mask);
        while (tcsetattr(t->fd, TCSAFLUSH, &t->saved) != 0 && errno == EINTR) {}
        pthread_sigmask(SIG_SETMASK, &previous_mask, NULL);
    }
    t->changed = 0;
    for (int i = 0; i < KEYGATE_TTY_NSIGNALS; i++) {
        if (t->installed & (1u << i)) sigaction(keygate_tty_signal(i), &t->previous[i], NULL);
    }
    t->installed = 0;
    for (int i = 0; i < 2; i++) {
        if (t->wake[i] >= 0) close(t->wake[i]);
        t->wake[i] = -1;
    }
    t->fd = -1;
    int sig = t->caught;
    t->caught = 0;
    return sig;
}

/* Saves fd's settings, installs the handlers (not for ignored signals) and turns echo off.
   0, or -1 with errno. Either way the caller ends with keygate_tty_end, which also says
   whether a guarded signal arrived (EINTR from a background process's tcsetattr is SIGTTOU). */
static inline int keygate_tty_begin(int fd) {
    struct keygate_tty_state *t = keygate_tty();
    t->caught = 0;
    t->installed = 0;
    t->changed = 0;
    if (tcgetattr(fd, &t->saved) != 0) return -1;
    /* Close-on-exec from the start (pipe then fcntl would leave a window in which another
       thread's spawn inherits the ends; shim.h's keygate_pipe_cloexec says the same). */
    extern int pipe2(int [2], int);
    if (pipe2(t->wake, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    t->fd = fd;

    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_handler = keygate_tty_on_signal;
    sigemptyset(&ours.sa_mask);
    for (int i = 0; i < KEYGATE_TTY_NSIGNALS; i++) sigaddset(&ours.sa_mask, keygate_tty_signal(i));
    ours.sa_flags = 0; /* no SA_RESTART: a blocked tcsetattr or poll returns EINTR */
    for (int i = 0; i < KEYGATE_TTY_NSIGNALS; i++) {
        struct sigaction old;
        if (sigaction(keygate_tty_signal(i), NULL, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue; /* cannot interrupt us */
        t->previous[i] = old;
        if (sigaction(keygate_tty_signal(i), &ours, NULL) == 0) t->installed |= 1u << i;
    }

    struct termios quiet = t->saved;
    quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
    if (tcsetattr(fd, TCSAFLUSH, &quiet) != 0) return -1; /* the caller ends the guard */
    t->changed = 1;
    return 0;
}

/* One byte from the terminal into `byte`: 1, 0 at end of file, -1 with errno, or -2 when a
   guarded signal arrived (keygate_tty_end returns it). Waits for the person as long as it takes. */
static inline int keygate_tty_read_byte(unsigned char *byte) {
    struct keygate_tty_state *t = keygate_tty();
    for (;;) {
        if (t->caught) return -2;
        struct pollfd fds[2] = {
            { .fd = t->fd, .events = POLLIN, .revents = 0 },
            { .fd = t->wake[0], .events = POLLIN, .revents = 0 },
        };
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (t->caught) return -2;
        if (fds[0].revents) {
            ssize_t n = read(t->fd, byte, 1);
            if (n < 0 && errno == EINTR) continue;
            return (int)n;
        }
    }
}

/* True when `sig` now has its default action (after keygate_tty_end put the old ones back). */
static inline int keygate_signal_is_default(int sig) {
    struct sigaction current;
    if (sigaction(sig, NULL, &current) != 0) return 0;
    return !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
}

#endif
