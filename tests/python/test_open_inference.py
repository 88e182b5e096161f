"""The Open Inference Protocol (inference.GRPCInferenceService) against the real server.

The stubs are generated from proto/inference/grpc_service.proto (and the
invariant.v1 stubs from proto/invariant/v1/) at build time; every answer is
compared bit for bit with invariant.v1 Featurize / Predict on the same server.
"""

import json
import re
import struct
import urllib.request

import grpc
import numpy as np
import pytest
from google.protobuf.descriptor import FieldDescriptor as FD

from invariant_serve._proto.inference import grpc_service_pb2 as oip
from invariant_serve._proto.invariant.v1 import feature_service_pb2 as v1

InputTensor = oip.ModelInferRequest.InferInputTensor
OutputRequest = oip.ModelInferRequest.InferRequestedOutputTensor


def raw_request(model, X, version="", outputs=(), request_id="", shape=None):
    return oip.ModelInferRequest(
        model_name=model, model_version=version, id=request_id,
        inputs=[InputTensor(name="input", datatype="FP32", shape=shape or list(X.shape))],
        outputs=[OutputRequest(name=name) for name in outputs],
        raw_input_contents=[np.ascontiguousarray(X, "<f4").tobytes()])


def typed_request(model, X, version="", outputs=()):
    return oip.ModelInferRequest(
        model_name=model, model_version=version,
        inputs=[InputTensor(name="input", datatype="FP32", shape=list(X.shape),
                            contents=oip.InferTensorContents(fp32_contents=X.ravel()))],
        outputs=[OutputRequest(name=name) for name in outputs])


def v1_featurize(stub, model, X, version=0):
    response = stub.Featurize(v1.FeaturizeRequest(
        model=v1.ModelSpec(name=model, version=version),
        inputs=v1.InputBatch(raw_values=np.ascontiguousarray(X, "<f4").tobytes())))
    return np.asarray(response.features, dtype="<f4").tobytes()


def v1_predict(stub, model, X, version=0):
    return stub.Predict(v1.PredictRequest(
        model=v1.ModelSpec(name=model, version=version),
        inputs=v1.InputBatch(values=X.ravel())))


def decode_bytes_tensor(raw):
    """The elements of a raw BYTES tensor: each a 4-byte little-endian length + bytes."""
    items, pos = [], 0
    while pos < len(raw):
        (length,) = struct.unpack_from("<I", raw, pos)
        items.append(raw[pos + 4:pos + 4 + length].decode())
        pos += 4 + length
    return items


def outputs_by_name(response):
    return {tensor.name: (index, tensor) for index, tensor in enumerate(response.outputs)}


# --- health and metadata ------------------------------------------------------


def test_server_live_ready_and_metadata(infer):
    assert infer.ServerLive(oip.ServerLiveRequest()).live
    assert infer.ServerReady(oip.ServerReadyRequest()).ready
    metadata = infer.ServerMetadata(oip.ServerMetadataRequest())
    assert metadata.name == "invariant-server"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", metadata.version)


@pytest.mark.parametrize("name,version,ready", [
    ("rf", "", True), ("rf", "1", True), ("rf", "2", True), ("rf", "stable", True),
    ("rf", "latest", True), ("rf", "9", False), ("rf", "nightly", False), ("nope", "", False),
    ("rf_features", "", True)])
def test_model_ready(infer, name, version, ready):
    assert infer.ModelReady(oip.ModelReadyRequest(name=name, version=version)).ready is ready


def test_model_ready_rejects_a_malformed_version(infer):
    with pytest.raises(grpc.RpcError) as error:
        infer.ModelReady(oip.ModelReadyRequest(name="rf", version="-1"))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.value.details().startswith("version: expected a positive integer version")


def tensor_metadata(tensors):
    return [(t.name, t.datatype, list(t.shape)) for t in tensors]


