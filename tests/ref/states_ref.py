#!/usr/bin/python3
"""states_ref.py - node states (docs/api.md "Node states") against the real
programs that can mark a server down.

Reference: the nginx and haproxy installed here (Debian 12's 1.22.1 and
2.6.12, or $NGINX / $HAPROXY), started with the harnesses of nginx_ref.py and
haproxy_ref.py (same folder).  For each fixed seed:

- nginx: an upstream with `hash $arg_k consistent` over random servers
  (weights 1..5), some of them `down`; every server refuses connections and
  proxy_next_upstream is off, so $upstream_addr names the one server nginx
  picks (ngx_http_upstream_get_chash_peer: a down peer is skipped, hash++,
  the next point).
- haproxy: a backend with `hash-type consistent` over random servers (some
  with an `id`), some `disabled` (maintenance from the start), some `backup`;
  seeds where no active server is usable -- every one disabled, every one
  up of weight 0 (backend.c recount_servers: not usable), or none but
  backups -- so that the first backup takes everything (lb_chash.c
  chash_get_server_hash: fbck), each once more with `option allbackups`
  (the backup tree).

- nutcracker (twemproxy, `distribution: ketama`, `auto_eject_hosts: true`,
  `server_failure_limit: 1`, a long `server_retry_timeout`): some servers
  are dead (nothing listens on their port); every key is asked once, so that
  nutcracker fails on each dead server and ejects it (nc_server.c
  server_failure, then the continuum of the live servers, nc_ketama.c), and
  then every key again: each must come from the live server ringsim's
  served_by names with the dead servers down.
- libmemcached (ketama, KETAMA_WEIGHTED): what a client with failed servers
  removed does, the continuum built again from the live servers:
  libmemcached itself (tests/ref/import_memcached_tool, the server list
  through memcached_servers_parse) given the list without the down servers,
  against ringsim's ketama with them down.

The same servers go into ringsim through its command line (`config
--algorithm nginx|haproxy [--param allbackups=1]`, `node add NAME --weight W
[--id N] [--backup] [--down]`, `key add`); for every key, `key ls --json`'s
served_by must be the server the real program sent the key to, and "node"
the owner with every server up.  A failure prints the seed.

Usage: states_ref.py RINGSIM [MEMCACHED_TOOL|none].  Exit 0 pass, 1 fail, 77 skip
(no program at all).

Checks docs/api.md, 'Node states'.
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import haproxy_ref  # noqa: E402
import nginx_ref  # noqa: E402
import twemproxy_ref  # noqa: E402

KEYS = 1200
KEY_BYTES = bytes(c for c in range(0x21, 0x7F) if chr(c) not in ",%&#+?")


def ringsim(binary, db, *args):
    r = subprocess.run([binary, "--db", db, *args], capture_output=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"ringsim {' '.join(args)[:200]}: {r.stderr.decode(errors='replace')}")
    return r.stdout


def simulate(binary, tmp, name, algorithm, params, servers, keys):
    """servers: [(name, weight, id, backup, down)]; {key: (node, served_by)}."""
    db = os.path.join(tmp, f"{name}.db")
    cfg = ["config", "--algorithm", algorithm]
    for p in params:
        cfg += ["--param", p]
    ringsim(binary, db, *cfg)
    for n, w, sid, backup, down in servers:
        a = ["node", "add", "--weight", str(w)]
        a += ["--id", str(sid)] if sid else []
        a += ["--backup"] if backup else []
        a += ["--down"] if down else []
        ringsim(binary, db, *a, "--", n)
    ringsim(binary, db, "key", "add", "--", *keys)
    out = json.loads(ringsim(binary, db, "--json", "key", "ls"))
    ringsim(binary, db, "check")
    return {k["key"]: (k["node"], k["served_by"]) for k in out["keys"]}


def key_text(rng, i):
    if i % 3 == 0:
        return f"key-{i}"
    return bytes(rng.choice(KEY_BYTES) for _ in range(rng.randint(1, 24))).decode()


# ---- nginx ----

def nginx_conf(tmp, port, upstreams):
    """As nginx_ref.write_conf, with `down` on the servers that are."""
    lines = [
        "master_process off;", f"pid {tmp}/nginx.pid;", f"error_log {tmp}/error.log emerg;",
        "events { worker_connections 64; }", "http {", "  access_log off;",
        f"  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy;",
        f"  fastcgi_temp_path {tmp}/fastcgi; uwsgi_temp_path {tmp}/uwsgi;",
        f"  scgi_temp_path {tmp}/scgi;",
    ]
    for u, servers in enumerate(upstreams):
        lines += [f"  upstream u{u} {{", "    hash $arg_k consistent;"]
        for name, w, _, _, down in servers:
            lines.append(f"    server {name} weight={w} max_fails=0{' down' if down else ''};")
        lines.append("  }")
    lines += ["  server {", f"    listen 127.0.0.1:{port};", "    keepalive_requests 1000000;",
              "    proxy_next_upstream off;",
              "    proxy_connect_timeout 2s; proxy_read_timeout 2s; proxy_send_timeout 2s;"]
    for u in range(len(upstreams)):
        lines += [f"    location = /u{u} {{", f"      proxy_pass http://u{u};",
                  "      add_header X-Upstream $upstream_addr always;",
                  "      add_header X-Key $arg_k always;", "    }"]
    lines += ["  }", "}"]
    path = f"{tmp}/nginx.conf"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def nginx_servers(rng):
    lo, hi = nginx_ref.UPSTREAM_PORTS
    out, used = [], set()
    n = rng.randint(3, 16)
    while len(out) < n:
        host, port = f"127.0.0.{rng.randint(1, 254)}", rng.randint(lo, hi)
        name = f"{host}:{port}"
        if name in used or not nginx_ref.refuses(host, port):
            continue
        used.add(name)
        out.append((name, rng.randint(1, 5), 0, False, rng.random() < 0.35))
    if all(s[4] for s in out):  # at least one up
        out[0] = out[0][:4] + (False,)
    if not any(s[4] for s in out):
        out[-1] = out[-1][:4] + (True,)
    return out


def check_nginx(binary, tmp):
    seeds = [21, 22, 23, 24]
    upstreams, keysets = [], []
    for seed in seeds:
        rng = random.Random(seed)
        upstreams.append(nginx_servers(rng))
        keysets.append([key_text(rng, i) for i in range(KEYS)])
    nginx_ref.write_conf = nginx_conf  # start_nginx writes the config through it
    proc, port = nginx_ref.start_nginx(tmp, upstreams)
    checked = down = 0
    try:
        for u, seed in enumerate(seeds):
            servers, keys = upstreams[u], keysets[u]
            wire = [k.encode() for k in keys]
            theirs = nginx_ref.ask_nginx(port, f"/u{u}", wire)
            mine = simulate(binary, tmp, f"nginx{seed}", "nginx", [], servers, keys)
            allup = simulate(binary, tmp, f"nginx{seed}up", "nginx", [],
                             [s[:4] + (False,) for s in servers], keys)
            for k, (addr, _) in zip(keys, theirs):
                node, served = mine[k]
                if served != addr or node != allup[k][1]:
                    print(f"states_ref: FAIL nginx seed {seed}: key {k!r} served_by {served!r} "
                          f"(node {node!r}, all up {allup[k][1]!r}), nginx chose {addr!r}")
                    print("servers: " + ", ".join(f"{s[0]} weight={s[1]}{' down' if s[4] else ''}"
                                                  for s in servers))
                    return None
                checked += 1
                down += node != served
    finally:
        nginx_ref.stop(proc)
    return f"nginx: {checked} keys ({down} of them owned by a down server) served as nginx serves them"


# ---- haproxy ----

def haproxy_conf(tmp, backends, fronts):
    lines = ["global", f"  stats socket {tmp}/admin.sock level admin", "  maxconn 2000",
             "defaults", "  mode http", "  timeout connect 2s", "  timeout client 20s",
             "  timeout server 20s", "  retries 0", "  option http-keep-alive",
             "  http-reuse always"]
    for b, (servers, ports, allbackups) in enumerate(backends):
        lines += [f"frontend f{b}", f"  bind 127.0.0.1:{fronts[b]}", f"  default_backend b{b}",
                  f"backend b{b}", "  balance hdr(X-Key)", "  hash-type consistent"]
        if allbackups:
            lines.append("  option allbackups")
        for (name, w, sid, backup, down), port in zip(servers, ports):
            lines.append(f"  server {name} 127.0.0.1:{port} weight {w}" +
                         (f" id {sid}" if sid else "") + (" backup" if backup else "") +
                         (" disabled" if down else ""))
    path = f"{tmp}/haproxy.cfg"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def haproxy_servers(rng, mode):
    """mode: "" (some servers disabled), "down" (every active server
    disabled), "zero" (every active server up has weight 0: none usable),
    "backups" (every server a backup); "... all up": none disabled."""
    n = rng.randint(4, 14)
    out, used = [], set()
    for i in range(n):
        sid = rng.randint(1, 40) if rng.random() < 0.25 else 0
        if sid in used:
            sid = 0
        if sid:
            used.add(sid)
        backup = mode == "backups" or (i >= 2 and rng.random() < 0.3)
        down = (not backup and mode == "down") or (rng.random() < 0.3 and "up" not in mode)
        weight = 0 if mode.startswith("zero") and not backup and not down else rng.randint(1, 8)
        out.append((f"s{i}", weight, sid, backup, down))
    if sum(1 for s in out if s[3] and not s[4]) < 2:  # backups to choose between
        out.append((f"s{n}", 2, 0, True, False))
        out.append((f"s{n + 1}", 3, 0, True, False))
    if mode.startswith("zero") and all(s[4] for s in out if not s[3]):
        out[0] = (out[0][0], 0, out[0][2], False, False)
    if not mode and all(s[4] for s in out if not s[3]):
        out[0] = out[0][:4] + (False,)
    return out


def check_haproxy(binary, tmp):
    cases = [(31, "", False), (32, "", False), (33, "down", False), (34, "down", True),
             (35, "zero", False), (36, "zero", True), (37, "backups", False),
             (38, "backups", True), (39, "zero all up", False), (40, "backups all up", False),
             (41, "backups all up", True)]
    back = haproxy_ref.Backends()
    proc = None
    try:
        backends, keysets = [], []
        for seed, mode, allb in cases:
            rng = random.Random(seed)
            servers = haproxy_servers(rng, mode)
            ports = [back.add(s[0], rng) for s in servers]
            backends.append((servers, ports, allb))
            keysets.append([key_text(rng, i) for i in range(KEYS)])
        haproxy_ref.write_conf = haproxy_conf
        proc, fronts = haproxy_ref.start_haproxy(tmp, backends)
        checked = failover = 0
        for b, (seed, mode, allb) in enumerate(cases):
            servers, keys = backends[b][0], keysets[b]
            theirs = haproxy_ref.ask_haproxy(fronts[b], [k.encode() for k in keys])
            params = [f"allbackups={int(allb)}"]
            mine = simulate(binary, tmp, f"haproxy{seed}", "haproxy", params, servers, keys)
            for k, t in zip(keys, theirs):
                if mine[k][1] != t:
                    print(f"states_ref: FAIL haproxy seed {seed}: key {k!r} served_by "
                          f"{mine[k][1]!r} (node {mine[k][0]!r}), haproxy chose {t!r}")
                    print("servers: " + ", ".join(
                        f"{s[0]} weight {s[1]}{f' id {s[2]}' if s[2] else ''}"
                        f"{' backup' if s[3] else ''}{' disabled' if s[4] else ''}"
                        for s in servers) + (" (allbackups)" if allb else ""))
                    return None
                checked += 1
                failover += mode != ""
    finally:
        haproxy_ref.stop(proc)
        back.close()
    return (f"haproxy: {checked} keys ({failover} with no active server usable -- every one "
            f"disabled or of weight 0, or none but backups -- served by backups) served as "
            f"haproxy serves them")


# ---- nutcracker ----

def tw_get(f, s, k):
    """One `get` through nutcracker: the backend's label, or None for an error."""
    s.sendall(b"get " + k + b"\r\n")
    head = f.readline().split()
    if head and head[0] == b"VALUE" and len(head) == 4:
        data = f.read(int(head[3]) + 2)[:-2]
        if f.readline() != b"END\r\n":
            raise RuntimeError("nutcracker: no END")
        return data.decode()
    if head and head[0] in (b"SERVER_ERROR", b"ERROR", b"CLIENT_ERROR"):
        return None
    raise RuntimeError(f"nutcracker answered {head!r} for {k!r}")


