/* --shard, --shards, --start-at: parsing, the schedulers' environment variables, and the
 * shared start instant (absolute, or relative to a base every process can read). */
#include "cli/shard_flags.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/units.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A decimal uint32 filling the whole string. */
static bool parse_u32(const char *s, size_t len, uint32_t *out)
{
    if (len == 0 || len > 10)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool env_u32(const char *name, uint32_t *out)
{
    const char *v = getenv(name);
    return v && parse_u32(v, strlen(v), out);
}

/* The scheduler's index and count; false when none told this process. */
static bool from_scheduler(uint64_t shards, uint32_t *index, uint32_t *count, const char **source)
{
    static const struct {
        const char *rank, *size, *source;
    } pairs[] = {
        {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_PROCID/SLURM_NTASKS"},
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE", "PMI_RANK/PMI_SIZE"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (env_u32(pairs[i].rank, index) && env_u32(pairs[i].size, count)) {
            *source = pairs[i].source;
            return true;
        }
    if (env_u32("JOB_COMPLETION_INDEX", index)) {
        if (shards) {
            *count = shards > UINT32_MAX ? UINT32_MAX : (uint32_t)shards;
            *source = "JOB_COMPLETION_INDEX/--shards";
            return true;
        }
        if (env_u32(RUN_SHARD_ENV_COUNT, count)) {
            *source = "JOB_COMPLETION_INDEX/" RUN_SHARD_ENV_COUNT;
            return true;
        }
    }
    return false;
}

int cli_shard_args(const struct cmd_spec *spec, const char *shard, uint64_t shards, struct run_config *cfg)
{
    const struct opt *given = opt_find(spec, "shards");
    if (given && given->seen && shards == 0) /* 0 reads as "not given" below */
        return opt_fail(spec, "--shards must be between 1 and %d", RUN_MAX_SHARDS);
    if (!shard && !shards)
        return 0;
    uint32_t index = 0, count = 0;
    const char *source = "--shard";
    if (shard && strcmp(shard, "auto") != 0) {
        const char *slash = strchr(shard, '/');
        if (!slash || !parse_u32(shard, (size_t)(slash - shard), &index) ||
            !parse_u32(slash + 1, strlen(slash + 1), &count))
            return opt_fail(spec, "--shard '%s': expected I/N (shard I of N, counting from 0, e.g. 0/4) or auto",
                            shard);
        if (shards && shards != count)
            return opt_fail(spec, "--shard %s and --shards %" PRIu64 ": give one count", shard, shards);
    } else if (!from_scheduler(shards, &index, &count, &source)) {
        return opt_fail(spec,
                        "--shard auto: no scheduler told this process its shard (Slurm: SLURM_PROCID and SLURM_NTASKS; "
                        "Kubernetes: JOB_COMPLETION_INDEX with --shards N or " RUN_SHARD_ENV_COUNT
                        "; MPI: OMPI_COMM_WORLD_RANK/SIZE or PMI_RANK/PMI_SIZE): give --shard I/N");
    } else if (shards && shards != count) {
        return opt_fail(spec, "--shards %" PRIu64 ": the scheduler says %u (%s)", shards, count, source);
    }
    if (count == 0 || count > RUN_MAX_SHARDS)
        return opt_fail(spec, "--shard: the count must be between 1 and %d (%s gave %u)", RUN_MAX_SHARDS, source,
                        count);
    if (index >= count)
        return opt_fail(spec, "--shard: index %u of %u (%s): the index counts from 0 and must be below the count",
                        index, count, source);
    cfg->plan.shard.index = index;
    cfg->plan.shard.count = count;
    cfg->plan.shard.source = source;
    return 0;
}

/* ---- instants ---- */

/* digits[.digits] → ns since the epoch */
static int parse_unix(const char *s, uint64_t *out)
{
    uint64_t sec = 0, frac = 0, scale = NS_PER_S;
    size_t i = 0;
    for (; isdigit((unsigned char)s[i]); i++) {
        if (sec > (UINT64_MAX / NS_PER_S - 9) / 10)
            return KNEE_EINVAL;
        sec = sec * 10 + (uint64_t)(s[i] - '0');
    }
    if (i == 0)
        return KNEE_EINVAL;
    if (s[i] == '.') {
        size_t j = ++i;
        for (; isdigit((unsigned char)s[i]); i++)
            if (scale > 1) {
                scale /= 10;
                frac += (uint64_t)(s[i] - '0') * scale;
            }
        if (i == j)
            return KNEE_EINVAL;
    }
    if (s[i])
        return KNEE_EINVAL;
    *out = sec * NS_PER_S + frac;
    return 0;
}

static bool digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* RFC 3339 date-time: YYYY-MM-DD(T|t| )HH:MM:SS[.frac](Z|z|±HH:MM) */
static int parse_rfc3339(const char *s, uint64_t *out)
{
    int Y, M, D, h, m, sec;
    if (strlen(s) < 20 || !digits(s, 4, &Y) || s[4] != '-' || !digits(s + 5, 2, &M) || s[7] != '-' ||
        !digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s + 11, 2, &h) ||
        s[13] != ':' || !digits(s + 14, 2, &m) || s[16] != ':' || !digits(s + 17, 2, &sec))
        return KNEE_EINVAL;
    if (Y < 1970 || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
        return KNEE_EINVAL;
    const char *p = s + 19;
    uint64_t frac = 0, scale = NS_PER_S;
    if (*p == '.') {
        const char *q = ++p;
        for (; isdigit((unsigned char)*p); p++)
            if (scale > 1) {
                scale /= 10;
                frac += (uint64_t)(*p - '0') * scale;
            }
        if (p == q)
            return KNEE_EINVAL;
    }
    int64_t offset_s = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int oh, om;
        if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
            return KNEE_EINVAL;
        offset_s = (int64_t)(oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
        p += 6;
    } else {
        return KNEE_EINVAL;
    }
    if (*p)
        return KNEE_EINVAL;
    struct tm tm = {.tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h, .tm_min = m, .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1 || tm.tm_mday != D) /* 2026-02-30 normalises to March: refused */
        return KNEE_EINVAL;
    int64_t utc_s = (int64_t)t - offset_s;
    if (utc_s < 0)
        return KNEE_EINVAL;
    *out = (uint64_t)utc_s * NS_PER_S + frac;
    return 0;
}

int cli_instant_parse(const char *s, uint64_t *unix_ns)
{
    while (isspace((unsigned char)*s))
        s++;
    char buf[64];
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 0 || n >= sizeof buf)
        return KNEE_EINVAL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return parse_unix(buf, unix_ns) == 0 ? 0 : parse_rfc3339(buf, unix_ns);
}

/* The base instant in FILE, written there first (atomically: a complete temporary file linked
 * into place with link(2), which fails when the name exists, so exactly one process wins and a
 * reader never sees half a line; link is atomic on NFS too) when nobody has. */
static int base_from_file(const char *path, uint64_t now_unix_ns, uint64_t *out, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        FILE *f = fopen(path, "r");
        if (f) {
            char line[128] = "";
            bool got = fgets(line, sizeof line, f) != NULL;
            fclose(f);
            if (!got || cli_instant_parse(line, out) != 0)
                return knee_fail(err, errlen, KNEE_EINVAL,
                                 "--start-at: %s does not hold an instant (Unix seconds or RFC 3339) on its first line",
                                 path);
            return 0;
        }
        if (errno != ENOENT)
            return knee_fail(err, errlen, -errno, "--start-at: %s: %s", path, strerror(errno));
        /* nobody wrote it yet: offer ours; link(2) fails with EEXIST when another process won */
        size_t n = strlen(path);
        char *tmp = xmalloc(n + 16);
        snprintf(tmp, n + 16, "%s.XXXXXX", path);
        int fd = mkstemp(tmp);
        if (fd >= 0)
            fchmod(fd, 0644); /* every shard reads it, whoever wrote it */
        FILE *w = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!w) {
            int e = -errno;
            if (fd >= 0) {
                close(fd);
                unlink(tmp);
            }
            free(tmp);
            return knee_fail(err, errlen, e, "--start-at: cannot create %s: %s", path, knee_strerror(e));
        }
        fprintf(w, "%llu.%09llu\n", (unsigned long long)(now_unix_ns / NS_PER_S),
                (unsigned long long)(now_unix_ns % NS_PER_S));
        int werr = ferror(w) ? EIO : 0;
        if (fclose(w) != 0 && !werr)
            werr = errno;
        int lr = werr ? -1 : link(tmp, path);
        int lerr = lr ? (werr ? werr : errno) : 0;
        unlink(tmp);
        free(tmp);
        if (lr == 0) {
            *out = now_unix_ns;
            return 0;
        }
        if (lerr != EEXIST)
            return knee_fail(err, errlen, -lerr, "--start-at: cannot create %s: %s", path, strerror(lerr));
    }
    return knee_fail(err, errlen, KNEE_EINVAL, "--start-at: %s keeps changing", path);
}

