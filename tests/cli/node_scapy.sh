#!/usr/bin/env bash
# Interop of `layersec node` on real sockets with scapy's SOME/IP / SOME/IP-SD
# as a foreign peer, across a veth pair between two network namespaces; see
# tests/interop/someip_node_scapy.py. Needs root; skips with a reason otherwise.
# Usage: bash tests/cli/node_scapy.sh /path/to/layersec
set -euo pipefail
LS="${1:?usage: $0 /path/to/layersec}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [[ "$(id -u)" -ne 0 ]]; then
  echo "SKIP: node_scapy needs root (network namespaces)"
  exit 0
fi
if ! command -v ip >/dev/null; then
  echo "SKIP: iproute2 'ip' is not installed"
  exit 0
fi
/usr/bin/python3 -c "import scapy.contrib.automotive.someip" 2>/dev/null \
  || { echo "FAIL: python3-scapy (scapy.contrib.automotive.someip) not installed"; exit 1; }

NS_NODE="lsnscN$$"
NS_PEER="lsnscP$$"
cleanup() {
  ip netns del "$NS_NODE" 2>/dev/null || true
  ip netns del "$NS_PEER" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$NS_NODE"
ip netns add "$NS_PEER"
ip link add eth0 netns "$NS_NODE" type veth peer name eth0 netns "$NS_PEER"
ip -n "$NS_NODE" addr add 10.77.0.1/24 dev eth0
ip -n "$NS_PEER" addr add 10.77.0.2/24 dev eth0
for ns in "$NS_NODE" "$NS_PEER"; do
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
done
LS_ABS="$(cd "$(dirname "$LS")" && pwd)/$(basename "$LS")"
ip netns exec "$NS_PEER" /usr/bin/python3 "$HERE/../interop/someip_node_scapy.py" \
  "$LS_ABS" "$NS_NODE" "$HERE/../../examples/node"
