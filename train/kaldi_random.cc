#include "train/kaldi_random.h"

#include <cmath>
#include <numbers>

namespace gmmscore {

KaldiRandom::KaldiRandom(uint32_t seed) { initstate_r(seed, state_.data(), state_.size(), &data_); }

int32_t KaldiRandom::Rand() {
  int32_t value = 0;
  random_r(&data_, &value);
  return value;
}

float KaldiRandom::Uniform() { return static_cast<float>((Rand() + 1.0) / (RAND_MAX + 2.0)); }

float KaldiRandom::Gauss() {
  // The two draws in Kaldi's order, each expression in Kaldi's types: logf and sqrtf of floats,
  // the cosine's argument computed in double and taken by cosf.
  const float u1 = Uniform();
  const float u2 = Uniform();
  const float radius = sqrtf(-2 * logf(u1));
  return radius * cosf(static_cast<float>(2 * std::numbers::pi * u2));
}

}  // namespace gmmscore
