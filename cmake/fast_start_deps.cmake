# Linking for a fast start. A program with the target property GMMSCORE_FAST_START (gmmscore-kaldi,
# the Kaldi tools) links Abseil, FFTW, zlib, OpenMP's runtime and the C++ runtime statically and
# reaches OpenFst through the module fst/ loads when first needed: each shared library costs every
# start its loading and relocation, and a recipe starts the tools thousands of times
# (docs/PERFORMANCE.md, "Start-up"). Every other program links them as shared libraries, as gRPC,
# which links the shared Abseil, needs.
#
# The libraries link the gmmscore_dep_* targets below instead of the packages' own; each reads the
# property of the program being linked ($<TARGET_PROPERTY:...> in a link interface is evaluated for
# that program). Where a static archive is missing the shared library is used, only slower.

function(gmmscore_static_or_shared target static shared)
  add_library(${target} INTERFACE)
  if(static)
    target_link_libraries(${target} INTERFACE
                          "$<IF:$<BOOL:$<TARGET_PROPERTY:GMMSCORE_FAST_START>>,${static},${shared}>")
  else()
    target_link_libraries(${target} INTERFACE ${shared})
  endif()
endfunction()

# Abseil: every archive in one group (they call each other in cycles); the linker takes what is used.
file(GLOB GMMSCORE_ABSL_ARCHIVES "${absl_DIR}/../../libabsl_*.a")
if(GMMSCORE_ABSL_ARCHIVES)
  string(REPLACE ";" "," absl_list "${GMMSCORE_ABSL_ARCHIVES}")
  set(absl_static "$<LINK_GROUP:RESCAN,${absl_list}>")
else()
  set(absl_static "")
  message(STATUS "gmmscore: no static Abseil; the Kaldi tools link the shared one (slower start)")
endif()
gmmscore_static_or_shared(gmmscore_dep_absl "${absl_static}"
                          "absl::status;absl::statusor;absl::strings")

find_library(GMMSCORE_FFTW_ARCHIVE libfftw3.a)
find_library(GMMSCORE_ZLIB_ARCHIVE libz.a)
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libgomp.a
                OUTPUT_VARIABLE gmmscore_gomp_archive OUTPUT_STRIP_TRAILING_WHITESPACE)
foreach(archive GMMSCORE_FFTW_ARCHIVE GMMSCORE_ZLIB_ARCHIVE)
  if(NOT ${archive})
    set(${archive} "")
  endif()
endforeach()
gmmscore_static_or_shared(gmmscore_dep_fftw "${GMMSCORE_FFTW_ARCHIVE}" PkgConfig::GMMSCORE_FFTW)
gmmscore_static_or_shared(gmmscore_dep_zlib "${GMMSCORE_ZLIB_ARCHIVE}" ZLIB::ZLIB)

# OpenMP: compiled with OpenMP's flags always; at link, libgomp.a and threads for a fast start
# (GCC's runtime; not under a sanitizer, whose runtime wants the shared C++ and OpenMP runtimes).
if(IS_ABSOLUTE "${gmmscore_gomp_archive}" AND EXISTS "${gmmscore_gomp_archive}"
   AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT GMMSCORE_SANITIZE)
  gmmscore_static_or_shared(gmmscore_dep_openmp_link "${gmmscore_gomp_archive};Threads::Threads"
                            OpenMP::OpenMP_CXX)
else()
  gmmscore_static_or_shared(gmmscore_dep_openmp_link "" OpenMP::OpenMP_CXX)
endif()
add_library(gmmscore_dep_openmp INTERFACE)
target_compile_options(gmmscore_dep_openmp INTERFACE ${OpenMP_CXX_FLAGS})
target_link_libraries(gmmscore_dep_openmp INTERFACE gmmscore_dep_openmp_link)

# A fast-start program: the property above, the C++ runtime linked in, and not position-independent
# (a PIE's relocations are applied at every start: 0.8 ms of gmmscore-kaldi's 4.8, measured).
function(gmmscore_fast_start target)
  set_target_properties(${target} PROPERTIES GMMSCORE_FAST_START ON)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT GMMSCORE_SANITIZE)
    target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc -no-pie)
  endif()
endfunction()
