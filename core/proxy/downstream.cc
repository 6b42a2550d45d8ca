#include "core/proxy/downstream.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <ctime>

#include "core/common/log.h"
#include "core/event/timeval.h"
#include "core/http/serialize.h"
#include "core/proxy/access_log.h"
#include "core/proxy/local_reply.h"
#include "core/proxy/stream.h"
#include "core/proxy/stream_internal.h"

namespace sluice::proxy {
namespace {

constexpr size_t kReadHighWatermark = 256 * 1024;  // stop reading while this much is unparsed
constexpr size_t kWriteLowWatermark = 64 * 1024;
constexpr uint32_t kLingerMs = 2000;          // lingering ends after this long without a byte
constexpr uint64_t kLingerTotalUs = 5000000;  // ... and this long in all (nginx: lingering_time),
                                              // so a client trickling bytes cannot keep the fd

void formatPeer(const sockaddr* sa, std::string* ip, std::string* full) {
  char buf[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
    port = ntohs(in->sin_port);
    *ip = buf;
    *full = *ip + ":" + std::to_string(port);
  } else if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
    port = ntohs(in6->sin6_port);
    *ip = buf;
    *full = "[" + *ip + "]:" + std::to_string(port);
  } else {
    *ip = "unknown";
    *full = "unknown";
  }
}

// What a parked TLS connection leaves with its socket (IdleParker's `kept`).
struct ParkedTls {
  std::unique_ptr<event::TransportIo> io;  // a tls::TlsIo: the established session
  std::unique_ptr<tls::ConnectionInfo> info;
};

}  // namespace

DownstreamConnection::DownstreamConnection(WorkerRuntime& runtime,
                                           std::shared_ptr<ListenerSlot> slot, evutil_socket_t fd,
                                           const sockaddr* peer, int)
    : runtime_(runtime),
      slot_(std::move(slot)),
      stats_(slot_->chain->info().stats),
      active_(std::make_unique<Active>(static_cast<http::ParserCallbacks*>(this),
                                       slot_->chain->info().parser_limits)) {
  formatPeer(peer, &client_ip_, &client_address_);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  makeTransport(fd);
  // Only ever activated: EV_PERSIST spares libevent an event_del per activation.
  event_assign(&active_->resume_event, runtime_.worker().base(), -1, EV_PERSIST,
               &DownstreamConnection::onResume, this);
  stats_->cx_total.inc();
  stats_->cx_active.inc();
}

DownstreamConnection::DownstreamConnection(WorkerRuntime& runtime, const IdleParker::Owner& parked,
                                           std::shared_ptr<void> kept, evutil_socket_t fd)
    : runtime_(runtime),
      slot_(parked.slot),
      stats_(parked.stats),
      active_(std::make_unique<Active>(static_cast<http::ParserCallbacks*>(this),
                                       slot_->chain->info().parser_limits)) {
  sockaddr_storage peer{};
  socklen_t len = sizeof(peer);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) peer.ss_family = AF_UNSPEC;
  formatPeer(reinterpret_cast<const sockaddr*>(&peer), &client_ip_, &client_address_);
  // Plain unless it was TLS (even if the listener has changed since).
  std::unique_ptr<event::TransportIo> io = std::make_unique<event::PlainIo>();
  if (kept != nullptr) {
    auto* tls = static_cast<ParkedTls*>(kept.get());
    tls_ = static_cast<tls::TlsIo*>(tls->io.get());
    io = std::move(tls->io);
    tls_info_ = std::move(tls->info);
  }
  makeTransport(fd, std::move(io));  // TCP_NODELAY is still set on the socket
  event_assign(&active_->resume_event, runtime_.worker().base(), -1, EV_PERSIST,
               &DownstreamConnection::onResume, this);
}

