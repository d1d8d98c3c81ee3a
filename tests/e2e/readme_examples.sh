#!/usr/bin/env bash
# The front door stays short and its examples true: README.md has at most 400 lines, and
# every example command in the code blocks of README.md (the quick tour) and of
# docs/REFERENCE.md (every command's reference) ("$ knee ..." lines, with their "\"
# continuations) still parses and runs:
#   knee run, knee capacity
#               with --dry-run appended (every flag checked, the targets resolved, nothing
#               sent); a URL whose host does not resolve here is rewritten to 127.0.0.1
#               (the examples may name example hosts), and the placeholder port PORT
#               becomes a live knee serve's; must exit 0
#   knee model  run as written; exit 0
#   knee stats, knee hlog, knee report
#               run as written in a temp dir with inputs made for them (the article CSV from
#               tests/data/gen_article.py, logs from knee run --hlog and bench_hlog gen, an
#               open- and a closed-loop run's JSON and binary log); exit 0
#   knee serve  ports rewritten to 0 and --duration 300ms appended; exit 0, each server
#               says it is listening
#   knee merge  run as written (globs expanded) in the temp dir over the outputs of 4 shards
#               (s0..s3) and of 2 shards of which shard 1 was interrupted (int-0, int-1); exit
#               0, or the code the page shows in a following "$ echo $?"
#   knee compare
#               run as written in cmp/, where before/, same/ and after/ are three repetitions
#               each of one plan against the null server; exit 0, or 99 (a --fail-if that
#               found the rare false alarm the method allows)
# An example whose shown output is a single error line ("knee <cmd>: ...") is bad input on
# purpose: it must exit 2 and print that line (up to the file name's position, for errors
# whose details depend on generated inputs). Pipes, redirections and comments after the
# knee command are dropped. Exceptions, by name with the reason: EXCEPTIONS below.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
: "${KNEE_BUILD:?KNEE_BUILD must name the build dir (bench_hlog)}"

# knee lab runs minutes of experiments (its flags are covered by tests/e2e/lab_cli.sh).
EXCEPTIONS="lab"

# the README is the front door, not the manual: the reference is docs/REFERENCE.md
readme_lines=$(wc -l <"$KNEE_SRC/README.md")
((readme_lines <= 400)) || fail "README.md has $readme_lines lines, more than 400: move the detail to docs/REFERENCE.md"

cd "$TMP"
# inputs for the stats and hlog examples
python3 "$KNEE_SRC/tests/data/gen_article.py" open.csv --seconds 5 >/dev/null
printf 'latency_ms\n1.5\n-0.5\n' >neg.csv
"$KNEE_BUILD/bench_hlog" gen host1.hlog --seed 1 --intervals 20 --start 1700000000 --tags api >/dev/null
"$KNEE_BUILD/bench_hlog" gen host2.hlog --seed 2 --intervals 20 --start 1700000000.4 --tags api >/dev/null
"$KNEE_BUILD/bench_hlog" gen us.hlog --seed 3 --intervals 20 --start 1700000000 --tags api --digits 2 >/dev/null
start_knee_serve s -p null
PORT=$PORT_s
"$KNEE" run -n 200 -c 2 --target A="http://127.0.0.1:$PORT/" --hlog r.hlog >/dev/null ||
    fail "knee run --hlog for the r.hlog input"
"$KNEE" run -R 200 -d 1s "http://127.0.0.1:$PORT/" --json open-loop.json --out open-loop.bin >/dev/null ||
    fail "knee run for the open-loop report inputs"
"$KNEE" run -n 200 -c 2 "http://127.0.0.1:$PORT/" --json closed-loop.json --out closed-loop.bin >/dev/null ||
    fail "knee run for the closed-loop report inputs"
"$KNEE" run --target api="http://127.0.0.1:$PORT/a@150" --target web="http://127.0.0.1:$PORT/b@100" \
    -d 1s --warmup 0.5s --out rr.csv --json rr.json >/dev/null || fail "knee run for the rr.csv input"
