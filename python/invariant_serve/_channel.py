"""The channel of invariant_serve's clients: its options, credentials and method stubs.

Shared by Client and AsyncClient (client.py), over a grpc or a grpc.aio channel.
"""

import grpc

from invariant_serve._proto.grpc.health.v1 import health_pb2
from invariant_serve._proto.inference import grpc_service_pb2 as oip
from invariant_serve._proto.invariant.v1 import feature_service_pb2 as fs

_FEATURE_SERVICE = "invariant.v1.FeatureService"
_INFERENCE_SERVICE = "inference.GRPCInferenceService"
DEFAULT_MAX_MESSAGE_BYTES = 64 << 20


def channel_options(max_message_bytes: int, options) -> list:
    merged = [("grpc.max_receive_message_length", max_message_bytes),
              ("grpc.max_send_message_length", max_message_bytes)]
    return merged + list(options or [])


def credentials(tls, root_certificates):
    if isinstance(tls, grpc.ChannelCredentials):
        return tls
    if tls:
        return grpc.ssl_channel_credentials(root_certificates=root_certificates)
    return None


class Methods:
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
