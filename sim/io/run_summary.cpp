#include "sim/io/run_summary.h"

#include "sim/io/table_printer.h"
#include "sim/io/workload_fields.h"

namespace attnsim::io {

namespace {

std::string bytes(core::Bytes b) { return TablePrinter::group_thousands(b); }

}  // namespace

void print_run_summary(const core::RunResult& result, const core::DeviceSpec& device, std::ostream& out) {
  out << "device: " << device.name << "\n";
  out << "workload:";
  for (const auto& f : workload_fields(result.workload)) {
    const Cell& v = f.value;
    const bool is_zero = std::holds_alternative<std::int64_t>(v) && std::get<std::int64_t>(v) == 0;
    if (!is_zero) out << " " << f.name << "=" << cell_to_string(v);
  }
  out << "\n\n";

  std::vector<std::string> header = {"metric"};
  for (const auto& k : result.kernels) header.push_back(k.name);
  header.push_back("total");
  TablePrinter metrics(header);
  for (const auto& m : result.metrics) {
    std::vector<std::string> row = {m.name};
    for (const auto& k : result.kernels) {
      const core::Metric* km = core::find_metric(k.metrics, m.name);
      row.push_back(km ? TablePrinter::format_value(km->value) : "");
    }
    row.push_back(TablePrinter::format_value(m.value));
    metrics.add_row(std::move(row));
  }
  metrics.print(out);

  out << "\nbytes per tensor and level\n";
  TablePrinter tensors({"tensor", "dram_read", "dram_write", "lts_read", "lts_write", "l1_read", "l1_write",
                        "smem_read", "smem_write"});
  const core::LevelTraffic& t = result.tensors;
  for (std::size_t i = 0; i < core::kNumTensors; ++i) {
    const auto x = static_cast<core::Tensor>(i);
    const core::TensorBytes z{};
    if (t.dram[x] == z && t.lts[x] == z && t.l1[x] == z && t.smem[x] == z) continue;
    tensors.add_row({std::string(core::to_string(x)), bytes(t.dram[x].read), bytes(t.dram[x].write),
                     bytes(t.lts[x].read), bytes(t.lts[x].write), bytes(t.l1[x].read), bytes(t.l1[x].write),
                     bytes(t.smem[x].read), bytes(t.smem[x].write)});
  }
  tensors.print(out);
  if (result.functional_max_rel_error)
    out << "\nfunctional: max_rel_error = " << TablePrinter::format_value(*result.functional_max_rel_error)
        << "\n";
}

}  // namespace attnsim::io
