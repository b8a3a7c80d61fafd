/* child-cost: what a child that becomes a user for one keyctl costs its parent, made with
   fork(2) against clone(CLONE_VM | CLONE_VFORK) as pam_keygate.so's user_keys.h makes it,
   when the parent goes on writing KIB kibibytes of its own memory after each child (what a PAM
   application does after close_session: a fork marks those pages copy-on-write, and each one
   written again faults). Prints wall and CPU (the parent's and its children's) per child.
   Run as root (the child becomes UID). Build: cc -O2 -o child-cost bench/tools/child-cost.c
   usage: child-cost UID KIB N */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/keyctl.h>

static uid_t user;

static int child(void *unused) {
    (void)unused;
    if (syscall(SYS_setgroups, 0, NULL) != 0 || syscall(SYS_setresgid, user, user, user) != 0 ||
        syscall(SYS_setresuid, user, user, user) != 0) return 64;
    return syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", "child-cost:absent", 0) >= 0;
}

static double cpu_ms(void) {
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + children.ru_utime.tv_sec + children.ru_stime.tv_sec) * 1e3 +
           (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + children.ru_utime.tv_usec + children.ru_stime.tv_usec) / 1e3;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: child-cost UID KIB N\n"); return 2; }
    user = (uid_t)atol(argv[1]);
    size_t bytes = (size_t)atol(argv[2]) * 1024;
    int n = atoi(argv[3]);
    char *memory = malloc(bytes + 1);
    char *stack = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (memory == NULL || stack == MAP_FAILED || n <= 0) return 1;
    memset(memory, 1, bytes + 1);
    for (int shared = 0; shared < 2; shared++) {
        double cpu = cpu_ms();
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < n; i++) {
            pid_t pid;
            if (shared) {
                sigset_t all, old;
                sigfillset(&all);
                sigprocmask(SIG_SETMASK, &all, &old);
                pid = clone(child, stack + 65536, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
                sigprocmask(SIG_SETMASK, &old, NULL);
            } else if ((pid = fork()) == 0) {
                _exit(child(NULL));
            }
            int status;
            if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) > 1) {
                fprintf(stderr, "child-cost: the child failed (run as root, with an existing UID)\n");
                return 1;
            }
            for (size_t k = 0; k < bytes; k += 4096) memory[k]++;
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double wall = ((double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3) / n;
        printf("%-6s %6zu KiB written after: %8.1f us wall, %8.1f us CPU a child\n", shared ? "clone" : "fork", bytes / 1024,
               wall, (cpu_ms() - cpu) * 1e3 / n);
    }
    return 0;
}
