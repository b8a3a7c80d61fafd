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
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "user_keys.h"
#include "record.h"
#include "auth_mark.h"

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

/* Starts the helper with posix_spawn, which glibc runs as a vfork-like clone: the application
   (sshd, a display manager) is not copied, only exec'd from, so a large one pays no page-table
   copy and no copy-on-write faults while the helper starts. Standard input and output become
   the pipes, standard error /dev/null, every other descriptor of the application is closed,
   and the helper runs with no environment. 0 and *pid on success; otherwise the error number
   (ENOENT, EACCES, ENOEXEC: the helper cannot be run; EAGAIN, ENOMEM: no process). */
static inline int keygate_spawn_helper(const char *path, int input, int output, pid_t *pid) {
    char *const argv[] = { (char *)path, NULL };
    char *const envp[] = { NULL };
    posix_spawn_file_actions_t actions;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) return error;
    if ((error = posix_spawn_file_actions_adddup2(&actions, input, 0)) == 0
        && (error = posix_spawn_file_actions_adddup2(&actions, output, 1)) == 0
        && (error = posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)) == 0
        && (error = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) == 0) {
        error = posix_spawn(pid, path, &actions, NULL, argv, envp);
    }
    posix_spawn_file_actions_destroy(&actions);
    return error;
}
/* Whether a posix_spawn error means the helper itself cannot be run (missing, not executable). */
static inline int keygate_spawn_cannot_run(int error) { return error == ENOENT || error == EACCES || error == ENOEXEC || error == ENOTDIR; }

static inline long long keygate_monotonic_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static inline int keygate_exited_with(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

/* The user's uid and primary group from the password database (getpwnam_r(3)), as the
   helper's TargetUser reads them: 0 when found, -1 otherwise. */
static inline int keygate_lookup_user(const char *name, uid_t *uid, gid_t *gid) {
    struct passwd entry, *result = NULL;
    size_t size = 16384;
    for (int attempt = 0; attempt < 4; attempt++, size *= 4) {
        char *buffer = malloc(size);
        if (buffer == NULL) return -1;
        int rc = getpwnam_r(name, &entry, buffer, size, &result);
        if (rc == 0 && result != NULL) { *uid = entry.pw_uid; *gid = entry.pw_gid; }
        free(buffer);
        if (rc == ERANGE) continue;
        return rc == 0 && result != NULL ? 0 : -1;
    }
    return -1;
}

/* The session count's folder (SessionFile): made 0700 if missing, then it must be a real
   folder (not a link), owned by root and writable by root alone. 0 when it is. */
static inline int keygate_session_folder_ready(const char *path) {
    if (mkdir(path, 0700) != 0 && errno != EEXIST) return -1;
    struct stat info;
    if (lstat(path, &info) != 0) return -1;
    return S_ISDIR(info.st_mode) && info.st_uid == 0 && (info.st_mode & 022) == 0 ? 0 : -1;
}

/* The count file, opened for reading and writing (created 0600), never through a link. */
static inline int keygate_open_session_file(const char *path) {
    return open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
}

/* True when `fd` is a regular file owned by root. */
static inline int keygate_is_root_regular(int fd) {
    struct stat info;
    return fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == 0;
}

/* flock(2) without waiting: 0 taken, 1 held by another, -1 failed. */
static inline int keygate_try_lock(int fd) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return 0;
    return errno == EWOULDBLOCK || errno == EINTR ? 1 : -1;
}

static inline void keygate_sleep_ms(long milliseconds) {
    struct timespec pause = { milliseconds / 1000, (milliseconds % 1000) * 1000000 };
    nanosleep(&pause, NULL);
}

/* /proc/PID/stat, opened for reading. */
static inline int keygate_open_for_reading(const char *path) {
    return open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
}
