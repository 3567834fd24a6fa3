// The random numbers Kaldi's training tools draw (src/base/kaldi-math.h), so that gmm-est's
// mixing up perturbs the split Gaussians by the same amounts: Kaldi calls the C library's rand()
// without seeding it (glibc: as srand(1)), RandUniform() = (rand() + 1) / (RAND_MAX + 2) rounded
// to float, and RandGauss() = sqrtf(-2 logf(u1)) * cosf(2 pi u2) in float, u1 drawn first (as GCC
// evaluates Kaldi's expression). Each gmm-est run is a new process, so each starts the sequence
// anew. The generator is glibc's random_r on a private state: the same sequence as rand(),
// untouched by anyone else's calls.
#pragma once

#include <stdlib.h>

#include <array>
#include <cstdint>

namespace gmmscore {

class KaldiRandom {
 public:
  // glibc's srand: seeds 0 and 1 give the same sequence, rand()'s when never seeded.
  explicit KaldiRandom(uint32_t seed = 1);
  KaldiRandom(const KaldiRandom&) = delete;
  KaldiRandom& operator=(const KaldiRandom&) = delete;

  int32_t Rand();   // rand(): 0 .. RAND_MAX
  float Uniform();  // RandUniform(): in (0, 1)
  float Gauss();    // RandGauss(): a standard normal draw, two Uniform() draws

 private:
  // TYPE_3 state, as rand()'s: 31 words of state plus glibc's type word.
  std::array<char, 128> state_{};
  random_data data_{};
};

}  // namespace gmmscore
