/* dlopen-timer: how long dlopen(3) of a shared object takes in a fresh process, as in
   every sshd or login that loads a PAM module. For each round and each FILE, forks a
   child that times dlopen(FILE, RTLD_NOW | RTLD_LOCAL) with CLOCK_MONOTONIC (the file
   is in the page cache after the first round: the cost measured is ld.so's, mapping and
   relocating, and the object's constructors). Prints "NAME NANOSECONDS" per run.
   usage: dlopen-timer ROUNDS NAME FILE [NAME FILE]... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 4 || (argc - 2) % 2 != 0) {
        fprintf(stderr, "usage: dlopen-timer ROUNDS NAME FILE [NAME FILE]...\n");
        return 2;
    }
    int rounds = atoi(argv[1]);
    for (int r = 0; r < rounds; r++) {
        for (int i = 2; i + 1 < argc; i += 2) {
            int fds[2];
            if (pipe(fds) != 0) return 1;
            pid_t pid = fork();
            if (pid < 0) return 1;
            if (pid == 0) {
                close(fds[0]);
                long long start = now_ns();
                void *handle = dlopen(argv[i + 1], RTLD_NOW | RTLD_LOCAL);
                long long elapsed = now_ns() - start;
                if (handle == NULL) { fprintf(stderr, "dlopen %s: %s\n", argv[i + 1], dlerror()); _exit(1); }
                if (write(fds[1], &elapsed, sizeof elapsed) != sizeof elapsed) _exit(1);
                _exit(0);
            }
            close(fds[1]);
            long long elapsed = -1;
            ssize_t n = read(fds[0], &elapsed, sizeof elapsed);
            close(fds[0]);
            int status = 0;
            waitpid(pid, &status, 0);
            if (n != sizeof elapsed || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
            printf("%s %lld\n", argv[i], elapsed);
        }
    }
    return 0;
}
