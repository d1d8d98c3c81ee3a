/* The environment record of a repetition, from /proc: each CPU's busy, iowait and steal
 * shares over the repetition (/proc/stat), the load average before and after, the busiest
 * other processes by CPU time used meanwhile (/proc/[pid]/stat utime + stime), knee's own
 * CPU time (getrusage) and the wall-clock start. What cannot be read is left out: a record
 * is a note next to the numbers, never a reason to stop measuring. */
#include "capacity/capacity.h"

#include "core/clock.h"
#include "core/err.h"
#include "core/grow.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct capacity_snap_proc {
    int pid;
    unsigned long long ticks; /* utime + stime */
    char comm[32];
};

static double self_cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return NAN;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static void read_loadavg(double out[3])
{
    if (getloadavg(out, 3) != 3)
        out[0] = out[1] = out[2] = NAN;
}

/* The "cpuN" lines of /proc/stat: 4 counters per CPU (busy, iowait, steal, total) into a heap
 * array; *n CPUs (0 when unreadable). */
static uint64_t *read_cpu_ticks(size_t *n)
{
    *n = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return NULL;
    size_t cap = 0;
    uint64_t *t = NULL;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu", 3) != 0 || !isdigit((unsigned char)line[3]))
            continue;
        unsigned long long v[8] = {0}; /* user nice system idle iowait irq softirq steal */
        int k = sscanf(line + 3, "%*u %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                       &v[5], &v[6], &v[7]);
        if (k < 4)
            continue;
        t = grow_array(t, &cap, *n + 1, 4 * sizeof *t, 16);
        uint64_t *c = t + 4 * *n;
        c[0] = v[0] + v[1] + v[2] + v[5] + v[6]; /* busy: user, nice, system, irq, softirq */
        c[1] = v[4];
        c[2] = v[7];
        c[3] = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
        (*n)++;
    }
    fclose(f);
    return t;
}

/* One /proc/PID/stat: comm (between the first '(' and the last ')') and utime + stime. */
static bool read_proc(int pid, struct capacity_snap_proc *p)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open)
        return false;
    size_t len = (size_t)(close - open - 1);
    if (len >= sizeof p->comm)
        len = sizeof p->comm - 1;
    memcpy(p->comm, open + 1, len);
    p->comm[len] = '\0';
    /* after ") ": state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15) */
    unsigned long long ut = 0, st = 0;
    if (sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return false;
    p->pid = pid;
    p->ticks = ut + st;
    return true;
}

static int cmp_pid(const void *a, const void *b)
{
    const struct capacity_snap_proc *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Every process but this one, sorted by pid. */
static struct capacity_snap_proc *read_procs(size_t *n)
{
    *n = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return NULL;
    size_t cap = 0;
    struct capacity_snap_proc *v = NULL;
    int self = (int)getpid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        int pid = atoi(e->d_name);
        if (pid <= 0 || pid == self)
            continue;
        v = grow_array(v, &cap, *n + 1, sizeof *v, 256);
        if (read_proc(pid, &v[*n]))
            (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(v, *n, sizeof *v, cmp_pid);
    return v;
}

void capacity_env_begin(struct capacity_env_snap *s)
{
    memset(s, 0, sizeof *s);
    s->wall_ns = clock_wall_ns();
    s->mono_ns = clock_now_ns();
    read_loadavg(s->loadavg);
    s->self_cpu_s = self_cpu_s();
    s->cpu_ticks = read_cpu_ticks(&s->ncpus);
    s->procs = read_procs(&s->nprocs);
}

/* The top CAPACITY_TOP_PROCS by CPU used between the snapshots (a process that started
 * meanwhile counts whole; one that ended is not seen). */
static void top_procs(const struct capacity_env_snap *s, struct capacity_env *out, double tick_s)
{
    size_t n;
    struct capacity_snap_proc *now = read_procs(&n);
    out->nprocs = 0;
    for (size_t i = 0; i < n; i++) {
        struct capacity_snap_proc key = {.pid = now[i].pid};
        const struct capacity_snap_proc *was =
            s->nprocs ? bsearch(&key, s->procs, s->nprocs, sizeof key, cmp_pid) : NULL;
        unsigned long long d = was && was->ticks <= now[i].ticks ? now[i].ticks - was->ticks : now[i].ticks;
        double cpu_s = (double)d * tick_s;
        if (d == 0)
            continue;
        /* insertion into the short sorted list */
        size_t k = out->nprocs;
        if (k == CAPACITY_TOP_PROCS && cpu_s <= out->top[k - 1].cpu_s)
            continue;
        if (k < CAPACITY_TOP_PROCS)
            out->nprocs++;
        else
            k--;
        while (k > 0 && out->top[k - 1].cpu_s < cpu_s) {
            out->top[k] = out->top[k - 1];
            k--;
        }
        out->top[k].pid = now[i].pid;
        snprintf(out->top[k].comm, sizeof out->top[k].comm, "%s", now[i].comm);
        out->top[k].cpu_s = cpu_s;
    }
    free(now);
}

void capacity_env_end(struct capacity_env_snap *s, struct capacity_env *out)
{
    memset(out, 0, sizeof *out);
    out->have = true;
    time_t secs = (time_t)(s->wall_ns / NS_PER_S);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(out->start_wall, sizeof out->start_wall, "%Y-%m-%dT%H:%M:%SZ", &tm);
    out->wall_s = (double)(clock_now_ns() - s->mono_ns) / 1e9;
    memcpy(out->loadavg_before, s->loadavg, sizeof s->loadavg);
    read_loadavg(out->loadavg_after);
    out->knee_cpu_s = self_cpu_s() - s->self_cpu_s;
    long hz = sysconf(_SC_CLK_TCK);
    double tick_s = hz > 0 ? 1.0 / (double)hz : 0.01;

    size_t n;
    uint64_t *now = read_cpu_ticks(&n);
    double busy_s = 0;
    size_t ncpu = n < s->ncpus ? n : s->ncpus;
    for (size_t i = 0; i < ncpu; i++) {
        const uint64_t *a = s->cpu_ticks + 4 * i, *b = now + 4 * i;
        double total = b[3] > a[3] ? (double)(b[3] - a[3]) : 0;
        double busy = b[0] > a[0] ? (double)(b[0] - a[0]) : 0;
        busy_s += busy * tick_s;
        if (out->ncpus < CAPACITY_MAX_CPUS) {
            struct capacity_cpu_share *c = &out->cpu[out->ncpus++];
            c->busy = total > 0 ? busy / total : NAN;
            c->iowait = total > 0 && b[1] >= a[1] ? (double)(b[1] - a[1]) / total : NAN;
            c->steal = total > 0 && b[2] >= a[2] ? (double)(b[2] - a[2]) / total : NAN;
            if (c->steal > CAPACITY_STEAL_SHARE)
                out->busy = true;
        }
    }
    free(now);
    double others = busy_s - (isfinite(out->knee_cpu_s) ? out->knee_cpu_s : 0);
    out->others_share = ncpu && out->wall_s > 0 ? fmax(0, others) / (out->wall_s * (double)ncpu) : NAN;
    if (out->others_share > CAPACITY_BUSY_SHARE)
        out->busy = true;
    top_procs(s, out, tick_s);
    free(s->cpu_ticks);
    free(s->procs);
    memset(s, 0, sizeof *s);
}
