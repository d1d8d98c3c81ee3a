/* --capture's variables in a request source (load/variant.h): their names are known when the
 * source opens (so a placeholder naming neither a column nor a variable fails before anything is
 * sent), their values only once the setup request has answered (variant_source_bind). They
 * take the places after the feed's columns in the names and in each request's values, so a
 * template cannot tell a captured variable from a column: they expand alike. */
#include "core/err.h"
#include "load/variant_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* variant_build.c's and fill_wire's values array (wl_value vals[256]): columns and variables */
#define VVARS_MAX_VALUES 256

int vvars_open(struct variant_source *s, char *err, size_t errlen)
{
    struct vvars *vv = &s->vars;
    vv->ncols = s->names.n;
    if (s->o.nvars == 0)
        return 0;
    if (vv->ncols + s->o.nvars > VVARS_MAX_VALUES)
        return knee_fail(err, errlen, KNEE_EINVAL, "--feed's columns and --capture's names: at most %d in all",
                         VVARS_MAX_VALUES);
    vv->names = xcalloc(vv->ncols + s->o.nvars, sizeof *vv->names);
    for (size_t i = 0; i < vv->ncols; i++)
        vv->names[i] = s->names.names[i];
    for (size_t k = 0; k < s->o.nvars; k++) {
        for (size_t i = 0; i < vv->ncols; i++)
            if (strcmp(vv->names[i], s->o.var_names[k]) == 0)
                return knee_fail(err, errlen, KNEE_EINVAL,
                                 "--capture %s: %s has a column '%s' too; rename the variable (a placeholder "
                                 "names one or the other)",
                                 s->o.var_names[k], s->o.feed_path, s->o.var_names[k]);
        vv->names[vv->ncols + k] = s->o.var_names[k];
    }
    snprintf(vv->source, sizeof vv->source, "%s%s--capture", s->o.feed_path ? s->names.source : "",
             s->o.feed_path ? " or " : "");
    s->names = (struct wl_names){.names = vv->names, .n = vv->ncols + s->o.nvars, .source = vv->source};
    return 0;
}

size_t vvars_values(const struct variant_source *s, struct wl_value *vals, size_t n)
{
    if (!s->vars.values)
        return n;
    for (size_t k = 0; k < s->o.nvars; k++)
        vals[n + k] = s->vars.values[k];
    return n + s->o.nvars;
}

int vvars_check(const struct variant_source *s, const struct ventry *v, const char *where, char *err, size_t errlen)
{
    const struct vvars *vv = &s->vars;
    for (size_t k = 0; vv->values && k < s->o.nvars; k++) {
        size_t i = vv->ncols + k;
        bool in_head = false;
        for (size_t h = 0; h < v->nhdr; h++)
            in_head |= wl_template_uses(v->hdr[h], i);
        if (wl_template_uses(v->url, i) && vv->bad_url[k])
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "%s: {{%s}} in the URL: the value --capture took holds a space, '#' or a control byte",
                             where, s->o.var_names[k]);
        if (in_head && vv->bad_head[k])
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "%s: {{%s}} in a header: the value --capture took holds a control byte", where,
                             s->o.var_names[k]);
    }
    return 0;
}

int variant_source_bind(struct variant_source *s, const struct wl_value *values, size_t n, char *err, size_t errlen)
{
    struct vvars *vv = &s->vars;
    if (n != s->o.nvars)
        return knee_fail(err, errlen, KNEE_EINVAL, "%zu values for %zu --capture names", n, s->o.nvars);
    if (n == 0)
        return 0;
    if (!vv->values) {
        vv->n = n;
        vv->values = xcalloc(n, sizeof *vv->values);
        vv->bad_url = xcalloc(n, sizeof *vv->bad_url);
        vv->bad_head = xcalloc(n, sizeof *vv->bad_head);
    }
    for (size_t k = 0; k < n; k++) {
        char *p = xmalloc(values[k].len + 1);
        memcpy(p, values[k].s, values[k].len);
        p[values[k].len] = '\0';
        free((char *)vv->values[k].s);
        vv->values[k] = (struct wl_value){.s = p, .len = values[k].len};
        vv->bad_url[k] = vv->bad_head[k] = false;
        for (size_t i = 0; i < values[k].len; i++) { /* as open_feed judges a column's cells */
            unsigned char c = (unsigned char)p[i];
            vv->bad_url[k] |= c <= 0x20 || c == 0x7f || c == '#';
            vv->bad_head[k] |= (c < 0x20 && c != '\t') || c == 0x7f;
        }
    }
    char where[300];
    const char *path = s->o.targets_path ? s->o.targets_path : "the target";
    for (size_t i = 0; i < s->nrows; i++) {
        snprintf(where, sizeof where, "%s:%llu", path, (unsigned long long)s->rows[i].line);
        int r = vvars_check(s, &s->rows[i], s->o.targets_path ? where : path, err, errlen);
        if (r)
            return r;
    }
    if (s->have_cur) {
        snprintf(where, sizeof where, "%s:%llu", path, (unsigned long long)s->cur.line);
        return vvars_check(s, &s->cur, where, err, errlen);
    }
    return 0;
}

void vvars_release(struct vvars *vv)
{
    for (size_t k = 0; vv->values && k < vv->n; k++)
        free((char *)vv->values[k].s);
    free(vv->values);
    free(vv->bad_url);
    free(vv->bad_head);
    free(vv->names);
    memset(vv, 0, sizeof *vv);
}
