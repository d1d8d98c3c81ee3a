#!/usr/bin/env python3
"""A hostile HTTP/2 (h2c, prior knowledge) server for knee run's end-to-end tests: its own
frames over a socket, standard library only (asyncio), on 127.0.0.1.

One listener per --mode (repeatable); for each it prints "PORT <mode> <n>" on stdout once it
listens, then "conn <mode>" for every connection it accepts (a test counts the connections a
client dialled). Serves until killed. The client's requests are never decoded (their HPACK is
the client's business): a request is a HEADERS frame, answered when its header block ends.

  ok           SETTINGS_MAX_CONCURRENT_STREAMS 100; every stream: 200 "ok\\n"
  zero         MAX_CONCURRENT_STREAMS 0 (a server shedding load, RFC 9113 §5.1.2), and silence:
               a stream opened anyway (before the client saw the SETTINGS) is never answered
  zero-refuse  MAX_CONCURRENT_STREAMS 0; a stream opened anyway is reset REFUSED_STREAM
  zero-close   MAX_CONCURRENT_STREAMS 0, then GOAWAY(NO_ERROR) and the connection closed
               --close-after ms later: a server that sheds load by hanging up
  zero-open    MAX_CONCURRENT_STREAMS 0, raised to 100 by a second SETTINGS --open-after ms later;
               streams are answered (200) once the limit is raised
  bomb         every response a 20 KB HPACK block that decodes to 64 MiB: one 4,000-byte field
               put in the dynamic table, then 16,000 one-byte references to it (HEADERS and
               CONTINUATION frames, END_STREAM on the HEADERS)
  fat          every response 100 header fields of 1,000 bytes (104 KB of header list, RFC 7541
               §4.1 sizes: over knee's 80 KiB budget)
  lean         every response 60 header fields of 1,000 bytes (62 KB: within the budget)
  continuation every response a header block without end: HEADERS without END_HEADERS, then
               full CONTINUATION frames of small literal fields, as fast as the client reads,
               until the client resets the stream (then the block is closed, empty); nghttp2
               with the CVE-2024-28182 fix ends the session after 8 CONTINUATION frames
"""
import argparse
import asyncio
import struct
import sys

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, CONTINUATION = 0, 1, 3, 4, 6, 7, 9
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY = 0x1, 0x1, 0x4, 0x8, 0x20
MAX_CONCURRENT_STREAMS = 3
REFUSED_STREAM = 7
FRAME_MAX = 16384
ARGS = None


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def settings(limit):
    return frame(SETTINGS, 0, 0, struct.pack(">HI", MAX_CONCURRENT_STREAMS, limit))


def hpack_int(value, prefix_bits, first):
    """RFC 7541 §5.1: an integer with an N-bit prefix, the other bits of the first byte `first`."""
    top = (1 << prefix_bits) - 1
    if value < top:
        return bytes([first | value])
    out = [first | top]
    value -= top
    while value >= 128:
        out.append(value % 128 + 128)
        value //= 128
    out.append(value)
    return bytes(out)


def literal(name, value, indexing=False):
    """A literal field with a new name, no Huffman: with incremental indexing (0x40) or
    without indexing (0x00)."""
    return (hpack_int(0, 6, 0x40) if indexing else hpack_int(0, 4, 0x00)) + hpack_int(len(name), 7, 0) + name + \
        hpack_int(len(value), 7, 0) + value


STATUS_200 = bytes([0x88])  # indexed: static table entry 8, ":status: 200"


def header_block(sid, block, end_stream):
    """A header block as HEADERS plus as many CONTINUATION frames as it needs."""
    chunks = [block[i:i + FRAME_MAX] for i in range(0, len(block), FRAME_MAX)] or [b""]
    out = []
    for k, chunk in enumerate(chunks):
        last = k == len(chunks) - 1
        flags = END_HEADERS if last else 0
        if k == 0:
            flags |= END_STREAM if end_stream else 0
        out.append(frame(HEADERS if k == 0 else CONTINUATION, flags, sid, chunk))
    return b"".join(out)


def response_ok(sid):
    return header_block(sid, STATUS_200, False) + frame(DATA, END_STREAM, sid, b"ok\n")


def response_bomb(sid):
    # the entry takes 5 + 4000 + 32 = 4037 bytes of the client's 4096-byte dynamic table; each
    # reference (0x80 | 62: the newest dynamic entry) decodes to the whole field again
    block = STATUS_200 + literal(b"x-big", b"b" * 4000, indexing=True) + bytes([0x80 | 62]) * 16000
    return header_block(sid, block, True)


def response_fields(sid, n):
    block = STATUS_200 + b"".join(literal(b"x-fat-%03d" % i, b"f" * 1000) for i in range(n))
    return header_block(sid, block, False) + frame(DATA, END_STREAM, sid, b"ok\n")


