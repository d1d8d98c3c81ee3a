/* A connection's byte stream for the load engine: the transport table (struct conn_ops) with
 * its two rows, plain sockets and TLS (src/tls). The worker reads and writes every connection
 * through c->ops, so HTTP/1.1 and HTTP/2 above it do not know which one they ride; both rows
 * answer in src/tls's terms (enum tls_io). */
#include "load/internal.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

static enum tls_io plain_read(struct conn *c, void *buf, size_t cap, size_t *got)
{
    *got = 0;
    for (;;) {
        ssize_t n = read(c->io.fd, buf, cap);
        if (n > 0) {
            *got = (size_t)n;
            return TLS_IO_OK;
        }
        if (n == 0)
            return TLS_IO_EOF;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return TLS_IO_WANT_READ;
        c->sys_errno = errno;
        return TLS_IO_ERROR;
    }
}

static enum tls_io plain_write(struct conn *c, const void *buf, size_t len, size_t *put)
{
    *put = 0;
    for (;;) {
        ssize_t n = send(c->io.fd, buf, len, MSG_NOSIGNAL);
        if (n > 0) {
            *put = (size_t)n;
            return TLS_IO_OK;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return TLS_IO_WANT_WRITE;
        c->sys_errno = n < 0 ? errno : EPIPE;
        return TLS_IO_ERROR;
    }
}

static enum tls_io tls_read(struct conn *c, void *buf, size_t cap, size_t *got)
{
    return tls_conn_read(&c->tls, buf, cap, got);
}

static enum tls_io tls_write(struct conn *c, const void *buf, size_t len, size_t *put)
{
    return tls_conn_write(&c->tls, buf, len, put);
}

const struct conn_ops conn_plain_ops = {plain_read, plain_write};
const struct conn_ops conn_tls_ops = {tls_read, tls_write};
