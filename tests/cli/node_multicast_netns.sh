#!/usr/bin/env bash
# `layersec node` multicast eventgroup across three network namespaces on a
# Linux bridge (multicast snooping off, so group traffic floods like a plain
# switch): examples/node/multicast_publisher.json offers eventgroup 1 with
# multicast 239.77.0.1:30600 and threshold 2; multicast_subscriber_a/b.json
# subscribe. Once both are subscribed the publisher sends each event once, to
# the group, and both subscribers print it as a multicast notification.
# Needs root; skips with a reason otherwise.
# Usage: bash tests/cli/node_multicast_netns.sh /path/to/layersec
set -euo pipefail

LS="${1:?usage: $0 /path/to/layersec}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EXAMPLES="$HERE/../../examples/node"

if [[ "$(id -u)" -ne 0 ]]; then
  echo "SKIP: node_multicast_netns needs root (network namespaces)"
  exit 0
fi
if ! command -v ip >/dev/null; then
  echo "SKIP: iproute2 'ip' is not installed"
  exit 0
fi

WORK="$(mktemp -d)"
HUB="lsmchub$$"
NS=("lsmc1x$$" "lsmc2x$$" "lsmc3x$$")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  for ns in "${NS[@]}" "$HUB"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$WORK"/*.out; do echo "--- $(basename "$f") (last 3 lines)"; tail -n 3 "$f"; done
  exit 1
}

ip netns add "$HUB"
ip -n "$HUB" link add br0 type bridge stp_state 0 mcast_snooping 0
ip -n "$HUB" link set br0 up
for i in 0 1 2; do
  ns="${NS[$i]}"
  ip netns add "$ns"
  ip link add eth0 netns "$ns" type veth peer name "p$i" netns "$HUB"
  ip -n "$HUB" link set "p$i" master br0
  ip -n "$HUB" link set "p$i" up
  ip -n "$ns" addr add "10.77.0.$((i + 1))/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
done

run() {  # run NS_INDEX CONFIG NAME DURATION
  ip netns exec "${NS[$1]}" "$LS" node --config "$EXAMPLES/$2" --json --duration "$4" --seed "$1" \
    >"$WORK/$3.out" 2>"$WORK/$3.err" &
  PIDS+=("$!")
}
run 0 multicast_publisher.json publisher 6
sleep 0.3
run 1 multicast_subscriber_a.json sub_a 5
run 2 multicast_subscriber_b.json sub_b 5
for p in "${PIDS[@]}"; do
  wait "$p" || fail "a node exited with $?"
done
PIDS=()

for s in sub_a sub_b; do
  f="$WORK/$s.out"
  n_mc=$(grep '"type":"event"' "$f" | grep -c '"multicast":true' || true)
  n_all=$(grep -c '"type":"event"' "$f" || true)
  [[ $n_mc -ge 20 ]] || fail "$s: only $n_mc multicast events ($n_all events in all)"
  grep '"type":"event"' "$f" | grep '"event":32784,' | grep '"size":32' >/dev/null || fail "$s: no 32-byte 0x8010 event"
  echo "ok: $s received $n_all events, $n_mc by multicast"
done
# Both subscribers saw the same multicast datagrams (same sequence numbers).
seqs() { grep '"type":"event"' "$1" | grep '"multicast":true' | grep -o '"payload":"[0-9a-f]\{8\}' | sort -u; }
common=$(comm -12 <(seqs "$WORK/sub_a.out") <(seqs "$WORK/sub_b.out") | wc -l)
[[ $common -ge 20 ]] || fail "subscribers share only $common multicast events"
# One datagram per event while both subscribe: far fewer sends than 2 x events.
sent=$(grep '"type":"counters"' "$WORK/publisher.out" | grep -o '"notifications_sent":[0-9]*' | cut -d: -f2)
pub=$(grep '"type":"counters"' "$WORK/publisher.out" | grep -o '"published":[0-9]*' | cut -d: -f2)
[[ -n "$sent" && -n "$pub" && $sent -le $((pub + 10)) ]] || fail "publisher sent $sent datagrams for $pub events"
echo "ok: $common events reached both subscribers by multicast; publisher sent $sent datagrams for $pub events"
echo "PASS"
