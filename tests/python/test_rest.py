"""The Open Inference Protocol over HTTP/JSON (KServe v2 REST) against the real server.

Calls http://127.0.0.1:PORT/v2/... with urllib only and compares every answer
with invariant.v1 (Featurize / Predict over gRPC) on the same server, bit for
bit: float32 inputs are sent as Python floats (exact), the server writes each
output float with the shortest digits that read back to the same float32.
"""

import http.client
import json
import urllib.error
import urllib.request

import numpy as np
import pytest

from conftest import HTTP_MAX_BODY_BYTES
from invariant_serve._proto.inference import grpc_service_pb2 as oip
from invariant_serve._proto.invariant.v1 import feature_service_pb2 as v1


class Reply:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


def call(server, method, path, body=None):
    """One HTTP request; `body` a dict (sent as JSON), str or bytes."""
    if isinstance(body, dict):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    request = urllib.request.Request(server.http_base + path, data=body, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return Reply(response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        with error:
            return Reply(error.code, error.headers, error.read())


def v1_featurize(stub, model, X, version=0):
    response = stub.Featurize(v1.FeaturizeRequest(
        model=v1.ModelSpec(name=model, version=version),
        inputs=v1.InputBatch(raw_values=np.ascontiguousarray(X, "<f4").tobytes())))
    return np.asarray(response.features, dtype="<f4").tobytes()


def v1_predict(stub, model, X):
    return stub.Predict(v1.PredictRequest(model=v1.ModelSpec(name=model),
                                          inputs=v1.InputBatch(values=X.ravel())))


def infer_body(X, nested=False, outputs=(), request_id=None, shape=None):
    data = X.tolist() if nested else X.ravel().tolist()
    body = {"inputs": [{"name": "input", "datatype": "FP32", "shape": shape or list(X.shape),
                        "data": data}]}
    if outputs:
        body["outputs"] = [{"name": name} for name in outputs]
    if request_id is not None:
        body["id"] = request_id
    return body


def fp32_bytes(values):
    """JSON numbers (Python floats) back to little-endian float32 bytes."""
    return np.asarray(values, dtype=np.float64).astype("<f4").tobytes()


# --- health and metadata ------------------------------------------------------


def test_live_and_ready(server):
    live = call(server, "GET", "/v2/health/live")
    assert (live.status, live.json()) == (200, {"live": True})
    assert live.headers["Content-Type"] == "application/json"
    ready = call(server, "GET", "/v2/health/ready")
    assert (ready.status, ready.json()) == (200, {"ready": True})


def test_server_metadata_equals_grpc(server, infer):
    reference = infer.ServerMetadata(oip.ServerMetadataRequest())
    reply = call(server, "GET", "/v2")
    assert reply.status == 200
    # REST adds the binding's own extension (Triton's binary tensor data).
    assert reply.json() == {"name": reference.name, "version": reference.version,
                            "extensions": list(reference.extensions) + ["binary_tensor_data"]}


@pytest.mark.parametrize("path,name,version", [
    ("/v2/models/rf", "rf", ""), ("/v2/models/rf/versions/1", "rf", "1"),
    ("/v2/models/rf/versions/stable", "rf", "stable"), ("/v2/models/rf_image", "rf_image", ""),
    ("/v2/models/rf_features", "rf_features", "")])
def test_model_metadata_equals_grpc(server, infer, path, name, version):
    reference = infer.ModelMetadata(oip.ModelMetadataRequest(name=name, version=version))
    reply = call(server, "GET", path)
    assert reply.status == 200
    metadata = reply.json()
    assert metadata["name"] == reference.name
    assert metadata["versions"] == list(reference.versions)
    assert metadata["platform"] == reference.platform == "invariant"

    def tensors(items):
        return [(t["name"], t["datatype"], t["shape"]) for t in items]

    assert tensors(metadata["inputs"]) == [(t.name, t.datatype, list(t.shape))
                                           for t in reference.inputs]
    assert tensors(metadata["outputs"]) == [(t.name, t.datatype, list(t.shape))
                                            for t in reference.outputs]
    assert metadata["properties"] == dict(reference.properties)


@pytest.mark.parametrize("path,status", [
    ("/v2/models/rf/ready", 200), ("/v2/models/rf/versions/1/ready", 200),
    ("/v2/models/rf/versions/stable/ready", 200), ("/v2/models/rf/versions/latest/ready", 200),
    ("/v2/models/rf/versions/9/ready", 503), ("/v2/models/rf/versions/nightly/ready", 503),
    ("/v2/models/nope/ready", 503), ("/v2/models/rf/versions/-1/ready", 400)])
def test_model_ready(server, infer, path, status):
    reply = call(server, "GET", path)
    assert reply.status == status, reply.body
    if status == 200:
        assert reply.json() == {"name": path.split("/")[3], "ready": True}
    else:
        assert reply.json()["error"]


def test_model_ready_agrees_with_grpc(server, infer):
    for name, version in [("rf", "2"), ("rf", "9"), ("nope", ""), ("rf_regression", "")]:
        path = f"/v2/models/{name}" + (f"/versions/{version}" if version else "") + "/ready"
        ready = infer.ModelReady(oip.ModelReadyRequest(name=name, version=version)).ready
        assert (call(server, "GET", path).status == 200) == ready, path


# --- inference: bit-for-bit equality with invariant.v1 --------------------------


@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize("model", ["rf", "rf_regression", "rf_features"])
def test_infer_equals_invariant_v1_bit_for_bit(server, features_v1, rows, model, nested):
    X = rows(7, seed=11)
    reply = call(server, "POST", f"/v2/models/{model}/infer",
                 infer_body(X, nested=nested, request_id="rest-7"))
    assert reply.status == 200, reply.body
    assert reply.headers["Content-Type"] == "application/json"
    response = reply.json()
    assert response["model_name"] == model
    assert response["id"] == "rest-7"
    outputs = {tensor["name"]: tensor for tensor in response["outputs"]}
    features = outputs["features"]
    assert (features["datatype"], features["shape"]) == ("FP32", [7, 16])
    assert fp32_bytes(features["data"]) == v1_featurize(features_v1, model, X)
    if model == "rf_features":
        assert list(outputs) == ["features"]
        return
    reference = v1_predict(features_v1, model, X)
    assert response["model_version"] == str(reference.model_version)
    scores = outputs["scores"]
    assert (scores["datatype"], scores["shape"]) == ("FP32", [7, reference.output_dim])
    assert fp32_bytes(scores["data"]) == np.asarray(reference.scores, "<f4").tobytes()
    if model == "rf_regression":
        assert list(outputs) == ["features", "scores"]
        return
    classes = outputs["predicted_class"]
    assert (classes["datatype"], classes["shape"]) == ("BYTES", [7])
    assert classes["data"] == list(reference.predicted_classes)
    indices = outputs["predicted_index"]
    assert (indices["datatype"], indices["shape"]) == ("INT32", [7])
    assert indices["data"] == list(reference.predicted_indices)


def test_infer_equals_the_grpc_protocol(server, infer, rows):
    X = rows(5, seed=12)
    grpc_response = infer.ModelInfer(oip.ModelInferRequest(
        model_name="rf", inputs=[oip.ModelInferRequest.InferInputTensor(
            name="input", datatype="FP32", shape=[5, 16],
            contents=oip.InferTensorContents(fp32_contents=X.ravel()))]))
    rest = call(server, "POST", "/v2/models/rf/infer", infer_body(X)).json()
    for grpc_tensor, rest_tensor in zip(grpc_response.outputs, rest["outputs"], strict=True):
        assert rest_tensor["name"] == grpc_tensor.name
        assert rest_tensor["shape"] == list(grpc_tensor.shape)
        contents = grpc_tensor.contents
        if grpc_tensor.datatype == "FP32":
            assert fp32_bytes(rest_tensor["data"]) == np.asarray(
                contents.fp32_contents, "<f4").tobytes()
        elif grpc_tensor.datatype == "INT32":
            assert rest_tensor["data"] == list(contents.int_contents)
        else:
            assert rest_tensor["data"] == [c.decode() for c in contents.bytes_contents]


def test_image_shaped_input(server, features_v1, rows):
    X = rows(3, seed=13)
    reply = call(server, "POST", "/v2/models/rf_image/infer",
                 infer_body(X.reshape(3, 4, 4), nested=True, outputs=["features"]))
    assert reply.status == 200, reply.body
    assert fp32_bytes(reply.json()["outputs"][0]["data"]) == v1_featurize(
        features_v1, "rf_image", X)


def test_requested_outputs_only_in_request_order(server, features_v1, rows):
    X = rows(4, seed=14)
    response = call(server, "POST", "/v2/models/rf/infer",
                    infer_body(X, outputs=["predicted_index", "predicted_class"])).json()
    assert [t["name"] for t in response["outputs"]] == ["predicted_index", "predicted_class"]
    reference = v1_predict(features_v1, "rf", X)
    assert response["outputs"][0]["data"] == list(reference.predicted_indices)
    assert response["outputs"][1]["data"] == list(reference.predicted_classes)
    assert response["id"] == ""


@pytest.mark.parametrize("version,expected", [("1", 1), ("stable", 1), ("2", 2), ("latest", 2)])
def test_versions_in_the_path(server, features_v1, rows, version, expected):
    X = rows(3, seed=15)
    response = call(server, "POST", f"/v2/models/rf/versions/{version}/infer",
                    infer_body(X, outputs=["features"])).json()
    assert response["model_version"] == str(expected)
    data = fp32_bytes(response["outputs"][0]["data"])
    assert data == v1_featurize(features_v1, "rf", X, expected)
    assert data != v1_featurize(features_v1, "rf", X, 3 - expected)


# --- errors: {"error": ...} with the HTTP status of the shared validation -------


def error_cases():
    X = np.zeros((8, 16), np.float32)
    good = infer_body(X)
    tensor = good["inputs"][0]

    def with_tensor(**changes):
        return {"inputs": [{**tensor, **changes}]}

    return {
        "malformed JSON": ("POST", "/v2/models/rf/infer", '{"inputs": [', 400,
                           "request body: byte 12: expected a value"),
        "NaN is not JSON": ("POST", "/v2/models/rf/infer",
                            json.dumps(with_tensor(data=[float("nan")] * 128)), 400,
                            "request body: byte "),
        "trailing comma": ("POST", "/v2/models/rf/infer", '{"inputs": [],}', 400,
                           "request body: byte 14: expected a string key"),
        "not an object": ("POST", "/v2/models/rf/infer", "[]", 400,
                          "request body: expected a JSON object, received an array"),
        "empty body": ("POST", "/v2/models/rf/infer", b"", 400,
                       "request body: byte 0: expected a value"),
        "unknown member": ("POST", "/v2/models/rf/infer", {"input": []}, 400,
                           "request body: expected only the members id, parameters, inputs, "
                           "outputs, received unknown member \"input\""),
        "wrong shape": ("POST", "/v2/models/rf/infer", with_tensor(shape=[8, 15]), 400,
                        "inputs[0].shape: expected [n, 16]"),
        "fractional shape": ("POST", "/v2/models/rf/infer", with_tensor(shape=[8, 16.5]), 400,
                             "inputs[0].shape[1]: expected an integer, received 16.5"),
        "wrong count": ("POST", "/v2/models/rf/infer", with_tensor(data=[0.0] * 127), 400,
                        "inputs[0].data: expected 128 values"),
        "nested unlike the shape": ("POST", "/v2/models/rf/infer",
                                    with_tensor(data=[[0.0] * 16] * 7), 400,
                                    "inputs[0].data: expected 8 items (dimension 0"),
        "string in data": ("POST", "/v2/models/rf/infer",
                           with_tensor(data=[0.0] * 5 + ["1"] + [0.0] * 122), 400,
                           "inputs[0].data[5]: expected a number, received a string"),
        "beyond float range": ("POST", "/v2/models/rf/infer",
                               with_tensor(data=[0.0] * 127 + [1e39]), 400,
                               "inputs[0].data[127]: expected a finite FP32 value, received 1e+39"),
        "wrong datatype": ("POST", "/v2/models/rf/infer", with_tensor(datatype="FP64"), 400,
                           "inputs[0].datatype: expected FP32, received 'FP64'"),
        "wrong input name": ("POST", "/v2/models/rf/infer", with_tensor(name="x"), 400,
                             "inputs[0].name: expected 'input', received 'x'"),
        "no inputs": ("POST", "/v2/models/rf/infer", {"inputs": []}, 400,
                      "inputs: expected exactly 1 input tensor"),
        "unknown output": ("POST", "/v2/models/rf/infer", {**good, "outputs": [{"name": "probs"}]},
                           400, "outputs[0].name: expected one of [features, scores, "
                                "predicted_class, predicted_index], received 'probs'"),
        "unknown model": ("POST", "/v2/models/nope/infer", good, 404,
                          "model_name: no model named 'nope'"),
        "unknown version": ("POST", "/v2/models/rf/versions/9/infer", good, 404,
                            "model_version: model 'rf' version 9 is not ready"),
        "unknown label": ("POST", "/v2/models/rf/versions/nightly/infer", good, 404,
                          "model_version: model 'rf' has no label 'nightly'"),
        "negative version": ("POST", "/v2/models/rf/versions/-1/infer", good, 400,
                             "model_version: expected a positive integer"),
        "metadata of an unknown model": ("GET", "/v2/models/nope", None, 404,
                                         "name: no model named 'nope'"),
        "metadata of an unknown version": ("GET", "/v2/models/rf/versions/9", None, 404,
                                           "version: model 'rf' version 9 is not ready"),
        "GET infer": ("GET", "/v2/models/rf/infer", None, 405,
                      "method: expected POST for /v2/models/rf/infer, received GET"),
        "POST health": ("POST", "/v2/health/live", "{}", 405,
                        "method: expected GET for /v2/health/live, received POST"),
        "PUT metadata": ("PUT", "/v2/models/rf", "{}", 405,
                         "method: expected GET for /v2/models/rf, received PUT"),
        "unknown path": ("GET", "/v2/model/rf", None, 404,
                         "path: expected a route of the Open Inference Protocol under /v2, "
                         "received '/v2/model/rf'"),
        "outside /v2": ("GET", "/metrics", None, 404, "path: expected a route"),
    }


@pytest.mark.parametrize("case", sorted(error_cases()))
def test_error(server, case):
    method, path, body, status, message = error_cases()[case]
    reply = call(server, method, path, body)
    assert reply.status == status, reply.body
    assert reply.headers["Content-Type"] == "application/json"
    error = reply.json()
    assert list(error) == ["error"]
    assert error["error"].startswith(message), error["error"]
    if status == 405:
        assert reply.headers["Allow"] in ("POST", "GET, HEAD")


def test_body_over_the_limit_is_413_before_it_is_read(server):
    # Only the headers are sent: the answer comes from Content-Length alone.
    connection = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=60)
    try:
        connection.putrequest("POST", "/v2/models/rf/infer")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(HTTP_MAX_BODY_BYTES + 1))
        connection.endheaders()
        response = connection.getresponse()
        assert response.status == 413
        assert response.getheader("Content-Type") == "application/json"
        assert json.loads(response.read()) == {
            "error": f"request body: at most {HTTP_MAX_BODY_BYTES} bytes"}
    finally:
        connection.close()
    # A body at the limit is read (and then refused for what it says).
    at_limit = call(server, "POST", "/v2/models/rf/infer",
                    b"{" + b" " * (HTTP_MAX_BODY_BYTES - 2) + b"}")
    assert at_limit.status == 400
    assert at_limit.json()["error"].startswith("inputs: expected an array")
    # The server still answers.
    assert call(server, "GET", "/v2/health/live").status == 200


def test_deep_nesting_is_refused_not_a_crash(server):
    reply = call(server, "POST", "/v2/models/rf/infer", "[" * 100000)
    assert reply.status == 400
    assert reply.json()["error"] == ("request body: byte 64: expected at most 64 levels of "
                                     "nesting, received '['")
    assert call(server, "GET", "/v2/health/live").status == 200


def metric_value(text, name, labels):
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_rest_calls_are_counted_with_the_protocol_method_names(server, rows):
    url = f"http://127.0.0.1:{server.metrics_port}/metrics"
    labels = {"grpc_service": "inference.REST", "grpc_method": "ModelInfer", "grpc_type": "http"}

    def counts():
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        return [metric_value(text, "grpc_server_handled_total", {**labels, "grpc_code": code})
                for code in ("OK", "NOT_FOUND", "INVALID_ARGUMENT")]

    before = counts()
    assert call(server, "POST", "/v2/models/rf/infer", infer_body(rows(2))).status == 200
    assert call(server, "POST", "/v2/models/nope/infer", infer_body(rows(2))).status == 404
    assert call(server, "POST", "/v2/models/rf/infer", "{").status == 400
    assert counts() == [before[0] + 1, before[1] + 1, before[2] + 1]
