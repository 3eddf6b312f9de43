#!/usr/bin/env bash
# redis_ref.sh TOOL - ringsim's redis core (through tests/ref/redis_tool)
# against the real redis-server and redis-cli (Debian's redis 7.0.15).
#
#  (a) CLUSTER KEYSLOT of 3000 fixed-seed random keys (braces, UTF-8, any
#      byte) plus the Redis Cluster spec's examples, sent through redis-cli
#      with \xHH escapes, against redis_slot.
#  (b) for k = 3..6 masters: `redis-cli --cluster create` (0 replicas)
#      against redis_create, every slot.
#  (c) `--cluster add-node` of an empty master, then `--cluster rebalance
#      --cluster-use-empty-masters`: every slot against redis_rebalance run
#      with the node list order redis-cli saw (the entry node, then the
#      entry node's CLUSTER NODES lines); and against redis_join (ringsim's
#      join order) where no list order could change redis-cli's result
#      ("orders" = 1: required for a join into a fresh create, see
#      alg_redis.h), else the order-dependence is reported.
#  (d) a leave: `--cluster rebalance --cluster-use-empty-masters
#      --cluster-weight <leaver>=0` then `--cluster del-node`, checked the
#      same way against redis_rebalance and redis_leave; then a second join
#      into the map the leave left (see the end for which cases run).
# Servers bind 127.0.0.1 on free ports, run in the foreground in the
# background and are killed on exit; every wait has a deadline (45 s for
# the cluster to agree, 120 s for a rebalance).
#
# Checks docs/api.md, 'GET /api/config' (the catalogue's redis).
set -u
TOOL=${1:?usage: redis_ref.sh path/to/redis_tool}
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    echo "redis-server / redis-cli not installed: skipped"; exit 77
fi
echo "reference: $(redis-server --version | cut -d' ' -f1-3), $(redis-cli --version)"

# Servers save their cluster config with fsync at every slot move: keep it
# in memory when we can.
SHM=/tmp; [[ -d /dev/shm && -w /dev/shm ]] && SHM=/dev/shm
TMP=$(mktemp -d "$SHM/ringsim-redis.XXXXXX")
# Each job (the keys, one cluster per k) runs in its own subshell with its
# own servers: PID_OF is the job's, and every server's pid also goes to
# $TMP/servers so that the main shell can stop what a killed job left.
declare -A PID_OF=() # port -> pid
stop_all() {
    local p
    for p in "${!PID_OF[@]}"; do kill "${PID_OF[$p]}" 2>/dev/null; done
    for p in "${!PID_OF[@]}"; do wait "${PID_OF[$p]}" 2>/dev/null; done
    PID_OF=()
}
JOBS=()
cleanup() {
    local j pid
    for j in "${JOBS[@]}"; do kill "$j" 2>/dev/null; done
    for j in "${JOBS[@]}"; do wait "$j" 2>/dev/null; done
    if [[ -f $TMP/servers ]]; then
        while read -r pid; do
            grep -qs redis-server "/proc/$pid/cmdline" && kill "$pid" 2>/dev/null
        done <"$TMP/servers"
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

ok() { echo "ok   [${SECONDS}s] $*"; }
bad() { echo "FAIL $*"; }
# Compare two strings; name them on failure.
same() { # what expected actual
    if [[ "$2" == "$3" ]]; then ok "$1"; else
        bad "$1"; echo "     redis:   ${2:0:400}"; echo "     ringsim: ${3:0:400}"; fi
}
die() { echo "FAIL $*"; exit 1; }
rcli() { timeout 20 redis-cli -h 127.0.0.1 "$@"; }

# A port p with p and its cluster bus p+10000 free (nothing answers).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null &&
              ! (exec 3<>"/dev/tcp/127.0.0.1/$(($1 + 10000)))") 2>/dev/null; }
