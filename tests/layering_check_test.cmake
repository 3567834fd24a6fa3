# The layering check must fail where the code leaves the arrows: a tree with one offence of each
# kind (a backend's header and the backend choice from align/, a project header in <...>, gRPC
# outside the RPC layers, rpc/ from the scheduling, a link line to a backend) is checked, and each
# offence must be named. Run by CTest as layering_check_catches_violations:
#   cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> -P tests/layering_check_test.cmake

cmake_minimum_required(VERSION 3.25)

set(tree "${WORK_DIR}/layering_violations")
file(REMOVE_RECURSE "${tree}")
file(WRITE "${tree}/align/bad.cc"
     "#include \"kernels/cuda/score/cuda_scorer.h\"\n#include \"kernels/backend.h\"\n"
     "#include \"kernels/scorer.h\"\n#include <server/server.h>\n#include <grpcpp/grpcpp.h>\n"
     "#include <vector>\n")
file(WRITE "${tree}/align/CMakeLists.txt"
     "add_library(gmmscore_align bad.cc)\ntarget_link_libraries(gmmscore_align PUBLIC gmmscore_cuda)\n")
file(WRITE "${tree}/kernels/CMakeLists.txt" "add_library(gmmscore_cuda cuda/cuda_scorer.cu)\n")
file(WRITE "${tree}/kernels/cuda/cuda_scorer.cu" "#include \"kernels/cuda/score/cuda_scorer.h\"\n")
file(WRITE "${tree}/server/scheduling/bad.h" "#include \"server/rpc/health.h\"\n")

execute_process(COMMAND "${CMAKE_COMMAND}" -DSOURCE_DIR=${tree}
                        -P "${SOURCE_DIR}/cmake/layering_check.cmake"
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(report "${out}${err}")
if(result EQUAL 0)
  message(FATAL_ERROR "the layering check passed a tree against the arrows:\n${report}")
endif()
foreach(expected
        "align/bad.cc: #include \"kernels/cuda/score/cuda_scorer.h\""
        "align/bad.cc: #include \"kernels/backend.h\""
        "align/bad.cc: #include \"server/server.h\""
        "align/bad.cc: #include <grpcpp/grpcpp.h>"
        "server/scheduling/bad.h: #include \"server/rpc/health.h\""
        "align/CMakeLists.txt: gmmscore_align links gmmscore_cuda")
  string(FIND "${report}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layering check did not name: ${expected}\n${report}")
  endif()
endforeach()
foreach(allowed "kernels/scorer.h" "<vector>")
  string(FIND "${report}" "${allowed}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the layering check refused an allowed include, ${allowed}:\n${report}")
  endif()
endforeach()
message(STATUS "layering_check named every offence")
