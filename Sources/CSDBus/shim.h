/* sd-bus from libsystemd, loaded on first use: the D-Bus client Keygate's storage layer uses to
 * talk to the Secret Service (KeygateStorage/SecretServiceConnection.swift). Synchronous and
 * single-threaded: no type system, no worker thread, no main loop (docs/DECISIONS.md,
 * "The Secret Service over sd-bus").
 *
 * Nothing links libsystemd: a `keygate --version`, `help`, a usage error or a read from the
 * embedded store never loads it. The first call of any function below dlopens
 * libsystemd.so.0 and looks up every function of its table at once (the client's or the
 * server's; Sources/CSystem/lazy_library.h). Keygate asks `kg_sdbus_load_error()` (a server
 * also `kg_sdbus_server_load_error()`) before it connects, so a missing library is reported
 * as "not available" with the package to install (libsystemd0).
 *
 * The few types and constants Keygate uses are declared here, as sd-bus's stable ABI defines
 * them (libsystemd0 keeps its ABI: the soname has been .so.0 since 2014). `KG_SDBUS_CHECK`
 * compiles this file against the real <systemd/sd-bus.h> (libsystemd-dev) instead and asserts
 * that every function's type and every constant's value agree
 * (Tests/KeygateCLITests/LazyLibraryTests.swift). */
#ifndef KEYGATE_CSDBUS_SHIM_H
#define KEYGATE_CSDBUS_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include "../CSystem/lazy_library.h"

#ifndef KG_SDBUS_CHECK
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct sd_bus_slot sd_bus_slot;
typedef struct sd_bus_error {
    const char *name;
    const char *message;
    int _need_free;
} sd_bus_error;
typedef int (*sd_bus_message_handler_t)(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);
#endif

/* The type codes Keygate reads and writes, a method call's message type, and the name flags the
 * Secret Service daemon asks with: X(name, value). */
#define KG_SDBUS_TYPES(X) \
    X(SD_BUS_TYPE_BYTE, 'y') \
    X(SD_BUS_TYPE_BOOLEAN, 'b') \
    X(SD_BUS_TYPE_UINT32, 'u') \
    X(SD_BUS_TYPE_UINT64, 't') \
    X(SD_BUS_TYPE_STRING, 's') \
    X(SD_BUS_TYPE_OBJECT_PATH, 'o') \
    X(SD_BUS_TYPE_ARRAY, 'a') \
    X(SD_BUS_TYPE_VARIANT, 'v') \
    X(SD_BUS_TYPE_STRUCT, 'r') \
    X(SD_BUS_TYPE_DICT_ENTRY, 'e') \
    X(SD_BUS_MESSAGE_METHOD_CALL, 1) \
    X(SD_BUS_NAME_REPLACE_EXISTING, 1) \
    X(SD_BUS_NAME_ALLOW_REPLACEMENT, 2)

#ifndef KG_SDBUS_CHECK
KG_SDBUS_TYPES(KG_LAZY_DEFINE_CONSTANT)
#endif

/* The functions Keygate calls: X(kind, return type, name, (parameters), (arguments)).
 * kind is VALUE or VOID (what a call returns when the library could not be loaded).
 * The client's and the server's are two tables over the same library: a client (every
 * Secret Service read) looks up only the functions it calls, not the daemon's too, and each
 * dlsym walks libsystemd's hash table (~850 instructions each, twice a read: each object file
 * that calls in fills its own table). */
#define KG_SDBUS_FUNCTIONS(X) KG_SDBUS_CLIENT_FUNCTIONS(X) KG_SDBUS_SERVER_FUNCTIONS(X)
#define KG_SDBUS_CLIENT_FUNCTIONS(X) \
    X(VALUE, int, sd_bus_new, (sd_bus **ret), (ret)) \
    X(VALUE, int, sd_bus_set_address, (sd_bus *bus, const char *address), (bus, address)) \
    X(VALUE, int, sd_bus_set_bus_client, (sd_bus *bus, int b), (bus, b)) \
    X(VALUE, int, sd_bus_negotiate_fds, (sd_bus *bus, int b), (bus, b)) \
    X(VALUE, int, sd_bus_set_method_call_timeout, (sd_bus *bus, uint64_t usec), (bus, usec)) \
    X(VALUE, int, sd_bus_start, (sd_bus *bus), (bus)) \
    X(VALUE, int, sd_bus_is_open, (sd_bus *bus), (bus)) \
    X(VALUE, sd_bus *, sd_bus_flush_close_unref, (sd_bus *bus), (bus)) \
    X(VALUE, int, sd_bus_send, (sd_bus *bus, sd_bus_message *m, uint64_t *cookie), (bus, m, cookie)) \
    X(VALUE, int, sd_bus_call_async, (sd_bus *bus, sd_bus_slot **slot, sd_bus_message *m, sd_bus_message_handler_t callback, void *userdata, uint64_t usec), (bus, slot, m, callback, userdata, usec)) \
    X(VALUE, int, sd_bus_process, (sd_bus *bus, sd_bus_message **r), (bus, r)) \
    X(VALUE, int, sd_bus_wait, (sd_bus *bus, uint64_t timeout_usec), (bus, timeout_usec)) \
    X(VALUE, int, sd_bus_flush, (sd_bus *bus), (bus)) \
    X(VALUE, int, sd_bus_match_signal, (sd_bus *bus, sd_bus_slot **ret, const char *sender, const char *path, const char *interface, const char *member, sd_bus_message_handler_t callback, void *userdata), (bus, ret, sender, path, interface, member, callback, userdata)) \
    X(VALUE, sd_bus_slot *, sd_bus_slot_unref, (sd_bus_slot *slot), (slot)) \
    X(VALUE, int, sd_bus_message_new_method_call, (sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member), (bus, m, destination, path, interface, member)) \
    X(VALUE, sd_bus_message *, sd_bus_message_ref, (sd_bus_message *m), (m)) \
    X(VALUE, sd_bus_message *, sd_bus_message_unref, (sd_bus_message *m), (m)) \
    X(VALUE, const char *, sd_bus_message_get_signature, (sd_bus_message *m, int complete), (m, complete)) \
    X(VALUE, const sd_bus_error *, sd_bus_message_get_error, (sd_bus_message *m), (m)) \
    X(VALUE, int, sd_bus_message_get_errno, (sd_bus_message *m), (m)) \
    X(VALUE, int, sd_bus_message_is_method_error, (sd_bus_message *m, const char *name), (m, name)) \
    X(VALUE, int, sd_bus_message_append_basic, (sd_bus_message *m, char type, const void *p), (m, type, p)) \
    X(VALUE, int, sd_bus_message_append_array, (sd_bus_message *m, char type, const void *ptr, size_t size), (m, type, ptr, size)) \
    X(VALUE, int, sd_bus_message_open_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents)) \
    X(VALUE, int, sd_bus_message_close_container, (sd_bus_message *m), (m)) \
    X(VALUE, int, sd_bus_message_read_basic, (sd_bus_message *m, char type, void *p), (m, type, p)) \
    X(VALUE, int, sd_bus_message_read_array, (sd_bus_message *m, char type, const void **ptr, size_t *size), (m, type, ptr, size)) \
    X(VALUE, int, sd_bus_message_enter_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents)) \
    X(VALUE, int, sd_bus_message_exit_container, (sd_bus_message *m), (m)) \
    X(VALUE, int, sd_bus_message_peek_type, (sd_bus_message *m, char *type, const char **contents), (m, type, contents))

