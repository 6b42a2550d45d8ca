#include "filters/api_key_auth/api_key_auth.h"

#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

namespace sluice::filters {
namespace {

constexpr size_t kMaxKeyBytes = 4096;
constexpr size_t kMaxConsumerBytes = 256;

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Why `consumer` cannot be a consumer name, or "".
std::string badConsumer(std::string_view consumer) {
  if (consumer.empty()) return "empty consumer name";
  if (consumer.size() > kMaxConsumerBytes) return "consumer name longer than 256 bytes";
  for (char c : consumer) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return "consumer name with whitespace or a control character";
  }
  return "";
}

std::string badKey(std::string_view key) {
  if (key.empty()) return "empty key";
  if (key.size() > kMaxKeyBytes) return "key longer than 4096 bytes";
  return "";
}

// Collects keys, refusing duplicates; remembers where each came from for the message.
class KeyCollector {
 public:
  explicit KeyCollector(ApiKeyAuthConfig& config) : config_(config) {}

  // "" when added, else why not (with where the first copy is).
  std::string add(std::string_view key, std::string_view consumer, std::string where) {
    auto [it, inserted] = origin_.emplace(std::string(key), where);
    if (!inserted) return "duplicate key (first at " + it->second + ")";
    config_.add(key, consumer);
    return "";
  }

 private:
  ApiKeyAuthConfig& config_;
  std::map<std::string, std::string> origin_;  // key → where it was first given (load only)
};

void readInlineKeys(const sdk::ConfigNode& list, KeyCollector& keys) {
  if (!list.isSequence()) list.fail("expected a list of {key, consumer}");
  for (size_t i = 0; i < list.size(); ++i) {
    sdk::ConfigNode entry = list.at(i);
    if (!entry.isMap()) entry.fail("expected a map {key, consumer}");
    entry.requireOnlyKeys({"key", "consumer"});
    if (!entry.has("key")) entry.fail("missing 'key'");
    if (!entry.has("consumer")) entry.fail("missing 'consumer'");
    sdk::ConfigNode key_node = entry["key"];
    std::string key = key_node.asString();
    if (std::string why = badKey(key); !why.empty()) key_node.fail(why);
    sdk::ConfigNode consumer_node = entry["consumer"];
    std::string consumer = consumer_node.asString();
    if (std::string why = badConsumer(consumer); !why.empty()) consumer_node.fail(why);
    std::string why = keys.add(key, consumer, "config line " + std::to_string(key_node.line()));
    if (!why.empty()) key_node.fail(why);
  }
}

void readKeysFile(const sdk::ConfigNode& node, KeyCollector& keys) {
  std::string path;
  std::string data = auth::readConfigFile(node, 16u << 20, &path);
  std::string_view rest = data;
  for (size_t line_no = 1; !rest.empty(); ++line_no) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    while (!line.empty() && isSpace(line.back())) line.remove_suffix(1);
    size_t start = 0;
    while (start < line.size() && isSpace(line[start])) ++start;
    line.remove_prefix(start);
    if (line.empty() || line[0] == '#') continue;
    auto failLine = [&](const std::string& why) {
      node.fail(path + ":" + std::to_string(line_no) + ": " + why);
    };
    size_t sep = 0;
    while (sep < line.size() && !isSpace(line[sep])) ++sep;
    std::string_view consumer = line.substr(0, sep);
    std::string_view key = line.substr(sep);
    while (!key.empty() && isSpace(key.front())) key.remove_prefix(1);
    if (key.empty()) failLine("expected '<consumer> <key>' (no key on this line)");
    if (std::string why = badConsumer(consumer); !why.empty()) failLine(why);
    if (std::string why = badKey(key); !why.empty()) failLine(why);
    std::string why = keys.add(key, consumer, path + ":" + std::to_string(line_no));
    if (!why.empty()) failLine(why);
  }
}

}  // namespace

ApiKeyAuthConfig::ApiKeyAuthConfig(const sdk::ConfigNode& node, const sdk::Host& host) {
  node.requireOnlyKeys({"header", "query_param", "strip_credential", "consumer_header",
                        "www_authenticate", "keys", "keys_file"});
  header = auth::headerNameKey(node, "header", header, true);
  query_param = node.getString("query_param", "");
  if (header.empty() && query_param.empty()) {
    node["header"].fail("no key source: set 'header' or 'query_param'");
  }
  strip_credential = node.getBool("strip_credential", strip_credential);
  consumer_header = auth::headerNameKey(node, "consumer_header", consumer_header, true);
  if (!consumer_header.empty() && auth::equalsIgnoreCase(consumer_header, header)) {
    node["consumer_header"].fail("consumer_header must differ from header");
  }
  www_authenticate = node.getString("www_authenticate", "");
  if (!sdk::isHeaderValue(www_authenticate)) {
    node["www_authenticate"].fail("not a valid header value");
  }
  if (!header.empty()) header_name = sdk::HeaderName(host, header);
  if (!consumer_header.empty()) consumer_header_name = sdk::HeaderName(host, consumer_header);
  std::tie(sip_k0_, sip_k1_) = auth::randomSipKey();
  KeyCollector collector(*this);
  if (node.has("keys")) readInlineKeys(node["keys"], collector);
  if (node.has("keys_file")) readKeysFile(node["keys_file"], collector);
  if (keys_.empty()) node.fail("no keys: set 'keys' or 'keys_file' (with at least one key)");
  counters = auth::DecisionCounters(host, {"missing api key", "invalid api key"});
}

