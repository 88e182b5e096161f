"""The invariant_serve Python client against the real server, compared with the C++ client."""

import asyncio
import sys
import types

import grpc
import numpy as np
import pytest

import invariant_serve
from invariant_serve import AsyncClient, Client, InvariantServeError, Prediction, _wire
from invariant_serve._proto.invariant.v1 import feature_service_pb2 as v1

from conftest import ServerProcess


@pytest.fixture(scope="module")
def client(server):
    with Client(server.target, timeout=30) as c:
        yield c


def test_featurize_equals_the_cpp_client_bit_for_bit(client, cpp_client, rows):
    X = rows(33, seed=11)
    for model in ["rf", "rf_features", "rf_regression"]:
        features = client.featurize(model, X)
        assert features.dtype == np.float32 and features.shape == (33, 16)
        assert features.tobytes() == cpp_client("featurize", model, X).tobytes()


def test_predict_equals_the_cpp_client_bit_for_bit(client, cpp_client, rows):
    X = rows(21, seed=12)
    prediction = client.predict("rf", X)
    scores, classes = cpp_client("predict", "rf", X)
    assert prediction.scores.dtype == np.float32 and prediction.scores.shape == (21, 3)
    assert prediction.scores.tobytes() == scores.tobytes()
    assert prediction.classes.tolist() == classes
    assert prediction.indices.dtype == np.int32
    assert prediction.indices.tolist() == [int(c.split("_")[1]) for c in classes]
    assert (prediction.model_name, prediction.model_version) == ("rf", 2)
    assert prediction.columns == ("class_0", "class_1", "class_2")


def test_regression_prediction_has_scores_only(client, cpp_client, rows):
    X = rows(6, seed=13)
    prediction = client.predict("rf_regression", X)
    scores, _ = cpp_client("predict", "rf_regression", X)
    assert prediction.scores.tobytes() == scores.tobytes()
    assert prediction.classes is None and prediction.indices is None
    assert prediction.columns == ("target_0", "target_1")


def test_ten_thousand_rows_in_one_call(client, cpp_client, rows):
    X = rows(10_000, seed=14)
    features = client.featurize("rf", X)
    assert features.shape == (10_000, 16)
    assert features.tobytes() == cpp_client("featurize", "rf", X).tobytes()
    assert features.flags.writeable


def test_float_payload_is_read_with_frombuffer_not_per_value():
    values = np.arange(10_000 * 16, dtype=np.float32)
    message = v1.FeaturizeResponse(model_name="m", model_version=3, num_rows=10_000,
                                   feature_dim=16, features=values)
    data = message.SerializeToString()
    payload, rest = _wire.split_packed_floats(data, 5)
    assert not payload.flags.owndata  # a view of the message bytes
    assert np.array_equal(payload, values)
    parsed = v1.FeaturizeResponse.FromString(rest)
    assert (parsed.model_name, parsed.model_version, parsed.num_rows, len(parsed.features)) == (
        "m", 3, 10_000, 0)


def test_versions_and_labels(client, rows):
    X = rows(4, seed=15)
    newest = client.featurize("rf", X)
    assert np.array_equal(client.featurize("rf", X, version=2), newest)
    assert np.array_equal(client.featurize("rf", X, version="latest"), newest)
    first = client.featurize("rf", X, version=1)
    assert not np.array_equal(first, newest)
    assert np.array_equal(client.featurize("rf", X, version="stable"), first)
    assert np.array_equal(client.featurize("rf", X, version="1"), first)


def test_metadata(client):
    metadata = client.metadata("rf")
    assert (metadata.name, metadata.version) == ("rf", 2)
    assert (metadata.input_dim, metadata.feature_dim, metadata.output_dim) == (16, 16, 3)
    assert metadata.input_shape == (16,)
    assert metadata.task == "classification"
    assert metadata.audio is None  # a model of rows
    assert metadata.class_names == ["class_0", "class_1", "class_2"]
    assert metadata.encoder_kind == "random_fourier"
    assert metadata.encoder["group"]["cyclic_shift"]["length"] == 16
    assert metadata.certificate["max_discrepancy"] == pytest.approx(1e-6)
    assert metadata.metrics == {"test_accuracy": 0.875}
    assert metadata.input_scaling == "none"  # the test models record values taken as read
    assert metadata.input_columns == []      # and no column names
    assert client.metadata("rf", version="stable").version == 1
    assert client.metadata("rf_features").task is None
    assert client.metadata("rf_image").input_shape == (4, 4)


def test_models(client):
    summaries = {m.name: m for m in client.models()}
    assert sorted(summaries) == ["rf", "rf_features", "rf_image", "rf_regression"]
    assert [v.version for v in summaries["rf"].versions] == [2, 1]
    assert summaries["rf"].labels == {"stable": 1}
    assert summaries["rf_features"].versions[0].has_head is False


def test_health(client):
    assert client.health() is True
    assert client.health("invariant.v1.FeatureService") is True


