// Force-included into proto/wire_codec.cc by fuzz/CMakeLists.txt for clang < 15 only, whose
// __builtin_cpu_supports does not know "f16c" (a compile error): the same test through CPUID.
// Delete this file and its lines in fuzz/CMakeLists.txt once wire_codec.cc builds with clang 14.
#pragma once

#include <cpuid.h>

static inline bool GmmscoreFuzzCpuSupports(const char* feature) {
  if (feature[0] == 'f') {  // "f16c": CPUID.1:ECX bit 29
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
  }
  return __builtin_cpu_supports("avx");  // the only other feature the file asks about
}

#define __builtin_cpu_supports(feature) GmmscoreFuzzCpuSupports(feature)
