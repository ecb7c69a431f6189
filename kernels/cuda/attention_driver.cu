// Host driver for the reference CUDA kernels: random fp16 Q, K, V of shape [batch, heads, seq,
// head_dim], one configuration from the command line, a CPU double-precision check on sampled
// rows of the GPU's output, and the median kernel time over repeated launches (CUDA events).
//
//   attnsim_cuda_ref --kernel flash2|standard --batch B --heads H --seq N [--seq-q N --seq-kv N]
//                    --head-dim D [--causal] [--block-m 128 --block-n 64 --warps 4 --stages 2
//                    --cta-order row-major|head-major] [--iters 20] [--profile] [--list]
//
// --profile launches the kernel(s) exactly once between cudaProfilerStart/Stop (for
// `ncu --profile-from-start off`), so Nsight Compute sees one launch per kernel, in order.
// Exit codes: 0 ok, 1 the check failed, 2 bad arguments, 3 CUDA error.
#include <cuda_profiler_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/attention_cuda.h"

using attnsim::cuda::AttentionShape;
using attnsim::cuda::CtaOrder;
using attnsim::cuda::Flash2Config;

namespace {

struct Options {
  std::string kernel = "flash2";
  AttentionShape shape;
  Flash2Config flash;
  int iters = 20;
  bool profile = false;
  int check_rows = 8;  // rows checked per sampled (batch, head)
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "attnsim_cuda_ref: %s\n(see the header of kernels/cuda/attention_driver.cu)\n", why);
  std::exit(2);
}

int to_int(const char* flag, const char* value) {
  char* end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (!value[0] || *end || v <= 0 || v > (1L << 30)) usage((std::string("bad value for ") + flag).c_str());
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--kernel") o.kernel = next();
    else if (a == "--batch") o.shape.batch = to_int("--batch", next());
    else if (a == "--heads") o.shape.heads = to_int("--heads", next());
    else if (a == "--seq") o.shape.seq_q = o.shape.seq_kv = to_int("--seq", next());
    else if (a == "--seq-q") o.shape.seq_q = to_int("--seq-q", next());
    else if (a == "--seq-kv") o.shape.seq_kv = to_int("--seq-kv", next());
    else if (a == "--head-dim") o.shape.head_dim = to_int("--head-dim", next());
    else if (a == "--causal") o.shape.causal = true;
    else if (a == "--block-m") o.flash.block_m = to_int("--block-m", next());
    else if (a == "--block-n") o.flash.block_n = to_int("--block-n", next());
    else if (a == "--warps") o.flash.warps = to_int("--warps", next());
    else if (a == "--stages") o.flash.stages = to_int("--stages", next());
    else if (a == "--cta-order") {
      const std::string v = next();
      if (v == "row-major") o.flash.cta_order = CtaOrder::kRowMajor;
      else if (v == "head-major") o.flash.cta_order = CtaOrder::kHeadMajor;
      else usage("--cta-order is row-major or head-major");
    } else if (a == "--iters") o.iters = to_int("--iters", next());
    else if (a == "--check-rows") o.check_rows = to_int("--check-rows", next());
    else if (a == "--profile") o.profile = true;
    else if (a == "--list") {
      attnsim::cuda::list_flash2_configs(stdout);
      std::exit(0);
    } else usage(("unknown argument " + a).c_str());
  }
  if (o.kernel != "flash2" && o.kernel != "standard") usage("--kernel is flash2 or standard");
  return o;
}