# the targets-file and feed examples' inputs (their URLs name 127.0.0.1:8080: a dry run
# resolves them, never connects), and a run of a targets file for the stats example's t.csv
printf 'GET http://127.0.0.1:8080/product?id=42\nX-Client: readme\n\nPOST http://127.0.0.1:8080/cart\n' >targets.txt
printf 'Content-Type: application/json\n@item.json\n' >>targets.txt
printf '{"sku": 42, "qty": 1}\n' >item.json
printf 'id\n17\n42\n99\n' >ids.csv
printf 'GET http://127.0.0.1:%s/a\n\nGET http://127.0.0.1:%s/b\n' "$PORT" "$PORT" >live-targets.txt
"$KNEE" run --targets live-targets.txt -n 100 -c 2 --out t.csv >/dev/null || fail "knee run --targets for the t.csv input"
# the compare examples' sides (three repetitions each, one plan), in cmp/ where they run
for side in before same after; do
    "$KNEE" run -n 150 -c 2 --repeat 3 --out-dir "cmp/$side" "http://127.0.0.1:$PORT/" >/dev/null ||
        fail "knee run --repeat for the compare inputs"
done

# the shards of knee merge's examples: four of one plan, and two of which shard 1 is interrupted
start=$(($(date +%s) + 2))
for i in 0 1 2 3; do
    "$KNEE" run --shard $i/4 --start-at "$start" -R 400 -d 1s -t 1 --json s$i.json --out s$i.bin --hlog s$i.hlog \
        "http://127.0.0.1:$PORT/" >/dev/null 2>&1 &
    PIDS+=($!)
done
"$KNEE" run --shard 0/2 -R 200 -d 4s -t 1 --json int-0.json "http://127.0.0.1:$PORT/" >/dev/null 2>&1 &
PIDS+=($!)
"$KNEE" run --shard 1/2 -R 200 -d 4s -t 1 --progress --json int-1.json "http://127.0.0.1:$PORT/" >/dev/null 2>int-1.err &
intr=$!
# Ctrl-C once the shard is under way (its first --progress line, a second in): a background job
# of a non-interactive shell starts with SIGINT ignored until knee run installs its handler, so
# a signal sent at a fixed moment before that (a loaded machine starts a process slowly) is
# lost and the shard runs its plan to the end
for _ in $(seq 600); do
    grep -q '^\[' int-1.err && break
    sleep 0.05
done
grep -q '^\[' int-1.err || fail "the shard to interrupt never started: $(cat int-1.err)"
kill -INT "$intr"
wait "$intr" || true
for p in "${PIDS[@]:1}"; do
    wait "$p" || fail "a knee run --shard for the merge examples"
done
PIDS=("${PIDS[0]}")

python3 - "$KNEE_SRC" "$KNEE" "$EXCEPTIONS" "$PORT" <<'PY'
import glob, os, re, shlex, socket, subprocess, sys

src, knee, exceptions, live_port = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4]
PAGES = ("README.md", "docs/REFERENCE.md")

def examples_of(page):
    """The "$ knee ..." lines inside ``` blocks of one page, continuations joined; the line
    after the command (its first line of output) tells an error example."""
    lines = open(os.path.join(src, page), encoding="utf-8").read().split("\n")
    examples, in_block, i = [], False, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            in_block = not in_block
        elif in_block and line.startswith("$ knee "):
            start, cmd = i + 1, line[2:]
            while cmd.endswith("\\"):
                i += 1
                cmd = cmd[:-1] + " " + lines[i].strip()
            following = lines[i + 1] if i + 1 < len(lines) else ""
            after = lines[i + 2] if i + 2 < len(lines) else "```"
            # the exit code the page shows: "$ echo $?" after the output, then the code
            code, j = 0, i + 1
            while j < len(lines) and not lines[j].startswith(("```", "$ ")):
                j += 1
            if j + 1 < len(lines) and lines[j] == "$ echo $?" and lines[j + 1].strip().isdigit():
                code = int(lines[j + 1])
            # an error example prints one line, then the block ends or the next command starts
            examples.append((page, start, cmd, following if after.startswith(("```", "$ ")) else "", code))
        i += 1
    return examples

