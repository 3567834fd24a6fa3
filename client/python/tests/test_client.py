"""The Python client against a real gmmscored and the gmmscore command.

Environment: GMMSCORED (the daemon), GMMSCORE (the command line tool), TESTDATA (tests/data of
the repository); PYTHONPATH must hold the built package (<build>/client/python). CTest sets them
(test python_client); by hand:

    PYTHONPATH=build/client/python GMMSCORED=build/server/gmmscored GMMSCORE=build/tools/gmmscore \
    TESTDATA=tests/data python3 -m unittest -v client/python/tests/test_client.py
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import unittest
import wave
from typing import IO, Dict, List, Optional, Tuple

import grpc
import numpy as np

import gmmscore
import gmmscore.aio

FRONT_END_CONF = "--use-energy=false\n--dither=0\n--cmvn=online\n--delta-order=2\n"
CARDS_DIR = "/usr/share/pocketsphinx/test/data/cards"
TOKEN = "python-client-test-token"


def _env_path(name: str) -> Optional[str]:
    value = os.environ.get(name)
    return value if value and os.path.exists(value) else None


def read_kaldi_matrices(path: str) -> Dict[str, np.ndarray]:
    """A binary Kaldi archive of float ("FM") or double ("DM") matrices."""
    with open(path, "rb") as f:
        data = f.read()
    out: Dict[str, np.ndarray] = {}
    at = 0
    while at < len(data):
        space = data.index(b" ", at)
        key = data[at:space].decode()
        at = space + 1
        if data[at:at + 2] != b"\0B":
            raise ValueError(f"{path}: {key} is not binary")
        at += 2
        kind = data[at:at + 3]
        at += 3
        if kind not in (b"FM ", b"DM "):
            raise ValueError(f"{path}: {key}: unsupported matrix type {kind!r}")
        rows_size, rows, cols_size, cols = struct.unpack_from("<bibi", data, at)
        assert rows_size == 4 and cols_size == 4
        at += 10
        dtype = "<f4" if kind == b"FM " else "<f8"
        count = rows * cols
        out[key] = np.frombuffer(data, dtype=dtype, count=count, offset=at).reshape(rows, cols)
        out[key] = out[key].astype(np.float32)
        at += count * np.dtype(dtype).itemsize
    return out


def read_int_archive(path: str) -> Dict[str, List[int]]:
    """A text archive of int vectors (ali.txt): KEY v1 v2 ..."""
    out = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields:
                out[fields[0]] = [int(v) for v in fields[1:]]
    return out


def graph_bytes(archive: bytes, keys: List[str]) -> Dict[str, bytes]:
    """Each key's binary FST in a graphs archive: "KEY " and the FST, up to the next entry (as
    tests/server_align_test.cc splits it)."""
    magic = b"\xd6\xfd\xb2\x7e"
    starts = sorted((archive.index(k.encode() + b" " + magic), k) for k in keys)
    bounds = [s for s, _ in starts[1:]] + [len(archive)]
    return {k: archive[s + len(k) + 1:end] for (s, k), end in zip(starts, bounds)}


def read_wav(path: str) -> Tuple[np.ndarray, int]:
    with wave.open(path, "rb") as w:
        assert w.getsampwidth() == 2, path
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        return pcm.reshape(-1, w.getnchannels())[:, 0].astype(np.int16), w.getframerate()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerTestCase(unittest.TestCase):
    """Starts one gmmscored for the class: model mono, front end online, a model root and an
    admin token."""

    server: subprocess.Popen
    log: IO[str]
    target: str
    tmp: str
    conf: str
    root: str
    gmmscore_cli: str
    data: str

    @classmethod
    def setUpClass(cls) -> None:
        daemon, cli = _env_path("GMMSCORED"), _env_path("GMMSCORE")
        data = os.environ.get("TESTDATA", "")
        if not daemon or not cli or not os.path.isdir(os.path.join(data, "kaldi-mono")):
            raise unittest.SkipTest("set GMMSCORED, GMMSCORE and TESTDATA (tests/data) to run")
        cls.gmmscore_cli, cls.data = cli, os.path.join(data, "kaldi-mono")
        cls.tmp = tempfile.mkdtemp(prefix="gmmscore-python-")
        cls.conf = os.path.join(cls.tmp, "online.conf")
        with open(cls.conf, "w") as f:
            f.write(FRONT_END_CONF)
        cls.root = os.path.join(cls.tmp, "models")
        os.mkdir(cls.root)
        shutil.copy(os.path.join(cls.data, "final.mdl"), os.path.join(cls.root, "mono.mdl"))
        token_file = os.path.join(cls.tmp, "token")
        with open(token_file, "w") as f:
            f.write(TOKEN + "\n")
        for _ in range(3):  # the port may be taken between free_port() and the bind
            port = free_port()
            cls.target = f"127.0.0.1:{port}"
            cls.log = open(os.path.join(cls.tmp, "gmmscored.log"), "w+")
            cls.server = subprocess.Popen(
                [daemon, "--plaintext", f"--listen={cls.target}",
                 f"--model=mono={os.path.join(cls.data, 'final.mdl')}",
                 f"--front-end=online={cls.conf}", f"--model-root={cls.root}",
                 f"--admin-token-file={token_file}"],
                stdout=cls.log, stderr=subprocess.STDOUT)
            if cls._wait_until_serving():
                return
            cls._stop_server()
        cls.log.seek(0)
        raise RuntimeError("gmmscored did not start:\n" + cls.log.read())

    @classmethod
    def _wait_until_serving(cls) -> bool:
        with gmmscore.Client(cls.target) as client:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and cls.server.poll() is None:
                try:
                    if client.health(timeout=1):
                        return True
                except gmmscore.GmmscoreError:
                    time.sleep(0.1)
        return False

    @classmethod
    def _stop_server(cls) -> None:
        if cls.server.poll() is None:
            cls.server.send_signal(signal.SIGTERM)
            try:
                cls.server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                cls.server.kill()
                cls.server.wait()
        cls.log.close()

    @classmethod
    def tearDownClass(cls) -> None:
        cls._stop_server()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self) -> None:
        self.client = gmmscore.Client(self.target, token=TOKEN)

    def tearDown(self) -> None:
        self.client.close()

    def cli(self, *args: str) -> None:
        result = subprocess.run([self.gmmscore_cli, *args], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, f"gmmscore {' '.join(args)}:\n{result.stderr}")

    def offline_scores(self, feats_rspec: str) -> Dict[str, np.ndarray]:
        out = os.path.join(self.tmp, "scores.ark")
        self.cli("score", "--quiet", "--model", os.path.join(self.data, "final.mdl"), "--feats",
                 feats_rspec, "--out", f"ark:{out}")
        return read_kaldi_matrices(out)

    def stream_features(self, feats: np.ndarray, **options) -> List[gmmscore.ScoredWindow]:
        """Pushes in uneven pieces, then reads every window."""
        with self.client.stream("mono", **options) as s:
            for piece in np.array_split(feats, [7, 8, 60, 61, 200]):
                s.push_frames(piece)
            s.end()
            windows = list(s)
        self.assertEqual(sum(w.num_frames for w in windows), feats.shape[0])
        return windows


class FeatureStreamTest(ServerTestCase):
    feats: Dict[str, np.ndarray]
    offline: Dict[str, np.ndarray]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.feats = read_kaldi_matrices(os.path.join(cls.data, "feats.ark"))

    def setUp(self) -> None:
        super().setUp()
        if not hasattr(type(self), "offline"):
            type(self).offline = self.offline_scores(f"ark:{os.path.join(self.data, 'feats.ark')}")

    def test_float32_equals_gmmscore_score(self) -> None:
        self.assertEqual(len(self.feats), 6)
        for key, feats in self.feats.items():
            windows = self.stream_features(feats, encoding="float32", window=10, stream_id=key)
            scores = np.concatenate([w.scores for w in windows])
            self.assertTrue(np.array_equal(scores, self.offline[key]), key)
            self.assertEqual([w.first_frame for w in windows],
                             list(range(0, feats.shape[0], 10)))
            self.assertTrue(all(w.stream_id == key for w in windows))
            self.assertEqual(windows[0].models, (gmmscore.ModelVersion("mono", 1),))
            best_state = np.concatenate([w.best_state for w in windows])
            best_score = np.concatenate([w.best_score for w in windows])
            self.assertTrue(np.array_equal(best_score, scores.max(axis=1)))
            self.assertTrue(np.array_equal(scores[np.arange(len(scores)), best_state], best_score))

    def test_relative16_float16_and_beam_sparse_against_float32(self) -> None:
        for key, feats in self.feats.items():
            exact = self.offline[key]
            best = exact.max(axis=1, keepdims=True)
            rel = np.concatenate([w.scores for w in self.stream_features(feats, window=25)])
            near = exact > best - 255.0
            self.assertGreater(near.sum(), 0)
            err = np.abs(rel - exact)[near]
            self.assertLessEqual(err.max(), 1 / 512 + 1e-4, key)
            self.assertTrue(np.all(rel[~near] <= best.repeat(exact.shape[1], 1)[~near] - 254.99))

            f16 = self.client.score("mono", feats, encoding="float16")
            self.assertTrue(np.all(np.abs(f16 - exact) <= np.abs(exact) * 2.0**-11), key)

            windows = self.stream_features(feats, encoding="beam-sparse", beam=8.0, max_states=5)
            sparse = np.concatenate([w.scores for w in windows])
            kept = np.isfinite(sparse)
            self.assertTrue(np.array_equal(sparse[kept], exact[kept]))  # float32 as sent
            self.assertTrue(np.all(kept.sum(axis=1) <= 5) and np.all(kept.sum(axis=1) >= 1))
            self.assertTrue(np.all(exact[kept] >= best.repeat(exact.shape[1], 1)[kept] - 8.0))
            rows = np.arange(len(exact))
            self.assertTrue(kept[rows, exact.argmax(axis=1)].all(), "the best state is kept")
            w = windows[0]
            self.assertEqual(w.encoding, "beam-sparse")
            states, scores = w.sparse.frame(1)
            self.assertEqual(len(states), w.sparse.counts[1])
            self.assertEqual(states[0], w.best_state[1])
            self.assertTrue(np.all(np.diff(scores) <= 0))

    def test_state_subset(self) -> None:
        feats = self.feats["cards-001"]
        subset = [7, 3, 30]
        scores = self.client.score("mono", feats, encoding="float32", state_subset=subset)
        self.assertEqual(scores.shape, (feats.shape[0], 31))
        self.assertTrue(np.array_equal(scores[:, subset], self.offline["cards-001"][:, subset]))
        others = np.setdiff1d(np.arange(31), subset)
        self.assertTrue(np.all(scores[:, others] == -np.inf))

    def test_pushing_a_long_stream_before_reading_does_not_stall(self) -> None:
        # 40x the longest utterance: hundreds of windows, far beyond what the server keeps out
        # (--max-stream-windows) and what HTTP/2 buffers, all pushed before the first read.
        key = max(self.feats, key=lambda k: self.feats[k].shape[0])
        feats = np.concatenate([self.feats[key]] * 40)
        with self.client.stream("mono", encoding="float32", window=10, timeout=120) as s:
            s.push_frames(feats)
            s.end()
            scores = s.collect()
        self.assertTrue(np.array_equal(scores, np.concatenate([self.offline[key]] * 40)))

    def test_pushing_from_one_thread_while_reading_in_another(self) -> None:
        feats = self.feats["lib-0880"]
        s = self.client.stream("mono", encoding="float32", dim=39)

        def push() -> None:
            for at in range(0, feats.shape[0], 13):
                s.push_frames(feats[at:at + 13])
                time.sleep(0.001)
            s.end()

        pusher = threading.Thread(target=push)
        pusher.start()
        scores = s.collect()
        pusher.join()
        s.close()
        self.assertTrue(np.array_equal(scores, self.offline["lib-0880"]))

    def test_bad_inputs_raise_value_error_before_sending(self) -> None:
        feats = self.feats["cards-001"]
        with self.client.stream("mono", encoding="float32") as s:
            bad = [feats.astype(np.float64), feats[0], feats[None], feats[:0, :0],
                   feats.tolist(), feats.astype(np.float16)]
            nan = feats.copy()
            nan[5, 3] = np.nan
            bad.append(nan)
            for frames in bad:
                with self.assertRaises(ValueError):
                    s.push_frames(frames)
                self.assertEqual(s.frames_sent, 0)
            with self.assertRaises(ValueError):
                s.push_audio(np.zeros(100, dtype=np.int16))  # not an audio stream
            s.push_frames(feats[:20])
            with self.assertRaises(ValueError):  # the stream is 39-dimensional now
                s.push_frames(feats[:, :38].copy())
            s.push_frames(feats[20:])
            s.end()
            self.assertTrue(np.array_equal(s.collect(), self.offline["cards-001"]))
        with self.client.stream("mono", audio=gmmscore.AudioSpec("online", 16000)) as s:
            for samples in (np.zeros(100, dtype=np.int32), np.zeros(100, dtype=np.float32),
                            np.zeros((100, 2), dtype=np.int16), [0, 1, 2]):
                with self.assertRaises(ValueError):
                    s.push_audio(samples)
            self.assertEqual(s.samples_sent, 0)
            with self.assertRaises(ValueError):
                s.push_frames(feats)
        for options in ({"encoding": "float64"}, {"encoding": "beam-sparse"},
                        {"fusion": "average"}, {"window": -1}, {"weights": [0.5, 0.5]},
                        {"dim": 0}):
            with self.assertRaises(ValueError, msg=str(options)):
                self.client.stream("mono", **options)
        with self.assertRaises(ValueError):
            self.client.stream([])

    def test_errors_carry_the_grpc_status(self) -> None:
        feats = self.feats["cards-001"]
        with self.client.stream("nonesuch", stream_id="lost") as s:
            with self.assertRaises(gmmscore.GmmscoreError) as caught:
                s.push_frames(feats)
                s.end()
                list(s)
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("nonesuch", caught.exception.details)
        self.assertEqual(s.error.code, grpc.StatusCode.NOT_FOUND)
        # A stream that never sent frames still learns its dimension (and the model's absence).
        with self.assertRaises(gmmscore.GmmscoreError) as caught:
            with self.client.stream("nonesuch") as s:
                s.end()
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        with self.client.stream("mono", dim=13) as s:  # the model is 39-dimensional
            with self.assertRaises(gmmscore.GmmscoreError) as caught:
                s.push_frames(feats[:, :13].copy())
                s.end()
                list(s)
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        with self.assertRaises(gmmscore.GmmscoreError) as caught:
            self.client.get_model("nonesuch")
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        with gmmscore.Client(f"127.0.0.1:{free_port()}") as nobody:
            with self.assertRaises(gmmscore.GmmscoreError) as caught:
                nobody.health(timeout=2)
        self.assertIn(caught.exception.code,
                      (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED))
        # An empty stream is fine.
        with self.client.stream("mono") as s:
            s.end()
            self.assertEqual(s.collect().shape, (0, 0))

    def test_align_returns_kaldis_alignment(self) -> None:
        kaldi = read_int_archive(os.path.join(self.data, "ali.txt"))
        with open(os.path.join(self.data, "graphs.fsts"), "rb") as f:
            graphs = graph_bytes(f.read(), list(kaldi))
        for key in ("cards-001", "lib-0880"):
            result = self.client.align("mono", self.feats[key], graphs[key], utterance_id=key,
                                       beam=6, retry_beam=40, transition_scale=1.0,
                                       self_loop_scale=0.1, acoustic_scale=0.1)
            self.assertEqual(result.utterance_id, key)
            self.assertEqual(result.transition_ids.tolist(), kaldi[key])
            self.assertEqual(result.model, gmmscore.ModelVersion("mono", 1))
        with self.assertRaises(ValueError):
            self.client.align("mono", self.feats["cards-001"].astype(np.float64),
                              graphs["cards-001"])
        with self.assertRaises(gmmscore.GmmscoreError) as caught:
            self.client.align("mono", self.feats["cards-001"], b"not a graph")
        self.assertEqual(caught.exception.code, grpc.StatusCode.INVALID_ARGUMENT)


class StreamGroupTest(ServerTestCase):
    """Many streams on one ScoreStreams call, each as a stream of its own would be."""

    feats: Dict[str, np.ndarray]
    offline: Dict[str, np.ndarray]

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.feats = read_kaldi_matrices(os.path.join(cls.data, "feats.ark"))

    def setUp(self) -> None:
        super().setUp()
        if not hasattr(type(self), "offline"):
            type(self).offline = self.offline_scores(f"ark:{os.path.join(self.data, 'feats.ark')}")

    def test_streams_on_one_call_equal_offline_scores(self) -> None:
        keys = sorted(self.feats)
        with self.client.stream_group() as group:
            streams = {key: group.stream("mono", encoding="float32", window=3 + i, stream_id=key,
                                         chunk_frames=7)
                       for i, key in enumerate(keys)}
            # Interleaved pushes from one thread, in uneven pieces; every stream read after.
            pieces = {key: np.array_split(self.feats[key], [5, 6, 50, 120]) for key in keys}
            for step in range(5):
                for key in keys:
                    streams[key].push_frames(pieces[key][step])
            for key in keys:
                streams[key].end()
            for i, key in enumerate(keys):
                windows = list(streams[key])
                self.assertTrue(np.array_equal(np.concatenate([w.scores for w in windows]),
                                               self.offline[key]), key)
                self.assertEqual(windows[0].num_frames, 3 + i)
                self.assertTrue(all(w.stream_id == key for w in windows))
                self.assertIsNone(streams[key].error)

    def test_a_streams_error_or_cancel_ends_that_stream_alone(self) -> None:
        key = sorted(self.feats)[0]
        feats = self.feats[key]
        with self.client.stream_group() as group:
            good = group.stream("mono", encoding="relative16", stream_id="good")
            unknown = group.stream("no-such-model", stream_id="unknown", dim=feats.shape[1])
            cancelled = group.stream("mono", stream_id="cancelled")
            good.push_frames(feats[:100])
            cancelled.push_frames(feats[:100])
            with self.assertRaises(gmmscore.GmmscoreError) as raised:
                list(unknown)
            self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)
            self.assertIn("no-such-model", raised.exception.details)
            cancelled.cancel()
            with self.assertRaises(gmmscore.GmmscoreError) as raised:
                list(cancelled)
            self.assertEqual(raised.exception.code, grpc.StatusCode.CANCELLED)
            good.push_frames(feats[100:])
            good.end()
            scores, offline = good.collect(), self.offline[key]
            near = offline.max(axis=1, keepdims=True) - offline < 250  # RELATIVE16 saturates past
            self.assertLessEqual(float(np.abs(scores - offline)[near].max()), 1 / 512 + 1e-4)
            # A new stream after those ended, on the same call.
            again = group.stream("mono", encoding="float32", stream_id="again")
            again.push_frames(feats)
            again.end()
            self.assertTrue(np.array_equal(again.collect(), self.offline[key]))

    def test_closing_the_group_ends_its_open_streams(self) -> None:
        key = sorted(self.feats)[1]
        group = self.client.stream_group()
        stream = group.stream("mono", encoding="float32", stream_id="open", window=10)
        stream.push_frames(self.feats[key])
        group.close()  # the call's half-close half-closes the stream: its last window comes
        self.assertTrue(stream.wait(5))
        self.assertTrue(np.array_equal(stream.collect(), self.offline[key]))
        with self.assertRaises(gmmscore.GmmscoreError):
            group.stream("mono")

    def test_the_asyncio_group(self) -> None:
        keys = sorted(self.feats)
        feats = self.feats[keys[0]]

        async def run() -> None:
            async with gmmscore.aio.Client(self.target) as client:
                async with client.stream_group() as group:
                    streams = {key: group.stream("mono", encoding="float32", window=3 + i,
                                                 stream_id=key, chunk_frames=7)
                               for i, key in enumerate(keys)}
                    unknown = group.stream("no-such-model", stream_id="unknown")
                    cancelled = group.stream("mono", stream_id="cancelled")
                    await cancelled.push_frames(feats[:100])
                    pieces = {key: np.array_split(self.feats[key], [5, 6, 50, 120])
                              for key in keys}
                    for step in range(5):  # interleaved, in uneven pieces
                        for key in keys:
                            await streams[key].push_frames(pieces[key][step])
                    await unknown.push_frames(feats[:10])
                    with self.assertRaises(gmmscore.GmmscoreError) as raised:
                        await unknown.collect()
                    self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)
                    cancelled.cancel()
                    with self.assertRaises(gmmscore.GmmscoreError) as raised:
                        await cancelled.collect()
                    self.assertEqual(raised.exception.code, grpc.StatusCode.CANCELLED)
                    for key in keys[1:]:
                        await streams[key].end()

                    async def read(key: str) -> None:
                        windows = [w async for w in streams[key]]
                        self.assertTrue(np.array_equal(np.concatenate([w.scores for w in windows]),
                                                       self.offline[key]), key)
                        self.assertTrue(all(w.stream_id == key for w in windows))

                    await asyncio.gather(*(read(key) for key in keys[1:]))
                # Leaving the group half-closed the call: the stream left open ended with it.
                await streams[keys[0]].wait()
                self.assertTrue(np.array_equal(await streams[keys[0]].collect(),
                                               self.offline[keys[0]]))
                with self.assertRaises(gmmscore.GmmscoreError):
                    group.stream("mono")

        asyncio.run(run())


class AdminAndHealthTest(ServerTestCase):
    def test_health_and_list_models(self) -> None:
        self.assertTrue(self.client.health())
        with self.assertRaises(gmmscore.GmmscoreError) as caught:
            self.client.health("no.such.Service")
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        models = self.client.list_models()
        self.assertEqual([m.name for m in models], ["mono"])
        mono = models[0]
        self.assertEqual((mono.status, mono.num_states, mono.dim, mono.num_gaussians, mono.format),
                         ("READY", 56, 39, 677, "kaldi"))
        self.assertEqual(self.client.get_model("mono"), mono)

    def test_load_and_unload_need_the_token(self) -> None:
        with gmmscore.Client(self.target) as anonymous:
            with self.assertRaises(gmmscore.GmmscoreError) as caught:
                anonymous.load_model("mono2", "mono.mdl")
            self.assertEqual(caught.exception.code, grpc.StatusCode.UNAUTHENTICATED)
        with gmmscore.Client(self.target, token="wrong") as wrong:
            with self.assertRaises(gmmscore.GmmscoreError) as caught:
                wrong.load_model("mono2", "mono.mdl")
            self.assertEqual(caught.exception.code, grpc.StatusCode.PERMISSION_DENIED)
        info = self.client.load_model("mono2", "mono.mdl")
        self.assertEqual((info.name, info.status, info.num_states), ("mono2", "READY", 56))
        self.assertEqual(sorted(m.name for m in self.client.list_models()), ["mono", "mono2"])
        feats = np.random.default_rng(1).standard_normal((30, 39)).astype(np.float32)
        self.assertTrue(np.array_equal(self.client.score("mono2", feats, encoding="float32"),
                                       self.client.score("mono", feats, encoding="float32")))
        info = self.client.unload_model("mono2")
        self.assertIn(info.status, ("UNLOADED", "UNLOADING"))
        with self.assertRaises(gmmscore.GmmscoreError) as caught:
            self.client.get_model("mono2")
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)


    def test_adapt_model_to_what_a_stream_kept(self) -> None:
        feats = read_kaldi_matrices(os.path.join(self.data, "feats.ark"))["cards-001"]
        ali = read_int_archive(os.path.join(self.data, "ali.txt"))["cards-001"]
        with self.client.stream("mono", encoding="float32", stream_id="py-speaker",
                                keep_frames=1000) as s:
            s.push_frames(feats)
            s.end()
            best = np.concatenate([w.best_state for w in s])
        kept = self.client.adapt_model(
            "mono", "py-kept", [gmmscore.AdaptUtterance(from_stream="py-speaker", alignment=ali)])
        sent = self.client.adapt_model(
            "mono", "py-sent", [gmmscore.AdaptUtterance(frames=feats, alignment=ali)])
        self.assertEqual((kept.name, kept.status, kept.format), ("py-kept", "READY", "adapted"))
        self.assertEqual(sent.num_gaussians, 677)
        self.assertTrue(np.array_equal(self.client.score("py-kept", feats, encoding="float32"),
                                       self.client.score("py-sent", feats, encoding="float32")))
        # The model's own first-pass labels (best_state), as a client without a decoder has.
        self.client.adapt_model("mono", "py-best", [gmmscore.AdaptUtterance(
            from_stream="py-speaker", pdfs=best)], mean_tau=5.0)
        self.assertFalse(np.array_equal(self.client.score("py-best", feats, encoding="float32"),
                                        self.client.score("mono", feats, encoding="float32")))
        with self.assertRaises(gmmscore.GmmscoreError) as caught:
            self.client.adapt_model("mono", "x", [gmmscore.AdaptUtterance(
                from_stream="nobody", pdfs=best)])
        self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
        with self.assertRaises(ValueError):
            self.client.adapt_model("mono", "x", [gmmscore.AdaptUtterance(
                frames=feats, from_stream="py-speaker", pdfs=best)])
        with self.assertRaises(ValueError):
            self.client.stream("mono", keep_frames=10)  # no stream_id to keep them under
        for name in ("py-kept", "py-sent", "py-best"):
            self.client.unload_model(name)


class AudioStreamTest(ServerTestCase):
    def test_audio_equals_compute_feats_and_score(self) -> None:
        wavs = sorted(os.path.join(CARDS_DIR, f) for f in os.listdir(CARDS_DIR)
                      if f.endswith(".wav")) if os.path.isdir(CARDS_DIR) else []
        if not wavs:
            self.skipTest(f"no WAVE files in {CARDS_DIR} (Debian package pocketsphinx-testdata)")
        scp = os.path.join(self.tmp, "wav.scp")
        with open(scp, "w") as f:
            for path in wavs:
                f.write(f"{os.path.basename(path)[:-4]} {path}\n")
        feats = os.path.join(self.tmp, "audio-feats.ark")
        self.cli("compute-feats", f"--config={self.conf}", f"scp:{scp}", f"ark:{feats}")
        offline = self.offline_scores(f"ark:{feats}")
        rng = np.random.default_rng(5)
        for path in wavs:
            key = os.path.basename(path)[:-4]
            samples, rate = read_wav(path)
            self.assertEqual(rate, 16000)
            with self.client.stream("mono", encoding="float32", stream_id=key, chunk_frames=3,
                                    audio=gmmscore.AudioSpec("online", rate)) as s:
                at = 0
                while at < len(samples):  # pieces of 1 to 2000 samples, as a capture would
                    n = int(rng.integers(1, 2001))
                    s.push_audio(samples[at:at + n])
                    at += n
                s.end()
                scores = s.collect()
            self.assertEqual(s.samples_sent, len(samples))
            self.assertEqual(scores.shape, offline[key].shape, key)
            self.assertTrue(np.array_equal(scores, offline[key]), key)

    def test_audio_errors(self) -> None:
        samples = np.zeros(1600, dtype=np.int16)
        for spec, code in ((gmmscore.AudioSpec("nonesuch", 16000), grpc.StatusCode.NOT_FOUND),
                           (gmmscore.AudioSpec("online", 8000), grpc.StatusCode.INVALID_ARGUMENT)):
            with self.client.stream("mono", audio=spec) as s:
                with self.assertRaises(gmmscore.GmmscoreError) as caught:
                    s.push_audio(samples)
                    s.end()
                    list(s)
            self.assertEqual(caught.exception.code, code, spec)


class AsyncioTest(ServerTestCase):
    def test_asyncio_client_gives_the_sync_clients_scores(self) -> None:
        feats = read_kaldi_matrices(os.path.join(self.data, "feats.ark"))
        samples, rate = (read_wav(os.path.join(CARDS_DIR, "001.wav"))
                         if os.path.exists(os.path.join(CARDS_DIR, "001.wav")) else (None, 0))
        expected: Dict[Tuple[str, str], np.ndarray] = {}
        expected_audio = None
        for encoding in ("float32", "relative16", "beam-sparse"):
            for key in ("cards-001", "lib-0880"):
                expected[encoding, key] = self.client.score("mono", feats[key], encoding=encoding,
                                                            beam=6.0)
        if samples is not None:
            with self.client.stream("mono", encoding="relative16",
                                    audio=gmmscore.AudioSpec("online", rate)) as s:
                s.push_audio(samples)
                s.end()
                expected_audio = s.collect()

        async def run() -> None:
            async with gmmscore.aio.Client(self.target, token=TOKEN) as client:
                self.assertTrue(await client.health())
                self.assertEqual([m.name for m in await client.list_models()], ["mono"])
                self.assertEqual((await client.get_model("mono")).dim, 39)

                async def one(encoding: str, key: str) -> None:
                    async with client.stream("mono", encoding=encoding, beam=6.0,
                                             stream_id=key) as s:
                        frames = feats[key]
                        for at in range(0, frames.shape[0], 50):
                            await s.push_frames(frames[at:at + 50])
                        await s.end()
                        windows = [w async for w in s]
                    self.assertEqual([w.first_frame for w in windows],
                                     list(range(0, frames.shape[0], 10)))
                    scores = np.concatenate([w.scores for w in windows])
                    self.assertTrue(np.array_equal(scores, expected[encoding, key]),
                                    (encoding, key))

                await asyncio.gather(*(one(e, k) for e, k in expected))
                if samples is not None:
                    async with client.stream("mono", encoding="relative16",
                                             audio=gmmscore.AudioSpec("online", rate)) as s:
                        await s.push_audio(samples)
                        await s.end()
                        self.assertTrue(np.array_equal(await s.collect(), expected_audio))
                # A long stream pushed before reading, errors, and ValueErrors as in the sync API.
                long = np.concatenate([feats["lib-0880"]] * 20)
                self.assertTrue(np.array_equal(
                    await client.score("mono", long, encoding="float32", timeout=120),
                    np.concatenate([expected["float32", "lib-0880"]] * 20)))
                async with client.stream("nonesuch") as s:
                    with self.assertRaises(gmmscore.GmmscoreError) as caught:
                        await s.push_frames(feats["cards-001"])
                        await s.end()
                        await s.collect()
                self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
                async with client.stream("mono") as s:
                    with self.assertRaises(ValueError):
                        await s.push_frames(feats["cards-001"].astype(np.float64))
                    self.assertEqual(s.frames_sent, 0)
                with self.assertRaises(gmmscore.GmmscoreError) as caught:
                    await client.get_model("nonesuch")
                self.assertEqual(caught.exception.code, grpc.StatusCode.NOT_FOUND)
                info = await client.load_model("mono3", "mono.mdl")
                self.assertEqual(info.status, "READY")
                self.assertIn((await client.unload_model("mono3")).status,
                              ("UNLOADED", "UNLOADING"))

        asyncio.run(run())


if __name__ == "__main__":
    unittest.main()
