#!/usr/bin/env bash
# Replay of recorded SV traffic across network namespaces (issue 13, item 10).
# A publisher, a subscriber and an attacker in three namespaces on one Linux
# bridge (it floods the SV multicast to every port). For each scheme the old
# smpCnt-only check let through (HMAC-SHA256, BLAKE2s, Chaskey-12 full and
# field-selective):
#   1. the subscriber starts; the attacker records, from its bridge port, the
#      4,000 frames (one second, every smpCnt once) of a first publisher run;
#   2. a second publisher run (restart, same key) streams for 2 s while the
#      attacker injects the whole recording twice (8,000 frames, raw
#      AF_PACKET sends, the frames byte for byte as recorded);
#   3. the subscriber's final report: every genuine frame of both runs
#      delivered (no loss, nothing dropped as stale), every injected frame
#      refused and counted as a replay (replayed_counter), no bad tag, no
#      unknown key, no socket drop.
# Then the restarted subscriber (HMAC-SHA256, `sv subscribe --state`): it
# accepts 1,000 frames of a run the attacker records, is killed with -9,
# restarts on its floor file and gets the recording injected before any
# genuine frame: all refused (replayed_counter), then a new publisher run is
# delivered in full; with the floor file deleted it refuses to start.
# Root only (namespaces, AF_PACKET): skips otherwise. Namespaces are removed by
# the trap of tests/cli/lib/netns.sh whatever happens.
# Usage: bash tests/cli/sv_replay_netns.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
netns_require sv_replay_netns "network namespaces, AF_PACKET" ip jq openssl

id=$$
hub="lsrH$id"; nsp="lsrP$id"; nss="lsrS$id"; nsa="lsrA$id"
vp="lsrp$id"; vs="lsrs$id"; va="lsra$id"
NETNS_TAIL=20
netns_init sv_replay
netns_add "$hub" "$nsp" "$nss" "$nsa"
netns_bridge "$hub" br0
netns_port "$hub" br0 "$nsp" "$vp" "${vp}h"
netns_port "$hub" br0 "$nss" "$vs" "${vs}h"
netns_port "$hub" br0 "$nsa" "$va" "${va}h"

# The attacker: "record IFACE FILE COUNT" keeps COUNT SV frames seen on IFACE
# (EtherType 0x88BA, untagged) and writes them length-prefixed to FILE;
# "inject IFACE FILE PASSES" sends them PASSES times, 40 frames every 10 ms
# (about the live rate), and prints how many it sent.
cat >"$work/attacker.py" <<'PY'
import socket, struct, sys, time
mode, iface, path, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if mode == "record":
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((iface, 0))
    s.settimeout(30)
    open(path + ".ready", "w").close()
    frames = []
    while len(frames) < n:
        data, addr = s.recvfrom(65535)
        if addr[2] != socket.PACKET_OUTGOING and len(data) > 14 and data[12:14] == b"\x88\xba":
            frames.append(data)
    with open(path, "wb") as f:
        for d in frames:
            f.write(struct.pack(">H", len(d)) + d)
    print(len(frames))
else:
    blob = open(path, "rb").read()
    frames, i = [], 0
    while i < len(blob):
        (l,) = struct.unpack(">H", blob[i:i + 2])
        frames.append(blob[i + 2:i + 2 + l])
        i += 2 + l
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    sent = 0
    for _ in range(n):
        for k, d in enumerate(frames):
            s.send(d)
            sent += 1
            if k % 40 == 39:
                time.sleep(0.01)
    print(sent)
PY

