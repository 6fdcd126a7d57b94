#!/usr/bin/env bash
# `layersec macsec up --workers 2` (multi-queue TAP, PACKET_FANOUT, shared
# PN allocation and replay state) between two network namespaces:
#   - the combinations the workers do not support are refused at start-up
#     naming --workers and the other option; bad --workers values too;
#   - both links with 2 workers: ping and a short iperf3 TCP run pass, every
#     frame delivered was verified (no unverified, not-valid or bad-tag
#     frame), the exit JSON has the summed counters and 2 "workers";
#   - a captured secure frame of A re-injected 50 times onto B's wire (and
#     every other recorded frame once) is accepted 0 times (InPktsLate);
#   - A killed with kill -9 while UDP flows and restarted with its PN state
#     file: every PN A sent across both runs is distinct, every PN of the
#     second run is above every PN of the first, and B (replay window 4096)
#     accepts the restarted A's datagrams (no legitimate frame dropped late);
#   - SIGHUP is refused with a JSON line.
# Root only; skips otherwise.
# Usage: bash tests/cli/macsec_workers_netns.sh /path/to/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/netns.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/macsec.sh"
netns_require macsec_workers_netns "network namespaces, TAP, AF_PACKET" ip dumpcap openssl iperf3 /usr/bin/python3
py=/usr/bin/python3

id=$$
nsa="mqwA$id"; nsb="mqwB$id"
va="mqwva$id"; vb="mqwvb$id"
ma="mqwma$id"; mb="mqwmb$id"
mac_a=02:00:00:7b:00:01; mac_b=02:00:00:7b:00:02
ip_a=10.84.0.1; ip_b=10.84.0.2
sci_a=0200007b00010001; sci_b=0200007b00020001
netns_init macsec_workers_netns
netns_add "$nsa" "$nsb"
netns_veth "$nsa" "$va" "$mac_a" "$nsb" "$vb" "$mac_b"

openssl rand -hex 16 >"$work/a.key"
openssl rand -hex 16 >"$work/b.key"
chmod 0600 "$work/a.key" "$work/b.key"
cat >"$work/a.json" <<JSON
{ "cipher_suite": "GCM-AES-128", "pn_reserve_block": 64, "replay_window": 4096,
  "tx": { "sas": [ { "an": 0, "key_file": "b.key" } ] },
  "rx": [ { "sci": "$sci_b", "sas": [ { "an": 0, "key_file": "a.key" } ] } ] }
JSON
cat >"$work/b.json" <<JSON
{ "cipher_suite": "GCM-AES-128", "pn_reserve_block": 64, "replay_window": 4096,
  "tx": { "sas": [ { "an": 0, "key_file": "a.key" } ] },
  "rx": [ { "sci": "$sci_a", "sas": [ { "an": 0, "key_file": "b.key" } ] } ] }
JSON

# --- refusals -------------------------------------------------------------
refused() {  # tag expected-text args...: `macsec up` must fail saying the text, leaving nothing behind
  local tag="$1" text="$2"
  shift 2
  if ip netns exec "$nsa" "$layersec" macsec up --link "$va" --name "$ma" "$@" >"$work/$tag.refused" 2>&1; then
    fail "$tag: the start was not refused"
  fi
  grep -q -- "$text" "$work/$tag.refused" || fail "$tag: refusal does not say '$text': $(cat "$work/$tag.refused")"
  ip -n "$nsa" link show "$ma" >/dev/null 2>&1 && fail "$tag: interface $ma left behind"
  echo "ok: $tag refused: $(grep -o -- "$text.\{0,70\}" "$work/$tag.refused" | head -n1)"
}
cfg=(--config "$work/a.json" --new-key)
refused workers0 "--workers" "${cfg[@]}" --workers 0
refused workers5 "--workers" "${cfg[@]}" --workers 5
refused workers-abc "--workers" "${cfg[@]}" --workers abc
refused workers-tsn "--workers 2 with --tsn" "${cfg[@]}" --workers 2 --tsn "$work/a.json"
refused workers-ptp "--workers 2 with --ptp" "${cfg[@]}" --workers 2 --ptp "$work/a.json"
refused workers-mka "--workers 2 with --mka" --mka "$work/a.json" --workers 2
refused workers-rx-ring "--workers 2 with --rx-ring" "${cfg[@]}" --workers 2 --rx-ring
refused workers-realtime "--workers 2 with --realtime" "${cfg[@]}" --workers 2 --realtime
refused workers-kernel "--workers 2 with --backend kernel" "${cfg[@]}" --workers 2 --backend kernel
refused fanout-one-worker "--fanout" "${cfg[@]}" --fanout lb
refused fanout-bad "--fanout" "${cfg[@]}" --workers 2 --fanout rr
[[ ! -e "$work/a.json.pn-state" ]] || fail "a refused start created the PN state file"

