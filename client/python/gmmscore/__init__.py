"""Python client of gmmscored, the GMM acoustic-scoring daemon (proto/gmmscore/v1).

    import numpy as np, gmmscore

    with gmmscore.Client("localhost:50051") as client:
        with client.stream("mono", encoding="relative16") as stream:
            stream.push_frames(features)          # float32 [frames, dim]
            stream.end()
            for window in stream:                 # ScoredWindow, in frame order
                print(window.first_frame, window.best_state)

Audio streams (the server computes the features with one of its front ends)::

    stream = client.stream("mono", audio=gmmscore.AudioSpec("online", 16000))
    stream.push_audio(samples)                    # int16 [samples]

A stream that keeps its frames (``keep_frames``, with a ``stream_id``) can adapt a model to its
speaker (``client.adapt_model``, the admin token needed), e.g. to the windows' best states::

    client.adapt_model("mono", "mono-spk1", [gmmscore.AdaptUtterance(
        from_stream="call-17", pdfs=np.concatenate([w.best_state for w in windows]))])

Many streams on one call (ScoreStreams: far less gRPC work per window for a backend that runs
hundreds)::

    with client.stream_group() as group:
        streams = [group.stream("mono", stream_id=f"caller-{i}") for i in range(300)]
        ...                                       # each a ScoreStream in all but its transport

gmmscore.aio.Client is the same for asyncio. Errors are GmmscoreError (with the gRPC status
code); inputs of the wrong dtype or shape raise ValueError before anything is sent.
"""

from ._types import (AdaptUtterance, AlignResult, AudioSpec, GmmscoreError, ModelInfo, ModelVersion,
                     ScoredWindow, SparseScores)
from .client import Client
from .group import GroupStream, StreamGroup
from .stream import ScoreStream

__version__ = "0.1.0"

__all__ = [
    "AdaptUtterance",
    "AlignResult",
    "AudioSpec",
    "Client",
    "GmmscoreError",
    "GroupStream",
    "ModelInfo",
    "ModelVersion",
    "ScoreStream",
    "ScoredWindow",
    "SparseScores",
    "StreamGroup",
    "__version__",
]
