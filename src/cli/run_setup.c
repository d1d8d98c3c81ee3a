/* knee run --setup and --capture (cli/run_setup.h): the flags checked with the load options, the
 * request sent once before the run through http/fetch, the variables taken from its answer by
 * workload/capture and bound to the request sources (load/variant.h). A captured value is
 * never printed or recorded: it is often a credential. */
#include "cli/run_setup.h"

#include "cli/commands.h"
#include "cli/io_check.h"
#include "cli/run_targets.h"
#include "core/clock.h"
#include "core/err.h"
#include "http/client.h"
#include "http/fetch.h"
#include "load/variant.h"
#include "net/route.h"
#include "net/url.h"
#include "tls/tls.h"
#include "workload/capture.h"

#include <stdlib.h>
#include <string.h>

struct cli_setup {
    char *method; /* "GET" when --setup gave none */
    char *url;
    struct strlist headers; /* borrowed from argv */
    char *body;
    size_t body_len;
    const char *body_file; /* --setup-body @FILE: the file (argv's), else NULL */
    struct wl_capture caps[CLI_SETUP_MAX_CAPTURES];
    const char *names[CLI_SETUP_MAX_CAPTURES];
    size_t ncaps;
    struct record_setup note; /* what the record keeps, once sent */
};

void cli_setup_free(struct cli_setup *s)
{
    if (!s)
        return;
    free(s->method);
    free(s->url);
    strlist_release(&s->headers);
    free(s->body);
    for (size_t i = 0; i < s->ncaps; i++)
        wl_capture_release(&s->caps[i]);
    record_setup_release(&s->note);
    free(s);
}

/* "[METHOD ]URL" into s->method and s->url; the request checked as http/client serialises it. */
static int parse_request(const struct cmd_spec *spec, const char *arg, struct cli_setup *s)
{
    const char *sp = strpbrk(arg, " \t");
    const char *url = arg;
    if (sp) {
        size_t n = (size_t)(sp - arg);
        if (!http_is_token(arg, n))
            return opt_fail(spec, "--setup '%s': expected '[METHOD ]URL', e.g. 'POST http://127.0.0.1:8080/login'",
                            arg);
        s->method = xmalloc(n + 1);
        memcpy(s->method, arg, n);
        s->method[n] = '\0';
        url = sp + strspn(sp, " \t");
    } else {
        s->method = xstrdup("GET");
    }
    s->url = xstrdup(url);
    if (strstr(s->url, "{{"))
        return opt_fail(spec,
                        "--setup %s: the setup request is sent as written, before any variable exists: no "
                        "placeholders in it",
                        s->url);
    for (size_t i = 0; i < s->headers.n; i++)
        if (strstr(s->headers.v[i], "{{"))
            return opt_fail(spec, "--setup-header '%s': the setup request is sent as written: no placeholders in it",
                            s->headers.v[i]);
    struct url u;
    char why[256];
    int r = url_parse(s->url, &u, why, sizeof why);
    if (r == 0) {
        struct http_request_spec rs = {.method = s->method,
                                       .url = &u,
                                       .headers = s->headers.v,
                                       .nheaders = s->headers.n,
                                       .body = s->body,
                                       .body_len = s->body_len};
        char *bytes;
        size_t n;
        r = http_client_build_request(&rs, &bytes, &n, why, sizeof why);
        free(bytes);
    }
    url_release(&u);
    if (r)
        return opt_fail(spec, "--setup %s: %s", s->url, why);
    return 0;
}

static int parse_captures(const struct cmd_spec *spec, const struct strlist *caps, struct cli_setup *s)
{
    if (caps->n > CLI_SETUP_MAX_CAPTURES)
        return opt_fail(spec, "--capture: at most %d variables", CLI_SETUP_MAX_CAPTURES);
    for (size_t i = 0; i < caps->n; i++) {
        char why[300];
        if (wl_capture_parse(caps->v[i], &s->caps[i], why, sizeof why) != 0)
            return opt_fail(spec, "--capture '%s': %s", caps->v[i], why);
        s->ncaps++;
        s->names[i] = s->caps[i].name;
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->names[j], s->names[i]) == 0)
                return opt_fail(spec, "--capture '%s': the name %s is taken by an earlier --capture", caps->v[i],
                                s->names[i]);
    }
    return 0;
}

