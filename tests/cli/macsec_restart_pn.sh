#!/usr/bin/env bash
# Restarts with static SAKs (issue 13 item 8), with real `layersec macsec up`
# processes in two network namespaces, for GCM-AES-128 and GCM-AES-XPN-128:
#   - without its PN state file a link refuses to start unless --new-key
#     says the keys are new; a corrupt state file is reported as corrupt, a
#     symlink is refused, the state file is 0600;
#   - the transmitter A is killed with kill -9 and restarted twice while UDP
#     flows; every MACsec frame of A captured on the wire across the three
#     runs carries a different PN (no GCM nonce reused), in increasing
#     order, and each restart warns that the static SAK was used before;
#   - the receiver B is killed with kill -9 and restarted, then every frame
#     of A recorded before is re-injected onto the wire (AF_PACKET): B
#     accepts none (all counted InPktsLate, nothing delivered, no datagram
#     reaches the socket); the same after a clean restart of B;
#   - afterwards A and B resume and UDP flows again.
# pn_reserve_block is 64 so that every run crosses several reservations.
# Root only; skips otherwise.
# Usage: bash tests/cli/macsec_restart_pn.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/macsec.sh"
netns_require macsec_restart_pn "network namespaces, TAP, AF_PACKET" ip dumpcap openssl /usr/bin/python3
py=/usr/bin/python3

id=$$
nsa="lsrA$id"; nsb="lsrB$id"
va="lsrva$id"; vb="lsrvb$id"
ma="lsrma$id"; mb="lsrmb$id"
mac_a=02:00:00:7a:00:01; mac_b=02:00:00:7a:00:02
ip_a=10.83.0.1; ip_b=10.83.0.2
sci_a=0200007a00010001; sci_b=0200007a00020001
netns_init macsec_restart_pn
netns_add "$nsa" "$nsb"
netns_veth "$nsa" "$va" "$mac_a" "$nsb" "$vb" "$mac_b"

crash_link() { kill -KILL "$1"; wait "$1" 2>/dev/null || true; }
refused() {  # ns lower name config expected-text tag [args]: the start must fail with the text
  local ns="$1" lower="$2" name="$3" cfg="$4" text="$5" tag="$6"
  shift 6
  if ip netns exec "$ns" "$layersec" macsec up --link "$lower" --name "$name" --config "$cfg" "$@" \
    >"$work/$tag.refused" 2>&1; then
    fail "$tag: the start was not refused"
  fi
  grep -q -- "$text" "$work/$tag.refused" || fail "$tag: refusal does not say '$text': $(cat "$work/$tag.refused")"
  ip -n "$ns" link show "$name" >/dev/null 2>&1 && fail "$tag: interface $name left behind"
  echo "ok: $tag refused: $(grep -o -- "$text.\{0,80\}" "$work/$tag.refused" | head -n1)"
}

# Sends N datagrams from A to B over MACsec (10 ms apart).
send_py='import socket,sys,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])):
    s.sendto(b"data %d"%i,(sys.argv[1],int(sys.argv[2]))); time.sleep(0.01)'
# Counts datagrams on B until `idle` seconds pass without one.
count_py='import socket,sys
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
s.bind((sys.argv[1],int(sys.argv[2])))
s.settimeout(float(sys.argv[3]))
n=0
try:
    while True:
        s.recvfrom(65535); n+=1
except socket.timeout:
    pass
print(n)'
# The MACsec frames of SCI sys.argv[2] in a classic pcap: "pn" lines in
# capture order, or the frames themselves as hex ("frames" mode).
frames_py='import struct,sys
d=open(sys.argv[1],"rb").read()
sci=bytes.fromhex(sys.argv[2]); mode=sys.argv[3]
end="<" if struct.unpack("<I",d[:4])[0] in (0xa1b2c3d4,0xa1b23c4d) else ">"
off=24
while off+16<=len(d):
    _,_,incl,_=struct.unpack(end+"IIII",d[off:off+16]); off+=16
    f=d[off:off+incl]; off+=incl
    if len(f)<28 or f[12:14]!=b"\x88\xe5" or not (f[14]&0x20) or f[20:28]!=sci: continue
    print(struct.unpack(">I",f[16:20])[0] if mode=="pn" else f.hex())'
# Re-injects the hex frames of a file onto an interface; prints the count.
inject_py='import socket,sys
s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)
s.bind((sys.argv[1],0))
n=0
for line in open(sys.argv[2]):
    line=line.strip()
    if line: s.send(bytes.fromhex(line)); n+=1
print(n)'

