/* knee model: queueing calculators (M/M/1, M/M/c, M/D/1, Little's law, fan-out, a rate
 * ladder) that print each prediction next to the formula it came from, as text or --json.
 * The mathematics lives in src/model; this file parses flags and lays out the output. */
#include "cli/commands.h"
#include "cli/opt.h"
#include "core/units.h"
#include "core/clock.h"
#include "core/err.h"
#include "model/model.h"
#include "core/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define LIST_MAX 1000        /* values in one --rates/--n/--percentiles list */
#define SERVERS_MAX 1000000u /* Erlang B is O(c); beyond this the input is a typo */
#define DEFAULT_PERCENTILES "50,90,95,99,99.9"

/* Option-table rows several calculators share. */
#define JSON_OPT(flag)                                                                                                 \
    {                                                                                                                  \
        .name = "json", .kind = OPT_FLAG, .dst = (flag), .help = "print one JSON object instead of text"               \
    }
#define RATE_OPT(rate, text)                                                                                           \
    {                                                                                                                  \
        .name = "rate", .short_name = 'r', .kind = OPT_RATE, .dst = (rate), .metavar = "R", .help = (text)             \
    }
#define SERVICE_OPT(service_ns, text)                                                                                  \
    {                                                                                                                  \
        .name = "service", .short_name = 's', .kind = OPT_DURATION, .dst = (service_ns), .metavar = "D",               \
        .help = (text), .unit_ns = NS_PER_MS                                                                           \
    }
#define MU_OPT(mu, text)                                                                                               \
    {                                                                                                                  \
        .name = "mu", .kind = OPT_RATE, .dst = (mu), .metavar = "R", .help = (text)                                    \
    }
#define SERVERS_OPT(servers, text)                                                                                     \
    {                                                                                                                  \
        .name = "servers", .short_name = 'c', .kind = OPT_COUNT, .dst = (servers), .metavar = "N", .help = (text)      \
    }
#define PERCENTILES_OPT(list)                                                                                          \
    {                                                                                                                  \
        .name = "percentiles", .kind = OPT_STR, .dst = (list), .metavar = "LIST",                                      \
        .help = "percentile levels to print (default " DEFAULT_PERCENTILES ")"                                         \
    }

/* ---- formatting ---------------------------------------------------------------------- */

static void put_padded(FILE *out, const char *s, int width)
{
    fputs(s, out);
    for (size_t w = units_text_width(s, strlen(s)); w < (size_t)width; w++)
        fputc(' ', out);
}

static void put_right(FILE *out, const char *s, int width)
{
    for (size_t w = units_text_width(s, strlen(s)); w < (size_t)width; w++)
        fputc(' ', out);
    fputs(s, out);
}

/* One line of a calculator: what it is, the formula it came from, the value. */
static void row(FILE *out, const char *what, const char *formula, const char *value)
{
    fputs("  ", out);
    put_padded(out, what, 16);
    fputs(" ", out);
    put_padded(out, formula, 26);
    fprintf(out, " %s\n", value);
}

