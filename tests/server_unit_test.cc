// The daemon's parts on their own: binary16 conversion, configuration checks, fusion carried
// across windows, response encoding, the timer queue, the batcher's batch sizes and its choice of
// lane, the lanes' batch size, the Unix-socket buffer warning.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <numeric>
#include <random>
#include <thread>

#include "kernels/cpu/cpu_compute_device.h"
#include "model/random_model.h"
#include "proto/wire_codec.h"
#include "server/config.h"
#include "server/kept_frames.h"
#include "server/rpc/in_order.h"
#include "server/rpc/response_buffer.h"
#include "server/rpc/response_encoder.h"
#include "server/rpc/stream_fusion.h"
#include "server/rpc/window_cutter.h"
#include "server/scheduling/batch_delivery.h"
#include "server/scheduling/batcher.h"
#include "server/scheduling/lane.h"
#include "server/scheduling/lane_set.h"
#include "server/scheduling/score_job.h"
#include "server/scheduling/task_queue.h"
#include "server/scheduling/timer_queue.h"
#include "server/scheduling/viterbi_queue.h"
#include "server/socket_buffers.h"

namespace gmmscore::testing {
namespace {

using namespace std::chrono_literals;

TEST(WireCodecTest, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = wire::HalfToFloat(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(wire::HalfToFloat(wire::FloatToHalf(f)))) << h;
    } else {
      EXPECT_EQ(wire::FloatToHalf(f), h) << h;
    }
  }
}

// The span conversions (vector instructions where the host has them) against the scalar ones.
TEST(WireCodecTest, SpansConvertAsTheScalarFunctions) {
  std::string halves;
  std::vector<float> floats;
  for (uint32_t h = 0; h < 65536; ++h) {
    halves.push_back(char(h & 0xffu));
    halves.push_back(char(h >> 8));
    floats.push_back(wire::HalfToFloat(uint16_t(h)));
  }
  // Around every half: the midpoints and their neighbours, past the range, subnormals.
  for (uint32_t h = 0; h < 65535; ++h) {
    const float mid = 0.5f * (wire::HalfToFloat(uint16_t(h)) + wire::HalfToFloat(uint16_t(h + 1)));
    if (std::isfinite(mid)) {
      floats.insert(floats.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)});
    }
  }
  floats.insert(floats.end(), {65520.0f, -65520.0f, 1e-8f, 3e-8f, -6e-8f, 1e30f, -1e30f});
  std::vector<float> decoded(65536);
  wire::ReadFloat16(halves, decoded);
  for (uint32_t h = 0; h < 65536; ++h) {
    const float expected = wire::HalfToFloat(uint16_t(h));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(decoded[h])) << h;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(decoded[h]), std::bit_cast<uint32_t>(expected)) << h;
    }
  }
  std::string encoded;
  wire::AppendFloat16(floats, &encoded);
  ASSERT_EQ(encoded.size(), 2 * floats.size());
  for (size_t i = 0; i < floats.size(); ++i) {
    const uint16_t got = uint16_t(uint8_t(encoded[2 * i]) | (uint8_t(encoded[2 * i + 1]) << 8));
    ASSERT_EQ(got, wire::FloatToHalf(floats[i])) << floats[i];
  }
}

// RELATIVE16's promise (scorer.proto): within 1/512 nat of every score less than 255.99 nats
// below the frame's best, at any magnitude; saturated beyond; a NaN saturates too.
TEST(WireCodecTest, Relative16KeepsItsPromisedPrecision) {
  std::mt19937 rng(3);
  for (const float best : {-3.0f, -95.7f, -1234.56f, -40000.0f, 12.5f}) {
    std::vector<float> values;
    std::uniform_real_distribution<float> below(0.0f, 255.99f);
    for (int i = 0; i < 20000; ++i) values.push_back(best - below(rng));
    values.insert(values.end(), {best, best - 255.99f, best - 1.0f / 512, best - 3.0f / 512});
    std::string bytes;
    wire::AppendRelative16(values, best, &bytes);
    ASSERT_EQ(bytes.size(), 2 * values.size());
    std::vector<float> decoded(values.size());
    wire::ReadRelative16(bytes, best, decoded);
    float worst = 0;
    for (size_t i = 0; i < values.size(); ++i)
      worst = std::max(worst, std::abs(decoded[i] - values[i]));
    // 1/512 from the rounding, plus float32 rounding of the values themselves.
    EXPECT_LE(worst, 1.0f / 512 + 4 * std::abs(best) * 1.2e-7f) << best;
    EXPECT_EQ(decoded[values.size() - 4], best);
  }
  // Saturation and NaN, in the vector loop and in the tail.
  std::vector<float> odd = {-1000.0f, std::nanf(""), 0.0f,        -255.997f,     -255.99f, 0.001f,
                            -0.001f,  -1.0f / 512,   -3.0f / 512, std::nanf(""), -70000.0f};
  std::string bytes;
  wire::AppendRelative16(odd, 0.0f, &bytes);
  std::vector<float> decoded(odd.size());
  wire::ReadRelative16(bytes, 0.0f, decoded);
  const std::vector<float> expect = {-65535.0f / 256,
                                     -65535.0f / 256,
                                     0.0f,
                                     -65535.0f / 256,
                                     -65533.0f / 256,
                                     0.0f,
                                     0.0f,
                                     -1.0f / 256,
                                     -2.0f / 256,
                                     -65535.0f / 256,
                                     -65535.0f / 256};
  EXPECT_EQ(decoded, expect);
}

// The bytes SerializeResponse hands gRPC parse as the message it was given, and its scores are
// the string's own buffer, not a copy.
TEST(ResponseBufferTest, ParsesAsTheMessageAndSendsTheScoresUncopied) {
  v1::ScoreResponse response;
  response.set_stream_id("caption-7");
  response.set_first_frame(1234567);
  response.set_num_frames(10);
  response.set_num_states(5003);
  response.set_encoding(v1::StreamConfig::RELATIVE16);
  std::mt19937 rng(3);
  std::string scores(size_t(10 * 5003 * 2), '\0');
  for (char& c : scores) c = static_cast<char>(rng());
  response.set_scores(scores);
  for (int32_t t = 0; t < 10; ++t) {
    response.add_best_state(t * 499);
    response.add_best_score(-60.5f - float(t));
  }
  v1::ModelVersion* m = response.add_models();
  m->set_name("mono");
  m->set_version(3);
  const v1::ScoreResponse expected = response;
  const char* scores_at = response.scores().data();

  grpc::ByteBuffer buffer = server::SerializeResponse(&response);
  EXPECT_TRUE(response.scores().empty());
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(buffer.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(reinterpret_cast<const char*>(slices[1].begin()), scores_at);
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  EXPECT_EQ(bytes.size(), expected.ByteSizeLong());
  v1::ScoreResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(bytes));
  EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());

  // Scores held elsewhere (rows in a buffer a device lent): sent from there, and released once
  // gRPC lets go of the message.
  bool released = false;
  {
    auto held = std::make_shared<std::string>(scores);
    std::shared_ptr<const void> owner(held.get(), [&released, held](const void*) mutable {
      released = true;
      held.reset();
    });
    v1::ScoreResponse header = expected;
    header.clear_scores();
    grpc::ByteBuffer lent = server::SerializeResponse(&header, {owner, *held});
    owner.reset();
    EXPECT_FALSE(released);
    ASSERT_TRUE(lent.Dump(&slices).ok());
    ASSERT_EQ(slices.size(), 2u);
    EXPECT_EQ(reinterpret_cast<const char*>(slices[1].begin()), held->data());
    bytes.clear();
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    ASSERT_TRUE(parsed.ParseFromString(bytes));
    EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());
    slices.clear();
  }  // the ByteBuffer and its slices go
  EXPECT_TRUE(released);

  // No scores (an empty window's response): one slice, the message as protobuf writes it.
  v1::ScoreResponse empty;
  empty.set_stream_id("s");
  empty.add_best_state(1);
  const std::string empty_bytes = empty.SerializeAsString();
  grpc::ByteBuffer empty_buffer = server::SerializeResponse(&empty);
  ASSERT_TRUE(empty_buffer.Dump(&slices).ok());
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(slices[0].begin()), slices[0].size()),
            empty_bytes);
}

