"""What the synchronous streams share: ScoreStream (a Score call of its own) and GroupStream (one
stream of a StreamGroup's ScoreStreams call). Pushes go out under one sender lock, a reader thread
fills the window queue that iteration takes from; a subclass says how its requests are sent and
how it half-closes."""

from __future__ import annotations

import queue
import threading
from typing import Callable, Iterator, List, Optional, Union

import numpy as np

from . import _wire
from ._stubs import scorer_pb2
from ._stream_state import Finished, StreamState
from ._types import GmmscoreError, ScoredWindow


class SyncStream(StreamState):
    """One Score stream: push frames (or audio), end, and iterate over the scored windows.

    Sending and receiving are independent: requests go to gRPC's sending thread, and a reader
    thread decodes each response as it arrives into a queue the iteration takes from. So the
    whole utterance may be pushed before reading a single window (the windows wait in memory),
    and a pipeline may push from one thread while another iterates. push_frames/push_audio block
    only while the server does not take the frames (flow control).

    Errors: a push on a stream that has ended raises its GmmscoreError; the iteration raises it
    after the last window that arrived. Use as a context manager (or call close()) to cancel a
    stream left unfinished.
    """

    def __init__(self, config: scorer_pb2.StreamConfig, chunk_frames: int,
                 model_dim: Callable[[str], int]) -> None:
        super().__init__(config, chunk_frames)
        self._model_dim = model_dim
        self._windows: "queue.Queue[Union[ScoredWindow, Finished]]" = queue.Queue()
        self._lock = threading.Lock()  # one sender at a time
        self._done = threading.Event()  # set once the stream's status is in

    # -- sending -------------------------------------------------------------------------------

    def push_frames(self, frames: np.ndarray) -> None:
        """Sends float32 [frames, dim] features (feature streams), in chunks of chunk_frames.
        ValueError, with nothing sent, for another dtype or shape or a non-finite value."""
        with self._lock:
            requests = self._plan_frames(frames)
            self._check_open("push_frames", self._done.is_set())
            self._send_all(requests)

    def push_audio(self, samples: np.ndarray) -> None:
        """Sends int16 mono samples (audio streams), in chunks of chunk_frames frame shifts.
        ValueError, with nothing sent, for another dtype or shape."""
        with self._lock:
            requests = self._plan_audio(samples)
            self._check_open("push_audio", self._done.is_set())
            self._send_all(requests)

    def end(self) -> None:
        """Sends End and half-closes: the last partial window comes at once. Idempotent."""
        with self._lock:
            if self._ended:
                return
            model_dim = None
            if self._needs_model_dim():
                try:
                    model_dim = self._model_dim(self._config.models[0])
                except GmmscoreError:
                    self.cancel()
                    raise
            self._send_all(self._plan_end(model_dim))
            self._half_close()

    def cancel(self) -> None:
        """Cancels the stream; the iteration then ends with CANCELLED."""
        raise NotImplementedError

    def close(self) -> None:
        """Cancels the stream if it has not finished."""
        if not self._done.is_set():
            self.cancel()

    def __enter__(self) -> "SyncStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- receiving -----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[ScoredWindow]:
        return self

    def __next__(self) -> ScoredWindow:
        window = self._next_window(self._windows.get() if self._finished is None else None)
        if window is None:
            raise StopIteration
        return window

    def collect(self) -> np.ndarray:
        """Iterates to the end: all scores, float32 [frames, width] (end() must have been called,
        or be called by another thread)."""
        windows: List[ScoredWindow] = list(self)
        return _wire.concatenate(windows)

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until the stream has finished (windows may still be unread); True if it has."""
        return self._done.wait(timeout)

    # -- what a subclass does ------------------------------------------------------------------

    def _send_all(self, requests: Iterator[scorer_pb2.ScoreRequest]) -> None:
        """Sends the requests in order (under the sender lock); raises the stream's error once
        it has finished."""
        raise NotImplementedError

    def _half_close(self) -> None:
        """Tells the server that nothing follows End."""
        raise NotImplementedError


def put_blocking(send: "queue.Queue[object]", item: object, done: threading.Event,
                 final: Callable[[], Optional[GmmscoreError]]) -> None:
    """Puts an item on a bounded send queue, waiting while it is full; raises the call's error
    once `done` is set (gRPC's sending thread no longer takes items)."""
    while not done.is_set():
        try:
            send.put(item, timeout=0.05)
            return
        except queue.Full:
            continue
    raise _wire.stream_ended(final())


def release_sender(send: "queue.Queue[object]", close: object) -> None:
    """Once a call is over: puts `close` on its send queue, dropping an item if it is full, so
    that gRPC's sending thread, if it waits for a request that will never come, ends."""
    while True:
        try:
            send.put_nowait(close)
            return
        except queue.Full:
            try:
                send.get_nowait()
            except queue.Empty:
                pass
