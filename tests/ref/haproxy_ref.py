#!/usr/bin/python3
"""haproxy_ref.py - the HAProxy core against the real haproxy.

Reference: the haproxy installed here (/usr/sbin/haproxy, Debian 12's 2.6.12,
or $HAPROXY), started by this script.  For each fixed seed it writes a
backend with `balance hdr(X-Key)` and `hash-type consistent` (sdbm with the
avalanche, HAProxy's default for consistent hashing) over random servers
(2..30): weights 0..10 and sometimes 256 (weight 0 takes no key), some with
an `id` (small ones that push the assigned ids along, and some 2^20 above
another server's id, so that two servers share points and the first one must
win them), the others numbered by HAProxy.  Each server is a tiny loopback
HTTP backend of this script that answers its own name.

Thousands of keys per seed (ASCII without commas, UTF-8, long) are sent as
the X-Key header over one keep-alive, pipelined connection per backend; the
core (tests/ref/haproxy_tool) must name the server that answered, for every
key, and the ids it assigns must be those `show servers state` reports on
haproxy's stats socket.  A failure prints the seed.

Then `hash-type map-based` (sdbm, no avalanche: HAProxy's default for it)
for seeds MAP_SEEDS: servers of weights 0..10 and 256, some `backup`, some
`disabled` (down), `option allbackups` in some backends, and backends
whose active servers are all disabled or of weight 0, so that the backups
serve; `haproxy_tool map` places through place_build (hash_type
map-based, the states applied) and must name the server that answered.

Usage: haproxy_ref.py HAPROXY_TOOL.  Exit 0 pass, 1 fail, 77 skip (no haproxy).
haproxy runs in the foreground (-db), dies with this script
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

HAPROXY = os.environ.get("HAPROXY", "/usr/sbin/haproxy")
SEEDS = [11, 12, 13, 14, 15, 16]
MAP_SEEDS = [31, 32, 33, 34, 35, 36, 37, 38]
KEYS_PER_SEED = 1500
BATCH = 100
SAFE = bytes(c for c in range(0x21, 0x7F) if c != ord(","))
CODE_POINTS = [(0xA1, 0xFF), (0x391, 0x3C9), (0x3041, 0x30FF), (0x4E00, 0x9FFF)]


def quiet_ports():
    """Ports outside the kernel's ephemeral range (see nginx_ref.py: inside
    it a proxy's own connection can be given the listening port as source
    port and connect to itself)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = (int(x) for x in f.read().split())
    except (OSError, ValueError):
        lo, hi = 32768, 60999
    return (10000, lo - 1) if lo > 11000 else (hi + 1, 65535)


