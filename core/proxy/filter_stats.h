// Per-filter metric handles (stats::FilterStats: calls, local replies, errors, time) for the
// filters of a worker's chain, resolved once per chain on each worker thread and shared by its
// requests (resolving a series takes the registry's lock; a request only looks its chain up in a
// thread-local map). Labels: the chain's listener name and each entry's filter name.
#pragma once

#include <memory>
#include <vector>

#include "core/proxy/runtime.h"
#include "core/stats/families.h"

namespace sluice::proxy {

using FilterStatsList = std::vector<stats::FilterStats>;

// Worker thread. One entry per filter of `chain`, in chain order.
std::shared_ptr<const FilterStatsList> filterStatsFor(
    const std::shared_ptr<WorkerFilterChain>& chain);

}  // namespace sluice::proxy
