/* Linux-PAM's application API, loaded on first use instead of linked: only the CLI's password
   and fingerprint checks (KeygateAuthentication's PAMHandle) call into libpam, so nothing else
   (keygate-pam-helper at every login, `keygate get`, the gatekeeper) maps libpam and with it
   libaudit and libcap-ng (docs/DECISIONS.md, "libpam only when authenticating"). Types and
   constants come from PAM's own headers; the functions are called as kg_pam_start_confdir …
   through Sources/CSystem/lazy_library.h, each checked at compile time against the header's
   declaration. PAMHandle asks kg_pam_load_error() before it starts a transaction.
   pam_ext.h uses NULL without including stddef.h. */
#include <stddef.h>
#include <syslog.h>
#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <security/pam_ext.h>
#include "../CSystem/lazy_library.h"

/* X(kind, return type, name, (parameters), (arguments)) */
#define KG_PAM_FUNCTIONS(X) \
    X(VALUE, int, pam_start_confdir, (const char *service_name, const char *user, const struct pam_conv *pam_conversation, \
                                      const char *confdir, pam_handle_t **pamh), (service_name, user, pam_conversation, confdir, pamh)) \
    X(VALUE, int, pam_end, (pam_handle_t *pamh, int pam_status), (pamh, pam_status)) \
    X(VALUE, int, pam_authenticate, (pam_handle_t *pamh, int flags), (pamh, flags)) \
    X(VALUE, int, pam_acct_mgmt, (pam_handle_t *pamh, int flags), (pamh, flags)) \
    X(VALUE, const char *, pam_strerror, (pam_handle_t *pamh, int errnum), (pamh, errnum))

KG_LAZY_LIBRARY(kg_pam, "libpam.so.0", KG_PAM_FUNCTIONS)
KG_PAM_FUNCTIONS(KG_LAZY_CHECK_FUNCTION)

/* kg_NAME: NAME through the table (0 or NULL when libpam could not be loaded). */
#define KG_PAM_WRAPPER(kind, ret, name, params, args) \
    static inline ret kg_##name params { \
        const struct kg_pam_table *t = kg_pam(); \
        KG_LAZY_CALL_##kind(ret, t->name, args); \
    }
KG_PAM_FUNCTIONS(KG_PAM_WRAPPER)
#undef KG_PAM_WRAPPER
