// The entry point of libgmmscore_openfst.so, the module that fst/openfst_loaded.cc loads.
#include "fst/openfst_functions.h"

extern "C" __attribute__((visibility("default"))) const gmmscore::OpenFstFunctions*
gmmscore_openfst_functions() {
  return &gmmscore::OpenFstImplementation();
}
