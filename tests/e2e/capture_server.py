#!/usr/bin/env python3
"""A capture server for knee's e2e tests: every request's method, target, headers and body,
in arrival order, one JSON object per line in the log file; answers 200 (or the status a
request's X-Status header asks for) with a short body, keep-alive. Listens on 127.0.0.1 and
prints its port on stdout once it is ready.

POST /login (knee run --setup) answers a login instead: a token derived from the request's body,
tk-<the first 16 hex digits of its SHA-256>, in the JSON body ({"data": {"token": T, "user":
"ann", "ids": [7, 8]}, "expires": 3600}), in an X-Token header and in a cookie (Set-Cookie: sid=T;
Path=/); with X-Status it answers that status and {"error": "bad credentials"}.

    capture_server.py LOG [--port P]
"""
import hashlib
import json
import socket
import sys
import threading

LOCK = threading.Lock()


def read_request(f):
    line = f.readline()
    if not line:
        return None
    method, target, _ = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers = []
    length = 0
    while True:
        h = f.readline().decode("latin-1").rstrip("\r\n")
        if not h:
            break
        name, value = h.split(":", 1)
        headers.append([name, value.strip()])
        if name.lower() == "content-length":
            length = int(value)
    body = f.read(length) if length else b""
    return {"method": method, "target": target, "headers": headers, "body": body.decode("latin-1")}


def login(req, status):
    """The answer to POST /login: the token in a JSON field, a header and a cookie."""
    token = "tk-" + hashlib.sha256(req["body"].encode("latin-1")).hexdigest()[:16]
    if status != 200:
        body = json.dumps({"error": "bad credentials"}).encode()
        head = b"HTTP/1.1 %d Unauthorized\r\nContent-Type: application/json\r\n" % status
    else:
        body = json.dumps({"data": {"token": token, "user": "ann", "ids": [7, 8]}, "expires": 3600}).encode()
        head = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Token: %s\r\n"
                "Set-Cookie: theme=dark; Path=/\r\nSet-Cookie: sid=%s; Path=/; HttpOnly\r\n" % (token, token)).encode()
    return head + b"Content-Length: %d\r\n\r\n" % len(body) + body


def serve(conn, log):
    f = conn.makefile("rb")
    try:
        while True:
            req = read_request(f)
            if req is None:
                return
            with LOCK:
                log.write(json.dumps(req) + "\n")
                log.flush()
            status = 200
            for name, value in req["headers"]:
                if name.lower() == "x-status":
                    status = int(value)
            if req["method"] == "POST" and req["target"] == "/login":
                conn.sendall(login(req, status))
                continue
            body = b"ok\n"
            conn.sendall(b"HTTP/1.1 %d X\r\nContent-Length: %d\r\n\r\n" % (status, len(body)) + body)
    except (ConnectionError, ValueError):
        return
    finally:
        conn.close()


def main():
    log = open(sys.argv[1], "w")
    port = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--port" else 0
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(512)
    print(s.getsockname()[1], flush=True)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, log), daemon=True).start()


if __name__ == "__main__":
    main()
