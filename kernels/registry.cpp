#include "kernels/registry.h"

#include "kernels/factories.h"
#include "sim/core/errors.h"

namespace attnsim::kernels {

const std::vector<KernelEntry>& kernel_registry() {
  static const std::vector<KernelEntry> table = {
      {"standard", &make_standard, "textbook attention: GEMM S=QK^T, row softmax, GEMM O=PV"},
      {"flash1", &make_flash1, "FlashAttention Algorithm 1: outer loop over K/V blocks"},
      {"flash2", &make_flash2, "FlashAttention-2: one CTA per (batch, head, query block)"},
      {"flash_decode", &make_flash_decode, "split-KV decoding with a reduction kernel"},
      {"pointer_chase", &make_pointer_chase, "one thread, dependent loads over a random cycle"},
      {"stream_read", &make_stream_read, "CTAs reading disjoint slices of a buffer"},
      {"stream_copy", &make_stream_copy, "CTAs copying disjoint slices of a buffer to a second one"},
  };
  return table;
}

core::TileProgram make_program(const core::Workload& workload, const core::DeviceSpec& device) {
  for (const auto& e : kernel_registry())
    if (workload.kernel == e.name) return e.make(workload, device);
  std::string known;
  for (const auto& e : kernel_registry()) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw core::ConfigError(core::ConfigProblem{"", 0, "kernel",
                                              "unknown kernel '" + workload.kernel + "' (known: " + known + ")"});
}

}  // namespace attnsim::kernels
