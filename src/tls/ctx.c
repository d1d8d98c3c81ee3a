/* TLS contexts: the client's (verification against the system store or --cacert, versions,
 * ciphers, ALPN, session resumption into per-target caches) and the server's (a certificate
 * from files or generated, ALPN selection, tickets). One SSL_CTX per run or per server, shared
 * by the threads: OpenSSL's contexts are safe to create connections from concurrently. */
#include "tls/internal.h"

#include "core/err.h"

#include <openssl/err.h>
#include <openssl/opensslv.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- versions ------------------------------------------------------------------------------- */

static const struct {
    const char *text;
    int version;
} versions[] = {{"1.0", TLS_V1_0}, {"1.1", TLS_V1_1}, {"1.2", TLS_V1_2}, {"1.3", TLS_V1_3}};

static int version_of(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        if (strlen(versions[i].text) == len && memcmp(versions[i].text, s, len) == 0)
            return versions[i].version;
    return 0;
}

int tls_parse_versions(const char *s, int *min, int *max, char *err, size_t errlen)
{
    *min = *max = 0;
    const char *colon = strchr(s, ':');
    size_t alen = colon ? (size_t)(colon - s) : strlen(s);
    int lo = version_of(s, alen), hi = colon ? version_of(colon + 1, strlen(colon + 1)) : 0;
    if (!lo || (colon && !hi))
        return knee_fail(err, errlen, KNEE_EINVAL, "--tls-version: '%s' is not MIN[:MAX] with 1.0, 1.1, 1.2 or 1.3", s);
    if (hi && hi < lo)
        return knee_fail(err, errlen, KNEE_EINVAL, "--tls-version: the minimum %.*s is above the maximum %s", (int)alen,
                         s, colon + 1);
    *min = lo;
    *max = hi;
    return 0;
}

const char *tls_version_name(int v)
{
    switch (v) {
    case TLS_V1_0:
        return "TLSv1";
    case TLS_V1_1:
        return "TLSv1.1";
    case TLS_V1_2:
        return "TLSv1.2";
    case TLS_V1_3:
        return "TLSv1.3";
    default:
        return "unknown";
    }
}

const char *tls_library_version(void)
{
    return OpenSSL_version(OPENSSL_VERSION);
}

/* ---- session caches ------------------------------------------------------------------------- */

void tls_session_cache_init(struct tls_session_cache *c)
{
    c->session = NULL;
    c->stored = 0;
}

void tls_session_cache_release(struct tls_session_cache *c)
{
    SSL_SESSION_free(c->session);
    c->session = NULL;
}

/* A ticket arrived (TLS 1.3: after the handshake, maybe several; TLS 1.2: at its end): keep the
 * newest in the connection's target cache. Returning 1 keeps OpenSSL's reference as ours. */
static int on_new_session(SSL *ssl, SSL_SESSION *sess)
{
    struct tls_conn *c = SSL_get_app_data(ssl);
    if (!c || !c->cache)
        return 0;
    SSL_SESSION_free(c->cache->session);
    c->cache->session = sess;
    c->cache->stored++;
    return 1;
}

/* ---- ciphers -------------------------------------------------------------------------------- */

/* --ciphers mixes the two lists OpenSSL keeps apart: TLS 1.3 suites ("TLS_AES_128_GCM_SHA256")
 * and TLS <= 1.2 cipher strings ("ECDHE-RSA-AES128-GCM-SHA256", "HIGH"). Each list given is set;
 * a list not given keeps OpenSSL's default. */
static int set_ciphers(SSL_CTX *ctx, const char *spec, char *err, size_t errlen)
{
    if (strlen(spec) > TLS_CIPHERS_MAX)
        return knee_fail(err, errlen, KNEE_EINVAL, "--ciphers: longer than %d characters", TLS_CIPHERS_MAX);
    char v13[TLS_CIPHERS_MAX + 1] = "", v12[TLS_CIPHERS_MAX + 1] = "";
    size_t n13 = 0, n12 = 0;
    const char *p = spec;
    while (*p) {
        size_t len = strcspn(p, ":");
        if (len) {
            bool is13 = len > 4 && strncmp(p, "TLS_", 4) == 0;
            char *dst = is13 ? v13 : v12;
            size_t *dn = is13 ? &n13 : &n12;
            *dn += (size_t)snprintf(dst + *dn, sizeof v13 - *dn, "%s%.*s", *dn ? ":" : "", (int)len, p);
        }
        p += len;
        if (*p == ':')
            p++;
    }
    char why[160];
    if (!n13 && !n12)
        return knee_fail(err, errlen, KNEE_EINVAL, "--ciphers: empty");
    if (n13 && !SSL_CTX_set_ciphersuites(ctx, v13))
        return knee_fail(err, errlen, KNEE_EINVAL, "--ciphers: no TLS 1.3 suite in '%s' is known to OpenSSL (%s)", v13,
                         tls_openssl_error(why, sizeof why));
    if (n12 && !SSL_CTX_set_cipher_list(ctx, v12))
        return knee_fail(err, errlen, KNEE_EINVAL, "--ciphers: no cipher in '%s' is known to OpenSSL (%s)", v12,
                         tls_openssl_error(why, sizeof why));
    return 0;
}

