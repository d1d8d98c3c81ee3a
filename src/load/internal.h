/* Private structures of the load engine shared by engine.c (set-up, threads, merging),
 * the load thread's files (worker.c and the request path of load/worker.h: one event loop per
 * thread, schedule, connections, accounting), result.c (the threads' totals into the run record)
 * and outlog.c (the per-request log). Not an API: use load/run.h. */
#ifndef KNEE_LOAD_INTERNAL_H
#define KNEE_LOAD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "core/loop.h"
#include "h2/h2.h"
#include "hist/hdr.h"
#include "http/response.h"
#include "load/run.h"
#include "net/net.h"
#include "net/proxy.h"
#include "net/url.h"
#include "plan/plan.h"
#include "plan/schedule.h"
#include "tls/tls.h"
#include "workload/workload.h"

#define WORKER_RBUF 65536 /* one read buffer per thread: responses are parsed, never stored */
#define WORKER_BATCH 256  /* planned sends per timer callback before IO gets a turn */
/* deferred reads (worker.c worker_hold): a held sleep lasts until the next timer, at most
 * max(twice the slack, WORKER_HOLD_NS) and never more than WORKER_HOLD_MAX_NS (a response read
 * later than that would hold its connection too long) */
#define WORKER_HOLD_NS (1000 * NS_PER_US)
#define WORKER_HOLD_MAX_NS (4 * NS_PER_MS)
/* the open loop without a slack (openloop.c sched_deadline): its timer is armed before the next
 * send by the SCHED_EARLY_Q quantile of how late its callback runs, tracked in steps of
 * SCHED_EARLY_STEP_NS, at most SCHED_EARLY_MAX_NS */
#define SCHED_EARLY_Q 0.02
#define SCHED_EARLY_STEP_NS 500.0
#define SCHED_EARLY_MAX_NS (50 * NS_PER_US)
#define IVAL_SLOTS 8    /* per-second merge slots in flight between workers and main */
#define CONN_CHUNK 64   /* connections are allocated this many at a time */
#define REQ_CHUNK 64    /* and requests in flight */
#define WORKER_READS 16 /* reads of WORKER_RBUF per readiness event: a flood yields to timers */

struct outlog;
struct outlog_chunk;
struct uring;

#define ENGINE_NO_NEEDLE (-1) /* engine_target.expect_bit/reject_bit: no body text to match */

/* One target as prepared before the run; read-only while threads run. */
struct engine_target {
    const struct plan_target *target; /* in cfg->plan.targets */
    struct url url;
    struct net_addr addr;
    uint64_t resolve_ns;
    char *req; /* the serialised request */
    size_t req_len;
    char *req_close; /* --requests-per-connection: the same with Connection: close (the last one) */
    size_t req_close_len;
    bool tls;                /* https: every connection speaks TLS first */
    bool h2_known;           /* HTTP/2 without asking: --h2c, or --http2 over TLS */
    bool h2_able;            /* may speak HTTP/2 (h2req is built) */
    bool h3;                 /* --http3: HTTP/3 over QUIC (h2req is built: HTTP/3 sends the same fields) */
    struct h2_request h2req; /* the request as HTTP/2 header fields (h2_able) */
    bool head;               /* HEAD: responses carry no body */
    bool idempotent;         /* its method may be sent twice (run_config.retry_stale) */
    struct http_matchers matchers;
    int expect_bit; /* needle index of --expect-body, ENGINE_NO_NEEDLE when none */
    size_t nrejects;
    int reject_status[RUN_MAX_REJECTS];
    int reject_bit[RUN_MAX_REJECTS]; /* ENGINE_NO_NEEDLE: status alone */
    const struct plan_share *share;  /* its part of the plan (engine.shares): rates, limit, clients, groups */
    /* --proxy (proxy.c): https, the CONNECT request of its tunnels; http, "http://authority",
     * put before each request's target (absolute form) */
    char *proxy_connect, *proxy_origin;
    size_t proxy_connect_len, proxy_origin_len;
    uint8_t stream_mode; /* run_config.stream_mode: how its responses' events are timed */
    bool log_gaps;       /* the --out log carries each request's gaps (outlog_wants_gaps) */
    bool entries;        /* its requests count per entry of the targets file (entries.c) */
};

/* the request path's structures (load/worker.h) */
struct client;
struct cgroup;
struct conn;
struct conn_ops;
struct req;

