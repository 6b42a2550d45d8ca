#include "core/upstream/host.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <cstring>

namespace sluice::upstream {
namespace {

sluice_str cstr(const std::string& s) { return sluice_str{s.data(), s.size()}; }

}  // namespace

Host::Host(const std::string& cluster, std::string address, const sockaddr* addr, socklen_t len)
    : address_(std::move(address)),
      addr_len_(len),
      stats_(cluster, address_),
      health_(cluster, address_) {
  memcpy(&addr_, addr, len);
}

HostSet::HostSet(uint64_t version, std::vector<HostEntry> entries, bool panic,
                 const std::vector<uint32_t>& effective_weights)
    : version_(version), panic_(panic), entries_(std::move(entries)) {
  size_t meta = 0;
  for (const auto& e : entries_) meta += e.metadata.size() * 2;
  c_metadata_.reserve(meta);
  c_entries_.reserve(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    const HostEntry& e = entries_[i];
    const sluice_str* first = c_metadata_.data() + c_metadata_.size();
    for (const auto& [k, v] : e.metadata) {
      c_metadata_.push_back(cstr(k));
      c_metadata_.push_back(cstr(v));
    }
    sluice_host_entry c{};
    c.address = cstr(e.host->address());
    c.weight = i < effective_weights.size() ? effective_weights[i] : e.weight;
    if (c.weight == 0) c.weight = 1;
    c.healthy = panic || e.host->healthy() ? 1 : 0;
    c.zone = cstr(e.zone);
    c.metadata = e.metadata.empty() ? nullptr : first;
    c.metadata_count = e.metadata.size();
    c_entries_.push_back(c);
  }
  c_set_.version = version_;
  c_set_.count = c_entries_.size();
  c_set_.hosts = c_entries_.data();
  c_set_.host_ctx = this;
}

bool resolveAddress(const std::string& address, sockaddr_storage* out, socklen_t* len,
                    std::string* error) {
  std::string host;
  std::string port;
  if (!address.empty() && address[0] == '[') {
    size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      *error = "bad address '" + address + "' (want [v6]:port)";
      return false;
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      *error = "bad address '" + address + "' (want host:port)";
      return false;
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    *error = "cannot resolve '" + address + "': " + gai_strerror(rc);
    return false;
  }
  memcpy(out, res->ai_addr, res->ai_addrlen);
  *len = static_cast<socklen_t>(res->ai_addrlen);
  freeaddrinfo(res);
  return true;
}

}  // namespace sluice::upstream
