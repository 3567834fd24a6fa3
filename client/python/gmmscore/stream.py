"""A Score stream on a synchronous grpc.Channel (Client.stream makes them)."""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Iterator, Optional

import grpc

from ._stubs import scorer_pb2
from ._stream_state import Finished
from ._sync_stream import SyncStream, put_blocking, release_sender
from ._types import GmmscoreError

_CLOSE = object()  # ends the request iterator: gRPC then half-closes the stream
_SEND_QUEUE = 16  # requests waiting for gRPC's sending thread; push_* blocks beyond


class ScoreStream(SyncStream):
    """One Score stream on a call of its own (SyncStream has the methods): gRPC sends from a
    request iterator fed by a queue of at most 16 requests."""

    def __init__(self, stub: Any, config: scorer_pb2.StreamConfig, *, chunk_frames: int,
                 timeout: Optional[float], model_dim: Callable[[str], int]) -> None:
        super().__init__(config, chunk_frames, model_dim)
        self._send: "queue.Queue[object]" = queue.Queue(maxsize=_SEND_QUEUE)
        self._call = stub.Score(self._requests(), timeout=timeout)
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name=f"gmmscore-stream-{config.stream_id}")
        self._reader.start()
        if self._audio or self._dim is not None:
            with self._lock:
                self._send_all(self._config_requests())

    def cancel(self) -> None:
        """Cancels the stream; the iteration then ends with CANCELLED."""
        self._call.cancel()

    def close(self) -> None:
        """Cancels the stream if it has not finished, and waits for its reader thread."""
        super().close()
        self._reader.join()

    def __enter__(self) -> "ScoreStream":
        return self

    # -- internals ------------------------------------------------------------------------------

    def _send_all(self, requests: Iterator[scorer_pb2.ScoreRequest]) -> None:
        for request in requests:
            put_blocking(self._send, request, self._done, lambda: self._final)

    def _half_close(self) -> None:
        put_blocking(self._send, _CLOSE, self._done, lambda: self._final)

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
        release_sender(self._send, _CLOSE)
        self._windows.put(Finished(error))
