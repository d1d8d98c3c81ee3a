#!/usr/bin/env python3
"""A TLS peer for tests/e2e/run_mtls_routes.sh that requires a client certificate signed by the
test CA and offers h2 in ALPN: a client without one, or with another, gets the alert
(certificate_required, or unknown_ca / bad_certificate) after its TLS 1.3 handshake, on its first
read, as an HTTP/2 session would meet it. The connection then ends with a FIN, never a reset, so
the client reads the alert before the end. Usage: tls_client_cert_peer.py PORT DIR (DIR holds
good.pem, good.key, ca.pem)."""
import socket
import ssl
import sys
import threading

port, d = int(sys.argv[1]), sys.argv[2]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(d + "/good.pem", d + "/good.key")
ctx.load_verify_locations(d + "/ca.pem")
ctx.verify_mode = ssl.CERT_REQUIRED
ctx.set_alpn_protocols(["h2"])
ls = socket.create_server(("127.0.0.1", port))


def serve(s):
    t = ctx.wrap_socket(s, server_side=True, do_handshake_on_connect=False)
    try:
        t.do_handshake()
        t.recv(100)
    except (OSError, ssl.SSLError):
        pass
    raw = socket.socket(fileno=t.detach())
    try:
        raw.shutdown(socket.SHUT_WR)
        raw.settimeout(2)
        while raw.recv(4096):
            pass
    except OSError:
        pass
    raw.close()


while True:
    conn, _ = ls.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
