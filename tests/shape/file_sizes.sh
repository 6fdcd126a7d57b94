#!/usr/bin/env bash
# Shape limits (docs/architecture.md, "Build layout"): no source file under
# src/ above 1,000 lines, no apps/layersec/cmd_*.cc above 300 (a command file
# parses options and calls the library). Usage: file_sizes.sh SOURCE_DIR
set -uo pipefail
root="$1"
bad=0
while IFS= read -r f; do
  n=$(wc -l < "$f")
  if [ "$n" -gt 1000 ]; then echo "FAIL: ${f#$root/} has $n lines (limit 1,000: split it)"; bad=1; fi
done < <(find "$root/src" -type f \( -name '*.cc' -o -name '*.h' \))
count=0
for f in "$root"/apps/layersec/cmd_*.cc; do
  count=$((count + 1))
  n=$(wc -l < "$f")
  if [ "$n" -gt 300 ]; then echo "FAIL: ${f#$root/} has $n lines (limit 300: move the logic into src/)"; bad=1; fi
done
[ "$count" -gt 0 ] || { echo "FAIL: no apps/layersec/cmd_*.cc found under $root"; exit 1; }
[ $bad -eq 0 ] && echo "PASS file sizes: src/ files <= 1,000 lines, $count cmd_*.cc files <= 300"
exit $bad
