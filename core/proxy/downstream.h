// A downstream (client) HTTP/1.1 connection: reads and parses requests, runs one Stream at a
// time (pipelined requests wait in the input buffer, so responses go out in order), answers
// malformed requests with the right 4xx and closes, handles keep-alive, timeouts, backpressure
// and a lingering close (so the client reads our last response before any RST).
//
// Idle memory: a keep-alive connection idle for IdleParker::kParkAfterMs (or sooner, when many
// are idle) is parked: the object is deleted (transport, buffers, events, parser and all) and
// the worker's IdleParker keeps its socket, with a 16-byte record; a TLS connection also leaves
// its session there (the SSL and the handshake's facts: what nginx keeps of an idle TLS
// connection too). The first byte the client sends (or its FIN) rebuilds it (the resuming
// constructor), and the request is read as usual; so do a drain and a listener's removal,
// which then close it.
// Worker thread only; owned by WorkerRuntime, deleted through deferDelete.
#pragma once

#include <event2/event_struct.h>

#include <memory>
#include <string>

#include "core/event/transport.h"
#include "core/event/worker.h"
#include "core/http/parser.h"
#include "core/proxy/idle_parker.h"
#include "core/proxy/runtime.h"
#include "core/proxy/tunnel.h"
#include "core/tls/tls_io.h"