# --- two links with 2 workers ---------------------------------------------
send_py='import socket,sys,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])):
    s.sendto(b"data %d"%i,(sys.argv[1],int(sys.argv[2]))); time.sleep(float(sys.argv[4]))'
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
# The MACsec frames of SCI argv[2] in a classic pcap: PNs ("pn") or the frames as hex ("frames").
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
# Re-injects hex frames onto an interface, each argv[3] times; prints the count.
inject_py='import socket,sys
s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)
s.bind((sys.argv[1],0))
n=0
for line in open(sys.argv[2]):
    line=line.strip()
    if not line: continue
    for _ in range(int(sys.argv[3])):
        s.send(bytes.fromhex(line)); n+=1
print(n)'
exit_of() {  # out-file dotted-path: a value of the exit JSON (the pretty object after the stats lines)
  "$py" -c 'import json,sys
t=open(sys.argv[1]).read()
j=json.loads(t[t.rfind("\n{\n")+1:] if t.rfind("\n{\n")>=0 else t)
for k in sys.argv[2].split("."): j=j[k] if not k.isdigit() else j[int(k)]
print(j)' "$1" "$2"
}
last_stats() {  # out-file dotted-path: the value in the last "stats" line
  "$py" -c 'import json,sys
last=None
for line in open(sys.argv[1]):
    if line.startswith("{\"") and "\"event\":\"stats\"" in line: last=json.loads(line)
j=last
for k in sys.argv[2].split("."): j=j[k]
print(j)' "$1" "$2"
}

start_link "$nsb" "$vb" "$mb" "$work/b.json" b1 --new-key --workers 2 --stats-interval 0.2
pid_b=$last_pid
ip -n "$nsb" addr add "$ip_b/24" dev "$mb"
start_link "$nsa" "$va" "$ma" "$work/a.json" a1 --new-key --workers 2
pid_a=$last_pid
ip -n "$nsa" addr add "$ip_a/24" dev "$ma"
grep -q "workers 2 (multi-queue TAP, PACKET_FANOUT cpu" "$work/a1.err" || fail "A does not say it runs 2 workers: $(cat "$work/a1.err")"
# ICMP echo (ping is not always installed): 5 requests, each answered.
ping_py='import os,socket,struct,sys,time
def csum(b):
    s=sum(struct.unpack("!%dH"%(len(b)//2),b)); s=(s>>16)+(s&0xffff); s+=s>>16; return ~s&0xffff
s=socket.socket(socket.AF_INET,socket.SOCK_RAW,socket.IPPROTO_ICMP); s.settimeout(2)
ok=0
for seq in range(5):
    h=struct.pack("!BBHHH",8,0,0,os.getpid()&0xffff,seq)+b"layersec-workers"
    h=h[:2]+struct.pack("!H",csum(h))+h[4:]
    s.sendto(h,(sys.argv[1],0))
    try:
        while True:
            d,_=s.recvfrom(2048); ihl=(d[0]&15)*4
            if d[ihl]==0 and struct.unpack("!H",d[ihl+6:ihl+8])[0]==seq: ok+=1; break
    except socket.timeout: pass
    time.sleep(0.2)
print(ok)'
replies="$(ip netns exec "$nsa" "$py" -c "$ping_py" "$ip_b")"
[[ "$replies" == 5 ]] || fail "ping through 2 workers: $replies of 5 replies"
echo "ok: ping A -> B through --workers 2 links: $replies of 5 replies"
ip netns exec "$nsb" iperf3 -s -1 -B "$ip_b" >"$work/iperf3-s.txt" 2>&1 &
srv=$!; pids+=("$srv")
sleep 0.5
ip netns exec "$nsa" iperf3 -c "$ip_b" -t 3 -J >"$work/iperf3.json" || fail "iperf3 TCP through 2 workers failed"
wait "$srv" || true
gbit="$("$py" -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"]/1e9))' "$work/iperf3.json")"
echo "ok: iperf3 TCP A -> B through --workers 2 links: $gbit Gbit/s"

