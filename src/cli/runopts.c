/* The load options: the option rows (names, help texts) and the builder from parsed flags to
 * a struct run_config. Target collection and the per-target flags are in run_targets.c; the
 * semantic checks are run_validate's (load/validate.c), whose messages name these flags. */
#include "cli/runopts.h"

#include "cli/io_check.h"
#include "cli/shard_flags.h"
#include "cli/run_setup.h"
#include "cli/run_targets.h"
#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"
#include "http/sse.h"
#include "tls/tls.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void runopts_init(struct runopts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 1;
}

void runopts_release(struct runopts *o)
{
    strlist_release(&o->targets);
    strlist_release(&o->methods);
    strlist_release(&o->headers);
    strlist_release(&o->bodies);
    strlist_release(&o->rejects);
    strlist_release(&o->thresholds);
    strlist_release(&o->abort_ifs);
    strlist_release(&o->setup_headers);
    strlist_release(&o->captures);
    strlist_release(&o->connect_to);
}

/* The rows, indexed by id; `at` is where the flag's value goes inside struct runopts. */
struct runopt_row {
    const char *name;
    char short_name;
    enum opt_kind kind;
    size_t at;
    const char *metavar;
    const char *help;
    uint64_t unit_ns; /* OPT_DURATION: the unit of a bare number (0: seconds) */
};

#define ROW_UNIT(name, sh, kind, field, metavar, help, unit)                                                           \
    {                                                                                                                  \
        name, sh, kind, offsetof(struct runopts, field), metavar, help, unit                                           \
    }
