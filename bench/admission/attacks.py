#!/usr/bin/python3
"""Issue 32's and issue 50's attacks against invariant-server, with a well-behaved client beside them.

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
  attack  one attack (1, 2a, 2b, 3a, 3b, 4, 5, 6, 7; issue 50's stream, stream1,
          signal, bundle, bundle-header, repository); prints a JSON summary
  report  puts OUT/admission.json into docs/benchmarks/admission.md between the
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
    # Issue 50. A safety net for them all: the orchestrator kills the server
    # (SIGKILL) if its RSS passes this, whatever the attack.
    "RSS_KILL_MIB": ("14336", "server RSS at which the orchestrator kills it (machine safety)"),
    # stream / stream1: streams that never read their answers
    "STREAM_CLIENTS": ("32", "StreamFeaturize streams (stream: a connection each; stream1: "
                       "all on one connection)"),
    "STREAM_REQUESTS": ("64", "requests each stream sends (its responses are never read)"),
    "STREAM_ROWS": ("819", "rows of the rows model (40 inputs) per request"),
    "STREAM_SECONDS": ("35", "how long the streams are held open, unread"),
    "STREAM_ABORT_MIB": ("12288", "the attacker cancels its streams if the server's RSS "
                         "passes this"),
    # signal: a SIGHUP flood, then one SIGTERM
    "SIGNAL_PROCESSES": ("2", "processes sending SIGHUP in a tight os.kill loop"),
    "SIGNAL_COUNT": ("400000", "SIGHUPs sent in all (the flood ends at this or at "
                     "SIGNAL_FLOOD_SECONDS)"),
    "SIGNAL_FLOOD_SECONDS": ("5", "longest flood"),
    "SIGNAL_EXIT_SECONDS": ("30", "bound on the exit after the SIGTERM (then SIGKILL)"),
    # bundle / bundle-header: a 3 GiB sparse bundle, then a rescan (SIGHUP)
    "BUNDLE_MODEL": ("rows", "the model that gets the new version (the good client's)"),
    "BUNDLE_BYTES": ("3221225472", "size of the sparse model.bundle"),
    "BUNDLE_SECONDS": ("35", "how long the bundle stays in place (one poll rescan at 30 s "
                       "included)"),
    "BUNDLE_PATCH_LENGTH": ("1", "bundle-header: 1 = the real header's file_length set to "
                            "BUNDLE_BYTES and its CRC recomputed (passes every header check); "
                            "0 = the 64 bytes verbatim"),
    # repository: unloads draining behind a call held by the paused batcher
    "REPO_GRPC_UNLOADS": ("4", "concurrent gRPC RepositoryModelUnloads, each of its own copy of rows"),
    "REPO_REST_UNLOADS": ("10", "concurrent REST POST /v2/repository/models/NAME/unload, each of its own copy"),
    "REPO_PROBES": ("5", "gRPC ServerLive calls (and REST metadata GETs) while they drain"),
    "REPO_PROBE_DEADLINE_SECONDS": ("3", "deadline of each probe"),
    "REPO_HOLD_SECONDS": ("5", "least time the call is held (SIGUSR1 once the probes are done)"),
    "REPO_DRAIN_SECONDS": ("30", "--drain_seconds (how long an unload waits for the call)"),
}


def env(name, cast=float):
    return cast(os.environ.get(name, ENV[name][0]))


ISSUE32 = ["1", "2a", "2b", "3a", "3b", "4", "5", "6", "7"]
ISSUE50 = ["stream", "stream1", "signal", "bundle", "bundle-header", "repository"]
ATTACKS = ISSUE32 + ISSUE50
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
    "stream": "non-reading streams (32 StreamFeaturize, a connection each, 64 x 819 rows, "
              "never read)",
    "stream1": "non-reading streams on one connection (the same 32 on one channel)",
    "signal": "signal flood (~400k SIGHUP in a few seconds, then one SIGTERM)",
    "bundle": "3 GiB sparse model.bundle with a bad magic, then SIGHUP",
    "bundle-header": "3 GiB sparse model.bundle behind a real bundle's header, then SIGHUP",
    "repository": "unloads draining (4 gRPC + 10 REST unloads, each behind a held call)",
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

    kinds = [k for k in args.kinds.split(",") if k] if args.kinds else GOOD_KINDS
    threads = [threading.Thread(target=loop, args=(k,), daemon=True) for k in kinds]
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


# ---------------------------------------------------------------- issue 50's attacks

def server_rss_mib(pid):
    """The server's VmRSS in MiB, or None once it has exited (or is a zombie)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def server_exited(pid):
    """True once the process is gone or a zombie (exited, not yet reaped by its parent)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def http_get_body(port, path, timeout):
    """GET on a fresh connection (Connection: close): (status or error name, body text)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
            c.sendall(http_head("GET", path, port, [("Connection", "close")]))
            data = b""
            while True:
                chunk = c.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
    except (OSError, socket.timeout) as e:
        return type(e).__name__, ""
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    return (parts[1].decode() if len(parts) > 1 else "bytes"), body.decode(errors="replace")


def metric_lines(port, name):
    """{labels: value} of every sample of `name` on the metrics port (empty if unreadable)."""
    code, text = http_get_body(port, "/metrics", 5)
    out = {}
    if code != "200":
        return out
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            key, _, value = line.rpartition(" ")
            out[key[len(name):] or "{}"] = float(value)
    return out


def log_count(path, needle):
    try:
        with open(path, errors="replace") as f:
            return f.read().count(needle)
    except OSError:
        return 0


