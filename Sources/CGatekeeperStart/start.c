/* keygate-gatekeeper's first lines, as sudo's are (docs/GATEKEEPER.md, "At start, against sudo").
 *
 * A constructor of the executable with the highest priority a program may use (101): glibc runs it
 * with argc, argv and envp before main, and before the statically linked Swift runtime reads its
 * environment variables (SWIFT_DEBUG_*, SWIFT_DETERMINISTIC_HASHING, SWIFT_BACKTRACE: the runtime
 * does not look at AT_SECURE, measured in GateHardeningTests). In order:
 *   1. the environment: every SWIFT_ variable always; under AT_SECURE (started setuid by a user)
 *      everything but what the program itself reads (KEYGATE_TEST_* in test-hook builds only);
 *   2. resource limits that could starve root's work (sudo's unlimit_sudo): file size, address
 *      space, data, stack, descriptors, CPU time, locked memory raised; core files off;
 *   3. every signal back to its default action, and an empty signal mask;
 *   4. every descriptor above 2 closed (close_range), but the daemon's socket and lock (3 and 4)
 *      under --serve; 0-2 opened on /dev/null where the caller closed them.
 * The Swift side (GatekeeperMain) then takes root's ids in full and sets what it needs. */
#define _GNU_SOURCE
#include "gatekeeper_start.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static int started_secure = 0;

static int kept_under_secure(const char *entry) {
#ifdef KEYGATE_TEST_HOOKS
    if (strncmp(entry, "KEYGATE_TEST_", 13) == 0) return 1;
#else
    (void)entry;
#endif
    return 0;
}

/* Compacts environ in place: removes SWIFT_* always, and everything not kept under AT_SECURE. */
static void scrub_environment(void) {
    extern char **environ;
    if (environ == NULL) return;
    char **out = environ;
    for (char **in = environ; *in != NULL; in++) {
        int drop = strncmp(*in, "SWIFT_", 6) == 0 || (started_secure && !kept_under_secure(*in));
        if (!drop) *out++ = *in;
    }
    *out = NULL;
}

static void raise_limit(int resource, rlim_t current) {
    struct rlimit limit = { current, RLIM_INFINITY };
    if (setrlimit(resource, &limit) != 0) {
        /* Not root (a user running the binary without its setuid bit): the hard limit stays. */
        struct rlimit now;
        if (getrlimit(resource, &now) == 0) {
            now.rlim_cur = now.rlim_max;
            (void)setrlimit(resource, &now);
        }
    }
}

static void reset_limits(void) {
    raise_limit(RLIMIT_FSIZE, RLIM_INFINITY);
    raise_limit(RLIMIT_AS, RLIM_INFINITY);
    raise_limit(RLIMIT_DATA, RLIM_INFINITY);
    raise_limit(RLIMIT_CPU, RLIM_INFINITY);
    raise_limit(RLIMIT_MEMLOCK, RLIM_INFINITY);
    raise_limit(RLIMIT_STACK, 8UL * 1024 * 1024);
    struct rlimit files = { 1024, 4096 };
    if (setrlimit(RLIMIT_NOFILE, &files) != 0) raise_limit(RLIMIT_NOFILE, 1024);
    struct rlimit none = { 0, 0 };
    (void)setrlimit(RLIMIT_CORE, &none);
    (void)setpriority(PRIO_PROCESS, 0, 0);
}

/* The kernel's struct for rt_sigaction(2): glibc's sigaction refuses the two signals it keeps for
   itself (32 and 33), and a caller can leave those ignored too. */
struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long mask;
};

static void reset_signals(void) {
    struct kernel_sigaction standard;
    memset(&standard, 0, sizeof standard);
    standard.handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        (void)syscall(SYS_rt_sigaction, sig, &standard, NULL, sizeof standard.mask);
    }
    sigset_t empty;
    sigemptyset(&empty);
    (void)sigprocmask(SIG_SETMASK, &empty, NULL);
}

static void close_descriptors(int first) {
    if (syscall(SYS_close_range, (unsigned)first, ~0U, 0) != 0) {
        /* A kernel before 5.9: every descriptor the limit allows (raised to 4096 above). */
        for (int fd = first; fd < 65536; fd++) (void)close(fd);
    }
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) < 0) {
            int null = open("/dev/null", O_RDWR);
            if (null >= 0 && null != fd) { (void)dup2(null, fd); (void)close(null); }
        }
    }
}

__attribute__((constructor(101)))
static void keygate_gatekeeper_start(int argc, char **argv, char **envp) {
    (void)envp;
    started_secure = getauxval(AT_SECURE) != 0;
    scrub_environment();
    reset_limits();
    reset_signals();
    int daemon_mode = argc > 1 && argv != NULL && argv[1] != NULL && strcmp(argv[1], "--serve") == 0;
    close_descriptors(daemon_mode ? 5 : 3);
}
