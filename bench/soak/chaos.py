#!/usr/bin/python3
"""Mixed chaos load for bench/soak/soak.sh: one minute's worth of traffic that
loadgen does not send, counted by category and gRPC code.

Categories (a request belongs to exactly one):
  valid_unary     Predict / Featurize of well-formed rows, 30 s deadline: must be OK
  valid_stream    StreamPredict with 1..8 well-formed messages: every message OK
  bad_request     wrong row width, NaN, empty / unknown model, negative version,
                  undecodable bytes: must NOT be OK
  bad_stream      StreamPredict with valid messages then a bad one: must not end OK
  cancelled       a valid Predict cancelled right after it was sent: any code
  short_deadline  a valid Predict with a 1 ms deadline: any code
  infer           Open Inference Protocol ModelInfer of well-formed rows: must be OK
  abandoned       (with --http_port) a REST infer of 512 rows whose client closes its
                  connection right after sending, and a gRPC Featurize of 512 rows cancelled
                  at once: the server must stop the work (no code to check; the soak's RSS
                  and latency columns show whether it did)
  non_reading     (with --http_port) a REST infer asking for 512 rows of features in JSON
                  whose client never reads its answer, then leaves after 2 s: any outcome

Writes one JSON object to --out: {"counts": {category: {code: n}}, "violations":
[...], "valid_p99_us": ...}. A violation is a valid request that was not OK or a
bad one that was. Uses the stubs staged in BUILD/python (invariant_serve._proto).
"""
import argparse
import json
import random
import socket
import struct
import sys
import threading
import time
from collections import defaultdict

