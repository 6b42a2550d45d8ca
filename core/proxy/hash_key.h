// The consistent-hash key of a request, from the cluster's `hash_key` policy.
#pragma once

#include <string>

#include "core/config/config.h"
#include "core/http/parser.h"

namespace sluice::proxy {

// Header value, cookie value, query parameter value, client IP or path (without query), per
// `policy`; empty when the policy is none or the request lacks that part.
std::string hashKey(const config::HashKey& policy, const http::MessageHead& request,
                    const std::string& client_ip);

}  // namespace sluice::proxy
