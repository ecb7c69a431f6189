#include "sim/core/run_result.h"

namespace attnsim::core {

Bytes TensorTraffic::total_read() const {
  Bytes s = 0;
  for (const auto& b : by_tensor) s += b.read;
  return s;
}

Bytes TensorTraffic::total_write() const {
  Bytes s = 0;
  for (const auto& b : by_tensor) s += b.write;
  return s;
}

const Metric* find_metric(const Metrics& m, std::string_view name) {
  for (const auto& x : m)
    if (x.name == name) return &x;
  return nullptr;
}

void set_metric(Metrics& m, std::string_view name, double value) {
  for (auto& x : m) {
    if (x.name == name) {
      x.value = value;
      return;
    }
  }
  m.push_back({std::string(name), value});
}

}  // namespace attnsim::core
