/* epoll + timer heap. The heap is a plain binary min-heap on deadline_ns with each timer
 * remembering its index, so cancel and re-arm are O(log n) without searching. */
#include "core/loop.h"

#include "core/clock.h"
#include "core/err.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define LOOP_MAX_EVENTS 256
#define NOT_ARMED ((size_t)-1)

/* The wake eventfd is registered with data.ptr == NULL; reading it resets the counter. */
static void drain_wakefd(struct loop *loop)
{
    uint64_t v;
    while (read(loop->wakefd, &v, sizeof v) > 0) {
    }
}

int loop_init(struct loop *loop)
{
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0)
        return -errno;
    loop->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (loop->wakefd < 0) {
        int e = -errno;
        close(loop->epfd);
        return e;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, loop->wakefd, &ev) < 0) {
        int e = -errno;
        close(loop->wakefd);
        close(loop->epfd);
        return e;
    }
    loop->stopping = false;
    loop->have_pwait2 = true;
    loop->now_ns = clock_now_ns();
    loop->heap = NULL;
    loop->nheap = loop->capheap = 0;
    loop->iterations = 0;
    loop->after = NULL;
    loop->after_data = NULL;
    return 0;
}

void loop_release(struct loop *loop)
{
    if (loop->wakefd >= 0)
        close(loop->wakefd);
    if (loop->epfd >= 0)
        close(loop->epfd);
    loop->wakefd = loop->epfd = -1;
    free(loop->heap);
    loop->heap = NULL;
    loop->nheap = loop->capheap = 0;
}

static int io_ctl(struct loop *loop, int op, struct loop_io *io, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = io};
    if (epoll_ctl(loop->epfd, op, io->fd, &ev) < 0)
        return -errno;
    io->events = events;
    return 0;
}

int loop_io_add(struct loop *loop, struct loop_io *io, uint32_t events)
{
    return io_ctl(loop, EPOLL_CTL_ADD, io, events);
}

int loop_io_mod(struct loop *loop, struct loop_io *io, uint32_t events)
{
    if (io->events == events)
        return 0;
    return io_ctl(loop, EPOLL_CTL_MOD, io, events);
}

int loop_io_del(struct loop *loop, struct loop_io *io)
{
    if (epoll_ctl(loop->epfd, EPOLL_CTL_DEL, io->fd, NULL) < 0)
        return -errno;
    io->events = 0;
    return 0;
}

void loop_set_after(struct loop *loop, loop_after_fn *fn, void *data)
{
    loop->after = fn;
    loop->after_data = data;
}

void loop_timer_init(struct loop_timer *t, loop_timer_fn *cb, void *data)
{
    t->deadline_ns = 0;
    t->heap_index = NOT_ARMED;
    t->cb = cb;
    t->data = data;
}

static void heap_set(struct loop *loop, size_t i, struct loop_timer *t)
{
    loop->heap[i] = t;
    t->heap_index = i;
}

static void sift_up(struct loop *loop, size_t i)
{
    struct loop_timer *t = loop->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (loop->heap[parent]->deadline_ns <= t->deadline_ns)
            break;
        heap_set(loop, i, loop->heap[parent]);
        i = parent;
    }
    heap_set(loop, i, t);
}

static void sift_down(struct loop *loop, size_t i)
{
    struct loop_timer *t = loop->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        uint64_t best = t->deadline_ns;
        if (l < loop->nheap && loop->heap[l]->deadline_ns < best) {
            m = l;
            best = loop->heap[l]->deadline_ns;
        }
        if (r < loop->nheap && loop->heap[r]->deadline_ns < best)
            m = r;
        if (m == i)
            break;
        heap_set(loop, i, loop->heap[m]);
        i = m;
    }
    heap_set(loop, i, t);
}

void loop_timer_cancel(struct loop *loop, struct loop_timer *t)
{
    size_t i = t->heap_index;
    if (i == NOT_ARMED)
        return;
    t->heap_index = NOT_ARMED;
    struct loop_timer *last = loop->heap[--loop->nheap];
    if (i == loop->nheap)
        return;
    heap_set(loop, i, last);
    sift_up(loop, i);
    sift_down(loop, last->heap_index);
}

void loop_timer_arm(struct loop *loop, struct loop_timer *t, uint64_t deadline_ns)
{
    if (t->heap_index != NOT_ARMED) {
        uint64_t old = t->deadline_ns;
        t->deadline_ns = deadline_ns;
        if (deadline_ns < old)
            sift_up(loop, t->heap_index);
        else
            sift_down(loop, t->heap_index);
        return;
    }
    if (loop->nheap == loop->capheap) {
        loop->capheap = loop->capheap ? loop->capheap * 2 : 64;
        loop->heap = xrealloc(loop->heap, loop->capheap * sizeof *loop->heap);
    }
    t->deadline_ns = deadline_ns;
    heap_set(loop, loop->nheap++, t);
    sift_up(loop, t->heap_index);
}