/* row() with the value formatted as printf does. */
static void rowf(FILE *out, const char *what, const char *formula, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void rowf(FILE *out, const char *what, const char *formula, const char *fmt, ...)
{
    char value[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    row(out, what, formula, value);
}

/* A table column unit picked from a reference time (the service time), so every row of a
 * table uses the same unit, with enough decimals for 4 significant digits at that scale. */
struct col_unit {
    const char *name;
    double per_s;
    int decimals;
};

static struct col_unit col_unit_for(double ref_s)
{
    struct col_unit u = {"s", 1, 0};
    if (ref_s < 1e-3)
        u = (struct col_unit){"us", 1e6, 0};
    else if (ref_s < 1)
        u = (struct col_unit){"ms", 1e3, 0};
    double v = ref_s * u.per_s;
    int mag = v > 0 ? (int)floor(log10(v)) : 0;
    u.decimals = mag >= 3 ? 0 : 3 - mag;
    return u;
}

/* ---- parsing --------------------------------------------------------------------------- */

enum list_kind { LIST_RATE, LIST_COUNT, LIST_PERCENT, LIST_KIND_COUNT };

static int parse_item(enum list_kind kind, const char *tok, double *out)
{
    int r;
    if (kind == LIST_RATE)
        return units_parse_rate(tok, out);
    if (kind == LIST_COUNT) {
        uint64_t n;
        if ((r = units_parse_count(tok, &n)) != 0)
            return r;
        if (n == 0 || n > UINT32_MAX)
            return KNEE_ERANGE;
        *out = (double)n;
        return 0;
    }
    if ((r = units_parse_double(tok, out)) != 0)
        return r;
    return *out > 0 && *out < 100 ? 0 : KNEE_ERANGE;
}

/* A comma-separated list; "a,b,...,z" (or "…") continues the step b − a up to z, which is
 * included: "10,20,...,95" is 10, 20, …, 90, 95. Returns 0 or the exit code 2 after saying
 * what is wrong with which flag. */
static int parse_list(const struct cmd_spec *spec, const char *flag, const char *s, enum list_kind kind, double *out,
                      size_t *n)
{
    static const char *const what[] = {"a rate such as 70 or 70/s", "a whole number ≥ 1", "a percentile in (0, 100)"};
    _Static_assert(sizeof what / sizeof *what == LIST_KIND_COUNT, "what[] is indexed by enum list_kind");
    char *copy = xstrdup(s), *save = NULL;
    int rc = 0;
    bool pending_ellipsis = false;
    *n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "...") == 0 || strcmp(tok, "…") == 0) {
            if (*n < 2 || pending_ellipsis || out[*n - 1] <= out[*n - 2]) {
                rc = opt_fail(spec, "--%s: '...' needs two increasing values before it, as in 10,20,...,90", flag);
                goto out;
            }
            pending_ellipsis = true;
            continue;
        }
        double v;
        if (parse_item(kind, tok, &v) != 0) {
            rc = opt_fail(spec, "--%s: '%s' is not %s", flag, tok, what[kind]);
            goto out;
        }
        if (pending_ellipsis) {
            double first = out[*n - 1], step = out[*n - 1] - out[*n - 2];
            if (v <= first) {
                rc = opt_fail(spec, "--%s: the value after '...' (%s) must be above %g", flag, tok, first);
                goto out;
            }
            for (double i = 1;; i++) {
                double x = first + i * step;
                if (x >= v - 1e-9 * fabs(v))
                    break;
                if (*n >= LIST_MAX) {
                    rc = opt_fail(spec, "--%s: more than %d values", flag, LIST_MAX);
                    goto out;
                }
                out[(*n)++] = kind == LIST_COUNT ? round(x) : x;
            }
            pending_ellipsis = false;
        }
        if (*n >= LIST_MAX) {
            rc = opt_fail(spec, "--%s: more than %d values", flag, LIST_MAX);
            goto out;
        }
        out[(*n)++] = v;
    }
    if (pending_ellipsis)
        rc = opt_fail(spec, "--%s: '...' needs a last value after it, as in 10,20,...,90", flag);
    else if (*n == 0)
        rc = opt_fail(spec, "--%s: no values in '%s'", flag, s);
out:
    free(copy);
    return rc;
}

/* The service description shared by mm1, mmc, md1 and ladder: --service D or --mu R. */
struct service_args {
    uint64_t service_ns;
    double mu_per_s;
    double arrival_per_s;
};

static int need(const struct cmd_spec *spec, const char *name)
{
    const struct opt *o = opt_find(spec, name);
    if (o && !o->seen)
        return opt_fail(spec, "--%s is required (see knee %s --help)", name, spec->name);
    return 0;
}

/* Resolve --service/--mu into μ (per second). Returns 0 or exit code 2. */
static int service_rate(const struct cmd_spec *spec, struct service_args *a, double *mu_per_s)
{
    bool s = opt_find(spec, "service")->seen, m = opt_find(spec, "mu") && opt_find(spec, "mu")->seen;
    if (s && m)
        return opt_fail(spec, "--service and --mu describe the same thing: give one of them");
    if (!s && !m)
        return opt_fail(spec, "--service (or --mu) is required (see knee %s --help)", spec->name);
    if (s && a->service_ns == 0)
        return opt_fail(spec, "--service: must be more than 0");
    *mu_per_s = s ? 1e9 / (double)a->service_ns : a->mu_per_s;
    return 0;
}

/* The plain sentence for λ ≥ cμ, exit code 2. */
static int unstable(const struct cmd_spec *spec, double arrival_per_s, double capacity_per_s, unsigned servers)
{
    char cap[64] = "";
    if (servers > 1)
        snprintf(cap, sizeof cap, " (%u servers × %.4g/s)", servers, capacity_per_s / servers);
    return opt_fail(spec,
                    "unstable: arrival rate %.4g/s ≥ capacity %.4g/s%s, utilisation %.4g%% ≥ 100%%: the queue "
                    "grows without bound, so there is no steady state to predict",
                    arrival_per_s, capacity_per_s, cap, 100 * arrival_per_s / capacity_per_s);
}

static int model_error(const struct cmd_spec *spec, int r)
{
    return opt_fail(spec, "%s", knee_strerror(r));
}

/* The exit code for what a model returned: 0, the unstable sentence, or the error's message. */
static int model_status(const struct cmd_spec *spec, int r, double arrival_per_s, double capacity_per_s,
                        unsigned servers)
{
    if (r == KNEE_EUNSTABLE)
        return unstable(spec, arrival_per_s, capacity_per_s, servers);
    return r ? model_error(spec, r) : 0;
}

/* Parse a calculator's flags (calculators take no positional arguments). Returns true to go
 * on; false with *code the exit code (0 after --help, 2 after a usage error). */
static bool parse_flags(struct cmd_spec *spec, int argc, char **argv, int *code)
{
    struct strlist args = {0};
    int r = opt_parse(spec, argc, argv, &args);
    strlist_release(&args);
    *code = r == 1 ? 0 : r;
    return r == 0;
}

