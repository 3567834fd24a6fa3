"""The generated modules, imported in one place with a helpful error where they are missing."""

try:
    from .v1 import model_admin_pb2, model_admin_pb2_grpc, scorer_pb2, scorer_pb2_grpc
except ImportError as e:  # pragma: no cover - depends on the installation
    if e.name is None or not e.name.startswith(__package__ + ".v1"):
        raise
    raise ImportError(
        "gmmscore: the generated protobuf modules (gmmscore/v1/*_pb2.py) are missing; build the "
        "CMake target gmmscore_python and put <build>/client/python on PYTHONPATH (or generate "
        "them with protoc as client/python/README.md shows)"
    ) from e

__all__ = ["model_admin_pb2", "model_admin_pb2_grpc", "scorer_pb2", "scorer_pb2_grpc"]
