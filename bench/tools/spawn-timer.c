/* spawn-timer: runs commands interleaved (A B A B ...) and times each run from
   posix_spawn to wait4, so that the figures carry no shell overhead. A command
   whose label starts with '!' runs untimed (a set-up step such as `keygate lock`).
   stdin and stdout are /dev/null; stderr is inherited, or appended to the file
   SPAWN_TIMER_STDERR names. A non-zero exit stops everything (a benchmark must
   not time failures), unless SPAWN_TIMER_KEEP_GOING=1: then the run is printed
   with its status and the next one starts.
   SPAWN_TIMER_SWAP="LABEL1 LABEL2": the two commands so labelled change places in every
   other round (the first timed round as given; warm-up rounds count too), so that each sits in the other's slot equally
   often: the run right after a given command can be measured faster than one slot later,
   and a fixed order would give that to one of two builds being compared.
   usage: spawn-timer ROUNDS WARMUP LABEL CMD ARGS... [--- LABEL CMD ARGS...]...
   prints one line per timed run: "LABEL MILLISECONDS MAXRSS_KB EXIT_STATUS CPU_MS",
   CPU_MS being the child's user plus system time (what it computed, as against what
   it waited for: the rest of MILLISECONDS is spawn, loading and waiting on others). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

struct command { const char *label; char **argv; };

static int run(const struct command *c, double *ms, long *rss, int *exit_status, double *cpu_ms) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    const char *log = getenv("SPAWN_TIMER_STDERR");
    if (log != NULL && *log != 0) posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    struct timespec a, b;
    pid_t pid;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int err = posix_spawnp(&pid, c->argv[0], &fa, NULL, c->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) { fprintf(stderr, "spawn-timer: cannot run %s: %s\n", c->argv[0], strerror(err)); return 0; }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) { perror("spawn-timer: wait4"); return 0; }
    clock_gettime(CLOCK_MONOTONIC, &b);
    *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (*exit_status != 0) {
        const char *keep = getenv("SPAWN_TIMER_KEEP_GOING");
        fprintf(stderr, "spawn-timer: %s (%s) failed with status %d\n", c->label, c->argv[0], *exit_status);
        if (keep == NULL || strcmp(keep, "1") != 0) return 0;
    }
    *ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    *rss = ru.ru_maxrss;
    *cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3
            + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: spawn-timer ROUNDS WARMUP LABEL CMD ARGS... [--- LABEL CMD ARGS...]...\n");
        return 2;
    }
    int rounds = atoi(argv[1]), warmup = atoi(argv[2]);
    struct command commands[16];
    int count = 0;
    for (int i = 3; i < argc && count < 16;) {
        commands[count].label = argv[i];
        commands[count].argv = &argv[i + 1];
        int j = i + 1;
        while (j < argc && strcmp(argv[j], "---") != 0) j++;
        if (j < argc) argv[j] = NULL;
        if (j == i + 1) { fprintf(stderr, "spawn-timer: %s has no command\n", argv[i]); return 2; }
        count++;
        i = j + 1;
    }
    int swap_a = -1, swap_b = -1;
    const char *swap = getenv("SPAWN_TIMER_SWAP");
    if (swap != NULL && *swap != 0) {
        const char *space = strchr(swap, ' ');
        for (int k = 0; k < count && space != NULL; k++) {
            if (strlen(commands[k].label) == (size_t)(space - swap) && strncmp(commands[k].label, swap, (size_t)(space - swap)) == 0) swap_a = k;
            if (strcmp(commands[k].label, space + 1) == 0) swap_b = k;
        }
        if (swap_a < 0 || swap_b < 0 || swap_a == swap_b) {
            fprintf(stderr, "spawn-timer: SPAWN_TIMER_SWAP=\"%s\" must name two different labels of the commands, separated by one space\n", swap);
            return 2;
        }
    }
    for (int r = 0; r < warmup + rounds; r++) {
        for (int i = 0; i < count; i++) {
            int k = i;
            int swapped = (r - warmup) % 2 != 0;
            if (swapped && i == swap_a) k = swap_b;
            else if (swapped && i == swap_b) k = swap_a;
            double ms, cpu_ms; long rss; int status;
            if (!run(&commands[k], &ms, &rss, &status, &cpu_ms)) return 1;
            if (r >= warmup && commands[k].label[0] != '!')
                printf("%s %.3f %ld %d %.3f\n", commands[k].label, ms, rss, status, cpu_ms);
        }
    }
    return 0;
}
