/* The scalar fields of the run JSON, each named once for the writer (record/json_write.c) and the
 * reader (record/json_read.c): X(key, kind, member) with member an lvalue path from the struct
 * the list belongs to, T(key, member) a text member (a char array). A new field is one line
 * here; both sides expand the same list in the same order, so they cannot drift apart.
 * Private to src/record.
 *
 * Kinds (a put_KIND and a get_KIND on each side, typed: a member of the wrong type does not
 * compile):
 *   f64     double; null when not finite (read: NAN when missing)
 *   pos     double written only when > 0, else null (read: 0 when missing or not > 0)
 *   flag    bool (read: false unless true)
 *   u64     uint64_t count (read: 0 when missing, negative or not a number)
 *   u32     uint32_t count
 *   lng     long (json_kv_int)
 *   s_ns    uint64_t ns written in seconds (read back exactly below 2^53 ns)
 *   s_ns0   the same, null when 0
 *   ms_ns   uint64_t ns written in milliseconds
 *   ms_ns0  the same, null when 0
 *   triple  double[3] as an array */
#ifndef KNEE_RECORD_FIELDS_H
#define KNEE_RECORD_FIELDS_H

/* clang-format off */

/* struct run_record, the top level after "config" (before "generator") */
#define RECORD_TOP_FIELDS(X, T)                                                                                      \
    X("window_s", f64, window_s)                                                                                   \
    X("window_start_s", f64, window_start_s)                                                                       \
    X("window_end_s", f64, window_end_s)                                                                           \
    X("elapsed_s", f64, elapsed_s)                                                                                 \
    X("interrupted", flag, interrupted)                                                                            \
    X("accounting_ok", flag, accounting_ok)                                                                        \
    X("generator_limited", flag, generator_limited)                                                                \
    X("attention", flag, warnings.attention)                                                                       \
    X("verbose", flag, verbose)

/* struct run_record, the top level after "generator" (sent_on_schedule was send_ratio in knee-run/1) */
#define RECORD_VERDICT_FIELDS(X, T)                                                                                  \
    X("sent_on_schedule", f64, sent_on_schedule)                                                                   \
    X("no_ok", flag, no_ok)                                                                                        \
    X("failed_share", f64, failed_share)

/* struct run_record, "generator" (then lag_limit_ms, timer_slack_ms and gap_ms) */
#define RECORD_GENERATOR_FIELDS(X, T)                                                                                \
    X("limited", flag, generator.limited)                                                                          \
    T("reasons", generator.why)                                                                                    \
    X("short_send", flag, generator.short_send)                                                                    \
    X("over_lag_limit", flag, generator.over_limit)                                                                \
    X("lag_shapes_tail", flag, generator.shapes_tail)                                                              \
    X("lag_shapes_median", flag, generator.shapes_median)                                                          \
    X("sends_in_bursts", flag, generator.bursts)

/* struct run_record, "config" after the loop's own fields (threads, io) */
#define RECORD_CONFIG_FIELDS(X, T)                                                                                   \
    X("duration_s", s_ns0, config.duration_ns)                                                                     \
    X("requests", u64, config.requests)                                                                            \
    X("timeout_s", s_ns, config.timeout_ns)                                                                        \
    X("drain_s", s_ns, config.drain_ns)                                                                            \
    X("warmup_s", s_ns, config.warmup_ns)                                                                          \
    X("keepalive", flag, config.keepalive)                                                                         \
    X("retry_stale", flag, config.retry_stale)                                                                     \
    X("retry_stale_all", flag, config.retry_stale_all)                                                             \
    X("reads_deferred", flag, reads_deferred)

/* struct run_env, "environment" after "args" (then cpu_us_per_request, peak_rss_kb, ...) */
#define RECORD_ENV_FIELDS(X, T)                                                                                      \
    X("cpus", lng, cpus)                                                                                           \
    T("kernel", kernel)                                                                                            \
    T("hostname", hostname)                                                                                        \
    T("start_utc", start_wall)                                                                                     \
    X("loadavg_before", triple, loadavg_before)                                                                    \
    X("loadavg_after", triple, loadavg_after)                                                                      \
    X("cpu_user_s", f64, cpu_user_s)                                                                               \
    X("cpu_sys_s", f64, cpu_sys_s)

