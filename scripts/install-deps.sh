#!/usr/bin/env bash
# Installs the system packages ringsim needs, only those that are missing.
# Debian/Ubuntu via apt-get (with sudo when not root). Other systems: see README.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libsqlite3-dev libssl-dev libevent-dev
      libjansson-dev libcmocka-dev)
if [ "${1:-}" = "--test" ]; then
  pkgs+=(chromium nodejs npm sqlite3)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Node and npm may come from elsewhere (nodesource, nvm): accept them if present.
if command -v node >/dev/null && command -v npm >/dev/null; then
  keep=(); for p in "${missing[@]}"; do [ "$p" = nodejs ] || [ "$p" = npm ] || keep+=("$p"); done
  missing=("${keep[@]+"${keep[@]}"}")
fi
node_ok() {
  # The browser tests' playwright-core needs Node.js 20 or newer.
  command -v node >/dev/null || return 0
  [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge 20 ]
}
if [ ${#missing[@]} -eq 0 ]; then
  if [ "${1:-}" = "--test" ] && ! node_ok; then
    echo "install-deps: Node.js $(node --version) is too old for the browser tests; install Node.js 20 or newer (Debian 13 and nodesource ship it)" >&2
    exit 1
  fi
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "install-deps: missing packages (${missing[*]}) and no apt-get; install them by hand (see README)" >&2
  exit 1
fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
