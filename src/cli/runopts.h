/* The load options of `knee run` (what to send, to whom, how fast, for how long, what counts
 * as ok, --out, --threshold) as one set of option rows and one builder from the parsed flags
 * to a struct run_config, so every command that runs load (knee run; knee capacity, knee run
 * --repeat and shards to come) accepts the same flags with the same help texts, the same
 * checks and the same error messages, and builds the same configuration.
 *
 *   struct runopts o;
 *   runopts_init(&o);
 *   struct opt rows[RUNOPT_COUNT + 4];
 *   size_t n = 0;
 *   for (int id = 0; id < RUNOPT_COUNT; id++)   // or the subset the command accepts
 *       rows[n++] = runopts_row(&o, id);
 *   ... the command's own rows, then opt_parse(&spec, argc, argv, &urls) ...
 *   struct runopts_config rc;
 *   if (runopts_build(&o, &spec, &urls, &rc) == 0) {
 *       run_execute(&rc.cfg, &res, err, sizeof err);   // as often as the command likes
 *       runopts_config_release(&rc);
 *   }
 *   runopts_release(&o);
 *
 * Checks: the builder checks what only the command line can (syntax of NAME=URL@R, [T=]
 * prefixes, --mix, --ramp, --reject, --body files, a flag given as 0 where 0 means "the
 * default" in struct run_config), then calls run_validate() for everything semantic, whose
 * messages name the flags. Every failure is one line on stderr, "knee <cmd>: ...", and the
 * exit code 2. Not thread-safe (the rows point into one struct runopts). */
#ifndef KNEE_CLI_RUNOPTS_H
#define KNEE_CLI_RUNOPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/opt.h"
#include "load/run.h"
#include "record/threshold.h"

/* One row per load option, in the order `knee run --help` lists them around its own rows. */
enum runopt_id {
    RUNOPT_RATE,
    RUNOPT_ARRIVALS,
    RUNOPT_SEED,
    RUNOPT_RAMP,
    RUNOPT_STAGES, /* --stages SPEC: the rate as holds and ramps, one after the other */
    RUNOPT_CONNECTIONS,
    RUNOPT_THINK,
    RUNOPT_DURATION,
    RUNOPT_REQUESTS,
    RUNOPT_TARGET,
    RUNOPT_MIX,
    RUNOPT_METHOD,
    RUNOPT_HEADER,
    RUNOPT_HEADER_SECRET, /* a header like -H whose value the run record redacts (record_redact_arg) */
    RUNOPT_BODY,
    RUNOPT_NO_KEEPALIVE,
    RUNOPT_REQUESTS_PER_CONNECTION,
    RUNOPT_RETRY_STALE,
    RUNOPT_NO_RETRY_STALE,
    RUNOPT_CACERT,
    RUNOPT_INSECURE,
    RUNOPT_TLS_VERSION,
    RUNOPT_CIPHERS,
    RUNOPT_TLS_RESUME,
    RUNOPT_HTTP1,
    RUNOPT_HTTP2,
    RUNOPT_H2C,
    RUNOPT_STREAMS,
    RUNOPT_TIMEOUT,
    RUNOPT_DRAIN,
    RUNOPT_KEEP_GOING, /* a command with this row ends a run early when the target refuses (load/run.h) */
    RUNOPT_WARMUP,
    RUNOPT_WHEN_BUSY,
    RUNOPT_REJECT,
    RUNOPT_EXPECT_BODY,
    RUNOPT_STREAM, /* --stream auto|sse|chunks|off: time the events of streamed bodies (http/sse.h) */
    RUNOPT_THREADS,
    RUNOPT_TARGETS_FILE, /* --targets, --targets-format, --targets-order, --feed, --feed-order (load/variant.h) */
    RUNOPT_TARGETS_FORMAT,
    RUNOPT_TARGETS_ORDER,
    RUNOPT_FEED,
    RUNOPT_FEED_ORDER,
    RUNOPT_SETUP, /* --setup, --setup-header, --setup-body, --capture: one request before the load (cli/run_setup.h) */
    RUNOPT_SETUP_HEADER,
    RUNOPT_SETUP_BODY,
    RUNOPT_CAPTURE,
    RUNOPT_OUT,
    RUNOPT_THRESHOLD,
    RUNOPT_SPIN,
    RUNOPT_IO,
    RUNOPT_LAG_LIMIT,
    RUNOPT_TIMER_SLACK,
    RUNOPT_PROMPT_READS,
    RUNOPT_SHARD, /* --shard, --shards, --start-at: one plan run as N processes (cli/shard_flags.h) */
    RUNOPT_SHARDS,
    RUNOPT_START_AT,
    RUNOPT_ABORT_IF, /* --abort-if, --abort-after: knee run's live abort rules (cli/run_abort.h) */
    RUNOPT_ABORT_AFTER,
    RUNOPT_PROXY, /* --proxy, --local-address, --connect-rate: how connections are made (load/route.c) */
    RUNOPT_LOCAL_ADDRESS,
    RUNOPT_CONNECT_RATE,
    RUNOPT_CERT, /* --cert, --key, --unix-socket, --connect-to: mutual TLS and where connections go (net/route.h) */
    RUNOPT_KEY,
    RUNOPT_UNIX_SOCKET,
    RUNOPT_CONNECT_TO,
    RUNOPT_HTTP3, /* --http3: HTTP/3 over QUIC (load/h3.c) */
    RUNOPT_QLOG,  /* --qlog DIR: a qlog file per QUIC connection (--http3) */
    RUNOPT_COUNT
};