int cli_start_at_parse(const char *s, uint64_t now_unix_ns, uint64_t *unix_ns, char *err, size_t errlen)
{
    if (*s != '+') {
        if (cli_instant_parse(s, unix_ns) != 0)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--start-at '%s': expected Unix seconds (1764507600), RFC 3339 (2026-11-30T13:00:00Z), "
                             "+D after $" RUN_SHARD_ENV_BASE " or +D@FILE",
                             s);
        return 0;
    }
    const char *at = strchr(s, '@');
    char dur[64];
    size_t dlen = at ? (size_t)(at - s - 1) : strlen(s + 1);
    if (dlen == 0 || dlen >= sizeof dur)
        return knee_fail(err, errlen, KNEE_EINVAL, "--start-at '%s': expected +D such as +30s", s);
    memcpy(dur, s + 1, dlen);
    dur[dlen] = '\0';
    uint64_t d_ns;
    if (units_parse_duration_ns(dur, NS_PER_S, &d_ns) != 0)
        return knee_fail(err, errlen, KNEE_EINVAL, "--start-at '%s': '%s' is not a duration such as 30s", s, dur);
    uint64_t base;
    if (at) {
        if (!at[1])
            return knee_fail(err, errlen, KNEE_EINVAL, "--start-at '%s': no file after '@'", s);
        int r = base_from_file(at + 1, now_unix_ns, &base, err, errlen);
        if (r)
            return r;
    } else {
        const char *env = getenv(RUN_SHARD_ENV_BASE);
        if (!env)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--start-at '%s': +D counts from the instant in $" RUN_SHARD_ENV_BASE
                             ", which is not set (or give +D@FILE, or an absolute instant)",
                             s);
        if (cli_instant_parse(env, &base) != 0)
            return knee_fail(err, errlen, KNEE_EINVAL,
                             "--start-at: $" RUN_SHARD_ENV_BASE " '%s' is not Unix seconds or RFC 3339", env);
    }
    if (d_ns > UINT64_MAX - base)
        return knee_fail(err, errlen, KNEE_EINVAL, "--start-at '%s': too far ahead", s);
    *unix_ns = base + d_ns;
    return 0;
}

int cli_start_at_args(const struct cmd_spec *spec, const char *start_at, struct run_config *cfg)
{
    if (!start_at)
        return 0;
    char why[512];
    uint64_t now = clock_wall_ns(), at;
    if (cli_start_at_parse(start_at, now, &at, why, sizeof why) != 0)
        return opt_fail(spec, "%s", why);
    if (at > now && at - now > 24 * 3600 * NS_PER_S)
        return opt_fail(spec, "--start-at %s: the instant is %.0f hours away (at most a day)", start_at,
                        (double)(at - now) / 3.6e12);
    uint64_t span = cfg->plan.duration_ns ? cfg->plan.duration_ns : 3600 * NS_PER_S;
    if (at < now && now - at >= span)
        return opt_fail(spec, "--start-at %s: the instant was %.3f s ago: the whole plan (%.3f s) lies in the past",
                        start_at, (double)(now - at) / 1e9, (double)span / 1e9);
    cfg->plan.shard.start_at_unix_ns = at;
    return 0;
}
