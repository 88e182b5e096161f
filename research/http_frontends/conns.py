#!/usr/bin/python3
"""conns.py: the connection-cost probes of research/http_frontends/compare.sh
(standard library only; a benchmark helper, not a test).

  conns.py hold PID PORT [IDLE SLOW HOLD_S PROBES]
      Opens IDLE (3000) idle connections (connect, send nothing) and SLOW
      (1000) slow-header connections (a request line and one header, then one
      more header byte per second per connection, never ending the headers;
      kept by a child process so the trickling does not share this process's
      GIL with the probes) to 127.0.0.1:PORT. Reads VmRSS and Threads of
      server PID (/proc/PID/status) before, and 1 s after all are open; then
      times PROBES (100) GET /v2/health/live, each on a new connection, while
      they are open; then, HOLD_S (15) s after the slow connections opened,
      counts how many of each kind the server has not closed or answered.
      Prints key=value lines.
  conns.py slowbody PORT [LIMIT_S]
      POST /echo with Content-Length: 1000, then one body byte per second
      until the server answers or closes, or LIMIT_S (40) s pass. Prints
      key=value lines: held_s, outcome (server status line / server closed /
      client gave up).
  conns.py pipeline PORT
      Sends 5 requests (3 GET /v2/health/live, a POST /echo, a GET) in one
      write on one connection; prints pipelined_answers=N, the 200 answers
      read within 5 s.
  conns.py early PORT
      POST /echo with Content-Length: 2000000 (over the 1 MiB cap of every
      server here) and no body; prints early_answer=the status line the
      server sends before any body byte, or "none within 3 s".
"""
import os
import select
import socket
import subprocess
import sys
import time


def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "Threads"):
                out[k] = int(v.split()[0])
    return out["VmRSS"], out["Threads"]


def connect(port, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def alive_count(socks):
    """Connections with no event pending: not closed, reset or answered."""
    p = select.poll()
    for s in socks:
        p.register(s.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    dead = {fd for fd, _ in p.poll(0)}
    return sum(1 for s in socks if s.fileno() not in dead)


def probe(port):
    t0 = time.perf_counter()
    s = connect(port)
    try:
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: bench\r\n\r\n")
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                raise ConnectionError("closed before the headers")
            buf += chunk
        head, _, body = buf.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                length = int(v)
        while len(body) < length:
            chunk = s.recv(4096)
            if not chunk:
                raise ConnectionError("closed in the body")
            body += chunk
        if not head.startswith(b"HTTP/1.1 200"):
            raise ConnectionError(head.split(b"\r\n")[0].decode())
    finally:
        s.close()
    return (time.perf_counter() - t0) * 1000.0


def pct(sorted_ms, q):
    return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]


def slow_child(port, n, hold_s):
    socks = []
    for _ in range(n):
        s = connect(port)
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: bench\r\nX-Slow: ")
        s.setblocking(False)
        socks.append(s)
    print("ready", flush=True)
    start = time.monotonic()
    while time.monotonic() - start < hold_s:
        for s in socks:
            try:
                s.send(b"a")
            except OSError:
                pass  # closed by the server; alive_count sees it
        time.sleep(1.0)
    print(f"slow_open_after_hold={alive_count(socks)}", flush=True)


def hold(pid, port, idle, slow, hold_s, probes):
    rss0, thr0 = proc_status(pid)
    idle_socks = [connect(port) for _ in range(idle)]
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "slow-child", str(port), str(slow), str(hold_s)],
        stdout=subprocess.PIPE, text=True)
    if child.stdout.readline().strip() != "ready":
        sys.exit("conns.py: the slow-header child failed")
    t_open = time.monotonic()
    time.sleep(1.0)
    rss1, thr1 = proc_status(pid)
    lat, failures = [], 0
    for _ in range(probes):
        try:
            lat.append(probe(port))
        except OSError:
            failures += 1
    lat.sort()
    rest = child.stdout.read()
    child.wait()
    idle_alive = alive_count(idle_socks)
    held = time.monotonic() - t_open
    print(f"rss_before_kib={rss0}")
    print(f"threads_before={thr0}")
    print(f"rss_open_kib={rss1}")
    print(f"threads_open={thr1}")
    print(f"probe_p50_ms={pct(lat, 0.50):.2f}" if lat else "probe_p50_ms=nan")
    print(f"probe_p99_ms={pct(lat, 0.99):.2f}" if lat else "probe_p99_ms=nan")
    print(f"probe_failures={failures}")
    print(f"idle_open_after_hold={idle_alive}")
    print(rest.strip())
    print(f"hold_s={held:.1f}")
    for s in idle_socks:
        s.close()


def slowbody(port, limit_s):
    s = connect(port)
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: bench\r\nContent-Type: application/octet-stream\r\n"
              b"Content-Length: 1000\r\n\r\n")
    start = time.monotonic()
    outcome = "client gave up"
    sent = 0
    while time.monotonic() - start < limit_s and sent < 1000:
        try:
            s.send(b"a")
            sent += 1
        except OSError:
            outcome = "server closed"
            break
        r, _, _ = select.select([s], [], [], 1.0)
        if r:
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            outcome = data.split(b"\r\n")[0].decode() if data else "server closed"
            break
    print(f"held_s={time.monotonic() - start:.1f}")
    print(f"bytes_sent={sent}")
    print(f"outcome={outcome}")
    s.close()


def pipeline(port):
    s = connect(port)
    s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: bench\r\n\r\n" * 3 +
              b"POST /echo HTTP/1.1\r\nHost: bench\r\nContent-Length: 5\r\n\r\nhello" +
              b"GET /v2/health/live HTTP/1.1\r\nHost: bench\r\n\r\n")
    buf = b""
    deadline = time.monotonic() + 5.0
    while buf.count(b"HTTP/1.1 200") < 5 and time.monotonic() < deadline:
        r, _, _ = select.select([s], [], [], max(0.0, deadline - time.monotonic()))
        if not r:
            break
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    print(f"pipelined_answers={buf.count(b'HTTP/1.1 200')}")
    s.close()


def early(port):
    s = connect(port)
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: bench\r\nContent-Type: application/octet-stream\r\n"
              b"Content-Length: 2000000\r\n\r\n")
    r, _, _ = select.select([s], [], [], 3.0)
    if not r:
        answer = "none within 3 s"
    else:
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        answer = data.split(b"\r\n")[0].decode() if data else "closed"
    print(f"early_answer={answer}")
    s.close()


def main():
    a = sys.argv[1:]
    if a[:1] == ["hold"]:
        hold(int(a[1]), int(a[2]), *(int(x) for x in (a[3:] + ["3000", "1000", "15", "100"][len(a) - 3:])))
    elif a[:1] == ["slow-child"]:
        slow_child(int(a[1]), int(a[2]), float(a[3]))
    elif a[:1] == ["slowbody"]:
        slowbody(int(a[1]), float(a[2]) if len(a) > 2 else 40.0)
    elif a[:1] == ["pipeline"]:
        pipeline(int(a[1]))
    elif a[:1] == ["early"]:
        early(int(a[1]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
