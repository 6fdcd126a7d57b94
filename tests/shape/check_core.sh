#!/usr/bin/env bash
# The protocol-core rule (docs/architecture.md, "Cores and I/O adapters"): a
# core library (layersec_NAME_core) is codecs and state machines with time and
# frames passed in. It fails this check when
#   1. one of its sources includes a socket, poll, thread, filesystem, fstream,
#      file-descriptor or clock header, a libnl/libpcap header, or a
#      layersec/net header;
#   2. one of its sources reads a clock (monotonic_now_ns, MonotonicClock,
#      RealtimeClock, clock_gettime, std::chrono::*_clock, time());
#   3. its archive needs a symbol of layersec::net, libnl or libpcap (nm).
# Usage: check_core.sh NAME SOURCE_LIST CORE_ARCHIVE NET_ARCHIVE
#        check_core.sh --self-test   (proves each rule can fail)
set -uo pipefail

FORBIDDEN_INCLUDE='^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](sys/socket\.h|sys/un\.h|netinet/[^>"]*|arpa/inet\.h|netdb\.h|netpacket/[^>"]*|linux/if_[^>"]*|linux/netlink\.h|linux/rtnetlink\.h|net/if\.h|net/ethernet\.h|poll\.h|sys/poll\.h|sys/epoll\.h|sys/select\.h|sys/ioctl\.h|thread|mutex|shared_mutex|condition_variable|future|stop_token|pthread\.h|filesystem|fstream|unistd\.h|fcntl\.h|sys/stat\.h|chrono|ctime|time\.h|sys/time\.h|netlink/[^>"]*|pcap\.h|pcap/[^>"]*|layersec/net/[^>"]*)[>"]'
CLOCK_READ='monotonic_now_ns[[:space:]]*\(|MonotonicClock|RealtimeClock|clock_gettime|gettimeofday|(steady|system|high_resolution)_clock|[^_a-zA-Z.>:]time[[:space:]]*\([[:space:]]*(nullptr|NULL|0)?[[:space:]]*\)'

check_sources() {  # list-file -> prints violations, returns 1 if any
  local list="$1" bad=0 f hits
  while IFS= read -r f; do
    [ -n "$f" ] || continue
    if [ ! -f "$f" ]; then echo "core source listed but missing: $f"; bad=1; continue; fi
    # Comments do not count: strip // comments before matching.
    hits="$(sed -E 's://.*$::' "$f" | grep -nE "$FORBIDDEN_INCLUDE" || true)"
    if [ -n "$hits" ]; then
      while IFS= read -r h; do echo "$f:${h%%:*}: forbidden include in a core source: ${h#*:}"; done <<< "$hits"
      bad=1
    fi
    hits="$(sed -E 's://.*$::' "$f" | grep -nE "$CLOCK_READ" || true)"
    if [ -n "$hits" ]; then
      while IFS= read -r h; do echo "$f:${h%%:*}: a core reads no clock (time comes in as an argument): ${h#*:}"; done <<< "$hits"
      bad=1
    fi
  done < "$list"
  return $bad
}

check_archive() {  # core-archive net-archive -> returns 1 if the core needs net/libnl/libpcap
  local core="$1" net="$2" undef
  undef="$(nm --undefined-only "$core" 2>/dev/null | awk '{print $NF}' | sort -u)" || return 1
  local strong_net
  strong_net="$(nm --defined-only "$net" 2>/dev/null | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort -u)"
  local hits
  hits="$( { comm -12 <(echo "$undef") <(echo "$strong_net"); echo "$undef" | grep -E '8layersec3net|^(nl|rtnl|genl|pcap)_' ; } | sort -u | grep -v '^$' || true)"
  if [ -n "$hits" ]; then
    echo "$(basename "$core") needs symbols of layersec::net, libnl or libpcap:"
    echo "$hits" | head -20 | c++filt | sed 's/^/  /'
    return 1
  fi
  return 0
}

if [ "${1:-}" = "--self-test" ]; then
  tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
  ok=1
  printf '#include <cstdint>\n// #include <thread> in a comment is fine\nint f(int x) { return x; }\n' > "$tmp/clean.cc"
  echo "$tmp/clean.cc" > "$tmp/clean.txt"
  check_sources "$tmp/clean.txt" > "$tmp/out" || { echo "FAIL: a clean source was refused:"; cat "$tmp/out"; ok=0; }
  for inc in '<thread>' '<sys/socket.h>' '<poll.h>' '<filesystem>' '<fstream>' '<chrono>' '"layersec/net/event_loop.h"' '<netlink/msg.h>'; do
    printf '#include %s\nint g();\n' "$inc" > "$tmp/bad.cc"
    echo "$tmp/bad.cc" > "$tmp/bad.txt"
    if check_sources "$tmp/bad.txt" > "$tmp/out"; then echo "FAIL: #include $inc was not caught"; ok=0; fi
  done
  for call in 'auto t = monotonic_now_ns();' 'MonotonicClock c;' 'auto n = std::chrono::steady_clock::now();' 'long t = time(nullptr);'; do
    printf 'void h() { %s }\n' "$call" > "$tmp/bad.cc"
    echo "$tmp/bad.cc" > "$tmp/bad.txt"
    if check_sources "$tmp/bad.txt" > "$tmp/out"; then echo "FAIL: clock read '$call' was not caught"; ok=0; fi
  done
  printf 'int f(); int runtime(int); int g() { return runtime(1) + f(); }\n' > "$tmp/ok2.cc"
  echo "$tmp/ok2.cc" > "$tmp/ok2.txt"
  check_sources "$tmp/ok2.txt" > "$tmp/out" || { echo "FAIL: runtime( matched the time() rule:"; cat "$tmp/out"; ok=0; }
  if command -v c++ > /dev/null; then
    printf 'namespace layersec::net { int poll_once(); }\nint use() { return layersec::net::poll_once(); }\n' > "$tmp/core.cc"
    printf 'namespace layersec::net { int poll_once() { return 1; } }\n' > "$tmp/net.cc"
    printf 'int plain() { return 2; }\n' > "$tmp/plain.cc"
    (cd "$tmp" && c++ -c core.cc net.cc plain.cc && ar rcs libcore.a core.o && ar rcs libnet.a net.o && ar rcs libplain.a plain.o) || ok=0
    if check_archive "$tmp/libcore.a" "$tmp/libnet.a" > "$tmp/out"; then echo "FAIL: a core archive needing layersec::net was not caught"; ok=0; fi
    check_archive "$tmp/libplain.a" "$tmp/libnet.a" > "$tmp/out" || { echo "FAIL: a clean archive was refused:"; cat "$tmp/out"; ok=0; }
  fi
  [ "$ok" = 1 ] && echo "PASS check_core self-test" && exit 0
  exit 1
fi

if [ $# -ne 4 ]; then echo "usage: $0 NAME SOURCE_LIST CORE_ARCHIVE NET_ARCHIVE | --self-test" >&2; exit 2; fi
name="$1"; list="$2"; core="$3"; net="$4"
status=0
n="$(grep -c . "$list")"
check_sources "$list" || status=1
check_archive "$core" "$net" || status=1
if [ $status -eq 0 ]; then
  echo "PASS layersec_${name}_core: $n sources include no I/O or clock header, read no clock, need nothing of net/libnl/libpcap"
else
  echo "FAIL layersec_${name}_core breaks the core rule (move the I/O into a file listed under IO in src/CMakeLists.txt)"
fi
exit $status
