/* The lab's plumbing: options, the per-experiment context (temporary directory for request
 * logs, --out), servers started in-process, one round of load run in-process and read back
 * into memory, and the small helpers over a round. The experiments are exp_*.c; the table
 * that runs them by name is registry.c. */
#include "lab/internal.h"

#include "core/err.h"
#include "core/grow.h"
#include "core/outfile.h"
#include "reqlog/reqlog.h"
#include "runreport/runreport.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A round's log holds one record per planned request; the lab's biggest round (B at 550/s
 * for a few minutes) is far below this, which only guards memory against a runaway plan. */
#define LAB_MAX_RECORDS (50u * 1000u * 1000u)

/* The stop handle of every round (a zeroed static handle is initialised): a request ends the
 * round in progress and stays, so no further round starts. */
static struct run_stop lab_stop;

void lab_request_stop(void)
{
    run_stop_request(&lab_stop, false);
}

bool lab_stopped(void)
{
    return run_stop_level(&lab_stop) > 0;
}

void lab_options_init(struct lab_options *o)
{
    memset(o, 0, sizeof *o);
    o->warmup_ns = UINT64_MAX;
    o->seed = 1;
}

/* mkdir -p for --out: every missing component is created. */
static int make_dirs(const char *path)
{
    char buf[LAB_PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return KNEE_EINVAL;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -errno;
        buf[i] = saved;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int lab_ctx_init(struct lab_ctx *c, const struct lab_options *o, const char *experiment)
{
    memset(c, 0, sizeof *c);
    c->o = o;
    c->out = o->out ? o->out : stdout;
    c->err = o->err ? o->err : stderr;
    c->experiment = experiment;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    int n = snprintf(c->tmpdir, sizeof c->tmpdir, "%s/knee-lab-XXXXXX", tmp);
    if (n < 0 || (size_t)n >= sizeof c->tmpdir || !mkdtemp(c->tmpdir)) {
        int e = n < 0 || (size_t)n >= sizeof c->tmpdir ? ENAMETOOLONG : errno;
        fprintf(c->err, "knee lab: cannot create a temporary directory under %s: %s\n", tmp, strerror(e));
        c->tmpdir[0] = '\0';
        return -e;
    }
    if (o->out_dir) {
        int rc = make_dirs(o->out_dir);
        if (rc) {
            fprintf(c->err, "knee lab: --out %s: %s\n", o->out_dir, knee_strerror(rc));
            lab_ctx_release(c);
            return rc;
        }
    }
    return 0;
}

void lab_ctx_release(struct lab_ctx *c)
{
    if (!c->tmpdir[0])
        return;
    /* The directory is ours (mkdtemp, mode 0700) and every round removes its own logs; what a
     * failed round left behind is removed only when it has the name of a log the lab writes
     * (<experiment>-<round>.raw or .bin, a regular file), never anything else put there. */
    DIR *d = opendir(c->tmpdir);
    if (d) {
        struct dirent *e;
        char path[LAB_PATH_MAX + 256];
        size_t pre = strlen(c->experiment);
        while ((e = readdir(d)) != NULL) {
            size_t n = strlen(e->d_name);
            bool ours = n > pre + 5 && strncmp(e->d_name, c->experiment, pre) == 0 && e->d_name[pre] == '-' &&
                        (strcmp(e->d_name + n - 4, ".raw") == 0 || strcmp(e->d_name + n - 4, ".bin") == 0);
            struct stat st;
            snprintf(path, sizeof path, "%s/%s", c->tmpdir, e->d_name);
            if (ours && lstat(path, &st) == 0 && S_ISREG(st.st_mode))
                unlink(path);
        }
        closedir(d);
    }
    rmdir(c->tmpdir);
    c->tmpdir[0] = '\0';
}

int lab_server_start(struct lab_ctx *c, const struct serve_config *cfg, struct serve_handle **h)
{
    char why[256];
    int rc = serve_config_check(cfg, why, sizeof why);
    if (rc == 0)
        rc = serve_start(cfg, h);
    else
        fprintf(c->err, "knee lab: server %s: %s\n", cfg->preset, why);
    if (rc && rc != KNEE_EINVAL)
        fprintf(c->err, "knee lab: server %s on %s: %s\n", cfg->preset, cfg->listen, knee_strerror(rc));
    return rc;
}

int lab_preset_start(struct lab_ctx *c, const char *preset, uint64_t seed, struct serve_config *cfg,
                     struct serve_handle **h)
{
    serve_preset(preset, cfg);
    cfg->seed = seed;
    return lab_server_start(c, cfg, h);
}

int lab_exp_open(struct lab_exp *x, const struct lab_options *o, const char *experiment, const struct lab_lengths *len)
{
    memset(x, 0, sizeof *x);
    int rc = lab_ctx_init(&x->c, o, experiment);
    if (rc)
        return rc;
    x->dur_ns = lab_duration_ns(o, len->quick_ns, len->default_ns);
    x->warm_ns = lab_warmup_ns(o, len->warm_quick_ns, len->warm_default_ns);
    x->out = x->c.out;
    return 0;
}

int lab_exp_preset(struct lab_exp *x, const char *preset, uint64_t seed, struct serve_config *cfg)
{
    if (x->nsrv == LAB_EXP_SERVERS)
        return KNEE_ERANGE;
    return lab_preset_start(&x->c, preset, seed, cfg, &x->srv[x->nsrv++]);
}

int lab_exp_server(struct lab_exp *x, const struct serve_config *cfg)
{
    if (x->nsrv == LAB_EXP_SERVERS)
        return KNEE_ERANGE;
    return lab_server_start(&x->c, cfg, &x->srv[x->nsrv++]);
}

void lab_exp_close(struct lab_exp *x)
{
    lab_round_release(&x->rd);
    for (size_t i = 0; i < x->nsrv; i++)
        serve_stop(x->srv[i], NULL);
    lab_ctx_release(&x->c);
}

static int cmp_planned(const void *a, const void *b)
{
    const struct reqlog_record *x = a, *y = b;
    if (x->planned_ns != y->planned_ns)
        return (x->planned_ns > y->planned_ns) - (x->planned_ns < y->planned_ns);
    return (x->target > y->target) - (x->target < y->target);
}

/* DIR/<exp>-<round>.<ext> for --out, opened through core/outfile: an existing file is
 * replaced only when the new one is complete, a device or FIFO is written in place, and a
 * failure removes only the temporary file knee made. 0, or -errno (message printed). */
static int open_out(struct lab_ctx *c, const char *round, const char *ext, struct outfile *o)
{
    char path[LAB_PATH_MAX + 128], why[LAB_PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s-%s.%s", c->o->out_dir, c->experiment, round, ext);
    int rc = outfile_open(o, path, why, sizeof why);
    if (rc)
        knee_report(c->err, "knee lab: --out: ", "%s", why);
    return rc;
}

/* Commit an --out file (or give it up when rc says the content is not whole). 0 or the
 * first error (message printed). */
static int close_out(struct lab_ctx *c, struct outfile *o, int rc)
{
    if (!o->f)
        return rc;
    if (rc) {
        outfile_abort(o);
        return rc;
    }
    char why[LAB_PATH_MAX + 256];
    int e = outfile_commit(o, why, sizeof why);
    if (e)
        knee_report(c->err, "knee lab: --out: ", "%s", why);
    return e;
}

/* Every record of the run's log into *rec (heap, grown up to LAB_MAX_RECORDS; *rec may be
 * non-NULL even on error, the caller frees it), *n of them. 0 or a negative code (printed). */
static int read_records(struct lab_ctx *c, struct reqlog_reader *rd, const struct lab_round *r,
                        struct reqlog_record **rec, size_t *n)
{
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n == cap) {
            if (*n == LAB_MAX_RECORDS) {
                fprintf(c->err, "knee lab: round %s: more than %u requests; shorten --duration\n", r->name,
                        LAB_MAX_RECORDS);
                return KNEE_ETOOBIG;
            }
            *rec = grow_array(*rec, &cap, *n + 1, sizeof **rec, 4096);
        }
        int rc = reqlog_read(rd, &(*rec)[*n]);
        if (rc == 0)
            return 0;
        if (rc < 0) {
            fprintf(c->err, "knee lab: round %s: request log record %llu: %s\n", r->name,
                    (unsigned long long)reqlog_reader_record_index(rd), reqlog_reader_error(rd));
            return rc;
        }
        (*n)++;
    }
}

/* The run's log holds records in completion order per thread. Read them all, sort them by
 * planned send (the article's CSV is sorted by start_s, and the ten 100-request windows
 * mean consecutive planned requests), then write them back as the round's log (what the
 * `knee stats` analysis reads), as CSV with --out, and as the in-memory lab_req array. */
static int read_log(struct lab_ctx *c, const char *raw, struct lab_round *r)
{
    char why[256] = "";
    struct reqlog_reader *rd = NULL;
    struct reqlog_writer *wr = NULL;
    struct reqlog_record *rec = NULL;
    struct outfile csv = {.f = NULL, .fd = -1};
    const char **names = NULL;
    size_t n = 0;
    int rc = reqlog_reader_open(&rd, raw, why, sizeof why);
    if (rc) {
        fprintf(c->err, "knee lab: round %s: cannot read its request log: %s\n", r->name,
                why[0] ? why : knee_strerror(rc));
        return rc;
    }
    if ((rc = read_records(c, rd, r, &rec, &n)) != 0)
        goto out;
    qsort(rec, n, sizeof *rec, cmp_planned);

    size_t nt = reqlog_reader_ntargets(rd);
    names = xcalloc(nt ? nt : 1, sizeof *names);
    for (size_t i = 0; i < nt; i++)
        names[i] = reqlog_reader_target(rd, i);
    rc = reqlog_writer_open(&wr, r->log_path, names, nt,
                            reqlog_reader_closed_loop(rd) ? REQLOG_HEADER_FLAG_CLOSED_LOOP : 0);
    if (rc) {
        fprintf(c->err, "knee lab: round %s: cannot write %s: %s\n", r->name, r->log_path, knee_strerror(rc));
        goto out;
    }
    if (c->o->out_dir) {
        if ((rc = open_out(c, r->name, "csv", &csv)) != 0)
            goto out;
        fputs(REQLOG_CSV_HEADER "\n", csv.f);
    }
    r->req = xmalloc((n ? n : 1) * sizeof *r->req);
    for (size_t i = 0; i < n; i++) {
        if ((rc = reqlog_write(wr, &rec[i])) != 0) {
            fprintf(c->err, "knee lab: round %s: writing %s: %s\n", r->name, r->log_path, knee_strerror(rc));
            goto out;
        }
        struct reqlog_derived d;
        reqlog_derive(&rec[i], &d);
        struct lab_req *q = &r->req[r->nreq++];
        q->start_s = d.start_s;
        q->latency_ms = d.latency_ms;
        q->service_ms = d.service_ms;
        q->lag_ms = d.lag_ms;
        q->target = rec[i].target;
        q->outcome = rec[i].outcome;
        q->warmup = (rec[i].flags & REQLOG_FLAG_WARMUP) != 0;
        if (csv.f) {
            char line[1024];
            size_t k = reqlog_format_csv(&rec[i], names[rec[i].target], line, sizeof line);
            if (k < sizeof line)
                fputs(line, csv.f);
        }
    }
    rc = 0;
out:
    rc = close_out(c, &csv, rc);
    if (wr) {
        int wrc = reqlog_writer_close(wr);
        if (wrc && rc == 0) {
            fprintf(c->err, "knee lab: round %s: writing %s: %s\n", r->name, r->log_path, knee_strerror(wrc));
            rc = wrc;
        }
    }
    free(names);
    free(rec);
    reqlog_reader_close(rd);
    return rc;
}

uint64_t lab_duration_ns(const struct lab_options *o, uint64_t quick_ns, uint64_t default_ns)
{
    if (o->duration_ns)
        return o->duration_ns;
    return o->quick ? quick_ns : default_ns;
}

uint64_t lab_warmup_ns(const struct lab_options *o, uint64_t quick_ns, uint64_t default_ns)
{
    if (o->warmup_ns != UINT64_MAX)
        return o->warmup_ns;
    return o->quick ? quick_ns : default_ns;
}

void lab_run_config_init(struct run_config *cfg, struct plan_target *targets, size_t ntargets, uint64_t seed,
                         uint64_t duration_ns, uint64_t warmup_ns)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->plan.targets = targets;
    cfg->plan.ntargets = ntargets;
    cfg->plan.seed = seed;
    cfg->plan.duration_ns = duration_ns + warmup_ns;
    cfg->plan.warmup_ns = warmup_ns;
    cfg->timeout_ns = RUN_DEFAULT_TIMEOUT_NS;
    cfg->drain_ns = RUN_DEFAULT_TIMEOUT_NS;
    cfg->keepalive = true;
    cfg->threads = LAB_LOAD_THREADS;
}

