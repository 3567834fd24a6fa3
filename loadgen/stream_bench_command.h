// gmmscore bench-stream: the load generator. Many concurrent streams of features or audio, each
// paced at real time, against a running gmmscored; it reports the streams kept at real time,
// latency percentiles and the server's CPU per stream-second (docs/PERFORMANCE.md).
#pragma once

namespace gmmscore {

int RunBenchStream(int argc, char** argv);

}  // namespace gmmscore