#define ROW(name, sh, kind, field, metavar, help) ROW_UNIT(name, sh, kind, field, metavar, help, 0)
static const struct runopt_row ROWS[RUNOPT_COUNT] = {
    [RUNOPT_RATE] =
        ROW("rate", 'R', OPT_RATE, rate, "R",
            "open loop: planned requests per second in total (5000, 10k); without it the run is a closed loop"),
    [RUNOPT_ARRIVALS] =
        ROW("arrivals", 0, OPT_STR, arrivals, "KIND", "open loop: constant (default) or poisson inter-arrival times"),
    [RUNOPT_SEED] =
        ROW("seed", 0, OPT_COUNT, seed, "N", "seed of the Poisson arrivals (default 1): the same seed, the same plan"),
    [RUNOPT_RAMP] =
        ROW("ramp", 0, OPT_STR, ramp, "FROM:TO", "open loop: rate rising (or falling) linearly over the duration"),
    [RUNOPT_STAGES] = ROW("stages", 0, OPT_STR, stages, "SPEC",
                          "the rate as stages, RATE:D (hold) or FROM..TO:D (ramp), or clients (closed loop: Nc:D, "
                          "A..Bc:D), comma-separated, e.g. "
                          "'100:30s,100..1000:2m,1000:5m,0:30s'; replaces --rate, --ramp and --duration"),
    [RUNOPT_CONNECTIONS] =
        ROW("connections", 'c', OPT_COUNT, connections, "N",
            "closed loop: concurrent clients, one connection each (default 8; at most --requests); open loop: "
            "connection pool cap (default 10000)"),
    [RUNOPT_THINK] =
        ROW("think", 0, OPT_DURATION, think_ns, "D", "closed loop: pause between a response and the next request"),
    [RUNOPT_DURATION] = ROW("duration", 'd', OPT_DURATION, duration_ns, "D",
                            "how long requests are planned (default 10s; with --requests, no limit)"),
    [RUNOPT_REQUESTS] = ROW("requests", 'n', OPT_COUNT, requests, "N", "plan exactly N requests in total"),
    [RUNOPT_TARGET] =
        ROW("target", 0, OPT_LIST, targets, "NAME=URL[@R|@Nc]",
            "a named target (repeatable); @R its own rate (open loop), @Nc its own connections (closed loop)"),
    [RUNOPT_MIX] = ROW("mix", 0, OPT_STR, mix, "NAME=W,...",
                       "weights of targets sharing --rate or --connections (default 1 each)"),
    [RUNOPT_METHOD] =
        ROW("method", 'm', OPT_LIST, methods, "[T=]M", "request method (default GET); T= for one target only"),
    [RUNOPT_HEADER] =
        ROW("header", 'H', OPT_LIST, headers, "[T=]'K: V'", "request header (repeatable); T= for one target only"),
    [RUNOPT_HEADER_SECRET] = ROW("header-secret", 0, OPT_LIST, headers, "[T=]'K: V'",
                                 "a header like -H whose value result files never keep (an API key); Authorization, "
                                 "Proxy-Authorization, Cookie are always redacted"),
    [RUNOPT_BODY] =
        ROW("body", 'b', OPT_LIST, bodies, "[T=]STR|@FILE", "request body, inline or from a file; T= for one target"),
    [RUNOPT_NO_KEEPALIVE] =
        ROW("no-keepalive", 0, OPT_FLAG, no_keepalive, NULL, "a new connection for every request (Connection: close)"),
    [RUNOPT_REQUESTS_PER_CONNECTION] =
        ROW("requests-per-connection", 0, OPT_COUNT, requests_per_connection, "N",
            "close a connection after N requests (the last one says Connection: close): connection churn"),
    [RUNOPT_CACERT] = ROW("cacert", 0, OPT_STR, cacert, "FILE",
                          "https: trust the certificates in this PEM file instead of the system store"),
    [RUNOPT_INSECURE] = ROW("insecure", 'k', OPT_FLAG, insecure, NULL,
                            "https: verify no certificate at all (said in the summary); for self-signed test servers"),
    [RUNOPT_TLS_VERSION] = ROW("tls-version", 0, OPT_STR, tls_version, "MIN[:MAX]",
                               "https: TLS versions allowed, e.g. 1.2, 1.3, 1.2:1.2 (default: OpenSSL's)"),
    [RUNOPT_CIPHERS] = ROW("ciphers", 0, OPT_STR, ciphers, "LIST",
                           "https: OpenSSL cipher names joined by ':' (TLS 1.3 suites and older ciphers may be mixed)"),
    [RUNOPT_TLS_RESUME] =
        ROW("tls-resume", 0, OPT_STR, tls_resume, "on|off",
            "https: new connections offer the last session ticket (default on; the resumption ratio is "
            "reported)"),
    [RUNOPT_HTTP1] = ROW("http1.1", 0, OPT_FLAG, http1, NULL, "https: offer only http/1.1 in ALPN"),
    [RUNOPT_HTTP2] = ROW("http2", 0, OPT_FLAG, http2, NULL,
                         "https: offer only h2 in ALPN; a server without it fails the handshake (default: the server "
                         "chooses h2 or http/1.1)"),
    [RUNOPT_H2C] = ROW("h2c", 0, OPT_FLAG, h2c, NULL, "http:// targets speak HTTP/2 in cleartext (prior knowledge)"),
    [RUNOPT_STREAMS] =
        ROW("streams", 0, OPT_COUNT, streams, "N",
            "HTTP/2: concurrent streams per connection (open loop: at most N, default the server's limit up "
            "to 128; closed loop: N clients per connection, default 1)"),
    [RUNOPT_RETRY_STALE] =
        ROW("retry-stale", 0, OPT_FLAG, retry_stale, NULL,
            "a request whose reused keep-alive connection closes before any byte of the response is sent "
            "again, once (counted): by default for GET, HEAD, PUT, DELETE, OPTIONS; with this flag for every "
            "method, POST and PATCH too"),
    [RUNOPT_NO_RETRY_STALE] = ROW("no-retry-stale", 0, OPT_FLAG, no_retry_stale, NULL,
                                  "never send a request again: a stale connection fails it (transport: stale)"),
    [RUNOPT_TIMEOUT] = ROW("timeout", 0, OPT_DURATION, timeout_ns, "D", "per request, from its send (default 10s)"),
    [RUNOPT_DRAIN] = ROW("drain", 0, OPT_DURATION, drain_ns, "D",
                         "after planning ends, how long in-flight requests may finish (default: the timeout)"),
    [RUNOPT_KEEP_GOING] = ROW("keep-going", 0, OPT_FLAG, keep_going, NULL,
                              "run the whole plan even when every connection is refused (by default a run "
                              "whose every request was refused for 2 s ends there: exit 3)"),
    [RUNOPT_WARMUP] = ROW("warmup", 0, OPT_DURATION, warmup_ns, "D",
                          "requests planned in the first D are logged but left out of the statistics"),
    [RUNOPT_WHEN_BUSY] = ROW("when-busy", 0, OPT_STR, when_busy, "queue|drop",
                             "open loop, pool exhausted: wait for a connection (default) or drop the request"),
    [RUNOPT_REJECT] = ROW("reject", 0, OPT_LIST, rejects, "STATUS[:TEXT]",
                          "a business rejection, not an error: that status (with TEXT in the body)"),
    [RUNOPT_EXPECT_BODY] =
        ROW("expect-body", 0, OPT_STR, expect_body, "TEXT", "ok also requires TEXT in the body (else: invalid)"),
    [RUNOPT_STREAM] = ROW("stream", 0, OPT_STR, stream, "auto|sse|chunks|off",
                          "time the events of streamed bodies: the first event (from the planned send) and the "
                          "gaps between events; auto: text/event-stream bodies as SSE (default), sse: every body, "
                          "chunks: each HTTP/1.1 chunk or HTTP/2 DATA frame"),
    [RUNOPT_THREADS] =
        ROW("threads", 't', OPT_COUNT, threads, "T", "load threads, each with its own loop (default: CPUs)"),
    [RUNOPT_TARGETS_FILE] =
        ROW("targets", 0, OPT_STR, targets_file, "FILE|-",
            "requests from a file (- = standard input), read as a stream: vegeta's http format or JSON lines "
            "(docs/FORMATS.md, \"Targets files\"); replaces the URLs"),
    [RUNOPT_TARGETS_FORMAT] = ROW("targets-format", 0, OPT_STR, targets_format, "http|jsonl",
                                  "the targets file's format (default: by its extension, .jsonl/.ndjson or http)"),
    [RUNOPT_TARGETS_ORDER] = ROW("targets-order", 0, OPT_STR, targets_order, "sequential|random",
                                 "the entries in file order, cycling (default), or drawn by weight (seeded by --seed)"),
    [RUNOPT_FEED] = ROW("feed", 0, OPT_STR, feed, "FILE",
                        "a CSV or JSONL data feed for {{column}} placeholders in URLs, headers and bodies (also "
                        "{{seq}}, {{rand:A-B}}, {{uuid}})"),
    [RUNOPT_FEED_ORDER] = ROW("feed-order", 0, OPT_STR, feed_order, "sequential|random|shuffle",
                              "which row each request takes (default sequential; seeded by --seed)"),
    [RUNOPT_SETUP] =
        ROW("setup", 0, OPT_STR, setup, "'[METHOD ]URL'",
            "one request sent before the load, once (a login); a failure or a non-2xx answer fails the run "
            "(exit 3) and nothing else is sent; --capture takes values from its answer"),
    [RUNOPT_SETUP_HEADER] = ROW("setup-header", 0, OPT_LIST, setup_headers, "'K: V'",
                                "a header of the --setup request (repeatable; result files never keep its value)"),
    [RUNOPT_SETUP_BODY] = ROW("setup-body", 0, OPT_STR, setup_body, "STR|@FILE",
                              "the --setup request's body, inline or from a file (result files never keep it)"),
    [RUNOPT_CAPTURE] =
        ROW("capture", 0, OPT_LIST, captures, "NAME=SOURCE",
            "a variable for {{NAME}} placeholders from the --setup answer: header:H, cookie:C, json:PATH "
            "(data.token, items.0.id), status or body (repeatable)"),
    [RUNOPT_OUT] = ROW("out", 'o', OPT_STR, out, "FILE",
                       "one row per request: *.csv as CSV, else the binary log (with --stream, not off: each "
                       "request's gaps between events too)"),
    [RUNOPT_THRESHOLD] = ROW("threshold", 0, OPT_LIST, thresholds, "EXPR",
                             "pass/fail check, e.g. p99<250ms, read.p99.9<=1s, error_rate<1%, dropped==0 (exit 99)"),
    [RUNOPT_SPIN] = ROW_UNIT("spin", 0, OPT_DURATION, spin_ns, "D",
                             "busy-wait the last D before each planned send (e.g. 20us)", NS_PER_US),
    [RUNOPT_TIMER_SLACK] =
        ROW("timer-slack", 0, OPT_STR, timer_slack, "D|auto",
            "open loop: sends may leave up to D late (e.g. 1ms; a bare number is ms) so that sends due within D "
            "share one wake-up (less CPU); auto: 1% of the median service time, at most 1ms; lag still "
            "measured, the generator verdict counts only lag beyond D"),
    [RUNOPT_PROMPT_READS] = ROW("prompt-reads", 0, OPT_FLAG, prompt_reads, NULL,
                                "open loop: wake for each response as it arrives, instead of reading responses at "
                                "the next send's wake, timed by the kernel's receive timestamps (cleartext HTTP/1.1)"),
    [RUNOPT_IO] = ROW("io", 0, OPT_STR, io, "ENGINE",
                      "how the load threads do I/O: epoll, uring (io_uring: the closed loop over cleartext HTTP/1.1) "
                      "or auto (default: epoll, which measured as fast; the summary and the JSON say which ran)"),
    [RUNOPT_LAG_LIMIT] =
        ROW_UNIT("lag-limit", 0, OPT_DURATION, lag_limit_ns, "D",
                 "a hard limit: lag p99 above D marks the run generator-limited (default: relative to the "
                 "latency)",
                 NS_PER_MS),
    [RUNOPT_SHARD] =
        ROW("shard", 0, OPT_STR, shard, "I/N|auto",
            "run shard I of N of the plan (auto: from Slurm, a Kubernetes Indexed Job or MPI); knee merge adds "
            "the shards up"),
    [RUNOPT_SHARDS] = ROW("shards", 0, OPT_COUNT, shards, "N",
                          "the shard count where the scheduler gives only the index (JOB_COMPLETION_INDEX)"),
    [RUNOPT_START_AT] =
        ROW("start-at", 0, OPT_STR, start_at, "TIME",
            "start the plan at a wall-clock instant: Unix seconds, RFC 3339, +D after $KNEE_START_BASE or "
            "+D@FILE"),
    [RUNOPT_ABORT_IF] = ROW("abort-if", 0, OPT_LIST, abort_ifs, "RULE",
                            "stop the run when a rule over a trailing window holds, checked once a second: "
                            "p99[30s]>500ms, error_rate[10s]>5%, generator_limited (exit 99)"),
    [RUNOPT_ABORT_AFTER] = ROW("abort-after", 0, OPT_DURATION, abort_after_ns, "D",
                               "arm the --abort-if rules only after D of the run (default 0: at once)"),
    [RUNOPT_PROXY] = ROW("proxy", 'x', OPT_STR, proxy, "URL",
                         "send through an HTTP proxy, http://[user:pass@]host:port: http:// targets in absolute "
                         "form, https:// ones through a CONNECT tunnel (result files keep host:port only)"),
    [RUNOPT_LOCAL_ADDRESS] = ROW("local-address", 0, OPT_STR, local_address, "A[,B...]",
                                 "source addresses, one per new connection round-robin (more ephemeral ports); "
                                 "each is test-bound before the run"),
    [RUNOPT_CONNECT_RATE] = ROW("connect-rate", 0, OPT_RATE, connect_rate, "R",
                                "at most R new connections per second (each thread its share): handshakes "
                                "without a connection storm"),
    [RUNOPT_CERT] = ROW("cert", 0, OPT_STR, cert, "FILE",
                        "https: a client certificate (PEM, then its chain) for servers that require one (mutual "
                        "TLS); its key in --key or in the same file"),
    [RUNOPT_KEY] = ROW("key", 0, OPT_STR, key, "FILE", "https: the private key (PEM, unencrypted) of --cert"),
    [RUNOPT_UNIX_SOCKET] =
        ROW("unix-socket", 0, OPT_STR, unix_socket, "PATH",
            "every connection goes to this Unix stream socket, whatever the URL's host (the URL still gives "
            "Host, the path and, for https, the TLS name)"),
    [RUNOPT_CONNECT_TO] =
        ROW("connect-to", 0, OPT_LIST, connect_to, "HOST:PORT:ADDR:PORT",
            "connections for HOST:PORT go to ADDR:PORT instead (curl's form, repeatable, the first match wins; "
            "an empty part matches any or keeps the URL's); Host, SNI and the certificate check stay HOST's"),
    [RUNOPT_HTTP3] = ROW("http3", 0, OPT_FLAG, http3, NULL,
                         "https: HTTP/3 over QUIC (UDP to the URL's port; --streams requests per connection, "
                         "--cacert/--insecure as over TCP)"),
    [RUNOPT_QLOG] =
        ROW("qlog", 0, OPT_STR, qlog_dir, "DIR",
            "--http3: ngtcp2's qlog of every QUIC connection, one file each in DIR (t<thread>-c<conn>.sqlog, "
            "JSON text sequences)"),
};
#undef ROW
#undef ROW_UNIT