/* The server side, for keygate-secret-service (KeygateStorage/BusServer.swift): one fallback
 * callback for every object path (sd-bus's vtables are C macros), the name, replies, errors and
 * signals. Their own table (kg_sdbus_server), filled only by a program that serves. */
#define KG_SDBUS_SERVER_FUNCTIONS(X) \
    X(VALUE, int, sd_bus_add_fallback, (sd_bus *bus, sd_bus_slot **slot, const char *prefix, sd_bus_message_handler_t callback, void *userdata), (bus, slot, prefix, callback, userdata)) \
    X(VALUE, int, sd_bus_request_name, (sd_bus *bus, const char *name, uint64_t flags), (bus, name, flags)) \
    X(VALUE, int, sd_bus_get_unique_name, (sd_bus *bus, const char **unique), (bus, unique)) \
    X(VALUE, int, sd_bus_message_new_method_return, (sd_bus_message *call, sd_bus_message **m), (call, m)) \
    X(VALUE, int, sd_bus_message_new_method_error, (sd_bus_message *call, sd_bus_message **m, const sd_bus_error *e), (call, m, e)) \
    X(VALUE, int, sd_bus_message_new_signal, (sd_bus *bus, sd_bus_message **m, const char *path, const char *interface, const char *member), (bus, m, path, interface, member)) \
    X(VALUE, const char *, sd_bus_message_get_sender, (sd_bus_message *m), (m)) \
    X(VALUE, const char *, sd_bus_message_get_path, (sd_bus_message *m), (m)) \
    X(VALUE, const char *, sd_bus_message_get_interface, (sd_bus_message *m), (m)) \
    X(VALUE, const char *, sd_bus_message_get_member, (sd_bus_message *m), (m)) \
    X(VALUE, int, sd_bus_message_get_type, (sd_bus_message *m, uint8_t *type), (m, type)) \
    X(VALUE, int, sd_bus_message_get_expect_reply, (sd_bus_message *m), (m)) \
    X(VALUE, int, sd_bus_call, (sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error, sd_bus_message **reply), (bus, m, usec, ret_error, reply)) \
    X(VALUE, int, sd_bus_get_fd, (sd_bus *bus), (bus)) \
    X(VALUE, int, sd_bus_message_rewind, (sd_bus_message *m, int complete), (m, complete)) \
    X(VALUE, int, sd_bus_message_sensitive, (sd_bus_message *m), (m)) \
    X(VALUE, int, sd_bus_message_seal, (sd_bus_message *m, uint64_t cookie, uint64_t timeout_usec), (m, cookie, timeout_usec))

KG_LAZY_LIBRARY(kg_sdbus, "libsystemd.so.0", KG_SDBUS_CLIENT_FUNCTIONS)
KG_LAZY_LIBRARY(kg_sdbus_server, "libsystemd.so.0", KG_SDBUS_SERVER_FUNCTIONS)

#ifndef KG_SDBUS_CHECK
#define KG_SDBUS_WRAPPER(kind, ret, name, params, args) KG_LAZY_WRAPPER(kg_sdbus, kind, ret, name, params, args)
#define KG_SDBUS_SERVER_WRAPPER(kind, ret, name, params, args) KG_LAZY_WRAPPER(kg_sdbus_server, kind, ret, name, params, args)
KG_SDBUS_CLIENT_FUNCTIONS(KG_SDBUS_WRAPPER)
KG_SDBUS_SERVER_FUNCTIONS(KG_SDBUS_SERVER_WRAPPER)
#undef KG_SDBUS_WRAPPER
#undef KG_SDBUS_SERVER_WRAPPER
#else
KG_SDBUS_FUNCTIONS(KG_LAZY_CHECK_FUNCTION)
KG_SDBUS_TYPES(KG_LAZY_CHECK_CONSTANT)
_Static_assert(sizeof(sd_bus_error) == 24 && offsetof(sd_bus_error, message) == 8, "sd_bus_error's layout differs");
#endif

#endif
