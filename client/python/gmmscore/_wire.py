"""What the sync and asyncio clients share: the stream config, input checks, request chunks,
response decoding (proto/wire_codec.h's little-endian float32/int32, binary16 and RELATIVE16) and
the few messages the health check needs."""

from __future__ import annotations

import json
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

import grpc
import numpy as np

from ._stubs import model_admin_pb2, scorer_pb2
from ._types import (AdaptUtterance, AlignResult, AudioSpec, GmmscoreError, ModelInfo, ModelVersion,
                     ScoredWindow, SparseScores)

StreamConfig = scorer_pb2.StreamConfig

ENCODINGS = {
    "float32": StreamConfig.FLOAT32,
    "float16": StreamConfig.FLOAT16,
    "beam-sparse": StreamConfig.BEAM_SPARSE,
    "relative16": StreamConfig.RELATIVE16,
}
_ENCODING_NAMES = {v: k for k, v in ENCODINGS.items()}
FUSIONS = {
    "max": StreamConfig.MAX,
    "log-linear": StreamConfig.LOG_LINEAR,
    "log-add": StreamConfig.LOG_ADD,
    "select": StreamConfig.SELECT,
}
RELATIVE16_STEP = np.float32(1.0 / 256.0)

# Idempotent reads are retried while the server is unavailable (as the C++ client does).
_SERVICE_CONFIG = json.dumps({
    "methodConfig": [{
        "name": [
            {"service": "gmmscore.v1.ModelAdmin", "method": "ListModels"},
            {"service": "gmmscore.v1.ModelAdmin", "method": "GetModel"},
            {"service": "grpc.health.v1.Health", "method": "Check"},
        ],
        "retryPolicy": {
            "maxAttempts": 4,
            "initialBackoff": "0.1s",
            "maxBackoff": "1s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"],
        },
    }]
})


def channel_options(extra: Sequence[Tuple[str, object]] = ()) -> List[Tuple[str, object]]:
    """Channel arguments: no limit on received messages (a window of W frames x all states can be
    large), the retry policy above; then the caller's own."""
    return [("grpc.max_receive_message_length", -1), ("grpc.enable_retries", 1),
            ("grpc.service_config", _SERVICE_CONFIG), *extra]


def open_channel(grpc_module: Any, target: Any,
                 credentials: Optional[grpc.ChannelCredentials],
                 options: Sequence[Tuple[str, object]]) -> Tuple[Any, bool]:
    """The channel of a Client of grpc_module (grpc or grpc.aio), and whether the client made it
    (and so closes it): target is HOST:PORT, or a channel of that module to use as it is."""
    if isinstance(target, grpc_module.Channel):
        return target, False
    if credentials is None:
        return grpc_module.insecure_channel(target, options=channel_options(options)), True
    return grpc_module.secure_channel(target, credentials, options=channel_options(options)), True


def bearer(token: Optional[str]) -> Optional[Tuple[Tuple[str, str], ...]]:
    """ModelAdmin mutations' metadata (server/rpc/model_admin_service.cc)."""
    return (("authorization", "Bearer " + token),) if token else None


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-")


# Client.stream's StreamConfig options and their defaults (StreamGroup.stream takes the same).
STREAM_DEFAULTS = dict(window=10, encoding="relative16", beam=None, max_states=0, fusion="max",
                       weights=None, select_window=0, max_latency_ms=0, state_subset=None,
                       dim=None, audio=None, stream_id="", keep_frames=0)