/* Every --json output: one pretty object on stdout that starts with "model". */
static void json_model_begin(struct jw *j, const char *model)
{
    jw_init(j, stdout, true);
    jw_object_begin(j);
    jw_kv_string(j, "model", model);
}

static void json_model_end(struct jw *j)
{
    jw_object_end(j);
    jw_end(j);
}

/* The fields M/M/c and M/D/1 share, in their order: rates, then means. */
static void json_rates(struct jw *j, unsigned servers, double arrival_per_s, double service_ms, double service_per_s)
{
    jw_kv_uint(j, "servers", servers);
    jw_kv_double(j, "arrival_rate_per_s", arrival_per_s);
    jw_kv_double(j, "service_ms", service_ms);
    jw_kv_double(j, "service_rate_per_s", service_per_s);
}

static void json_means(struct jw *j, double utilisation, double p_wait, double mean_wait_s, double mean_response_s,
                       double mean_in_queue, double mean_in_system)
{
    jw_kv_double(j, "utilisation", utilisation);
    jw_kv_double(j, "p_wait", p_wait);
    jw_kv_double(j, "mean_wait_ms", mean_wait_s * 1e3);
    jw_kv_double(j, "mean_response_ms", mean_response_s * 1e3);
    jw_kv_double(j, "mean_in_queue", mean_in_queue);
    jw_kv_double(j, "mean_in_system", mean_in_system);
}

/* ---- mm1 and mmc ------------------------------------------------------------------------ */

struct level_list {
    double q[LIST_MAX];
    size_t n;
};

static int parse_levels(const struct cmd_spec *spec, const char *s, struct level_list *l)
{
    int rc = parse_list(spec, "percentiles", s, LIST_PERCENT, l->q, &l->n);
    for (size_t i = 0; i < l->n; i++)
        l->q[i] /= 100;
    return rc;
}

/* The wait and response times (s) of each level of a list, as a model computed them; ok[i] is
 * false where it could not (only M/D/1, when ρ is too close to 1). */
struct level_times {
    double *wait_s, *response_s;
    bool *ok;
};

static void level_times_init(struct level_times *t, size_t n)
{
    t->wait_s = xcalloc(n ? n : 1, sizeof *t->wait_s);
    t->response_s = xcalloc(n ? n : 1, sizeof *t->response_s);
    t->ok = xcalloc(n ? n : 1, sizeof *t->ok);
}

static void level_times_release(struct level_times *t)
{
    free(t->wait_s);
    free(t->response_s);
    free(t->ok);
}

static void mmc_level_times(const struct model_mmc *m, const struct level_list *lv, struct level_times *t)
{
    level_times_init(t, lv->n);
    for (size_t i = 0; i < lv->n; i++) {
        model_mmc_wait_quantile(m, lv->q[i], &t->wait_s[i]);
        model_mmc_response_quantile(m, lv->q[i], &t->response_s[i]);
        t->ok[i] = true;
    }
}

/* The level table under every calculator's formulas; with times_T (M/M/1) each row also says
 * the response time as a multiple of the mean, −ln(1−q)·T. */
static void levels_text(FILE *out, const struct level_list *lv, const struct level_times *t, bool times_T)
{
    fprintf(out, "  %-16s %-14s %s\n", "level", "wait W", "response T");
    for (size_t i = 0; i < lv->n; i++) {
        char lvl[32], a[64], b[64];
        units_fmt_percentile(lv->q[i], lvl, sizeof lvl);
        if (!t->ok[i]) {
            fprintf(out, "  %-16s not computed: needs more than %u queue-length states (ρ too close to 1)\n", lvl,
                    MODEL_MD1_MAX_STATES);
            continue;
        }
        fprintf(out, "  %-16s %-14s %s", lvl, units_fmt_seconds(t->wait_s[i], 4, a, sizeof a),
                units_fmt_seconds(t->response_s[i], 4, b, sizeof b));
        if (times_T)
            fprintf(out, "  (%.4g·T)", -log1p(-lv->q[i]));
        fputc('\n', out);
    }
}

/* The "percentiles" array of every --json: level p (percent) and the two times in ms, null
 * where not computed. */
static void levels_json(struct jw *j, const struct level_list *lv, const struct level_times *t)
{
    jw_key(j, "percentiles");
    jw_array_begin(j);
    for (size_t i = 0; i < lv->n; i++) {
        jw_object_begin(j);
        jw_kv_double(j, "p", lv->q[i] * 100);
        jw_kv_double(j, "wait_ms", t->ok[i] ? t->wait_s[i] * 1e3 : NAN);
        jw_kv_double(j, "response_ms", t->ok[i] ? t->response_s[i] * 1e3 : NAN);
        jw_object_end(j);
    }
    jw_array_end(j);
}