def check_twemproxy(binary, tmp):
    import socket
    nut = twemproxy_ref.NUTCRACKER
    checked = ejected = 0
    for seed in (51, 52, 53):
        rng = random.Random(seed)
        back = twemproxy_ref.Backends()
        proc = None
        try:
            lo, hi = twemproxy_ref.quiet_ports()
            n = rng.randint(3, 10)
            servers, label = [], {}
            while len(servers) < n:
                port = rng.randint(lo, hi)
                dead = len(servers) > 0 and rng.random() < 0.35
                name = f"cache-{len(servers)}"
                if dead:
                    if not nginx_ref.refuses("127.0.0.1", port):
                        continue
                else:
                    try:
                        back.add("127.0.0.1", port, name)
                    except OSError:
                        continue
                servers.append((name, rng.randint(1, 5), 0, False, dead, port))
            if not any(x[4] for x in servers):
                continue
            lport = twemproxy_ref.free_port()
            conf = os.path.join(tmp, f"nut{seed}.yml")
            lines = ["pool:", f"  listen: 127.0.0.1:{lport}", "  hash: fnv1a_64",
                     "  distribution: ketama", "  auto_eject_hosts: true",
                     "  server_failure_limit: 1", "  server_retry_timeout: 600000",
                     "  timeout: 2000", "  server_connections: 1", "  servers:"]
            lines += [f"   - 127.0.0.1:{x[5]}:{x[1]} {x[0]}" for x in servers]
            with open(conf, "w") as f:
                f.write("\n".join(lines) + "\n")
            proc = subprocess.Popen([nut, "-c", conf, "-s", str(twemproxy_ref.free_port()),
                                     "-a", "127.0.0.1", "-o", os.path.join(tmp, "nut.log")],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL,
                                    preexec_fn=twemproxy_ref.die_with_parent)
            keys = [key_text(rng, i) for i in range(KEYS)]
            for _ in range(200):
                try:
                    sock = socket.create_connection(("127.0.0.1", lport), timeout=10)
                    break
                except OSError:
                    time.sleep(0.05)
            else:
                raise RuntimeError("nutcracker did not start")
            with sock:
                f = sock.makefile("rb")
                errors = sum(tw_get(f, sock, k.encode()) is None for k in keys)  # ejects the dead
                theirs = [tw_get(f, sock, k.encode()) for k in keys]
            mine = simulate(binary, tmp, f"tw{seed}", "twemproxy", [],
                            [x[:5] for x in servers], keys)
            for k, t in zip(keys, theirs):
                if t is None or mine[k][1] != t:
                    print(f"states_ref: FAIL nutcracker seed {seed}: key {k!r} served_by "
                          f"{mine[k][1]!r}, nutcracker answered from {t!r}")
                    print("servers: " + ", ".join(f"{x[0]}:{x[1]}{' (dead)' if x[4] else ''}"
                                                  for x in servers))
                    return None
                checked += 1
            ejected += sum(1 for x in servers if x[4])
            if errors == 0:
                raise RuntimeError(f"seed {seed}: no request failed on a dead server")
        finally:
            twemproxy_ref.stop(proc)
            back.close()
    return (f"nutcracker: {checked} keys served as nutcracker serves them after ejecting "
            f"{ejected} dead servers")