def log_lines(path, needle, limit=2):
    try:
        with open(path, errors="replace") as f:
            return [line.strip() for line in f if needle in line][:limit]
    except OSError:
        return []


def xperm_rows(rows, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    x = np.zeros((rows, 40), np.float32)
    for block in range(5):
        x[np.arange(rows), block * 8 + rng.integers(0, 8, rows)] = 1
    return x


def attack_stream(args, s, one_connection):
    """STREAM_CLIENTS bidi StreamFeaturize streams each send STREAM_REQUESTS
    requests and never read a response; held STREAM_SECONDS (cancelled early
    if the server's RSS passes STREAM_ABORT_MIB)."""
    rows = env("STREAM_ROWS", int)
    body = fs.FeaturizeRequest(model=fs.ModelSpec(name=ROWS_MODEL),
                               inputs=fs.InputBatch(num_rows=rows,
                                                    raw_values=xperm_rows(rows, 50).tobytes())
                               ).SerializeToString()
    n, per = env("STREAM_CLIENTS", int), env("STREAM_REQUESTS", int)
    seconds, abort_mib = env("STREAM_SECONDS"), env("STREAM_ABORT_MIB")
    s.notes.append(f"{n} streams on {1 if one_connection else n} connection(s), {per} requests "
                   f"of {len(body)} bytes ({rows} rows) each; a response is ~"
                   f"{rows * 625 * 4 / 2**20:.1f} MiB of features, never read")
    refused_before = metric_lines(args.metrics_port, "invariant_admission_refused_total")
    stop = threading.Event()
    sent = [0] * n
    channels = ([raw_channel(args.grpc_port)] if one_connection
                else [raw_channel(args.grpc_port) for _ in range(n)])

    def requests(i):
        for _ in range(per):
            if stop.is_set():
                return
            yield body
            sent[i] += 1
        stop.wait()  # held open (no half-close) until the end

    calls = []
    s.start = now()
    for i in range(n):
        method = channels[0 if one_connection else i].stream_stream(
            "/invariant.v1.FeatureService/StreamFeaturize",
            request_serializer=lambda b: b, response_deserializer=lambda b: b)
        calls.append(method(requests(i), timeout=seconds + 60))
    end = s.start + seconds
    aborted = None
    peak = 0.0
    while now() < end:
        rss = server_rss_mib(args.server_pid)
        if rss is None:
            s.notes.append(f"the server exited at {now() - s.start:.1f} s")
            break
        peak = max(peak, rss)
        if rss > abort_mib:
            aborted = (now() - s.start, rss)
            break
        time.sleep(0.1)
    # What is observable without reading: streams the server already ended
    # (their status came), and the server's own count of admission refusals.
    for c in calls:
        s.count(c.code().name if c.done() else "open, unread")
    refused_after = metric_lines(args.metrics_port, "invariant_admission_refused_total")
    refused = {k: int(v - refused_before.get(k, 0)) for k, v in refused_after.items()
               if v - refused_before.get(k, 0) > 0}
    stop.set()
    for c in calls:
        c.cancel()
    s.end = now()
    for ch in channels:
        ch.close()
    total = sum(refused.values())
    s.notes.append(f"requests handed to gRPC: {sum(sent)} of {n * per}")
    s.notes.append(f"admission refusals (RESOURCE_EXHAUSTED) counted by the server during the "
                   f"attack: {total} {refused}")
    text = f"RESOURCE_EXHAUSTED ×{total} (server's count), {sum(sent)}/{n * per} requests sent"
    if aborted:
        text += f"; aborted at {aborted[0]:.1f} s, RSS {aborted[1]:.0f} MiB"
        s.notes.append(f"aborted: server RSS {aborted[1]:.0f} MiB > STREAM_ABORT_MIB "
                       f"at {aborted[0]:.1f} s")
    s.outcome = {"ok": None, "text": text, "refused": total, "requests_sent": sum(sent),
                 "aborted": aborted is not None}


SIGNAL_SENDER = r"""
import os, signal, sys, time
pid, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
kill, hup = os.kill, signal.SIGHUP
deadline = time.monotonic() + seconds
sent, error = 0, ""
try:
    while sent < count and time.monotonic() < deadline:
        for _ in range(min(1000, count - sent)):
            kill(pid, hup)
        sent += min(1000, count - sent)
except OSError as e:
    error = type(e).__name__
print(sent, error)
"""


def attack_signal(args, s):
    """SIGNAL_COUNT SIGHUPs from SIGNAL_PROCESSES tight loops, then one
    SIGTERM: does the server exit within SIGNAL_EXIT_SECONDS?"""
    pid = args.server_pid
    procs, total = env("SIGNAL_PROCESSES", int), env("SIGNAL_COUNT", int)
    flood, bound = env("SIGNAL_FLOOD_SECONDS"), env("SIGNAL_EXIT_SECONDS")
    s.start = now()
    senders = [subprocess.Popen([sys.executable, "-c", SIGNAL_SENDER, str(pid),
                                 str(total // procs), str(flood)],
                                stdout=subprocess.PIPE, text=True) for _ in range(procs)]
    sent, errors = 0, Counter()
    for p in senders:
        out = p.communicate()[0].split()
        sent += int(out[0]) if out else 0
        if len(out) > 1:
            errors[out[1]] += 1
    flood_s = now() - s.start
    s.count("SIGHUP sent", sent)
    hups_logged = log_count(args.server_log, "SIGHUP: rescanning models")
    t_term = now()
    os.kill(pid, signal.SIGTERM)
    s.count("SIGTERM sent")
    s.good_until = t_term  # the good client's calls after the SIGTERM meet a draining server
    exited_after = None
    while now() - t_term < bound:
        if server_exited(pid):
            exited_after = now() - t_term
            break
        time.sleep(0.05)
    s.end = now()
    hups_by_end = log_count(args.server_log, "SIGHUP: rescanning models")
    drained = log_count(args.server_log, ": draining") > 0
    s.notes.append(f"{sent} SIGHUP sent by {procs} processes in {flood_s:.2f} s "
                   f"({sent / max(flood_s, 1e-3):.0f}/s){'; errors ' + str(dict(errors)) if errors else ''}")
    s.notes.append(f"rescans logged: {hups_logged} when the SIGTERM was sent, {hups_by_end} "
                   f"{'at the exit' if exited_after is not None else f'{bound:.0f} s later'}; "
                   f"the SIGTERM {'was' if drained else 'was not'} logged (\"draining\")")
    if exited_after is None:
        s.kill_server = True
        s.notes.append(f"not exited {bound:.0f} s after the SIGTERM: killed (SIGKILL)")
        text = f"not exited within {bound:.0f} s (killed); SIGTERM {'seen' if drained else 'not seen'}"
    else:
        text = f"exited {exited_after:.1f} s after the SIGTERM"
    text += f"; {sent} SIGHUP in {flood_s:.1f} s, {hups_by_end} rescans logged"
    s.outcome = {"ok": exited_after is not None and exited_after <= bound, "text": text,
                 "exit_seconds": None if exited_after is None else round(exited_after, 2),
                 "sighup_sent": sent, "rescans_logged": hups_by_end,
                 "sigterm_logged": drained}


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def attack_bundle(args, s, header):
    """A BUNDLE_BYTES sparse file as BUNDLE_MODEL's next version (bad magic,
    or behind a real bundle's header), then SIGHUP; how long until the
    refusal shows in the log / repository index, held BUNDLE_SECONDS."""
    name, size, hold = env("BUNDLE_MODEL", str), env("BUNDLE_BYTES", int), env("BUNDLE_SECONDS")
    model_dir = os.path.join(args.models, name)
    versions = sorted(int(v) for v in os.listdir(model_dir) if v.isdigit())
    version = versions[-1] + 1
    staging = os.path.join(os.path.dirname(os.path.abspath(args.models)),
                           f"bundle-attack-{os.getpid()}")
    os.makedirs(os.path.join(staging, str(version)))
    path = os.path.join(staging, str(version), "model.bundle")
    with open(path, "wb") as f:
        if header:
            with open(os.path.join(model_dir, str(versions[-1]), "model.bundle"), "rb") as real:
                head = bytearray(real.read(64))
            stored = struct.unpack_from("<I", head, 60)[0]
            if crc32c(bytes(head[:60])) != stored:
                s.notes.append("warning: the CRC-32C computed here differs from the real header's")
            real_length = struct.unpack_from("<Q", head, 24)[0]
            if env("BUNDLE_PATCH_LENGTH", int):
                struct.pack_into("<Q", head, 24, size)
                struct.pack_into("<I", head, 60, crc32c(bytes(head[:60])))
                s.notes.append(f"header of {name}/{versions[-1]} ({real_length} bytes), its "
                               f"file_length set to {size} and its CRC recomputed")
            else:
                s.notes.append(f"header of {name}/{versions[-1]} verbatim (file_length "
                               f"{real_length})")
            f.write(head)
        f.truncate(size)  # sparse: no block written past the header
    blocks = os.stat(path).st_blocks * 512
    s.notes.append(f"{name}/{version}/model.bundle: {size} bytes, {blocks} on disk")
    index = raw_method(raw_channel(args.grpc_port), "/inference.GRPCInferenceService/RepositoryIndex")
    index_req = oip.RepositoryIndexRequest().SerializeToString()
    needle = f"model '{name}' version {version} failed to load"
    target = os.path.join(model_dir, str(version))
    os.rename(os.path.join(staging, str(version)), target)  # the version appears at once
    s.start = now()
    os.kill(args.server_pid, signal.SIGHUP)
    in_log = in_index = None
    reason = state = ""
    end = s.start + hold
    while now() < end:
        if in_log is None and log_count(args.server_log, needle):
            in_log = now() - s.start
        if in_index is None:
            try:
                answer = oip.RepositoryIndexResponse.FromString(index(index_req, timeout=2))
                for m in answer.models:
                    if m.name == name and m.version == str(version):
                        state, reason = m.state, m.reason
                if state == "UNAVAILABLE" and reason:
                    in_index = now() - s.start
            except grpc.RpcError as e:
                s.count("index " + e.code().name)
        time.sleep(0.05)
    reads = log_count(args.server_log, needle)
    os.remove(os.path.join(target, "model.bundle"))
    os.rmdir(target)
    os.rmdir(staging)
    s.end = now()
    s.count(f"version {version}: {state or 'not in the index'}")
    line = (log_lines(args.server_log, needle) or [""])[0]
    s.notes.append(f"refusal in the log after {in_log if in_log is None else round(in_log, 2)} s, "
                   f"in the index after {in_index if in_index is None else round(in_index, 2)} s; "
                   f"{reads} failed load(s) logged in {hold:.0f} s")
    s.notes.append(f"log: {line[:300]}")
    s.notes.append(f"index reason: {reason[:300]}")
    seen = [t for t in (in_log, in_index) if t is not None]
    if seen:
        text = (f"refused in {min(seen):.1f} s (log {fmt_s(in_log)}, index {fmt_s(in_index)}); "
                f"read {reads}× in {hold:.0f} s")
    else:
        text = f"no refusal seen in {hold:.0f} s (index state: {state or '—'})"
    s.outcome = {"ok": bool(seen), "text": text, "log_seconds": in_log and round(in_log, 2),
                 "index_seconds": in_index and round(in_index, 2), "failed_loads": reads,
                 "reason": reason[:300]}


def fmt_s(x):
    return "—" if x is None else f"{x:.1f} s"


REPO_MODEL = "rows_u"  # copies of rows (rows_u0, ...), under --model_control=explicit


def attack_repository(args, s):
    """A Predict on each of REPO_GRPC_UNLOADS + REPO_REST_UNLOADS copies of
    rows, held by the paused batcher; then one unload of each at once (gRPC
    for the first REPO_GRPC_UNLOADS, REST for the others), each draining
    behind its call; meanwhile REPO_PROBES gRPC ServerLive calls and REST
    metadata GETs; then SIGUSR1 releases the calls."""
    names = repository_unload_names()
    grpc_names = names[:env("REPO_GRPC_UNLOADS", int)]
    rest_names = names[len(grpc_names):]
    deadline = env("REPO_PROBE_DEADLINE_SECONDS")
    channel = raw_channel(args.grpc_port)
    predict = raw_method(channel, "/invariant.v1.FeatureService/Predict")
    held_calls = [predict.future(fs.PredictRequest(model=fs.ModelSpec(name=a),
                                                   inputs=fs.InputBatch(values=one_row())
                                                   ).SerializeToString(), timeout=120)
                  for a in names]
    queued, t_wait = 0, now()
    while queued < len(names) and now() - t_wait < 20:
        lines = metric_lines(args.metrics_port, "invariant_queue_rows")
        queued = sum(1 for a in names if lines.get(f'{{model="{a}"}}', 0) >= 1)
        if queued < len(names):
            time.sleep(0.05)
    s.notes.append(f"Predicts queued (paused batcher): {queued} of {len(names)} after "
                   f"{now() - t_wait:.2f} s")
    unload = raw_method(channel, "/inference.GRPCInferenceService/RepositoryModelUnload")
    done = []  # (kind, code, end time)
    lock = threading.Lock()

    def rest_unload(a):
        code, _ = http_call(args.http_port,
                            http_head("POST", f"/v2/repository/models/{a}/unload",
                                      args.http_port, [], 0), 90)
        with lock:
            done.append(("rest", code, now()))

    def grpc_done(f):
        code = grpc_code(f.result)
        with lock:
            done.append(("grpc", code, now()))

    s.start = now()
    for a in grpc_names:
        request = oip.RepositoryModelUnloadRequest(model_name=a).SerializeToString()
        unload.future(request, timeout=90).add_done_callback(grpc_done)
    rest_threads = [threading.Thread(target=rest_unload, args=(a,)) for a in rest_names]
    for t in rest_threads:
        t.start()
    time.sleep(0.5)
    early = list(done)
    # The probes, each on a connection of its own, while the unloads drain.
    n = env("REPO_PROBES", int)
    live_channel = raw_channel(args.grpc_port)
    live = raw_method(live_channel, "/inference.GRPCInferenceService/ServerLive")
    live_req = oip.ServerLiveRequest().SerializeToString()
    meta_req = http_head("GET", f"/v2/models/{ROWS_MODEL}", args.http_port)
    live_results, meta_results = [], []

    def meta_probes():
        for _ in range(n):
            meta_results.append(http_call(args.http_port, meta_req, deadline))
            time.sleep(0.2)

    meta_thread = threading.Thread(target=meta_probes)
    meta_thread.start()
    for _ in range(n):
        start = now()
        code = grpc_code(lambda: live(live_req, timeout=deadline))
        live_results.append((code, (now() - start) * 1e3))
        time.sleep(0.2)
    meta_thread.join()
    live_channel.close()
    probes_done = now()
    answered_by_probes = sum(1 for d in done if d[2] <= probes_done)
    time.sleep(max(0.0, s.start + env("REPO_HOLD_SECONDS") - now()))
    t_release = now()
    os.kill(args.server_pid, signal.SIGUSR1)
    held_codes = Counter(grpc_code(lambda f=f: f.result(timeout=60)) for f in held_calls)
    held_code = ", ".join(f"{c} ×{k}" for c, k in sorted(held_codes.items()))
    t_held = now() - t_release
    for t in rest_threads:
        t.join(95)
    wait_end = now() + 95
    total_unloads = len(names)
    while len(done) < total_unloads and now() < wait_end:
        time.sleep(0.05)
    s.end = now()
    channel.close()
    for kind, code, t in done:
        s.count(f"{kind} unload {code}")
    for kind in ("grpc", "rest"):
        ends = sorted(t for k, _, t in done if k == kind)
        if ends:
            s.notes.append(f"{kind} unloads answered {ends[0] - s.start:.2f} to "
                           f"{ends[-1] - s.start:.2f} s after they were sent "
                           f"(release at {t_release - s.start:.2f} s)")
    s.notes.append(f"unloads answered before the probes ended: {answered_by_probes} "
                   f"(in the first 0.5 s: {len(early)}); the held calls: {held_code} "
                   f"{t_held * 1e3:.0f} ms after SIGUSR1")

    def describe(results, ok_code):
        codes = Counter(c for c, _ in results)
        worst = max((ms for _, ms in results), default=float("nan"))
        return (", ".join(f"{c} ×{k}" for c, k in sorted(codes.items())) +
                f" (slowest {fmt_ms(worst)} ms)"), all(c == ok_code and ms <= 100
                                                       for c, ms in results)

    live_text, live_ok = describe(live_results, "OK")
    meta_text, meta_ok = describe(meta_results, "200")
    s.notes.append(f"gRPC ServerLive while draining: "
                   f"{[(c, round(ms, 1)) for c, ms in live_results]}")
    s.notes.append(f"REST GET /v2/models/{ROWS_MODEL} while draining: "
                   f"{[(c, round(ms, 1)) for c, ms in meta_results]}")
    s.follow_up = {"live": [[c, round(ms, 1)] for c, ms in live_results],
                   "metadata": [[c, round(ms, 1)] for c, ms in meta_results]}
    pending = total_unloads - answered_by_probes
    s.outcome = {"ok": live_ok and meta_ok and bool(live_results) and bool(meta_results),
                 "text": f"ServerLive {live_text}; REST metadata {meta_text}; {pending} of "
                         f"{total_unloads} unloads still draining meanwhile",
                 "unloads_draining": pending}


def cmd_attack(args):
    import_stubs(args.python)
    s = Summary()
    s.follow_up = {}
    s.outcome = None
    s.good_until = None
    s.kill_server = False
    fn = {"1": attack_1, "2a": attack_2a, "2b": attack_2b,
          "3a": lambda a, x: attack_3(a, x, False), "3b": lambda a, x: attack_3(a, x, True),
          "4": attack_4, "5": attack_5, "6": attack_6, "7": attack_7,
          "stream": lambda a, x: attack_stream(a, x, False),
          "stream1": lambda a, x: attack_stream(a, x, True),
          "signal": attack_signal,
          "bundle": lambda a, x: attack_bundle(a, x, False),
          "bundle-header": lambda a, x: attack_bundle(a, x, True),
          "repository": attack_repository}[args.which]
    ready = now()
    fn(args, s)
    print(json.dumps({"attack": args.which, "prepared_at": ready, "start": s.start,
                      "end": s.end, "codes": dict(s.codes), "notes": s.notes,
                      "follow_up": s.follow_up, "outcome": s.outcome,
                      "good_until": s.good_until, "kill_server": s.kill_server}))


# ---------------------------------------------------------------- the orchestrator

def proc_sample(pid):
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)
    return rss / 1024.0, ticks / os.sysconf("SC_CLK_TCK")


class Sampler(threading.Thread):
    def __init__(self, pid, kill_mib=None):
        super().__init__(daemon=True)
        self.pid = pid
        self.kill_mib = kill_mib  # SIGKILL the server past this RSS (the machine's safety)
        self.killed = None  # (t, rss MiB) when it did
        self.samples = []  # (t, rss MiB, cpu s)
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            try:
                rss, cpu = proc_sample(self.pid)
            except (OSError, StopIteration):
                return
            self.samples.append((now(), rss, cpu))
            if self.kill_mib and rss > self.kill_mib and self.killed is None:
                self.killed = (now(), rss)
                os.kill(self.pid, signal.SIGKILL)
            self.stop.wait(0.05)

    def at(self, t):
        """The last sample at or before t."""
        if not self.samples:  # the server died before the first sample
            return (t, 0.0, 0.0)
        best = self.samples[0]
        for sample in self.samples:
            if sample[0] > t:
                break
            best = sample
        return best


BASE_FLAGS = ["--host=127.0.0.1", "--port=0", "--http_port=0", "--metrics_port=0"]


def start_server(args, out_dir, name, extra, models=None):
    flags = [f"--models={models or args.models}"] + BASE_FLAGS + extra
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
    return proc, int(ports["grpc_port"]), int(ports["http_port"]), flags, int(ports["metrics_port"])


def stop_server(proc, wait=20):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(wait)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def pct(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))]