TEST(ResponseEncoderTest, BestStateIsTheFirstLargest) {
  for (int32_t states : {1, 7, 8, 9, 37, 5000}) {
    Matrix scores = RandomFeatures(4, states, -80.0f, 10.0f, uint32_t(states));
    scores.at(1, states - 1) = 0.0f;  // the last state best
    scores.at(2, states / 2) = 1.0f;  // a tie: the first of the two
    scores.at(2, states - 1) = 1.0f;
    server::ResponseEncoder encoder({});
    v1::ScoreResponse r;
    encoder.Encode(scores, &r);
    for (int32_t t = 0; t < 4; ++t) {
      const float* row = scores.row(t);
      EXPECT_EQ(r.best_state(t), std::max_element(row, row + states) - row) << states << " " << t;
    }
  }
}

TEST(WireCodecTest, HalfRoundsToNearestEven) {
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(1.0f)), 1.0f);
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(-81.37f)), -81.375f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: to even (1).
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(1.0f + 0x1p-11f)), 1.0f);
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(1.0f + 3 * 0x1p-11f)), 1.0f + 0x1p-9f);
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(wire::HalfToFloat(wire::FloatToHalf(65520.0f))));
  EXPECT_TRUE(std::isinf(wire::HalfToFloat(wire::FloatToHalf(-1e30f))));
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(0x1p-24f)), 0x1p-24f);  // smallest subnormal
  EXPECT_EQ(wire::HalfToFloat(wire::FloatToHalf(0x1p-25f)), 0.0f);      // halfway: to even
  EXPECT_EQ(wire::FloatToHalf(-0.0f), 0x8000);
}

TEST(WireCodecTest, PackedFloatsAreLittleEndian) {
  std::string bytes;
  const float values[2] = {1.0f, -2.0f};
  wire::AppendFloat32(values, &bytes);
  ASSERT_EQ(bytes.size(), 8u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[3]), 0x3f);  // 1.0f = 0x3f800000
  EXPECT_EQ(static_cast<unsigned char>(bytes[2]), 0x80);
  float back[2];
  wire::ReadFloat32(bytes, back);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -2.0f);
}

TEST(ServerConfigTest, ChecksRangesAndNames) {
  server::ServerConfig c;
  c.plaintext = true;
  EXPECT_TRUE(server::ValidateConfig(c).ok());
  c.stream.default_window_frames = 2000;
  EXPECT_NE(server::ValidateConfig(c).message().find("--window-frames"), std::string::npos);
  c = server::ServerConfig();
  c.plaintext = true;
  c.tls_cert_file = "x";
  EXPECT_FALSE(server::ValidateConfig(c).ok());
  server::ModelSpec spec;
  EXPECT_TRUE(server::ParseModelSpec("mono=/a/b=c.mdl", &spec).ok());
  EXPECT_EQ(spec.name, "mono");
  EXPECT_EQ(spec.path, "/a/b=c.mdl");
  EXPECT_FALSE(server::ParseModelSpec("noequals", &spec).ok());
  EXPECT_FALSE(server::ParseModelSpec("bad/name=x", &spec).ok());
  EXPECT_FALSE(server::ParseModelSpec("x=", &spec).ok());
}

TEST(StreamFusionTest, SelectAcrossWindowsEqualsTheWholeUtterance) {
  const Matrix a = RandomFeatures(97, 20, -60.0f, 10.0f, 1);
  const Matrix b = RandomFeatures(97, 20, -60.0f, 10.0f, 2);
  const Matrix c = RandomFeatures(97, 20, -60.0f, 10.0f, 3);
  FusionSpec spec;
  spec.rule = FusionRule::kSelectBest;
  spec.select_window = 6;
  ASSERT_TRUE(ValidateFusion(&spec, 3).ok());
  Matrix expected;
  ASSERT_TRUE(FuseScores(spec, {&a, &b, &c}, &expected).ok());
  server::StreamFusion fusion(spec, 3);
  Matrix got;
  for (int32_t t = 0, w = 1; t < a.rows; t += w, w = w % 9 + 1) {
    const int32_t n = std::min(w, a.rows - t);
    std::vector<Matrix> parts;
    for (const Matrix* m : {&a, &b, &c}) {
      Matrix p(n, m->cols);
      std::copy_n(m->row(t), size_t(n) * m->cols, p.data.data());
      parts.push_back(std::move(p));
    }
    Matrix scratch;
    const std::vector<MatrixView> views(parts.begin(), parts.end());
    absl::StatusOr<MatrixView> out = fusion.Fuse(views, &scratch);
    ASSERT_TRUE(out.ok());
    got.data.insert(got.data.end(), out->data, out->data + size_t(out->rows) * out->cols);
  }
  EXPECT_EQ(got.data, expected.data);
}

// Rows a device encoded (here: the host's codec, which the device matches bit for bit) make the
// same response as encoding the float rows.
TEST(ResponseEncoderTest, RowsEncodedOnTheDeviceMakeTheSameResponse) {
  const Matrix scores = RandomFeatures(5, 37, -80.0f, 30.0f, 4);
  for (const auto encoding : {v1::StreamConfig::FLOAT16, v1::StreamConfig::RELATIVE16}) {
    server::EncoderOptions o;
    o.encoding = encoding;
    server::ResponseEncoder encoder(o);
    ASSERT_NE(encoder.device_encoding(), DeviceScoreEncoding::kNone);
    v1::ScoreResponse expected;
    encoder.Encode(scores, &expected);
    std::string values;
    std::vector<int32_t> best_states;
    std::vector<float> best_scores;
    for (int32_t t = 0; t < scores.rows; ++t) {
      const float* row = scores.row(t);
      const int32_t best = int32_t(std::max_element(row, row + scores.cols) - row);
      if (encoding == v1::StreamConfig::FLOAT16) {
        wire::AppendFloat16({row, size_t(scores.cols)}, &values);
      } else {
        wire::AppendRelative16({row, size_t(scores.cols)}, row[best], &values);
      }
      best_states.push_back(best);
      best_scores.push_back(row[best]);
    }
    v1::ScoreResponse header;
    encoder.EncodeEncoded(best_states, best_scores, scores.cols, &header);
    EXPECT_TRUE(header.scores().empty());
    // The values become the scores as the response is serialized.
    std::vector<grpc::Slice> slices;
    ASSERT_TRUE(server::SerializeResponse(&header, SharedBytes::Own(values)).Dump(&slices).ok());
    std::string bytes;
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    v1::ScoreResponse got;
    ASSERT_TRUE(got.ParseFromString(bytes));
    EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString());
  }
  server::EncoderOptions subset;
  subset.encoding = v1::StreamConfig::RELATIVE16;
  subset.state_subset = {3, 1};
  EXPECT_EQ(server::ResponseEncoder(subset).device_encoding(), DeviceScoreEncoding::kNone);
  server::EncoderOptions sparse;
  sparse.encoding = v1::StreamConfig::BEAM_SPARSE;
  EXPECT_EQ(server::ResponseEncoder(sparse).device_encoding(), DeviceScoreEncoding::kBeamSparse);
  sparse.state_subset = {3, 1};
  EXPECT_EQ(server::ResponseEncoder(sparse).device_encoding(), DeviceScoreEncoding::kNone);
}

