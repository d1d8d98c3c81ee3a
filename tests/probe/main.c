/* knee_probe: the end-to-end tests' client over src/tls and src/h2 (tests/probe/probe.h). One
 * line per connection on stdout, key=value, for the tests to grep:
 *
 *   knee_probe [--cacert F] [--insecure] [--http1.1|--http2|--h2c] [--tls-version V]
 *              [--ciphers L] [--resume] [-n REQUESTS] [-m STREAMS] [-c CONNECTIONS]
 *              [--handshake-timeout-ms N] [--timeout-ms N] [--method M] [--body TEXT] URL
 *
 *   conn=0 phase=done reason=none proto=h2 version=TLSv1.3 resumed=0 connect_us=80 tls_us=1500
 *     sent=10 completed=10 ok=10 status=200 failed_streams=0 server_max_streams=128 max_open=8 ...
 *
 * Connections run one after another (a resumption cache is shared by them). The last line is a
 * summary: "total connections=N handshakes_full=F resumed=R tls_us_mean=M". Exit 0 when every
 * connection ended with reason none, 1 otherwise, 2 for bad arguments. Test code, not knee. */
#include "probe.h"

#include "core/clock.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(const char *why)
{
    fprintf(stderr, "knee_probe: %s\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    struct tls_client_config tc = {.alpn = TLS_ALPN_ANY};
    struct probe_config pc = {0};
    unsigned conns = 1;
    const char *url = NULL;
    const char *versions = NULL;
    signal(SIGPIPE, SIG_IGN);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && v && ++i)
        if (ARG("--cacert"))
            tc.cafile = v;
        else if (strcmp(a, "--insecure") == 0)
            tc.insecure = true;
        else if (strcmp(a, "--http1.1") == 0) {
            tc.alpn = TLS_ALPN_HTTP1;
            pc.proto = PROBE_H1;
        } else if (strcmp(a, "--http2") == 0)
            tc.alpn = TLS_ALPN_H2;
        else if (strcmp(a, "--h2c") == 0)
            pc.proto = PROBE_H2C;
        else if (ARG("--tls-version"))
            versions = v;
        else if (ARG("--ciphers"))
            tc.ciphers = v;
        else if (strcmp(a, "--resume") == 0)
            tc.resume = true;
        else if (ARG("-n"))
            pc.requests = (unsigned)strtoul(v, NULL, 10);
        else if (ARG("-m"))
            pc.streams = (unsigned)strtoul(v, NULL, 10);
        else if (ARG("-c"))
            conns = (unsigned)strtoul(v, NULL, 10);
        else if (ARG("--handshake-timeout-ms"))
            pc.handshake_timeout_ns = strtoull(v, NULL, 10) * NS_PER_MS;
        else if (ARG("--timeout-ms"))
            pc.timeout_ns = strtoull(v, NULL, 10) * NS_PER_MS;
        else if (ARG("--method"))
            pc.method = v;
        else if (ARG("--body")) {
            pc.body = v;
            pc.body_len = strlen(v);
        } else if (a[0] != '-' && !url)
            url = a;
        else
            return usage("bad argument (see the comment at the top of tests/probe/main.c)");
#undef ARG
    }
    if (!url)
        return usage("no URL");
    char err[256];
    if (versions && tls_parse_versions(versions, &tc.min_version, &tc.max_version, err, sizeof err))
        return usage(err);
    struct tls_ctx *ctx = NULL;
    if (strncmp(url, "https://", 8) == 0 && tls_client_new(&tc, &ctx, err, sizeof err))
        return usage(err);
    struct tls_session_cache cache;
    tls_session_cache_init(&cache);
    pc.url = url;
    pc.tls = ctx;
    pc.cache = &cache;
    int rc = 0;
    unsigned resumed = 0, full = 0;
    uint64_t tls_sum = 0;
    for (unsigned k = 0; k < conns; k++) {
        struct probe_result r;
        if (probe_run(&pc, &r) != 0)
            return usage("the URL does not parse or resolve");
        printf("conn=%u phase=%s reason=%s proto=%s version=%s cipher=%s resumed=%d connect_us=%llu tls_us=%llu "
               "sent=%u completed=%u ok=%u status=%d failed_streams=%u server_max_streams=%u max_open=%u "
               "rst=%llu goaway=%llu stalls=%llu body_bytes=%llu server_timing='%s' detail='%s'\n",
               k, r.phase, r.reason, r.proto[0] ? r.proto : "-", r.version[0] ? r.version : "-",
               r.cipher[0] ? r.cipher : "-", r.resumed, (unsigned long long)(r.connect_ns / 1000),
               (unsigned long long)(r.tls_ns / 1000), r.sent, r.completed, r.ok, r.last_status, r.failed_streams,
               r.server_max_streams, r.max_open, (unsigned long long)r.h2.rst_received, (unsigned long long)r.h2.goaway,
               (unsigned long long)r.h2.stalls, (unsigned long long)r.body_bytes, r.server_timing, r.detail);
        if (strcmp(r.reason, "none") != 0)
            rc = 1;
        if (r.version[0]) {
            resumed += r.resumed;
            full += !r.resumed;
            tls_sum += r.tls_ns;
        }
    }
    printf("total connections=%u handshakes_full=%u resumed=%u tls_us_mean=%llu\n", conns, full, resumed,
           (unsigned long long)(full + resumed ? tls_sum / (full + resumed) / 1000 : 0));
    tls_session_cache_release(&cache);
    tls_ctx_free(ctx);
    return rc;
}