namespace sluice::proxy {

class Stream;

class DownstreamConnection : public event::Deletable,
                             private http::ParserCallbacks,
                             private IdleParker::Hook {
 public:
  DownstreamConnection(WorkerRuntime& runtime, std::shared_ptr<ListenerSlot> slot,
                       evutil_socket_t fd, const sockaddr* peer, int peer_len);
  // A parked connection rebuilt (IdleParker::Wake): `fd` is its socket, `parked` what the
  // parker kept (the listener slot and the stats series it is already counted in), `kept` what
  // park() left with the socket (its TLS session; null on plain connections). Not counted
  // again; the peer address is read back from the socket.
  DownstreamConnection(WorkerRuntime& runtime, const IdleParker::Owner& parked,
                       std::shared_ptr<void> kept, evutil_socket_t fd);
  ~DownstreamConnection() override;

  // Starts reading.
  void start();
  // The response bytes' buffer: appending to it schedules their write (Transport::output()).
  evbuffer* output() const { return transport_->output(); }
  size_t outputLength() const { return transport_->outputLength(); }    // unsent bytes
  const std::string& clientAddress() const { return client_address_; }  // "ip:port"
  const std::string& clientIp() const { return client_ip_; }
  // TLS facts for the access log ("TLSv1.3", the SNI); empty on plain connections.
  // TLS version and SNI for the access log ("" on plain connections or before the handshake).
  std::string_view tlsVersion() const {
    return tls_info_ ? tls_info_->version : std::string_view();
  }
  std::string_view tlsSni() const { return tls_info_ ? tls_info_->sni : std::string_view(); }
  // Request-body backpressure (called by the stream).
  void pauseReading();
  void resumeReading();
  // The current stream has written its whole response. `close`: close after flushing.
  void onStreamDone(bool close);
  // Close now, without flushing (after a response was cut short).
  void abort();
  // abort() by sluice itself (the drain deadline, shutdown): a response under way is logged as
  // cut (response_truncated), not as the client's reset.
  void abortByServer();
  // Watches the unsent output while nothing more is added to it (a complete response being
  // flushed, a connection closing after one): when a whole idle_timeout_ms passes without any
  // of it leaving, the client has stopped reading and the connection is aborted (counted as
  // an idle timeout; the stream, if any, logs downstream_timeout). Unlike the read timeout it
  // also runs while reading is off. Stops by itself once the output is empty.
  void watchOutput();
  // Drain: close now when idle, else after the current response. A tunnel is left running
  // (it ends with its peers, its idle timeout, or abort() at the drain timeout).
  void drain();
  // The upstream answered 101 to the current (upgrade) request, whose 101 head is in output():
  // the connection becomes a Tunnel between the client's transport and `upstream` (whose input
  // may hold the first tunnelled bytes; `upstream_ended`: it already sent its FIN).
  // `idle_timeout_ms`: the tunnel's idle timeout. The stream stays until the tunnel ends and
  // writes the access log line then; the connection closes after it.
  void startTunnel(std::unique_ptr<event::Transport> upstream, bool upstream_ended,
                   uint32_t idle_timeout_ms);
  bool tunnelling() const { return state_ == State::kTunnel; }
  bool idle() const;
  const ListenerSlot* slot() const { return slot_.get(); }
  // TLS facts once the handshake is done (null on plain connections).
  const tls::ConnectionInfo* tlsInfo() const { return tls_info_.get(); }
  bool secure() const { return tls_ != nullptr; }
  // On TLS listeners: removes the client-certificate headers a client sent and adds the
  // verified certificate's facts (DESIGN.md §10, docs/configuration.md `client_cert_headers`).
  void applyTlsHeaders(http::HeaderMap& headers) const;
  // RFC 9110 §15.5.20 / RFC 9113 §9.1.1 (also for HTTP/1.1): on a listener that verifies client
  // certificates, a request whose Host is served by another certificate than the one this
  // connection's handshake chose was sent to the wrong connection: 421.
  bool misdirected(const http::HeaderMap& headers) const;
  // True when responses should say Connection: close (drain, or the listener was removed).
  bool closeRequested() const { return draining_ || slot_->removed || runtime_.draining(); }

  // IdleParker's callbacks (the worker's parker is made with them, `arg` the WorkerRuntime;
  // see idle_parker.h): parkHook gives the connection up, wakeParked rebuilds or closes one.
  static int parkHook(void* arg, IdleParker::Hook* hook, IdleParker::Owner* owner,
                      std::shared_ptr<void>* kept);
  static void wakeParked(void* arg, int fd, const IdleParker::Owner& owner,
                         std::shared_ptr<void> kept, IdleParker::Wake why);

 private:
  enum class State { kActive, kClosing, kLingering, kTunnel, kClosed };

  static void onRead(void* arg);
  static void onDrained(void* arg);
  static void onEvent(void* arg, short what);
  void onHandshakeDone();
  static void onResume(evutil_socket_t, short, void* arg);
  static void onOutputWatch(evutil_socket_t, short, void* arg);
  // Starts a turn of the output watch from the unsent bytes now (the timer exists).
  void armOutputWatch();
  // The client has read nothing of its response for idle_timeout_ms (the read timeout's check
  // or the output watch): counted as an idle timeout, logged downstream_timeout, aborted.
  void cutStalledReader();
  void processInput();
  // Bytes read while nothing was buffered, parsed where they are (Transport::Handlers).
  static size_t onBytes(void* arg, const char* data, size_t len);
  // One parser pass over `data`: the front chain of `in` (drained of what was used at once),
  // or bytes straight from a read (`in` null). `*consumed`: the bytes used. False when parsing
  // stops here (a pause, a refusal, the connection closing).
  bool parse(const char* data, size_t len, evbuffer* in, size_t* consumed);
  void badRequest(uint32_t status, const std::string& reason);
  void closeAfterFlush();
  void startLingering();
  void closeNow();
  void setReadTimeout(uint32_t ms);
  uint64_t loopTimeMs() const;  // CLOCK_MONOTONIC_COARSE, ms (never steps back)
  static void onTunnelDone(void* arg, const Tunnel::Result& result);
  // Parking (see the top): makeTransport() builds the transport of `fd` (constructors), over
  // `io` when given (a parked TLS session), else a new one.
  void makeTransport(evutil_socket_t fd, std::unique_ptr<event::TransportIo> io = nullptr);
  // The socket given up (this is deleted; `*kept`: the TLS session), or -1.
  int park(IdleParker::Owner* owner, std::shared_ptr<void>* kept);
  void markIdle();

  int onHead(http::MessageHead& head) override;
  void onBody(const char* data, size_t len) override;
  bool onMessageComplete() override;

  WorkerRuntime& runtime_;
  const ListenerInfo& listenerInfo() const { return slot_->chain->info(); }

  std::shared_ptr<ListenerSlot> slot_;  // its current chain serves each new request
  // The series it counts its connection in (null once parked: the parker's record counts it).
  std::shared_ptr<const stats::ListenerStats> stats_;
  std::unique_ptr<event::Transport> transport_;
  tls::TlsIo* tls_ = nullptr;  // the transport's Io on TLS listeners
  std::unique_ptr<tls::ConnectionInfo> tls_info_;
  bool handshake_done_ = false;
  // The parser, and the event that parses buffered input from the loop (null in a tunnel).
  struct Active {
    Active(http::ParserCallbacks* callbacks, const http::ParserLimits& limits)
        : parser(http::Parser::Type::kRequest, callbacks, limits) {}
    http::Parser parser;
    ::event resume_event;
  };
  std::unique_ptr<Active> active_;
  std::unique_ptr<Stream> stream_;
  std::string client_address_;
  std::string client_ip_;
  State state_ = State::kActive;
  bool parser_paused_ = false;  // a message ended; the next waits for the stream to finish
  bool reading_paused_ = false;
  bool header_timer_ = false;
  uint64_t header_start_ms_ = 0;
  size_t stalled_output_ = 0;  // unsent response bytes at the last idle timeout (0: none)  //
                               // loopTimeMs() at the first byte of the request head
  uint32_t read_timeout_ms_ = UINT32_MAX;  // the read timeout in force (UINT32_MAX: unset)
  ::event* output_watch_ = nullptr;        // watchOutput()'s timer (made on first use)
  size_t watched_output_ = 0;              // unsent bytes at its last turn
  bool draining_ = false;
  bool input_ended_ = false;        // the client sent its FIN (after a complete request)
  uint64_t linger_until_us_ = 0;    // lingering close: monotonic µs at which it ends anyway
  std::unique_ptr<Tunnel> tunnel_;  // after a 101; owns the client's transport then
};

}  // namespace sluice::proxy