/* ---- client --------------------------------------------------------------------------------- */

static const unsigned char alpn_any[] = "\x02h2\x08http/1.1";
static const unsigned char alpn_h1[] = "\x08http/1.1";
static const unsigned char alpn_h2[] = "\x02h2";

static struct tls_ctx *ctx_alloc(SSL_CTX *ssl)
{
    struct tls_ctx *c = xcalloc(1, sizeof *c);
    c->ssl = ssl;
    /* Partial writes: a write takes what the socket takes, as send() does. A moving buffer: a
     * retry may come from a different address (the caller's buffer, nghttp2's). No
     * renegotiation (TLS 1.2's; nothing in knee's traffic needs it, and a peer that asks for it
     * mid-response would turn reads into writes). No compression (CRIME). */
    SSL_CTX_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(ssl, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    return c;
}

int tls_client_new(const struct tls_client_config *cfg, struct tls_ctx **out, char *err, size_t errlen)
{
    *out = NULL;
    char why[160];
    SSL_CTX *ssl = SSL_CTX_new(TLS_client_method());
    if (!ssl)
        knee_oom();
    struct tls_ctx *c = ctx_alloc(ssl);
    c->insecure = cfg->insecure;
    c->resume = cfg->resume;
    c->alpn = cfg->alpn;
    int r = 0;
    if (cfg->min_version && cfg->max_version && cfg->min_version > cfg->max_version) {
        r = knee_fail(err, errlen, KNEE_EINVAL, "--tls-version: the minimum is above the maximum");
        goto fail;
    }
    if ((cfg->min_version && !SSL_CTX_set_min_proto_version(ssl, cfg->min_version)) ||
        (cfg->max_version && !SSL_CTX_set_max_proto_version(ssl, cfg->max_version))) {
        r = knee_fail(err, errlen, KNEE_EINVAL, "--tls-version: %s", tls_openssl_error(why, sizeof why));
        goto fail;
    }
    if (cfg->ciphers && (r = set_ciphers(ssl, cfg->ciphers, err, errlen)) != 0)
        goto fail;
    if (cfg->cafile) {
        /* --cacert is read even with --insecure, so a wrong path is said at once */
        if (!SSL_CTX_load_verify_file(ssl, cfg->cafile)) {
            r = knee_fail(err, errlen, KNEE_EINVAL, "--cacert %s: no certificate could be read from it (%s)",
                          cfg->cafile, tls_openssl_error(why, sizeof why));
            goto fail;
        }
    } else if (!cfg->insecure && !SSL_CTX_set_default_verify_paths(ssl)) {
        r = knee_fail(err, errlen, KNEE_EINVAL, "the system's certificate store: %s",
                      tls_openssl_error(why, sizeof why));
        goto fail;
    }
    if (cfg->cert_file && (r = tls_client_cert_load(ssl, cfg->cert_file, cfg->key_file, err, errlen)) != 0)
        goto fail;
    tls_client_cert_watch(ssl);
    SSL_CTX_set_verify(ssl, cfg->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
    /* Read ahead: one recv() takes whatever the socket holds (several records) instead of a
     * header and a body per record; the bytes OpenSSL then holds are what tls_conn_pending
     * reports, and the caller reads on while it does. */
    SSL_CTX_set_read_ahead(ssl, 1);
    const unsigned char *alpn = cfg->alpn == TLS_ALPN_H2 ? alpn_h2 : cfg->alpn == TLS_ALPN_HTTP1 ? alpn_h1 : alpn_any;
    size_t alen = cfg->alpn == TLS_ALPN_H2      ? sizeof alpn_h2 - 1
                  : cfg->alpn == TLS_ALPN_HTTP1 ? sizeof alpn_h1 - 1
                                                : sizeof alpn_any - 1;
    if (SSL_CTX_set_alpn_protos(ssl, alpn, (unsigned)alen) != 0)
        knee_oom();
    if (cfg->resume) {
        /* The client's sessions live in the per-target caches, never in OpenSSL's own store
         * (which is per context, so shared by every target and thread, under a lock). */
        SSL_CTX_set_session_cache_mode(ssl, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
        SSL_CTX_sess_set_new_cb(ssl, on_new_session);
    } else {
        SSL_CTX_set_session_cache_mode(ssl, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_options(ssl, SSL_OP_NO_TICKET);
    }
    ERR_clear_error();
    *out = c;
    return 0;
fail:
    ERR_clear_error();
    tls_ctx_free(c);
    return r;
}

/* ---- server --------------------------------------------------------------------------------- */

/* ALPN on the server: "h2" when the server speaks it and the client offers it, else
 * "http/1.1"; a client that offers neither goes on without ALPN (and gets HTTP/1.1). */
static int on_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                          unsigned int inlen, void *arg)
{
    (void)ssl;
    const struct tls_ctx *c = arg;
    unsigned char *sel = NULL;
    if (c->alpn != TLS_ALPN_HTTP1 &&
        SSL_select_next_proto(&sel, outlen, alpn_h2, sizeof alpn_h2 - 1, in, inlen) == OPENSSL_NPN_NEGOTIATED) {
        *out = sel;
        return SSL_TLSEXT_ERR_OK;
    }
    if (SSL_select_next_proto(&sel, outlen, alpn_h1, sizeof alpn_h1 - 1, in, inlen) == OPENSSL_NPN_NEGOTIATED) {
        *out = sel;
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK;
}

int tls_server_new(const struct tls_server_config *cfg, struct tls_ctx **out, char *err, size_t errlen)
{
    *out = NULL;
    char why[160];
    if ((cfg->cert_file == NULL) != (cfg->key_file == NULL))
        return knee_fail(err, errlen, KNEE_EINVAL, "%s", cfg->cert_file ? "--cert needs --key" : "--key needs --cert");
    SSL_CTX *ssl = SSL_CTX_new(TLS_server_method());
    if (!ssl)
        knee_oom();
    struct tls_ctx *c = ctx_alloc(ssl);
    c->server = true;
    c->alpn = cfg->h2 ? TLS_ALPN_ANY : TLS_ALPN_HTTP1;
    int r = 0;
    if (cfg->cert_file) {
        if (!SSL_CTX_use_certificate_chain_file(ssl, cfg->cert_file)) {
            r = knee_fail(err, errlen, KNEE_EINVAL, "--cert %s: no PEM certificate could be read from it (%s)",
                          cfg->cert_file, tls_openssl_error(why, sizeof why));
            goto fail;
        }
        if (!SSL_CTX_use_PrivateKey_file(ssl, cfg->key_file, SSL_FILETYPE_PEM)) {
            /* OpenSSL checks the pair here already ("key values mismatch") */
            bool mismatch = ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH;
            if (mismatch)
                r = knee_fail(err, errlen, KNEE_EINVAL, "--key %s does not match the certificate of --cert %s",
                              cfg->key_file, cfg->cert_file);
            else
                r = knee_fail(err, errlen, KNEE_EINVAL, "--key %s: no PEM private key could be read from it (%s)",
                              cfg->key_file, tls_openssl_error(why, sizeof why));
            goto fail;
        }
        if (!SSL_CTX_check_private_key(ssl)) {
            r = knee_fail(err, errlen, KNEE_EINVAL, "--key %s does not match the certificate of --cert %s",
                          cfg->key_file, cfg->cert_file);
            goto fail;
        }
    } else {
        const char *names[4] = {"localhost", "127.0.0.1", "::1", NULL};
        size_t n = 3;
        if (cfg->host && *cfg->host && strcmp(cfg->host, "localhost") && strcmp(cfg->host, "127.0.0.1") &&
            strcmp(cfg->host, "::1") && strcmp(cfg->host, "0.0.0.0") && strcmp(cfg->host, "::"))
            names[n++] = cfg->host;
        X509 *cert;
        EVP_PKEY *key;
        if ((r = tls_cert_make(names, n, -3600, 30 * 86400, &cert, &key, err, errlen)) != 0)
            goto fail;
        bool ok = SSL_CTX_use_certificate(ssl, cert) && SSL_CTX_use_PrivateKey(ssl, key);
        X509_free(cert);
        EVP_PKEY_free(key);
        if (!ok) {
            r = knee_fail(err, errlen, KNEE_EINVAL, "the generated certificate: %s",
                          tls_openssl_error(why, sizeof why));
            goto fail;
        }
        c->self_signed = true;
    }
    X509 *leaf = SSL_CTX_get0_certificate(ssl);
    if (leaf)
        tls_cert_fingerprint(leaf, c->fingerprint);
    SSL_CTX_set_alpn_select_cb(ssl, on_alpn_select, c);
    /* A server-side session cache for TLS 1.2 session IDs; TLS 1.3 and tickets need none. */
    static const unsigned char sid_ctx[] = "knee serve";
    SSL_CTX_set_session_id_context(ssl, sid_ctx, sizeof sid_ctx - 1);
    ERR_clear_error();
    *out = c;
    return 0;
fail:
    ERR_clear_error();
    tls_ctx_free(c);
    return r;
}

const char *tls_ctx_fingerprint(const struct tls_ctx *ctx)
{
    return ctx->fingerprint;
}

bool tls_ctx_self_signed(const struct tls_ctx *ctx)
{
    return ctx->self_signed;
}

void tls_ctx_free(struct tls_ctx *ctx)
{
    if (!ctx)
        return;
    SSL_CTX_free(ctx->ssl);
    free(ctx);
}