bool ApiKeyAuthConfig::add(std::string_view key, std::string_view consumer) {
  std::vector<Entry>& bucket = keys_[auth::sipHash24(sip_k0_, sip_k1_, key)];
  for (const Entry& e : bucket) {
    if (e.key == key) return false;
  }
  bucket.push_back(Entry{std::string(key), std::string(consumer)});
  return true;
}

const std::string* ApiKeyAuthConfig::find(std::string_view key) const {
  auto it = keys_.find(auth::sipHash24(sip_k0_, sip_k1_, key));
  if (it == keys_.end()) return nullptr;
  // Reached only by a key whose secret-keyed hash is a real key's: confirm over the whole key
  // in constant time (no early exit at the first differing byte).
  for (const Entry& e : it->second) {
    if (e.key.size() == key.size() &&
        auth::constantTimeEqualBytes(e.key.data(), key.data(), key.size())) {
      return &e.consumer;
    }
  }
  return nullptr;
}

sdk::FilterStatus ApiKeyAuthFilter::onRequestHeaders(sdk::Stream& stream, bool end_stream) {
  // A view of the header's value (valid until the request headers change: every change below
  // comes after find()), or of the decoded query parameter kept in `query`: no copy of the key
  // per request.
  std::optional<std::string_view> key;
  std::string query;
  bool invalid = false;
  bool from_header = false;
  bool from_query = false;
  if (!config_.header.empty()) {
    auto value = stream.header(sdk::HeaderMap::kRequest, config_.header_name);
    if (value) {
      key = *value;
      from_header = true;
    }
  }
  if (!key && !config_.query_param.empty()) {
    auth::QueryValue q = auth::queryParam(stream.path(), config_.query_param);
    if (q.present) {
      query = std::move(q.value);
      key = query;
      invalid = q.malformed;
      from_query = true;
    }
  }
  const std::string* consumer = key && !invalid ? config_.find(*key) : nullptr;
  if (from_header) {
    // Two key fields: which one would the upstream believe? Refuse. With strip_credential on,
    // the removal that keeps the key from the upstream counts the fields (one pass over the
    // headers instead of a lookup of a second field and then the removal).
    const size_t fields = config_.strip_credential
                              ? stream.removeHeader(sdk::HeaderMap::kRequest, config_.header_name)
                          : stream.header(sdk::HeaderMap::kRequest, config_.header_name, 1) ? 2
                                                                                            : 1;
    invalid = fields > 1;
  }
  const char* reason = nullptr;
  if (!key) {
    reason = "missing api key";
  } else if (invalid || consumer == nullptr) {
    reason = "invalid api key";
  }
  // Whatever happens next, the upstream must not see a consumer name the client wrote: removed
  // here on the paths that do not name the consumer; setConsumer replaces it on the one that does.
  if (reason != nullptr) {
    removeConsumerHeader(stream);
    config_.counters.denied(reason);
    return auth::replyUnauthorized(stream, reason, config_.www_authenticate);
  }
  config_.counters.allowed();
  // The key must not reach the upstream (or its logs), in a header (removed above) or in the
  // request line. The host refuses the shortened target only when the client's had characters
  // outside RFC 3986: an error then (failure_mode decides), rather than forwarding the key.
  if (from_query && config_.strip_credential &&
      !auth::stripQueryCredential(stream, config_.query_param)) {
    removeConsumerHeader(stream);
    return sdk::FilterStatus::kError;
  }
  stream.setContext(auth::kContextConsumer, *consumer);
  stream.setContext(auth::kContextMethod, "api_key");
  // Replaces every copy the client sent (by the resolved name: no lookup of it per request).
  if (!config_.consumer_header_name.empty()) {
    stream.setHeader(sdk::HeaderMap::kRequest, config_.consumer_header_name, *consumer);
  }
  return sdk::FilterStatus::kContinue;
}

void ApiKeyAuthFilter::removeConsumerHeader(sdk::Stream& stream) const {
  if (!config_.consumer_header.empty()) {
    stream.removeHeader(sdk::HeaderMap::kRequest, config_.consumer_header_name);
  }
}

}  // namespace sluice::filters

SLUICE_FILTER_PLUGIN("api_key_auth", "1.0.0", sluice::filters::ApiKeyAuthConfig,
                     sluice::filters::ApiKeyAuthFilter)
