#include "tools/echo_backend/connection.h"

#include <event2/buffer.h>
#include <strings.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace sluice::echo {
namespace {

constexpr size_t kChunkBytes = 16384;
constexpr size_t kOutputHighWater = 256 * 1024;
constexpr size_t kOutputLowWater = 64 * 1024;

// 'a'..'z' repeated: byte i of a /bytes/N body is 'a' + i % 26. Long enough to reference one
// chunk starting at any offset modulo 26 without copying.
const char* pattern() {
  static const std::string text = [] {
    std::string s(kChunkBytes + 26, 'a');
    for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>('a' + i % 26);
    return s;
  }();
  return text.data();
}

}  // namespace

const llhttp_settings_t* Connection::parserSettings() {
  static const llhttp_settings_t settings = [] {
    llhttp_settings_t s;
    llhttp_settings_init(&s);
    s.on_message_begin = [](llhttp_t* p) {
      auto* self = static_cast<Connection*>(p->data);
      self->request_ = Request();
      self->field_open_ = false;
      return 0;
    };
    s.on_url = [](llhttp_t* p, const char* at, size_t len) {
      static_cast<Connection*>(p->data)->request_.url.append(at, len);
      return 0;
    };
    s.on_header_field = [](llhttp_t* p, const char* at, size_t len) {
      auto* self = static_cast<Connection*>(p->data);
      if (!self->field_open_) self->request_.headers.emplace_back();
      self->field_open_ = true;
      self->request_.headers.back().first.append(at, len);
      return 0;
    };
    s.on_header_field_complete = [](llhttp_t* p) {
      static_cast<Connection*>(p->data)->field_open_ = false;
      return 0;
    };
    s.on_header_value = [](llhttp_t* p, const char* at, size_t len) {
      static_cast<Connection*>(p->data)->request_.headers.back().second.append(at, len);
      return 0;
    };
    s.on_header_value_complete = [](llhttp_t* p) {
      std::string& value = static_cast<Connection*>(p->data)->request_.headers.back().second;
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
      return 0;
    };
    s.on_headers_complete = [](llhttp_t* p) {
      auto* self = static_cast<Connection*>(p->data);
      Request& request = self->request_;
      request.method = llhttp_method_name(static_cast<llhttp_method_t>(p->method));
      request.http_major = p->http_major;
      request.http_minor = p->http_minor;
      std::string expect = headerValue(request, "Expect");
      if (p->http_major == 1 && p->http_minor == 1 &&
          strcasecmp(expect.c_str(), "100-continue") == 0) {
        bufferevent_write(self->bev_.get(), "HTTP/1.1 100 Continue\r\n\r\n", 25);
      }
      return 0;
    };
    s.on_body = [](llhttp_t* p, const char* at, size_t len) {
      Request& request = static_cast<Connection*>(p->data)->request_;
      request.body_length += len;
      request.body_fnv1a = fnv1a(request.body_fnv1a, std::string_view(at, len));
      return 0;
    };
    s.on_message_complete = [](llhttp_t* p) {
      static_cast<Connection*>(p->data)->request_.keep_alive =
          llhttp_should_keep_alive(p) && !p->upgrade;
      return static_cast<int>(HPE_PAUSED);  // answer this one before parsing the next
    };
    return s;
  }();
  return &settings;
}

Connection::Connection(event_base* base, evutil_socket_t fd, std::string client,
                       const std::string& backend, std::function<void(Connection*)> on_dead)
    : base_(base),
      bev_(bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE)),
      client_(std::move(client)),
      backend_(backend),
      on_dead_(std::move(on_dead)) {
  llhttp_init(&parser_, HTTP_REQUEST, parserSettings());
  parser_.data = this;
  bufferevent_setcb(bev_.get(), readCb, writeCb, eventCb, this);
  bufferevent_enable(bev_.get(), EV_READ | EV_WRITE);
}

Connection::~Connection() = default;

void Connection::readCb(bufferevent*, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  self->parseInput();
  self->reapIfDead();
}

void Connection::writeCb(bufferevent* bev, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  if (self->streaming_) {
    self->fillBytes();
    if (!self->busy_) self->parseInput();
  } else if (self->closing_ && evbuffer_get_length(bufferevent_get_output(bev)) == 0) {
    self->dead_ = true;
  }
  self->reapIfDead();
}

void Connection::eventCb(bufferevent*, short what, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  if (what & BEV_EVENT_ERROR) {
    self->dead_ = true;
  } else if (what & BEV_EVENT_EOF) {
    // The client is done sending; finish what is queued (nothing new can arrive).
    if (self->busy_) {
      self->request_.keep_alive = false;
    } else {
      self->closeAfterFlush();
    }
  }
  self->reapIfDead();
}

void Connection::timerCb(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  self->sendEcho(200);
  self->parseInput();
  self->reapIfDead();
}

