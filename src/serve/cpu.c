/* CPU workers. The burn loop measures the thread's own CPU clock, not the wall clock: a
 * "10 ms of CPU" request then costs 10 ms of CPU however the kernel schedules the thread,
 * which is what the flat server of the knee article models (capacity = workers / cpu time). */
#include "serve/cpu.h"

#include "core/clock.h"
#include "core/err.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

void cpu_burn(uint64_t cpu_ns)
{
    uint64_t target = thread_cpu_ns() + cpu_ns;
    /* A few microseconds of integer work between clock reads keeps the time in user space
     * (the CPU clock read is a system call) without overshooting the target noticeably. */
    volatile uint64_t sink = 0;
    uint64_t x = target | 1;
    do {
        for (int i = 0; i < 2048; i++)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        sink = x;
    } while (thread_cpu_ns() < target);
    (void)sink;
}

static void *worker_main(void *arg)
{
    struct cpu_pool *p = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->quit)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->quit)
            break;
        struct cpu_job *j = p->head;
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        pthread_mutex_unlock(&p->mu);

        j->start_ns = clock_now_ns();
        if (p->on_start)
            p->on_start(j, p->on_start_arg);
        cpu_burn(j->cpu_ns);
        j->end_ns = clock_now_ns();

        pthread_mutex_lock(&p->mu);
        j->next = NULL;
        if (p->done_tail)
            p->done_tail->next = j;
        else
            p->done_head = j;
        p->done_tail = j;
        uint64_t one = 1;
        ssize_t w = write(p->eventfd, &one, sizeof one);
        (void)w;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int cpu_pool_init(struct cpu_pool *p, unsigned n, cpu_start_fn *on_start, void *arg)
{
    if (n < 1 || n > 256)
        return KNEE_EINVAL;
    p->head = p->tail = p->done_head = p->done_tail = NULL;
    p->quit = false;
    p->on_start = on_start;
    p->on_start_arg = arg;
    p->eventfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (p->eventfd < 0)
        return -errno;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->threads = xcalloc(n, sizeof *p->threads);
    p->nthreads = 0;
    for (unsigned i = 0; i < n; i++) {
        int r = pthread_create(&p->threads[i], NULL, worker_main, p);
        if (r) {
            cpu_pool_release(p);
            return -r;
        }
        p->nthreads++;
    }
    return 0;
}

void cpu_pool_submit(struct cpu_pool *p, struct cpu_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->tail)
        p->tail->next = job;
    else
        p->head = job;
    p->tail = job;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

struct cpu_job *cpu_pool_take_done(struct cpu_pool *p)
{
    uint64_t v;
    while (read(p->eventfd, &v, sizeof v) > 0) {
    }
    pthread_mutex_lock(&p->mu);
    struct cpu_job *j = p->done_head;
    p->done_head = p->done_tail = NULL;
    pthread_mutex_unlock(&p->mu);
    return j;
}

void cpu_pool_release(struct cpu_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    p->threads = NULL;
    p->nthreads = 0;
    if (p->eventfd >= 0)
        close(p->eventfd);
    p->eventfd = -1;
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}