static void mmc_text(FILE *out, const struct model_mmc *m, const struct level_list *lv)
{
    char a[64];
    double S = 1 / m->service_per_s;
    if (m->servers == 1) {
        fprintf(out, "M/M/1: one FCFS server, Poisson arrivals, exponential service times\n");
        rowf(out, "arrival rate", "λ", "%.4g/s", m->arrival_per_s);
        rowf(out, "service time", "S = 1/μ", "%s (μ = %.4g/s)", units_fmt_seconds(S, 4, a, sizeof a), m->service_per_s);
        row(out, "utilisation", "ρ = λ/μ", units_fmt_share(m->utilisation, 4, a, sizeof a));
        row(out, "P(wait > 0)", "ρ", units_fmt_share(m->p_wait, 4, a, sizeof a));
        row(out, "mean wait", "Wq = ρ/(μ−λ)", units_fmt_seconds(m->mean_wait_s, 4, a, sizeof a));
        row(out, "mean response", "T = 1/(μ−λ) = S/(1−ρ)", units_fmt_seconds(m->mean_response_s, 4, a, sizeof a));
        rowf(out, "mean in system", "L = λT = ρ/(1−ρ)", "%.4g", m->mean_in_system);
        rowf(out, "mean in queue", "Lq = λWq = ρ²/(1−ρ)", "%.4g", m->mean_in_queue);
        fprintf(out, "percentiles: response T ~ Exp(μ−λ), t = −ln(1−q)/(μ−λ) = −ln(1−q)·T;\n"
                     "             wait P(W > t) = ρ·e^(−(μ−λ)t), t = max(0, ln(ρ/(1−q))/(μ−λ))\n");
    } else {
        fprintf(out, "M/M/%u: %u FCFS servers sharing one queue, Poisson arrivals, exponential service times\n",
                m->servers, m->servers);
        rowf(out, "arrival rate", "λ", "%.4g/s", m->arrival_per_s);
        rowf(out, "service time", "S = 1/μ", "%s (μ = %.4g/s per server)", units_fmt_seconds(S, 4, a, sizeof a),
             m->service_per_s);
        rowf(out, "servers", "c", "%u", m->servers);
        rowf(out, "offered load", "a = λ/μ", "%.4g Erlang", m->offered);
        row(out, "utilisation", "ρ = λ/(cμ)", units_fmt_share(m->utilisation, 4, a, sizeof a));
        row(out, "P(wait > 0)", "C(c,a), Erlang C", units_fmt_share(m->p_wait, 4, a, sizeof a));
        row(out, "mean wait", "Wq = C/(cμ−λ)", units_fmt_seconds(m->mean_wait_s, 4, a, sizeof a));
        row(out, "mean response", "T = Wq + S", units_fmt_seconds(m->mean_response_s, 4, a, sizeof a));
        rowf(out, "mean in system", "L = λT", "%.4g", m->mean_in_system);
        rowf(out, "mean in queue", "Lq = λWq", "%.4g", m->mean_in_queue);
        fprintf(out,
                "percentiles: wait P(W > t) = C·e^(−θt), θ = cμ−λ, t = max(0, ln(C/(1−q))/θ);\n"
                "             response T = W + Exp(μ), P(T > t) = e^(−μt) + Cμ·e^(−min(θ,μ)t)·(1−e^(−|θ−μ|t))/|θ−μ|\n"
                "             (Cμt·e^(−μt) when θ = μ), solved for t by bisection\n");
    }
    struct level_times t;
    mmc_level_times(m, lv, &t);
    levels_text(out, lv, &t, m->servers == 1);
    level_times_release(&t);
}

static void mmc_json_fields(struct jw *j, const struct model_mmc *m, const struct level_list *lv)
{
    json_rates(j, m->servers, m->arrival_per_s, 1e3 / m->service_per_s, m->service_per_s);
    jw_kv_double(j, "offered_erlangs", m->offered);
    json_means(j, m->utilisation, m->p_wait, m->mean_wait_s, m->mean_response_s, m->mean_in_queue, m->mean_in_system);
    struct level_times t;
    mmc_level_times(m, lv, &t);
    levels_json(j, lv, &t);
    level_times_release(&t);
}

