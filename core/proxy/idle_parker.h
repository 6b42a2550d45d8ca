// Finds the downstream connections that have been idle for a while, so that they can give up
// their buffers (DownstreamConnection::park()): an idle keep-alive connection then costs its
// socket and a few hundred bytes, as in nginx, instead of its transport, two evbuffers and an
// HTTP parser (about 1.7 KB measured with 5,000 idle connections; bench/memory).
//
// Parking is lazy, not done the moment a response is sent: a keep-alive client usually sends
// its next request within milliseconds, and rebuilding the buffers for each request would cost
// more than they weigh. A connection enters the list when it becomes idle (O(1), stamped with
// the loop's time) and leaves it when a request starts (O(1)); one timer per worker, armed
// only while the list is not empty, ticks every kTickMs and parks, from the oldest, those idle
// for at least kParkAfterMs. The list is in idle-since order, so a tick looks only at the
// connections it parks plus one. When more than kMaxUnparked connections are listed (thousands
// of idle clients, or a burst of them opening), a tick runs at once and also parks the oldest
// beyond that number, however briefly idle: otherwise the buffers of every connection idle for
// less than a second would all be allocated at the same time, and RSS would keep that peak
// (glibc cannot give back memory fragmented between the connections that stay). Worker thread
// only.
#pragma once

#include <event2/event.h>

#include <cstddef>
#include <cstdint>

namespace sluice::proxy {

class IdleParker {
 public:
  static constexpr uint32_t kParkAfterMs = 1000;
  static constexpr uint32_t kTickMs = 1000;
  static constexpr size_t kMaxUnparked = 256;

  // What a connection embeds to be listed. `park(owner)` is called from the timer, with the
  // hook already unlinked; the connection may park or decline (it is not listed again unless
  // it calls add() itself).
  struct Hook {
    void (*park)(void* owner) = nullptr;
    void* owner = nullptr;
    Hook* prev = nullptr;
    Hook* next = nullptr;
    uint64_t idle_since_ms = 0;
    bool linked = false;
  };

  // `base`: the worker's event loop.
  explicit IdleParker(event_base* base);
  ~IdleParker();
  IdleParker(const IdleParker&) = delete;
  IdleParker& operator=(const IdleParker&) = delete;

  // The connection of `hook` became idle at `now_ms` (the loop's cached clock). Re-adding a
  // listed hook moves it to the end.
  void add(Hook* hook, uint64_t now_ms);
  // It is busy again, or closing (no-op when not listed).
  void remove(Hook* hook);
  size_t listed() const { return listed_; }

 private:
  static void onTick(evutil_socket_t, short, void* arg);
  void arm();

  event_base* base_;
  ::event* timer_;
  Hook* head_ = nullptr;  // idle the longest
  Hook* tail_ = nullptr;
  size_t listed_ = 0;
  bool armed_ = false;
  bool soon_ = false;  // a tick is due at once (over kMaxUnparked)
};

}  // namespace sluice::proxy
