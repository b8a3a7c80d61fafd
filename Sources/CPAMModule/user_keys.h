/* Whether a user's keychain is unlocked, as pam_keygate.so asks at session open without
   starting keygate-pam-helper: its master key is in the user's kernel keyring (a "user" key
   named "keygate:<uid>:master" under @u, as KeyCache names it). The user keyring of a uid is
   reached only by a process of that uid, so a forked child becomes the user (raw system calls
   only: the parent may have threads, and nothing but async-signal-safe calls may run between
   fork and _exit), searches @u (read-only: nothing is changed) and answers in its exit status.
   The PAM application never changes its own ids. */
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

/* The child's answers: the key is there; KEYGATE_USER_KEYS_FAILED = it could not run or
   become the user; 0 = the key is not there. */
#define KEYGATE_USER_KEYS_FOUND 1
#define KEYGATE_USER_KEYS_FAILED 64

/* In the child: as `uid`, looks `description` up under @u. */
static inline int keygate_user_key_child(uid_t uid, gid_t gid, const char *description) {
    if (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setresgid, gid, gid, gid) != 0 ||
        syscall(SYS_setresuid, uid, uid, uid) != 0) {
        return KEYGATE_USER_KEYS_FAILED;
    }
    long serial = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", description, 0);
    return serial >= 0 ? KEYGATE_USER_KEYS_FOUND : 0;
}

/* Runs the child and returns its answer. SIGCHLD is the default while it runs, as around the
   helper, so that the application's handler cannot reap it first. */
static inline int keygate_user_key_present(uid_t uid, gid_t gid, const char *description) {
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    int restore = sigaction(SIGCHLD, &dfl, &old) == 0;
    int answer = KEYGATE_USER_KEYS_FAILED;
    pid_t pid = fork();
    if (pid == 0) _exit(keygate_user_key_child(uid, gid, description));
    if (pid > 0) {
        int status = 0;
        pid_t done;
        do { done = waitpid(pid, &status, 0); } while (done < 0 && errno == EINTR);
        if (done == pid && WIFEXITED(status)) answer = WEXITSTATUS(status);
    }
    if (restore) sigaction(SIGCHLD, &old, NULL);
    return answer;
}
