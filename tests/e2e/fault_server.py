#!/usr/bin/env python3
"""A small HTTP/1.1 test server for knee run's end-to-end tests (stdlib only, asyncio).

It listens on 127.0.0.1 (or --host ::1), port 0 unless --port is given, prints "PORT <n>" on stdout, then
serves until killed. Behaviour is chosen by the request path:

  /ok                    200 "ok\\n" (keep-alive)
  /slow?ms=N             200 after N ms
  /slow-after?s=S&ms=N&code=C
                         status C (default 200) at once for S seconds from the first /slow-after
                         request, then after N ms each (a service that turns slow, or fails)
  /status?code=C&body=B  status C with body B
  /timing                200 with "Server-Timing: queue;dur=1.5, work;dur=2.25"
  /reset                 read the request, then reset the connection (RST)
  /close-mid-body        headers with Content-Length 100, 10 body bytes, close
  /stall                 read the request, never answer (the client must time out)
  /garbage               a line that is not HTTP
  /huge-headers          a header larger than any client cap (200 KiB)
  /cl-short              Content-Length 100 but 10 bytes, then close
  /cl-long               Content-Length 5 but 15 body bytes (bytes after the response)
  /close                 200 with "Connection: close", then close
  /require?method=M&header=H&len=N
                         200 "pass\n" when the request has that method, header and body length
                         (each optional), else 400 "fail\n"
  /periodic              200, except that every --period seconds the server stalls for --stall
                         seconds (a background job holding a lock): requests arriving in the
                         stall wait until it ends, as in knee lab's stats experiment (server A)
  /sometimes-stall?pct=P&max_ms=M
                         P% of requests are never answered, the others after a uniform 0..M ms:
                         a closed loop's sends (and so its deadlines) spread out in time
  /close-quietly         200 without "Connection: close", then close: the next request on the
                         connection finds it closed (a stale keep-alive connection)
  /hangup                read the request, close without a byte of response
  /one-shot              200 without "Connection: close"; the next request on that connection is
                         read and answered by a close without a byte (a server that serves one
                         request per connection and does not say so): every reuse goes stale
  /trickle-body?ms=N     Content-Length 1000000, then one body byte every N ms (default 100)
  /trickle-headers?ms=N  a status line, then one header byte every N ms (default 100), never ending
  /endless-chunked       a chunked body whose chunks never end, as fast as the client reads
  /huge-length           Content-Length 10^15, body bytes as fast as the client reads
  /endless-headers       a status line, then header lines without end, as fast as the client reads
  /endless-interim       interim responses (103 Early Hints) without end, never the final one
  /unsolicited           200, immediately followed by a second response nobody asked for
  /push-later?ms=N       200, then N ms later (default 50) a response nobody asked for, on the
                         connection the client now holds idle
  /flood-idle            200, then bytes without end on the connection the client holds idle
                         (the first of them in the response's own write)

--log prints "served PATH" on stdout after each response it writes (a test can wait for work
done instead of sleeping).
--idle-close MS closes every keep-alive connection that has been idle for MS ms between
requests (as servers do with their keep-alive timeout); it races with a client's next request.

A refused connection needs no server: connect to a port nobody listens on.
"""
import argparse
import asyncio
import random
import socket
import struct
import sys
import time
from urllib.parse import parse_qs, urlsplit

START = time.monotonic()
ARGS = None
SLOW_AFTER_FIRST = None  # monotonic time of the first /slow-after request


def response(status, body=b"", headers=(), reason=None):
    reason = reason or {200: "OK", 500: "Internal Server Error", 503: "Service Unavailable",
                        404: "Not Found"}.get(status, "Status")
    head = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}"]
    head += list(headers)
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def periodic_wait():
    phase = (time.monotonic() - START) % ARGS.period
    if phase < ARGS.stall:
        await asyncio.sleep(ARGS.stall - phase)


