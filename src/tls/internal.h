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

/* client_cert.c: --cert/--key into a client context (see tls_client_cert_check for the errors);
 * the watch that marks a connection whose server asked for a client certificate
 * (tls_conn.cert_requested); a received alert's reason (a certificate refused, or required;
 * cert_sent: the context had one to send). */
int tls_client_cert_load(SSL_CTX *ssl, const char *cert_file, const char *key_file, char *err, size_t errlen);
void tls_client_cert_watch(SSL_CTX *ssl);
enum tls_reason tls_alert_reason(int desc, bool cert_requested, bool cert_sent);

/* OpenSSL's most recent error as text (for configuration errors), and the queue cleared. */
const char *tls_openssl_error(char *buf, size_t len);

#endif