struct opt runopts_row(struct runopts *o, enum runopt_id id)
{
    if ((unsigned)id >= RUNOPT_COUNT)
        return (struct opt){0};
    const struct runopt_row *w = &ROWS[id];
    return (struct opt){.name = w->name,
                        .short_name = w->short_name,
                        .kind = w->kind,
                        .dst = (char *)o + w->at,
                        .metavar = w->metavar,
                        .help = w->help,
                        .unit_ns = w->unit_ns};
}

static bool seen(const struct cmd_spec *spec, const char *name)
{
    const struct opt *o = opt_find(spec, name);
    return o && o->seen;
}

/* "FROM:TO", each side a rate or 0 (run_validate rejects both 0). */
static int parse_ramp(const struct cmd_spec *spec, const char *s, double *from, double *to)
{
    const char *colon = strchr(s, ':');
    char a[64];
    if (!colon || (size_t)(colon - s) >= sizeof a)
        return opt_fail(spec, "--ramp '%s': expected FROM:TO, e.g. 100:2000", s);
    memcpy(a, s, (size_t)(colon - s));
    a[colon - s] = '\0';
    *from = *to = 0;
    if ((strcmp(a, "0") != 0 && units_parse_rate(a, from)) ||
        (strcmp(colon + 1, "0") != 0 && units_parse_rate(colon + 1, to)))
        return opt_fail(spec, "--ramp '%s': FROM and TO must be rates such as 100 or 2k", s);
    return 0;
}

