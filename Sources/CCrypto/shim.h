/* OpenSSL's libcrypto (libcrypto.so.3, libssl3), loaded on first use: the Diffie-Hellman
 * exchange, HKDF and AES-128-CBC of the Secret Service's `dh-ietf1024-sha256-aes128-cbc-pkcs7`
 * session, for keygate-secret-service (KeygateSecretService/Session/SessionCipher.swift) and
 * nothing else. Why libcrypto and not libgcrypt: docs/DECISIONS.md, "The Secret Service's
 * session cryptography".
 *
 * Nothing links libcrypto: the first call of any function below dlopens libcrypto.so.3 and looks
 * up every function at once (Sources/CSystem/lazy_library.h); a daemon that serves only `plain`
 * sessions never loads it. The opaque types are declared here as OpenSSL 3's ABI has them;
 * `KG_CRYPTO_CHECK` compiles this file against OpenSSL's real headers (libssl-dev) instead and
 * asserts that every function's type and every constant agree
 * (Tests/KeygateCLITests/LazyLibraryTests.swift). The DH_* functions are deprecated in OpenSSL 3
 * (still exported, and still what gnome-keyring's peers speak); the check silences only that. */
#ifndef KEYGATE_CCRYPTO_SHIM_H
#define KEYGATE_CCRYPTO_SHIM_H

#include <stddef.h>
#include "../CSystem/lazy_library.h"

#ifndef KG_CRYPTO_CHECK
typedef struct bignum_st BIGNUM;
typedef struct dh_st DH;
typedef struct engine_st ENGINE;
typedef struct evp_md_st EVP_MD;
typedef struct evp_pkey_ctx_st EVP_PKEY_CTX;
typedef struct evp_cipher_st EVP_CIPHER;
typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;
typedef struct ossl_lib_ctx_st OSSL_LIB_CTX;
#else
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <openssl/bn.h>
#include <openssl/dh.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#endif

/* X(name, value): EVP_PKEY_HKDF is NID_hkdf. */
#define KG_CRYPTO_CONSTANTS(X) \
    X(EVP_PKEY_HKDF, 1036)

#ifndef KG_CRYPTO_CHECK
KG_CRYPTO_CONSTANTS(KG_LAZY_DEFINE_CONSTANT)
#endif

#define KG_CRYPTO_FUNCTIONS(X) \
    X(VALUE, BIGNUM *, BN_bin2bn, (const unsigned char *s, int len, BIGNUM *ret), (s, len, ret)) \
    X(VALUE, int, BN_bn2binpad, (const BIGNUM *a, unsigned char *to, int tolen), (a, to, tolen)) \
    X(VALUE, int, BN_num_bits, (const BIGNUM *a), (a)) \
    X(VOID, void, BN_clear_free, (BIGNUM *a), (a)) \
    X(VALUE, DH *, DH_new, (void), ()) \
    X(VOID, void, DH_free, (DH *dh), (dh)) \
    X(VALUE, int, DH_set0_pqg, (DH *dh, BIGNUM *p, BIGNUM *q, BIGNUM *g), (dh, p, q, g)) \
    X(VALUE, int, DH_set0_key, (DH *dh, BIGNUM *pub_key, BIGNUM *priv_key), (dh, pub_key, priv_key)) \
    X(VALUE, int, DH_generate_key, (DH *dh), (dh)) \
    X(VOID, void, DH_get0_key, (const DH *dh, const BIGNUM **pub_key, const BIGNUM **priv_key), (dh, pub_key, priv_key)) \
    X(VALUE, int, DH_compute_key_padded, (unsigned char *key, const BIGNUM *pub_key, DH *dh), (key, pub_key, dh)) \
    X(VALUE, int, DH_size, (const DH *dh), (dh)) \
    X(VALUE, const EVP_MD *, EVP_sha256, (void), ()) \
    X(VALUE, EVP_PKEY_CTX *, EVP_PKEY_CTX_new_id, (int id, ENGINE *e), (id, e)) \
    X(VOID, void, EVP_PKEY_CTX_free, (EVP_PKEY_CTX *ctx), (ctx)) \
    X(VALUE, int, EVP_PKEY_derive_init, (EVP_PKEY_CTX *ctx), (ctx)) \
    X(VALUE, int, EVP_PKEY_CTX_set_hkdf_md, (EVP_PKEY_CTX *ctx, const EVP_MD *md), (ctx, md)) \
    X(VALUE, int, EVP_PKEY_CTX_set1_hkdf_key, (EVP_PKEY_CTX *ctx, const unsigned char *key, int keylen), (ctx, key, keylen)) \
    X(VALUE, int, EVP_PKEY_derive, (EVP_PKEY_CTX *ctx, unsigned char *key, size_t *keylen), (ctx, key, keylen)) \
    X(VALUE, const EVP_CIPHER *, EVP_aes_128_cbc, (void), ()) \
    X(VALUE, EVP_CIPHER *, EVP_CIPHER_fetch, (OSSL_LIB_CTX *ctx, const char *algorithm, const char *properties), (ctx, algorithm, properties)) \
    X(VALUE, int, EVP_CIPHER_CTX_reset, (EVP_CIPHER_CTX *ctx), (ctx)) \
    X(VALUE, EVP_CIPHER_CTX *, EVP_CIPHER_CTX_new, (void), ()) \
    X(VOID, void, EVP_CIPHER_CTX_free, (EVP_CIPHER_CTX *ctx), (ctx)) \
    X(VALUE, int, EVP_EncryptInit_ex, (EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl, const unsigned char *key, const unsigned char *iv), (ctx, cipher, impl, key, iv)) \
    X(VALUE, int, EVP_EncryptUpdate, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl), (ctx, out, outl, in, inl)) \
    X(VALUE, int, EVP_EncryptFinal_ex, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl), (ctx, out, outl)) \
    X(VALUE, int, EVP_DecryptInit_ex, (EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl, const unsigned char *key, const unsigned char *iv), (ctx, cipher, impl, key, iv)) \
    X(VALUE, int, EVP_DecryptUpdate, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl), (ctx, out, outl, in, inl)) \
    X(VALUE, int, EVP_DecryptFinal_ex, (EVP_CIPHER_CTX *ctx, unsigned char *outm, int *outl), (ctx, outm, outl))

KG_LAZY_LIBRARY(kg_crypto, "libcrypto.so.3", KG_CRYPTO_FUNCTIONS)

#ifndef KG_CRYPTO_CHECK
#define KG_CRYPTO_WRAPPER(kind, ret, name, params, args) KG_LAZY_WRAPPER(kg_crypto, kind, ret, name, params, args)
KG_CRYPTO_FUNCTIONS(KG_CRYPTO_WRAPPER)
#undef KG_CRYPTO_WRAPPER
#else
KG_CRYPTO_FUNCTIONS(KG_LAZY_CHECK_FUNCTION)
KG_CRYPTO_CONSTANTS(KG_LAZY_CHECK_CONSTANT)
#endif

#endif
