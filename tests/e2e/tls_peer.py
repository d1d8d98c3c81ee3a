#!/usr/bin/env python3
"""A misbehaving TLS peer for tests/e2e/tls_nginx.sh. Prints "PORT n" once it listens on
127.0.0.1, then serves connections one after another until killed:

  --mode stall    accept and never read or write: a client's handshake waits forever
  --mode garbage  complete the TLS handshake, read the request, then write bytes that are
                  not a TLS record straight onto the socket
  --mode inside   complete the handshake, then answer inside TLS with bytes that are not HTTP
"""
import argparse
import os
import socket
import ssl
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--mode", choices=["stall", "garbage", "inside"], required=True)
ap.add_argument("--cert")
ap.add_argument("--key")
a = ap.parse_args()

ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(16)
print("PORT", ls.getsockname()[1], flush=True)

ctx = None
if a.mode != "stall":
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ctx.set_alpn_protocols(["http/1.1"])

held = []
while True:
    c, _ = ls.accept()
    if a.mode == "stall":
        held.append(c)  # never read: the client's ClientHello sits in our receive buffer
        continue
    try:
        s = ctx.wrap_socket(c, server_side=True)
        s.recv(4096)
        if a.mode == "garbage":  # under TLS, straight onto the socket
            os.write(s.fileno(), b"\x17\x03\x03\x00\x20this is no TLS record at all!!!!")
        else:
            s.send(b"SPDY/9 700 Whatever\r\n\r\n")
        # keep the connection until the client closes it (at most 10 s)
        deadline = time.monotonic() + 10
        s.settimeout(1)
        while time.monotonic() < deadline:
            try:
                if not os.read(s.fileno(), 4096):
                    break
            except BlockingIOError:
                time.sleep(0.01)
            except OSError:
                break
        s.close()
    except (ssl.SSLError, OSError) as e:
        print("peer:", e, file=sys.stderr, flush=True)
        c.close()
