#!/usr/bin/env bash
# Fuzz campaign: runs every libFuzzer target (fuzz/*_fuzz.cc) for a fixed
# number of executions on a copy of its seed corpus, one target at a time,
# and writes a summary (Markdown + JSON) of what each run did.
#
#   scripts/fuzz_campaign.sh [--runs N] [--targets a,b] [--out DIR]
#                            [--build-dir DIR] [--max-time S] [--nice N] [--jobs N]
#
#   --runs N       executions per target (libFuzzer -runs; default 10000000)
#   --targets a,b  target names without _fuzz (default: every fuzz/*_fuzz.cc)
#   --out DIR      results (default build/fuzz-campaign/<UTC timestamp>):
#                  summary.md, summary.json, logs/<t>.log, corpus/<t>/ (the
#                  grown corpus), artifacts/<t>/ (crash-*, timeout-*, oom-*,
#                  leak-* reproducers)
#   --build-dir D  libFuzzer build (default build/fuzz; configured like
#                  `make fuzz` if it has no build.ninja, then the targets are
#                  built)
#   --max-time S   stop a target after S seconds (-max_total_time) even if it
#                  has not reached N executions; the summary then shows the
#                  executions it did reach (status "time limit"). 0 = none.
#   --until TIME   wall-clock end of the campaign (anything `date -d` reads,
#                  e.g. "03:50 UTC"): each target's -max_total_time is capped
#                  at the time left; targets with under 10 s left are not run
#                  (status "not run", 0 executions)
#   --nice N       run the fuzzers at this niceness (default 15)
#   --jobs N       build parallelism (default 2)
#   --sanitizers S address,undefined (default), undefined (several times
#                  faster: for 10^7-execution campaigns) or address; the build
#                  directory defaults to build/fuzz for the default and
#                  build/fuzz-<S> otherwise (LAYERSEC_FUZZ_SANITIZERS)
#
# The fuzz build is clang with -fsanitize=fuzzer-no-link,<S> (CMakeLists.txt,
# LAYERSEC_FUZZ). UBSan is recoverable in that build, so the script sets
# UBSAN_OPTIONS=halt_on_error=1: undefined behaviour is a crash.
# Exit status: 0 if no target found a crash, timeout, OOM or leak (and every
# run ended normally), 1 otherwise (the reproducers stay in artifacts/),
# 2 on a usage or build error.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
command_line="scripts/fuzz_campaign.sh $*"
runs=10000000
targets=""
out=""
build=""
sanitizers_opt="address,undefined"
max_time=0
until_epoch=0
niceness=15
jobs=2

usage() { sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --max-time) max_time="$2"; shift 2 ;;
    --until) until_epoch="$(date -d "$2" +%s)" || { echo "fuzz_campaign: bad --until: $2" >&2; exit 2; }; shift 2 ;;
    --nice) niceness="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --sanitizers) sanitizers_opt="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "fuzz_campaign: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
for n in "$runs" "$max_time" "$jobs"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "fuzz_campaign: not a number: $n" >&2; exit 2; }
done
[[ "$niceness" =~ ^-?[0-9]+$ ]] || { echo "fuzz_campaign: not a niceness: $niceness" >&2; exit 2; }
case "$sanitizers_opt" in
  address,undefined) [[ -n "$build" ]] || build="$here/build/fuzz" ;;
  undefined|address) [[ -n "$build" ]] || build="$here/build/fuzz-$sanitizers_opt" ;;
  *) echo "fuzz_campaign: --sanitizers must be address,undefined, undefined or address" >&2; exit 2 ;;
esac

# Input size limit per target (bytes): large enough for the seeds and the
# structures each parser reads, small enough to keep executions fast.
max_len_of() {
  case "$1" in
    node_config|secoc_config|macsec_link_config|netns_node_spec|someip_json) echo 8192 ;;
    pcap_reader|ber|sv|sv_kdc|kex_messages) echo 4096 ;;
    someip_runtime|kex_negotiation) echo 2048 ;;
    *) echo 2048 ;;
  esac
}

