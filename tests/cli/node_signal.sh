#!/usr/bin/env bash
# `layersec node` stops cleanly on SIGTERM and SIGINT: exit status 0 and a
# final counters line naming the signal. Runs on loopback only (127.0.0.77,
# SD and service ports moved off the defaults); needs no privileges.
# Usage: bash tests/cli/node_signal.sh /path/to/layersec
set -euo pipefail
LS="${1:?usage: $0 /path/to/layersec}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$(mktemp -d)"
PID=""
cleanup() {
  if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$WORK"/out "$WORK"/err 2>/dev/null | tail -n 5; exit 1; }

/usr/bin/python3 - "$HERE/../../examples/node/echo_server.json" "$WORK/node.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["unicast"] = "127.0.0.77"
j["service-discovery"]["port"] = "31490"
j["services"][0]["unreliable"] = "31509"
json.dump(j, open(sys.argv[2], "w"))
PY

for sig in TERM INT; do
  "$LS" node --config "$WORK/node.json" --json >"$WORK/out" 2>"$WORK/err" &
  PID=$!
  for _ in $(seq 100); do  # up to 10 s for start-up on a loaded machine
    grep '"type":"started"' "$WORK/out" >/dev/null 2>&1 && break
    sleep 0.1
  done
  grep '"type":"started"' "$WORK/out" >/dev/null || fail "SIG$sig: node did not start"
  kill -s "$sig" "$PID"
  st=0
  wait "$PID" || st=$?
  PID=""
  [[ $st -eq 0 ]] || fail "SIG$sig: exit status $st"
  tail -n 1 "$WORK/out" | grep "\"type\":\"counters\"" | grep "\"stopped_by\":\"SIG$sig\"" >/dev/null \
    || fail "SIG$sig: last line is not the counters line naming the signal"
  echo "ok: SIG$sig: clean stop, counters printed"
done
echo "PASS"
