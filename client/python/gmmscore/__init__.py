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

gmmscore.aio.Client is the same for asyncio. Errors are GmmscoreError (with the gRPC status
code); inputs of the wrong dtype or shape raise ValueError before anything is sent.
"""

from ._types import (AlignResult, AudioSpec, GmmscoreError, ModelInfo, ModelVersion, ScoredWindow,
                     SparseScores)
from .client import Client
from .stream import ScoreStream

__version__ = "0.1.0"

__all__ = [
    "AlignResult",
    "AudioSpec",
    "Client",
    "GmmscoreError",
    "ModelInfo",
    "ModelVersion",
    "ScoreStream",
    "ScoredWindow",
    "SparseScores",
    "__version__",
]
