#!/usr/bin/env python3
"""Seeded per-request CSV in the article's format (server,start_s,latency_ms,service_ms), from a
small simulation of its lab (the statistics-lab article): two servers, each with a pool of
4 "database connections"; 1 request in 10 misses the cache and takes 40 ms, the rest ~2 ms;
a fixed per-request overhead (the Python HTTP stack); server A holds a table lock for 250 ms
every 4 s. Open loop: requests are planned on a fixed schedule, a generator with 32 workers
sends them (lag when all are busy); latency_ms is from the planned time, service_ms from the
send. Closed loop (--closed N): N clients per server, each sends when the previous answer came.

    gen_article.py OUT.csv [--seed 1] [--seconds 60] [--rate A=100,B=300] [--closed 8]
                           [--rows N]   (--rows: stop after N rows in all, for big files)
Standard library only; the same seed gives the same file on any Python 3."""
import argparse
import heapq
import random


def service_time(rng):
    if rng.random() < 0.1:
        return 40.0 + rng.expovariate(1 / 1.5)
    return 2.0 * rng.lognormvariate(0, 0.25)


def overhead(rng):
    return 4.0 + rng.lognormvariate(1.2, 0.45)  # ms: parsing, threads, loopback


def lock_wait(name, t_s):
    """Seconds until the report job (server A only) releases the table lock."""
    if name != "A":
        return 0.0
    phase = t_s % 4.0
    start = 0.8  # the job runs at 0.8 s, 4.8 s, 8.8 s, ...
    return start + 0.25 - phase if start <= phase < start + 0.25 else 0.0


class Server:
    def __init__(self, name, rng):
        self.name, self.rng = name, rng
        self.pool = [0.0] * 4  # when each connection is free again (s)

    def serve(self, arrive_s):
        t = arrive_s + lock_wait(self.name, arrive_s)
        free = heapq.heappop(self.pool)
        begin = max(t, free)
        svc = service_time(self.rng) / 1000
        heapq.heappush(self.pool, begin + svc)
        return begin + svc + overhead(self.rng) / 1000


def open_loop(rates, seconds, rng, max_rows):
    rows = []
    for name, rate in rates.items():
        srv = Server(name, rng)
        workers = [0.0] * 32  # when each generator worker is free
        for i in range(int(seconds * rate)):
            planned = i / rate
            w = heapq.heappop(workers)
            sent = max(planned, w) + rng.expovariate(1 / 0.00005)
            done = srv.serve(sent)
            heapq.heappush(workers, done)
            rows.append((name, planned, (done - planned) * 1000, (done - sent) * 1000))
            if max_rows and len(rows) >= max_rows:
                break
    return rows


def closed_loop(clients, seconds, rng):
    rows = []
    for name in ("A", "B"):
        srv = Server(name, rng)
        ready = [0.0] * clients
        while ready:
            start = heapq.heappop(ready)
            if start >= seconds:
                continue
            done = srv.serve(start)
            rows.append((name, start, (done - start) * 1000, (done - start) * 1000))
            heapq.heappush(ready, done + 0.0001)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--rate", default="A=100,B=300")
    ap.add_argument("--closed", type=int, default=0)
    ap.add_argument("--rows", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    rates = {k: float(v) for k, v in (p.split("=") for p in a.rate.split(","))}
    rows = closed_loop(a.closed, a.seconds, rng) if a.closed else open_loop(rates, a.seconds, rng, a.rows)
    rows.sort(key=lambda r: r[1])
    with open(a.out, "w") as f:
        f.write("server,start_s,latency_ms,service_ms\n")
        for name, start, lat, svc in rows:
            f.write(f"{name},{start:.4f},{lat:.3f},{svc:.3f}\n")


if __name__ == "__main__":
    main()