/* Progress during a round (lab_options.live): run_execute calls live_progress once a second.
 * On a terminal one line is rewritten in place with \r and padded with spaces over the
 * previous one (no escape sequences); elsewhere, when asked, a plain line every
 * LAB_LIVE_LINE_S seconds. The state is static: the lab runs one round at a time. */
static struct {
    FILE *err;
    enum lab_live mode;
    size_t last_len;
    double next_line_s;
} live;

static void live_progress(void *ctx, const struct run_progress *p)
{
    (void)ctx;
    char line[256], tot[32] = "", p99[32] = "-";
    if (p->total_s > 0)
        snprintf(tot, sizeof tot, " of %.0f", p->total_s);
    if (!isnan(p->p99_ms))
        snprintf(p99, sizeof p99, "%.1f", p->p99_ms);
    double len = p->length_s > 0 ? p->length_s : 1;
    int n = snprintf(line, sizeof line, "  %.0f s%s: sent %.0f/s, done %.0f/s, in flight %llu, p99 %s ms, errors %llu",
                     p->elapsed_s, tot, (double)p->sent / len, (double)p->completed / len,
                     (unsigned long long)p->in_flight, p99, (unsigned long long)p->errors);
    if (n < 0)
        return;
    size_t k = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (live.mode == LAB_LIVE_TTY) {
        fprintf(live.err, "\r%s%*s", line, live.last_len > k ? (int)(live.last_len - k) : 0, "");
        live.last_len = k;
    } else if (p->elapsed_s + 1e-9 >= live.next_line_s) {
        fprintf(live.err, "%s\n", line);
        while (live.next_line_s <= p->elapsed_s + 1e-9)
            live.next_line_s += LAB_LIVE_LINE_S;
    }
    fflush(live.err);
}

