#!/usr/bin/env bash
# `layersec node` end to end between two network namespaces joined by a veth
# pair, from the example configs in examples/node/:
#   1. echo_server + client (no SecOC): availability, echo responses, events;
#   2. secured_server + secured_client (SecOC, same key): responses and events
#      arrive, SecOC verified them, no rejection anywhere;
#   3. the same with a different key on the client: every protected message is
#      rejected (typed, counted, printed) and none is delivered;
# and the secured server's footprint: `layersec node` hands over to
# layersec-node, whose peak RSS stays under 10 MiB (optimised, no sanitizer).
# Needs root (ip netns); skips with a reason otherwise.
# Usage: bash tests/cli/node_netns.sh /path/to/layersec
set -euo pipefail

LS="${1:?usage: $0 /path/to/layersec}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EXAMPLES="$HERE/../../examples/node"

source "$HERE/lib/netns.sh"
source "$HERE/lib/sanitizer.sh"
netns_require node_netns "network namespaces" ip openssl

NS_A="lsnodeA$$"
NS_B="lsnodeB$$"
netns_init node_netns
netns_add "$NS_A" "$NS_B"
netns_veth "$NS_A" eth0 "" "$NS_B" eth0 ""
ip -n "$NS_A" addr add 10.77.0.1/24 dev eth0
ip -n "$NS_B" addr add 10.77.0.2/24 dev eth0

# run_pair NAME SERVER_CFG CLIENT_CFG: runs both nodes (server 7 s, client
# 6 s started 0.5 s later) and leaves NAME.server.{out,err}, NAME.client.{out,err}.
run_pair() {
  local name="$1" server_cfg="$2" client_cfg="$3"
  # --first-start: the state files are new (first provisioning of these keys).
  ip netns exec "$NS_A" "$LS" node --config "$server_cfg" --json --duration 7 --seed 1 --first-start \
    >"$work/$name.server.out" 2>"$work/$name.server.err" &
  local sp=$!
  pids+=("$sp")
  sleep 0.5
  ip netns exec "$NS_B" "$LS" node --config "$client_cfg" --json --duration 6 --seed 2 --first-start \
    >"$work/$name.client.out" 2>"$work/$name.client.err" &
  local cp=$!
  pids+=("$cp")
  local st=0
  wait "$cp" || st=$?
  [[ $st -eq 0 ]] || { cat "$work/$name.client.err"; fail "$name: client exited with $st"; }
  wait "$sp" || st=$?
  [[ $st -eq 0 ]] || { cat "$work/$name.server.err"; fail "$name: server exited with $st"; }
  pids=()
}

count() {  # count FILE TYPE
  grep -c "\"type\":\"$2\"" "$1" || true
}

# counter FILE PATH: a value from the final counters line, e.g. runtime.secoc_rejected
counter() {
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import json, sys
last = None
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("type") == "counters":
        last = o
if last is None:
    print("missing")
    sys.exit(0)
v = last
for k in sys.argv[2].split("."):
    v = v.get(k, 0) if isinstance(v, dict) else 0
print(v if not isinstance(v, dict) else sum(v.values()))
EOF
}

show() {
  local name="$1"
  for f in "$work/$name".*; do
    echo "--- $(basename "$f") (last 5 lines)"
    tail -n 5 "$f"
  done
}

# ---- 1. plain echo server and client ----------------------------------------
cp "$EXAMPLES/echo_server.json" "$EXAMPLES/client.json" "$work/"
run_pair plain "$work/echo_server.json" "$work/client.json"
c="$work/plain.client.out"
s="$work/plain.server.out"
grep '"type":"availability"' "$c" | grep '"available":true' >/dev/null || { show plain; fail "plain: service never became available"; }
n_resp=$(count "$c" response)
n_ev=$(count "$c" event)
n_req=$(count "$s" request)
[[ $n_resp -ge 10 ]] || { show plain; fail "plain: only $n_resp responses"; }
[[ $n_ev -ge 20 ]] || { show plain; fail "plain: only $n_ev events"; }
[[ $n_req -ge 10 ]] || { show plain; fail "plain: server served only $n_req requests"; }
# Echo: the 8-byte request payload (sequence number + filler) comes back.
grep '"type":"response"' "$c" | grep '"method":1,' | grep '"payload":"00000001a5a5a5a5"' >/dev/null \
  || { show plain; fail "plain: first echo response does not carry the request payload"; }
# The field getter answers with the field's stored value (4 bytes).
grep '"type":"response"' "$c" | grep '"method":3,.*"size":4' >/dev/null || { show plain; fail "plain: no getter response"; }
grep '"type":"event"' "$c" | grep '"event":32769,.*"size":16' >/dev/null || { show plain; fail "plain: no 16-byte 0x8001 event"; }
[[ "$(counter "$c" test.responses_timeout)" == 0 ]] || fail "plain: timeouts"
echo "ok: plain: $n_resp responses, $n_ev events, $n_req requests served"