def stream_config(
    models: Union[str, Sequence[str]],
    *,
    window: int,
    encoding: str,
    beam: Optional[float],
    max_states: int,
    fusion: str,
    weights: Optional[Sequence[float]],
    select_window: int,
    max_latency_ms: int,
    state_subset: Optional[Sequence[int]],
    dim: Optional[int],
    audio: Optional[AudioSpec],
    stream_id: str,
    keep_frames: int = 0,
) -> StreamConfig:
    """The StreamConfig of Client.stream, checked (ValueError) before anything is sent."""
    names = [models] if isinstance(models, str) else list(models)
    if not names or not all(isinstance(m, str) and m for m in names):
        raise ValueError("stream: models must name at least one model")
    if _key(encoding) not in ENCODINGS:
        raise ValueError(f"stream: encoding {encoding!r} is not one of {', '.join(ENCODINGS)}")
    if _key(fusion) not in FUSIONS:
        raise ValueError(f"stream: fusion {fusion!r} is not one of {', '.join(FUSIONS)}")
    if window < 0 or max_states < 0 or select_window < 0 or max_latency_ms < 0:
        raise ValueError("stream: window, max_states, select_window and max_latency_ms must be >= 0")
    if ENCODINGS[_key(encoding)] == StreamConfig.BEAM_SPARSE:
        if beam is None or not beam > 0 or not np.isfinite(beam):
            raise ValueError("stream: encoding beam-sparse needs a beam > 0")
    if weights is not None and len(weights) != len(names):
        raise ValueError(f"stream: {len(weights)} weights for {len(names)} models")
    if dim is not None and dim < (0 if audio is not None else 1):
        raise ValueError(f"stream: dim {dim} must be >= 1")
    if keep_frames < 0 or (keep_frames > 0 and not stream_id):
        raise ValueError("stream: keep_frames must be >= 0, and needs a stream_id")
    config = StreamConfig(
        stream_id=stream_id,
        models=names,
        fusion=FUSIONS[_key(fusion)],
        weights=list(weights or []),
        select_window=select_window,
        dim=dim or 0,
        window_frames=window,
        max_latency_ms=max_latency_ms,
        encoding=ENCODINGS[_key(encoding)],
        beam=beam or 0.0,
        max_states=max_states,
        state_subset=[int(s) for s in state_subset or []],
        keep_frames=keep_frames,
    )
    if any(s < 0 for s in config.state_subset):
        raise ValueError("stream: state_subset ids must be >= 0")
    if audio is not None:
        if not audio.front_end or audio.sample_rate_hz < 1:
            raise ValueError("stream: AudioSpec needs a front end and a sample rate > 0")
        config.audio.front_end = audio.front_end
        config.audio.sample_rate_hz = audio.sample_rate_hz
    return config


def check_frames(frames: object, dim: Optional[int], what: str = "push_frames") -> np.ndarray:
    """float32 [frames, dim], finite; returned as little-endian, C-contiguous."""
    if not isinstance(frames, np.ndarray):
        raise ValueError(f"{what}: expected a numpy array, got {type(frames).__name__}")
    if frames.dtype.kind != "f" or frames.dtype.itemsize != 4:
        raise ValueError(f"{what}: frames must be float32, not {frames.dtype} "
                         "(convert with .astype(numpy.float32))")
    if frames.ndim != 2 or frames.shape[1] < 1:
        raise ValueError(f"{what}: frames must be [frames, dim], not of shape {frames.shape}")
    if dim is not None and frames.shape[1] != dim:
        raise ValueError(f"{what}: {frames.shape[1]}-dimensional frames on a {dim}-dimensional "
                         "stream")
    finite = np.isfinite(frames).all(axis=1)
    if not finite.all():
        raise ValueError(f"{what}: frame {int(np.argmin(finite))} of this array holds a NaN "
                         "or infinite value")
    return np.ascontiguousarray(frames, dtype="<f4")


def check_audio(samples: object) -> np.ndarray:
    """int16 [samples]; returned as little-endian, C-contiguous."""
    if not isinstance(samples, np.ndarray):
        raise ValueError(f"push_audio: expected a numpy array, got {type(samples).__name__}")
    if samples.dtype.kind != "i" or samples.dtype.itemsize != 2:
        raise ValueError(f"push_audio: samples must be int16, not {samples.dtype}")
    if samples.ndim != 1:
        raise ValueError(f"push_audio: samples must be one-dimensional (mono), not of shape "
                         f"{samples.shape}")
    return np.ascontiguousarray(samples, dtype="<i2")


def feature_requests(frames: np.ndarray, first_frame: int,
                     chunk_frames: int) -> Iterator[Tuple[scorer_pb2.ScoreRequest, int]]:
    """(request, frames in it) for checked frames, the first numbered first_frame."""
    for at in range(0, frames.shape[0], chunk_frames):
        chunk = frames[at:at + chunk_frames]
        request = scorer_pb2.ScoreRequest(features=scorer_pb2.FeatureChunk(
            first_frame=first_frame + at, data=chunk.tobytes()))
        yield request, chunk.shape[0]


def audio_requests(samples: np.ndarray, first_sample: int,
                   chunk_samples: int) -> Iterator[Tuple[scorer_pb2.ScoreRequest, int]]:
    for at in range(0, samples.shape[0], chunk_samples):
        chunk = samples[at:at + chunk_samples]
        request = scorer_pb2.ScoreRequest(audio=scorer_pb2.AudioChunk(
            first_sample=first_sample + at, samples=chunk.tobytes()))
        yield request, chunk.shape[0]


def audio_chunk_samples(config: StreamConfig, chunk_frames: int) -> int:
    """Samples per AudioChunk: chunk_frames frame shifts of 10 ms."""
    return max(1, chunk_frames * config.audio.sample_rate_hz // 100)


def config_request(config: StreamConfig) -> scorer_pb2.ScoreRequest:
    return scorer_pb2.ScoreRequest(config=config)


def end_request() -> scorer_pb2.ScoreRequest:
    return scorer_pb2.ScoreRequest(end=scorer_pb2.End())


_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}


