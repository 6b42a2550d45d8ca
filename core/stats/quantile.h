// Quantiles estimated from a fixed-bucket histogram, the way Prometheus' histogram_quantile()
// does: find the bucket holding the rank q·count and interpolate linearly inside it (the first
// bucket starts at 0). Used by the admin's JSON summary; the dashboard's app.js applies the same
// rule to the difference of two summaries to chart recent percentiles.
#pragma once

#include <optional>

#include "core/stats/registry.h"

namespace sluice::stats {

// The q-quantile (0 <= q <= 1) of `h`, in the family's unit. nullopt when `h` holds no
// observation. A rank that falls in the +Inf bucket answers the largest finite bound (the
// histogram cannot say more), as Prometheus does.
std::optional<double> quantile(const HistogramSnapshot& h, double q);

}  // namespace sluice::stats
