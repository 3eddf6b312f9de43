#!/usr/bin/env bash
# cli_keyfile_test.sh - `ringsim key add --file F` and `ringsim key add -`
# (issue 25, item 13): keys from a file or standard input, one a line, in
# one operation, every line checked before anything changes.
#
#   bash tests/cli_keyfile_test.sh /path/to/ringsim
#
# The keys each file should give are computed here from the documented rules
# (a trailing CR and a leading byte order mark dropped, empty lines skipped,
# everything else byte for byte) with awk, independently of ringsim; what
# was stored is read back with `key ls --json` and `log --json`.
# Ends with one line "N passed, N failed"; exits 1 if anything failed.
#
# Checks docs/api.md, 'Keys from a file, and which way a node went'.

# shellcheck disable=SC2016 # JavaScript in single quotes, on purpose
set -u
# shellcheck disable=SC1091  # tests/lib/check.sh: setup, the counters, expect, serve
source "$(dirname "${BASH_SOURCE[0]}")/lib/check.sh"
setup keyfile /path/to/ringsim 1 "$@"
need node
O=$TMP/out
E=$TMP/err

# rs ARGS... <stdin : run ringsim, RC, stdout in $O, stderr in $E.
rs() {
    "$BIN" "$@" >"$O" 2>"$E"
    RC=$?
}
ctx() { printf 'exit %s\nstdout: %s\nstderr: %s' "$RC" "$(head -c 400 "$O")" "$(head -c 400 "$E")"; }
# The keys a text gives by the rules, sorted and unique, one a line.
expected_keys() {
    awk 'NR == 1 { sub(/^\xef\xbb\xbf/, "") } { sub(/\r$/, "") } length($0) > 0' "$1" | sort -u
}
# The stored keys, sorted, one a line.
stored_keys() {
    "$BIN" --db "$1" --json key ls | node -e '
        let t = ""; process.stdin.on("data", (d) => (t += d)).on("end", () =>
            process.stdout.write(JSON.parse(t).keys.map((k) => k.key).sort().join("\n") + "\n"));' | sort
}
ops() { "$BIN" --db "$1" --json log | jsrun 'return J(A[0]).operations.length' /dev/stdin; }
state() { { "$BIN" --db "$1" --json key ls; "$BIN" --db "$1" --json log; } | sha256sum; }

new_db() {
    rm -f "$1" "$1"-wal "$1"-shm
    "$BIN" --db "$1" node add alpha >/dev/null && "$BIN" --db "$1" node add bravo >/dev/null
}

# ---- a file with every case of the rules ----
printf '\xef\xbb\xbfbom-first\r\nplain\n\n\r\n  spaced key  \n#not-a-comment\nplain\nwin\r\nc\xc3\xa9\nlast-without-newline' >rules.txt
DB=$TMP/a.db
new_db "$DB"
rs --db "$DB" --json key add --file rules.txt </dev/null
want_n=$(expected_keys rules.txt | wc -l)
lines_n=$(awk 'NR == 1 { sub(/^\xef\xbb\xbf/, "") } { sub(/\r$/, "") } length($0) > 0' rules.txt | wc -l)
got=$(jsrun 'const j = J(A[0]); return `${j.inserted} ${j.skipped} ${j.operation.type} ${j.operation.subject}`' "$O")
if [ "$RC" -eq 0 ] && [ "$got" == "$want_n $((lines_n - want_n)) insert_keys $lines_n keys" ]; then pass; else
    fail "key add --file: inserted = distinct keys, skipped = repeats, one insert_keys of every line's key" \
        "expected: $want_n $((lines_n - want_n)) insert_keys $lines_n keys" "got: $got" "$(ctx)"; fi
if diff <(expected_keys rules.txt) <(stored_keys "$DB") >/dev/null; then pass; else
    fail "key add --file: the keys are the lines (CR, BOM dropped, empty lines skipped, spaces and # kept)" \
        "$(diff <(expected_keys rules.txt) <(stored_keys "$DB"))"; fi
if [ "$(ops "$DB")" -eq 3 ]; then pass; else fail "key add --file is one operation" "$(ops "$DB") operations"; fi
rs --db "$DB" check </dev/null
if [ "$RC" -eq 0 ]; then pass; else fail "check passes after key add --file" "$(ctx)"; fi

