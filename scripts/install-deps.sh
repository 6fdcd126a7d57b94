#!/usr/bin/env bash
# Idempotent dependency installer for Debian 12 / Ubuntu. Silent and fast when
# everything is already present; installs only what is missing otherwise.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang-14 lld-14 lld libclang-rt-14-dev
  libssl-dev libntru-0.5-dev nlohmann-json3-dev libcli11-dev libpcap-dev
  libgtest-dev libgmock-dev libbenchmark-dev libnl-3-dev libnl-genl-3-dev libnl-route-3-dev
  python3 python3-scapy tshark gnuplot-nox iproute2 iperf3 valgrind
  linuxptp wpasupplicant libpugixml-dev python3-canmatrix python3-lxml chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  echo "wireshark-common wireshark-common/install-setuid boolean false" | $SUDO debconf-set-selections
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
