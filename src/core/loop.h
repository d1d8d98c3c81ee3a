/* One event loop per thread: epoll for file descriptors, a binary heap of timers with
 * nanosecond deadlines (CLOCK_MONOTONIC), and an eventfd so other threads can wake it.
 *
 * Nothing here allocates per event: callers embed struct loop_io and struct loop_timer in
 * their own objects (a connection, a request). The heap grows only when more timers are armed
 * at once than ever before. Waits use epoll_pwait2 (nanosecond timeout) where the kernel has
 * it, else epoll_wait rounded up to the next millisecond. Not thread-safe, except
 * loop_wake(), which any thread may call. */
#ifndef KNEE_CORE_LOOP_H
#define KNEE_CORE_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

struct loop;
struct loop_io;
struct loop_timer;

/* events is the epoll mask that fired (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP, ...). */
typedef void loop_io_fn(struct loop *loop, struct loop_io *io, uint32_t events);
typedef void loop_timer_fn(struct loop *loop, struct loop_timer *timer);
/* Called after each descriptor or timer callback (loop_set_after). */
typedef void loop_after_fn(void *data);

struct loop_io {
    int fd;
    uint32_t events; /* the mask currently registered */
    loop_io_fn *cb;
    void *data; /* the caller's */
};

struct loop_timer {
    uint64_t deadline_ns;
    size_t heap_index; /* SIZE_MAX when not armed */
    loop_timer_fn *cb;
    void *data; /* the caller's */
};

struct loop {
    int epfd;
    int wakefd; /* eventfd */
    bool stopping;
    bool have_pwait2;
    uint64_t now_ns; /* clock_now_ns() after the last wait; cheap to read */
    struct loop_timer **heap;
    size_t nheap, capheap;
    uint64_t iterations;  /* number of waits so far (for tests and diagnostics) */
    loop_after_fn *after; /* loop_set_after; NULL: none */
    void *after_data;
};

/* Create the epoll and eventfd descriptors. Returns 0 or -errno. */
int loop_init(struct loop *loop);
/* Close the descriptors and free the heap; registered fds are not closed. */
void loop_release(struct loop *loop);

/* Register, change or remove a descriptor. io->fd, cb and data must be set before add; io
 * stays the caller's and must outlive its registration. mod with unchanged events makes no
 * system call. Returns 0 or -errno. Only from the loop's own thread. */
int loop_io_add(struct loop *loop, struct loop_io *io, uint32_t events);
int loop_io_mod(struct loop *loop, struct loop_io *io, uint32_t events);
int loop_io_del(struct loop *loop, struct loop_io *io);

/* Call fn(data) after every descriptor callback and every timer callback returns, before the
 * next one runs (NULL: none; the default). For work the callbacks defer to a point where none
 * of them is running: load/worker's flushes and closes of HTTP/2 sessions. A caller that
 * dispatches events of its own (load/uring) calls it likewise. */
void loop_set_after(struct loop *loop, loop_after_fn *fn, void *data);

/* Prepare a timer (not armed). */
void loop_timer_init(struct loop_timer *t, loop_timer_fn *cb, void *data);
/* Arm (or re-arm) a timer for an absolute CLOCK_MONOTONIC deadline in ns. */
void loop_timer_arm(struct loop *loop, struct loop_timer *t, uint64_t deadline_ns);
/* Disarm; harmless when not armed. */
void loop_timer_cancel(struct loop *loop, struct loop_timer *t);
static inline bool loop_timer_armed(const struct loop_timer *t)
{
    return t->heap_index != (size_t)-1;
}
/* Deadline of the earliest armed timer, or UINT64_MAX. */
uint64_t loop_next_deadline(const struct loop *loop);
/* How long an iteration may wait: max_wait_ns, or less when a timer is due sooner (0 when one
 * is already due). loop_run_once and load/uring's loop wait this long. */
uint64_t loop_wait_ns(const struct loop *loop, uint64_t max_wait_ns);

/* Wait once for events, at most until max_wait_ns from now (or the next timer), then run
 * the fd callbacks and every expired timer. Returns the number of callbacks run, or -errno.
 * EINTR is not an error (returns 0), so signal flags can be checked between calls. */
int loop_run_once(struct loop *loop, uint64_t max_wait_ns);
/* The same, except that descriptors do not end the wait: it sleeps until max_wait_ns from now,
 * the next timer or loop_wake, whichever comes first, then runs the callbacks of whatever the
 * descriptors have by then (one epoll_wait that does not block) and the expired timers. For a
 * caller that reads late on purpose and takes its times from elsewhere (load/worker's deferred
 * reads, timed by the kernel's receive timestamps): a train of arrivals costs one wake. */
int loop_run_once_held(struct loop *loop, uint64_t max_wait_ns);
/* Run the expired timers without waiting (for a caller that waits elsewhere: an io_uring).
 * Returns the number run. */
int loop_run_due(struct loop *loop);
/* Run until loop_stop() (from a callback) or loop_wake() after setting your own flag. */
int loop_run(struct loop *loop);
/* Make loop_run return after the current iteration (sets a flag and wakes the loop). */
void loop_stop(struct loop *loop);
/* Wake a loop blocked in a wait; safe from any thread and from signal handlers. */
void loop_wake(struct loop *loop);

#endif