uint64_t loop_next_deadline(const struct loop *loop)
{
    return loop->nheap ? loop->heap[0]->deadline_ns : UINT64_MAX;
}

static int run_timers(struct loop *loop)
{
    int n = 0;
    while (loop->nheap && loop->heap[0]->deadline_ns <= loop->now_ns) {
        struct loop_timer *t = loop->heap[0];
        loop_timer_cancel(loop, t);
        t->cb(loop, t);
        if (loop->after)
            loop->after(loop->after_data);
        n++;
    }
    return n;
}

int loop_run_due(struct loop *loop)
{
    loop->now_ns = clock_now_ns();
    return run_timers(loop);
}

static int wait_events(struct loop *loop, struct epoll_event *evs, uint64_t wait_ns)
{
    if (loop->have_pwait2) {
        struct timespec ts = {.tv_sec = (time_t)(wait_ns / NS_PER_S), .tv_nsec = (long)(wait_ns % NS_PER_S)};
        int n = epoll_pwait2(loop->epfd, evs, LOOP_MAX_EVENTS, wait_ns == UINT64_MAX ? NULL : &ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n;
        loop->have_pwait2 = false;
    }
    int ms = -1;
    if (wait_ns != UINT64_MAX)
        ms = wait_ns > 3600 * NS_PER_S ? 3600 * 1000 : (int)((wait_ns + NS_PER_MS - 1) / NS_PER_MS);
    return epoll_wait(loop->epfd, evs, LOOP_MAX_EVENTS, ms);
}

uint64_t loop_wait_ns(const struct loop *loop, uint64_t max_wait_ns)
{
    uint64_t now = clock_now_ns();
    uint64_t next = loop_next_deadline(loop);
    if (next == UINT64_MAX)
        return max_wait_ns;
    uint64_t until = next > now ? next - now : 0;
    return until < max_wait_ns ? until : max_wait_ns;
}

/* Run the callbacks of n ready descriptors, then every expired timer. */
static int dispatch(struct loop *loop, const struct epoll_event *evs, int n)
{
    int ran = 0;
    for (int i = 0; i < n; i++) {
        struct loop_io *io = evs[i].data.ptr;
        if (!io) {
            drain_wakefd(loop);
            continue;
        }
        io->cb(loop, io, evs[i].events);
        if (loop->after)
            loop->after(loop->after_data);
        ran++;
    }
    return ran + run_timers(loop);
}

int loop_run_once(struct loop *loop, uint64_t max_wait_ns)
{
    struct epoll_event evs[LOOP_MAX_EVENTS];
    uint64_t wait_ns = loop_wait_ns(loop, max_wait_ns);
    int n = wait_events(loop, evs, wait_ns);
    loop->iterations++;
    loop->now_ns = clock_now_ns();
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    return dispatch(loop, evs, n);
}

int loop_run_once_held(struct loop *loop, uint64_t max_wait_ns)
{
    uint64_t wait_ns = loop_wait_ns(loop, max_wait_ns);
    if (wait_ns) {
        /* the wake descriptor alone ends the sleep early (a stop); ppoll takes nanoseconds */
        struct pollfd p = {.fd = loop->wakefd, .events = POLLIN};
        struct timespec ts = {.tv_sec = (time_t)(wait_ns / NS_PER_S), .tv_nsec = (long)(wait_ns % NS_PER_S)};
        if (ppoll(&p, 1, wait_ns == UINT64_MAX ? NULL : &ts, NULL) < 0 && errno != EINTR)
            return -errno;
    }
    struct epoll_event evs[LOOP_MAX_EVENTS];
    int n = epoll_wait(loop->epfd, evs, LOOP_MAX_EVENTS, 0);
    loop->iterations++;
    loop->now_ns = clock_now_ns();
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    return dispatch(loop, evs, n);
}

int loop_run(struct loop *loop)
{
    loop->stopping = false;
    while (!loop->stopping) {
        int r = loop_run_once(loop, UINT64_MAX);
        if (r < 0)
            return r;
    }
    return 0;
}

void loop_stop(struct loop *loop)
{
    loop->stopping = true;
    loop_wake(loop);
}

void loop_wake(struct loop *loop)
{
    uint64_t one = 1;
    ssize_t r = write(loop->wakefd, &one, sizeof one);
    (void)r;
}
