"""Client and AsyncClient: invariant.v1 over gRPC with numpy in and out."""

import dataclasses
import os
from typing import Dict, List, Optional, Sequence, Tuple, Union

import grpc
import numpy as np
from google.protobuf import json_format

from invariant_serve import _wire
from invariant_serve._proto.grpc.health.v1 import health_pb2
from invariant_serve._proto.inference import grpc_service_pb2 as oip
from invariant_serve._proto.invariant.v1 import feature_service_pb2 as fs
from invariant_serve._proto.invariant.v1 import model_types_pb2

_FEATURE_SERVICE = "invariant.v1.FeatureService"
_INFERENCE_SERVICE = "inference.GRPCInferenceService"
_FEATURES_FIELD = fs.FeaturizeResponse.DESCRIPTOR.fields_by_name["features"].number
_SCORES_FIELD = fs.PredictResponse.DESCRIPTOR.fields_by_name["scores"].number
_DEFAULT_MAX_MESSAGE_BYTES = 64 << 20

Version = Union[int, str, None]


class InvariantServeError(Exception):
    """A call failed; `code` is the grpc.StatusCode and `message` the server's explanation.

    The server's messages name the field, what was expected and what came, e.g.
    "inputs.raw_values: expected a multiple of input_dim=16 floats, received 10".
    """

    def __init__(self, code: grpc.StatusCode, message: str, method: str = ""):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.method = method


@dataclasses.dataclass
class Prediction:
    """The result of predict(): one row per input row.

    scores: float32 [n, C] (one-vs-all scores, or regression values).
    classes: the argmax class name per row (object array [n]); None for regression.
    indices: the argmax class index per row (int32 [n]); None for regression.
    columns: the class (or target) names, naming the score columns.
    speech_found, speech_seconds: for a model of sound with voice activity, per clip: whether speech was
    found (bool [n]; False only for a model with voice activity, when the clip holds
    none: its scores are NaN, its class "" and its index -1, never a class) and where
    the content the front end kept lies (float64 [n, 2]: start and end in seconds of
    the clip as sent); None for rows.
    """

    scores: np.ndarray
    classes: Optional[np.ndarray]
    indices: Optional[np.ndarray]
    model_name: str = ""
    model_version: int = 0
    columns: Tuple[str, ...] = ()
    speech_found: Optional[np.ndarray] = None
    speech_seconds: Optional[np.ndarray] = None

    def to_frame(self):
        """A pandas DataFrame: the score columns named by class or target, then for a
        classifier `predicted_class` and `predicted_index`. Needs pandas."""
        try:
            import pandas as pd
        except ImportError as error:
            raise ImportError("Prediction.to_frame() needs pandas (pip install pandas); "
                              "the arrays are in .scores, .classes and .indices") from error
        names = list(self.columns) or [f"score_{i}" for i in range(self.scores.shape[1])]
        frame = pd.DataFrame(self.scores, columns=names)
        if self.classes is not None:
            frame["predicted_class"] = self.classes
            frame["predicted_index"] = self.indices
        return frame


@dataclasses.dataclass
class RepositoryEntry:
    """One model version of the server's repository (repository_index()): state is
    "READY", "LOADING" or "UNAVAILABLE" with the reason; version None for a model
    with no version."""
    name: str
    version: Optional[int]
    state: str
    reason: str


@dataclasses.dataclass
class ModelVersion:
    version: int
    encoder_kind: str
    has_head: bool


@dataclasses.dataclass
class ModelSummary:
    """One served model: its ready versions (newest first) and version labels."""

    name: str
    versions: List[ModelVersion]
    labels: Dict[str, int]


@dataclasses.dataclass
class ModelMetadata:
    """What a model version takes and gives (GetModelMetadata); `raw` is the message."""

    name: str
    version: int
    input_shape: Tuple[int, ...]
    input_dim: int
    feature_dim: int
    output_dim: int
    encoder_kind: str
    task: Optional[str]
    class_names: List[str]
    target_names: List[str]
    metrics: Dict[str, float]
    encoder: dict
    certificate: Optional[dict]
    model_bytes: int
    raw: fs.GetModelMetadataResponse
    # The training data's column names, in order ([] when unknown), and how its
    # values were scaled into floats: "none", "unit_byte" (uint8 / 255) or None
    # when the model does not record it.
    input_columns: List[str] = dataclasses.field(default_factory=list)
    input_scaling: Optional[str] = None
    # For a model of sound, its audio front end (every AudioFrontEndInfo field:
    # sample_rate, clip_seconds, clip_policy, max_clip_seconds, frequency_bins,
    # frames, ...); send it clips (`clips=`), not rows. None for a model of rows.
    audio: Optional[dict] = None


