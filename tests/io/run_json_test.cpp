#include "sim/io/run_json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace attnsim::io {
namespace {

core::RunResult sample_result() {
  core::RunResult r;
  r.workload.kernel = "flash2";
  r.workload.seq_q = 4096;
  r.workload.seq_kv = 4096;
  r.workload.heads = 8;
  r.workload.kv_heads = 0;  // resolves to heads
  r.device_name = "teaching";
  core::KernelResult k;
  k.name = "flash2_fwd";
  k.metrics = {{"dram__bytes_read.sum", 1048576}, {"gpu__time_duration.sum", 1234.5}};
  k.tensors.dram[core::Tensor::kQ] = {524288, 0};
  k.tensors.dram[core::Tensor::kO] = {0, 524288};
  k.tensors.smem[core::Tensor::kK] = {65536, 65536};
  r.kernels.push_back(k);
  r.metrics = k.metrics;
  r.tensors = k.tensors;
  return r;
}

core::DeviceSpec sample_device() {
  core::DeviceSpec d;
  d.name = "teaching";
  d.clock_ghz = 1.5;
  d.sm.count = 4;
  return d;
}

std::string to_json(const core::RunResult& r) {
  std::ostringstream s;
  write_run_json(r, sample_device(), s);
  return s.str();
}

TEST(RunJson, TopLevelKeysInContractOrder) {
  const std::string s = to_json(sample_result());
  const auto w = s.find("\"workload\"");
  const auto d = s.find("\"device\"");
  const auto k = s.find("\"kernels\"");
  const auto m = s.find("\n  \"metrics\"");
  const auto t = s.find("\n  \"tensors\"");
  ASSERT_NE(w, std::string::npos);
  ASSERT_NE(m, std::string::npos);
  ASSERT_NE(t, std::string::npos);
  EXPECT_LT(w, d);
  EXPECT_LT(d, k);
  EXPECT_LT(k, m);
  EXPECT_LT(m, t);
}

TEST(RunJson, ResolvesKvHeadsToHeads) {
  EXPECT_NE(to_json(sample_result()).find("\"kv_heads\": 8,"), std::string::npos);
}

TEST(RunJson, ByteMetricPrintsAsInteger) {
  const std::string s = to_json(sample_result());
  EXPECT_NE(s.find("\"dram__bytes_read.sum\": 1048576,"), std::string::npos);
  EXPECT_NE(s.find("\"gpu__time_duration.sum\": 1234.5\n"), std::string::npos);
}

TEST(RunJson, TensorWithoutTrafficIsLeftOut) {
  const std::string s = to_json(sample_result());
  EXPECT_NE(s.find("\"Q\": {"), std::string::npos);
  EXPECT_EQ(s.find("\"V\": {"), std::string::npos);
}

TEST(RunJson, FunctionalOnlyWhenPresent) {
  auto r = sample_result();
  EXPECT_EQ(to_json(r).find("\"functional\": {"), std::string::npos);
  r.functional_max_rel_error = 0.00048828125;  // 2^-11
  EXPECT_NE(to_json(r).find("\"functional\": {\n    \"max_rel_error\": 0.00048828125\n  }"), std::string::npos);
  r.functional_rmse = 0.0078125;  // 2^-7
  EXPECT_NE(to_json(r).find("\"functional\": {\n    \"max_rel_error\": 0.00048828125,\n    \"rmse\": 0.0078125\n  }"),
            std::string::npos);
}

// Independent check of well-formedness and of the nesting: Python's json module reads it back.
TEST(RunJson, PythonJsonReadsTensorBytes) {
  if (!std::ifstream("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  const std::string path = ::testing::TempDir() + "run_json_test.json";
  {
    std::ofstream f(path);
    f << to_json(sample_result());
  }
  const std::string cmd = "/usr/bin/python3 -c \"import json,sys; d=json.load(open('" + path +
                          "')); t=d['tensors']; sys.exit(0 if t['O']['dram']['write']==524288 and "
                          "t['K']['smem']['read']==65536 and d['kernels'][0]['name']=='flash2_fwd' and "
                          "d['device']['sm_count']==4 else 1)\"";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace attnsim::io