for auth in hmac-sha256 blake2s chaskey12-full chaskey12-selective; do
  keylen=16
  [[ "$auth" == hmac-sha256 || "$auth" == blake2s ]] && keylen=32
  (umask 077; openssl rand -hex "$keylen" >"$work/$auth.key")
  sub_out="$work/$auth.sub.out"
  ip netns exec "$nss" "$layersec" sv subscribe --iface "$vs" --auth "$auth" --key "$work/$auth.key" \
    --json --interval 1 --duration 60 >"$sub_out" 2>"$work/$auth.sub.err" &
  sub_pid=$!
  pids+=("$sub_pid")
  ip netns exec "$nsa" /usr/bin/python3 "$work/attacker.py" record "$va" "$work/$auth.rec" 4000 \
    >"$work/$auth.rec.out" 2>"$work/$auth.rec.err" &
  rec_pid=$!
  pids+=("$rec_pid")
  for _ in $(seq 1 100); do
    [[ -e "$work/$auth.rec.ready" ]] && grep -q '"type":"ready"' "$sub_out" 2>/dev/null && break
    sleep 0.05
  done
  grep -q '"type":"ready"' "$sub_out" || fail "$auth: subscriber did not get ready"
  [[ -e "$work/$auth.rec.ready" ]] || fail "$auth: recorder did not get ready"

  # 1. The run the attacker records.
  ip netns exec "$nsp" "$layersec" sv publish --iface "$vp" --auth "$auth" --key "$work/$auth.key" --no-vlan \
    --count 4000 --json >"$work/$auth.pub1.out" 2>"$work/$auth.pub1.err" || fail "$auth: first run failed"
  wait "$rec_pid" || fail "$auth: recording failed"
  [[ "$(cat "$work/$auth.rec.out")" == 4000 ]] || fail "$auth: recorded $(cat "$work/$auth.rec.out") frames"

  # 2. The restarted publisher, and the recording injected twice meanwhile.
  ip netns exec "$nsp" "$layersec" sv publish --iface "$vp" --auth "$auth" --key "$work/$auth.key" --no-vlan \
    --duration 2 --json >"$work/$auth.pub2.out" 2>"$work/$auth.pub2.err" &
  pub_pid=$!
  pids+=("$pub_pid")
  sleep 0.3
  injected="$(ip netns exec "$nsa" /usr/bin/python3 "$work/attacker.py" inject "$va" "$work/$auth.rec" 2)" ||
    fail "$auth: injection failed"
  wait "$pub_pid" || fail "$auth: second run failed"
  sleep 0.3
  kill -TERM "$sub_pid"
  wait "$sub_pid" || fail "$auth: subscriber exited with an error"

  final="$(grep '"type":"final"' "$sub_out" | tail -n 1)"
  [[ -n "$final" ]] || fail "$auth: no final report"
  sent=$(( $(jq -r .frames_sent "$work/$auth.pub1.out") + $(jq -r .frames_sent "$work/$auth.pub2.out") ))
  st() { jq -r ".streams[0].$1" <<<"$final"; }
  echo "$auth: genuine sent $sent, delivered $(st delivered); injected $injected, replayed_counter" \
    "$(st replayed_counter), stale $(st stale), bad_tag $(st bad_tag), smp_cnt_resyncs $(st smp_cnt_resyncs)," \
    "socket_drops $(jq -r .socket_drops <<<"$final")"
  [[ "$injected" == 8000 ]] || fail "$auth: injected $injected"
  [[ "$(jq -r .socket_drops <<<"$final")" == 0 ]] || fail "$auth: the subscriber's socket dropped frames"
  [[ "$(st delivered)" == "$sent" ]] || fail "$auth: delivered $(st delivered) of $sent genuine frames"
  [[ "$(st replayed_counter)" == "$injected" ]] || fail "$auth: $(st replayed_counter) of $injected replays refused"
  [[ "$(st replays)" == "$injected" ]] || fail "$auth: replays $(st replays)"
  [[ "$(st received)" == $((sent + injected)) ]] || fail "$auth: received $(st received)"
  for k in bad_tag unknown_key bad_extension stale duplicates; do
    [[ "$(st "$k")" == 0 ]] || fail "$auth: $k = $(st "$k")"
  done
  [[ "$(jq -r '.rejections | keys | join(",")' <<<"$final")" == security ]] || fail "$auth: rejections $(jq -c .rejections <<<"$final")"
