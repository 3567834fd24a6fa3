"""What a Score stream sends and when, apart from how: the sync ScoreStream (a request queue fed
to gRPC's sending thread) and the asyncio one (awaited writes) derive from StreamState and only
carry the requests it plans."""

from __future__ import annotations

from typing import Iterator, Optional, Union

import grpc
import numpy as np

from . import _wire
from ._stubs import scorer_pb2
from ._types import GmmscoreError, ScoredWindow


class Finished:
    """The last item of a stream's window queue: how the stream ended."""

    def __init__(self, error: Optional[GmmscoreError]) -> None:
        self.error = error


class StreamState:
    """The config, the feature dimension and the counters of one Score stream.

    The _plan_* methods check their input at once (ValueError, nothing sent) and return the
    requests to send, lazily: a counter moves on only when the request carrying those frames or
    samples has been taken, so after a failed send it counts what was sent.
    """

    def __init__(self, config: scorer_pb2.StreamConfig, chunk_frames: int) -> None:
        if chunk_frames < 1:
            raise ValueError("stream: chunk_frames must be >= 1")
        self._config = config
        self._audio = config.HasField("audio")
        self._dim: Optional[int] = config.dim or None
        self._chunk_frames = chunk_frames
        self._decoder = _wire.WindowDecoder(config)
        self._config_sent = False
        self._ended = False
        self._frames_sent = 0
        self._samples_sent = 0
        self._final: Optional[GmmscoreError] = None
        self._finished: Optional[Finished] = None  # seen by the iteration

    @property
    def stream_id(self) -> str:
        return self._config.stream_id

    @property
    def frames_sent(self) -> int:
        return self._frames_sent

    @property
    def samples_sent(self) -> int:
        return self._samples_sent

    @property
    def error(self) -> Optional[GmmscoreError]:
        """The final error once the stream has finished with one; None otherwise."""
        return self._final

    def _check_open(self, what: str, finished: bool) -> None:
        if self._ended:
            raise GmmscoreError(grpc.StatusCode.FAILED_PRECONDITION, f"{what} after end()")
        if finished:
            raise _wire.stream_ended(self._final)

    def _plan_frames(self, frames: np.ndarray) -> Iterator[scorer_pb2.ScoreRequest]:
        if self._audio:
            raise ValueError("push_frames on an audio stream (use push_audio)")
        data = _wire.check_frames(frames, self._dim)
        return self._frame_requests(data)

    def _frame_requests(self, data: np.ndarray) -> Iterator[scorer_pb2.ScoreRequest]:
        if not self._config_sent:
            self._dim = data.shape[1]
            self._config.dim = self._dim
        yield from self._config_requests()
        for request, n in _wire.feature_requests(data, self._frames_sent, self._chunk_frames):
            yield request
            self._frames_sent += n

    def _plan_audio(self, samples: np.ndarray) -> Iterator[scorer_pb2.ScoreRequest]:
        if not self._audio:
            raise ValueError("push_audio on a feature stream (give Client.stream an AudioSpec)")
        data = _wire.check_audio(samples)
        return self._audio_requests(data)

    def _audio_requests(self, data: np.ndarray) -> Iterator[scorer_pb2.ScoreRequest]:
        yield from self._config_requests()
        per_chunk = _wire.audio_chunk_samples(self._config, self._chunk_frames)
        for request, n in _wire.audio_requests(data, self._samples_sent, per_chunk):
            yield request
            self._samples_sent += n

    def _needs_model_dim(self) -> bool:
        """end() on a feature stream that sent nothing and was given no dim: the config needs
        the model's."""
        return not self._config_sent and not self._audio and self._dim is None

    def _plan_end(self, model_dim: Optional[int]) -> Iterator[scorer_pb2.ScoreRequest]:
        if model_dim is not None:
            self._config.dim = model_dim
        yield from self._config_requests()
        self._ended = True
        yield _wire.end_request()

    def _config_requests(self) -> Iterator[scorer_pb2.ScoreRequest]:
        if not self._config_sent:
            yield _wire.config_request(self._config)
            self._config_sent = True

    def _next_window(self, item: Optional[Union[ScoredWindow, Finished]]) -> Optional[ScoredWindow]:
        """The iteration's step, given the queue's next item (None once finished): the window,
        or None at the end; raises the stream's error after its last window."""
        if self._finished is None:
            if isinstance(item, ScoredWindow):
                return item
            self._finished = item
        assert self._finished is not None
        if self._finished.error is not None:
            raise self._finished.error
        return None
