/* What the thin pam_keygate.so (Sources/PAMKeygateModule, Embedded Swift) calls: libpam's
   module API and the few libc calls that start keygate-pam-helper and wait for it.
   Embedded Swift cannot import Glibc, so the C declarations come from here; the
   variadic pam_syslog and pam_info are reached through non-variadic wrappers. */
#define _GNU_SOURCE
#include <stddef.h>
#include <syslog.h>
#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <security/pam_ext.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The helper's installed path, fixed when the module is built (make pam). */
#ifndef KEYGATE_PAM_HELPER
#define KEYGATE_PAM_HELPER "/usr/local/libexec/keygate/keygate-pam-helper"
#endif
static inline const char *keygate_pam_helper_path(void) { return KEYGATE_PAM_HELPER; }

static inline void keygate_pam_syslog(pam_handle_t *pamh, int priority, const char *message) {
    pam_syslog(pamh, priority, "%s", message);
}
static inline int keygate_pam_info(pam_handle_t *pamh, const char *message) {
    return pam_info(pamh, "%s", message);
}
static inline int keygate_errno(void) { return errno; }

/* sigaction(2) for one signal: the previous action is saved in *old. */
static inline int keygate_set_signal(int signal, void (*handler)(int), struct sigaction *old) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    return sigaction(signal, &action, old);
}
static inline int keygate_restore_signal(int signal, const struct sigaction *old) {
    return sigaction(signal, old, NULL);
}
static inline void (*keygate_sig_dfl(void))(int) { return SIG_DFL; }
static inline void (*keygate_sig_ign(void))(int) { return SIG_IGN; }

/* The child's side of the start, between fork and exec: only async-signal-safe calls.
   Standard input and output become the pipes, standard error /dev/null, every other
   descriptor of the application is closed, and the helper runs with no environment. */
static inline void keygate_exec_helper(const char *path, int input, int output) {
    char *const argv[] = { (char *)path, NULL };
    char *const envp[] = { NULL };
    int null = open("/dev/null", O_WRONLY);
    if (dup2(input, 0) < 0 || dup2(output, 1) < 0 || null < 0 || dup2(null, 2) < 0) _exit(127);
    close_range(3, ~0U, 0);
    execve(path, argv, envp);
    _exit(127);
}

static inline long long keygate_monotonic_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static inline int keygate_exited_with(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
