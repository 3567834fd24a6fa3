"""A Score stream on a synchronous grpc.Channel (Client.stream makes them)."""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Iterator, List, Optional, Union

import grpc
import numpy as np

from . import _wire
from ._stubs import scorer_pb2
from ._stream_state import Finished, StreamState
from ._types import GmmscoreError, ScoredWindow

_CLOSE = object()  # ends the request iterator: gRPC then half-closes the stream
_SEND_QUEUE = 16  # requests waiting for gRPC's sending thread; push_* blocks beyond


class ScoreStream(StreamState):
    """One Score stream: push frames (or audio), end, and iterate over the scored windows.

    Sending and receiving are independent: gRPC sends from a request iterator fed by a queue, and
    a reader thread decodes each response as it arrives into a queue the iteration takes from. So
    the whole utterance may be pushed before reading a single window (the windows wait in memory),
    and a pipeline may push from one thread while another iterates. push_frames/push_audio block
    only while the server does not take the frames (flow control).

    Errors: a push on a stream that has ended raises its GmmscoreError; the iteration raises it
    after the last window that arrived. Use as a context manager (or call close()) to cancel a
    stream left unfinished.
    """

    def __init__(self, stub: Any, config: scorer_pb2.StreamConfig, *, chunk_frames: int,
                 timeout: Optional[float], model_dim: Callable[[str], int]) -> None:
        super().__init__(config, chunk_frames)
        self._model_dim = model_dim
        self._send: "queue.Queue[object]" = queue.Queue(maxsize=_SEND_QUEUE)
        self._windows: "queue.Queue[Union[ScoredWindow, Finished]]" = queue.Queue()
        self._lock = threading.Lock()  # one sender at a time
        self._done = threading.Event()
        self._call = stub.Score(self._requests(), timeout=timeout)
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name=f"gmmscore-stream-{config.stream_id}")
        self._reader.start()
        if self._audio or self._dim is not None:
            with self._lock:
                self._put_all(self._config_requests())

    # -- sending -------------------------------------------------------------------------------

    def push_frames(self, frames: np.ndarray) -> None:
        """Sends float32 [frames, dim] features (feature streams), in chunks of chunk_frames.
        ValueError, with nothing sent, for another dtype or shape or a non-finite value."""
        with self._lock:
            requests = self._plan_frames(frames)
            self._check_open("push_frames", self._done.is_set())
            self._put_all(requests)

    def push_audio(self, samples: np.ndarray) -> None:
        """Sends int16 mono samples (audio streams), in chunks of chunk_frames frame shifts.
        ValueError, with nothing sent, for another dtype or shape."""
        with self._lock:
            requests = self._plan_audio(samples)
            self._check_open("push_audio", self._done.is_set())
            self._put_all(requests)

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
            self._put_all(self._plan_end(model_dim))
            self._put(_CLOSE)

    def cancel(self) -> None:
        """Cancels the stream; the iteration then ends with CANCELLED."""
        self._call.cancel()

    def close(self) -> None:
        """Cancels the stream if it has not finished, and waits for its reader thread."""
        if not self._done.is_set():
            self.cancel()
        self._reader.join()

    def __enter__(self) -> "ScoreStream":
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

    # -- internals ------------------------------------------------------------------------------

    def _put_all(self, requests: Iterator[scorer_pb2.ScoreRequest]) -> None:
        for request in requests:
            self._put(request)

    def _put(self, item: object) -> None:
        while not self._done.is_set():
            try:
                self._send.put(item, timeout=0.05)
                return
            except queue.Full:
                continue
        raise _wire.stream_ended(self._final)

    def _requests(self) -> Iterator[scorer_pb2.ScoreRequest]:
        while True:
            item = self._send.get()
            if item is _CLOSE:
                return
            yield item  # type: ignore[misc]

    def _read(self) -> None:
        error: Optional[GmmscoreError] = None
        try:
            for response in self._call:
                self._windows.put(self._decoder.decode(response))
        except grpc.RpcError as e:
            error = GmmscoreError.from_rpc_error(e)
        except GmmscoreError as e:  # a response that cannot be decoded
            error = e
            self._call.cancel()
        except Exception as e:  # noqa: BLE001 - reported through the iteration
            error = GmmscoreError(grpc.StatusCode.UNKNOWN, f"{type(e).__name__}: {e}")
            self._call.cancel()
        self._final = error
        self._done.set()
        # Unblocks gRPC's sending thread if it waits for a request that will never come.
        while True:
            try:
                self._send.put_nowait(_CLOSE)
                break
            except queue.Full:
                try:
                    self._send.get_nowait()
                except queue.Empty:
                    pass
        self._windows.put(Finished(error))