/* A request prepared ahead of its send (a target with a request source: load/variant.h): what it
 * writes, either a table entry's shared bytes or its own, built from the buffers below. */
struct variant_bufs {
    struct wl_buf url, hdr, body;
    struct wl_marks marks[2]; /* the wire templates last expanded into url and hdr (variant_build.c) */
    size_t *hdr_off;
    const char **hdr_lines;
    size_t hdr_cap;
};
struct variant {
    struct variant *next; /* the ring's free list */
    uint64_t seq;         /* {{seq}}: this thread's j-th request is base + step * j (struct vring) */
    uint64_t entry;       /* the targets file's entry (0-based, file order) */
    const char *h1, *h1_close;
    size_t h1_len, h1_close_len;
    const struct h2_request *h2; /* NULL: the request cannot go over HTTP/2 */
    bool idempotent, head;
    char *own_h1, *own_h1_close; /* built for this request (h1 and h1_close point here) */
    struct h2_request own_h2;
    bool own_h2_built;
    struct variant_bufs b;
};
/* A thread's requests prepared ahead for one target, in the order it sends them. */
struct vring {
    struct variant **slot; /* NULL: the target has no request source */
    size_t cap, head, len;
    struct variant *free;
    uint64_t base, step, j; /* the j-th request of this thread is request base + step * j of the plan */
    size_t reserved;        /* requests planned that will take one (vring_ready) and have not yet */
    bool done;              /* the source has no more */
    struct wl_dec seq_dec;  /* base + step * j in decimal, when the source's {{seq}} wants it */
};
/* Per target per thread: the schedule share, the pool, counters and histograms. */
struct target_rt {
    size_t index;
    const struct engine_target *et;
    /* open loop */
    struct sched sched;
    bool has_next;
    uint64_t next_planned_ns;
    struct conn *avail; /* connections with room for a request (IDLE, or HTTP/2 with a free stream) */
    uint64_t *q;        /* ring of queued planned times (waiting for a connection) */
    size_t qcap, qhead, qlen;
    size_t connecting_unbound; /* connects in progress opened for the queue */
    uint32_t per_conn;         /* requests a new connection is expected to take at once (HTTP/2: streams) */
    /* HTTP/2 connections whose server allows no stream (SETTINGS_MAX_CONCURRENT_STREAMS 0):
     * open now, and reported since one of the target's had room (h2.c; openloop.c dials no
     * more while one is open, and fewer than the requests waiting after) */
    uint32_t h2_noroom;
    uint64_t h2_noroom_seen;
    /* requests sent once that wait for a stream to be sent again (HTTP/2 GOAWAY, REFUSED_STREAM) */
    struct req *pend_head, *pend_tail;
    size_t npend;
    /* closed loop */
    uint64_t budget; /* requests this thread may still send for the target */
    struct cgroup *groups;
    size_t ngroups;
    /* accounting: [0] requests planned after the warm-up, [1] during it */
    struct run_counts counts[2];
    struct run_status_counts status;     /* responses by status of the requests in counts[0] (account.c) */
    struct run_events ev;                /* every request by its events' times (rates.c), window in ns since t0 */
    struct hdr latency[RUN_GROUP_COUNT]; /* lazily initialised except OK */
    struct hdr service, ttfb, lag, connect, tls;
    struct hdr ival; /* latency of this interval (warm-up included) */
    uint64_t ival_max_ns;
    size_t nst;
    struct run_server_timing st[RUN_ST_MAX_NAMES];
    uint64_t bytes_out;                 /* request bytes written (warm-up included, as bytes_in in the JSON) */
    struct run_proto_counts pc;         /* connections by protocol and TLS version, handshakes, HTTP/2 */
    struct tls_session_cache tls_cache; /* --tls-resume: the newest session ticket of the target */
    struct h3_session *h3_session;      /* --http3 --tls-resume: its newest QUIC session (h3.c; lazily) */
    struct vring vr;                    /* a target with a request source: its prepared requests */
    struct run_stream stream;           /* streamed responses' events (account.c) */
    struct run_stream ival_stream;      /* this interval's first events and gaps as they arrive (warm-up
                                           included, as ival), and its events */
};

/* Counters of the current one-second interval (all targets, warm-up included). */
struct ival_counts {
    uint64_t planned, sent, completed, ok, errors, dropped;
    uint64_t refused; /* of the errors: a transport failure, connection refused */
};

