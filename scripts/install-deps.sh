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
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "install-deps: missing packages (${missing[*]}) and no apt-get; install them by hand (see README)" >&2
  exit 1
fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
