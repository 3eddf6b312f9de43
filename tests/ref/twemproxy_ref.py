#!/usr/bin/python3
"""twemproxy_ref.py - the twemproxy core against the real nutcracker.

Reference: the nutcracker installed here (/usr/sbin/nutcracker, Debian 12's
0.5.0, or $NUTCRACKER), started by this script.  For each fixed seed it
draws random servers (2..20, weights 1..5, sometimes one heavy enough that
another gets no point) written in the three ways nutcracker names them:
"127.0.0.1:PORT:W NAME" (named NAME), "127.0.0.X:11211:W" (named
"127.0.0.X": port 11211 is left out) and "127.0.0.1:PORT:W" (named
"127.0.0.1:PORT"), and writes one pool per hash nutcracker offers (all
twelve) with `distribution: ketama` over those servers.  Each server is a
tiny loopback memcached-protocol backend of this script that answers a get
with its own index.

Keys (printable ASCII, UTF-8 -- bytes >= 0x80 that nutcracker widens as a
signed char --, one or two bytes -- crc16's narrow outputs --, long) are
sent as `get KEY` over one pipelined connection per pool; the core
(tests/ref/twemproxy_tool) must name the backend that answered, for every
key and every hash.  A failure prints the seed and the hash.

Usage: twemproxy_ref.py TWEMPROXY_TOOL.  Exit 0 pass, 1 fail, 77 skip (no
nutcracker).  nutcracker runs in the foreground, dies with this script
(PR_SET_PDEATHSIG) and is stopped on every exit path, as are the backends;
the temporary folder is removed.  Every wait is bounded.

Checks docs/api.md, 'The real systems: haproxy and twemproxy'.
"""
import asyncio
import ctypes
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

NUTCRACKER = os.environ.get("NUTCRACKER", "/usr/sbin/nutcracker")
HASHES = ["one_at_a_time", "md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64",
          "fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins"]
SEEDS = [21, 22, 23, 24]
KEYS_PER_POOL = 800
BATCH = 100
SAFE = bytes(range(0x21, 0x7F))
CODE_POINTS = [(0xA1, 0xFF), (0x391, 0x3C9), (0x3041, 0x30FF), (0x4E00, 0x9FFF)]


def quiet_ports():
    """Ports outside the kernel's ephemeral range (see nginx_ref.py)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
    except (OSError, ValueError):
        lo, hi = 32768, 60999
    return (10000, lo - 1) if lo > 11000 else (hi + 1, 65535)


class Backends:
    """Loopback memcached-protocol servers answering `get` with their index;
    one asyncio loop in a thread."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.servers = []
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def add(self, host, port, label):
        fut = asyncio.run_coroutine_threadsafe(self._serve(host, port, label), self.loop)
        self.servers.append(fut.result(timeout=5))

    async def _serve(self, host, port, label):
        data = label.encode()

        async def handle(reader, writer):
            try:
                while True:
                    line = await reader.readuntil(b"\r\n")
                    parts = line.split()
                    if len(parts) != 2 or parts[0] != b"get":
                        writer.write(b"ERROR\r\n")
                    else:
                        writer.write(b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" %
                                     (parts[1], len(data), data))
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                pass
            finally:
                writer.close()

        return await asyncio.start_server(handle, host, port, reuse_address=True)

    def close(self):
        async def shut():
            for s in self.servers:
                s.close()
        try:
            asyncio.run_coroutine_threadsafe(shut(), self.loop).result(timeout=5)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


def make_servers(rng, back, index_base):
    """[(yaml entry, ringsim name, weight)]; starts a backend for each."""
    n = rng.randint(2, 20)
    lo, hi = quiet_ports()
    heavy = rng.random() < 0.25
    out, names = [], set()
    while len(out) < n:
        w = rng.randint(1, 5)
        if heavy and not out:
            w = 40 * n  # the others get few points, a weight-1 one none
        kind = rng.randrange(3)
        host, port = "127.0.0.1", rng.randint(lo, hi)
        if kind == 1:
            host, port = f"127.0.0.{rng.randint(2, 250)}", 11211
        try:
            back.add(host, port, str(index_base + len(out)))
        except OSError:
            continue
        if kind == 0:
            name = f"cache-{rng.randrange(10 ** 6)}"
            entry = f"{host}:{port}:{w} {name}"
        elif kind == 1:
            name, entry = host, f"{host}:{port}:{w}"
        else:
            name, entry = f"{host}:{port}", f"{host}:{port}:{w}"
        if name in names:
            continue
        names.add(name)
        out.append((entry, name, w))
    return out


def make_key(rng, i):
    kind = rng.randrange(6)
    if kind == 0:
        return bytes(rng.choice(SAFE) for _ in range(rng.randint(1, 40)))
    if kind == 1:
        return "".join(chr(rng.randint(*rng.choice(CODE_POINTS)))
                       for _ in range(rng.randint(1, 12))).encode()
    if kind == 2:
        return bytes(rng.choice(SAFE) for _ in range(rng.randint(1, 2)))
    if kind == 3:
        return bytes(rng.choice(SAFE) for _ in range(rng.randint(100, 240)))
    if kind == 4:
        return bytes([rng.randint(0x80, 0xFF)]) + f"k{i}".encode()
    return f"key-{i}".encode()


def die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_ports(n):
    """n distinct free ports (one closed socket's port can come back)."""
    out = []
    while len(out) < n:
        p = free_port()
        if p not in out:
            out.append(p)
    return out


