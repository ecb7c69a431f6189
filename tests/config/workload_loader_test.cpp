// Workload keys, defaults, --set overrides and the resolved YAML text.
#include "sim/config/workload_loader.h"

#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sweep_errors.h"

namespace attnsim::config {
namespace {

core::Workload parse(const std::string& text) { return testing::parse_workload_text(text, "test.yaml"); }
std::string error_of(const std::string& text) { return testing::workload_error_of(text, "test.yaml"); }

TEST(WorkloadLoader, SeqSetsBothLengths) {
  const auto w = parse("kernel: flash2\nseq: 4096\n");
  EXPECT_EQ(w.seq_q, 4096u);
  EXPECT_EQ(w.seq_kv, 4096u);
}

TEST(WorkloadLoader, ExplicitSeqKvBeatsSeq) {
  const auto w = parse("seq: 4096\nseq_kv: 128\n");
  EXPECT_EQ(w.seq_q, 4096u);
  EXPECT_EQ(w.seq_kv, 128u);
}

TEST(WorkloadLoader, KvHeadsDefaultsToHeads) {
  const auto w = parse("heads: 12\n");
  EXPECT_EQ(w.kv_heads, 12u);
  EXPECT_EQ(w.group_size(), 1u);
}

TEST(WorkloadLoader, GroupedQueryHeads) {
  const auto w = parse("heads: 16\nkv_heads: 2\n");
  EXPECT_EQ(w.group_size(), 8u);
}

TEST(WorkloadLoader, EnumsParse) {
  const auto w = parse("dtype: bf16\npass: fwdbwd\ncta_order: head-major\ncausal: true\n");
  EXPECT_EQ(w.dtype, core::DType::kBf16);
  EXPECT_EQ(w.pass, core::Pass::kFwdBwd);
  EXPECT_EQ(w.cta_order, core::CtaOrder::kHeadMajor);
  EXPECT_TRUE(w.causal);
}

TEST(WorkloadLoader, UnknownDtypeListsKnownOnes) {
  EXPECT_NE(error_of("dtype: fp64\n").find("test.yaml:1: dtype: unknown value 'fp64' (known: fp32, fp16, bf16, fp8)"),
            std::string::npos);
}

TEST(WorkloadLoader, UnknownKeySuggestsClosest) {
  EXPECT_NE(error_of("kernel: flash2\nblock_mm: 64\n").find("test.yaml:2: block_mm: unknown key (did you mean 'block_m'?)"),
            std::string::npos);
}

TEST(WorkloadLoader, ZeroHeadDimIsRejected) {
  EXPECT_NE(error_of("head_dim: 0\n").find("head_dim: expected a positive integer, got 0"), std::string::npos);
}

TEST(WorkloadLoader, GemmClusterIsOneOrTwo) {
  EXPECT_EQ(parse("kernel: standard\ngemm_cluster: 2\n").gemm_cluster, 2u);
  EXPECT_EQ(parse("kernel: standard\n").gemm_cluster, 0u);  // the device's default
  EXPECT_NE(error_of("kernel: standard\ngemm_cluster: 4\n").find("test.yaml:2: gemm_cluster: must be 1 or 2"),
            std::string::npos);
  EXPECT_NE(error_of("gemm_cluster: 0\n").find("test.yaml:1: gemm_cluster: must be 1 or 2"), std::string::npos);
}

TEST(WorkloadLoader, StackFrameBytesForFlash2Only) {
  EXPECT_EQ(parse("kernel: flash2\nstack_frame_bytes: 112\n").stack_frame_bytes, 112u);
  EXPECT_EQ(parse("kernel: flash2\n").stack_frame_bytes, 0u);
  EXPECT_EQ(parse("kernel: standard\nstack_frame_bytes: 0\n").stack_frame_bytes, 0u);
  EXPECT_NE(error_of("kernel: standard\nstack_frame_bytes: 112\n")
                .find("test.yaml:2: stack_frame_bytes: is modelled for the flash2 forward kernel only"),
            std::string::npos);
  EXPECT_NE(error_of("stack_frame_bytes: 600000\n").find("test.yaml:1: stack_frame_bytes: must be at most 524288"),
            std::string::npos);
  EXPECT_NE(error_of("stack_frame_bytes: -8\n").find("test.yaml:1: stack_frame_bytes"), std::string::npos);
}

TEST(WorkloadLoader, ImplSelectsFlash2sImplementation) {
  EXPECT_EQ(parse("kernel: flash2\n").impl, core::KernelImpl::kFa2);  // kernels.csv's sdpa_flash rows are FA-2
  EXPECT_EQ(parse("kernel: flash2\nimpl: triton\n").impl, core::KernelImpl::kTriton);
  EXPECT_EQ(parse("kernel: standard\nimpl: fa2\n").impl, core::KernelImpl::kFa2);
  EXPECT_NE(error_of("kernel: flash2\nimpl: cuda\n").find("test.yaml:2: impl: unknown value 'cuda' (known: fa2, triton)"),
            std::string::npos);
  EXPECT_NE(error_of("kernel: standard\nimpl: triton\n")
                .find("test.yaml:2: impl: selects flash2's implementation (fa2, triton); kernel 'standard' has one"),
            std::string::npos);
}

TEST(WorkloadLoader, AllProblemsReportedAtOnce) {
  try {
    parse("batch: 0\nheads: x\ncta_order: diagonal\n");
    FAIL();
  } catch (const core::ConfigError& e) {
    EXPECT_EQ(e.problems().size(), 3u) << e.what();
  }
}

TEST(WorkloadLoader, OverflowingShapeIsRejected) {
  // seq_q x seq_kv = 2^64 already overflows before batch and heads.
  EXPECT_NE(error_of("seq: 4294967296\n").find("overflows 64 bits"), std::string::npos);
}

TEST(WorkloadLoader, LargeButFittingShapeIsAccepted) {
  // S bytes = 2^32 x 2^16 x 2 = 2^49: fits.
  EXPECT_NO_THROW(parse("seq_q: 4294967296\nseq_kv: 65536\nhead_dim: 64\n"));
}

TEST(WorkloadLoader, SizesAcceptUnits) {
  const auto w = parse("kernel: pointer_chase\nworking_set_bytes: 48 MiB\n");
  EXPECT_EQ(w.working_set_bytes, 48u * 1024 * 1024);
}

TEST(WorkloadLoader, KernelDefaultsWithOverrides) {
  const auto w = workload_for_kernel("flash1", {{"seq", "2048"}, {"head_dim", "128"}, {"functional", "true"}});
  EXPECT_EQ(w.kernel, "flash1");
  EXPECT_EQ(w.seq_q, 2048u);
  EXPECT_EQ(w.head_dim, 128u);
  EXPECT_TRUE(w.functional);
}

TEST(WorkloadLoader, UnknownKernelNameIsRejected) {
  EXPECT_THROW(workload_for_kernel("flash9"), core::ConfigError);
}

TEST(WorkloadLoader, OverrideSeqReplacesFileSeqQAndSeqKv) {
  YAML::Node node = YAML::Load("seq_q: 128\nseq_kv: 256\n");
  YamlReader reader("test.yaml");
  apply_workload_overrides(node, {{"seq", "512"}}, reader);
  const auto w = parse_workload_node(node, reader);
  EXPECT_FALSE(reader.has_problems());
  EXPECT_EQ(w.seq_q, 512u);
  EXPECT_EQ(w.seq_kv, 512u);
}

TEST(WorkloadLoader, BadOverrideNamesSet) {
  try {
    workload_for_kernel("flash2", {{"warps", "-4"}});
    FAIL();
  } catch (const core::ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_EQ(e.problems()[0].format(), "--set warps: expected a positive integer, got -4");
  }
}

TEST(WorkloadLoader, ResolvedYamlRoundTrips) {
  const auto w = parse(
      "kernel: flash_decode\nbatch: 3\nheads: 16\nkv_heads: 2\nseq_q: 1\nseq_kv: 8192\nhead_dim: 128\n"
      "dtype: fp8\ncausal: true\npass: fwdbwd\nblock_m: 64\nblock_n: 32\nwarps: 8\nstages: 3\n"
      "cta_order: head-major\nregs_per_thread: 128\nsmem_per_cta: 49152\nnum_splits: 4\nseed: 7\n"
      "gemm_cluster: 1\n");
  const std::string text = workload_to_yaml(w);
  EXPECT_EQ(workload_to_yaml(parse(text)), text);
  const auto back = parse(text);
  EXPECT_EQ(back.kv_heads, 2u);
  EXPECT_EQ(back.num_splits, 4u);
  EXPECT_EQ(back.smem_per_cta, 49152u);
  EXPECT_EQ(back.dtype, core::DType::kFp8);
  EXPECT_EQ(back.gemm_cluster, 1u);
}

}  // namespace
}  // namespace attnsim::config
