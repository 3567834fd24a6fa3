"""The values the clients return, and their error type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Sequence, Tuple

import grpc
import numpy as np


class GmmscoreError(Exception):
    """A call or stream ended with a gRPC status other than OK.

    ``code`` is the :class:`grpc.StatusCode` (``NOT_FOUND`` for an unknown model,
    ``INVALID_ARGUMENT`` for a bad stream config or features, ``UNAVAILABLE`` when the server is
    unreachable or draining, ...: scorer.proto lists them), ``details`` the server's message.
    Responses this client cannot decode end the stream with ``DATA_LOSS``.
    """

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details

    @classmethod
    def from_rpc_error(cls, error: Any) -> "GmmscoreError":
        """From a grpc.RpcError (sync or grpc.aio), which carries code() and details()."""
        code = error.code() if callable(getattr(error, "code", None)) else None
        details = error.details() if callable(getattr(error, "details", None)) else None
        return cls(code if isinstance(code, grpc.StatusCode) else grpc.StatusCode.UNKNOWN,
                   details if details is not None else str(error))


@dataclass(frozen=True)
class AudioSpec:
    """Audio streams: the server computes the features with front end ``front_end``
    (gmmscored --front-end NAME=FILE); ``sample_rate_hz`` must be that front end's."""

    front_end: str
    sample_rate_hz: int = 16000


@dataclass(frozen=True)
class ModelVersion:
    name: str
    version: int


@dataclass(frozen=True)
class SparseScores:
    """BEAM_SPARSE windows as sent: ``counts[t]`` entries for frame t, each frame's in decreasing
    score order; ``states`` (int32 model state ids) and ``scores`` (float32) of all frames."""

    states: np.ndarray
    scores: np.ndarray
    counts: np.ndarray

    def frame(self, t: int) -> Tuple[np.ndarray, np.ndarray]:
        """(states, scores) kept for frame t of the window."""
        begin = int(self.counts[:t].sum())
        end = begin + int(self.counts[t])
        return self.states[begin:end], self.scores[begin:end]


@dataclass(frozen=True)
class ScoredWindow:
    """One response window, decoded.

    ``scores`` is float32 [num_frames, width], column = model state id: width is the model's
    states, or with a state subset the largest subset id + 1. States a subset or BEAM_SPARSE left
    out are -inf. RELATIVE16 is decoded as best_score - q / 256 (within 1/512 nat of the exact score
    for states less than 255.99 nats below the best; farther ones read as 255.996 below), FLOAT16
    exactly as sent.
    """

    stream_id: str
    first_frame: int
    scores: np.ndarray
    best_state: np.ndarray  # int32 [num_frames]: the best model state of each frame
    best_score: np.ndarray  # float32 [num_frames]: its log-likelihood
    models: Tuple[ModelVersion, ...]
    encoding: str  # "float32", "float16", "relative16" or "beam-sparse"
    sparse: Optional[SparseScores] = None  # BEAM_SPARSE only

    @property
    def num_frames(self) -> int:
        return int(self.scores.shape[0])


@dataclass(frozen=True)
class ModelInfo:
    """ModelAdmin's view of a resident model (model_admin.proto ModelInfo)."""

    name: str
    version: int
    status: str  # "LOADING", "READY", "UNLOADING", "UNLOADED" (or "UNKNOWN")
    num_states: int
    num_gaussians: int
    dim: int
    path: str
    format: str
    active_streams: int
    bytes_per_device: Dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class AlignResult:
    """Scorer.Align's answer: one transition-id per frame, gmm-align-compiled's score."""

    utterance_id: str
    transition_ids: np.ndarray  # int32 [frames]
    log_likelihood: float  # score / acoustic_scale
    score: float  # -(graph + scaled acoustic cost), what gmm-align-compiled writes
    retried: bool  # the retry beam was needed
    model: ModelVersion


@dataclass(frozen=True)
class AdaptUtterance:
    """One utterance for Client.adapt_model: its frames, either ``frames`` (float32
    [frames, dim]) or ``from_stream`` (the stream_id of a stream opened with ``keep_frames``: the
    frames the server kept, after its front end for audio streams), and one label a frame, either
    ``alignment`` (transition-ids, e.g. a decoder's 1-best) or ``pdfs`` (model state ids, e.g.
    the ScoredWindows' best_state). ``key`` names it in errors."""

    frames: Optional[np.ndarray] = None
    from_stream: str = ""
    alignment: Optional[Sequence[int]] = None
    pdfs: Optional[Sequence[int]] = None
    key: str = ""

