"""The request log (--access_log) of the real invariant-server: W3C traceparent over gRPC and
REST, the JSON lines an operator follows a call by, and a stuck log sink that drops lines
without holding a call.

Each test starts its own server, with the log in a file (or a FIFO) of its tmp_path."""

import json
import os
import re
import urllib.request

import grpc
import numpy as np
import pytest

from invariant_serve._proto.invariant.v1 import feature_service_pb2 as v1
from invariant_serve._proto.invariant.v1 import feature_service_pb2_grpc as v1_grpc

from conftest import ServerProcess

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$")


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def stop_and_read(server, path):
    server.stop()  # the log is written whole before the process exits
    return lines(path)


def predict(stub, X, model="rf", metadata=()):
    return stub.Predict.with_call(
        v1.PredictRequest(model=v1.ModelSpec(name=model), inputs=v1.InputBatch(values=X.ravel())),
        metadata=metadata, timeout=30)


def returned_traceparent(call):
    values = [value for key, value in call.initial_metadata() if key == "traceparent"]
    assert len(values) == 1
    return values[0]


def post(server, path, body, headers=()):
    request = urllib.request.Request(server.http_base + path, data=json.dumps(body).encode(),
                                     method="POST",
                                     headers={"Content-Type": "application/json", **dict(headers)})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers, error.read()


def infer_body(X):
    return {"inputs": [{"name": "input", "datatype": "FP32", "shape": list(X.shape),
                        "data": X.ravel().tolist()}]}


def metric(server, name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics",
                                  timeout=10).read().decode()
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    assert match, name
    return float(match.group(1))


@pytest.fixture
def logged(models_dir, tmp_path):
    path = tmp_path / "access.log"
    server = ServerProcess(models_dir, tmp_path / "server.log",
                           ["--access_log=all", f"--access_log_file={path}"])
    yield server, path
    server.stop()


def test_a_grpc_call_with_a_traceparent_is_logged_under_its_trace(logged, rows):
    server, path = logged
    X = rows(3, seed=1)
    with grpc.insecure_channel(server.target) as channel:
        stub = v1_grpc.FeatureServiceStub(channel)
        response, call = predict(stub, X, metadata=[("traceparent", f"00-{TRACE_ID}-{PARENT}-01"),
                                                    ("tracestate", "vendor=abc")])
        assert response.num_rows == 3
        back = TRACEPARENT.match(returned_traceparent(call))
        assert back and back.group(1) == TRACE_ID and back.group(2) != PARENT
    [line] = [l for l in stop_and_read(server, path) if l["method"].endswith("/Predict")]
    assert line["trace_id"] == TRACE_ID and line["parent_span_id"] == PARENT
    assert line["span_id"] == back.group(2) and line["trace_flags"] == "01"
    assert line["tracestate"] == "vendor=abc"
    assert line["protocol"] == "grpc" and line["method"] == "/invariant.v1.FeatureService/Predict"
    assert line["model"] == "rf" and line["version"] >= 1
    assert line["rows"] == 3 and line["status"] == "OK" and line["level"] == "info"
    assert line["admission"] == "admitted"
    assert line["bytes_in"] > 3 * 16 * 4 and line["bytes_out"] > 3 * 3 * 4
    assert line["total_ms"] >= line["compute_ms"] > 0 and line["queue_ms"] >= 0
    assert line["peer"].startswith("ipv4:127.0.0.1:")
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$", line["time"])


