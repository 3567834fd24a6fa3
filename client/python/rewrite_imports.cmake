# Makes a generated module import its siblings relatively: protoc writes
# "from gmmscore.v1 import scorer_pb2 as ...", this gives "from . import scorer_pb2 as ...", so the
# package works whatever name it is imported under. cmake -DFILE=x_pb2_grpc.py -P this-file.
file(READ "${FILE}" text)
string(REPLACE "\nfrom gmmscore.v1 import " "\nfrom . import " text "${text}")
file(WRITE "${FILE}" "${text}")
