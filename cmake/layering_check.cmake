# Keeps the includes to the arrows of docs/ARCHITECTURE.md: each folder may include only the
# project headers of the folders below it (and its own). Run by CTest as layering_check:
#   cmake -DSOURCE_DIR=<repo> -P cmake/layering_check.cmake
# Fails listing every include against the arrows. Third-party headers (<...>, "absl/...",
# "hwy/...", generated "gmmscore/v1/..." and "grpc/...") are not checked here: CMake's link graph
# keeps those.

cmake_minimum_required(VERSION 3.25)

# folder (a path prefix) -> the project include prefixes it may use, as one regex.
set(kernels_core "kernels/[a-z_]+\\.h")  # the backend-neutral interfaces
set(rules
  "util/|util/"
  "model/|(util|model)/"
  "fst/|(util|model|fst)/"
  "formats/|(util|model|fst|formats)/"
  "feat/|(util|formats|feat)/"
  "kernels/cpu/|(util|model)/|${kernels_core}|kernels/cpu/"
  "kernels/cuda/|(util|model)/|${kernels_core}|kernels/cuda/"
  "kernels/backend|(util|model)/|kernels/"
  "kernels/|(util|model)/|${kernels_core}"
  "align/|(util|model|fst|align)/"
  "train/|(util|model|train)/"
  "bench/|(util|model|formats|kernels|align|train|bench)/"
  "proto/|proto/"
  "client/|(util|model|proto|client)/"
  "server/|(util|model|formats|feat|align|train|proto|server)/|${kernels_core}"
  "tools/|(util|model|formats|feat|kernels|align|train|bench|proto|client|tools)/"
)

set(violations "")
foreach(rule ${rules})
  string(FIND "${rule}" "|" bar)
  string(SUBSTRING "${rule}" 0 ${bar} folder)
  math(EXPR start "${bar} + 1")
  string(SUBSTRING "${rule}" ${start} -1 allowed)
  file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${folder}*")
  foreach(file ${files})
    if(NOT file MATCHES "\\.(h|cc|cu|cuh)$" OR file IN_LIST checked)
      continue()
    endif()
    list(APPEND checked "${file}")  # the first (most specific) rule that matches a file wins
    file(STRINGS "${SOURCE_DIR}/${file}" includes REGEX "^#include \"")
    foreach(line ${includes})
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
      if(header MATCHES "^(absl|hwy|gmmscore/v1|grpc)/")
        continue()
      endif()
      if(NOT header MATCHES "^(${allowed})")
        string(APPEND violations "  ${file}: #include \"${header}\" (allowed: ${allowed})\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "includes against the library arrows (docs/ARCHITECTURE.md):\n${violations}")
endif()
list(LENGTH checked count)
message(STATUS "layering_check: ${count} files keep to the arrows")
