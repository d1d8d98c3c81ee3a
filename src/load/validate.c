/* run_validate: a configuration checked before anything runs, the plan by plan_validate
 * (plan/plan.h), then how it runs (the loop-only flags, limits, the TLS and HTTP/2 flags against
 * the targets' schemes); and choose_io, the I/O engine the load threads take. */
#include "load/internal.h"

#include "core/err.h"
#include "load/uring.h"
#include "net/route.h"

#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* --cert/--key, --unix-socket and --connect-to: their syntax and how they combine (the files are
 * read when the run prepares; the command line reads them earlier, tls_client_cert_check). */
static int validate_routes(const struct run_config *cfg, char *err, size_t errlen)
{
    if (cfg->tls_key && !cfg->tls_cert)
        return knee_fail(err, errlen, KNEE_EINVAL, "--key needs --cert (the client certificate it belongs to)");
    if (cfg->unix_socket && cfg->nconnect_to)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--unix-socket and --connect-to: give one (every connection goes to the Unix socket)");
    if (cfg->proxy && (cfg->unix_socket || cfg->nconnect_to))
        return knee_fail(err, errlen, KNEE_EINVAL, "--proxy with %s: give one (every connection goes to the proxy)",
                         cfg->unix_socket ? "--unix-socket" : "--connect-to");
    struct net_addr a;
    int r = cfg->unix_socket ? net_addr_unix(cfg->unix_socket, &a, err, errlen) : 0;
    for (size_t i = 0; r == 0 && i < cfg->nconnect_to; i++) {
        struct net_connect_to rule;
        r = net_connect_to_parse(cfg->connect_to[i], &rule, err, errlen);
    }
    return r;
}

/* The TLS and HTTP/2 flags: each applies to some targets (https://, or http:// for --h2c) and
 * is refused where it would change nothing, so a typo in a URL's scheme is not a silent
 * cleartext run. */
