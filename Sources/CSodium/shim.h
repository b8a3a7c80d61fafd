/* libsodium: Argon2id, XChaCha20-Poly1305, sealed boxes, locked memory. */
#include <sodium.h>
