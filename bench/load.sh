#!/usr/bin/env bash
# bench/load.sh - HTTP load on loopback with wrk, beside a reference measured
# in the same run (issue 6, "Measured").
#
#   bench/load.sh [path/to/ringsim]      (make bench-load)
#
# A database with 1M keys on 10 nodes is made once; then `ringsim serve` and
# nginx (the reference: a static file from a server that does nothing else)
# listen on free loopback ports.  Each case runs RUNS times for DURATION
# seconds, alternating with the reference, and the table shows the median
# requests per second of each and their ratio -- so that a busy, shared
# machine moves both.  Writes are single-key inserts (POST /api/keys, one new
# key per request, from a wrk Lua script).  Environment: RUNS (3), DURATION
# (3 s), CONNECTIONS (8), THREADS (2), KEYS (1000000).  Everything it writes
# is under a temporary folder, removed at the end.
set -euo pipefail

BIN=$(realpath "${1:-build/ringsim}")
RUNS=${RUNS:-3}
DURATION=${DURATION:-3}
CONNECTIONS=${CONNECTIONS:-8}
THREADS=${THREADS:-2}
KEYS=${KEYS:-1000000}
WEB=$(cd "$(dirname "$0")/../web" && pwd)

for tool in wrk nginx; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
    { echo "bench-load: $tool is missing (scripts/install-deps.sh --test)" >&2; exit 1; }
done
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

DIR=$(mktemp -d "${TMPDIR:-/tmp}/ringsim-load.XXXXXX")
RS_PID=""
NG_PID=""
cleanup() {
  [ -n "$RS_PID" ] && kill "$RS_PID" 2>/dev/null && wait "$RS_PID" 2>/dev/null
  [ -n "$NG_PID" ] && kill "$NG_PID" 2>/dev/null && wait "$NG_PID" 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

echo "bench-load: making a database with $KEYS keys on 10 nodes"
DB="$DIR/load.db"
for i in $(seq 1 10); do "$BIN" --db "$DB" node add "node-$i" >/dev/null; done
"$BIN" --db "$DB" key gen "$KEYS" >/dev/null

"$BIN" serve --port 0 --db "$DB" >"$DIR/serve.out" 2>"$DIR/serve.err" &
RS_PID=$!
for _ in $(seq 1 100); do grep -q serving "$DIR/serve.out" 2>/dev/null && break; sleep 0.1; done
RS_PORT=$(sed -n 's/.*serving http:\/\/127\.0\.0\.1:\([0-9]*\)\/.*/\1/p' "$DIR/serve.out")
[ -n "$RS_PORT" ] || { echo "bench-load: ringsim serve did not start" >&2; cat "$DIR/serve.err" >&2; exit 1; }

NG_PORT=$(free_port)
mkdir -p "$DIR/nginx/html" "$DIR/nginx/tmp"
cp "$WEB/index.html" "$DIR/nginx/html/index.html"
cat >"$DIR/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process off;
pid $DIR/nginx/nginx.pid;
error_log $DIR/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $DIR/nginx/tmp/body;
  proxy_temp_path $DIR/nginx/tmp/proxy;
  fastcgi_temp_path $DIR/nginx/tmp/fastcgi;
  uwsgi_temp_path $DIR/nginx/tmp/uwsgi;
  scgi_temp_path $DIR/nginx/tmp/scgi;
  server {
    listen 127.0.0.1:$NG_PORT;
    root $DIR/nginx/html;
  }
}
EOF
"$NGINX" -c "$DIR/nginx/nginx.conf" -p "$DIR/nginx" 2>"$DIR/nginx/start.err" &
NG_PID=$!
for _ in $(seq 1 50); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $NG_PORT), 1)" 2>/dev/null && break
  sleep 0.1
done

cat >"$DIR/write.lua" <<'EOF'
-- One new key per request: the run (wrk ... -- RUN), the thread, a counter.
local counter = 0
local threads = 0
local run = "0"
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end
function init(args)
  run = args[1] or "0"
end
function request()
  counter = counter + 1
  local body = string.format('{"key":"wrk-%s-%d-%d"}', run, id, counter)
  return wrk.format("POST", "/api/keys", { ["Content-Type"] = "application/json" }, body)
end
EOF

# Requests per second of one wrk run.
rps() {
  local out
  out=$(wrk -t "$THREADS" -c "$CONNECTIONS" -d "${DURATION}s" "$@" 2>&1)
  if grep -q "Non-2xx" <<<"$out"; then
    echo "bench-load: answers that are not 2xx: $*" >&2
    grep "Non-2xx" <<<"$out" >&2
  fi
  awk '/^Requests\/sec:/ { print $2 }' <<<"$out"
}

median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

RS="http://127.0.0.1:$RS_PORT"
REF="http://127.0.0.1:$NG_PORT/index.html"
printf '\n%-34s %12s %12s %8s\n' "case (ringsim)" "ringsim r/s" "nginx r/s" "ratio"
printf '%-34s %12s %12s %8s\n' "----" "----" "----" "----"
run_case() { # name, then wrk arguments
  local name=$1 a="" b="" i
  shift
  for i in $(seq 1 "$RUNS"); do
    a="$a $(rps "$@" -- "$i")"
    b="$b $(rps "$REF")"
  done
  local ma mb
  ma=$(echo "$a" | median)
  mb=$(echo "$b" | median)
  printf '%-34s %12.0f %12.0f %8.3f\n' "$name" "$ma" "$mb" "$(awk -v x="$ma" -v y="$mb" 'BEGIN { print (y > 0 ? x / y : 0) }')"
}
run_case "GET /api/stats" "$RS/api/stats"
run_case "GET /api/lookup?key=key-123456" "$RS/api/lookup?key=key-123456"
run_case "GET /api/keys?limit=100" "$RS/api/keys?limit=100"
run_case "GET /index.html (same file)" "$RS/index.html"
run_case "POST /api/keys (one new key)" -s "$DIR/write.lua" "$RS"
echo
echo "bench-load: $RUNS runs of ${DURATION} s each, $CONNECTIONS connections, $THREADS threads;" \
  "medians; ratio = ringsim / nginx static file ($("$NGINX" -v 2>&1 | sed 's/.*\///'))"