static int run_mmc(int argc, char **argv, bool multi)
{
    struct service_args sa = {0};
    uint64_t servers = 1;
    bool json = false;
    const char *levels = DEFAULT_PERCENTILES;
    struct opt opts[] = {
        /* first, so that mm1 can use the table from opts + 1 */
        SERVERS_OPT(&servers, "number of servers c sharing one queue; required"),
        RATE_OPT(&sa.arrival_per_s, "arrival rate λ per second (70, 70/s, 4200/m); required"),
        SERVICE_OPT(&sa.service_ns, "mean service time S = 1/μ per request (10ms; a bare number is ms)"),
        MU_OPT(&sa.mu_per_s, "service rate μ per server per second, instead of --service"),
        PERCENTILES_OPT(&levels),
        JSON_OPT(&json),
    };
    struct cmd_spec spec = {
        .name = multi ? "model mmc" : "model mm1",
        .usage = multi ? "--servers N --service D --rate R [options]" : "--service D --rate R [options]",
        .summary = multi ? "M/M/c (Erlang C): probability of waiting, mean wait and response, wait and "
                           "response-time percentiles."
                         : "M/M/1: utilisation, mean wait and response, L and Lq, response-time percentiles "
                           "(exponential with rate μ−λ).",
        .opts = multi ? opts : opts + 1,
        .nopts = multi ? OPT_COUNT_OF(opts) : OPT_COUNT_OF(opts) - 1,
        .epilog = multi ? "Erlang C is computed through the Erlang B recurrence B(k) = a·B(k−1)/(k + a·B(k−1)),\n"
                          "C = c·B/(c − a(1 − B)), which stays finite for any c. Response-time percentiles\n"
                          "invert the exact distribution of W + Exp(μ) numerically.\n\n"
                          "example: knee model mmc --servers 4 --service 10ms --rate 300\n"
                        : "example: knee model mm1 --service 10ms --rate 70\n",
    };
    int r;
    if (!parse_flags(&spec, argc, argv, &r))
        return r;
    double mu;
    if ((r = need(&spec, "rate")) || (multi && (r = need(&spec, "servers"))) || (r = service_rate(&spec, &sa, &mu)))
        return r;
    if (servers == 0 || servers > SERVERS_MAX)
        return opt_fail(&spec, "--servers: must be between 1 and %u", SERVERS_MAX);
    struct level_list *lv = xmalloc(sizeof *lv);
    if ((r = parse_levels(&spec, levels, lv)) != 0)
        goto out;
    struct model_mmc m;
    r = model_mmc((unsigned)servers, sa.arrival_per_s, mu, &m);
    if ((r = model_status(&spec, r, sa.arrival_per_s, (double)servers * mu, (unsigned)servers)) != 0)
        goto out;
    if (json) {
        struct jw j;
        json_model_begin(&j, multi ? "mmc" : "mm1");
        mmc_json_fields(&j, &m, lv);
        json_model_end(&j);
    } else {
        mmc_text(stdout, &m, lv);
    }
out:
    free(lv);
    return r;
}

static int cmd_model_mm1(int argc, char **argv)
{
    return run_mmc(argc, argv, false);
}
static int cmd_model_mmc(int argc, char **argv)
{
    return run_mmc(argc, argv, true);
}

/* ---- md1 ------------------------------------------------------------------------------- */

static int cmd_model_md1(int argc, char **argv)
{
    struct service_args sa = {0};
    bool json = false;
    const char *levels = DEFAULT_PERCENTILES;
    struct opt opts[] = {
        RATE_OPT(&sa.arrival_per_s, "arrival rate λ per second; required"),
        SERVICE_OPT(&sa.service_ns, "the constant service time D (10ms; a bare number is ms)"),
        MU_OPT(&sa.mu_per_s, "service rate μ = 1/D per second, instead of --service"),
        PERCENTILES_OPT(&levels),
        JSON_OPT(&json),
    };
    struct cmd_spec spec = {
        .name = "model md1",
        .usage = "--service D --rate R [options]",
        .summary = "M/D/1: constant service times; Pollaczek–Khinchine mean wait and the exact "
                   "waiting-time percentiles.",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = "Percentiles come from the exact FCFS waiting-time distribution, computed from the\n"
                  "stationary queue length with sums of non-negative terms only (src/model/model.c\n"
                  "derives it); they agree with Erlang's classical series where that series is usable.\n\n"
                  "example: knee model md1 --service 10ms --rate 70\n",
    };
    int r;
    if (!parse_flags(&spec, argc, argv, &r))
        return r;
    double mu;
    if ((r = need(&spec, "rate")) || (r = service_rate(&spec, &sa, &mu)))
        return r;
    struct level_list *lv = xmalloc(sizeof *lv);
    struct model_md1_dist d;
    bool have_dist = false;
    if ((r = parse_levels(&spec, levels, lv)) != 0)
        goto out;
    r = model_md1_dist_init(&d, sa.arrival_per_s, 1 / mu);
    if ((r = model_status(&spec, r, sa.arrival_per_s, mu, 1)) != 0)
        goto out;
    have_dist = true;
    const struct model_md1 *m = &d.m;
    struct level_times t;
    level_times_init(&t, lv->n);
    for (size_t i = 0; i < lv->n; i++) {
        t.ok[i] = model_md1_wait_quantile(&d, lv->q[i], &t.wait_s[i]) == 0;
        t.response_s[i] = t.wait_s[i] + m->service_s;
    }
    if (json) {
        struct jw j;
        json_model_begin(&j, "md1");
        json_rates(&j, 1, m->arrival_per_s, m->service_s * 1e3, 1 / m->service_s);
        json_means(&j, m->utilisation, m->utilisation, m->mean_wait_s, m->mean_response_s, m->mean_in_queue,
                   m->mean_in_system);
        levels_json(&j, lv, &t);
        json_model_end(&j);
    } else {
        char a[64], b[64];
        FILE *out = stdout;
        fprintf(out, "M/D/1: one FCFS server, Poisson arrivals, constant service time\n");
        rowf(out, "arrival rate", "λ", "%.4g/s", m->arrival_per_s);
        rowf(out, "service time", "D", "%s (μ = %.4g/s)", units_fmt_seconds(m->service_s, 4, a, sizeof a),
             1 / m->service_s);
        row(out, "utilisation", "ρ = λD", units_fmt_share(m->utilisation, 4, a, sizeof a));
        row(out, "P(wait > 0)", "ρ", units_fmt_share(m->utilisation, 4, a, sizeof a));
        rowf(out, "mean wait", "Wq = ρD/(2(1−ρ))", "%s (M/M/1 with the same mean: %s)",
             units_fmt_seconds(m->mean_wait_s, 4, a, sizeof a),
             units_fmt_seconds(m->utilisation * m->service_s / (1 - m->utilisation), 4, b, sizeof b));
        row(out, "mean response", "T = Wq + D", units_fmt_seconds(m->mean_response_s, 4, a, sizeof a));
        rowf(out, "mean in system", "L = λT", "%.4g", m->mean_in_system);
        rowf(out, "mean in queue", "Lq = λWq", "%.4g", m->mean_in_queue);
        fprintf(out, "percentiles: exact FCFS waiting time, P(W > kD+u) = Σ_j P(A=j)·P(N > k−j+1) + P(A > k),\n"
                     "             A ~ Poisson(λ(D−u)), N the stationary queue length; response T = W + D\n");
        levels_text(out, lv, &t, false);
    }
    level_times_release(&t);
out:
    if (have_dist)
        model_md1_dist_release(&d);
    free(lv);
    return r;
}