/* A rate of a stage: as --rate takes it, or 0. */
static int stage_rate(const char *s, size_t n, double *out)
{
    char buf[64];
    if (!n || n >= sizeof buf)
        return KNEE_EFORMAT;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *out = 0;
    char *end;
    double z = strtod(buf, &end);
    if (end != buf && !*end && z == 0)
        return 0;
    return units_parse_rate(buf, out);
}

/* Clients of a stage, s[0..n): a whole number 0..PLAN_MAX_CONNECTIONS, its 'c' required (last: the
 * number before ':') or allowed (the FROM of FROM..TOc). */
static int stage_clients(const char *s, size_t n, bool last, double *out)
{
    if (n && s[n - 1] == 'c')
        n--;
    else if (last)
        return KNEE_EFORMAT;
    uint64_t v = 0;
    if (!n || n > 8)
        return KNEE_EFORMAT;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return KNEE_EFORMAT;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > PLAN_MAX_CONNECTIONS)
        return KNEE_EFORMAT;
    *out = (double)v;
    return 0;
}

/* One stage, s[0..n): "RATE:D" or "FROM..TO:D", or clients: "Nc:D" or "A..Bc:D". */
static int parse_stage(const char *s, size_t n, size_t idx, struct run_stage *st, char *err, size_t errlen)
{
    char text[128];
    snprintf(text, sizeof text, "%.*s", (int)(n < 100 ? n : 100), s);
    const char *colon = memchr(s, ':', n);
    if (!n)
        return knee_fail(err, errlen, KNEE_EINVAL, "--stages: stage %zu is empty", idx);
    if (!colon)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--stages: stage %zu '%s': expected RATE:DURATION or FROM..TO:DURATION, e.g. 100..1000:2m",
                         idx, text);
    const char *dots = NULL;
    for (const char *p = s; p + 1 < colon; p++)
        if (p[0] == '.' && p[1] == '.') {
            dots = p;
            break;
        }
    const char *ae = dots ? dots : colon;
    st->clients = colon - s >= 2 && colon[-1] == 'c' && isdigit((unsigned char)colon[-2]);
    if (st->clients) {
        if (stage_clients(s, (size_t)(ae - s), !dots, &st->from) ||
            (dots && stage_clients(dots + 2, (size_t)(colon - dots - 2), true, &st->to)))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--stages: stage %zu '%s': expected clients such as 4c or 4..64c (whole numbers 0..%d)",
                             idx, text, PLAN_MAX_CONNECTIONS);
        if (!dots)
            st->to = st->from;
    } else {
        if (stage_rate(s, (size_t)(ae - s), &st->from))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--stages: stage %zu '%s': '%.*s' is not a rate such as 500 or 10k", idx, text,
                             (int)(ae - s), s);
        st->to = st->from;
        if (dots && stage_rate(dots + 2, (size_t)(colon - dots - 2), &st->to))
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--stages: stage %zu '%s': '%.*s' is not a rate such as 500 or 10k", idx, text,
                             (int)(colon - dots - 2), dots + 2);
    }
    char d[64];
    size_t dl = (size_t)(s + n - colon - 1);
    if (dl >= sizeof d || dl == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--stages: stage %zu '%s': no duration after ':'", idx, text);
    memcpy(d, colon + 1, dl);
    d[dl] = '\0';
    if (units_parse_duration_ns(d, NS_PER_S, &st->duration_ns) || st->duration_ns == 0)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--stages: stage %zu '%s': '%s' is not a duration > 0 such as 30s or 2m", idx, text, d);
    return 0;
}

