/* The io_uring engine of the load threads (--io uring), private to src/load. A thread with a
 * ring (worker.ring) still connects through epoll (the loop's descriptor is polled through the
 * ring); once a cleartext HTTP/1.1 connection is ready it moves to the ring's transport row
 * (conn_ring_ops, load/worker.h) and leaves epoll: its requests go out as send requests and its
 * responses come in through one multishot receive into the thread's provided buffers. One
 * io_uring_enter per loop iteration submits everything queued and waits for completions (or
 * the next timer). The protocol and the accounting stay h1.c's (proto_ops.input, on_io). */
#ifndef KNEE_LOAD_URING_H
#define KNEE_LOAD_URING_H

#include <stdint.h>

struct worker;

/* Whether this process can set up a ring as the threads will: 0, or -errno (EPERM where a
 * container or kernel.io_uring_disabled forbids it, ENOSYS without io_uring). */
int uring_probe(void);
/* On the load thread itself (the ring has one issuer): w->ring, or -errno (w->ring stays NULL). */
int uring_init(struct worker *w);
void uring_release(struct worker *w);
/* loop_run_once of a thread with a ring: submit, wait at most max_wait_ns (or until the next
 * timer), handle the completions, then epoll's events when it had any, then the due timers. */
int uring_run_once(struct worker *w, uint64_t max_wait_ns);

#endif
