#!/usr/bin/python3
"""nginx_ref.py - the nginx core against the real nginx.

Reference: the nginx installed here (/usr/sbin/nginx, Debian 12's 1.22.1,
or $NGINX), started by this script.  For each fixed seed it writes an
upstream with `hash $arg_k consistent` over random servers (2..30, weights
1..5) written as nginx.conf allows: "127.0.0.X:PORT", "127.0.0.X" (port 80),
"[::1]:PORT", "localhost:PORT" (one name, several addresses),
"unix:/nonexistent/..." and the same socket again as "UNIX:/..." (same
points as the first: nginx's de-duplication decides the owner).  Every server refuses
connections (checked first) and has max_fails=0, and proxy_next_upstream is
off, so the server nginx tries first is the only one, never marked failed.
`add_header X-Upstream $upstream_addr always` reports it on the 502 answer.

Thousands of keys per seed (ASCII, raw UTF-8, percent-encoded UTF-8, long)
are sent as ?k=KEY over one keep-alive, pipelined connection; nginx hashes
$arg_k as received (not decoded), so the core (tests/ref/nginx_tool) gets
the same bytes, which X-Key echoes back.  Every key's owner in the core must
be the server nginx named.  A failure prints the seed.

Then the same for `hash $arg_k;` without `consistent` (seeds PLAIN_SEEDS,
nginx_tool plain): servers as above but none that resolves to several
addresses or repeats a socket (each address is a peer of its own there,
and $upstream_addr could not tell two peers of one address apart), and
some marked `down` (at most a third of the weight, so that the 21 tries
nginx makes before its round-robin fallback are never all spent: that
fallback depends on earlier requests).  Every key's server in the core
must be the one nginx tried.

Usage: nginx_ref.py NGINX_TOOL.  Exit 0 pass, 1 fail, 77 skip (no nginx).
nginx runs in the foreground as a single process (master_process off) in a
temporary folder, dies with this script (PR_SET_PDEATHSIG) and is stopped
on every exit path; the folder is removed.

Checks docs/api.md, 'GET /api/config' (the catalogue's nginx), 'Variants: the
modes people really run'.
"""
import ctypes
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

NGINX = os.environ.get("NGINX", "/usr/sbin/nginx")
SEEDS = [1, 2, 3, 4, 5, 6]
PLAIN_SEEDS = [21, 22, 23, 24, 25, 26]
KEYS_PER_SEED = 1500
BATCH = 100  # requests pipelined per write

SAFE = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$'()*+,;=:@/?"
CODE_POINTS = [(0xA1, 0xFF), (0x391, 0x3C9), (0x3041, 0x30FF), (0x4E00, 0x9FFF),
               (0x1F300, 0x1F64F)]


def refuses(host, port):
    """True when a TCP connection to (host, port) is refused right away."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(0.5)
    try:
        s.connect((host, port))
        return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    finally:
        s.close()


def have_ipv6():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def localhost_addrs(port):
    """The addresses nginx resolves localhost:PORT to, as $upstream_addr."""
    out = []
    for fam, _, _, _, sa in socket.getaddrinfo("localhost", port, type=socket.SOCK_STREAM):
        out.append(f"[{sa[0]}]:{port}" if fam == socket.AF_INET6 else f"{sa[0]}:{port}")
    return out


def quiet_ports():
    """Ports for upstreams that nothing listens on: outside the kernel's
    ephemeral range.  Inside it, nginx's own connection to 127.0.0.1:P can
    be given P as its source port and connect to itself (TCP simultaneous
    open): it then reads its own request, times out and closes the client's
    connection -- seen once in about forty runs."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
    except (OSError, ValueError):
        lo, hi = 32768, 60999
    return (10000, lo - 1) if lo > 11000 else (hi + 1, 65535)


UPSTREAM_PORTS = quiet_ports()