// Delivery of a batch whose windows all asked the device to encode: a BEAM_SPARSE window takes
// its candidates, a RELATIVE16 window its 16-bit rows (in the buffer the slot lent, or copied),
// and a window with a row the device left to the host fetches its float rows (which such a batch
// leaves on the device) and gets them; the buffers are released once all is copied, a lent one
// once no window holds it.
class BatchDeliveryTest : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(LentOrCopied, BatchDeliveryTest, ::testing::Bool());

TEST_P(BatchDeliveryTest, EncodedWindowsTakeWhatTheDeviceMadeAndTheRestFetchTheirRows) {
  const bool lend = GetParam();
  constexpr int32_t kStates = 5, kCapacity = 3;
  struct Got {
    int64_t first_frame = 0;
    server::EncodedRows encoded;
    std::vector<Matrix> rows;
  };
  class KeepingSink final : public server::WindowSink {
   public:
    void OnWindowScored(server::Window w, absl::StatusOr<server::WindowScores> scores) override {
      std::lock_guard lock(mu);
      ASSERT_TRUE(scores.ok()) << scores.status();
      got[w.first_frame] = {w.first_frame, std::move(w.encoded), server::CopyScores(*scores)};
    }
    std::mutex mu;
    std::map<int64_t, Got> got;
  };
  auto sink = std::make_shared<KeepingSink>();
  // Frames 0-1: BEAM_SPARSE; 2-3: BEAM_SPARSE, frame 3 left to the host; 4-5: RELATIVE16.
  std::vector<float> fused(6 * kStates);
  std::iota(fused.begin(), fused.end(), -30.0f);
  const std::vector<int32_t> best_states = {4, 4, 4, 4, 4, 4};
  std::vector<float> best_scores;
  for (int32_t t = 0; t < 6; ++t) best_scores.push_back(fused[size_t(t * kStates + 4)]);
  const std::vector<int32_t> counts = {1, 2, 1, -1, 0, 0};
  std::vector<float> kept(6 * kCapacity, 0.0f);
  std::vector<int32_t> kept_states(6 * kCapacity, 0);
  kept[0] = -26.0f, kept_states[0] = 4;
  kept[3] = -22.0f, kept_states[3] = 3;
  kept[4] = -21.0f, kept_states[4] = 4;
  kept[6] = -16.0f, kept_states[6] = 4;
  std::vector<uint16_t> encoded16(6 * kStates);
  std::iota(encoded16.begin(), encoded16.end(), uint16_t(100));

  server::Batch batch;
  batch.models = std::make_shared<const server::ModelSet>(
      server::ModelSet{{nullptr}, "one"});  // one model: fused where scored
  for (int64_t first : {0, 2, 4}) {
    server::Window& w = batch.windows.emplace_back();
    w.sink = sink;
    w.first_frame = first;
    w.feats = Matrix(2, 3);
    w.encoding = first < 4 ? DeviceScoreEncoding::kBeamSparse : DeviceScoreEncoding::kRelative16;
    w.beam = 10.0f;
  }
  batch.frames = 6;
  server::BatchScores scores;
  scores.states = kStates;
  std::vector<float> device_rows = fused;  // where the "device" keeps them
  std::vector<float> host_rows(fused.size(), std::nanf(""));
  scores.fused = host_rows.data();
  scores.encoded16 = encoded16.data();
  bool lent_released = false;
  if (lend) {
    scores.encoded16_owner = std::shared_ptr<const uint16_t>(
        encoded16.data(), [&lent_released](const uint16_t*) { lent_released = true; });
  }
  scores.best_states = best_states.data();
  scores.best_scores = best_scores.data();
  scores.beam = {counts.data(), kept.data(), kept_states.data(), kCapacity};
  std::vector<std::pair<int32_t, int32_t>> fetched;
  std::mutex fetched_mu;
  scores.fetch_fused = [&](int32_t first, int32_t rows) {
    std::lock_guard lock(fetched_mu);
    fetched.emplace_back(first, rows);
    std::copy_n(device_rows.begin() + first * kStates, rows * kStates,
                host_rows.begin() + first * kStates);
    return absl::OkStatus();
  };
  std::atomic<bool> released{false};
  {
    server::TaskQueue pool(2);
    server::DeliverScores(std::move(batch), scores, &pool, [&] { released = true; });
  }  // runs the tasks and joins
  EXPECT_TRUE(released.load());
  ASSERT_EQ(sink->got.size(), 3u);
  EXPECT_EQ(fetched, (std::vector<std::pair<int32_t, int32_t>>{{2, 2}}));
  const Got& a = sink->got.at(0);
  EXPECT_EQ(a.encoded.beam_counts, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(a.encoded.beam_scores, (std::vector<float>{-26.0f, -22.0f, -21.0f}));
  EXPECT_EQ(a.encoded.beam_states, (std::vector<int32_t>{4, 3, 4}));
  EXPECT_EQ(a.encoded.best_states, (std::vector<int32_t>{4, 4}));
  EXPECT_TRUE(a.rows.empty());
  const Got& b = sink->got.at(2);
  EXPECT_TRUE(b.encoded.empty());
  ASSERT_EQ(b.rows.size(), 1u);
  EXPECT_EQ(b.rows[0].data,
            std::vector<float>(fused.begin() + 2 * kStates, fused.begin() + 4 * kStates));
  const Got& c = sink->got.at(4);
  std::string want;
  wire::AppendUint16({encoded16.data() + 4 * kStates, size_t(2 * kStates)}, &want);
  EXPECT_EQ(c.encoded.values.view, want);
  EXPECT_TRUE(c.rows.empty());
  const char* rows_at = reinterpret_cast<const char*>(encoded16.data() + 4 * kStates);
  EXPECT_EQ(c.encoded.values.view.data() == rows_at, lend);
  EXPECT_EQ(c.encoded.values.owner == scores.encoded16_owner, lend);
  scores.encoded16_owner.reset();
  EXPECT_FALSE(lent_released);  // the window holds it
  sink->got.clear();
  EXPECT_EQ(lent_released, lend);
}

// What a device selects (encode_rows_kernel.h: the states within the beam, in state order; rows
// with a NaN are left to the host) makes the response Encode makes of the rows: ties, -0 and +0,
// infinities, beams of 0, caps of max_states and none.
TEST(ResponseEncoderTest, BeamCandidatesMakeTheSameResponse) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int32_t> coarse(-40, 0);
  std::uniform_int_distribution<int32_t> special(0, 30);
  const float inf = std::numeric_limits<float>::infinity();
  for (int32_t trial = 0; trial < 300; ++trial) {
    const int32_t cols = 1 + trial % 89 * 7;
    Matrix scores(4, cols);
    for (float& x : scores.data) {
      const int32_t kind = special(rng);
      x = kind == 0 ? 0.0f : kind == 1 ? -0.0f : kind == 2 ? -inf : float(coarse(rng)) * 0.5f;
    }
    if (trial % 9 == 0) std::fill_n(scores.data.begin(), cols, -inf);  // a row of -inf
    server::EncoderOptions o;
    o.encoding = v1::StreamConfig::BEAM_SPARSE;
    o.beam = trial % 3 == 0 ? 0.0f : float(1 + trial % 11);
    o.max_states = trial % 4 == 0 ? 0 : 1 + trial % 50;
    server::ResponseEncoder encoder(o);
    v1::ScoreResponse expected;
    encoder.Encode(scores, &expected);
    std::vector<int32_t> counts, states, best_states;
    std::vector<float> kept, best_scores;
    for (int32_t t = 0; t < scores.rows; ++t) {
      const float* row = scores.row(t);
      const int32_t best = int32_t(std::max_element(row, row + cols) - row);
      best_states.push_back(best);
      best_scores.push_back(row[best]);
      const float threshold = row[best] - o.beam;
      counts.push_back(0);
      for (int32_t c = 0; c < cols; ++c) {
        if (row[c] >= threshold) {
          kept.push_back(row[c]);
          states.push_back(c);
          ++counts.back();
        }
      }
    }
    v1::ScoreResponse got;
    encoder.EncodeBeamCandidates(counts, kept, states, best_states, best_scores, cols, &got);
    ASSERT_EQ(got.SerializeAsString(), expected.SerializeAsString()) << "trial " << trial;
  }
}

