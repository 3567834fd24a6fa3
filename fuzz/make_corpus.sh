#!/usr/bin/env bash
# Remakes the seed corpora fuzz/corpus/<target>/ from tests/data (run from anywhere; needs a
# built gmmscore, BUILD_DIR default build, for the model conversions, python3 and protoc). The
# seeds are small on purpose (under 2 MB in all): libFuzzer mutates small inputs faster. A
# finding, once fixed, gets its reproducer copied here as fuzz/corpus/<target>/crash-<sha1>, so
# that every later run tries it first.
set -euo pipefail
cd "$(dirname "$0")/.."
gmmscore=${BUILD_DIR:-build}/tools/gmmscore
data=tests/data/kaldi-mono
out=fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Regression inputs (crash-*: reproducers of fixed findings) are kept; the rest is remade.
[ -d "$out" ] && find "$out" -type f ! -name 'crash-*' -delete
mkdir -p "$out"/{load_model,kaldi_reader,sphinx_model,feature_files,matrix_table,int32_table}
mkdir -p "$out"/{fst_table,table_specifier,stream_config,wire_codec,stream_mux_wire,training_files,audio_input}

# Models: the real Kaldi model, and a small one (4 states, 2 Gaussians, dim 3) in every format,
# with an HMM (random -> HTK gives each state an HMM, which Kaldi and native then carry).
"$gmmscore" convert random:4x2x3:7 "$tmp/small.mmf" >/dev/null 2>&1
for f in small.mdl small.txt.mdl small.gmms small_sphinx/; do
  "$gmmscore" convert "$tmp/small.mmf" "$tmp/$f" >/dev/null 2>&1
done
cp "$data/final.mdl" "$tmp"/small.{mmf,mdl,txt.mdl,gmms} "$out/load_model/"
cp "$data/final.mdl" "$tmp"/small.{mdl,txt.mdl} "$out/kaldi_reader/"
# The Sphinx directory as one input: its files joined by the separator of sphinx_model_fuzzer.cc.
python3 - "$tmp/small_sphinx" "$out/sphinx_model/small" <<'PY'
import sys
d, out = sys.argv[1:]
names = ["mdef", "means", "variances", "mixture_weights", "transition_matrices"]
open(out, "wb").write(b"\n=====\n".join(open(f"{d}/{n}", "rb").read() for n in names))
PY

# Features, tables, graphs and codec inputs cut from the Kaldi data.
python3 - "$data" "$out" <<'PY'
import struct, sys
data, out = sys.argv[1:]

def first_matrix(path, frames):
    b = open(path, "rb").read()
    key, rest = b.split(b" ", 1)
    assert rest[:6] == b"\0BFM \4"
    rows, cols = struct.unpack("<i", rest[6:10])[0], struct.unpack("<i", rest[11:15])[0]
    vals = struct.unpack(f"<{rows * cols}f", rest[15:15 + 4 * rows * cols])
    return key, [vals[r * cols:(r + 1) * cols] for r in range(min(rows, frames))]

def fm(m):  # a binary float matrix object
    return b"\0BFM \4" + struct.pack("<i", len(m)) + b"\4" + struct.pack("<i", len(m[0])) + \
        b"".join(struct.pack(f"<{len(r)}f", *r) for r in m)

def dm(m):
    return b"\0BDM \4" + struct.pack("<i", len(m)) + b"\4" + struct.pack("<i", len(m[0])) + \
        b"".join(struct.pack(f"<{len(r)}d", *r) for r in m)

def text(m):
    return b" [\n" + b"\n".join(b"  " + b" ".join(b"%g" % v for v in r) for r in m) + b" ]\n"

def write(path, b):
    open(f"{out}/{path}", "wb").write(b)

key, feats = first_matrix(f"{data}/feats.ark", 20)
_, likes = first_matrix(f"{data}/loglikes.ark", 5)
write("kaldi_reader/matrix", fm(feats[:4]))
write("kaldi_reader/matrix_double", dm(feats[:2]))
write("kaldi_reader/matrix_text", text(feats[:3]))
write("kaldi_reader/vector", b"\0BFV \4" + struct.pack("<i", 13) + struct.pack("<13f", *feats[0][:13]))
write("kaldi_reader/int_vector", b"\0B\4" + struct.pack("<i", 3) + b"".join(b"\4" + struct.pack("<i", v) for v in (2, 6, 5)))
write("matrix_table/feats.ark", key + b" " + fm(feats) + key + b"_2 " + fm(feats[:2]))
write("matrix_table/feats_double.ark", key + b" " + dm(feats[:3]))
write("matrix_table/feats.txt.ark", key + text(feats[:3]))
write("matrix_table/loglikes.ark", key + b" " + fm(likes))
# HTK (big-endian header: frames, period, bytes per frame, MFCC_D_A = 6|256|512) and Sphinx .mfc
htk = struct.pack(">iihh", len(feats), 100000, 4 * 39, 6 | 256 | 512) + \
    b"".join(struct.pack(">39f", *r) for r in feats)