done

# The restarted subscriber with a persisted counter floor (docs/sv.md).
auth=hmac-sha256
state="$work/floor.state"
wait_ready() {
  for _ in $(seq 1 100); do
    grep -q '"type":"ready"' "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "restart: subscriber did not get ready ($(cat "$2"))"
}
sub() {  # sub OUT ARGS...: a subscriber in the background, its pid in sub_pid
  local out="$1"
  shift
  ip netns exec "$nss" "$layersec" sv subscribe --iface "$vs" --auth "$auth" --key "$work/$auth.key" \
    --json --interval 1 --duration 60 --state "$state" "$@" >"$out" 2>"$out.err" &
  sub_pid=$!
  pids+=("$sub_pid")
  wait_ready "$out" "$out.err"
}
sub "$work/r1.out" --first-start --floor-reserve 64
ip netns exec "$nsa" /usr/bin/python3 "$work/attacker.py" record "$va" "$work/r.rec" 1000 \
  >"$work/r.rec.out" 2>"$work/r.rec.err" &
rec_pid=$!
pids+=("$rec_pid")
for _ in $(seq 1 100); do [[ -e "$work/r.rec.ready" ]] && break; sleep 0.05; done
ip netns exec "$nsp" "$layersec" sv publish --iface "$vp" --auth "$auth" --key "$work/$auth.key" --no-vlan \
  --count 1000 --json >"$work/r.pub1.out" 2>"$work/r.pub1.err" || fail "restart: first run failed"
wait "$rec_pid" || fail "restart: recording failed"
sleep 0.3
kill -KILL "$sub_pid"
wait "$sub_pid" 2>/dev/null || true
[[ "$(stat -c %a "$state")" == 600 ]] || fail "restart: floor file mode $(stat -c %a "$state")"
sub "$work/r2.out"
injected="$(ip netns exec "$nsa" /usr/bin/python3 "$work/attacker.py" inject "$va" "$work/r.rec" 1)" ||
  fail "restart: injection failed"
sleep 0.3
ip netns exec "$nsp" "$layersec" sv publish --iface "$vp" --auth "$auth" --key "$work/$auth.key" --no-vlan \
  --count 400 --json >"$work/r.pub2.out" 2>"$work/r.pub2.err" || fail "restart: second run failed"
sleep 0.3
kill -TERM "$sub_pid"
wait "$sub_pid" || fail "restart: subscriber exited with an error"
final="$(grep '"type":"final"' "$work/r2.out" | tail -n 1)"
st() { jq -r ".streams[0].$1" <<<"$final"; }
echo "restart: injected $injected before the first genuine frame, replayed_counter $(st replayed_counter)," \
  "genuine delivered $(st delivered) of 400, floor_resume $(st floor_resume), floor_saves $(st floor_saves)"
[[ "$injected" == 1000 ]] || fail "restart: injected $injected"
[[ "$(st replayed_counter)" == 1000 ]] || fail "restart: $(st replayed_counter) of 1000 recorded frames refused"
[[ "$(st delivered)" == 400 ]] || fail "restart: delivered $(st delivered) of 400 (or a recorded frame was accepted)"
[[ "$(st floor_not_persisted)" == 0 ]] || fail "restart: floor_not_persisted $(st floor_not_persisted)"
# A deleted floor file: the subscriber refuses to start (fail closed).
rm -f "$state"
st_rc=0
ip netns exec "$nss" timeout 10 "$layersec" sv subscribe --iface "$vs" --auth "$auth" --key "$work/$auth.key" \
  --json --duration 1 --state "$state" >"$work/r3.out" 2>"$work/r3.err" || st_rc=$?
[[ $st_rc -ne 0 && $st_rc -ne 124 ]] || fail "restart: started without its floor file (exit $st_rc)"
grep -q -- "--first-start" "$work/r3.err" || fail "restart: refusal does not say why: $(cat "$work/r3.err")"
echo "PASS"