/* What an interval adds for run_progress's --live fields, kept apart from ival_counts (which the
 * timeline also keeps per interval for the whole run). A thread fills its own; engine_publish
 * adds it to the slot and clears it. */
struct ival_live {
    uint64_t outcome[OUTCOME_COUNT];
    struct run_progress_status status[RUN_PROGRESS_STATUS_MAX];
    uint64_t status_other;
    uint64_t late, lag_max_ns;
    uint64_t cpu_ns, cpu_max_ns; /* in a slot: the threads' CPU time, summed, and the largest */
};
/* account.c: n responses with status `code` into l's list (past RUN_PROGRESS_STATUS_MAX codes,
 * status_other). */
void ival_live_status(struct ival_live *l, uint16_t code, uint64_t n);

struct worker {
    struct engine *e;
    uint32_t index;
    pthread_t tid;
    struct loop loop;
    size_t nt;
    struct target_rt *t;
    char *rbuf;
    /* connections */
    struct conn **chunks;
    size_t nchunks;
    struct conn *free_head, *free_tail;
    uint32_t pool_cap;   /* open loop: connections this thread may hold */
    uint32_t nopen;      /* connecting + idle + busy */
    uint32_t connecting; /* connects in progress */
    uint32_t conn_seq;
    bool qlog_warned; /* --qlog: a file could not be made (said once; h3.c) */
    size_t nclients;
    struct client *clients;
    size_t ngroups;
    struct cgroup *groups;
    /* requests in flight: a pool of struct req, grown REQ_CHUNK at a time, never shrunk */
    struct req **rchunks;
    size_t nrchunks;
    struct req *req_free;
    /* timers */
    struct loop_timer start_timer, sched_timer, tick_timer, end_timer, timeout_timer, conn_timer;
    struct req *fifo_head, *fifo_tail;    /* requests in flight, by deadline */
    struct conn *cfifo_head, *cfifo_tail; /* connections without a request in CONNECTING/HANDSHAKING */
    /* state */
    bool planning, started, finished;
    uint64_t plan_end_ns, drain_deadline_ns, finish_ns;
    uint64_t inflight, queued;
    uint64_t batch_credit;
    /* generator self-measurement: lateness of the timer against the plan (dispatch - planned,
     * excluding waits for a connection) */
    struct hdr late;
    /* interval */
    uint64_t tick_index;
    struct ival_counts ic;
    struct ival_live il;  /* the interval's --live numbers (cleared by engine_publish) */
    uint64_t cpu_mark_ns; /* this thread's CPU time at its last publish (CLOCK_THREAD_CPUTIME_ID) */
    /* events by time (rates.c): this thread's window end (ns since t0; earlier than the
     * engine's when a stop cut planning short) and the timeline's counts per interval, by
     * the interval each event's time falls in (engine_tick_of), merged at the end */
    uint64_t win_end_ns;
    uint64_t unreached;           /* planned requests dropped at the cutoff (drop_unsent) */
    struct run_stage_result *stg; /* --stages: this thread's per-stage results (record/stages.h); NULL without */
    size_t nstg;
    struct ival_counts *tk;
    size_t ntk;
    /* per-request log */
    struct outlog_chunk *chunk;
    bool log_slowed;
    int fatal;          /* a system error that ended the thread early (-errno) */
    struct uring *ring; /* --io uring: the thread's io_uring (uring.c); NULL: epoll */
    /* the transport row of a ready cleartext HTTP/1.1 connection: conn_ring_ops with a ring,
     * conn_stamped_ops with deferred reads, else NULL (it stays on conn_plain_ops); chosen
     * once, in worker_main */
    const struct conn_ops *clear_ops;
    /* connections with work deferred until the current callback returns (worker_due) */
    struct conn *due_head, *due_tail;
    bool vneed; /* a ring of prepared requests is below half: top up after this callback */
    /* --connect-rate (route.c): connections waiting for their turn to connect, in order, the
     * earliest time of the next connect, and the timer that dials them */
    struct conn *rate_head, *rate_tail;
    uint64_t connect_next_ns;
    struct loop_timer rate_timer;
    struct run_entry_counts *ent; /* per entry of the targets file (engine.nent of them); NULL: none */
    /* the open loop's slack (openloop.c): sends planned within slack_ns of the first one due
     * leave in one wake; with --timer-slack auto it follows the service times (recomputed at
     * slack_next_ns), and slack_max_ns is the largest it was (the record's timer_slack_ms) */
    uint64_t slack_ns, slack_max_ns, slack_next_ns;
    /* how late the schedule timer's callback runs after its deadline (the wake-up, and the
     * responses a held wake reads first): a running mean and mean deviation, as TCP estimates
     * its round trip; with a slack the timer is armed that much earlier (openloop.c
     * slack_margin), so the first send of a wake stays within the slack. sched_due_ns: the
     * deadline armed (0: none) */
    uint64_t sched_due_ns;
    double late_mean_ns, late_dev_ns;
    /* without a slack (or one below it): the wake-up latency the callback rarely beats, a
     * running estimate of its SCHED_EARLY_Q quantile; the timer is armed that much before the
     * next send, and a wake that still comes early polls the clock up to early_armed_ns
     * (openloop.c sched_deadline, sched_wait_out) */
    double early_ns;
    uint64_t early_armed_ns;
    /* deferred reads (worker.c worker_hold): the thread sleeps past arriving responses, up to
     * twice the slack, and reads them at its next wake, timed by the kernel's receive
     * timestamps (transport.c's stamped row, rt_off_ns: CLOCK_REALTIME - CLOCK_MONOTONIC, taken
     * once per wake, at rt_off_wake); off for good when a read came without its timestamp */
    bool defer_reads;
    bool events_seen; /* a response was timed as events: reads are prompt from then on */
    int64_t rt_off_ns;
    uint64_t rt_off_wake;
};

