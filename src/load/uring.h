/* The io_uring engine of the load threads (--io uring), private to src/load. A thread with a
 * ring (worker.ring) still connects through epoll (the loop's descriptor is polled through the
 * ring); once a cleartext HTTP/1.1 connection is ready it leaves epoll: its requests go out as
 * send requests and its responses come in through one multishot receive into the thread's
 * provided buffers. One io_uring_enter per loop iteration submits everything queued and waits
 * for completions (or the next timer). The accounting stays worker.c's (worker_h1_input). */
#ifndef KNEE_LOAD_URING_H
#define KNEE_LOAD_URING_H

#include <stdint.h>

struct worker;
struct conn;

/* Whether this process can set up a ring as the threads will: 0, or -errno (EPERM where a
 * container or kernel.io_uring_disabled forbids it, ENOSYS without io_uring). */
int uring_probe(void);
/* On the load thread itself (the ring has one issuer): w->ring, or -errno (w->ring stays NULL). */
int uring_init(struct worker *w);
void uring_release(struct worker *w);
/* loop_run_once of a thread with a ring: submit, wait at most max_wait_ns (or until the next
 * timer), handle the completions, then epoll's events when it had any, then the due timers. */
int uring_run_once(struct worker *w, uint64_t max_wait_ns);
/* c (cleartext HTTP/1.1) is connected: it leaves epoll, its receive is armed. */
void uring_conn_ready(struct worker *w, struct conn *c);
/* Queue the send of the rest of c's request (c->req). 0, or -1 with c->sys_errno set. */
int uring_send(struct worker *w, struct conn *c);
/* c is being closed: what is queued for it is submitted first (the descriptor's number may
 * be reused at once), its receive is ended, its completions from now on are stale. */
void uring_conn_close(struct worker *w, struct conn *c);

#endif
