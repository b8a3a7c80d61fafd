/* request-cost: the Secret Service daemon's own CPU for each kind of request a read makes,
   measured from outside: the daemon's CPU time (the sum of /proc/PID/task/N/schedstat, in ns)
   around N calls of one kind, over sd-bus on the session bus, on one item of the io.keygate.Item
   schema (found by the attributes given). Prints ns per call for Service.SearchItems,
   Collection.SearchItems, Properties.Get of Attributes, Service.GetSecrets, Item.GetSecret, and a
   call to the bus daemon itself (the daemon untouched: the probe's own floor, about 0).
   Run as the item's user inside its session (scripts/secret-session):
     cc -O2 -o request-cost bench/tools/request-cost.c $(pkg-config --cflags --libs libsystemd)
     request-cost "$(pgrep -u "$USER" gnome-keyring-d)" 300 keygate:class genp service S account A
   docs/DECISIONS.md ("The library read") has what it found for gnome-keyring 42. */
#include <systemd/sd-bus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glob.h>
static long long cpu(const char *pid) {
    char pat[64]; snprintf(pat, sizeof pat, "/proc/%s/task/*/schedstat", pid);
    glob_t g; long long s = 0;
    if (glob(pat, 0, NULL, &g) == 0) { for (size_t i = 0; i < g.gl_pathc; i++) { FILE *f = fopen(g.gl_pathv[i], "r"); long long a = 0; if (f) { if (fscanf(f, "%lld", &a) != 1) a = 0; fclose(f); } s += a; } globfree(&g); }
    return s;
}
static sd_bus *bus; static char session[256], item[256], coll[256];
static int search(int argc, char **argv, const char *path, const char *iface) {
    sd_bus_message *m = NULL, *r = NULL; sd_bus_error e = SD_BUS_ERROR_NULL;
    sd_bus_message_new_method_call(bus, &m, "org.freedesktop.secrets", path, iface, "SearchItems");
    sd_bus_message_open_container(m, 'a', "{ss}");
    sd_bus_message_append(m, "{ss}", "xdg:schema", "io.keygate.Item");
    for (int i = 3; i + 1 < argc; i += 2) sd_bus_message_append(m, "{ss}", argv[i], argv[i + 1]);
    sd_bus_message_close_container(m);
    int k = sd_bus_call(bus, m, 0, &e, &r);
    if (k < 0) { fprintf(stderr, "search: %s\n", e.message); exit(1); }
    const char *p = NULL;
    sd_bus_message_enter_container(r, 'a', "o"); if (sd_bus_message_read(r, "o", &p) > 0 && p) snprintf(item, sizeof item, "%s", p);
    sd_bus_message_unref(m); sd_bus_message_unref(r); return 0;
}
static void get_attrs(void) {
    sd_bus_message *r = NULL; sd_bus_error e = SD_BUS_ERROR_NULL;
    if (sd_bus_call_method(bus, "org.freedesktop.secrets", item, "org.freedesktop.DBus.Properties", "Get", &e, &r, "ss", "org.freedesktop.Secret.Item", "Attributes") < 0) { fprintf(stderr, "get: %s\n", e.message); exit(1); }
    sd_bus_message_unref(r);
}
static void get_secrets(void) {
    sd_bus_message *m = NULL, *r = NULL; sd_bus_error e = SD_BUS_ERROR_NULL;
    sd_bus_message_new_method_call(bus, &m, "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "GetSecrets");
    sd_bus_message_append(m, "ao", 1, item); sd_bus_message_append(m, "o", session);
    if (sd_bus_call(bus, m, 0, &e, &r) < 0) { fprintf(stderr, "secrets: %s\n", e.message); exit(1); }
    sd_bus_message_unref(m); sd_bus_message_unref(r);
}
static void get_secret_item(void) {
    sd_bus_message *r = NULL; sd_bus_error e = SD_BUS_ERROR_NULL;
    if (sd_bus_call_method(bus, "org.freedesktop.secrets", item, "org.freedesktop.Secret.Item", "GetSecret", &e, &r, "o", session) < 0) { fprintf(stderr, "getsecret: %s\n", e.message); exit(1); }
    sd_bus_message_unref(r);
}
int main(int argc, char **argv) {
    const char *pid = argv[1]; int n = atoi(argv[2]);
    sd_bus_open_user(&bus);
    sd_bus_message *r = NULL; sd_bus_error e = SD_BUS_ERROR_NULL; const char *p;
    sd_bus_call_method(bus, "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "OpenSession", &e, &r, "sv", "plain", "s", "");
    sd_bus_message_skip(r, "v"); sd_bus_message_read(r, "o", &p); snprintf(session, sizeof session, "%s", p); sd_bus_message_unref(r); r = NULL;
    sd_bus_call_method(bus, "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias", &e, &r, "s", "default");
    sd_bus_message_read(r, "o", &p); snprintf(coll, sizeof coll, "%s", p); sd_bus_message_unref(r);
    search(argc, argv, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service");
    long long t;
    t = cpu(pid); for (int i = 0; i < n; i++) search(argc, argv, "/org/freedesktop/secrets", "org.freedesktop.Secret.Service"); printf("Service.SearchItems %lld ns\n", (cpu(pid) - t) / n);
    t = cpu(pid); for (int i = 0; i < n; i++) search(argc, argv, coll, "org.freedesktop.Secret.Collection"); printf("Collection.SearchItems %lld ns\n", (cpu(pid) - t) / n);
    t = cpu(pid); for (int i = 0; i < n; i++) get_attrs(); printf("Get Attributes %lld ns\n", (cpu(pid) - t) / n);
    t = cpu(pid); for (int i = 0; i < n; i++) get_secrets(); printf("Service.GetSecrets %lld ns\n", (cpu(pid) - t) / n);
    t = cpu(pid); for (int i = 0; i < n; i++) get_secret_item(); printf("Item.GetSecret %lld ns\n", (cpu(pid) - t) / n);
    t = cpu(pid); for (int i = 0; i < n; i++) { sd_bus_message *rr = NULL; sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId", &e, &rr, ""); sd_bus_message_unref(rr);} printf("(bus GetId, gkr untouched) %lld ns\n", (cpu(pid) - t) / n);
    return 0;
}
