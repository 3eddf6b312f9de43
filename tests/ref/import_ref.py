#!/usr/bin/python3
"""import_ref.py - each importer against the real program given the SAME text.

    import_ref.py IMPORT_TOOL MEMCACHED_TOOL|none [RINGSIM]

For every part, ringsim imports a text (tests/ref/import_tool: import_parse,
then the imported algorithm places keys on the imported nodes) and the real
program reads that very text:

  nginx         an nginx.conf with several upstreams written as people write
                them (comments, quotes, tabs, a backup before `hash`, other
                directives) is started (nginx_ref.py's harness: every server
                refuses, so the 502 names the server nginx chose); each key's
                $upstream_addr must be ringsim's owner after import.
  libmemcached  random server lists (memcached_servers_parse) and
                configuration strings (memcached()) with random hosts, ports,
                weights and options; tests/ref/import_memcached_tool asks
                libmemcached with KETAMA_WEIGHTED which server each key goes
                to; the servers must be the imported nodes, in order, and
                every key's server ringsim's owner.
  verdicts      fixed server lines given to `nginx -t`, `haproxy -c` and
                memcached_servers_parse: ringsim takes what the program
                takes and refuses what it refuses (nginx: the same message
                on the same line; libmemcached: the same servers and owners).
  redis         a real Redis cluster (3 masters, 3 replicas, then a reshard
                that splits slot ranges): its own CLUSTER NODES output is
                imported; every key is sent (GET) to one master, which
                answers it or MOVED to another: the master that answers must
                be ringsim's owner, and each master's replicas those Redis
                lists.
  cassandra     random rings written as `nodetool ring` prints them (two
                datacenters, vnodes); the DataStax driver's token map on those
                tokens names each key's first replica: it must be ringsim's
                owner.

With RINGSIM (the ringsim binary), every text also makes the round trip
through the engine: `ringsim import` of the same text into a database
holding the same keys must place every key on the owner above (the real
program's), and `ringsim export --config` of that state, imported into a
fresh database, must place them on the same owners again.

Exit 0 pass, 1 fail, 77 when no part could run.  Fixed seeds; a failure
prints the seed and the text.

Checks docs/api.md, 'Importing a real cluster', 'What the parsers read'.
"""
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

TOOL = None
RINGSIM = None
TMP = None
REPORT = []
ROUND_TRIPS = {}  # format -> texts that made the round trip

# The format `ringsim export --config` writes for each import format.
EXPORT_AS = {"nginx": "nginx", "haproxy": "haproxy", "libmemcached": "libmemcached",
             "twemproxy": "twemproxy", "envoy": "envoy", "nodetool-ring": "nodetool-ring",
             "redis-nodes": "redis-nodes"}


def ringsim_key_ok(k):
    try:
        t = k.decode()
    except UnicodeDecodeError:
        return False
    return 1 <= len(k) <= 255 and not any(ord(c) < 0x20 or ord(c) == 0x7F for c in t)


def engine_owners(db, fmt, name, tpath, keys):
    """ringsim import of the text at tpath into db (which gets the keys
    first); the owner of every key, and the import object."""
    def rs(*args):
        r = subprocess.run([RINGSIM, "--db", db, *args], capture_output=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"ringsim {' '.join(map(str, args[:3]))}: "
                               f"{r.stderr.decode(errors='replace')}")
        return r.stdout
    rs("key", "add", "--", *keys)
    cmd = ["--json", "import"] + (["--format", fmt] if fmt != "auto" else []) \
        + (["--name", name] if name else []) + [tpath]
    imp = json.loads(rs(*cmd))["import"]
    owners = {k["key"].encode(): k["node"] for k in json.loads(rs("--json", "key", "ls"))["keys"]}
    return owners, imp