# ---- libmemcached ----

def check_libmemcached(binary, tmp, tool):
    checked = moved_between = 0
    for seed in (41, 42, 43):
        rng = random.Random(seed)
        n = rng.randint(3, 12)
        servers = []
        for i in range(n):
            name = f"10.{seed}.0.{i + 1}:{rng.randint(1024, 11210)}"
            servers.append((name, rng.randint(1, 5), 0, False, rng.random() < 0.3))
        if all(s[4] for s in servers):
            servers[0] = servers[0][:4] + (False,)
        if not any(s[4] for s in servers):
            servers[-1] = servers[-1][:4] + (True,)
        keys = [key_text(rng, i) for i in range(KEYS)]
        live = [s for s in servers if not s[4]]
        text_path, keys_path = os.path.join(tmp, "servers.txt"), os.path.join(tmp, "keys.txt")
        with open(text_path, "w") as f:
            f.write(",".join(f"{s[0]}:{s[1]}" for s in live))
        with open(keys_path, "w") as f:
            f.write("".join(k + "\n" for k in keys))
        r = subprocess.run([tool, "list", text_path, keys_path], capture_output=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("import_memcached_tool: " + r.stderr.decode(errors="replace"))
        lines = r.stdout.decode().split("\n")
        count = int(lines[0])
        by_pos = [f"{h}:{p}" for h, p in (ln.split(" ") for ln in lines[1:1 + count])]
        theirs = [by_pos[int(x)] for x in lines[1 + count:1 + count + len(keys)]]
        mine = simulate(binary, tmp, f"ketama{seed}", "ketama", [], servers, keys)
        allup = simulate(binary, tmp, f"ketama{seed}up", "ketama", [],
                         [s[:4] + (False,) for s in servers], keys)
        down = {s[0] for s in servers if s[4]}
        for k, t in zip(keys, theirs):
            if mine[k][1] != t:
                print(f"states_ref: FAIL libmemcached seed {seed}: key {k!r} served_by "
                      f"{mine[k][1]!r}, libmemcached without the down servers says {t!r}")
                print("servers: " + ", ".join(f"{s[0]}:{s[1]}{' (down)' if s[4] else ''}"
                                              for s in servers))
                return None
            checked += 1
            moved_between += allup[k][1] not in down and allup[k][1] != t
    return (f"libmemcached: {checked} keys served as libmemcached without the down servers "
            f"places them ({moved_between} moved between servers that stayed up)")


def main():
    if len(sys.argv) not in (2, 3):
        print("usage: states_ref.py RINGSIM [MEMCACHED_TOOL|none]")
        return 2
    binary = sys.argv[1]
    tool = sys.argv[2] if len(sys.argv) == 3 and sys.argv[2] != "none" else None
    have_nginx = os.access(nginx_ref.NGINX, os.X_OK)
    have_haproxy = os.access(haproxy_ref.HAPROXY, os.X_OK)
    have_nut = os.access(twemproxy_ref.NUTCRACKER, os.X_OK)
    if not have_nginx and not have_haproxy and not have_nut and not tool:
        print("states_ref: SKIP: no nginx, haproxy or libmemcached")
        return 77
    tmp = tempfile.mkdtemp(prefix="ringsim-states-")
    try:
        said = []
        checks = ((have_nginx, check_nginx), (have_haproxy, check_haproxy),
                  (have_nut, check_twemproxy),
                  (tool, lambda b, t: check_libmemcached(b, t, tool)))
        for have, fn in checks:
            if not have:
                continue
            r = fn(binary, tmp)
            if r is None:
                return 1
            said.append(r)
        print("states_ref: " + "; ".join(said))
        return 0
    except Exception as e:
        print(f"states_ref: FAIL: {e}")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
