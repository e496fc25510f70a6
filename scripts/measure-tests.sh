#!/usr/bin/env bash
# Measures the test suite package by package, one package at a time:
#   scripts/measure-tests.sh OUTDIR [package…]   (default: every package)
# For each package it runs `go test -race -count=1 -json` with the test
# binary under scripts/reap (wall, and user+sys of the binary and every
# process it started: Chromium, the Playwright driver, mosquitto, children
# of children) and counts the Chromium processes and Playwright drivers
# started, through wrappers placed in front of both. It writes
# OUTDIR/table.md: per package wall, CPU, Chromium and driver starts and the
# load average at the start and end, then the 25 slowest tests.
# docs/testing.md shows its output.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/measure-tests.sh OUTDIR [package…]}
shift
mkdir -p "$out/wrap"
out=$(cd "$out" && pwd)
eval "$(bash scripts/setup.sh)"
if [ "$#" -eq 0 ]; then
  set -- $(go list ./... | sed "s#^$(go list -m)/##")
fi
go build -o "$out/reap" ./scripts/reap
chromium=$GEMINI_SUPPLY_BROWSER_EXECUTABLE node=${PLAYWRIGHT_NODEJS_PATH:-$(command -v node)}
cat > "$out/wrap/chromium" <<WRAP
#!/bin/sh
echo chromium >> "\$MEASURE_STARTS"
exec "$chromium" "\$@"
WRAP
cat > "$out/wrap/node" <<WRAP
#!/bin/sh
case "\$*" in *run-driver*) echo driver >> "\$MEASURE_STARTS";; esac
exec "$node" "\$@"
WRAP
chmod +x "$out/wrap/chromium" "$out/wrap/node"
export GEMINI_SUPPLY_BROWSER_EXECUTABLE=$out/wrap/chromium PLAYWRIGHT_NODEJS_PATH=$out/wrap/node
load() { cut -d' ' -f1 /proc/loadavg; }
{
  echo "| package | wall s | CPU s (user+sys) | Chromium starts | driver starts | load (start→end) | result |"
  echo "|---|---:|---:|---:|---:|---|---|"
} > "$out/table.md"
for p in "$@"; do
  n=${p//\//_}
  : > "$out/$n.starts"; rm -f "$out/$n.time"
  l0=$(load)
  rc=0
  MEASURE_STARTS=$out/$n.starts go test -race -count=1 -timeout 50m -json \
    -exec "env REAP_OUT=$out/$n.time $out/reap" "./$p" > "$out/$n.json" 2> "$out/$n.stderr" || rc=$?
  read -r wall user sys < "$out/$n.time" 2>/dev/null || { wall=-; user=0; sys=0; }
  [ "$wall" = - ] && continue # no test files
  printf '| %s | %.0f | %.0f | %d | %d | %s→%s | %s |\n' "$p" "$wall" "$(echo "$user + $sys" | bc)" \
    "$(grep -c chromium "$out/$n.starts" || true)" "$(grep -c driver "$out/$n.starts" || true)" \
    "$l0" "$(load)" "$([ $rc = 0 ] && echo ok || echo FAIL)" >> "$out/table.md"
done
{
  echo
  echo "25 slowest tests (top-level, wall s):"
  echo
  cat "$out"/*.json | jq -r --arg m "$(go list -m)/" \
    'select(.Test != null and (.Action == "pass" or .Action == "fail") and (.Test | contains("/") | not)) | "\(.Elapsed) \(.Package | ltrimstr($m)) \(.Test)"' |
    sort -rn | head -25 | awk '{printf "    %7.1f  %s  %s\n", $1, $2, $3}'
} >> "$out/table.md"
cat "$out/table.md"
