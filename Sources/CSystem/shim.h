/* Non-variadic wrappers for the few variadic libc calls Keygate needs
   (Swift cannot call variadic C functions). */
#include <sys/prctl.h>

/* Marks the process non-dumpable: no core dump, no same-user ptrace or /proc/PID/mem. */
static inline int keygate_set_nondumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

#include <syslog.h>
#include <shadow.h>

/* syslog(3) with a fixed "%s" format, so a message is never read as a format. */
static inline void keygate_syslog(int priority, const char *message) { syslog(priority, "%s", message); }

/* Names the process "keygate" in the log, with its pid, facility authpriv. Only the
   CLI calls this: inside a PAM host (sshd, login) the host's own ident stays. */
static inline void keygate_openlog(void) { openlog("keygate", LOG_PID, LOG_AUTHPRIV); }

static inline int keygate_log_authpriv_notice(void) { return LOG_AUTHPRIV | LOG_NOTICE; }
static inline int keygate_log_authpriv_warning(void) { return LOG_AUTHPRIV | LOG_WARNING; }

#include <sys/mman.h>
#ifndef MCL_ONFAULT
#define MCL_ONFAULT 4
#endif
/* Locks every page of the process as it is touched, now and later (the gatekeeper's daemon,
   root, so no RLIMIT_MEMLOCK applies): nothing it holds can reach swap. */
static inline int keygate_lock_all_memory(void) { return mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT); }

/* Names the process (comm, as ps and top show it; at most 15 bytes). */
static inline int keygate_set_process_name(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }

#include <fcntl.h>
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif
/* An unnamed regular file in the folder `dirfd` (O_TMPFILE, write-only, close-on-exec), or -1:
   it gets a name (linkat) only once written, so a writer stopped halfway leaves nothing behind.
   O_TMPFILE is a compound macro, which Swift does not import. */
static inline int keygate_open_tmpfile(int dirfd, mode_t mode) {
    return openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
}

#include <stdio.h>
#include <errno.h>
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif
/* Names the unnamed file `fd` as `name` in the folder `dirfd`: through /proc/self/fd (any user),
   else AT_EMPTY_PATH (root). 0, or -1 with errno (EEXIST when `name` exists). */
static inline int keygate_link_unnamed(int fd, int dirfd, const char *name) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW) == 0) return 0;
    if (errno == EEXIST) return -1;
    return linkat(fd, "", dirfd, name, AT_EMPTY_PATH);
}

#include <sys/ioctl.h>
#include <termios.h>
/* Discards what was typed on the terminal `fd` and not read yet (tcflush TCIFLUSH); returns
   how many bytes that was (FIONREAD), or -1 when `fd` is no terminal. */
static inline int keygate_tty_discard_typeahead(int fd) {
    int pending = 0;
    if (ioctl(fd, FIONREAD, &pending) != 0) return -1;
    if (pending > 0 && tcflush(fd, TCIFLUSH) != 0) return -1;
    return pending;
}

/* unshare(2) is declared by <sched.h> only under _GNU_SOURCE. */
extern int unshare(int flags);
/* A mount namespace of the process's own (CLONE_NEWNS): the test-hook gatekeeper's private
   system bus (TestSystemBus) is mounted there, where no other process sees it. */
static inline int keygate_unshare_mounts(void) { return unshare(0x00020000); }

/* The real, effective and saved ids at once (UserIdentity: pam_keygate's helper and root's
   host-protector commands act as the user while they touch the user's files and keyring).
   glibc declares these only under _GNU_SOURCE, so they are declared in the wrappers' own
   scope; glibc's versions change every thread's ids. */
#include <sys/types.h>
static inline int keygate_setresuid(uid_t r, uid_t e, uid_t s) {
    extern int setresuid(uid_t, uid_t, uid_t);
    return setresuid(r, e, s);
}
static inline int keygate_setresgid(gid_t r, gid_t e, gid_t s) {
    extern int setresgid(gid_t, gid_t, gid_t);
    return setresgid(r, e, s);
}
static inline int keygate_getresuid(uid_t *r, uid_t *e, uid_t *s) {
    extern int getresuid(uid_t *, uid_t *, uid_t *);
    return getresuid(r, e, s);
}
static inline int keygate_getresgid(gid_t *r, gid_t *e, gid_t *s) {
    extern int getresgid(gid_t *, gid_t *, gid_t *);
    return getresgid(r, e, s);
}

/* POSIX_SPAWN_SETSID (glibc 2.26): the spawned child starts a session of its own. <spawn.h>
   defines it under _GNU_SOURCE only, which Swift's view of the header lacks. */
#include <spawn.h>
#ifndef POSIX_SPAWN_SETSID
#define POSIX_SPAWN_SETSID 0x80
#endif
static inline int keygate_spawn_setsid_flag(void) { return POSIX_SPAWN_SETSID; }

/* pipe2(2) with O_CLOEXEC: both ends are close-on-exec from the start, so no other thread's
   spawn can inherit one (pipe() then fcntl() leaves that window). Declared by <unistd.h> only
   under _GNU_SOURCE. */
static inline int keygate_pipe_cloexec(int fds[2]) {
    extern int pipe2(int [2], int);
    return pipe2(fds, O_CLOEXEC);
}
