/* GLib's GIO: the D-Bus connection (GDBus) and GVariant that Keygate's storage layer uses to
 * talk to the Secret Service itself (Storage/SecretServiceConnection.swift). libsecret is not
 * linked: its client always negotiates an encrypted session, which Keygate's sealed blobs do
 * not need (docs/DECISIONS.md). */
#include <gio/gio.h>
