/* child-seizer: a process of the user that tries to reach a root PAM application through the
   child pam_keygate.so makes to look into the user's keyring (user_keys.h). That child shares
   the application's memory and becomes the user, so the user may signal it: the seizer stops it
   (SIGSTOP) as soon as it is the user's, then tries what would read or write the application's
   memory through it (ptrace attach, /proc/PID/mem, /proc/PID/environ, process_vm_readv), then
   kills it. The child is found by pid: the newest pid (/proc/sys/kernel/ns_last_pid) and the one
   before it are tried in a loop; a stopped process that is not a child of the application (named
   by the application's comm, which the child keeps: it never executes anything) is let go at
   once (SIGCONT).
   usage: child-seizer SECONDS WANT COMM   (as the user; it ends after SECONDS, after WANT children
          caught, or at SIGTERM; COMM: the application's name as /proc/PID/stat shows it)
   prints: caught=N attached=N mem=N environ=N vmread=N
   (each but caught counts an attempt that was NOT refused; a refusal is EPERM or EACCES) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long newest_pid(void) {
    char text[32] = { 0 };
    int fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    return n > 0 ? atol(text) : -1;
}

static char wanted[64];

/* Whether `pid` is the application's child (its comm is the application's), stopped now: a
   SIGSTOP sent to a running process takes effect a moment later, and one that exits first is
   only a zombie, whose refusals would prove nothing. */
static int is_stopped_child(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    for (int attempt = 0; attempt < 2000; attempt++) {
        char text[256] = { 0 };
        int fd = open(path, O_RDONLY);
        if (fd < 0) return 0;
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        const char *end = n > 0 ? strrchr(text, ')') : NULL;
        if (end == NULL || strstr(text, wanted) == NULL || end[1] != ' ') return 0;
        char state = end[2];
        if (state == 'T' || state == 't') return 1;
        if (state == 'Z' || state == 'X') return 0;
        usleep(50);
    }
    return 0;
}

static int refused(int error) { return error == EPERM || error == EACCES; }

static volatile sig_atomic_t stopping = 0;
static void stop(int signal) { (void)signal; stopping = 1; }

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: child-seizer SECONDS WANT COMM\n"); return 2; }
    snprintf(wanted, sizeof wanted, "(%.15s)", argv[3]);
    time_t end = time(NULL) + atol(argv[1]);
    int want = atoi(argv[2]);
    int caught = 0, attached = 0, mem = 0, environ_read = 0, vmread = 0;
    pid_t self = getpid();
    signal(SIGTERM, stop);
    while (!stopping && time(NULL) < end && caught < want) {
        long newest = newest_pid();
        for (long pid = newest; pid > newest - 2 && pid > 1; pid--) {
            if (pid == self || kill((pid_t)pid, SIGSTOP) != 0) continue;
            if (!is_stopped_child((pid_t)pid)) { kill((pid_t)pid, SIGCONT); continue; }
            caught++;
            if (ptrace(PTRACE_ATTACH, (pid_t)pid, NULL, NULL) == 0) {
                attached++;
                ptrace(PTRACE_DETACH, (pid_t)pid, NULL, NULL);
            } else if (!refused(errno)) attached++;
            char path[64];
            snprintf(path, sizeof path, "/proc/%ld/mem", pid);
            int fd = open(path, O_RDONLY);
            if (fd >= 0 || !refused(errno)) mem++;
            if (fd >= 0) close(fd);
            snprintf(path, sizeof path, "/proc/%ld/environ", pid);
            fd = open(path, O_RDONLY);
            if (fd >= 0) {
                char byte;
                if (read(fd, &byte, 1) >= 0) environ_read++;
                close(fd);
            } else if (!refused(errno)) environ_read++;
            char buffer[16];
            struct iovec local = { buffer, sizeof buffer }, remote = { (void *)0x10000, sizeof buffer };
            if (process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) >= 0 || !refused(errno)) vmread++;
            kill((pid_t)pid, SIGKILL);
        }
    }
    printf("caught=%d attached=%d mem=%d environ=%d vmread=%d\n", caught, attached, mem, environ_read, vmread);
    return 0;
}
