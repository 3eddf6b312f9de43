#!/usr/bin/env bash
# Installs the system packages ringsim needs, only those that are missing:
# the build and run packages, and with --test those the tests need too.
# Debian/Ubuntu via apt-get (with sudo when not root). Other systems: see README.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libsqlite3-dev libssl-dev libevent-dev
      libjansson-dev libcmocka-dev libxxhash-dev zlib1g-dev libyaml-dev libunistring-dev
      libzstd-dev python3-dev)
if [ "${1:-}" = "--test" ]; then
  # chromium for the browser tests; the real programs whose placement ringsim
  # reproduces (libmemcached, nginx, HAProxy, twemproxy, Redis, the Cassandra
  # driver, PyYAML for the exports' YAML, uhashring for libringsim's ketama)
  # to test against, crushtool and osdmaptool from ceph-base for CRUSH;
  # wrk for load figures; clang-tidy and shellcheck for lint; zstd to
  # compress the request logs the trace tests replay.
  pkgs+=(chromium sqlite3 libmemcached-dev nginx haproxy nutcracker
         redis-server redis-tools python3-cassandra python3-yaml python3-uhashring wrk
         clang-tidy clang-format shellcheck ceph-base zstd)
  # Node.js may come from elsewhere (nodesource, nvm): use it when present.
  command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "install-deps: missing packages (${missing[*]}) and no apt-get; install them by hand (see README)" >&2
    exit 1
  fi
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ "${1:-}" = "--test" ]; then
  # The browser tests' playwright-core needs Node.js 20 or newer.
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "$major" -lt 20 ]; then
    echo "install-deps: Node.js $(node --version 2>/dev/null) is too old for the browser tests;" \
         "install Node.js 20 or newer (Debian 13, Ubuntu 24.10+ or nodesource ship it)" >&2
    exit 1
  fi
fi