# ---- 2. SecOC, same key ------------------------------------------------------
mkdir -p "$work/keys"
openssl rand -hex 32 >"$work/keys/pair.key"
chmod 600 "$work/keys/pair.key"
cp "$EXAMPLES/secured_server.json" "$EXAMPLES/secured_client.json" "$work/"
run_pair secured "$work/secured_server.json" "$work/secured_client.json"
c="$work/secured.client.out"
s="$work/secured.server.out"
n_resp=$(count "$c" response)
n_ev=$(count "$c" event)
[[ $n_resp -ge 10 ]] || { show secured; fail "secured: only $n_resp responses"; }
[[ $n_ev -ge 20 ]] || { show secured; fail "secured: only $n_ev events"; }
[[ $(count "$c" rejection) -eq 0 && $(count "$s" rejection) -eq 0 ]] || { show secured; fail "secured: rejections with the right key"; }
for f in "$c" "$s"; do
  [[ "$(counter "$f" runtime.secoc_rejected)" == 0 ]] || { show secured; fail "secured: $f counts rejections"; }
  [[ "$(counter "$f" runtime.secoc_verified)" -gt 0 ]] || { show secured; fail "secured: $f verified nothing"; }
  [[ "$(counter "$f" runtime.secoc_protected)" -gt 0 ]] || { show secured; fail "secured: $f protected nothing"; }
  [[ "$(counter "$f" runtime.secoc_syncs_accepted)" -gt 0 ]] || { show secured; fail "secured: $f accepted no sync"; }
done
# The key never appears in any output.
key_hex="$(tr -d '\n' <"$work/keys/pair.key")"
if grep -rqi "$key_hex" "$work"/secured.*; then fail "secured: key material in the output"; fi
echo "ok: secured: $n_resp responses, $n_ev events, SecOC verified $(counter "$c" runtime.secoc_verified) (client) / $(counter "$s" runtime.secoc_verified) (server), 0 rejections"

# Footprint (docs/node.md, "Footprint"): `layersec node` runs layersec-node
# when it sits beside layersec. Its peak resident set (VmHWM of the server,
# SecOC on) is printed, and held under 10 MiB in an optimised build without
# sanitizers (measured 8.8-8.9 MiB here; ASan's shadow memory and a Debug
# build's larger code are not what the bound is about).
prog="$(counter "$s" process.program)"
hwm="$(counter "$s" process.vm_hwm_kib)"
echo "footprint: the server ran $prog: peak RSS (VmHWM) $hwm KiB; maxrss across the exec $(counter "$s" process.maxrss_kib) KiB"
if [[ -x "$(dirname "$LS")/layersec-node" ]]; then
  [[ "$prog" == layersec-node ]] || fail "footprint: layersec node did not hand over to layersec-node"
  case "${LAYERSEC_BUILD_TYPE:-}" in
    Release | RelWithDebInfo | MinSizeRel)
      if ! sanitizer_build "$LS"; then
        (( hwm > 0 && hwm < 10240 )) || fail "footprint: the secured node's VmHWM is $hwm KiB (bound: 10240)"
      fi ;;
  esac
fi

# ---- 3. SecOC, wrong key on the client ----------------------------------------
mkdir -p "$work/wrong/keys"
openssl rand -hex 32 >"$work/wrong/keys/pair.key"
cp "$EXAMPLES/secured_client.json" "$work/wrong/"
run_pair wrongkey "$work/secured_server.json" "$work/wrong/secured_client.json"
c="$work/wrongkey.client.out"
s="$work/wrongkey.server.out"
[[ $(count "$c" event) -eq 0 ]] || { show wrongkey; fail "wrong key: events were delivered"; }
[[ $(count "$c" response) -eq 0 ]] || { show wrongkey; fail "wrong key: responses were delivered"; }
[[ $(count "$s" request) -eq 0 ]] || { show wrongkey; fail "wrong key: the server served requests"; }
n_rej_c=$(count "$c" rejection)
n_rej_s=$(count "$s" rejection)
[[ $n_rej_c -ge 10 ]] || { show wrongkey; fail "wrong key: client printed only $n_rej_c rejections"; }
[[ "$(counter "$c" runtime.secoc_rejected)" -ge 10 ]] || { show wrongkey; fail "wrong key: client counted too few rejections"; }
# Sync messages fail their MAC; protected PDUs fail their MAC or, with no
# accepted sync, freshness. Nothing else may show up.
reasons="$(cat "$c" "$s" | grep '"type":"rejection"' | grep -o '"reason":"[a-z-]*"' | sort | uniq -c)"
echo "$reasons"
grep '"reason":"mac-mismatch"' >/dev/null <<<"$reasons" || fail "wrong key: no mac-mismatch rejection"
if grep -v '"reason":"mac-mismatch"\|"reason":"out-of-window"' <<<"$reasons" | grep reason >/dev/null; then
  fail "wrong key: unexpected rejection reasons"
fi
echo "ok: wrong key: client rejected $n_rej_c messages, server rejected $n_rej_s; nothing delivered"
echo "PASS"
