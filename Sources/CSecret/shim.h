/* libsecret and the parts of GLib/GIO that Keygate's storage layer calls. */
#include <libsecret/secret.h>