/* ---- little ------------------------------------------------------------------------------ */

static int cmd_model_little(int argc, char **argv)
{
    double l = 0, rate = 0;
    uint64_t w_ns = 0;
    bool json = false;
    struct opt opts[] = {
        {.name = "L",
         .kind = OPT_DOUBLE,
         .dst = &l,
         .metavar = "N",
         .help = "mean number in the system (requests in flight)"},
        RATE_OPT(&rate, "throughput λ per second (the admitted rate)"),
        {.name = "W",
         .kind = OPT_DURATION,
         .dst = &w_ns,
         .metavar = "D",
         .help = "mean time in the system (latency; a bare number is ms)",
         .unit_ns = NS_PER_MS},
        JSON_OPT(&json),
    };
    struct cmd_spec spec = {
        .name = "model little",
        .usage = "two of --L N, --rate R, --W D [--json]",
        .summary = "Little's law L = λ·W: give any two of L, λ and W and get the third.",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = "It holds for long-run averages of any stable system, whatever the arrival process,\n"
                  "service times or queue discipline; use the admitted (achieved) rate.\n\n"
                  "example: knee model little --rate 70 --W 33.3ms\n",
    };
    int r;
    if (!parse_flags(&spec, argc, argv, &r))
        return r;
    bool has_l = opts[0].seen, has_r = opts[1].seen, has_w = opts[2].seen;
    if (has_l + has_r + has_w != 2)
        return opt_fail(&spec, "give exactly two of --L, --rate and --W (got %d); the third is computed",
                        has_l + has_r + has_w);
    if (has_l && !(l > 0))
        return opt_fail(&spec, "--L: must be more than 0");
    if (has_w && w_ns == 0)
        return opt_fail(&spec, "--W: must be more than 0");
    double L = has_l ? l : NAN, lambda = has_r ? rate : NAN, w_s = has_w ? (double)w_ns / 1e9 : NAN;
    if ((r = model_little(&L, &lambda, &w_s)) != 0)
        return model_error(&spec, r);
    const char *solved = !has_l ? "L" : !has_r ? "rate" : "W";
    if (json) {
        struct jw j;
        json_model_begin(&j, "little");
        jw_kv_string(&j, "solved_for", solved);
        jw_kv_double(&j, "mean_in_system", L);
        jw_kv_double(&j, "arrival_rate_per_s", lambda);
        jw_kv_double(&j, "mean_time_in_system_ms", w_s * 1e3);
        json_model_end(&j);
        return 0;
    }
    char a[64];
    printf("Little's law: L = λ·W (long-run averages of any stable system)\n");
    if (!has_l)
        printf("  L = λ·W = %.4g/s × %s = %.4g in the system\n", lambda, units_fmt_seconds(w_s, 4, a, sizeof a), L);
    else if (!has_r)
        printf("  λ = L/W = %.4g / %s = %.4g/s\n", L, units_fmt_seconds(w_s, 4, a, sizeof a), lambda);
    else
        printf("  W = L/λ = %.4g / %.4g/s = %s\n", L, lambda, units_fmt_seconds(w_s, 4, a, sizeof a));
    return 0;
}

/* ---- fanout ------------------------------------------------------------------------------ */