int runopts_parse_stages(const char *spec, struct run_stage **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    size_t count = 1;
    for (const char *p = spec; *p; p++)
        count += *p == ',';
    if (count > RUN_MAX_STAGES)
        return knee_fail(err, errlen, KNEE_EINVAL, "--stages: %zu stages, at most %d", count, RUN_MAX_STAGES);
    struct run_stage *st = xcalloc(count, sizeof *st);
    const char *p = spec;
    for (size_t i = 0; i < count; i++) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int rc = parse_stage(p, len, i + 1, &st[i], err, errlen);
        if (!rc && st[i].clients != st[0].clients)
            rc = knee_fail(err, errlen, KNEE_EINVAL,
                           "--stages: stage %zu '%.*s': give all stages as rates or all as clients (Nc), not a mix",
                           i + 1, (int)(len < 100 ? len : 100), p);
        if (rc) {
            free(st);
            return rc;
        }
        p = e ? e + 1 : p + len;
    }
    *out = st;
    *n = count;
    return 0;
}

/* --stages into the plan: the stages and the duration they add up to; the flags that would
 * also set the rate or the length are refused here, where they can be named. */
static int fill_stages(const struct runopts *o, const struct cmd_spec *spec, struct runopts_config *rc)
{
    struct plan *p = &rc->cfg.plan;
    if (seen(spec, "rate"))
        return opt_fail(spec, "--stages and --rate: give one (the stages set the rate over time)");
    if (o->ramp)
        return opt_fail(spec, "--stages and --ramp: give one (a ramp is a stage: FROM..TO:DURATION)");
    if (seen(spec, "duration"))
        return opt_fail(spec, "--stages and --duration: give one (the stages add up to the duration)");
    if (seen(spec, "requests"))
        return opt_fail(spec, "--stages and --requests cannot be combined (the stages end the run)");
    char why[300];
    if (runopts_parse_stages(o->stages, &rc->stages, &p->nstages, why, sizeof why))
        return opt_fail(spec, "%s", why);
    p->stages = rc->stages;
    if (rc->stages[0].clients && seen(spec, "connections"))
        return opt_fail(spec, "--stages of clients and --connections: give one (the stages give the clients)");
    if (!rc->stages[0].clients)
        p->open_loop = true; /* clients: a closed loop, unless a target's @RATE says otherwise (refused) */
    p->duration_ns = 0;
    for (size_t j = 0; j < p->nstages; j++)
        p->duration_ns += rc->stages[j].duration_ns > PLAN_MAX_NS ? PLAN_MAX_NS : rc->stages[j].duration_ns;
    return 0;
}

