#include "sim/core/workload.h"

namespace attnsim::core {

std::string_view to_string(Pass p) { return p == Pass::kFwd ? "fwd" : "fwdbwd"; }
std::string_view to_string(CtaOrder o) { return o == CtaOrder::kRowMajor ? "row-major" : "head-major"; }

}  // namespace attnsim::core
