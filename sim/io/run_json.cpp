#include "sim/io/run_json.h"

#include "sim/core/derived_metrics.h"
#include "sim/io/json_writer.h"
#include "sim/io/workload_fields.h"

namespace attnsim::io {

namespace {

void write_fields(JsonWriter& j, const Fields& fields) {
  j.begin_object();
  for (const auto& f : fields) {
    j.key(f.name);
    std::visit([&j](const auto& v) { j.value(v); }, f.value);
  }
  j.end_object();
}

// The metrics, then the text-valued derived ones: attnsim__bound and, for a launch, its
// attnsim__occupancy_limiter (empty `limiter`: none).
void write_metrics(JsonWriter& j, const core::Metrics& metrics, const std::string& limiter = "") {
  j.begin_object();
  for (const auto& m : metrics) {
    j.key(m.name);
    j.value(m.value);
  }
  if (const std::string bound = core::bound_of(metrics); !bound.empty()) {
    j.key("attnsim__bound");
    j.value(bound);
  }
  if (!limiter.empty()) {
    j.key("attnsim__occupancy_limiter");
    j.value(limiter);
  }
  j.end_object();
}

void write_bytes(JsonWriter& j, const char* level, const core::TensorBytes& b) {
  j.key(level);
  j.begin_object();
  j.key("read");
  j.value(static_cast<std::uint64_t>(b.read));
  j.key("write");
  j.value(static_cast<std::uint64_t>(b.write));
  j.end_object();
}

void write_tensors(JsonWriter& j, const core::LevelTraffic& t) {
  j.begin_object();
  for (std::size_t i = 0; i < core::kNumTensors; ++i) {
    const auto tensor = static_cast<core::Tensor>(i);
    const core::TensorBytes z{};
    if (t.dram[tensor] == z && t.lts[tensor] == z && t.l1[tensor] == z && t.smem[tensor] == z) continue;
    j.key(core::to_string(tensor));
    j.begin_object();
    write_bytes(j, "dram", t.dram[tensor]);
    write_bytes(j, "lts", t.lts[tensor]);
    write_bytes(j, "l1", t.l1[tensor]);
    write_bytes(j, "smem", t.smem[tensor]);
    j.end_object();
  }
  j.end_object();
}

}  // namespace

void write_run_json(const core::RunResult& result, const core::DeviceSpec& device, std::ostream& out) {
  JsonWriter j(out);
  j.begin_object();
  j.key("workload");
  write_fields(j, workload_fields(result.workload));
  j.key("device");
  write_fields(j, device_fields(device));
  j.key("kernels");
  j.begin_array();
  for (const auto& k : result.kernels) {
    j.begin_object();
    j.key("name");
    j.value(k.name);
    j.key("metrics");
    write_metrics(j, k.metrics, k.occupancy_limiter);
    j.key("tensors");
    write_tensors(j, k.tensors);
    j.end_object();
  }
  j.end_array();
  j.key("metrics");
  write_metrics(j, result.metrics);
  j.key("tensors");
  write_tensors(j, result.tensors);
  if (result.functional_max_rel_error) {
    j.key("functional");
    j.begin_object();
    j.key("max_rel_error");
    j.value(*result.functional_max_rel_error);
    if (result.functional_rmse) {
      j.key("rmse");
      j.value(*result.functional_rmse);
    }
    j.end_object();
  }
  j.end_object();
  j.finish();
}

}  // namespace attnsim::io
