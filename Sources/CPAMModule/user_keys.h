/* The user's kernel keyring as pam_keygate.so reaches it without starting keygate-pam-helper:
   whether the keychain is unlocked (at session open: its master key is in the user's keyring,
   a "user" key named "keygate:<uid>:master" under @u, as KeyCache names it), and the lock at the
   last session's close (the master key and Keygate 1.x's device key invalidated, as
   LoginKeys.lock does). The user keyring of a uid is reached only by a process of that uid, so
   a forked child becomes the user (raw system calls only: the parent may have threads, and
   nothing but async-signal-safe calls may run between fork and _exit), does the one thing and
   answers in its exit status. The PAM application never changes its own ids. */
#pragma once
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/keyctl.h>

/* The child's answers: the key is there (for the lock: it was, and is invalidated now);
   KEYGATE_USER_KEYS_FAILED = it could not run, become the user or invalidate a key it found;
   0 = the key is not there. */
#define KEYGATE_USER_KEYS_FOUND 1
#define KEYGATE_USER_KEYS_FAILED 64

/* In the child: becomes `uid` (no supplementary groups: the keyring needs none). 0 when done. */
static inline int keygate_user_keys_become(uid_t uid, gid_t gid) {
    return syscall(SYS_setgroups, 0, NULL) == 0 && syscall(SYS_setresgid, gid, gid, gid) == 0 &&
        syscall(SYS_setresuid, uid, uid, uid) == 0 ? 0 : -1;
}

/* In the child: as `uid`, looks `description` up under @u. */
static inline int keygate_user_key_child(uid_t uid, gid_t gid, const char *description) {
    if (keygate_user_keys_become(uid, gid) != 0) return KEYGATE_USER_KEYS_FAILED;
    long serial = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", description, 0);
    return serial >= 0 ? KEYGATE_USER_KEYS_FOUND : 0;
}

/* In the child: invalidates the key under @u named `description`: 1 when it was there and is
   gone, 0 when it was not there, -1 when it is there and stays. A possessor-only key is
   possessed through @u; a call on its bare serial checks possession through the process's
   own keyrings, so when the session keyring does not reach @u (EACCES) @u is linked into this
   child's process keyring, which dies with it, and the call is made again (KeyCache does the
   same). */
static inline int keygate_user_key_invalidate(const char *description) {
    long serial = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", description, 0);
    if (serial < 0) return errno == ENOKEY || errno == EKEYEXPIRED || errno == EKEYREVOKED ? 0 : -1;
    if (syscall(SYS_keyctl, KEYCTL_INVALIDATE, serial) == 0) return 1;
    if (errno != EACCES) return -1;
    if (syscall(SYS_keyctl, KEYCTL_LINK, KEY_SPEC_USER_KEYRING, KEY_SPEC_PROCESS_KEYRING) != 0) return -1;
    return syscall(SYS_keyctl, KEYCTL_INVALIDATE, serial) == 0 ? 1 : -1;
}

/* In the child: as `uid`, the lock at the last close: the device key, then the master key. */
static inline int keygate_user_keys_lock_child(uid_t uid, gid_t gid, const char *master, const char *device) {
    if (keygate_user_keys_become(uid, gid) != 0) return KEYGATE_USER_KEYS_FAILED;
    if (keygate_user_key_invalidate(device) < 0) return KEYGATE_USER_KEYS_FAILED;
    int dropped = keygate_user_key_invalidate(master);
    if (dropped < 0) return KEYGATE_USER_KEYS_FAILED;
    return dropped == 1 ? KEYGATE_USER_KEYS_FOUND : 0;
}

/* Waits for the child `pid` (fork's answer) and returns its exit status, or
   KEYGATE_USER_KEYS_FAILED. */
static inline int keygate_user_keys_wait(pid_t pid) {
    int answer = KEYGATE_USER_KEYS_FAILED;
    if (pid > 0) {
        int status = 0;
        pid_t done;
        do { done = waitpid(pid, &status, 0); } while (done < 0 && errno == EINTR);
        if (done == pid && WIFEXITED(status)) answer = WEXITSTATUS(status);
    }
    return answer;
}

/* Forks the child that, as `uid`, looks `master` up (`lock` 0) or locks the keychain (`lock` 1:
   `master` and `device` invalidated), and returns its answer. SIGCHLD is the default while it
   runs, as around the helper, so that the application's handler cannot reap it first. */
static inline int keygate_user_keys_run(uid_t uid, gid_t gid, int lock, const char *master, const char *device) {
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    int restore = sigaction(SIGCHLD, &dfl, &old) == 0;
    pid_t pid = fork();
    if (pid == 0) {
        _exit(lock ? keygate_user_keys_lock_child(uid, gid, master, device) : keygate_user_key_child(uid, gid, master));
    }
    int answer = keygate_user_keys_wait(pid);
    if (restore) sigaction(SIGCHLD, &old, NULL);
    return answer;
}

/* Locks the keychain of `uid`: KEYGATE_USER_KEYS_FOUND when its master key was cached and is
   invalidated now, 0 when it was not cached, KEYGATE_USER_KEYS_FAILED when the child could not
   do it (the caller then leaves the lock to keygate-pam-helper). */
static inline int keygate_user_keys_lock(uid_t uid, gid_t gid, const char *master, const char *device) {
    return keygate_user_keys_run(uid, gid, 1, master, device);
}

/* Whether the key `description` of `uid` is cached: the child's answer. */
static inline int keygate_user_key_present(uid_t uid, gid_t gid, const char *description) {
    return keygate_user_keys_run(uid, gid, 0, description, NULL);
}
