# Shared set-up of the wpa_supplicant interop tests (mka_wpas_interop.sh,
# mka_wpas_keyserver.sh; sourced, not a test itself): skips (77) without
# root, wpa_supplicant, tshark, gcc/pkg-config and the libnl dev packages
# (the shim of ../shared/tools/wpas-mka), or scapy; builds the shim; defines
#   wpas_conf FILE CAKHEX PRIORITY CTRLDIR   a wpa_supplicant MKA (PSK) config
#   start_wpas NS IFACE CONF TAG SECONDS     wpa_supplicant + shim in NS ($wpas_pid)
#   sak_fps TAG                              fingerprints of its ADD_TXSA SAKs, in order
#   wait_wpas_saks TAG N [SECONDS]           until it installed N distinct SAKs
#   capture NS IFACE FILE SECONDS            MKA + MACsec frames to a pcap ($capture_pid)
#   send_marked NS DST PORT N MARKER         N UDP datagrams carrying MARKER
#   decrypt_check PCAP TAG SCI MARKER MIN    our frames decrypt in scapy with its SAKs
#   stop_bg PID
# Expects $1 (the layersec binary) and $here (tests/cli).
layersec="${1:?usage: $0 /path/to/layersec}"
src="${LAYERSEC_SOURCE_DIR:-$(cd "$here/../.." && pwd)}"
tool="${WPAS_MKA_DIR:-$src/../shared/tools/wpas-mka}"
py=/usr/bin/python3
helper="$src/tests/interop/mka_wpas.py"
skip() { echo "SKIP: $wpas_test: $*"; exit 77; }
[[ "$(id -u)" == 0 ]] || skip "needs root (namespaces, TAP, AF_PACKET)"
[[ -x /usr/sbin/wpa_supplicant ]] || skip "wpa_supplicant is not installed (Debian: apt-get install wpasupplicant)"
command -v tshark >/dev/null || skip "tshark is not installed"
for t in ip openssl gcc pkg-config; do command -v "$t" >/dev/null || skip "$t is not installed"; done
pkg-config --exists libnl-3.0 libnl-genl-3.0 libnl-route-3.0 ||
  skip "the libnl dev packages are missing (libnl-3-dev libnl-genl-3-dev libnl-route-3-dev)"
"$py" -c "import scapy.contrib.macsec, cryptography" 2>/dev/null || skip "python3-scapy / python3-cryptography missing"
[[ -f "$tool/build.sh" && -f "$tool/peer.sh" ]] || skip "the wpas-mka tool is not at $tool (set WPAS_MKA_DIR)"

netns_init "$wpas_test"
shim="$("$tool/build.sh" "$work/shim" 2>"$work/shim_build.err" | tail -n 1)" || fail "building the shim failed"
[[ -f "$shim" ]] || fail "no shim built: $(cat "$work/shim_build.err")"
ckn=6c61796572736563206d6b6120696e7465726f70
id=$$

# wpas_conf FILE CAKHEX PRIORITY CTRLDIR
wpas_conf() {
  cat >"$1" <<EOF
ctrl_interface=$4
eapol_version=3
ap_scan=0
network={
  key_mgmt=NONE
  eapol_flags=0
  macsec_policy=1
  mka_cak=$2
  mka_ckn=$ckn
  mka_priority=$3
}
EOF
}
# start_wpas NS IFACE CONF TAG SECONDS: wpa_supplicant with the shim, in the background.
start_wpas() {
  "$tool/peer.sh" "$shim" "$1" "$2" "$3" "$work/$4.shim" "$work/$4.wpas" "$5" &
  wpas_pid=$!
  pids+=("$wpas_pid")
}
stop_bg() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
sak_fps() { "$py" "$helper" saks "$work/$1.shim" ADD_TXSA | awk '{print $2}'; }
# wait_wpas_saks TAG N [SECONDS]: wpa_supplicant installed N distinct transmit SAKs.
wait_wpas_saks() {
  for _ in $(seq $(( ${3:-10} * 10 ))); do
    [[ "$(sak_fps "$1" | sort -u | wc -l)" -ge "$2" ]] && return 0
    sleep 0.1
  done
  fail "wpa_supplicant ($1) installed fewer than $2 SAKs: $(sak_fps "$1" | tr '\n' ' ')"
}
# capture NS IFACE FILE SECONDS: MKA and MACsec frames on IFACE to a pcap, in the background
# (AF_PACKET; tshark dissects the file afterwards).
capture() {
  ip netns exec "$1" "$py" "$helper" capture "$2" "$3" "$4" &
  capture_pid=$!
  pids+=("$capture_pid")
  sleep 0.3
}
# send_marked NS DST PORT N MARKER: N datagrams carrying MARKER.
send_marked() {
  ip netns exec "$1" "$py" -c 'import socket,sys,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])):
    s.sendto(sys.argv[4].encode()+b" %d" % i,(sys.argv[1],int(sys.argv[2]))); time.sleep(0.01)' "$2" "$3" "$4" "$5"
}
# decrypt_check PCAP TAG SCI MARKER MIN: at least MIN of our frames decrypt in scapy and carry MARKER.
decrypt_check() {
  local r
  r="$("$py" "$helper" decrypt "$1" "$work/$2.shim" "$3" "$4")"
  local marked="${r##* marked }"
  [[ "$marked" -ge "$5" ]] || fail "scapy: $r (wanted $5 frames with $4)"
  echo "    scapy: $r"
}

