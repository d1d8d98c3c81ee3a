#!/usr/bin/env python3
"""The Grafana dashboard deploy/grafana/knee.json, checked (stdlib only).

  dashboard_queries.py DASH --rules FILE     validate the JSON, write every query as a recording
                                             rule (for `promtool check rules`, which parses PromQL)
  dashboard_queries.py DASH --query URL      run every query against a Prometheus at URL: each must
                                             answer status "success"; queries on knee_serve_*
                                             must return data (the test's servers are scraped)
  dashboard_queries.py DASH --query URL --all  ... and every query must return data (knee run
                                             instances are scraped too), except the panels on
                                             native histograms (title says "native histograms")
  dashboard_queries.py DASH --query URL --native  every query must answer, and those of the
                                             native-histogram panels must return data (a
                                             Prometheus with --enable-feature=native-histograms)

Dashboard variables are substituted first: $target -> .* (the "All" value), ${datasource} is
only a datasource reference.
"""
import json
import sys
import urllib.parse
import urllib.request


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def load(path):
    d = json.load(open(path))
    if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < 36:
        fail("schemaVersion missing or older than Grafana 9")
    for k in ("title", "uid", "panels", "templating"):
        if k not in d:
            fail("dashboard has no " + k)
    names = {v["name"] for v in d["templating"]["list"]}
    if not {"datasource", "target"} <= names:
        fail("templating needs the datasource and target variables, has %s" % names)
    ids, queries, lesson = set(), [], False
    for p in d["panels"]:
        if p["id"] in ids:
            fail("panel id %s twice" % p["id"])
        ids.add(p["id"])
        g = p["gridPos"]
        if not (0 <= g["x"] and g["x"] + g["w"] <= 24 and g["h"] > 0):
            fail("panel %s: gridPos %s" % (p["id"], g))
        if p["type"] == "row":
            continue
        if not p.get("title") or not p.get("description") or not p.get("targets"):
            fail("panel %s needs a title, a description and targets" % p["id"])
        refs = set()
        for t in p["targets"]:
            if t["refId"] in refs or not t.get("expr"):
                fail("panel %r: refId %s twice or no expr" % (p["title"], t["refId"]))
            refs.add(t["refId"])
            expr = t["expr"].replace("$target", ".*")
            if "$" in expr:
                fail("panel %r: unknown variable in %s" % (p["title"], expr))
            queries.append((p["title"], t["refId"], expr, "native histograms" in p["title"]))
        if "LESSON" in p["title"]:
            exprs = " ".join(t["expr"] for t in p["targets"])
            lesson = "avg(histogram_quantile" in exprs and "sum by (le)" in exprs
    if not lesson:
        fail("no LESSON panel with the averaged p99 beside the merged one")
    for needed in ("knee_latency_seconds_bucket", "knee_requests_total", "knee_planned_requests_total",
                   "knee_lag_seconds_bucket", "knee_in_flight_requests", "knee_generator_limited",
                   'le="0.1"', "knee_serve_ok_requests_total", "knee_serve_time_seconds_bucket",
                   "knee_run_finished", "sum(rate(knee_latency_seconds{"):
        if not any(needed in q[2] for q in queries):
            fail("no panel queries " + needed)
    return queries


def main():
    queries = load(sys.argv[1])
    if sys.argv[2] == "--rules":
        with open(sys.argv[3], "w") as f:
            f.write("groups:\n  - name: knee_dashboard\n    rules:\n")
            for i, (_, _, e, _) in enumerate(queries):
                f.write("      - record: knee_dashboard:q%d\n        expr: %s\n" % (i, json.dumps(e)))
        print("ok: %d dashboard queries written as rules" % len(queries))
    elif sys.argv[2] == "--query":
        mode = sys.argv[4] if len(sys.argv) > 4 else ""
        natives = 0
        for title, ref, e, native in queries:
            url = sys.argv[3] + "/api/v1/query?" + urllib.parse.urlencode({"query": e})
            try:
                r = json.load(urllib.request.urlopen(url, timeout=10))
            except urllib.error.HTTPError as err:
                r = json.load(err)
            if r.get("status") != "success":
                fail("%r %s: %s -> %s" % (title, ref, e, r.get("error")))
            if mode == "--native":
                need = native
                natives += native
            else:
                need = "knee_serve_" in e or (mode == "--all" and not native)
            if need and not r["data"]["result"]:
                fail("%r %s: no data for %s" % (title, ref, e))
        if mode == "--native" and not natives:
            fail("no panel on native histograms")
        print("ok: all %d dashboard queries run on Prometheus without error%s"
              % (len(queries), {"--all": " and return data (native-histogram panels apart)",
                                "--native": ", the %d on native histograms return data" % natives}.get(mode, "")))
    else:
        fail("usage")


main()
