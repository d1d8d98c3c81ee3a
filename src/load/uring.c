/* io_uring for the closed loop's cleartext HTTP/1.1 connections (uring.h), and its transport
 * row (conn_ring_ops). A request's life on a ring: the protocol's write (h1.c) calls the row's
 * write, which queues a send and answers "wait"; the next uring_run_once submits it with
 * everything else queued in the iteration and waits; the send's completion goes to the
 * protocol's on_io as EPOLLOUT, whose write then takes the completion's result; the response's
 * bytes arrive as completions of the connection's multishot receive, each in one buffer of the
 * thread's provided-buffer ring, handed to the protocol's input and given back at once.
 * Completions carry the connection and its generation (user_data), so those of a connection
 * closed and reused since are recognised and dropped. */
#include "load/uring.h"

#include "core/clock.h"
#include "core/err.h"
#include "load/worker.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#define URING_ENTRIES 512    /* submission queue (the completion queue is twice that) */
#define URING_BUFS 256       /* provided receive buffers per thread (a power of two) */
#define URING_BUF_SIZE 16384 /* bytes each */
#define URING_BGID 0

/* user_data: the connection's address (8-byte aligned) | kind in the low bits | generation << 48 */
enum ring_kind { RK_RECV = 0, RK_SEND = 1, RK_EPOLL = 2 };
#define UD_KIND_MASK 7ull
#define UD_PTR_MASK 0x0000fffffffffff8ull

struct uring {
    struct io_uring ring;
    struct io_uring_buf_ring *br;
    char *bufs;
    bool poll_armed; /* the loop's epoll descriptor is polled through the ring */
};

static uint64_t ud_make(struct conn *c, enum ring_kind k)
{
    return ((uint64_t)(uintptr_t)c & UD_PTR_MASK) | (uint64_t)k | ((uint64_t)c->ring_gen << 48);
}

static int ring_setup(struct io_uring *ring)
{
    /* one issuer (the load thread) whose completions are delivered only when it enters the
     * kernel to wait: no interrupt of the thread per completion. Older kernels refuse the
     * flags (EINVAL): then without them. */
    static const unsigned flags[] = {
        IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
        IORING_SETUP_COOP_TASKRUN,
        0,
    };
    int r = -EINVAL;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        r = io_uring_queue_init(URING_ENTRIES, ring, flags[i]);
        if (r != -EINVAL)
            break;
    }
    return r;
}

int uring_probe(void)
{
    struct io_uring ring;
    int r = ring_setup(&ring);
    if (r == 0) {
        if (!(ring.features & IORING_FEAT_EXT_ARG))
            r = -ENOSYS; /* a wait with a timeout would cost a submission of its own */
        io_uring_queue_exit(&ring);
    }
    return r;
}

int uring_init(struct worker *w)
{
    struct uring *u = xcalloc(1, sizeof *u);
    int r = ring_setup(&u->ring);
    if (r) {
        free(u);
        return r;
    }
    size_t brsize = URING_BUFS * sizeof(struct io_uring_buf);
    void *br = mmap(NULL, brsize, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (br == MAP_FAILED) {
        r = -errno;
        goto fail;
    }
    u->br = br;
    struct io_uring_buf_reg reg = {
        .ring_addr = (uint64_t)(uintptr_t)br, .ring_entries = URING_BUFS, .bgid = URING_BGID};
    r = io_uring_register_buf_ring(&u->ring, &reg, 0);
    if (r)
        goto fail;
    u->bufs = xmalloc((size_t)URING_BUFS * URING_BUF_SIZE);
    io_uring_buf_ring_init(u->br);
    for (int i = 0; i < URING_BUFS; i++)
        io_uring_buf_ring_add(u->br, u->bufs + (size_t)i * URING_BUF_SIZE, URING_BUF_SIZE, (unsigned short)i,
                              io_uring_buf_ring_mask(URING_BUFS), i);
    io_uring_buf_ring_advance(u->br, URING_BUFS);
    /* the ring's descriptor registered: each io_uring_enter skips the file table (an optional
     * gain: a kernel without it still runs) */
    (void)io_uring_register_ring_fd(&u->ring);
    w->ring = u;
    return 0;
fail:
    if (u->br)
        munmap(u->br, brsize);
    io_uring_queue_exit(&u->ring);
    free(u);
    return r;
}

void uring_release(struct worker *w)
{
    struct uring *u = w->ring;
    if (!u)
        return;
    io_uring_queue_exit(&u->ring); /* cancels what is still armed */
    munmap(u->br, URING_BUFS * sizeof(struct io_uring_buf));
    free(u->bufs);
    free(u);
    w->ring = NULL;
}

/* A free submission entry; when the queue is full, what is in it goes to the kernel first. */
static struct io_uring_sqe *sqe_get(struct uring *u)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
    if (!sqe) {
        io_uring_submit(&u->ring);
        sqe = io_uring_get_sqe(&u->ring);
    }
    return sqe;
}