PORT_BASE=$((20000 + RANDOM % 9000)) NEXT_PORT=0
PORT= # set by start_server (not run in a subshell: it must keep PID_OF)
start_server() {
    local p _
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        p=$((PORT_BASE + NEXT_PORT)); NEXT_PORT=$((NEXT_PORT + 1))
        port_free "$p" || continue
        mkdir -p "$TMP/$p"
        redis-server --cluster-enabled yes --port "$p" --bind 127.0.0.1 \
            --save '' --appendonly no --dir "$TMP/$p" \
            --cluster-config-file "$TMP/$p/nodes-$p.conf" --daemonize no \
            >"$TMP/$p/log" 2>&1 &
        PID_OF[$p]=$!
        echo "$!" >>"$TMP/servers"
        local i
        for i in $(seq 50); do
            [[ "$(rcli -p "$p" ping 2>/dev/null)" == PONG ]] && { PORT=$p; return 0; }
            kill -0 "${PID_OF[$p]}" 2>/dev/null || break
            sleep 0.1
        done
        kill "${PID_OF[$p]}" 2>/dev/null; wait "${PID_OF[$p]}" 2>/dev/null
        unset "PID_OF[$p]"
    done
    return 1
}
stop_server() { kill "${PID_OF[$1]}" 2>/dev/null; wait "${PID_OF[$1]}" 2>/dev/null; unset "PID_OF[$1]"; }
node_id() { rcli -p "$1" cluster myid; }

# The map as ringsim writes it, from one node's CLUSTER NODES, ordinals by
# port in the members list given after the port.
real_map() { # port member...
    local p=$1; shift
    rcli -p "$p" cluster nodes | awk -v members="$*" '
        BEGIN { n = split(members, m, " "); for (i = 1; i <= n; i++) ord[m[i]] = i - 1 }
        { split($2, a, "[:@]"); if (!(a[2] in ord)) next
          for (f = 9; f <= NF; f++) {
              if ($f ~ /^\[/) { print "open-slot " $f; continue }
              split($f, r, "-"); last = (r[2] == "" ? r[1] : r[2])
              print r[1], last, ord[a[2]] } }' |
    sort -n -k1,1 | awk '
        $1 == "open-slot" { printf "%s%s", sep, $0; sep = ","; next }
        { printf "%s%s%s:%s", sep, $1, ($2 != $1 ? "-" $2 : ""), $3; sep = "," }
        END { print "" }'
}
# Wait until every member lists exactly the members, all connected, and all
# agree on the map; prints that map.
converge() { # member...
    local deadline=$((SECONDS + 45)) p m0 m want=$#
    while ((SECONDS < deadline)); do
        local good=1
        for p in "$@"; do
            local nodes; nodes=$(rcli -p "$p" cluster nodes) || { good=0; break; }
            [[ $(grep -c . <<<"$nodes") == "$want" ]] || { good=0; break; }
            grep -Eq 'handshake|noaddr|fail|disconnected' <<<"$nodes" && { good=0; break; }
            m=$(real_map "$p" "$@")
            [[ $p == "$1" ]] && m0=$m
            [[ $m == "$m0" ]] || { good=0; break; }
        done
        if ((good)) && timeout 20 redis-cli --cluster check "127.0.0.1:$1" >/dev/null 2>&1; then
            echo "$m0"; return 0
        fi
        sleep 0.1
    done
    return 1
}
# redis-cli's node list: the entry node, then the others in the order of the
# entry node's CLUSTER NODES, as ordinals of the members.
cli_order() { # entry member...
    local e=$1; shift
    rcli -p "$e" cluster nodes | awk -v members="$*" -v entry="$e" '
        BEGIN { n = split(members, m, " "); for (i = 1; i <= n; i++) ord[m[i]] = i - 1
                out = ord[entry] }
        { split($2, a, "[:@]"); if (a[2] != entry) out = out "," ord[a[2]] }
        END { print out }'
}

# ---- (a) key slots --------------------------------------------------------
keys_job() {
    start_server || die "cannot start redis-server"
    local P0=$PORT k nkeys
    {
        printf '%s' "123456789" | od -An -tx1 | tr -d ' \n'; echo
        for k in '{user1000}.following' '{user1000}.followers' 'foo{}{bar}' \
                 'foo{{bar}}zap' 'foo{bar}{zap}' '{}' '{' '}' 'a{b' 'a}b{c}' '{{}}' '{a}'; do
            printf '%s' "$k" | od -An -tx1 | tr -d ' \n'; echo
        done
        "$TOOL" gen 20240601 3000
    } >"$TMP/keys.hex"
    awk '{ s = ""; for (i = 1; i <= length($0); i += 2) s = s "\\x" substr($0, i, 2)
           print "CLUSTER KEYSLOT \"" s "\"" }' "$TMP/keys.hex" >"$TMP/keys.cmd"
    rcli -p "$P0" <"$TMP/keys.cmd" >"$TMP/slots.redis" || die "redis-cli CLUSTER KEYSLOT failed"
    "$TOOL" slot <"$TMP/keys.hex" >"$TMP/slots.ringsim" || die "redis_tool slot failed"
    nkeys=$(wc -l <"$TMP/keys.hex")
    [[ $(wc -l <"$TMP/slots.redis") == "$nkeys" && $(head -1 "$TMP/slots.redis") == 12739 ]] ||
        die "CLUSTER KEYSLOT answers look wrong: $(head -3 "$TMP/slots.redis")"
    if cmp -s "$TMP/slots.redis" "$TMP/slots.ringsim"; then
        ok "(a) CLUSTER KEYSLOT of $nkeys keys (seed 20240601) = redis_slot"
    else
        bad "(a) CLUSTER KEYSLOT differs (seed 20240601), first differences:"
        paste -d' ' "$TMP/keys.hex" "$TMP/slots.redis" "$TMP/slots.ringsim" | awk '$2 != $3' | head -5
    fi
    stop_server "$P0"
}

