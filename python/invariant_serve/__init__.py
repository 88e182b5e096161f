"""invariant_serve: the Python client of invariant-server.

    from invariant_serve import Client
    client = Client("127.0.0.1:8500")
    features = client.featurize("digits", X)      # numpy float32 [n, feature_dim]
    prediction = client.predict("digits", X)      # .scores, .classes, .indices
    words = client.predict("words", clips=["yes.wav", samples])   # a model of sound

AsyncClient is the asyncio form. Errors are raised as InvariantServeError
with the gRPC code and the server's message. The generated protobuf/gRPC
stubs (invariant.v1, the Open Inference Protocol's inference package,
grpc.health.v1) are in invariant_serve._proto.
"""

from invariant_serve.client import (AsyncClient, Client, InvariantServeError, ModelMetadata,
                                    ModelSummary, ModelVersion, Prediction, RepositoryEntry)

__all__ = ["AsyncClient", "Client", "InvariantServeError", "ModelMetadata", "ModelSummary",
           "ModelVersion", "Prediction", "RepositoryEntry"]
__version__ = "0.1.0"