/* The words of --arrivals, --when-busy, --io and --tls-resume, in the order of their enums
 * (NULL-terminated): the parser, its error messages and `knee --list-values` read them. */
extern const char *const runopt_arrivals_words[];
extern const char *const runopt_busy_words[];
extern const char *const runopt_io_words[];
extern const char *const runopt_onoff_words[];
extern const char *const runopt_format_words[];        /* --targets-format: enum wl_format's order */
extern const char *const runopt_targets_order_words[]; /* --targets-order: enum wl_order's first two */
extern const char *const runopt_feed_order_words[];    /* --feed-order: enum wl_order's order */

/* The flags as parsed, before any check. Strings point into argv. */
struct runopts {
    double rate;
    const char *stages; /* --stages SPEC */
    const char *arrivals, *ramp, *when_busy, *expect_body, *mix, *out, *io;
    uint64_t seed, connections, requests, threads;
    uint64_t think_ns, duration_ns, timeout_ns, drain_ns, warmup_ns, spin_ns, lag_limit_ns;
    const char *timer_slack; /* --timer-slack D|auto */
    bool prompt_reads;       /* --prompt-reads */
    struct strlist targets, methods, headers, bodies, rejects, thresholds;
    bool no_keepalive;
    bool keep_going;                  /* --keep-going: no early end when every connection is refused */
    const char *shard, *start_at;     /* --shard I/N|auto, --start-at TIME */
    uint64_t shards;                  /* --shards N */
    bool retry_stale, no_retry_stale; /* --retry-stale (every method), --no-retry-stale */
    /* TLS and HTTP/2 */
    const char *cacert, *tls_version, *ciphers, *tls_resume;
    bool insecure, http1, http2, h2c;
    bool http3;           /* --http3 */
    const char *qlog_dir; /* --qlog DIR */
    uint64_t streams, requests_per_connection;
    const char *targets_file, *targets_format, *targets_order, *feed, *feed_order; /* requests that vary */
    struct strlist abort_ifs;               /* --abort-if RULE (parsed by cli/run_abort.c, not by runopts_build) */
    uint64_t abort_after_ns;                /* --abort-after D */
    const char *setup, *setup_body;         /* --setup '[METHOD ]URL', --setup-body STR|@FILE */
    struct strlist setup_headers, captures; /* --setup-header, --capture NAME=SOURCE */
    const char *proxy, *local_address;      /* --proxy URL, --local-address A[,B...] */
    double connect_rate;                    /* --connect-rate R */
    const char *cert, *key, *unix_socket;   /* --cert FILE, --key FILE, --unix-socket PATH */
    struct strlist connect_to;              /* --connect-to HOST:PORT:ADDR:PORT */
    const char *stream;                     /* --stream auto|sse|chunks|off */
};

/* Defaults before parsing (seed 1; everything else empty: the builder fills in the run's
 * defaults, RUN_DEFAULT_*). */
void runopts_init(struct runopts *o);
/* Free the lists (the strings belong to argv). */
void runopts_release(struct runopts *o);

/* The option row `id` (name, short name, kind, help text), its destination inside o. A
 * command puts the rows it accepts into its own table; `seen` starts false. */
struct opt runopts_row(struct runopts *o, enum runopt_id id);

/* A configuration built from the flags, and the memory behind it. */
struct runopts_config {
    struct run_config cfg;     /* valid (run_validate passed); argv/argc, callbacks, stop: the caller's */
    struct run_threshold *thr; /* --threshold, parsed against cfg's targets */
    size_t nthr;
    /* owned storage that cfg points into */
    struct cli_target *tg;
    size_t ntg;
    struct plan_target *tc;
    struct run_reject *rejects;
    struct run_stage *stages; /* --stages, parsed (cfg.plan.stages) */
    const char **hdrs;
    struct strlist body_files;       /* the files --body @FILE read (borrowed from argv) */
    struct variant_source **sources; /* per target: its request source (--targets, --feed, placeholders), or NULL */
    const char *targets_path, *feed_path; /* --targets, --feed (argv's) */
    struct cli_setup *setup;              /* --setup and --capture (cli/run_setup.h), or NULL */
};

/* Flags (o, parsed with spec, whose rows say which were given) and positional URLs → *rc.
 * Returns 0, or the exit code 2 after one line on stderr naming the flag; on 2 *rc is
 * already released. Rows the command does not have count as not given. */
int runopts_build(const struct runopts *o, const struct cmd_spec *spec, const struct strlist *urls,
                  struct runopts_config *rc);
void runopts_config_release(struct runopts_config *rc);

/* --stages SPEC parsed: stages "RATE:DURATION" (a hold) or "FROM..TO:DURATION" (a linear ramp),
 * comma-separated, rates as --rate takes them or 0, durations as --duration. *out (allocated,
 * the caller frees) and *n. 0, or KNEE_EINVAL with a line naming the stage in err ("--stages:
 * stage 3 '1000:5x': '5x' is not a duration"). Closed-loop stages (4c:30s) are refused: not
 * built yet. */
int runopts_parse_stages(const char *spec, struct run_stage **out, size_t *n, char *err, size_t errlen);

struct cli_io;
/* The files the load flags read (--body @FILE, --cacert, --cert, --key) added to io as inputs, for the check
 * that no output replaces one (cli/io_check.h). */
void runopts_inputs(const struct runopts_config *rc, struct cli_io *io);

#endif