static int parse_reject(const struct cmd_spec *spec, const char *s, struct run_reject *out)
{
    char *end;
    errno = 0;
    long st = strtol(s, &end, 10);
    if (end == s || errno || (*end && *end != ':'))
        return opt_fail(spec, "--reject '%s': expected STATUS or STATUS:TEXT, e.g. 503:QUEUE_TIMEOUT", s);
    if (st < 100 || st > 599) /* RFC 9110 §15: the status codes are 100..599 */
        return opt_fail(spec, "--reject '%s': the status must be between 100 and 599", s);
    out->status = (int)st;
    out->body = NULL;
    if (*end == ':') {
        if (!end[1])
            return opt_fail(spec, "--reject '%s': empty text after ':'", s);
        out->body = end + 1;
    }
    return 0;
}

const char *const runopt_arrivals_words[] = {"constant", "poisson", NULL};
const char *const runopt_busy_words[] = {"queue", "drop", NULL};
const char *const runopt_io_words[] = {"auto", "epoll", "uring", NULL};
const char *const runopt_onoff_words[] = {"on", "off", NULL};
const char *const runopt_format_words[] = {"http", "jsonl", NULL};
const char *const runopt_targets_order_words[] = {"sequential", "random", NULL};
const char *const runopt_feed_order_words[] = {"sequential", "random", "shuffle", NULL};

/* A word flag: *out = the index of s in words (NULL-terminated); s == NULL keeps *out. */
static int parse_word(const struct cmd_spec *spec, const char *flag, const char *s, const char *const *words, int *out)
{
    return s ? opt_parse_word(spec, flag, s, words, out) : 0;
}

/* struct run_config reads 0 as "the default" for these; a 0 on the command line is an error
 * only the command line can see. */
static int given_as_zero(const struct cmd_spec *spec, const struct runopts *o)
{
    if (seen(spec, "connections") && o->connections == 0)
        return opt_fail(spec, "--connections must be between 1 and %d", PLAN_MAX_CONNECTIONS);
    if (seen(spec, "threads") && o->threads == 0)
        return opt_fail(spec, "--threads must be between 1 and %d", RUN_MAX_THREADS);
    if (seen(spec, "requests") && o->requests == 0)
        return opt_fail(spec, "--requests must be > 0");
    if (seen(spec, "duration") && o->duration_ns == 0)
        return opt_fail(spec, "--duration must be > 0");
    if (seen(spec, "streams") && (o->streams == 0 || o->streams > RUN_H2_MAX_STREAMS))
        return opt_fail(spec, "--streams must be between 1 and %d", RUN_H2_MAX_STREAMS);
    if (seen(spec, "requests-per-connection") &&
        (o->requests_per_connection == 0 || o->requests_per_connection > UINT32_MAX))
        return opt_fail(spec, "--requests-per-connection must be between 1 and %u", UINT32_MAX);
    return 0;
}

static uint32_t sat32(uint64_t v);

/* The TLS and HTTP/2 flags: syntax here (--tls-version, --tls-resume, one HTTP version), what
 * applies to which target in run_validate, what OpenSSL accepts (--cacert, --ciphers) when
 * the run prepares. */
static int fill_transport(const struct runopts *o, const struct cmd_spec *spec, struct run_config *cfg)
{
    if (o->http1 && o->http2)
        return opt_fail(spec, "--http1.1 and --http2: give one");
    cfg->http = o->http1 ? RUN_HTTP_1 : o->http2 ? RUN_HTTP_2 : RUN_HTTP_AUTO;
    cfg->h2c = o->h2c;
    cfg->http3 = o->http3;
    cfg->qlog_dir = o->qlog_dir;
    cfg->tls_cacert = o->cacert;
    cfg->tls_insecure = o->insecure;
    cfg->tls_ciphers = o->ciphers;
    if (o->tls_version) {
        char why[200];
        if (tls_parse_versions(o->tls_version, &cfg->tls_min_version, &cfg->tls_max_version, why, sizeof why))
            return opt_fail(spec, "%s", why);
    }
    int resume = 0;
    if (parse_word(spec, "tls-resume", o->tls_resume, runopt_onoff_words, &resume))
        return 2;
    cfg->tls_no_resume = resume == 1;
    cfg->streams = sat32(o->streams);
    cfg->requests_per_connection = sat32(o->requests_per_connection);
    if (o->proxy && o->setup)
        return opt_fail(spec, "--setup and --proxy: the --setup request does not go through a proxy (yet)");
    cfg->proxy = o->proxy;
    cfg->local_addresses = o->local_address;
    if (seen(spec, "connect-rate") && !(o->connect_rate > 0))
        return opt_fail(spec, "--connect-rate must be > 0 (new connections per second)");
    cfg->connect_rate = o->connect_rate;
    return 0;
}