void DownstreamConnection::makeTransport(evutil_socket_t fd,
                                         std::unique_ptr<event::TransportIo> io) {
  event::Transport::Options options;
  options.read_high_watermark = kReadHighWatermark;
  options.write_low_watermark = kWriteLowWatermark;
  event::Transport::Handlers handlers;
  handlers.on_data = &DownstreamConnection::onRead;
  handlers.on_bytes = &DownstreamConnection::onBytes;
  handlers.on_drained = &DownstreamConnection::onDrained;
  handlers.on_event = &DownstreamConnection::onEvent;
  handlers.arg = this;
  const auto& tls = slot_->chain->info().tls;
  if (io == nullptr && tls != nullptr) {
    options.handshake_timeout_ms = tls->config().handshake_timeout_ms;
    if (SSL* ssl = tls->newSsl()) {
      auto tls_io = std::make_unique<tls::TlsIo>(ssl, tls);
      tls_ = tls_io.get();
      io = std::move(tls_io);
    }
  }
  if (io == nullptr) io = std::make_unique<event::PlainIo>();
  transport_ = std::make_unique<event::Transport>(runtime_.worker().base(), fd, std::move(io),
                                                  options, handlers);
}

DownstreamConnection::~DownstreamConnection() {
  if (active_ != nullptr) event_del(&active_->resume_event);
  if (output_watch_ != nullptr) event_free(output_watch_);
  // Listed means not released yet, so the runtime (and its parker) is still there.
  if (idle_listed) runtime_.idleParker().remove(this);
  if (state_ == State::kTunnel) {
    // Torn down with the worker (shutdown): the tunnel still reports, for the access log.
    state_ = State::kClosed;
    tunnel_->close(Tunnel::End::kAborted);
  }
  if (stream_ != nullptr) {
    stream_->onDownstreamReset();
    stream_.reset();
  }
  transport_.reset();
  if (stats_ != nullptr) {  // null once parked: the record counts it (wakeParked)
    stats_->cx_active.dec();
    runtime_.connectionClosed();
  }
}

void DownstreamConnection::start() {
  if (listenerInfo().tls != nullptr && tls_ == nullptr) {
    SLUICE_LOG(kError, "listener '", listenerInfo().config.name,
               "': cannot create a TLS session: closing ", client_address_);
    closeNow();  // never plaintext on a TLS listener
    return;
  }
  setReadTimeout(listenerInfo().limits.idle_timeout_ms);
  transport_->enableRead();
  transport_->start();
  if (state_ == State::kActive) markIdle();  // no request yet: idle too
}

bool DownstreamConnection::idle() const {
  return stream_ == nullptr && transport_ != nullptr && !active_->parser.inMessage() &&
         evbuffer_get_length(transport_->input()) == 0;
}

void DownstreamConnection::markIdle() { runtime_.idleParker().add(this); }

int DownstreamConnection::parkHook(void*, IdleParker::Hook* hook, IdleParker::Owner* owner,
                                   std::shared_ptr<void>* kept) {
  return static_cast<DownstreamConnection*>(hook)->park(owner, kept);
}

void DownstreamConnection::wakeParked(void* arg, int fd, const IdleParker::Owner& owner,
                                      std::shared_ptr<void> kept, IdleParker::Wake why) {
  auto* runtime = static_cast<WorkerRuntime*>(arg);
  switch (why) {
    case IdleParker::Wake::kTimedOut:
      owner.stats->timeouts[stats::ListenerStats::kIdleTimeout].inc();
      runtime->connectionClosed();
      [[fallthrough]];
    case IdleParker::Wake::kShutdown:  // (the runtime is being destroyed: not counted)
      owner.stats->cx_active.dec();
      kept.reset();  // a TLS session: freed as a closing connection frees it (still resumable)
      close(fd);     // as an idle keep-alive connection's read timeout closes it
      return;
    case IdleParker::Wake::kReadable:
    case IdleParker::Wake::kDrain:
      break;
  }
  // Rebuilt: the transport reads what arrived from the loop (level-triggered), then on_data
  // parses; a FIN is read as the client closing. A drain closes it right after this.
  DownstreamConnection* conn =
      runtime->adopt(std::make_unique<DownstreamConnection>(*runtime, owner, std::move(kept), fd));
  conn->start();
}

