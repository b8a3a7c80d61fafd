/* SQLite, loaded on first use: the embedded store for hosts with no Secret Service (sealed
 * blobs and attributes only; KeygateStorage/SQLiteDatabase.swift). Nothing links libsqlite3, so a run
 * that uses the Secret Service never loads it (docs/PERFORMANCE.md: 1.4 M instructions of
 * every start-up in the dynamic loader). The first call below dlopens libsqlite3.so.0
 * (Sources/CSystem/lazy_library.h); SQLiteDatabase asks `kg_sqlite_load_error()` before it
 * opens a database, so a missing library is reported with advice.
 *
 * The few types and constants Keygate uses are declared here, as SQLite's stable C API defines
 * them, so that <sqlite3.h>'s own declarations of the same names cannot clash with the wrappers.
 * `KG_SQLITE_CHECK` compiles this file against the real <sqlite3.h> instead and asserts that
 * every function's type and every constant's value agree (Tests/KeygateCLITests/LazyLibraryTests.swift). */
#ifndef KEYGATE_CSQLITE_SHIM_H
#define KEYGATE_CSQLITE_SHIM_H

#include "../CSystem/lazy_library.h"

#ifndef KG_SQLITE_CHECK
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef long long sqlite3_int64;
typedef void (*sqlite3_destructor_type)(void *);
#endif

/* X(name, value) */
#define KG_SQLITE_CONSTANTS(X) \
    X(SQLITE_OK, 0) \
    X(SQLITE_PERM, 3) \
    X(SQLITE_BUSY, 5) \
    X(SQLITE_LOCKED, 6) \
    X(SQLITE_NOMEM, 7) \
    X(SQLITE_READONLY, 8) \
    X(SQLITE_IOERR, 10) \
    X(SQLITE_CORRUPT, 11) \
    X(SQLITE_FULL, 13) \
    X(SQLITE_CANTOPEN, 14) \
    X(SQLITE_CONSTRAINT, 19) \
    X(SQLITE_AUTH, 23) \
    X(SQLITE_NOTADB, 26) \
    X(SQLITE_ROW, 100) \
    X(SQLITE_DONE, 101) \
    X(SQLITE_CONSTRAINT_PRIMARYKEY, 1555) \
    X(SQLITE_CONSTRAINT_UNIQUE, 2067) \
    X(SQLITE_OPEN_READONLY, 0x00000001) \
    X(SQLITE_OPEN_READWRITE, 0x00000002) \
    X(SQLITE_OPEN_CREATE, 0x00000004) \
    X(SQLITE_OPEN_URI, 0x00000040) \
    X(SQLITE_OPEN_NOMUTEX, 0x00008000) \
    X(SQLITE_OPEN_PRIVATECACHE, 0x00040000) \
    X(SQLITE_OPEN_NOFOLLOW, 0x01000000) \
    X(SQLITE_FCNTL_PERSIST_WAL, 10)

/* X(kind, return type, name, (parameters), (arguments)) */
#define KG_SQLITE_FUNCTIONS(X) \
    X(VALUE, int, sqlite3_open_v2, (const char *filename, sqlite3 **ppDb, int flags, const char *zVfs), (filename, ppDb, flags, zVfs)) \
    X(VALUE, int, sqlite3_close_v2, (sqlite3 *db), (db)) \
    X(VALUE, int, sqlite3_busy_timeout, (sqlite3 *db, int ms), (db, ms)) \
    X(VALUE, int, sqlite3_extended_result_codes, (sqlite3 *db, int onoff), (db, onoff)) \
    X(VALUE, int, sqlite3_exec, (sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *arg, char **errmsg), (db, sql, callback, arg, errmsg)) \
    X(VALUE, int, sqlite3_prepare_v2, (sqlite3 *db, const char *zSql, int nByte, sqlite3_stmt **ppStmt, const char **pzTail), (db, zSql, nByte, ppStmt, pzTail)) \
    X(VALUE, int, sqlite3_bind_blob, (sqlite3_stmt *stmt, int index, const void *value, int n, void (*destructor)(void *)), (stmt, index, value, n, destructor)) \
    X(VALUE, int, sqlite3_bind_text, (sqlite3_stmt *stmt, int index, const char *value, int n, void (*destructor)(void *)), (stmt, index, value, n, destructor)) \
    X(VALUE, int, sqlite3_bind_int64, (sqlite3_stmt *stmt, int index, sqlite3_int64 value), (stmt, index, value)) \
    X(VALUE, int, sqlite3_bind_zeroblob, (sqlite3_stmt *stmt, int index, int n), (stmt, index, n)) \
    X(VALUE, int, sqlite3_clear_bindings, (sqlite3_stmt *stmt), (stmt)) \
    X(VALUE, int, sqlite3_step, (sqlite3_stmt *stmt), (stmt)) \
    X(VALUE, int, sqlite3_reset, (sqlite3_stmt *stmt), (stmt)) \
    X(VALUE, int, sqlite3_finalize, (sqlite3_stmt *stmt), (stmt)) \
    X(VALUE, const void *, sqlite3_column_blob, (sqlite3_stmt *stmt, int iCol), (stmt, iCol)) \
    X(VALUE, int, sqlite3_column_bytes, (sqlite3_stmt *stmt, int iCol), (stmt, iCol)) \
    X(VALUE, sqlite3_int64, sqlite3_column_int64, (sqlite3_stmt *stmt, int iCol), (stmt, iCol)) \
    X(VALUE, const unsigned char *, sqlite3_column_text, (sqlite3_stmt *stmt, int iCol), (stmt, iCol)) \
    X(VALUE, int, sqlite3_changes, (sqlite3 *db), (db)) \
    X(VALUE, sqlite3_int64, sqlite3_last_insert_rowid, (sqlite3 *db), (db)) \
    X(VALUE, int, sqlite3_get_autocommit, (sqlite3 *db), (db)) \
    X(VALUE, int, sqlite3_file_control, (sqlite3 *db, const char *zDbName, int op, void *arg), (db, zDbName, op, arg)) \
    X(VALUE, const char *, sqlite3_errmsg, (sqlite3 *db), (db)) \
    X(VALUE, int, sqlite3_extended_errcode, (sqlite3 *db), (db)) \
    X(VOID, void, sqlite3_free, (void *p), (p))

KG_LAZY_LIBRARY(kg_sqlite, "libsqlite3.so.0", KG_SQLITE_FUNCTIONS)

#ifndef KG_SQLITE_CHECK
KG_SQLITE_CONSTANTS(KG_LAZY_DEFINE_CONSTANT)
#define KG_SQLITE_WRAPPER(kind, ret, name, params, args) KG_LAZY_WRAPPER(kg_sqlite, kind, ret, name, params, args)
KG_SQLITE_FUNCTIONS(KG_SQLITE_WRAPPER)
#undef KG_SQLITE_WRAPPER
#else
KG_SQLITE_FUNCTIONS(KG_LAZY_CHECK_FUNCTION)
KG_SQLITE_CONSTANTS(KG_LAZY_CHECK_CONSTANT)
_Static_assert(sizeof(sqlite3_int64) == 8, "sqlite3_int64 differs");
#endif

#endif