void Connection::parseInput() {
  evbuffer* in = bufferevent_get_input(bev_.get());
  while (!busy_ && !closing_ && !dead_ && evbuffer_get_length(in) > 0) {
    evbuffer_iovec vec;
    if (evbuffer_peek(in, -1, nullptr, &vec, 1) < 1) break;
    const char* data = static_cast<const char*>(vec.iov_base);
    llhttp_errno_t err = llhttp_execute(&parser_, data, vec.iov_len);
    if (err == HPE_PAUSED) {
      evbuffer_drain(in, static_cast<size_t>(llhttp_get_error_pos(&parser_) - data));
      llhttp_resume(&parser_);
      respond();
      continue;
    }
    evbuffer_drain(in, vec.iov_len);
    if (err != HPE_OK) {
      sendError(400, llhttp_get_error_reason(&parser_));
      return;
    }
  }
}

void Connection::respond() {
  Action action = parseAction(request_);
  switch (action.kind) {
    case Action::Kind::kDrop:
      dead_ = true;
      return;
    case Action::Kind::kBadPath:
      sendError(400, "bad number in special path");
      return;
    case Action::Kind::kDelay: {
      busy_ = true;
      bufferevent_disable(bev_.get(), EV_READ);
      timer_.reset(evtimer_new(base_, timerCb, this));
      timeval tv = {static_cast<time_t>(action.number / 1000),
                    static_cast<suseconds_t>(action.number % 1000 * 1000)};
      evtimer_add(timer_.get(), &tv);
      return;
    }
    case Action::Kind::kBytes:
      startBytes(action.number, action.content_length);
      return;
    case Action::Kind::kEcho:
      sendEcho(action.status);
      return;
  }
}

void Connection::sendEcho(int status) {
  bool no_body = status == 204 || status == 304;
  std::string body = no_body ? "" : echoBody(request_, backend_, client_);
  std::string framing = no_body ? "" : "Content-Length: " + std::to_string(body.size());
  std::string out = responseHead(status, backend_, no_body ? "" : "application/json", framing,
                                 request_, !request_.keep_alive);
  if (request_.method != "HEAD") out += body;
  bufferevent_write(bev_.get(), out.data(), out.size());
  finishResponse();
}

void Connection::sendError(int status, const std::string& reason) {
  std::string body = "{\"error\": \"" + reason + "\"}\n";
  request_.http_major = 1;
  request_.http_minor = 1;
  std::string out = responseHead(status, backend_, "application/json",
                                 "Content-Length: " + std::to_string(body.size()), request_, true);
  out += body;
  bufferevent_write(bev_.get(), out.data(), out.size());
  closeAfterFlush();
}

void Connection::startBytes(uint64_t count, bool content_length) {
  bool http10 = request_.http_major == 1 && request_.http_minor == 0;
  chunked_ = !content_length && !http10;
  std::string framing =
      chunked_ ? "Transfer-Encoding: chunked" : "Content-Length: " + std::to_string(count);
  std::string head = responseHead(200, backend_, "application/octet-stream", framing, request_,
                                  !request_.keep_alive);
  bufferevent_write(bev_.get(), head.data(), head.size());
  if (request_.method == "HEAD") {
    finishResponse();
    return;
  }
  busy_ = true;
  streaming_ = true;
  bytes_left_ = count;
  bytes_sent_ = 0;
  bufferevent_disable(bev_.get(), EV_READ);
  bufferevent_setwatermark(bev_.get(), EV_WRITE, kOutputLowWater, 0);
  fillBytes();
}

void Connection::fillBytes() {
  evbuffer* out = bufferevent_get_output(bev_.get());
  while (bytes_left_ > 0 && evbuffer_get_length(out) < kOutputHighWater) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(bytes_left_, kChunkBytes));
    if (chunked_) evbuffer_add_printf(out, "%zx\r\n", n);
    evbuffer_add_reference(out, pattern() + bytes_sent_ % 26, n, nullptr, nullptr);
    if (chunked_) evbuffer_add(out, "\r\n", 2);
    bytes_left_ -= n;
    bytes_sent_ += n;
  }
  if (bytes_left_ > 0) return;
  if (chunked_) evbuffer_add(out, "0\r\n\r\n", 5);
  streaming_ = false;
  bufferevent_setwatermark(bev_.get(), EV_WRITE, 0, 0);
  finishResponse();
}

void Connection::finishResponse() {
  busy_ = false;
  timer_.reset();
  if (!request_.keep_alive) {
    closeAfterFlush();
  } else {
    bufferevent_enable(bev_.get(), EV_READ);
  }
}

void Connection::closeAfterFlush() {
  closing_ = true;
  bufferevent_disable(bev_.get(), EV_READ);
  bufferevent_setwatermark(bev_.get(), EV_WRITE, 0, 0);
  if (evbuffer_get_length(bufferevent_get_output(bev_.get())) == 0) dead_ = true;
}

void Connection::reapIfDead() {
  if (dead_) on_dead_(this);  // destroys this
}

}  // namespace sluice::echo