# --- requests and responses, shared by Client and AsyncClient ---------------


def _model_spec(model: str, version: Version) -> fs.ModelSpec:
    spec = fs.ModelSpec(name=model)
    if version is None or version == "":
        return spec
    if isinstance(version, (int, np.integer)) or (isinstance(version, str) and version.isdigit()):
        spec.version = int(version)
    else:
        spec.version_label = str(version)
    return spec


def _rows(X) -> Tuple[int, bytes]:
    """(n, little-endian float32 bytes) of an [n, ...] array-like."""
    array = np.asarray(X)
    if array.ndim < 2:
        raise ValueError(f"X: expected an array of shape [n, d] (one row per sample), "
                         f"received shape {array.shape}")
    rows = array.shape[0]
    return rows, np.ascontiguousarray(array, dtype="<f4").tobytes()


_WAV_MAGIC = (b"RIFF", b"RIFX", b"RF64")


def _is_wav(data: bytes) -> bool:
    return len(data) >= 12 and bytes(data[:4]) in _WAV_MAGIC and bytes(data[8:12]) == b"WAVE"


def _samples_clip(samples: np.ndarray, sample_rate: int, what: str) -> fs.AudioClip:
    """One array of mono samples as an AudioClip: int16 as int16_le, floats as float32_le."""
    if samples.ndim != 1:
        hint = (" (several channels: average them, e.g. x.mean(axis=1))"
                if samples.ndim == 2 else "")
        raise ValueError(f"{what}: expected a 1-D array of mono samples, received shape "
                         f"{samples.shape}{hint}")
    if samples.size == 0:
        raise ValueError(f"{what}: no samples")
    kind, size = samples.dtype.kind, samples.dtype.itemsize
    if kind == "i" and size == 2:
        return fs.AudioClip(int16_le=samples.astype("<i2", copy=False).tobytes(),
                            sample_rate=sample_rate)
    if kind == "f" and size in (4, 8):
        floats = samples.astype("<f4", copy=False)
        if not np.isfinite(floats).all():
            raise ValueError(f"{what}: samples must be finite (NaN or infinity at index "
                             f"{int(np.flatnonzero(~np.isfinite(floats))[0])})")
        return fs.AudioClip(float32_le=floats.tobytes(), sample_rate=sample_rate)
    raise TypeError(f"{what}: expected float32, float64 (in [-1, 1]) or int16 samples, "
                    f"received dtype {samples.dtype}")


def _wav_clip(data, what: str) -> fs.AudioClip:
    data = bytes(data)
    if not _is_wav(data):
        raise ValueError(f"{what}: not a WAV file (no RIFF/RIFX/RF64 header with WAVE)")
    return fs.AudioClip(wav=data)


def _one_clip(clip, sample_rate: int, what: str) -> fs.AudioClip:
    if isinstance(clip, fs.AudioClip):
        return clip
    if isinstance(clip, (bytes, bytearray, memoryview)):
        return _wav_clip(clip, what)
    if isinstance(clip, (str, os.PathLike)):
        path = os.fspath(clip)
        with open(path, "rb") as f:
            return _wav_clip(f.read(), f"{what} ({path})")
    if isinstance(clip, np.ndarray):
        return _samples_clip(clip, sample_rate, what)
    raise TypeError(f"{what}: expected a 1-D numpy array of samples, WAV bytes or a path to a "
                    f"WAV file, received {type(clip).__name__}")