# Record A's frames of 100 datagrams on B's wire.
ip netns exec "$nsb" dumpcap -q -P -i "$vb" -w "$work/wire1.pcap" >/dev/null 2>&1 &
cap=$!; pids+=("$cap")
for _ in $(seq 100); do [[ -s "$work/wire1.pcap" ]] && break; sleep 0.05; done
sleep 0.3
ip -n "$nsa" neigh replace "$ip_b" lladdr "$mac_b" dev "$ma" nud permanent
ip netns exec "$nsb" "$py" -c "$count_py" "$ip_b" 7000 2 >"$work/rx1.count" &
rx=$!; pids+=("$rx")
sleep 0.2
ip netns exec "$nsa" "$py" -c "$send_py" "$ip_b" 7000 100 0.005
wait "$rx" || true
[[ "$(cat "$work/rx1.count")" -ge 95 ]] || fail "B received only $(cat "$work/rx1.count") of 100 datagrams"
stop_link "$pid_a"
kill -INT "$cap"; wait "$cap" || true
"$py" -c "$frames_py" "$work/wire1.pcap" "$sci_a" frames >"$work/recorded.hex"
"$py" -c "$frames_py" "$work/wire1.pcap" "$sci_a" pn >"$work/run0.pns"
[[ "$(wc -l <"$work/recorded.hex")" -ge 100 ]] || fail "only $(wc -l <"$work/recorded.hex") frames of A recorded"

# Replays: one frame 50 times, then every recorded frame once; A is down.
sleep 0.5
ok0="$(last_stats "$work/b1.out" secy.InPktsOK)"
late0="$(last_stats "$work/b1.out" secy.InPktsLate)"
delivered0="$(last_stats "$work/b1.out" link.rx_delivered)"
head -n 1 "$work/recorded.hex" >"$work/one.hex"
ip netns exec "$nsb" "$py" -c "$count_py" "$ip_b" 7000 2 >"$work/replay.count" &
rx=$!; pids+=("$rx")
sleep 0.2
n1="$(ip netns exec "$nsa" "$py" -c "$inject_py" "$va" "$work/one.hex" 50)"
n2="$(ip netns exec "$nsa" "$py" -c "$inject_py" "$va" "$work/recorded.hex" 1)"
wait "$rx" || true
sleep 0.5
ok1="$(last_stats "$work/b1.out" secy.InPktsOK)"
late1="$(last_stats "$work/b1.out" secy.InPktsLate)"
delivered1="$(last_stats "$work/b1.out" link.rx_delivered)"
[[ "$(cat "$work/replay.count")" == 0 ]] || fail "replayed datagrams reached B's socket"
[[ "$ok1" == "$ok0" && "$delivered1" == "$delivered0" ]] ||
  fail "B accepted replays: InPktsOK $ok0 -> $ok1, rx_delivered $delivered0 -> $delivered1"
[[ "$((late1 - late0))" == "$((n1 + n2))" ]] || fail "$((n1 + n2)) replayed, InPktsLate rose by $((late1 - late0))"
echo "ok: one secure frame re-injected $n1 times and $n2 recorded frames once into B's 2 workers: 0 accepted," \
     "InPktsLate +$((late1 - late0))"

# kill -9 of A while UDP flows, restart with the PN state file.
ip netns exec "$nsb" dumpcap -q -P -i "$vb" -w "$work/wire2.pcap" >/dev/null 2>&1 &
cap=$!; pids+=("$cap")
for _ in $(seq 100); do [[ -s "$work/wire2.pcap" ]] && break; sleep 0.05; done
sleep 0.3
start_link "$nsa" "$va" "$ma" "$work/a.json" a2 --workers 2
pid_a=$last_pid
ip -n "$nsa" addr add "$ip_a/24" dev "$ma"
ip -n "$nsa" neigh replace "$ip_b" lladdr "$mac_b" dev "$ma" nud permanent
ip netns exec "$nsa" "$py" -c "$send_py" "$ip_b" 7000 100 0.002
ip netns exec "$nsa" "$py" -c "$send_py" "$ip_b" 7000 1000 0.001 &
snd=$!; pids+=("$snd")
sleep 0.3
kill -KILL "$pid_a"; wait "$pid_a" 2>/dev/null || true
wait "$snd" 2>/dev/null || true
sleep 0.3
kill -INT "$cap"; wait "$cap" || true
"$py" -c "$frames_py" "$work/wire2.pcap" "$sci_a" pn >"$work/run1.pns"
[[ "$(wc -l <"$work/run1.pns")" -ge 10 ]] || fail "only $(wc -l <"$work/run1.pns") frames of A before kill -9"

