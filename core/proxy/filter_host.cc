// The filter host API: C entry points that plugins call, backed by Stream.
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/http/headers.h"
#include "core/proxy/stream.h"
#include "core/proxy/stream_registry.h"

// The host's side of the opaque sluice_header_name (ABI 1.4): a name checked and resolved once.
// Never freed (handles are valid until the process exits).
struct sluice_header_name {
  sluice::http::HeaderId id = sluice::http::HeaderId::kOther;  // headerId(spelling)
  std::string bytes;                                           // the name as interned
  std::string_view spelling;  // what fields get: `bytes`, or the id's static spelling when equal
};

namespace sluice::proxy {
namespace {

Stream* toStream(sluice_stream* s) { return reinterpret_cast<Stream*>(s); }
const Stream* toStream(const sluice_stream* s) { return reinterpret_cast<const Stream*>(s); }
std::string_view view(sluice_str s) {
  return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
}
sluice_str cstr(std::string_view s) { return sluice_str{s.data(), s.size()}; }
http::HeaderMap& mapOf(const sluice_stream* s, sluice_header_map m) {
  return const_cast<Stream*>(toStream(s))->headers(m);
}
// A plugin's field name and value: valid syntax (RFC 9110 §5.1, §5.5)? `id` is headerId(name):
// an interned name matched one of the known tokens in some letter case, so it is a token
// without the byte-by-byte check.
bool validField(std::string_view name, http::HeaderId id, sluice_str value) {
  return (id != http::HeaderId::kOther || http::isToken(name)) && http::isFieldValue(view(value));
}

sluice_str method(const sluice_stream* s) { return cstr(toStream(s)->request().method); }
sluice_str path(const sluice_stream* s) { return cstr(toStream(s)->originalTarget()); }
sluice_str clientAddress(const sluice_stream* s) { return cstr(toStream(s)->clientAddress()); }
uint32_t responseStatus(const sluice_stream* s) { return toStream(s)->responseStatus(); }

sluice_str headerGet(const sluice_stream* s, sluice_header_map m, sluice_str name, size_t index) {
  const std::string_view* v = mapOf(s, m).get(view(name), index);
  return v == nullptr ? sluice_str{nullptr, 0} : cstr(*v);
}

size_t headerCount(const sluice_stream* s, sluice_header_map m) { return mapOf(s, m).size(); }

int headerAt(const sluice_stream* s, sluice_header_map m, size_t i, sluice_str* name,
             sluice_str* value) {
  const auto& fields = mapOf(s, m).fields();
  if (i >= fields.size()) return -1;
  *name = cstr(fields[i].name);
  *value = cstr(fields[i].value);
  return 0;
}

int headerSet(sluice_stream* s, sluice_header_map m, sluice_str name, sluice_str value) {
  const std::string_view n = view(name);
  const http::HeaderId id = http::headerId(n);
  if (!validField(n, id, value)) return -1;
  http::HeaderMap& map = mapOf(s, m);
  if (id != http::HeaderId::kOther && n == http::headerIdSpelling(id)) {
    map.set(id, view(value));  // the same field, without looking the name up again
  } else {
    map.set(n, view(value));
  }
  return 0;
}

int headerAdd(sluice_stream* s, sluice_header_map m, sluice_str name, sluice_str value) {
  const std::string_view n = view(name);
  if (!validField(n, http::headerId(n), value)) return -1;
  mapOf(s, m).add(n, view(value));
  return 0;
}

size_t headerRemove(sluice_stream* s, sluice_header_map m, sluice_str name) {
  return mapOf(s, m).remove(view(name));
}

void sendLocalReply(sluice_stream* s, uint32_t status, sluice_str content_type, sluice_str body) {
  toStream(s)->filterLocalReply(status, view(content_type), view(body), nullptr, 0);
}

void resume(sluice_stream* s) { toStream(s)->filters().resume(); }

uint32_t workerIndex(const sluice_stream* s) { return toStream(s)->workerIndex(); }

// ---- ABI 1.2

uint64_t timerArm(sluice_stream* s, uint64_t delay_ms, sluice_timer_fn fn, void* arg) {
  return toStream(s)->filters().armTimer(delay_ms, fn, arg);
}

int timerCancel(sluice_stream* s, uint64_t id) { return toStream(s)->filters().cancelTimer(id); }

sluice_stream_ref streamRef(const sluice_stream* s) {
  return const_cast<Stream*>(toStream(s))->ref();  // registers the stream on first use
}

int post(sluice_stream_ref ref, sluice_post_fn fn, void* arg) {
  return StreamRegistry::post(ref, fn, arg);
}

int contextSet(sluice_stream* s, sluice_str key, sluice_str value) {
  return toStream(s)->contextSet(view(key), view(value));
}

sluice_str contextGet(const sluice_stream* s, sluice_str key) {
  const std::string* v = toStream(s)->contextGet(view(key));
  return v == nullptr ? sluice_str{nullptr, 0} : cstr(*v);
}

sluice_str attribute(const sluice_stream* s, sluice_attribute attr) {
  std::string_view v = toStream(s)->attribute(attr);
  return v.data() == nullptr ? sluice_str{nullptr, 0} : sluice_str{v.data(), v.size()};
}

uint64_t startTimeUs(const sluice_stream* s, sluice_clock clock) {
  return toStream(s)->startTimeUs(clock);
}

FilterDir dirOf(sluice_body_dir d) {
  return d == SLUICE_BODY_RESPONSE ? FilterDir::kResponse : FilterDir::kRequest;
}

int bufferBody(sluice_stream* s, sluice_body_dir dir, uint64_t max_bytes,
               uint32_t over_limit_status) {
  if (dir != SLUICE_BODY_REQUEST && dir != SLUICE_BODY_RESPONSE) return -1;
  return toStream(s)->filters().bufferBody(dirOf(dir), max_bytes, over_limit_status);
}

int bodyReplace(sluice_stream* s, sluice_body_dir dir, sluice_str data) {
  if (dir != SLUICE_BODY_REQUEST && dir != SLUICE_BODY_RESPONSE) return -1;
  return toStream(s)->filters().bodyReplace(dirOf(dir), view(data));
}

void sendLocalReplyHeaders(sluice_stream* s, uint32_t status, sluice_str content_type,
                           sluice_str body, const sluice_header_field* headers,
                           size_t header_count) {
  toStream(s)->filterLocalReply(status, view(content_type), view(body), headers, header_count);
}

bool hexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// origin-form (RFC 9112 §3.2.1): absolute-path [ "?" query ], RFC 3986 characters only
// (pchar, '/', '?'; '%' followed by two hex digits), at most 8192 bytes.
bool originForm(std::string_view p) {
  if (p.empty() || p[0] != '/' || p.size() > 8192) return false;
  for (size_t i = 0; i < p.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(p[i]);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) continue;
    if (c == '%') {
      if (i + 2 >= p.size() || !hexDigit(p[i + 1]) || !hexDigit(p[i + 2])) return false;
      i += 2;
      continue;
    }
    static constexpr std::string_view kOther = "-._~!$&'()*+,;=:@/?";
    if (kOther.find(static_cast<char>(c)) == std::string_view::npos) return false;
  }
  return true;
}

int setUpstreamPath(sluice_stream* s, sluice_str path) {
  std::string_view p = view(path);
  if (!originForm(p)) return -1;
  return toStream(s)->setUpstreamPath(p) ? 0 : -1;
}

// ---- ABI 1.4

constexpr size_t kMaxHeaderNameBytes = 256;

const sluice_header_name* headerName(sluice_str name) {
  const std::string_view n = view(name);
  if (n.empty() || n.size() > kMaxHeaderNameBytes || !http::isToken(n)) return nullptr;
  // Process-wide and never destroyed: handles outlive every plugin, config and worker.
  static std::mutex* mu = new std::mutex;
  static auto* names = new std::unordered_map<std::string, std::unique_ptr<sluice_header_name>>;
  std::lock_guard<std::mutex> lock(*mu);
  auto [it, inserted] = names->try_emplace(std::string(n));
  if (inserted) {
    auto h = std::make_unique<sluice_header_name>();
    h->id = http::headerId(n);
    h->bytes = it->first;
    const std::string_view usual = http::headerIdSpelling(h->id);
    // The id's own spelling keeps a field's name static when a map is copied (copyFrom).
    h->spelling = h->id != http::HeaderId::kOther && usual == n ? usual : h->bytes;
    it->second = std::move(h);
  }
  return it->second.get();
}

sluice_str headerGetNamed(const sluice_stream* s, sluice_header_map m, const sluice_header_name* h,
                          size_t index) {
  if (h == nullptr) return sluice_str{nullptr, 0};
  const std::string_view* v = mapOf(s, m).getResolved(h->id, h->spelling, index);
  return v == nullptr ? sluice_str{nullptr, 0} : cstr(*v);
}

int headerSetNamed(sluice_stream* s, sluice_header_map m, const sluice_header_name* h,
                   sluice_str value) {
  if (h == nullptr || !http::isFieldValue(view(value))) return -1;
  mapOf(s, m).setResolved(h->id, h->spelling, view(value));
  return 0;
}

int headerAddNamed(sluice_stream* s, sluice_header_map m, const sluice_header_name* h,
                   sluice_str value) {
  if (h == nullptr || !http::isFieldValue(view(value))) return -1;
  mapOf(s, m).addResolved(h->id, h->spelling, view(value));
  return 0;
}

size_t headerRemoveNamed(sluice_stream* s, sluice_header_map m, const sluice_header_name* h) {
  return h == nullptr ? 0 : mapOf(s, m).removeResolved(h->id, h->spelling);
}

const sluice_filter_host_api kFilterHostApi = {
    sizeof(sluice_filter_host_api),
    &method,
    &path,
    &clientAddress,
    &responseStatus,
    &headerGet,
    &headerCount,
    &headerAt,
    &headerSet,
    &headerAdd,
    &headerRemove,
    &sendLocalReply,
    &resume,
    &workerIndex,
    &timerArm,
    &timerCancel,
    &streamRef,
    &post,
    &contextSet,
    &contextGet,
    &attribute,
    &startTimeUs,
    &bufferBody,
    &bodyReplace,
    &sendLocalReplyHeaders,
    &setUpstreamPath,
    &headerName,
    &headerGetNamed,
    &headerSetNamed,
    &headerAddNamed,
    &headerRemoveNamed,
};

}  // namespace

// Here rather than in stream_filters.cc: the one Stream member set_upstream_path needs.
bool Stream::setUpstreamPath(std::string_view path) {
  // Only while the request headers are still in the chain (a headers hook, or paused or
  // waiting for the body there): after that they may have gone upstream.
  if (fm_.decodeDelivered() || fm_.encoding() || fm_.ended()) return false;
  upstream_path_ = std::string(path);
  return true;
}

const sluice_filter_host_api* filterHostApi() { return &kFilterHostApi; }

}  // namespace sluice::proxy
