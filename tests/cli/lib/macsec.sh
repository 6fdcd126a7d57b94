# Shared helpers for the `layersec macsec up` tests in tests/cli/ (sourced
# after lib/netns.sh; not a test itself). Expects $layersec, $work and the
# pids array of lib/netns.sh.
#
#   start_link NS LOWER NAME CONFIG TAG [ARGS...]
#                      runs `layersec macsec up` in NS (stdout to
#                      $work/TAG.out, stderr to $work/TAG.err), waits until
#                      NAME is up, sets last_pid; fails if the process exits
#                      (START_LINK_FLAG=--mka: CONFIG is an MKA file)
#   stop_link PID      SIGTERM, and the process must exit 0
#   stat_of FILE PATH  a value from a JSON file by dotted path (a.b.c)

start_link() {
  local ns="$1" lower="$2" name="$3" cfg="$4" tag="$5"
  shift 5
  ip netns exec "$ns" "$layersec" macsec up --link "$lower" --name "$name" "${START_LINK_FLAG:---config}" "$cfg" "$@" \
    >"$work/$tag.out" 2>"$work/$tag.err" &
  last_pid=$!
  pids+=("$last_pid")
  for _ in $(seq 200); do
    if ip -n "$ns" link show "$name" 2>/dev/null | grep -q "UP"; then return 0; fi
    kill -0 "$last_pid" 2>/dev/null || fail "layersec macsec up ($tag) exited: $(cat "$work/$tag.err")"
    sleep 0.05
  done
  fail "MACsec interface $name did not come up"
}

stop_link() {
  kill -TERM "$1"
  wait "$1" || fail "layersec macsec up (pid $1) exited with an error"
}

stat_of() {
  /usr/bin/python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): j=j[k]
print(j)' "$1" "$2"
}
