// The random numbers Kaldi's tools draw (src/base/kaldi-math.h), so that gmm-est's mixing up
// perturbs split Gaussians by the same amounts and align-equal-compiled draws the same paths.
// Kaldi calls the C library's rand(): gmm-est without seeding it (glibc: as srand(1)),
// EqualAlign after srand(hash of the key). RandInt(lo, hi) = lo + rand() % (hi + 1 - lo);
// RandUniform() = (rand() + 1) / (RAND_MAX + 2) rounded to float; RandGauss() = sqrtf(-2
// logf(u1)) * cosf(2 pi u2) in float, u1 drawn first (as GCC evaluates Kaldi's expression). The
// generator here is glibc's random_r on a private state: rand()'s sequence, untouched by anyone
// else's calls.
#pragma once

#include <stdlib.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

namespace gmmscore {

class KaldiRandom {
 public:
  // glibc's srand: seeds 0 and 1 give the same sequence, rand()'s when never seeded.
  explicit KaldiRandom(uint32_t seed = 1) {
    initstate_r(seed, state_.data(), state_.size(), &data_);
  }
  KaldiRandom(const KaldiRandom&) = delete;
  KaldiRandom& operator=(const KaldiRandom&) = delete;

  // rand(): 0 .. RAND_MAX.
  int32_t Rand() {
    int32_t value = 0;
    random_r(&data_, &value);
    return value;
  }
  // RandInt(lo, hi): lo + rand() % (hi + 1 - lo), and no draw at all where lo == hi.
  int32_t Int(int32_t lo, int32_t hi) { return lo == hi ? lo : lo + Rand() % (hi + 1 - lo); }
  // RandUniform(): in (0, 1).
  float Uniform() { return static_cast<float>((Rand() + 1.0) / (RAND_MAX + 2.0)); }
  // RandGauss(): a standard normal draw from two Uniform() draws, each expression in Kaldi's
  // types (logf and sqrtf of floats; the cosine's argument in double, taken by cosf).
  float Gauss() {
    const float u1 = Uniform();
    const float u2 = Uniform();
    return sqrtf(-2 * logf(u1)) * cosf(static_cast<float>(2 * std::numbers::pi * u2));
  }

 private:
  // TYPE_3 state, as rand()'s: 31 words of state plus glibc's type word.
  std::array<char, 128> state_{};
  random_data data_{};
};

// Kaldi's StringHasher, which seeds align-equal-compiled's draws with the utterance key (each
// character added to the running hash times 7853), cut to the int that srand takes.
inline uint32_t KaldiKeySeed(const std::string& key) {
  size_t hash = 0;
  for (const char c : key) hash = hash * 7853 + static_cast<size_t>(static_cast<long>(c));
  return static_cast<uint32_t>(hash);
}

}  // namespace gmmscore
