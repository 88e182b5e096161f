#!/usr/bin/python3
"""Issue 32's attacks against invariant-server, with a well-behaved client beside them.

Run through bench/admission/attacks.sh, which trains the two models, stages
the Python stubs and calls the subcommands below:

  run     the orchestrator: for each attack a fresh server, an RSS/CPU sampler
          (every 50 ms, /proc/PID), the good client (a subprocess), the
          attacker (another subprocess), then the settle phase; writes
          OUT/admission.csv and OUT/admission.json
  good    the well-behaved client: four loops (gRPC health Check, gRPC Predict
          of one row, REST GET /v2/health/live, REST infer of one row; every
          REST call on a fresh connection, as a probe makes it), one line per
          call: monotonic time, kind, latency in ms, status
  attack  one attack (1, 2a, 2b, 3a, 3b, 4, 5, 6, 7); prints a JSON summary
  report  puts OUT/admission.json into docs/results/admission.md between the
          markers, under a label ("before", "after", ...)

The attacker and the good client are separate processes, so neither's GIL
or CPU is charged to the other's latencies. Every number of scale and time
is an environment variable (see ENV below) whose default is the issue's.
"""
import argparse
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections import Counter

ENV = {
    # seconds
    "PRE_SECONDS": ("3", "good client alone before each attack (CPU baseline)"),
    "AFTER_SECONDS": ("3", "wait after the server's CPU settles, before RSS after"),
    "SETTLE_MAX_SECONDS": ("45", "longest wait for the server's CPU to fall back to its baseline"),
    "GOOD_INTERVAL_MS": ("20", "pause between two calls of one good-client loop"),
    "GOOD_TIMEOUT_SECONDS": ("10", "deadline of each good-client call"),
    "FOLLOW_UP_TIMEOUT_SECONDS": ("35", "deadline of the small calls right after attacks 2 and 3 "
                                  "(--http_timeout_seconds + 5)"),
    # 1: non-reading clients
    "A1_CLIENTS": ("16", "non-reading clients"),
    "A1_ROWS": ("13107", "rows of the ~2 MB binary FP32 request (features output)"),
    "A1_SECONDS": ("35", "how long the clients hold their connections without reading"),
    # 2: abandoned work
    "A2_REQUESTS": ("200", "REST requests (2a) and gRPC calls (2b)"),
    "A2_CLIPS": ("4297", "one-sample WAV clips per request"),
    "A2_SEND_SECONDS": ("0.1", "the REST requests are sent within this, then disconnected"),
    "A2_DEADLINE_MS": ("50", "deadline of each gRPC call"),
    # 3: idle uploads
    "A3_CONNECTIONS": ("16", "connections announcing a body and sending none"),
    "A3_CONTENT_LENGTH": ("16777216", "the Content-Length they announce (3a)"),
    "A3_SECONDS": ("35", "how long they hold"),
    # 4: clip decoding starving gRPC
    "A4_CLIENTS": ("4", "clients looping the large clip requests"),
    "A4_CLIPS": ("16", "clips per request"),
    "A4_CLIP_SECONDS": ("10", "seconds per clip"),
    "A4_RATE": ("384000", "sample rate of the clips (8-bit PCM WAV)"),
    "A4_SECONDS": ("30", "attack duration"),
    # 5: unauthenticated large gRPC
    "A5_CALLS": ("40", "unauthenticated Predicts in flight at once"),
    "A5_MIB": ("63", "size of each"),
    "A5_SECONDS": ("30", "attack duration (each caller loops)"),
    # 6: clip amplification
    "A6_CLIENTS": ("4", "clients looping the 17 KB INT16 [4297, 1] JSON body"),
    "A6_CLIPS": ("4297", "one-sample clips per body"),
    "A6_SECONDS": ("30", "attack duration"),
    # 7: connection cap
    "A7_CONNECTIONS": ("10100", "idle TCP connections to the REST port"),
    "A7_SECONDS": ("30", "how long they are held"),
}


def env(name, cast=float):
    return cast(os.environ.get(name, ENV[name][0]))


ATTACKS = ["1", "2a", "2b", "3a", "3b", "4", "5", "6", "7"]
TITLES = {
    "1": "non-reading clients (features of ~13k rows as JSON, never read)",
    "2a": "abandoned work, REST (200 x 215 KB of one-sample WAVs, then disconnect)",
    "2b": "abandoned work, gRPC (200 such Predicts, 50 ms deadline)",
    "3a": "idle uploads (Content-Length 16 MiB, no body)",
    "3b": "idle uploads (Transfer-Encoding: chunked, no byte)",
    "4": "clip decoding starving gRPC (4 clients x ~59 MiB of 384 kHz clips)",
    "5": "unauthenticated large gRPC (40 x 63 MiB Predicts, --data_token_file)",
    "6": "clip amplification (17 KB JSON INT16 [4297, 1], repeated)",
    "7": "connection cap (10,100 idle TCP connections to the REST port)",
}
GOOD_KINDS = ["grpc_health", "grpc_predict", "rest_live", "rest_infer"]
ROWS_MODEL = "rows"
SOUND_MODEL = "sound"
TOKEN = "admission-bench-token"