static int cmd_model_fanout(int argc, char **argv)
{
    double p = 0, q = 0;
    const char *ns = NULL;
    bool json = false;
    struct opt opts[] = {
        {.name = "p",
         .kind = OPT_SHARE,
         .dst = &p,
         .metavar = "P",
         .help = "probability that one call is slow (2% or 0.02); required"},
        {.name = "n",
         .kind = OPT_STR,
         .dst = &ns,
         .metavar = "LIST",
         .help = "calls per page, or a list: 20, or 1,2,5,10,20, or 1,2,...,10; required"},
        {.name = "q",
         .kind = OPT_SHARE,
         .dst = &q,
         .metavar = "Q",
         .help = "also show the per-call percentile needed for the page's q (99% or 0.99)"},
        JSON_OPT(&json),
    };
    struct cmd_spec spec = {
        .name = "model fanout",
        .usage = "--p P --n LIST [--q Q] [--json]",
        .summary = "Fan-out: the chance a page that waits for n independent calls hits at least one slow "
                   "call, 1 − (1 − p)^n.",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = "With --q, each call must meet its q^(1/n) quantile for the page to meet its q quantile\n"
                  "(all n calls under a threshold with probability q).\n\n"
                  "example: knee model fanout --p 2% --n 1,2,5,10,20 --q 99%\n",
    };
    int r;
    if (!parse_flags(&spec, argc, argv, &r))
        return r;
    if ((r = need(&spec, "p")) || (r = need(&spec, "n")))
        return r;
    bool has_q = opts[2].seen;
    if (has_q && !(q > 0 && q < 1))
        return opt_fail(&spec, "--q: must be strictly between 0 and 100%%");
    double *n = xmalloc(LIST_MAX * sizeof *n);
    size_t count;
    if ((r = parse_list(&spec, "n", ns, LIST_COUNT, n, &count)) != 0) {
        free(n);
        return r;
    }
    char a[64], b[64];
    if (json) {
        struct jw j;
        json_model_begin(&j, "fanout");
        jw_kv_double(&j, "p", p);
        if (has_q)
            jw_kv_double(&j, "q", q);
        jw_key(&j, "rows");
        jw_array_begin(&j);
        for (size_t i = 0; i < count; i++) {
            jw_object_begin(&j);
            jw_kv_uint(&j, "n", (uint64_t)n[i]);
            jw_kv_double(&j, "p_any_slow", model_fanout_any(p, (unsigned)n[i]));
            jw_kv_double(&j, "expected_slow_calls", n[i] * p);
            if (has_q)
                jw_kv_double(&j, "per_call_level", model_fanout_leaf_level(q, (unsigned)n[i]));
            jw_object_end(&j);
        }
        jw_array_end(&j);
        json_model_end(&j);
    } else {
        printf("fan-out: a page waits for n independent calls, each slow with p = %s\n",
               units_fmt_share(p, 4, a, sizeof a));
        printf("  %8s  %-24s  %-16s", "n", "P(page slow)", "slow calls/page");
        if (has_q)
            printf("  per-call level for the page's %s", units_fmt_percentile(q, b, sizeof b));
        printf("\n  %8s  ", "");
        put_padded(stdout, "= 1 − (1 − p)^n", 24);
        fputs("  ", stdout);
        put_padded(stdout, "= n·p", 16);
        if (has_q)
            printf("  = q^(1/n)");
        putchar('\n');
        for (size_t i = 0; i < count; i++) {
            printf("  %8.0f  %-24s  %-16.4g", n[i],
                   units_fmt_share(model_fanout_any(p, (unsigned)n[i]), 4, a, sizeof a), n[i] * p);
            if (has_q) {
                double lv = model_fanout_leaf_level(q, (unsigned)n[i]);
                printf("  %s (%.8g)", units_fmt_percentile(lv, b, sizeof b), lv);
            }
            putchar('\n');
        }
    }
    free(n);
    return 0;
}

/* ---- ladder ------------------------------------------------------------------------------ */

