// libFuzzer entry point for fuzz::device_yaml (fuzz/fuzz_targets.h): one input per call.
// Findings are crashes, sanitizer reports, hangs and exceptions other than core::ConfigError.
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  attnsim::fuzz::device_yaml(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
