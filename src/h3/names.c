/* The words of src/h3: its reasons (run JSON transport-cause keys), HTTP/3 and QUIC error code
 * names, the libraries' versions, the sessions kept for resumption, and the run's trust for
 * QUIC connections (GnuTLS credentials: --cacert or the system store, or none with --insecure;
 * a client certificate with --cert). */
#include "h3/h3.h"

#include "core/err.h"
#include "h3/internal.h"

#include <gnutls/gnutls.h>
#include <nghttp3/nghttp3.h>
#include <ngtcp2/ngtcp2.h>
#include <stdio.h>
#include <stdlib.h>

const char *h3_reason_name(enum h3_reason r)
{
    static const char *const names[H3_R_COUNT] = {
        "none",
        "quic_handshake",
        "tls_verify",
        "tls_hostname",
        "tls_expired",
        "tls_handshake_timeout",
        "quic_idle_timeout",
        "h3_stream_reset",
        "quic_close",
        "quic_version_negotiation",
        "h3_protocol",
        "quic_socket",
        "h3_timeout",
        "h3_closed",
    };
    return (unsigned)r < H3_R_COUNT ? names[r] : "unknown";
}

const char *h3_error_code_name(uint64_t code)
{
    static const char *const h3[] = {
        "H3_NO_ERROR",
        "H3_GENERAL_PROTOCOL_ERROR",
        "H3_INTERNAL_ERROR",
        "H3_STREAM_CREATION_ERROR",
        "H3_CLOSED_CRITICAL_STREAM",
        "H3_FRAME_UNEXPECTED",
        "H3_FRAME_ERROR",
        "H3_EXCESSIVE_LOAD",
        "H3_ID_ERROR",
        "H3_SETTINGS_ERROR",
        "H3_MISSING_SETTINGS",
        "H3_REQUEST_REJECTED",
        "H3_REQUEST_CANCELLED",
        "H3_REQUEST_INCOMPLETE",
        "H3_MESSAGE_ERROR",
        "H3_CONNECT_ERROR",
        "H3_VERSION_FALLBACK",
    };
    static const char *const qpack[] = {"QPACK_DECOMPRESSION_FAILED", "QPACK_ENCODER_STREAM_ERROR",
                                        "QPACK_DECODER_STREAM_ERROR"};
    if (code >= 0x100 && code < 0x100 + sizeof h3 / sizeof *h3)
        return h3[code - 0x100];
    if (code >= 0x200 && code < 0x203)
        return qpack[code - 0x200];
    return NULL;
}

const char *quic_error_code_name(uint64_t code)
{
    static const char *const t[] = {
        "NO_ERROR",
        "INTERNAL_ERROR",
        "CONNECTION_REFUSED",
        "FLOW_CONTROL_ERROR",
        "STREAM_LIMIT_ERROR",
        "STREAM_STATE_ERROR",
        "FINAL_SIZE_ERROR",
        "FRAME_ENCODING_ERROR",
        "TRANSPORT_PARAMETER_ERROR",
        "CONNECTION_ID_LIMIT_ERROR",
        "PROTOCOL_VIOLATION",
        "INVALID_TOKEN",
        "APPLICATION_ERROR",
        "CRYPTO_BUFFER_EXCEEDED",
        "KEY_UPDATE_ERROR",
        "AEAD_LIMIT_REACHED",
        "NO_VIABLE_PATH",
    };
    if (code < sizeof t / sizeof *t)
        return t[code];
    if (code >= 0x100 && code <= 0x1ff)
        return "CRYPTO_ERROR";
    return NULL;
}

const char *h3_library_version(void)
{
    static char buf[64];
    if (!buf[0]) {
        const ngtcp2_info *q = ngtcp2_version(0);
        const nghttp3_info *h = nghttp3_version(0);
        snprintf(buf, sizeof buf, "ngtcp2 %s, nghttp3 %s", q ? q->version_str : "?", h ? h->version_str : "?");
    }
    return buf;
}

/* ------------------------------------------------------------------ sessions */

struct h3_session *h3_session_new(void)
{
    return calloc(1, sizeof(struct h3_session));
}

void h3_session_free(struct h3_session *s)
{
    if (!s)
        return;
    gnutls_free(s->ticket.data);
    free(s);
}

bool h3_session_has_ticket(const struct h3_session *s)
{
    return s && s->ticket.size > 0;
}

/* ------------------------------------------------------------------ credentials */

int h3_tls_new(const char *cafile, bool insecure, struct h3_tls **out, char *err, size_t errlen)
{
    struct h3_tls *t = calloc(1, sizeof *t);
    if (!t)
        return knee_fail(err, errlen, KNEE_EINVAL, "out of memory");
    int r = gnutls_certificate_allocate_credentials(&t->cred);
    if (r < 0) {
        free(t);
        return knee_fail(err, errlen, KNEE_EINVAL, "GnuTLS: %s", gnutls_strerror(r));
    }
    t->insecure = insecure;
    if (!insecure) {
        r = cafile ? gnutls_certificate_set_x509_trust_file(t->cred, cafile, GNUTLS_X509_FMT_PEM)
                   : gnutls_certificate_set_x509_system_trust(t->cred);
        if (r <= 0 && cafile) {
            h3_tls_free(t);
            return knee_fail(err, errlen, KNEE_EINVAL, "--cacert %s: %s", cafile,
                             r == 0 ? "no certificate in the file" : gnutls_strerror(r));
        }
    }
    *out = t;
    return 0;
}

int h3_tls_set_client_cert(struct h3_tls *t, const char *cert, const char *key, char *err, size_t errlen)
{
    int r = gnutls_certificate_set_x509_key_file(t->cred, cert, key ? key : cert, GNUTLS_X509_FMT_PEM);
    if (r < 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--cert %s%s%s: %s", cert, key ? " --key " : "", key ? key : "",
                         gnutls_strerror(r));
    return 0;
}

void h3_tls_free(struct h3_tls *t)
{
    if (!t)
        return;
    gnutls_certificate_free_credentials(t->cred);
    free(t);
}
