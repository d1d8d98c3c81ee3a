/* Worker threads that burn real CPU for knee serve's --cpu-ms: jobs wait in one FIFO
 * queue, a worker spins until its thread has used the job's CPU time, then hands the job
 * back to the loop thread through an eventfd. */
#ifndef KNEE_SERVE_CPU_H
#define KNEE_SERVE_CPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct cpu_job {
    struct cpu_job *next;
    uint64_t cpu_ns;   /* in: CPU time to burn (thread CPU clock) */
    uint64_t start_ns; /* out: CLOCK_MONOTONIC when a worker picked the job up */
    uint64_t end_ns;   /* out: CLOCK_MONOTONIC when it finished */
    void *data;        /* the caller's */
};

/* Called on the worker thread when it picks a job up (before burning); may be NULL. Must
 * only touch thread-safe state (atomics). */
typedef void cpu_start_fn(struct cpu_job *job, void *arg);

struct cpu_pool {
    pthread_t *threads;
    unsigned nthreads;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct cpu_job *head, *tail;           /* waiting for a worker, FIFO */
    struct cpu_job *done_head, *done_tail; /* finished, in completion order */
    int eventfd;                           /* readable when done jobs are waiting */
    bool quit;
    cpu_start_fn *on_start;
    void *on_start_arg;
};

/* Start n worker threads (1..256). Returns 0 or -errno. The threads block all signals. */
int cpu_pool_init(struct cpu_pool *p, unsigned n, cpu_start_fn *on_start, void *arg);

/* Queue a job (any thread; the job memory stays the caller's until it comes back). */
void cpu_pool_submit(struct cpu_pool *p, struct cpu_job *job);

/* Take every finished job (a list through ->next, oldest first) and reset the eventfd.
 * NULL when none. */
struct cpu_job *cpu_pool_take_done(struct cpu_pool *p);

/* Stop: workers finish the job in hand, queued jobs are dropped (never returned), threads
 * are joined, the eventfd closed. */
void cpu_pool_release(struct cpu_pool *p);

/* Spin on this thread until it has used cpu_ns of CPU time (CLOCK_THREAD_CPUTIME_ID).
 * Exposed for tests. */
void cpu_burn(uint64_t cpu_ns);

#endif
