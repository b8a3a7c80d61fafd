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