int DownstreamConnection::park(IdleParker::Owner* owner, std::shared_ptr<void>* kept) {
  // Only a connection with nothing in flight and nothing buffered either way; one that is
  // busy again left the list, one still flushing its last response stays as it is.
  if (state_ != State::kActive || stream_ != nullptr || transport_ == nullptr ||
      !transport_->open() || active_->parser.inMessage() || parser_paused_ || reading_paused_ ||
      closeRequested() || evbuffer_get_length(transport_->input()) != 0) {
    return -1;
  }
  if (transport_->outputLength() != 0) {  // (output() would schedule a flush)
    markIdle();  // the last response is still going out: look again at a later tick
    return -1;
  }
  if (tls_ != nullptr) {
    // A TLS session is kept whole: only once established, with nothing arrived meanwhile and
    // no decrypted byte waiting in OpenSSL (read-ahead). idleAndOpen() peeks: what it decrypts
    // waits in OpenSSL, and the socket will not say so; re-enabling reading reads it.
    if (!handshake_done_ || tls_info_ == nullptr) return -1;
    if (!transport_->idleAndOpen() || tls_->hasPending()) {
      transport_->disableRead();
      transport_->enableRead();
      return -1;
    }
  }
  event_del(&active_->resume_event);
  const int fd = transport_->releaseFd();
  if (tls_ != nullptr) {
    auto parked = std::make_shared<ParkedTls>();
    parked->io = transport_->releaseIo();
    parked->info = std::move(tls_info_);
    tls_ = nullptr;
    *kept = std::move(parked);
  }
  transport_.reset();
  owner->slot = slot_;
  owner->stats = std::move(stats_);  // counted by the parker's record from now on
  owner->idle_timeout_ms = listenerInfo().limits.idle_timeout_ms;
  state_ = State::kClosed;
  runtime_.memoryTrim().onParked();  // a trim once thousands were (memory_trim.h)
  runtime_.release(this);            // deleted from the loop; the socket is the parker's
  return fd;
}

void DownstreamConnection::setReadTimeout(uint32_t ms) {
  if (ms == read_timeout_ms_) return;  // each change is a timer-heap operation: skip no-ops
  read_timeout_ms_ = ms;
  transport_->setReadTimeout(ms);
}

void DownstreamConnection::pauseReading() {
  if (state_ != State::kActive) return;
  reading_paused_ = true;
  transport_->disableRead();
}

void DownstreamConnection::resumeReading() {
  if (!reading_paused_ || state_ != State::kActive) return;
  reading_paused_ = false;
  transport_->enableRead();
  event_active(&active_->resume_event, 0, 0);  // parse what is already buffered
}

void DownstreamConnection::processInput() {
  if (state_ != State::kActive) return;
  evbuffer* in = transport_->input();
  while (state_ == State::kActive && !parser_paused_ && !reading_paused_ &&
         evbuffer_get_length(in) > 0) {
    evbuffer_iovec vec;
    if (evbuffer_peek(in, -1, nullptr, &vec, 1) < 1) return;
    size_t consumed = 0;
    if (!parse(static_cast<const char*>(vec.iov_base), vec.iov_len, in, &consumed)) return;
  }
}

size_t DownstreamConnection::onBytes(void* arg, const char* data, size_t len) {
  auto* self = static_cast<DownstreamConnection*>(arg);
  if (self->state_ == State::kLingering) {
    if (internal::nowUs() >= self->linger_until_us_) self->closeNow();
    return len;  // read and discarded (onRead)
  }
  size_t used = 0;
  while (used < len && self->state_ == State::kActive && !self->parser_paused_ &&
         !self->reading_paused_) {
    size_t consumed = 0;
    const bool go = self->parse(data + used, len - used, nullptr, &consumed);
    used += consumed;
    if (!go) break;
  }
  // Closing (refused, or cut): the rest would only be discarded from input().
  return self->state_ == State::kActive ? used : len;
}