def make_servers(rng, n, ipv6):
    """n servers: (name, weight, [$upstream_addr values]), addresses unique."""
    servers, used, sockets = [], set(), []
    while len(servers) < n:
        kind = rng.randrange(10)
        w = rng.randint(1, 5)
        port = rng.randint(*UPSTREAM_PORTS)
        if kind == 0 and sockets:
            path = rng.choice(sockets)
            prefix = rng.choice(["UNIX:", "Unix:", "uNiX:", "unix:"])
            name = prefix + path
            addrs = [name]
        elif kind in (0, 1):
            path = f"/nonexistent/ringsim/s{len(servers)}.sock"  # fixed: hashes replay
            sockets.append(path)
            name = f"unix:{path}"
            addrs = [name]
        elif kind == 2 and ipv6:
            name = f"[::1]:{port}"
            addrs = [name] if refuses("::1", port) else None
        elif kind == 3:
            host = f"127.0.0.{rng.randint(2, 254)}"
            name = host
            addrs = [f"{host}:80"] if refuses(host, 80) else None
        elif kind == 4 and not any(s[0].startswith("localhost") for s in servers):
            name = f"localhost:{port}"
            addrs = localhost_addrs(port)
            if not all(refuses(a.rsplit(":", 1)[0].strip("[]"), port) for a in addrs):
                addrs = None
        else:
            host = f"127.0.0.{rng.randint(1, 254)}"
            name = f"{host}:{port}"
            addrs = [name] if refuses(host, port) else None
        names = {s[0] for s in servers}
        if not addrs or name in names or any(a in used for a in addrs):
            continue
        used.update(addrs)
        servers.append((name, w, addrs))
    return servers


def random_text(rng, count):
    out = []
    for _ in range(count):
        lo, hi = rng.choice(CODE_POINTS)
        out.append(chr(rng.randint(lo, hi)))
    return "".join(out)


def percent(data, rng, keep=b""):
    """Percent-encode every byte not in keep, hex digits in a random case."""
    out = bytearray()
    for b in data:
        if b in keep:
            out.append(b)
        else:
            h = f"%{b:02X}" if rng.random() < 0.5 else f"%{b:02x}"
            out += h.encode()
    return bytes(out)


def wire_key(rng, i):
    """A key as sent in ?k=: the exact bytes nginx puts in $arg_k."""
    kind = rng.randrange(6)
    if kind == 0:
        return bytes(rng.choice(SAFE) for _ in range(rng.randint(1, 30)))
    if kind == 1:  # raw UTF-8 in the request line
        return random_text(rng, rng.randint(1, 12)).encode()
    if kind == 2:  # percent-encoded UTF-8
        return percent(random_text(rng, rng.randint(1, 12)).encode(), rng)
    if kind == 3:  # any printable ASCII, the unsafe ones encoded
        raw = bytes(rng.randint(0x20, 0x7E) for _ in range(rng.randint(1, 30)))
        return percent(raw, rng, keep=SAFE)
    if kind == 4:  # long
        return bytes(rng.choice(SAFE) for _ in range(rng.randint(200, 2000)))
    return f"key-{i}".encode()


