/* SQLite: the embedded store for hosts with no Secret Service (sealed blobs and attributes only). */
#include <sqlite3.h>