if [[ -z "$targets" ]]; then
  targets="$(cd "$here/fuzz" && ls ./*_fuzz.cc | sed 's|^\./||; s|_fuzz\.cc$||' | paste -sd, -)"
fi
IFS=',' read -r -a names <<<"$targets"
for t in "${names[@]}"; do
  [[ -f "$here/fuzz/${t}_fuzz.cc" ]] || { echo "fuzz_campaign: no target fuzz/${t}_fuzz.cc" >&2; exit 2; }
done

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$here" -B "$build" -G Ninja -DLAYERSEC_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLAYERSEC_FUZZ=ON -DLAYERSEC_FUZZ_SANITIZERS="$sanitizers_opt" -DLAYERSEC_TESTS=OFF \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 ||
    { echo "fuzz_campaign: cmake failed" >&2; exit 2; }
fi
build_targets=()
for t in "${names[@]}"; do build_targets+=("${t}_fuzz"); done
# CCACHE_RECACHE: whatever ninja recompiles is compiled for real, never taken
# from a compiler cache (a stale cached object once made a campaign run a
# target without a fix its source had: docs/fuzz.md, 2026-12-06). Up-to-date
# objects are not recompiled, so this costs only the compiles that happen.
CCACHE_RECACHE=1 nice -n 5 cmake --build "$build" -j "$jobs" --target "${build_targets[@]}" ||
  { echo "fuzz_campaign: build failed" >&2; exit 2; }

[[ -n "$out" ]] || out="$here/build/fuzz-campaign/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out/logs" "$out/corpus" "$out/artifacts"
compiler="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")"
sanitizers="fuzzer,$(sed -n 's/^LAYERSEC_FUZZ_SANITIZERS:[A-Z]*=//p' "$build/CMakeCache.txt") (LAYERSEC_FUZZ=ON; UBSAN_OPTIONS=halt_on_error=1)"
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
commit="$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [[ -n "$(git -C "$here" status --porcelain -- fuzz src 2>/dev/null)" ]]; then commit="$commit+dirty"; fi

export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0}"

# The value of "stat::NAME:" in a log, or 0.
stat_of() { sed -n "s/^stat::$2: *//p" "$1" | tail -1 | tr -d ' ' | grep -E '^[0-9]+$' || echo 0; }
# cov/ft of the last status line ("#N  DONE   cov: 123 ft: 456 ...").
field_of() { grep -E '^#[0-9]+' "$1" | tail -1 | sed -n "s/.* $2: \([0-9]*\).*/\1/p" | grep . || echo 0; }

write_summary() {
  {
    echo "# Fuzz campaign"
    echo
    echo "- started: $started; last target finished: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "- commit: $commit; build: $build ($build_type, $compiler)"
    echo "- sanitizers: $sanitizers"
    echo "- command: $command_line"
    echo "- per target: -runs=$runs -print_final_stats=1 -max_len=<per target> -timeout=25 -rss_limit_mb=2048, nice $niceness"
    echo
    echo "| target | executions | exec/s | cov | ft | corpus (seeds -> final) | crashes | timeouts | OOMs | peak RSS MB | wall s | status |"
    echo "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|"
    printf '%s\n' "${md_rows[@]}"
  } >"$out/summary.md"
  {
    printf '{"started":"%s","commit":"%s","build_dir":"%s","build_type":"%s","compiler":"%s","sanitizers":"%s","command":"%s","runs":%s,"max_time":%s,"targets":[' \
      "$started" "$commit" "$build" "$build_type" "$compiler" "$sanitizers" "$command_line" "$runs" "$max_time"
    (IFS=','; printf '%s' "${rows_json[*]}")
    printf ']}\n'
  } >"$out/summary.json"
}