struct ival_slot {
    bool used;
    uint64_t index;
    uint64_t end_ns; /* latest end reported for this interval */
    struct hdr *lat; /* per target */
    struct ival_counts c;
    struct ival_live l;
    uint64_t inflight, queued;
    uint64_t max_ns;
    struct run_stream *stream; /* per target: the interval's first events and gaps (allocated on first use) */
};

struct engine {
    const struct run_config *cfg;
    struct run_stop *stop; /* cfg->stop, or the run's own handle; level: 1 drain, 2 cancel */
    size_t nt;
    struct engine_target *targets;
    struct plan_share *shares; /* per target, this shard's part of the plan (plan_shares) */
    uint32_t nworkers;
    struct worker *workers;
    uint64_t t0_ns;
    uint64_t warmup_end_ns;
    uint64_t plan_end_ns;   /* t0 + duration (UINT64_MAX with --requests) */
    uint64_t window_end_ns; /* end of the measurement window */
    uint64_t cutoff_ns;     /* duration runs: planned requests not sent by plan end + drain are dropped */
    uint64_t tick_extra[2]; /* interval edges inside a second: the window's start and end (ns since t0) */
    int ntick_extra;
    uint64_t timeout_ns, drain_ns, spin_ns, lag_limit_ns;
    uint64_t timer_slack_ns; /* --timer-slack (0: none); "sent on schedule" allows it on top of lag_limit_ns */
    bool timer_slack_auto;   /* --timer-slack auto: each thread's slack follows its service times
                                (timer_slack_ns is then their bound, RUN_AUTO_SLACK_MAX_NS) */
    enum run_io io;          /* the engine chosen (RUN_IO_EPOLL or RUN_IO_URING) */
    /* deferred reads (worker.c worker_hold): the open loop on epoll, where every connection is
     * cleartext HTTP/1.1 over TCP (the row that reads the kernel's receive timestamps), unless
     * --prompt-reads or --stream sse|chunks; deferred_off counts the threads that had to stop
     * (a read came without its timestamp) */
    bool defer_reads;
    atomic_uint deferred_off;
    atomic_uint ring_failed; /* load threads whose io_uring could not be set up (they ran epoll) */
    uint32_t pool_cap;
    uint32_t pool_asked; /* the pool asked for; pool_cap is less when descriptors ran short */
    uint64_t fd_limit;   /* RLIMIT_NOFILE after raising it */
    struct outlog *log;
    /* TLS and HTTP/2 */
    struct tls_ctx *tls;  /* the client context of https targets (NULL without one) */
    struct h3_tls *h3tls; /* --http3: the QUIC connections' trust (GnuTLS; NULL without --http3) */
    uint32_t rpc;        /* requests per connection: --requests-per-connection, 1 without keep-alive, else UINT32_MAX */
    uint32_t h2_streams; /* HTTP/2 streams per connection at most (--streams, else RUN_H2_DEFAULT_STREAMS) */
    uint32_t group_streams; /* closed loop: clients per connection (--streams, else 1) */
    /* interval merge */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct ival_slot slots[IVAL_SLOTS];
    uint64_t *published; /* per worker: intervals published so far */
    bool *done;          /* per worker: finished (no more intervals) */
    /* the start gate (under mu, signalled on cv): every started worker checks in when its
     * connections are open; main then sets t0 and opens the gate, or aborts the start */
    uint32_t nready;
    bool go, aborted;
    struct rusage ru0; /* the process's resource use when the threads started */
    /* the generator's own CPU (run_generator_cpu): each load thread's, written by that thread
     * at its end; the caller's thread from ru0's time; wall time from then */
    struct run_generator_cpu *worker_cpu;
    struct run_generator_cpu main_cpu0, log_cpu;
    uint64_t cpu_wall0_ns;
    /* run_config.refused_end_ns (engine.c, on the merging thread): every completion so far was a
     * refused connection (armed until one is not); refused_end: the run was ended for it */
    bool refused_armed, refused_end;
    uint64_t refused_seen;
    atomic_int self_stop; /* 1: the engine itself stopped planning (the workers read it as a stop level) */
    struct live *live;    /* run_config.on_live: the threads' totals for it (live.c); NULL without */
    /* How connections are made (route.c, proxy.c): the proxy (NULL: none) and its address, the
     * source addresses (nlocal 0: the kernel's), and each thread's least gap between two new
     * connections (--connect-rate: threads / rate; 0: no limit) */
    struct net_proxy *proxy;
    struct net_addr proxy_addr;
    struct net_addr *local;
    size_t nlocal;
    uint64_t connect_gap_ns;
    /* per-entry tables (entries.c): the file's entries labelled, how many, and whether the file
     * was streamed (then none) */
    struct run_entries ents;
    size_t nent;
    bool ent_streamed;
};