TEST(ResponseEncoderTest, SparseKeepsTiesInStateOrderAndBestFirst) {
  Matrix scores(1, 6);
  scores.data = {-5.0f, -1.0f, -3.0f, -1.0f, -20.0f, -2.0f};
  server::EncoderOptions o;
  o.encoding = v1::StreamConfig::BEAM_SPARSE;
  o.beam = 3.0f;
  o.max_states = 3;
  server::ResponseEncoder encoder(o);
  v1::ScoreResponse r;
  encoder.Encode(scores, &r);
  ASSERT_EQ(r.sparse_counts_size(), 1);
  EXPECT_EQ(r.sparse_counts(0), 3u);
  int32_t ids[3];
  float values[3];
  wire::ReadInt32(r.sparse_states(), ids);
  wire::ReadFloat32(r.scores(), values);
  EXPECT_EQ(std::vector<int32_t>(ids, ids + 3), (std::vector<int32_t>{1, 3, 5}));
  EXPECT_EQ(std::vector<float>(values, values + 3), (std::vector<float>{-1.0f, -1.0f, -2.0f}));
  EXPECT_EQ(r.best_state(0), 1);
  EXPECT_EQ(r.best_score(0), -1.0f);
}

// BEAM_SPARSE against the rule written plainly: every state within the beam of the frame's best,
// sorted by score (ties in state order), the first max_states kept; on rows with many ties, -0 and
// +0, infinities and NaNs, with and without a state subset and a cap.
TEST(ResponseEncoderTest, SparseEqualsThePlainRuleOnHardRows) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int32_t> coarse(-40, 0);
  std::uniform_real_distribution<float> fine(-30.0f, 0.0f);
  std::uniform_int_distribution<int32_t> special(0, 40);
  const float inf = std::numeric_limits<float>::infinity();
  for (int32_t trial = 0; trial < 400; ++trial) {
    const int32_t cols = 1 + trial % 97 * 13;
    Matrix scores(3, cols);
    for (float& x : scores.data) {
      // Coarse values make many ties; a few rows get the values that break naive orders.
      x = trial % 2 == 0 ? float(coarse(rng)) * 0.5f : fine(rng);
      switch (special(rng)) {
        case 0:
          x = 0.0f;
          break;
        case 1:
          x = -0.0f;
          break;
        case 2:
          x = -inf;
          break;
        case 3:
          x = trial % 5 == 0 ? inf : x;
          break;
        case 4:
          x = trial % 7 == 0 ? std::numeric_limits<float>::quiet_NaN() : x;
          break;
        default:
          break;
      }
    }
    server::EncoderOptions o;
    o.encoding = v1::StreamConfig::BEAM_SPARSE;
    o.beam = trial % 3 == 0 ? 0.0f : float(1 + trial % 11);
    o.max_states = trial % 4 == 0 ? 0 : 1 + trial % 50;
    std::vector<int32_t> columns(static_cast<size_t>(cols));
    std::iota(columns.begin(), columns.end(), 0);
    if (trial % 6 == 5) {  // a subset: every other state, backwards
      std::vector<int32_t> subset;
      for (int32_t c = cols - 1; c >= 0; c -= 2) subset.push_back(c);
      o.state_subset = subset;
      columns = subset;
    }
    server::ResponseEncoder encoder(o);
    v1::ScoreResponse got;
    encoder.Encode(scores, &got);

    std::vector<float> want_values;
    std::vector<int32_t> want_ids;
    for (int32_t t = 0; t < scores.rows; ++t) {
      std::vector<float> row;
      for (int32_t c : columns) row.push_back(scores.at(t, c));
      const float best = *std::max_element(row.begin(), row.end());
      std::vector<int32_t> in;
      for (int32_t i = 0; i < int32_t(row.size()); ++i) {
        if (row[size_t(i)] >= best - o.beam) in.push_back(i);
      }
      std::stable_sort(in.begin(), in.end(),
                       [&](int32_t a, int32_t b) { return row[size_t(a)] > row[size_t(b)]; });
      if (o.max_states > 0 && int32_t(in.size()) > o.max_states) in.resize(size_t(o.max_states));
      ASSERT_EQ(got.sparse_counts(t), uint32_t(in.size())) << trial << " " << t;
      for (int32_t i : in) {
        want_values.push_back(row[size_t(i)]);
        want_ids.push_back(columns[size_t(i)]);
      }
    }
    std::vector<float> got_values(want_values.size());
    std::vector<int32_t> got_ids(want_ids.size());
    ASSERT_EQ(got.scores().size(), 4 * want_values.size()) << trial;
    ASSERT_EQ(got.sparse_states().size(), 4 * want_ids.size()) << trial;
    wire::ReadFloat32(got.scores(), got_values);
    wire::ReadInt32(got.sparse_states(), got_ids);
    EXPECT_EQ(got_ids, want_ids) << trial;
    for (size_t i = 0; i < want_values.size(); ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(got_values[i]), std::bit_cast<uint32_t>(want_values[i]))
          << trial << " " << i;
    }
  }
}

