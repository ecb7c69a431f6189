// The resolved workload as an ordered list of (workload key, value), keys as in docs/cli.md.
// Used by the JSON, table and HDF5 writers; not a parser (sim/config reads YAML).
#pragma once

#include <string>

#include "sim/core/device_spec.h"
#include "sim/core/workload.h"
#include "sim/io/cell.h"

namespace attnsim::io {

Fields workload_fields(const core::Workload& w);
// Key numbers of a device (name, kind, clock, SMs, HBM, L2, shared memory).
Fields device_fields(const core::DeviceSpec& d);

}  // namespace attnsim::io