def now():
    return time.monotonic()


# ---------------------------------------------------------------- HTTP bits

def http_head(method, path, port, headers=(), content_length=None):
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{k}: {v}" for k, v in headers]
    if content_length is not None:
        lines.append(f"Content-Length: {content_length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_response(sock, limit=1 << 20):
    """Status code and body length of one answer on `sock` (blocking)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the headers")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    got = len(rest)
    while got < length:
        chunk = sock.recv(min(1 << 20, length - got))
        if not chunk:
            raise ConnectionError("closed in the body")
        got += len(chunk)
    return status, length


def http_call(port, request_bytes, timeout):
    """One request on a fresh connection: (status or error name, latency ms)."""
    start = now()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(request_bytes)
            status, _ = read_response(s)
            return str(status), (now() - start) * 1e3
    except socket.timeout:
        return "timeout", (now() - start) * 1e3
    except (ConnectionError, OSError) as e:
        return type(e).__name__, (now() - start) * 1e3


def rest_infer_json(port, model, body_obj, token=None):
    body = json.dumps(body_obj, separators=(",", ":")).encode()
    headers = [("Content-Type", "application/json")]
    if token:
        headers.append(("Authorization", f"Bearer {token}"))
    return http_head("POST", f"/v2/models/{model}/infer", port, headers, len(body)) + body


def rest_infer_binary(port, model, json_head, binary, token=None):
    head = json.dumps(json_head, separators=(",", ":")).encode()
    headers = [("Content-Type", "application/octet-stream"),
               ("Inference-Header-Content-Length", str(len(head)))]
    if token:
        headers.append(("Authorization", f"Bearer {token}"))
    return (http_head("POST", f"/v2/models/{model}/infer", port, headers,
                      len(head) + len(binary)) + head + binary)


def one_row():
    # An Xperm row: the symbols 0 1 2 3 4, one-hot in blocks of 8.
    row = [0.0] * 40
    for block, symbol in enumerate([0, 1, 2, 3, 4]):
        row[block * 8 + symbol] = 1.0
    return row


def small_infer_request(port, token=None):
    return rest_infer_json(port, ROWS_MODEL, {
        "inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 40], "data": one_row()}],
        "outputs": [{"name": "predicted_class"}]}, token)


def wav_bytes(samples, rate, bits=16):
    """A mono PCM WAV file: 8-bit samples are bytes (unsigned), 16-bit int16 LE."""
    data = samples if bits == 8 else struct.pack(f"<{len(samples)}h", *samples)
    block = bits // 8
    return (b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " +
            struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * block, block, bits) +
            b"data" + struct.pack("<I", len(data)) + data)


# ---------------------------------------------------------------- gRPC bits

def import_stubs(python_path):
    sys.path.insert(0, python_path)
    global grpc, fs, oip, health_pb2
    import grpc  # noqa: F401
    from invariant_serve._proto.invariant.v1 import feature_service_pb2 as fs  # noqa: F401
    from invariant_serve._proto.inference import grpc_service_pb2 as oip  # noqa: F401
    from invariant_serve._proto.grpc.health.v1 import health_pb2  # noqa: F401


def raw_channel(port):
    """A channel of its own (its own TCP connection), no message size limits."""
    return grpc.insecure_channel(f"127.0.0.1:{port}", options=[
        ("grpc.use_local_subchannel_pool", 1),
        ("grpc.max_send_message_length", -1),
        ("grpc.max_receive_message_length", -1)])


def raw_method(channel, path):
    return channel.unary_unary(path, request_serializer=lambda b: b,
                               response_deserializer=lambda b: b)


def grpc_code(fn):
    try:
        fn()
        return "OK"
    except grpc.RpcError as e:
        return e.code().name


# ---------------------------------------------------------------- the good client

def cmd_good(args):
    import_stubs(args.python)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    interval = env("GOOD_INTERVAL_MS") / 1e3
    timeout = env("GOOD_TIMEOUT_SECONDS")
    token = args.token or None
    metadata = [("authorization", f"Bearer {token}")] if token else None
    channel = grpc.insecure_channel(f"127.0.0.1:{args.grpc_port}")
    check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
                                response_deserializer=health_pb2.HealthCheckResponse.FromString)
    predict = channel.unary_unary("/invariant.v1.FeatureService/Predict",
                                  request_serializer=fs.PredictRequest.SerializeToString,
                                  response_deserializer=fs.PredictResponse.FromString)
    predict_request = fs.PredictRequest(model=fs.ModelSpec(name=ROWS_MODEL),
                                        inputs=fs.InputBatch(values=one_row()))
    live = http_head("GET", "/v2/health/live", args.http_port)
    infer = small_infer_request(args.http_port, token)
    out = open(args.out, "w", buffering=1)
    lock = threading.Lock()

    def grpc_call(fn):
        start = now()
        code = grpc_code(fn)
        return code, (now() - start) * 1e3

    calls = {
        "grpc_health": lambda: grpc_call(lambda: check(health_pb2.HealthCheckRequest(), timeout=timeout)),
        "grpc_predict": lambda: grpc_call(lambda: predict(predict_request, timeout=timeout,
                                                          metadata=metadata)),
        "rest_live": lambda: http_call(args.http_port, live, timeout),
        "rest_infer": lambda: http_call(args.http_port, infer, timeout),
    }

    def loop(kind):
        while not stop.is_set():
            start = now()
            status, ms = calls[kind]()
            with lock:
                out.write(f"{start:.6f} {kind} {ms:.3f} {status}\n")
            stop.wait(interval)

    threads = [threading.Thread(target=loop, args=(k,), daemon=True) for k in GOOD_KINDS]
    for t in threads:
        t.start()
    while not stop.is_set():
        stop.wait(0.2)
    for t in threads:
        t.join(timeout + 2)
    out.close()


# ---------------------------------------------------------------- the attacks

class Summary:
    def __init__(self):
        self.codes = Counter()
        self.notes = []
        self.start = None
        self.end = None
        self.lock = threading.Lock()

    def count(self, code, n=1):
        with self.lock:
            self.codes[str(code)] += n


def peek_status(sock):
    """The status of an answer already on `sock`, without blocking: '503',
    'closed', or 'nothing'."""
    sock.setblocking(False)
    try:
        data = sock.recv(64)
    except BlockingIOError:
        return "nothing"
    except OSError as e:
        return type(e).__name__
    if not data:
        return "closed"
    parts = data.split(b" ", 2)
    return parts[1].decode() if len(parts) > 1 and data.startswith(b"HTTP/") else "bytes"


def attack_1(args, s):
    import numpy as np
    rows = env("A1_ROWS", int)
    rng = np.random.default_rng(1)
    x = np.zeros((rows, 40), np.float32)
    for block in range(5):
        x[np.arange(rows), block * 8 + rng.integers(0, 8, rows)] = 1
    binary = x.tobytes()
    request = rest_infer_binary(args.http_port, ROWS_MODEL, {
        "inputs": [{"name": "input", "datatype": "FP32", "shape": [rows, 40],
                    "parameters": {"binary_data_size": len(binary)}}],
        "outputs": [{"name": "features"}]}, binary)
    s.notes.append(f"request {len(request)} bytes")
    socks = []
    s.start = now()
    for _ in range(env("A1_CLIENTS", int)):
        c = socket.create_connection(("127.0.0.1", args.http_port))
        c.sendall(request)
        socks.append(c)
    time.sleep(env("A1_SECONDS"))
    for c in socks:
        s.count(peek_status(c))
        c.close()
    s.end = now()


def one_sample_clips(n):
    return [wav_bytes([1000 + (i % 50)], 8000) for i in range(n)]


def attack_2a(args, s):
    clips = one_sample_clips(env("A2_CLIPS", int))
    binary = b"".join(struct.pack("<I", len(c)) + c for c in clips)
    request = rest_infer_binary(args.http_port, SOUND_MODEL, {
        "inputs": [{"name": "input", "datatype": "BYTES", "shape": [len(clips)],
                    "parameters": {"binary_data_size": len(binary)}}],
        "outputs": [{"name": "predicted_class"}]}, binary)
    n = env("A2_REQUESTS", int)
    s.notes.append(f"{n} requests of {len(request)} bytes")
    socks = [socket.create_connection(("127.0.0.1", args.http_port)) for _ in range(n)]
    s.start = now()
    for c in socks:
        c.sendall(request)
    sent = now() - s.start
    time.sleep(max(0.0, env("A2_SEND_SECONDS") - sent))
    for c in socks:
        s.count(peek_status(c))
        c.close()
    s.end = now()
    s.notes.append(f"sent in {sent:.3f} s, disconnected at {s.end - s.start:.3f} s")
    follow_up(args, s)


def follow_up(args, s):
    """A small REST infer (and a gRPC Predict) right after the disconnects."""
    # --http_timeout_seconds is 30 by default: an answer (or a 504) is due by then.
    code, ms = http_call(args.http_port, small_infer_request(args.http_port),
                         env("FOLLOW_UP_TIMEOUT_SECONDS"))
    s.notes.append(f"small REST infer right after: {code} in {ms:.0f} ms")
    s.follow_up = {"rest_code": code, "rest_ms": round(ms, 1)}
    channel = raw_channel(args.grpc_port)
    predict = raw_method(channel, "/invariant.v1.FeatureService/Predict")
    req = fs.PredictRequest(model=fs.ModelSpec(name=ROWS_MODEL),
                            inputs=fs.InputBatch(values=one_row())).SerializeToString()
    start = now()
    code = grpc_code(lambda: predict(req, timeout=env("FOLLOW_UP_TIMEOUT_SECONDS")))
    ms = (now() - start) * 1e3
    s.notes.append(f"small gRPC Predict right after: {code} in {ms:.0f} ms")
    s.follow_up.update(grpc_code=code, grpc_ms=round(ms, 1))
    channel.close()


def attack_2b(args, s):
    clips = one_sample_clips(env("A2_CLIPS", int))
    req = fs.PredictRequest(model=fs.ModelSpec(name=SOUND_MODEL),
                            inputs=fs.InputBatch(clips=[fs.AudioClip(wav=c) for c in clips]))
    body = req.SerializeToString()
    n = env("A2_REQUESTS", int)
    s.notes.append(f"{n} Predicts of {len(body)} bytes")
    channel = raw_channel(args.grpc_port)
    predict = raw_method(channel, "/invariant.v1.FeatureService/Predict")
    deadline = env("A2_DEADLINE_MS") / 1e3
    s.start = now()
    futures = [predict.future(body, timeout=deadline) for _ in range(n)]
    for f in futures:
        s.count(grpc_code(f.result))
    s.end = now()
    channel.close()
    follow_up(args, s)


def attack_3(args, s, chunked):
    n = env("A3_CONNECTIONS", int)
    headers = [("Content-Type", "application/json")]
    if chunked:
        head = http_head("POST", f"/v2/models/{ROWS_MODEL}/infer", args.http_port,
                         headers + [("Transfer-Encoding", "chunked")])
    else:
        head = http_head("POST", f"/v2/models/{ROWS_MODEL}/infer", args.http_port, headers,
                         env("A3_CONTENT_LENGTH", int))
    socks = []
    s.start = now()
    for _ in range(n):
        c = socket.create_connection(("127.0.0.1", args.http_port))
        c.sendall(head)
        socks.append(c)
    # The good client's ~300-byte infer right after the uploads opened.
    code, ms = http_call(args.http_port, small_infer_request(args.http_port),
                         env("FOLLOW_UP_TIMEOUT_SECONDS"))
    s.notes.append(f"300-byte infer right after: {code} in {ms:.0f} ms")
    s.follow_up = {"rest_code": code, "rest_ms": round(ms, 1)}
    end = s.start + env("A3_SECONDS")
    closed_at = {}
    while now() < end:
        for i, c in enumerate(socks):
            if i not in closed_at:
                st = peek_status(c)
                if st != "nothing":
                    closed_at[i] = (st, now() - s.start)
        time.sleep(0.2)
    for i, c in enumerate(socks):
        st = closed_at.get(i, ("held",))[0]
        s.count(st)
        c.close()
    if closed_at:
        s.notes.append("server answered/closed the uploads after %.1f s" %
                       max(t for _, t in closed_at.values()))
    s.end = now()


def attack_4(args, s):
    rate = env("A4_RATE", int)
    samples = int(env("A4_CLIP_SECONDS") * rate)
    import numpy as np
    rng = np.random.default_rng(4)
    clips = [wav_bytes(rng.integers(64, 192, samples, dtype=np.uint8).tobytes(), rate, bits=8)
             for _ in range(env("A4_CLIPS", int))]
    body = fs.PredictRequest(model=fs.ModelSpec(name=SOUND_MODEL),
                             inputs=fs.InputBatch(clips=[fs.AudioClip(wav=c) for c in clips])
                             ).SerializeToString()
    s.notes.append(f"Predict of {len(body) / 2**20:.1f} MiB")
    loop_clients(args, s, env("A4_CLIENTS", int), env("A4_SECONDS"), body, None)


def loop_clients(args, s, clients, seconds, body, metadata):
    s.start = now()
    end = s.start + seconds

    def client():
        channel = raw_channel(args.grpc_port)
        predict = raw_method(channel, "/invariant.v1.FeatureService/Predict")
        while now() < end:
            s.count(grpc_code(lambda: predict(body, timeout=max(0.1, end - now()),
                                              metadata=metadata)))
        channel.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s.end = now()


def attack_5(args, s):
    n_bytes = env("A5_MIB", int) << 20
    n_bytes -= n_bytes % 160  # whole rows of 40 floats
    body = fs.PredictRequest(model=fs.ModelSpec(name=ROWS_MODEL),
                             inputs=fs.InputBatch(raw_values=bytes(n_bytes))).SerializeToString()
    s.notes.append(f"Predict of {len(body) / 2**20:.1f} MiB, no token")
    loop_clients(args, s, env("A5_CALLS", int), env("A5_SECONDS"), body, None)


def attack_6(args, s):
    n = env("A6_CLIPS", int)
    body_obj = {"inputs": [{"name": "input", "datatype": "INT16", "shape": [n, 1],
                            "data": [100 + i % 900 for i in range(n)]}],
                "outputs": [{"name": "predicted_class"}]}
    request = rest_infer_json(args.http_port, SOUND_MODEL, body_obj)
    s.notes.append(f"JSON body {len(request)} bytes with its headers")
    s.start = now()
    end = s.start + env("A6_SECONDS")
    open_socks = set()
    lock = threading.Lock()

    def client():
        while now() < end:
            try:
                c = socket.create_connection(("127.0.0.1", args.http_port))
            except OSError as e:
                s.count(type(e).__name__)
                continue
            with lock:
                open_socks.add(c)
            try:
                c.settimeout(max(0.1, end - now()))
                c.sendall(request)
                status, _ = read_response(c)
                s.count(status)
            except socket.timeout:
                s.count("in flight at the end")
            except (ConnectionError, OSError) as e:
                s.count(type(e).__name__)
            finally:
                with lock:
                    open_socks.discard(c)
                c.close()

    threads = [threading.Thread(target=client) for _ in range(env("A6_CLIENTS", int))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s.end = now()


def attack_7(args, s):
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    n = env("A7_CONNECTIONS", int)
    socks = []
    s.start = now()
    failed = Counter()
    for _ in range(n):
        try:
            socks.append(socket.create_connection(("127.0.0.1", args.http_port), timeout=5))
        except OSError as e:
            failed[type(e).__name__] += 1
    s.notes.append(f"opened {len(socks)} of {n} in {now() - s.start:.1f} s "
                   f"(fd limit {hard}); connect errors {dict(failed)}")
    for k, v in failed.items():
        s.count("connect " + k, v)
    time.sleep(1)
    held = Counter(peek_status(c) for c in socks)
    s.notes.append(f"the attacker's connections after 1 s: {dict(held)}")
    for k, v in held.items():
        s.count(k, v)
    live = http_head("GET", "/v2/health/live", args.http_port)
    probes = Counter()
    end = s.start + env("A7_SECONDS")
    worst = 0.0
    while now() < end:
        code, ms = http_call(args.http_port, live, 5)
        probes[code] += 1
        worst = max(worst, ms)
        time.sleep(0.25)
    s.notes.append(f"fresh /v2/health/live while held: {dict(probes)}, slowest {worst:.0f} ms")
    s.follow_up = {"probes": dict(probes)}
    for c in socks:
        c.close()
    s.end = now()


def cmd_attack(args):
    import_stubs(args.python)
    s = Summary()
    s.follow_up = {}
    fn = {"1": attack_1, "2a": attack_2a, "2b": attack_2b,
          "3a": lambda a, x: attack_3(a, x, False), "3b": lambda a, x: attack_3(a, x, True),
          "4": attack_4, "5": attack_5, "6": attack_6, "7": attack_7}[args.which]
    ready = now()
    fn(args, s)
    print(json.dumps({"attack": args.which, "prepared_at": ready, "start": s.start,
                      "end": s.end, "codes": dict(s.codes), "notes": s.notes,
                      "follow_up": s.follow_up}))


# ---------------------------------------------------------------- the orchestrator

def proc_sample(pid):
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return rss / 1024.0, ticks / os.sysconf("SC_CLK_TCK")


class Sampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid = pid
        self.samples = []  # (t, rss MiB, cpu s)
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                rss, cpu = proc_sample(self.pid)
            except (OSError, StopIteration):
                return
            self.samples.append((now(), rss, cpu))
            self.stop.wait(0.05)

    def at(self, t):
        """The last sample at or before t."""
        best = self.samples[0]
        for sample in self.samples:
            if sample[0] > t:
                break
            best = sample
        return best


def start_server(args, out_dir, name, extra):
    flags = [f"--models={args.models}", "--host=127.0.0.1", "--port=0", "--http_port=0",
             "--metrics_port=0"] + extra
    stdout = open(os.path.join(out_dir, f"server-{name}.stdout"), "w")
    stderr = open(os.path.join(out_dir, f"server-{name}.stderr"), "w")
    proc = subprocess.Popen([os.path.join(args.bin, "invariant-server")] + flags,
                            stdout=subprocess.PIPE, stderr=stderr, text=True)
    line = ""
    deadline = now() + 120
    while now() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        stdout.write(line)
        if "invariant-server ready" in line:
            break
    if "invariant-server ready" not in line:
        proc.kill()
        raise SystemExit(f"attacks: the server did not start; see {stderr.name}")
    ports = dict(kv.split("=") for kv in line.split() if "=" in kv)
    threading.Thread(target=lambda: [stdout.write(x) for x in proc.stdout], daemon=True).start()
    return proc, int(ports["grpc_port"]), int(ports["http_port"]), flags


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def run_one(args, which):
    out_dir = args.out
    extra = []
    token = ""
    if which == "5":
        token_file = os.path.join(out_dir, "data_token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        extra.append(f"--data_token_file={token_file}")
        token = TOKEN
    proc, grpc_port, http_port, flags = start_server(args, out_dir, which, extra)
    sampler = Sampler(proc.pid)
    sampler.start()
    common = ["--python", args.python, "--grpc_port", str(grpc_port),
              "--http_port", str(http_port)]
    good_file = os.path.join(out_dir, f"good-{which}.txt")
    good = subprocess.Popen([sys.executable, __file__, "good", "--out", good_file,
                             "--token", token] + common)
    time.sleep(env("PRE_SECONDS"))
    attack_log = open(os.path.join(out_dir, f"attack-{which}.stderr"), "w")
    t_launch = now()
    attacker = subprocess.run([sys.executable, __file__, "attack", which] + common,
                              stdout=subprocess.PIPE, stderr=attack_log, text=True)
    t_attacker_exit = now()
    try:
        summary = json.loads(attacker.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        summary = {"codes": {"attacker failed": 1}, "notes": [], "follow_up": {},
                   "start": t_launch, "end": t_attacker_exit}
    t0 = summary.get("start") or t_launch
    t1 = summary.get("end") or t_attacker_exit
    # The good client's CPU baseline: the pre-attack window, first second skipped.
    base_a = sampler.at(t_launch - env("PRE_SECONDS") + 1.0)
    base_b = sampler.at(t_launch)
    base_rate = (base_b[2] - base_a[2]) / max(1e-3, base_b[0] - base_a[0])
    rss_start = base_b[1]
    # Settle: until the server's CPU over the last second is back to the baseline.
    settle_end = now() + env("SETTLE_MAX_SECONDS")
    settled = False
    time.sleep(1.0)
    while now() < settle_end:
        a, b = sampler.at(now() - 1.0), sampler.at(now())
        rate = (b[2] - a[2]) / max(1e-3, b[0] - a[0])
        if rate <= base_rate * 1.5 + 0.05:
            settled = True
            break
        time.sleep(0.25)
    t2 = now()
    time.sleep(env("AFTER_SECONDS"))
    t3 = now()
    rss_after = sampler.at(t3)[1]
    good.send_signal(signal.SIGTERM)
    good.wait()
    sampler.stop.set()
    sampler.join()
    stop_server(proc)

    c0, c1, c2 = sampler.at(t0)[2], sampler.at(t1)[2], sampler.at(t2)[2]
    cpu_attack = (c1 - c0) - base_rate * (t1 - t0)
    cpu_after = (c2 - c1) - base_rate * (t2 - t1)
    peak = max(r for t, r, _ in sampler.samples if t >= t_launch - 0.5)
    calls = {k: [] for k in GOOD_KINDS}
    errors = Counter()
    with open(good_file) as f:
        for line in f:
            t, kind, ms, status = line.split()
            t, ms = float(t), float(ms)
            # Every call in flight at some time between the attack's start and
            # the end of the settle time (one sent just before the attack and
            # held by it counts too).
            if t <= t2 and t + ms / 1e3 >= t0:
                calls[kind].append(ms)
                if status not in ("OK", "200"):
                    errors[f"{kind}:{status}"] += 1
    with open(os.path.join(out_dir, f"timeline-{which}.json"), "w") as f:
        json.dump({"launch": t_launch, "start": t0, "end": t1, "settled": t2, "after": t3,
                   "baseline_cpu_cores": base_rate,
                   "samples": [[round(t, 3), round(r, 1), round(c, 2)]
                               for t, r, c in sampler.samples]}, f)
    row = {"attack": which, "title": TITLES[which],
           "attack_seconds": round(t1 - t0, 2), "settle_seconds": round(t2 - t1, 2),
           "settled": settled}
    for kind in GOOD_KINDS:
        row[f"{kind}_n"] = len(calls[kind])
        row[f"{kind}_p50_ms"] = round(pct(calls[kind], 0.5), 1)
        row[f"{kind}_p99_ms"] = round(pct(calls[kind], 0.99), 1)
    row.update(good_errors=sum(errors.values()), good_error_kinds=dict(errors),
               rss_start_mib=round(rss_start, 1), peak_rss_mib=round(peak, 1),
               rss_after_mib=round(rss_after, 1),
               rss_after_minus_start_mib=round(rss_after - rss_start, 1),
               cpu_attack_s=round(cpu_attack, 2), cpu_after_s=round(cpu_after, 2),
               baseline_cpu_cores=round(base_rate, 3),
               attacker_codes=summary.get("codes", {}), follow_up=summary.get("follow_up", {}),
               notes=summary.get("notes", []), flags=flags,
               server_exit=proc.returncode)
    return row


BUDGET_MIB = (256 + 256) + 200e6 / 2**20  # max_queue_bytes + http_max_inflight_bytes + 200 MB


def verdicts(row):
    p99 = max(row[f"{k}_p99_ms"] for k in GOOD_KINDS)
    return {
        "latency": p99 <= 100 and row["good_errors"] == 0,
        "peak_rss": row["peak_rss_mib"] <= BUDGET_MIB,
        "cpu": row["cpu_after_s"] <= 1.0,
        "rss_back": abs(row["rss_after_minus_start_mib"]) <= 50e6 / 2**20,
    }


def cmd_run(args):
    os.makedirs(args.out, exist_ok=True)
    which = [a for a in args.attacks.split(",") if a] if args.attacks else ATTACKS
    rows = []
    for w in which:
        print(f"attacks: {w}: {TITLES[w]} ...", flush=True)
        row = run_one(args, w)
        rows.append(row)
        v = verdicts(row)
        print("attacks: %s: p99 ms health %s/%s live %s infer %s (grpc/grpc/rest/rest), "
              "errors %d, peak %.0f MiB, after-start %+.0f MiB, cpu attack %.1f s after %.1f s%s; "
              "attacker %s; %s" % (
                  w, row["grpc_health_p99_ms"], row["grpc_predict_p99_ms"],
                  row["rest_live_p99_ms"], row["rest_infer_p99_ms"], row["good_errors"],
                  row["peak_rss_mib"], row["rss_after_minus_start_mib"], row["cpu_attack_s"],
                  row["cpu_after_s"], "" if row["settled"] else " (not settled)",
                  row["attacker_codes"], " ".join(k for k, ok in v.items() if not ok) or "all met"),
              flush=True)
    columns = ["attack", "attack_seconds", "settle_seconds", "settled"]
    for k in GOOD_KINDS:
        columns += [f"{k}_n", f"{k}_p50_ms", f"{k}_p99_ms"]
    columns += ["good_errors", "rss_start_mib", "peak_rss_mib", "rss_after_mib",
                "rss_after_minus_start_mib", "cpu_attack_s", "cpu_after_s", "baseline_cpu_cores",
                "attacker_codes", "good_error_kinds", "follow_up"]
    with open(os.path.join(args.out, "admission.csv"), "w") as f:
        f.write(",".join(columns) + "\n")
        for row in rows:
            cells = []
            for c in columns:
                v = row[c]
                if isinstance(v, dict):
                    v = ";".join(f"{k}={x}" for k, x in v.items())
                cells.append('"%s"' % v if isinstance(v, str) and ("," in v or ";" in v) else str(v))
            f.write(",".join(cells) + "\n")
    meta = {"commit": args.commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": args.machine, "load_before": args.load, "load_after": os.getloadavg(),
            "command": args.command, "flags": rows[0]["flags"] if rows else [],
            "env": {k: os.environ.get(k, v[0]) for k, v in ENV.items()}}
    with open(os.path.join(args.out, "admission.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)


# ---------------------------------------------------------------- the report

BEGIN = "<!-- admission:generated:begin (bench/admission/attacks.py report; do not edit) -->"
END = "<!-- admission:generated:end -->"
DATA = "<!-- admission:data "


# What peek_status and the attackers record, in words.
CODE_WORDS = {"nothing": "no answer yet", "closed": "closed by the server", "held": "held open",
              "in flight at the end": "no answer by the end"}


def fmt_ms(x):
    return "—" if x != x else (f"{x:.0f}" if x >= 10 else f"{x:.1f}")


def mark(ok):
    return "" if ok else " ✗"


def render(runs):
    """Markdown for every labelled run: a before/after comparison and one detail table each."""
    labels = list(runs)
    out = []
    ids = []
    for label in labels:
        for r in runs[label]["rows"]:
            if r["attack"] not in ids:
                ids.append(r["attack"])
    by = {label: {r["attack"]: r for r in runs[label]["rows"]} for label in labels}
    out.append("### The targets, run by run\n")
    out.append("Worst good-client p99 over its four calls, in ms (target ≤ 100, and no "
               "errors); peak RSS in MiB (target ≤ %.0f MiB: `--max_queue_bytes` + "
               "`--http_max_inflight_bytes` + 200 MB); server CPU after the attack ended, "
               "above the good client's own, in s (target ≤ 1); RSS after − RSS at start, in "
               "MiB (target within ±48 MiB, i.e. 50 MB). ✗ marks a missed target.\n" % BUDGET_MIB)
    head = "| attack |"
    sep = "|---|"
    for label in labels:
        commit = runs[label]["meta"]["commit"]
        for what in ("p99 ms", "errors", "peak MiB", "CPU after s", "RSS Δ MiB"):
            head += f" {what} ({label}, {commit}) |"
            sep += "---:|"
    out += [head, sep]
    for a in ids:
        line = f"| {a}: {TITLES[a]} |"
        for label in labels:
            r = by[label].get(a)
            if r is None:
                line += " — | — | — | — | — |"
                continue
            v = verdicts(r)
            p99 = max(r[f"{k}_p99_ms"] for k in GOOD_KINDS)
            line += (f" {fmt_ms(p99)}{mark(p99 <= 100)} | {r['good_errors']}"
                     f"{mark(r['good_errors'] == 0)} | {r['peak_rss_mib']:.0f}{mark(v['peak_rss'])} |"
                     f" {r['cpu_after_s']:.1f}{'' if r['settled'] else '+'}{mark(v['cpu'])} |"
                     f" {r['rss_after_minus_start_mib']:+.0f}{mark(v['rss_back'])} |")
        out.append(line)
    out.append("\n`+` after a CPU figure: the server was still busy when the settle wait "
               "(`SETTLE_MAX_SECONDS`) ran out, so the abandoned work is at least that.\n")
    for label in labels:
        meta = runs[label]["meta"]
        out.append(f"### Details: {label} (commit {meta['commit']}, {meta['date']})\n")
        out.append(f"* Command: `{meta['command']}`")
        out.append(f"* Machine: {meta['machine']}")
        out.append("* Load average (1, 5, 15 min) before the run: %s; after: %s" % (
            meta["load_before"], " ".join(f"{x:.2f}" for x in meta["load_after"])))
        out.append("* Server flags: `%s` (every other flag at its default; attack 5 adds "
                   "`--data_token_file`)" % " ".join(f for f in meta["flags"]
                                                     if not f.startswith("--models")))
        changed = {k: v for k, v in meta["env"].items() if v != ENV[k][0]}
        out.append("* Scale: the issue's (defaults of `bench/admission/attacks.py`)" +
                   (f", except {changed}" if changed else ""))
        out.append("")
        out.append("| attack | gRPC health p50 / p99 ms | gRPC Predict p50 / p99 ms | "
                   "REST live p50 / p99 ms | REST infer p50 / p99 ms | good-client errors | "
                   "RSS start / peak / after MiB | CPU during / after s | attack / settle s | "
                   "the attacker got |")
        out.append("|---|---:|---:|---:|---:|---|---:|---:|---:|---|")
        for r in runs[label]["rows"]:
            cells = [f"{fmt_ms(r[f'{k}_p50_ms'])} / {fmt_ms(r[f'{k}_p99_ms'])}" for k in GOOD_KINDS]
            errs = ", ".join(f"{k} ×{n}" for k, n in sorted(r["good_error_kinds"].items())) or "0"
            got = ", ".join(f"{CODE_WORDS.get(k, k)} ×{n}"
                            for k, n in sorted(r["attacker_codes"].items()))
            fu = r.get("follow_up") or {}
            if "rest_code" in fu:
                got += f"; small REST infer right after: {fu['rest_code']} in {fmt_ms(fu['rest_ms'])} ms"
            if "grpc_code" in fu:
                got += f"; small gRPC Predict right after: {fu['grpc_code']} in {fmt_ms(fu['grpc_ms'])} ms"
            if "probes" in fu:
                got += "; fresh /v2/health/live: " + ", ".join(
                    f"{k} ×{n}" for k, n in sorted(fu["probes"].items()))
            out.append(f"| {r['attack']} | " + " | ".join(cells) +
                       f" | {errs} | {r['rss_start_mib']:.0f} / {r['peak_rss_mib']:.0f} / "
                       f"{r['rss_after_mib']:.0f} | {r['cpu_attack_s']:.1f} / "
                       f"{r['cpu_after_s']:.1f}{'' if r['settled'] else '+'} | "
                       f"{r['attack_seconds']:.1f} / {r['settle_seconds']:.1f} | {got} |")
        out.append("")
    return "\n".join(out)


def cmd_report(args):
    with open(args.results) as f:
        new = json.load(f)
    with open(args.doc) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"attacks: {args.doc} has no markers {BEGIN!r} … {END!r}")
    pre, rest = text.split(BEGIN, 1)
    generated, post = rest.split(END, 1)
    runs = {}
    for chunk in generated.split(DATA)[1:]:
        label, _, body = chunk.partition("\n")
        runs[label.strip()] = json.loads(body.split("-->", 1)[0])
    # Keep only what the tables need (no notes bulk).
    runs[args.label] = new
    order = ["before", "after"]
    runs = dict(sorted(runs.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order
                                                     else len(order), kv[0])))
    body = render(runs)
    data = "".join(f"{DATA}{label}\n{json.dumps(run, separators=(',', ':'))}\n-->\n"
                   for label, run in runs.items())
    with open(args.doc, "w") as f:
        f.write(pre + BEGIN + "\n" + body + "\n" + data + END + post)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in ("good", "attack"):
        p = sub.add_parser(name)
        if name == "attack":
            p.add_argument("which", choices=ATTACKS)
        else:
            p.add_argument("--out", required=True)
            p.add_argument("--token", default="")
        p.add_argument("--python", required=True)
        p.add_argument("--grpc_port", type=int, required=True)
        p.add_argument("--http_port", type=int, required=True)
    p = sub.add_parser("run")
    p.add_argument("--bin", required=True)
    p.add_argument("--models", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--attacks", default=os.environ.get("ATTACKS", ""))
    p.add_argument("--commit", default="")
    p.add_argument("--machine", default="")
    p.add_argument("--load", default="")
    p.add_argument("--command", default="")
    p = sub.add_parser("report")
    p.add_argument("--results", required=True)
    p.add_argument("--doc", required=True)
    p.add_argument("--label", required=True)
    args = parser.parse_args()
    {"good": cmd_good, "attack": cmd_attack, "run": cmd_run, "report": cmd_report}[args.cmd](args)


if __name__ == "__main__":
    main()
