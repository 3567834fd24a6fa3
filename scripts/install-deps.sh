#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages gmmscore builds and tests with (as root, or through sudo).
# Does nothing when they are all there already.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libabsl-dev libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  prometheus-cpp-dev libfst-dev libhwy-dev libopenblas-dev zlib1g-dev
  # OpenFst's command-line tools (fstcompile, ...), which Kaldi's recipes call beside the tools
  # of `gmmscore kaldi-links`.
  libfst-tools
  libgtest-dev libgmock-dev libbenchmark-dev
  # The audio front end (feat/): FFTs and WAVE decoding.
  libfftw3-dev libsndfile1-dev
  # gmmscored's allocator (server/CMakeLists.txt).
  libgoogle-perftools-dev
  # The speed-perturbed kaldi-mono utterances are made by sox in their wav.scp pipes.
  sox
  # scripts/check_deploy.sh (CTest deploy_check): promtool and YAML parsing.
  prometheus python3-yaml
  # The Python client (client/python) and its test against a real gmmscored.
  python3-grpcio python3-numpy python3-protobuf
  # What the tests use: a real Sphinx continuous model and .mfc files, the semi-continuous en-us
  # model the Sphinx reader must refuse, and the openssl command for the TLS tests' certificates.
  pocketsphinx-testdata pocketsphinx-en-us openssl
  # scripts/fuzz.sh and scripts/sanitize.sh: clang with libFuzzer and the sanitizer runtimes, and
  # lld, which links the sanitized executables faster.
  clang libclang-rt-14-dev lld
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${#missing[@]} Debian packages (a few minutes on a new machine):" \
  "${missing[*]}" >&2
echo "install-deps: apt-get update" >&2
$sudo apt-get update -qq
# One line a package, so that a first run shows its progress (apt's own status still decides).
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  "${missing[@]}" | { grep --line-buffered -E '^(Unpacking|Setting up) ' || true; } |
  sed -u 's/^/install-deps: /' >&2
echo "install-deps: done" >&2