def repository_unload_names():
    """One model per unload, each drained behind a call of its own (an unload
    of a model already unloaded answers at once, so it would not drain)."""
    n = env("REPO_GRPC_UNLOADS", int) + env("REPO_REST_UNLOADS", int)
    return [f"{REPO_MODEL}{i}" for i in range(n)]


def repository_models(args, out_dir):
    """The repository attack's own models directory: rows and one copy of it
    per unload."""
    import shutil
    root = os.path.join(out_dir, "models-repository")
    shutil.rmtree(root, ignore_errors=True)
    for name in [ROWS_MODEL] + repository_unload_names():
        shutil.copytree(os.path.join(args.models, ROWS_MODEL), os.path.join(root, name))
    return root


def run_one(args, which):
    out_dir = args.out
    extra = []
    token = ""
    models = None
    kinds = GOOD_KINDS
    if which == "5":
        token_file = os.path.join(out_dir, "data_token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        extra.append(f"--data_token_file={token_file}")
        token = TOKEN
    if which in ("stream", "stream1"):
        extra.append("--max_connection_inflight_bytes=268435456")
    if which == "repository":
        models = repository_models(args, out_dir)
        extra += ["--model_control=explicit",
                  "--load_model=" + ",".join([ROWS_MODEL] + repository_unload_names()),
                  "--testonly_start_paused",
                  f"--drain_seconds={env('REPO_DRAIN_SECONDS', str)}"]
        # The paused batcher holds every Predict and REST infer: the good
        # client runs its two health loops only.
        kinds = ["grpc_health", "rest_live"]
    proc, grpc_port, http_port, flags, metrics_port = start_server(args, out_dir, which, extra,
                                                                   models)
    sampler = Sampler(proc.pid, env("RSS_KILL_MIB") if which in ISSUE50 else None)
    sampler.start()
    common = ["--python", args.python, "--grpc_port", str(grpc_port),
              "--http_port", str(http_port)]
    good_file = os.path.join(out_dir, f"good-{which}.txt")
    good = subprocess.Popen([sys.executable, __file__, "good", "--out", good_file,
                             "--token", token, "--kinds", ",".join(kinds)] + common)
    time.sleep(env("PRE_SECONDS"))
    attack_log = open(os.path.join(out_dir, f"attack-{which}.stderr"), "w")
    t_launch = now()
    server = ["--server_pid", str(proc.pid), "--metrics_port", str(metrics_port),
              "--models", models or args.models,
              "--server_log", os.path.join(out_dir, f"server-{which}.stderr")]
    attacker = subprocess.run([sys.executable, __file__, "attack", which] + common + server,
                              stdout=subprocess.PIPE, stderr=attack_log, text=True)
    t_attacker_exit = now()
    try:
        summary = json.loads(attacker.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        summary = {"codes": {"attacker failed": 1}, "notes": [], "follow_up": {},
                   "start": t_launch, "end": t_attacker_exit}
    t0 = summary.get("start") or t_launch
    t1 = summary.get("end") or t_attacker_exit
    if summary.get("kill_server") and proc.poll() is None:
        proc.kill()
        proc.wait()
    # The good client's CPU baseline: the pre-attack window, first second skipped.
    base_a = sampler.at(t_launch - env("PRE_SECONDS") + 1.0)
    base_b = sampler.at(t_launch)
    base_rate = (base_b[2] - base_a[2]) / max(1e-3, base_b[0] - base_a[0])
    rss_start = base_b[1]
    # Settle: until the server's CPU over the last second is back to the baseline.
    settle_end = now() + env("SETTLE_MAX_SECONDS")
    settled = False
    exited = proc.poll() is not None or server_exited(proc.pid)
    if exited:  # nothing left to settle or to measure after (the signal attack)
        settled = True
        settle_end = now()
    else:
        time.sleep(1.0)
    while now() < settle_end:
        a, b = sampler.at(now() - 1.0), sampler.at(now())
        rate = (b[2] - a[2]) / max(1e-3, b[0] - a[0])
        if rate <= base_rate * 1.5 + 0.05:
            settled = True
            break
        time.sleep(0.25)
    t2 = now()
    if not exited:
        time.sleep(env("AFTER_SECONDS"))
    t3 = now()
    rss_after = sampler.at(t3)[1]
    good.send_signal(signal.SIGTERM)
    good.wait()
    sampler.stop.set()
    sampler.join()
    t_stop = now()
    # A server given --drain_seconds longer than the default has that long, and 10 s more.
    stop_server(proc, 20 if which != "repository" else env("REPO_DRAIN_SECONDS") + 10)
    stop_seconds = now() - t_stop

    c0, c1, c2 = sampler.at(t0)[2], sampler.at(t1)[2], sampler.at(t2)[2]
    cpu_attack = (c1 - c0) - base_rate * (t1 - t0)
    cpu_after = (c2 - c1) - base_rate * (t2 - t1)
    # (default: the server died before the attack; its last RSS)
    peak = max((r for t, r, _ in sampler.samples if t >= t_launch - 0.5),
               default=sampler.at(t_launch)[1])
    calls = {k: [] for k in GOOD_KINDS}
    errors = Counter()
    t_good_end = summary.get("good_until") or t2
    with open(good_file) as f:
        for line in f:
            t, kind, ms, status = line.split()
            t, ms = float(t), float(ms)
            # Every call in flight at some time between the attack's start and
            # the end of the settle time (one sent just before the attack and
            # held by it counts too).
            if t <= t_good_end and t + ms / 1e3 >= t0:
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
        # None: a call kind the good client did not run in this attack.
        row[f"{kind}_p50_ms"] = round(pct(calls[kind], 0.5), 1) if calls[kind] else None
        row[f"{kind}_p99_ms"] = round(pct(calls[kind], 0.99), 1) if calls[kind] else None
    row.update(good_errors=sum(errors.values()), good_error_kinds=dict(errors),
               rss_start_mib=round(rss_start, 1), peak_rss_mib=round(peak, 1),
               rss_after_mib=round(rss_after, 1),
               rss_after_minus_start_mib=round(rss_after - rss_start, 1),
               cpu_attack_s=round(cpu_attack, 2), cpu_after_s=round(cpu_after, 2),
               baseline_cpu_cores=round(base_rate, 3),
               attacker_codes=summary.get("codes", {}), follow_up=summary.get("follow_up", {}),
               notes=summary.get("notes", []), flags=flags,
               server_exit=proc.returncode)
    if proc.returncode not in (0, -signal.SIGKILL):
        # e.g. -11: the server crashed (the good client's errors then say when)
        row["notes"].append(f"the server ended with status {proc.returncode}")
    if which in ISSUE50:
        # How long the final SIGTERM took (stop_server kills after 20 s: exit -9).
        row["stop_seconds"] = round(stop_seconds, 2)
        if proc.returncode == -signal.SIGKILL and not summary.get("kill_server") \
                and not sampler.killed:
            row["notes"].append(f"the final SIGTERM: not exited in {stop_seconds:.0f} s, killed")
        elif stop_seconds > 5:
            row["notes"].append(f"the final SIGTERM: exited after {stop_seconds:.1f} s")
        row["outcome"] = summary.get("outcome") or {"ok": False, "text": "attacker failed"}
        row["good_kinds"] = kinds
        if summary.get("good_until"):
            row["good_window_seconds"] = round(summary["good_until"] - t0, 2)
        if sampler.killed:
            row["notes"].append("the orchestrator killed the server: RSS %.0f MiB > "
                                "RSS_KILL_MIB at %.1f s" % (sampler.killed[1],
                                                            sampler.killed[0] - t0))
            row["outcome"]["text"] += "; server killed at RSS %.0f MiB" % sampler.killed[1]
    return row


BUDGET_MIB = (256 + 256) + 200e6 / 2**20  # max_queue_bytes + http_max_inflight_bytes + 200 MB


def worst_p99(row):
    """The worst p99 over the good client's call kinds that ran."""
    values = [row[f"{k}_p99_ms"] for k in GOOD_KINDS if row.get(f"{k}_n")]
    return max(values) if values else float("nan")


def verdicts(row):
    p99 = worst_p99(row)
    if row["attack"] in ISSUE50:  # issue 50's targets: latency, memory, the attack's own
        v = {"latency": p99 <= 100 and row["good_errors"] == 0,
             "peak_rss": row["peak_rss_mib"] <= BUDGET_MIB}
        if row["outcome"].get("ok") is not None:
            v["outcome"] = row["outcome"]["ok"]
        return v
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
        if "outcome" in row:
            print(f"attacks: {w}: {row['outcome']['text']}", flush=True)
    columns = ["attack", "attack_seconds", "settle_seconds", "settled"]
    for k in GOOD_KINDS:
        columns += [f"{k}_n", f"{k}_p50_ms", f"{k}_p99_ms"]
    columns += ["good_errors", "rss_start_mib", "peak_rss_mib", "rss_after_mib",
                "rss_after_minus_start_mib", "cpu_attack_s", "cpu_after_s", "baseline_cpu_cores",
                "attacker_codes", "good_error_kinds", "follow_up", "outcome"]
    with open(os.path.join(args.out, "admission.csv"), "w") as f:
        f.write(",".join(columns) + "\n")
        for row in rows:
            cells = []
            for c in columns:
                v = row.get(c, "")
                if c == "outcome" and isinstance(v, dict):
                    v = v.get("text", "")
                if isinstance(v, dict):
                    v = ";".join(f"{k}={x}" for k, x in v.items())
                cells.append('"%s"' % v if isinstance(v, str) and ("," in v or ";" in v) else str(v))
            f.write(",".join(cells) + "\n")
    meta = {"commit": args.commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": args.machine, "load_before": args.load, "load_after": os.getloadavg(),
            "command": args.command,
            "flags": [f"--models={args.models}"] + BASE_FLAGS,
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
    return "—" if x is None or x != x else (f"{x:.0f}" if x >= 10 else f"{x:.1f}")


def mark(ok):
    return "" if ok else " ✗"


def shown_flag(flag):
    """A flag as the details print it: a path's value left out (the run's OUT_DIR)."""
    name, _, value = flag.partition("=")
    if name == "--models":
        return f"--models=OUT_DIR/{os.path.basename(value)}"
    return name if "/" in value else flag


def render(runs):
    """Markdown for every labelled run: a before/after comparison per issue and one detail
    table each. `runs`: (label, run) pairs; a label may hold several runs (each with its
    own commit, e.g. issue 32's attacks and issue 50's), none repeating an attack."""
    labels = []
    for label, _ in runs:
        if label not in labels:
            labels.append(label)
    ids = []
    by = {label: {} for label in labels}  # label -> attack -> (row, meta)
    for label, run in runs:
        for r in run["rows"]:
            if r["attack"] not in ids:
                ids.append(r["attack"])
            by[label][r["attack"]] = (r, run["meta"])
    out = []

    def header(table_ids, what, left=()):
        used = [l for l in labels if any(a in by[l] for a in table_ids)]
        head, sep = "| attack |", "|---|"
        for label in used:
            commits = []
            for a in table_ids:
                if a in by[label] and by[label][a][1]["commit"] not in commits:
                    commits.append(by[label][a][1]["commit"])
            for w in what:
                head += f" {w} ({label}, {' / '.join(commits)}) |"
                sep += "---|" if w in left else "---:|"
        return used, [head, sep]

    old = [a for a in ids if a not in ISSUE50]
    new = [a for a in ids if a in ISSUE50]
    if old:
        out.append("### The targets, run by run\n")
        out.append("Worst good-client p99 over its four calls, in ms (target ≤ 100, and no "
                   "errors); peak RSS in MiB (target ≤ %.0f MiB: `--max_queue_bytes` + "
                   "`--http_max_inflight_bytes` + 200 MB); server CPU after the attack ended, "
                   "above the good client's own, in s (target ≤ 1); RSS after − RSS at start, in "
                   "MiB (target within ±48 MiB, i.e. 50 MB). ✗ marks a missed target.\n" % BUDGET_MIB)
        used, lines = header(old, ("p99 ms", "errors", "peak MiB", "CPU after s", "RSS Δ MiB"))
        out += lines
        for a in old:
            line = f"| {a}: {TITLES[a]} |"
            for label in used:
                if a not in by[label]:
                    line += " — | — | — | — | — |"
                    continue
                r = by[label][a][0]
                v = verdicts(r)
                p99 = worst_p99(r)
                line += (f" {fmt_ms(p99)}{mark(p99 <= 100)} | {r['good_errors']}"
                         f"{mark(r['good_errors'] == 0)} | {r['peak_rss_mib']:.0f}{mark(v['peak_rss'])} |"
                         f" {r['cpu_after_s']:.1f}{'' if r['settled'] else '+'}{mark(v['cpu'])} |"
                         f" {r['rss_after_minus_start_mib']:+.0f}{mark(v['rss_back'])} |")
            out.append(line)
        out.append("\n`+` after a CPU figure: the server was still busy when the settle wait "
                   "(`SETTLE_MAX_SECONDS`) ran out, so the abandoned work is at least that.\n")
    if new:
        out.append("### Issue 50's attacks, run by run\n")
        out.append("Worst good-client p99 over the calls it ran, in ms (target ≤ 100, and no "
                   "errors; *signal*: until the SIGTERM; *repository*: its two health loops "
                   "only, the paused batcher holding every Predict); peak RSS in MiB (target ≤ "
                   "%.0f MiB, as above); and the attack's own measure: *stream*, *stream1*: the "
                   "admission refusals (RESOURCE_EXHAUSTED) the server counted, no target; "
                   "*signal*: the server exits within `SIGNAL_EXIT_SECONDS` (30 s) of the "
                   "SIGTERM; *bundle*, *bundle-header*: the refusal of the new version shows in "
                   "the log or the repository index; *repository*: every gRPC `ServerLive` and "
                   "REST metadata GET sent while the unloads drain answered OK within 100 ms. "
                   "✗ marks a missed target.\n" % BUDGET_MIB)
        used, lines = header(new, ("p99 ms", "errors", "peak MiB", "the attack's measure"),
                             left=("the attack's measure",))
        out += lines
        for a in new:
            line = f"| {a}: {TITLES[a]} |"
            for label in used:
                if a not in by[label]:
                    line += " — | — | — | — |"
                    continue
                r = by[label][a][0]
                v = verdicts(r)
                p99 = worst_p99(r)
                o = r["outcome"]
                line += (f" {fmt_ms(p99)}{mark(p99 <= 100)} | {r['good_errors']}"
                         f"{mark(r['good_errors'] == 0)} | {r['peak_rss_mib']:.0f}{mark(v['peak_rss'])} |"
                         f" {o['text']}{mark(o.get('ok') is not False)} |")
            out.append(line)
        out.append("")
    for label, run in runs:
        meta = run["meta"]
        out.append(f"### Details: {label} (commit {meta['commit']}, {meta['date']})\n")
        out.append(f"* Command: `{meta['command']}`")
        out.append(f"* Machine: {meta['machine']}")
        out.append("* Load average (1, 5, 15 min) before the run: %s; after: %s" % (
            meta["load_before"], " ".join(f"{x:.2f}" for x in meta["load_after"])))
        base = [f for f in meta["flags"] if not f.startswith("--models")]
        adds = ""
        for r in run["rows"]:
            extra = [shown_flag(f) for f in r["flags"] if f not in meta["flags"]]
            if extra:
                adds += f"; attack {r['attack']} adds `{' '.join(extra)}`"
        out.append("* Server flags: `%s` (every other flag at its default%s)" % (" ".join(base),
                                                                                  adds))
        changed = {k: v for k, v in meta["env"].items() if v != ENV[k][0]}
        out.append("* Scale: the issue's (defaults of `bench/admission/attacks.py`)" +
                   (f", except {changed}" if changed else ""))
        out.append("")
        out.append("| attack | gRPC health p50 / p99 ms | gRPC Predict p50 / p99 ms | "
                   "REST live p50 / p99 ms | REST infer p50 / p99 ms | good-client errors | "
                   "RSS start / peak / after MiB | CPU during / after s | attack / settle s | "
                   "the attacker got |")
        out.append("|---|---:|---:|---:|---:|---|---:|---:|---:|---|")
        for r in run["rows"]:
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
        noted = [r for r in run["rows"] if r["attack"] in ISSUE50 and r.get("notes")]
        if noted:
            out.append("What the attackers saw:\n")
            for r in noted:
                out.append(f"* **{r['attack']}**: " + "; ".join(
                    n.replace("|", "\\|") for n in r["notes"]))
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
    runs = []
    for chunk in generated.split(DATA)[1:]:
        label, _, body = chunk.partition("\n")
        runs.append((label.strip(), json.loads(body.split("-->", 1)[0])))
    # The new run replaces, under its label, the rows of the attacks it ran;
    # the label's other attacks keep their (older) run.
    ran = {r["attack"] for r in new["rows"]}
    kept = []
    for label, run in runs:
        if label == args.label:
            run = dict(run, rows=[r for r in run["rows"] if r["attack"] not in ran])
        if run["rows"]:
            kept.append((label, run))
    kept.append((args.label, new))
    order = ["before", "after"]
    runs = sorted(kept, key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order),
                                        kv[0]))
    body = render(runs)
    data = "".join(f"{DATA}{label}\n{json.dumps(run, separators=(',', ':'))}\n-->\n"
                   for label, run in runs)
    with open(args.doc, "w") as f:
        f.write(pre + BEGIN + "\n" + body + "\n" + data + END + post)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in ("good", "attack"):
        p = sub.add_parser(name)
        if name == "attack":
            p.add_argument("which", choices=ATTACKS)
            p.add_argument("--server_pid", type=int, default=0)
            p.add_argument("--metrics_port", type=int, default=0)
            p.add_argument("--models", default="")
            p.add_argument("--server_log", default="")
        else:
            p.add_argument("--out", required=True)
            p.add_argument("--token", default="")
            p.add_argument("--kinds", default="", help="comma-separated subset of "
                           + ",".join(GOOD_KINDS))
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
