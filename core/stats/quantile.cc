#include "core/stats/quantile.h"

#include <algorithm>

namespace sluice::stats {

std::optional<double> quantile(const HistogramSnapshot& h, double q) {
  const uint64_t total = h.count();
  if (total == 0 || h.counts.size() != h.bounds.size() + 1) return std::nullopt;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(total);
  uint64_t below = 0;  // observations in the buckets before bucket i
  for (size_t i = 0; i < h.counts.size(); ++i) {
    const uint64_t in = h.counts[i];
    if (in > 0 && static_cast<double>(below + in) >= rank) {
      if (i == h.bounds.size()) return h.bounds.empty() ? 0.0 : h.bounds.back();
      const double lower = i == 0 ? 0.0 : h.bounds[i - 1];
      const double upper = h.bounds[i];
      const double within = (rank - static_cast<double>(below)) / static_cast<double>(in);
      return lower + (upper - lower) * std::clamp(within, 0.0, 1.0);
    }
    below += in;
  }
  return h.bounds.empty() ? 0.0 : h.bounds.back();  // not reached: rank <= total
}

}  // namespace sluice::stats
