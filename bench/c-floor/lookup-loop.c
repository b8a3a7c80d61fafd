/* lookup-loop: the Secret Service floor. One process, libsecret's own lookup
   (secret_password_lookupv_binary_sync: a search that loads the secret, over the
   encrypted session libsecret opens on the first call), in a loop. Whatever a
   client of libsecret does per read costs at least this. bench/run compares
   Keygate's Keychain.data(for:) with it on the very same item.
   usage: lookup-loop N ATTRIBUTE VALUE [ATTRIBUTE VALUE ...]
   prints "first_us mean_us median_us" (the first call, which opens the session,
   is reported apart and not in the mean). Build: cc $(pkg-config --cflags --libs libsecret-1) */
#include <libsecret/secret.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int lookup(GHashTable *attributes) {
    GError *error = NULL;
    SecretValue *value = secret_password_lookupv_binary_sync(NULL, attributes, NULL, &error);
    if (error != NULL) {
        fprintf(stderr, "lookup-loop: %s\n", error->message);
        g_error_free(error);
        return 0;
    }
    if (value == NULL) {
        fprintf(stderr, "lookup-loop: no such item\n");
        return 0;
    }
    gsize length = 0;
    const gchar *bytes = secret_value_get(value, &length);
    int ok = bytes != NULL && length > 0;
    secret_value_unref(value);
    return ok;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 4 || argc % 2 != 0) {
        fprintf(stderr, "usage: lookup-loop N ATTRIBUTE VALUE [ATTRIBUTE VALUE ...]\n");
        return 2;
    }
    int n = atoi(argv[1]);
    if (n <= 0) return 2;
    GHashTable *attributes = g_hash_table_new(g_str_hash, g_str_equal);
    for (int i = 2; i + 1 < argc; i += 2) g_hash_table_insert(attributes, argv[i], argv[i + 1]);
    double t0 = now_us();
    if (!lookup(attributes)) return 1;
    double first = now_us() - t0;
    double *times = calloc((size_t)n, sizeof *times);
    if (times == NULL) return 1;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double s = now_us();
        if (!lookup(attributes)) return 1;
        times[i] = now_us() - s;
        sum += times[i];
    }
    qsort(times, (size_t)n, sizeof *times, by_value);
    printf("%.1f %.1f %.1f\n", first, sum / n, times[n / 2]);
    free(times);
    g_hash_table_unref(attributes);
    return 0;
}
