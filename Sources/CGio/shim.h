/* GLib's GIO, loaded on first use: the D-Bus connection (GDBus) and GVariant that Keygate's
 * storage layer uses to talk to the Secret Service itself (Storage/SecretServiceConnection.swift).
 *
 * Nothing links libgio: a `keygate --version`, `help`, a usage error or a read from the
 * embedded store never loads it, nor the nine libraries behind it (docs/PERFORMANCE.md:
 * 3.4 M of the 8.1 M instructions `--version` spent in the dynamic loader). The first call
 * of any function below dlopens libgio-2.0.so.0 and looks up every function at once
 * (Sources/CSystem/lazy_library.h). Keygate asks `kg_gio_load_error()` before it connects, so
 * a missing library is reported as "not available" with advice.
 *
 * GLib's own headers need pkg-config's include paths, and a SwiftPM system library that
 * names a pkg-config package also links its libraries, so the few types and constants
 * Keygate uses are declared here, as GLib's stable ABI defines them. `KG_GIO_CHECK`
 * compiles this file against the real <gio/gio.h> instead and asserts that every
 * function's type and every constant's value agree (Tests/KeygateCLITests/LazyLibraryTests.swift). */
#ifndef KEYGATE_CGIO_SHIM_H
#define KEYGATE_CGIO_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include "../CSystem/lazy_library.h"

#ifndef KG_GIO_CHECK
typedef char gchar;
typedef int gint;
typedef gint gboolean;
typedef unsigned long gsize;
typedef unsigned long guint64;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef uint32_t GQuark;
typedef unsigned int guint;
typedef uint32_t guint32;

typedef struct _GError {
    GQuark domain;
    gint code;
    gchar *message;
} GError;

typedef struct _GVariant GVariant;
typedef struct _GVariantType GVariantType;
typedef struct _GObject GObject;
typedef struct _GCancellable GCancellable;
typedef struct _GMainContext GMainContext;
typedef struct _GAsyncResult GAsyncResult;
typedef struct _GDBusConnection GDBusConnection;
typedef struct _GDBusAuthObserver GDBusAuthObserver;
typedef struct _GSource GSource;
typedef void (*GAsyncReadyCallback)(GObject *source_object, GAsyncResult *res, gpointer user_data);
typedef void (*GDBusSignalCallback)(GDBusConnection *connection, const gchar *sender_name, const gchar *object_path, const gchar *interface_name, const gchar *signal_name, GVariant *parameters, gpointer user_data);
typedef gboolean (*GSourceFunc)(gpointer user_data);
typedef void (*GDestroyNotify)(gpointer data);
#endif

/* The constants Keygate uses, one list per GLib enum: X(name, value). */
#define KG_GIO_BUS_TYPES(X) X(G_BUS_TYPE_SESSION, 2)
#define KG_GIO_CALL_FLAGS(X) X(G_DBUS_CALL_FLAGS_NONE, 0)
#define KG_GIO_SIGNAL_FLAGS(X) X(G_DBUS_SIGNAL_FLAGS_NONE, 0)
#define KG_GIO_CONNECTION_FLAGS(X) \
    X(G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT, 1) \
    X(G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, 8)
#define KG_GIO_DBUS_ERRORS(X) \
    X(G_DBUS_ERROR_SERVICE_UNKNOWN, 2) \
    X(G_DBUS_ERROR_NAME_HAS_NO_OWNER, 3) \
    X(G_DBUS_ERROR_NO_REPLY, 4) \
    X(G_DBUS_ERROR_NO_SERVER, 11) \
    X(G_DBUS_ERROR_TIMEOUT, 12) \
    X(G_DBUS_ERROR_DISCONNECTED, 15) \
    X(G_DBUS_ERROR_UNKNOWN_METHOD, 19) \
    X(G_DBUS_ERROR_TIMED_OUT, 20) \
    X(G_DBUS_ERROR_UNKNOWN_OBJECT, 41) \
    X(G_DBUS_ERROR_UNKNOWN_INTERFACE, 42) \
    X(G_DBUS_ERROR_UNKNOWN_PROPERTY, 43)
#define KG_GIO_IO_ERRORS(X) \
    X(G_IO_ERROR_NOT_FOUND, 1) \
    X(G_IO_ERROR_CLOSED, 18) \
    X(G_IO_ERROR_CANCELLED, 19) \
    X(G_IO_ERROR_TIMED_OUT, 24) \
    X(G_IO_ERROR_CONNECTION_REFUSED, 39) \
    X(G_IO_ERROR_BROKEN_PIPE, 44)