def test_model_metadata_of_a_classifier_matches_invariant_v1(infer, features_v1):
    metadata = infer.ModelMetadata(oip.ModelMetadataRequest(name="rf"))
    reference = features_v1.GetModelMetadata(
        v1.GetModelMetadataRequest(model=v1.ModelSpec(name="rf")))
    assert metadata.name == "rf"
    assert list(metadata.versions) == ["2", "1"]
    assert metadata.platform == "invariant"
    assert tensor_metadata(metadata.inputs) == [("input", "FP32", [-1, reference.input_dim])]
    assert tensor_metadata(metadata.outputs) == [
        ("features", "FP32", [-1, reference.feature_dim]),
        ("scores", "FP32", [-1, reference.output_dim]),
        ("predicted_class", "BYTES", [-1]),
        ("predicted_index", "INT32", [-1])]
    properties = metadata.properties
    assert properties["version"] == "2"
    assert properties["encoder_kind"] == reference.encoder_kind == "random_fourier"
    encoder = json.loads(properties["encoder"])
    assert encoder["group"] == json.loads(properties["group"])
    assert encoder["group"]["cyclic_shift"]["length"] == 16
    assert json.loads(properties["certificate"])["max_discrepancy"] == pytest.approx(
        reference.certificate.max_discrepancy)
    assert json.loads(properties["class_names"]) == list(reference.head.class_names)
    assert properties["task"] == "classification"
    assert json.loads(properties["metrics"]) == pytest.approx(dict(reference.metrics))
    assert json.loads(properties["input_shape"]) == list(reference.input_shape)
    assert int(properties["model_bytes"]) == reference.model_bytes


def test_model_metadata_of_a_featurizer_and_a_regressor(infer):
    features_only = infer.ModelMetadata(oip.ModelMetadataRequest(name="rf_features"))
    assert tensor_metadata(features_only.outputs) == [("features", "FP32", [-1, 16])]
    assert "task" not in features_only.properties
    regressor = infer.ModelMetadata(oip.ModelMetadataRequest(name="rf_regression"))
    assert tensor_metadata(regressor.outputs) == [("features", "FP32", [-1, 16]),
                                                  ("scores", "FP32", [-1, 2])]
    assert regressor.properties["task"] == "regression"
    assert json.loads(regressor.properties["target_names"]) == ["target_0", "target_1"]


@pytest.mark.parametrize("version,expected", [("1", "1"), ("stable", "1"), ("", "2")])
def test_model_metadata_of_a_version(infer, version, expected):
    metadata = infer.ModelMetadata(oip.ModelMetadataRequest(name="rf", version=version))
    assert metadata.properties["version"] == expected


def test_image_shaped_input_is_accepted_and_announced(infer, features_v1, rows):
    X = rows(3, seed=4)
    metadata = infer.ModelMetadata(oip.ModelMetadataRequest(name="rf_image"))
    assert json.loads(metadata.properties["input_shape"]) == [4, 4]
    flat = infer.ModelInfer(raw_request("rf_image", X, outputs=["features"]))
    shaped = infer.ModelInfer(
        raw_request("rf_image", X, outputs=["features"], shape=[3, 4, 4]))
    assert shaped.raw_output_contents[0] == flat.raw_output_contents[0]
    assert shaped.raw_output_contents[0] == v1_featurize(features_v1, "rf_image", X)


# --- inference: bit-for-bit equality with invariant.v1 --------------------------


