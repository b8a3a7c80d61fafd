/* Linux-PAM application and module API. pam_ext.h uses NULL without including stddef.h.
   Swift cannot call variadic C functions, so pam_syslog is reached through a
   non-variadic wrapper that takes a message already formatted. */
#include <stddef.h>
#include <syslog.h>
#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <security/pam_ext.h>

/* pam_syslog(3) with a preformatted message: the message is never a format string. */
static inline void keygate_pam_syslog(pam_handle_t *pamh, int priority, const char *message) {
    pam_syslog(pamh, priority, "%s", message);
}

/* For pam_keygate.so, which acts as the user while it touches the user's files and
   keyring. glibc declares these only under _GNU_SOURCE, so they are declared in
   the wrappers' own scope; glibc's versions change every thread's ids. */
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
