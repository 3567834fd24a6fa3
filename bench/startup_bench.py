#!/usr/bin/env python3
"""Start-up of the Kaldi tools: the median wall time of a call that does nothing.

A Kaldi recipe starts its tools thousands of times (train_mono.sh: a few hundred per job and pass),
so each one's start matters as Kaldi's own 2 ms do. This runs every tool of `gmmscore kaldi-links`
with --help, RUNS times each, and prints the median and the fastest, beside /bin/true (the cost of
starting any process here) and `gmmscore --help` (the binary with the gRPC client).

usage: bench/startup_bench.py [BUILD_DIR] [--runs N]     (default: build, 50 runs)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def median_ms(command, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    gmmscore = os.path.join(args.build, "tools", "gmmscore")
    if not os.access(gmmscore, os.X_OK):
        sys.exit(f"startup_bench.py: no {gmmscore}; build first")
    with tempfile.TemporaryDirectory() as links:
        subprocess.run([gmmscore, "kaldi-links", links], check=True, stdout=subprocess.DEVNULL)
        tools = sorted(os.listdir(links))
        rows = [("/bin/true", median_ms(["/bin/true"], args.runs)),
                ("gmmscore --help", median_ms([gmmscore, "--help"], args.runs))]
        for tool in tools:
            rows.append((tool, median_ms([os.path.join(links, tool), "--help"], args.runs)))
        target = os.path.realpath(os.path.join(links, tools[0]))
    print(f"links to {target}; {args.runs} runs each; ms")
    print(f"{'command':<28} {'median':>8} {'fastest':>8}")
    for name, (median, fastest) in rows:
        print(f"{name:<28} {median:8.2f} {fastest:8.2f}")
    tool_medians = [median for name, (median, _) in rows[2:]]
    print(f"{'the tools: median of medians':<28} {statistics.median(tool_medians):8.2f}")
    print(f"{'the tools: slowest median':<28} {max(tool_medians):8.2f}")


if __name__ == "__main__":
    main()
