/* Unit tests for src/tls/client_cert.c: --cert/--key checked as a client context loads them
 * (missing files, no certificate, no key, a key of another certificate, an encrypted key, the key
 * in the certificate's file), client contexts built with one, and the reasons of a server's
 * alerts about the client's certificate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/err.h"
#include "tls/internal.h"
#include "tls/tls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture_tmpdir.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* tmpdir/TAG.pem and tmpdir/TAG.key: a self-signed certificate and its key */
static void make_pair(const char *tag, char *cert, char *key)
{
    const char *names[] = {"knee-client"};
    char *cp, *kp, err[200];
    assert_int_equal(tls_cert_self_signed(names, 1, -60, 3600, &cp, &kp, err, sizeof err), 0);
    snprintf(cert, 128, "%s/%s.pem", tmpdir, tag);
    snprintf(key, 128, "%s/%s.key", tmpdir, tag);
    write_file(cert, cp);
    write_file(key, kp);
    free(cp);
    free(kp);
}

static void says(int r, const char *err, const char *want)
{
    assert_int_equal(r, KNEE_EINVAL);
    if (!strstr(err, want))
        fail_msg("'%s' does not say '%s'", err, want);
}

static void test_check(void **state)
{
    (void)state;
    char c1[128], k1[128], c2[128], k2[128], both[160], missing[160], err[400];
    make_pair("a", c1, k1);
    make_pair("b", c2, k2);
    assert_int_equal(tls_client_cert_check(c1, k1, err, sizeof err), 0);
    /* the key in the certificate's file */
    snprintf(both, sizeof both, "%s/both.pem", tmpdir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cat %s %s > %s", c1, k1, both);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tls_client_cert_check(both, NULL, err, sizeof err), 0);
    says(tls_client_cert_check(c1, NULL, err, sizeof err), err, "holds no private key: give --key FILE");
    /* a key of another certificate */
    says(tls_client_cert_check(c1, k2, err, sizeof err), err, "does not match the certificate of --cert");
    assert_non_null(strstr(err, k2));
    /* files that are not there, or not PEM of the kind */
    snprintf(missing, sizeof missing, "%s/none.pem", tmpdir);
    says(tls_client_cert_check(missing, k1, err, sizeof err), err, "No such file or directory");
    assert_memory_equal(err, "--cert ", 7);
    says(tls_client_cert_check(c1, missing, err, sizeof err), err, "No such file or directory");
    assert_memory_equal(err, "--key ", 6);
    says(tls_client_cert_check(k1, k1, err, sizeof err), err, "no PEM certificate could be read");
    says(tls_client_cert_check(c1, c2, err, sizeof err), err, "no PEM private key could be read");
    /* an encrypted key: refused, never a passphrase prompt */
    char enc[160];
    snprintf(enc, sizeof enc, "%s/enc.key", tmpdir);
    snprintf(cmd, sizeof cmd, "openssl pkey -in %s -out %s -aes256 -passout pass:secret 2>/dev/null", k1, enc);
    if (system(cmd) == 0)
        says(tls_client_cert_check(c1, enc, err, sizeof err), err, "an encrypted key is not supported");
}

static void test_client_ctx(void **state)
{
    (void)state;
    char c1[128], k1[128], c2[128], k2[128], err[400];
    make_pair("c", c1, k1);
    make_pair("d", c2, k2);
    struct tls_ctx *ctx = NULL;
    struct tls_client_config cfg = {.insecure = true, .cert_file = c1, .key_file = k1};
    assert_int_equal(tls_client_new(&cfg, &ctx, err, sizeof err), 0);
    assert_non_null(SSL_CTX_get0_certificate(ctx->ssl));
    tls_ctx_free(ctx);
    cfg.key_file = k2;
    says(tls_client_new(&cfg, &ctx, err, sizeof err), err, "does not match");
    assert_null(ctx);
}

static void test_alert_reasons(void **state)
{
    (void)state;
    assert_int_equal(tls_alert_reason(SSL_AD_CERTIFICATE_REQUIRED, false, false), TLS_R_ALERT_CERT_REQUIRED);
    assert_int_equal(tls_alert_reason(SSL_AD_BAD_CERTIFICATE, true, true), TLS_R_ALERT_BAD_CERT);
    assert_int_equal(tls_alert_reason(SSL_AD_UNKNOWN_CA, true, true), TLS_R_ALERT_BAD_CERT);
    assert_int_equal(tls_alert_reason(SSL_AD_CERTIFICATE_EXPIRED, false, false), TLS_R_ALERT_BAD_CERT);
    assert_int_equal(tls_alert_reason(SSL_AD_CERTIFICATE_UNKNOWN, true, true), TLS_R_ALERT_BAD_CERT);
    /* TLS 1.2's refusal: handshake_failure is about the client's certificate only when the server
     * asked for one: its absence, or the one sent */
    assert_int_equal(tls_alert_reason(SSL_AD_HANDSHAKE_FAILURE, true, false), TLS_R_ALERT_CERT_REQUIRED);
    assert_int_equal(tls_alert_reason(SSL_AD_HANDSHAKE_FAILURE, true, true), TLS_R_ALERT_BAD_CERT);
    assert_int_equal(tls_alert_reason(SSL_AD_HANDSHAKE_FAILURE, false, false), TLS_R_ALERT);
    assert_int_equal(tls_alert_reason(SSL_AD_HANDSHAKE_FAILURE, false, true), TLS_R_ALERT);
    assert_int_equal(tls_alert_reason(SSL_AD_PROTOCOL_VERSION, true, false), TLS_R_ALERT);
    assert_string_equal(tls_reason_name(TLS_R_ALERT_CERT_REQUIRED), "tls_alert_certificate_required");
    assert_string_equal(tls_reason_name(TLS_R_ALERT_BAD_CERT), "tls_alert_bad_certificate");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_client_ctx),
        cmocka_unit_test(test_alert_reasons),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