/* struct run_generator_cpu, "environment.generator_cpu" (then the derived core_share) */
#define RECORD_GEN_CPU_FIELDS(X, T)                                                                                  \
    X("user_s", f64, user_s)                                                                                       \
    X("sys_s", f64, sys_s)                                                                                         \
    X("wall_s", f64, wall_s)                                                                                       \
    X("threads", u32, threads)

/* struct run_target_result, a target's head (not "all"'s) */
#define RECORD_TARGET_FIELDS(X, T)                                                                                   \
    T("url", url)                                                                                                  \
    T("address", address)                                                                                          \
    X("resolve_ms", ms_ns, resolve_ns)                                                                             \
    X("planned_rate", f64, planned_rate)                                                                           \
    X("own_rate", pos, own_rate)                                                                                   \
    X("clients", u32, connections)

/* struct run_rates, a target's "rates" */
#define RECORD_RATES_FIELDS(X, T)                                                                                    \
    X("planned", f64, planned)                                                                                     \
    X("sent", f64, sent)                                                                                           \
    X("completed", f64, completed)                                                                                 \
    X("goodput", f64, goodput)                                                                                     \
    X("achieved_send", f64, achieved_send)                                                                         \
    X("sending_s", f64, sending_s)

/* struct run_events, a target's "events" (the counts the rates are of) */
#define RECORD_EVENTS_FIELDS(X, T)                                                                                   \
    X("planned", u64, planned)                                                                                     \
    X("sent", u64, sent)                                                                                           \
    X("completed", u64, completed)                                                                                 \
    X("ok", u64, ok)                                                                                               \
    X("sent_before_window", u64, sent_before)                                                                      \
    X("sent_late", u64, sent_late)                                                                                 \
    X("completed_late", u64, completed_late)

/* struct run_events exactly, "shard.histograms...events" (ns since t0) */
#define RECORD_SHARD_EVENTS_FIELDS(X, T)                                                                             \
    X("window_start_ns", u64, window_start_ns)                                                                     \
    X("window_end_ns", u64, window_end_ns)                                                                         \
    X("planned", u64, planned)                                                                                     \
    X("sent", u64, sent)                                                                                           \
    X("completed", u64, completed)                                                                                 \
    X("ok", u64, ok)                                                                                               \
    X("sent_before", u64, sent_before)                                                                             \
    X("sent_late", u64, sent_late)                                                                                 \
    X("completed_late", u64, completed_late)                                                                       \
    X("sends", u64, sends)                                                                                         \
    X("first_send_ns", u64, first_send_ns)                                                                         \
    X("last_send_ns", u64, last_send_ns)

/* struct run_summary, every statistics object (ms) */
#define RECORD_SUMMARY_FIELDS(X, T)                                                                                  \
    X("count", u64, count)                                                                                         \
    X("mean", f64, mean)                                                                                           \
    X("stdev", f64, stdev)                                                                                         \
    X("min", f64, min)                                                                                             \
    X("max", f64, max)                                                                                             \
    X("p50", f64, p50)                                                                                             \
    X("p90", f64, p90)                                                                                             \
    X("p95", f64, p95)                                                                                             \
    X("p99", f64, p99)                                                                                             \
    X("p99.9", f64, p999)

/* struct run_counts, a target's "connections" */
#define RECORD_CONNECTIONS_FIELDS(X, T)                                                                              \
    X("opened", u64, conns_opened)                                                                                 \
    X("failed", u64, conns_failed)                                                                                 \
    X("closed_by_server", u64, conns_closed_by_peer)                                                               \
    X("unsolicited_bytes", u64, conns_unsolicited)

