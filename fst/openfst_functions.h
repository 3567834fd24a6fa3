// The OpenFst functions of fst/openfst.h as fst/openfst.cc implements them, for the two ways a
// program reaches them: linked in (openfst_linked.cc) or from the module (openfst_module.cc).
#pragma once

#include "fst/openfst.h"

namespace gmmscore {

const OpenFstFunctions& OpenFstImplementation();

}  // namespace gmmscore