class Backends:
    """Loopback HTTP servers, one per (host, port), answering their name;
    one asyncio loop in a thread."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.servers = []
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def add(self, name, rng):
        lo, hi = quiet_ports()
        for _ in range(200):
            port = rng.randint(lo, hi)
            try:
                fut = asyncio.run_coroutine_threadsafe(self._serve(name, port), self.loop)
                self.servers.append(fut.result(timeout=5))
                return port
            except OSError:
                continue
        raise RuntimeError("no free backend port")

    async def _serve(self, name, port):
        body = name.encode()
        answer = (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)) + body

        async def handle(reader, writer):
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    if not head:
                        break
                    writer.write(answer)
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                pass
            finally:
                writer.close()

        return await asyncio.start_server(handle, "127.0.0.1", port, reuse_address=True,
                                          limit=1 << 16)

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


def make_servers(rng):
    """[(name, weight, given id or 0)] with ids haproxy accepts (unique)."""
    n = rng.randint(2, 30)
    out, used = [], set()
    for i in range(n):
        w = rng.choice([0] + [rng.randint(1, 10)] * 8 + [256])
        sid = 0
        r = rng.random()
        if r < 0.25:
            sid = rng.randint(1, 40)
        elif r < 0.32 and used:
            sid = rng.choice(sorted(used)) + (1 << 20)  # shares that server's points
        if sid in used:
            sid = 0
        if sid:
            used.add(sid)
        out.append((f"s{i}", w, sid))
    if all(w == 0 for _, w, _ in out):
        out[0] = (out[0][0], 1, out[0][2])
    return out


def make_map_servers(rng, seed):
    """[(name, weight, flags)] for a map-based backend and its allbackups.
    The seed's place in MAP_SEEDS picks the case: 0, 1 every active server
    out (disabled or weight 0) so that the backups serve (without and with
    allbackups); 2 weights that are multiples of 6; the others random, some
    backups and disabled servers."""
    case = MAP_SEEDS.index(seed)
    n = rng.randint(6, 20) if case < 3 else rng.randint(2, 30)
    out = []
    for i in range(n):
        w = rng.choice([0] + [rng.randint(1, 10)] * 8 + [256])
        if case == 2:  # weights with a common divisor: HAProxy divides by it
            w = rng.randint(1, 10) * 6
        r = rng.random()
        flags = "b" if r < (0.5 if case < 2 else 0.15) else "d" if r < 0.65 else "-"
        if case < 2 and flags != "b":
            flags = "d" if w else "-"
        out.append([f"s{i}", w, flags])
    actives = [x for x in out if "b" not in x[2] and "d" not in x[2] and x[1]]
    backups = [x for x in out if "b" in x[2] and "d" not in x[2] and x[1]]
    if case < 2 and len(backups) < 3:  # several usable backups: which ones serve?
        for x in out[:3]:
            x[1:] = [rng.randint(1, 10), "b"]
    elif case >= 2 and not actives:
        out[-1][1:] = [rng.randint(1, 10), "-"]
    return [tuple(x) for x in out], case == 1 or (case >= 2 and rng.random() < 0.3)


def random_text(rng, count):
    return "".join(chr(rng.randint(*rng.choice(CODE_POINTS))) for _ in range(count))


def make_key(rng, i):
    kind = rng.randrange(5)
    if kind == 0:
        return bytes(rng.choice(SAFE) for _ in range(rng.randint(1, 30)))
    if kind == 1:
        return random_text(rng, rng.randint(1, 12)).encode()
    if kind == 2:  # inner spaces are part of the value
        return b"a " + bytes(rng.choice(SAFE) for _ in range(rng.randint(1, 10)))
    if kind == 3:
        return bytes(rng.choice(SAFE) for _ in range(rng.randint(200, 1500)))
    return f"key-{i}".encode()


def die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_conf(tmp, backends, fronts):
    lines = ["global", f"  stats socket {tmp}/admin.sock level admin", "  maxconn 2000",
             "defaults", "  mode http", "  timeout connect 2s", "  timeout client 20s",
             "  timeout server 20s", "  retries 0", "  option http-keep-alive",
             "  http-reuse always"]
    for b, (servers, ports, *opt) in enumerate(backends):
        allbk = opt and opt[0]
        lines += [f"frontend f{b}", f"  bind 127.0.0.1:{fronts[b]}", f"  default_backend b{b}",
                  f"backend b{b}", "  balance hdr(X-Key)",
                  "  hash-type map-based" if opt else "  hash-type consistent"]
        if allbk:
            lines.append("  option allbackups")
        for (name, w, sid), port in zip(servers, ports):
            if opt:  # map-based: sid holds the flags
                lines.append(f"  server {name} 127.0.0.1:{port} weight {w}" +
                             (" backup" if "b" in sid else "") +
                             (" disabled" if "d" in sid else ""))
                continue
            lines.append(f"  server {name} 127.0.0.1:{port} weight {w}" +
                         (f" id {sid}" if sid else ""))
    path = f"{tmp}/haproxy.cfg"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def stop(proc):
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_haproxy(tmp, backends):
    for _ in range(5):
        fronts = []
        while len(fronts) < len(backends):  # distinct: a closed port can come back
            p = free_port()
            if p not in fronts:
                fronts.append(p)
        conf = write_conf(tmp, backends, fronts)
        check = subprocess.run([HAPROXY, "-c", "-f", conf], capture_output=True, timeout=20)
        if check.returncode != 0:
            raise RuntimeError("haproxy refused the configuration:\n" +
                               check.stdout.decode(errors="replace") +
                               check.stderr.decode(errors="replace"))
        proc = subprocess.Popen([HAPROXY, "-db", "-f", conf], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=die_with_parent)
        deadline = time.monotonic() + 10
        up = False
        while time.monotonic() < deadline and proc.poll() is None and not up:
            try:
                for p in fronts:
                    socket.create_connection(("127.0.0.1", p), timeout=0.2).close()
                up = True
            except OSError:
                time.sleep(0.05)
        if up:
            return proc, fronts
        err = proc.stderr.read().decode(errors="replace") if proc.poll() is not None else ""
        stop(proc)
        if "Address already in use" not in err and "cannot bind" not in err:
            raise RuntimeError(f"haproxy did not start: {err}")
    raise RuntimeError("haproxy: no free port")


def server_ids(tmp, backend):
    """{name: id} from `show servers state BACKEND` on the stats socket."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(f"{tmp}/admin.sock")
        s.sendall(f"show servers state {backend}\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    ids = {}
    for line in data.decode().splitlines():
        f = line.split()
        if len(f) > 4 and not line.startswith("#") and f[1] == backend:
            ids[f[3]] = int(f[2])  # be_id be_name srv_id srv_name ...
    return ids


def ask_haproxy(port, keys):
    out = []
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        f = s.makefile("rb")
        for at in range(0, len(keys), BATCH):
            batch = keys[at:at + BATCH]
            s.sendall(b"".join(b"GET / HTTP/1.1\r\nHost: ref\r\nX-Key: " + k + b"\r\n\r\n"
                               for k in batch))
            for _ in batch:
                status = f.readline()
                length = -1
                while True:
                    line = f.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = line.partition(b":")
                    if k.strip().lower() == b"content-length":
                        length = int(v)
                if not status.startswith(b"HTTP/1.1 200") or length < 0:
                    raise RuntimeError(f"haproxy answered {status!r}")
                out.append(f.read(length).decode())
    return out


def ask_core_map(tool, servers, allbk, keys):
    text = f"{len(servers)}\t{int(allbk)}\n".encode()
    text += b"".join(f"{w}\t{flags}\t{name}\n".encode() for name, w, flags in servers)
    text += b"".join(k + b"\n" for k in keys)
    r = subprocess.run([tool, "map"], input=text, capture_output=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("haproxy_tool map: " + r.stderr.decode(errors="replace"))
    return r.stdout.decode().split("\n")[:len(keys)]


def ask_core(tool, servers, keys):
    text = f"{len(servers)}\n".encode()
    text += b"".join(f"{w}\t{sid}\t{name}\n".encode() for name, w, sid in servers)
    text += b"".join(k + b"\n" for k in keys)
    r = subprocess.run([tool], input=text, capture_output=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("haproxy_tool: " + r.stderr.decode(errors="replace"))
    lines = r.stdout.decode().split("\n")
    ids = {}
    for line in lines[:len(servers)]:
        i, name = line.split("\t")
        ids[name] = int(i)
    return ids, lines[len(servers):len(servers) + len(keys)]


def main():
    if len(sys.argv) != 2:
        print("usage: haproxy_ref.py HAPROXY_TOOL")
        return 1
    if not os.access(HAPROXY, os.X_OK):
        print(f"haproxy_ref: SKIP: no {HAPROXY} (Debian package haproxy)")
        return 77
    tool = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="ringsim-haproxy-")
    proc, back = None, Backends()
    seed = None
    try:
        version = subprocess.run([HAPROXY, "-v"], capture_output=True, timeout=10)
        version = version.stdout.decode().split("\n")[0]
        backends, keysets = [], []
        for seed in SEEDS:
            rng = random.Random(seed)
            servers = make_servers(rng)
            ports = [back.add(name, rng) for name, _, _ in servers]
            backends.append((servers, ports))
            keysets.append([make_key(rng, i) for i in range(KEYS_PER_SEED)])
        for seed in MAP_SEEDS:
            rng = random.Random(seed)
            servers, allbk = make_map_servers(rng, seed)
            ports = [back.add(name, rng) for name, _, _ in servers]
            backends.append((servers, ports, allbk))
            keysets.append([make_key(rng, i) for i in range(KEYS_PER_SEED)])
        seed = None
        proc, fronts = start_haproxy(tmp, backends)
        mapped = 0
        for b, seed in enumerate(MAP_SEEDS, start=len(SEEDS)):
            servers, _, allbk = backends[b]
            keys = keysets[b]
            mine = ask_core_map(tool, servers, allbk, keys)
            theirs = ask_haproxy(fronts[b], keys)
            for k, t, m in zip(keys, theirs, mine):
                if t != m:
                    print(f"haproxy_ref: FAIL map-based seed {seed} ({len(servers)} servers"
                          f"{', allbackups' if allbk else ''}): key {k[:80]!r} goes to {m}, "
                          f"haproxy chose {t}")
                    print("servers: " + ", ".join(f"{n} weight {w} {fl}" for n, w, fl in servers))
                    return 1
                mapped += 1
        seed = None
        checked = shared = assigned = zero = 0
        for b, seed in enumerate(SEEDS):
            servers, keys = backends[b][0], keysets[b]
            ids, mine = ask_core(tool, servers, keys)
            real_ids = server_ids(tmp, f"b{b}")
            if real_ids != ids:
                print(f"haproxy_ref: FAIL seed {seed}: ids {ids} but haproxy has {real_ids}")
                return 1
            theirs = ask_haproxy(fronts[b], keys)
            for k, t, m in zip(keys, theirs, mine):
                if t != m:
                    print(f"haproxy_ref: FAIL seed {seed} ({len(servers)} servers): key "
                          f"{k[:80]!r} goes to {m}, haproxy chose {t}")
                    print("servers: " + ", ".join(f"{n} weight {w} id {ids[n]}"
                                                  for n, w, _ in servers))
                    return 1
                checked += 1
            assigned += sum(1 for _, _, sid in servers if not sid)
            shared += sum(1 for _, _, sid in servers if sid > (1 << 20))
            zero += sum(1 for _, w, _ in servers if w == 0)
        print(f"haproxy_ref: {checked} keys over {len(SEEDS)} backends "
              f"({', '.join(str(len(s)) for s, *_ in backends[:len(SEEDS)])} servers; {assigned} ids "
              f"assigned by haproxy, {shared} sharing another's points, {zero} of weight 0) "
              f"owned as {version} says; {mapped} keys over {len(MAP_SEEDS)} map-based "
              f"backends ({', '.join(str(len(b[0])) for b in backends[len(SEEDS):])} servers, "
              f"{sum(fl != '-' for b in backends[len(SEEDS):] for _, _, fl in b[0])} backup or "
              f"disabled) likewise")
        return 0
    except Exception as e:
        print(f"haproxy_ref: FAIL{f' seed {seed}' if seed else ''}: {e}")
        return 1
    finally:
        stop(proc)
        back.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