mfc = struct.pack("<i", 13 * len(feats)) + b"".join(struct.pack("<13f", *r[:13]) for r in feats)
for d in ("feature_files", "matrix_table"):
    write(f"{d}/utt.htk", htk)
    write(f"{d}/utt.mfc", mfc)

# Alignments: the text archive, and one entry of it binary.
ali = open(f"{data}/ali.txt", "rb").read()
write("int32_table/ali.txt", ali)
k, *vals = ali.split(b"\n")[0].split()
write("int32_table/ali.ark", k + b" \0B\4" + struct.pack("<i", len(vals)) +
      b"".join(b"\4" + struct.pack("<i", int(v)) for v in vals))

# Graphs: the binary archive (6 OpenFst graphs) and one printed graph as a text archive.
write("fst_table/graphs.fsts", open(f"{data}/graphs.fsts", "rb").read())
write("fst_table/graph.txt", b"cards-001\n" + open(f"{data}/graph-cards-001.txt", "rb").read() + b"\n")

# Wire codec: packed float32 scores, and binary16 of a few edge values.
write("wire_codec/scores", b"".join(struct.pack("<56f", *r) for r in likes[:2]))
write("wire_codec/halves", struct.pack("<8H", 0, 0x8000, 1, 0x3c00, 0x7bff, 0x7c00, 0x7e00, 0xfc00))

# ScoreStreams messages (after the byte that sets the slice size): a request with a config, a
# features chunk and writes_done; a response with a window and a status.
def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7f) | 0x80])
        v >>= 7
    return out + bytes([v])
def field(n, payload):
    return varint(n << 3 | 2) + varint(len(payload)) + payload
def entry(tag, *fields):
    return field(1, varint(1 << 3) + varint(tag) + b"".join(fields))
config = field(1, field(1, b"s") + field(2, b"mono") + varint(6 << 3) + varint(39))
chunk = field(2, varint(1 << 3) + varint(0) + field(2, struct.pack("<39f", *feats[0])))
write("stream_mux_wire/request", b"\x07" + entry(5, field(2, config)) + entry(5, field(2, chunk)) +
      entry(5, varint(3 << 3) + varint(1)))
window = field(1, b"s") + varint(3 << 3) + varint(1) + field(6, struct.pack("<56f", *likes[0]))
write("stream_mux_wire/response", b"\x40" + entry(5, field(2, window)) +
      entry(5, field(3, varint(1 << 3) + varint(3) + field(2, b"stream 's': bad"))))
PY

# Training files, each behind the byte that picks its reader (training_files_fuzzer.cc):
# accumulators of the small model on five frames (binary and text), a small DiagGmm, posteriors.
printf 'u1  [\n  0.1 0.2 0.3\n  1 2 3\n  -1 0 1\n  0.5 0.5 0.5\n  2 1 0 ]\n' >"$tmp/five.txt"
printf 'u1 1 1 2 2 2\n' >"$tmp/five.ali"
"$gmmscore" acc-stats "$tmp/small.mdl" "ark,t:$tmp/five.txt" "ark,t:$tmp/five.ali" "$tmp/b.acc" \
  2>/dev/null
"$gmmscore" acc-stats --binary=false "$tmp/small.mdl" "ark,t:$tmp/five.txt" "ark,t:$tmp/five.ali" \
  "$tmp/t.acc" 2>/dev/null
"$gmmscore" train-gmm --backend=cpu --num-gauss=4 --num-iters=1 "ark:$data/feats.ark" \
  "$tmp/ubm" 2>/dev/null
