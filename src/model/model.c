/* Queueing formulas. The closed forms follow Kleinrock vol. 1 and Harchol-Balter
 * (Performance Modeling and Design of Computer Systems); the comments below derive the two results that are
 * not simply looked up: the M/M/c response-time tail and the M/D/1 waiting-time distribution. */
#include "model/model.h"

#include "core/err.h"

#include <math.h>
#include <stdlib.h>

static int positive(double x)
{
    return isfinite(x) && x > 0;
}

/* Bisection for the smallest t with survival(t) ≤ target, where survival is continuous and
 * non-increasing on (0, ∞) with survival(0+) > target. hi starts at a guess and doubles until
 * it brackets the root. */
struct survival_fn {
    int (*fn)(void *ctx, double t_s, double *out);
    void *ctx;
};

static int invert_survival(struct survival_fn f, double target, double guess_s, double *out_s)
{
    double lo = 0, hi = guess_s > 0 ? guess_s : 1e-9, s;
    int r;
    for (int i = 0;; i++) {
        if ((r = f.fn(f.ctx, hi, &s)) != 0)
            return r;
        if (s <= target)
            break;
        lo = hi;
        hi *= 2;
        if (i > 2000 || !isfinite(hi))
            return KNEE_ERANGE;
    }
    /* 200 halvings take any double bracket below the 1e-12 relative width. */
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = lo + (hi - lo) / 2;
        if ((r = f.fn(f.ctx, mid, &s)) != 0)
            return r;
        if (s <= target)
            hi = mid;
        else
            lo = mid;
    }
    *out_s = hi;
    return 0;
}

static int valid_level(double q)
{
    return isfinite(q) && q > 0 && q < 1;
}

/* ---- M/M/c ------------------------------------------------------------------------------ */

double model_erlang_b(unsigned servers, double offered)
{
    if (!isfinite(offered) || offered < 0)
        return NAN;
    /* B(k) = a·B(k−1)/(k + a·B(k−1)): every step is a ratio of positive numbers below 1. */
    double b = 1.0;
    for (unsigned k = 1; k <= servers; k++)
        b = offered * b / ((double)k + offered * b);
    return b;
}

int model_erlang_c(unsigned servers, double offered, double *out)
{
    if (servers == 0 || !isfinite(offered) || offered < 0)
        return KNEE_EINVAL;
    double c = (double)servers;
    if (offered >= c)
        return KNEE_EUNSTABLE;
    double b = model_erlang_b(servers, offered);
    /* C = c·B/(c − a(1 − B)); the denominator is > c − a > 0. */
    *out = c * b / (c - offered * (1 - b));
    return 0;
}

int model_mmc(unsigned servers, double arrival_per_s, double service_per_s, struct model_mmc *out)
{
    if (servers == 0 || !positive(arrival_per_s) || !positive(service_per_s))
        return KNEE_EINVAL;
    double a = arrival_per_s / service_per_s, c = (double)servers;
    double p_wait;
    int r = model_erlang_c(servers, a, &p_wait);
    if (r)
        return r;
    struct model_mmc m = {
        .servers = servers,
        .arrival_per_s = arrival_per_s,
        .service_per_s = service_per_s,
        .offered = a,
        .utilisation = a / c,
        .p_wait = p_wait,
        .decay_per_s = c * service_per_s - arrival_per_s,
    };
    m.mean_wait_s = p_wait / m.decay_per_s;
    m.mean_response_s = m.mean_wait_s + 1 / service_per_s;
    m.mean_in_queue = arrival_per_s * m.mean_wait_s;
    m.mean_in_system = arrival_per_s * m.mean_response_s;
    *out = m;
    return 0;
}

double model_mmc_wait_survival(const struct model_mmc *m, double t_s)
{
    if (t_s < 0)
        return 1;
    return m->p_wait * exp(-m->decay_per_s * t_s);
}

