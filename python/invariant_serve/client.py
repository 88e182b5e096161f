"""Client and AsyncClient: invariant.v1 over gRPC with numpy in and out.

Both are built by one base, _ClientBase (the channel, credentials, options, call
metadata and method stubs); the request messages are _requests.py's, the channel's
options and stubs _channel.py's; the results' types and their parsing are here.
"""

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

import grpc
import grpc.aio
import numpy as np
from google.protobuf import json_format

from invariant_serve import _channel, _requests, _wire
from invariant_serve._proto.grpc.health.v1 import health_pb2
from invariant_serve._proto.inference import grpc_service_pb2 as oip
from invariant_serve._proto.invariant.v1 import feature_service_pb2 as fs
from invariant_serve._proto.invariant.v1 import model_types_pb2
from invariant_serve._requests import Version

_FEATURES_FIELD = fs.FeaturizeResponse.DESCRIPTOR.fields_by_name["features"].number
_SCORES_FIELD = fs.PredictResponse.DESCRIPTOR.fields_by_name["scores"].number


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
    # For a model of image files, its image front end (every ImageFrontEndInfo
    # field: height, width, channels, fit, filter, max_pixels, ...); send it
    # encoded JPEG or PNG files (`images=`), not rows. None otherwise.
    image: Optional[dict] = None


# --- responses, shared by Client and AsyncClient (requests: _requests.py) ---


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
               if message.HasField("audio") else None),
        image=({f.name: (list(getattr(message.image, f.name))
                         if f.label == f.LABEL_REPEATED else getattr(message.image, f.name))
                for f in message.image.DESCRIPTOR.fields}
               if message.HasField("image") else None))


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


def _error(error: grpc.RpcError, method: str) -> InvariantServeError:
    code = error.code() if callable(getattr(error, "code", None)) else grpc.StatusCode.UNKNOWN
    details = error.details() if callable(getattr(error, "details", None)) else str(error)
    return InvariantServeError(code, details or "", method)


class _ClientBase:
    """What Client and AsyncClient share: their construction (the channel to `target`
    with its credentials and options, the call metadata of `token` and `admin_token`,
    the method stubs, the timeout) and the column names of the versions they have seen.
    A subclass names the module that opens its channel, `_grpc`: grpc or grpc.aio."""

    _grpc = None

    def __init__(self, target: str, tls=False, token: Optional[str] = None,
                 timeout: Optional[float] = 10.0, root_certificates: Optional[bytes] = None,
                 max_message_bytes: int = _channel.DEFAULT_MAX_MESSAGE_BYTES, options=None,
                 admin_token: Optional[str] = None):
        channel_options = _channel.channel_options(max_message_bytes, options)
        credentials = _channel.credentials(tls, root_certificates)
        self._channel = (self._grpc.secure_channel(target, credentials, channel_options)
                         if credentials is not None else
                         self._grpc.insecure_channel(target, channel_options))
        self._methods = _channel.Methods(self._channel)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else None
        self._admin_metadata = ((("authorization", f"Bearer {admin_token}"),)
                                if admin_token else self._metadata)
        self._timeout = timeout
        self._columns: Dict[Tuple[str, int], Tuple[str, ...]] = {}

    def _call_options(self, admin: bool) -> dict:
        """The timeout and metadata of a call: `admin_token`'s on the repository calls."""
        return {"timeout": self._timeout,
                "metadata": self._admin_metadata if admin else self._metadata}


class Client(_ClientBase):
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

    _grpc = grpc

    def _call(self, method, name: str, request, admin: bool = False):
        try:
            return method(request, **self._call_options(admin))
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
                  sample_rate: Optional[int] = None, images=None) -> np.ndarray:
        """The features of the rows of X ([n, d] array-like) as float32 [n, feature_dim].

        A model of sound (metadata().audio set) takes `clips` instead of X: one clip or a
        list of clips of any lengths, each a 1-D numpy array of mono samples (float32 or
        float64 in [-1, 1], sent as float32_le; int16, sent as int16_le and scaled by the
        server as x / 32768 like a 16-bit WAV), WAV bytes, or a path to a WAV file (sent
        as is; the server decodes it). A 2-D array is one clip per row. `sample_rate`
        (Hz) applies to the arrays; None means the model's rate. One output row per clip;
        the row of a clip in which voice activity found no speech is NaN (predict() says
        which clips: Prediction.speech_found).

        A model of image files (metadata().image set) takes `images` instead: one image or
        a list of them, each the bytes of a JPEG or PNG file or a path to one, sent as they
        are (the server decodes, orients, fits and scales them as the trainer did). One
        output row per image.
        """
        request = _requests.featurize_request(model, X, version, clips, sample_rate, images)
        return _features(self._call(self._methods.featurize, "Featurize", request))

    def predict(self, model: str, X=None, version: Version = None, *, clips=None,
                sample_rate: Optional[int] = None, images=None) -> Prediction:
        """Scores (and for a classifier the predicted classes) of the rows of X, of the
        `clips` of a model of sound or of the `images` of a model of image files (as in
        featurize). The first call per model version also fetches its metadata once, to
        name the columns."""
        data = self._call(self._methods.predict, "Predict",
                          _requests.predict_request(model, X, version, clips, sample_rate,
                                                    images))
        prediction = _prediction(data, ())
        key = (prediction.model_name, prediction.model_version)
        if key not in self._columns:
            self._columns[key] = _column_names(self.metadata(*key))
        prediction.columns = self._columns[key]
        return prediction

    def metadata(self, model: str, version: Version = None) -> ModelMetadata:
        request = fs.GetModelMetadataRequest(model=_requests.model_spec(model, version))
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
                          _requests.statistics_request(name, version))

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


class AsyncClient(_ClientBase):
    """The asyncio form of Client (grpc.aio); the same arguments and methods, awaited.

        async with AsyncClient("127.0.0.1:8500") as client:
            features = await client.featurize("digits", X)
    """

    _grpc = grpc.aio

    async def _call(self, method, name: str, request):
        try:
            return await method(request, **self._call_options(admin=False))
        except grpc.RpcError as error:
            raise _error(error, name) from None

    async def featurize(self, model: str, X=None, version: Version = None, *, clips=None,
                        sample_rate: Optional[int] = None, images=None) -> np.ndarray:
        request = _requests.featurize_request(model, X, version, clips, sample_rate, images)
        return _features(await self._call(self._methods.featurize, "Featurize", request))

    async def predict(self, model: str, X=None, version: Version = None, *, clips=None,
                      sample_rate: Optional[int] = None, images=None) -> Prediction:
        data = await self._call(self._methods.predict, "Predict",
                                _requests.predict_request(model, X, version, clips, sample_rate,
                                                          images))
        prediction = _prediction(data, ())
        key = (prediction.model_name, prediction.model_version)
        if key not in self._columns:
            self._columns[key] = _column_names(await self.metadata(*key))
        prediction.columns = self._columns[key]
        return prediction

    async def metadata(self, model: str, version: Version = None) -> ModelMetadata:
        request = fs.GetModelMetadataRequest(model=_requests.model_spec(model, version))
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
                                _requests.statistics_request(name, version))

    async def close(self):
        await self._channel.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info):
        await self.close()
