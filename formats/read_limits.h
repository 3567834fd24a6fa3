// What the readers allow a file to claim, and the arithmetic they check it with: every count a
// file gives is checked against the bytes the file has left (where that is knowable) and against
// the maxima here before anything is sized by it, with overflow-checked products; where the size
// cannot be known (a pipe), the data is read in bounded chunks so that a count that lies fails at
// the end of the data, not at the allocation. `CatchAllocation` is the backstop of every reader's
// entry point: an allocation that fails anyway (a legitimately huge file on a small machine)
// becomes RESOURCE_EXHAUSTED naming the input, never an exception.
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace gmmscore {

// Values (floats, ints) in one Kaldi vector or matrix object: 8 GiB of floats, far beyond any
// feature matrix or GMM parameter block.
inline constexpr uint64_t kMaxKaldiObjectValues = uint64_t{1} << 31;
// A Kaldi token or text word (<TransitionModel>, FM, a number): real ones are a few bytes.
inline constexpr size_t kMaxKaldiTokenBytes = 4096;
// Phone ids of a topology: Kaldi's phones.txt numbers phones from 1, a few thousand at most
// (position-dependent phones and disambiguation symbols included).
inline constexpr int32_t kMaxPhoneId = 1 << 20;
// pdf-ids of a transition model.
inline constexpr int32_t kMaxPdfId = 1 << 28;
// Values a text MMF may materialise (macro definitions, Gaussians of states, transition
// matrices of HMMs) per byte of text, on top of kMmfBaseValues: macros let a few bytes stand
// for a whole mean and variance, and a real model with every mixture a ~m macro materialises
// about 2 values per byte at dimension 39, 6 at dimension 120.
inline constexpr uint64_t kMmfValuesPerByte = 8;
inline constexpr uint64_t kMmfBaseValues = uint64_t{1} << 21;

// a * b, or false where it overflows 64 bits.
inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// a * b * c, or false where it overflows 64 bits.
inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t c, uint64_t* out) {
  uint64_t ab = 0;
  return CheckedMul(a, b, &ab) && CheckedMul(ab, c, out);
}

// Runs `read` (a reader returning absl::Status or absl::StatusOr<T>) and turns an exception that
// still escapes it into a status naming `name`: RESOURCE_EXHAUSTED for a failed allocation,
// INTERNAL for anything else.
template <typename Read>
auto CatchAllocation(absl::string_view name, Read&& read) -> std::invoke_result_t<Read> {
  try {
    return read();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name,
                     ": out of memory while reading (the input is larger than this "
                     "machine can hold)"));
  } catch (const std::length_error& e) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, ": out of memory while reading (", e.what(), ")"));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(name, ": unexpected error while reading: ", e.what()));
  }
}

}  // namespace gmmscore
