#!/usr/bin/env bash
# Run knee-shards.yaml and then knee-merge.yaml on the cluster kubectl points at.
#
#   deploy/kubernetes/run.sh -i IMAGE -n SHARDS [-d START_DELAY_S] TARGET_URL KNEE_RUN_ARGS...
#   deploy/kubernetes/run.sh -i registry/knee:0.1 -n 8 http://svc.ns:8080/ -R 200k -d 60s --warmup 10s
#   deploy/kubernetes/run.sh --render ...   print the rendered manifests and stop (no cluster)
#
# Steps: render the placeholders (the image, the shard count into both completions/parallelism
# and KNEE_SHARDS, the target, the plan, and ONE start instant START_DELAY_S from now, so every
# pod starts the plan together however late it was scheduled), apply the PVC and the Indexed
# Job, wait for it, run the merge Job, print its log (the merged summary).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image="" shards=4 delay=60 render=0
while [[ $# -gt 0 ]]; do
    case $1 in
    -i) image=$2; shift 2 ;;
    -n) shards=$2; shift 2 ;;
    -d) delay=$2; shift 2 ;;
    --render) render=1; shift ;;
    *) break ;;
    esac
done
[[ -n $image && $# -ge 1 ]] || { sed -n '2,12p' "$0" >&2; exit 2; }
[[ $shards =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: -n SHARDS must be a positive number" >&2; exit 2; }
target=$1
shift
args="$*"
start=$(date -u -d "+$delay seconds" +%Y-%m-%dT%H:%M:%SZ)

# a value as sed's replacement text: & | and \ taken literally
lit() { printf '%s' "$1" | sed 's/[&|\\]/\\&/g'; }

render_file() {
    sed -e "s|@IMAGE@|$(lit "$image")|g" -e "s|@START_AT@|$start|g" -e "s|@TARGET@|$(lit "$target")|g" \
        -e "s|@KNEE_ARGS@|$(lit "$args")|g" \
        -e "s|^\(  completions:\) [0-9]*|\1 $shards|" -e "s|^\(  parallelism:\) [0-9]*|\1 $shards|" \
        -e "/name: KNEE_SHARDS/{n;s|value: \"[0-9]*\"|value: \"$shards\"|}" "$1"
}

if [[ $render -eq 1 ]]; then
    render_file "$here/knee-shards.yaml"
    echo "---"
    render_file "$here/knee-merge.yaml"
    exit 0
fi

echo "knee: $shards shards against $target, start at $start"
kubectl delete job knee-shards knee-merge --ignore-not-found
render_file "$here/knee-shards.yaml" | kubectl apply -f -
# complete, or failed (a shard failed: the merge still runs and names it)
kubectl wait --for=condition=complete job/knee-shards --timeout=2h &
ok=$!
kubectl wait --for=condition=failed job/knee-shards --timeout=2h &
bad=$!
wait -n "$ok" "$bad" || true
kill "$ok" "$bad" 2>/dev/null || true
render_file "$here/knee-merge.yaml" | kubectl apply -f -
kubectl wait --for=condition=complete job/knee-merge --timeout=30m || true
kubectl logs job/knee-merge
