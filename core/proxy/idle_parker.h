// Parks idle downstream connections: a parked connection has given up its transport (buffers,
// events) and its parser (DownstreamConnection::park()), and its socket is watched here, in
// one epoll set per worker that the worker's loop watches through a single event. A parked
// plain connection then costs the connection object and libevent's per-fd entry, a few
// hundred bytes, as in nginx; unparked it weighs about 1.7 KB (bench/memory, 5,000 idle
// connections).
//
// Parking is lazy, not done the moment a response is sent: a keep-alive client usually sends
// its next request within milliseconds, and rebuilding the buffers for each request would cost
// more than they weigh. A connection enters the idle list when it becomes idle (O(1), stamped
// with the loop's time) and leaves it when a request starts (O(1)); one timer per worker,
// armed while a list is not empty, ticks every kTickMs. A tick parks, from the oldest, those
// idle for at least kParkAfterMs, and, when more than kMaxUnparked are listed (thousands of
// idle clients, or a burst of them opening; the next tick then comes kBusyTickMs after the
// list grew past it), the oldest beyond that number that have been idle for kBusyTickMs:
// otherwise the buffers of every connection idle for less than a second would be allocated at
// the same time, and RSS would keep that peak (glibc cannot give back memory fragmented
// between the connections that stay). The kBusyTickMs floor keeps busy keep-alive connections
// (many clients, each between a response and its next request for a few milliseconds) from
// being parked and rebuilt on every request. The same tick ends the parked
// connections whose idle timeout has passed (so a parked connection's idle timeout is kept to
// within one tick). A parked socket that turns readable (a request, or the client's FIN) is
// woken from the loop. Worker thread only.
#pragma once

#include <event2/event.h>

#include <cstddef>
#include <cstdint>

namespace sluice::proxy {

class IdleParker {
 public:
  static constexpr uint32_t kParkAfterMs = 1000;
  static constexpr uint32_t kTickMs = 1000;
  static constexpr size_t kMaxUnparked = 64;
  static constexpr uint32_t kBusyTickMs = 50;

  // What a connection inherits to be listed; its fields belong to the parker.
  struct Hook {
    Hook* idle_prev = nullptr;
    Hook* idle_next = nullptr;
    uint32_t idle_since = 0;       // the parker's monotonic clock (ms) when it became idle
    uint32_t idle_timeout_ms = 0;  // while parked: ended this long after idle_since
    int parked_fd = -1;            // the owner's: >= 0 while it is parked (its socket)
    uint8_t idle_list = 0;         // 0: none, 1: idle (not parked), 2: parked
  };
  struct Callbacks {
    // From a tick, for a connection taken off the idle list: park now (setting parked_fd) and
    // return the socket to watch, or -1 to decline (it may add() itself again).
    int (*park)(Hook* hook) = nullptr;
    // A parked connection taken off the parked list (socket no longer watched): readable, or
    // `timed_out` (its idle timeout passed). The connection unparks or closes.
    void (*wake)(Hook* hook, bool timed_out) = nullptr;
  };

  // `base`: the worker's event loop.
  IdleParker(event_base* base, const Callbacks& callbacks);
  ~IdleParker();
  IdleParker(const IdleParker&) = delete;
  IdleParker& operator=(const IdleParker&) = delete;

  // The connection of `hook` is idle from now on, and once parked is ended after
  // `idle_timeout_ms` of idleness. Re-adding an idle hook moves it to the end. Not for a parked
  // hook (the connection unparks first).
  void add(Hook* hook, uint32_t idle_timeout_ms);
  // Busy again, or closing: off whichever list (a parked socket is no longer watched;
  // parked_fd is left to the owner). No-op when not listed.
  void remove(Hook* hook);
  size_t idleCount() const { return idle_.count; }
  size_t parkedCount() const { return parked_.count; }

 private:
  struct List {
    Hook* head = nullptr;
    Hook* tail = nullptr;
    size_t count = 0;
  };
  static void onTick(evutil_socket_t, short, void* arg);
  static void onReadable(evutil_socket_t, short, void* arg);
  static void append(List& list, Hook* hook);
  static void unlink(List& list, Hook* hook);
  uint32_t nowMs() const;  // CLOCK_MONOTONIC_COARSE, ms (wraps after 49 days)
  static uint32_t ageMs(const Hook* hook, uint32_t now);
  void arm();
  void tick();

  event_base* base_;
  Callbacks callbacks_;
  int epoll_fd_;       // the parked sockets (-1: none could be made; nothing is parked)
  ::event* readable_;  // epoll_fd_ readable: a parked socket is
  ::event* timer_;
  List idle_;    // oldest first
  List parked_;  // in parking order
  bool armed_ = false;
  bool soon_ = false;  // the next tick is due kBusyTickMs after going over kMaxUnparked
};

}  // namespace sluice::proxy