def round_trip(fmt, name, tpath, keys, mine):
    """import -> the real program's owners -> export -> import -> the same."""
    want = dict(zip(keys, mine))
    keys = [k for k in dict.fromkeys(keys) if ringsim_key_ok(k)]
    rt = tempfile.mkdtemp(prefix="rt-", dir=TMP)
    try:
        got, imp = engine_owners(f"{rt}/a.db", fmt, name, tpath, keys)
        for k in keys:
            if got.get(k) != want[k]:
                if os.environ.get("RINGSIM_RT_KEEP"):
                    shutil.copy(tpath, os.environ["RINGSIM_RT_KEEP"] + ".text")
                    with open(os.environ["RINGSIM_RT_KEEP"] + ".keys", "wb") as f:
                        f.write(b"".join(x + b"\n" for x in keys))
                raise RuntimeError(f"round trip {fmt} {name}: `ringsim import` puts {k!r} on "
                                   f"{got.get(k)!r}, the real program on {want[k]!r}")
        out = EXPORT_AS[imp["format"]]
        r = subprocess.run([RINGSIM, "--db", f"{rt}/a.db", "export", "--config", out],
                           capture_output=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"export --config {out}: {r.stderr.decode(errors='replace')}")
        with open(f"{rt}/exported", "wb") as f:
            f.write(r.stdout)
        again, imp2 = engine_owners(f"{rt}/b.db", imp["format"], None, f"{rt}/exported", keys)
        if [n["name"] for n in imp2["nodes"]] != [n["name"] for n in imp["nodes"]] and \
                imp["format"] != "nodetool-ring":  # nodetool lists by token
            raise RuntimeError(f"round trip {out}: nodes {[n['name'] for n in imp2['nodes']]}"
                               f" came back from {[n['name'] for n in imp['nodes']]}\n"
                               + r.stdout.decode(errors="replace"))
        for k in keys:
            if again.get(k) != want[k]:
                raise RuntimeError(f"round trip {out}: after export and import {k!r} goes to "
                                   f"{again.get(k)!r}, not {want[k]!r}\n"
                                   + r.stdout.decode(errors="replace"))
        ROUND_TRIPS[imp["format"]] = ROUND_TRIPS.get(imp["format"], 0) + 1
    finally:
        shutil.rmtree(rt, ignore_errors=True)


def ringsim_owners(fmt, name, text, keys):
    tpath = os.path.join(TMP, "text")
    kpath = os.path.join(TMP, "keys")
    with open(tpath, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())
    with open(kpath, "wb") as f:
        f.write(b"".join(k + b"\n" for k in keys))
    r = subprocess.run([TOOL, fmt, name or "-", tpath, kpath], capture_output=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"import_tool {fmt}: {r.stdout.decode()} {r.stderr.decode()}")
    out = r.stdout.split(b"\n")[:-1]
    if len(out) != len(keys):
        raise RuntimeError(f"import_tool answered {len(out)} of {len(keys)} keys")
    mine = [o.decode() for o in out]
    if RINGSIM:
        round_trip(fmt, name, tpath, keys, mine)
    return mine


def ringsim_import(fmt, name, text):
    tpath = os.path.join(TMP, "text")
    with open(tpath, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())
    r = subprocess.run([TOOL, fmt, name or "-", tpath], capture_output=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"import_tool {fmt}: {r.stdout.decode()} {r.stderr.decode()}")
    return json.loads(r.stdout)


# ---- nginx ----

def part_nginx():
    import nginx_ref as ng
    if not os.access(ng.NGINX, os.X_OK):
        return "skipped (no nginx)"
    ipv6 = ng.have_ipv6()
    seeds = [11, 12, 13, 14]
    ups = []
    for seed in seeds:
        rng = random.Random(seed)
        servers = ng.make_servers(rng, rng.randint(2, 20) + 1, ipv6)
        ups.append((rng, servers[:-1], servers[-1]))  # the last one: a backup

    def write_conf(tmp, port, _upstreams):
        """The same harness as nginx_ref.py, upstreams written as people do."""
        lines = [
            "# ringsim import reference", "master_process off;", f"pid {tmp}/nginx.pid;",
            f"error_log {tmp}/error.log emerg;", "events { worker_connections 64; }",
            "http {", "  access_log off;  # quiet",
            f"  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy;",
            f"  fastcgi_temp_path {tmp}/fastcgi; uwsgi_temp_path {tmp}/uwsgi;",
            f"  scgi_temp_path {tmp}/scgi;",
        ]
        for u, (rng, servers, backup) in enumerate(ups):
            lines.append(f"  upstream \"u{u}\" {{  # upstream {u}")
            lines.append(f"    server {backup[0]} backup max_fails=0;")
            lines.append("\thash   $arg_k   consistent ;")
            lines.append("    keepalive 4;")
            for name, w, _ in servers:
                q = rng.choice(["", "'", '"'])
                wt = f"weight={w}" if (w != 1 or rng.random() < 0.5) else ""
                lines.append(f"    server {q}{name}{q} {wt} max_fails=0 fail_timeout=10s;"
                             + rng.choice(["", "  # a server"]))
            lines.append("  }")
        lines += ["  server {", f"    listen 127.0.0.1:{port};",
                  "    keepalive_requests 1000000;", "    proxy_next_upstream off;",
                  "    proxy_connect_timeout 2s; proxy_read_timeout 2s; proxy_send_timeout 2s;"]
        for u in range(len(ups)):
            lines += [f"    location = /u{u} {{", f"      proxy_pass http://u{u};",
                      "      add_header X-Upstream $upstream_addr always;",
                      "      add_header X-Key $arg_k always;", "    }"]
        lines += ["  }", "}"]
        path = f"{tmp}/nginx.conf"
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    ng.write_conf = write_conf
    tmp = tempfile.mkdtemp(prefix="ringsim-import-nginx-")
    proc = None
    try:
        proc, port = ng.start_nginx(tmp, None)
        with open(f"{tmp}/nginx.conf", "rb") as f:
            text = f.read()
        checked = nservers = 0
        for u, (rng, servers, _b) in enumerate(ups):
            keys = [ng.wire_key(rng, i) for i in range(1000)]
            by_addr = {a: name for name, _, addrs in servers for a in addrs}
            theirs = ng.ask_nginx(port, f"/u{u}", keys)
            mine = ringsim_owners("auto", f"u{u}", text, keys)
            for k, (addr, _), m in zip(keys, theirs, mine):
                if by_addr.get(addr) != m:
                    raise RuntimeError(f"nginx seed {seeds[u]} upstream u{u}: key {k!r} goes "
                                       f"to {m!r} after import, nginx chose {addr!r}\n"
                                       + text.decode())
                checked += 1
            nservers += len(servers)
        return f"{checked} keys, {len(ups)} upstreams, {nservers} servers (+{len(ups)} backups)"
    finally:
        if proc:
            ng.stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)


