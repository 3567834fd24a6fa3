# Keeps the code to the arrows of docs/ARCHITECTURE.md. Run by CTest as layering_check:
#   cmake -DSOURCE_DIR=<repo> -P cmake/layering_check.cmake
# Three checks, each failing with a line per offence:
#   1. project includes ("..." or <...>): each folder may include only the headers of the folders
#      below it (and its own);
#   2. third-party includes (<...>): the libraries that stay behind one folder (OpenFst in fst/,
#      CUDA in kernels/cuda/ and bench/, gRPC and protobuf in the RPC layers, ...);
#   3. link lines: each gmmscore_* library links only the libraries its folder may include.
# Standard and system headers, Abseil and Highway are allowed everywhere.

cmake_minimum_required(VERSION 3.25)

# A rule: "PREFIX => ALLOWED" or "PREFIX => ALLOWED !! FORBIDDEN", ALLOWED and FORBIDDEN regexes
# over include paths. The first rule whose PREFIX starts a file's path is that file's rule, so the
# specific come first.
set(kernels_core "kernels/[a-z_]+\\.h")  # the backend-neutral interfaces, and backend.h
set(no_backend "kernels/backend\\.h")    # the choice between the backends, which sees both
set(libs "(util|model|fst|formats|feat|align|train|proto)/|${kernels_core}")
set(server_core "server/(config|metrics|clock|kept_frames|front_end_registry|socket_buffers|model_entry)\\.h")
set(rules
  "util/ => util/"
  "model/ => (util|model)/"
  "fst/ => (util|model|fst)/"
  "formats/ => (util|model|fst|formats)/"
  "feat/ => (util|formats|feat)/"
  "kernels/cpu/ => (util|model)/|${kernels_core}|kernels/cpu/ !! ${no_backend}"
  # Inside the CUDA backend: common/ below score/; align/ and em/ over the scorer's model and
  # tensor-core arithmetic; the daemon's device (kernels/cuda/*) over all of them.
  "kernels/cuda/common/ => (util|model)/|${kernels_core}|kernels/cuda/common/ !! ${no_backend}"
  "kernels/cuda/score/ => (util|model)/|${kernels_core}|kernels/cuda/(common|score)/ !! ${no_backend}"
  "kernels/cuda/align/ => (util|model)/|${kernels_core}|kernels/cuda/(common|score|align)/ !! ${no_backend}"
  "kernels/cuda/em/ => (util|model)/|${kernels_core}|kernels/cuda/(common|score|em)/ !! ${no_backend}"
  "kernels/cuda/ => (util|model)/|${kernels_core}|kernels/cuda/ !! ${no_backend}"
  "kernels/backend => (util|model)/|kernels/"
  "kernels/ => (util|model)/|${kernels_core} !! ${no_backend}"
  "align/ => (util|model|fst|align)/|${kernels_core} !! ${no_backend}"
  "train/ => (util|model|align|train)/|${kernels_core} !! ${no_backend}"
  "bench/ => (util|model|formats|kernels|align|train|bench)/"
  "proto/ => proto/"
  "client/ => (util|model|proto|client)/"
  # Inside the daemon: its core (configuration, metrics, kept frames, registries) below the
  # scheduling, the scheduling below the RPC layer; neither the scheduling nor the model registry
  # sees rpc/, the core sees neither.
  "server/config => ${libs}|${server_core}"
  "server/metrics => ${libs}|${server_core}"
  "server/clock => ${libs}|${server_core}"
  "server/kept_frames => ${libs}|${server_core}"
  "server/front_end_registry => ${libs}|${server_core}"
  "server/socket_buffers => ${libs}|${server_core}"
  "server/model_entry => ${libs}|${server_core}"
  "server/scheduling/ => ${libs}|${server_core}|server/scheduling/"
  "server/model_registry => ${libs}|${server_core}|server/model_registry\\.h|server/scheduling/"
  "server/ => ${libs}|server/"
  "cli/ => (util|cli)/"
  "loadgen/ => (util|model|proto|client|cli|loadgen)/"
  "tools/ => (util|model|formats|feat|kernels|align|train|bench|proto|client|cli|loadgen|tools)/"
)