def write_conf(tmp, port, upstreams):
    lines = [
        "master_process off;",
        f"pid {tmp}/nginx.pid;",
        f"error_log {tmp}/error.log emerg;",
        "events { worker_connections 64; }",
        "http {",
        "  access_log off;",
        f"  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy;",
        f"  fastcgi_temp_path {tmp}/fastcgi; uwsgi_temp_path {tmp}/uwsgi;",
        f"  scgi_temp_path {tmp}/scgi;",
    ]
    for u, servers in enumerate(upstreams):
        lines.append(f"  upstream u{u} {{")
        plain = any(len(s) > 3 for s in servers)
        lines.append("    hash $arg_k;" if plain else "    hash $arg_k consistent;")
        for srv in servers:
            name, w = srv[0], srv[1]
            down = " down" if len(srv) > 3 and srv[3] else ""
            lines.append(f"    server {name} weight={w} max_fails=0{down};")
        lines.append("  }")
    lines += [
        "  server {",
        f"    listen 127.0.0.1:{port};",
        "    keepalive_requests 1000000;",
        "    proxy_next_upstream off;",
        "    proxy_connect_timeout 2s; proxy_read_timeout 2s; proxy_send_timeout 2s;",
    ]
    for u in range(len(upstreams)):
        lines += [
            f"    location = /u{u} {{",
            f"      proxy_pass http://u{u};",
            "      add_header X-Upstream $upstream_addr always;",
            "      add_header X-Key $arg_k always;",
            "    }",
        ]
    lines += ["  }", "}"]
    path = f"{tmp}/nginx.conf"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def die_with_parent():
    """In the child: SIGKILL when this script dies, even by SIGKILL."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(tmp, upstreams):
    """Start nginx on a free port; returns (process, port)."""
    for _ in range(5):
        port = free_port()
        conf = write_conf(tmp, port, upstreams)
        proc = subprocess.Popen(
            [NGINX, "-p", tmp + "/", "-e", f"{tmp}/startup.log", "-c", conf,
             "-g", "daemon off;"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=die_with_parent)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return proc, port
            except OSError:
                time.sleep(0.05)
        err = proc.stderr.read().decode(errors="replace") if proc.poll() is not None else ""
        stop(proc)
        if "Address already in use" not in err:
            with open(f"{tmp}/startup.log", errors="replace") as f:
                raise RuntimeError(f"nginx did not start: {err}{f.read()}")
    raise RuntimeError("nginx: no free port")


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def read_response(f):
    """Status and headers of one response from f; the body is skipped."""
    status = f.readline()
    if not status:
        raise RuntimeError("nginx closed the connection")
    headers = {}
    while True:
        line = f.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        k, _, v = line.partition(b":")
        headers[k.strip().lower()] = v.strip()
    length = int(headers.get(b"content-length", b"-1"))
    if length < 0:
        raise RuntimeError(f"no Content-Length in {status!r} {headers!r}")
    f.read(length)
    return int(status.split()[1]), headers


def ask_nginx(port, path, keys):
    """$upstream_addr and $arg_k for each key, over one pipelined connection."""
    out = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        f = s.makefile("rb")
        for at in range(0, len(keys), BATCH):
            batch = keys[at:at + BATCH]
            s.sendall(b"".join(b"GET " + path.encode() + b"?k=" + k +
                               b" HTTP/1.1\r\nHost: ref\r\n\r\n" for k in batch))
            for k in batch:
                status, h = read_response(f)
                if status != 502 or b"x-upstream" not in h:
                    raise RuntimeError(f"key {k!r}: status {status}, headers {h!r}")
                out.append((h[b"x-upstream"].decode("utf-8", "replace"), h.get(b"x-key")))
    return out


def make_plain_servers(rng, n, ipv6):
    """Servers for `hash` without `consistent`: (name, weight, [addr],
    down); one address each, sockets not repeated, down ones at most a
    third of the weight (and never every server)."""
    servers = [s for s in make_servers(rng, n + 4, ipv6)
               if len(s[2]) == 1 and s[0][:5] not in ("UNIX:", "Unix:", "uNiX:")][:n]
    total = sum(s[1] for s in servers)
    out, down_w = [], 0
    for name, w, addrs in servers:
        down = len(servers) > 1 and rng.random() < 0.3 and 3 * (down_w + w) <= total
        down_w += w if down else 0
        out.append((name, w, addrs, down))
    return out


def ask_core(tool, servers, keys):
    plain = any(len(s) > 3 for s in servers)
    text = f"{len(servers)}\n".encode()
    if plain:
        text += b"".join(f"{s[1]}\t{int(s[3])}\t{s[0]}\n".encode() for s in servers)
    else:
        text += b"".join(f"{s[1]}\t{s[0]}\n".encode() for s in servers)
    text += b"".join(k + b"\n" for k in keys)
    r = subprocess.run([tool] + (["plain"] if plain else []), input=text, capture_output=True,
                       timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"nginx_tool failed: {r.stderr.decode(errors='replace')}")
    return r.stdout.decode().split("\n")[:-1]


def main():
    if len(sys.argv) != 2:
        print("usage: nginx_ref.py NGINX_TOOL", file=sys.stderr)
        return 2
    tool = sys.argv[1]
    if not os.access(NGINX, os.X_OK):
        print(f"nginx_ref: SKIP, no {NGINX} (apt-get install nginx)")
        return 77
    version = subprocess.run([NGINX, "-v"], capture_output=True, text=True).stderr.strip()
    tmp = tempfile.mkdtemp(prefix="ringsim-nginx-")
    proc = None
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        ipv6 = have_ipv6()
        upstreams, keysets = [], []
        for seed in SEEDS:
            rng = random.Random(seed)
            n = 30 if seed == SEEDS[0] else 2 if seed == SEEDS[1] else rng.randint(2, 30)
            upstreams.append(make_servers(rng, n, ipv6))
            keysets.append([wire_key(rng, i) for i in range(KEYS_PER_SEED)])
        for seed in PLAIN_SEEDS:
            rng = random.Random(seed)
            n = 1 if seed == PLAIN_SEEDS[0] else 2 if seed == PLAIN_SEEDS[1] else \
                rng.randint(3, 30)
            upstreams.append(make_plain_servers(rng, n, ipv6))
            keysets.append([wire_key(rng, i) for i in range(KEYS_PER_SEED)])
        proc, port = start_nginx(tmp, upstreams)
        checked = 0
        for u, seed in enumerate(SEEDS + PLAIN_SEEDS):
            servers, keys = upstreams[u], keysets[u]
            by_addr = {a: s[0] for s in servers for a in s[2]}
            theirs = ask_nginx(port, f"/u{u}", keys)
            mine = ask_core(tool, servers, keys)
            if len(mine) != len(keys):
                raise RuntimeError(f"seed {seed}: the tool answered {len(mine)} keys")
            if seed in PLAIN_SEEDS:
                by_addr = {a: s[0] for s in servers for a in s[2]}
            for k, (addr, echoed), m in zip(keys, theirs, mine):
                if echoed != k:
                    raise RuntimeError(f"seed {seed}: nginx saw $arg_k {echoed!r}, sent {k!r}")
                if by_addr.get(addr) != m:
                    print(f"nginx_ref: FAIL seed {seed} ({len(servers)} servers): key {k!r} "
                          f"goes to {m!r}, nginx chose {addr!r} ({by_addr.get(addr)!r})")
                    print("servers: " + ", ".join(f"{s[0]} weight={s[1]}"
                                                  f"{' down' if len(s) > 3 and s[3] else ''}"
                                                  for s in servers))
                    return 1
                checked += 1
        every = [srv for servers in upstreams[:len(SEEDS)] for srv in servers]
        twins = sum(1 for s in every if s[0][:5] in ("UNIX:", "Unix:", "uNiX:"))
        multi = sum(1 for s in every if len(s[2]) > 1)
        plain = upstreams[len(SEEDS):]
        print(f"nginx_ref: {checked} keys over {len(SEEDS)} consistent upstreams "
              f"({', '.join(str(len(s)) for s in upstreams[:len(SEEDS)])} servers; {twins} "
              f"share the points of an earlier unix: name, {multi} resolve to several "
              f"addresses) and {len(plain)} plain `hash` upstreams "
              f"({', '.join(str(len(s)) for s in plain)} servers, "
              f"{sum(s[3] for p in plain for s in p)} down) owned as {version} says")
        return 0
    except Exception as e:  # report, clean up, fail
        print(f"nginx_ref: FAIL: {e}")
        for log in ("startup.log", "error.log"):
            p = os.path.join(tmp, log)
            if os.path.exists(p):
                with open(p, errors="replace") as f:
                    print(f"--- {log}\n" + "".join(f.readlines()[-20:]))
        return 1
    finally:
        if proc:
            stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
