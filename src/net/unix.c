/* --unix-socket: a Unix-domain stream socket's path as the address every connection of a run goes
 * to (a sidecar, a local proxy, a server that listens on nothing else). */
#include "net/route.h"

#include "core/err.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

_Static_assert(sizeof(((struct sockaddr_un *)0)->sun_path) == NET_UNIX_PATH_MAX + 1,
               "NET_UNIX_PATH_MAX is sun_path less its NUL");
_Static_assert(sizeof(struct sockaddr_un) <= sizeof(struct sockaddr_storage), "a sockaddr_un fits a net_addr");

int net_addr_unix(const char *path, struct net_addr *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(path);
    if (!len)
        return knee_fail(err, errlen, KNEE_EINVAL, "--unix-socket: the path is empty");
    if (len > NET_UNIX_PATH_MAX)
        return knee_fail(err, errlen, KNEE_EINVAL,
                         "--unix-socket %s: the path is %zu bytes long, a Unix socket's at most %d", path, len,
                         NET_UNIX_PATH_MAX);
    struct sockaddr_un *un = (struct sockaddr_un *)&out->ss;
    un->sun_family = AF_UNIX;
    memcpy(un->sun_path, path, len + 1);
    out->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
    out->family = AF_UNIX;
    /* the text goes into the records' 64-byte address fields: a long path keeps its end */
    size_t room = sizeof out->text - sizeof "unix:";
    if (len <= room)
        snprintf(out->text, sizeof out->text, "unix:%s", path);
    else
        snprintf(out->text, sizeof out->text, "unix:...%s", path + len - (room - 3));
    return 0;
}
