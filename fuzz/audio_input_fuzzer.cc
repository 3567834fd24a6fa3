// The front end's untrusted inputs (feat/), on the input's bytes after its first, which picks
// one: 0 WAVE objects read one after another from the bytes (ReadWave, as an archive of WAVE
// files is read), each short one then through the MFCC at its own rate; 1 a front-end config
// file (ApplyFrontEndConfig), then, where valid and cheap enough, a stream of noise through the
// online front end it configures.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "feat/front_end_options.h"
#include "feat/mfcc.h"
#include "feat/online_front_end.h"
#include "feat/wave_reader.h"
#include "fuzz/fuzz_util.h"

namespace {

void Waves(std::string_view bytes) {
  std::istringstream in{std::string(bytes)};
  for (int i = 0; i < 8 && in.peek() != std::char_traits<char>::eof(); ++i) {
    auto wave = gmmscore::ReadWave(in, "fuzz");
    if (!wave.ok()) return;
    if (wave->num_samples() > 16000 || wave->sample_rate < 1000 || wave->sample_rate > 96000) {
      continue;
    }
    gmmscore::MfccOptions opts;
    opts.frame.samp_freq = wave->sample_rate;
    opts.mel.num_bins = 15;
    (void)gmmscore::ComputeMfcc(opts, wave->channels[0], wave->sample_rate, 1.0, 1);
  }
}

void Config(std::string_view text) {
  gmmscore::FrontEndOptions opts;
  if (!gmmscore::ApplyFrontEndConfig("fuzz.conf", std::string(text), &opts).ok()) return;
  const gmmscore::FrameOptions& f = opts.mfcc.frame;
  // Valid but slow configurations (a 10 s window, a 1-sample shift) are not what this looks for.
  if (!opts.Validate().ok() || f.PaddedWindowSize() > 4096 || f.WindowShift() < 40) return;
  auto front_end = gmmscore::OnlineFrontEnd::Create(opts, 7);
  if (!front_end.ok()) return;
  std::vector<float> noise(800);
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = float((i * 7919) % 2001) - 1000.0f;
  std::vector<float> frames;
  for (int chunk = 0; chunk < 4; ++chunk) {
    (*front_end)->AcceptWaveform(noise);
    (*front_end)->TakeFrames(&frames);
  }
  (*front_end)->InputFinished();
  (*front_end)->TakeFrames(&frames);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest = gmmscore::fuzz::AsView(data + 1, size - 1);
  if (data[0] % 2 == 0) {
    Waves(rest);
  } else {
    Config(rest);
  }
  return 0;
}