# Third-party headers in <...> that only some folders may include: "HEADER-REGEX => FOLDER-REGEX".
set(third_party
  "fst/ => fst/"
  "(cuda|cublas|cub/|thrust/) => (kernels/cuda/|bench/)"
  "(grpc|grpcpp/|google/protobuf/) => (proto|client|server|loadgen|tools)/"
  "prometheus/ => server/"
  "(sndfile\\.h|fftw3\\.h) => feat/"
  "cblas\\.h => bench/"
  "benchmark/ => (bench|server/bench)/"
  "gmmscore/v1/ => (proto|client|server|loadgen|tools)/"
)

# Splits "A => B !! C" into out_allowed and out_forbidden (empty where there is no "!!").
function(split_rule rule out_prefix out_allowed out_forbidden)
  string(FIND "${rule}" " => " arrow)
  string(SUBSTRING "${rule}" 0 ${arrow} prefix)
  math(EXPR start "${arrow} + 4")
  string(SUBSTRING "${rule}" ${start} -1 rest)
  string(FIND "${rest}" " !! " bang)
  set(forbidden "")
  if(bang GREATER_EQUAL 0)
    math(EXPR start "${bang} + 4")
    string(SUBSTRING "${rest}" ${start} -1 forbidden)
    string(SUBSTRING "${rest}" 0 ${bang} rest)
  endif()
  set(${out_prefix} "${prefix}" PARENT_SCOPE)
  set(${out_allowed} "${rest}" PARENT_SCOPE)
  set(${out_forbidden} "${forbidden}" PARENT_SCOPE)
endfunction()

