"""The synchronous client: Score streams, Align, the ModelAdmin calls and the health check."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar, Union

import grpc
import numpy as np

from . import _wire
from ._stubs import model_admin_pb2, model_admin_pb2_grpc, scorer_pb2_grpc
from ._types import AdaptUtterance, AlignResult, AudioSpec, GmmscoreError, ModelInfo
from .group import StreamGroup
from .stream import ScoreStream

T = TypeVar("T")

READ_TIMEOUT_S = 10.0  # ListModels, GetModel
HEALTH_TIMEOUT_S = 5.0
ALIGN_TIMEOUT_S = 300.0


def _call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    try:
        return fn(*args, **kwargs)
    except grpc.RpcError as e:
        raise GmmscoreError.from_rpc_error(e) from None


class Client:
    """A connection to a gmmscored.

    ``target`` is HOST:PORT (plaintext unless ``credentials``, e.g.
    ``grpc.ssl_channel_credentials(root_certificates=...)``, are given) or a ready grpc.Channel.
    ``token`` is the admin token ModelAdmin mutations (load_model, unload_model) present as
    ``authorization: Bearer TOKEN``. ``options`` adds gRPC channel arguments. Every failed call
    raises GmmscoreError; bad arguments raise ValueError before anything is sent.
    ListModels, GetModel and the health check are retried while the server is UNAVAILABLE.
    """

    def __init__(self, target: Union[str, grpc.Channel], *,
                 credentials: Optional[grpc.ChannelCredentials] = None,
                 token: Optional[str] = None,
                 options: Sequence[Tuple[str, Any]] = ()) -> None:
        self._channel, self._owned = _wire.open_channel(grpc, target, credentials, options)
        self._token = token
        self._scorer = scorer_pb2_grpc.ScorerStub(self._channel)
        self._admin = model_admin_pb2_grpc.ModelAdminStub(self._channel)
        self._health = self._channel.unary_unary(_wire.HEALTH_CHECK_METHOD)

    @property
    def channel(self) -> grpc.Channel:
        return self._channel

    def close(self) -> None:
        """Closes the channel (if this client made it)."""
        if self._owned:
            self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stream(
        self,
        models: Union[str, Sequence[str]],
        *,
        window: int = 10,
        encoding: str = "relative16",
        beam: Optional[float] = None,
        max_states: int = 0,
        fusion: str = "max",
        weights: Optional[Sequence[float]] = None,
        select_window: int = 0,
        max_latency_ms: int = 0,
        state_subset: Optional[Sequence[int]] = None,
        dim: Optional[int] = None,
        audio: Optional[AudioSpec] = None,
        stream_id: str = "",
        keep_frames: int = 0,
        chunk_frames: int = 100,
        timeout: Optional[float] = None,
    ) -> ScoreStream:
        """Opens a Score stream (scorer.proto StreamConfig).

        models: one name, or several whose scores are fused by ``fusion`` ("max", "log-linear",
        "log-add", "select"; ``weights``, ``select_window``). window: frames per response (0: the
        server's default). encoding: "relative16" (recommended), "float32", "float16" or
        "beam-sparse" (with ``beam`` > 0 and ``max_states``, 0: no limit). state_subset: score
        only these model states. dim: the feature dimension (None: that of the first frames
        pushed). audio: stream int16 samples that the server's front end turns into features.
        stream_id: echoed in responses and named in errors (and the dither seed of audio streams).
        keep_frames: the server keeps the stream's last keep_frames feature frames under stream_id
        for adapt_model (AdaptUtterance.from_stream). chunk_frames: frames (or 10 ms of audio) per message. timeout: for the whole stream.
        """
        config = _wire.stream_config(
            models, window=window, encoding=encoding, beam=beam, max_states=max_states,
            fusion=fusion, weights=weights, select_window=select_window,
            max_latency_ms=max_latency_ms, state_subset=state_subset, dim=dim, audio=audio,
            stream_id=stream_id, keep_frames=keep_frames)
        return ScoreStream(self._scorer, config, chunk_frames=chunk_frames, timeout=timeout,
                           model_dim=lambda name: self.get_model(name).dim)

    def stream_group(self, *, timeout: Optional[float] = None) -> StreamGroup:
        """Opens a ScoreStreams call: many streams on one call (group.stream(models, ...) takes
        Client.stream's options), for a backend that runs hundreds at once. timeout: for the
        whole call."""
        return StreamGroup(self._scorer, timeout=timeout,
                           model_dim=lambda name: self.get_model(name).dim)

    def score(self, models: Union[str, Sequence[str]], frames: np.ndarray,
              **stream_options: Any) -> np.ndarray:
        """One utterance through one stream: float32 [frames, width] scores."""
        with self.stream(models, **stream_options) as s:
            s.push_frames(frames)
            s.end()
            return s.collect()

    def align(self, model: str, features: np.ndarray, graph: bytes, *, utterance_id: str = "",
              beam: float = 0.0, retry_beam: float = 0.0, transition_scale: float = 0.0,
              self_loop_scale: float = 0.0, acoustic_scale: float = 0.0,
              timeout: Optional[float] = ALIGN_TIMEOUT_S) -> AlignResult:
        """Scorer.Align: forced alignment of one utterance (gmm-align-compiled's semantics).

        features: float32 [frames, dim]; graph: the utterance's compiled training graph, OpenFst
        binary (an entry of a graphs archive that gmmscore compile-graphs or Kaldi's
        compile-train-graphs writes, without its key). Options left 0 take gmm-align-compiled's
        defaults (beam 200, no retry beam, scales 1).
        """
        request = _wire.align_request(
            model, features, graph, utterance_id=utterance_id, beam=beam, retry_beam=retry_beam,
            transition_scale=transition_scale, self_loop_scale=self_loop_scale,
            acoustic_scale=acoustic_scale)
        return _wire.align_result(_call(self._scorer.Align, request, timeout=timeout))

    def health(self, service: str = "", *, timeout: Optional[float] = HEALTH_TIMEOUT_S) -> bool:
        """grpc.health.v1 Check: True when SERVING, False otherwise (NOT_SERVING: draining).
        GmmscoreError NOT_FOUND for an unknown service, UNAVAILABLE when unreachable."""
        response = _call(self._health, _wire.health_request(service), timeout=timeout)
        return _wire.health_status(response) == "SERVING"

    # -- ModelAdmin ----------------------------------------------------------------------------

    def list_models(self, *, timeout: Optional[float] = READ_TIMEOUT_S) -> List[ModelInfo]:
        response = _call(self._admin.ListModels, model_admin_pb2.ListModelsRequest(),
                         timeout=timeout)
        return [_wire.model_info(m) for m in response.models]

    def get_model(self, name: str, *, timeout: Optional[float] = READ_TIMEOUT_S) -> ModelInfo:
        return _wire.model_info(_call(self._admin.GetModel,
                                      model_admin_pb2.GetModelRequest(name=name), timeout=timeout))

    def load_model(self, name: str, path: str, *, replace: bool = False,
                   timeout: Optional[float] = None) -> ModelInfo:
        """Loads path (relative to the server's --model-root) under name; the admin token is
        needed. An existing name needs replace=True (open streams keep their version)."""
        request = model_admin_pb2.LoadModelRequest(name=name, path=path, replace=replace)
        return _wire.model_info(_call(self._admin.LoadModel, request, timeout=timeout,
                                      metadata=_wire.bearer(self._token)))

    def unload_model(self, name: str, *, timeout: Optional[float] = None) -> ModelInfo:
        """Removes name (status UNLOADING while open streams still use it); admin token needed."""
        return _wire.model_info(_call(self._admin.UnloadModel,
                                      model_admin_pb2.UnloadModelRequest(name=name),
                                      timeout=timeout, metadata=_wire.bearer(self._token)))

    def adapt_model(self, base_model: str, name: str, utterances: Sequence[AdaptUtterance], *,
                    replace: bool = False, mean_tau: Optional[float] = None,
                    variance_tau: Optional[float] = None, weight_tau: Optional[float] = None,
                    update_flags: Optional[str] = None,
                    timeout: Optional[float] = None) -> ModelInfo:
        """MAP-adapts base_model to the utterances (gmm-adapt-map's rules; unset taus and flags:
        its defaults 10, 50, 10, "mw") and registers the result as name, which serves new streams
        at once; the admin token is needed. An existing name needs replace=True."""
        request = _wire.adapt_request(base_model, name, utterances, replace=replace,
                                      mean_tau=mean_tau, variance_tau=variance_tau,
                                      weight_tau=weight_tau, update_flags=update_flags)
        return _wire.model_info(_call(self._admin.AdaptModel, request, timeout=timeout,
                                      metadata=_wire.bearer(self._token)))
