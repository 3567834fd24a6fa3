"""The asyncio client (grpc.aio), with the synchronous client's surface:

    async with gmmscore.aio.Client("localhost:50051") as client:
        stream = client.stream("mono", encoding="float32")
        await stream.push_frames(frames)
        await stream.end()
        async for window in stream:
            ...

Streams, calls and errors behave as in gmmscore.Client; the methods that talk to the server are
coroutines. A stream reads its responses in a task of its own, so pushing a whole utterance
before reading never stalls.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Iterator, List, Optional, Sequence, Tuple, Union

import grpc
import grpc.aio
import numpy as np

from . import _wire
from ._stubs import model_admin_pb2, model_admin_pb2_grpc, scorer_pb2, scorer_pb2_grpc
from ._async_stream import AsyncStream, read_call
from .aio_group import GroupStream, StreamGroup
from ._stream_state import Finished
from ._types import AdaptUtterance, AlignResult, AudioSpec, GmmscoreError, ModelInfo
from .client import ALIGN_TIMEOUT_S, HEALTH_TIMEOUT_S, READ_TIMEOUT_S

__all__ = ["Client", "GroupStream", "ScoreStream", "StreamGroup"]


async def _call(awaitable: Awaitable[Any]) -> Any:
    try:
        return await awaitable
    except grpc.RpcError as e:
        raise GmmscoreError.from_rpc_error(e) from None


class ScoreStream(AsyncStream):
    """gmmscore.ScoreStream for asyncio on a Score call of its own (AsyncStream has the
    methods). Must be made (Client.stream) inside a running event loop."""

    def __init__(self, stub: Any, config: scorer_pb2.StreamConfig, *, chunk_frames: int,
                 timeout: Optional[float],
                 model_dim: Callable[[str], Awaitable[int]]) -> None:
        super().__init__(config, chunk_frames, model_dim)
        self._cancelled = False
        self._call = stub.Score(timeout=timeout)
        self._reader = asyncio.get_running_loop().create_task(self._read())

    def cancel(self) -> None:
        """Cancels the stream; the iteration then ends with CANCELLED."""
        self._cancelled = True
        self._call.cancel()

    async def close(self) -> None:
        """Cancels the stream if it has not finished, and waits for its reader task."""
        await super().close()
        await asyncio.gather(self._reader, return_exceptions=True)

    async def __aenter__(self) -> "ScoreStream":
        return self

    async def wait(self) -> None:
        """Waits until the stream has finished (windows may still be unread)."""
        await asyncio.shield(self._reader)

    # -- internals ------------------------------------------------------------------------------

    def _has_finished(self) -> bool:
        return self._reader.done()

    async def _send_all(self, requests: Iterator[scorer_pb2.ScoreRequest]) -> None:
        for request in requests:
            await self._write(request)

    async def _half_close(self) -> None:
        try:
            await self._call.done_writing()
        except (grpc.RpcError, asyncio.InvalidStateError):
            await self._raise_final()
        except asyncio.CancelledError:
            if not self._cancelled:
                raise
            await self._raise_final()

    async def _write(self, request: scorer_pb2.ScoreRequest) -> None:
        try:
            await self._call.write(request)
        except (grpc.RpcError, asyncio.InvalidStateError):
            await self._raise_final()
        except asyncio.CancelledError:
            if not self._cancelled:  # this task was cancelled, not the stream
                raise
            await self._raise_final()

    async def _raise_final(self) -> None:
        """The call is over: its status, once the reader has collected it."""
        await asyncio.gather(self._reader, return_exceptions=True)
        raise _wire.stream_ended(self._final)

    async def _read(self) -> None:
        error = await read_call(
            self._call, lambda r: self._windows.put_nowait(self._decoder.decode(r)),
            "the stream's reader")
        self._final = error
        self._windows.put_nowait(Finished(error))


class Client:
    """gmmscore.Client on a grpc.aio channel; the calls are coroutines, stream() is not (it must
    be called inside a running event loop)."""

    def __init__(self, target: Union[str, grpc.aio.Channel], *,
                 credentials: Optional[grpc.ChannelCredentials] = None,
                 token: Optional[str] = None,
                 options: Sequence[Tuple[str, Any]] = ()) -> None:
        self._channel, self._owned = _wire.open_channel(grpc.aio, target, credentials, options)
        self._token = token
        self._scorer = scorer_pb2_grpc.ScorerStub(self._channel)
        self._admin = model_admin_pb2_grpc.ModelAdminStub(self._channel)
        self._health = self._channel.unary_unary(_wire.HEALTH_CHECK_METHOD)

    @property
    def channel(self) -> grpc.aio.Channel:
        return self._channel

    async def close(self) -> None:
        if self._owned:
            await self._channel.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

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
        """As gmmscore.Client.stream."""
        config = _wire.stream_config(
            models, window=window, encoding=encoding, beam=beam, max_states=max_states,
            fusion=fusion, weights=weights, select_window=select_window,
            max_latency_ms=max_latency_ms, state_subset=state_subset, dim=dim, audio=audio,
            stream_id=stream_id, keep_frames=keep_frames)

        async def model_dim(name: str) -> int:
            return (await self.get_model(name)).dim

        return ScoreStream(self._scorer, config, chunk_frames=chunk_frames, timeout=timeout,
                           model_dim=model_dim)

    def stream_group(self, *, timeout: Optional[float] = None) -> StreamGroup:
        """As gmmscore.Client.stream_group (not a coroutine: call it inside a running event
        loop)."""

        async def model_dim(name: str) -> int:
            return (await self.get_model(name)).dim

        return StreamGroup(self._scorer, timeout=timeout, model_dim=model_dim)

    async def score(self, models: Union[str, Sequence[str]], frames: np.ndarray,
                    **stream_options: Any) -> np.ndarray:
        async with self.stream(models, **stream_options) as s:
            await s.push_frames(frames)
            await s.end()
            return await s.collect()

    async def align(self, model: str, features: np.ndarray, graph: bytes, *,
                    utterance_id: str = "", beam: float = 0.0, retry_beam: float = 0.0,
                    transition_scale: float = 0.0, self_loop_scale: float = 0.0,
                    acoustic_scale: float = 0.0,
                    timeout: Optional[float] = ALIGN_TIMEOUT_S) -> AlignResult:
        request = _wire.align_request(
            model, features, graph, utterance_id=utterance_id, beam=beam, retry_beam=retry_beam,
            transition_scale=transition_scale, self_loop_scale=self_loop_scale,
            acoustic_scale=acoustic_scale)
        return _wire.align_result(await _call(self._scorer.Align(request, timeout=timeout)))

    async def health(self, service: str = "", *,
                     timeout: Optional[float] = HEALTH_TIMEOUT_S) -> bool:
        response = await _call(self._health(_wire.health_request(service), timeout=timeout))
        return _wire.health_status(response) == "SERVING"

    async def list_models(self, *, timeout: Optional[float] = READ_TIMEOUT_S) -> List[ModelInfo]:
        response = await _call(self._admin.ListModels(model_admin_pb2.ListModelsRequest(),
                                                      timeout=timeout))
        return [_wire.model_info(m) for m in response.models]

    async def get_model(self, name: str, *,
                        timeout: Optional[float] = READ_TIMEOUT_S) -> ModelInfo:
        return _wire.model_info(await _call(self._admin.GetModel(
            model_admin_pb2.GetModelRequest(name=name), timeout=timeout)))

    async def load_model(self, name: str, path: str, *, replace: bool = False,
                         timeout: Optional[float] = None) -> ModelInfo:
        request = model_admin_pb2.LoadModelRequest(name=name, path=path, replace=replace)
        return _wire.model_info(await _call(self._admin.LoadModel(
            request, timeout=timeout, metadata=_wire.bearer(self._token))))

    async def unload_model(self, name: str, *, timeout: Optional[float] = None) -> ModelInfo:
        return _wire.model_info(await _call(self._admin.UnloadModel(
            model_admin_pb2.UnloadModelRequest(name=name), timeout=timeout,
            metadata=_wire.bearer(self._token))))

    async def adapt_model(self, base_model: str, name: str,
                          utterances: Sequence[AdaptUtterance], *, replace: bool = False,
                          mean_tau: Optional[float] = None, variance_tau: Optional[float] = None,
                          weight_tau: Optional[float] = None, update_flags: Optional[str] = None,
                          timeout: Optional[float] = None) -> ModelInfo:
        """As gmmscore.Client.adapt_model."""
        request = _wire.adapt_request(base_model, name, utterances, replace=replace,
                                      mean_tau=mean_tau, variance_tau=variance_tau,
                                      weight_tau=weight_tau, update_flags=update_flags)
        return _wire.model_info(await _call(self._admin.AdaptModel(
            request, timeout=timeout, metadata=_wire.bearer(self._token))))