# ---- libmemcached ----

def mc_host(rng):
    k = rng.randrange(4)
    if k == 0:
        return "10.%d.%d.%d" % (rng.randrange(256), rng.randrange(256), rng.randrange(1, 255))
    if k == 1:
        return "cache-%d.example.com" % rng.randrange(1000)
    if k == 2:
        return "mc%d" % rng.randrange(100)
    return "host_%d-a" % rng.randrange(1000)


def mc_text(rng, string):
    n = rng.randint(1, 40)
    parts, used = [], set()
    while len(parts) < n:
        h = mc_host(rng)
        port = rng.choice([11211, 11211, rng.randint(1, 65535)])
        w = rng.choice([1, 1, 2, 3, rng.randint(1, 100)])
        if (h, port) in used:
            continue
        used.add((h, port))
        if string:
            s = f"--SERVER={h}"
            if port != 11211 or rng.random() < 0.5:
                s += f":{port}"
            if w != 1 or rng.random() < 0.3:
                s += f"/?{w}"
            parts.append(s)
        else:
            s = h
            if port != 11211 or rng.random() < 0.5 or w != 1:
                s += f":{port}"
                if w != 1 or rng.random() < 0.3:
                    s += rng.choice([":", " "]) + str(w)
            parts.append(s)
    if string:
        for opt in ["--BINARY-PROTOCOL", "--DISTRIBUTION=consistent", "--TCP-NODELAY",
                    "--CONNECT-TIMEOUT=100"]:
            if rng.random() < 0.3:
                if opt.startswith("--DISTRIBUTION") and rng.random() < 0.3:
                    opt += "," + rng.choice(["MD5", "CRC", "FNV1A_32"])
                parts.insert(rng.randrange(len(parts) + 1), opt)
        if rng.random() < 0.4:  # the key hash, before the continuum is built
            h = rng.choice(["crc", "MD5", "FNV1_64", "fnv1a_64", "FNV1_32", "FNV1A_32",
                            "MURMUR", "JENKINS"])
            parts.insert(0, f"--HASH={h}")
        return " ".join(parts)
    return "".join(p + (rng.choice([",", ", "]) if i + 1 < len(parts) else "")
                   for i, p in enumerate(parts))


def part_libmemcached(mtool):
    if mtool == "none" or not os.access(mtool, os.X_OK):
        return "skipped (no libmemcached)"
    checked = texts = nservers = 0
    for seed in range(200):
        rng = random.Random(seed)
        string = seed % 2 == 1
        text = mc_text(rng, string)
        keys = [("k%d-%x" % (i, rng.getrandbits(40))).encode() for i in range(300)]
        tpath, kpath = os.path.join(TMP, "mctext"), os.path.join(TMP, "mckeys")
        with open(tpath, "w") as f:
            f.write(text)
        with open(kpath, "wb") as f:
            f.write(b"".join(k + b"\n" for k in keys))
        r = subprocess.run([mtool, "string" if string else "list", tpath, kpath],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"libmemcached seed {seed}: {r.stderr}\n{text}")
        out = r.stdout.split("\n")
        n = int(out[0])
        servers = [tuple(x.split(" ")) for x in out[1:1 + n]]
        pos = [int(x) for x in out[1 + n:1 + n + len(keys)]]
        imp = ringsim_import("auto", None, text)
        names = [nd["name"] for nd in imp["nodes"]]
        want = [h if p == "11211" else f"{h}:{p}" for h, p in servers]
        if names != want or imp["format"] != "libmemcached":
            raise RuntimeError(f"libmemcached seed {seed}: imported {names}, libmemcached "
                               f"holds {want}\n{text}")
        mine = ringsim_owners("libmemcached", None, text, keys)
        for k, p, m in zip(keys, pos, mine):
            if want[p] != m:
                raise RuntimeError(f"libmemcached seed {seed} ({'string' if string else 'list'})"
                                   f": key {k!r} -> {m!r} after import, libmemcached says "
                                   f"{want[p]!r}\n{text}")
            checked += 1
        texts += 1
        nservers += n
    return f"{checked} keys, {texts} texts (half lists, half strings), {nservers} servers"