int cli_setup_parse(const struct cmd_spec *spec, const struct runopts *o, struct cli_setup **out)
{
    *out = NULL;
    if (!o->setup) {
        const char *lone = o->captures.n        ? "--capture"
                           : o->setup_headers.n ? "--setup-header"
                           : o->setup_body      ? "--setup-body"
                                                : NULL;
        return lone ? opt_fail(spec, "%s needs --setup '[METHOD ]URL' (the request whose answer it reads)", lone) : 0;
    }
    struct cli_setup *s = xcalloc(1, sizeof *s);
    *out = s; /* released with the config, also after an error */
    for (size_t i = 0; i < o->setup_headers.n; i++)
        strlist_push(&s->headers, o->setup_headers.v[i]);
    if (o->setup_body) {
        if (cli_read_body(spec, "--setup-body", o->setup_body, &s->body, &s->body_len))
            return 2;
        s->body_file = o->setup_body[0] == '@' ? o->setup_body + 1 : NULL;
    }
    if (parse_request(spec, o->setup, s) || parse_captures(spec, &o->captures, s))
        return 2;
    return 0;
}

const char *const *cli_setup_names(const struct cli_setup *s, size_t *n)
{
    *n = s ? s->ncaps : 0;
    return s && s->ncaps ? s->names : NULL;
}

void cli_setup_inputs(const struct cli_setup *s, struct cli_io *io)
{
    if (s && s->body_file)
        cli_io_input(io, "--setup-body", s->body_file);
}

void cli_setup_print_plan(FILE *f, const struct cli_setup *s)
{
    if (!s)
        return;
    fprintf(f, "  setup: %s %s, sent once before the load (not in a dry run)\n", s->method, s->url);
    for (size_t i = 0; i < s->ncaps; i++) {
        char src[200];
        fprintf(f, "  capture: {{%s}} from the answer's %s\n", s->caps[i].name,
                wl_capture_source(&s->caps[i], src, sizeof src));
    }
}

/* ------------------------------------------------------------------ sending it */

/* "200 OK" */
static const char *status_text(const struct http_fetch_response *res, char *buf, size_t len)
{
    snprintf(buf, len, "%d%s%s", res->status, res->reason[0] ? " " : "", res->reason);
    return buf;
}

/* The body's first bytes for a message ("" when empty): ", body: {...}" */
static const char *body_excerpt(const struct http_fetch_response *res, char *buf, size_t len)
{
    if (!res->body_len)
        return "";
    size_t max = 200;
    size_t n = res->body_len < max ? res->body_len : max;
    while (n && (res->body[n - 1] == '\n' || res->body[n - 1] == '\r'))
        n--;
    snprintf(buf, len, "; body: %.*s%s", (int)n, res->body, res->body_len > max ? "..." : "");
    return buf;
}

static int send_it(const struct cmd_spec *spec, const struct cli_setup *s, const struct run_config *cfg,
                   struct http_fetch_response *res)
{
    struct tls_ctx *tls = NULL;
    char why[512];
    if (strncmp(s->url, "https://", 8) == 0) {
        struct tls_client_config tc = {.cafile = cfg->tls_cacert,
                                       .insecure = cfg->tls_insecure,
                                       .min_version = cfg->tls_min_version,
                                       .max_version = cfg->tls_max_version,
                                       .ciphers = cfg->tls_ciphers,
                                       .alpn = TLS_ALPN_HTTP1,
                                       .cert_file = cfg->tls_cert,
                                       .key_file = cfg->tls_key};
        if (tls_client_new(&tc, &tls, why, sizeof why) != 0)
            return opt_fail(spec, "%s", why);
    }
    struct net_route route; /* the run's --unix-socket and --connect-to apply to it too */
    if (net_route_init(&route, cfg->unix_socket, cfg->connect_to, cfg->nconnect_to, why, sizeof why) != 0) {
        tls_ctx_free(tls);
        return opt_fail(spec, "%s", why);
    }
    struct http_fetch_request req = {.method = s->method,
                                     .url = s->url,
                                     .headers = s->headers.v,
                                     .nheaders = s->headers.n,
                                     .body = s->body,
                                     .body_len = s->body_len,
                                     .timeout_ns = cfg->timeout_ns ? cfg->timeout_ns : RUN_DEFAULT_TIMEOUT_NS,
                                     .tls = tls,
                                     .route = &route};
    int r = http_fetch(&req, res, why, sizeof why);
    tls_ctx_free(tls);
    net_route_release(&route);
    if (r) {
        knee_report(stderr, "knee run: ", "--setup %s %s: %s (nothing else was sent)", s->method, s->url, why);
        return KNEE_EXIT_NO_OK;
    }
    if (res->status < 200 || res->status > 299) {
        char st[160], body[300];
        knee_report(stderr, "knee run: ", "--setup %s %s: the answer was %s, not 2xx (nothing else was sent)%s",
                    s->method, s->url, status_text(res, st, sizeof st), body_excerpt(res, body, sizeof body));
        return KNEE_EXIT_NO_OK;
    }
    return 0;
}

