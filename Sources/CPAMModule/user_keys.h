/* The user's kernel keyring as pam_keygate.so reaches it without starting keygate-pam-helper:
   whether the keychain is unlocked (at session open: its master key is in the user's keyring,
   a "user" key named "keygate:<uid>:master" under @u, as KeyCache names it), and the lock at the
   last session's close (the master key and Keygate 1.x's device key invalidated, as
   LoginKeys.lock does). The user keyring of a uid is reached only by a process of that uid, so
   a child becomes the user, does the one thing and answers in its exit status. The PAM
   application never changes its own ids.
   The child shares the application's memory and the application's thread waits for it
   (CLONE_VM | CLONE_VFORK, as posix_spawn starts a program): a fork would mark every page of
   the application copy-on-write, and each page it wrote afterwards would fault (docs/DECISIONS.md,
   "The module's child shares the application's memory"). So the child makes raw
   system calls only (no glibc setxid broadcast to the application's threads, no allocation),
   runs on a stack of its own in the caller's frame, with every signal blocked (no handler of
   the application runs in it), and ends with its answer. Becoming the user makes the shared
   memory non-dumpable (commit_creds), so the user cannot ptrace or read /proc/PID/mem of the
   child, which would reach the application; the application's own dumpable flag is put back
   once the child is gone. */
#pragma once
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
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

/* What the child is asked: as `uid`, look `master` up (`lock` 0) or lock the keychain
   (`lock` 1: `master` and `device` invalidated). */
struct keygate_user_keys_call {
    uid_t uid;
    gid_t gid;
    int lock;
    const char *master;
    const char *device;
};

/* The child's body; its answer is its exit status. */
static inline int keygate_user_keys_child(void *argument) {
    const struct keygate_user_keys_call *call = argument;
    return call->lock ? keygate_user_keys_lock_child(call->uid, call->gid, call->master, call->device)
                      : keygate_user_key_child(call->uid, call->gid, call->master);
}

/* Starts the child and returns its answer. SIGCHLD is the default while it runs, as around
   the helper, so that the application's handler cannot reap it first. */
static inline int keygate_user_keys_run(uid_t uid, gid_t gid, int lock, const char *master, const char *device) {
    struct keygate_user_keys_call call = { uid, gid, lock, master, device };
    /* The child's stack: this frame's array, which the waiting thread does not touch while the
       child runs (its own frames lie below it); the child's few system calls need little. */
    _Alignas(16) char stack[16384];
    int savedErrno = errno;
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    int restore = sigaction(SIGCHLD, &dfl, &old) == 0;
    sigset_t all, mask;
    sigfillset(&all);
    int masked = pthread_sigmask(SIG_SETMASK, &all, &mask) == 0;
    pid_t pid = masked ? clone(keygate_user_keys_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &call) : -1;
    if (masked) pthread_sigmask(SIG_SETMASK, &mask, NULL);
    int answer = keygate_user_keys_wait(pid);
    /* The child is gone: nothing of the user's shares this memory now. */
    if (pid > 0 && dumpable == 1 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != dumpable) {
        prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
    }
    if (restore) sigaction(SIGCHLD, &old, NULL);
    errno = savedErrno;
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