@pytest.mark.parametrize("model", ["rf", "rf_regression", "rf_features"])
def test_raw_infer_equals_invariant_v1_bit_for_bit(infer, features_v1, rows, model):
    X = rows(7, seed=1)
    response = infer.ModelInfer(raw_request(model, X, request_id="req-17"))
    assert response.model_name == model
    assert response.id == "req-17"
    outputs = outputs_by_name(response)
    assert len(response.raw_output_contents) == len(response.outputs)
    assert all(not t.HasField("contents") for t in response.outputs)
    index, features = outputs["features"]
    assert (features.datatype, list(features.shape)) == ("FP32", [7, 16])
    assert response.raw_output_contents[index] == v1_featurize(features_v1, model, X)
    if model == "rf_features":
        assert list(outputs) == ["features"]
        return
    reference = v1_predict(features_v1, model, X)
    assert response.model_version == str(reference.model_version)
    index, scores = outputs["scores"]
    assert (scores.datatype, list(scores.shape)) == ("FP32", [7, reference.output_dim])
    assert response.raw_output_contents[index] == np.asarray(reference.scores, "<f4").tobytes()
    if model == "rf_regression":
        assert list(outputs) == ["features", "scores"]
        return
    index, classes = outputs["predicted_class"]
    assert (classes.datatype, list(classes.shape)) == ("BYTES", [7])
    assert decode_bytes_tensor(response.raw_output_contents[index]) == list(
        reference.predicted_classes)
    index, indices = outputs["predicted_index"]
    assert (indices.datatype, list(indices.shape)) == ("INT32", [7])
    assert np.frombuffer(response.raw_output_contents[index], "<i4").tolist() == list(
        reference.predicted_indices)


@pytest.mark.parametrize("model", ["rf", "rf_regression"])
def test_typed_infer_equals_invariant_v1_bit_for_bit(infer, features_v1, rows, model):
    X = rows(5, seed=2)
    response = infer.ModelInfer(typed_request(model, X))
    assert len(response.raw_output_contents) == 0
    outputs = outputs_by_name(response)
    reference = v1_predict(features_v1, model, X)
    features = outputs["features"][1].contents.fp32_contents
    assert np.asarray(features, "<f4").tobytes() == v1_featurize(features_v1, model, X)
    scores = outputs["scores"][1].contents.fp32_contents
    assert np.asarray(scores, "<f4").tobytes() == np.asarray(reference.scores, "<f4").tobytes()
    if model == "rf":
        assert list(outputs["predicted_class"][1].contents.bytes_contents) == [
            c.encode() for c in reference.predicted_classes]
        assert list(outputs["predicted_index"][1].contents.int_contents) == list(
            reference.predicted_indices)


def test_requested_outputs_only_in_request_order(infer, features_v1, rows):
    X = rows(4, seed=3)
    response = infer.ModelInfer(raw_request("rf", X, outputs=["predicted_index", "scores"]))
    assert [t.name for t in response.outputs] == ["predicted_index", "scores"]
    assert len(response.raw_output_contents) == 2
    reference = v1_predict(features_v1, "rf", X)
    assert np.frombuffer(response.raw_output_contents[0], "<i4").tolist() == list(
        reference.predicted_indices)
    assert response.raw_output_contents[1] == np.asarray(reference.scores, "<f4").tobytes()


@pytest.mark.parametrize("version,expected", [("1", 1), ("stable", 1), ("2", 2), ("", 2)])
def test_versions_as_strings(infer, features_v1, rows, version, expected):
    X = rows(3, seed=5)
    response = infer.ModelInfer(raw_request("rf", X, version=version, outputs=["features"]))
    assert response.model_version == str(expected)
    assert response.raw_output_contents[0] == v1_featurize(features_v1, "rf", X, expected)
    other = 3 - expected
    assert response.raw_output_contents[0] != v1_featurize(features_v1, "rf", X, other)


# --- errors: same codes as invariant.v1, messages naming the protocol field ------


def with_input(X, **changes):
    tensor = dict(name="input", datatype="FP32", shape=list(X.shape))
    tensor.update(changes)
    return InputTensor(**tensor)


