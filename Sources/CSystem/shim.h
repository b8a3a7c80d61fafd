/* Non-variadic wrappers for the few variadic libc calls Keygate needs
   (Swift cannot call variadic C functions). */
#include <sys/prctl.h>

/* Marks the process non-dumpable: no core dump, no same-user ptrace or /proc/PID/mem. */
static inline int keygate_set_nondumpable(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }
