// Microbenchmarks for calibrating an attnsim device preset on the GPU at hand (docs/calibration.md,
// section 2, steps 2-4). Writes one JSON object with the schema of
// tests/data/reference/microbench.json: "about", "device_attributes" (device__attribute_* names),
// "copy_bandwidth", "pointer_chase" and "stream_read".
//
//   attnsim_cuda_microbench [--out FILE] [--device N] [--chase-mib LIST] [--chase-iters N]
//       [--stream-steps LIST] [--stream-programs LIST] | [--stream-points P:B,...]
//       [--stream-bytes N] [--warps N] [--repeats N] [--copy-bytes N]
//       [--skip-chase] [--skip-stream] [--skip-copy] [--help]
//
// pointer_chase: one thread (<<<1,1>>>) follows a random cyclic permutation (Sattolo shuffle,
//   std::mt19937_64 with a fixed seed) of 128-byte lines spanning the working set; each line's
//   first 8 bytes hold the device address of the next line. Working sets up to 128 MiB get one
//   warm traversal of every line first, larger ones none; the timed loop follows
//   min(lines, --chase-iters) pointers and is timed with clock64() inside the kernel (SM cycles).
// stream_read: `programs` CTAs of `warps` warps; CTA c reads the contiguous slice
//   [c*S, (c+1)*S) of an fp16 buffer of --stream-bytes, S = stream_bytes / programs rounded down
//   to a multiple of bytes_per_step, bytes_per_step per loop step (coalesced 16-, 8- or 4-byte
//   vector loads, one step in flight per thread; see stream_read_kernel for how many loads of a
//   step are outstanding at once), summing in fp32. Time: CUDA-event median of --repeats runs
//   after one warm-up run.
// copy_bandwidth: cudaMemcpyAsync device to device of --copy-bytes; (bytes read + bytes written)
//   over the CUDA-event median of 10 copies after one warm-up copy.
//
// Clocks are whatever the driver set: lock them (nvidia-smi -lgc) for repeatable numbers.
// Progress goes to stderr, one line per point. Exit codes: 0 ok, 1 CUDA error, too little device
// memory or a failed result check, 2 bad arguments.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr const char* kProg = "attnsim_cuda_microbench";

#define MB_CHECK(expr)                                                                        \
  do {                                                                                        \
    const cudaError_t err_ = (expr);                                                          \
    if (err_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s: CUDA error: %s (%s:%d): %s\n", kProg, #expr, __FILE__,       \
                   __LINE__, cudaGetErrorString(err_));                                       \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// ------------------------------------------------------------------------------------------------
// Device code

// clock64 with a memory clobber, so the compiler keeps it between the surrounding memory accesses.
__device__ __forceinline__ long long clock_now() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t) : : "memory");
  return t;
}

// One dependent global load: volatile asm, so it is neither removed, merged nor reordered.
__device__ __forceinline__ unsigned long long load_next(unsigned long long p) {
  unsigned long long next;
  asm volatile("ld.global.u64 %0, [%1];" : "=l"(next) : "l"(p) : "memory");
  return next;
}

// out[0]: pointer after the warm traversal, out[1]: pointer after the timed loop, out[2]: cycles.
// The stores before each clock read need the loaded value, so the clock is read only after the
// last load of the loop before it has returned.
__global__ void chase_kernel(unsigned long long start, long long warm, long long iters,
                             unsigned long long* out) {
  unsigned long long p = start;
  for (long long i = 0; i < warm; ++i) p = load_next(p);
  out[0] = p;
  const long long t0 = clock_now();
  for (long long i = 0; i < iters; ++i) p = load_next(p);
  out[1] = p;
  const long long t1 = clock_now();
  out[2] = static_cast<unsigned long long>(t1 - t0);
}

// Line i's first 8 bytes = address of line next[i] (lines of 128 bytes = 16 words).
__global__ void chase_link_kernel(unsigned long long* buf, const uint32_t* next, unsigned long long lines) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < lines; i += stride) {
    buf[i * 16] = reinterpret_cast<unsigned long long>(buf + static_cast<unsigned long long>(next[i]) * 16);
  }
}

// Stream buffer: every half is kStreamValue (2^-12, exact in fp16 and fp32), so the host can
// repeat each thread's fp32 additions exactly and check the kernel's sums.
constexpr float kStreamValue = 1.0f / 4096.0f;

__global__ void stream_fill_kernel(uint4* buf, unsigned long long chunks) {
  const __half2 h = __float2half2_rn(kStreamValue);
  unsigned int w;
  std::memcpy(&w, &h, sizeof(w));
  const uint4 v = make_uint4(w, w, w, w);
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < chunks; i += stride) {
    buf[i] = v;
  }
}

template <int kVec>
struct VecType;
template <>
struct VecType<16> {
  using T = uint4;
};
template <>
struct VecType<8> {
  using T = uint2;
};
template <>
struct VecType<4> {
  using T = unsigned int;
};

__device__ __forceinline__ void add_half2(unsigned int w, float& a, float& b) {
  __half2 h;
  std::memcpy(&h, &w, sizeof(h));
  const float2 f = __half22float2(h);
  a += f.x;
  b += f.y;
}
__device__ __forceinline__ void accumulate(const uint4& v, float* acc) {
  add_half2(v.x, acc[0], acc[1]);
  add_half2(v.y, acc[2], acc[3]);
  add_half2(v.z, acc[4], acc[5]);
  add_half2(v.w, acc[6], acc[7]);
}
__device__ __forceinline__ void accumulate(const uint2& v, float* acc) {
  add_half2(v.x, acc[0], acc[1]);
  add_half2(v.y, acc[2], acc[3]);
}
__device__ __forceinline__ void accumulate(unsigned int v, float* acc) { add_half2(v, acc[0], acc[1]); }

// CTA blockIdx.x reads [blockIdx.x * slice_bytes, + steps * step_bytes), step_bytes =
// blockDim.x * kVec * kLoads: per step each thread loads kLoads coalesced kVec-byte vectors
// (consecutive threads at consecutive addresses), then converts and sums them into fp32
// registers. The step loop is not unrolled: one step in flight per thread. Within a step the
// source issues every load before the first sum, but ptxas schedules them: without a
// minimum-blocks launch bound (none here) nvcc 13.0 keeps every instance at <= 37 registers,
// so for steps of more than a few 16-byte loads per thread only part of them can be outstanding
// at once. The progress line prints the registers per thread.
template <int kVec, int kLoads>
__global__ void stream_read_kernel(const unsigned char* buf, unsigned long long slice_bytes,
                                   unsigned long long steps, float* out) {
  using V = typename VecType<kVec>::T;
  const unsigned int stride = blockDim.x * kVec;
  const unsigned long long step_bytes = static_cast<unsigned long long>(stride) * kLoads;
  const unsigned char* p = buf + static_cast<unsigned long long>(blockIdx.x) * slice_bytes + threadIdx.x * kVec;
  float acc[kVec / 2];
#pragma unroll
  for (int j = 0; j < kVec / 2; ++j) acc[j] = 0.0f;
#pragma unroll 1
  for (unsigned long long s = 0; s < steps; ++s, p += step_bytes) {
    V v[kLoads];
#pragma unroll
    for (int k = 0; k < kLoads; ++k) v[k] = *reinterpret_cast<const V*>(p + static_cast<unsigned long long>(k) * stride);
#pragma unroll
    for (int k = 0; k < kLoads; ++k) accumulate(v[k], acc);
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kVec / 2; ++j) sum += acc[j];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(out + blockIdx.x, sum);
}

using StreamKernel = void (*)(const unsigned char*, unsigned long long, unsigned long long, float*);
constexpr int kMaxLoads16 = 32;  // up to 512 bytes per thread per step in 16-byte loads

template <std::size_t... I>
std::array<StreamKernel, sizeof...(I)> make_vec16_table(std::index_sequence<I...>) {
  return {{&stream_read_kernel<16, static_cast<int>(I) + 1>...}};
}

// The kernel for bytes_per_thread bytes per thread per step, or nullptr if none: 4, 8, or a
// multiple of 16 up to 512.
StreamKernel stream_kernel_for(unsigned long long bytes_per_thread, int* vec, int* loads) {
  static const auto table = make_vec16_table(std::make_index_sequence<kMaxLoads16>{});
  if (bytes_per_thread == 4) {
    *vec = 4;
    *loads = 1;
    return &stream_read_kernel<4, 1>;
  }
  if (bytes_per_thread == 8) {
    *vec = 8;
    *loads = 1;
    return &stream_read_kernel<8, 1>;
  }
  if (bytes_per_thread % 16 == 0 && bytes_per_thread >= 16 && bytes_per_thread / 16 <= kMaxLoads16) {
    *vec = 16;
    *loads = static_cast<int>(bytes_per_thread / 16);
    return table[bytes_per_thread / 16 - 1];
  }
  return nullptr;
}

// ------------------------------------------------------------------------------------------------
// Options

struct StreamPoint {
  unsigned long long programs;
  unsigned long long bytes_per_step;
};

struct Options {
  std::string out;  // empty: stdout
  int device = 0;
  std::vector<double> chase_mib{0.125, 1, 8, 32, 48, 96, 256, 1024};
  unsigned long long chase_iters = 20000;
  std::vector<unsigned long long> stream_steps{1024, 4096, 16384};
  std::vector<unsigned long long> stream_programs{1, 8, 33, 66, 132, 264, 528, 1056, 2112, 4224, 8448};
  std::vector<StreamPoint> stream_points;  // from --stream-points, else steps x programs
  unsigned long long stream_bytes = 4294967296ull;
  int warps = 4;
  int repeats = 5;
  unsigned long long copy_bytes = 2147483648ull;
  bool skip_chase = false;
  bool skip_stream = false;
  bool skip_copy = false;
};

void print_help() {
  std::printf(
      "usage: %s [options]\n"
      "Measures pointer-chase latency, stream-read bandwidth and device-to-device copy bandwidth\n"
      "and writes them as JSON (schema: tests/data/reference/microbench.json; method:\n"
      "docs/calibration.md section 2). Lock the clocks first (nvidia-smi -lgc) for repeatable numbers.\n"
      "\n"
      "  --out FILE             write the JSON here (default: stdout)\n"
      "  --device N             CUDA device index (default 0)\n"
      "  --chase-mib LIST       pointer-chase working sets in MiB, comma-separated\n"
      "                         (default 0.125,1,8,32,48,96,256,1024)\n"
      "  --chase-iters N        timed loads per working set, at most one per line (default 20000)\n"
      "  --stream-steps LIST    stream-read bytes per step per CTA (default 1024,4096,16384)\n"
      "  --stream-programs LIST stream-read CTA counts\n"
      "                         (default 1,8,33,66,132,264,528,1056,2112,4224,8448)\n"
      "  --stream-points LIST   explicit programs:bytes_per_step pairs instead of the two above,\n"
      "                         e.g. 1:4096,8:4096,33:4096\n"
      "  --stream-bytes N       stream-read buffer in bytes (default 4294967296 = 4 GiB)\n"
      "  --warps N              warps per stream-read CTA (default 4); bytes_per_step / (32 * warps)\n"
      "                         must be 4, 8 or a multiple of 16 up to 512\n"
      "  --repeats N            timed stream-read runs per point, median reported, after one\n"
      "                         warm-up run (default 5)\n"
      "  --copy-bytes N         device-to-device copy size in bytes (default 2147483648 = 2 GiB)\n"
      "  --skip-chase, --skip-stream, --skip-copy\n"
      "                         leave out that measurement (and its JSON section)\n"
      "  --help                 this text\n"
      "\n"
      "Exit codes: 0 ok, 1 CUDA error, too little device memory or a failed check, 2 bad arguments.\n",
      kProg);
}

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string s(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(&s[0], s.size() + 1, fmt, args);
  va_end(args);
  return s;
}

[[noreturn]] void bad_option(const std::string& why) {
  std::fprintf(stderr, "%s: %s (see --help)\n", kProg, why.c_str());
  std::exit(2);
}

unsigned long long parse_u64(const std::string& flag, const std::string& text, unsigned long long lo,
                             unsigned long long hi) {
  if (text.empty() || text[0] < '0' || text[0] > '9') bad_option("bad value '" + text + "' for " + flag);
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') bad_option("bad value '" + text + "' for " + flag);
  if (v < lo || v > hi) {
    bad_option(flag + " " + text + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

double parse_positive_double(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double v = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !std::isfinite(v) || v <= 0.0) {
    bad_option("bad value '" + text + "' for " + flag + " (a positive number)");
  }
  return v;
}

std::vector<std::string> split(const std::string& flag, const std::string& text, char sep) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find(sep, begin);
    items.push_back(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (items.back().empty()) bad_option("empty item in the list '" + text + "' for " + flag);
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return items;
}

Options parse_options(int argc, char** argv) {
  Options o;
  bool steps_given = false;
  bool programs_given = false;
  bool points_given = false;
  constexpr unsigned long long kMaxGrid = 2147483647ull;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) bad_option("missing value after " + a);
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      print_help();
      std::exit(0);
    } else if (a == "--out") {
      o.out = value();
      if (o.out.empty()) bad_option("empty file name for --out");
    } else if (a == "--device") {
      o.device = static_cast<int>(parse_u64(a, value(), 0, 1024));
    } else if (a == "--chase-mib") {
      o.chase_mib.clear();
      for (const auto& s : split(a, value(), ',')) o.chase_mib.push_back(parse_positive_double(a, s));
    } else if (a == "--chase-iters") {
      o.chase_iters = parse_u64(a, value(), 1, 1ull << 40);
    } else if (a == "--stream-steps") {
      steps_given = true;
      o.stream_steps.clear();
      for (const auto& s : split(a, value(), ',')) o.stream_steps.push_back(parse_u64(a, s, 1, 1ull << 30));
    } else if (a == "--stream-programs") {
      programs_given = true;
      o.stream_programs.clear();
      for (const auto& s : split(a, value(), ',')) o.stream_programs.push_back(parse_u64(a, s, 1, kMaxGrid));
    } else if (a == "--stream-points") {
      points_given = true;
      o.stream_points.clear();
      for (const auto& s : split(a, value(), ',')) {
        const auto pair = split(a, s, ':');
        if (pair.size() != 2) bad_option("bad item '" + s + "' for --stream-points (want programs:bytes_per_step)");
        o.stream_points.push_back({parse_u64(a, pair[0], 1, kMaxGrid), parse_u64(a, pair[1], 1, 1ull << 30)});
      }
    } else if (a == "--stream-bytes") {
      o.stream_bytes = parse_u64(a, value(), 1, ~0ull);
    } else if (a == "--warps") {
      o.warps = static_cast<int>(parse_u64(a, value(), 1, 32));
    } else if (a == "--repeats") {
      o.repeats = static_cast<int>(parse_u64(a, value(), 1, 100000));
    } else if (a == "--copy-bytes") {
      o.copy_bytes = parse_u64(a, value(), 1, ~0ull);
    } else if (a == "--skip-chase") {
      o.skip_chase = true;
    } else if (a == "--skip-stream") {
      o.skip_stream = true;
    } else if (a == "--skip-copy") {
      o.skip_copy = true;
    } else {
      bad_option("unknown option " + a);
    }
  }
  if (points_given && (steps_given || programs_given)) {
    bad_option("--stream-points replaces --stream-steps and --stream-programs; give one or the other");
  }
  if (!points_given) {
    for (const auto b : o.stream_steps)
      for (const auto p : o.stream_programs) o.stream_points.push_back({p, b});
  }
  // Check every stream point now rather than after minutes of measuring.
  if (!o.skip_stream) {
    const unsigned long long threads = 32ull * static_cast<unsigned long long>(o.warps);
    for (const auto& pt : o.stream_points) {
      const std::string name = std::to_string(pt.programs) + ":" + std::to_string(pt.bytes_per_step);
      int vec = 0;
      int loads = 0;
      if (pt.bytes_per_step % threads != 0 || !stream_kernel_for(pt.bytes_per_step / threads, &vec, &loads)) {
        bad_option("stream point " + name + ": bytes_per_step / (32 * warps = " + std::to_string(threads) +
                   " threads) must be 4, 8 or a multiple of 16 up to " + std::to_string(16 * kMaxLoads16) +
                   " bytes per thread");
      }
      if (o.stream_bytes / pt.programs < pt.bytes_per_step) {
        bad_option("stream point " + name + ": --stream-bytes " + std::to_string(o.stream_bytes) +
                   " gives each of the programs less than one step");
      }
    }
  }
  if (!o.skip_chase) {
    for (const double mib : o.chase_mib) {
      const double lines = mib * 1048576.0 / 128.0;
      if (lines < 2.0 || lines > 4294967295.0) {
        bad_option(format("--chase-mib %g must span 2 to 2^32-1 lines of 128 bytes", mib));
      }
    }
  }
  return o;
}

// ------------------------------------------------------------------------------------------------
// Host helpers

struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { MB_CHECK(cudaMalloc(&ptr, bytes)); }
  ~DeviceBuffer() {
    const cudaError_t err = cudaFree(ptr);
    if (err != cudaSuccess) std::fprintf(stderr, "%s: cudaFree: %s\n", kProg, cudaGetErrorString(err));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr);
  }
};

struct EventPair {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  EventPair() {
    MB_CHECK(cudaEventCreate(&start));
    MB_CHECK(cudaEventCreate(&stop));
  }
  ~EventPair() {
    const cudaError_t a = cudaEventDestroy(start);
    const cudaError_t b = cudaEventDestroy(stop);
    if (a != cudaSuccess || b != cudaSuccess) {
      std::fprintf(stderr, "%s: cudaEventDestroy: %s\n", kProg, cudaGetErrorString(a != cudaSuccess ? a : b));
    }
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  float elapsed_ms() const {
    MB_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    MB_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string human_bytes(unsigned long long b) {
  if (b % (1ull << 30) == 0) return format("%llu GiB", b >> 30);
  if (b % (1ull << 20) == 0) return format("%llu MiB", b >> 20);
  return format("%llu B", b);
}

std::string version_string(int v) { return format("%d.%d", v / 1000, (v % 1000) / 10); }

// The kernel-module version from /proc/driver/nvidia/version ("... Kernel Module  580.159 ..."),
// empty when unreadable (not Linux, container without it).
std::string nvidia_driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!f || !std::getline(f, line)) return "";
  const std::string key = "Kernel Module";
  std::size_t pos = line.find(key);
  if (pos == std::string::npos) return "";
  pos = line.find_first_not_of(" \t", pos + key.size());
  if (pos == std::string::npos) return "";
  const std::size_t end = line.find_first_of(" \t", pos);
  return line.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const unsigned char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20) out += format("\\u%04x", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string json_number(double v) { return std::isfinite(v) ? format("%.17g", v) : "null"; }

// ------------------------------------------------------------------------------------------------
// Measurements

struct Attribute {
  std::string key;  // without the device__attribute_ prefix
  bool is_string;
  long long number;
  std::string text;
};

std::vector<Attribute> device_attributes(int dev, const cudaDeviceProp& prop) {
  std::vector<Attribute> a;
  auto num = [&](const char* key, long long v) { a.push_back({key, false, v, ""}); };
  auto attr = [&](const char* key, cudaDeviceAttr which) {
    int v = 0;
    const cudaError_t err = cudaDeviceGetAttribute(&v, which, dev);
    if (err == cudaSuccess) {
      num(key, v);
    } else {  // not reported by this driver: leave it out
      std::fprintf(stderr, "%s: note: cudaDeviceGetAttribute(%s): %s; omitted\n", kProg, key, cudaGetErrorString(err));
      (void)cudaGetLastError();
    }
  };
  attr("clock_rate", cudaDevAttrClockRate);  // kHz; cudaDeviceProp::clockRate is gone in CUDA 13
  num("compute_capability_major", prop.major);
  num("compute_capability_minor", prop.minor);
  a.push_back({"display_name", true, 0, prop.name});
  num("global_memory_bus_width", prop.memoryBusWidth);
  num("l2_cache_size", prop.l2CacheSize);
  num("max_blocks_per_multiprocessor", prop.maxBlocksPerMultiProcessor);
  num("max_persisting_l2_cache_size", prop.persistingL2CacheMaxSize);
  num("max_registers_per_block", prop.regsPerBlock);
  num("max_registers_per_multiprocessor", prop.regsPerMultiprocessor);
  num("max_shared_memory_per_block", static_cast<long long>(prop.sharedMemPerBlock));
  num("max_shared_memory_per_block_optin", static_cast<long long>(prop.sharedMemPerBlockOptin));
  num("max_shared_memory_per_multiprocessor", static_cast<long long>(prop.sharedMemPerMultiprocessor));
  num("max_threads_per_multiprocessor", prop.maxThreadsPerMultiProcessor);
  num("max_warps_per_multiprocessor", prop.maxThreadsPerMultiProcessor / std::max(1, prop.warpSize));
  attr("memory_clock_rate", cudaDevAttrMemoryClockRate);  // kHz
  num("multiprocessor_count", prop.multiProcessorCount);
  num("pci_bus_id", prop.pciBusID);
  num("reserved_shared_memory_per_block", static_cast<long long>(prop.reservedSharedMemPerBlock));
  num("total_constant_memory", static_cast<long long>(prop.totalConstMem));
  num("total_memory", static_cast<long long>(prop.totalGlobalMem));
  num("warp_size", prop.warpSize);
  // fbp_count (-> hbm.channels) has no runtime-API attribute: read it from Nsight Compute.
  std::sort(a.begin(), a.end(), [](const Attribute& x, const Attribute& y) { return x.key < y.key; });
  return a;
}

struct ChasePoint {
  double working_set_mib;
  long long warm;
  long long iters;
  double cycles_per_load;
};

constexpr unsigned long long kChaseSeed = 0x5eed2024a77e5117ull;
constexpr unsigned long long kLineBytes = 128;
constexpr unsigned long long kWarmLimitBytes = 128ull << 20;

ChasePoint measure_chase(double mib, unsigned long long max_iters) {
  const unsigned long long ws_bytes = static_cast<unsigned long long>(std::llround(mib * 1048576.0));
  const unsigned long long lines = ws_bytes / kLineBytes;
  // Sattolo's shuffle: next[] is one cycle through all lines.
  std::vector<uint32_t> next(lines);
  for (unsigned long long i = 0; i < lines; ++i) next[i] = static_cast<uint32_t>(i);
  std::mt19937_64 rng(kChaseSeed);
  for (unsigned long long i = lines - 1; i > 0; --i) {
    const unsigned long long j = rng() % i;  // j < i
    std::swap(next[i], next[j]);
  }
  const long long warm = ws_bytes <= kWarmLimitBytes ? static_cast<long long>(lines) : 0;
  const long long iters = static_cast<long long>(std::min(lines, max_iters));

  DeviceBuffer buf(lines * kLineBytes);
  {
    DeviceBuffer dnext(lines * sizeof(uint32_t));
    MB_CHECK(cudaMemcpy(dnext.ptr, next.data(), lines * sizeof(uint32_t), cudaMemcpyHostToDevice));
    chase_link_kernel<<<1024, 256>>>(buf.as<unsigned long long>(), dnext.as<uint32_t>(), lines);
    MB_CHECK(cudaGetLastError());
    MB_CHECK(cudaDeviceSynchronize());
  }
  DeviceBuffer out(3 * sizeof(unsigned long long));
  const unsigned long long base = reinterpret_cast<unsigned long long>(buf.ptr);
  chase_kernel<<<1, 1>>>(base, warm, iters, out.as<unsigned long long>());
  MB_CHECK(cudaGetLastError());
  MB_CHECK(cudaDeviceSynchronize());
  unsigned long long result[3] = {0, 0, 0};
  MB_CHECK(cudaMemcpy(result, out.ptr, sizeof(result), cudaMemcpyDeviceToHost));

  // The chase must have ended where the permutation says.
  unsigned long long line = 0;
  for (long long k = 0; k < warm + iters; ++k) line = next[line];
  if (result[1] != base + line * kLineBytes) {
    std::fprintf(stderr, "%s: pointer chase over %g MiB ended at 0x%llx, expected 0x%llx\n", kProg, mib,
                 result[1], base + line * kLineBytes);
    std::exit(1);
  }
  return {mib, warm, iters, static_cast<double>(result[2]) / static_cast<double>(iters)};
}

struct StreamResult {
  unsigned long long block_elems, bytes_per_step, warps, programs, bytes;
  double ms, gbps;
  int registers;  // per thread, for the progress line only
};

// Buffer already filled by stream_fill_kernel; `out` has one float per program.
StreamResult measure_stream(const unsigned char* buf, float* out, const StreamPoint& pt, unsigned long long stream_bytes,
                            int warps, int repeats, const EventPair& ev) {
  const unsigned int threads = 32u * static_cast<unsigned int>(warps);
  int vec = 0;
  int loads = 0;
  const StreamKernel kernel = stream_kernel_for(pt.bytes_per_step / threads, &vec, &loads);
  if (!kernel) {  // parse_options checked this
    std::fprintf(stderr, "%s: no stream kernel for %llu bytes per step\n", kProg, pt.bytes_per_step);
    std::exit(2);
  }
  const unsigned long long slice = stream_bytes / pt.programs / pt.bytes_per_step * pt.bytes_per_step;
  const unsigned long long steps = slice / pt.bytes_per_step;
  const unsigned long long bytes = slice * pt.programs;
  const unsigned int grid = static_cast<unsigned int>(pt.programs);

  MB_CHECK(cudaMemset(out, 0, pt.programs * sizeof(float)));
  std::vector<double> ms;
  for (int r = 0; r <= repeats; ++r) {  // r == 0: warm-up
    MB_CHECK(cudaEventRecord(ev.start));
    kernel<<<grid, threads>>>(buf, slice, steps, out);
    MB_CHECK(cudaGetLastError());
    MB_CHECK(cudaEventRecord(ev.stop));
    const double t = ev.elapsed_ms();
    if (r > 0) ms.push_back(t);
  }
  // Check every CTA's sum against the same fp32 additions done here: each of a thread's kVec / 2
  // accumulators adds kStreamValue steps * loads times; they are summed in order; the warp
  // reduction of 32 equal values is exact; each warp of each run adds its sum to out[c].
  float acc = 0.0f;
  for (unsigned long long i = 0, n = steps * static_cast<unsigned long long>(loads); i < n; ++i) {
    const float next = acc + kStreamValue;
    if (next == acc) break;  // no longer grows
    acc = next;
  }
  float thread_sum = 0.0f;
  for (int j = 0; j < vec / 2; ++j) thread_sum += acc;
  const float warp_sum = 32.0f * thread_sum;
  float cta_sum = 0.0f;
  for (int i = 0; i < warps * (repeats + 1); ++i) cta_sum += warp_sum;
  std::vector<float> sums(pt.programs);
  MB_CHECK(cudaMemcpy(sums.data(), out, pt.programs * sizeof(float), cudaMemcpyDeviceToHost));
  for (unsigned long long c = 0; c < pt.programs; ++c) {
    if (!(std::fabs(static_cast<double>(sums[c]) - cta_sum) <= 1e-6 * static_cast<double>(cta_sum))) {
      std::fprintf(stderr, "%s: stream_read %llu:%llu: CTA %llu summed %.9g, expected %.9g: wrong kernel result\n",
                   kProg, pt.programs, pt.bytes_per_step, c, static_cast<double>(sums[c]),
                   static_cast<double>(cta_sum));
      std::exit(1);
    }
  }
  cudaFuncAttributes attr;
  MB_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const double med = median(ms);
  return {pt.bytes_per_step / 2, pt.bytes_per_step, static_cast<unsigned long long>(warps), pt.programs, bytes,
          med, static_cast<double>(bytes) / (med * 1e6), attr.numRegs};
}

constexpr int kCopyRepeats = 10;

double measure_copy(unsigned long long bytes, const EventPair& ev) {
  DeviceBuffer src(bytes);
  DeviceBuffer dst(bytes);
  MB_CHECK(cudaMemset(src.ptr, 0x3c, bytes));
  MB_CHECK(cudaMemset(dst.ptr, 0, bytes));
  std::vector<double> ms;
  for (int r = 0; r <= kCopyRepeats; ++r) {  // r == 0: warm-up
    MB_CHECK(cudaEventRecord(ev.start));
    MB_CHECK(cudaMemcpyAsync(dst.ptr, src.ptr, bytes, cudaMemcpyDeviceToDevice));
    MB_CHECK(cudaEventRecord(ev.stop));
    const double t = ev.elapsed_ms();
    if (r > 0) ms.push_back(t);
  }
  return 2.0 * static_cast<double>(bytes) / (median(ms) * 1e6);
}

// Fails (exit 1) unless `need` bytes fit in the device memory free now.
void require_memory(unsigned long long need, const char* what, const char* option) {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  MB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (need > free_bytes) {
    std::fprintf(stderr,
                 "%s: %s needs %llu bytes (%.2f GiB) of device memory, but only %llu bytes (%.2f GiB) of %.2f GiB "
                 "are free; pass a smaller %s\n",
                 kProg, what, need, need / 1073741824.0, static_cast<unsigned long long>(free_bytes),
                 free_bytes / 1073741824.0, total_bytes / 1073741824.0, option);
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_options(argc, argv);

  // Fail on an unwritable --out now, not after minutes of measuring (and leave no empty file).
  if (!opt.out.empty()) {
    const bool existed = static_cast<bool>(std::ifstream(opt.out));
    std::FILE* f = std::fopen(opt.out.c_str(), "a");
    if (!f) {
      std::fprintf(stderr, "%s: cannot write --out %s: %s\n", kProg, opt.out.c_str(), std::strerror(errno));
      return 2;
    }
    std::fclose(f);
    if (!existed) std::remove(opt.out.c_str());
  }

  int count = 0;
  MB_CHECK(cudaGetDeviceCount(&count));
  if (opt.device >= count) {
    std::fprintf(stderr, "%s: --device %d: only %d CUDA device(s)\n", kProg, opt.device, count);
    return 2;
  }
  MB_CHECK(cudaSetDevice(opt.device));
  MB_CHECK(cudaFree(nullptr));  // create the context now
  cudaDeviceProp prop;
  MB_CHECK(cudaGetDeviceProperties(&prop, opt.device));
  int runtime_version = 0;
  int driver_version = 0;
  MB_CHECK(cudaRuntimeGetVersion(&runtime_version));
  MB_CHECK(cudaDriverGetVersion(&driver_version));
  // Fails with a clear error if this binary has no code for the device (built for another -arch).
  cudaFuncAttributes fattr;
  {
    const cudaError_t err = cudaFuncGetAttributes(&fattr, chase_kernel);
    if (err != cudaSuccess) {
      std::fprintf(stderr, "%s: no usable kernel code for %s (compute capability %d.%d): %s; rebuild with -arch=sm_%d%d\n",
                   kProg, prop.name, prop.major, prop.minor, cudaGetErrorString(err), prop.major, prop.minor);
      return 1;
    }
  }
  const std::vector<Attribute> attrs = device_attributes(opt.device, prop);
  long long clock_khz = 0;
  for (const auto& a : attrs)
    if (a.key == "clock_rate") clock_khz = a.number;

  // Check the largest allocation of each measurement before spending minutes on the others.
  if (!opt.skip_chase) {
    const double max_mib = *std::max_element(opt.chase_mib.begin(), opt.chase_mib.end());
    const unsigned long long lines = static_cast<unsigned long long>(std::llround(max_mib * 1048576.0)) / kLineBytes;
    require_memory(lines * (kLineBytes + sizeof(uint32_t)) + 4096, "pointer_chase", "--chase-mib");
  }
  if (!opt.skip_stream) {
    unsigned long long max_programs = 0;
    for (const auto& pt : opt.stream_points) max_programs = std::max(max_programs, pt.programs);
    require_memory(opt.stream_bytes + max_programs * sizeof(float), "stream_read", "--stream-bytes");
  }
  if (!opt.skip_copy) require_memory(2 * opt.copy_bytes, "copy_bandwidth (two buffers)", "--copy-bytes");

  const std::string driver = nvidia_driver_version();
  std::fprintf(stderr, "%s: %s, compute capability %d.%d, %d SMs, SM clock up to %lld MHz, kernels built for sm_%d\n",
               kProg, prop.name, prop.major, prop.minor, prop.multiProcessorCount, clock_khz / 1000,
               fattr.binaryVersion);

  EventPair ev;

  std::vector<ChasePoint> chase;
  if (!opt.skip_chase) {
    for (const double mib : opt.chase_mib) {
      chase.push_back(measure_chase(mib, opt.chase_iters));
      const ChasePoint& c = chase.back();
      std::fprintf(stderr, "pointer_chase %g MiB: warm %lld, iters %lld: %.2f cycles/load\n", c.working_set_mib,
                   c.warm, c.iters, c.cycles_per_load);
    }
  }

  std::vector<StreamResult> stream;
  if (!opt.skip_stream) {
    DeviceBuffer buf(opt.stream_bytes);
    unsigned long long max_programs = 0;
    for (const auto& pt : opt.stream_points) max_programs = std::max(max_programs, pt.programs);
    DeviceBuffer out(max_programs * sizeof(float));
    stream_fill_kernel<<<4 * prop.multiProcessorCount, 256>>>(buf.as<uint4>(), opt.stream_bytes / 16);
    MB_CHECK(cudaGetLastError());
    MB_CHECK(cudaDeviceSynchronize());
    std::size_t done = 0;
    for (const auto& pt : opt.stream_points) {
      stream.push_back(measure_stream(buf.as<const unsigned char>(), out.as<float>(), pt, opt.stream_bytes, opt.warps,
                                      opt.repeats, ev));
      const StreamResult& s = stream.back();
      std::fprintf(stderr, "stream_read [%zu/%zu] %llu programs x %llu B/step (%d warps, %d registers): %.4f ms, %.1f GB/s\n",
                   ++done, opt.stream_points.size(), s.programs, s.bytes_per_step, opt.warps, s.registers, s.ms,
                   s.gbps);
    }
  }

  double copy_gbps = 0.0;
  if (!opt.skip_copy) {
    copy_gbps = measure_copy(opt.copy_bytes, ev);
    std::fprintf(stderr, "copy_bandwidth %s: %.1f GB/s (read + written)\n", human_bytes(opt.copy_bytes).c_str(),
                 copy_gbps);
  }

  // ---- JSON, keys in the order of tests/data/reference/microbench.json.
  std::string about = format(
      "Microbenchmarks by %s (kernels/cuda/microbench.cu, nvcc %d.%d, kernels for sm_%d) on one %s "
      "(%.1f GiB, %d SMs, compute capability %d.%d)",
      kProg, __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__, fattr.binaryVersion, prop.name,
      prop.totalGlobalMem / 1073741824.0, prop.multiProcessorCount, prop.major, prop.minor);
  if (!driver.empty()) about += ", driver " + driver;
  about += ", CUDA runtime " + version_string(runtime_version) + ", CUDA driver API " + version_string(driver_version);
  if (clock_khz > 0) about += format(", SM clock up to %lld MHz", clock_khz / 1000);
  about +=
      "; clocks are whatever the driver set, not locked by this program (lock them with `nvidia-smi -lgc` for "
      "repeatable numbers). Use these to calibrate a device preset; they are measurements of one machine, not "
      "datasheet values.";

  std::string j = "{\n";
  j += " \"about\": " + json_string(about) + ",\n";
  j += " \"device_attributes\": {\n";
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    const Attribute& a = attrs[i];
    j += "  " + json_string("device__attribute_" + a.key) + ": " +
         (a.is_string ? json_string(a.text) : format("%lld", a.number)) + (i + 1 < attrs.size() ? ",\n" : "\n");
  }
  j += " }";
  if (!opt.skip_copy) {
    j += ",\n \"copy_bandwidth\": {\n";
    j += "  \"what\": " +
         json_string("cudaMemcpyAsync of a " + human_bytes(opt.copy_bytes) +
                     " buffer, device to device; bytes read + bytes written over the CUDA-event median of " +
                     std::to_string(kCopyRepeats) + " after one warm-up copy") +
         ",\n";
    j += "  \"GBps\": " + json_number(copy_gbps) + "\n }";
  }
  if (!opt.skip_chase) {
    j += ",\n \"pointer_chase\": {\n";
    j += "  \"what\": " +
         json_string(format("CUDA C++ kernel, one thread (<<<1,1>>>), dependent 8-byte ld.global loads over a random "
                            "cyclic permutation (Sattolo shuffle, std::mt19937_64 seed 0x%llx) of 128-byte lines "
                            "spanning working_set_MiB; cycles are SM clock64 cycles per load over iters loads "
                            "(at most %llu) after warm loads (one traversal of every line up to 128 MiB, none above)",
                            kChaseSeed, opt.chase_iters)) +
         ",\n";
    j += "  \"points\": [\n";
    for (std::size_t i = 0; i < chase.size(); ++i) {
      const ChasePoint& c = chase[i];
      j += "   {\n";
      j += "    \"working_set_MiB\": " + json_number(c.working_set_mib) + ",\n";
      j += format("    \"warm\": %lld,\n    \"iters\": %lld,\n", c.warm, c.iters);
      j += "    \"cycles_per_load\": " + json_number(c.cycles_per_load) + "\n";
      j += i + 1 < chase.size() ? "   },\n" : "   }\n";
    }
    j += "  ]\n }";
  }
  if (!opt.skip_stream) {
    j += ",\n \"stream_read\": {\n";
    j += "  \"what\": " +
         json_string(format("CUDA C++ kernel (not the Triton kernel of the shipped H200 reference): `programs` CTAs "
                            "of `warps` warps each read a disjoint contiguous slice of a %s fp16 buffer (slice = "
                            "buffer / programs rounded down to whole steps; `bytes` = bytes actually read), "
                            "bytes_per_step per loop iteration per CTA as coalesced 16-, 8- or 4-byte vector loads "
                            "(bytes_per_step / (32 * warps) bytes per thread per step; step loop not unrolled, "
                            "ptxas schedules the loads within a step), converted to fp32 and summed in registers; "
                            "GB/s = bytes read / CUDA-event median of %d runs after one warm-up run",
                            human_bytes(opt.stream_bytes).c_str(), opt.repeats)) +
         ",\n";
    j += "  \"points\": [\n";
    for (std::size_t i = 0; i < stream.size(); ++i) {
      const StreamResult& s = stream[i];
      j += "   {\n";
      j += format("    \"block_elems\": %llu,\n    \"bytes_per_step\": %llu,\n    \"warps\": %llu,\n", s.block_elems,
                  s.bytes_per_step, s.warps);
      j += format("    \"programs\": %llu,\n    \"bytes\": %llu,\n", s.programs, s.bytes);
      j += "    \"ms\": " + json_number(s.ms) + ",\n";
      j += "    \"GBps\": " + json_number(s.gbps) + "\n";
      j += i + 1 < stream.size() ? "   },\n" : "   }\n";
    }
    j += "  ]\n }";
  }
  j += "\n}\n";

  if (opt.out.empty()) {
    std::fwrite(j.data(), 1, j.size(), stdout);
    std::fflush(stdout);
  } else {
    std::FILE* f = std::fopen(opt.out.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "%s: cannot write %s: %s\n", kProg, opt.out.c_str(), std::strerror(errno));
      return 1;
    }
    const bool ok = std::fwrite(j.data(), 1, j.size(), f) == j.size();
    if (std::fclose(f) != 0 || !ok) {
      std::fprintf(stderr, "%s: error writing %s\n", kProg, opt.out.c_str());
      return 1;
    }
    std::fprintf(stderr, "%s: wrote %s\n", kProg, opt.out.c_str());
  }
  return 0;
}