static int validate_transport(const struct run_config *cfg, char *err, size_t errlen)
{
    bool any_tls = false, any_plain = false;
    for (size_t i = 0; i < cfg->plan.ntargets; i++) {
        if (strncasecmp(cfg->plan.targets[i].url, "https://", 8) == 0)
            any_tls = true;
        else
            any_plain = true;
    }
    const char *tls_flag = cfg->tls_cert                                  ? "--cert"
                           : cfg->tls_cacert                              ? "--cacert"
                           : cfg->tls_insecure                            ? "--insecure"
                           : cfg->tls_min_version || cfg->tls_max_version ? "--tls-version"
                           : cfg->tls_ciphers                             ? "--ciphers"
                           : cfg->tls_no_resume                           ? "--tls-resume off"
                           : cfg->http == RUN_HTTP_1                      ? "--http1.1"
                           : cfg->http == RUN_HTTP_2                      ? "--http2"
                                                                          : NULL;
    if (tls_flag && !any_tls)
        return knee_fail(
            err, errlen, KNEE_EINVAL, "%s applies to https:// targets, and every target is http://%s", tls_flag,
            cfg->http == RUN_HTTP_2 && !cfg->tls_cacert && !cfg->tls_insecure ? " (HTTP/2 in cleartext is --h2c)" : "");
    if (cfg->http3 && any_plain)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--http3 applies to https:// targets (QUIC is always encrypted), and a target is http://");
    if (cfg->http3 && (cfg->h2c || cfg->http != RUN_HTTP_AUTO))
        return knee_fail(err, errlen, KNEE_EINVAL, "--http3 and %s: give one",
                         cfg->h2c                  ? "--h2c"
                         : cfg->http == RUN_HTTP_2 ? "--http2"
                                                   : "--http1.1");
    if (cfg->http3 && (cfg->tls_min_version || cfg->tls_max_version || cfg->tls_ciphers))
        return knee_fail(err, errlen, KNEE_EINVAL, "--http3: QUIC is TLS 1.3 with its own suites (%s does not apply)",
                         cfg->tls_ciphers ? "--ciphers" : "--tls-version");
    if (cfg->http3 && cfg->proxy) /* an HTTP proxy's CONNECT is a TCP tunnel */
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--http3 and --proxy: QUIC is UDP, and an HTTP proxy tunnels TCP (CONNECT-UDP is not "
                         "supported)");
    if (cfg->http3 && cfg->unix_socket)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--http3 and --unix-socket: QUIC is UDP datagrams, a Unix socket here is a byte stream");
    if (cfg->qlog_dir && !cfg->http3)
        return knee_fail(err, errlen, KNEE_EINVAL, "--qlog applies to --http3 (it logs QUIC connections)");
    struct stat st;
    if (cfg->qlog_dir && (stat(cfg->qlog_dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(cfg->qlog_dir, W_OK | X_OK)))
        return knee_fail(err, errlen, KNEE_EINVAL, "--qlog %s: not a writable directory", cfg->qlog_dir);
    if (cfg->http3 && cfg->io == RUN_IO_URING)
        return knee_fail(err, errlen, KNEE_EINVAL, "--io uring applies to cleartext HTTP/1.1 (--http3 runs on epoll)");
    if (cfg->h2c && !any_plain)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--h2c applies to http:// targets (https:// ones agree on h2 by ALPN; --http2 forces it)");
    if (cfg->tls_insecure && cfg->tls_cacert)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--insecure and --cacert: give one (--insecure verifies no certificate at all)");
    for (int k = 0; k < 2; k++) {
        int v = k ? cfg->tls_max_version : cfg->tls_min_version;
        if (v && (v < 0x0301 || v > 0x0304))
            return knee_fail(err, errlen, KNEE_EINVAL, "--tls-version: versions are 1.0 to 1.3");
    }
    if (cfg->tls_min_version && cfg->tls_max_version && cfg->tls_min_version > cfg->tls_max_version)
        return knee_fail(err, errlen, KNEE_EINVAL, "--tls-version: MIN is above MAX");
    bool h2_possible = (any_tls && cfg->http != RUN_HTTP_1) || (any_plain && cfg->h2c) || cfg->http3;
    if (cfg->streams > RUN_H2_MAX_STREAMS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--streams must be between 1 and %d", RUN_H2_MAX_STREAMS);
    if (cfg->streams && !h2_possible)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--streams applies to HTTP/2: https:// targets (ALPN h2, without --http1.1) or --h2c");
    if (cfg->requests_per_connection && !cfg->keepalive)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--requests-per-connection and --no-keepalive: give one (--no-keepalive is one request per "
                         "connection)");
    if (cfg->io == RUN_IO_URING) {
        const char *why = cfg->plan.open_loop ? "the open loop (--rate) runs on epoll"
                          : any_tls           ? "https:// targets run on epoll"
                          : cfg->h2c          ? "HTTP/2 (--h2c) runs on epoll"
                                              : NULL;
        if (why)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--io uring applies to the closed loop over cleartext HTTP/1.1: %s (--io epoll or auto)",
                             why);
    }
    return 0;
}

/* Whether --io auto takes io_uring where it applies (docs/INTERNALS.md, "The io_uring engine":
 * measured against epoll on this project's machine, io_uring cost less CPU per request but gave
 * no more throughput, less in the quietest run: auto stays epoll). */
#define RUN_IO_AUTO_URING false

/* The engine the threads run: io_uring where it was asked for (or auto prefers it) and applies
 * (the closed loop, cleartext HTTP/1.1) and this process may set up a ring; else epoll. An
 * explicit --io uring that the kernel refuses is an error. */
int choose_io(struct engine *e, const struct run_config *cfg, bool any_tls, char *err, size_t errlen)
{
    e->io = RUN_IO_EPOLL;
    bool applies = !cfg->plan.open_loop && !any_tls && !cfg->h2c;
    if (!applies || cfg->io == RUN_IO_EPOLL || (cfg->io == RUN_IO_AUTO && !RUN_IO_AUTO_URING))
        return 0;
    int r = uring_probe();
    if (r == 0)
        e->io = RUN_IO_URING;
    else if (cfg->io == RUN_IO_URING)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--io uring: this process cannot set up an io_uring (%s); --io epoll", knee_strerror(r));
    return 0;
}

/* How the plan runs. Every message names the flag of `knee run` that sets the field, so the
 * command line can leave these checks here and still tell the user which flag to fix. */
static int validate_run(const struct run_config *cfg, char *err, size_t errlen)
{
    bool open = cfg->plan.open_loop;
    if (!open && cfg->when_busy != RUN_BUSY_QUEUE)
        return knee_fail(err, errlen, KNEE_EINVAL, "--when-busy applies to the open loop: give --rate");
    if (!open && (cfg->timer_slack_ns || cfg->timer_slack_auto))
        return knee_fail(err, errlen, KNEE_EINVAL, "--timer-slack applies to the open loop: give --rate");
    if (cfg->timer_slack_ns > RUN_MAX_TIMER_SLACK_NS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--timer-slack must be at most %llu ms",
                         (unsigned long long)(RUN_MAX_TIMER_SLACK_NS / 1000000ULL));
    if (!open && cfg->prompt_reads)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--prompt-reads applies to the open loop: give --rate (a closed loop reads each response as "
                         "it arrives)");
    if ((cfg->timer_slack_ns || cfg->timer_slack_auto) && cfg->spin_ns)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--timer-slack and --spin contradict each other (late sends for fewer wake-ups, or a "
                         "busy core for punctual ones): give one");
    if (cfg->threads > RUN_MAX_THREADS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--threads must be between 1 and %d", RUN_MAX_THREADS);
    if (cfg->timeout_ns == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--timeout must be > 0");
    if (cfg->expect_body && !*cfg->expect_body)
        return knee_fail(err, errlen, KNEE_EINVAL, "--expect-body: empty text");
    if (cfg->nrejects > RUN_MAX_REJECTS)
        return knee_fail(err, errlen, KNEE_EINVAL, "--reject: at most %d", RUN_MAX_REJECTS);
    int rc = route_validate(cfg, err, errlen); /* --proxy, --local-address, --connect-rate */
    if (rc == 0)
        rc = validate_transport(cfg, err, errlen);
    return rc ? rc : validate_routes(cfg, err, errlen); /* --cert/--key, --unix-socket, --connect-to */
}

int run_validate(const struct run_config *cfg, char *err, size_t errlen)
{
    int rc = plan_validate(&cfg->plan, cfg->threads, err, errlen);
    return rc ? rc : validate_run(cfg, err, errlen);
}