static void live_start(struct lab_ctx *c, struct run_config *cfg)
{
    live.err = c->err;
    live.mode = c->o->live;
    live.last_len = 0;
    live.next_line_s = LAB_LIVE_LINE_S;
    cfg->on_progress = live.mode == LAB_LIVE_OFF ? NULL : live_progress;
    cfg->progress_ctx = NULL;
}

/* Clear the terminal's live line, so what follows starts on a clean line. */
static void live_end(void)
{
    if (live.mode == LAB_LIVE_TTY && live.last_len) {
        fprintf(live.err, "\r%*s\r", (int)live.last_len, "");
        fflush(live.err);
    }
    live.last_len = 0;
}

int lab_round_run(struct lab_ctx *c, const char *name, const char *what, struct run_config *cfg, struct lab_round *r)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    if (lab_stopped())
        return -EINTR;
    char raw[LAB_PATH_MAX + 64];
    snprintf(raw, sizeof raw, "%s/%s-%s.raw", c->tmpdir, c->experiment, name);
    snprintf(r->log_path, sizeof r->log_path, "%s/%s-%s.bin", c->tmpdir, c->experiment, name);
    cfg->out_path = raw;
    if (c->o->progress) {
        fprintf(c->err, "knee lab %s: %s\n", c->experiment, what);
        fflush(c->err);
    }
    live_start(c, cfg);
    char why[256] = "";
    cfg->stop = &lab_stop;
    int rc = run_execute(cfg, &r->res, why, sizeof why);
    cfg->out_path = NULL;
    if (rc) {
        fprintf(c->err, "knee lab: round %s: %s\n", name, why[0] ? why : knee_strerror(rc));
        unlink(raw);
        return rc;
    }
    r->have_res = true;
    lab_cpu_note(c, name, &r->res);
    live_end();
    rc = read_log(c, raw, r);
    unlink(raw);
    if (rc)
        return rc;
    if (c->o->out_dir) {
        struct outfile f;
        if ((rc = open_out(c, name, "json", &f)) != 0)
            return rc;
        record_write_json(f.f, &r->res, true);
        if ((rc = close_out(c, &f, 0)) != 0)
            return rc;
    }
    if (r->res.interrupted || lab_stopped())
        return -EINTR;
    return 0;
}

