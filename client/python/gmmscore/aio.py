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
from typing import Any, AsyncIterator, Awaitable, Callable, List, Optional, Sequence, Tuple, Union

import grpc
import grpc.aio
import numpy as np

from . import _wire
from ._stubs import model_admin_pb2, model_admin_pb2_grpc, scorer_pb2, scorer_pb2_grpc
from ._types import AlignResult, AudioSpec, GmmscoreError, ModelInfo, ScoredWindow
from .client import ALIGN_TIMEOUT_S, HEALTH_TIMEOUT_S, READ_TIMEOUT_S

__all__ = ["Client", "ScoreStream"]


async def _call(awaitable: Awaitable[Any]) -> Any:
    try:
        return await awaitable
    except grpc.RpcError as e:
        raise GmmscoreError.from_rpc_error(e) from None


class _Finished:
    def __init__(self, error: Optional[GmmscoreError]) -> None:
        self.error = error


class ScoreStream:
    """gmmscore.ScoreStream for asyncio: ``await push_frames/push_audio/end``, ``async for``
    over the windows. Must be made (Client.stream) inside a running event loop."""

    def __init__(self, stub: Any, config: scorer_pb2.StreamConfig, *, chunk_frames: int,
                 timeout: Optional[float],
                 model_dim: Callable[[str], Awaitable[int]]) -> None:
        if chunk_frames < 1:
            raise ValueError("stream: chunk_frames must be >= 1")
        self._config = config
        self._audio = config.HasField("audio")
        self._dim: Optional[int] = config.dim or None
        self._chunk_frames = chunk_frames
        self._model_dim = model_dim
        self._decoder = _wire.WindowDecoder(config)
        self._windows: "asyncio.Queue[Union[ScoredWindow, _Finished]]" = asyncio.Queue()
        self._lock = asyncio.Lock()  # one sender at a time
        self._config_sent = False
        self._ended = False
        self._frames_sent = 0
        self._samples_sent = 0
        self._final: Optional[GmmscoreError] = None
        self._finished: Optional[_Finished] = None
        self._cancelled = False
        self._call = stub.Score(timeout=timeout)
        self._reader = asyncio.get_running_loop().create_task(self._read())

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
        return self._final

    async def push_frames(self, frames: np.ndarray) -> None:
        """As gmmscore.ScoreStream.push_frames."""
        if self._audio:
            raise ValueError("push_frames on an audio stream (use push_audio)")
        async with self._lock:
            data = _wire.check_frames(frames, self._dim)
            self._check_open("push_frames")
            if not self._config_sent:
                self._dim = data.shape[1]
                self._config.dim = self._dim
            await self._send_config()
            for request, n in _wire.feature_requests(data, self._frames_sent, self._chunk_frames):
                await self._write(request)
                self._frames_sent += n

    async def push_audio(self, samples: np.ndarray) -> None:
        """As gmmscore.ScoreStream.push_audio."""
        if not self._audio:
            raise ValueError("push_audio on a feature stream (give Client.stream an AudioSpec)")
        data = _wire.check_audio(samples)
        per_chunk = _wire.audio_chunk_samples(self._config, self._chunk_frames)
        async with self._lock:
            self._check_open("push_audio")
            await self._send_config()
            for request, n in _wire.audio_requests(data, self._samples_sent, per_chunk):
                await self._write(request)
                self._samples_sent += n

    async def end(self) -> None:
        """Sends End and half-closes. Idempotent."""
        async with self._lock:
            if self._ended:
                return
            if not self._config_sent and not self._audio and self._dim is None:
                try:
                    self._config.dim = await self._model_dim(self._config.models[0])
                except GmmscoreError:
                    self.cancel()
                    raise
            await self._send_config()
            self._ended = True
            await self._write(_wire.end_request())
            try:
                await self._call.done_writing()
            except (grpc.RpcError, asyncio.InvalidStateError):
                await self._raise_final()
            except asyncio.CancelledError:
                if not self._cancelled:
                    raise
                await self._raise_final()

    def cancel(self) -> None:
        """Cancels the stream; the iteration then ends with CANCELLED."""
        self._cancelled = True
        self._call.cancel()

    async def close(self) -> None:
        """Cancels the stream if it has not finished, and waits for its reader task."""
        if not self._reader.done():
            self.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)

    async def __aenter__(self) -> "ScoreStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __aiter__(self) -> AsyncIterator[ScoredWindow]:
        return self

    async def __anext__(self) -> ScoredWindow:
        if self._finished is None:
            item = await self._windows.get()
            if isinstance(item, ScoredWindow):
                return item
            self._finished = item
        if self._finished.error is not None:
            raise self._finished.error
        raise StopAsyncIteration

    async def collect(self) -> np.ndarray:
        """All remaining scores, float32 [frames, width] (after end())."""
        windows: List[ScoredWindow] = [w async for w in self]
        return _wire.concatenate(windows)

    async def wait(self) -> None:
        """Waits until the stream has finished (windows may still be unread)."""
        await asyncio.shield(self._reader)

    # -- internals ------------------------------------------------------------------------------

    def _check_open(self, what: str) -> None:
        if self._ended:
            raise GmmscoreError(grpc.StatusCode.FAILED_PRECONDITION, f"{what} after end()")
        if self._reader.done():
            raise _wire.stream_ended(self._final)

    async def _send_config(self) -> None:
        if not self._config_sent:
            await self._write(_wire.config_request(self._config))
            self._config_sent = True

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
        error: Optional[GmmscoreError] = None
        try:
            while True:
                response = await self._call.read()
                if response is grpc.aio.EOF:
                    break
                self._windows.put_nowait(self._decoder.decode(response))
            code = await self._call.code()
            if code != grpc.StatusCode.OK:
                error = GmmscoreError(code, await self._call.details())
        except grpc.RpcError as e:
            error = GmmscoreError.from_rpc_error(e)
        except GmmscoreError as e:  # a response that cannot be decoded
            error = e
            self._call.cancel()
        except asyncio.CancelledError:
            error = GmmscoreError(grpc.StatusCode.CANCELLED, "the stream's reader was cancelled")
            self._call.cancel()
        except Exception as e:  # noqa: BLE001 - reported through the iteration
            error = GmmscoreError(grpc.StatusCode.UNKNOWN, f"{type(e).__name__}: {e}")
            self._call.cancel()
        self._final = error
        self._windows.put_nowait(_Finished(error))


