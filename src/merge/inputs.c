/* The inputs of a merge: each file's kind and shard record, and the set of shards they form
 * (the count, the plan and the start instant agreed by all; each kind given once per shard and
 * for every shard). */
#include "merge/internal.h"

#include "core/clock.h"
#include "core/err.h"
#include "reqlog/reqlog.h"
#include "runreport/runreport.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[MERGE_NKINDS] = {"JSON", "binary log", "hlog"};

const char *merge_kind_name(enum merge_kind k)
{
    return (unsigned)k < MERGE_NKINDS ? kind_names[k] : "?";
}

/* ", shard I/N, plan HEX, start at S.NNNNNNNNN" (or "shards all/N" in a merge's comment) inside
 * an hlog comment line. */
bool merge_parse_hlog_comment(const char *line, struct merge_probe *p)
{
    const char *s = strstr(line, ", shard ");
    bool merged = false;
    unsigned idx = 0, cnt = 0;
    int used = 0;
    if (s) {
        if (sscanf(s, ", shard %u/%u%n", &idx, &cnt, &used) != 2)
            return false;
    } else if ((s = strstr(line, ", shards all/")) != NULL) {
        merged = true;
        if (sscanf(s, ", shards all/%u%n", &cnt, &used) != 1)
            return false;
    } else {
        return false;
    }
    s += used;
    char hex[17];
    unsigned long long sec = 0, ns = 0;
    if (sscanf(s, ", plan %16[0-9a-fA-F], start at %llu.%9llu", hex, &sec, &ns) != 3)
        return false;
    uint64_t plan;
    if (!record_shard_plan_parse(hex, &plan) || cnt == 0 || (!merged && idx >= cnt) || sec > UINT64_MAX / NS_PER_S - 1)
        return false;
    p->index = merged ? RUN_SHARD_MERGED : idx;
    p->count = cnt;
    p->plan_id = plan;
    p->start_at_unix_ns = (uint64_t)sec * NS_PER_S + (uint64_t)ns;
    p->merged = merged;
    return true;
}

static int probe_hlog(const char *path, FILE *f, struct merge_probe *p)
{
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (line[0] != '#')
            break; /* the comments come first */
        if (merge_parse_hlog_comment(line, p))
            return 0;
    }
    (void)path;
    return 0;
}

int merge_json_shard(const json_t *root, const char *path, struct merge_probe *p, char *err, size_t errlen)
{
    struct run_shard sh;
    char why[512];
    p->kind = MERGE_JSON;
    p->count = 0;
    if (record_read_shard_id(root, &sh, why, sizeof why))
        return knee_fail(err, errlen, KNEE_EFORMAT, "%s: %s", path, why);
    if (!sh.count)
        return 0;
    p->merged = sh.index == RUN_SHARD_MERGED;
    p->count = sh.count;
    p->index = sh.index;
    p->plan_id = sh.plan_id;
    p->start_at_unix_ns = sh.start_at_unix_ns;
    return 0;
}

int merge_probe_file(const char *path, struct merge_probe *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "rb");
    if (!f)
        return knee_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
    unsigned char head[16];
    size_t n = fread(head, 1, sizeof head, f);
    size_t i = 0;
    while (i < n && isspace(head[i]))
        i++;
    int r = 0;
    if (reqlog_is_log(head, n)) {
        fclose(f);
        struct reqlog_reader *rd;
        char why[256];
        r = reqlog_reader_open(&rd, path, why, sizeof why);
        if (r)
            return knee_fail(err, errlen, r, "%s: %s", path, why);
        struct reqlog_shard sh;
        p->kind = MERGE_LOG;
        if (reqlog_reader_shard(rd, &sh)) {
            p->merged = sh.index == REQLOG_SHARD_MERGED;
            p->index = p->merged ? RUN_SHARD_MERGED : sh.index;
            p->count = sh.count;
            p->plan_id = sh.plan_id;
            p->start_at_unix_ns = sh.start_at_unix_ns;
        }
        reqlog_reader_close(rd);
        return 0;
    }
    if (i < n && head[i] == '{') {
        fclose(f);
        json_error_t je;
        json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!root)
            return knee_fail(err, errlen, KNEE_EFORMAT, "%s:%d: %s", path, je.line, je.text);
        r = merge_json_shard(root, path, p, err, errlen);
        json_decref(root);
        return r;
    }
    if (n > 0 && (head[0] == '#' || head[0] == '"' || isdigit(head[0]) || memcmp(head, "Tag=", n < 4 ? n : 4) == 0)) {
        size_t len = strlen(path);
        bool csv = len >= 4 && strcmp(path + len - 4, ".csv") == 0;
        if (!csv && (head[0] == '#' || memcmp(head, "Tag=", n < 4 ? n : 4) == 0 || strstr(path, ".hlog"))) {
            rewind(f);
            p->kind = MERGE_HLOG;
            r = probe_hlog(path, f, p);
            fclose(f);
            return r;
        }
    }
    fclose(f);
    size_t len = strlen(path);
    if (len >= 4 && strcmp(path + len - 4, ".csv") == 0)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "%s: a CSV request log does not say which shard wrote it: give the shards' binary logs "
                         "(knee run --out x.bin)",
                         path);
    return knee_fail(err, errlen, KNEE_EFORMAT,
                     "%s: not an output of knee run (its --json, its binary --out log or its --hlog)", path);
}

