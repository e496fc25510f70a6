#!/usr/bin/env bash
# One-command, idempotent setup for tests, the demo and CI.
#
#   - Debian packages: chromium and chromium-headless-shell (the browser the agent
#     drives: the shell headless, the full browser for a headful login) and mosquitto (the
#     MQTT broker the integration tests start on a loopback port) and apparmor
#     (its apparmor_parser checks the add-on's apparmor.txt; no kernel support needed);
#   - the Playwright driver that playwright-go v0.5200.x requires (playwright-core
#     1.52.0 from npm), unpacked into .cache/playwright-driver so that
#     .cache/playwright-driver/package/cli.js exists, with a `node` link beside it.
#
# A second run does no network work. Prints the environment to use, one
# `export NAME=value` per line, so callers may `eval "$(scripts/setup.sh)"`.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache="${GEMINI_SUPPLY_CACHE:-$root/.cache}"
driver_version=$(grep -Eo 'PLAYWRIGHT_DRIVER_VERSION=[0-9.]+' "$root/scripts/driver-version" | cut -d= -f2)
driver_dir="$cache/playwright-driver"

log() { echo "setup: $*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root to run: $*"; return 1; fi
}

missing=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/lib/chromium/chromium ] || missing+=(chromium)
# The headless shell beside it is what headless launches run (docs/browser.md,
# "What an agent item costs").
[ -x /usr/lib/chromium/chromium-headless-shell ] || missing+=(chromium-headless-shell)
command -v mosquitto >/dev/null 2>&1 || [ -x /usr/sbin/mosquitto ] || missing+=(mosquitto)
command -v apparmor_parser >/dev/null 2>&1 || [ -x /usr/sbin/apparmor_parser ] || [ -x /sbin/apparmor_parser ] || missing+=(apparmor)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" fonts-liberation >&2
fi

if [ ! -f "$driver_dir/package/cli.js" ] || \
   [ "$(cat "$driver_dir/VERSION" 2>/dev/null)" != "$driver_version" ]; then
  command -v npm >/dev/null || { log "npm is required to fetch playwright-core $driver_version"; exit 1; }
  log "fetching playwright-core@$driver_version from npm"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "playwright-core@$driver_version" >/dev/null)
  rm -rf "$driver_dir.new"
  mkdir -p "$driver_dir.new"
  tar -xzf "$tmp"/playwright-core-*.tgz -C "$driver_dir.new"
  echo "$driver_version" > "$driver_dir.new/VERSION"
  rm -rf "$driver_dir"
  mv "$driver_dir.new" "$driver_dir"
fi
node_bin=$(command -v node)
ln -sfn "$node_bin" "$driver_dir/node"

browser=/usr/lib/chromium/chromium
[ -x "$browser" ] || browser=$(command -v chromium)
mosq=$(command -v mosquitto || echo /usr/sbin/mosquitto)
aa_parser=$(command -v apparmor_parser || { [ -x /usr/sbin/apparmor_parser ] && echo /usr/sbin/apparmor_parser; } || echo /sbin/apparmor_parser)

echo "export PLAYWRIGHT_DRIVER_PATH=$driver_dir"
echo "export PLAYWRIGHT_NODEJS_PATH=$node_bin"
echo "export GEMINI_SUPPLY_BROWSER_EXECUTABLE=$browser"
echo "export GEMINI_SUPPLY_TEST_MOSQUITTO=$mosq"
echo "export GEMINI_SUPPLY_TEST_APPARMOR_PARSER=$aa_parser"
