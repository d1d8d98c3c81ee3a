#!/usr/bin/env bash
# Shards as separate hosts: each shard in its own network namespace (own address, own TCP
# stack) on a bridge to knee serve in a third namespace, all created by the test (10.77.0.0/24
# inside namespaces only: the host's own network is never touched, traffic stays in the
# machine). The server sees one source address per shard; the merge adds them up to the plan.
# Needs root and iproute2; skipped otherwise.
# tier: exact
source "$KNEE_SRC/tests/e2e/run_common.bash"
export PATH=$PATH:/usr/sbin:/sbin
command -v ip >/dev/null || { echo "SKIP: iproute2 (ip) is not installed"; exit 77; }
[[ $(id -u) -eq 0 ]] || { echo "SKIP: network namespaces need root"; exit 77; }
N=3
tag="kn$$"
SRV="$tag-srv"
NS=()
links=()
teardown() {
    local n
    for n in "${NS[@]}" "$SRV"; do
        ip netns pids "$n" 2>/dev/null | xargs -r kill 2>/dev/null || true
    done
    for n in "${NS[@]}" "$SRV"; do
        ip netns del "$n" 2>/dev/null || true
    done
    for n in "${links[@]}"; do
        ip link del "$n" 2>/dev/null || true
    done
}
trap 'teardown; cleanup' EXIT
ip netns add "$SRV" 2>/dev/null || { echo "SKIP: cannot create a network namespace here (ip netns add failed)"; exit 77; }
ip -n "$SRV" link set lo up
ip -n "$SRV" link add br0 type bridge
ip -n "$SRV" addr add 10.77.0.1/24 dev br0
ip -n "$SRV" link set br0 up
for ((i = 0; i < N; i++)); do
    ns="$tag-h$i"
    NS+=("$ns")
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    links+=("${tag}v$i")
    ip link add "${tag}v$i" type veth peer name "${tag}p$i"
    ip link set "${tag}v$i" netns "$SRV"
    ip link set "${tag}p$i" netns "$ns"
    ip -n "$SRV" link set "${tag}v$i" master br0 up
    ip -n "$ns" addr add "10.77.0.$((10 + i))/24" dev "${tag}p$i"
    ip -n "$ns" link set "${tag}p$i" up
done
echo "ok: $N shard namespaces (10.77.0.10..$((9 + N))) bridged to a server namespace (10.77.0.1)"

SERVE_WRAP=(ip netns exec "$SRV")
start_knee_serve ns --preset quiet --pool 0 --hit-ms 2 --miss-rate 0 --listen 10.77.0.1:0
PORT=$PORT_ns
URL="http://10.77.0.1:$PORT/"
for ((i = 0; i < N; i++)); do
    ip netns exec "${NS[$i]}" python3 -c "import socket,sys; socket.create_connection(('10.77.0.1', int(sys.argv[1])), 2)" \
        "$PORT" || fail "shard namespace $i cannot reach the server"
done

pids=()
for ((i = 0; i < N; i++)); do
    ip netns exec "${NS[$i]}" "$KNEE" run -R 600 -d 3s -t 1 --shard "$i/$N" --start-at "+1s@$TMP/start" \
        --json "$TMP/n-$i.json" --out "$TMP/n-$i.bin" "$URL" >"$TMP/n-$i.txt" 2>&1 &
    pids+=($!)
done
# the server's view while they run: one source address per shard
seen=""
for _ in $(seq 60); do
    seen=$(ip netns exec "$SRV" ss -Htn state established "( sport = :$PORT )" 2>/dev/null |
        awk '{print $4}' | sed 's/:[0-9]*$//' | sort -u | tr '\n' ' ')
    [[ $(wc -w <<<"$seen") -ge $N ]] && break
    sleep 0.1
done
for p in "${pids[@]}"; do
    wait "$p" || true
done
[[ $(wc -w <<<"$seen") -eq $N ]] || fail "the server saw peers '$seen', want $N addresses"
for ((i = 0; i < N; i++)); do
    grep -q "10.77.0.$((10 + i))" <<<"$seen" || fail "no connection from shard $i's address"
done
echo "ok: the server saw each shard from its own address: $seen"
run_knee merge "$TMP"/n-[0-9].json "$TMP"/n-[0-9].bin --json "$TMP/merged.json" >"$TMP/merge.txt" 2>&1
[[ $RC -eq 0 ]] || { cat "$TMP/merge.txt" "$TMP"/n-*.txt >&2; fail "knee merge exited $RC"; }
json_check "$TMP/merged.json" 'd["shard"]["complete"] and acc["planned"] == 1800 and d["outcomes"]["ok"] == 1800' \
    "the merged plan over $N hosts"
grep -q 'plan check: the shards planned 1,800 requests, the whole plan has 1,800 \[equal\]' "$TMP/merge.txt" ||
    fail "plan check"
echo "ok: $N shards on $N addresses merged to the plan"