class Conn:
    def __init__(self, mode, reader, writer):
        self.mode, self.reader, self.writer = mode, reader, writer
        self.open = False  # zero-open: the limit was raised
        self.held = []  # zero-open: streams waiting for the raise
        self.reset = set()  # streams the client reset
        self.blocks = asyncio.Queue()  # continuation: streams waiting for their endless block

    def send(self, data):
        self.writer.write(data)

    async def answer(self, sid):
        m = self.mode
        if m == "ok":
            self.send(response_ok(sid))
        elif m in ("zero", "zero-close"):
            pass
        elif m == "zero-refuse":
            self.send(frame(RST_STREAM, 0, sid, struct.pack(">I", REFUSED_STREAM)))
        elif m == "zero-open":
            if self.open:
                self.send(response_ok(sid))
            else:
                self.held.append(sid)
        elif m == "bomb":
            self.send(response_bomb(sid))
        elif m == "fat":
            self.send(response_fields(sid, 100))
        elif m == "lean":
            self.send(response_fields(sid, 60))
        elif m == "continuation":
            self.blocks.put_nowait(sid)
        await self.writer.drain()

    async def raise_limit(self):
        await asyncio.sleep(ARGS.open_after / 1000)
        self.open = True
        self.send(settings(100))
        for sid in self.held:
            self.send(response_ok(sid))
        self.held = []
        await self.writer.drain()

    async def hang_up(self):
        await asyncio.sleep(ARGS.close_after / 1000)
        self.send(frame(GOAWAY, 0, 0, struct.pack(">II", 0, 0)))
        await self.writer.drain()
        self.writer.close()

    async def endless_blocks(self):
        # full frames of literal fields (about 150 bytes each, 109 to a frame); one block at a
        # time: nothing may come between a HEADERS and its CONTINUATIONs (RFC 9113 §6.10)
        fields = b"".join(literal(b"x-more-%03d" % i, b"m" * 130) for i in range(109))
        while True:
            sid = await self.blocks.get()
            self.send(frame(HEADERS, 0, sid, STATUS_200))
            while sid not in self.reset:
                self.send(frame(CONTINUATION, 0, sid, fields))
                await self.writer.drain()
            self.send(frame(CONTINUATION, END_HEADERS, sid, b""))
            await self.writer.drain()

    async def run(self):
        if await self.reader.readexactly(len(PREFACE)) != PREFACE:
            return
        limit = 100 if self.mode in ("ok", "bomb", "fat", "lean", "continuation") else 0
        self.send(settings(limit))
        tasks = []
        if self.mode == "zero-open":
            tasks.append(asyncio.ensure_future(self.raise_limit()))
        if self.mode == "zero-close":
            tasks.append(asyncio.ensure_future(self.hang_up()))
        if self.mode == "continuation":
            tasks.append(asyncio.ensure_future(self.endless_blocks()))
        try:
            await self.frames()
        finally:
            for t in tasks:
                t.cancel()

    async def frames(self):
        in_block = 0  # the stream whose request header block has not ended
        while True:
            hd = await self.reader.readexactly(9)
            length = int.from_bytes(hd[:3], "big")
            ftype, flags = hd[3], hd[4]
            sid = int.from_bytes(hd[5:9], "big") & 0x7FFFFFFF
            payload = await self.reader.readexactly(length)
            if ftype == SETTINGS and not flags & ACK:
                self.send(frame(SETTINGS, ACK, 0))
            elif ftype == PING and not flags & ACK:
                self.send(frame(PING, ACK, 0, payload))
            elif ftype == HEADERS:
                if flags & END_HEADERS:
                    await self.answer(sid)
                else:
                    in_block = sid
            elif ftype == CONTINUATION and flags & END_HEADERS and in_block:
                await self.answer(in_block)
                in_block = 0
            elif ftype == RST_STREAM:
                self.reset.add(sid)
            elif ftype == GOAWAY:
                return
            await self.writer.drain()


def handler(mode):
    async def handle(reader, writer):
        print("conn", mode, flush=True)
        try:
            await Conn(mode, reader, writer).run()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
    return handle


async def main():
    servers = []
    for mode in ARGS.mode:
        s = await asyncio.start_server(handler(mode), "127.0.0.1", 0, backlog=1024)
        servers.append(s)
        print("PORT", mode, s.sockets[0].getsockname()[1], flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", action="append", required=True,
                    choices=["ok", "zero", "zero-close", "zero-refuse", "zero-open", "bomb", "fat", "lean", "continuation"])
    ap.add_argument("--close-after", type=float, default=50, help="zero-close: ms until the hang-up")
    ap.add_argument("--open-after", type=float, default=300, help="zero-open: ms until the limit is raised")
    ARGS = ap.parse_args()
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