class Client:
    """gmmscore.Client on a grpc.aio channel; the calls are coroutines, stream() is not (it must
    be called inside a running event loop)."""

    def __init__(self, target: Union[str, grpc.aio.Channel], *,
                 credentials: Optional[grpc.ChannelCredentials] = None,
                 token: Optional[str] = None,
                 options: Sequence[Tuple[str, Any]] = ()) -> None:
        if isinstance(target, grpc.aio.Channel):
            self._channel, self._owned = target, False
        elif credentials is None:
            self._channel = grpc.aio.insecure_channel(target,
                                                      options=_wire.channel_options(options))
            self._owned = True
        else:
            self._channel = grpc.aio.secure_channel(target, credentials,
                                                    options=_wire.channel_options(options))
            self._owned = True
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
        chunk_frames: int = 100,
        timeout: Optional[float] = None,
    ) -> ScoreStream:
        """As gmmscore.Client.stream."""
        config = _wire.stream_config(
            models, window=window, encoding=encoding, beam=beam, max_states=max_states,
            fusion=fusion, weights=weights, select_window=select_window,
            max_latency_ms=max_latency_ms, state_subset=state_subset, dim=dim, audio=audio,
            stream_id=stream_id)

        async def model_dim(name: str) -> int:
            return (await self.get_model(name)).dim

        return ScoreStream(self._scorer, config, chunk_frames=chunk_frames, timeout=timeout,
                           model_dim=model_dim)

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
