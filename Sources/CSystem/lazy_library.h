/* A C library loaded on first use instead of linked: KG_LAZY_LIBRARY(prefix, soname, FUNCTIONS)
 * defines, for a list of functions X(kind, return type, name, (parameters), (arguments)):
 *   - struct PREFIX_table: one pointer per function, and load_error;
 *   - PREFIX_load_error(): NULL once every function was found, otherwise why not
 *     ("could not load libsqlite3.so.0 (…: cannot open shared object file)");
 *   - each function under its own C name, calling through the table. If the library could not
 *     be loaded, a call returns zero (NULL, FALSE, 0) instead of jumping to nowhere; callers ask
 *     PREFIX_load_error() first and report the failure with advice.
 * kind is VALUE or VOID. The table lives in function-local statics, because Swift's importer
 * emits a header's inline functions (with their statics) but not its file-scope variables. Each
 * object file that calls in has its own copy, filled once under pthread_once; a second dlopen of
 * a loaded library only takes a reference, and nothing is ever unloaded.
 * Used by Sources/CSDBus/shim.h, Sources/CSQLite/shim.h and Sources/CCrypto/shim.h. */
#ifndef KEYGATE_LAZY_LIBRARY_H
#define KEYGATE_LAZY_LIBRARY_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* How a lazy library is opened. RTLD_DEEPBIND puts the library's own scope (itself, then its
 * dependencies) ahead of the global one, so that each of its ~450 (libsystemd) to ~1,600
 * (libsqlite3) symbol relocations is resolved in the first object searched instead of after
 * the executable and every library it links: 0.3 M instructions less for libsystemd and 0.85 M
 * for libsqlite3 in `keygate get` (docs/DECISIONS.md, "A read pays for its own work only").
 * Neither library's symbols are meant to be interposed, and no memory crosses between their
 * allocator and ours. A sanitizer
 * runtime (ASan, TSan, MSan) refuses RTLD_DEEPBIND, so under one the usual order is kept. */
static inline int kg_lazy_open_flags(void) {
    int flags = RTLD_NOW | RTLD_LOCAL;
    if (dlsym(RTLD_DEFAULT, "__asan_init") == NULL && dlsym(RTLD_DEFAULT, "__tsan_init") == NULL
        && dlsym(RTLD_DEFAULT, "__msan_init") == NULL) {
        flags |= RTLD_DEEPBIND;
    }
    return flags;
}

#define KG_LAZY_FIELD(kind, ret, name, params, args) ret (*name) params;
#define KG_LAZY_LOOKUP(kind, ret, name, params, args) \
    if (t->load_error == NULL && (t->name = (ret (*) params)dlsym(handle, #name)) == NULL) { \
        snprintf(reason, sizeof reason, "%s has no %s: install a newer %s", soname, #name, soname); \
        t->load_error = reason; \
    }
#define KG_LAZY_CALL_VALUE(ret, function, args) if (function == NULL) { return (ret)0; } return function args
#define KG_LAZY_CALL_VOID(ret, function, args) if (function != NULL) { function args; }

#define KG_LAZY_LIBRARY(prefix, library, FUNCTIONS) \
    struct prefix##_table { \
        const char *load_error; \
        FUNCTIONS(KG_LAZY_FIELD) \
    }; \
    static inline struct prefix##_table *prefix##_storage(void) { \
        static struct prefix##_table table; \
        return &table; \
    } \
    static inline void prefix##_fill(void) { \
        static char reason[512]; \
        static const char soname[] = library; \
        struct prefix##_table *t = prefix##_storage(); \
        void *handle = dlopen(soname, kg_lazy_open_flags()); \
        if (handle == NULL) { \
            const char *why = dlerror(); \
            snprintf(reason, sizeof reason, "could not load %s (%s)", soname, why != NULL ? why : "not found"); \
            t->load_error = reason; \
            return; \
        } \
        FUNCTIONS(KG_LAZY_LOOKUP) \
        if (t->load_error != NULL) { /* a partial table is never used */ \
            memset(t, 0, sizeof *t); \
            t->load_error = reason; \
        } \
    } \
    static inline const struct prefix##_table *prefix(void) { \
        static pthread_once_t once = PTHREAD_ONCE_INIT; \
        pthread_once(&once, prefix##_fill); \
        return prefix##_storage(); \
    } \
    static inline const char *prefix##_load_error(void) { return prefix()->load_error; }

/* One function under its own name, calling through PREFIX's table; a shim adapts it to its X list. */
#define KG_LAZY_WRAPPER(prefix, kind, ret, name, params, args) \
    static inline ret name params { \
        const struct prefix##_table *t = prefix(); \
        KG_LAZY_CALL_##kind(ret, t->name, args); \
    }

/* Against the real header (KG_LAZY_CHECK): each function's type must be sd-bus's, SQLite's, … */
#define KG_LAZY_CHECK_FUNCTION(kind, ret, name, params, args) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret (*) params), #name " differs from its library's");
#define KG_LAZY_CHECK_CONSTANT(name, value) _Static_assert((long long)(name) == (value), #name " differs from its library's");
#define KG_LAZY_DEFINE_CONSTANT(name, value) static const int name = value;

#endif
