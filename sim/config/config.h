// The config layer's public API in one include: --set overrides, device presets, workloads.
// Sweeps (sweep_*.h) are separate.
#pragma once

#include "sim/config/device_loader.h"
#include "sim/config/overrides.h"
#include "sim/config/workload_loader.h"