# The same text on standard input: through a pipe (kept in a temporary
# file), redirected from a file (read twice), and as --file -.
for how in pipe redirect dashfile; do
    DB=$TMP/$how.db
    new_db "$DB"
    case $how in
        pipe) tee /dev/null <rules.txt | { "$BIN" --db "$DB" key add - >"$O" 2>"$E"; }; RC=$? ;;
        redirect) rs --db "$DB" key add - <rules.txt ;;
        dashfile) tee /dev/null <rules.txt | { "$BIN" --db "$DB" key add --file - >"$O" 2>"$E"; }; RC=$? ;;
    esac
    if [ "$RC" -eq 0 ] && [ ! -s "$E" ] && diff <(expected_keys rules.txt) <(stored_keys "$DB") >/dev/null &&
        grep -qx "inserted $want_n keys, skipped $((lines_n - want_n)) (operation 3)" "$O"; then pass; else
        fail "key add - ($how): the same keys and answer as --file" "$(ctx)"; fi
done

# Standard input that is already partly read: the keys from where it stands.
DB=$TMP/partial.db
new_db "$DB"
{ read -r _skip; "$BIN" --db "$DB" key add - >"$O" 2>"$E"; } < <(printf 'first-line\nk1\nk2\n')
RC=$?
if [ "$RC" -eq 0 ] && [ "$(stored_keys "$DB" | tr '\n' ' ')" == "k1 k2 " ]; then pass; else
    fail "key add - reads standard input from where it stands" "$(ctx)" "$(stored_keys "$DB")"; fi
DB=$TMP/seek.db
new_db "$DB"
printf 'header\ns1\ns2\n' >seek.txt
{ read -r _skip; "$BIN" --db "$DB" key add - >"$O" 2>"$E"; } <seek.txt
RC=$?
if [ "$RC" -eq 0 ] && [ "$(stored_keys "$DB" | tr '\n' ' ')" == "s1 s2 " ]; then pass; else
    fail "key add - from a file partly read: from where it stands" "$(ctx)" "$(stored_keys "$DB")"; fi

# Existing keys are skipped and counted, as POST /api/keys {"keys"} does.
DB=$TMP/dup.db
new_db "$DB"
"$BIN" --db "$DB" key add k1 k2 >/dev/null
printf 'k2\nk3\nk3\nk4\n' | { "$BIN" --db "$DB" --json key add - >"$O" 2>"$E"; }
RC=$?
got=$(jsrun 'const j = J(A[0]); return `${j.inserted} ${j.skipped} ${Object.keys(j).join(",")}`' "$O")
if [ "$got" == "2 2 inserted,skipped,operation" ]; then pass; else
    fail "key add - --json: {inserted, skipped, operation}, existing and repeated keys skipped" "$got" "$(ctx)"; fi
# One key in a file is a list of one: it may exist (skipped), as {"keys": [k]}.
echo k1 | { "$BIN" --db "$DB" key add - >"$O" 2>"$E"; }
RC=$?
if [ "$RC" -eq 0 ] && grep -qx "inserted 0 keys, skipped 1 (operation [0-9]*)" "$O"; then pass; else
    fail "a file of one existing key: skipped, not refused" "$(ctx)"; fi
rs --db "$DB" --json log </dev/null
if [ "$(jsrun 'const o = J(A[0]).operations; return o[o.length - 1].subject' "$O")" == "k1" ]; then pass; else
    fail "a file of one key: the operation's subject is the key" "$(head -c 600 "$O")"; fi

# A key named "-" stands after "--"; "-" among other keys is wrong usage.
rs --db "$DB" key add -- - </dev/null
if [ "$RC" -eq 0 ] && stored_keys "$DB" | grep -qx -- '-'; then pass; else
    fail "key add -- - inserts the key \"-\"" "$(ctx)"; fi

# ---- refusals: one line naming the line, nothing changed ----
refused_file() { # DESC WANT_RC PATTERN ARGS... (stdin from $IN)
    local d=$1 want=$2 pat=$3 before after
    shift 3
    before=$(state "$DB")
    "$BIN" --db "$DB" "$@" <"$IN" >"$O" 2>"$E"
    RC=$?
    after=$(state "$DB")
    # A refusal is one line; wrong usage one line and the pointer to help.
    if [ "$RC" -eq "$want" ] && [ "$(wc -l <"$E")" -eq $((want == 1 ? 1 : 2)) ] &&
        head -n 1 "$E" | grep -q -- "$pat" && [ "$before" == "$after" ]; then pass; else
        fail "$d" "expected exit $want, a first line matching $pat, the database unchanged" "$(ctx)" \
            "unchanged: $([ "$before" == "$after" ] && echo yes || echo no)"; fi
}
DB=$TMP/refuse.db
new_db "$DB"
"$BIN" --db "$DB" key add before >/dev/null
IN=/dev/null
seq -f 'good-%g' 1 5000 >bad-late.txt
printf 'bad\001key\n' >>bad-late.txt
refused_file "a control character on line 5001 of 5001: refused, nothing inserted" 1 \
    "bad-late.txt line 5001: .*control" key add --file bad-late.txt
{ seq -f 'g%g' 1 3; head -c 256 /dev/zero | tr '\0' x; echo; } >long.txt
refused_file "a line of 256 bytes: refused with its number" 1 "line 4: a key is at most 255 bytes" \
    key add --file long.txt