bool merge_set_complete(const struct merge_set *s, enum merge_kind kind)
{
    if (!s->count)
        return false;
    for (uint32_t i = 0; i < s->count; i++)
        if (!s->shards[i].path[kind])
            return false;
    return true;
}

/* "1, 3, 5" (at most a few, then "and N more") */
static void list_missing(const struct merge_set *s, enum merge_kind kind, bool any_kind, char *buf, size_t len)
{
    size_t off = 0, shown = 0, total = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < s->count; i++) {
        bool missing = true;
        for (int k = 0; k < MERGE_NKINDS; k++)
            if ((any_kind || k == (int)kind) && s->shards[i].path[k])
                missing = false;
        if (!missing)
            continue;
        total++;
        if (shown < 8 && off < len) {
            off += (size_t)snprintf(buf + off, len - off, "%s%u", shown ? ", " : "", i);
            shown++;
        }
    }
    if (total > shown && off < len)
        snprintf(buf + off, len - off, " and %zu more", total - shown);
}

int merge_set_build(struct merge_set *s, const char *const *paths, size_t n, bool allow_partial, char *err,
                    size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (n == 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "no shard outputs given");
    const char *first = NULL;
    struct merge_probe p0 = {0};
    for (size_t i = 0; i < n; i++) {
        struct merge_probe p;
        if (merge_probe_file(paths[i], &p, err, errlen))
            goto fail;
        if (!p.count) {
            knee_fail(err, errlen, KNEE_EINVAL,
                      "%s: not a shard's output (no shard record: knee run writes one with --shard I/N)", paths[i]);
            goto fail;
        }
        if (p.merged) {
            knee_fail(err, errlen, KNEE_EINVAL, "%s: already a merge of %u shards, not a shard's output", paths[i],
                      p.count);
            goto fail;
        }
        if (!first) {
            first = paths[i];
            p0 = p;
            s->count = p.count;
            s->plan_id = p.plan_id;
            s->start_at_unix_ns = p.start_at_unix_ns;
            s->shards = xcalloc(p.count, sizeof *s->shards);
        } else if (p.count != p0.count || p.plan_id != p0.plan_id || p.start_at_unix_ns != p0.start_at_unix_ns) {
            char a[24], b[24];
            snprintf(a, sizeof a, "%016" PRIx64, p0.plan_id);
            snprintf(b, sizeof b, "%016" PRIx64, p.plan_id);
            knee_fail(err, errlen, KNEE_EINVAL,
                      "%s is shard %u of %u of plan %s, but %s is shard %u of %u of plan %s: not the shards of one "
                      "plan (another count, rate, target, duration, seed or start instant?)",
                      first, p0.index, p0.count, a, paths[i], p.index, p.count, b);
            goto fail;
        }
        struct merge_shard *sh = &s->shards[p.index];
        if (sh->path[p.kind]) {
            knee_fail(err, errlen, KNEE_EINVAL,
                      "shard %u of %u: two %ss, %s and %s (a shard counted twice would double "
                      "its requests)",
                      p.index, p.count, merge_kind_name(p.kind), sh->path[p.kind], paths[i]);
            goto fail;
        }
        sh->path[p.kind] = paths[i];
        s->have[p.kind] = true;
        s->nfiles++;
    }
    if (!allow_partial) {
        char miss[160];
        list_missing(s, 0, true, miss, sizeof miss);
        if (miss[0]) {
            knee_fail(err, errlen, KNEE_EINVAL,
                      "missing shards %s of %u: every shard's output is needed (a merge without them would be silently "
                      "smaller)",
                      miss, s->count);
            goto fail;
        }
        for (int k = 0; k < MERGE_NKINDS; k++) {
            if (!s->have[k])
                continue;
            list_missing(s, (enum merge_kind)k, false, miss, sizeof miss);
            if (miss[0]) {
                knee_fail(err, errlen, KNEE_EINVAL, "the %s of shards %s of %u is missing: give every shard's %s",
                          merge_kind_name((enum merge_kind)k), miss, s->count, merge_kind_name((enum merge_kind)k));
                goto fail;
            }
        }
    }
    return 0;
fail:
    merge_set_release(s);
    return KNEE_EINVAL;
}

void merge_set_release(struct merge_set *s)
{
    free(s->shards);
    memset(s, 0, sizeof *s);
}

void merge_set_describe(const struct merge_set *s, char *buf, size_t len)
{
    uint32_t have = 0;
    for (uint32_t i = 0; i < s->count; i++)
        for (int k = 0; k < MERGE_NKINDS; k++)
            if (s->shards[i].path[k]) {
                have++;
                break;
            }
    size_t off = 0;
    if (have == s->count)
        off += (size_t)snprintf(buf, len, "all %u shards of one run (plan %016" PRIx64, s->count, s->plan_id);
    else {
        char miss[160];
        list_missing(s, 0, true, miss, sizeof miss);
        off += (size_t)snprintf(buf, len, "%u of %u shards of one run (MISSING %s; plan %016" PRIx64, have, s->count,
                                miss, s->plan_id);
    }
    if (off < len) {
        if (s->start_at_unix_ns)
            off += (size_t)snprintf(buf + off, len - off, ", shared start %.3f", (double)s->start_at_unix_ns / 1e9);
        else
            off += (size_t)snprintf(buf + off, len - off, ", no shared start instant");
    }
    if (off < len)
        snprintf(buf + off, len - off, ")");
}