/* engine.c, called by the workers */
/* Check in at the start gate and wait for it to open: true when the run starts (t0_ns is set),
 * false when the engine aborted the start (a thread could not be created). */
bool engine_start_gate(struct engine *e);
/* Hand this thread's interval `w->tick_index` (ending at end_ns) to the engine's merge; waits
 * only when the main thread is IVAL_SLOTS intervals behind. */
void engine_publish(struct worker *w, uint64_t end_ns);
/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), ns; 0 when it cannot be read. */
uint64_t engine_thread_cpu_ns(void);
/* The timeline's intervals: whole seconds since t0, also cut at the window's start and end
 * (tick_extra). The end of interval k (ns since t0), and the interval holding t (ns since t0). */
uint64_t engine_tick_end(const struct engine *e, uint64_t k);
uint64_t engine_tick_of(const struct engine *e, uint64_t t);

/* validate.c: the I/O engine the threads run (e->io): io_uring where it was asked for (or
 * auto prefers it) and applies (the closed loop, cleartext HTTP/1.1) and this process may set
 * up a ring; else epoll. An explicit --io uring the kernel refuses is KNEE_EINVAL. */
int choose_io(struct engine *e, const struct run_config *cfg, bool any_tls, char *err, size_t errlen);

/* result.c: struct run_record from the engine's parts (on the thread of run_execute) */
/* The environment record's start half (version, kernel, host, CPUs, load, wall clock). */
void result_env_begin(struct run_env *env);
/* Allocate res->targets and res->all, with each target's name, URL, address and plan. */
void result_begin(struct run_record *res, const struct engine *e);
/* After the workers are joined: merge their totals into res, finish the environment record,
 * then record_finish (window, rates, identities, verdict, warnings: src/record). */
void result_finish(struct engine *e, struct run_record *res);

/* live.c: run_config.on_live. Each thread copies its own totals (counts, its HdrHistograms'
 * recorded ranges) when it publishes an interval (outside the lock) and posts the copy (a
 * pointer swap, inside); at each merge the main thread takes the posts (a swap under the lock)
 * and, outside it, sums them and converts the histograms to classic and native ones. */
struct live;
/* Check cfg's live bounds and allocate for e's threads and targets (e->live stays NULL
 * without cfg->on_live). 0 or KNEE_EINVAL with a reason. */
int live_init(struct engine *e, char *err, size_t errlen);
void live_release(struct engine *e);
/* On worker w's thread, before engine_publish takes the lock: its totals now, copied (no
 * conversion; allocates only when a histogram's recorded range is wider than ever before). */