bool DownstreamConnection::parse(const char* data, size_t len, evbuffer* in, size_t* consumed) {
  bool was_in_message = active_->parser.inMessage();
  http::Parser::Result r = active_->parser.execute(data, len, consumed);
  if (state_ == State::kClosed) return false;
  if (in != nullptr) evbuffer_drain(in, *consumed);
  if (r == http::Parser::Result::kError) {
    badRequest(active_->parser.errorStatus(), active_->parser.errorReason());
    return false;
  }
  if (r == http::Parser::Result::kPaused) {
    parser_paused_ = true;
    if (stream_ == nullptr && state_ == State::kActive) {
      // The message's stream already finished (a local reply sent before the request was read
      // completely, then the rest read and discarded): the next request may be parsed now.
      parser_paused_ = false;
      active_->parser.resume();
    }
  }
  transport_->resumeIfDrained();
  if (!was_in_message && active_->parser.inMessage() && stream_ == nullptr && !header_timer_) {
    // First bytes of a request: the header timeout (slowloris guard) starts now.
    header_timer_ = true;
    header_start_ms_ = loopTimeMs();
    setReadTimeout(listenerInfo().limits.request_header_timeout_ms);
  } else if (header_timer_ && stream_ == nullptr && active_->parser.inMessage() &&
             loopTimeMs() - header_start_ms_ >= listenerInfo().limits.request_header_timeout_ms) {
    // The read timeout restarts with every byte; a client trickling its headers is held to
    // request_header_timeout_ms from its first byte here (no timer per request: checked as
    // bytes arrive, so a slow client is cut within twice the timeout at worst).
    stats_->timeouts[stats::ListenerStats::kHeaderTimeout].inc();
    badRequest(408, "request headers not received within request_header_timeout_ms");
    return false;
  }
  return true;
}