// Attention of one query row in double precision from the fp16 inputs.
void reference_row(const std::vector<__half>& q, const std::vector<__half>& k, const std::vector<__half>& v,
                   const AttentionShape& s, std::size_t bh, int row, std::vector<double>& out) {
  const int d = s.head_dim;
  const std::size_t qo = (bh * s.seq_q + row) * d;
  const std::size_t ko = bh * s.seq_kv * d;
  const int visible = s.causal ? std::min(s.seq_kv, row + (s.seq_kv - s.seq_q) + 1) : s.seq_kv;
  std::vector<double> score(std::max(visible, 0));
  double mx = -INFINITY;
  for (int j = 0; j < visible; ++j) {
    double acc = 0;
    for (int x = 0; x < d; ++x)
      acc += static_cast<double>(__half2float(q[qo + x])) * __half2float(k[ko + static_cast<std::size_t>(j) * d + x]);
    score[j] = acc / std::sqrt(static_cast<double>(d));
    mx = std::max(mx, score[j]);
  }
  double sum = 0;
  for (int j = 0; j < visible; ++j) sum += (score[j] = std::exp(score[j] - mx));
  out.assign(d, 0.0);
  for (int j = 0; j < visible; ++j)
    for (int x = 0; x < d; ++x) out[x] += score[j] / sum * __half2float(v[ko + static_cast<std::size_t>(j) * d + x]);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const AttentionShape& s = o.shape;
  if (s.head_dim % 32 != 0) usage("--head-dim must be a multiple of 32");
  const std::size_t bh = static_cast<std::size_t>(s.batch) * s.heads;
  const std::size_t q_elems = bh * s.seq_q * s.head_dim;
  const std::size_t kv_elems = bh * s.seq_kv * s.head_dim;

  std::mt19937_64 rng(1234);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<__half> hq(q_elems), hk(kv_elems), hv(kv_elems), ho(q_elems);
  for (auto& x : hq) x = __float2half(normal(rng));
  for (auto& x : hk) x = __float2half(normal(rng));
  for (auto& x : hv) x = __float2half(normal(rng));

  __half *q, *k, *v, *out, *scores = nullptr, *probs = nullptr;
  ATTNSIM_CUDA_CHECK(cudaMalloc(&q, q_elems * sizeof(__half)));
  ATTNSIM_CUDA_CHECK(cudaMalloc(&k, kv_elems * sizeof(__half)));
  ATTNSIM_CUDA_CHECK(cudaMalloc(&v, kv_elems * sizeof(__half)));
  ATTNSIM_CUDA_CHECK(cudaMalloc(&out, q_elems * sizeof(__half)));
  ATTNSIM_CUDA_CHECK(cudaMemcpy(q, hq.data(), q_elems * sizeof(__half), cudaMemcpyHostToDevice));
  ATTNSIM_CUDA_CHECK(cudaMemcpy(k, hk.data(), kv_elems * sizeof(__half), cudaMemcpyHostToDevice));
  ATTNSIM_CUDA_CHECK(cudaMemcpy(v, hv.data(), kv_elems * sizeof(__half), cudaMemcpyHostToDevice));
  if (o.kernel == "standard") {
    const std::size_t score_elems = bh * s.seq_q * s.seq_kv;
    ATTNSIM_CUDA_CHECK(cudaMalloc(&scores, score_elems * sizeof(__half)));
    ATTNSIM_CUDA_CHECK(cudaMalloc(&probs, score_elems * sizeof(__half)));
  }

  auto launch = [&]() {
    if (o.kernel == "flash2") {
      if (!attnsim::cuda::launch_flash2(s, o.flash, q, k, v, out, nullptr)) {
        std::fprintf(stderr, "attnsim_cuda_ref: flash2 has no compiled instance for head_dim=%d block_m=%d "
                             "block_n=%d warps=%d stages=%d; --list shows them\n",
                     s.head_dim, o.flash.block_m, o.flash.block_n, o.flash.warps, o.flash.stages);
        std::exit(2);
      }
    } else {
      attnsim::cuda::launch_standard(s, q, k, v, scores, probs, out, nullptr);
    }
  };

  double median_ms = 0;
  if (o.profile) {
    ATTNSIM_CUDA_CHECK(cudaProfilerStart());
    launch();
    ATTNSIM_CUDA_CHECK(cudaDeviceSynchronize());
    ATTNSIM_CUDA_CHECK(cudaProfilerStop());
  } else {
    launch();  // warm-up
    ATTNSIM_CUDA_CHECK(cudaDeviceSynchronize());
    cudaEvent_t start, stop;
    ATTNSIM_CUDA_CHECK(cudaEventCreate(&start));
    ATTNSIM_CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> ms(o.iters);
    for (int i = 0; i < o.iters; ++i) {
      ATTNSIM_CUDA_CHECK(cudaEventRecord(start));
      launch();
      ATTNSIM_CUDA_CHECK(cudaEventRecord(stop));
      ATTNSIM_CUDA_CHECK(cudaEventSynchronize(stop));
      ATTNSIM_CUDA_CHECK(cudaEventElapsedTime(&ms[i], start, stop));
    }
    std::sort(ms.begin(), ms.end());
    median_ms = ms[ms.size() / 2];
  }
  ATTNSIM_CUDA_CHECK(cudaMemcpy(ho.data(), out, q_elems * sizeof(__half), cudaMemcpyDeviceToHost));

  // Check sampled rows of the first, middle and last (batch, head) against the double reference.
  // Tolerance: |gpu - ref| <= 4e-3 + 1e-2 |ref| for flash2 (fp16 output rounding, fp32 sums);
  // 1e-2 + 2e-2 |ref| for standard, whose S and P round to fp16 in HBM.
  const double atol = o.kernel == "flash2" ? 4e-3 : 1e-2;
  const double rtol = o.kernel == "flash2" ? 1e-2 : 2e-2;
  double max_abs_err = 0;
  bool ok = true;
  std::vector<double> ref;
  for (std::size_t b : {std::size_t{0}, bh / 2, bh - 1}) {
    for (int i = 0; i < o.check_rows; ++i) {
      const int row = i == 0 ? 0 : i == 1 ? s.seq_q - 1 : static_cast<int>(rng() % s.seq_q);
      reference_row(hq, hk, hv, s, b, row, ref);
      for (int x = 0; x < s.head_dim; ++x) {
        const double got = __half2float(ho[(b * s.seq_q + row) * s.head_dim + x]);
        const double err = std::fabs(got - ref[x]);
        max_abs_err = std::max(max_abs_err, err);
        if (!(err <= atol + rtol * std::fabs(ref[x]))) ok = false;
      }
    }
  }
  const double flops = 4.0 * bh * s.seq_q * static_cast<double>(s.seq_kv) * s.head_dim * (s.causal ? 0.5 : 1.0);
  std::printf("kernel=%s batch=%d heads=%d seq_q=%d seq_kv=%d head_dim=%d causal=%d", o.kernel.c_str(), s.batch,
              s.heads, s.seq_q, s.seq_kv, s.head_dim, s.causal ? 1 : 0);
  if (o.kernel == "flash2")
    std::printf(" block_m=%d block_n=%d warps=%d stages=%d cta_order=%s smem=%zu", o.flash.block_m,
                o.flash.block_n, o.flash.warps, o.flash.stages,
                o.flash.cta_order == CtaOrder::kRowMajor ? "row-major" : "head-major",
                attnsim::cuda::flash2_smem_bytes(o.flash, s.head_dim));
  if (!o.profile) std::printf(" time_ms=%.4f tflops=%.2f", median_ms, flops / (median_ms * 1e-3) / 1e12);
  std::printf(" max_abs_err=%.3g check=%s\n", max_abs_err, ok ? "PASS" : "FAIL");

  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(out);
  if (scores) cudaFree(scores);
  if (probs) cudaFree(probs);
  return ok ? 0 : 1;
}
