/* Linux-PAM application API. pam_ext.h uses NULL without including stddef.h. */
#include <stddef.h>
#include <security/pam_appl.h>
#include <security/pam_ext.h>
