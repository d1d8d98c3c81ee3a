/* The remote-write flags and the glue between a metrics registry and the push thread
 * (cli/push_flags.h). */
#include "cli/push_flags.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/pb.h"
#include "core/units.h"
#include "metrics/metrics.h"
#include "push/push.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cli_push {
    struct push *push;
    struct metrics_registry *reg;
    const char *kv[PUSH_FLAGS_MAX_LABELS + 1]; /* shard first, then the user's (argv's memory) */
    size_t nkv;
    char *auth; /* the Authorization value: never printed */
    struct pb_buf pb;
    struct record_remote_write rw;
    bool ended;
};

struct opt push_flags_row(struct push_flags *f, enum push_flag_id id)
{
    switch (id) {
    case PUSH_FLAG_URL:
        return (struct opt){.name = "remote-write",
                            .kind = OPT_STR,
                            .dst = &f->url,
                            .metavar = "URL",
                            .help = "push the metrics to a Prometheus remote-write receiver (http[s]://HOST/api/v1/"
                                    "write) every --remote-write-interval and at the end, from a thread of its own"};
    case PUSH_FLAG_INTERVAL:
        return (struct opt){.name = "remote-write-interval",
                            .kind = OPT_DURATION,
                            .dst = &f->interval_ns,
                            .metavar = "D",
                            .help = "time between pushes (default 5s)",
                            .unit_ns = NS_PER_S};
    case PUSH_FLAG_TIMEOUT:
        return (struct opt){.name = "remote-write-timeout",
                            .kind = OPT_DURATION,
                            .dst = &f->timeout_ns,
                            .metavar = "D",
                            .help = "one push at most, and the final flush's whole wait at the end (default 5s)",
                            .unit_ns = NS_PER_S};
    case PUSH_FLAG_LABEL:
        return (struct opt){.name = "remote-write-label",
                            .kind = OPT_LIST,
                            .dst = &f->labels,
                            .metavar = "K=V",
                            .help = "a label added to every pushed series (repeatable; a shard adds shard=I itself)"};
    case PUSH_FLAG_AUTH_FILE:
        return (struct opt){.name = "remote-write-auth-file",
                            .kind = OPT_STR,
                            .dst = &f->auth_file,
                            .metavar = "FILE",
                            .help = "credentials for the receiver: one line 'bearer TOKEN' or 'basic USER:PASSWORD' "
                                    "(never printed nor recorded)"};
    case PUSH_FLAG_REQUIRED:
    case PUSH_FLAG_COUNT:
        break;
    }
    return (struct opt){.name = "remote-write-required",
                        .kind = OPT_FLAG,
                        .dst = &f->required,
                        .help = "exit 1 when not one push was accepted (otherwise a warning)"};
}

int push_flags_check(const struct push_flags *f, const struct cmd_spec *spec)
{
    char err[512];
    if (!f->url) {
        const char *other = f->interval_ns  ? "--remote-write-interval"
                            : f->timeout_ns ? "--remote-write-timeout"
                            : f->labels.n   ? "--remote-write-label"
                            : f->auth_file  ? "--remote-write-auth-file"
                            : f->required   ? "--remote-write-required"
                                            : NULL;
        return other ? opt_fail(spec, "%s: needs --remote-write URL", other) : 0;
    }
    if (push_url_check(f->url, err, sizeof err))
        return opt_fail(spec, "--remote-write: %s", err);
    for (size_t i = 0; i < spec->nopts; i++) { /* 0 stands for the default only when not given */
        const struct opt *o = &spec->opts[i];
        bool dur = o->dst == &f->interval_ns || o->dst == &f->timeout_ns;
        if (dur && o->seen && *(const uint64_t *)o->dst == 0)
            return opt_fail(spec, "--%s: must be above 0", o->name);
    }
    if (f->labels.n > PUSH_FLAGS_MAX_LABELS)
        return opt_fail(spec, "--remote-write-label: at most %d labels", PUSH_FLAGS_MAX_LABELS);
    for (size_t i = 0; i < f->labels.n; i++) {
        size_t eq;
        if (push_label_check(f->labels.v[i], &eq, err, sizeof err))
            return opt_fail(spec, "--remote-write-label %s", err);
        for (size_t k = 0; k < i; k++)
            if (strncmp(f->labels.v[k], f->labels.v[i], eq + 1) == 0)
                return opt_fail(spec, "--remote-write-label: '%.*s' given twice", (int)eq, f->labels.v[i]);
    }
    if (f->auth_file) {
        char *h = NULL;
        int rc = push_auth_load(f->auth_file, &h, err, sizeof err);
        free(h);
        if (rc)
            return opt_fail(spec, "--remote-write-auth-file %s", err);
    }
    return 0;
}

