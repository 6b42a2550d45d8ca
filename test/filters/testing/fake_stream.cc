#include "test/filters/testing/fake_stream.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <mutex>
#include <string_view>

#include "test/filters/testing/filter_harness.h"

namespace sluice::testing {
namespace {

std::string_view view(sluice_str s) { return s.data ? std::string_view(s.data, s.len) : ""; }
sluice_str str(const std::string& s) { return {s.data(), s.size()}; }

bool same(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool validField(std::string_view name, std::string_view value) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

size_t removeAll(Headers& h, std::string_view name) {
  size_t before = h.size();
  h.erase(std::remove_if(h.begin(), h.end(), [&](const auto& f) { return same(f.first, name); }),
          h.end());
  return before - h.size();
}

// The by-string header calls; the ABI 1.4 calls by handle forward to them.
sluice_str headerGet(const sluice_stream* s, sluice_header_map m, sluice_str name, size_t index) {
  for (const auto& [n, v] : FakeStream::of(s).headers(m)) {
    if (same(n, view(name)) && index-- == 0) return str(v);
  }
  return sluice_str{nullptr, 0};
}

int headerSet(sluice_stream* s, sluice_header_map m, sluice_str name, sluice_str value) {
  if (!validField(view(name), view(value))) return -1;
  Headers& h = FakeStream::of(s).headers(m);
  auto first = std::find_if(h.begin(), h.end(), [&](auto& f) { return same(f.first, view(name)); });
  if (first == h.end()) {
    h.emplace_back(std::string(view(name)), std::string(view(value)));
    return 0;
  }
  size_t at = first - h.begin();
  removeAll(h, view(name));
  h.emplace(h.begin() + at, std::string(view(name)), std::string(view(value)));
  return 0;
}

int headerAdd(sluice_stream* s, sluice_header_map m, sluice_str name, sluice_str value) {
  if (!validField(view(name), view(value))) return -1;
  FakeStream::of(s).headers(m).emplace_back(std::string(view(name)), std::string(view(value)));
  return 0;
}

size_t headerRemove(sluice_stream* s, sluice_header_map m, sluice_str name) {
  return removeAll(FakeStream::of(s).headers(m), view(name));
}

// ABI 1.4 handles: the interned bytes, never freed (as the host's). The handle is opaque to
// the filter; this fake's is a pointer to its InternedName.
struct InternedName {
  std::string bytes;
};

const sluice_header_name* internName(sluice_str name) {
  static std::mutex mu;
  static std::deque<InternedName> names;  // stable addresses
  std::string_view n = view(name);
  if (n.empty() || n.size() > 256 || !validField(n, "")) return nullptr;
  std::lock_guard<std::mutex> lock(mu);
  auto it = std::find_if(names.begin(), names.end(), [&](const auto& e) { return e.bytes == n; });
  const InternedName* e =
      it != names.end() ? &*it : &names.emplace_back(InternedName{std::string(n)});
  return reinterpret_cast<const sluice_header_name*>(e);
}

// The handle's name, counting the call on the stream; {NULL, 0} for a NULL handle.
sluice_str named(const sluice_stream* s, const sluice_header_name* name) {
  ++FakeStream::of(s).named_header_calls;
  if (name == nullptr) return sluice_str{nullptr, 0};
  return str(reinterpret_cast<const InternedName*>(name)->bytes);
}

const sluice_filter_host_api kApi = {
    sizeof(sluice_filter_host_api),
    [](const sluice_stream* s) { return str(FakeStream::of(s).method); },
    [](const sluice_stream* s) { return str(FakeStream::of(s).path); },
    [](const sluice_stream* s) { return str(FakeStream::of(s).client_address); },
    [](const sluice_stream* s) { return FakeStream::of(s).response_status; },
    headerGet,
    [](const sluice_stream* s, sluice_header_map m) { return FakeStream::of(s).headers(m).size(); },
    [](const sluice_stream* s, sluice_header_map m, size_t i, sluice_str* name, sluice_str* value) {
      const Headers& h = FakeStream::of(s).headers(m);
      if (i >= h.size()) return -1;
      *name = str(h[i].first);
      *value = str(h[i].second);
      return 0;
    },
    headerSet,
    headerAdd,
    headerRemove,
    [](sluice_stream* s, uint32_t status, sluice_str content_type, sluice_str body) {
      FakeStream::of(s).local_reply =
          LocalReply{status, std::string(view(content_type)), std::string(view(body))};
    },
    [](sluice_stream* s) { ++FakeStream::of(s).resumed; },
    [](const sluice_stream* s) { return FakeStream::of(s).worker_index; },
    // ABI 1.2.
    [](sluice_stream* s, uint64_t delay_ms, sluice_timer_fn fn, void* arg) -> uint64_t {
      FakeStream& f = FakeStream::of(s);
      uint64_t id = f.next_timer_id++;
      f.timers.push_back(FakeTimer{id, delay_ms, fn, arg});
      return id;
    },
    [](sluice_stream* s, uint64_t id) -> int {
      auto& t = FakeStream::of(s).timers;
      auto it = std::find_if(t.begin(), t.end(), [&](const FakeTimer& x) { return x.id == id; });
      if (it == t.end()) return 0;
      t.erase(it);
      return 1;
    },
    [](const sluice_stream* s) -> sluice_stream_ref { return FakeStream::of(s).ref; },
    [](sluice_stream_ref ref, sluice_post_fn fn, void* arg) -> int {
      return FilterHarness::post(ref, fn, arg);
    },
    [](sluice_stream* s, sluice_str key, sluice_str value) -> int {
      std::string_view k = view(key);
      if (k.empty() || k.size() > 64 || value.len > 4096) return -1;
      for (char c : k) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
          return -1;
        }
      }
      auto& ctx = FakeStream::of(s).context;
      if (ctx.size() >= 64 && ctx.count(std::string(k)) == 0) return -1;
      ctx[std::string(k)] = std::string(view(value));
      return 0;
    },
    [](const sluice_stream* s, sluice_str key) -> sluice_str {
      const auto& ctx = FakeStream::of(s).context;
      auto it = ctx.find(std::string(view(key)));
      return it == ctx.end() ? sluice_str{nullptr, 0} : str(it->second);
    },
    [](const sluice_stream* s, sluice_attribute a) -> sluice_str {
      const auto& attrs = FakeStream::of(s).attributes;
      auto it = attrs.find(a);
      return it == attrs.end() ? sluice_str{nullptr, 0} : str(it->second);
    },
    [](const sluice_stream* s, sluice_clock clock) -> uint64_t {
      const FakeStream& f = FakeStream::of(s);
      return clock == SLUICE_CLOCK_REALTIME ? f.start_time_unix_us : f.start_time_us;
    },
    [](sluice_stream* s, sluice_body_dir dir, uint64_t max_bytes, uint32_t status) -> int {
      FakeStream& f = FakeStream::of(s);
      if (dir > SLUICE_BODY_RESPONSE || f.in_body_hook) return -1;
      f.buffer_request[dir] = BufferRequest{max_bytes, status};
      return 0;
    },
    [](sluice_stream* s, sluice_body_dir dir, sluice_str data) -> int {
      FakeStream& f = FakeStream::of(s);
      if (dir > SLUICE_BODY_RESPONSE || !f.in_body_hook || !f.buffer_request[dir]) return -1;
      f.replaced_body[dir] = std::string(view(data));
      return 0;
    },
    [](sluice_stream* s, uint32_t status, sluice_str content_type, sluice_str body,
       const sluice_header_field* headers, size_t count) {
      LocalReply reply{status, std::string(view(content_type)), std::string(view(body)), {}};
      for (size_t i = 0; i < count; ++i) {
        if (validField(view(headers[i].name), view(headers[i].value))) {
          reply.headers.emplace_back(std::string(view(headers[i].name)),
                                     std::string(view(headers[i].value)));
        }
      }
      FakeStream::of(s).local_reply = std::move(reply);
    },
    [](sluice_stream* s, sluice_str path) -> int {
      std::string_view p = view(path);
      if (p.empty() || p[0] != '/' || p.size() > 8192) return -1;
      for (char c : p) {
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return -1;
      }
      FakeStream::of(s).attributes[SLUICE_ATTR_UPSTREAM_PATH] = std::string(p);
      return 0;
    },
    // ABI 1.4.
    internName,
    [](const sluice_stream* s, sluice_header_map m, const sluice_header_name* name, size_t index) {
      return headerGet(s, m, named(s, name), index);
    },
    [](sluice_stream* s, sluice_header_map m, const sluice_header_name* name, sluice_str value) {
      sluice_str n = named(s, name);
      return n.data == nullptr ? -1 : headerSet(s, m, n, value);
    },
    [](sluice_stream* s, sluice_header_map m, const sluice_header_name* name, sluice_str value) {
      sluice_str n = named(s, name);
      return n.data == nullptr ? -1 : headerAdd(s, m, n, value);
    },
    [](sluice_stream* s, sluice_header_map m, const sluice_header_name* name) -> size_t {
      sluice_str n = named(s, name);
      return n.data == nullptr ? 0 : headerRemove(s, m, n);
    },
};

}  // namespace

std::optional<std::string> FakeStream::replyHeader(const std::string& name) const {
  if (!local_reply) return std::nullopt;
  for (const auto& [n, v] : local_reply->headers) {
    if (same(n, name)) return v;
  }
  return std::nullopt;
}

std::vector<std::string> FakeStream::values(sluice_header_map map, const std::string& name) const {
  std::vector<std::string> out;
  const Headers& h = map == SLUICE_HEADERS_REQUEST ? request_headers : response_headers;
  for (const auto& [n, v] : h) {
    if (same(n, name)) out.push_back(v);
  }
  return out;
}

const sluice_filter_host_api* FakeStream::api() { return &kApi; }

FakeStream::~FakeStream() {
  if (harness != nullptr) harness->finish(*this);
}

}  // namespace sluice::testing