def stop(proc):
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start(tmp, pools):
    """pools: [(name, hash, servers)]; returns (process, {name: port})."""
    for _ in range(5):
        every = free_ports(len(pools) + 1)  # the pools' and the stats port
        ports = dict(zip((name for name, _, _ in pools), every))
        stats_port = every[-1]
        lines = []
        for name, h, servers in pools:
            lines += [f"{name}:", f"  listen: 127.0.0.1:{ports[name]}", f"  hash: {h}",
                      "  distribution: ketama", "  auto_eject_hosts: false",
                      "  timeout: 5000", "  server_connections: 1", "  servers:"]
            lines += [f"   - {entry}" for entry, _, _ in servers]
        conf = f"{tmp}/nutcracker.yml"
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        t = subprocess.run([NUTCRACKER, "-t", "-c", conf], capture_output=True, timeout=20)
        if t.returncode != 0:
            raise RuntimeError("nutcracker refused the configuration: " +
                               (t.stdout + t.stderr).decode(errors="replace") +
                               "\n".join(lines))
        proc = subprocess.Popen([NUTCRACKER, "-c", conf, "-s", str(stats_port),
                                 "-a", "127.0.0.1", "-o", f"{tmp}/nutcracker.log"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
        deadline, up = time.monotonic() + 10, False
        while time.monotonic() < deadline and proc.poll() is None and not up:
            try:
                for p in ports.values():
                    socket.create_connection(("127.0.0.1", p), timeout=0.2).close()
                up = True
            except OSError:
                time.sleep(0.05)
        if up:
            return proc, ports
        stop(proc)
    with open(f"{tmp}/nutcracker.log", errors="replace") as f:
        raise RuntimeError("nutcracker did not start: " + f.read()[-2000:])


def ask(port, keys):
    out = []
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        f = s.makefile("rb")
        for at in range(0, len(keys), BATCH):
            batch = keys[at:at + BATCH]
            s.sendall(b"".join(b"get " + k + b"\r\n" for k in batch))
            for k in batch:
                head = f.readline().split()
                if len(head) != 4 or head[0] != b"VALUE" or head[1] != k:
                    raise RuntimeError(f"nutcracker answered {head!r} for {k!r}")
                data = f.read(int(head[3]) + 2)[:-2]
                if f.readline() != b"END\r\n":
                    raise RuntimeError("no END")
                out.append(int(data))
    return out


def ask_core(tool, h, servers, keys):
    text = f"{len(servers)} {h}\n".encode()
    text += b"".join(f"{w}\t{name}\n".encode() for _, name, w in servers)
    text += b"".join(k + b"\n" for k in keys)
    r = subprocess.run([tool], input=text, capture_output=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("twemproxy_tool: " + r.stderr.decode(errors="replace"))
    return [int(x) for x in r.stdout.split()]


def main():
    if len(sys.argv) != 2:
        print("usage: twemproxy_ref.py TWEMPROXY_TOOL")
        return 1
    if not os.access(NUTCRACKER, os.X_OK):
        print(f"twemproxy_ref: SKIP: no {NUTCRACKER} (Debian package nutcracker)")
        return 77
    tool = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="ringsim-nutcracker-")
    proc, back, where = None, Backends(), ""
    try:
        v = subprocess.run([NUTCRACKER, "-V"], capture_output=True, timeout=10)
        version = (v.stdout + v.stderr).decode().split("\n")[0]
        pools, sets, base = [], {}, 0
        for seed in SEEDS:
            rng = random.Random(seed)
            servers = make_servers(rng, back, 0)
            keys = [make_key(rng, i) for i in range(KEYS_PER_POOL)]
            for h in HASHES:
                pools.append((f"p{seed}_{h}", h, servers))
                sets[f"p{seed}_{h}"] = (seed, h, servers, keys)
            base += len(servers)
        proc, ports = start(tmp, pools)
        checked, one_server = 0, []
        for name, (seed, h, servers, keys) in sets.items():
            where = f" seed {seed}, hash {h}"
            mine = ask_core(tool, h, servers, keys)
            theirs = ask(ports[name], keys)
            for k, m, t in zip(keys, mine, theirs):
                if m != t:
                    print(f"twemproxy_ref: FAIL seed {seed} hash {h} ({len(servers)} servers): "
                          f"key {k[:60]!r} goes to #{m} {servers[m][1]}, nutcracker chose "
                          f"#{t} {servers[t][1]}")
                    print("servers: " + ", ".join(e for e, _, _ in servers))
                    return 1
            checked += len(keys)
            if len(set(theirs)) == 1:
                one_server.append(f"{h} (seed {seed})")
        print(f"twemproxy_ref: {checked} keys over {len(pools)} pools ({len(HASHES)} hashes x "
              f"{len(SEEDS)} server sets of "
              f"{', '.join(str(len(sets[f'p{s}_md5'][2])) for s in SEEDS)}) owned as {version} "
              f"says; every key on one server with: {', '.join(one_server) or 'none'}")
        return 0
    except Exception as e:
        print(f"twemproxy_ref: FAIL{where}: {e}")
        p = os.path.join(tmp, "nutcracker.log")
        if os.path.exists(p):
            with open(p, errors="replace") as f:
                print("--- nutcracker.log\n" + "".join(f.readlines()[-20:]))
        return 1
    finally:
        stop(proc)
        back.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
