// Sampled simulation (sim.mode: sampled, docs/sampling.md): inside each CTA, a run of loop steps
// whose op streams have the same shape (every field but the addresses) is simulated until its
// step time is steady, then its further steps are skipped: the CTA sleeps for their measured
// mean time (pooled with other CTAs' of such runs, skipped_step_time), one step at a time, their
// op-stream counts are added exactly, and their loads and stores are warmed through the caches
// untimed (functional warming, MemorySystem::warm: loads in every 16th L2 set, scaled), so the
// memory counts are counted, not extrapolated. Short sample blocks every kPeriod steps
// re-measure long runs. Across CTAs (sampler_waves.cpp): once the
// waves of CTAs with equal op streams repeat (each of the last p waves agrees with the one p
// before it in mean CTA time, DRAM bytes and L2 hits; p = 1 to kMaxPeriod), further CTAs that
// check out equal (same step count, same first and last step shape) are skipped whole: their
// slot is held for the reference CTA time (or until the HBM channels could have moved its DRAM
// bytes, launch_sampling.cpp) and their counts are the reference CTA's (the mean CTA of the last
// 2p waves), over whole periods; the last skipped wave is simulated to rebuild the L2 state
// before the launch is measured again (at 2x, 4x ... the waves) or the last full and partial
// waves are simulated. Where CTAs differ in length (a causal mask) but their step counts repeat
// with a period (a head's query blocks), the waves are whole periods and each CTA is compared
// with, and skipped as, the CTAs of its class (its position in the period). Only CTAs and steps:
// nothing here knows a kernel.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "sim/core/launch_totals.h"
#include "sim/core/run_result.h"
#include "sim/core/tile_op.h"
#include "sim/engine/memory_count.h"
#include "sim/engine/shared_memory_banks.h"

namespace attnsim::engine {

// Adds op's op-stream counts (as LaunchSimulator::execute counts them) to `stats` and `smem`.
void count_op(const core::TileOp& op, SharedMemoryBanks& banks, core::LaunchStats& stats, core::TensorTraffic& smem);

class Sampler {
 public:
  // Steps of a run always simulated first; the second half are its first samples (eight were
  // too few: L2 port queues at a wave's start, docs/sampling.md "Inside a CTA").
  static constexpr std::uint32_t kWarmSteps = 16;
  // Where the first wave's CTAs (which keep kWarmSteps) mostly see their step time still move
  // through steps 8-15 (12-15 against 8-11 by more than kTrend), the later CTAs simulate their
  // runs to step kLongWarmSteps and sample the last eight (DRAM-bound GEMMs; docs/sampling.md).
  static constexpr std::uint32_t kLongWarmSteps = 32;
  static constexpr double kTrend = 0.02;
  static constexpr std::uint32_t kSampleSteps = 8;  // a run's first samples: its last warm steps
  static constexpr std::uint32_t kLeadSteps = 2;    // steps after a skip that refill the pipeline (not measured)
  static constexpr std::uint32_t kBlockSteps = 4;   // a re-measuring sample block
  static constexpr std::uint32_t kPeriod = 64;      // a sample block ends each period of a long run
  static constexpr std::uint64_t kMinSteps = 32;    // CTAs with fewer steps are not sampled inside

  static constexpr double kWaveTolerance = 0.01;  // waves agree in time, DRAM bytes, L2 hits
  static constexpr std::uint64_t kMaxPeriod = 4;  // waves may repeat with a period up to this
  // A steady launch is measured again at kRemeasureFactor times the waves it took to be steady,
  // and so on: waves that agree one to the next can drift over tens (sampler_waves.cpp).
  static constexpr std::uint64_t kRemeasureFactor = 2, kRemeasureSpan = 8;
  // A launch of at least this many waves of long CTAs (kMinSteps steps or more) skips CTAs whole
  // up to its end: no rebuilding wave and no simulated tail (sampler_waves.cpp).
  static constexpr std::uint64_t kEndSpanWaves = 128;
  // Skipped steps' accesses warm every kWarmSetStride-th L2 set (set sampling), each counted
  // that many times (MemorySystem::warm).
  static constexpr std::uint32_t kWarmSetStride = 16;

  Sampler() = default;
  // `flush_counted`: dirty L2 lines left at the end are counted as DRAM writes, so each stored
  // byte reaches DRAM once: the DRAM writes of a CTA skipped whole are its stored bytes.
  // Otherwise (Nsight Compute accounting) they are the write-backs its reference CTA caused.
  Sampler(std::uint32_t slots, std::uint64_t ctas, bool flush_counted);
  bool enabled() const { return !slots_.empty(); }

  // CTA `cta` starts in `slot` at `now`. Returns 0 when it is simulated, or how long its slot is
  // held when it is skipped whole. `emit(step, ops)` is the launch's emit_step for this CTA.
  // `beside_earlier`: another slot of its SM runs a simulated CTA from before the span of skipped
  // CTAs (before_span); with classes such a CTA is simulated, counted as its class's reference
  // CTA and its slot held at least as long, as a rebuilding one (finish_cta).
  template <class Emit>
  double start_cta(std::uint32_t slot, std::uint64_t cta, double now, Emit&& emit, bool beside_earlier = false);
  // Whether the CTA in `slot` is simulated and was dispatched before the span of skipped CTAs
  // (launches with classes; false before the launch is steady).
  bool before_span(std::uint32_t slot) const {
    return classes_ > 1 && steady_ && !slots_[slot].phantom && slots_[slot].cta < skip_from_;
  }
  bool has_classes() const { return classes_ > 1; }
  bool phantom(std::uint32_t slot) const { return slots_[slot].phantom; }
  // The DRAM bytes the reference CTA that CTA `cta`, skipped whole, counts as reads, or writes.
  double ref_dram_bytes(std::uint64_t cta, bool written) const {
    const Reference& r = ref(cta);
    return r.mem.empty() ? 0.0 : dram_bytes(r.mem, written ? 1 : 0);
  }
  // Counts the steps of up to kProbes CTAs spread over the grid (`emit(cta, step, ops)`). Where
  // they differ (a causal mask, uneven splits) steps are not skipped, and it looks for two
  // consecutive full waves of CTAs with equal step counts, else for step counts that repeat with
  // a period of T CTAs (classes, find_classes); with neither the sampler is inert. After
  // whole_ctas_only() it looks for the same (group 0's steps). docs/sampling.md, "Method".
  using EmitStep = std::function<bool(std::uint64_t cta, std::uint64_t step, std::vector<core::TileOp>& ops)>;
  // `groups`: warp groups per CTA (emit gives group 0's ops); a launch of fewer than `min_ops`
  // tile ops in all is simulated in full.
  void probe(std::uint64_t ctas, const EmitStep& emit, std::uint32_t groups = 1, std::uint64_t min_ops = 0);
  static constexpr std::uint32_t kProbes = 16;
  bool skips_steps() const { return skip_steps_; }
  // Nothing of the launch will be skipped: its results are a full run's (sampled fraction 1),
  // and the caller may leave out the hooks (on_step, before_access, start_cta, ...).
  bool inert() const { return inert_; }
  // Warp-specialized CTAs (several warp groups, mbarriers): no step is skipped (a skipped step of
  // one group would leave the other groups' barrier phases behind), whole CTAs are; the CTAs'
  // op-stream shapes and counts come from describe_cta.
  void whole_ctas_only() { skip_steps_ = false; describe_ = true; }
  bool describes_ctas() const { return describe_; }
  // The op-stream shape and counts of the CTA in `slot`, from all its groups' ops (`emit(group,
  // step, ops)`), as the step hooks would have collected them (group 0 gives the step count and
  // signatures); `counts` as in on_step.
  template <class Emit, class Counts>
  void describe_cta(std::uint32_t slot, std::uint32_t groups, Emit&& emit, Counts&& counts);
  // Simulates everything (steps and CTAs), still recording the mode and fraction; `why` is
  // reported (LaunchTotals::in_full_because).
  void disable(const char* why) { skip_steps_ = skip_waves_ = false; full_because_ = why; }
  // The CTA in `slot` has its next step's ops in `ops`, at `now` (the previous step's ops are
  // done). Returns -1 when the step is skipped (its counts are taken; emit the next one), or
  // the time to start it at (> now after skipped steps: the CTA sleeps until then).
  // `counts` adds an op's op-stream counts to the LaunchStats and the shared-memory traffic.
  template <class Counts>
  double on_step(std::uint32_t slot, const std::vector<core::TileOp>& ops, double now, Counts&& counts);
  // Fast-forwarding (a span skipped to the launch's end, to_end_): CTAs dispatched after the
  // reference waves but before the span count as the reference CTA (as a rebuilding one does), so
  // their skipped steps go unwarmed: nothing timed follows them. Whether the CTA in `slot` does
  // (such a CTA equal to the reference; `emit(step, ops)`: its emit_step), decided at its first
  // skipped step.
  template <class Emit>
  bool fast_forward(std::uint32_t slot, Emit&& emit);
  void set_fast_forward(bool on) { fast_forward_on_ = on; }  // on by default
  // A further step (`ops`) of the run of the CTA in `slot`: where it has the run's shape and no
  // store it is skipped as on_step skips one, unwarmed; returns whether it was.
  bool skip_unwarmed(std::uint32_t slot, const std::vector<core::TileOp>& ops);
  // The same for a step the kernel says has the shape of the step skip_unwarmed skipped last in
  // `slot` (KernelLaunch::step_shape), counted without its ops: `n_ops` ops, the run's signature.
  void skip_unwarmed_like_last(std::uint32_t slot, std::size_t n_ops);
  // Extrapolated runs (sampler_fast_forward.cpp): in a launch of kEndSpanWaves waves or more the
  // step index up to which the CTA in `slot`, past kExtrapolateAfter steps of its run, may skip
  // its steps unwarmed with extrapolated memory counts (0: none); extrapolate() counts `n` such.
  std::uint64_t extrapolate_until(std::uint32_t slot, std::uint64_t next_step);
  void extrapolate(std::uint32_t slot, std::uint64_t n);
  void set_memory(double l2_bytes, double dram_bytes_per_cycle) {  // the L2's capacity, the HBM's rate
    l2_bytes_ = l2_bytes;
    dram_rate_ = dram_bytes_per_cycle;
  }
  static constexpr std::uint64_t kExtrapolateAfter = 256;
  static constexpr double kTailCover = 1.5;       // the last steps warmed bring in this many L2s
  static constexpr double kMaxDramShare = 0.25;  // of the HBM rate the launch's CTAs may ask for
  static bool stores(const std::vector<core::TileOp>& ops);  // whether any op is a store
  // The CTA has no step left: returns when it retires (after its last skipped steps).
  double finish_cta(std::uint32_t slot, double now);
  // The CTA in `slot` retires at `now`: its memory counts go into its wave's.
  void end_cta(std::uint32_t slot, double now);
  // Memory counts before and after an access of op `op` by the CTA in `slot`; `done`: the
  // whole op is issued (its requested bytes count once).
  void before_access(const core::MemoryCounters& c, const core::LevelTraffic& traffic, core::Tensor t);
  void after_access(std::uint32_t slot, const core::TileOp& op, const core::MemoryCounters& c,
                    const core::LevelTraffic& traffic, bool done);
  void note_simulated_op() {
    if (!describe_) ++ops_simulated_;  // described CTAs count their ops in describe_cta
  }
  // A simulated step of the CTA in `slot` committed an async group of loads that completes
  // `latency` after its commit.
  void note_group(std::uint32_t slot, double latency) {
    Slot& s = slots_[slot];
    s.group_latency += latency;
    ++s.groups;
  }
  // Mean latency of the CTA's committed groups so far (0: none).
  double group_latency(std::uint32_t slot) const {
    const Slot& s = slots_[slot];
    return s.groups ? s.group_latency / static_cast<double>(s.groups) : 0.0;
  }
  // How long the CTA's last skipped step took (0 after a simulated step).
  double last_span(std::uint32_t slot) const { return slots_[slot].last_span; }
  void set_last_span(std::uint32_t slot, double span) { slots_[slot].last_span = span; }
  // When the skipped steps so far end (the CTA sleeps until then).
  double pending(std::uint32_t slot) const { return slots_[slot].pending; }
  // Returns the pending sleep and clears it (the caller sleeps it now).
  double take_pending(std::uint32_t slot) {
    const double p = slots_[slot].pending;
    slots_[slot].pending = 0;
    return p;
  }
  std::uint64_t phantoms() const { return phantoms_; }

  // The skipped steps' op-stream counts (LaunchStats without events).
  const core::LaunchStats& skipped_stats() const { return skipped_stats_; }
  // Adds the skipped steps' memory counts to the launch's totals and traffic (t.stats already holds
  // skipped_stats()), the DRAM reads of CTAs counted as the reference times `dram_read_factor`
  // (MemorySystem::correct_timed_misses); sets the sampling fields.
  void finish(core::LaunchTotals& t, core::LevelTraffic& traffic, const std::array<double, core::kNumTensors>& dram_read_factor) const;

 private:
  struct KeyAcc {  // one (tensor, load/store) of a CTA
    std::uint32_t key = 0;
    double requested = 0;
    MemoryCount delta;
  };
  // What makes two CTAs' op streams equal (as far as the counts go).
  struct CtaShape {
    std::uint64_t steps = 0, first_sig = 0, last_sig = 0, ops = 0, wavefronts = 0;
    double flops = 0;
    core::Bytes lsu_bytes = 0;
    bool operator==(const CtaShape&) const = default;
  };
  struct Slot {
    std::uint64_t cta = 0;
    bool phantom = false, warm = false;
    bool ff_pending = false, ff = false;  // fast_forward: to decide at its first skipped step; decided yes
    // Extrapolated runs: the CTA's counts at run step x_pos (x_base), their rate per step since
    // (x_rate), and the counts extrapolated (x_extra); vec layout.
    bool x_based = false, x_done = false;
    std::uint64_t x_pos = 0;
    std::vector<double> x_base, x_rate, x_extra;
    CtaShape shape;
    core::LaunchStats cta_stats;  // the CTA's op-stream counts, all steps
    core::TensorTraffic cta_smem;
    std::uint64_t sig = 0;
    std::uint64_t run_pos = 0;      // step index inside the run of equal shapes
    std::uint64_t since_skip = 0;   // simulated steps since the last skip (kLeadSteps unmeasured)
    bool have_sig = false, measure = false, skipped_any = false;
    double cta_start = 0, step_start = 0, pending = 0, last_span = 0;
    double group_latency = 0;  // summed over `groups` committed groups with loads
    std::uint64_t groups = 0;
    double n = 0, sum = 0, sumsq = 0;  // measured step times of the run
    double early[2] = {0, 0};          // summed step times at run positions 8-11 and 12-15
    std::uint64_t warm_end = kWarmSteps;  // the run is simulated up to here
    // Its contribution to the pool of its run (skipped_step_time): the pool's index, and the
    // samples, mean and variance of the mean it added; kNoPool before the run's first skip.
    std::uint32_t pool = kNoPool;
    double pool_n = 0, pool_mean = 0, pool_var = 0;
    core::LaunchStats step_stats;      // op-stream counts of one step of the run
    core::TensorTraffic step_smem;
    bool step_counted = false;
    std::vector<KeyAcc> keys;
  };
  struct Wave {
    std::uint32_t done = 0;
    bool uniform = true;  // equal op streams
    CtaShape shape;
    double dur_sum = 0, dur_sq = 0;
    std::vector<double> mem;  // summed memory counts (vec layout)
    std::vector<std::vector<core::Bytes>> keys;  // per tensor: its CTAs' sharing keys (note_keys)
    std::uint64_t counted = 0;                   // its CTAs counted as the reference CTA
    // Its simulated CTAs' first start and last end.
    double first_start = std::numeric_limits<double>::max(), last_end = 0;
  };
  struct Reference {  // one CTA of the steady waves
    CtaShape shape;
    double duration = 0, rel_error = 0;
    std::vector<double> mem;
    std::vector<double> counted;  // mem less the DRAM reads counted per sharing group
    core::LaunchStats stats;
    core::TensorTraffic smem;
  };
  static std::uint64_t signature(const std::vector<core::TileOp>& ops);
  // The memory counts as one vector: 10 counters, then dram, lts, l1 read/write per tensor.
  static constexpr std::size_t kVec = 10 + 6 * core::kNumTensors;
  // The DRAM bytes of memory counts in that layout: read (`which` 0), written (1) or both (2).
  static double dram_bytes(const std::vector<double>& mem, int which) {
    double b = 0;
    for (std::size_t t = 0; t < core::kNumTensors; ++t)
      for (int dir = 0; dir < 2; ++dir)
        if (which == 2 || which == dir) b += mem[10 + 2 * t + static_cast<std::size_t>(dir)];
    return b;
  }
  static void add_scaled(std::vector<double>& acc, const MemoryCount& d, double f);
  void set_wave(std::uint64_t per);  // waves of `per` CTAs (and the tail in those)
  void wave_done(std::uint64_t cta, const Slot& s, double duration, const std::vector<double>& mem);
  // At the steady point (wave w, period p): each class's reference from the CTAs of its class in
  // the last 2p waves (classes_ > 1; group_cost_ fitted).
  void class_references(std::uint64_t w, std::uint64_t p, double worst);
  void count_step(Slot& s, std::size_t n_ops, std::uint64_t sig);
  // Where the run of the CTA in slot s, at its kWarmSteps-th step, stops being simulated: a CTA
  // of the first wave votes and keeps kWarmSteps; a later one takes kLongWarmSteps where most of
  // the first wave voted that the step time still moves (kLongWarmSteps above).
  std::uint64_t decide_warm_end(const Slot& s);
  static std::uint32_t key_of(const core::TileOp& op) {
    return static_cast<std::uint32_t>(op.tensor) * 2 + (op.kind == core::OpKind::kStore ? 1 : 0);
  }
  KeyAcc& key(Slot& s, std::uint32_t k);
  void add_skipped(Slot& s, double time, double standard_error);
  // The step time a skipped step of slot s's run takes, and its standard error: the CTA's own
  // mean of its samples, shrunk towards the mean of every CTA's samples of runs of the same
  // shape and warm-up (an empirical-Bayes estimate, docs/sampling.md "Pooled step times").
  std::pair<double, double> skipped_step_time(Slot& s);
  // Runs of equal shape and warm-up: each CTA's mean sample step time, summed over the CTAs.
  struct RunPool {
    std::uint64_t sig = 0, warm_end = 0;
    double ctas = 0, sum = 0, sumsq = 0, var = 0;  // var: summed variances of the CTAs' means
  };
  static constexpr std::uint32_t kNoPool = ~0u;
  // A CTA's mean is shrunk only where the pool holds at least this many CTAs.
  static constexpr double kMinPool = 16;
  static constexpr double kMaxShift = 1.0;  // standard errors a shrunk mean may move
  std::vector<RunPool> pools_;
  std::vector<Slot> slots_;
  bool flush_counted_ = true;
  bool skip_steps_ = true;  // probe found equal step counts
  bool inert_ = false;      // probe: no step and no CTA can be skipped
  const char* full_because_ = nullptr;  // why nothing can be skipped, where that is known up front
  // Are there two consecutive full waves of CTAs of equal step counts (`count_steps(cta)`)
  // that leave a wave to skip before the tail (sampler_waves.cpp)?
  bool waves_could_be_skipped(std::uint64_t ctas, const std::function<std::uint64_t(std::uint64_t)>& count_steps) const;
  // Classes of CTAs (probe, where step counts differ): the smallest period T >= 2 in which the
  // step counts of the CTAs repeat in dispatch order (checked over the first three periods and
  // the probes); the sampler's waves become T * ceil(slots / T) CTAs. False where there is none,
  // or too few such waves (kMinClassWaves) or too large ones (kMaxClassWave CTAs).
  bool find_classes(std::uint64_t ctas, const std::function<std::uint64_t(std::uint64_t)>& count_steps,
                    const std::vector<std::uint64_t>& probe_ctas, const std::vector<std::uint64_t>& probe_steps);
  // Twelve waves: the first waves of a causal launch differ (steady at wave 2 or later), and the
  // rebuilding wave and the tail are simulated; with 8-10 waves the third to half of the CTAs
  // skipped did not pay for the sampler's bookkeeping (the FA-2 grid's d 64 causal shapes on the
  // h100-sxm: 1.0-1.2x the speed of full).
  static constexpr std::uint64_t kMinClassWaves = 12, kMaxClassWave = 2048;
  bool skip_waves_ = true;
  std::uint64_t trend_votes_ = 0, trend_voters_ = 0;  // first-wave runs whose step time still moved
  bool describe_ = false;  // whole_ctas_only(): no step hooks
  AccessSnapshot before_;
  // Extrapolated memory counts (vec layout; doubles, rounded once at the end).
  std::vector<double> ext_;
  std::vector<double> scratch_;
  core::LaunchStats skipped_stats_;
  // Waves: wave_ CTAs each, in dispatch order (the slots, or whole periods of classes).
  std::uint64_t ctas_ = 0, wave_ = 1;
  std::vector<Wave> waves_;
  bool steady_ = false;
  // The reference CTA of each class (one class where all CTAs are equal): CTA c is of class
  // c % classes_.
  std::uint64_t classes_ = 1;
  std::vector<Reference> refs_ = std::vector<Reference>(1);
  const Reference& ref(std::uint64_t cta) const { return refs_[cta % classes_]; }
  // classes_ > 1: each class's first shape and last op-stream counts, and the durations and
  // memory counts of the CTAs of the last kRing waves (wave w at (w % kRing) * wave_; kVec + 1
  // values per CTA, the duration first).
  static constexpr std::uint64_t kRing = 2 * kMaxPeriod + 2;
  std::vector<Reference> class_seen_;
  std::vector<double> ring_;
  std::vector<std::uint64_t> ring_wave_;  // the wave each CTA record of ring_ is from
  // Whether ring_ still holds every CTA of waves w - 2p + 1 ... w.
  bool ring_holds(std::uint64_t w, std::uint64_t p) const;
  // CTA indices: CTAs from skip_from_ to end_from_ are skipped whole, the wave before end_from_
  // rebuilds the L2 state; the tail (last full and partial wave) starts at tail_from_.
  std::uint64_t skip_from_ = 0, end_from_ = 0, tail_from_ = 0, dispatched_ = 0;
  std::uint64_t ff_from_ = 0;  // CTAs from here to skip_from_ fast-forward (to_end_ launches)
  bool fast_forward_on_ = true;
  bool long_launch_ = false;  // kEndSpanWaves waves or more of CTAs of cta_steps_ equal steps
  std::uint64_t cta_steps_ = 0;
  double l2_bytes_ = 0, dram_rate_ = 0;
  std::uint64_t x_from_ = 0, x_until_ = 0;  // the step range every CTA extrapolates (0: undecided, 1: none)
  void own_counts(const Slot& s, std::vector<double>& v) const;  // its keys' counts and x_extra
  std::uint64_t fast_forwarded_ = 0, extrapolated_ = 0;  // CTAs that did
  bool remeasure_ = false;  // simulated from end_from_ until steady again, tested from test_from_ on
  bool to_end_ = false;     // the span runs to the launch's end (kEndSpanWaves): nothing rebuilds
  std::uint64_t test_from_ = 0;
  std::uint64_t phantoms_ = 0;
  bool skipped_steps_ = false;  // some step was skipped (and warmed)
  std::vector<core::TileOp> check_ops_;
  std::uint64_t peek_sig_[2] = {0, 0}, peeked_ = 0;  // start_cta's steps 0-1: equal_cta reads
  bool peek_end_ = false;                              // their signatures, and that none follows
  // Shared tensors' DRAM reads of CTAs counted as the reference are counted per wave from its
  // sharing groups (CTAs whose first load of the tensor in steps 0-1 has the same address):
  // `fresh` bytes per group the wave before did not have, `cont` per group it had
  // (sampler_waves.cpp). `on` where the reference waves read the tensor through the L2.
  struct GroupCost {
    bool on = false;
    double fresh = 0, cont = 0;
  };
  std::vector<GroupCost> group_cost_;
  void note_keys(std::uint64_t cta, const std::vector<core::TileOp>& ops, std::uint32_t& seen);
  std::pair<double, double> groups(std::uint64_t w, std::size_t t) const;  // (all, fresh)
  void fit_group_costs(std::uint64_t w, const Wave& wave);

  // What start_cta does with CTA `cta`: simulate it, simulate it to rebuild the L2 state (before a
  // re-measurement or the tail), or skip it whole if it checks out equal to the reference.
  enum class CtaRole { kSimulated, kRebuild, kSkipped };
  static void reset(Slot& s, std::uint64_t cta, double now);  // a new CTA in the slot
  CtaRole role_of(std::uint64_t cta);
  template <class Emit>  // whether the CTA being checked (its emit) has the shape of reference r
  bool equal_cta(Emit& emit, const Reference& r);
  core::TensorTraffic skipped_smem_;
  std::uint64_t ops_simulated_ = 0, ops_skipped_ = 0;
  // CTA-cycles: skipped, all, and the summed standard errors of the skipped steps' times.
  double skipped_time_ = 0, total_time_ = 0, error_sum_ = 0;
};

}  // namespace attnsim::engine

#include "sim/engine/sampler_hooks.h"  // the templates declared above