# ---- verdicts: texts the real program refuses or takes, and ringsim alike ----

NGINX_SERVERS = [  # (the server's words, whether ringsim's message is nginx's own)
    "10.0.0.1:99999", "http://10.0.0.2:1", "10.0.0.3:1 fail_timeout=zz", "10.0.0.1:0",
    "10.0.0.1:abc", "10.0.0.1:1/x", "::1", ":80", "10.0.0.1:", "10.0.0.1?x", "[::1]x",
    "[::1]:0", "[]:80", "[::g]:80", "[1::2::3]", "[1:2:3:4:5:6:7:8:9]", "unix:",
    "a:1 fail_timeout=10ms", "a:1 fail_timeout=1m1h", "a:1 fail_timeout=", "a:1 max_fails=+1",
    "a:1 max_conns=-1", "a:1 weight=+2", "a:1 weight=00", "a:1 Down", "http://x bogus",
    "127.0.0.1:1 fail_timeout=1h30m", "127.0.0.1:1 fail_timeout=5",
    "127.0.0.1:1 \"fail_timeout=1h 5\"", "127.0.0.1:1 fail_timeout=1y1M1w1d1h1m1s",
    "127.0.0.1:1 max_fails=3000000000", "127.0.0.1:1 weight=007", "[::1]:80", "[::1]",
    "[::ffff:127.0.0.1]:80", "unix:/tmp/x.sock", "UNIX:/tmp/y", "127.0.0.1",
]

HAPROXY_SERVERS = [
    "bogus", "check inter", "maxconn check bogus", "usesrc 1.2.3.4", "source",
    "source 127.0.0.1 usesrc", "weight -1", "id", "weight 1 weight", "weight 12abc",
    "weight 4294967297", "id 5x", "\"\" bogus", "check inter 2s fall 3 rise 2 maxconn 10 ws auto",
    "maxconn", "alpn", "tcp-ut", "agent-port", "on-error", "source 127.0.0.1 interface lo check",
]

MEMCACHED_LISTS = ["hello world", "a:1,,b:2", " a:1", ",", ":5,a:1", "a:1,  b:2",
                   "a:1,\tb:2 3", "a b:7:4", "hello "]


def part_verdicts(mtool):
    """The same text to nginx -t, haproxy -c and memcached_servers_parse
    and to ringsim's parser: both take it or both refuse it (nginx: with the
    same message on the same line)."""
    import nginx_ref as ng
    import haproxy_ref as hp
    tmp = tempfile.mkdtemp(prefix="ringsim-import-verdicts-")
    done = []
    try:
        def ours(fmt, path):
            r = subprocess.run([TOOL, fmt, "-", path], capture_output=True, text=True, timeout=60)
            return r.returncode == 0, r.stdout.strip()
        if os.access(ng.NGINX, os.X_OK):
            for sv in NGINX_SERVERS:
                path = f"{tmp}/nginx.conf"
                with open(path, "w") as f:
                    f.write(f"pid {tmp}/nginx.pid;\nerror_log {tmp}/error.log emerg;\n"
                            "events {}\nhttp {\n upstream u {\n  hash $arg_k consistent;\n"
                            f"  server {sv};\n }}\n}}\n")
                r = subprocess.run([ng.NGINX, "-t", "-q", "-c", path, "-p", tmp],
                                   capture_output=True, text=True, timeout=60)
                ok, msg = ours("nginx", path)
                if ok != (r.returncode == 0):
                    raise RuntimeError(f"nginx -t {'takes' if r.returncode == 0 else 'refuses'} "
                                       f"server {sv}: {r.stderr.strip()}; ringsim: {msg or 'takes'}")
                if not ok and (msg.split(": ", 1)[1] not in r.stderr or
                               not msg.startswith("line 7:") or ":7" not in r.stderr):
                    raise RuntimeError(f"server {sv}: nginx says {r.stderr.strip()}, ringsim {msg}")
            done.append(f"nginx {len(NGINX_SERVERS)} servers")
        if os.access(hp.HAPROXY, os.X_OK):
            for sv in HAPROXY_SERVERS:
                path = f"{tmp}/haproxy.cfg"
                with open(path, "w") as f:
                    f.write("defaults\n mode http\n timeout connect 1s\n timeout client 1s\n"
                            " timeout server 1s\nbackend b\n balance uri\n hash-type consistent\n"
                            f" server s1 127.0.0.1:80 {sv}\n")
                r = subprocess.run([hp.HAPROXY, "-c", "-f", path], capture_output=True, text=True,
                                   timeout=60)
                ok, msg = ours("haproxy", path)
                if ok != (r.returncode != 1):  # 2: valid, but no listener
                    raise RuntimeError(f"haproxy -c {'refuses' if r.returncode == 1 else 'takes'} "
                                       f"server s1 127.0.0.1:80 {sv}: {r.stdout}{r.stderr}; "
                                       f"ringsim: {msg or 'takes'}")
                if not ok and (f"{path}:9]" not in r.stdout + r.stderr
                               or not msg.startswith("line 9:")):
                    raise RuntimeError(f"server {sv}: haproxy says {r.stderr}, ringsim {msg}")
            done.append(f"haproxy {len(HAPROXY_SERVERS)} servers")
        if mtool != "none" and os.access(mtool, os.X_OK):
            keys = [b"k%d" % i for i in range(200)]
            kpath = f"{tmp}/keys"
            with open(kpath, "wb") as f:
                f.write(b"".join(k + b"\n" for k in keys))
            for text in MEMCACHED_LISTS:
                tpath = f"{tmp}/list"
                with open(tpath, "w") as f:
                    f.write(text)
                r = subprocess.run([mtool, "list", tpath, kpath], capture_output=True, text=True,
                                   timeout=60)
                out = r.stdout.split("\n")
                n = int(out[0])
                want = [h if p == "11211" else f"{h}:{p}"
                        for h, p in (x.rsplit(" ", 1) for x in out[1:1 + n])]
                got = [nd["name"] for nd in ringsim_import("libmemcached", None, text)["nodes"]]
                if got != want:
                    raise RuntimeError(f"libmemcached list {text!r}: libmemcached holds {want}, "
                                       f"ringsim imported {got}")
                mine = subprocess.run([TOOL, "libmemcached", "-", tpath, kpath],
                                      capture_output=True, text=True,
                                      timeout=60).stdout.split("\n")[:-1]
                theirs = [want[int(x)] for x in out[1 + n:1 + n + len(keys)]]
                if mine != theirs:
                    raise RuntimeError(f"libmemcached list {text!r}: owners differ")
            done.append(f"libmemcached {len(MEMCACHED_LISTS)} lists")
        return ", ".join(done) if done else "skipped (no program)"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- redis ----