def _clips(clips, sample_rate) -> List[fs.AudioClip]:
    """The AudioClips of `clips`: one clip (array, WAV bytes, path) or a sequence of them; a
    2-D array is one clip per row."""
    if sample_rate is None:
        rate = 0  # the server uses the model's rate
    elif isinstance(sample_rate, (int, np.integer)) and not isinstance(sample_rate, bool) \
            and sample_rate > 0:
        rate = int(sample_rate)
    else:
        raise ValueError(f"sample_rate: expected a positive integer (Hz) or None for the "
                         f"model's rate, received {sample_rate!r}")
    if isinstance(clips, np.ndarray) and clips.ndim == 2:
        items = list(clips)
    elif isinstance(clips, (list, tuple)):
        items = list(clips)
    else:
        return [_one_clip(clips, rate, "clips")]
    if not items:
        raise ValueError("clips: expected at least one clip, received none")
    return [_one_clip(c, rate, f"clips[{i}]") for i, c in enumerate(items)]


def _inputs(X, clips, sample_rate) -> fs.InputBatch:
    """Rows (X) or, for a model of sound, clips: exactly one of them."""
    if (X is None) == (clips is None):
        raise ValueError("give either X (rows) or clips= (a model of sound), not "
                         + ("both" if X is not None else "neither"))
    if clips is not None:
        batch = _clips(clips, sample_rate)
        return fs.InputBatch(num_rows=len(batch), clips=batch)
    if sample_rate is not None:
        raise ValueError("sample_rate: applies to clips=, not to rows X")
    rows, raw = _rows(X)
    return fs.InputBatch(num_rows=rows, raw_values=raw)


def _featurize_request(model: str, X, version: Version, clips=None,
                       sample_rate=None) -> fs.FeaturizeRequest:
    return fs.FeaturizeRequest(model=_model_spec(model, version),
                               inputs=_inputs(X, clips, sample_rate))


def _predict_request(model: str, X, version: Version, clips=None,
                     sample_rate=None) -> fs.PredictRequest:
    return fs.PredictRequest(model=_model_spec(model, version),
                             inputs=_inputs(X, clips, sample_rate))


def _float_matrix(data: bytes, field: int, message_type):
    """(float32 [num_rows, width] array of `field`, the rest of the message parsed)."""
    values, rest = _wire.split_packed_floats(data, field)
    message = message_type.FromString(rest)
    late = message.features if field == _FEATURES_FIELD else message.scores
    if len(late) > 0:
        values = np.concatenate([values, np.asarray(late, dtype=np.float32)])
    width = message.feature_dim if field == _FEATURES_FIELD else message.output_dim
    return values.reshape(message.num_rows, width).copy(), message


def _features(data: bytes) -> np.ndarray:
    matrix, _ = _float_matrix(data, _FEATURES_FIELD, fs.FeaturizeResponse)
    return matrix


def _prediction(data: bytes, columns: Sequence[str]) -> Prediction:
    scores, message = _float_matrix(data, _SCORES_FIELD, fs.PredictResponse)
    classifier = message.task == model_types_pb2.TASK_CLASSIFICATION
    classes = np.array(message.predicted_classes, dtype=object) if classifier else None
    indices = np.array(message.predicted_indices, dtype=np.int32) if classifier else None
    found = seconds = None
    if len(message.speech) > 0:
        found = np.array([clip.found for clip in message.speech], dtype=bool)
        seconds = np.array([[clip.start_seconds, clip.end_seconds] for clip in message.speech],
                           dtype=np.float64)
    return Prediction(scores=scores, classes=classes, indices=indices,
                      model_name=message.model_name, model_version=message.model_version,
                      columns=tuple(columns), speech_found=found, speech_seconds=seconds)


def _metadata(message: fs.GetModelMetadataResponse) -> ModelMetadata:
    head = message.head
    task = None
    if message.output_dim > 0:
        task = {model_types_pb2.TASK_CLASSIFICATION: "classification",
                model_types_pb2.TASK_REGRESSION: "regression"}.get(head.task)
    return ModelMetadata(
        name=message.model_name, version=message.model_version,
        input_shape=tuple(message.input_shape), input_dim=message.input_dim,
        feature_dim=message.feature_dim, output_dim=message.output_dim,
        encoder_kind=message.encoder_kind, task=task, class_names=list(head.class_names),
        target_names=list(head.target_names), metrics=dict(message.metrics),
        encoder=json_format.MessageToDict(message.encoder, preserving_proto_field_name=True),
        certificate=(json_format.MessageToDict(message.certificate,
                                               preserving_proto_field_name=True)
                     if message.HasField("certificate") else None),
        model_bytes=message.model_bytes, raw=message,
        input_columns=list(message.input_columns),
        input_scaling=_INPUT_SCALING.get(message.input_scaling),
        audio=({f.name: getattr(message.audio, f.name)
                for f in message.audio.DESCRIPTOR.fields}
               if message.HasField("audio") else None))