def test_a_call_without_one_starts_a_trace_and_errors_say_why(logged, rows):
    server, path = logged
    with grpc.insecure_channel(server.target) as channel:
        stub = v1_grpc.FeatureServiceStub(channel)
        _, call = predict(stub, rows(1), metadata=[("traceparent", "00-zz-bad-01")])
        new = TRACEPARENT.match(returned_traceparent(call)).group(1)
        with pytest.raises(grpc.RpcError) as error:
            predict(stub, rows(2)[:, :5])
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        failed = TRACEPARENT.match(
            dict(error.value.initial_metadata())["traceparent"]).group(1)
    logs = [l for l in stop_and_read(server, path) if l["method"].endswith("/Predict")]
    assert [l["trace_id"] for l in logs] == [new, failed] and new != failed
    assert "parent_span_id" not in logs[0] and logs[0]["trace_flags"] == "00"
    assert logs[1]["status"] == "INVALID_ARGUMENT" and logs[1]["level"] == "error"
    assert "inputs" in logs[1]["error"] and logs[1]["model"] == "rf"
    assert "admission" not in logs[1]  # refused before admission


def test_a_rest_infer_call_returns_and_logs_its_trace(logged, rows):
    server, path = logged
    X = rows(4, seed=2)
    status, headers, _ = post(server, "/v2/models/rf/infer", infer_body(X),
                              [("traceparent", f"00-{TRACE_ID}-{PARENT}-00")])
    assert status == 200
    back = TRACEPARENT.match(headers["traceparent"])
    assert back.group(1) == TRACE_ID
    bad, bad_headers, _ = post(server, "/v2/models/nope/infer", infer_body(X))
    assert bad == 404 and TRACEPARENT.match(bad_headers["traceparent"])
    logs = [l for l in stop_and_read(server, path) if l["protocol"] == "http"]
    [ok] = [l for l in logs if l["trace_id"] == TRACE_ID]
    assert ok["method"] == "POST /v2/models/rf/infer" and ok["http_status"] == 200
    assert ok["span_id"] == back.group(2) and ok["parent_span_id"] == PARENT
    assert ok["model"] == "rf" and ok["rows"] == 4 and ok["status"] == "OK"
    assert ok["bytes_in"] > 0 and ok["bytes_out"] > 0 and ok["compute_ms"] > 0
    [missing] = [l for l in logs if l["http_status"] == 404]
    assert missing["status"] == "NOT_FOUND" and missing["level"] == "error"


def test_errors_mode_logs_only_failed_calls(models_dir, tmp_path, rows):
    path = tmp_path / "access.log"
    server = ServerProcess(models_dir, tmp_path / "server.log",
                           ["--access_log=errors", f"--access_log_file={path}"])
    with grpc.insecure_channel(server.target) as channel:
        stub = v1_grpc.FeatureServiceStub(channel)
        for _ in range(5):
            predict(stub, rows(1))
        with pytest.raises(grpc.RpcError):
            predict(stub, rows(1), model="no_such_model")
    logs = stop_and_read(server, path)
    assert [l["status"] for l in logs] == ["NOT_FOUND"]


def test_a_stuck_log_sink_drops_lines_and_holds_no_call(models_dir, tmp_path, rows):
    # The log goes to a FIFO that is opened but never read: once the pipe's buffer and the
    # queue of 8 lines are full, the writer is blocked and every further line is dropped.
    fifo = tmp_path / "access.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so the server's open does not wait
    server = ServerProcess(models_dir, tmp_path / "server.log",
                           ["--access_log=all", f"--access_log_file={fifo}",
                            "--access_log_queue_lines=8"])
    try:
        calls = 1500  # ~500 bytes a line: well past a 64 KiB pipe and 8 queued lines
        with grpc.insecure_channel(server.target) as channel:
            stub = v1_grpc.FeatureServiceStub(channel)
            X = rows(1)
            for _ in range(calls):
                response, _ = predict(stub, X)
                assert response.num_rows == 1
        dropped = metric(server, 'invariant_access_log_lines_total{outcome="dropped"}')
        written = metric(server, 'invariant_access_log_lines_total{outcome="written"}')
        assert dropped > 0 and written < calls
        # What was written is whole lines of JSON.
        text = b""
        while True:
            try:
                chunk = os.read(reader, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            text += chunk
        complete = text.decode().split("\n")[:-1]
        assert len(complete) > 10
        for line in complete:
            assert json.loads(line)["status"] == "OK"
    finally:
        server.stop()
        os.close(reader)