def status_code(number: int) -> grpc.StatusCode:
    """A status code as the wire carries it (StreamStatus.code)."""
    return _STATUS_CODES.get(number, grpc.StatusCode.UNKNOWN)


def stream_ended(final: Optional[GmmscoreError]) -> GmmscoreError:
    """What sending on a finished stream raises."""
    return final or GmmscoreError(grpc.StatusCode.FAILED_PRECONDITION, "the stream has ended")


class WindowDecoder:
    """Decodes a stream's responses in order (client/scorer_client.cc DecodeResponse)."""

    def __init__(self, config: StreamConfig) -> None:
        self.subset = np.asarray(config.state_subset, dtype=np.int64)
        self.next_frame = 0

    def decode(self, r: scorer_pb2.ScoreResponse) -> ScoredWindow:
        n, cols = r.num_frames, r.num_states

        def bad(what: str) -> GmmscoreError:
            return GmmscoreError(grpc.StatusCode.DATA_LOSS,
                                 f"response for frames {r.first_frame}+{n} of stream "
                                 f"'{r.stream_id}': {what}")

        if n < 0 or cols < 0:
            raise bad("negative sizes")
        if r.first_frame != self.next_frame:
            raise bad(f"expected a window starting at frame {self.next_frame}")
        if self.subset.size and cols != self.subset.size:
            raise bad("columns do not match the state subset")
        if len(r.best_state) != n or len(r.best_score) != n:
            raise bad("best-state lists")
        best_state = np.array(r.best_state, dtype=np.int32)
        best_score = np.array(r.best_score, dtype=np.float32)
        width = int(self.subset.max()) + 1 if self.subset.size else cols
        sparse = None
        if r.encoding in (StreamConfig.FLOAT32, StreamConfig.FLOAT16, StreamConfig.RELATIVE16):
            wide = r.encoding == StreamConfig.FLOAT32
            if len(r.scores) != n * cols * (4 if wide else 2):
                raise bad("score bytes")
            if r.encoding == StreamConfig.FLOAT32:
                values = np.frombuffer(r.scores, dtype="<f4").astype(np.float32)
            elif r.encoding == StreamConfig.FLOAT16:
                values = np.frombuffer(r.scores, dtype="<f2").astype(np.float32)
            else:  # RELATIVE16: score = best - q / 256, in float32 as the C++ client computes it
                q = np.frombuffer(r.scores, dtype="<u2").astype(np.float32).reshape(n, cols)
                values = best_score[:, None] - q * RELATIVE16_STEP
            values = values.reshape(n, cols)
            if self.subset.size:
                scores = np.full((n, width), -np.inf, dtype=np.float32)
                scores[:, self.subset] = values
            else:
                scores = values
        elif r.encoding == StreamConfig.BEAM_SPARSE:
            if len(r.sparse_counts) != n:
                raise bad("sparse counts")
            counts = np.array(r.sparse_counts, dtype=np.uint32)
            total = int(counts.sum(dtype=np.int64))
            if len(r.scores) != 4 * total or len(r.sparse_states) != 4 * total:
                raise bad("sparse bytes")
            kept = np.frombuffer(r.scores, dtype="<f4").astype(np.float32)
            states = np.frombuffer(r.sparse_states, dtype="<i4").astype(np.int32)
            if total and (states.min() < 0 or states.max() >= width):
                raise bad("sparse state id out of range")
            scores = np.full((n, width), -np.inf, dtype=np.float32)
            scores[np.repeat(np.arange(n), counts), states] = kept
            sparse = SparseScores(states=states, scores=kept, counts=counts)
        else:
            raise bad(f"unknown encoding {r.encoding}")
        self.next_frame += n
        return ScoredWindow(
            stream_id=r.stream_id,
            first_frame=r.first_frame,
            scores=scores,
            best_state=best_state,
            best_score=best_score,
            models=tuple(ModelVersion(m.name, m.version) for m in r.models),
            encoding=_ENCODING_NAMES[r.encoding],
            sparse=sparse,
        )


def concatenate(windows: Sequence[ScoredWindow]) -> np.ndarray:
    """The scores of a stream's windows as one float32 [frames, width] array."""
    if not windows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.concatenate([w.scores for w in windows], axis=0)


