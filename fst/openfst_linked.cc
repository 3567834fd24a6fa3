// OpenFst linked into the program.
#include "fst/openfst.h"
#include "fst/openfst_functions.h"

namespace gmmscore {

absl::StatusOr<const OpenFstFunctions*> OpenFst() { return &OpenFstImplementation(); }

}  // namespace gmmscore