def error_cases(X):
    raw = [X.tobytes()]
    nan = X.copy()
    nan[1, 2] = np.nan
    typed = oip.InferTensorContents(fp32_contents=X.ravel())
    return {
        "unknown model": (
            oip.ModelInferRequest(model_name="nope", inputs=[with_input(X)],
                                  raw_input_contents=raw),
            grpc.StatusCode.NOT_FOUND, "model_name: no model named 'nope'"),
        "empty model name": (
            oip.ModelInferRequest(inputs=[with_input(X)], raw_input_contents=raw),
            grpc.StatusCode.INVALID_ARGUMENT, "model_name: expected a model name"),
        "negative version": (
            oip.ModelInferRequest(model_name="rf", model_version="-1", inputs=[with_input(X)],
                                  raw_input_contents=raw),
            grpc.StatusCode.INVALID_ARGUMENT, "model_version: expected a positive integer"),
        "fractional version": (
            oip.ModelInferRequest(model_name="rf", model_version="1.5", inputs=[with_input(X)],
                                  raw_input_contents=raw),
            grpc.StatusCode.INVALID_ARGUMENT, "model_version: expected a positive integer"),
        "unknown version": (
            oip.ModelInferRequest(model_name="rf", model_version="9", inputs=[with_input(X)],
                                  raw_input_contents=raw),
            grpc.StatusCode.NOT_FOUND, "model_version: model 'rf' version 9 is not ready"),
        "unknown label": (
            oip.ModelInferRequest(model_name="rf", model_version="nightly",
                                  inputs=[with_input(X)], raw_input_contents=raw),
            grpc.StatusCode.NOT_FOUND, "model_version: model 'rf' has no label 'nightly'"),
        "wrong row width": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X, shape=[8, 15])],
                                  raw_input_contents=raw),
            grpc.StatusCode.INVALID_ARGUMENT, "inputs[0].shape: expected [n, 16]"),
        "no batch dimension": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X, shape=[X.size])],
                                  raw_input_contents=raw),
            grpc.StatusCode.INVALID_ARGUMENT, "inputs[0].shape: expected [n, 16]"),
        "zero rows": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X, shape=[0, 16])],
                                  raw_input_contents=[b""]),
            grpc.StatusCode.INVALID_ARGUMENT, "inputs[0].shape: expected [n, 16]"),
        "wrong datatype": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X, datatype="FP64")],
                                  raw_input_contents=[X.astype("<f8").tobytes()]),
            grpc.StatusCode.INVALID_ARGUMENT, "inputs[0].datatype: expected FP32, received 'FP64'"),
        "wrong input name": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X, name="x")],
                                  raw_input_contents=raw),
            grpc.StatusCode.INVALID_ARGUMENT, "inputs[0].name: expected 'input', received 'x'"),
        "two inputs": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X), with_input(X)],
                                  raw_input_contents=raw * 2),
            grpc.StatusCode.INVALID_ARGUMENT, "inputs: expected exactly 1 input tensor"),
        "no inputs": (
            oip.ModelInferRequest(model_name="rf"),
            grpc.StatusCode.INVALID_ARGUMENT, "inputs: expected exactly 1 input tensor"),
        "raw size": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X)],
                                  raw_input_contents=[X.tobytes()[:-4]]),
            grpc.StatusCode.INVALID_ARGUMENT, "raw_input_contents[0]: expected 512 bytes"),
        "raw and contents": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X, contents=typed)],
                                  raw_input_contents=raw),
            grpc.StatusCode.INVALID_ARGUMENT, "inputs[0].contents: expected no contents"),
        "contents count": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(
                X, contents=oip.InferTensorContents(fp32_contents=X.ravel()[:-1]))]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "inputs[0].contents.fp32_contents: expected 128 values"),
        "contents of another type": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(
                X, contents=oip.InferTensorContents(int_contents=[1] * X.size))]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "inputs[0].contents: expected fp32_contents for datatype FP32, received int_contents"),
        "NaN typed": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(
                X, contents=oip.InferTensorContents(fp32_contents=nan.ravel()))]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "inputs[0].contents.fp32_contents[row 1, column 2]: expected a finite float"),
        "NaN raw": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X)],
                                  raw_input_contents=[nan.tobytes()]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "raw_input_contents[0][row 1, column 2]: expected a finite float"),
        "unknown output": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X)],
                                  raw_input_contents=raw, outputs=[OutputRequest(name="probs")]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "outputs[0].name: expected one of [features, scores, predicted_class, "
            "predicted_index], received 'probs'"),
        "scores of a featurizer": (
            oip.ModelInferRequest(model_name="rf_features", inputs=[with_input(X)],
                                  raw_input_contents=raw,
                                  outputs=[OutputRequest(name="scores")]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "outputs[0].name: expected one of [features] (the model has no linear head)"),
        "output twice": (
            oip.ModelInferRequest(model_name="rf", inputs=[with_input(X)],
                                  raw_input_contents=raw,
                                  outputs=[OutputRequest(name="scores"),
                                           OutputRequest(name="scores")]),
            grpc.StatusCode.INVALID_ARGUMENT, "outputs[1].name: expected each output at most once"),
    }