# grpc.health.v1 (proto/grpc/health/v1/health.proto) is encoded here rather than generated: a
# generated health_pb2 would register grpc/health/v1/health.proto in protobuf's default pool,
# where it clashes with grpcio-health-checking's differently-optioned copy if both are imported.
HEALTH_CHECK_METHOD = "/grpc.health.v1.Health/Check"
_SERVING_STATUS = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def health_request(service: str) -> bytes:
    """HealthCheckRequest{service}: field 1, length-delimited."""
    data = service.encode()
    return b"\x0a" + _varint(len(data)) + data if data else b""


def health_status(response: bytes) -> str:
    """HealthCheckResponse's status (field 1, a varint) by name; other fields are skipped."""
    status, at = 0, 0

    def read_varint() -> int:
        nonlocal at
        value, shift = 0, 0
        while True:
            if at >= len(response):
                raise GmmscoreError(grpc.StatusCode.DATA_LOSS, "truncated health response")
            byte = response[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while at < len(response):
        key = read_varint()
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value = read_varint()
            if number == 1:
                status = value
        elif wire_type == 1:
            at += 8
        elif wire_type == 2:
            at += read_varint()
        elif wire_type == 5:
            at += 4
        else:
            raise GmmscoreError(grpc.StatusCode.DATA_LOSS, "malformed health response")
    return _SERVING_STATUS.get(status, "UNKNOWN")


def model_info(m: model_admin_pb2.ModelInfo) -> ModelInfo:
    return ModelInfo(
        name=m.name,
        version=m.version,
        status=model_admin_pb2.ModelInfo.Status.Name(m.status),
        num_states=m.num_states,
        num_gaussians=m.num_gaussians,
        dim=m.dim,
        path=m.path,
        format=m.format,
        active_streams=m.active_streams,
        bytes_per_device={d.device: d.bytes for d in m.bytes_per_device},
    )


def align_request(model: str, features: object, graph: bytes, *, utterance_id: str, beam: float,
                  retry_beam: float, transition_scale: float, self_loop_scale: float,
                  acoustic_scale: float) -> scorer_pb2.AlignRequest:
    if not model:
        raise ValueError("align: no model")
    if not isinstance(graph, (bytes, bytearray, memoryview)) or not len(graph):
        raise ValueError("align: graph must be the utterance's compiled graph, OpenFst binary bytes")
    frames = check_frames(features, None, "align")
    return scorer_pb2.AlignRequest(
        utterance_id=utterance_id, model=model, dim=frames.shape[1], features=frames.tobytes(),
        graph=bytes(graph), beam=beam, retry_beam=retry_beam, transition_scale=transition_scale,
        self_loop_scale=self_loop_scale, acoustic_scale=acoustic_scale)


def align_result(r: scorer_pb2.AlignResponse) -> AlignResult:
    return AlignResult(
        utterance_id=r.utterance_id,
        transition_ids=np.array(r.transition_ids, dtype=np.int32),
        log_likelihood=r.log_likelihood,
        score=r.score,
        retried=r.retried,
        model=ModelVersion(r.model.name, r.model.version),
    )


def adapt_request(base_model: str, name: str, utterances: Sequence[AdaptUtterance], *,
                  replace: bool, mean_tau: Optional[float], variance_tau: Optional[float],
                  weight_tau: Optional[float],
                  update_flags: Optional[str]) -> model_admin_pb2.AdaptModelRequest:
    """The AdaptModelRequest of Client.adapt_model, checked (ValueError) before it is sent."""
    if not utterances:
        raise ValueError("adapt_model: no utterances")
    request = model_admin_pb2.AdaptModelRequest(base_model=base_model, name=name, replace=replace)
    for i, u in enumerate(utterances):
        label = f"adapt_model: utterance {u.key or i}"
        if (u.frames is None) == (not u.from_stream):
            raise ValueError(f"{label}: give frames or from_stream")
        if (u.alignment is None) == (u.pdfs is None):
            raise ValueError(f"{label}: give an alignment or pdfs")
        out = request.utterances.add(key=u.key, from_stream=u.from_stream)
        if u.frames is not None:
            frames = np.asarray(u.frames)
            if frames.dtype != np.float32 or frames.ndim != 2:
                raise ValueError(f"{label}: frames must be float32 [frames, dim], not "
                                 f"{frames.dtype} {frames.shape}")
            out.features.extend(frames.ravel().tolist())
        if u.alignment is not None:
            out.alignment.extend(int(t) for t in u.alignment)
        else:
            out.pdf_alignment.extend(int(p) for p in u.pdfs)
    for field_name, value in (("mean_tau", mean_tau), ("variance_tau", variance_tau),
                              ("weight_tau", weight_tau), ("update_flags", update_flags)):
        if value is not None:
            setattr(request, field_name, value)
    return request

