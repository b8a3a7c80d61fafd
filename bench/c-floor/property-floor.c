/* property-floor: the Secret Service's own time for the property reads of a `keygate list`,
   with no client work beyond sending and receiving: SearchItems for every item of SERVICE,
   then Properties.Get of the first COUNT of Attributes, Label, Created and Modified on every
   item, at most 32 calls in flight (as Keygate's list), over sd-bus. `keygate list` reads
   one (its label and dates are in the attributes); before, it read two, and before that four. Timed as a whole process by
   spawn-timer, next to `keygate list`: what is left between the two is the client's.
   Exit 0 when every read was answered, 1 on any error (printed to stderr).
   usage: property-floor SERVICE COUNT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#define WINDOW 32

static const char *const properties[] = {"Attributes", "Label", "Created", "Modified"};
static int pending, failed;

static int answered(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)userdata;
    (void)error;
    pending--;
    if (sd_bus_message_is_method_error(reply, NULL)) {
        if (!failed) fprintf(stderr, "property-floor: %s\n", sd_bus_message_get_error(reply)->message);
        failed = 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3 || atoi(argv[2]) < 1 || atoi(argv[2]) > 4) {
        fprintf(stderr, "usage: property-floor SERVICE COUNT (1-4: Attributes, Label, Created, Modified)\n");
        return 2;
    }
    int count = atoi(argv[2]);
    sd_bus *bus = NULL;
    sd_bus_message *found = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_open_user(&bus);
    if (r < 0) {
        fprintf(stderr, "property-floor: cannot reach the session bus: %s\n", strerror(-r));
        return 1;
    }
    r = sd_bus_call_method(bus, "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service",
                           "SearchItems", &error, &found, "a{ss}", 1, "service", argv[1]);
    if (r < 0) {
        fprintf(stderr, "property-floor: SearchItems failed: %s\n", error.message ? error.message : strerror(-r));
        return 1;
    }
    size_t n = 0, capacity = 1024;
    char **paths = malloc(capacity * sizeof *paths);
    const char *path;
    if (!paths || sd_bus_message_enter_container(found, 'a', "o") < 0) return 1;
    while (sd_bus_message_read(found, "o", &path) > 0) {
        if (n == capacity && !(paths = realloc(paths, (capacity *= 2) * sizeof *paths))) return 1;
        if (!(paths[n++] = strdup(path))) return 1;
    }
    size_t total = n * (size_t)count, sent = 0;
    while (sent < total || pending > 0) {
        while (sent < total && pending < WINDOW) {
            r = sd_bus_call_method_async(bus, NULL, "org.freedesktop.secrets", paths[sent / count],
                                         "org.freedesktop.DBus.Properties", "Get", answered, NULL, "ss",
                                         "org.freedesktop.Secret.Item", properties[sent % count]);
            if (r < 0) {
                fprintf(stderr, "property-floor: cannot send: %s\n", strerror(-r));
                return 1;
            }
            sent++;
            pending++;
        }
        r = sd_bus_process(bus, NULL);
        if (r < 0) {
            fprintf(stderr, "property-floor: the bus failed: %s\n", strerror(-r));
            return 1;
        }
        if (r == 0 && sd_bus_wait(bus, 5000000) < 0) return 1;
    }
    if (n == 0) fprintf(stderr, "property-floor: no item of service %s\n", argv[1]);
    return failed || n == 0;
}
