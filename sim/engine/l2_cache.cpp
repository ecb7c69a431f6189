#include "sim/engine/l2_cache.h"

#include <algorithm>
#include <bit>

namespace attnsim::engine {

L2Cache::L2Cache(const core::L2Spec& spec, core::Bytes unit_bytes)
    : partitions_(std::max<std::uint32_t>(1, spec.partitions)), pow2_(std::has_single_bit(partitions_)) {
  const core::Bytes unit = unit_bytes ? unit_bytes : (spec.line_bytes ? spec.line_bytes : 128);
  const core::Bytes sector = spec.sector_bytes ? spec.sector_bytes : 32;
  const std::uint64_t units_per_part = spec.capacity_bytes / unit / partitions_;
  parts_.reserve(partitions_);
  for (std::uint32_t p = 0; p < partitions_; ++p)
    parts_.emplace_back(units_per_part, spec.associativity, static_cast<std::uint32_t>(unit / sector));
}

}  // namespace attnsim::engine
