/* Certificates: knee serve --tls without --cert generates an EC P-256 key and a self-signed
 * certificate at start (a second's work would be wasted on RSA-2048 key generation; P-256 is
 * what every client accepts), and the tests make good, expired and wrongly named ones the same
 * way. Everything through OpenSSL's X509 API; nothing is written to disk here. */
#include "tls/internal.h"

#include "core/err.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>

const char *tls_openssl_error(char *buf, size_t len)
{
    /* the first error on the queue is the cause ("no start line", "No such file or
     * directory"); those after it are the callers' summaries ("PEM lib", "system lib") */
    unsigned long e = ERR_peek_error();
    const char *why = e ? ERR_reason_error_string(e) : NULL;
    if (e && ERR_SYSTEM_ERROR(e))
        why = strerror(ERR_GET_REASON(e));
    snprintf(buf, len, "%s", why ? why : "unknown OpenSSL error");
    ERR_clear_error();
    return buf;
}

static bool is_ip(const char *s)
{
    unsigned char b[16];
    return inet_pton(AF_INET, s, b) == 1 || inet_pton(AF_INET6, s, b) == 1;
}

static bool name_ok(const char *s)
{
    if (!*s || strlen(s) > 253)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '.' || *p == '*'))
            return false;
    return true;
}

static int add_ext(X509 *cert, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (!ext)
        return -1;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

int tls_cert_make(const char *const *names, size_t nnames, int64_t not_before_s, int64_t not_after_s, X509 **cert_out,
                  EVP_PKEY **key_out, char *err, size_t errlen)
{
    *cert_out = NULL;
    *key_out = NULL;
    if (nnames == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "a certificate needs at least one name");
    /* subjectAltName: "DNS:a,IP:127.0.0.1,..." */
    char san[2048];
    size_t n = 0;
    for (size_t i = 0; i < nnames; i++) {
        bool ip = is_ip(names[i]);
        if (!ip && !name_ok(names[i]))
            return knee_fail(err, errlen, KNEE_EINVAL, "'%s' is neither a host name nor an IP address", names[i]);
        int w = snprintf(san + n, sizeof san - n, "%s%s:%s", n ? "," : "", ip ? "IP" : "DNS", names[i]);
        if (w < 0 || (size_t)w >= sizeof san - n)
            return knee_fail(err, errlen, KNEE_EINVAL, "too many names for one certificate");
        n += (size_t)w;
    }
    char why[160];
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    if (!key || !cert) {
        knee_fail(err, errlen, KNEE_EINVAL, "generating a key: %s", tls_openssl_error(why, sizeof why));
        goto fail;
    }
    unsigned char serial[16];
    if (RAND_bytes(serial, sizeof serial) != 1) {
        knee_fail(err, errlen, KNEE_EINVAL, "no random serial: %s", tls_openssl_error(why, sizeof why));
        goto fail;
    }
    serial[0] &= 0x7f; /* a positive INTEGER */
    BIGNUM *bn = BN_bin2bn(serial, sizeof serial, NULL);
    bool ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
    BN_free(bn);
    const char *cn = names[0];
    X509_NAME *subj = X509_get_subject_name(cert);
    ok = ok && X509_set_version(cert, 2) && X509_gmtime_adj(X509_getm_notBefore(cert), (long)not_before_s) &&
         X509_gmtime_adj(X509_getm_notAfter(cert), (long)not_after_s) &&
         X509_NAME_add_entry_by_txt(subj, "O", MBSTRING_ASC, (const unsigned char *)"knee", -1, -1, 0) &&
         X509_NAME_add_entry_by_txt(subj, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) &&
         X509_set_issuer_name(cert, subj) && X509_set_pubkey(cert, key);
    /* A self-signed end-entity certificate: a client trusts it by --cacert with this very file
     * (it is then its own anchor), or by --insecure. */
    ok = ok && add_ext(cert, NID_basic_constraints, "critical,CA:FALSE") == 0 &&
         add_ext(cert, NID_ext_key_usage, "serverAuth") == 0 && add_ext(cert, NID_subject_alt_name, san) == 0 &&
         add_ext(cert, NID_subject_key_identifier, "hash") == 0;
    ok = ok && X509_sign(cert, key, EVP_sha256()) > 0;
    if (!ok) {
        knee_fail(err, errlen, KNEE_EINVAL, "building the certificate: %s", tls_openssl_error(why, sizeof why));
        goto fail;
    }
    *cert_out = cert;
    *key_out = key;
    return 0;
fail:
    X509_free(cert);
    EVP_PKEY_free(key);
    return KNEE_EINVAL;
}

void tls_cert_fingerprint(X509 *cert, char out[96])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    out[0] = '\0';
    if (!X509_digest(cert, EVP_sha256(), md, &len))
        return;
    size_t n = 0;
    for (unsigned i = 0; i < len && n + 3 < 96; i++)
        n += (size_t)snprintf(out + n, 96 - n, "%s%02X", i ? ":" : "", md[i]);
}

/* BIO contents as a heap string. */
static char *bio_string(BIO *b)
{
    char *data;
    long len = BIO_get_mem_data(b, &data);
    char *s = xmalloc((size_t)len + 1);
    memcpy(s, data, (size_t)len);
    s[len] = '\0';
    return s;
}

int tls_cert_self_signed(const char *const *names, size_t nnames, int64_t not_before_s, int64_t not_after_s,
                         char **cert_pem, char **key_pem, char *err, size_t errlen)
{
    *cert_pem = *key_pem = NULL;
    X509 *cert;
    EVP_PKEY *key;
    int r = tls_cert_make(names, nnames, not_before_s, not_after_s, &cert, &key, err, errlen);
    if (r)
        return r;
    BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
    if (!cb || !kb || !PEM_write_bio_X509(cb, cert) || !PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL))
        knee_oom();
    *cert_pem = bio_string(cb);
    *key_pem = bio_string(kb);
    BIO_free(cb);
    BIO_free(kb);
    X509_free(cert);
    EVP_PKEY_free(key);
    return 0;
}

int tls_ctx_pem(const struct tls_ctx *ctx, char **cert_pem, char **key_pem)
{
    *cert_pem = *key_pem = NULL;
    X509 *cert = ctx->server ? SSL_CTX_get0_certificate(ctx->ssl) : NULL;
    EVP_PKEY *key = ctx->server ? SSL_CTX_get0_privatekey(ctx->ssl) : NULL;
    if (!cert || !key)
        return KNEE_EINVAL;
    BIO *cb = BIO_new(BIO_s_mem()), *kb = BIO_new(BIO_s_mem());
    if (!cb || !kb || !PEM_write_bio_X509(cb, cert) || !PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL))
        knee_oom();
    *cert_pem = bio_string(cb);
    *key_pem = bio_string(kb);
    BIO_free(cb);
    BIO_free(kb);
    return 0;
}