import grpc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--python_path", required=True, help="BUILD/python")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--http_port", type=int, default=0, help="REST port; 0 = no REST chaos")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    sys.path.insert(0, args.python_path)
    from invariant_serve._proto.invariant.v1 import feature_service_pb2 as fs
    from invariant_serve._proto.invariant.v1 import feature_service_pb2_grpc as fs_grpc
    from invariant_serve._proto.inference import grpc_service_pb2 as oip
    from invariant_serve._proto.inference import grpc_service_pb2_grpc as oip_grpc

    channel = grpc.insecure_channel(args.target)
    stub = fs_grpc.FeatureServiceStub(channel)
    infer_stub = oip_grpc.GRPCInferenceServiceStub(channel)
    meta = stub.GetModelMetadata(
        fs.GetModelMetadataRequest(model=fs.ModelSpec(name=args.model)), timeout=30)
    dim = meta.input_dim
    raw_predict = channel.unary_unary("/invariant.v1.FeatureService/Predict",
                                      request_serializer=lambda b: b,
                                      response_deserializer=lambda b: b)

    counts = defaultdict(lambda: defaultdict(int))
    violations = []
    latencies = []
    lock = threading.Lock()

    def record(category, code, ok_required=None, detail=""):
        with lock:
            counts[category][code] += 1
            bad = (ok_required is True and code != "OK") or (ok_required is False and code == "OK")
            if bad and len(violations) < 50:
                violations.append(f"{category}: {code} {detail[:200]}")

    def code_of(call):
        try:
            call()
            return "OK", ""
        except grpc.RpcError as e:
            return e.code().name, e.details() or ""

    def rows(rng, n):
        return [rng.uniform(-1, 1) for _ in range(n * dim)]

    def predict_request(rng, n=2, name=None):
        return fs.PredictRequest(model=fs.ModelSpec(name=name or args.model),
                                 inputs=fs.InputBatch(values=rows(rng, n)))

    def bad_requests(rng):
        spec = fs.ModelSpec(name=args.model)
        yield fs.PredictRequest(model=spec, inputs=fs.InputBatch(values=rows(rng, 1)[:-1]))
        yield fs.PredictRequest(model=spec, inputs=fs.InputBatch(values=[float("nan")] * dim))
        yield fs.PredictRequest(model=fs.ModelSpec(name=""), inputs=fs.InputBatch(values=rows(rng, 1)))
        yield fs.PredictRequest(model=fs.ModelSpec(name="no-such-model"),
                                inputs=fs.InputBatch(values=rows(rng, 1)))
        yield fs.PredictRequest(model=fs.ModelSpec(name=args.model, version=-3),
                                inputs=fs.InputBatch(values=rows(rng, 1)))
        yield fs.PredictRequest(model=spec, inputs=fs.InputBatch(raw_values=b"\x00" * 7))

    def stream_messages(rng, n, bad_last):
        for _ in range(n):
            yield predict_request(rng)
        if bad_last:
            yield fs.PredictRequest(model=fs.ModelSpec(name=args.model),
                                    inputs=fs.InputBatch(values=[1.0]))

    def rest_infer(rng, n, outputs):
        data = ",".join("%.4f" % v for v in rows(rng, n))
        body = ('{"inputs":[{"name":"input","datatype":"FP32","shape":[%d,%d],"data":[%s]}],'
                '"outputs":[%s]}' % (n, dim, data, ",".join('{"name":"%s"}' % o for o in outputs)))
        return (f"POST /v2/models/{args.model}/infer HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
                ).encode()

    def rest_chaos(rng, kind):
        """A REST client that leaves at once, or one that never reads its answer."""
        sock = socket.create_connection(("127.0.0.1", args.http_port), timeout=10)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            if kind == "abandoned":
                sock.sendall(rest_infer(rng, 512, ["scores"]))
            else:
                sock.sendall(rest_infer(rng, 512, ["features"]))
                time.sleep(2)  # holds its unread answer, then leaves
        except OSError:
            pass
        finally:
            sock.close()
        record(kind, "SENT")

    def worker(index):
        rng = random.Random(args.seed * 1000 + index)
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            kind = rng.randrange(10 if args.http_port else 8)
            if kind == 8:
                rest_chaos(rng, "abandoned")
                future = stub.Featurize.future(fs.FeaturizeRequest(
                    model=fs.ModelSpec(name=args.model),
                    inputs=fs.InputBatch(values=rows(rng, 512))), timeout=30)
                future.cancel()
                record("abandoned", "CANCELLED" if future.cancelled() else "RAN")
                continue
            if kind == 9:
                rest_chaos(rng, "non_reading")
                continue
            if kind == 0:
                start = time.monotonic()
                if rng.random() < 0.5:
                    code, msg = code_of(lambda: stub.Predict(predict_request(rng), timeout=30))
                else:
                    req = fs.FeaturizeRequest(model=fs.ModelSpec(name=args.model),
                                              inputs=fs.InputBatch(values=rows(rng, 3)))
                    code, msg = code_of(lambda: stub.Featurize(req, timeout=30))
                if code == "OK":
                    with lock:
                        latencies.append((time.monotonic() - start) * 1e6)
                record("valid_unary", code, True, msg)
            elif kind == 1:
                n = rng.randint(1, 8)
                got = []
                code, msg = code_of(lambda: got.extend(
                    stub.StreamPredict(stream_messages(rng, n, False), timeout=30)))
                if code == "OK" and len(got) != n:
                    code, msg = "MISSING_RESPONSES", f"{len(got)} of {n}"
                record("valid_stream", code, True, msg)
            elif kind == 2:
                for req in bad_requests(rng):
                    code, msg = code_of(lambda: stub.Predict(req, timeout=30))
                    record("bad_request", code, False, msg)
                code, msg = code_of(lambda: raw_predict(b"\xff\xff\xff\xff garbage", timeout=30))
                record("bad_request", code, False, msg)
            elif kind == 3:
                code, msg = code_of(lambda: list(
                    stub.StreamPredict(stream_messages(rng, rng.randint(0, 3), True), timeout=30)))
                record("bad_stream", code, False, msg)
            elif kind == 4:
                future = stub.Predict.future(predict_request(rng, n=16), timeout=30)
                future.cancel()
                try:
                    future.result()
                    code = "OK"
                except grpc.FutureCancelledError:
                    code = "CANCELLED"
                except grpc.RpcError as e:
                    code = e.code().name
                record("cancelled", code)
            elif kind == 5:
                code, _ = code_of(lambda: stub.Predict(predict_request(rng, n=32), timeout=0.001))
                record("short_deadline", code)
            elif kind == 6:
                req = oip.ModelInferRequest(model_name=args.model)
                t = req.inputs.add(name="input", datatype="FP32", shape=[2, dim])
                req.raw_input_contents.append(struct.pack(f"<{2 * dim}f", *rows(rng, 2)))
                code, msg = code_of(lambda: infer_stub.ModelInfer(req, timeout=30))
                record("infer", code, True, msg)
            else:
                # A burst of unary calls in flight at once.
                futures = [stub.Predict.future(predict_request(rng), timeout=30) for _ in range(8)]
                for f in futures:
                    code, msg = code_of(f.result)
                    record("valid_unary", code, True, msg)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    latencies.sort()
    p99 = latencies[int(0.99 * (len(latencies) - 1))] if latencies else 0.0
    with open(args.out, "w") as out:
        json.dump({"counts": {k: dict(v) for k, v in counts.items()}, "violations": violations,
                   "valid_p99_us": p99}, out)


if __name__ == "__main__":
    main()
