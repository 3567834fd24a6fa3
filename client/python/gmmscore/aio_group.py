"""gmmscore.StreamGroup for asyncio: many Score streams on one ScoreStreams call
(gmmscore.aio.Client.stream_group makes one), each a GroupStream with gmmscore.aio.ScoreStream's
coroutines."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, Awaitable, Callable, Dict, Iterator, Optional, Sequence, Union

import grpc
import grpc.aio

from . import _wire
from ._async_stream import AsyncStream, read_call
from ._stubs import scorer_pb2
from ._stream_state import Finished
from ._types import GmmscoreError

_CLOSE = object()  # the writer's last item: it half-closes the call
_SEND_QUEUE = 1024  # stream messages waiting for the writer; pushes wait beyond
_MAX_ENTRIES = 512  # stream messages one ScoreStreams message carries at most


class StreamGroup:
    """gmmscore.StreamGroup for asyncio: ``group.stream(...)`` (not a coroutine) opens a
    GroupStream; ``await group.close()`` (or leaving ``async with``) half-closes the call, ending
    the streams not yet ended as if end() had been called, and waits for all of them. A writer
    task sends whatever the streams have queued in one message; a reader task hands each
    response's windows and statuses to their streams. Must be made inside a running event loop.
    """

    def __init__(self, stub: Any, *, timeout: Optional[float],
                 model_dim: Callable[[str], Awaitable[int]]) -> None:
        self._model_dim = model_dim
        self._send: "asyncio.Queue[object]" = asyncio.Queue(maxsize=_SEND_QUEUE)
        self._streams: Dict[int, GroupStream] = {}
        self._tags = itertools.count(1)
        self._closed = False
        self._final: Optional[GmmscoreError] = None
        self._call = stub.ScoreStreams(timeout=timeout)
        loop = asyncio.get_running_loop()
        self._writer = loop.create_task(self._write())
        self._reader = loop.create_task(self._read())

    def stream(self, models: Union[str, Sequence[str]], *, chunk_frames: int = 100,
               **options: Any) -> "GroupStream":
        """Opens a stream on the group: models and options as Client.stream (but timeout, which
        is the group's). Its config goes out with its first push or end()."""
        unknown = set(options) - set(_wire.STREAM_DEFAULTS)
        if unknown:
            raise TypeError(f"StreamGroup.stream: unknown options {sorted(unknown)}")
        config = _wire.stream_config(models, **{**_wire.STREAM_DEFAULTS, **options})
        if self._closed or self._reader.done():
            raise _wire.stream_ended(self._final)
        stream = GroupStream(self, next(self._tags), config, chunk_frames)
        self._streams[stream.tag] = stream
        return stream

    async def close(self) -> None:
        """Half-closes the call and waits until it is over (every stream finished)."""
        if not self._closed:
            self._closed = True
            try:
                await self._put(_CLOSE)
            except GmmscoreError:
                pass  # the call is over already
        await asyncio.gather(self._writer, self._reader, return_exceptions=True)

    def cancel(self) -> None:
        """Cancels the call: every stream on it ends with CANCELLED."""
        self._call.cancel()

    async def __aenter__(self) -> "StreamGroup":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- internals ------------------------------------------------------------------------------

    async def _put(self, item: object) -> None:
        """Queues an item for the writer, waiting while the queue is full; raises the call's
        error once the call is over."""
        if self._reader.done():
            raise _wire.stream_ended(self._final)
        try:
            self._send.put_nowait(item)
            return
        except asyncio.QueueFull:
            pass
        put = asyncio.ensure_future(self._send.put(item))
        await asyncio.wait({put, self._reader}, return_when=asyncio.FIRST_COMPLETED)
        if not put.done():
            put.cancel()
            raise _wire.stream_ended(self._final)

    def _put_soon(self, item: object) -> None:
        """_put for a caller that cannot wait (cancel): now, or from a task if the queue is
        full; dropped once the call is over."""
        if self._reader.done():
            return
        try:
            self._send.put_nowait(item)
        except asyncio.QueueFull:
            task = asyncio.get_running_loop().create_task(self._put(item))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _write(self) -> None:
        try:
            while True:
                items = [await self._send.get()]
                while len(items) < _MAX_ENTRIES:  # whatever else is queued, in the same message
                    try:
                        items.append(self._send.get_nowait())
                    except asyncio.QueueEmpty:
                        break
                closing = _CLOSE in items
                if closing:
                    items = items[:items.index(_CLOSE)]
                if items:
                    await self._call.write(
                        scorer_pb2.ScoreStreamsRequest(requests=items))  # type: ignore[arg-type]
                if closing:
                    await self._call.done_writing()
                    return
        except (grpc.RpcError, asyncio.InvalidStateError):
            pass  # the call is over: the reader reports how

    async def _read(self) -> None:
        error = await read_call(self._call, self._deliver_all, "the group's reader")
        self._final = error
        self._writer.cancel()
        for stream in list(self._streams.values()):  # the call ended before their status
            self._finish(stream, error or GmmscoreError(
                grpc.StatusCode.UNAVAILABLE, "the ScoreStreams call ended before the stream"))

    def _deliver_all(self, response: scorer_pb2.ScoreStreamsResponse) -> None:
        for reply in response.replies:
            self._deliver(reply)

    def _deliver(self, reply: scorer_pb2.StreamReply) -> None:
        stream = self._streams.get(reply.tag)
        if stream is None:
            return  # a stream the client cancelled
        if reply.HasField("status"):
            code = _wire.status_code(reply.status.code)
            self._finish(stream, None if code == grpc.StatusCode.OK
                         else GmmscoreError(code, reply.status.message))
            return
        try:
            stream._windows.put_nowait(stream._decoder.decode(reply.response))
        except GmmscoreError as e:  # a response that cannot be decoded
            stream._cancel_with(e)

    def _finish(self, stream: "GroupStream", error: Optional[GmmscoreError]) -> None:
        if self._streams.pop(stream.tag, None) is None:
            return
        stream._final = error
        stream._done.set()
        stream._windows.put_nowait(Finished(error))


class GroupStream(AsyncStream):
    """One stream of a StreamGroup (asyncio): gmmscore.aio.ScoreStream's coroutines, iteration
    and errors (AsyncStream has the methods); cancel() ends this stream alone."""

    def __init__(self, group: StreamGroup, tag: int, config: scorer_pb2.StreamConfig,
                 chunk_frames: int) -> None:
        super().__init__(config, chunk_frames, group._model_dim)
        self._group = group
        self.tag = tag
        self._done = asyncio.Event()  # set once the stream's status is in

    def cancel(self) -> None:
        """Cancels the stream (the others on the group go on); its iteration ends CANCELLED."""
        self._cancel_with(GmmscoreError(grpc.StatusCode.CANCELLED, "cancelled by the client"))

    async def wait(self) -> None:
        """Waits until the stream has finished (windows may still be unread)."""
        await self._done.wait()

    async def __aenter__(self) -> "GroupStream":
        return self

    # -- internals ------------------------------------------------------------------------------

    def _has_finished(self) -> bool:
        return self._done.is_set()

    async def _send_all(self, requests: Iterator[scorer_pb2.ScoreRequest]) -> None:
        for request in requests:
            if self._done.is_set():
                raise _wire.stream_ended(self._final)
            await self._group._put(scorer_pb2.StreamRequest(tag=self.tag, request=request))

    async def _half_close(self) -> None:
        await self._group._put(scorer_pb2.StreamRequest(tag=self.tag, writes_done=True))

    def _cancel_with(self, error: GmmscoreError) -> None:
        if self._done.is_set():
            return
        self._group._put_soon(scorer_pb2.StreamRequest(tag=self.tag, cancel=True))
        self._group._finish(self, error)
