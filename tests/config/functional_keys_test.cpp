// Functional mode's input keys (functional_inputs, fp8_scales, incoherent_processing): defaults,
// the resolved YAML reads back the same, and each error names file, line and key.
#include <gtest/gtest.h>

#include "sim/config/workload_loader.h"
#include "sim/core/errors.h"
#include "sweep_errors.h"

namespace attnsim::config {
namespace {

core::Workload parse(const std::string& text) { return testing::parse_workload_text(text, "w.yaml"); }
std::string error_of(const std::string& text) { return testing::workload_error_of(text, "w.yaml"); }

TEST(FunctionalKeys, DefaultsAreNormalInputsPerHeadScalesNoRotation) {
  const core::Workload w = parse("kernel: flash3\nhead_dim: 128\n");
  EXPECT_EQ(w.functional_inputs, core::FunctionalInputs::kNormal);
  EXPECT_EQ(w.fp8_scales, core::Fp8Scales::kHead);
  EXPECT_FALSE(w.incoherent_processing);
}

TEST(FunctionalKeys, ResolvedYamlReadsBack) {
  const core::Workload w = parse(
      "kernel: flash3\nhead_dim: 128\ndtype: fp8\nfunctional: true\nfunctional_inputs: outliers\n"
      "fp8_scales: block\nincoherent_processing: true\n");
  EXPECT_EQ(w.functional_inputs, core::FunctionalInputs::kOutliers);
  EXPECT_EQ(w.fp8_scales, core::Fp8Scales::kBlock);
  EXPECT_TRUE(w.incoherent_processing);
  const core::Workload back = parse(workload_to_yaml(w));
  EXPECT_EQ(back.functional_inputs, w.functional_inputs);
  EXPECT_EQ(back.fp8_scales, w.fp8_scales);
  EXPECT_EQ(back.incoherent_processing, w.incoherent_processing);
  EXPECT_EQ(parse(workload_to_yaml(parse("kernel: flash2\nfp8_scales: none\n"))).fp8_scales, core::Fp8Scales::kNone);
}

TEST(FunctionalKeys, ErrorsNameFileLineAndKey) {
  EXPECT_NE(error_of("kernel: flash3\nfunctional_inputs: heavy\n")
                .find("w.yaml:2: functional_inputs: unknown value 'heavy' (known: normal, outliers)"),
            std::string::npos);
  EXPECT_NE(error_of("kernel: flash3\nfp8_scales: tensor\n")
                .find("w.yaml:2: fp8_scales: unknown value 'tensor' (known: head, block, none)"),
            std::string::npos);
  EXPECT_NE(error_of("kernel: flash3\nhead_dim: 96\nincoherent_processing: true\n")
                .find("w.yaml:3: incoherent_processing: needs head_dim a power of 2"),
            std::string::npos);
  EXPECT_EQ(error_of("kernel: flash3\nhead_dim: 96\nincoherent_processing: false\n"), "");
}

}  // namespace
}  // namespace attnsim::config