@pytest.mark.parametrize("call,code,message", [
    (lambda c, X: c.featurize("nope", X), grpc.StatusCode.NOT_FOUND,
     "model.name: no model named 'nope'"),
    (lambda c, X: c.featurize("rf", X[:, :10]), grpc.StatusCode.INVALID_ARGUMENT,
     "inputs.raw_values: expected a multiple of input_dim=16 floats"),
    (lambda c, X: c.predict("rf_features", X), grpc.StatusCode.FAILED_PRECONDITION,
     "model 'rf_features' version 1 has no linear head"),
    (lambda c, X: c.featurize("rf", X, version=9), grpc.StatusCode.NOT_FOUND,
     "model.version: model 'rf' version 9 is not ready"),
    (lambda c, X: c.metadata("rf", version="nightly"), grpc.StatusCode.NOT_FOUND,
     "model.version_label: model 'rf' has no label 'nightly'"),
])
def test_errors_are_exceptions_with_code_and_message(client, rows, call, code, message):
    with pytest.raises(InvariantServeError) as error:
        call(client, rows(3, seed=16))
    assert error.value.code == code
    assert error.value.message.startswith(message), error.value.message
    assert str(error.value).startswith(f"{code.name}: {message}")


def test_non_finite_rows_are_refused(client, rows):
    X = rows(3, seed=17)
    X[2, 5] = np.inf
    with pytest.raises(InvariantServeError) as error:
        client.featurize("rf", X)
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "[row 2, column 5]" in error.value.message


def test_a_one_dimensional_array_is_refused_before_the_call(client):
    with pytest.raises(ValueError, match=r"expected an array of shape \[n, d\]"):
        client.featurize("rf", np.zeros(16, np.float32))


def test_transport_errors_are_exceptions_too(server, rows):
    # TLS towards the plaintext server: the handshake fails.
    with Client(server.target, tls=True, timeout=10) as tls_client:
        with pytest.raises(InvariantServeError) as error:
            tls_client.featurize("rf", rows(1))
    assert error.value.code == grpc.StatusCode.UNAVAILABLE


def test_token_and_any_array_like(server, rows):
    X = rows(2, seed=18)
    with Client(server.target, token="secret") as c:
        assert np.array_equal(c.featurize("rf", X.astype(np.float64).tolist()),
                              c.featurize("rf", X))


@pytest.fixture(scope="module")
def token_server(models_dir, tmp_path_factory):
    """A second server that requires the data token "py-secret" (--data_token_file)."""
    directory = tmp_path_factory.mktemp("token_server")
    token_file = directory / "data_token"
    token_file.write_text("py-secret\n")
    process = ServerProcess(models_dir, directory / "server.log",
                            extra_flags=[f"--data_token_file={token_file}"])
    yield process
    process.stop()


def test_data_token_is_sent_on_every_call(token_server, rows):
    X = rows(3, seed=20)
    with Client(token_server.target, token="py-secret", timeout=30) as c:
        assert c.featurize("rf", X).shape[0] == 3
        assert c.predict("rf", X).scores.shape[0] == 3
        assert c.metadata("rf").input_dim == 16
        assert {m.name for m in c.models()} >= {"rf"}
    for token in (None, "wrong"):
        with Client(token_server.target, token=token, timeout=30) as c:
            with pytest.raises(InvariantServeError) as error:
                c.featurize("rf", X)
            assert error.value.code == grpc.StatusCode.UNAUTHENTICATED
            assert "data token" in str(error.value)
            assert c.health() is True  # health is not covered by the token

    async def main():
        async with AsyncClient(token_server.target, token="py-secret", timeout=30) as c:
            return await c.featurize("rf", X)

    assert asyncio.run(main()).shape[0] == 3


def test_async_client(server, client, rows):
    X = rows(9, seed=19)

    async def main():
        async with AsyncClient(server.target, timeout=30) as c:
            features, prediction, metadata, models, healthy = await asyncio.gather(
                c.featurize("rf", X), c.predict("rf", X), c.metadata("rf"), c.models(),
                c.health())
            with pytest.raises(InvariantServeError) as error:
                await c.featurize("nope", X)
            many = await asyncio.gather(*[c.featurize("rf", X[i:i + 1]) for i in range(9)])
            return features, prediction, metadata, models, healthy, error.value, many

    features, prediction, metadata, models, healthy, error, many = asyncio.run(main())
    assert features.tobytes() == client.featurize("rf", X).tobytes()
    expected = client.predict("rf", X)
    assert prediction.scores.tobytes() == expected.scores.tobytes()
    assert prediction.classes.tolist() == expected.classes.tolist()
    assert prediction.columns == expected.columns
    assert metadata.version == 2
    assert {m.name for m in models} == {"rf", "rf_features", "rf_image", "rf_regression"}
    assert healthy is True
    assert error.code == grpc.StatusCode.NOT_FOUND
    assert np.vstack(many).tobytes() == features.tobytes()


