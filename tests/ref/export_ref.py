#!/usr/bin/python3
"""export_ref.py - every `ringsim export --config` format over hostile node
names: the export means those names, or it is refused naming the node.

    export_ref.py RINGSIM MEMCACHED_TOOL|none

An export is code a user runs or pastes into production (issue 26).  Nodes
named with quotes, spaces, $(...), backticks, ';', '#', braces, every
Unicode line break (U+0085, U+2028, U+2029), C1 controls, U+FEFF, '=' and
'--' prefixes, leading and trailing spaces, the target's keywords (backup,
disabled, weight, server, Datacenter:, YAML settings), non-ASCII and
255-byte names, with weights and down states, are added to one database,
and each format is exported.  A refusal must name a node of the database
(that node is then removed and the export tried again; names every format
must take are listed in MUST_TAKE); what is finally written must be:

  nginx          read by `nginx -t` as one server per node whose address is
                 exactly the name (nginx resolves names: the only error
                 allowed is `host not found in upstream "NAME"` for the
                 node of that line, which is then dropped and nginx run
                 again);
  haproxy        taken by `haproxy -c`;
  twemproxy      taken by `nutcracker -t`, and its server lines read by
                 PyYAML as exactly "ADDR:W NAME";
  libmemcached   read by libmemcached's memcached_servers_parse
                 (tests/ref/import_memcached_tool) as exactly the names;
  envoy          read by PyYAML (and JSON) with every hash_key exactly the
                 name;
  cassandra      read by PyYAML as initial_token settings only, each the
                 node's tokens, each comment naming the node;
and every format with an importer is imported back into a fresh database
to the same names, weights and states as the format keeps them.  A
HAProxy import whose quoted addresses hold spaces, '#' and keywords is
exported again as haproxy (the same addresses back) and as the other
formats (which take an address from another format only when it is a
plain host:port).  The redis script is checked by `sh -n` and run against
a stand-in redis-cli first on PATH that logs its arguments one per line:
they must be exactly the intended names, hosts, ports and node ids, and a
node named `$(touch ...):7000` (added, or imported from CLUSTER NODES)
must be refused, never run.

Exit 0 pass, 1 fail, 77 when a reference program is missing (the build
makes that a failure when RINGSIM_REQUIRE_REFS is on).  Ends with a line
"N passed, N failed".

Checks docs/api.md, 'GET /api/export/config?format=F'.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

RINGSIM = None
MTOOL = None
TMP = None
NGINX = os.environ.get("NGINX", "/usr/sbin/nginx")
HAPROXY = os.environ.get("HAPROXY", "/usr/sbin/haproxy")
NUTCRACKER = os.environ.get("NUTCRACKER", "/usr/sbin/nutcracker")

PASSED = 0
FAILED = 0
MISSING = []


class Fail(Exception):
    pass


def check(cond, what):
    global PASSED
    if not cond:
        raise Fail(what)
    PASSED += 1


def hostile_names(tmp):
    """(name, weight, down): every class the issue lists."""
    names = [
        "a'b", 'a"b', "a b", "'", '"', "\\", "a\\b", "a\\",
        f"$(touch${{IFS}}{tmp}/pwned):7000", f"`touch {tmp}/pwned2`", "${HOME}",
        "a;b", "a#b", "#a", "a}b", "a{b", "{", "}", "a;}b{",
        "x\u0085y", "x\u2028y", "x\u2029y", "\u0085", "x\u0086y", "a\ufeffb",
        "x\u2028authenticator: AllowAllAuthenticator\u2029num_tokens: 9\u0085"
        "partitioner: org.example.Evil",
        "=a", "==========", "--SERVER=evil:11211", "--x", "-a", "--",
        " lead", "trail ", "  two  ",
        "backup", "disabled", "weight", "server", "down", "Datacenter:", "Datacenter: dc9",
        "Address", "Warning:", "Note:", "initial_token: 1", "num_tokens: 1",
        "ünïcødé", "日本", "😀", "x" * 255, "é" * 127,
        "10.0.0.1:80", "10.0.0.2:80 backup", "10.0.0.3:80 disabled", "10.0.0.4:80 #x",
        "a:b", "a:11211", "a:080", "[::1]:7000", "[::1]", "::1:7001", "cache-1.example:11212",
        "/tmp/mc.sock", "unix:/tmp/x.sock",
    ]
    out = []
    for i, n in enumerate(names):
        out.append((n, 3 if n.startswith("/") else 1 + i % 3, i % 5 == 4))
    return out


# Names each format must take (a refusal of them is a failure too).
MUST_TAKE = {
    "nginx": ["10.0.0.1:80", "backup", "a b", "a;}b{", "x\u2028y", "ünïcødé", "x" * 255],
    "haproxy": ["10.0.0.1:80", "backup", "disabled", "weight", "server", "x" * 255],
    "libmemcached": ["10.0.0.1:80", "backup", "[::1]:7000", "ünïcødé", "cache-1.example:11212",
                     "x\u2028y", "/tmp/mc.sock"],
    "twemproxy": ["10.0.0.1:80", "backup", "x\u0085y", "x\u2028y", "a#b", "a\"b", "ünïcødé"],
    "envoy": ["a b", "x\u0085y", "x\u2029y", "\\", "😀", "x" * 255],
    "cassandra": ["x\u2028authenticator: AllowAllAuthenticator\u2029num_tokens: 9\u0085"
                  "partitioner: org.example.Evil", "a#b", "x\u0085y", "ünïcødé"],
    "nodetool-ring": ["10.0.0.1:80", "backup", "x\u0085y", "ünïcødé"],
    "redis-nodes": ["10.0.0.1:80", "cache-1.example:11212"],
}


def rs(db, *args, ok=True):
    r = subprocess.run([RINGSIM, "--db", db] + [a if isinstance(a, bytes) else str(a).encode()
                                                for a in args],
                       capture_output=True, timeout=120)
    if ok and r.returncode != 0:
        raise Fail(f"ringsim {' '.join(map(str, args[:3]))}: "
                   f"{r.stderr.decode(errors='replace')}")
    return r


def add_nodes(db, nodes):
    """Adds the nodes; the names the name rules refuse (a name of spaces or
    format characters only) are left out and returned."""
    out = []
    for name, w, down in nodes:
        JOIN_ORDER.setdefault(name, len(JOIN_ORDER))
        r = rs(db, "node", "add", "--weight", str(w), *(["--down"] if down else []), "--", name,
               ok=False)
        if r.returncode != 0:
            check(b"node name" in r.stderr, f"node add {name!r}: {r.stderr!r}")
            out.append(name)
    return out


JOIN_ORDER = {}  # name -> when it joined: exports write the nodes in join order


def node_list(db):
    """The nodes of db in join order."""
    nodes = json.loads(rs(db, "--json", "node", "ls").stdout)["nodes"]
    return sorted(nodes, key=lambda n: JOIN_ORDER.get(n["name"], 0))


def export_until_taken(db, fmt):
    """Export; on a refusal check that it names a node of db (by the first
    200 bytes the message quotes), remove it and try again.  Returns the
    text and {name: message} of the refusals."""
    refused = {}
    while True:
        r = rs(db, "export", "--config", fmt, ok=False)
        if r.returncode == 0:
            return r.stdout, refused
        err = r.stderr
        check(err.count(b"\n") == 1, f"{fmt}: a refusal is one line on stderr: {err!r}")
        head = f"ringsim: export --config {fmt}: node \"".encode()
        check(err.startswith(head), f"{fmt}: the refusal names no node: {err!r}")
        rest = err[len(head):]
        names = [n["name"] for n in node_list(db)]
        hit = [n for n in names if rest.startswith(n.encode()[:200] + (b"\"" if len(n.encode())
                                                                      <= 200 else b""))]
        check(hit, f"{fmt}: the refusal names no node of the database: {err!r}")
        name = max(hit, key=len)
        refused[name] = err.decode(errors="replace").strip()
        rs(db, "node", "rm", "--", name)


def import_back(fmt, text, name=None):
    db = tempfile.mktemp(dir=TMP, suffix=".db")
    path = tempfile.mktemp(dir=TMP, suffix=".txt")
    with open(path, "wb") as f:
        f.write(text)
    r = rs(db, "--json", "import", "--format", fmt, *(["--name", name] if name else []), path,
           ok=False)
    check(r.returncode == 0, f"{fmt}: the export does not import back: "
          f"{r.stderr.decode(errors='replace')}\n{text.decode(errors='replace')[:3000]}")
    return json.loads(r.stdout)["import"]["nodes"], db


def kept(nodes, weights=True, states=True):
    return [(n["name"], float(n["weight"]) if weights else None,
             n.get("state", "up") if states else None) for n in nodes]


def same_nodes(fmt, want, got, weights=True, states=True, ordered=True):
    w, g = kept(want, weights, states), kept(got, weights, states)
    if not ordered:
        w, g = sorted(w), sorted(g)
    if w != g:
        diff = [(a, b) for a, b in zip(w, g) if a != b][:5]
        raise Fail(f"{fmt}: imported back {len(g)} nodes, not the {len(w)} exported: first "
                   f"differences (exported, imported) {diff}")
    check(True, "")


def must_take(fmt, refused):
    for n in MUST_TAKE.get(fmt, []):
        check(n not in refused, f"{fmt}: refuses {n!r}, which it can write: {refused.get(n)}")


def program(path):
    if not os.access(path, os.X_OK):
        MISSING.append(path)
        return False
    return True


# ---- the formats ----

def round_trip(base, fmt, algorithm=None, unit_weights=False, back=True, **keeps):
    """What every format's part does first: a copy of base (every weight 1
    when the algorithm does not honour weights; then the algorithm given),
    exported until taken (the names the format must take not refused) and,
    when the format has an importer (back), imported back into a fresh
    database to the same nodes as the format keeps them (keeps: same_nodes'
    weights, states, ordered).  Returns the text, the refusals, the nodes
    exported and the database imported into."""
    db = f"{TMP}/{fmt}.db"
    shutil.copy(base, db)
    if unit_weights:
        for n in node_list(db):
            if n["weight"] != 1:
                rs(db, "node", "weight", "--", n["name"], "1")
    if algorithm:
        rs(db, "config", "--algorithm", algorithm)
    text, refused = export_until_taken(db, fmt)
    must_take(fmt, refused)
    nodes = node_list(db)
    db2 = None
    if back:
        got, db2 = import_back(fmt, text)
        same_nodes(fmt, nodes, got, **keeps)
    return text, refused, nodes, db2


def part_nginx(base):
    text, refused, nodes, _ = round_trip(base, "nginx")
    if not program(NGINX):
        return "skipped nginx -t (no nginx)"
    order = [n["name"] for n in nodes]  # no backup: the servers in join order
    lines = text.decode().split("\n")
    server_lines = [i for i, ln in enumerate(lines) if ln.startswith("    server ")]
    check(len(server_lines) == len(order), "nginx: one server line per node")
    by_line = dict(zip(server_lines, order))
    ntmp = tempfile.mkdtemp(dir=TMP)
    unresolved = 0
    while True:
        conf = (f"pid {ntmp}/nginx.pid;\nerror_log {ntmp}/error.log emerg;\nevents {{}}\n"
                "http {\n" + "\n".join(lines) + "\n}\n")
        with open(f"{ntmp}/nginx.conf", "w") as f:
            f.write(conf)
        r = subprocess.run([NGINX, "-t", "-q", "-c", f"{ntmp}/nginx.conf", "-p", ntmp],
                           capture_output=True, text=True, timeout=60)
        if r.returncode == 0:
            break
        # host not found in upstream "NAME" in FILE:LINE (4 lines before the upstream's)
        msg = r.stderr
        at = msg.rfind(f"{ntmp}/nginx.conf:")
        check("host not found in upstream \"" in msg and at >= 0, f"nginx -t: {msg}")
        line = int(msg[at:].split(":")[1].split()[0]) - 5
        name = by_line.get(line)
        check(name is not None and f"host not found in upstream \"{name}\" in" in msg,
              f"nginx -t reads line {line + 1} as another name than {name!r}: {msg}")
        lines[line] = ""
        unresolved += 1
    return (f"{len(nodes)} servers read back, nginx -t reads each name whole "
            f"({unresolved} not resolvable), {len(refused)} refused")


def haproxy_c(text):
    if not program(HAPROXY):
        return False
    path = tempfile.mktemp(dir=TMP, suffix=".cfg")
    with open(path, "wb") as f:
        # init-addr none: a server whose name does not resolve here is still checked
        f.write(b"defaults\n    mode http\n    timeout connect 1s\n    timeout client 1s\n"
                b"    timeout server 1s\n    default-server init-addr last,libc,none\n" + text)
    r = subprocess.run([HAPROXY, "-c", "-f", path], capture_output=True, text=True, timeout=60)
    check(r.returncode != 1, f"haproxy -c refuses the export: {r.stdout}{r.stderr}\n"
          + text.decode(errors="replace"))
    return True


def part_haproxy(base):
    text, refused, nodes, _ = round_trip(base, "haproxy")
    ran = haproxy_c(text)
    return f"{len(nodes)} servers read back{', haproxy -c takes it' if ran else ''}, " \
           f"{len(refused)} refused"


HAPROXY_IMPORT = b"""defaults
    mode http
    timeout connect 1s
    timeout client 1s
    timeout server 1s
