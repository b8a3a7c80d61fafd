/* argon2id: libsodium's crypto_pwhash (Argon2id 1.3) alone, at a given cost, so
   that bench/run can subtract the KDF from an authenticated read and from a PAM
   login with pam_keygate.so. usage: argon2id OPSLIMIT MEMLIMIT_BYTES N
   prints the median milliseconds of N derivations. Build: cc ... -lsodium */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4 || sodium_init() < 0) {
        fprintf(stderr, "usage: argon2id OPSLIMIT MEMLIMIT_BYTES N\n");
        return 2;
    }
    unsigned long long ops = strtoull(argv[1], NULL, 10);
    size_t mem = (size_t)strtoull(argv[2], NULL, 10);
    int n = atoi(argv[3]);
    if (n <= 0) return 2;
    unsigned char key[32], salt[crypto_pwhash_SALTBYTES] = {0};
    double times[64];
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        if (crypto_pwhash(key, sizeof key, "benchmark", 9, salt, ops, mem, crypto_pwhash_ALG_ARGON2ID13) != 0) {
            fprintf(stderr, "argon2id: out of memory\n");
            return 1;
        }
        clock_gettime(CLOCK_MONOTONIC, &b);
        times[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    }
    qsort(times, (size_t)n, sizeof times[0], by_value);
    printf("%.2f\n", times[n / 2]);
    return 0;
}