uint64_t DownstreamConnection::loopTimeMs() const {
  // Monotonic: libevent's cached time is a wall clock and can step back, which made the
  // unsigned difference above huge (a spurious 408). The coarse clock is a vDSO read.
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

int DownstreamConnection::onHead(http::MessageHead& head) {
  runtime_.idleParker().remove(this);
  header_timer_ = false;
  stalled_output_ = 0;
  // While the body streams, a stalled client is cut after idle_timeout_ms.
  setReadTimeout(listenerInfo().limits.idle_timeout_ms);
  stream_ = std::make_unique<Stream>(*this, runtime_, slot_->chain);
  stream_->onRequestHead(head);
  return 0;
}

void DownstreamConnection::onBody(const char* data, size_t len) {
  if (stream_ != nullptr) stream_->onRequestBody(data, len);
}

bool DownstreamConnection::onMessageComplete() {
  // The idle timeout keeps running while the upstream works; when it fires with a complete
  // request in flight it is ignored (onEvent), so the upstream's response_timeout_ms governs.
  if (stream_ != nullptr) stream_->onRequestComplete();
  // Pause after every request: the next pipelined one is parsed when this one is answered.
  return true;
}

void DownstreamConnection::onStreamDone(bool close) {
  runtime_.worker().deferDelete(std::move(stream_));
  // The next response may add to the output: the watch was for this one's end (the read
  // timeout's stall check covers a keep-alive connection; closeAfterFlush watches again).
  if (output_watch_ != nullptr) evtimer_del(output_watch_);
  if (close || draining_ || slot_->removed) {
    closeAfterFlush();
    return;
  }
  setReadTimeout(listenerInfo().limits.idle_timeout_ms);
  if (parser_paused_) {
    parser_paused_ = false;
    active_->parser.resume();
  }
  // A pipelined request already buffered is parsed from the loop (not from inside this
  // stream's callbacks); with nothing buffered the next bytes arrive as a read event.
  if (evbuffer_get_length(transport_->input()) > 0) event_active(&active_->resume_event, 0, 0);
  markIdle();  // a pipelined request already buffered takes it out again in onHead()
}

void DownstreamConnection::onResume(evutil_socket_t, short, void* arg) {
  static_cast<DownstreamConnection*>(arg)->processInput();
}

void DownstreamConnection::badRequest(uint32_t status, const std::string& reason) {
  stats_->refused.inc();
  if (stream_ == nullptr) stats_->response(status);  // else the stream counts its reply
  SLUICE_LOG(kDebug, "refused request from ", client_address_, ": ", status, " ", reason);
  if (stream_ != nullptr) {
    // The request was already under way (a bad chunk or too much body mid-stream): the stream
    // answers (or cuts the connection when its response had started); then we close.
    Stream* stream = stream_.get();
    stream->onRequestError(status, reason);
    if (state_ == State::kActive) closeAfterFlush();
    return;
  }
  std::string body = errorBody(status, reason);
  http::HeaderMap h;
  h.add("Content-Type", "application/json");
  http::writeResponseHead(output(), status, "", h, http::Framing::kContentLength, body.size(), true,
                          false);
  evbuffer_add(output(), body.data(), body.size());
  logRefusedRequest(listenerInfo(), runtime_.worker().index(), active_->parser.head(),
                    client_address_, tlsVersion(), tlsSni(), status, body.size());
  closeAfterFlush();
}

void DownstreamConnection::closeAfterFlush() {
  if (state_ != State::kActive) return;
  runtime_.idleParker().remove(this);
  state_ = State::kClosing;
  transport_->disableRead();
  if (outputLength() == 0) {
    startLingering();
  } else {
    watchOutput();  // reading is off: only the output tells a client that stopped reading
  }
}

void DownstreamConnection::watchOutput() {
  if (state_ == State::kClosed || state_ == State::kTunnel) return;
  if (listenerInfo().limits.idle_timeout_ms == 0) return;  // no timeout configured
  if (output_watch_ == nullptr) {
    output_watch_ =
        evtimer_new(runtime_.worker().base(), &DownstreamConnection::onOutputWatch, this);
    if (output_watch_ == nullptr) return;  // out of memory: the read timeout still watches
  }
  if (evtimer_pending(output_watch_, nullptr) == 0) armOutputWatch();
}

void DownstreamConnection::armOutputWatch() {
  watched_output_ = outputLength();
  timeval tv = event::toTimevalUs(uint64_t{listenerInfo().limits.idle_timeout_ms} * 1000);
  evtimer_add(output_watch_, &tv);
}

void DownstreamConnection::onOutputWatch(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<DownstreamConnection*>(arg);
  if (self->state_ == State::kClosed || self->state_ == State::kTunnel) return;
  const size_t unsent = self->outputLength();
  if (unsent == 0) return;
  if (unsent >= self->watched_output_) {  // nothing left in a whole idle_timeout_ms
    self->cutStalledReader();
    return;
  }
  self->armOutputWatch();
}

void DownstreamConnection::cutStalledReader() {
  SLUICE_LOG(kDebug, "client ", client_address_, " stopped reading its response");
  if (stats_ != nullptr) stats_->timeouts[stats::ListenerStats::kIdleTimeout].inc();
  if (stream_ != nullptr) stream_->markDownstreamTimeout();
  abort();
}

void DownstreamConnection::startLingering() {
  // Half-close, then read and discard for a moment: closing with unread input would send an
  // RST that can destroy the response in the client's receive buffer.
  state_ = State::kLingering;
  linger_until_us_ = internal::nowUs() + kLingerTotalUs;
  transport_->shutdownWrite();
  evbuffer_drain(transport_->input(), evbuffer_get_length(transport_->input()));
  setReadTimeout(kLingerMs);
  transport_->setHighWatermark(0);
  transport_->enableRead();
  transport_->resumeIfDrained();
}

void DownstreamConnection::abortByServer() {
  if (stream_ != nullptr) stream_->markCut();
  abort();
}

void DownstreamConnection::abort() {
  if (state_ == State::kClosed) return;
  if (state_ == State::kTunnel) {
    tunnel_->close(Tunnel::End::kAborted);  // reports to onTunnelDone, which closes
    return;
  }
  // RST rather than FIN: the client must not mistake a cut response for a complete one.
  transport_->resetOnClose();
  closeNow();
}

void DownstreamConnection::closeNow() {
  if (state_ == State::kClosed) return;
  runtime_.idleParker().remove(this);
  if (state_ == State::kTunnel) {
    tunnel_->close(Tunnel::End::kAborted);
    return;
  }
  state_ = State::kClosed;
  transport_->stop();
  if (stream_ != nullptr) {
    stream_->onDownstreamReset();
    runtime_.worker().deferDelete(std::move(stream_));
  }
  runtime_.release(this);
}

void DownstreamConnection::drain() {
  draining_ = true;
  if (state_ == State::kTunnel) return;  // reloads and drains leave tunnels running
  // An idle keep-alive connection closes now, but gracefully: the last response may still sit
  // in the output buffer (its stream is done, the write is deferred), and closing at once lost
  // it (drain_test under load, ASan build: a request the upstream answered, no byte at the
  // client). The lingering half-close also turns a request the client sends meanwhile into a
  // FIN it sees, not an RST that could destroy a response it has not read yet.
  if (idle()) closeAfterFlush();
}

void DownstreamConnection::startTunnel(std::unique_ptr<event::Transport> upstream,
                                       bool upstream_ended, uint32_t idle_timeout_ms) {
  if (state_ != State::kActive) return;  // closing already: `upstream` closes with this call
  state_ = State::kTunnel;
  event_del(&active_->resume_event);
  header_timer_ = false;
  Tunnel::Options options;
  options.idle_timeout_ms = idle_timeout_ms;
  options.downstream_ended = input_ended_;
  options.upstream_ended = upstream_ended;
  options.stats = stats_;
  Tunnel::Callbacks callbacks;
  callbacks.on_done = &DownstreamConnection::onTunnelDone;
  callbacks.arg = this;
  tunnel_ = std::make_unique<Tunnel>(runtime_.worker(), std::move(transport_), std::move(upstream),
                                     options, callbacks);
  tunnel_->start();
}

void DownstreamConnection::onTunnelDone(void* arg, const Tunnel::Result& result) {
  auto* self = static_cast<DownstreamConnection*>(arg);
  const bool tearing_down = self->state_ == State::kClosed;  // from the destructor
  self->state_ = State::kClosed;
  if (self->stream_ != nullptr) {
    self->stream_->onTunnelEnd(result);
    if (!tearing_down) self->runtime_.worker().deferDelete(std::move(self->stream_));
  }
  if (!tearing_down) self->runtime_.release(self);
}

void DownstreamConnection::onRead(void* arg) {
  auto* self = static_cast<DownstreamConnection*>(arg);
  if (self->state_ == State::kLingering) {
    evbuffer* in = self->transport_->input();
    evbuffer_drain(in, evbuffer_get_length(in));
    if (internal::nowUs() >= self->linger_until_us_) self->closeNow();
    return;
  }
  self->processInput();
}

void DownstreamConnection::onDrained(void* arg) {
  auto* self = static_cast<DownstreamConnection*>(arg);
  if (self->state_ == State::kClosing && self->outputLength() == 0) {
    self->startLingering();
    return;
  }
  if (self->stream_ != nullptr) self->stream_->onDownstreamWritable();
}

void DownstreamConnection::onHandshakeDone() {
  handshake_done_ = true;
  if (tls_ == nullptr || tls_info_ != nullptr) return;  // plain, or a parked session rebuilt
  tls_info_ = std::make_unique<tls::ConnectionInfo>();
  tls_->describe(tls_info_.get(), listenerInfo().tls->verifiesClients());
  (tls_info_->resumed ? stats_->tls_resumed : stats_->tls_full).inc();
}

void DownstreamConnection::applyTlsHeaders(http::HeaderMap& h) const {
  if (tls_ == nullptr) return;
  const config::ClientCertHeaders& names = listenerInfo().tls->config().client_cert_headers;
  const std::pair<const std::string*, const std::string*> fields[] = {
      {&names.subject, tls_info_ ? &tls_info_->peer_subject : nullptr},
      {&names.uri_san, tls_info_ ? &tls_info_->peer_uri_sans : nullptr},
      {&names.dns_san, tls_info_ ? &tls_info_->peer_dns_sans : nullptr},
      {&names.fingerprint, tls_info_ ? &tls_info_->peer_fingerprint : nullptr},
  };
  for (const auto& [name, value] : fields) {
    if (name->empty()) continue;
    h.remove(*name);  // a client must not be able to claim a certificate
    if (value != nullptr && !value->empty()) h.add(*name, *value);
  }
}

bool DownstreamConnection::misdirected(const http::HeaderMap& h) const {
  if (tls_ == nullptr || !listenerInfo().tls->verifiesClients()) return false;
  const std::string_view* host = h.get("host");
  if (host == nullptr) return false;
  std::string_view name = *host;
  if (!name.empty() && name.front() == '[') {
    name = name.substr(0, name.find(']') + 1);  // IP literal: no certificate names it
  } else {
    name = name.substr(0, name.rfind(':'));
  }
  int group = listenerInfo().tls->groupFor(name);
  return group >= 0 && group != tls::ServerContext::groupOf(tls_->ssl());
}

void DownstreamConnection::onEvent(void* arg, short what) {
  auto* self = static_cast<DownstreamConnection*>(arg);
  if ((what & BEV_EVENT_CONNECTED) != 0) {
    self->onHandshakeDone();
    return;
  }
  if (!self->handshake_done_ && self->tls_ != nullptr && self->state_ == State::kActive) {
    tls::HandshakeFailure why =
        (what & BEV_EVENT_TIMEOUT) != 0 ? tls::HandshakeFailure::kTimeout : self->tls_->failure();
    size_t i = static_cast<size_t>(why);
    if (i < self->stats_->tls_failed.size()) self->stats_->tls_failed[i].inc();
    SLUICE_LOG(kDebug, "TLS handshake from ", self->client_address_,
               " failed: ", self->transport_->lastError());
  }
  if (self->state_ == State::kLingering || self->state_ == State::kClosed) {
    self->closeNow();
    return;
  }
  if ((what & BEV_EVENT_TIMEOUT) != 0 && (what & BEV_EVENT_READING) != 0) {
    if (self->stream_ != nullptr && self->stream_->requestComplete()) {
      // Waiting for the upstream, not for the client: keep reading (EOF detection). But a
      // client that has read nothing of its response for a whole idle_timeout_ms is gone.
      size_t unsent = self->outputLength();
      if (unsent > 0 && unsent == self->stalled_output_) {
        self->cutStalledReader();
        return;
      }
      self->stalled_output_ = unsent;
      return;
    }
    if (self->stream_ == nullptr && self->active_->parser.inMessage()) {
      // Headers did not arrive in time.
      self->stats_->timeouts[stats::ListenerStats::kHeaderTimeout].inc();
      self->badRequest(408, "request headers not received within request_header_timeout_ms");
      return;
    }
    if (self->stream_ != nullptr && !self->stream_->requestComplete()) {
      // A declared body that stopped arriving: 408 when no response has started (the stream
      // cuts the connection otherwise), then close.
      SLUICE_LOG(kDebug, "client ", self->client_address_, " stalled mid-body");
      self->stats_->timeouts[stats::ListenerStats::kBodyTimeout].inc();
      self->stream_->markDownstreamTimeout();
      self->badRequest(408, "request body stalled for idle_timeout_ms");
      return;
    }
    self->stats_->timeouts[stats::ListenerStats::kIdleTimeout].inc();
    self->closeNow();  // idle keep-alive connection
    return;
  }
  // A FIN after a complete request is a half-close (`printf 'GET ...' | nc -N`, HTTP/1.0
  // tools): the client still reads, so the response is sent and the connection closes after
  // it (as HAProxy does by default). A FIN mid-request, or an error, cancels; so does a FIN
  // while the request waits in its cluster's queue (nothing was sent upstream: the client went
  // away, as HAProxy's abortonclose treats queued requests).
  if ((what & BEV_EVENT_EOF) != 0 && (what & BEV_EVENT_ERROR) == 0 && self->stream_ != nullptr &&
      self->stream_->requestComplete() && !self->stream_->waitingInQueue()) {
    self->draining_ = true;  // close after this response; read nothing more
    self->input_ended_ = true;
    self->transport_->disableRead();  // at EOF the socket stays readable: do not spin on it
    return;
  }
  self->closeNow();
}

}  // namespace sluice::proxy