std::string PackedFrames(const std::vector<float>& values) {
  std::string bytes;
  wire::AppendFloat32(values, &bytes);
  return bytes;
}

TEST(WindowCutterTest, WindowsTakeTheOldestFramesAndAreReadyWithTheirLastChunk) {
  server::WindowCutter cutter(2);
  const auto t0 = server::WindowCutter::Clock::now();
  const auto t1 = t0 + 5ms;
  ASSERT_TRUE(cutter.Append(PackedFrames({0, 0.5f, 1, 1.5f, 2, 2.5f}), t0).ok());
  ASSERT_TRUE(cutter.Append(PackedFrames({3, 3.5f, 4, 4.5f, 5, 5.5f, 6, 6.5f, 7, 7.5f}), t1).ok());
  EXPECT_EQ(cutter.next_frame(), 8);
  EXPECT_EQ(cutter.pending_frames(), 8);
  EXPECT_EQ(cutter.pending_bytes(), 8 * 2 * 4);
  EXPECT_EQ(cutter.oldest_arrival(), t0);
  server::WindowCutter::Cut first = cutter.CutWindow(3);
  EXPECT_EQ(first.first_frame, 0);
  EXPECT_EQ(first.ready, t0) << "its last frame came in the first chunk";
  ASSERT_EQ(first.feats.rows, 3);
  EXPECT_EQ(first.feats.at(2, 1), 2.5f);
  EXPECT_EQ(cutter.oldest_arrival(), t1);
  server::WindowCutter::Cut second = cutter.CutWindow(4);
  EXPECT_EQ(second.first_frame, 3);
  EXPECT_EQ(second.ready, t1);
  EXPECT_EQ(second.feats.at(0, 0), 3.0f);
  EXPECT_EQ(second.feats.at(3, 1), 6.5f);
  EXPECT_EQ(cutter.pending_frames(), 1);
  // A value that is not finite is named and nothing of its chunk is kept.
  const absl::Status bad = cutter.Append(PackedFrames({8, 8.5f, 9, NAN}), t1);
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("frame 9, dimension 1"), std::string::npos) << bad;
  EXPECT_EQ(cutter.next_frame(), 8);
  EXPECT_EQ(cutter.pending_frames(), 1);
  EXPECT_EQ(cutter.CutWindow(1).feats.at(0, 0), 7.0f);
  cutter.Clear();
  EXPECT_EQ(cutter.pending_frames(), 0);
}

TEST(InOrderTest, ResultsLeaveInTheOrderTheirWindowsWereCut) {
  server::InOrder<std::string> order;
  for (int64_t first : {0, 10, 20}) order.Cut(first);
  order.Arrived(10, "b");
  EXPECT_FALSE(order.PopNext().has_value()) << "window 0 is not back yet";
  EXPECT_EQ(order.waiting(), 1u);
  order.Arrived(0, "a");
  EXPECT_EQ(order.PopNext(), std::make_optional(std::pair<int64_t, std::string>(0, "a")));
  EXPECT_EQ(order.PopNext(), std::make_optional(std::pair<int64_t, std::string>(10, "b")));
  EXPECT_FALSE(order.PopNext().has_value());
  order.Arrived(20, "c");
  order.Clear();
  EXPECT_EQ(order.waiting(), 0u);
  EXPECT_FALSE(order.PopNext().has_value());
}

TEST(InOrderTest, TheNextWindowIsTakenWithoutWaiting) {
  server::InOrder<std::string> order;
  for (int64_t first : {0, 10, 20}) order.Cut(first);
  EXPECT_FALSE(order.TakeIfNext(10)) << "window 0 goes first";
  order.Arrived(10, "b");
  EXPECT_TRUE(order.TakeIfNext(0));
  EXPECT_EQ(order.waiting(), 1u);
  EXPECT_EQ(order.PopNext(), std::make_optional(std::pair<int64_t, std::string>(10, "b")));
  EXPECT_FALSE(order.TakeIfNext(0)) << "taken once";
  EXPECT_TRUE(order.TakeIfNext(20));
  EXPECT_FALSE(order.PopNext().has_value());
}