/* Derivation of P(T > t). Under FCFS the wait W and the own service X ~ Exp(μ) are
 * independent; W is 0 with probability 1 − C and Exp(θ) with probability C (θ = cμ − λ). So
 *     P(T > t) = (1 − C)·e^(−μt) + C·P(Y + X > t),   Y ~ Exp(θ).
 * For θ ≠ μ the hypoexponential tail is P(Y + X > t) = (θe^(−μt) − μe^(−θt))/(θ − μ), which
 * rearranges to e^(−μt) + μ·(e^(−μt) − e^(−θt))/(θ − μ). Writing lo = min(θ, μ), δ = |θ − μ|:
 *     (e^(−μt) − e^(−θt))/(θ − μ) = e^(−lo·t)·(1 − e^(−δt))/δ      (for either order),
 * hence P(T > t) = e^(−μt) + C·μ·e^(−lo·t)·g(t) with g = (1 − e^(−δt))/δ = −expm1(−δt)/δ.
 * g → t as δ → 0, which is the θ = μ case (Y + X Erlang-2: e^(−μt)(1 + μt)). Computing g with
 * expm1 keeps full precision as δ shrinks, and no term can overflow (the naive form
 * multiplies e^(+δt) by e^(−μt) and gives inf·0 for large t). */
double model_mmc_response_survival(const struct model_mmc *m, double t_s)
{
    if (t_s < 0)
        return 1;
    double mu = m->service_per_s, theta = m->decay_per_s;
    double lo = fmin(theta, mu), delta = fabs(theta - mu);
    double g = delta > 0 ? -expm1(-delta * t_s) / delta : t_s;
    return exp(-mu * t_s) + m->p_wait * mu * exp(-lo * t_s) * g;
}

int model_mmc_wait_quantile(const struct model_mmc *m, double q, double *out_s)
{
    if (!valid_level(q))
        return KNEE_EINVAL;
    double t = log(m->p_wait / (1 - q)) / m->decay_per_s;
    *out_s = t > 0 ? t : 0;
    return 0;
}

static int mmc_survival_cb(void *ctx, double t_s, double *out)
{
    *out = model_mmc_response_survival(ctx, t_s);
    return 0;
}

int model_mmc_response_quantile(const struct model_mmc *m, double q, double *out_s)
{
    if (!valid_level(q))
        return KNEE_EINVAL;
    if (m->servers == 1) { /* exponential with rate μ − λ */
        *out_s = -log1p(-q) / m->decay_per_s;
        return 0;
    }
    struct survival_fn f = {mmc_survival_cb, (void *)m};
    return invert_survival(f, 1 - q, m->mean_response_s, out_s);
}

/* ---- M/D/1 ------------------------------------------------------------------------------ */

int model_md1(double arrival_per_s, double service_s, struct model_md1 *out)
{
    if (!positive(arrival_per_s) || !positive(service_s))
        return KNEE_EINVAL;
    double rho = arrival_per_s * service_s;
    if (rho >= 1)
        return KNEE_EUNSTABLE;
    struct model_md1 m = {.arrival_per_s = arrival_per_s, .service_s = service_s, .utilisation = rho};
    m.mean_wait_s = rho * service_s / (2 * (1 - rho));
    m.mean_response_s = m.mean_wait_s + service_s;
    m.mean_in_queue = arrival_per_s * m.mean_wait_s;
    m.mean_in_system = arrival_per_s * m.mean_response_s;
    *out = m;
    return 0;
}

