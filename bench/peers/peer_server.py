#!/usr/bin/python3
"""A peer of invariant-server as a user would write it: Python grpcio + numpy.

Serves one LGIKA random-Fourier model (e.g. the shipped rotated_fashion_rf)
with the invariant.v1 FeatureService API (Featurize, Predict,
GetModelMetadata, ListModels), computing from the bank, preprocessing and head
tensors read out of the model's bundle (bundle_reader.py). One request is one
numpy computation on a gRPC thread-pool thread: no batching. numpy's BLAS
(Debian: OpenBLAS, all cores) does the X · Bankᵀ product.

  peer_server.py serve  --bundle=B --name=N [--port=0] [--threads=16]
      prints "peer ready port=P" once serving; stops on SIGTERM/SIGINT.
  peer_server.py sgemm  --bundle=B [--batch=64] [--seconds=3]
      in-process X · Bankᵀ rows/s of the bundle's bank (the reference).
  peer_server.py check  --bundle=B --name=N --targets=A,B [--rows=32]
      Predict of the same rows on two servers: max |score difference| and
      argmax agreement; exit 1 when the servers disagree.
  peer_server.py featurize --bundle=B [--rows=32] [--batch=64]
      numpy's featurize of that many random rows in chunks of --batch: the
      rate a Python training job would featurize at (bench/peers/featurize_vs_numpy.sh).
"""

import argparse
import concurrent.futures
import pathlib
import signal
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bundle_reader  # noqa: E402


def load_stubs():
    """Compiles proto/invariant/v1/*.proto into a temporary directory and imports them."""
    from grpc_tools import protoc
    import grpc_tools

    out = tempfile.mkdtemp(prefix="peer_stubs_")
    proto_root = ROOT / "proto"
    include = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    files = [str(p.relative_to(proto_root)) for p in sorted((proto_root / "invariant" / "v1").glob("*.proto"))]
    args = ["protoc", f"-I{proto_root}", f"-I{include}", f"--python_out={out}", f"--grpc_python_out={out}"]
    if protoc.main(args + files) != 0:
        raise RuntimeError("protoc failed on " + ", ".join(files))
    sys.path.insert(0, out)
    from invariant.v1 import bundle_pb2, feature_service_pb2, feature_service_pb2_grpc

    return bundle_pb2, feature_service_pb2, feature_service_pb2_grpc


class RandomFourierModel:
    """features = [Σ_k cos p_jk, Σ_k sin p_jk] / (r√s), p = x · Bankᵀ (bank row j·r + k); scores = f·W + b."""

    def __init__(self, manifest, tensors):
        encoder = manifest.encoder
        if encoder.WhichOneof("params") != "random_fourier" or manifest.HasField("second_layer"):
            raise ValueError("the peer serves random-Fourier models without a second layer only")
        self.s = encoder.random_fourier.num_features
        self.r = encoder.random_fourier.num_group_elements
        self.bank = tensors["encoder/bank"]  # (s·r) × d, float32
        self.input_dim = int(manifest.input_dim)
        self.feature_dim = 2 * self.s
        self.scale = np.float32(1.0 / (self.r * np.sqrt(self.s)))
        pre = manifest.preprocess
        self.mean = tensors.get("preprocess/mean") if pre.center else None
        self.std = tensors.get("preprocess/scale") if pre.scale else None
        self.l2 = pre.l2_normalize
        self.has_head = manifest.HasField("head")
        if self.has_head:
            self.weights = tensors["head/weights"]
            self.bias = tensors["head/bias"].reshape(-1)
            self.class_names = list(manifest.head.class_names)
            self.task = manifest.head.task

    def featurize(self, x):
        if self.mean is not None:
            x = x - self.mean
        if self.std is not None:
            x = x / self.std
        if self.l2:
            norms = np.linalg.norm(x, axis=1, keepdims=True)
            x = x / np.where(norms > 0, norms, 1)
        p = (x @ self.bank.T).reshape(x.shape[0], self.s, self.r)
        return np.concatenate([np.cos(p).sum(axis=2), np.sin(p).sum(axis=2)], axis=1) * self.scale

    def predict(self, x):
        return self.featurize(x) @ self.weights + self.bias


