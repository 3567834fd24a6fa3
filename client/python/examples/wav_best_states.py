#!/usr/bin/env python3
"""Streams a WAVE file as audio to a gmmscored and prints each frame's best state.

    gmmscored --plaintext --model mono=final.mdl --front-end online=online.conf &
    PYTHONPATH=build/client/python python3 client/python/examples/wav_best_states.py \
        --server localhost:50051 --model mono --front-end online utterance.wav

The server computes the features with its front end (online.conf holds gmmscore compute-feats
options, e.g. --use-energy=false --dither=0 --cmvn=online --delta-order=2); the file must be
16-bit PCM at that front end's sample rate (its first channel is sent). A sender thread pushes
the audio in pieces of --chunk-ms (--realtime paces them as a microphone would) while the main
thread prints the windows as they come back.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import wave

import grpc
import numpy as np

import gmmscore


def read_wav(path: str) -> tuple[np.ndarray, int]:
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2:
            raise SystemExit(f"{path}: {8 * w.getsampwidth()}-bit samples; 16-bit PCM is needed")
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        return pcm.reshape(-1, w.getnchannels())[:, 0].astype(np.int16), w.getframerate()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wav", help="16-bit PCM WAVE file")
    parser.add_argument("--server", default="localhost:50051", help="HOST:PORT of gmmscored")
    parser.add_argument("--model", action="append", help="model name (repeat to fuse several)")
    parser.add_argument("--front-end", default="online", help="the server's front end")
    parser.add_argument("--encoding", default="relative16",
                        choices=["relative16", "float32", "float16", "beam-sparse"])
    parser.add_argument("--beam", type=float, default=10.0, help="for beam-sparse")
    parser.add_argument("--window", type=int, default=10, help="frames per response window")
    parser.add_argument("--chunk-ms", type=int, default=100, help="audio per push_audio call")
    parser.add_argument("--realtime", action="store_true", help="push no faster than real time")
    parser.add_argument("--ca-cert", help="PEM roots for TLS (default: plaintext)")
    args = parser.parse_args()

    samples, rate = read_wav(args.wav)
    credentials = None
    if args.ca_cert:
        with open(args.ca_cert, "rb") as f:
            credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
    with gmmscore.Client(args.server, credentials=credentials) as client:
        stream = client.stream(args.model or ["mono"], window=args.window,
                               encoding=args.encoding, beam=args.beam,
                               audio=gmmscore.AudioSpec(args.front_end, rate),
                               stream_id=args.wav)
        with stream:
            def send() -> None:
                piece = max(1, rate * args.chunk_ms // 1000)
                try:
                    for at in range(0, len(samples), piece):
                        stream.push_audio(samples[at:at + piece])
                        if args.realtime:
                            time.sleep(args.chunk_ms / 1000)
                    stream.end()
                except gmmscore.GmmscoreError:
                    pass  # the stream's error is raised by the iteration below

            sender = threading.Thread(target=send, daemon=True)
            sender.start()
            print("frame\tbest_state\tbest_score")
            try:
                for window in stream:
                    for t in range(window.num_frames):
                        print(f"{window.first_frame + t}\t{window.best_state[t]}\t"
                              f"{window.best_score[t]:.3f}")
            except gmmscore.GmmscoreError as e:
                print(f"wav_best_states: {e}", file=sys.stderr)
                return 1
            sender.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
