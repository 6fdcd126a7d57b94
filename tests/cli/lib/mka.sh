# Shared helpers for the `layersec macsec up --mka` tests in tests/cli/
# (sourced after lib/netns.sh and lib/macsec.sh; not a test itself).
# Expects $layersec, $work and the pids array of lib/netns.sh.
#
#   mka_key FILE                    a random 16-octet CAK as a 0600 hex key file
#   mka_config FILE CAK CKN PRIO SUITE [EXTRA]
#                                   an --mka JSON file; EXTRA is more members
#                                   (e.g. '"timers": {"rekey_interval_ms": 2000}')
#   start_mka NS LOWER NAME MKAJSON TAG [ARGS...]
#                                   start_link (lib/macsec.sh) with --mka: stdout
#                                   $work/TAG.out, sets last_pid
#   events FILE EVENT               the JSON lines of FILE whose "event" is EVENT
#   count_events FILE EVENT         how many there are
#   wait_events FILE EVENT [N] [SECONDS]
#                                   waits until FILE has N (1) such lines
#   first_field / last_field FILE EVENT FIELD, nth_field FILE EVENT INDEX FIELD
#                                   FIELD of the first / last such line
#   last_stats FILE PATH            a dotted PATH of the last "stats" line
#   peer_of FILE MI                 "live|potential PRIORITY" of that peer (last stats)
#   wait_stat FILE PATH VALUE [S]   until the last stats line has VALUE at PATH
#   reach NS_FROM NS_TO IP [N]      UDP echo through the MACsec interfaces

mka_key() {
  (umask 077 && openssl rand -hex 16 >"$1")
  chmod 0600 "$1"
}

mka_config() {  # FILE CAK CKN PRIO SUITE [EXTRA]
  local extra="${6:-}"
  [[ -n "$extra" ]] && extra=", $extra"
  cat >"$1" <<JSON
{ "cak_file": "$2", "ckn": "$3", "priority": $4, "cipher_suite": "$5"$extra }
JSON
}

start_mka() { START_LINK_FLAG=--mka start_link "$@"; }

events() {
  /usr/bin/python3 -c 'import json,sys
for line in open(sys.argv[1]):
    line=line.strip()
    if not line.startswith("{"): continue
    try: j=json.loads(line)
    except ValueError: continue
    if j.get("event")==sys.argv[2]: print(line)' "$1" "$2"
}

count_events() { events "$1" "$2" | wc -l; }

wait_events() {  # FILE EVENT [N] [SECONDS]
  local n="${3:-1}" secs="${4:-10}"
  for _ in $(seq $((secs * 20))); do
    [[ "$(count_events "$1" "$2")" -ge "$n" ]] && return 0
    sleep 0.05
  done
  fail "fewer than $n \"$2\" events in $1 after ${secs}s"
}

# nth_field FILE EVENT INDEX FIELD: FIELD of the INDEX-th such line (0 the
# first, -1 the last; nothing when there is none). One process, no pipe
# that could close early (a SIGPIPE under pipefail would end the test).
nth_field() {
  /usr/bin/python3 -c 'import json,sys
rows=[]
for line in open(sys.argv[1]):
    line=line.strip()
    if not line.startswith("{"): continue
    try: j=json.loads(line)
    except ValueError: continue
    if j.get("event")==sys.argv[2]: rows.append(j)
i=int(sys.argv[3])
if -len(rows) <= i < len(rows): print(rows[i][sys.argv[4]])' "$1" "$2" "$3" "$4"
}
first_field() { nth_field "$1" "$2" 0 "$3"; }
last_field() { nth_field "$1" "$2" -1 "$3"; }

last_stats() {  # FILE PATH
  events "$1" stats | tail -n 1 | /usr/bin/python3 -c 'import json,sys
j=json.loads(sys.stdin.read())
for k in sys.argv[1].split("."): j=j[int(k)] if isinstance(j,list) else j[k]
print(j)' "$2"
}

# reach NS_FROM NS_TO DST_IP [N]: N (3) UDP datagrams from NS_FROM to an echo
# server on DST_IP in NS_TO through the MACsec interfaces; 0 when every one
# came back (a few retries each: the first may wait for ARP), 1 otherwise.
reach() {
  local n="${4:-3}" port=$((20000 + RANDOM % 20000))
  ip netns exec "$2" /usr/bin/python3 -c 'import socket,sys
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind((sys.argv[1],int(sys.argv[2]))); s.settimeout(4)
try:
    while True:
        d,a=s.recvfrom(2048); s.sendto(d,a)
except socket.timeout:
    pass' "$3" "$port" &
  local srv=$!
  sleep 0.2
  local rc=0
  ip netns exec "$1" /usr/bin/python3 -c 'import socket,sys
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.settimeout(1.0)
for i in range(int(sys.argv[3])):
    m=b"reach %d" % i
    for _ in range(3):
        s.sendto(m,(sys.argv[1],int(sys.argv[2])))
        try:
            if s.recvfrom(2048)[0]==m: break
        except socket.timeout:
            pass
    else:
        sys.exit(1)' "$3" "$port" "$n" || rc=1
  kill "$srv" 2>/dev/null || true
  wait "$srv" 2>/dev/null || true
  return $rc
}

# peer_of FILE MI: "live PRIORITY" of the peer with that MI in the last
# "stats" line, or nothing when it is not listed.
peer_of() {
  events "$1" stats | tail -n 1 | /usr/bin/python3 -c 'import json,sys
for p in json.loads(sys.stdin.read())["mka"]["peers"]:
    if p["mi"]==sys.argv[1]: print("live" if p["live"] else "potential", p["priority"])' "$2"
}

# wait_stat FILE PATH VALUE [SECONDS]: until the last "stats" line has VALUE at PATH.
wait_stat() {
  local secs="${4:-5}"
  for _ in $(seq $((secs * 10))); do
    [[ "$(last_stats "$1" "$2" 2>/dev/null)" == "$3" ]] && return 0
    sleep 0.1
  done
  fail "$1: $2 is $(last_stats "$1" "$2" 2>/dev/null), not $3, after ${secs}s"
}
