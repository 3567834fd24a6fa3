#!/usr/bin/env python3
"""The daemon's latency histograms between two /metrics snapshots, one line per stage.

device_e2e.sh takes one snapshot when the load generator's warm-up ends and one when it is done,
so each line covers the measured seconds only (the daemon's own totals include the streams'
start, when every window queues). Quantiles are the upper bound of the bucket they fall in
(gmmscored's latency buckets: 0.5 ms to 5 s).

Usage: stage_latency.py BEFORE.txt AFTER.txt
"""
import math
import re
import sys

# Histograms to report, by metric name and labels, in the order a window meets them.
STAGES = [
    ("queue wait", "gmmscore_queue_wait_seconds", ""),
    ("compute (a batch)", "gmmscore_compute_seconds", ""),
    ("read -> handed to gRPC", "gmmscore_window_stage_seconds", 'stage="before_write"'),
    ("handed -> write done", "gmmscore_window_stage_seconds", 'stage="write"'),
    ("window latency", "gmmscore_window_latency_seconds", ""),
]
SAMPLE = re.compile(r"^(\w+)(?:\{([^}]*)\})?\s+(\S+)$")


def parse(path):
    """{(name, labels): value} of every sample in a Prometheus text exposition."""
    samples = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = SAMPLE.match(line.strip())
            if m:
                samples[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return samples


def histogram(samples, name, labels):
    """(count, sum, [(upper bound, cumulative count)]) of one histogram."""
    count = samples.get((name + "_count", labels), 0.0)
    total = samples.get((name + "_sum", labels), 0.0)
    buckets = []
    for (sample, sample_labels), value in samples.items():
        if sample != name + "_bucket":
            continue
        parts = dict(p.split("=", 1) for p in sample_labels.split(",") if "=" in p)
        le = parts.pop("le", None)
        rest = ",".join(f"{k}={v}" for k, v in parts.items())
        if le is not None and rest == labels:
            buckets.append((float(le.strip('"')), value))
    return count, total, sorted(buckets)


def quantile(buckets, count, q):
    for bound, cumulative in buckets:
        if cumulative >= q * count:
            return bound
    return math.inf


def highest(buckets):
    """The upper bound of the highest bucket anything fell in."""
    below = 0.0
    top = 0.0
    for bound, cumulative in buckets:
        if cumulative > below:
            top = bound
        below = cumulative
    return top


def fmt_ms(seconds):
    return "> 5 s" if math.isinf(seconds) else f"{seconds * 1e3:.1f} ms"


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    before, after = parse(argv[1]), parse(argv[2])
    print("daemon stages over the measured seconds (/metrics deltas; quantiles: bucket bounds):")
    for title, name, labels in STAGES:
        c0, s0, b0 = histogram(before, name, labels)
        c1, s1, b1 = histogram(after, name, labels)
        count = c1 - c0
        if count <= 0:
            print(f"  {title}: none")
            continue
        start = dict(b0)
        delta = [(bound, cum - start.get(bound, 0.0)) for bound, cum in b1]
        print(f"  {title}: {int(count)}, mean {fmt_ms((s1 - s0) / count)}, "
              f"p50 <= {fmt_ms(quantile(delta, count, 0.5))}, "
              f"p99 <= {fmt_ms(quantile(delta, count, 0.99))}, "
              f"max <= {fmt_ms(highest(delta))}")


if __name__ == "__main__":
    main(sys.argv)