/* uint64 flag values into the config's uint32 fields: saturate, so run_validate's limit
 * check sees a value too large rather than a wrapped one. */
static uint32_t sat32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The targets as struct plan_target (headers flattened into one array). */
static void fill_targets(struct runopts_config *rc)
{
    rc->tc = xcalloc(rc->ntg ? rc->ntg : 1, sizeof *rc->tc);
    size_t nh = 0;
    for (size_t i = 0; i < rc->ntg; i++)
        nh += rc->tg[i].headers.n;
    rc->hdrs = xcalloc(nh ? nh : 1, sizeof *rc->hdrs);
    size_t hk = 0;
    for (size_t i = 0; i < rc->ntg; i++) {
        const struct cli_target *t = &rc->tg[i];
        struct plan_target *c = &rc->tc[i];
        c->name = t->name;
        c->url = t->url;
        c->method = t->method;
        c->headers = rc->hdrs + hk;
        c->nheaders = t->headers.n;
        for (size_t j = 0; j < t->headers.n; j++)
            rc->hdrs[hk++] = t->headers.v[j];
        c->body = t->body;
        c->body_len = t->body_len;
        c->rate = t->rate;
        c->connections = t->connections;
        c->weight = t->weight;
        c->source = rc->sources ? rc->sources[i] : NULL;
    }
    rc->cfg.plan.targets = rc->tc;
    rc->cfg.plan.ntargets = rc->ntg;
}

/* The load model and the timing flags. */
static int fill_model(const struct runopts *o, const struct cmd_spec *spec, struct runopts_config *rc)
{
    struct run_config *cfg = &rc->cfg;
    bool any_rate = false;
    for (size_t i = 0; i < rc->ntg; i++)
        any_rate |= rc->tg[i].rate > 0;
    cfg->plan.open_loop = seen(spec, "rate") || o->ramp || any_rate;
    cfg->plan.rate = o->rate;
    if (o->ramp) {
        if (parse_ramp(spec, o->ramp, &cfg->plan.ramp_from, &cfg->plan.ramp_to))
            return 2;
        cfg->plan.ramp = true;
    }
    int a = RUN_ARRIVALS_CONSTANT, b = RUN_BUSY_QUEUE, io = RUN_IO_AUTO;
    if (parse_word(spec, "arrivals", o->arrivals, runopt_arrivals_words, &a) ||
        parse_word(spec, "when-busy", o->when_busy, runopt_busy_words, &b) ||
        parse_word(spec, "io", o->io, runopt_io_words, &io))
        return 2;
    _Static_assert(RUN_IO_AUTO == 0 && RUN_IO_EPOLL == 1 && RUN_IO_URING == 2, "runopt_io_words follows enum run_io");
    cfg->io = (enum run_io)io;
    _Static_assert(RUN_ARRIVALS_CONSTANT == 0 && RUN_ARRIVALS_POISSON == 1,
                   "runopt_arrivals_words follows enum run_arrivals");
    _Static_assert(RUN_BUSY_QUEUE == 0 && RUN_BUSY_DROP == 1, "runopt_busy_words follows enum run_when_busy");
    cfg->plan.arrivals = (enum run_arrivals)a;
    cfg->when_busy = (enum run_when_busy)b;
    if (given_as_zero(spec, o))
        return 2;
    cfg->plan.seed = o->seed;
    cfg->plan.connections = sat32(o->connections);
    cfg->threads = sat32(o->threads);
    cfg->plan.think_ns = o->think_ns;
    cfg->plan.requests = o->requests;
    cfg->plan.duration_ns = seen(spec, "duration") ? o->duration_ns : o->requests ? 0 : PLAN_DEFAULT_DURATION_NS;
    if (o->stages && fill_stages(o, spec, rc))
        return 2;
    cfg->timeout_ns = seen(spec, "timeout") ? o->timeout_ns : RUN_DEFAULT_TIMEOUT_NS;
    cfg->drain_ns = seen(spec, "drain") ? o->drain_ns : cfg->timeout_ns;
    cfg->plan.warmup_ns = o->warmup_ns;
    cfg->keepalive = !o->no_keepalive;
    if (o->retry_stale && o->no_retry_stale)
        return opt_fail(spec, "--retry-stale and --no-retry-stale: give one");
    cfg->retry_stale = !o->no_retry_stale; /* idempotent methods, as HTTP clients retry them */
    cfg->retry_stale_all = o->retry_stale;
    cfg->expect_body = o->expect_body;
    cfg->spin_ns = o->spin_ns;
    cfg->lag_limit_ns = o->lag_limit_ns;
    if (o->timer_slack && strcmp(o->timer_slack, "auto") == 0)
        cfg->timer_slack_auto = true;
    else if (o->timer_slack && units_parse_duration_ns(o->timer_slack, NS_PER_MS, &cfg->timer_slack_ns) != 0)
        return opt_fail(spec, "--timer-slack: '%s' is not a duration such as 1ms, or auto", o->timer_slack);
    cfg->prompt_reads = o->prompt_reads;
    /* the early end is the command's choice: one with the row (knee run) ends a refused run */
    cfg->refused_end_ns = opt_find(spec, "keep-going") && !o->keep_going ? RUN_DEFAULT_REFUSED_END_NS : 0;
    cfg->out_path = o->out;
    cfg->tls_cert = o->cert;
    cfg->tls_key = o->key;
    cfg->unix_socket = o->unix_socket;
    cfg->connect_to = (const char *const *)o->connect_to.v;
    cfg->nconnect_to = o->connect_to.n;
    enum http_stream_mode sm = HTTP_STREAM_AUTO;
    if (o->stream && http_stream_mode_parse(o->stream, &sm))
        return opt_fail(spec, "--stream: '%s' is not one of auto, sse, chunks, off", o->stream);
    cfg->stream_mode = (uint8_t)sm;
    /* the log's header is written before any response arrives, so only an explicit --stream
     * can ask for gaps (auto by default: the log stays version 1, as older knee reads it) */
    cfg->stream_gaps = o->stream && sm != HTTP_STREAM_OFF;
    return fill_transport(o, spec, cfg);
}

