#!/usr/bin/env bash
# Interop of `layersec macsec protect|validate` with scapy's MACsec layer
# (both directions, all four cipher suites incl. XPN), python-cryptography
# for the clear-tag AAD, and tshark's 802.1AE dissector. Skips (exit 0 with a
# message) only if scapy or tshark is not installed.
set -euo pipefail
bin="$1"
src="${LAYERSEC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
if ! /usr/bin/python3 -c "import scapy.contrib.macsec, cryptography" 2>/dev/null; then
  echo "SKIP: python3-scapy / python3-cryptography not installed"
  exit 0
fi
if ! command -v tshark >/dev/null; then
  echo "SKIP: tshark not installed"
  exit 0
fi
/usr/bin/python3 "$src/tests/interop/macsec_scapy.py" "$bin"
