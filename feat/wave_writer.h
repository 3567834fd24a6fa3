// WAVE objects out, as Kaldi's WaveData::Write writes them (extract-segments, wav-copy): a
// canonical 44-byte RIFF header (PCM, 16 bits, the rate truncated to an integer) and each sample
// truncated towards zero to an integer and clipped to 16 bits, channels interleaved.
#pragma once

#include <cstdint>
#include <ostream>

#include "feat/wave_reader.h"

namespace gmmscore {

// Writes the wave; returns how many samples were clipped.
int64_t WriteWave(const WaveData& wave, std::ostream& os);

}  // namespace gmmscore