int runopts_build(const struct runopts *o, const struct cmd_spec *spec, const struct strlist *urls,
                  struct runopts_config *rc)
{
    memset(rc, 0, sizeof *rc);
    if ((o->targets_file ? cli_targets_file(spec, o, urls, &rc->tg, &rc->ntg)
                         : cli_targets_collect(spec, &o->targets, urls, &rc->tg, &rc->ntg)) ||
        cli_targets_apply(spec, o, rc->tg, rc->ntg, &rc->body_files) || fill_model(o, spec, rc) ||
        cli_setup_parse(spec, o, &rc->setup) || cli_targets_sources(spec, o, rc->setup, rc->tg, rc->ntg, &rc->sources))
        goto fail;
    rc->targets_path = o->targets_file;
    rc->feed_path = o->feed;
    rc->rejects = xcalloc(o->rejects.n ? o->rejects.n : 1, sizeof *rc->rejects);
    for (size_t i = 0; i < o->rejects.n; i++)
        if (parse_reject(spec, o->rejects.v[i], &rc->rejects[i]))
            goto fail;
    rc->cfg.rejects = rc->rejects;
    rc->cfg.nrejects = o->rejects.n;
    fill_targets(rc);
    if (cli_shard_args(spec, o->shard, o->shards, &rc->cfg) || cli_start_at_args(spec, o->start_at, &rc->cfg))
        goto fail;
    char why[512];
    if (run_validate(&rc->cfg, why, sizeof why)) {
        opt_fail(spec, "%s", why);
        goto fail;
    }
    /* the client certificate read now, so a wrong file or key is said before anything is sent */
    if (rc->cfg.tls_cert && tls_client_cert_check(rc->cfg.tls_cert, rc->cfg.tls_key, why, sizeof why)) {
        opt_fail(spec, "%s", why);
        goto fail;
    }
    rc->thr = xcalloc(o->thresholds.n ? o->thresholds.n : 1, sizeof *rc->thr);
    rc->nthr = o->thresholds.n;
    for (size_t i = 0; i < o->thresholds.n; i++)
        if (run_threshold_parse(o->thresholds.v[i], &rc->cfg, &rc->thr[i], why, sizeof why)) {
            opt_fail(spec, "--threshold '%s': %s", o->thresholds.v[i], why);
            goto fail;
        } else if (rc->thr[i].stage != THR_NO_STAGE && (size_t)rc->thr[i].stage >= rc->cfg.plan.nstages) {
            opt_fail(spec, "--threshold '%s': the run has %zu stage%s (--stages)", o->thresholds.v[i],
                     rc->cfg.plan.nstages, rc->cfg.plan.nstages == 1 ? "" : "s");
            goto fail;
        }
    return 0;
fail:
    runopts_config_release(rc);
    return 2;
}

void runopts_inputs(const struct runopts_config *rc, struct cli_io *io)
{
    for (size_t i = 0; i < rc->body_files.n; i++)
        cli_io_input(io, "--body", rc->body_files.v[i]);
    cli_io_input(io, "--cacert", rc->cfg.tls_cacert);
    cli_io_input(io, "--cert", rc->cfg.tls_cert);
    cli_io_input(io, "--key", rc->cfg.tls_key);
    if (rc->targets_path && strcmp(rc->targets_path, "-") != 0)
        cli_io_input(io, "--targets", rc->targets_path);
    cli_io_input(io, "--feed", rc->feed_path);
    cli_setup_inputs(rc->setup, io);
}

void runopts_config_release(struct runopts_config *rc)
{
    cli_targets_sources_free(rc->sources, rc->ntg);
    cli_setup_free(rc->setup);
    cli_targets_free(rc->tg, rc->ntg);
    free(rc->tc);
    free(rc->hdrs);
    free(rc->rejects);
    free(rc->stages);
    free(rc->thr);
    strlist_release(&rc->body_files);
    memset(rc, 0, sizeof *rc);
}
