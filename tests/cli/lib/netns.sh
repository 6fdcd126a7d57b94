# Shared set-up and cleanup for the root-only namespace tests in tests/cli/
# (sourced; not a test itself: the test glob takes tests/cli/*.sh only).
#
#   netns_require NAME WHY TOOL...  prints "SKIP: ..." and exits 0 unless we are
#                                   root and every TOOL is on PATH
#   netns_init TAG                  $work (a fresh /tmp/TAG.XXXXXX, mode 0700),
#                                   pids=() and the cleanup trap
#   netns_add NS...                 namespaces with lo up (and IPv6 off unless
#                                   NETNS_IPV6=1), deleted by the cleanup
#   netns_veth NSA IFA MACA NSB IFB MACB
#                                   a veth pair between two namespaces, both
#                                   ends up (MAC "" lets the kernel pick)
#   netns_bridge HUB BR             a Linux bridge in namespace HUB, STP and
#                                   multicast snooping off (floods like a hub)
#   netns_port HUB BR NS IF PORT    a veth from NS (named IF) to the bridge
#   fail MSG...                     prints FAIL: MSG and exits 1
#
# The cleanup (EXIT, INT, TERM) runs netns_on_cleanup if the test defines it,
# kills and reaps every pid in "${pids[@]}", deletes the namespaces, prints the
# last NETNS_TAIL (40) lines of $work/*.out and $work/*.err when the test
# failed, and removes $work unless KEEP_WORK is set.

netns_require() {
  local name="$1" why="$2"
  shift 2
  if [[ "$(id -u)" != 0 ]]; then
    echo "SKIP: $name needs root ($why)"
    exit 0
  fi
  local tool
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "SKIP: $tool is not installed"
      exit 0
    fi
  done
}

_netns_namespaces=()
pids=()

_netns_cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if declare -F netns_on_cleanup >/dev/null; then netns_on_cleanup || true; fi
  local p ns f
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for ns in "${_netns_namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  if [[ $rc -ne 0 && -n "${work:-}" ]]; then
    for f in "$work"/*.out "$work"/*.err; do
      [[ -f "$f" ]] && { echo "--- $f"; tail -n "${NETNS_TAIL:-40}" "$f"; }
    done
  fi
  if [[ -n "${work:-}" ]]; then
    if [[ -n "${KEEP_WORK:-}" ]]; then echo "kept $work"; else rm -rf "$work"; fi
  fi
  exit "$rc"
}

netns_init() {
  umask 077
  work="$(mktemp -d "/tmp/$1.XXXXXX")"
  trap _netns_cleanup EXIT INT TERM
}

netns_add() {
  local ns
  for ns in "$@"; do
    ip netns add "$ns"
    _netns_namespaces+=("$ns")
    if [[ "${NETNS_IPV6:-0}" != 1 ]]; then
      # No IPv6: no DAD/RS/MLD noise on the links (captures hold only our frames).
      ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    fi
    ip -n "$ns" link set lo up
  done
}

netns_veth() {  # NSA IFA MACA NSB IFB MACB
  local a=() b=()
  [[ -n "$3" ]] && a=(address "$3")
  [[ -n "$6" ]] && b=(address "$6")
  ip link add "$2" netns "$1" "${a[@]}" type veth peer name "$5" netns "$4" "${b[@]}"
  ip -n "$1" link set "$2" up
  ip -n "$4" link set "$5" up
}

netns_bridge() {  # HUB BR
  ip -n "$1" link add "$2" type bridge stp_state 0 mcast_snooping 0
  ip -n "$1" link set "$2" up
}

netns_port() {  # HUB BR NS IF PORT
  ip link add "$4" netns "$3" type veth peer name "$5" netns "$1"
  ip -n "$1" link set "$5" master "$2"
  ip -n "$1" link set "$5" up
  ip -n "$3" link set "$4" up
}

fail() {
  echo "FAIL: $*"
  exit 1
}
