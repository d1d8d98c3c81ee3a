#!/usr/bin/env python3
"""A small HTTP/1.1 test server for knee run's end-to-end tests (stdlib only, asyncio).

It listens on 127.0.0.1 (or --host ::1), port 0 unless --port is given, prints "PORT <n>" on stdout, then
serves until killed. Behaviour is chosen by the request path:

  /ok                    200 "ok\\n" (keep-alive)
  /slow?ms=N             200 after N ms
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
                         stall wait until it ends, as in the statistics lab of the mission

A refused connection needs no server: connect to a port nobody listens on.
"""
import argparse
import asyncio
import socket
import struct
import sys
import time
from urllib.parse import parse_qs, urlsplit

START = time.monotonic()
ARGS = None


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
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
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
            if path == "/ok":
                writer.write(response(200, b"ok\n"))
            elif path == "/slow":
                await asyncio.sleep(int(q.get("ms", ["0"])[0]) / 1000.0)
                writer.write(response(200, b"slow\n"))
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
            else:
                writer.write(response(404, b"no such fault\n"))
            await writer.drain()
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
    ARGS = ap.parse_args()
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
