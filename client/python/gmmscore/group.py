"""Many Score streams on one ScoreStreams call (scorer.proto), for a backend that runs many at
once: Client.stream_group makes a StreamGroup, whose streams behave as Client.stream's."""

from __future__ import annotations

import itertools
import queue
import threading
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Union

import grpc

from . import _wire
from ._stubs import scorer_pb2
from ._stream_state import Finished
from ._sync_stream import SyncStream, put_blocking, release_sender
from ._types import GmmscoreError

_CLOSE = object()  # ends the request iterator: gRPC then half-closes the call
_SEND_QUEUE = 1024  # stream messages waiting for gRPC's sending thread; pushes block beyond
_MAX_ENTRIES = 512  # stream messages one ScoreStreams message carries at most


class StreamGroup:
    """One ScoreStreams call carrying any number of Score streams.

    Each stream (``group.stream(...)``, the options of Client.stream) is a GroupStream: the same
    pushes, iteration, errors and statuses as a ScoreStream, while gRPC sees one call whose
    messages carry whatever the group's streams have queued when it sends, and whose responses
    carry the windows of many streams. That saves gRPC's cost per message and per call at both
    ends, which is most of the CPU at hundreds of streams. Streams on one group share the call's
    flow control: a stream whose windows nobody reads holds the others back once the server stops
    reading (its windows out at the limit), so put on one group the streams read at one pace.

    close() (or leaving ``with``) half-closes the call: streams not yet ended end as if end()
    had been called, and close() waits for all of them to finish.
    """

    def __init__(self, stub: Any, *, timeout: Optional[float],
                 model_dim: Callable[[str], int]) -> None:
        self._model_dim = model_dim
        self._send: "queue.Queue[object]" = queue.Queue(maxsize=_SEND_QUEUE)
        self._lock = threading.Lock()
        self._streams: Dict[int, GroupStream] = {}
        self._tags = itertools.count(1)
        self._done = threading.Event()
        self._closed = False
        self._final: Optional[GmmscoreError] = None
        self._call = stub.ScoreStreams(self._requests(), timeout=timeout)
        self._reader = threading.Thread(target=self._read, daemon=True,
                                        name="gmmscore-stream-group")
        self._reader.start()

    def stream(self, models: Union[str, Sequence[str]], *, chunk_frames: int = 100,
               **options: Any) -> "GroupStream":
        """Opens a stream on the group: models and options as Client.stream (but timeout, which
        is the group's)."""
        unknown = set(options) - set(_wire.STREAM_DEFAULTS)
        if unknown:
            raise TypeError(f"StreamGroup.stream: unknown options {sorted(unknown)}")
        config = _wire.stream_config(models, **{**_wire.STREAM_DEFAULTS, **options})
        with self._lock:
            if self._closed or self._done.is_set():
                raise _wire.stream_ended(self._final)
            stream = GroupStream(self, next(self._tags), config, chunk_frames)
            self._streams[stream.tag] = stream
        if stream._audio or stream._dim is not None:
            with stream._lock:
                stream._send_all(stream._config_requests())
        return stream

    def close(self) -> None:
        """Half-closes the call and waits until it is over (every stream finished)."""
        with self._lock:
            closing = not self._closed
            self._closed = True
        if closing:
            self._put(_CLOSE)
        self._reader.join()

    def cancel(self) -> None:
        """Cancels the call: every stream on it ends with CANCELLED."""
        self._call.cancel()

    def __enter__(self) -> "StreamGroup":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------

    def _put(self, item: object) -> None:
        put_blocking(self._send, item, self._done, lambda: self._final)

    def _requests(self) -> Iterator[scorer_pb2.ScoreStreamsRequest]:
        closing = False
        while not closing:
            items = [self._send.get()]
            while len(items) < _MAX_ENTRIES:  # whatever else is queued goes in the same message
                try:
                    items.append(self._send.get_nowait())
                except queue.Empty:
                    break
            if _CLOSE in items:
                closing = True
                items = items[:items.index(_CLOSE)]
            if items:
                yield scorer_pb2.ScoreStreamsRequest(requests=items)  # type: ignore[arg-type]

    def _read(self) -> None:
        error: Optional[GmmscoreError] = None
        try:
            for response in self._call:
                for reply in response.replies:
                    with self._lock:
                        stream = self._streams.get(reply.tag)
                    if stream is None:
                        continue  # a stream the client cancelled
                    if reply.HasField("status"):
                        code = _wire.status_code(reply.status.code)
                        self._finish(stream, None if code == grpc.StatusCode.OK
                                     else GmmscoreError(code, reply.status.message))
                    else:
                        try:
                            stream._windows.put(stream._decoder.decode(reply.response))
                        except GmmscoreError as e:  # a response that cannot be decoded
                            stream._cancel_with(e)
        except grpc.RpcError as e:
            error = GmmscoreError.from_rpc_error(e)
        except Exception as e:  # noqa: BLE001 - reported through every stream's iteration
            error = GmmscoreError(grpc.StatusCode.UNKNOWN, f"{type(e).__name__}: {e}")
            self._call.cancel()
        self._final = error
        self._done.set()
        with self._lock:
            left = list(self._streams.values())
        for stream in left:  # the call ended before their status
            self._finish(stream, error or GmmscoreError(
                grpc.StatusCode.UNAVAILABLE, "the ScoreStreams call ended before the stream"))
        release_sender(self._send, _CLOSE)

    def _finish(self, stream: "GroupStream", error: Optional[GmmscoreError]) -> None:
        with self._lock:
            if self._streams.pop(stream.tag, None) is None:
                return
        stream._final = error
        stream._done.set()
        stream._windows.put(Finished(error))


class GroupStream(SyncStream):
    """One stream of a StreamGroup: a ScoreStream's pushes, end, cancel, iteration and errors
    (SyncStream has the methods); cancel() ends this stream alone."""

    def __init__(self, group: StreamGroup, tag: int, config: scorer_pb2.StreamConfig,
                 chunk_frames: int) -> None:
        super().__init__(config, chunk_frames, group._model_dim)
        self._group = group
        self.tag = tag

    def cancel(self) -> None:
        """Cancels the stream (the others on the group go on); its iteration ends CANCELLED."""
        self._cancel_with(GmmscoreError(grpc.StatusCode.CANCELLED, "cancelled by the client"))

    def __enter__(self) -> "GroupStream":
        return self

    # -- internals ------------------------------------------------------------------------------

    def _send_all(self, requests: Iterator[scorer_pb2.ScoreRequest]) -> None:
        for request in requests:
            if self._done.is_set():
                raise _wire.stream_ended(self._final)
            self._group._put(scorer_pb2.StreamRequest(tag=self.tag, request=request))

    def _half_close(self) -> None:
        self._group._put(scorer_pb2.StreamRequest(tag=self.tag, writes_done=True))

    def _cancel_with(self, error: GmmscoreError) -> None:
        if self._done.is_set():
            return
        try:
            self._group._put(scorer_pb2.StreamRequest(tag=self.tag, cancel=True))
        except GmmscoreError:
            pass  # the call is over: the stream ends with it
        self._group._finish(self, error)
