#include "filters/request_id/request_id.h"

#include <array>

namespace sluice::filters {

RequestIdConfig::RequestIdConfig(const sdk::ConfigNode& node) {
  node.requireOnlyKeys({"header", "echo_in_response", "trust_incoming"});
  header = node.getString("header", header);
  if (!sdk::isHeaderName(header)) node["header"].fail("'" + header + "' is not a header name");
  echo_in_response = node.getBool("echo_in_response", echo_in_response);
  trust_incoming = node.getBool("trust_incoming", trust_incoming);
}

bool isValidRequestId(std::string_view id) {
  if (id.empty() || id.size() > 200) return false;
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

void formatUuidV4(uint64_t high, uint64_t low, char* out) {
  high = (high & ~0xf000ull) | 0x4000ull;          // version 4 (bits 48..51)
  low = (low & ~(0x3ull << 62)) | (0x2ull << 62);  // variant 10xx
  static constexpr char kHex[] = "0123456789abcdef";
  size_t n = 0;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out[n++] = '-';
    uint64_t word = i < 16 ? high : low;
    out[n++] = kHex[(word >> (60 - 4 * (i % 16))) & 0xf];
  }
}

std::string formatUuidV4(uint64_t high, uint64_t low) {
  std::string out(kUuidLength, '\0');
  formatUuidV4(high, low, out.data());
  return out;
}

RequestIdWorker::RequestIdWorker(const RequestIdConfig& config, uint32_t worker_index) {
  std::random_device device;
  std::array<uint32_t, 8> seed{};
  for (uint32_t& s : seed) s = device();
  std::seed_seq sequence(seed.begin(), seed.end());
  rng_.seed(sequence);
}

sdk::FilterStatus RequestIdFilter::onRequestHeaders(sdk::Stream& stream, bool end_stream) {
  if (config_.trust_incoming) {
    auto incoming = stream.header(sdk::HeaderMap::kRequest, config_.header);
    bool single = !stream.header(sdk::HeaderMap::kRequest, config_.header, 1).has_value();
    if (incoming && single && isValidRequestId(*incoming)) {
      incoming_.assign(incoming->data(), incoming->size());
      id_ = incoming_;
      return sdk::FilterStatus::kContinue;
    }
  }
  worker_.newId(uuid_);
  id_ = std::string_view(uuid_, kUuidLength);
  stream.setHeader(sdk::HeaderMap::kRequest, config_.header, id_);
  return sdk::FilterStatus::kContinue;
}

sdk::FilterStatus RequestIdFilter::onResponseHeaders(sdk::Stream& stream, bool end_stream) {
  // Empty when an earlier filter answered before this one saw the request.
  if (config_.echo_in_response && !id_.empty()) {
    stream.setHeader(sdk::HeaderMap::kResponse, config_.header, id_);
  }
  return sdk::FilterStatus::kContinue;
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN_WITH_WORKER("request_id", "1.0.0", sluice::filters::RequestIdConfig,
                                 sluice::filters::RequestIdWorker, sluice::filters::RequestIdFilter)