def serve(args):
    import grpc

    bundle_pb2, pb, pb_grpc = load_stubs()
    manifest, tensors = bundle_reader.read_bundle(args.bundle, bundle_pb2.Manifest)
    model = RandomFourierModel(manifest, tensors)
    version = manifest.version or 1

    def rows_of(request, context):
        if request.model.name != args.name:
            context.abort(grpc.StatusCode.NOT_FOUND, f"model.name: unknown model '{request.model.name[:64]}'")
        inputs = request.inputs
        if inputs.raw_values:
            x = np.frombuffer(inputs.raw_values, dtype="<f4")
        else:
            x = np.array(inputs.values, dtype=np.float32)
        if x.size == 0 or x.size % model.input_dim:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"inputs: expected a multiple of input_dim={model.input_dim} values, received {x.size}")
        return x.reshape(-1, model.input_dim)

    class Servicer(pb_grpc.FeatureServiceServicer):
        def Featurize(self, request, context):
            x = rows_of(request, context)
            f = model.featurize(x)
            response = pb.FeaturizeResponse(model_name=args.name, model_version=version,
                                            num_rows=x.shape[0], feature_dim=model.feature_dim)
            response.features.extend(f.ravel().tolist())
            return response

        def Predict(self, request, context):
            x = rows_of(request, context)
            if not model.has_head:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "model has no head")
            scores = model.predict(x)
            response = pb.PredictResponse(model_name=args.name, model_version=version, num_rows=x.shape[0],
                                          output_dim=scores.shape[1], task=model.task)
            response.scores.extend(scores.ravel().tolist())
            if model.class_names:
                best = scores.argmax(axis=1)
                response.predicted_indices.extend(best.tolist())
                response.predicted_classes.extend(model.class_names[i] for i in best)
            return response

        def GetModelMetadata(self, request, context):
            if request.model.name != args.name:
                context.abort(grpc.StatusCode.NOT_FOUND, "model.name: unknown model")
            return pb.GetModelMetadataResponse(
                model_name=args.name, model_version=version, input_shape=[model.input_dim],
                input_dim=model.input_dim, feature_dim=model.feature_dim,
                output_dim=len(model.bias) if model.has_head else 0, encoder_kind="random_fourier")

        def ListModels(self, request, context):
            summary = pb.ModelSummary(name=args.name)
            summary.versions.add(version=version, encoder_kind="random_fourier", has_head=model.has_head)
            return pb.ListModelsResponse(models=[summary])

    limit = 64 << 20
    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=args.threads),
                         options=[("grpc.max_receive_message_length", limit),
                                  ("grpc.max_send_message_length", limit)])
    pb_grpc.add_FeatureServiceServicer_to_server(Servicer(), server)
    port = server.add_insecure_port(f"127.0.0.1:{args.port}")
    server.start()
    print(f"peer ready port={port}", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    server.stop(grace=1).wait()


def sgemm(args):
    bundle_pb2, _, _ = load_stubs()
    _, tensors = bundle_reader.read_bundle(args.bundle, bundle_pb2.Manifest)
    bank = tensors["encoder/bank"]
    x = np.random.default_rng(1).standard_normal((args.batch, bank.shape[1])).astype(np.float32)
    x @ bank.T  # page the bank in
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        x @ bank.T
        calls += 1
    seconds = time.perf_counter() - start
    rows = calls * args.batch / seconds
    print(f"sgemm bank={bank.shape[0]}x{bank.shape[1]} batch={args.batch} rows_per_second={rows:.1f} "
          f"gflops={2.0 * rows * bank.shape[0] * bank.shape[1] / 1e9:.1f}")


def featurize(args):
    """numpy's featurize of args.rows rows in chunks of args.batch, as a training job would."""
    bundle_pb2, _, _ = load_stubs()
    manifest, tensors = bundle_reader.read_bundle(args.bundle, bundle_pb2.Manifest)
    model = RandomFourierModel(manifest, tensors)
    x = np.random.default_rng(3).random((args.rows, model.input_dim), dtype=np.float32)
    model.featurize(x[: args.batch])  # page the bank in
    start = time.perf_counter()
    for begin in range(0, args.rows, args.batch):
        model.featurize(x[begin:begin + args.batch])
    seconds = time.perf_counter() - start
    print(f"featurize rows={args.rows} batch={args.batch} seconds={seconds:.3f} "
          f"rows_per_second={args.rows / seconds:.1f}")


def check(args):
    import grpc

    _, pb, pb_grpc = load_stubs()
    rng = np.random.default_rng(7)
    x = rng.random((args.rows, args.input_dim), dtype=np.float32)
    results = []
    for target in args.targets.split(","):
        stub = pb_grpc.FeatureServiceStub(grpc.insecure_channel(target))
        request = pb.PredictRequest()
        request.model.name = args.name
        request.inputs.values.extend(x.ravel().tolist())
        response = stub.Predict(request, timeout=120)
        results.append(np.array(response.scores, dtype=np.float32).reshape(args.rows, -1))
    diff = float(np.abs(results[0] - results[1]).max())
    agree = float((results[0].argmax(1) == results[1].argmax(1)).mean())
    print(f"check rows={args.rows} max_abs_score_diff={diff:.3g} argmax_agreement={agree:.3f}")
    return 0 if diff < 1e-3 and agree == 1.0 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["serve", "sgemm", "check", "featurize"])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--name", default="rotated_fashion_rf")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--targets", default="")
    parser.add_argument("--rows", type=int, default=32)
    parser.add_argument("--input_dim", type=int, default=784)
    args = parser.parse_args()
    if args.command == "serve":
        serve(args)
    elif args.command == "sgemm":
        sgemm(args)
    elif args.command == "featurize":
        featurize(args)
    else:
        sys.exit(check(args))


if __name__ == "__main__":
    main()
