"""Hostile HTTP/2 clients for the knee serve end-to-end tests (tests/e2e/serve_h2_*.sh),
standard library only, loopback only, every loop bounded in time and bytes.

The frames are built by hand (RFC 9113 §4.1: a 9-byte header, then the payload) and the
header blocks are HPACK from the static table (RFC 7541 Appendix A), so a client can send
exactly what a well-behaved library never would: a request whose END_STREAM never comes, a
header block whose CONTINUATION never comes, a frame trickled a byte at a time.
"""
import selectors
import socket
import struct
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
SETTINGS_INITIAL_WINDOW_SIZE = 4


def frame(ftype, flags, sid, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", sid) + payload


def settings(**values):
    """A SETTINGS frame: settings(initial_window_size=0)."""
    ids = {"initial_window_size": SETTINGS_INITIAL_WINDOW_SIZE}
    return frame(SETTINGS, 0, 0, b"".join(struct.pack(">HI", ids[k], v) for k, v in values.items()))


def request_block(path):
    """HPACK: :method GET (static 2), :scheme http (6), :path (name 4, a literal value without
    indexing), :authority localhost (name 1, literal)."""
    p = path.encode()
    assert len(p) < 127 and len(b"localhost") < 127
    return b"\x82\x86\x04" + bytes([len(p)]) + p + b"\x01\x09localhost"


def headers(sid, path="/", end_stream=True, end_headers=True):
    flags = (END_STREAM if end_stream else 0) | (END_HEADERS if end_headers else 0)
    return frame(HEADERS, flags, sid, request_block(path))


def ping(data=b"12345678"):
    return frame(PING, 0, 0, data)


def parse_frames(buf):
    """Split buf into complete frames: ([(type, flags, sid, payload)], the bytes left)."""
    out = []
    while len(buf) >= 9:
        n = int.from_bytes(buf[0:3], "big")
        if len(buf) < 9 + n:
            break
        out.append((buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF, buf[9:9 + n]))
        buf = buf[9 + n:]
    return out, buf


class Client:
    """One raw HTTP/2 connection driven by a selector loop (drive()): it sends its opening bytes,
    then what its script asks; it records the frames the server sends, when each arrived, and
    when and how the connection ended ('eof' or 'reset')."""

    def __init__(self, port, kind, first):
        self.kind = kind
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.setblocking(False)
        self.rbuf = b""
        self.frames = []  # (seconds since t0, type, flags, sid, payload)
        self.t0 = time.monotonic()
        self.ended = None  # (seconds since t0, 'eof' | 'reset')
        self.request_start = None  # when the request that must time out began (monotonic)
        self.pending = b""  # bytes to trickle, one per `every` seconds
        self.every = None
        self.next_send = None
        self.send(first)

    def send(self, data):
        try:
            self.sock.sendall(data)
        except (BlockingIOError, BrokenPipeError, ConnectionResetError):
            pass

    def trickle(self, data, every):
        self.pending, self.every, self.next_send = data, every, time.monotonic()

    def tick(self, now):
        if self.ended or self.next_send is None or now < self.next_send:
            return
        if self.pending:
            self.send(self.pending[:1])
            self.pending = self.pending[1:]
            self.next_send = now + self.every
        else:
            self.next_send = None

    def on_readable(self):
        try:
            chunk = self.sock.recv(65536)
            how = None if chunk else "eof"
        except BlockingIOError:
            return
        except ConnectionResetError:
            chunk, how = b"", "reset"
        now = time.monotonic() - self.t0
        self.rbuf += chunk
        got, self.rbuf = parse_frames(self.rbuf)
        self.frames += [(now, *f) for f in got]
        if how:
            self.ended = (now, how)

    def got(self, ftype, sid=None):
        """The frames of a type (on a stream) received so far: [(seconds, flags, sid, payload)]."""
        return [(t, fl, s, p) for t, ty, fl, s, p in self.frames if ty == ftype and (sid is None or s == sid)]

    def answered(self, sid):
        """The stream's answer is complete (a HEADERS or DATA frame with END_STREAM)."""
        return any(fl & END_STREAM for t, fl, s, p in self.got(HEADERS, sid) + self.got(DATA, sid))

    def body(self, sid):
        return b"".join(p for t, fl, s, p in self.got(DATA, sid))

    def close(self):
        self.sock.close()


def drive(clients, until, timeout, on_tick=None):
    """Run the clients until until(clients) holds or timeout seconds pass; on_tick(now) is called
    on every turn (the script's own steps). Returns True when until held."""
    sel = selectors.DefaultSelector()
    for c in clients:
        sel.register(c.sock, selectors.EVENT_READ, c)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if until(clients):
                return True
            now = time.monotonic()
            for c in clients:
                c.tick(now)
            if on_tick:
                on_tick(now)
            for key, _ in sel.select(timeout=0.05):
                c = key.data
                c.on_readable()
                if c.ended:
                    sel.unregister(c.sock)
        return until(clients)
    finally:
        sel.close()