_INPUT_SCALING = {model_types_pb2.INPUT_SCALING_NONE: "none",
                  model_types_pb2.INPUT_SCALING_UNIT_BYTE: "unit_byte"}


def _column_names(metadata: ModelMetadata) -> Tuple[str, ...]:
    return tuple(metadata.class_names or metadata.target_names)


def _summaries(message: fs.ListModelsResponse) -> List[ModelSummary]:
    return [
        ModelSummary(name=m.name,
                     versions=[ModelVersion(v.version, v.encoder_kind, v.has_head)
                               for v in m.versions],
                     labels=dict(m.labels)) for m in message.models
    ]


def _channel_options(max_message_bytes: int, options) -> list:
    merged = [("grpc.max_receive_message_length", max_message_bytes),
              ("grpc.max_send_message_length", max_message_bytes)]
    return merged + list(options or [])


def _credentials(tls, root_certificates):
    if isinstance(tls, grpc.ChannelCredentials):
        return tls
    if tls:
        return grpc.ssl_channel_credentials(root_certificates=root_certificates)
    return None


class _Methods:
    """The unary methods of a channel; Featurize and Predict answer raw bytes."""

    def __init__(self, channel):
        def method(name, request_type, response_deserializer):
            return channel.unary_unary(name, request_serializer=request_type.SerializeToString,
                                       response_deserializer=response_deserializer)

        prefix = f"/{_FEATURE_SERVICE}/"
        self.featurize = method(prefix + "Featurize", fs.FeaturizeRequest, bytes)
        self.predict = method(prefix + "Predict", fs.PredictRequest, bytes)
        self.list_models = method(prefix + "ListModels", fs.ListModelsRequest,
                                  fs.ListModelsResponse.FromString)
        self.metadata = method(prefix + "GetModelMetadata", fs.GetModelMetadataRequest,
                               fs.GetModelMetadataResponse.FromString)
        self.health = method("/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest,
                             health_pb2.HealthCheckResponse.FromString)
        prefix = f"/{_INFERENCE_SERVICE}/"
        self.repository_index = method(prefix + "RepositoryIndex", oip.RepositoryIndexRequest,
                                       oip.RepositoryIndexResponse.FromString)
        self.load_model = method(prefix + "RepositoryModelLoad", oip.RepositoryModelLoadRequest,
                                 oip.RepositoryModelLoadResponse.FromString)
        self.unload_model = method(prefix + "RepositoryModelUnload",
                                   oip.RepositoryModelUnloadRequest,
                                   oip.RepositoryModelUnloadResponse.FromString)
        self.model_statistics = method(prefix + "ModelStatistics",
                                       oip.ModelStatisticsRequest,
                                       oip.ModelStatisticsResponse.FromString)


def _statistics_request(name: str, version) -> "oip.ModelStatisticsRequest":
    return oip.ModelStatisticsRequest(name=name, version="" if version is None else str(version))


def _error(error: grpc.RpcError, method: str) -> InvariantServeError:
    code = error.code() if callable(getattr(error, "code", None)) else grpc.StatusCode.UNKNOWN
    details = error.details() if callable(getattr(error, "details", None)) else str(error)
    return InvariantServeError(code, details or "", method)