backend b
    balance uri
    hash-type consistent
    server s1 "10.0.0.1:80 backup" weight 3
    server s2 '10.0.0.2:80 #x' weight 2
    server s3 10.0.0.3:80\\ disabled weight 4
    server s4 "127.0.0.1:81" weight 5
    server s5 '127.0.0.1:82 weight 9' weight 1 disabled
"""


def part_haproxy_addresses():
    """Addresses HAProxy takes quoted: written back quoted, and to the other
    formats only when they are plain host:port."""
    if not program(HAPROXY):
        return "skipped (no haproxy)"
    path = f"{TMP}/in.cfg"
    with open(path, "wb") as f:
        f.write(HAPROXY_IMPORT)
    r = subprocess.run([HAPROXY, "-c", "-f", path], capture_output=True, text=True, timeout=60)
    check(r.returncode != 1, f"haproxy -c refuses the test's own text: {r.stdout}{r.stderr}")
    db = f"{TMP}/haddr.db"
    imp = json.loads(rs(db, "--json", "import", "--format", "haproxy", path).stdout)["import"]
    addrs = {n["name"]: n.get("address") for n in imp["nodes"]}
    for n in imp["nodes"]:
        JOIN_ORDER.setdefault(n["name"], len(JOIN_ORDER))
    check(addrs["s1"] == "10.0.0.1:80 backup", f"imported addresses {addrs}")
    text = rs(db, "export", "--config", "haproxy").stdout
    haproxy_c(text)
    got, _ = import_back("haproxy", text)
    check({n["name"]: n.get("address") for n in got} == addrs,
          f"haproxy: addresses {[(n['name'], n.get('address')) for n in got]} came back "
          f"from {addrs}\n{text.decode()}")
    same_nodes("haproxy (quoted addresses)", node_list(db), got)
    check(all(n.get("backup") is not True for n in got), f"haproxy: a server became a backup:"
          f"\n{text.decode()}")
    # the other formats: the HAProxy address is not theirs
    tw = rs(db, "export", "--config", "twemproxy").stdout
    servers = yaml_servers(tw)
    for s in servers:
        check(" backup" not in s and "#" not in s and " weight" not in s,
              f"twemproxy took a HAProxy address: {s!r}")
    check("127.0.0.1:81:5 s4" in servers, f"twemproxy: the plain address 127.0.0.1:81 of s4 "
          f"is not kept: {servers}")
    if program(NUTCRACKER):
        nutcracker_t(tw)
    got, _ = import_back("twemproxy", tw)
    same_nodes("twemproxy (after a haproxy import)", node_list(db), got, states=False)
    env = rs(db, "export", "--config", "envoy").stdout
    for ep in json.loads(env)["load_assignment"]["endpoints"][0]["lb_endpoints"]:
        a = ep["endpoint"]["address"]["socket_address"]["address"]
        check(" " not in a and "#" not in a, f"envoy took a HAProxy address: {a!r}")
    return "5 quoted addresses (space, '#', keywords) written back quoted, haproxy -c takes " \
           "them; twemproxy and envoy keep only the plain one"


def yaml_servers(text):
    import yaml
    doc = yaml.safe_load(text.decode())
    check(isinstance(doc, dict) and len(doc) == 1, f"twemproxy: not one pool: {doc!r}")
    return list(doc.values())[0]["servers"]


def nutcracker_t(text):
    path = tempfile.mktemp(dir=TMP, suffix=".yml")
    with open(path, "wb") as f:
        f.write(text)
    r = subprocess.run([NUTCRACKER, "-t", "-c", path], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, f"nutcracker -t refuses the export: {r.stdout}{r.stderr}\n"
          + text.decode(errors="replace"))


def part_twemproxy(base):
    text, refused, nodes, _ = round_trip(base, "twemproxy", states=False)
    servers = yaml_servers(text)
    check([s.split(" ", 1)[1] for s in servers] == [n["name"] for n in nodes],
          f"twemproxy: PyYAML reads the server names {[s.split(' ', 1)[1] for s in servers]}")
    ran = program(NUTCRACKER)
    if ran:
        nutcracker_t(text)
    return f"{len(nodes)} servers read back{', nutcracker -t takes it' if ran else ''}, " \
           f"{len(refused)} refused"


def part_libmemcached(base):
    text, refused, nodes, _ = round_trip(base, "libmemcached", states=False)
    if MTOOL == "none" or not os.access(MTOOL, os.X_OK):
        MISSING.append("import_memcached_tool (libmemcached-dev)")
        return "skipped memcached_servers_parse (no libmemcached)"
    tpath, kpath = f"{TMP}/mc.txt", f"{TMP}/mc.keys"
    with open(tpath, "wb") as f:
        f.write(text)
    with open(kpath, "wb") as f:
        f.write(b"k\n")
    r = subprocess.run([MTOOL, "list", tpath, kpath], capture_output=True, timeout=60)
    check(r.returncode == 0, f"memcached_servers_parse: {r.stderr!r}")
    out = r.stdout.decode().split("\n")
    n = int(out[0])
    theirs = []
    for ln in out[1:1 + n]:
        h, p = ln.rsplit(" ", 1)
        theirs.append(h if p in ("11211", "0") else f"{h}:{p}")
    check(theirs == [nd["name"] for nd in nodes],
          f"libmemcached reads the servers {theirs}, not {[nd['name'] for nd in nodes]}")
    return f"{len(nodes)} servers, memcached_servers_parse reads the names, {len(refused)} refused"


def part_envoy(base):
    import yaml
    text, refused, nodes, _ = round_trip(base, "envoy")
    for doc in (json.loads(text), yaml.safe_load(text.decode())):
        eps = doc["load_assignment"]["endpoints"][0]["lb_endpoints"]
        keys = [e["metadata"]["filter_metadata"]["envoy.lb"]["hash_key"] for e in eps]
        check(keys == [n["name"] for n in nodes],
              f"envoy: hash keys read as {[k for k, n in zip(keys, nodes) if k != n['name']]}")
        check(set(doc) == {"name", "type", "lb_policy", "load_assignment"},
              f"envoy: settings {sorted(doc)}")
    return f"{len(nodes)} hosts, JSON and PyYAML read every hash_key, {len(refused)} refused"


def java_property(v):
    """A value as java.util.Properties.load reads it: \\uXXXX (UTF-16) and
    \\c for c."""
    out, i = [], 0
    while i < len(v):
        if v[i] == "\\" and v[i + 1] == "u":
            out.append(chr(int(v[i + 2:i + 6], 16)))
            i += 6
        elif v[i] == "\\":
            out.append(v[i + 1])
            i += 2
        else:
            out.append(v[i])
            i += 1
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16")


def part_cassandra(base):
    import yaml
    text, refused, nodes, _ = round_trip(base, "cassandra", "cassandra", back=False)
    whole = yaml.safe_load(text.decode())
    check(set(whole) == {"initial_token"}, f"cassandra: PyYAML reads settings {sorted(whole)}")
    lines = text.decode().split("\n")
    # five lines a node: its name, initial_token, and its
    # cassandra-rackdc.properties as comments (dc=, rack=)
    check(len(lines) == 5 * len(nodes) + 1, "cassandra: five lines per node")
    for i, n in enumerate(nodes):
        comment, setting = lines[5 * i], lines[5 * i + 1]
        loc = dict(n.get("location") or [])
        want = [("dc", loc.get("dc", "datacenter1")), ("rack", loc.get("rack", "rack1"))]
        got = [tuple(l[4:].split("=", 1)) for l in lines[5 * i + 3:5 * i + 5]]
        check(all(l.isascii() for l in lines[5 * i + 2:5 * i + 5]),
              f"cassandra: node {n['name']!r}'s properties are not pure ASCII")
        check(lines[5 * i + 2] == "# cassandra-rackdc.properties:" and
              [(k, java_property(v)) for k, v in got] == want,
              f"cassandra: node {n['name']!r}'s properties {got!r}, not {want!r}")
        check(comment.startswith("# "), f"cassandra: {comment!r}")
        named = yaml.safe_load(comment[2:]) if comment[2:3] == '"' else comment[2:]
        check(named == n["name"], f"cassandra: the comment {comment!r} names {named!r}, "
              f"not {n['name']!r}")
        one = yaml.safe_load(comment + "\n" + setting)
        check(list(one) == ["initial_token"] and str(one["initial_token"]).split(",") ==
              n["tokens"], f"cassandra: node {n['name']!r} reads as {one!r}")
    return f"{len(nodes)} nodes, PyYAML reads initial_token only, each comment names its " \
           f"node, {len(refused)} refused"


def part_nodetool(base):
    text, refused, nodes, db2 = round_trip(base, "nodetool-ring", "cassandra", weights=False,
                                           ordered=False)
    back = {n["name"]: sorted(n["tokens"], key=int) for n in node_list(db2)}
    check(back == {n["name"]: sorted(n["tokens"], key=int) for n in nodes},
          "nodetool-ring: the tokens differ after the round trip")
    return f"{len(nodes)} nodes and their tokens read back, {len(refused)} refused"


def part_redis_nodes(base):
    # redis does not honour weights
    text, refused, nodes, db2 = round_trip(base, "redis-nodes", "redis", unit_weights=True,
                                           weights=False, states=False)
    back = {n["name"]: n.get("slots") for n in node_list(db2)}
    check(back == {n["name"]: n.get("slots") for n in nodes}, "redis-nodes: the slots differ")
    return f"{len(nodes)} masters and their slots read back, {len(refused)} refused"


# ---- redis: the script, run against a stand-in redis-cli ----

STUB = r'''#!/bin/sh
# A stand-in redis-cli: logs its arguments one per line, after a line
# "-- call", and answers what export --config redis's script asks (a node's
# id: the SHA-1 of HOST:PORT; cluster nodes: the ids asked so far).
log=$RINGSIM_STUB_LOG
{ echo '-- call'; for a in "$@"; do printf '%s\n' "$a"; done; } >>"$log"
if [ "$1" = --cluster ] && [ "$2" = check ]; then
    echo '[OK] All nodes agree about slots configuration.'
elif [ $# -eq 6 ] && [ "$1" = -h ] && [ "$3" = -p ] && [ "$5" = cluster ]; then
    id=$(printf '%s:%s' "$2" "$4" | sha1sum | cut -d' ' -f1)
    case $6 in
    myid)
        echo "$id"
        echo "$id 127.0.0.1:1@2 master - 0 0 1 connected" >>"$log.ids"
        ;;
    nodes) cat "$log.ids" 2>/dev/null ;;
    esac
fi
exit 0
'''

# A stand-in sleep: the polls need no wait against the stand-in; a script
# that polls 300 times for a state that never comes is stopped (a normal
# run polls 3 times per agree).
SLEEP = """#!/bin/sh
n=$(cat "$RINGSIM_STUB_LOG.sleeps" 2>/dev/null || echo 0)
echo $((n + 1)) >"$RINGSIM_STUB_LOG.sleeps"
[ "$n" -lt 300 ] || kill "$PPID"
"""

CLUSTER = """0000000000000000000000000000000000000001 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460
0000000000000000000000000000000000000002 127.0.0.1:7001@17001 master - 0 0 2 connected 5461-10922
0000000000000000000000000000000000000003 127.0.0.1:7002@17002 master - 0 0 3 connected 10923-16383
"""


def run_script(script, tag):
    """sh -n, then the script with the stand-ins first on PATH: the calls
    (each a list of arguments) and whether a side effect happened."""
    d = tempfile.mkdtemp(dir=TMP, prefix=f"redis-{tag}-")
    with open(f"{d}/moves.sh", "wb") as f:
        f.write(script)
    r = subprocess.run(["sh", "-n", f"{d}/moves.sh"], capture_output=True, text=True)
    check(r.returncode == 0, f"redis {tag}: sh -n: {r.stderr}")
    os.mkdir(f"{d}/bin")
    with open(f"{d}/bin/redis-cli", "w") as f:
        f.write(STUB)
    with open(f"{d}/bin/sleep", "w") as f:  # agree() and knows() poll: no need to wait here
        f.write(SLEEP)
    os.chmod(f"{d}/bin/redis-cli", 0o755)
    os.chmod(f"{d}/bin/sleep", 0o755)
    env = dict(os.environ, PATH=f"{d}/bin:" + os.environ["PATH"], RINGSIM_STUB_LOG=f"{d}/log")
    try:
        r = subprocess.run(["sh", f"{d}/moves.sh"], capture_output=True, text=True, env=env,
                           timeout=300, cwd=d)
    except subprocess.TimeoutExpired:
        raise Fail(f"redis {tag}: the script did not end in 300 s (a side effect: "
                   f"{os.path.exists(f'{TMP}/pwned')})")
    check(r.returncode == 0, f"redis {tag}: the script fails (a side effect: "
          f"{os.path.exists(f'{TMP}/pwned')}): {r.stdout[-500:]}{r.stderr[-500:]}")
    with open(f"{d}/log", encoding="utf-8") as f:
        calls = [c.split("\n")[:-1] for c in f.read().split("-- call\n")[1:]]
    return calls


def nid(h, p):
    return hashlib.sha1(f"{h}:{p}".encode()).hexdigest()


def part_redis():
    pwn = f"{TMP}/pwned"
    evil = f"$(touch${{IFS}}{pwn}):7000"
    refusals = 0

    def base(extra=""):
        db = tempfile.mktemp(dir=TMP, suffix=".db")
        path = f"{db}.nodes"
        with open(path, "w") as f:
            f.write(CLUSTER + extra)
        rs(db, "import", "--format", "redis-nodes", path)
        return db
    # 1. a node added with a name that is a command
    for name in [evil, f"`touch {pwn}`:7000", "a'b:7000", "a b:7000", "a;b:7000",
                 "x\u2028y:7000", "-h:7000", "10.0.0.1:07000"]:
        db = base()
        rs(db, "node", "add", "--", name)
        r = rs(db, "export", "--config", "redis", ok=False)
        if r.returncode == 0:
            calls = run_script(r.stdout, "added")
            check(not os.path.exists(pwn), f"redis: the script for node {name!r} ran a command")
            raise Fail(f"redis: node {name!r} reached the script: {calls}")
        check(f"node \"{name}\"" in r.stderr.decode(errors="replace") and
              "HOST:PORT" in r.stderr.decode(), f"redis: the refusal of {name!r}: {r.stderr!r}")
        refusals += 1
    # 2. imported from CLUSTER NODES, then gone (the script would del-node it)
    line = f"0000000000000000000000000000000000000009 {evil}@17000 master - 0 0 9 connected\n"
    db = base(line)
    rs(db, "node", "rm", "--", evil)
    r = rs(db, "export", "--config", "redis", ok=False)
    if r.returncode == 0:
        run_script(r.stdout, "imported")
        check(not os.path.exists(pwn), "redis: the script for an imported master ran a command")
        raise Fail("redis: an imported master named as a command reached the script")
    check(f"\"{evil}\"" in r.stderr.decode(), f"redis: the refusal: {r.stderr!r}")
    refusals += 1
    # 3. names that are host:port, quoted and passed as they are
    db = base()
    added = ["::1:7005", "node_a-1.example:7006", "10.0.0.9:7007"]
    for n in added:
        rs(db, "node", "add", "--", n)
    rs(db, "node", "rm", "--", "127.0.0.1:7002")
    script = rs(db, "export", "--config", "redis").stdout
    calls = run_script(script, "names")
    check(not os.path.exists(pwn), "redis: a side effect")
    masters = ["127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"] + added
    ids = {nid(*m.rsplit(":", 1)): m for m in masters}
    entry = "127.0.0.1:7000"
    seen = {"add-node": [], "del-node": [], "reshard": 0}
    for c in calls:
        if c[:1] == ["-h"]:
            check(len(c) == 6 and f"{c[1]}:{c[3]}" in masters and c[2] == "-p" and
                  c[4:5] == ["cluster"] and c[5] in ("myid", "nodes"), f"redis: a call {c}")
        elif c[:2] == ["--cluster", "check"]:
            check(c == ["--cluster", "check", entry], f"redis: {c}")
        elif c[:2] == ["--cluster", "add-node"]:
            check(len(c) == 4 and c[3] == entry, f"redis: {c}")
            seen["add-node"].append(c[2])
        elif c[:2] == ["--cluster", "del-node"]:
            check(len(c) == 4 and c[2] == entry and c[3] in ids, f"redis: {c}")
            seen["del-node"].append(ids[c[3]])
        elif c[:2] == ["--cluster", "reshard"]:
            check(len(c) == 10 and c[2] == entry and c[3] == "--cluster-from" and c[4] in ids and
                  c[5] == "--cluster-to" and c[6] in ids and c[7] == "--cluster-slots" and
                  c[8].isdigit() and c[9] == "--cluster-yes", f"redis: {c}")
            seen["reshard"] += 1
        else:
            raise Fail(f"redis: an unexpected call {c}")
    check(sorted(seen["add-node"]) == sorted(added), f"redis: add-node for {seen['add-node']}")
    check(seen["del-node"] == ["127.0.0.1:7002"], f"redis: del-node for {seen['del-node']}")
    check(seen["reshard"] > 0, "redis: no reshard")
    return f"{refusals} names refused (added, or imported then gone); sh -n and a stand-in " \
           f"redis-cli: {len(calls)} calls with exactly the intended arguments " \
           f"({seen['reshard']} reshards)"


def main():
    global RINGSIM, MTOOL, TMP
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    RINGSIM, MTOOL = os.path.abspath(sys.argv[1]), sys.argv[2]
    TMP = tempfile.mkdtemp(prefix="ringsim-export-ref-")
    failed = 0
    try:
        try:
            import yaml  # noqa: F401
        except ImportError:
            MISSING.append("PyYAML (python3-yaml)")
        base = f"{TMP}/base.db"
        left = add_nodes(base, hostile_names(TMP))
        print(f"export_ref: {len(hostile_names(TMP)) - len(left)} nodes "
              f"({len(left)} names the name rules refuse: {left})")
        parts = [("nginx", part_nginx), ("haproxy", part_haproxy),
                 ("haproxy addresses", part_haproxy_addresses),
                 ("libmemcached", part_libmemcached), ("redis", part_redis),
                 ("redis-nodes", part_redis_nodes), ("nodetool-ring", part_nodetool)]
        if "PyYAML (python3-yaml)" not in MISSING:
            parts += [("twemproxy", part_twemproxy), ("envoy", part_envoy),
                      ("cassandra", part_cassandra)]
        only = os.environ.get("EXPORT_REF_PARTS")  # e.g. "nginx,redis" while working on one
        for name, fn in parts:
            if only and name not in only.split(","):
                continue
            try:
                res = fn(base) if fn.__code__.co_argcount else fn()
                print(f"export_ref {name}: {res}")
            except Exception as e:  # noqa: BLE001 -- report and go on to the next part
                print(f"export_ref {name}: FAIL: {type(e).__name__}: {e}")
                failed += 1
        if os.path.exists(f"{TMP}/pwned") or os.path.exists(f"{TMP}/pwned2"):
            print("export_ref: FAIL: a node name ran a command")
            failed += 1
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print(f"{PASSED} passed, {failed} failed")
    if failed:
        return 1
    if MISSING:
        print("missing reference programs: " + ", ".join(sorted(set(MISSING))))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