/* struct run_proto_counts, a target's "tls_handshakes" (then the derived resumption_ratio) */
#define RECORD_HANDSHAKE_FIELDS(X, T)                                                                                \
    X("full", u64, tls_full)                                                                                       \
    X("resumed", u64, tls_resumed)                                                                                 \
    X("failed", u64, tls_failed)                                                                                   \
    X("client_cert_requested", u64, tls_cert_requested)

/* struct run_quic_counts, a target's "quic" before its code tables (--http3) */
#define RECORD_QUIC_FIELDS(X, T)                                                                                     \
    X("streams", u64, streams)                                                                                     \
    X("datagrams_sent", u64, datagrams_sent)                                                                       \
    X("datagrams_received", u64, datagrams_received)                                                               \
    X("bytes_sent", u64, bytes_sent)                                                                               \
    X("bytes_received", u64, bytes_received)                                                                       \
    X("send_blocked", u64, send_blocked)                                                                           \
    X("pto", u64, pto)                                                                                             \
    X("zero_rtt_accepted", u64, zero_rtt_accepted)                                                                 \
    X("zero_rtt_rejected", u64, zero_rtt_rejected)                                                                 \
    X("stream_packets_lost", u64, stream_packets_lost)                                                             \
    X("rtt_connections", u64, rtt_connections)                                                                     \
    X("rtt_min_us", u64, rtt_min_us)                                                                               \
    X("rtt_smoothed_sum_us", u64, rtt_smoothed_sum_us)                                                             \
    X("rtt_smoothed_max_us", u64, rtt_smoothed_max_us)                                                             \
    X("cwnd_sum_bytes", u64, cwnd_sum_bytes)

/* struct run_proto_counts, a target's "h2" after max_concurrent */
#define RECORD_H2_FIELDS(X, T)                                                                                       \
    X("rst_received", u64, h2_rst)                                                                                 \
    X("refused", u64, h2_refused)                                                                                  \
    X("goaway", u64, h2_goaway)                                                                                    \
    X("goaway_refused", u64, h2_goaway_streams)                                                                    \
    X("retried", u64, h2_retried)                                                                                  \
    X("flow_control_stalls", u64, h2_stalls)

/* struct run_tick, one interval of "timeline" */
#define RECORD_TICK_FIELDS(X, T)                                                                                     \
    X("start_s", f64, start_s)                                                                                     \
    X("length_s", f64, length_s)                                                                                   \
    X("planned", u64, planned)                                                                                     \
    X("sent", u64, sent)                                                                                           \
    X("completed", u64, completed)                                                                                 \
    X("ok", u64, ok)                                                                                               \
    X("errors", u64, errors)                                                                                       \
    X("dropped", u64, dropped)                                                                                     \
    X("p50_ms", f64, p50_ms)                                                                                       \
    X("p99_ms", f64, p99_ms)                                                                                       \
    X("max_ms", f64, max_ms)

/* clang-format on */

/* Expanders: FIELDS_WRITE(list, j, type, base) writes the fields of *base (a type *);
 * FIELDS_READ(list, o, type, base) reads them from object o into *base. */
#define RECORD_PUT_X(key, kind, m) put_##kind(j_, key, &base_->m);
#define RECORD_PUT_T(key, m) put_text(j_, key, base_->m);
#define RECORD_GET_X(key, kind, m) get_##kind(o_, key, &base_->m);
#define RECORD_GET_T(key, m) get_text(o_, key, base_->m, sizeof base_->m);
#define FIELDS_WRITE(list, j, type, base)                                                                              \
    do {                                                                                                               \
        struct jw *j_ = (j);                                                                                           \
        const type *base_ = (base);                                                                                    \
        list(RECORD_PUT_X, RECORD_PUT_T)                                                                               \
    } while (0)
#define FIELDS_READ(list, o, type, base)                                                                               \
    do {                                                                                                               \
        const json_t *o_ = (o);                                                                                        \
        type *base_ = (base);                                                                                          \
        list(RECORD_GET_X, RECORD_GET_T)                                                                               \
    } while (0)

#endif