class Client:
    """A blocking client of invariant-server (invariant.v1 FeatureService).

        client = Client("127.0.0.1:8500")
        features = client.featurize("digits", X)   # float32 [n, feature_dim]
        prediction = client.predict("digits", X)   # .scores, .classes, .indices
        words = client.predict("words", clips=["yes.wav", samples], sample_rate=16000)

    target: "host:port" or any gRPC target. tls: False, True (system roots or
    `root_certificates`), or grpc.ChannelCredentials. token: sent as
    "authorization: Bearer <token>" on every call (the server's
    --data_token_file; health checks need none). admin_token: sent instead on the
    repository calls (repository_index, load_model, unload_model; the server's
    --admin_token_file); default `token`. timeout: seconds per call (None = none).
    `version` arguments take a version number, a label ("stable") or None for
    the newest ready version. Failed calls raise InvariantServeError. One
    Client may be shared by threads; close() (or `with`) releases the channel.
    """

    def __init__(self, target: str, tls=False, token: Optional[str] = None,
                 timeout: Optional[float] = 10.0, root_certificates: Optional[bytes] = None,
                 max_message_bytes: int = _DEFAULT_MAX_MESSAGE_BYTES, options=None,
                 admin_token: Optional[str] = None):
        channel_options = _channel_options(max_message_bytes, options)
        credentials = _credentials(tls, root_certificates)
        self._channel = (grpc.secure_channel(target, credentials, channel_options)
                         if credentials is not None else
                         grpc.insecure_channel(target, channel_options))
        self._methods = _Methods(self._channel)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else None
        self._admin_metadata = ((("authorization", f"Bearer {admin_token}"),)
                                if admin_token else self._metadata)
        self._timeout = timeout
        self._columns: Dict[Tuple[str, int], Tuple[str, ...]] = {}

    def _call(self, method, name: str, request, admin: bool = False):
        try:
            return method(request, timeout=self._timeout,
                          metadata=self._admin_metadata if admin else self._metadata)
        except grpc.RpcError as error:
            raise _error(error, name) from None

    def repository_index(self, ready: bool = False) -> List[RepositoryEntry]:
        """Every model version of the server's models directory with its state (the Open
        Inference Protocol's repository extension; sends `admin_token`)."""
        response = self._call(self._methods.repository_index, "RepositoryIndex",
                              oip.RepositoryIndexRequest(ready=ready), admin=True)
        return [RepositoryEntry(m.name, int(m.version) if m.version else None, m.state,
                                m.reason) for m in response.models]

    def load_model(self, model: str) -> None:
        """Loads (or reloads) `model` (the server runs --model_control=explicit; sends
        `admin_token`). A bundle the server refuses raises with the reason, while the
        version already served keeps serving."""
        self._call(self._methods.load_model, "RepositoryModelLoad",
                   oip.RepositoryModelLoadRequest(model_name=model), admin=True)

    def unload_model(self, model: str) -> None:
        """Stops serving `model`; calls in flight on it finish (sends `admin_token`)."""
        self._call(self._methods.unload_model, "RepositoryModelUnload",
                   oip.RepositoryModelUnloadRequest(model_name=model), admin=True)

    def featurize(self, model: str, X=None, version: Version = None, *, clips=None,
                  sample_rate: Optional[int] = None) -> np.ndarray:
        """The features of the rows of X ([n, d] array-like) as float32 [n, feature_dim].

        A model of sound (metadata().audio set) takes `clips` instead of X: one clip or a
        list of clips of any lengths, each a 1-D numpy array of mono samples (float32 or
        float64 in [-1, 1], sent as float32_le; int16, sent as int16_le and scaled by the
        server as x / 32768 like a 16-bit WAV), WAV bytes, or a path to a WAV file (sent
        as is; the server decodes it). A 2-D array is one clip per row. `sample_rate`
        (Hz) applies to the arrays; None means the model's rate. One output row per clip;
        the row of a clip in which voice activity found no speech is NaN (predict() says
        which clips: Prediction.speech_found).
        """
        request = _featurize_request(model, X, version, clips, sample_rate)
        return _features(self._call(self._methods.featurize, "Featurize", request))

    def predict(self, model: str, X=None, version: Version = None, *, clips=None,
                sample_rate: Optional[int] = None) -> Prediction:
        """Scores (and for a classifier the predicted classes) of the rows of X, or of the
        `clips` of a model of sound (as in featurize). The first call per model version
        also fetches its metadata once, to name the columns."""
        data = self._call(self._methods.predict, "Predict",
                          _predict_request(model, X, version, clips, sample_rate))
        prediction = _prediction(data, ())
        key = (prediction.model_name, prediction.model_version)
        if key not in self._columns:
            self._columns[key] = _column_names(self.metadata(*key))
        prediction.columns = self._columns[key]
        return prediction

    def metadata(self, model: str, version: Version = None) -> ModelMetadata:
        request = fs.GetModelMetadataRequest(model=_model_spec(model, version))
        return _metadata(self._call(self._methods.metadata, "GetModelMetadata", request))

    def models(self) -> List[ModelSummary]:
        return _summaries(self._call(self._methods.list_models, "ListModels",
                                     fs.ListModelsRequest()))

    def health(self, service: str = "") -> bool:
        """True when grpc.health.v1 reports SERVING for `service`: "" = the server is
        live, "invariant.v1.FeatureService" = every model has a ready version."""
        response = self._call(self._methods.health, "Check",
                              health_pb2.HealthCheckRequest(service=service))
        return response.status == health_pb2.HealthCheckResponse.SERVING

    def model_statistics(self, name: str = "",
                         version: Version = "") -> "oip.ModelStatisticsResponse":
        """The Open Inference Protocol's statistics (Triton's ModelStatistics) as the
        inference.ModelStatisticsResponse message: `model_stats`, one entry per loaded
        version of every model (name ""), of `name` (version "" or None), or of `name` at
        `version` (a number, "latest" or a label). Counts and cumulative nanoseconds of
        requests (success, fail), queue, compute_input, compute_infer and compute_output,
        inference_count (rows), execution_count (batches), batch_stats per batch size
        (docs/operations.md "Per-model statistics")."""
        return self._call(self._methods.model_statistics, "ModelStatistics",
                          _statistics_request(name, version))

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