run_suite() {  # suite tag
  local suite="$1" tag="$2" xpn_a="" xpn_b=""
  if [[ "$suite" == *XPN* ]]; then
    xpn_a=', "ssci": "00000001", "salt": "'"$(openssl rand -hex 12)"'"'
    xpn_b=', "ssci": "00000002", "salt": "'"$(openssl rand -hex 12)"'"'
  fi
  openssl rand -hex 16 >"$work/$tag-a.key"
  openssl rand -hex 16 >"$work/$tag-b.key"
  chmod 0600 "$work/$tag-a.key" "$work/$tag-b.key"
  cat >"$work/$tag-a.json" <<JSON
{ "cipher_suite": "$suite", "pn_reserve_block": 64,
  "tx": { "sas": [ { "an": 0, "key_file": "$tag-a.key"$xpn_a } ] },
  "rx": [ { "sci": "$sci_b", "sas": [ { "an": 0, "key_file": "$tag-b.key"$xpn_b } ] } ] }
JSON
  cat >"$work/$tag-b.json" <<JSON
{ "cipher_suite": "$suite", "pn_reserve_block": 64,
  "tx": { "sas": [ { "an": 0, "key_file": "$tag-b.key"$xpn_b } ] },
  "rx": [ { "sci": "$sci_a", "sas": [ { "an": 0, "key_file": "$tag-a.key"$xpn_a } ] } ] }
JSON
  local state_a="$work/$tag-a.json.pn-state" state_b="$work/$tag-b.json.pn-state"

  # No state file, no --new-key: refused, nothing created.
  refused "$nsa" "$va" "$ma" "$work/$tag-a.json" "is missing" "$tag: missing PN state"
  grep -q -- "--new-key" "$work/$tag: missing PN state.refused" || fail "$tag: the refusal does not mention --new-key"
  [[ ! -e "$state_a" ]] || fail "$tag: a refused start created the state file"

  start_link "$nsb" "$vb" "$mb" "$work/$tag-b.json" "$tag-b1" --new-key; pid_b=$last_pid
  ip -n "$nsb" addr add "$ip_b/24" dev "$mb"
  ip netns exec "$nsb" "$py" -c "$count_py" "$ip_b" 7000 4 >"$work/$tag-rx.count" &
  local rx=$!; pids+=("$rx")
  ip netns exec "$nsb" dumpcap -q -P -i "$vb" -w "$work/$tag-wire.pcap" >/dev/null 2>&1 &
  local cap=$!; pids+=("$cap")
  for _ in $(seq 100); do [[ -s "$work/$tag-wire.pcap" ]] && break; sleep 0.05; done
  sleep 0.3

  # Three runs of A, the first two ended by kill -9.
  local run
  for run in 1 2 3; do
    if [[ $run == 1 ]]; then
      start_link "$nsa" "$va" "$ma" "$work/$tag-a.json" "$tag-a$run" --new-key
      [[ "$(stat -c %a "$state_a")" == 600 ]] || fail "$tag: state file mode $(stat -c %a "$state_a")"
    else
      start_link "$nsa" "$va" "$ma" "$work/$tag-a.json" "$tag-a$run"
      grep -q "warning: static SAK key id .* was used before this start" "$work/$tag-a$run.err" ||
        fail "$tag: restart $run did not warn about the reused static SAK: $(cat "$work/$tag-a$run.err")"
      grep -q "$(cat "$work/$tag-a.key")" "$work/$tag-a$run.err" && fail "$tag: the key was printed"
    fi
    pid_a=$last_pid
    ip -n "$nsa" addr add "$ip_a/24" dev "$ma"
    # A static neighbour: A's datagrams do not wait for ARP through MACsec
    # (after A's crash its receive SA refuses B's PNs it reserved before).
    ip -n "$nsa" neigh replace "$ip_b" lladdr "$mac_b" dev "$ma" nud permanent
    ip netns exec "$nsa" "$py" -c "$send_py" "$ip_b" 7000 150
    if [[ $run -lt 3 ]]; then crash_link "$pid_a"; else stop_link "$pid_a"; fi
  done
  wait "$rx" || true
  local received
  received="$(cat "$work/$tag-rx.count")"
  sleep 0.2
  kill -INT "$cap"; wait "$cap" || true

  "$py" -c "$frames_py" "$work/$tag-wire.pcap" "$sci_a" pn >"$work/$tag-pns.txt"
  "$py" -c "$frames_py" "$work/$tag-wire.pcap" "$sci_a" frames >"$work/$tag-recorded.hex"
  local total unique backwards
  total="$(wc -l <"$work/$tag-pns.txt")"
  unique="$(sort -n -u "$work/$tag-pns.txt" | wc -l)"
  backwards="$(awk 'NR>1 && $1<=prev {n++} {prev=$1} END {print n+0}' "$work/$tag-pns.txt")"
  [[ "$total" -ge 450 ]] || fail "$tag: only $total frames of A captured"
  [[ "$unique" == "$total" ]] || fail "$tag: $((total - unique)) PNs reused across kill -9 restarts ($total frames)"
  [[ "$backwards" == 0 ]] || fail "$tag: the PN went backwards $backwards times"
  [[ "$received" -ge 400 ]] || fail "$tag: B received only $received of 450 datagrams"
  echo "ok: $tag: 3 runs of A (2 x kill -9): $total MACsec frames on the wire, $unique distinct PNs" \
       "($(head -n1 "$work/$tag-pns.txt")..$(tail -n1 "$work/$tag-pns.txt")), none reused; B received $received of 450"

  # The state file: corrupt is corrupt, a symlink is refused.
  cp -p "$state_a" "$work/$tag-a.saved"
  "$py" -c 'import sys
p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[len(d)//2]^=1; open(p,"wb").write(d)' "$state_a"
  refused "$nsa" "$va" "$ma" "$work/$tag-a.json" "corrupt" "$tag: corrupt PN state"
  rm -f "$state_a"; ln -s "$work/$tag-a.saved" "$state_a"
  refused "$nsa" "$va" "$ma" "$work/$tag-a.json" "symbolic link" "$tag: PN state symlink"
  rm -f "$state_a"; cp -p "$work/$tag-a.saved" "$state_a"

  # Receiver: kill -9, restart, re-inject everything recorded: nothing accepted.
  local variant
  for variant in crash clean; do
    if [[ $variant == crash ]]; then crash_link "$pid_b"; else stop_link "$pid_b"; fi
    start_link "$nsb" "$vb" "$mb" "$work/$tag-b.json" "$tag-b-$variant"; pid_b=$last_pid
    grep -q "PN state restored" "$work/$tag-b-$variant.err" || fail "$tag: B did not restore its PN state"
    ip -n "$nsb" addr add "$ip_b/24" dev "$mb"
    ip netns exec "$nsb" "$py" -c "$count_py" "$ip_b" 7000 2 >"$work/$tag-replay.count" &
    rx=$!; pids+=("$rx")
    sleep 0.3
    local injected
    injected="$(ip netns exec "$nsa" "$py" -c "$inject_py" "$va" "$work/$tag-recorded.hex")"
    wait "$rx" || true
    [[ "$(cat "$work/$tag-replay.count")" == 0 ]] || fail "$tag ($variant): replayed datagrams reached B's socket"
    stop_link "$pid_b"
    local ok late notvalid delivered
    ok="$(stat_of "$work/$tag-b-$variant.out" secy.InPktsOK)"
    late="$(stat_of "$work/$tag-b-$variant.out" secy.InPktsLate)"
    notvalid="$(stat_of "$work/$tag-b-$variant.out" secy.InPktsNotValid)"
    delivered="$(stat_of "$work/$tag-b-$variant.out" link.rx_delivered)"
    [[ "$ok" == 0 && "$delivered" == 0 ]] || fail "$tag ($variant): B accepted $ok / delivered $delivered replayed frames"
    [[ "$((late + notvalid))" == "$injected" ]] ||
      fail "$tag ($variant): $injected replayed, but InPktsLate $late + InPktsNotValid $notvalid"
    echo "ok: $tag: receiver $variant restart: $injected recorded frames re-injected, 0 accepted, InPktsLate $late"
    start_link "$nsb" "$vb" "$mb" "$work/$tag-b.json" "$tag-b-after-$variant"; pid_b=$last_pid
    ip -n "$nsb" addr add "$ip_b/24" dev "$mb"
  done

  # Both resume; traffic flows again.
  start_link "$nsa" "$va" "$ma" "$work/$tag-a.json" "$tag-a4"; pid_a=$last_pid
  ip -n "$nsa" addr add "$ip_a/24" dev "$ma"
  ip -n "$nsa" neigh replace "$ip_b" lladdr "$mac_b" dev "$ma" nud permanent
  ip netns exec "$nsb" "$py" -c "$count_py" "$ip_b" 7000 3 >"$work/$tag-after.count" &
  rx=$!; pids+=("$rx")
  sleep 0.3
  ip netns exec "$nsa" "$py" -c "$send_py" "$ip_b" 7000 100
  wait "$rx" || true
  received="$(cat "$work/$tag-after.count")"
  [[ "$received" -ge 90 ]] || fail "$tag: after the restarts B received only $received of 100"
  stop_link "$pid_a"
  stop_link "$pid_b"
  [[ "$(stat_of "$work/$tag-a4.out" pn_state.exact_saved)" == True ]] || fail "$tag: A did not save its exact PNs"
  ls "$work" | grep -q "pn-state.tmp" && fail "$tag: temporary state files left behind"
  echo "ok: $tag: after the restarts UDP flows again ($received of 100)"
}

run_suite GCM-AES-128 gcm128
run_suite GCM-AES-XPN-128 xpn128
echo "PASS: macsec_restart_pn"
