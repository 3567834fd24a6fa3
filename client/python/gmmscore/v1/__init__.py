"""Generated protobuf and gRPC modules of proto/gmmscore/v1 (scorer_pb2, scorer_pb2_grpc,
model_admin_pb2, model_admin_pb2_grpc, with .pyi stubs).

They are not in the source tree: the CMake target ``gmmscore_python`` runs protoc and
grpc_python_plugin into ``<build>/client/python/gmmscore/v1`` (see client/python/README.md).
"""