# The rule of a path: sets out_allowed, out_forbidden; out_found false where no rule applies.
function(rule_of path out_found out_allowed out_forbidden)
  foreach(rule ${rules})
    split_rule("${rule}" prefix allowed forbidden)
    string(FIND "${path}" "${prefix}" at)
    if(at EQUAL 0)
      set(${out_found} TRUE PARENT_SCOPE)
      set(${out_allowed} "${allowed}" PARENT_SCOPE)
      set(${out_forbidden} "${forbidden}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out_found} FALSE PARENT_SCOPE)
endfunction()

# Whether a file under a rule may depend on `header` (a project path).
function(allowed_by allowed forbidden header out)
  set(ok FALSE)
  if(header MATCHES "^(${allowed})")
    set(ok TRUE)
    if(NOT forbidden STREQUAL "" AND header MATCHES "^(${forbidden})")
      set(ok FALSE)
    endif()
  endif()
  set(${out} ${ok} PARENT_SCOPE)
endfunction()

set(violations "")
set(project_folders
    "(util|model|fst|formats|feat|kernels|align|train|bench|proto|client|server|cli|loadgen|tools)/")

# 1 and 2: every include of every source file of the project's folders.
set(files "")
foreach(folder util model fst formats feat kernels align train bench proto client server cli loadgen
               tools)
  file(GLOB_RECURSE found RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${folder}/*.h"
       "${SOURCE_DIR}/${folder}/*.cc" "${SOURCE_DIR}/${folder}/*.cu" "${SOURCE_DIR}/${folder}/*.cuh")
  list(APPEND files ${found})
endforeach()
set(count 0)
foreach(file ${files})
  rule_of("${file}" found allowed forbidden)
  math(EXPR count "${count} + 1")
  file(STRINGS "${SOURCE_DIR}/${file}" includes REGEX "^#include [\"<]")
  foreach(line ${includes})
    string(REGEX REPLACE "^#include [\"<]([^\">]+)[\">].*" "\\1" header "${line}")
    string(REGEX MATCH "^#include <" angled "${line}")
    # "fst/..." in quotes is the project's fst/; in <...>, OpenFst's.
    set(project FALSE)
    if(header MATCHES "^${project_folders}" AND NOT (angled AND header MATCHES "^fst/"))
      set(project TRUE)
    endif()
    if(NOT project)
      foreach(entry ${third_party})
        split_rule("${entry}" pattern folders unused)
        if(header MATCHES "^${pattern}" AND NOT file MATCHES "^${folders}")
          string(APPEND violations "  ${file}: #include <${header}> (only in ${folders})\n")
        endif()
      endforeach()
      continue()
    endif()
    allowed_by("${allowed}" "${forbidden}" "${header}" ok)
    if(NOT ok)
      string(APPEND violations "  ${file}: #include \"${header}\" (allowed: ${allowed}")
      if(NOT forbidden STREQUAL "")
        string(APPEND violations "; not ${forbidden}")
      endif()
      string(APPEND violations ")\n")
    endif()
  endforeach()
endforeach()

# 3: the link lines. Each library stands for the path of its first source (a header of its
# folder), so that its folder's rule applies to it and the rules decide what it may link.
file(GLOB_RECURSE lists RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*/CMakeLists.txt")
set(targets "")
set(links "")  # every link line of a rule's folder, as "CMAKELISTS@@target_link_libraries(...)"
foreach(list_file ${lists})
  get_filename_component(dir "${list_file}" DIRECTORY)
  rule_of("${dir}/" found allowed forbidden)
  if(NOT found)
    continue()
  endif()
  file(READ "${SOURCE_DIR}/${list_file}" text)
  string(REGEX MATCHALL "add_library\\([ \n]*gmmscore_[a-z_]+[^)]*\\)" libraries "${text}")
  foreach(library ${libraries})
    string(REGEX REPLACE "add_library\\([ \n]*(gmmscore_[a-z_]+).*" "\\1" name "${library}")
    string(REGEX REPLACE "add_library\\([ \n]*gmmscore_[a-z_]+[ \n]*(.*)\\)" "\\1" body
                         "${library}")
    string(REGEX REPLACE "(INTERFACE|OBJECT|STATIC|SHARED|MODULE)[ \n]*" "" body "${body}")
    string(REGEX MATCH "[a-z_/]+\\.(cc|cu)" source "${body}")
    if(source STREQUAL "")
      set(source "${name}.cc")
    endif()
    string(REGEX REPLACE "\\.(cc|cu)$" ".h" header "${dir}/${source}")
    set(path_${name} "${header}")
    list(APPEND targets ${name})
  endforeach()
  string(REGEX MATCHALL "target_link_libraries\\([^)]*\\)" found_links "${text}")
  foreach(link ${found_links})
    list(APPEND links "${list_file}@@${link}")
  endforeach()
endforeach()
foreach(entry ${links})
  string(FIND "${entry}" "@@" at)
  string(SUBSTRING "${entry}" 0 ${at} list_file)
  math(EXPR at "${at} + 2")
  string(SUBSTRING "${entry}" ${at} -1 link)
  string(REGEX REPLACE "target_link_libraries\\([ \n]*([^ \n)]+).*" "\\1" name "${link}")
  string(REGEX MATCHALL "gmmscore_[a-z_]+" names "${link}")
  if(NOT name IN_LIST targets)
    continue()  # an executable or a test
  endif()
  rule_of("${path_${name}}" found allowed forbidden)
  foreach(dependency ${names})
    if(NOT dependency IN_LIST targets)
      continue()
    endif()
    allowed_by("${allowed}" "${forbidden}" "${path_${dependency}}" ok)
    if(NOT ok)
      string(APPEND violations
             "  ${list_file}: ${name} links ${dependency} (${path_${dependency}}; allowed: "
             "${allowed})\n")
    endif()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "against the library arrows (docs/ARCHITECTURE.md):\n${violations}")
endif()
list(LENGTH targets num_targets)
message(STATUS "layering_check: ${count} files and ${num_targets} libraries keep to the arrows")