printf 'ok\n\xff\xfe\n' >utf8.txt
refused_file "invalid UTF-8: refused with its number" 1 "line 2:" key add --file utf8.txt
printf '\n\r\n\n' >empty.txt
refused_file "a file of empty lines has no key" 1 "has no key" key add --file empty.txt
: >zero.txt
refused_file "an empty file has no key" 1 "has no key" key add --file zero.txt
refused_file "a missing file: refused with the system's reason" 1 "cannot read missing.txt: No such file" \
    key add --file missing.txt
refused_file "a folder is not a file of keys" 1 "cannot read" key add --file "$TMP"
IN=bad-late.txt
refused_file "key add - with a bad line on standard input: refused, naming standard input's line" 1 \
    "standard input line 5001" key add -
IN=/dev/null
refused_file "key add with neither keys nor a file: usage" 2 "usage" key add
refused_file "key add with keys and --file: usage" 2 "usage" key add k9 --file rules.txt
refused_file "key add a - b: - stands alone (usage)" 2 "stands alone" key add a - b
refused_file "key add - --file F: usage" 2 "stands alone\|usage" key add - --file rules.txt

# A scenario never reads a file (the server runs scenarios): refused at parse.
for line in "key add --file $TMP/rules.txt" "key add -"; do
    printf 'node add a\n%s\n' "$line" >s.ringsim
    before=$(state "$DB")
    "$BIN" --db "$DB" run s.ringsim </dev/null >"$O" 2>"$E"
    RC=$?
    if [ "$RC" -eq 2 ] && grep -q "s.ringsim:2: .*a scenario lists its keys" "$E" &&
        [ "$before" == "$(state "$DB")" ]; then pass; else
        fail "a scenario line \"$line\" is refused before anything runs" "$(ctx)"; fi
done
printf 'node add a\nkey add -- -\n' >s2.ringsim
rs --db "$TMP/scen.db" run s2.ringsim </dev/null
if [ "$RC" -eq 0 ] && stored_keys "$TMP/scen.db" | grep -qx -- '-'; then pass; else
    fail "a scenario's key add -- - is the key \"-\"" "$(ctx)"; fi

# Completion (completions/ringsim asks the binary): key add offers --file,
# and a file name after it.
rs complete -- key add --f </dev/null
if grep -qx -- "--file" "$O"; then pass; else fail "complete key add --f offers --file" "$(ctx)"; fi
rs complete -- key add --file "" </dev/null
if grep -qx "__files__" "$O"; then pass; else fail "complete key add --file asks for file names" "$(ctx)"; fi

# ---- a larger file: one operation, streamed, undone by revert ----
DB=$TMP/big.db
new_db "$DB"
seq -f 'user:%g' 1 20000 >big.txt
rs --db "$DB" key add --file big.txt </dev/null
if [ "$RC" -eq 0 ] && grep -qx "inserted 20000 keys, skipped 0 (operation 3)" "$O"; then pass; else
    fail "20000 keys from a file: one operation" "$(ctx)"; fi
rs --db "$DB" --json log 3 </dev/null
got=$(jsrun 'const j = J(A[0]); return `${j.type} ${j.subject}`' "$O")
expect="insert_keys 20000 keys"
if [ "$got" == "$expect" ]; then pass; else fail "log 3: the insert of 20000 keys" "$got"; fi
rs --db "$DB" revert 2 </dev/null
rs --db "$DB" --json stats </dev/null
if [ "$(jsrun 'return J(A[0]).keys' "$O")" == 0 ]; then pass; else fail "revert undoes the file's insert whole" "$(ctx)"; fi
rs --db "$DB" check </dev/null
if [ "$RC" -eq 0 ]; then pass; else fail "check replays the file's insert" "$(ctx)"; fi

finish