TEST(TimerQueueTest, RunsInTimeOrder) {
  server::TimerQueue timers;
  std::mutex mu;
  std::vector<int> order;
  const auto now = std::chrono::steady_clock::now();
  for (int i : {3, 1, 2}) {
    timers.Schedule(now + i * 20ms, [&, i] {
      std::lock_guard lock(mu);
      order.push_back(i);
    });
  }
  timers.Schedule(now - 1s, [&] {  // overdue: at once
    std::lock_guard lock(mu);
    order.push_back(0);
  });
  std::this_thread::sleep_for(150ms);
  std::lock_guard lock(mu);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

// Records the windows it gets, per stream (in the order they arrive).
class RecordingSink : public server::WindowSink {
 public:
  void OnWindowScored(server::Window window, absl::StatusOr<server::WindowScores> scores) override {
    std::lock_guard lock(mu);
    EXPECT_TRUE(scores.ok());
    firsts.push_back(window.first_frame);
    rows += window.feats.rows;
    if (scores.ok()) {
      EXPECT_EQ((*scores)[0].rows, window.feats.rows);
    }
  }
  std::mutex mu;
  std::vector<int64_t> firsts;
  int64_t rows = 0;
};

std::shared_ptr<server::ModelEntry> CpuEntry(const GmmModel& model, server::Metrics* metrics) {
  std::vector<server::Residency> residents(1);
  residents[0].model = *CpuComputeDevice(1, 64).MakeResident(model);
  residents[0].device = "cpu";
  return std::make_shared<server::ModelEntry>("m", 1, "mem", "test",
                                              std::make_shared<const GmmModel>(model),
                                              std::move(residents), metrics);
}

TEST(BatcherTest, DeliversEveryWindowOnceWithinTheBatchLimit) {
  RandomModelOptions o;
  o.num_states = 30;
  o.dim = 13;
  server::Metrics metrics;
  auto set = server::ModelSet::Make({CpuEntry(RandomModel(o, 1), &metrics)});
  server::BatcherOptions options;
  options.max_batch_frames = 40;
  options.max_queue_delay = absl::Milliseconds(1);
  std::vector<std::shared_ptr<RecordingSink>> sinks;
  {
    server::TaskQueue delivery(3);
    std::vector<std::unique_ptr<server::Lane>> lanes;
    for (int i = 0; i < 2; ++i) {
      lanes.push_back(
          std::make_unique<server::Lane>(std::make_unique<CpuComputeDevice>(1, 64), &metrics));
      ASSERT_TRUE(lanes.back()->Prepare(set->models[0]->resident(0)).ok());
    }
    server::Batcher batcher(options, lanes, &delivery, &metrics);
    for (int s = 0; s < 8; ++s) sinks.push_back(std::make_shared<RecordingSink>());
    for (int64_t w = 0; w < 50; ++w) {
      for (int s = 0; s < 8; ++s) {
        server::Window window;
        window.sink = sinks[size_t(s)];
        window.first_frame = w * 7;
        window.feats = RandomFeatures(7, 13, 0.0f, 3.0f, uint32_t(w * 8 + s));
        batcher.Submit(set, std::move(window));
      }
    }
  }  // the batcher scores what is queued, the delivery threads hand it over
  for (const auto& sink : sinks) {
    // Two lanes and three delivery threads: windows may arrive out of order, never twice.
    std::vector<int64_t> firsts = sink->firsts;
    std::sort(firsts.begin(), firsts.end());
    ASSERT_EQ(firsts.size(), 50u);
    for (size_t i = 0; i < 50; ++i) EXPECT_EQ(firsts[i], int64_t(i) * 7);
  }
  // Whole windows of 7 frames: at most 5 (35 frames) fit under 40.
  const auto families = metrics.registry().Collect();
  bool seen = false;
  for (const prometheus::MetricFamily& f : families) {
    if (f.name != "gmmscore_batch_frames") continue;
    seen = true;
    const auto& h = f.metric.at(0).histogram;
    EXPECT_EQ(h.sample_sum, 8 * 50 * 7);
    for (const prometheus::ClientMetric::Bucket& b : h.bucket) {
      if (b.upper_bound >= 50) {
        EXPECT_EQ(b.cumulative_count, h.sample_count);
      }
    }
  }
  EXPECT_TRUE(seen);
}

// A device of two slots that records the batches it gets and finishes them only when told to:
// each slot's Wait blocks until FinishAll has released its batch.
class HeldDevice : public ComputeDevice {
 public:
  explicit HeldDevice(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  int32_t residency_index() const override { return 0; }
  int32_t num_slots() const override { return 2; }
  BatchSlot& slot(int32_t i) override { return slots_[size_t(i)]; }
  absl::StatusOr<std::unique_ptr<ResidentModel>> MakeResident(const GmmModel&) override {
    return absl::UnimplementedError("not a real device");
  }
  absl::Status Prepare(int32_t, const ResidentModel&) override { return absl::OkStatus(); }
  int64_t buffer_bytes() const override { return 0; }

  void FinishAll() {
    {
      std::lock_guard lock(mu_);
      released_ = int64_t(frames_.size());
    }
    changed_.notify_all();
  }
  int64_t Frames() {
    std::lock_guard lock(mu_);
    int64_t total = 0;
    for (int64_t f : frames_) total += f;
    return total;
  }
  int64_t Held() {
    std::lock_guard lock(mu_);
    return int64_t(frames_.size()) - released_;
  }
  std::vector<int64_t> Batches() {  // each batch's frames, in the order they came
    std::lock_guard lock(mu_);
    return frames_;
  }

 private:
  class Slot : public BatchSlot {
   public:
    explicit Slot(HeldDevice* device) : device_(device), scores_(64 * 64, 0.0f) {}
    absl::StatusOr<float*> Stage(std::span<const ResidentModel* const>, int32_t) override {
      return staged_.data();
    }
    absl::Status EnqueueScores(std::span<const ResidentModel* const>,
                               std::span<const FusionSegment>, int32_t frames, bool) override {
      std::lock_guard lock(device_->mu_);
      device_->frames_.push_back(frames);
      batch_ = int64_t(device_->frames_.size());
      return absl::OkStatus();
    }
    absl::Status Wait() override {
      std::unique_lock lock(device_->mu_);
      device_->changed_.wait(lock, [&] { return device_->released_ >= batch_; });
      return absl::OkStatus();
    }
    const float* fused() const override { return scores_.data(); }
    const float* model_scores(int32_t) const override { return scores_.data(); }

   private:
    HeldDevice* const device_;
    std::vector<float> staged_ = std::vector<float>(64 * 64);
    std::vector<float> scores_;
    int64_t batch_ = 0;  // this slot's batch, counted from 1
  };

  const std::string name_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<int64_t> frames_;
  int64_t released_ = 0;
  std::array<Slot, 2> slots_{Slot(this), Slot(this)};
};

// Polls cond every millisecond for up to five seconds.
template <typename Cond>
bool WaitFor(Cond cond) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!cond() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  return cond();
}

// A CPU device whose scoring throws, as a failed allocation would, on every other batch.
class ThrowingDevice : public ComputeDevice {
 public:
  ThrowingDevice() : cpu_(1, 64) {}
  const std::string& name() const override { return cpu_.name(); }
  int32_t residency_index() const override { return 0; }
  int32_t num_slots() const override { return 1; }
  BatchSlot& slot(int32_t) override { return slot_; }
  absl::StatusOr<std::unique_ptr<ResidentModel>> MakeResident(const GmmModel& m) override {
    return cpu_.MakeResident(m);
  }
  absl::Status Prepare(int32_t i, const ResidentModel& m) override { return cpu_.Prepare(i, m); }
  int64_t buffer_bytes() const override { return 0; }

 private:
  class Slot : public BatchSlot {
   public:
    explicit Slot(BatchSlot* cpu) : cpu_(cpu) {}
    absl::StatusOr<float*> Stage(std::span<const ResidentModel* const> models,
                                 int32_t frames) override {
      return cpu_->Stage(models, frames);
    }
    absl::Status EnqueueScores(std::span<const ResidentModel* const> models,
                               std::span<const FusionSegment> segments, int32_t frames,
                               bool copy) override {
      if (++batches_ % 2 == 1) throw std::bad_alloc();
      return cpu_->EnqueueScores(models, segments, frames, copy);
    }
    absl::Status Wait() override { return cpu_->Wait(); }
    const float* fused() const override { return cpu_->fused(); }
    const float* model_scores(int32_t k) const override { return cpu_->model_scores(k); }

   private:
    BatchSlot* const cpu_;
    int batches_ = 0;
  };
  CpuComputeDevice cpu_;
  Slot slot_{&cpu_.slot(0)};
};

class StatusSink : public server::WindowSink {
 public:
  void OnWindowScored(server::Window, absl::StatusOr<server::WindowScores> scores) override {
    std::lock_guard lock(mu);
    statuses.push_back(scores.status());
  }
  std::mutex mu;
  std::vector<absl::Status> statuses;
};

TEST(LaneTest, AJobThatThrowsFailsItsWindowsAndFreesTheSlot) {
  server::Metrics metrics;
  RandomModelOptions o;
  auto set = server::ModelSet::Make({CpuEntry(RandomModel(o, 3), &metrics)});
  auto sink = std::make_shared<StatusSink>();
  server::TaskQueue delivery(1);
  server::Lane lane(std::make_unique<ThrowingDevice>(), &metrics);
  ASSERT_TRUE(lane.Prepare(set->models[0]->resident(0)).ok());
  std::atomic<int> done{0};
  for (int batch = 0; batch < 2; ++batch) {
    server::Batch b;
    b.models = set;
    server::Window w;
    w.sink = sink;
    w.feats = RandomFeatures(5, o.dim, 0.0f, 3.0f, 9);
    b.frames = 5;
    b.windows.push_back(std::move(w));
    // The lane has one slot: the second batch runs only if the first one freed it.
    lane.Run(std::make_unique<server::ScoreJob>(std::move(b), &delivery), [&] { ++done; });
  }
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(sink->mu);
    return sink->statuses.size() == 2;
  }));
  EXPECT_EQ(done.load(), 2);
  std::lock_guard lock(sink->mu);
  EXPECT_EQ(sink->statuses[0].code(), absl::StatusCode::kResourceExhausted) << sink->statuses[0];
  EXPECT_TRUE(sink->statuses[1].ok()) << sink->statuses[1];
}

