/* keyutils' named wrappers (keyctl() itself is variadic and unusable from Swift). */
#include <keyutils.h>