void lab_round_release(struct lab_round *r)
{
    if (r->log_path[0])
        unlink(r->log_path);
    if (r->have_res)
        record_release(&r->res);
    free(r->req);
    memset(r, 0, sizeof *r);
}

/* ---- small helpers shared by the experiments ---- */

double *lab_values(const struct lab_round *r, size_t target, int outcome, enum lab_col col, size_t *n)
{
    double *v = xmalloc((r->nreq ? r->nreq : 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < r->nreq; i++) {
        const struct lab_req *q = &r->req[i];
        if (q->warmup || (target != LAB_ALL_TARGETS && q->target != target))
            continue;
        if (outcome >= 0 && q->outcome != outcome)
            continue;
        double x = col == LAB_COL_LATENCY ? q->latency_ms : col == LAB_COL_SERVICE ? q->service_ms : q->lag_ms;
        if (isnan(x))
            continue;
        v[k++] = x;
    }
    *n = k;
    return v;
}

double *lab_sorted_copy(const double *v, size_t n)
{
    double *s = xmalloc((n ? n : 1) * sizeof *s);
    if (n)
        memcpy(s, v, n * sizeof *s);
    stats_sort(s, n);
    return s;
}

void lab_summarize(const double *v, size_t n, struct summary *out)
{
    double *s = lab_sorted_copy(v, n);
    stats_summarize(s, n, out);
    free(s);
}

void lab_summarize_values(const struct lab_round *r, size_t target, int outcome, enum lab_col col, struct summary *out)
{
    size_t n;
    double *v = lab_values(r, target, outcome, col, &n);
    lab_summarize(v, n, out);
    free(v);
}

double lab_percentile(const struct lab_round *r, size_t target, int outcome, enum lab_col col, double p)
{
    size_t n;
    double *v = lab_values(r, target, outcome, col, &n);
    stats_sort(v, n);
    double x = n ? stats_nearest_rank(v, n, p) : NAN;
    free(v);
    return x;
}

const struct run_rates *lab_rates(const struct lab_round *r, size_t target)
{
    return target == LAB_ALL_TARGETS ? &r->res.all.rates : &r->res.targets[target].rates;
}

uint64_t lab_count_at_least(const double *v, size_t n, double threshold)
{
    uint64_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += v[i] >= threshold;
    return k;
}

const struct hdr *lab_server_timing(const struct run_record *res, size_t target, const char *name)
{
    const struct run_target_result *t = target == LAB_ALL_TARGETS ? &res->all : &res->targets[target];
    for (size_t i = 0; i < t->nst; i++)
        if (strcmp(t->st[i].name, name) == 0)
            return &t->st[i].dur;
    return NULL;
}

void lab_wilson95(uint64_t k, uint64_t n, double *lo, double *hi)
{
    if (n == 0) {
        *lo = *hi = NAN;
        return;
    }
    /* Wilson (1927): better coverage than p ± z·sqrt(p(1−p)/n) near 0 and 1, where the
     * share of slow pages lives for small N. */
    const double z = 1.959963984540054;
    double nn = (double)n, p = (double)k / nn, z2 = z * z;
    double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
    double half = z * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / (1 + z2 / nn);
    /* The bounds at k = 0 and k = n are exactly 0 and 1; rounding would leave ~1e-18. */
    *lo = k == 0 ? 0 : fmax(0, centre - half);
    *hi = k == n ? 1 : fmin(1, centre + half);
}