examples = [e for page in PAGES for e in examples_of(page)]

def argv_of(cmd):
    """The knee command alone: stop at a pipe, a redirection, && or ;; drop comments."""
    out = []
    for tok in shlex.split(cmd, comments=True):
        if tok in ("|", "&&", ";", "&") or tok.startswith((">", "2>", "<")):
            break
        out.append(tok)
    return out

def resolves(host):
    try:
        socket.getaddrinfo(host, None)
        return True
    except OSError:
        return False

URL = re.compile(r"^(.*?http://)(\[[^\]]*\]|[^/:@?]+)(.*)$")

def local_urls(argv):
    """Hosts that do not resolve here become 127.0.0.1 (the example's host is a placeholder)."""
    out = []
    for a in argv:
        a = a.replace(":PORT/", ":%s/" % live_port)
        m = URL.match(a)
        if m and not resolves(m.group(2).strip("[]")):
            a = m.group(1) + "127.0.0.1" + m.group(3)
        out.append(a)
    return out

failures, counts = [], {}
for page, line_no, cmd, following, code in examples:
    argv = argv_of(cmd)
    sub = argv[1] if len(argv) > 1 else ""
    where = "%s:%d: %s" % (page, line_no, cmd)
    if sub in exceptions:
        counts["skipped"] = counts.get("skipped", 0) + 1
        continue
    # (knee report's success line "knee report: wrote FILE ..." is not an error)
    error_example = following.startswith("knee %s" % sub) and ":" in following and ": wrote " not in following
    if sub in ("run", "capacity"):
        argv = local_urls(argv) + ["--dry-run"]
    elif sub == "serve":
        argv = [re.sub(r"(127\.0\.0\.1|\[::1\]):\d+", r"\1:0", a) for a in argv] + ["--duration", "300ms"]
    elif sub == "merge":
        argv = argv[:2] + [m for a in argv[2:] for m in (sorted(glob.glob(a)) if "*" in a else [a])]
    elif sub not in ("model", "stats", "hlog", "report", "compare"):
        failures.append("%s: no rule for 'knee %s' examples (add one, or an exception with its reason)" % (where, sub))
        continue
    argv[0] = knee
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="cmp" if sub == "compare" else None)
    counts[sub] = counts.get(sub, 0) + 1
    if error_example:
        # the page shows the error line: exit 2 and the same line, at least up to the
        # position in the named file (inputs made here differ in their details)
        want = following.strip()
        got = p.stderr.strip().split("\n")[0] if p.stderr.strip() else ""
        m = re.match(r"^(knee [a-z ]+: [^:]+:\d+:)", want)
        prefix = m.group(1) if m and sub == "hlog" else want
        if p.returncode != 2 or not got.startswith(prefix):
            failures.append("%s: expected exit 2 and '%s', got exit %d and '%s'" % (where, prefix, p.returncode, got))
        continue
    # the pages' other exit codes are of runs, here --dry-run; compare may find the rare
    # false alarm the method allows (99)
    code = code if sub == "merge" else 0
    if p.returncode != code and not (sub == "compare" and p.returncode == 99):
        failures.append("%s: exit %d (the page shows %d): %s" % (where, p.returncode, code,
                                                                   (p.stderr or p.stdout).strip()[:300]))
    elif sub in ("run", "capacity") and "nothing was sent" not in p.stdout:
        failures.append("%s: --dry-run printed no plan" % where)
    elif sub == "serve" and "listening on" not in p.stdout:
        failures.append("%s: no server listened" % where)

print("examples of %s: %s" % (" and ".join(PAGES), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
for f in failures:
    print("FAIL: " + f, file=sys.stderr)
for page in PAGES:
    found = {e[2].split()[1] for e in examples if e[0] == page and len(e[2].split()) > 1}
    if not {"run", "model"} <= found:
        print("FAIL: no knee run or knee model example found in %s" % page, file=sys.stderr)
        sys.exit(1)
sys.exit(1 if failures else 0)
PY
echo "ok"