/* The exact waiting-time distribution, in two steps whose sums have only non-negative terms.
 * (The classical Erlang/Crommelin formula P(W ≤ t) = (1−ρ)Σ_k (λ(kD−t))^k/k!·e^(−λ(kD−t))
 * alternates in sign and loses every digit once t is a few dozen service times.)
 *
 * 1. Queue length. The number in system just after departures, N' = (N − 1)⁺ + A with
 *    A ~ Poisson(ρ) arrivals during one service, has the same law as at an arbitrary time
 *    (M/G/1). Balancing crossings of the cut between n − 1 and n (only a departure with no
 *    arrival goes down from n):
 *        π_n·P(A = 0) = π_0·P(A ≥ n) + Σ_{i=1}^{n−1} π_i·P(A ≥ n − i + 1),   π_0 = 1 − ρ.
 *
 * 2. Waiting time. Let a customer arrive at τ and t = kD + u with 0 ≤ u < D. The work ahead
 *    of it is V = (n − 1)D + r (n present, residual r ∈ (0, D]); at τ + u the server has
 *    done u of it, and what is left is ≤ kD exactly when at most k of those customers remain.
 *    Looking back from τ + u one service time, to s = τ − (D − u): during (s, s + D] exactly
 *    one customer leaves if N(s) ≥ 1 and none otherwise (a later arrival cannot finish
 *    before s + D). So the customers ahead still present at τ + u number (N(s) − 1)⁺ + A',
 *    A' ~ Poisson(λ(D − u)) the arrivals in (s, τ), independent of N(s). Hence
 *        P(W > kD + u) = Σ_{j=0}^{k} P(A' = j)·P(N > k − j + 1) + P(A' > k).
 *    Check: k = 0 gives P(W ≤ u) = e^(−λ(D−u))·(π_0 + π_1) = (1 − ρ)e^(λu), Erlang's result. */

#define MD1_TINY 1e-300

int model_md1_dist_init(struct model_md1_dist *d, double arrival_per_s, double service_s)
{
    *d = (struct model_md1_dist){0};
    int r = model_md1(arrival_per_s, service_s, &d->m);
    if (r)
        return r;
    double rho = d->m.utilisation;
    /* Poisson(ρ) pmf until it drops below MD1_TINY (ρ < 1, so within ~170 terms). */
    size_t n = 1;
    double *pmf = xmalloc(400 * sizeof *pmf);
    pmf[0] = exp(-rho);
    while (n < 400) {
        double next = pmf[n - 1] * rho / (double)n;
        if (next < MD1_TINY)
            break;
        pmf[n++] = next;
    }
    /* Tails summed from the small end so each keeps its relative precision. */
    d->tail = xmalloc((n + 1) * sizeof *d->tail);
    d->tail[n] = 0;
    for (size_t k = n; k-- > 0;)
        d->tail[k] = d->tail[k + 1] + pmf[k];
    d->tail[0] = 1;
    d->ntail = n + 1;
    free(pmf);
    d->cap = 1024;
    d->pi = xmalloc(d->cap * sizeof *d->pi);
    d->cdf = xmalloc(d->cap * sizeof *d->cdf);
    d->pi[0] = d->cdf[0] = 1 - rho;
    d->npi = 1;
    return 0;
}

void model_md1_dist_release(struct model_md1_dist *d)
{
    free(d->tail);
    free(d->pi);
    free(d->cdf);
    *d = (struct model_md1_dist){0};
}

static double md1_tail(const struct model_md1_dist *d, size_t k)
{
    return k < d->ntail ? d->tail[k] : 0;
}

/* Extend π (and its running sum) to at least n + 1 entries: π_0 … π_n. */
static int md1_grow(struct model_md1_dist *d, size_t n)
{
    if (n >= MODEL_MD1_MAX_STATES)
        return KNEE_ERANGE;
    if (n < d->npi)
        return 0;
    if (n >= d->cap) {
        while (d->cap <= n)
            d->cap *= 2;
        d->pi = xrealloc(d->pi, d->cap * sizeof *d->pi);
        d->cdf = xrealloc(d->cdf, d->cap * sizeof *d->cdf);
    }
    double a0 = exp(-d->m.utilisation); /* P(A = 0) */
    for (size_t j = d->npi; j <= n; j++) {
        double s = d->pi[0] * md1_tail(d, j);
        /* P(A ≥ j − i + 1) vanishes once j − i + 1 ≥ ntail: start i there. */
        size_t first = j + 2 > d->ntail ? j + 2 - d->ntail : 1;
        for (size_t i = first; i < j; i++)
            s += d->pi[i] * d->tail[j - i + 1];
        d->pi[j] = s / a0;
        d->cdf[j] = d->cdf[j - 1] + d->pi[j];
    }
    d->npi = n + 1;
    return 0;
}