void live_snapshot(struct worker *w);
/* Under e->mu, in engine_publish: hand the snapshot over (swaps two pointers). */
void live_post(struct worker *w);
/* On the main thread after each merged interval (takes e->mu for the swaps only; converts and
 * calls on_live outside it), and once at the end with the result (final: its generator-limited
 * verdict). */
void live_tick(struct engine *e, double elapsed_s);
void live_final(struct engine *e, const struct run_record *res);

/* The calling thread's CPU time so far (getrusage RUSAGE_THREAD; wall_s and threads 0). */
void thread_cpu_now(struct run_generator_cpu *c);
/* *out = the calling thread's CPU since `from` (a thread_cpu_now of the same thread), threads 1. */
void thread_cpu_since(const struct run_generator_cpu *from, struct run_generator_cpu *out);

/* route.c: how connections are made (--proxy, --local-address, --connect-rate). route_validate:
 * the flags' syntax, no network (run_validate); route_prepare: the proxy resolved and each
 * target's CONNECT request or absolute-form origin, the source addresses parsed, test-bound and
 * checked against the destinations' family (KNEE_EINVAL or KNEE_ENOTFOUND naming the flag);
 * route_pace_init: each thread's gap once the thread count is known; route_release: all of it
 * (safe after a failed prepare). */
int route_validate(const struct run_config *cfg, char *err, size_t errlen);
int route_prepare(struct engine *e, const struct run_config *cfg, char *err, size_t errlen);
void route_pace_init(struct engine *e, const struct run_config *cfg);
void route_release(struct engine *e);
/* entries.c: per-entry tables of a targets file held as a table. Before the threads: label the
 * file's entries (read again) and mark the targets that count them (e->nent 0: none). 0, or
 * KNEE_EINVAL with the reason. */
int entries_prepare(struct engine *e, char *err, size_t errlen);
void entries_release(struct engine *e);
/* After the threads: every thread's counts added into res->entries (labels copied), and the note
 * of a streamed file. */
void entries_collect(struct engine *e, struct run_record *res);

/* variant.c: a request source's serialisation for this run (engine.c, prepare_target): the
 * engine's keep-alive, Connection: close for the last request of a connection, HTTP/2. */
int variant_prepare(struct variant_source *s, bool keepalive, bool want_close, bool h2_able, char *err, size_t errlen);
/* worker.c (the request path's own declarations: load/worker.h) */
int worker_init(struct worker *w, struct engine *e, uint32_t index);
void worker_release(struct worker *w);
void *worker_main(void *arg);

/* outlog.c: the per-request log. Workers append records to a thread-owned chunk and hand
 * full chunks to a writer thread; nothing is formatted or written on the request path. */
#define OUTLOG_CHUNK_RECORDS 4096
/* A chunk goes to the writer early once its gaps pass this many (512 KiB, about its records'
 * own size), so the chunks in flight hold a bounded number of gaps, whatever the streams. */
#define OUTLOG_CHUNK_GAPS (1u << 16)
struct outlog_chunk {
    size_t n;
    struct outlog_chunk *next;
    /* A log with gaps (else NULL, 0): record i's ngap[i] gaps follow record i-1's in gaps[] */
    uint32_t *ngap;
    uint64_t *gaps;
    size_t gaps_used, gaps_cap;
    struct reqlog_record rec[OUTLOG_CHUNK_RECORDS];
};
/* The run's --out is a binary log that carries each request's gaps: --stream given, not off
 * (run_config.stream_gaps). */
bool outlog_wants_gaps(const struct run_config *cfg);
/* Append record n's gaps to c (grown as needed; c->ngap allocated on first use). */
void outlog_chunk_gaps(struct outlog_chunk *c, size_t n, const uint64_t *gaps, uint32_t ngaps);
int outlog_open(struct outlog **out, const char *path, const struct engine *e, char *err, size_t errlen);
/* A fresh chunk; blocks (and sets *slowed) only when the writer is far behind. */
struct outlog_chunk *outlog_take(struct outlog *l, bool *slowed);
/* Hand a chunk (full or final) to the writer. */
void outlog_submit(struct outlog *l, struct outlog_chunk *c);
/* Write everything submitted, close the file. Returns 0 or the first write error (-errno).
 * *cpu: the writer thread's CPU time over its life (thread_cpu_since). */
int outlog_close(struct outlog *l, struct run_generator_cpu *cpu);
/* The run did not happen: stop the writer, remove the file knee created (core/outfile). */
void outlog_abort(struct outlog *l);

#endif
