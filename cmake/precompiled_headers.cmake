# Precompiled headers (GMMSCORE_PCH, on by default): most of a translation unit's compile time
# here is parsing the same standard library, Abseil and GoogleTest headers again (a test at -O3:
# 9-14 s, of which the headers are about half), and CI builds the tree three times on 2 cores.
#
#   gmmscore_precompile_libraries(DIR...)  every library and program under DIR with at least
#       4 C++ sources gets its own precompiled header of GMMSCORE_PCH_HEADERS, compiled with that
#       target's own flags, so that it always matches them.
#   gmmscore_test_pch_donor(NAME)  an executable whose precompiled header (GMMSCORE_PCH_HEADERS and
#       GoogleTest) the tests reuse: a test's flags are the donor's (gmmscore_test gives both the
#       same warnings, definitions that do not touch those headers, OpenMP and GoogleTest).
#   gmmscore_test_pch(TARGET)  TARGET reuses the donor's precompiled header.
#
# A forced header hides a missing #include: build with -DGMMSCORE_PCH=OFF to see one
# (scripts/sanitize.sh builds its TSan tree so).
option(GMMSCORE_PCH "Precompile the standard, Abseil and GoogleTest headers" ON)
# GCC 12 loses the system-header mark of what a precompiled header holds, and then reports its
# false positives inside the standard library's inlined std::string code (GCC PR 105651 and its
# kin: array-bounds, stringop-overread, stringop-overflow) as if they were ours, where the same
# code included as text is silent. Those three go the way of maybe-uninitialized and restrict.
if(GMMSCORE_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND GMMSCORE_WARNINGS -Wno-array-bounds -Wno-stringop-overread -Wno-stringop-overflow)
endif()

set(GMMSCORE_PCH_HEADERS
    <algorithm> <cmath> <cstdint> <cstdio> <cstring> <functional> <map> <memory> <optional>
    <span> <string> <utility> <vector> <sstream> <fstream> <mutex> <thread>
    <absl/status/status.h> <absl/status/statusor.h> <absl/strings/str_cat.h>)

function(gmmscore_precompile_libraries)
  if(NOT GMMSCORE_PCH)
    return()
  endif()
  # For C++ only (a CUDA target's .cu files get none); ">" ends a generator expression, hence
  # $<ANGLE-R>.
  set(cxx_only "")
  foreach(header ${GMMSCORE_PCH_HEADERS})
    string(REPLACE ">" "$<ANGLE-R>" header "${header}")
    list(APPEND cxx_only "$<$<COMPILE_LANGUAGE:CXX>:${header}>")
  endforeach()
  foreach(dir ${ARGN})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
        continue()
      endif()
      get_target_property(sources ${target} SOURCES)
      list(FILTER sources INCLUDE REGEX "\\.cc$")
      list(LENGTH sources count)
      if(count GREATER_EQUAL 4)
        target_precompile_headers(${target} PRIVATE ${cxx_only})
      endif()
    endforeach()
  endforeach()
endfunction()

function(gmmscore_test_pch_donor name)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${name}.cc "int main() { return 0; }\n")
  add_executable(${name} ${CMAKE_CURRENT_BINARY_DIR}/${name}.cc)
  if(GMMSCORE_PCH)
    target_precompile_headers(${name} PRIVATE ${GMMSCORE_PCH_HEADERS} <gtest/gtest.h>)
  endif()
endfunction()

function(gmmscore_test_pch target donor)
  if(GMMSCORE_PCH)
    target_precompile_headers(${target} REUSE_FROM ${donor})
  endif()
endfunction()
