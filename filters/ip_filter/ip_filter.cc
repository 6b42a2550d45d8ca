#include "filters/ip_filter/ip_filter.h"

#include <vector>

namespace sluice::filters {
namespace {

constexpr std::string_view kForbidden = "{\"status\":403,\"error\":\"Forbidden\"}\n";

ip::CidrSet readList(const sdk::ConfigNode& node) {
  ip::CidrSet set;
  if (node.isNull()) return set;
  if (!node.isSequence() && !node.isScalar()) node.fail("expected a list of CIDRs");
  size_t n = node.isScalar() ? 1 : node.size();
  for (size_t i = 0; i < n; ++i) {
    sdk::ConfigNode item = node.isScalar() ? node : node.at(i);
    std::string text = item.asString();
    std::string why;
    std::optional<ip::Cidr> cidr = ip::parseCidr(text, &why);
    if (!cidr) item.fail(why);
    set.add(*cidr);
  }
  return set;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

IpFilterConfig::IpFilterConfig(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"allow", "deny", "trusted_xff_depth", "on_invalid_xff"});
  allow = readList(node["allow"]);
  deny = readList(node["deny"]);
  trusted_xff_depth = static_cast<uint32_t>(node.getInt("trusted_xff_depth", 0, 0, 16));
  std::string mode = node.getString("on_invalid_xff", "deny");
  if (mode == "deny") {
    on_invalid_xff = OnInvalidXff::kDeny;
  } else if (mode == "peer") {
    on_invalid_xff = OnInvalidXff::kPeer;
  } else {
    node["on_invalid_xff"].fail("expected deny or peer");
  }
}

std::optional<ip::Address> clientFromForwardedFor(const std::vector<std::string_view>& fields,
                                                  const ip::Address& peer, uint32_t depth) {
  std::vector<std::string_view> entries;
  for (std::string_view field : fields) {
    size_t pos = 0;
    while (pos <= field.size()) {
      size_t comma = field.find(',', pos);
      if (comma == std::string_view::npos) comma = field.size();
      std::string_view el = trim(field.substr(pos, comma - pos));
      if (!el.empty()) entries.push_back(el);  // empty list elements are allowed (RFC 9110 §5.6.1)
      pos = comma + 1;
    }
  }
  if (entries.size() < static_cast<size_t>(depth) + 1) return std::nullopt;
  std::optional<ip::Address> last = ip::parseHostPort(entries.back());
  if (!last || *last != peer) return std::nullopt;
  std::optional<ip::Address> client;
  for (size_t k = 1; k <= depth; ++k) {
    client = ip::parseHostPort(entries[entries.size() - 1 - k]);
    if (!client) return std::nullopt;
  }
  return depth == 0 ? last : client;
}

std::optional<ip::Address> IpFilterConfig::clientAddress(const sdk::Stream& stream) const {
  std::optional<ip::Address> peer = ip::parseHostPort(stream.clientAddress());
  if (!peer || trusted_xff_depth == 0) return peer;
  std::vector<std::string_view> fields;
  for (size_t i = 0;; ++i) {
    std::optional<std::string_view> v =
        stream.header(sdk::HeaderMap::kRequest, "x-forwarded-for", i);
    if (!v) break;
    fields.push_back(*v);
  }
  std::optional<ip::Address> client = clientFromForwardedFor(fields, *peer, trusted_xff_depth);
  if (client) return client;
  if (on_invalid_xff == OnInvalidXff::kPeer) return peer;
  return std::nullopt;
}

bool IpFilterConfig::admits(const ip::Address& a) const {
  if (deny.contains(a)) return false;
  return allow.empty() || allow.contains(a);
}

sdk::FilterStatus IpFilter::onRequestHeaders(sdk::Stream& stream, bool /*end_stream*/) {
  std::optional<ip::Address> client = config_.clientAddress(stream);
  if (client && config_.admits(*client)) return sdk::FilterStatus::kContinue;
  stream.sendLocalReply(403, kForbidden, "application/json");
  return sdk::FilterStatus::kStop;
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN("ip_filter", "1.0.0", sluice::filters::IpFilterConfig,
                     sluice::filters::IpFilter)
