#!/usr/bin/env bash
# The README's second command: installs what is missing, builds everything and runs every test,
# twice: as configured here (CUDA code built when nvcc is found; GPU tests skip, saying why, where
# no GPU is present) and with CUDA turned off, so that both builds the README promises stay good.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j2
BUILD_DIR=build-nocuda CMAKE_ARGS=-DGMMSCORE_CUDA=OFF scripts/build.sh
ctest --test-dir build-nocuda --output-on-failure -j2