rows_json=()
md_rows=()
failed=0
for t in "${names[@]}"; do
  bin="$build/fuzz/${t}_fuzz"
  corpus="$out/corpus/$t"
  art="$out/artifacts/$t"
  log="$out/logs/$t.log"
  mkdir -p "$corpus" "$art"
  if [[ -d "$here/fuzz/corpus/$t" ]]; then cp -r "$here/fuzz/corpus/$t/." "$corpus/"; fi
  seeds="$(find "$corpus" -type f | wc -l)"
  max_len="$(max_len_of "$t")"
  args=(-runs="$runs" -print_final_stats=1 -max_len="$max_len" -timeout=25 -rss_limit_mb=2048
        -artifact_prefix="$art/")
  limit_s="$max_time"
  if [[ "$until_epoch" -gt 0 ]]; then
    left=$((until_epoch - $(date +%s)))
    if [[ "$left" -lt 10 ]]; then
      echo "fuzz_campaign: $t: not run (--until reached)" >&2
      md_rows+=("| $t | 0 | 0 | 0 | 0 | $seeds -> $seeds | 0 | 0 | 0 | 0 | 0.0 | not run |")
      rows_json+=("{\"target\":\"$t\",\"runs_requested\":$runs,\"executions\":0,\"status\":\"not run\"}")
      write_summary
      continue
    fi
    if [[ "$limit_s" -eq 0 || "$left" -lt "$limit_s" ]]; then limit_s="$left"; fi
  fi
  [[ "$limit_s" -gt 0 ]] && args+=(-max_total_time="$limit_s")
  echo "fuzz_campaign: $t: -runs=$runs -max_len=$max_len ($seeds seeds)" >&2
  t0="$(date +%s.%N)"
  set +e
  nice -n "$niceness" "$bin" "${args[@]}" "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  t1="$(date +%s.%N)"
  wall="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
  execs="$(stat_of "$log" number_of_executed_units)"
  eps="$(stat_of "$log" average_exec_per_sec)"
  rss="$(stat_of "$log" peak_rss_mb)"
  cov="$(field_of "$log" cov)"
  ft="$(field_of "$log" ft)"
  size="$(find "$corpus" -type f | wc -l)"
  crashes="$(find "$art" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'deadly-*' \) | wc -l)"
  timeouts="$(find "$art" -type f -name 'timeout-*' | wc -l)"
  ooms="$(find "$art" -type f -name 'oom-*' | wc -l)"
  if [[ "$rc" -ne 0 || "$crashes" -gt 0 || "$timeouts" -gt 0 || "$ooms" -gt 0 ]]; then
    status="FAILED (exit $rc)"
    failed=1
  elif [[ "$execs" -ge "$runs" ]]; then
    status="done"
  else
    status="time limit"
  fi
  echo "fuzz_campaign: $t: $status: $execs executions, $eps exec/s, cov $cov, ft $ft, corpus $seeds -> $size, ${wall} s" >&2
  md_rows+=("| $t | $execs | $eps | $cov | $ft | $seeds -> $size | $crashes | $timeouts | $ooms | $rss | $wall | $status |")
  rows_json+=("{\"target\":\"$t\",\"runs_requested\":$runs,\"executions\":$execs,\"exec_per_sec\":$eps,\"cov\":$cov,\"ft\":$ft,\"seeds\":$seeds,\"corpus_size\":$size,\"crashes\":$crashes,\"timeouts\":$timeouts,\"ooms\":$ooms,\"peak_rss_mb\":$rss,\"wall_s\":$wall,\"max_len\":$max_len,\"exit_status\":$rc,\"status\":\"$status\"}")
  # Rewrite the summary after every target, so an interrupted campaign keeps what completed.
  write_summary
done
echo "fuzz_campaign: summary in $out/summary.md and $out/summary.json" >&2
if [[ "$failed" -ne 0 ]]; then
  echo "fuzz_campaign: a target failed; reproducers are in $out/artifacts/" >&2
  exit 1
fi