/* P(N > n) at an arbitrary time; requires n < npi. */
static double md1_queue_survival(const struct model_md1_dist *d, size_t n)
{
    double s = 1 - d->cdf[n];
    return s > 0 ? s : 0;
}

int model_md1_wait_survival(struct model_md1_dist *d, double t_s, double *out)
{
    if (t_s < 0) {
        *out = 1;
        return 0;
    }
    double D = d->m.service_s, lambda = d->m.arrival_per_s;
    double kf = floor(t_s / D);
    if (kf >= (double)MODEL_MD1_MAX_STATES)
        return KNEE_ERANGE;
    size_t k = (size_t)kf;
    double u = t_s - kf * D;
    if (u < 0) /* rounding in floor/multiply */
        u = 0;
    int r = md1_grow(d, k + 1);
    if (r)
        return r;
    double x = lambda * (D - u); /* mean of A', below ρ < 1 */
    double term = exp(-x), s = 0;
    size_t j = 0;
    /* Σ_{j ≤ k} P(A' = j)·P(N > k − j + 1); the Poisson terms fall fast since x < 1. */
    for (; j <= k; j++) {
        s += term * md1_queue_survival(d, k - j + 1);
        term *= x / (double)(j + 1);
        if (term < MD1_TINY) {
            j = k + 1;
            term = 0;
            break;
        }
    }
    /* P(A' > k) = Σ_{j > k} P(A' = j), summed directly rather than as 1 − Σ. */
    for (; term >= MD1_TINY; j++) {
        s += term;
        term *= x / (double)(j + 1);
    }
    *out = s < 1 ? s : 1;
    return 0;
}

static int md1_survival_cb(void *ctx, double t_s, double *out)
{
    return model_md1_wait_survival(ctx, t_s, out);
}

int model_md1_wait_quantile(struct model_md1_dist *d, double q, double *out_s)
{
    if (!valid_level(q))
        return KNEE_EINVAL;
    if (q <= 1 - d->m.utilisation) { /* the atom at 0: these customers find the server idle */
        *out_s = 0;
        return 0;
    }
    struct survival_fn f = {md1_survival_cb, d};
    return invert_survival(f, 1 - q, d->m.service_s, out_s);
}

/* ---- Little's law and fan-out ------------------------------------------------------------- */

int model_little(double *l, double *arrival_per_s, double *w_s)
{
    int unknown = isnan(*l) + isnan(*arrival_per_s) + isnan(*w_s);
    if (unknown != 1)
        return KNEE_EINVAL;
    if (isnan(*l)) {
        if (!positive(*arrival_per_s) || !positive(*w_s))
            return KNEE_EINVAL;
        *l = *arrival_per_s * *w_s;
    } else if (isnan(*arrival_per_s)) {
        if (!positive(*l) || !positive(*w_s))
            return KNEE_EINVAL;
        *arrival_per_s = *l / *w_s;
    } else {
        if (!positive(*l) || !positive(*arrival_per_s))
            return KNEE_EINVAL;
        *w_s = *l / *arrival_per_s;
    }
    return 0;
}

double model_fanout_any(double p, unsigned n)
{
    if (!(p >= 0 && p <= 1))
        return NAN;
    if (n == 0 || p == 0)
        return 0;
    if (p == 1)
        return 1;
    return -expm1((double)n * log1p(-p));
}

double model_fanout_leaf_level(double q, unsigned n)
{
    if (!valid_level(q) || n == 0)
        return NAN;
    return exp(log(q) / (double)n);
}
