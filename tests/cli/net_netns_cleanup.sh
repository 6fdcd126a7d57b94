#!/usr/bin/env bash
# Namespace hygiene of the net module's real-network tests (NetnsTest.* in
# net_test): run as root they pass and leave no network namespace behind;
# run unprivileged they skip, each with a reason, and fail nothing.
# Usage: bash tests/cli/net_netns_cleanup.sh /path/to/build/apps/layersec/layersec
set -euo pipefail

layersec="${1:?usage: $0 /path/to/layersec}"
build_dir="$(cd "$(dirname "$layersec")/../.." && pwd)"
net_test="$build_dir/src/net_test"
if [[ ! -x "$net_test" ]]; then
  echo "FAIL: net_test is not built at $net_test (configure with LAYERSEC_TESTS=ON)"
  exit 1
fi

unprivileged_check() {
  # $@: command prefix that drops privileges (may be empty when already unprivileged)
  local out
  out="$("$@" "$net_test" --gtest_filter='NetnsTest.*' 2>&1)" || {
    echo "$out"
    echo "FAIL: unprivileged NetnsTest run failed"
    exit 1
  }
  if ! grep -q "needs root" <<<"$out" || ! grep -q "SKIPPED" <<<"$out"; then
    echo "$out"
    echo "FAIL: unprivileged NetnsTest run did not skip with a reason"
    exit 1
  fi
  echo "ok: unprivileged run skipped with reason: $(grep -m1 'needs root' <<<"$out")"
}

if [[ "$(id -u)" -ne 0 ]]; then
  unprivileged_check
  echo "SKIP: not root, so the namespace tests themselves cannot run here"
  exit 0
fi
if ! command -v ip >/dev/null; then
  echo "SKIP: iproute2 'ip' is not installed"
  exit 0
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
"$net_test" --gtest_filter='NetnsTest.*' >"$log" 2>&1 &
test_pid=$!
status=0
wait "$test_pid" || status=$?
if [[ "$status" -ne 0 ]]; then
  cat "$log"
  echo "FAIL: NetnsTest failed as root"
  exit 1
fi
if grep -q "SKIPPED" "$log"; then
  cat "$log"
  echo "FAIL: NetnsTest skipped although running as root"
  exit 1
fi
echo "ok: $(grep -c '^\[       OK \]' "$log") NetnsTest cases passed as root"
# NetnsTopology names namespaces <tag><pid>x<counter>...: look for that pid.
leaked="$(ip netns list | awk '{print $1}' | grep -E "^[a-z]+${test_pid}x" || true)"
if [[ -n "$leaked" ]]; then
  echo "FAIL: namespaces left behind by pid $test_pid:"
  echo "$leaked"
  exit 1
fi
echo "ok: no namespace left behind"

if command -v setpriv >/dev/null; then
  unprivileged_check setpriv --reuid 65534 --regid 65534 --clear-groups
fi
echo "PASS"