class NullSink : public server::WindowSink {
 public:
  void OnWindowScored(server::Window, absl::StatusOr<server::WindowScores>) override {}
};

// A batcher's surroundings: two lanes whose devices hold each batch until told to finish it.
class TwoLaneBatcherTest : public ::testing::Test {
 protected:
  TwoLaneBatcherTest() {
    auto held_a = std::make_unique<HeldDevice>("gpu-a");
    auto held_b = std::make_unique<HeldDevice>("gpu-b");
    a_ = held_a.get();
    b_ = held_b.get();
    lanes_.push_back(std::make_unique<server::Lane>(std::move(held_a), &metrics_));
    lanes_.push_back(std::make_unique<server::Lane>(std::move(held_b), &metrics_));
    options_.max_queue_delay = absl::ZeroDuration();
  }

  // A window of `frames` random-model frames, submitted.
  void Submit(server::Batcher& batcher, int32_t frames) {
    server::Window w;
    w.sink = sink_;
    w.feats = Matrix(frames, model_options_.dim);
    batcher.Submit(set_, std::move(w));
  }

  server::Metrics metrics_;
  RandomModelOptions model_options_;
  std::shared_ptr<const server::ModelSet> set_ =
      server::ModelSet::Make({CpuEntry(RandomModel(model_options_, 2), &metrics_)});
  server::BatcherOptions options_;
  server::TaskQueue delivery_{2};
  std::vector<std::unique_ptr<server::Lane>> lanes_;
  HeldDevice* a_ = nullptr;
  HeldDevice* b_ = nullptr;
  std::shared_ptr<NullSink> sink_ = std::make_shared<NullSink>();
};

TEST_F(TwoLaneBatcherTest, GivesEachBatchToTheLeastLoadedLaneWithRoom) {
  options_.max_batch_frames = 10;
  {
    server::Batcher batcher(options_, lanes_, &delivery_, &metrics_);
    // Batches of 10, 4, 6 frames: a takes the first (both idle: the first lane), b the second
    // (a has more in flight), then b again (4 < 10).
    Submit(batcher, 10);
    ASSERT_TRUE(WaitFor([&] { return a_->Frames() == 10; }));
    Submit(batcher, 4);
    ASSERT_TRUE(WaitFor([&] { return b_->Frames() == 4; }));
    Submit(batcher, 6);
    ASSERT_TRUE(WaitFor([&] { return b_->Frames() == 10; }));
    // Both have depth 2: a takes the next, b is full.
    Submit(batcher, 3);
    ASSERT_TRUE(WaitFor([&] { return a_->Frames() == 13; }));
    // Both full: the next waits until a lane finishes.
    Submit(batcher, 5);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(a_->Frames() + b_->Frames(), 23);
    b_->FinishAll();
    ASSERT_TRUE(WaitFor([&] { return b_->Frames() == 15; }));
    a_->FinishAll();
    b_->FinishAll();
  }  // the batcher has nothing left in flight
  EXPECT_EQ(a_->Held(), 0);
}

// A queue that fell behind (more than --max-batch-frames queued while every slot was busy) is
// taken in batches of up to --catch-up-batch-frames, whole windows in arrival order; a queue that
// keeps up still goes in batches of --max-batch-frames.
TEST_F(TwoLaneBatcherTest, AQueueThatFellBehindCatchesUpInLargerBatches) {
  options_.max_batch_frames = 10;
  options_.catch_up_batch_frames = 30;
  {
    server::Batcher batcher(options_, lanes_, &delivery_, &metrics_);
    // Four batches of 10 frames fill both lanes' two slots.
    for (int64_t filled = 10; filled <= 40; filled += 10) {
      Submit(batcher, 10);
      ASSERT_TRUE(WaitFor([&] { return a_->Frames() + b_->Frames() == filled; }));
    }
    // Seven windows of 5 frames wait behind them.
    for (int i = 0; i < 7; ++i) Submit(batcher, 5);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(a_->Frames() + b_->Frames(), 40);
    a_->FinishAll();
    EXPECT_TRUE(WaitFor([&] { return a_->Frames() == 55; }));
    // Every batch finishes, whatever the batcher made of the queue, so that it can be destroyed.
    EXPECT_TRUE(WaitFor([&] {
      a_->FinishAll();
      b_->FinishAll();
      return a_->Held() + b_->Held() == 0 && a_->Frames() + b_->Frames() == 75;
    }));
  }
  EXPECT_EQ(a_->Batches(), (std::vector<int64_t>{10, 10, 30, 5}));
  EXPECT_EQ(b_->Batches(), (std::vector<int64_t>{10, 10}));
}

