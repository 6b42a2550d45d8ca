#include "tools/echo_backend/request.h"

#include <strings.h>

#include <cstdio>
#include <cstdlib>

namespace sluice::echo {
namespace {

// Parses a non-empty all-digit string; returns false on anything else or overflow.
bool parseNumber(std::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = value;
  return true;
}

void appendJsonString(std::string* out, std::string_view text) {
  out->push_back('"');
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out->append(buf);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

}  // namespace

uint32_t fnv1a(uint32_t hash, std::string_view data) {
  for (unsigned char c : data) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

Action parseAction(const Request& request) {
  std::string_view path = request.url;
  std::string_view query;
  if (size_t q = path.find('?'); q != std::string_view::npos) {
    query = path.substr(q + 1);
    path = path.substr(0, q);
  }
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t last_slash = path.rfind('/');
  std::string_view last = last_slash == std::string_view::npos ? path : path.substr(last_slash + 1);
  std::string_view parent;
  if (last_slash != std::string_view::npos && last_slash > 0) {
    std::string_view head = path.substr(0, last_slash);
    size_t slash = head.rfind('/');
    parent = slash == std::string_view::npos ? head : head.substr(slash + 1);
  }

  Action action;
  if (last == "drop") {
    action.kind = Action::Kind::kDrop;
    return action;
  }
  if (parent != "status" && parent != "delay" && parent != "bytes") return action;
  uint64_t number = 0;
  if (!parseNumber(last, &number)) {
    action.kind = Action::Kind::kBadPath;
    return action;
  }
  if (parent == "status") {
    if (number < 200 || number > 599) {
      action.kind = Action::Kind::kBadPath;
    } else {
      action.status = static_cast<int>(number);
    }
  } else if (parent == "delay") {
    action.kind = Action::Kind::kDelay;
    action.number = number;
  } else {
    action.kind = Action::Kind::kBytes;
    action.number = number;
    action.content_length = query.find("framing=length") != std::string_view::npos;
  }
  return action;
}

std::string echoBody(const Request& request, const std::string& backend,
                     const std::string& client) {
  std::string out = "{\n  \"backend\": ";
  appendJsonString(&out, backend);
  out += ",\n  \"method\": ";
  appendJsonString(&out, request.method);
  out += ",\n  \"path\": ";
  appendJsonString(&out, request.url);
  out += ",\n  \"version\": \"HTTP/" + std::to_string(request.http_major) + "." +
         std::to_string(request.http_minor) + "\",\n  \"client\": ";
  appendJsonString(&out, client);
  out += ",\n  \"headers\": [";
  for (size_t i = 0; i < request.headers.size(); ++i) {
    out += i == 0 ? "\n    " : ",\n    ";
    appendJsonString(&out, request.headers[i].first + ": " + request.headers[i].second);
  }
  out += request.headers.empty() ? "],\n" : "\n  ],\n";
  char tail[96];
  std::snprintf(tail, sizeof(tail), "  \"body_length\": %llu,\n  \"body_fnv1a\": \"%08x\"\n}\n",
                static_cast<unsigned long long>(request.body_length), request.body_fnv1a);
  out += tail;
  return out;
}

std::string responseHead(int status, const std::string& backend, const std::string& content_type,
                         const std::string& framing, const Request& request, bool close) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + reasonPhrase(status) + "\r\n";
  if (!content_type.empty()) out += "Content-Type: " + content_type + "\r\n";
  out += "X-Backend: " + backend + "\r\n";
  if (!framing.empty()) out += framing + "\r\n";
  if (close) {
    out += "Connection: close\r\n";
  } else if (request.http_major == 1 && request.http_minor == 0) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  return out;
}

const char* reasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Unknown";
  }
}

std::string headerValue(const Request& request, std::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return "";
}

}  // namespace sluice::echo
