// The filter host API: C entry points that plugins call, backed by Stream.
#include "core/http/headers.h"
#include "core/proxy/stream.h"

namespace sluice::proxy {
namespace {

Stream* toStream(sluice_stream* s) { return reinterpret_cast<Stream*>(s); }
const Stream* toStream(const sluice_stream* s) { return reinterpret_cast<const Stream*>(s); }
std::string_view view(sluice_str s) {
  return s.data == nullptr ? std::string_view() : std::string_view(s.data, s.len);
}
sluice_str cstr(const std::string& s) { return sluice_str{s.data(), s.size()}; }
http::HeaderMap& mapOf(const sluice_stream* s, sluice_header_map m) {
  return const_cast<Stream*>(toStream(s))->headers(m);
}
bool validField(sluice_str name, sluice_str value) {
  return http::isToken(view(name)) && http::isFieldValue(view(value));
}

sluice_str method(const sluice_stream* s) { return cstr(toStream(s)->request().method); }
sluice_str path(const sluice_stream* s) { return cstr(toStream(s)->originalTarget()); }
sluice_str clientAddress(const sluice_stream* s) { return cstr(toStream(s)->clientAddress()); }
uint32_t responseStatus(const sluice_stream* s) { return toStream(s)->responseStatus(); }

sluice_str headerGet(const sluice_stream* s, sluice_header_map m, sluice_str name, size_t index) {
  const std::string* v = mapOf(s, m).get(view(name), index);
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
  if (!validField(name, value)) return -1;
  mapOf(s, m).set(view(name), view(value));
  return 0;
}

int headerAdd(sluice_stream* s, sluice_header_map m, sluice_str name, sluice_str value) {
  if (!validField(name, value)) return -1;
  mapOf(s, m).add(view(name), view(value));
  return 0;
}

size_t headerRemove(sluice_stream* s, sluice_header_map m, sluice_str name) {
  return mapOf(s, m).remove(view(name));
}

void sendLocalReply(sluice_stream* s, uint32_t status, sluice_str content_type, sluice_str body) {
  toStream(s)->filterLocalReply(status, view(content_type), view(body));
}

void resume(sluice_stream* s) { toStream(s)->filterResume(); }

uint32_t workerIndex(const sluice_stream* s) { return toStream(s)->workerIndex(); }

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
};

}  // namespace

const sluice_filter_host_api* filterHostApi() { return &kFilterHostApi; }

}  // namespace sluice::proxy