class AsyncClient:
    """The asyncio form of Client (grpc.aio); the same arguments and methods, awaited.

        async with AsyncClient("127.0.0.1:8500") as client:
            features = await client.featurize("digits", X)
    """

    def __init__(self, target: str, tls=False, token: Optional[str] = None,
                 timeout: Optional[float] = 10.0, root_certificates: Optional[bytes] = None,
                 max_message_bytes: int = _DEFAULT_MAX_MESSAGE_BYTES, options=None,
                 admin_token: Optional[str] = None):
        channel_options = _channel_options(max_message_bytes, options)
        credentials = _credentials(tls, root_certificates)
        self._channel = (grpc.aio.secure_channel(target, credentials, channel_options)
                         if credentials is not None else
                         grpc.aio.insecure_channel(target, channel_options))
        self._methods = _Methods(self._channel)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else None
        self._timeout = timeout
        self._columns: Dict[Tuple[str, int], Tuple[str, ...]] = {}

    async def _call(self, method, name: str, request):
        try:
            return await method(request, timeout=self._timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            raise _error(error, name) from None

    async def featurize(self, model: str, X=None, version: Version = None, *, clips=None,
                        sample_rate: Optional[int] = None) -> np.ndarray:
        request = _featurize_request(model, X, version, clips, sample_rate)
        return _features(await self._call(self._methods.featurize, "Featurize", request))

    async def predict(self, model: str, X=None, version: Version = None, *, clips=None,
                      sample_rate: Optional[int] = None) -> Prediction:
        data = await self._call(self._methods.predict, "Predict",
                                _predict_request(model, X, version, clips, sample_rate))
        prediction = _prediction(data, ())
        key = (prediction.model_name, prediction.model_version)
        if key not in self._columns:
            self._columns[key] = _column_names(await self.metadata(*key))
        prediction.columns = self._columns[key]
        return prediction

    async def metadata(self, model: str, version: Version = None) -> ModelMetadata:
        request = fs.GetModelMetadataRequest(model=_model_spec(model, version))
        return _metadata(await self._call(self._methods.metadata, "GetModelMetadata", request))

    async def models(self) -> List[ModelSummary]:
        return _summaries(await self._call(self._methods.list_models, "ListModels",
                                           fs.ListModelsRequest()))

    async def health(self, service: str = "") -> bool:
        response = await self._call(self._methods.health, "Check",
                                    health_pb2.HealthCheckRequest(service=service))
        return response.status == health_pb2.HealthCheckResponse.SERVING

    async def model_statistics(self, name: str = "",
                               version: Version = "") -> "oip.ModelStatisticsResponse":
        return await self._call(self._methods.model_statistics, "ModelStatistics",
                                _statistics_request(name, version))

    async def close(self):
        await self._channel.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info):
        await self.close()
