"""Fixtures of the Python tests: the test models and the REAL invariant-server on 127.0.0.1.

Environment (set by tests/python/CMakeLists.txt):
  INVARIANT_SERVER_BINARY  the invariant-server executable
  INVARIANT_TEST_HELPER    invariant_python_test_helper (writes the models,
                           calls the server through the C++ client)
  INVARIANT_SOURCE_DIR     the repository (for the pip install test)
  PYTHONPATH               holds the staged invariant_serve package
"""

import os
import pathlib
import selectors
import subprocess
import time

import numpy as np
import pytest

INPUT_DIM = 16  # of every test model (python_test_helper.cc)
READY_TIMEOUT_SECONDS = 60


def _env(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run the Python tests through ctest")
    return value


# The REST tests send a body just over this limit to see the 413.
HTTP_MAX_BODY_BYTES = 1 << 20


class ServerProcess:
    """invariant-server started with --port=0 and --http_port=0; `target` (gRPC) and
    `http_base` (Open Inference Protocol over HTTP/JSON) once its ready line is read."""

    def __init__(self, models_dir, log_path, extra_flags=()):
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.process = subprocess.Popen(
            [_env("INVARIANT_SERVER_BINARY"), f"--models={models_dir}", "--host=127.0.0.1",
             "--port=0", "--metrics_port=0", "--poll_seconds=0", "--version_policy=all",
             "--http_port=0", f"--http_max_body_bytes={HTTP_MAX_BODY_BYTES}",
             *extra_flags],
            stdout=subprocess.PIPE, stderr=self._log)
        self.grpc_port, self.metrics_port, self.http_port = self._read_ready_line()
        self.target = f"127.0.0.1:{self.grpc_port}"
        self.http_base = f"http://127.0.0.1:{self.http_port}"

    def _read_ready_line(self):
        # Bounded wait for "invariant-server ready grpc_port=N metrics_port=M http_port=H".
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        buffered = b""
        while b"\n" not in buffered:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                self.stop()
                raise RuntimeError(f"invariant-server not ready: {self.log()}")
            chunk = os.read(self.process.stdout.fileno(), 4096)
            if not chunk:
                self.stop()
                raise RuntimeError(f"invariant-server exited: {self.log()}")
            buffered += chunk
        line = buffered.split(b"\n", 1)[0].decode()
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        return int(fields["grpc_port"]), int(fields["metrics_port"]), int(fields["http_port"])

    def log(self):
        return pathlib.Path(self.log_path).read_text(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        self._log.close()


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    subprocess.run([_env("INVARIANT_TEST_HELPER"), "write-models", str(root)], check=True)
    return root


@pytest.fixture(scope="session")
def server(models_dir, tmp_path_factory):
    process = ServerProcess(models_dir, tmp_path_factory.mktemp("server") / "server.log")
    yield process
    process.stop()


@pytest.fixture
def rows():
    """Seeded random float32 rows: rows(n, seed) -> [n, 16]."""

    def make(n, seed=0):
        return np.random.default_rng(seed).standard_normal((n, INPUT_DIM)).astype(np.float32)

    return make


@pytest.fixture
def cpp_client(server, tmp_path):
    """Calls the server through the C++ client: cpp_client("featurize"|"predict", model, X)
    -> float32 [n, width] (and for predict the class names)."""

    def call(method, model, X):
        X = np.ascontiguousarray(X, dtype="<f4")
        in_path, out_path = tmp_path / "in.f32", tmp_path / "out.f32"
        in_path.write_bytes(X.tobytes())
        subprocess.run([_env("INVARIANT_TEST_HELPER"), method, server.target, model,
                        str(X.shape[1]), str(in_path), str(out_path)], check=True)
        values = np.frombuffer(out_path.read_bytes(), dtype="<f4").reshape(X.shape[0], -1)
        if method == "featurize":
            return values
        classes = pathlib.Path(f"{out_path}.classes").read_text().splitlines()
        return values, classes

    return call


# gRPC stubs on one channel to the session's server, shared by the protocol
# tests (the stub modules are imported here, after PYTHONPATH is in effect).
@pytest.fixture(scope="module")
def channel(server):
    import grpc

    with grpc.insecure_channel(server.target) as ch:
        yield ch


@pytest.fixture(scope="module")
def features_v1(channel):
    from invariant_serve._proto.invariant.v1 import feature_service_pb2_grpc as v1_grpc

    return v1_grpc.FeatureServiceStub(channel)


@pytest.fixture(scope="module")
def infer(channel):
    from invariant_serve._proto.inference import grpc_service_pb2_grpc as oip_grpc

    return oip_grpc.GRPCInferenceServiceStub(channel)