/* Each capture's value from res (values[i] for caps[i], heap strings). 0 or 3 after one line. */
static int take_all(const struct cli_setup *s, const struct http_fetch_response *res, char **values, size_t *lens)
{
    struct wl_response wr = {.status = res->status,
                             .names = (const char *const *)res->names,
                             .values = (const char *const *)res->values,
                             .nheaders = res->nheaders,
                             .body = res->body,
                             .body_len = res->body_len};
    for (size_t i = 0; i < s->ncaps; i++) {
        char why[1024];
        if (wl_capture_extract(&s->caps[i], &wr, &values[i], &lens[i], why, sizeof why) == 0)
            continue;
        char st[160], body[300];
        bool show_body = s->caps[i].kind == WL_CAPTURE_JSON || s->caps[i].kind == WL_CAPTURE_BODY;
        knee_report(stderr, "knee run: ", "--capture %s: %s (--setup %s %s answered %s%s; nothing else was sent)",
                    s->caps[i].name, why, s->method, s->url, status_text(res, st, sizeof st),
                    show_body ? body_excerpt(res, body, sizeof body) : "");
        return KNEE_EXIT_NO_OK;
    }
    return 0;
}

/* The values to every request source. 0 or 3 after one line. */
static int bind_all(const struct cli_setup *s, struct runopts_config *rc, char **values, const size_t *lens)
{
    struct wl_value v[CLI_SETUP_MAX_CAPTURES];
    for (size_t i = 0; i < s->ncaps; i++)
        v[i] = (struct wl_value){.s = values[i], .len = lens[i]};
    for (size_t t = 0; rc->sources && t < rc->ntg; t++) {
        char why[1024];
        if (rc->sources[t] && variant_source_bind(rc->sources[t], v, s->ncaps, why, sizeof why) != 0) {
            knee_report(stderr, "knee run: ", "%s (from --setup %s %s; nothing else was sent)", why, s->method, s->url);
            return KNEE_EXIT_NO_OK;
        }
    }
    return 0;
}

int cli_setup_run(const struct cmd_spec *spec, struct cli_setup *s, struct runopts_config *rc, FILE *out)
{
    if (!s)
        return 0;
    struct http_fetch_response res = {0};
    char *values[CLI_SETUP_MAX_CAPTURES] = {0};
    size_t lens[CLI_SETUP_MAX_CAPTURES] = {0};
    int code = send_it(spec, s, &rc->cfg, &res);
    if (!code)
        code = take_all(s, &res, values, lens);
    if (!code)
        code = bind_all(s, rc, values, lens);
    if (!code) {
        struct record_setup *n = &s->note;
        record_setup_release(n);
        n->method = xstrdup(s->method);
        n->url = xstrdup(s->url);
        n->status = res.status;
        n->duration_ns = res.elapsed_ns;
        n->captured = xcalloc(s->ncaps + 1, sizeof *n->captured);
        for (size_t i = 0; i < s->ncaps; i++)
            n->captured[n->ncaptured++] = xstrdup(s->names[i]);
        rc->cfg.setup = n;
        char st[160];
        fprintf(out, "setup: %s %s answered %s in %.1f ms", s->method, s->url, status_text(&res, st, sizeof st),
                ns_to_ms(res.elapsed_ns));
        for (size_t i = 0; i < s->ncaps; i++)
            fprintf(out, "%s%s", i ? ", " : "; captured ", s->names[i]);
        fputc('\n', out);
    }
    for (size_t i = 0; i < s->ncaps; i++) {
        if (values[i]) /* a credential, most likely: not left in freed memory */
            explicit_bzero(values[i], lens[i]);
        free(values[i]);
    }
    http_fetch_response_release(&res);
    return code;
}