ip netns exec "$nsb" dumpcap -q -P -i "$vb" -w "$work/wire3.pcap" >/dev/null 2>&1 &
cap=$!; pids+=("$cap")
for _ in $(seq 100); do [[ -s "$work/wire3.pcap" ]] && break; sleep 0.05; done
sleep 0.3
start_link "$nsa" "$va" "$ma" "$work/a.json" a3 --workers 2
pid_a=$last_pid
grep -q "warning: static SAK key id .* was used before this start" "$work/a3.err" ||
  fail "the restart did not warn about the reused static SAK: $(cat "$work/a3.err")"
ip -n "$nsa" addr add "$ip_a/24" dev "$ma"
ip -n "$nsa" neigh replace "$ip_b" lladdr "$mac_b" dev "$ma" nud permanent
late2="$(last_stats "$work/b1.out" secy.InPktsLate)"
ip netns exec "$nsb" "$py" -c "$count_py" "$ip_b" 7000 2 >"$work/rx3.count" &
rx=$!; pids+=("$rx")
sleep 0.2
ip netns exec "$nsa" "$py" -c "$send_py" "$ip_b" 7000 200 0.002
wait "$rx" || true
sleep 0.5
late3="$(last_stats "$work/b1.out" secy.InPktsLate)"
kill -HUP "$pid_a"
sleep 0.3
grep '"event":"reload_refused"' "$work/a3.out" | grep -q -- '--workers 2' || fail "SIGHUP was not refused with a JSON line"
echo "ok: SIGHUP refused: $(grep -o '"error":"[^"]\{0,60\}' "$work/a3.out" | head -n1)"
stop_link "$pid_a"
kill -INT "$cap"; wait "$cap" || true
"$py" -c "$frames_py" "$work/wire3.pcap" "$sci_a" pn >"$work/run2.pns"
received="$(cat "$work/rx3.count")"
[[ "$received" -ge 195 ]] || fail "after the restart B received only $received of 200 datagrams"
[[ "$late3" == "$late2" ]] || fail "B dropped $((late3 - late2)) frames of the restarted A as late"
cat "$work/run0.pns" "$work/run1.pns" "$work/run2.pns" >"$work/all.pns"
total="$(wc -l <"$work/all.pns")"
unique="$(sort -n -u "$work/all.pns" | wc -l)"
[[ "$unique" == "$total" ]] || fail "$((total - unique)) PNs reused across the kill -9 restart ($total frames)"
max1="$(sort -n "$work/run1.pns" | tail -n1)"
min2="$(sort -n "$work/run2.pns" | head -n1)"
[[ "$min2" -gt "$max1" ]] || fail "after kill -9 the restarted A sent PN $min2, not above the $max1 sent before"
echo "ok: kill -9 of A (2 workers) and restart: $total frames on the wire, $unique distinct PNs; first run" \
     "up to $max1, restart from $min2; B received $received of 200, none late"

stop_link "$pid_b"
[[ "$(exit_of "$work/b1.out" link.rx_unverified)" == 0 ]] || fail "B: link.rx_unverified is not 0"
for f in InPktsNotValid InPktsBadTag InPktsUnchecked InPktsInvalid InPktsDelayed InPktsNoSCI; do
  [[ "$(exit_of "$work/b1.out" "secy.$f")" == 0 ]] || fail "B: secy.$f is not 0"
done
[[ "$(exit_of "$work/b1.out" secy.InPktsOK)" == "$(exit_of "$work/b1.out" link.rx_delivered)" ]] ||
  fail "B: InPktsOK and rx_delivered differ"
[[ "$(exit_of "$work/b1.out" workers.1.worker)" == 1 ]] || fail "B's exit JSON does not list 2 workers"
w0="$(exit_of "$work/b1.out" workers.0.secy.InPktsOK)"; w1="$(exit_of "$work/b1.out" workers.1.secy.InPktsOK)"
[[ "$((w0 + w1))" == "$(exit_of "$work/b1.out" secy.InPktsOK)" ]] || fail "B's per-worker InPktsOK do not add up to the total"
[[ "$(exit_of "$work/b1.out" pn_state.exact_saved)" == True ]] || fail "B did not save its exact PNs"
echo "ok: B: every delivered frame verified (InPktsOK $(exit_of "$work/b1.out" secy.InPktsOK) = rx_delivered," \
     "per worker $w0 + $w1; InPktsLate $(exit_of "$work/b1.out" secy.InPktsLate), all of them replays)"
echo "PASS: macsec_workers_netns"