/* X(enum type, its list) */
#define KG_GIO_ENUMS(X) \
    X(GBusType, KG_GIO_BUS_TYPES) \
    X(GDBusCallFlags, KG_GIO_CALL_FLAGS) \
    X(GDBusSignalFlags, KG_GIO_SIGNAL_FLAGS) \
    X(GDBusConnectionFlags, KG_GIO_CONNECTION_FLAGS) \
    X(GDBusError, KG_GIO_DBUS_ERRORS) \
    X(GIOErrorEnum, KG_GIO_IO_ERRORS)

#ifndef KG_GIO_CHECK
#define KG_GIO_ENUMERATOR(name, value) name = value,
#define KG_GIO_ENUM(type, list) typedef enum { list(KG_GIO_ENUMERATOR) } type;
KG_GIO_ENUMS(KG_GIO_ENUM)
#undef KG_GIO_ENUM
#undef KG_GIO_ENUMERATOR
#endif

/* The functions Keygate calls: X(kind, return type, name, (parameters), (arguments)).
 * kind is VALUE or VOID (what a call returns when the library could not be loaded). */
#define KG_GIO_FUNCTIONS(X) \
    X(VALUE, gchar *, g_dbus_address_get_for_bus_sync, (GBusType bus_type, GCancellable *cancellable, GError **error), (bus_type, cancellable, error)) \
    X(VALUE, GDBusConnection *, g_dbus_connection_new_for_address_sync, (const gchar *address, GDBusConnectionFlags flags, GDBusAuthObserver *observer, GCancellable *cancellable, GError **error), (address, flags, observer, cancellable, error)) \
    X(VOID, void, g_dbus_connection_set_exit_on_close, (GDBusConnection *connection, gboolean exit_on_close), (connection, exit_on_close)) \
    X(VALUE, gboolean, g_dbus_connection_is_closed, (GDBusConnection *connection), (connection)) \
    X(VALUE, gboolean, g_dbus_connection_close_sync, (GDBusConnection *connection, GCancellable *cancellable, GError **error), (connection, cancellable, error)) \
    X(VOID, void, g_dbus_connection_call, (GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name, const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags, gint timeout_msec, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data), (connection, bus_name, object_path, interface_name, method_name, parameters, reply_type, flags, timeout_msec, cancellable, callback, user_data)) \
    X(VALUE, guint, g_dbus_connection_signal_subscribe, (GDBusConnection *connection, const gchar *sender, const gchar *interface_name, const gchar *member, const gchar *object_path, const gchar *arg0, GDBusSignalFlags flags, GDBusSignalCallback callback, gpointer user_data, GDestroyNotify user_data_free_func), (connection, sender, interface_name, member, object_path, arg0, flags, callback, user_data, user_data_free_func)) \
    X(VOID, void, g_dbus_connection_signal_unsubscribe, (GDBusConnection *connection, guint subscription_id), (connection, subscription_id)) \
    X(VALUE, GSource *, g_timeout_source_new, (guint interval), (interval)) \
    X(VOID, void, g_source_set_callback, (GSource *source, GSourceFunc func, gpointer data, GDestroyNotify notify), (source, func, data, notify)) \
    X(VALUE, guint, g_source_attach, (GSource *source, GMainContext *context), (source, context)) \
    X(VOID, void, g_source_destroy, (GSource *source), (source)) \
    X(VOID, void, g_source_unref, (GSource *source), (source)) \
    X(VALUE, GVariant *, g_dbus_connection_call_finish, (GDBusConnection *connection, GAsyncResult *res, GError **error), (connection, res, error)) \
    X(VALUE, GQuark, g_dbus_error_quark, (void), ()) \
    X(VALUE, GQuark, g_io_error_quark, (void), ()) \
    X(VALUE, gchar *, g_dbus_error_get_remote_error, (const GError *error), (error)) \
    X(VALUE, gboolean, g_dbus_error_strip_remote_error, (GError *error), (error)) \
    X(VOID, void, g_error_free, (GError *error), (error)) \
    X(VOID, void, g_free, (gpointer mem), (mem)) \
    X(VALUE, GCancellable *, g_cancellable_new, (void), ()) \
    X(VOID, void, g_cancellable_cancel, (GCancellable *cancellable), (cancellable)) \
    X(VALUE, gpointer, g_object_ref, (gpointer object), (object)) \
    X(VOID, void, g_object_unref, (gpointer object), (object)) \
    X(VALUE, GMainContext *, g_main_context_new, (void), ()) \
    X(VOID, void, g_main_context_push_thread_default, (GMainContext *context), (context)) \
    X(VOID, void, g_main_context_pop_thread_default, (GMainContext *context), (context)) \
    X(VALUE, gboolean, g_main_context_iteration, (GMainContext *context, gboolean may_block), (context, may_block)) \
    X(VOID, void, g_main_context_unref, (GMainContext *context), (context)) \
    X(VALUE, GVariant *, g_variant_new_string, (const gchar *string), (string)) \
    X(VALUE, GVariant *, g_variant_new_object_path, (const gchar *object_path), (object_path)) \
    X(VALUE, GVariant *, g_variant_new_boolean, (gboolean value), (value)) \
    X(VALUE, GVariant *, g_variant_new_variant, (GVariant *value), (value)) \
    X(VALUE, GVariant *, g_variant_new_dict_entry, (GVariant *key, GVariant *value), (key, value)) \
    X(VALUE, GVariant *, g_variant_new_tuple, (GVariant *const *children, gsize n_children), (children, n_children)) \
    X(VALUE, GVariant *, g_variant_new_array, (const GVariantType *child_type, GVariant *const *children, gsize n_children), (child_type, children, n_children)) \
    X(VALUE, GVariant *, g_variant_new_fixed_array, (const GVariantType *element_type, gconstpointer elements, gsize n_elements, gsize element_size), (element_type, elements, n_elements, element_size)) \
    X(VALUE, GVariant *, g_variant_ref_sink, (GVariant *value), (value)) \
    X(VOID, void, g_variant_unref, (GVariant *value), (value)) \
    X(VALUE, gsize, g_variant_n_children, (GVariant *value), (value)) \
    X(VALUE, GVariant *, g_variant_get_child_value, (GVariant *value, gsize index_), (value, index_)) \
    X(VALUE, GVariant *, g_variant_get_variant, (GVariant *value), (value)) \
    X(VALUE, gboolean, g_variant_get_boolean, (GVariant *value), (value)) \
    X(VALUE, guint32, g_variant_get_uint32, (GVariant *value), (value)) \
    X(VALUE, guint64, g_variant_get_uint64, (GVariant *value), (value)) \
    X(VALUE, const gchar *, g_variant_get_string, (GVariant *value, gsize *length), (value, length)) \
    X(VALUE, const gchar *, g_variant_get_type_string, (GVariant *value), (value)) \
    X(VALUE, gconstpointer, g_variant_get_fixed_array, (GVariant *value, gsize *n_elements, gsize element_size), (value, n_elements, element_size)) \
    X(VALUE, GVariant *, g_variant_lookup_value, (GVariant *dictionary, const gchar *key, const GVariantType *expected_type), (dictionary, key, expected_type)) \
    X(VALUE, gboolean, g_variant_is_object_path, (const gchar *string), (string)) \
    X(VALUE, GVariantType *, g_variant_type_new, (const gchar *type_string), (type_string)) \
    X(VOID, void, g_variant_type_free, (GVariantType *type), (type))

KG_LAZY_LIBRARY(kg_gio, "libgio-2.0.so.0", KG_GIO_FUNCTIONS)

#ifndef KG_GIO_CHECK
#define KG_GIO_WRAPPER(kind, ret, name, params, args) KG_LAZY_WRAPPER(kg_gio, kind, ret, name, params, args)
KG_GIO_FUNCTIONS(KG_GIO_WRAPPER)
#undef KG_GIO_WRAPPER
#else
KG_GIO_FUNCTIONS(KG_LAZY_CHECK_FUNCTION)
#define KG_GIO_CHECK_ENUM(type, list) list(KG_LAZY_CHECK_CONSTANT) \
    _Static_assert(sizeof(type) == sizeof(int), #type " is not int-sized");
KG_GIO_ENUMS(KG_GIO_CHECK_ENUM)
_Static_assert(sizeof(GError) == 16 && offsetof(GError, code) == 4 && offsetof(GError, message) == 8, "GError's layout differs");
#endif

#endif
