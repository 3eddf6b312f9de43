#!/usr/bin/python3
"""haproxy_bounded_ref.py - HAProxy's bounded loads against the real haproxy.

Reference: the haproxy installed here (/usr/sbin/haproxy, Debian 12's 2.6.12,
or $HAPROXY).  For each fixed seed a backend with `balance hdr(X-Key)`,
`hash-type consistent` and `hash-balance-factor F` (F from 101 to 200) over
2..6 servers of weights 0..4 (weight 0: no point and no share of the
slots; some with an `id`).  Each server is a loopback
HTTP backend of this script that HOLDS every request until told to answer,
so that what is in flight is exactly what the script decides: a sequence of
events -- a request for one of a few hot keys arrives on a new connection,
or a request in flight ends -- is played against haproxy, and after each
arrival the script notes which server received it; after each end it waits
until haproxy's stats socket shows that many fewer requests in flight.  The
same events go through ringsim's rule (tests/ref/traffic_tool haproxy:
chash_server_is_eligible and the clockwise walk, traffic_stepper); every
arrival must go to the same server.  A failure prints the seed and event.

Usage: haproxy_bounded_ref.py TRAFFIC_TOOL.  Exit 0 pass, 1 fail, 77 skip (no
haproxy).  haproxy runs in the foreground (-db), dies with this script, and
is stopped on every exit path, as are the backends; every wait is bounded.

Checks docs/api.md, 'POST /api/traffic/run' (HAProxy's bounded loads).
"""
import asyncio
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import haproxy_ref as H  # noqa: E402  (quiet_ports, die_with_parent, free_port, stop)

HAPROXY = os.environ.get("HAPROXY", "/usr/sbin/haproxy")
SEEDS = [21, 22, 23, 24, 25, 26, 27, 28, 29, 30]
EVENTS = 160
WAIT = 10.0


class HoldingBackends:
    """Loopback HTTP servers that record each request's X-Req and hold it
    until release(req); one asyncio loop in a thread."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.servers = []
        self.seen = {}  # req -> server name
        self.held = {}  # req -> writer
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def add(self, name, rng):
        lo, hi = H.quiet_ports()
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
        async def handle(reader, writer):
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    req = None
                    for line in head.split(b"\r\n"):
                        k, _, v = line.partition(b":")
                        if k.strip().lower() == b"x-req":
                            req = int(v.strip())
                    with self.lock:
                        self.seen[req] = name
                        self.held[req] = writer
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                pass

        return await asyncio.start_server(handle, "127.0.0.1", port, reuse_address=True)

    def release(self, req):
        body = b"done"
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\n" + body

        def answer_it():
            with self.lock:
                w = self.held.pop(req)
            w.write(answer)

        self.loop.call_soon_threadsafe(answer_it)

    def close(self):
        async def shut():
            for s in self.servers:
                s.close()
            with self.lock:
                for w in self.held.values():
                    w.close()
        try:
            asyncio.run_coroutine_threadsafe(shut(), self.loop).result(timeout=5)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


def make_case(rng):
    n = rng.randint(2, 6)
    servers, used = [], set()
    for i in range(n):
        sid = rng.randint(1, 20) if rng.random() < 0.3 else 0
        if sid in used:
            sid = 0
        if sid:
            used.add(sid)
        servers.append((f"s{i}", rng.choice([0, 1, 1, 2, 3, 4]), sid))  # 0: no point, no slot
    if all(w == 0 for _, w, _ in servers):
        servers[0] = (servers[0][0], 1, servers[0][2])
    factor = rng.choice([101, 110, 125, 150, 200, rng.randint(101, 300)])
    keys = [f"hot-{rng.randint(0, 10**6)}".encode() for _ in range(rng.randint(1, 4))]
    events, live, sent = [], [], 0
    for _ in range(EVENTS):
        if live and (len(live) > 24 or rng.random() < 0.4):
            j = live.pop(rng.randrange(len(live)))
            events.append(("r", j))
        else:
            events.append(("s", rng.choice(keys)))
            live.append(sent)
            sent += 1
    return servers, factor, events


def write_conf(tmp, servers, ports, factor, front):
    lines = ["global", f"  stats socket {tmp}/admin.sock level admin", "  maxconn 2000",
             "defaults", "  mode http", "  timeout connect 2s", "  timeout client 30s",
             "  timeout server 30s", "  retries 0",
             "frontend f", f"  bind 127.0.0.1:{front}", "  default_backend b",
             "backend b", "  balance hdr(X-Key)", "  hash-type consistent",
             f"  hash-balance-factor {factor}"]
    for (name, w, sid), port in zip(servers, ports):
        lines.append(f"  server {name} 127.0.0.1:{port} weight {w}" + (f" id {sid}" if sid else ""))
    path = f"{tmp}/haproxy.cfg"
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def start(tmp, servers, ports, factor):
    for _ in range(5):
        front = H.free_port()
        conf = write_conf(tmp, servers, ports, factor, front)
        check = subprocess.run([HAPROXY, "-c", "-f", conf], capture_output=True, timeout=20)
        if check.returncode != 0:
            raise RuntimeError("haproxy refused the configuration:\n" +
                               check.stdout.decode(errors="replace") +
                               check.stderr.decode(errors="replace"))
        proc = subprocess.Popen([HAPROXY, "-db", "-f", conf], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=H.die_with_parent)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", front), timeout=0.2).close()
                return proc, front
            except OSError:
                time.sleep(0.05)
        H.stop(proc)
    raise RuntimeError("haproxy did not start")


def in_flight(tmp):
    """The servers' current sessions (scur) summed, from `show stat`."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(f"{tmp}/admin.sock")
        s.sendall(b"show stat\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    lines = data.decode().splitlines()
    cols = lines[0].lstrip("# ").split(",")
    scur = cols.index("scur")
    total = 0
    for line in lines[1:]:
        f = line.split(",")
        if len(f) > scur and f[0] == "b" and f[1] not in ("BACKEND", "FRONTEND"):
            total += int(f[scur] or 0)
    return total


def wait_for(what, fn):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.005)
    raise RuntimeError(f"timed out waiting for {what}")


