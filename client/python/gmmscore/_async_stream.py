"""What the asyncio streams share: gmmscore.aio.ScoreStream (a Score call of its own) and
gmmscore.aio.GroupStream (one stream of a StreamGroup's ScoreStreams call). Pushes go out under
one sender lock, a reader task fills the window queue that iteration takes from; a subclass says
how its requests are written, how it half-closes and when it has finished."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, List, Optional, Union

import grpc
import grpc.aio
import numpy as np

from . import _wire
from ._stubs import scorer_pb2
from ._stream_state import Finished, StreamState
from ._types import GmmscoreError, ScoredWindow


class AsyncStream(StreamState):
    """gmmscore.ScoreStream for asyncio: ``await push_frames/push_audio/end``, ``async for``
    over the windows. Must be made inside a running event loop."""

    def __init__(self, config: scorer_pb2.StreamConfig, chunk_frames: int,
                 model_dim: Callable[[str], Awaitable[int]]) -> None:
        super().__init__(config, chunk_frames)
        self._model_dim = model_dim
        self._windows: "asyncio.Queue[Union[ScoredWindow, Finished]]" = asyncio.Queue()
        self._lock = asyncio.Lock()  # one sender at a time

    async def push_frames(self, frames: np.ndarray) -> None:
        """As gmmscore.ScoreStream.push_frames."""
        async with self._lock:
            requests = self._plan_frames(frames)
            self._check_open("push_frames", self._has_finished())
            await self._send_all(requests)

    async def push_audio(self, samples: np.ndarray) -> None:
        """As gmmscore.ScoreStream.push_audio."""
        async with self._lock:
            requests = self._plan_audio(samples)
            self._check_open("push_audio", self._has_finished())
            await self._send_all(requests)

    async def end(self) -> None:
        """Sends End and half-closes. Idempotent."""
        async with self._lock:
            if self._ended:
                return
            model_dim = None
            if self._needs_model_dim():
                try:
                    model_dim = await self._model_dim(self._config.models[0])
                except GmmscoreError:
                    self.cancel()
                    raise
            await self._send_all(self._plan_end(model_dim))
            await self._half_close()

    def cancel(self) -> None:
        """Cancels the stream; the iteration then ends with CANCELLED."""
        raise NotImplementedError

    async def close(self) -> None:
        """Cancels the stream if it has not finished."""
        if not self._has_finished():
            self.cancel()

    async def __aenter__(self) -> "AsyncStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __aiter__(self) -> AsyncIterator[ScoredWindow]:
        return self

    async def __anext__(self) -> ScoredWindow:
        window = self._next_window(await self._windows.get() if self._finished is None else None)
        if window is None:
            raise StopAsyncIteration
        return window

    async def collect(self) -> np.ndarray:
        """All remaining scores, float32 [frames, width] (after end())."""
        windows: List[ScoredWindow] = [w async for w in self]
        return _wire.concatenate(windows)

    # -- what a subclass does ------------------------------------------------------------------

    def _has_finished(self) -> bool:
        """Whether the stream's status is in."""
        raise NotImplementedError

    async def _send_all(self, requests: Iterator[scorer_pb2.ScoreRequest]) -> None:
        """Writes the requests in order (under the sender lock); raises the stream's error once
        it has finished."""
        raise NotImplementedError

    async def _half_close(self) -> None:
        """Tells the server that nothing follows End."""
        raise NotImplementedError


async def read_call(call: Any, handle: Callable[[Any], None],
                    reader: str) -> Optional[GmmscoreError]:
    """Reads a grpc.aio call's responses into `handle` to the end; returns how the call ended
    (None: OK). A response `handle` cannot decode (GmmscoreError), the reading task's
    cancellation (named `reader` in the error) or any other exception cancels the call."""
    try:
        while True:
            response = await call.read()
            if response is grpc.aio.EOF:
                break
            handle(response)
        code = await call.code()
        if code != grpc.StatusCode.OK:
            return GmmscoreError(code, await call.details())
        return None
    except grpc.RpcError as e:
        return GmmscoreError.from_rpc_error(e)
    except GmmscoreError as e:  # a response that cannot be decoded
        call.cancel()
        return e
    except asyncio.CancelledError:
        call.cancel()
        return GmmscoreError(grpc.StatusCode.CANCELLED, f"{reader} was cancelled")
    except Exception as e:  # noqa: BLE001 - reported through the iteration
        call.cancel()
        return GmmscoreError(grpc.StatusCode.UNKNOWN, f"{type(e).__name__}: {e}")