static void recv_arm(struct uring *u, struct conn *c)
{
    struct io_uring_sqe *sqe = sqe_get(u);
    if (!sqe)
        return; /* cannot happen right after a submit; the request then times out */
    io_uring_prep_recv_multishot(sqe, c->io.fd, NULL, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = URING_BGID;
    io_uring_sqe_set_data64(sqe, ud_make(c, RK_RECV));
    c->ring_recv = true;
}

/* ------------------------------------------------------------------ the transport row */

/* A ready cleartext connection leaves epoll: its receive is armed. */
static void ring_attach(struct conn *c)
{
    struct worker *w = c->w;
    loop_io_del(&w->loop, &c->io);
    c->io.events = EPOLLIN; /* what the protocol would ask for next: its loop_io_mod is then no call */
    c->want_out = false;
    c->ring = true;
    recv_arm(w->ring, c);
}

/* A write queues a send of buf and answers TLS_IO_WANT_READ (wait: its completion calls the
 * protocol's on_io with EPOLLOUT); called again from there, it returns that completion's
 * result. */
static enum tls_io ring_write(struct conn *c, const void *buf, size_t len, size_t *put)
{
    *put = 0;
    if (c->ring_sent) {
        c->ring_sent = false;
        if (c->ring_res < 0) {
            c->sys_errno = -c->ring_res;
            return TLS_IO_ERROR;
        }
        *put = (size_t)c->ring_res;
        return TLS_IO_OK;
    }
    struct io_uring_sqe *sqe = sqe_get(c->w->ring);
    if (!sqe) {
        c->sys_errno = EBUSY;
        return TLS_IO_ERROR;
    }
    io_uring_prep_send(sqe, c->io.fd, buf, len, MSG_NOSIGNAL);
    io_uring_sqe_set_data64(sqe, ud_make(c, RK_SEND));
    return TLS_IO_WANT_READ;
}

/* Reads come through the receive's completions (the protocol's input), never from a call. */
static enum tls_io ring_read(struct conn *c, void *buf, size_t cap, size_t *got)
{
    (void)c, (void)buf, (void)cap;
    *got = 0;
    return TLS_IO_WANT_READ;
}

/* What is queued for c is submitted first (the descriptor's number may be reused at once), its
 * receive is ended, its completions from now on are stale. */
static void ring_close(struct conn *c)
{
    if (!c->ring)
        return;
    struct uring *u = c->w->ring;
    if (io_uring_sq_ready(&u->ring))
        io_uring_submit(&u->ring); /* they name the descriptor by its number */
    if (c->ring_recv)
        shutdown(c->io.fd, SHUT_RDWR); /* the armed receive holds the socket: this ends it */
    c->ring = c->ring_recv = false;
    c->ring_gen++;
}

const struct conn_ops conn_ring_ops = {
    .attach = ring_attach,
    .read = ring_read,
    .write = ring_write,
    .close = ring_close,
};

/* ------------------------------------------------------------------ completions */

static void buf_return(struct uring *u, unsigned bid)
{
    io_uring_buf_ring_add(u->br, u->bufs + (size_t)bid * URING_BUF_SIZE, URING_BUF_SIZE, (unsigned short)bid,
                          io_uring_buf_ring_mask(URING_BUFS), 0);
    io_uring_buf_ring_advance(u->br, 1);
}

static void on_recv(struct worker *w, struct conn *c, bool live, const struct io_uring_cqe *cqe)
{
    struct uring *u = w->ring;
    bool more = cqe->flags & IORING_CQE_F_MORE;
    bool has_buf = cqe->flags & IORING_CQE_F_BUFFER;
    unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
    if (live && !more)
        c->ring_recv = false;
    if (live) {
        if (cqe->res > 0 && has_buf)
            c->proto->input(w, c, u->bufs + (size_t)bid * URING_BUF_SIZE, cqe->res);
        else if (cqe->res == -ENOBUFS)
            ; /* every buffer was in use: armed again below */
        else if (cqe->res <= 0)
            c->proto->input(w, c, NULL, cqe->res);
        /* still the same connection, still open, and the receive ended: arm it again */
        if (!more && c->ring && !c->ring_recv && (cqe->res > 0 || cqe->res == -ENOBUFS))
            recv_arm(u, c);
    }
    if (has_buf)
        buf_return(u, bid);
}

/* A send completed: the protocol writes on (its write takes the result), or nothing waited for
 * it any more (the response came first) and it is dropped. */
static void on_send(struct worker *w, struct conn *c, const struct io_uring_cqe *cqe)
{
    c->ring_res = cqe->res;
    c->ring_sent = true;
    c->proto->on_io(&w->loop, &c->io, EPOLLOUT);
    c->ring_sent = false;
}

int uring_run_once(struct worker *w, uint64_t max_wait_ns)
{
    struct uring *u = w->ring;
    struct loop *loop = &w->loop;
    if (!u->poll_armed) {
        /* one-shot, armed again after each look at epoll: level-triggered like epoll itself */
        struct io_uring_sqe *sqe = sqe_get(u);
        if (sqe) {
            io_uring_prep_poll_add(sqe, loop->epfd, POLLIN);
            io_uring_sqe_set_data64(sqe, RK_EPOLL);
            u->poll_armed = true;
        }
    }
    uint64_t wait_ns = loop_wait_ns(loop, max_wait_ns);
    struct __kernel_timespec ts = {.tv_sec = (long long)(wait_ns / NS_PER_S),
                                   .tv_nsec = (long long)(wait_ns % NS_PER_S)};
    struct io_uring_cqe *first;
    int r = io_uring_submit_and_wait_timeout(&u->ring, &first, 1, wait_ns == UINT64_MAX ? NULL : &ts, NULL);
    loop->iterations++;
    loop->now_ns = clock_now_ns();
    if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY)
        return r;
    bool epoll_due = false;
    unsigned head, n = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&u->ring, head, cqe)
    {
        n++;
        uint64_t ud = cqe->user_data;
        enum ring_kind k = (enum ring_kind)(ud & UD_KIND_MASK);
        if (k == RK_EPOLL) {
            u->poll_armed = false;
            epoll_due = true;
            continue;
        }
        struct conn *c = (struct conn *)(uintptr_t)(ud & UD_PTR_MASK);
        bool live = c->ring && c->ring_gen == (uint16_t)(ud >> 48);
        if (k == RK_RECV)
            on_recv(w, c, live, cqe);
        else if (live)
            on_send(w, c, cqe);
        worker_settle(w); /* as after a callback of the loop (loop_set_after) */
    }
    io_uring_cq_advance(&u->ring, n);
    if (epoll_due) {
        int e = loop_run_once(loop, 0); /* runs the due timers too */
        return e < 0 ? e : (int)n + e;
    }
    return (int)n + loop_run_due(loop);
}