# ---- (b)-(d) slot maps ----------------------------------------------------
weights_list() { # n leaving(-1 for none): "1,1,0,1"
    local i out=
    for ((i = 0; i < $1; i++)); do out+="${out:+,}$( ((i == $2)) && echo 0 || echo 1)"; done
    echo "$out"
}

run_cluster() { # k leaving-ordinal (-1: no leave) then-join (0/1)
    local k=$1 leaving=$2 p i members=() extra=() before after mine entry steps=(join)
    ((leaving >= 0)) && steps+=(leave)
    (($3)) && steps+=(join)
    for i in $(seq $((k + 1 + $3))); do
        start_server || die "cannot start redis-server"
        if ((i <= k)); then members+=("$PORT"); else extra+=("$PORT"); fi
    done
    # (b) create, all on one IP: redis-cli's interleaving keeps argv order.
    local addr=()
    for p in "${members[@]}"; do addr+=("127.0.0.1:$p"); done
    timeout 60 redis-cli --cluster create "${addr[@]}" --cluster-yes \
        >"$TMP/create-$k.log" 2>&1 || die "k=$k: redis-cli --cluster create failed: $(tail -3 "$TMP/create-$k.log")"
    after=$(converge "${members[@]}") || die "k=$k: cluster did not converge after create"
    same "(b) k=$k: redis-cli --cluster create = redis_create($k)" "$after" "$("$TOOL" create "$k")"

    # (c) join, (d) leave, then a join into the map the leave left.
    local step n id weights call=() order label orders
    for step in "${steps[@]}"; do
        before=$after
        entry=${members[0]}
        n=${#members[@]}
        if [[ $step == leave ]]; then
            id=$(node_id "${members[$leaving]}")
            weights=$(weights_list "$n" "$leaving")
            call=(leave "$n" "$leaving")
            label="(d) k=$k leave of ordinal $leaving"
            order=$(cli_order "$entry" "${members[@]}")
            timeout 120 redis-cli --cluster rebalance "127.0.0.1:$entry" --cluster-use-empty-masters \
                --cluster-weight "$id=0" >"$TMP/leave-$k.log" 2>&1 ||
                die "k=$k: rebalance with weight 0 failed: $(tail -3 "$TMP/leave-$k.log")"
        else
            p=${extra[0]}; extra=("${extra[@]:1}")
            timeout 60 redis-cli --cluster add-node "127.0.0.1:$p" "127.0.0.1:$entry" >"$TMP/add-$k.log" 2>&1 ||
                die "k=$k: add-node failed: $(tail -3 "$TMP/add-$k.log")"
            members+=("$p"); n=$((n + 1))
            converge "${members[@]}" >/dev/null || die "k=$k: no convergence after add-node"
            weights=$(weights_list "$n" -1)
            call=(join $((n - 1)))
            label="(c) k=$k join of ordinal $((n - 1)) into $(( $(grep -o , <<<"$before" | wc -l) + 1 )) runs"
            order=$(cli_order "$entry" "${members[@]}")
            timeout 120 redis-cli --cluster rebalance "127.0.0.1:$entry" --cluster-use-empty-masters \
                >"$TMP/join-$k.log" 2>&1 || die "k=$k: rebalance failed: $(tail -3 "$TMP/join-$k.log")"
        fi
        [[ $(cli_order "$entry" "${members[@]}") == "$order" ]] ||
            echo "note: the CLUSTER NODES order changed during the rebalance"
        after=$(converge "${members[@]}") || die "k=$k: no convergence after the rebalance"
        # Exact, with the list order redis-cli had.
        mine=$("$TOOL" rebalance "$n" "$order" "$weights" <<<"$before" | head -1)
        same "$label: every slot = redis_rebalance with redis-cli's list order $order" "$after" "$mine"
        orders=$("$TOOL" orders "$n" "$weights" <<<"$before")
        if [[ $step == leave ]]; then
            # del-node (from another entry), then the map of the others.
            timeout 60 redis-cli --cluster del-node "127.0.0.1:${members[$(((leaving + 1) % n))]}" "$id" \
                >"$TMP/del-$k.log" 2>&1 || die "k=$k: del-node failed: $(tail -3 "$TMP/del-$k.log")"
            stop_server "${members[$leaving]}"
            members=("${members[@]:0:$leaving}" "${members[@]:$((leaving + 1))}")
            after=$(converge "${members[@]}") || die "k=$k: no convergence after del-node"
        fi
        # ringsim's own rule: the join order.
        mine=$("$TOOL" "${call[@]}" <<<"$before" | head -1)
        if [[ $orders == 1 ]]; then
            same "$label: redis-cli's result is the same for all $n! node orders; = ringsim's ${call[*]}" "$after" "$mine"
        else
            echo "note $label: redis-cli's result depends on its random node-ID order" \
                 "($orders different maps over the $n! orders); ringsim's (join order) is"
            echo "     ${mine:0:200}"
        fi
        if [[ $step == join && $before == "$("$TOOL" create $((n - 1)))" && $orders != 1 ]]; then
            bad "$label: a join into a fresh create should not depend on the node order"
        fi
    done
    for p in "${members[@]}" "${extra[@]}"; do stop_server "$p"; done
}

# Run a job in the background: its own ports, servers and output file.
run_job() { # name port-offset command...
    local name=$1 off=$2; shift 2
    (
        trap stop_all EXIT
        trap 'exit 2' INT TERM
        NEXT_PORT=$off
        "$@"
    ) >"$TMP/out-$name" 2>&1 &
    JOBS+=("$!")
    NAMES+=("$name")
}
NAMES=()
# A slot move costs redis-cli about 8 round trips and the servers a config
# save each (1-2 ms a slot on an idle machine, far more on a loaded one), so
# the jobs run side by side; RINGSIM_REF_FULL=1 adds a leave and a second
# join for every k (the default leaves the first node, redis-cli's entry, at
# k = 4 and a middle node at k = 6, then joins into what the leave left).
run_job keys 0 keys_job
if [[ ${RINGSIM_REF_FULL:-0} == 1 ]]; then
    for k in 3 4 5 6; do run_job "k$k" $((k * 20)) run_cluster "$k" $((k - 3)) 1; done
else
    run_job k3 60 run_cluster 3 -1 0
    run_job k4 80 run_cluster 4 0 0
    run_job k5 100 run_cluster 5 -1 0
    run_job k6 120 run_cluster 6 3 1
fi
passes=0 fails=0
for i in "${!JOBS[@]}"; do
    wait "${JOBS[$i]}"; rc=$?
    cat "$TMP/out-${NAMES[$i]}"
    passes=$((passes + $(grep -c '^ok ' "$TMP/out-${NAMES[$i]}")))
    fails=$((fails + $(grep -c '^FAIL' "$TMP/out-${NAMES[$i]}")))
    if ((rc != 0)) && ! grep -q '^FAIL' "$TMP/out-${NAMES[$i]}"; then
        echo "FAIL job ${NAMES[$i]} exited with status $rc"; fails=$((fails + 1))
    fi
done
JOBS=()
echo "$passes passed, $fails failed"
((fails == 0))