"$gmmscore" train-gmm --backend=cpu --binary=false --num-gauss=2 --num-iters=1 \
  "ark:$data/feats.ark" "$tmp/ubm.txt" 2>/dev/null
{ printf '\0'; cat "$tmp/b.acc"; } >"$out/training_files/acc"
{ printf '\0'; cat "$tmp/t.acc"; } >"$out/training_files/acc.txt"
{ printf '\1'; cat "$tmp/ubm"; } >"$out/training_files/ubm"
{ printf '\1'; cat "$tmp/ubm.txt"; } >"$out/training_files/ubm.txt"
printf '\2utt1 [ 2 1 ] [ 4 0.5 3 0.5 ] \nutt2 [ ] \n' >"$out/training_files/post.txt"
python3 - "$out/training_files/post.ark" <<'PY'
import struct, sys
frames = [[(2, 1.0)], [(4, 0.25), (3, 0.75)]]
body = b"\0B\4" + struct.pack("<i", len(frames)) + b"".join(
    b"\4" + struct.pack("<i", len(f)) + b"".join(b"\4" + struct.pack("<i", t) + b"\4" +
                                                struct.pack("<f", w) for t, w in f)
    for f in frames)
open(sys.argv[1], "wb").write(b"\2utt1 " + body)
PY

# Audio (audio_input_fuzzer.cc): a short 16-bit WAVE file, two in a row with the sizes a pipe
# writer leaves (0 and sox's 0x7FFFF000), and front-end configs.
python3 - "$out/audio_input" <<'PY'
import math, struct, sys
def wave(samples, rate=16000, riff=None, data=None):
    pcm = b"".join(struct.pack("<h", int(3000 * math.sin(i / 7.0))) for i in range(samples))
    fmt = struct.pack("<4sIHHIIHH", b"fmt ", 16, 1, 1, rate, 2 * rate, 2, 16)
    riff_size = 36 + len(pcm) if riff is None else riff
    data_size = len(pcm) if data is None else data
    return (b"RIFF" + struct.pack("<I", riff_size) + b"WAVE" + fmt + b"data" +
            struct.pack("<I", data_size) + pcm)
out = sys.argv[1]
open(f"{out}/wav", "wb").write(b"\0" + wave(800))
open(f"{out}/two.ark", "wb").write(b"\0" + wave(500, 8000) + wave(600))
open(f"{out}/piped", "wb").write(b"\0" + wave(700, riff=0x7FFFF024, data=0x7FFFF000))
open(f"{out}/zero", "wb").write(b"\0" + wave(300, riff=0, data=0))
open(f"{out}/conf", "wb").write(b"\1--use-energy=false  # as kaldi-mono\n--cmvn=online\n"
                                b"--delta-order=2\n--snip-edges=false\n--dither=0\n")
open(f"{out}/conf8k", "wb").write(b"\1--sample-frequency=8000\n--num-mel-bins=15\n"
                                  b"--window-type=hamming\n--htk-compat=true\n")
PY

# Specifiers: the forms formats/table_specifier.h names.
i=0
for s in 'ark:feats.ark' 'ark,t:-' 'scp:feats.scp' 'ark,scp:a.ark,a.scp' 'ark,t,f:a.ark' \
         'scp,htk:list' 'scp,sphinx,dim=39:list' 'sphinx:a.mfc' 'htk:a.htk' 'ark:gunzip -c a.gz|' \
         'ark:| gzip -c > a.gz' 'ark,o,s,cs,p,bg:x' 'ark,b,nf,no,ns,ncs,np:x'; do
  printf '%s' "$s" >"$out/table_specifier/spec$((i++))"
done

# Stream configs (the fuzzer's registry has mono and mono2: 56 states, dim 39; small: dim 3).
i=0
while IFS= read -r c; do
  printf '%s\n' "$c" | protoc --proto_path=proto --encode=gmmscore.v1.StreamConfig \
    gmmscore/v1/scorer.proto >"$out/stream_config/config$i"
  i=$((i + 1))
done <<'CONFIGS'
stream_id: "s1" models: "mono" dim: 39
stream_id: "s2" models: "mono" dim: 39 window_frames: 100 max_latency_ms: 50 encoding: FLOAT16
stream_id: "s3" models: "mono" models: "mono2" dim: 39 fusion: SELECT select_window: 20
stream_id: "s4" models: "mono" models: "mono2" dim: 39 fusion: LOG_ADD weights: 0.3 weights: 0.7
stream_id: "s5" models: "mono" dim: 39 encoding: BEAM_SPARSE beam: 8 max_states: 5
stream_id: "s6" models: "mono" dim: 39 state_subset: 3 state_subset: 0 state_subset: 55
stream_id: "s7" models: "small" dim: 3 fusion: LOG_LINEAR
stream_id: "s8" models: "mono" models: "small" dim: 39
CONFIGS
du -sh "$out"
