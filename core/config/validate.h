// Internal: checks that span several parts of the document (uniqueness, references between
// routes and clusters, required sections). Runs after parseDocument.
#pragma once

#include "core/config/config.h"
#include "core/config/parse.h"
#include "core/config/reader.h"

namespace sluice::config::internal {

// Records in ctx: no listener; duplicate listener names or addresses; a listener address that
// overlaps the admin address (same port, same host or a wildcard); duplicate cluster names;
// duplicate route prefixes; a route naming a cluster that is not in `clusters` when no discovery
// entry could create it. `spans` must come from the parseDocument that built `config`.
void validate(const Config& config, const Spans& spans, Context& ctx);

}  // namespace sluice::config::internal