def test_to_frame_names_the_columns(monkeypatch):
    recorded = {}

    class FakeFrame(dict):
        def __init__(self, data, columns):
            super().__init__()
            recorded["data"], recorded["columns"] = data, columns

    monkeypatch.setitem(sys.modules, "pandas", types.SimpleNamespace(DataFrame=FakeFrame))
    scores = np.array([[0.1, 0.9], [0.8, 0.2]], np.float32)
    prediction = Prediction(scores=scores, classes=np.array(["cat", "dog"], dtype=object),
                            indices=np.array([1, 0], np.int32), columns=("dog", "cat"))
    frame = prediction.to_frame()
    assert recorded["columns"] == ["dog", "cat"]
    assert recorded["data"] is scores
    assert frame["predicted_class"].tolist() == ["cat", "dog"]
    assert frame["predicted_index"].tolist() == [1, 0]


def test_to_frame_without_pandas_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    prediction = Prediction(scores=np.zeros((1, 2), np.float32), classes=None, indices=None)
    with pytest.raises(ImportError, match="needs pandas"):
        prediction.to_frame()


def test_package_exports():
    assert set(invariant_serve.__all__) >= {"Client", "AsyncClient", "InvariantServeError",
                                            "Prediction"}


@pytest.fixture(scope="module")
def explicit_server(models_dir, tmp_path_factory):
    """A server under --model_control=explicit serving "rf" only, with an admin token."""
    directory = tmp_path_factory.mktemp("explicit_server")
    token_file = directory / "admin_token"
    token_file.write_text("py-admin\n")
    process = ServerProcess(models_dir, directory / "server.log",
                            extra_flags=["--model_control=explicit", "--load_model=rf",
                                         f"--admin_token_file={token_file}"])
    yield process
    process.stop()


def test_repository_index_load_and_unload(explicit_server, rows):
    X = rows(2, seed=21)
    with Client(explicit_server.target, admin_token="py-admin", timeout=30) as c:
        index = c.repository_index()
        assert {(e.name, e.state) for e in index} >= {("rf", "READY")}
        assert all(e.state == "READY" for e in c.repository_index(ready=True))
        other = sorted({e.name for e in index if e.state != "READY"})
        assert other, "the test models hold more than rf"
        name = other[0]
        with pytest.raises(InvariantServeError) as error:
            c.metadata(name)
        assert error.value.code == grpc.StatusCode.NOT_FOUND
        c.load_model(name)
        assert c.metadata(name).name == name
        c.unload_model(name)
        with pytest.raises(InvariantServeError):
            c.metadata(name)
        with pytest.raises(InvariantServeError) as error:
            c.load_model("no-such-model")
        assert error.value.code == grpc.StatusCode.NOT_FOUND
        assert "model_name" in str(error.value)
        assert c.featurize("rf", X).shape[0] == 2  # rf served all along
    with Client(explicit_server.target, timeout=30) as c:
        with pytest.raises(InvariantServeError) as error:
            c.repository_index()
        assert error.value.code == grpc.StatusCode.UNAUTHENTICATED


def _rf_stats(response, version="2"):
    return [s for s in response.model_stats if (s.name, s.version) == ("rf", version)]


def test_model_statistics_count_the_calls_made(client, rows):
    before = client.model_statistics("rf")
    assert [s.version for s in before.model_stats] == ["1", "2"]  # every loaded version
    X = rows(5, seed=21)
    for _ in range(3):
        client.predict("rf", X)
    with pytest.raises(InvariantServeError) as error:  # reaches version 2, then fails
        client.predict("rf", rows(5, seed=21)[:, :15])
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
    after = client.model_statistics("rf", 2)
    (old,), (new,) = _rf_stats(before), _rf_stats(after)
    assert new.inference_count - old.inference_count == 15
    assert new.execution_count - old.execution_count == 3
    stats, old_stats = new.inference_stats, old.inference_stats
    assert stats.success.count - old_stats.success.count == 3
    assert stats.fail.count - old_stats.fail.count == 1
    assert stats.compute_infer.ns > old_stats.compute_infer.ns
    assert new.last_inference > 0
    assert sum(b.compute_infer.count for b in new.batch_stats) <= new.execution_count
    # Every model, and the same numbers by label or "latest".
    everything = client.model_statistics()
    assert {"rf", "rf_features", "rf_regression"} <= {s.name for s in everything.model_stats}
    assert _rf_stats(everything) == [new]
    assert _rf_stats(client.model_statistics("rf", "latest")) == [new]


def test_model_statistics_errors_name_the_field(client):
    with pytest.raises(InvariantServeError) as error:
        client.model_statistics("no_such_model")
    assert error.value.code == grpc.StatusCode.NOT_FOUND
    assert "name" in str(error.value)
    with pytest.raises(InvariantServeError) as error:
        client.model_statistics("", "1")
    assert error.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "version" in str(error.value)


def test_async_model_statistics_agrees(server):
    async def main():
        async with AsyncClient(server.target, timeout=30) as c:
            return await c.model_statistics("rf", 2)
    response = asyncio.run(main())
    assert [s.version for s in response.model_stats] == ["2"]