CASES = sorted(error_cases(np.zeros((8, 16), np.float32)))


@pytest.mark.parametrize("case", CASES)
def test_error(infer, rows, case):
    request, code, message = error_cases(rows(8, seed=6))[case]
    with pytest.raises(grpc.RpcError) as error:
        infer.ModelInfer(request)
    assert error.value.code() == code, error.value.details()
    assert error.value.details().startswith(message), error.value.details()


@pytest.mark.parametrize("model,X,code", [
    ("nope", np.zeros((2, 16), np.float32), grpc.StatusCode.NOT_FOUND),
    ("rf", np.full((2, 16), np.inf, np.float32), grpc.StatusCode.INVALID_ARGUMENT)])
def test_errors_have_the_invariant_v1_codes(infer, features_v1, model, X, code):
    with pytest.raises(grpc.RpcError) as v1_error:
        v1_featurize(features_v1, model, X)
    with pytest.raises(grpc.RpcError) as oip_error:
        infer.ModelInfer(raw_request(model, X))
    assert v1_error.value.code() == oip_error.value.code() == code


def metric_value(text, name, labels):
    for line in text.splitlines():
        if line.startswith(name + "{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_calls_are_counted_under_the_protocol_method_names(server, infer, rows):
    url = f"http://127.0.0.1:{server.metrics_port}/metrics"
    labels = {"grpc_service": "inference.GRPCInferenceService", "grpc_method": "ModelInfer"}

    def counts():
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        return (metric_value(text, "grpc_server_handled_total", {**labels, "grpc_code": "OK"}),
                metric_value(text, "grpc_server_handled_total",
                             {**labels, "grpc_code": "NOT_FOUND"}))

    ok_before, not_found_before = counts()
    infer.ModelInfer(raw_request("rf", rows(2)))
    with pytest.raises(grpc.RpcError):
        infer.ModelInfer(raw_request("nope", rows(2)))
    ok_after, not_found_after = counts()
    assert ok_after == ok_before + 1
    assert not_found_after == not_found_before + 1


# --- the wire contract: names, numbers and types of the protocol's fields -------

WIRE_CONTRACT = {
    "ServerLiveResponse": [("live", 1, "bool")],
    "ServerReadyResponse": [("ready", 1, "bool")],
    "ModelReadyRequest": [("name", 1, "string"), ("version", 2, "string")],
    "ModelReadyResponse": [("ready", 1, "bool")],
    "ServerMetadataResponse": [("name", 1, "string"), ("version", 2, "string"),
                               ("extensions", 3, "repeated string")],
    "ModelMetadataRequest": [("name", 1, "string"), ("version", 2, "string")],
    "ModelMetadataResponse": [
        ("name", 1, "string"), ("versions", 2, "repeated string"), ("platform", 3, "string"),
        ("inputs", 4, "repeated inference.ModelMetadataResponse.TensorMetadata"),
        ("outputs", 5, "repeated inference.ModelMetadataResponse.TensorMetadata"),
        ("properties", 6, "map<string, string>")],
    "ModelMetadataResponse.TensorMetadata": [("name", 1, "string"), ("datatype", 2, "string"),
                                             ("shape", 3, "repeated int64")],
    "ModelInferRequest": [
        ("model_name", 1, "string"), ("model_version", 2, "string"), ("id", 3, "string"),
        ("parameters", 4, "map<string, inference.InferParameter>"),
        ("inputs", 5, "repeated inference.ModelInferRequest.InferInputTensor"),
        ("outputs", 6, "repeated inference.ModelInferRequest.InferRequestedOutputTensor"),
        ("raw_input_contents", 7, "repeated bytes")],
    "ModelInferRequest.InferInputTensor": [
        ("name", 1, "string"), ("datatype", 2, "string"), ("shape", 3, "repeated int64"),
        ("parameters", 4, "map<string, inference.InferParameter>"),
        ("contents", 5, "inference.InferTensorContents")],
    "ModelInferRequest.InferRequestedOutputTensor": [
        ("name", 1, "string"), ("parameters", 2, "map<string, inference.InferParameter>")],
    "ModelInferResponse": [
        ("model_name", 1, "string"), ("model_version", 2, "string"), ("id", 3, "string"),
        ("parameters", 4, "map<string, inference.InferParameter>"),
        ("outputs", 5, "repeated inference.ModelInferResponse.InferOutputTensor"),
        ("raw_output_contents", 6, "repeated bytes")],
    "ModelInferResponse.InferOutputTensor": [
        ("name", 1, "string"), ("datatype", 2, "string"), ("shape", 3, "repeated int64"),
        ("parameters", 4, "map<string, inference.InferParameter>"),
        ("contents", 5, "inference.InferTensorContents")],
    "InferParameter": [("bool_param", 1, "bool"), ("int64_param", 2, "int64"),
                       ("string_param", 3, "string"), ("double_param", 4, "double"),
                       ("uint64_param", 5, "uint64")],
    "InferTensorContents": [
        ("bool_contents", 1, "repeated bool"), ("int_contents", 2, "repeated int32"),
        ("int64_contents", 3, "repeated int64"), ("uint_contents", 4, "repeated uint32"),
        ("uint64_contents", 5, "repeated uint64"), ("fp32_contents", 6, "repeated float"),
        ("fp64_contents", 7, "repeated double"), ("bytes_contents", 8, "repeated bytes")],
}


def type_name(field):
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        key = field.message_type.fields_by_name["key"]
        value = field.message_type.fields_by_name["value"]
        return f"map<{type_name(key)}, {type_name(value)}>"
    names = {FD.TYPE_BOOL: "bool", FD.TYPE_INT32: "int32", FD.TYPE_INT64: "int64",
             FD.TYPE_UINT32: "uint32", FD.TYPE_UINT64: "uint64", FD.TYPE_FLOAT: "float",
             FD.TYPE_DOUBLE: "double", FD.TYPE_STRING: "string", FD.TYPE_BYTES: "bytes"}
    base = field.message_type.full_name if field.message_type is not None else names[field.type]
    return f"repeated {base}" if field.label == FD.LABEL_REPEATED else base


@pytest.mark.parametrize("message", sorted(WIRE_CONTRACT))
def test_wire_contract_of_the_protocol(message):
    descriptor = oip.DESCRIPTOR.message_types_by_name[message.split(".")[0]]
    for nested in message.split(".")[1:]:
        descriptor = descriptor.nested_types_by_name[nested]
    assert descriptor.full_name == f"inference.{message}"
    fields = [(f.name, f.number, type_name(f)) for f in descriptor.fields]
    assert fields == WIRE_CONTRACT[message]
    if message == "InferParameter":
        assert [f.name for f in descriptor.oneofs_by_name["parameter_choice"].fields] == [
            "bool_param", "int64_param", "string_param", "double_param", "uint64_param"]


def test_service_methods_of_the_protocol():
    service = oip.DESCRIPTOR.services_by_name["GRPCInferenceService"]
    assert service.full_name == "inference.GRPCInferenceService"
    assert [(m.name, m.input_type.name, m.output_type.name) for m in service.methods] == [
        (name, f"{name}Request", f"{name}Response") for name in
        ["ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata",
         "ModelInfer", "ModelStatistics", "RepositoryIndex", "RepositoryModelLoad",
         "RepositoryModelUnload"]]