static int cmd_model_ladder(int argc, char **argv)
{
    struct service_args sa = {0};
    uint64_t servers = 1;
    const char *rates_s = NULL;
    bool json = false;
    struct opt opts[] = {
        SERVICE_OPT(&sa.service_ns, "mean service time S = 1/μ (10ms; a bare number is ms)"),
        MU_OPT(&sa.mu_per_s, "service rate μ per server per second, instead of --service"),
        {.name = "rates",
         .kind = OPT_STR,
         .dst = &rates_s,
         .metavar = "LIST",
         .help = "arrival rates per second: 10,20,50 or 10,20,...,90,95; required"},
        SERVERS_OPT(&servers, "servers c sharing one queue (default 1: M/M/1)"),
        JSON_OPT(&json),
    };
    struct cmd_spec spec = {
        .name = "model ladder",
        .usage = "--service D --rates LIST [options]",
        .summary = "A table of M/M/1 (or M/M/c) predictions for a ladder of arrival rates: where the knee is.",
        .opts = opts,
        .nopts = OPT_COUNT_OF(opts),
        .epilog = "Every rate must be below the capacity c·μ.\n\n"
                  "example: knee model ladder --service 10ms --rates 10,20,...,90,95\n",
    };
    int r;
    if (!parse_flags(&spec, argc, argv, &r))
        return r;
    double mu;
    if ((r = need(&spec, "rates")) || (r = service_rate(&spec, &sa, &mu)))
        return r;
    if (servers == 0 || servers > SERVERS_MAX)
        return opt_fail(&spec, "--servers: must be between 1 and %u", SERVERS_MAX);
    double *rates = xmalloc(LIST_MAX * sizeof *rates);
    struct model_mmc *m = NULL;
    size_t count;
    if ((r = parse_list(&spec, "rates", rates_s, LIST_RATE, rates, &count)) != 0)
        goto out;
    m = xcalloc(count, sizeof *m);
    for (size_t i = 0; i < count; i++) {
        r = model_mmc((unsigned)servers, rates[i], mu, &m[i]);
        if ((r = model_status(&spec, r, rates[i], (double)servers * mu, (unsigned)servers)) != 0)
            goto out;
    }
    static const double q[] = {0.5, 0.95, 0.99, 0.999};
    const size_t nq = sizeof q / sizeof *q;
    if (json) {
        struct jw j;
        json_model_begin(&j, "ladder");
        jw_kv_uint(&j, "servers", servers);
        jw_kv_double(&j, "service_ms", 1e3 / mu);
        jw_kv_double(&j, "service_rate_per_s", mu);
        jw_key(&j, "rows");
        jw_array_begin(&j);
        struct level_list lv = {.n = nq};
        memcpy(lv.q, q, sizeof q);
        for (size_t i = 0; i < count; i++) {
            jw_object_begin(&j);
            mmc_json_fields(&j, &m[i], &lv);
            jw_object_end(&j);
        }
        jw_array_end(&j);
        json_model_end(&j);
        goto out;
    }
    struct col_unit u = col_unit_for(1 / mu);
    char a[64];
    printf("M/M/%llu ladder: S = %s (μ = %.4g/s per server), capacity %.4g/s; times in %s\n",
           (unsigned long long)servers, units_fmt_seconds(1 / mu, 4, a, sizeof a), mu, (double)servers * mu, u.name);
    if (servers == 1)
        printf("  Wq = ρ/(μ−λ), T = 1/(μ−λ), response percentiles −ln(1−q)·T, L = λT\n");
    else
        printf("  P(wait) = Erlang C, Wq = C/(cμ−λ), T = Wq + S, response percentiles of W + Exp(μ), L = λT\n");
    static const char *head[] = {"rate/s", "ρ",     "P(wait)", "mean Wq", "mean T",
                                 "p50 T",  "p95 T", "p99 T",   "p99.9 T", "L"};
    static const int width[] = {8, 7, 8, 10, 10, 10, 10, 10, 10, 8};
    fputs(" ", stdout);
    for (size_t k = 0; k < sizeof head / sizeof *head; k++) {
        fputc(' ', stdout);
        put_right(stdout, head[k], width[k]);
    }
    putchar('\n');
    for (size_t i = 0; i < count; i++) {
        char rho[32], pw[32];
        printf("  %8.4g %7s %8s %10.*f %10.*f", m[i].arrival_per_s,
               units_fmt_share(m[i].utilisation, 4, rho, sizeof rho), units_fmt_share(m[i].p_wait, 4, pw, sizeof pw),
               u.decimals, m[i].mean_wait_s * u.per_s, u.decimals, m[i].mean_response_s * u.per_s);
        for (size_t k = 0; k < nq; k++) {
            double t = 0;
            model_mmc_response_quantile(&m[i], q[k], &t);
            printf(" %10.*f", u.decimals, t * u.per_s);
        }
        printf(" %8.4g\n", m[i].mean_in_system);
    }
out:
    free(rates);
    free(m);
    return r;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

static const struct command model_subcommands[] = {
    {"mm1", cmd_model_mm1, "M/M/1: one server, exponential service; means and response percentiles"},
    {"mmc", cmd_model_mmc, "M/M/c (Erlang C): c servers, one queue; P(wait), means, percentiles"},
    {"md1", cmd_model_md1, "M/D/1: constant service; Pollaczek–Khinchine mean and exact percentiles"},
    {"little", cmd_model_little, "Little's law L = λW: any two give the third"},
    {"fanout", cmd_model_fanout, "fan-out tail: P(a page hits a slow call) = 1 − (1 − p)^n"},
    {"ladder", cmd_model_ladder, "a table of M/M/1 (or M/M/c) predictions over a ladder of rates"},
    {0, 0, 0},
};

static void model_usage(FILE *out)
{
    fputs("usage: knee model <calculator> [options]\n"
          "       knee model <calculator> --help\n\n"
          "Queueing calculators: each prediction is printed next to the formula it came from.\n"
          "Arrivals are Poisson, queues FCFS; rates are per second, times take units (10ms).\n\n"
          "calculators:\n",
          out);
    for (const struct command *c = model_subcommands; c->name; c++)
        fprintf(out, "  %-8s  %s\n", c->name, c->summary);
    fputs("\nexamples:\n"
          "  knee model mm1 --service 10ms --rate 70\n"
          "  knee model mmc --servers 4 --service 10ms --rate 300\n"
          "  knee model fanout --p 2% --n 1,2,5,10,20\n\n"
          "exit codes: 0 ok, 2 bad input or an unstable system (arrival rate ≥ capacity)\n",
          out);
}

int cmd_model(int argc, char **argv)
{
    if (argc < 2) {
        model_usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        model_usage(stdout);
        return 0;
    }
    for (const struct command *c = model_subcommands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c->fn(argc - 1, argv + 1);
    return cli_unknown_command("model", "calculator", model_subcommands, name);
}
