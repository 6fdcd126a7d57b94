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

source "$HERE/lib/netns.sh"
netns_require node_multicast_netns "network namespaces" ip

HUB="lsmchub$$"
NS=("lsmc1x$$" "lsmc2x$$" "lsmc3x$$")
NETNS_TAIL=3
netns_init node_multicast_netns
netns_add "$HUB" "${NS[@]}"
netns_bridge "$HUB" br0
for i in 0 1 2; do
  netns_port "$HUB" br0 "${NS[$i]}" eth0 "p$i"
  ip -n "${NS[$i]}" addr add "10.77.0.$((i + 1))/24" dev eth0
done

run() {  # run NS_INDEX CONFIG NAME DURATION
  ip netns exec "${NS[$1]}" "$LS" node --config "$EXAMPLES/$2" --json --duration "$4" --seed "$1" \
    >"$work/$3.out" 2>"$work/$3.err" &
  pids+=("$!")
}
run 0 multicast_publisher.json publisher 6
sleep 0.3
run 1 multicast_subscriber_a.json sub_a 5
run 2 multicast_subscriber_b.json sub_b 5
for p in "${pids[@]}"; do
  wait "$p" || fail "a node exited with $?"
done
pids=()

for s in sub_a sub_b; do
  f="$work/$s.out"
  n_mc=$(grep '"type":"event"' "$f" | grep -c '"multicast":true' || true)
  n_all=$(grep -c '"type":"event"' "$f" || true)
  [[ $n_mc -ge 20 ]] || fail "$s: only $n_mc multicast events ($n_all events in all)"
  grep '"type":"event"' "$f" | grep '"event":32784,' | grep '"size":32' >/dev/null || fail "$s: no 32-byte 0x8010 event"
  echo "ok: $s received $n_all events, $n_mc by multicast"
done
# Both subscribers saw the same multicast datagrams (same sequence numbers).
seqs() { grep '"type":"event"' "$1" | grep '"multicast":true' | grep -o '"payload":"[0-9a-f]\{8\}' | sort -u; }
common=$(comm -12 <(seqs "$work/sub_a.out") <(seqs "$work/sub_b.out") | wc -l)
[[ $common -ge 20 ]] || fail "subscribers share only $common multicast events"
# One datagram per event while both subscribe: far fewer sends than 2 x events.
sent=$(grep '"type":"counters"' "$work/publisher.out" | grep -o '"notifications_sent":[0-9]*' | cut -d: -f2)
pub=$(grep '"type":"counters"' "$work/publisher.out" | grep -o '"published":[0-9]*' | cut -d: -f2)
[[ -n "$sent" && -n "$pub" && $sent -le $((pub + 10)) ]] || fail "publisher sent $sent datagrams for $pub events"
echo "ok: $common events reached both subscribers by multicast; publisher sent $sent datagrams for $pub events"
echo "PASS"
