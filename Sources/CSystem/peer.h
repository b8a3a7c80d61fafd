/* The other end of a Unix socket, for keygate-gatekeeper's daemon (docs/GATEKEEPER.md):
   the uid and pid the kernel recorded at connect(), and a pidfd for that process
   (SO_PEERPIDFD, Linux 6.5), so that a pid read from /proc is known to still name the
   peer and not a process that recycled its pid. Plain wrappers: Swift does not see
   struct ucred without _GNU_SOURCE, nor SO_PEERPIDFD in older headers. */
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

struct keygate_peer_ucred { pid_t pid; uid_t uid; gid_t gid; };

/* 0 and the peer's uid and pid, or -1 with errno. */
static inline int keygate_peer_credentials(int fd, uid_t *uid, pid_t *pid) {
    struct keygate_peer_ucred cred;
    socklen_t length = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) return -1;
    if (length != sizeof cred) return -1;
    *uid = cred.uid;
    *pid = cred.pid;
    return 0;
}

/* A pidfd for the process that connected (the caller closes it), or -1 with errno. */
static inline int keygate_peer_pidfd(int fd) {
    int pidfd = -1;
    socklen_t length = sizeof pidfd;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &length) != 0) return -1;
    return pidfd;
}

/* 1 while the process behind `pidfd` is not reaped (its pid cannot have been reused), else 0. */
static inline int keygate_pidfd_alive(int pidfd) {
    return syscall(SYS_pidfd_send_signal, pidfd, 0, (void *)0, 0) == 0;
}

/* glibc declares it only under _GNU_SOURCE; the same prototype, for Swift. */
int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