// Equal loads (here: both lanes idle) are broken in turn, so a second GPU shares moderate load.
TEST_F(TwoLaneBatcherTest, SpreadsTiesOverTheLanesInTurn) {
  server::Batcher batcher(options_, lanes_, &delivery_, &metrics_);
  // Each batch finishes before the next arrives: every one finds both lanes idle.
  std::vector<HeldDevice*> order;
  for (int i = 0; i < 4; ++i) {
    const int64_t before = a_->Frames() + b_->Frames();
    Submit(batcher, 3);
    ASSERT_TRUE(WaitFor([&] { return a_->Frames() + b_->Frames() == before + 3; }));
    HeldDevice* took = a_->Held() > 0 ? a_ : b_;
    order.push_back(took);
    took->FinishAll();
    ASSERT_TRUE(WaitFor([&] { return took->Held() == 0; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the lane counts it out
  }
  EXPECT_EQ(order, (std::vector<HeldDevice*>{a_, b_, a_, b_}));
}

// A BatchViterbi that records its batches and fails any batch holding an utterance of 13 frames;
// an utterance's "alignment" is its frame count, as one transition-id.
class RecordingViterbi final : public BatchViterbi {
 public:
  absl::StatusOr<std::vector<ViterbiResult>> Align(std::span<const ViterbiUtterance> utterances,
                                                   const TransitionModel&, float) override {
    ++entered;
    std::lock_guard lock(mu);
    batches.push_back(int32_t(utterances.size()));
    std::vector<ViterbiResult> results;
    for (const ViterbiUtterance& u : utterances) {
      if (u.loglikes->rows == 13) return absl::ResourceExhaustedError("13 frames never fit");
      results.push_back({.reached_final = true, .transition_ids = {u.loglikes->rows}});
    }
    return results;
  }
  std::atomic<int32_t> entered{0};
  std::mutex mu;
  std::vector<int32_t> batches;
};

// Jobs queued together share a launch when their model and scale agree; a batch that fails as a
// whole is retried a job at a time, so only the job that cannot be aligned fails.
TEST(ViterbiQueueTest, BatchesJobsOfOneModelAndScaleAndFailsOnlyTheJobThatCannot) {
  const TransitionModel a, b;
  RecordingViterbi device;
  std::mutex mu;
  std::map<int32_t, absl::StatusOr<ViterbiResult>> answers;
  auto job = [&](int32_t frames, const TransitionModel* model, float scale) {
    server::ViterbiJob j;
    j.loglikes = Matrix(frames, 2);
    j.model = model;
    j.acoustic_scale = scale;
    j.done = [&, frames](absl::StatusOr<ViterbiResult> r) {
      std::lock_guard lock(mu);
      answers.emplace(frames, std::move(r));
    };
    return j;
  };
  {
    // Held by the device's lock until all are queued: they are taken together.
    std::unique_lock hold(device.mu);
    server::ViterbiQueue queue({&device});
    queue.Submit(job(1, &a, 0.1f));  // taken alone at once (the queue was empty), then blocks
    EXPECT_TRUE(WaitFor([&] { return device.entered.load() == 1; }));  // (no ASSERT: hold must go)
    queue.Submit(job(2, &a, 0.1f));
    queue.Submit(job(3, &b, 0.1f));  // another model: a batch of its own
    queue.Submit(job(4, &a, 0.1f));
    queue.Submit(job(5, &a, 0.5f));  // another scale: a batch of its own
    queue.Submit(job(13, &a, 0.1f));
    hold.unlock();
  }  // the queue aligns what is queued before it goes
  EXPECT_EQ(device.batches, (std::vector<int32_t>{1, 3, 1, 1, 1, 1, 1}));
  ASSERT_EQ(answers.size(), 6u);
  for (int32_t frames : {1, 2, 3, 4, 5}) {
    ASSERT_TRUE(answers.at(frames).ok()) << frames << ": " << answers.at(frames).status();
    EXPECT_EQ(answers.at(frames)->transition_ids, std::vector<int32_t>{frames});
  }
  EXPECT_EQ(answers.at(13).status().code(), absl::StatusCode::kResourceExhausted);
}

// KeptFrames (StreamConfig.keep_frames): the last frames, oldest first, across chunk boundaries
// and ring wrap-around; reservations with their entry's overhead; one live stream an id; the time
// to live from the stream's end.
std::string FrameBytes(const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<float> Frames(int first, int count, int dim) {  // frame f is (f, f + 0.5, ...)
  std::vector<float> v;
  for (int f = first; f < first + count; ++f) {
    for (int d = 0; d < dim; ++d) v.push_back(float(f) + 0.5f * float(d));
  }
  return v;
}

TEST(LaneSetTest, CpuLanesBatchUpTo512FramesUnlessTold) {
  server::ServerConfig config;
  config.backend = "cpu";
  server::Metrics metrics;
  auto lanes = server::LaneSet::Create(config, &metrics);
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  EXPECT_EQ((*lanes)->batcher_options().max_batch_frames, 512);
  config.batcher.max_batch_frames = 300;
  lanes = server::LaneSet::Create(config, &metrics);
  ASSERT_TRUE(lanes.ok()) << lanes.status();
  EXPECT_EQ((*lanes)->batcher_options().max_batch_frames, 300);
}

TEST(SocketBufferTest, WarnsOfSmallUnixSocketBuffersOnly) {
  const std::filesystem::path core =
      std::filesystem::path(::testing::TempDir()) / "socket_buffer_test_net_core";
  std::filesystem::create_directories(core);
  const auto set = [&](const char* name, long bytes) {
    std::ofstream(core / name) << bytes << "\n";
  };
  set("wmem_default", 212992);
  set("rmem_default", 4194304);
  const std::string warning = server::UnixSocketBufferWarning("unix:/run/g.sock", core);
  EXPECT_NE(warning.find("net.core.wmem_default = 212992"), std::string::npos) << warning;
  EXPECT_EQ(warning.find("rmem_default ="), std::string::npos) << warning;
  EXPECT_NE(warning.find("sysctl -w"), std::string::npos) << warning;
  // TCP sizes its own buffers.
  EXPECT_EQ(server::UnixSocketBufferWarning("127.0.0.1:50051", core), "");
  set("wmem_default", 4194304);
  EXPECT_EQ(server::UnixSocketBufferWarning("unix:/run/g.sock", core), "");
  set("rmem_default", 1000);
  EXPECT_NE(server::UnixSocketBufferWarning("unix:/run/g.sock", core).find("rmem_default = 1000"),
            std::string::npos);
  // Nothing to read (another kernel, a sandbox): no warning rather than a wrong one.
  EXPECT_EQ(server::UnixSocketBufferWarning("unix:/run/g.sock", core / "absent"), "");
  std::filesystem::remove_all(core);
}

TEST(KeptFramesTest, KeepsTheLastFramesOldestFirst) {
  server::KeptFrames kept(
      {.max_frames_per_stream = 100, .max_bytes = 1 << 20, .ttl = absl::Seconds(60)});
  const auto now = server::Clock::now();
  auto writer = kept.Open("s", 3, 5, now);
  ASSERT_TRUE(writer.ok()) << writer.status();
  (*writer)->Append(FrameBytes(Frames(0, 2, 3)));  // fewer than the ring
  auto two = kept.Get("s", now);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->rows, 2);
  EXPECT_EQ(two->data, Frames(0, 2, 3));
  (*writer)->Append(FrameBytes(Frames(2, 4, 3)));  // wraps: frames 1 .. 5 stay
  (*writer)->Append(FrameBytes(Frames(6, 2, 3)));  // frames 3 .. 7
  auto five = kept.Get("s", now);
  ASSERT_TRUE(five.ok());
  EXPECT_EQ(five->data, Frames(3, 5, 3));
  (*writer)->Append(FrameBytes(Frames(8, 12, 3)));  // a chunk longer than the ring: its last 5
  EXPECT_EQ(kept.Get("s", now)->data, Frames(15, 5, 3));
}

TEST(KeptFramesTest, ReservesLimitsAndExpires) {
  const int64_t one = 10 * 2 * 4 + 1 + server::KeptFrames::kEntryOverheadBytes;  // "a", 10 x 2
  server::KeptFrames kept(
      {.max_frames_per_stream = 10, .max_bytes = 2 * one, .ttl = absl::Seconds(60)});
  const auto t0 = server::Clock::now();
  EXPECT_EQ(kept.Open("a", 2, 11, t0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(kept.Open("a", 2, 0, t0).status().code(), absl::StatusCode::kInvalidArgument);
  auto a = kept.Open("a", 2, 10, t0);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(kept.reserved_bytes(), one);
  EXPECT_EQ(kept.Open("a", 2, 1, t0).status().code(), absl::StatusCode::kAlreadyExists);
  auto b = kept.Open("b", 2, 10, t0);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(kept.Open("c", 2, 1, t0).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(kept.Get("c", t0).status().code(), absl::StatusCode::kNotFound);
  // Ended: kept for the time to live, then gone with its reservation; a new stream may take
  // the id (and the bytes) at once after the end.
  a->reset();
  EXPECT_TRUE(kept.Get("a", t0 + std::chrono::seconds(30)).ok());
  auto again = kept.Open("a", 2, 10, t0 + std::chrono::seconds(30));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(kept.reserved_bytes(), 2 * one);
  b->reset();
  const auto later = server::Clock::now() + std::chrono::seconds(61);
  EXPECT_EQ(kept.Get("b", later).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(kept.reserved_bytes(), one);
  EXPECT_TRUE(kept.Get("a", later).ok());  // still live
}

}  // namespace
}  // namespace gmmscore::testing