async def handle(reader, writer):
    sock = writer.get_extra_info("socket")
    served_one_shot = False
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass
    try:
        while True:
            try:
                if ARGS.idle_close > 0:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), ARGS.idle_close / 1000.0)
                else:
                    head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError,
                    asyncio.TimeoutError):
                return
            lines = head.decode("latin-1").split("\r\n")
            parts = lines[0].split(" ")
            if len(parts) != 3:
                return
            method, target = parts[0], parts[1]
            length = 0
            names = set()
            for line in lines[1:]:
                if ":" in line:
                    names.add(line.split(":", 1)[0].strip().lower())
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1].strip())
            body = b""
            if length:
                body = await reader.readexactly(length)
            url = urlsplit(target)
            q = parse_qs(url.query)
            path = url.path
            if served_one_shot:
                writer.close()
                return
            if path == "/ok":
                writer.write(response(200, b"ok\n"))
            elif path == "/slow":
                await asyncio.sleep(int(q.get("ms", ["0"])[0]) / 1000.0)
                writer.write(response(200, b"slow\n"))
            elif path == "/slow-after":
                global SLOW_AFTER_FIRST
                now = time.monotonic()
                if SLOW_AFTER_FIRST is None:
                    SLOW_AFTER_FIRST = now
                if now - SLOW_AFTER_FIRST >= float(q.get("s", ["3"])[0]):
                    await asyncio.sleep(int(q.get("ms", ["300"])[0]) / 1000.0)
                    writer.write(response(int(q.get("code", ["200"])[0]), b"late\n"))
                else:
                    writer.write(response(200, b"ok\n"))
            elif path == "/status":
                code = int(q.get("code", ["200"])[0])
                body = q.get("body", [""])[0].encode()
                writer.write(response(code, body))
            elif path == "/timing":
                writer.write(response(200, b"t\n", ["Server-Timing: queue;dur=1.5, work;dur=2.25"]))
            elif path == "/reset":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
                return
            elif path == "/close-mid-body":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
                await writer.drain()
                writer.close()
                return
            elif path == "/stall":
                await asyncio.sleep(3600)
                return
            elif path == "/garbage":
                writer.write(b"THIS IS NOT HTTP AT ALL\r\n\r\n")
                await writer.drain()
                writer.close()
                return
            elif path == "/huge-headers":
                writer.write(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (200 * 1024) + b"\r\nContent-Length: 0\r\n\r\n")
            elif path == "/cl-short":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
                await writer.drain()
                writer.close()
                return
            elif path == "/cl-long":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n0123456789ABCDE")
            elif path == "/close":
                writer.write(response(200, b"bye\n", ["Connection: close"]))
                await writer.drain()
                writer.close()
                return
            elif path == "/require":
                good = True
                if "method" in q and q["method"][0] != method:
                    good = False
                if "header" in q and q["header"][0].lower() not in names:
                    good = False
                if "len" in q and int(q["len"][0]) != len(body):
                    good = False
                writer.write(response(200, b"pass\n") if good else response(400, b"fail\n"))
            elif path == "/periodic":
                await periodic_wait()
                writer.write(response(200, b"p\n"))
            elif path == "/sometimes-stall":
                if random.random() * 100 < float(q.get("pct", ["50"])[0]):
                    await asyncio.sleep(3600)
                    return
                await asyncio.sleep(random.random() * int(q.get("max_ms", ["100"])[0]) / 1000.0)
                writer.write(response(200, b"s\n"))
            elif path == "/close-quietly":
                writer.write(response(200, b"q\n"))
                await writer.drain()
                writer.close()
                return
            elif path == "/hangup":
                writer.close()
                return
            elif path == "/one-shot":
                writer.write(response(200, b"once\n"))
                served_one_shot = True
            elif path == "/trickle-body":
                gap = int(q.get("ms", ["100"])[0]) / 1000.0
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
                while not writer.is_closing():
                    await writer.drain()
                    await asyncio.sleep(gap)
                    writer.write(b"x")
            elif path == "/trickle-headers":
                gap = int(q.get("ms", ["100"])[0]) / 1000.0
                writer.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                while not writer.is_closing():
                    await writer.drain()
                    await asyncio.sleep(gap)
                    writer.write(b"y")
            elif path == "/endless-chunked":
                writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                chunk = b"%x\r\n" % 65536 + b"z" * 65536 + b"\r\n"
                while not writer.is_closing():
                    writer.write(chunk)
                    await writer.drain()
            elif path == "/huge-length":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000000\r\n\r\n")
                block = b"h" * 65536
                while not writer.is_closing():
                    writer.write(block)
                    await writer.drain()
            elif path == "/endless-headers":
                writer.write(b"HTTP/1.1 200 OK\r\n")
                line = b"X-More: " + b"m" * 100 + b"\r\n"
                while not writer.is_closing():
                    writer.write(line * 64)
                    await writer.drain()
            elif path == "/endless-interim":
                hint = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" * 256
                while not writer.is_closing():
                    writer.write(hint)
                    await writer.drain()
            elif path == "/unsolicited":
                writer.write(response(200, b"u\n") + response(200, b"nobody asked\n"))
            elif path == "/push-later":
                writer.write(response(200, b"p\n"))
                await writer.drain()
                await asyncio.sleep(int(q.get("ms", ["50"])[0]) / 1000.0)
                writer.write(response(200, b"pushed\n"))
            elif path == "/flood-idle":
                # the response and the flood's first block in one write: the flood's bytes never
                # come later than the response, so the client sees them before it can send its
                # next request on the connection (written apart, a client whose sends were due
                # sent one in the gap and took the flood for that request's response)
                block = b"f" * 65536
                writer.write(response(200, b"f\n") + block)
                while not writer.is_closing():
                    await writer.drain()
                    writer.write(block)
            else:
                writer.write(response(404, b"no such fault\n"))
            await writer.drain()
            if ARGS.log:
                print(f"served {path}", flush=True)
    except (ConnectionError, OSError):
        return
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def main():
    server = await asyncio.start_server(handle, ARGS.host, ARGS.port, backlog=1024,
                                        limit=1 << 20)
    port = server.sockets[0].getsockname()[1]
    print(f"PORT {port}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1", help="127.0.0.1 (default) or ::1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--period", type=float, default=2.0)
    ap.add_argument("--stall", type=float, default=0.25)
    ap.add_argument("--log", action="store_true", help='print "served PATH" after each response')
    ap.add_argument("--idle-close", type=float, default=0, help="close connections idle for this many ms")
    ARGS = ap.parse_args()
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
