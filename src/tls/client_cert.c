/* The client's own certificate (--cert FILE --key FILE, mutual TLS): loaded into the client
 * context once, checked against its key before anything is sent; a server's request for one is
 * noticed (a server that then answers 400 is explained), and a server's refusal by alert gets a
 * reason of its own rather than a bare tls_alert. */
#include "tls/internal.h"

#include "core/err.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <string.h>

/* An encrypted key would make OpenSSL ask for its passphrase on the terminal: refuse instead. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

/* The file can be opened (its own words when not: "No such file or directory"). */
static int readable(const char *flag, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return knee_fail(err, errlen, KNEE_EINVAL, "%s %s: %s", flag, path, strerror(errno));
    fclose(f);
    return 0;
}

int tls_client_cert_load(SSL_CTX *ssl, const char *cert_file, const char *key_file, char *err, size_t errlen)
{
    char why[160];
    const char *key = key_file ? key_file : cert_file;
    int r = readable("--cert", cert_file, err, errlen);
    if (r == 0 && key_file)
        r = readable("--key", key_file, err, errlen);
    if (r)
        return r;
    SSL_CTX_set_default_passwd_cb(ssl, no_passphrase);
    if (!SSL_CTX_use_certificate_chain_file(ssl, cert_file))
        return knee_fail(err, errlen, KNEE_EINVAL, "--cert %s: no PEM certificate could be read from it (%s)",
                         cert_file, tls_openssl_error(why, sizeof why));
    if (!SSL_CTX_use_PrivateKey_file(ssl, key, SSL_FILETYPE_PEM)) {
        /* OpenSSL checks the pair here already ("key values mismatch") */
        if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
            ERR_clear_error();
            return knee_fail(err, errlen, KNEE_EINVAL, "--key %s does not match the certificate of --cert %s", key,
                             cert_file);
        }
        tls_openssl_error(why, sizeof why);
        if (!key_file)
            return knee_fail(err, errlen, KNEE_EINVAL, "--cert %s holds no private key: give --key FILE (%s)",
                             cert_file, why);
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--key %s: no PEM private key could be read from it (%s; an encrypted key is not supported)",
                         key_file, why);
    }
    if (!SSL_CTX_check_private_key(ssl)) {
        ERR_clear_error();
        return knee_fail(err, errlen, KNEE_EINVAL, "--key %s does not match the certificate of --cert %s", key,
                         cert_file);
    }
    return 0;
}

int tls_client_cert_check(const char *cert_file, const char *key_file, char *err, size_t errlen)
{
    SSL_CTX *ssl = SSL_CTX_new(TLS_client_method());
    if (!ssl)
        knee_oom();
    int r = tls_client_cert_load(ssl, cert_file, key_file, err, errlen);
    SSL_CTX_free(ssl);
    ERR_clear_error();
    return r;
}

/* OpenSSL calls this on a client when the server's CertificateRequest arrives, before it sends
 * the certificate it has (--cert) or none: note it on the connection, change nothing. */
static int on_cert_request(SSL *ssl, void *arg)
{
    (void)arg;
    struct tls_conn *c = SSL_get_app_data(ssl);
    if (c)
        c->cert_requested = true;
    return 1;
}

void tls_client_cert_watch(SSL_CTX *ssl)
{
    SSL_CTX_set_cert_cb(ssl, on_cert_request, NULL);
}

enum tls_reason tls_alert_reason(int desc, bool cert_requested, bool cert_sent)
{
    switch (desc) {
    case SSL_AD_CERTIFICATE_REQUIRED: /* TLS 1.3: none was sent */
        return TLS_R_ALERT_CERT_REQUIRED;
    case SSL_AD_BAD_CERTIFICATE:
    case SSL_AD_UNSUPPORTED_CERTIFICATE:
    case SSL_AD_CERTIFICATE_REVOKED:
    case SSL_AD_CERTIFICATE_EXPIRED:
    case SSL_AD_CERTIFICATE_UNKNOWN:
    case SSL_AD_UNKNOWN_CA:
        /* a server's certificate alerts are about the client's certificate: the client's verdict
         * on the server's is its own error, never an alert received */
        return TLS_R_ALERT_BAD_CERT;
    case SSL_AD_HANDSHAKE_FAILURE:
        /* TLS 1.2's refusal after asking for a certificate: of none, or of the one sent */
        return !cert_requested ? TLS_R_ALERT : cert_sent ? TLS_R_ALERT_BAD_CERT : TLS_R_ALERT_CERT_REQUIRED;
    default:
        return TLS_R_ALERT;
    }
}