void push_flags_release(struct push_flags *f)
{
    strlist_release(&f->labels);
}

static int render(void *ctx, int64_t ts_ms, const uint8_t **data, size_t *len, char *err, size_t errlen)
{
    struct cli_push *cp = ctx;
    pb_buf_reset(&cp->pb);
    int rc = metrics_render_remote_write(cp->reg, cp->kv, cp->nkv, ts_ms, &cp->pb, err, errlen);
    *data = cp->pb.data;
    *len = cp->pb.len;
    return rc;
}

int cli_push_start(const struct push_flags *f, const struct cmd_spec *spec, struct metrics_registry *reg,
                   const char *shard_kv, struct cli_push **out)
{
    *out = NULL;
    if (!f->url)
        return 0;
    int rc = push_flags_check(f, spec);
    if (rc)
        return rc;
    struct cli_push *cp = xcalloc(1, sizeof *cp);
    cp->reg = reg;
    if (shard_kv)
        cp->kv[cp->nkv++] = shard_kv;
    for (size_t i = 0; i < f->labels.n; i++)
        cp->kv[cp->nkv++] = f->labels.v[i];
    pb_buf_init(&cp->pb);
    char err[512];
    if (f->auth_file && push_auth_load(f->auth_file, &cp->auth, err, sizeof err)) {
        cli_push_free(cp);
        return opt_fail(spec, "--remote-write-auth-file %s", err);
    }
    /* One rendering now: a label that clashes with a family's own fails here, as bad input,
     * rather than every push later. */
    const uint8_t *d;
    size_t n;
    if (render(cp, 0, &d, &n, err, sizeof err)) {
        cli_push_free(cp);
        return opt_fail(spec, "--remote-write-label: %s", err);
    }
    struct push_config pc = {.url = f->url,
                             .auth_header = cp->auth,
                             .interval_ns = f->interval_ns ? f->interval_ns : PUSH_INTERVAL_DEFAULT_NS,
                             .timeout_ns = f->timeout_ns ? f->timeout_ns : PUSH_TIMEOUT_DEFAULT_NS,
                             .render = render,
                             .render_ctx = cp};
    rc = push_start(&pc, &cp->push, err, sizeof err);
    if (rc) {
        knee_report(stderr, "", "knee %s: --remote-write: %s", spec->name, err);
        cli_push_free(cp);
        return rc == KNEE_EINVAL ? 2 : 1;
    }
    struct record_remote_write *rw = &cp->rw;
    rw->set = true;
    rw->required = f->required;
    snprintf(rw->url, sizeof rw->url, "%s", f->url);
    char d1[32];
    fprintf(stderr, "remote-write to %s every %s\n", f->url, units_fmt_duration(pc.interval_ns, d1, sizeof d1));
    *out = cp;
    return 0;
}

void cli_push_end(struct cli_push *cp, struct record_remote_write *rw)
{
    if (!cp) {
        memset(rw, 0, sizeof *rw);
        return;
    }
    if (!cp->ended) {
        struct push_stats st;
        push_finish(cp->push, &st);
        cp->push = NULL;
        cp->ended = true;
        struct record_remote_write *w = &cp->rw;
        w->pushes = st.pushes;
        w->ok = st.ok;
        w->failed = st.failed;
        w->retried = st.retried;
        w->dropped = st.dropped;
        w->bytes = st.bytes;
        snprintf(w->last_error, sizeof w->last_error, "%s", st.last_error);
    }
    *rw = cp->rw;
}

void cli_push_free(struct cli_push *cp)
{
    if (!cp)
        return;
    push_finish(cp->push, NULL);
    pb_buf_release(&cp->pb);
    free(cp->auth);
    free(cp);
}

bool cli_push_failed_required(const struct record_remote_write *rw)
{
    return rw->set && rw->required && rw->ok == 0;
}

void cli_push_warn(const struct record_remote_write *rw, struct warn_list *w)
{
    if (!rw->set || (rw->failed == 0 && rw->dropped == 0))
        return;
    char drop[64] = "";
    if (rw->dropped)
        snprintf(drop, sizeof drop, ", %llu dropped (queue full)", (unsigned long long)rw->dropped);
    warn_add(w, true, "remote-write: %llu of %llu pushes failed%s%s; last error: %s%s", (unsigned long long)rw->failed,
             (unsigned long long)rw->pushes, drop, rw->ok ? "" : " (not one accepted)",
             rw->last_error[0] ? rw->last_error : "none",
             cli_push_failed_required(rw) ? " (--remote-write-required: exit 1)" : "");
    if (cli_push_failed_required(rw) && w->n > 1) { /* said first: it decides the exit code */
        char *last = w->items[w->n - 1];
        memmove(w->items + 1, w->items, (w->n - 1) * sizeof *w->items);
        w->items[0] = last;
    }
}
