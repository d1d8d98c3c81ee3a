#!/usr/bin/env bash
# deploy/kubernetes without a cluster: the manifests parse as YAML with the fields an Indexed
# Job of shards needs (completion mode, completions = parallelism = KNEE_SHARDS, no retries,
# the start instant, the shared volume in both Jobs); run.sh --render fills every placeholder
# with one start instant; and the rendered pods' commands, run here as the Job controller
# would run them (JOB_COMPLETION_INDEX 0..N-1, the shared volume a directory) against knee
# serve, give shards that the rendered merge Job's command adds up to the whole plan.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml is not installed (scripts/deps.sh --test)"; exit 77; }
D="$KNEE_SRC/deploy/kubernetes"
N=3

python3 - "$D/knee-shards.yaml" "$D/knee-merge.yaml" <<'PY' || fail "manifests"
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
kinds = [d["kind"] for d in docs]
assert kinds == ["PersistentVolumeClaim", "Job"], kinds
pvc, job = docs
assert "ReadWriteMany" in pvc["spec"]["accessModes"]
s = job["spec"]
assert s["completionMode"] == "Indexed"
assert s["completions"] == s["parallelism"], "all shards at once"
assert s["backoffLimit"] == 0, "a retried shard would start late"
pod = s["template"]["spec"]
assert pod["restartPolicy"] == "Never"
c = pod["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
assert int(env["KNEE_SHARDS"]) == s["completions"], (env["KNEE_SHARDS"], s["completions"])
assert env["KNEE_START_AT"] == "@START_AT@"
cmd = " ".join(c["command"])
for need in ("--shard auto", '--start-at "$KNEE_START_AT"', "$JOB_COMPLETION_INDEX", "--json", "--out", "--hlog"):
    assert need in cmd, need
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
vols = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]}
assert vols["results"] == pvc["metadata"]["name"] and mounts["results"] == "/results"
merge = yaml.safe_load(open(sys.argv[2]))
assert merge["kind"] == "Job"
mc = merge["spec"]["template"]["spec"]["containers"][0]
assert mc["command"][:3] == ["knee", "merge", "/results"], mc["command"]
assert merge["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
print("ok: the manifests have the fields of an Indexed Job of shards and its collection step")
PY

# knee serve first, so the start instant rendered next is not spent waiting for it (CI, on a
# loaded machine: the pods started 2.4 s after a 3 s instant and refused a plan in the past)
start_knee_serve null --preset null
PORT=$PORT_null
bash "$D/run.sh" --render -i "registry.example/knee:test" -n "$N" -d 6 "PLACEHOLDER_URL" -R 900 -d 1500ms --warmup 500ms \
    >"$TMP/rendered.yaml"
python3 - "$TMP/rendered.yaml" "$N" "$TMP" <<'PY' || fail "rendered manifests"
import datetime, json, re, sys, time, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
n = int(sys.argv[2])
job = docs[1]
s = job["spec"]
assert s["completions"] == s["parallelism"] == n, s
c = s["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
assert env["KNEE_SHARDS"] == str(n)
start = datetime.datetime.strptime(env["KNEE_START_AT"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
assert 0 < start.timestamp() - time.time() < 10, env["KNEE_START_AT"]
left = re.findall(r"@[A-Z_]+@", open(sys.argv[1]).read())
assert not left, "placeholders left: %s" % left
assert c["image"] == "registry.example/knee:test"
# the pods' script and environment, for the shell to run as the Job controller would
json.dump({"script": c["command"][2], "env": env,
           "merge": docs[2]["spec"]["template"]["spec"]["containers"][0]["command"]},
          open(sys.argv[3] + "/pod.json", "w"))
print("ok: run.sh renders one start instant, the count in completions, parallelism and KNEE_SHARDS")
PY

# the pods run here: knee on the PATH, /results a directory
mkdir -p "$TMP/bin" "$TMP/results"
ln -s "$KNEE" "$TMP/bin/knee"
script=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["script"].replace("/results", sys.argv[2]))' \
    "$TMP/pod.json" "$TMP/results")
eval "$(python3 -c 'import json,shlex,sys
for k, v in json.load(open(sys.argv[1]))["env"].items():
    print("export %s=%s" % (k, shlex.quote(v)))' "$TMP/pod.json")"
export KNEE_TARGET="http://127.0.0.1:$PORT/"
pods=()
for ((i = 0; i < N; i++)); do
    PATH="$TMP/bin:$PATH" JOB_COMPLETION_INDEX=$i sh -c "$script" >"$TMP/pod-$i.out" 2>&1 &
    pods+=($!)
done
for p in "${pods[@]}"; do
    wait "$p" || true
done
ls "$TMP/results"/shard-{0,1,2}.json >/dev/null || { cat "$TMP"/pod-*.out >&2; fail "every pod wrote its shard"; }
grep -q "shard 1/$N (JOB_COMPLETION_INDEX/KNEE_SHARDS)" "$TMP/pod-1.out" || { cat "$TMP/pod-1.out" >&2; fail "the pod read its index"; }
merge_cmd=$(python3 -c 'import json,shlex,sys; print(" ".join(shlex.quote(a.replace("/results", sys.argv[2])) for a in json.load(open(sys.argv[1]))["merge"]))' \
    "$TMP/pod.json" "$TMP/results")
set +e
PATH="$TMP/bin:$PATH" eval "$merge_cmd" >"$TMP/merge.out" 2>&1
rc=$?
set -e
[[ $rc -eq 0 ]] || { cat "$TMP/merge.out" >&2; fail "the merge Job's command exited $rc"; }
json_check "$TMP/results/merged.json" \
    'd["shard"]["complete"] and d["shard"]["count"] == 3 and acc["planned"] + tot["warmup"]["planned"] == 1350' \
    "the merged plan: 900/s for 1.5 s"
grep -q 'plan check: the shards planned 1,350 requests, the whole plan has 1,350 \[equal\]' "$TMP/merge.out" || fail "plan check"
# running the merge Job again skips its own earlier outputs
PATH="$TMP/bin:$PATH" eval "$merge_cmd" >"$TMP/merge2.out" 2>&1 || fail "second merge"
grep -q 'skipping .*merged.json (already a merge of 3 shards)' "$TMP/merge2.out" || fail "earlier merge skipped"
echo "ok: the rendered pods' commands make $N shards, and the merge Job adds them up to the plan"
