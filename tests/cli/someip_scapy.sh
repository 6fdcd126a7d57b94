#!/usr/bin/env bash
# Interop with scapy's SOME/IP / SOME/IP-SD implementation (both directions);
# see tests/interop/someip_scapy.py.
set -euo pipefail
LS="${1:?usage: someip_scapy.sh /path/to/layersec}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
/usr/bin/python3 -c "import scapy.contrib.automotive.someip" 2>/dev/null \
  || { echo "FAIL: python3-scapy (scapy.contrib.automotive.someip) not installed"; exit 1; }
exec /usr/bin/python3 "$HERE/../interop/someip_scapy.py" "$LS"