def play(tmp, back, front, events):
    """The server that received each request, in order."""
    socks, chosen, sent, live = {}, [], 0, 0
    try:
        for kind, arg in events:
            if kind == "s":
                req = sent
                sent += 1
                s = socket.create_connection(("127.0.0.1", front), timeout=WAIT)
                s.sendall(b"GET / HTTP/1.1\r\nHost: ref\r\nX-Key: " + arg +
                          b"\r\nX-Req: " + str(req).encode() + b"\r\n\r\n")
                socks[req] = s
                name = wait_for(f"request {req} at a server",
                                lambda: back.seen.get(req))
                chosen.append(name)
                live += 1
            else:
                back.release(arg)
                s = socks.pop(arg)
                data = b""
                while b"done" not in data:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                s.close()
                live -= 1
                wait_for(f"{live} in flight after request {arg} ended",
                         lambda: in_flight(tmp) == live)
    finally:
        for s in socks.values():
            s.close()
    return chosen


def ask_tool(tool, servers, factor, events):
    text = f"{len(servers)} {factor}\n".encode()
    text += b"".join(f"{w}\t{sid}\t{name}\n".encode() for name, w, sid in servers)
    text += b"".join((b"s " + a if k == "s" else f"r {a}".encode()) + b"\n" for k, a in events)
    r = subprocess.run([tool, "haproxy"], input=text, capture_output=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("traffic_tool: " + r.stderr.decode(errors="replace"))
    return r.stdout.decode().split("\n")[:sum(1 for k, _ in events if k == "s")]


def main():
    if len(sys.argv) != 2:
        print("usage: haproxy_bounded_ref.py TRAFFIC_TOOL")
        return 1
    if not os.access(HAPROXY, os.X_OK):
        print(f"haproxy_bounded_ref: SKIP: no {HAPROXY} (Debian package haproxy)")
        return 77
    tool = sys.argv[1]
    checked = away = 0
    for seed in SEEDS:
        tmp = tempfile.mkdtemp(prefix="ringsim-hbf-")
        proc, back = None, HoldingBackends()
        try:
            rng = random.Random(seed)
            servers, factor, events = make_case(rng)
            ports = [back.add(name, rng) for name, _, _ in servers]
            proc, front = start(tmp, servers, ports, factor)
            theirs = play(tmp, back, front, events)
            mine = ask_tool(tool, servers, factor, events)
            keys = [a for k, a in events if k == "s"]
            owner = ask_tool(tool, servers, 0, [("s", k) for k in keys])
            for i, (t, m) in enumerate(zip(theirs, mine)):
                if t != m:
                    print(f"haproxy_bounded_ref: FAIL seed {seed} (factor {factor}, servers "
                          f"{servers}): request {i} ({keys[i]!r}) goes to {m}, haproxy chose {t}")
                    return 1
                checked += 1
                away += t != owner[i]
        except Exception as e:
            print(f"haproxy_bounded_ref: FAIL seed {seed}: {e}")
            return 1
        finally:
            H.stop(proc)
            back.close()
            shutil.rmtree(tmp, ignore_errors=True)
    if not away:
        print("haproxy_bounded_ref: FAIL: no request was sent away: the events test nothing")
        return 1
    print(f"haproxy_bounded_ref: {checked} requests over {len(SEEDS)} backends with "
          f"hash-balance-factor, {away} of them sent away from their key's server, placed as "
          f"the real haproxy places them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