def resp(sock_file, sock, *args):
    sock.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))


def read_reply(f):
    line = f.readline()
    if line.startswith(b"$"):
        n = int(line[1:])
        if n >= 0:
            f.read(n + 2)
        return None
    return line.strip().decode()


def part_redis():
    if not shutil.which("redis-server") or not shutil.which("redis-cli"):
        return "skipped (no redis)"
    import nginx_ref as ng
    d = tempfile.mkdtemp(prefix="ringsim-import-redis-")
    procs, ports = [], []
    try:
        while len(ports) < 7:  # six in the cluster, one to join it
            p = ng.free_port()
            if p + 10000 > 65535 or p in ports:
                continue
            ports.append(p)
        for p in ports:
            os.makedirs(f"{d}/{p}")
            procs.append(subprocess.Popen(
                ["redis-server", "--port", str(p), "--bind", "127.0.0.1", "--cluster-enabled",
                 "yes", "--cluster-config-file", f"{d}/{p}/nodes.conf", "--dir", f"{d}/{p}",
                 "--save", "", "--appendonly", "no"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=ng.die_with_parent))
        for p in ports:
            deadline = time.monotonic() + 10
            while subprocess.run(["redis-cli", "-p", str(p), "ping"], capture_output=True,
                                 text=True).stdout.strip() != "PONG":
                if time.monotonic() > deadline:
                    raise RuntimeError("redis did not start")
                time.sleep(0.1)
        r = subprocess.run(["redis-cli", "--cluster", "create"] +
                           [f"127.0.0.1:{p}" for p in ports[:6]] +
                           ["--cluster-replicas", "1", "--cluster-yes"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("cluster create: " + r.stdout[-500:] + r.stderr[-500:])

        def nodes_text():
            return subprocess.run(["redis-cli", "-p", str(ports[0]), "cluster", "nodes"],
                                  capture_output=True, text=True).stdout

        def wait_ok():
            deadline = time.monotonic() + 45
            while True:
                r = subprocess.run(["redis-cli", "--cluster", "check", f"127.0.0.1:{ports[0]}"],
                                   capture_output=True, text=True)
                if "[OK] All 16384 slots covered" in r.stdout and "[ERR]" not in r.stdout \
                        and "[WARNING]" not in r.stdout:
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError("cluster did not agree: " + r.stdout[-800:])
                time.sleep(0.3)

        wait_ok()
        deadline = time.monotonic() + 45
        while nodes_text().count(" slave ") + nodes_text().count(",slave ") < 3:
            if time.monotonic() > deadline:
                raise RuntimeError("the replicas did not attach: " + nodes_text())
            time.sleep(0.3)
        checked, rounds = 0, 0
        for step in range(2):
            if step == 1:  # split ranges: move 700 slots from one master to another
                masters = [ln.split() for ln in nodes_text().splitlines() if "master" in ln]
                r = subprocess.run(["redis-cli", "--cluster", "reshard", f"127.0.0.1:{ports[0]}",
                                    "--cluster-from", masters[0][0], "--cluster-to",
                                    masters[1][0], "--cluster-slots", "700", "--cluster-yes"],
                                   capture_output=True, text=True, timeout=120)
                if r.returncode != 0:
                    raise RuntimeError("reshard: " + r.stdout[-500:])
                wait_ok()
            text = nodes_text()
            imp = ringsim_import("auto", None, text)
            if imp["format"] != "redis-nodes" or len(imp["nodes"]) != 3:
                raise RuntimeError(f"imported {imp}")
            # replicas as Redis lists them
            lines = [ln.split() for ln in text.splitlines() if ln.strip()]
            addr = {ln[0]: ln[1].split("@")[0] for ln in lines}
            for nd in imp["nodes"]:
                want = sorted(addr[ln[0]] for ln in lines if "slave" in ln[2]
                              and addr.get(ln[3]) == nd["name"])
                if sorted(nd["replicas"]) != want:
                    raise RuntimeError(f"replicas of {nd['name']}: {nd['replicas']} != {want}")
            rng = random.Random(50 + step)
            keys = [("user:%d" % rng.getrandbits(32)).encode() if i % 3 else
                    ("{tag%d}:x%d" % (rng.randrange(50), i)).encode() for i in range(3000)]
            mine = ringsim_owners("redis-nodes", None, text, keys)
            masters = [nd["name"] for nd in imp["nodes"]]
            entry = int(masters[0].rsplit(":", 1)[1])
            with socket.create_connection(("127.0.0.1", entry), timeout=10) as s:
                f = s.makefile("rb")
                for at in range(0, len(keys), 200):
                    batch = keys[at:at + 200]
                    s.sendall(b"".join(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k)
                                       for k in batch))
                    for k, m in zip(batch, mine[at:at + 200]):
                        rep = read_reply(f)
                        real = masters[0] if rep is None else \
                            rep.split()[2] if rep.startswith("-MOVED") else rep
                        if real != m:
                            raise RuntimeError(f"redis: key {k!r} -> {m!r} after import, "
                                               f"Redis says {real!r}\n{text}")
                        checked += 1
            rounds += 1
        joined = ""
        if RINGSIM:
            joined = redis_export_runs(nodes_text, wait_ok, f"127.0.0.1:{ports[6]}")
        return f"{checked} keys over {rounds} CLUSTER NODES outputs (3 masters, 3 replicas; " \
               f"after a reshard of 700 slots){joined}"
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(d, ignore_errors=True)


def redis_export_runs(nodes_text, wait_ok, newcomer):
    """The cluster's CLUSTER NODES imported, a master joins in ringsim
    (redis-cli's rebalance, as ringsim's redis places it), `export --config
    redis` written and run against the real cluster: its slots must end
    where ringsim has them, master by master."""
    rt = tempfile.mkdtemp(prefix="rt-redis-", dir=TMP)
    db = f"{rt}/r.db"

    def rs(*args):
        r = subprocess.run([RINGSIM, "--db", db, *args], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"ringsim {' '.join(args[:2])}: {r.stderr}")
        return r.stdout
    with open(f"{rt}/nodes", "w") as f:
        f.write(nodes_text())
    rs("import", "--format", "redis-nodes", f"{rt}/nodes")
    rs("node", "add", newcomer)
    script = rs("export", "--config", "redis")
    with open(f"{rt}/moves.sh", "w") as f:
        f.write(script)
    r = subprocess.run(["sh", f"{rt}/moves.sh"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"export --config redis did not run: {r.stdout[-600:]} "
                           f"{r.stderr[-600:]}\n{script}")
    wait_ok()

    def slots(ranges):
        out = set()
        for a, b in ranges:
            out.update(range(a, b + 1))
        return out
    real = {}
    for ln in nodes_text().splitlines():
        f = ln.split()
        if len(f) < 8 or "master" not in f[2]:
            continue
        rr = []
        for x in f[8:]:
            if x.startswith("["):
                raise RuntimeError(f"a slot still migrating: {ln}")
            a, _, b = x.partition("-")
            rr.append((int(a), int(b or a)))
        real[f[1].split("@")[0]] = slots(rr)
    mine = {n["name"]: slots(map(tuple, n.get("slots", [])))
            for n in json.loads(rs("--json", "node", "ls"))["nodes"]}
    if real != mine:
        diff = {k: (len(real.get(k, ())), len(mine.get(k, ()))) for k in set(real) | set(mine)
                if real.get(k) != mine.get(k)}
        raise RuntimeError(f"after export --config redis, the cluster's slots differ from "
                           f"ringsim's (real, ringsim counts): {diff}\n{script}")
    moved = script.count("--cluster reshard")
    shutil.rmtree(rt, ignore_errors=True)
    return f"; export --config redis run on the cluster ({moved} reshards) gives ringsim's " \
           f"slots for a fourth master"


# ---- cassandra ----

def part_cassandra():
    try:
        from cassandra.metadata import KeyspaceMetadata, Metadata, Murmur3Token
    except ImportError:
        return "skipped (no python3-cassandra)"
    MIN, MAX = -(2**63), 2**63 - 1
    checked = rings = 0
    for seed in range(12):
        rng = random.Random(700 + seed)
        n = rng.randint(1, 12)
        hosts = [f"10.{seed}.{i // 200}.{i % 200 + 1}" for i in range(n)]
        token_map, used = {}, set()
        for h in hosts:
            toks = []
            for _ in range(rng.choice([1, 4, 16, 32])):
                t = rng.choice([MIN, MAX, rng.randint(MIN, MAX), rng.randint(-1000, 1000)])
                if t not in used:
                    used.add(t)
                    toks.append(t)
            if not toks:
                t = rng.randint(MIN, MAX)
                used.add(t)
                toks.append(t)
            token_map[h] = [str(t) for t in toks]
        # nodetool ring: per datacenter, tokens in order, the largest on top
        dcs = {h: ("dc1" if i % 2 == 0 or n == 1 else "dc2") for i, h in enumerate(hosts)}
        out = []
        for dc in sorted(set(dcs.values())):
            rows = sorted((int(t), h) for h in hosts if dcs[h] == dc for t in token_map[h])
            out += ["", f"Datacenter: {dc}", "==========",
                    "Address    Rack        Status State   Load            Owns                "
                    "Token", " " * 74 + str(rows[-1][0])]
            for t, h in rows:
                st = rng.choice(["Up", "Up", "Down"])
                out.append(f"{h:<10} rack1       {st:<6} Normal  {rng.randint(1, 999)}.{rng.randint(0, 99):02d} KiB      "
                           f"{rng.choice(['?', '12.50%'])}                   {t}")
        out += ["", '  Warning: "nodetool ring" is used to output all the tokens of a node.',
                '  To view status related info of a node use "nodetool status" instead.', ""]
        text = "\n".join(out)
        md = Metadata()
        md.rebuild_token_map("org.apache.cassandra.dht.Murmur3Partitioner", token_map)
        md.keyspaces["ks"] = KeyspaceMetadata("ks", True, "SimpleStrategy",
                                              {"replication_factor": "1"})
        keys = [("key-%d-%x" % (i, rng.getrandbits(48))).encode() for i in range(500)]
        mine = ringsim_owners("auto", None, text, keys)
        for k, m in zip(keys, mine):
            real = md.get_replicas("ks", k)[0]
            if real != m:
                raise RuntimeError(f"cassandra seed {seed}: key {k!r} (token "
                                   f"{Murmur3Token.hash_fn(k)}) -> {m!r} after import, the "
                                   f"driver says {real!r}\n{text}")
            checked += 1
        rings += 1
    return f"{checked} keys over {rings} rings (1..12 nodes, 1..32 tokens, two datacenters)"


# ---- haproxy (the systems branch's harness, haproxy_ref.py) ----

def part_haproxy():
    import haproxy_ref as hp
    if not os.access(hp.HAPROXY, os.X_OK):
        return "skipped (no haproxy)"
    seeds = [31, 32, 33, 34]
    back = hp.Backends()
    tmp = tempfile.mkdtemp(prefix="ringsim-import-haproxy-")
    proc = None
    try:
        backends = []
        for seed in seeds:
            rng = random.Random(seed)
            servers = hp.make_servers(rng)
            ports = [back.add(name, rng) for name, _, _ in servers]
            backends.append((servers, ports))
        dw = 7  # the default-server weight that servers without one inherit

        def write_conf(tmp_, backends_, fronts):
            """haproxy_ref.py's configuration, written as people write it:
            defaults carry balance and hash-type, default-server a weight,
            comments, quotes, a round-robin backend beside the others."""
            lines = ["global", f"  stats socket {tmp_}/admin.sock level admin",
                     "  maxconn 2000", "# the defaults every proxy below takes", "defaults",
                     "  mode http", "  timeout connect 2s", "  timeout client 20s",
                     "  timeout server 20s", "  retries 0", "  option http-keep-alive",
                     "  http-reuse always", "  balance hdr(X-Key)",
                     "  hash-type consistent   # sdbm, avalanche", f"  default-server weight {dw}"]
            for b, (servers, ports) in enumerate(backends_):
                rng = random.Random(b)
                lines += [f"frontend f{b}", f"  bind 127.0.0.1:{fronts[b]}",
                          f"  default_backend b{b}", f"backend b{b}"]
                for (name, w, sid), port in zip(servers, ports):
                    q = rng.choice(["", '"', "'"])
                    wt = "" if w == dw and rng.random() < 0.7 else f" weight {w}"
                    lines.append(f"  server {q}{name}{q} 127.0.0.1:{port}{wt}" +
                                 (f" id {sid}" if sid else "") + " inter 5s" +
                                 rng.choice(["", "  # a server"]))
            lines += ["backend rr", "  balance roundrobin", "  server x 127.0.0.1:1"]
            path = f"{tmp_}/haproxy.cfg"
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            return path

        hp.write_conf = write_conf
        proc, fronts = hp.start_haproxy(tmp, backends)
        with open(f"{tmp}/haproxy.cfg", "rb") as f:
            text = f.read()
        checked = nserv = 0
        for b, (servers, _p) in enumerate(backends):
            rng = random.Random(100 + b)
            keys = [hp.make_key(rng, i) for i in range(1000)]
            theirs = hp.ask_haproxy(fronts[b], keys)
            # every server is a node, weight 0 included (it holds no point)
            imp = ringsim_import("haproxy", f"b{b}", text)
            got = [(nd["name"], nd["weight"]) for nd in imp["nodes"]]
            want = [(name, float(w)) for name, w, _ in servers]
            if got != want:
                raise RuntimeError(f"haproxy seed {seeds[b]} backend b{b}: imported {got}, "
                                   f"the text holds {want}\n" + text.decode())
            mine = ringsim_owners("haproxy", f"b{b}", text, keys)
            for k, t, m in zip(keys, theirs, mine):
                if t != m:
                    raise RuntimeError(f"haproxy seed {seeds[b]} backend b{b}: key {k!r} -> "
                                       f"{m!r} after import, haproxy chose {t!r}\n"
                                       + text.decode())
                checked += 1
            nserv += len(servers)
        return f"{checked} keys, {len(backends)} backends, {nserv} servers"
    finally:
        hp.stop(proc)
        back.close()
        shutil.rmtree(tmp, ignore_errors=True)


# ---- twemproxy (the systems branch's harness, twemproxy_ref.py) ----

def part_twemproxy():
    import twemproxy_ref as tw
    if not os.access(tw.NUTCRACKER, os.X_OK):
        return "skipped (no nutcracker)"
    back = tw.Backends()
    tmp = tempfile.mkdtemp(prefix="ringsim-import-twemproxy-")
    proc = None
    try:
        pools, base = [], 0
        for i, h in enumerate(tw.HASHES):
            rng = random.Random(400 + i)
            servers = tw.make_servers(rng, back, base)
            base += len(servers)
            pools.append((f"pool_{h}", h, servers))
        proc, ports = tw.start(tmp, pools)
        with open(f"{tmp}/nutcracker.yml", "rb") as f:
            text = f.read()
        checked = nserv = 0
        index_base = 0
        for name, h, servers in pools:
            rng = random.Random(hash(name) & 0xffff)
            keys = [tw.make_key(rng, i) for i in range(500)]
            theirs = tw.ask(ports[name], keys)
            mine = ringsim_owners("auto", name, text, keys)
            names = [sv[1] for sv in servers]
            for k, t, m in zip(keys, theirs, mine):
                if names[t - index_base] != m:
                    raise RuntimeError(f"twemproxy pool {name}: key {k!r} -> {m!r} after "
                                       f"import, nutcracker chose {names[t - index_base]!r}")
                checked += 1
            index_base += len(servers)
            nserv += len(servers)
        return f"{checked} keys, {len(pools)} pools (every hash), {nserv} servers"
    finally:
        tw.stop(proc)
        back.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    global TOOL, TMP, RINGSIM
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    TOOL = sys.argv[1]
    RINGSIM = sys.argv[3] if len(sys.argv) == 4 else None
    TMP = tempfile.mkdtemp(prefix="ringsim-import-ref-")
    ran, failed = 0, 0
    try:
        for name, fn in [("nginx", part_nginx), ("libmemcached", lambda: part_libmemcached(
                sys.argv[2])), ("verdicts", lambda: part_verdicts(sys.argv[2])),
                ("haproxy", part_haproxy), ("twemproxy", part_twemproxy), ("redis", part_redis),
                ("cassandra", part_cassandra)]:
            try:
                res = fn()
                print(f"import_ref {name}: {res}")
                ran += not res.startswith("skipped")
            except Exception as e:  # report and go on to the next part
                print(f"import_ref {name}: FAIL: {e}")
                failed += 1
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    if RINGSIM:
        print("import_ref round trips (import, export --config, import): "
              + ", ".join(f"{f} {n}" for f, n in sorted(ROUND_TRIPS.items())))
    print(f"{ran - failed if ran >= failed else 0} passed, {failed} failed")
    if failed:
        return 1
    return 0 if ran else 77


if __name__ == "__main__":
    sys.exit(main())
