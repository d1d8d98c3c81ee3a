/* The command line as a run record keeps it (environment.args), without credentials: result
 * files get shared, and `-H 'Authorization: Bearer …'` must not travel with them. Every path
 * that puts a command line into a record (the engine's result, knee merge, the JSON reader)
 * goes through record_config_set_args, so one function decides what is a secret. */
#include "record/record.h"

#include "core/err.h"
#include "net/proxy.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Headers whose value is a credential (RFC 9110 §11.6.2, §11.7.2; RFC 6265 §4). */
static const char *const secret_names[] = {"authorization", "proxy-authorization", "cookie", "set-cookie"};

#define SECRET_FLAG "--header-secret"

/* True when "[T=]Name: value" names a secret header. colon: the ':' in s. */
static bool secret_name(const char *s, const char *colon)
{
    const char *name = s;
    for (const char *p = s; p < colon; p++)
        if (*p == '=') /* a target prefix T= (a header name has no '=') */
            name = p + 1;
    while (name < colon && isspace((unsigned char)*name))
        name++;
    const char *end = colon;
    while (end > name && isspace((unsigned char)end[-1]))
        end--;
    size_t len = (size_t)(end - name);
    for (size_t i = 0; i < sizeof secret_names / sizeof *secret_names; i++)
        if (strlen(secret_names[i]) == len && strncasecmp(name, secret_names[i], len) == 0)
            return true;
    return false;
}

/* head (kept as given: a flag prefix and "[T=]Name:") then " <redacted>" (no head: the marker
 * alone). */
static char *redacted(const char *arg, size_t head)
{
    size_t n = head + strlen(" " RECORD_REDACTED) + 1;
    char *out = xmalloc(n);
    snprintf(out, n, "%.*s%s%s", (int)head, arg, head ? " " : "", RECORD_REDACTED);
    return out;
}

/* The header value v inside arg (v points into arg): redacted after its ':' when always (a
 * --header-secret value) or when its name is a secret one; NULL when it stays. */
static char *redact_header(const char *arg, const char *v, bool always)
{
    const char *colon = strchr(v, ':');
    if (!colon)
        return always ? redacted(arg, (size_t)(v - arg)) : NULL;
    const char *value = colon + 1;
    while (*value && isspace((unsigned char)*value))
        value++;
    if (!*value || (!always && !secret_name(v, colon)))
        return NULL;
    return redacted(arg, (size_t)(colon + 1 - arg));
}

/* knee run --setup's request (a login) carries credentials in its headers and body: their values
 * go, whatever the header's name; a body from @FILE keeps its path. --capture's rules hold none
 * (and "sid=cookie:sid" is no header). NULL: arg is none of these. */
static char *redact_setup(const char *prev, const char *arg, bool *keep)
{
    *keep = false;
    if (prev && strcmp(prev, "--capture") == 0) {
        *keep = true;
        return NULL;
    }
    if (strncmp(arg, "--capture=", 10) == 0) {
        *keep = true;
        return NULL;
    }
    if (prev && strcmp(prev, "--setup-header") == 0)
        return redact_header(arg, arg, true);
    if (strncmp(arg, "--setup-header=", 15) == 0)
        return redact_header(arg, arg + 15, true);
    if (prev && strcmp(prev, "--setup-body") == 0 && arg[0] != '@')
        return redacted(arg, 0);
    if (strncmp(arg, "--setup-body=", 13) == 0 && arg[13] != '@')
        return xstrdup("--setup-body=" RECORD_REDACTED);
    return NULL;
}

char *record_redact_arg(const char *prev, const char *arg)
{
    bool keep;
    char *r = redact_setup(prev, arg, &keep);
    if (r || keep)
        return r ? r : xstrdup(arg);
    if (prev && strcmp(prev, SECRET_FLAG) == 0)
        r = redact_header(arg, arg, true);
    else if (strncmp(arg, SECRET_FLAG "=", strlen(SECRET_FLAG) + 1) == 0)
        r = redact_header(arg, arg + strlen(SECRET_FLAG) + 1, true);
    else if (strncmp(arg, "--header=", 9) == 0)
        r = redact_header(arg, arg + 9, false);
    else if (strncmp(arg, "-H", 2) == 0 && arg[2])
        r = redact_header(arg, arg + 2, false);
    else
        r = redact_header(arg, arg, false); /* -H's value, or a header anywhere: redacting more is harmless */
    if (!r && strstr(arg, "://")) {         /* a URL's user:password (--proxy http://u:p@host:port, or anywhere) */
        size_t n = strlen(arg) + sizeof RECORD_REDACTED;
        r = xmalloc(n);
        net_proxy_redact(arg, r, n);
    }
    return r ? r : xstrdup(arg);
}

void record_config_set_args(struct record_config *c, int argc, const char *const *argv)
{
    for (int i = 0; i < c->argc; i++)
        free(c->argv[i]);
    free(c->argv);
    c->argc = argv && argc > 0 ? argc : 0;
    c->argv = xcalloc(c->argc ? (size_t)c->argc : 1, sizeof *c->argv);
    for (int i = 0; i < c->argc; i++)
        c->argv[i] = record_redact_arg(i ? argv[i - 1] : NULL, argv[i] ? argv[i] : "");
}
