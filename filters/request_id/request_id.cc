#include "filters/request_id/request_id.h"

#include <array>
#include <cstring>
#include <random>

namespace sluice::filters {

RequestIdConfig::RequestIdConfig(const sdk::ConfigNode& node, const sdk::Host& host) {
  node.requireOnlyKeys({"header", "echo_in_response", "trust_incoming"});
  header = node.getString("header", header);
  if (std::string problem = sdk::headerNameProblem(header); !problem.empty()) {
    node["header"].fail(problem);
  }
  header_name = sdk::HeaderName(host, header);
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

namespace {

// The two lowercase hex digits of every byte value: kHexPairs[2 * b], kHexPairs[2 * b + 1].
constexpr std::array<char, 512> makeHexPairs() {
  constexpr char kHex[] = "0123456789abcdef";
  std::array<char, 512> t{};
  for (int b = 0; b < 256; ++b) {
    t[2 * b] = kHex[b >> 4];
    t[2 * b + 1] = kHex[b & 0xf];
  }
  return t;
}
constexpr std::array<char, 512> kHexPairs = makeHexPairs();

// Writes the 8 bytes of `word`, most significant first, as 16 hex digits at the given output
// offsets (one per byte: the dashes sit between some of them).
void putWord(uint64_t word, char* out, const uint8_t (&at)[8]) {
#pragma GCC unroll 8  // -O2 leaves the loop rolled: 16 stores at constant offsets instead
  for (int i = 0; i < 8; ++i) {
    const unsigned byte = static_cast<unsigned>(word >> (56 - 8 * i)) & 0xff;
    std::memcpy(out + at[i], &kHexPairs[2 * byte], 2);
  }
}

}  // namespace

void formatUuidV4(uint64_t high, uint64_t low, char* out) {
  high = (high & ~0xf000ull) | 0x4000ull;          // version 4 (bits 48..51)
  low = (low & ~(0x3ull << 62)) | (0x2ull << 62);  // variant 10xx
  // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx: where each byte's two digits go.
  static constexpr uint8_t kHighAt[8] = {0, 2, 4, 6, 9, 11, 14, 16};
  static constexpr uint8_t kLowAt[8] = {19, 21, 24, 26, 28, 30, 32, 34};
  putWord(high, out, kHighAt);
  putWord(low, out, kLowAt);
  out[8] = out[13] = out[18] = out[23] = '-';
}

std::string formatUuidV4(uint64_t high, uint64_t low) {
  std::string out(kUuidLength, '\0');
  formatUuidV4(high, low, out.data());
  return out;
}

Xoshiro256::Xoshiro256(const uint64_t (&seed)[4]) {
  std::memcpy(s_, seed, sizeof(s_));
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) {  // the state it could never leave: a dense one
    s_[0] = 0x9e3779b97f4a7c15ull;
    s_[1] = 0xbf58476d1ce4e5b9ull;
    s_[2] = 0x94d049bb133111ebull;
    s_[3] = 0x2545f4914f6cdd1dull;
  }
}

namespace {

uint64_t randomWord(std::random_device& device) {
  return (static_cast<uint64_t>(device()) << 32) | device();
}

// 256 bits from std::random_device for one worker's generator.
Xoshiro256 seededGenerator() {
  std::random_device device;
  const uint64_t seed[4] = {randomWord(device), randomWord(device), randomWord(device),
                            randomWord(device)};
  return Xoshiro256(seed);
}

}  // namespace

RequestIdWorker::RequestIdWorker(const RequestIdConfig& config, uint32_t worker_index)
    : rng_(seededGenerator()) {}

sdk::FilterStatus RequestIdFilter::onRequestHeaders(sdk::Stream& stream, bool end_stream) {
  bool absent = false;  // known to be absent: the id is appended, no field to replace
  if (config_.trust_incoming) {
    auto incoming = stream.header(sdk::HeaderMap::kRequest, config_.header_name);
    if (!incoming) {
      absent = true;
    } else if (!stream.header(sdk::HeaderMap::kRequest, config_.header_name, 1).has_value() &&
               isValidRequestId(*incoming)) {
      incoming_.assign(incoming->data(), incoming->size());
      id_ = incoming_;
      return sdk::FilterStatus::kContinue;
    }
  }
  worker_.newId(uuid_);
  id_ = std::string_view(uuid_, kUuidLength);
  if (absent) {
    stream.addHeader(sdk::HeaderMap::kRequest, config_.header_name, id_);
  } else {
    stream.setHeader(sdk::HeaderMap::kRequest, config_.header_name, id_);  // replaces every copy
  }
  return sdk::FilterStatus::kContinue;
}

sdk::FilterStatus RequestIdFilter::onResponseHeaders(sdk::Stream& stream, bool end_stream) {
  // Empty when an earlier filter answered before this one saw the request.
  if (config_.echo_in_response && !id_.empty()) {
    stream.setHeader(sdk::HeaderMap::kResponse, config_.header_name, id_);
  }
  return sdk::FilterStatus::kContinue;
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN_WITH_WORKER("request_id", "1.0.0", sluice::filters::RequestIdConfig,
                                 sluice::filters::RequestIdWorker, sluice::filters::RequestIdFilter)
