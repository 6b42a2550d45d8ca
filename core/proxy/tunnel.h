// A byte tunnel between a client and an upstream after an HTTP Upgrade: the upstream answered
// 101 Switching Protocols (RFC 9110 §7.8, §15.2.2; WebSocket: RFC 6455 §4), so from then on
// neither connection carries HTTP and sluice copies bytes both ways without looking at them.
//
// It owns both Transports (plain TCP or TLS: it cannot tell which) and:
//   - copies each side's input to the other side's output, zero-copy (evbuffer moves);
//   - backpressure: stops reading a side while the other side has more than kHighWatermark
//     bytes unsent, and resumes once that falls to the low watermark, so memory stays bounded
//     whatever the speed of either peer;
//   - half-close: an EOF from one side is passed on as a FIN (TLS: close_notify, then FIN) to
//     the other once everything read before it was written; the tunnel ends when both sides
//     have ended and both FINs went out;
//   - errors (a reset, a failed read or write) on either side close both at once;
//   - an idle timeout of its own: no byte either way for `idle_timeout_ms` closes both. The
//     HTTP request and response timeouts no longer apply.
// It cannot speak the tunnelled protocol, so it never sends WebSocket close frames: every close
// it initiates (idle timeout, drain, errors) closes the sockets.
//
// Worker thread only. Owned by the DownstreamConnection that was upgraded; on_done runs exactly
// once, after which the tunnel moves no more bytes; the owner deletes it (deferred) afterwards.
#pragma once

#include <event2/event_struct.h>

#include <cstdint>
#include <memory>

#include "core/event/transport.h"
#include "core/event/worker.h"
#include "core/stats/families.h"

namespace sluice::proxy {

class Tunnel {
 public:
  // How a tunnel ended.
  enum class End {
    kClosed,           // both sides ended cleanly (FIN / close_notify both ways)
    kIdleTimeout,      // no bytes either way for idle_timeout_ms
    kDownstreamError,  // the client's connection failed (reset, read or write error)
    kUpstreamError,    // the upstream's connection failed
    kAborted,          // closed by sluice (drain timeout, shutdown)
  };
  struct Result {
    uint64_t bytes_from_downstream = 0;  // bytes the client sent through the tunnel
    uint64_t bytes_from_upstream = 0;    // bytes the upstream sent through the tunnel
    End end = End::kClosed;
  };
  struct Options {
    uint32_t idle_timeout_ms = 3600000;                 // 0: none
    bool downstream_ended = false;                      // the client had already sent its FIN
    bool upstream_ended = false;                        // the upstream had already sent its FIN
    std::shared_ptr<const stats::ListenerStats> stats;  // counts the tunnel (never null)
  };
  struct Callbacks {
    void (*on_done)(void* arg, const Result& result) = nullptr;
    void* arg = nullptr;
  };

  // Takes both connections; bytes already in their input buffers (read past the request head
  // or the 101 head) are the tunnel's first bytes. `downstream` output may hold the 101 head.
  // Nothing moves before start().
  Tunnel(event::Worker& worker, std::unique_ptr<event::Transport> downstream,
         std::unique_ptr<event::Transport> upstream, const Options& options,
         const Callbacks& callbacks);
  ~Tunnel();
  Tunnel(const Tunnel&) = delete;
  Tunnel& operator=(const Tunnel&) = delete;

  // Moves the buffered bytes, starts reading both sides and the idle timer; counts the tunnel
  // in the listener's stats. May end the tunnel (on_done) before returning.
  void start();
  // Closes both sides now (no flushing) and reports `why` through on_done; no-op once ended.
  void close(End why);
  bool ended() const { return ended_; }

 private:
  struct Side {
    Tunnel* tunnel = nullptr;
    Side* peer = nullptr;
    std::unique_ptr<event::Transport> transport;
    uint64_t bytes_read = 0;
    bool read_ended = false;  // its peer sent FIN: nothing more to read
    bool write_shut = false;  // we sent it our FIN
    bool paused = false;      // reading stopped: the peer's output is over the high watermark
  };

  static void onData(void* arg);
  static void onDrained(void* arg);
  static void onEvent(void* arg, short what);
  static void onIdleTimer(evutil_socket_t, short, void* arg);

  // Copies from.input to from.peer.output and applies backpressure to `from`.
  void pump(Side& from);
  // `from` ended: pass the FIN on when from.peer's output is empty (else when it drains).
  void endRead(Side& from);
  void shutIfFlushed(Side& to);
  void finishIfDone();
  void finish(End why);
  void touch();
  uint64_t nowMs() const;  // the loop's cached clock

  event::Worker& worker_;
  Options options_;
  Callbacks callbacks_;
  Side down_;
  Side up_;
  ::event idle_timer_;
  uint64_t last_activity_ms_ = 0;
  bool started_ = false;
  bool ended_ = false;
};

}  // namespace sluice::proxy
