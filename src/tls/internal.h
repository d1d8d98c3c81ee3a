/* Private parts of src/tls shared by ctx.c (contexts, versions, ALPN, session caches), conn.c
 * (connections and the classification of failures) and cert.c (certificates). Not an API: use
 * tls/tls.h. */
#ifndef KNEE_TLS_INTERNAL_H
#define KNEE_TLS_INTERNAL_H

#include "tls/tls.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

struct tls_ctx {
    SSL_CTX *ssl;
    bool server;
    bool insecure;
    bool resume;
    bool self_signed;
    enum tls_alpn alpn;
    char fingerprint[96];
};

/* cert.c: a fresh EC P-256 key and a self-signed certificate for names (see
 * tls_cert_self_signed). Returns 0 or KNEE_EINVAL with the reason in err. */
int tls_cert_make(const char *const *names, size_t nnames, int64_t not_before_s, int64_t not_after_s, X509 **cert,
                  EVP_PKEY **key, char *err, size_t errlen);
/* "AB:CD:..." SHA-256 of the certificate's DER into out (96 bytes). */
void tls_cert_fingerprint(X509 *cert, char out[96]);

/* OpenSSL's most recent error as text (for configuration errors), and the queue cleared. */
const char *tls_openssl_error(char *buf, size_t len);

#endif
