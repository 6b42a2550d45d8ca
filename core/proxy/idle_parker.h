// Parks idle downstream connections. A parked connection is no object at all: its
// DownstreamConnection (transport, buffers, events, parser) is deleted, and what it still needs
// is a 16-byte record here — indexed by its socket, in pages of 256 records — plus a reference
// to an Owner (listener slot, stats series, idle timeout) shared by every connection parked from
// the same listener, and for a TLS connection what it handed over to be kept (its session:
// opaque here, see Callbacks::park). The sockets are watched in one epoll set per worker, which the
// worker's loop watches through a single event. A parked plain connection then costs its record and
// libevent's per-descriptor entry, well under nginx's idle connection (bench/memory, 5,000 idle
// connections); unparked it weighs about 1.7 KB.
//
// Parking is lazy, not done the moment a response is sent: a keep-alive client usually sends
// its next request within milliseconds, and rebuilding the connection for each request would
// cost more than it weighs. A connection enters the idle list when it becomes idle (O(1),
// stamped with a monotonic clock) and leaves it when a request starts (O(1)); one timer per
// worker, armed while a list is not empty, ticks every kTickMs. A tick parks, from the oldest,
// those idle for at least kParkAfterMs, and, when more than kMaxUnparked are listed (thousands
// of idle clients, or a burst of them opening; the next tick then comes kBusyTickMs after the
// list grew past it), the oldest beyond that number that have been idle for kBusyTickMs:
// otherwise the buffers of every connection idle for less than a second would be allocated at
// the same time, and RSS would keep that peak. The kBusyTickMs floor keeps busy keep-alive
// connections (many clients, each between a response and its next request for a few
// milliseconds) from being parked and rebuilt on every request. The same tick ends the parked
// connections whose idle timeout has passed (kept to within one tick). A parked socket that
// turns readable (a request, or the client's FIN) is handed back to be rebuilt, from the loop.
// Worker thread only.
#pragma once

#include <event2/event.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace sluice::stats {
struct ListenerStats;
}

namespace sluice::proxy {

struct ListenerSlot;

class IdleParker {
 public:
  static constexpr uint32_t kParkAfterMs = 1000;
  static constexpr uint32_t kTickMs = 1000;
  static constexpr size_t kMaxUnparked = 64;
  static constexpr uint32_t kBusyTickMs = 50;

  // What a connection inherits to be on the idle list; its fields belong to the parker.
  struct Hook {
    Hook* idle_prev = nullptr;
    Hook* idle_next = nullptr;
    uint32_t idle_since = 0;  // the parker's monotonic clock (ms) when it became idle
    bool idle_listed = false;
  };
  // What a parked connection keeps besides its socket (shared by those with the same fields).
  struct Owner {
    std::shared_ptr<ListenerSlot> slot;
    std::shared_ptr<const stats::ListenerStats> stats;  // the series it is counted in
    uint32_t idle_timeout_ms = 0;  // it is ended this long after it became idle
  };
  enum class Wake {
    kReadable,  // a request (or the client's FIN) arrived: rebuild the connection, read it
    kTimedOut,  // its idle timeout passed: close it
    kDrain,     // wakeAll(): rebuild it (the caller then drains or closes it)
    kShutdown,  // the parker is destroyed: close it
  };
  struct Callbacks {
    void* arg = nullptr;
    // From a tick, for a connection taken off the idle list: give it up — return its socket,
    // fill `*owner` (and `*kept` with whatever must survive with the socket, e.g. a TLS
    // session; null for none), and delete the connection (deferred) without closing the
    // socket — or return -1 to decline (it may add() itself again).
    int (*park)(void* arg, Hook* hook, Owner* owner, std::shared_ptr<void>* kept) = nullptr;
    // A parked socket leaves the parker (no longer watched; `fd` and `kept`, as park() gave
    // it, are the callee's now).
    void (*wake)(void* arg, int fd, const Owner& owner, std::shared_ptr<void> kept,
                 Wake why) = nullptr;
  };

  // `base`: the worker's event loop.
  IdleParker(event_base* base, const Callbacks& callbacks);
  // Every parked socket is handed to wake(kShutdown).
  ~IdleParker();
  IdleParker(const IdleParker&) = delete;
  IdleParker& operator=(const IdleParker&) = delete;

  // The connection of `hook` is idle from now on. Re-adding moves it to the end.
  void add(Hook* hook);
  // Busy again, or closing: off the idle list. No-op when not listed.
  void remove(Hook* hook);
  // Hands every parked socket of `slot` (nullptr: all) to wake(kDrain), synchronously.
  void wakeAll(const ListenerSlot* slot);
  size_t idleCount() const { return idle_.count; }
  size_t parkedCount() const { return parked_count_; }

 private:
  static constexpr int kPageBits = 8;  // 256 records of 16 B: one 4 KiB page
  static constexpr size_t kPageRecords = size_t{1} << kPageBits;
  static constexpr int kMaxFd = 1 << 24;
  struct Record {
    int32_t prev;  // the parked list, in parking order (sockets; -1: none)
    int32_t next;
    uint32_t idle_since;
    uint16_t owner;  // index in owners_
    uint16_t used;   // 0: free, 1: parked, 2: parked with something in kept_
  };
  struct Page {
    Record records[kPageRecords];
    size_t count;
  };
  struct OwnerEntry {
    Owner owner;
    size_t refs = 0;
  };
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
  static uint32_t ageMs(uint32_t since, uint32_t now);
  void arm();
  void tick();
  void parkOne(Hook* hook);
  Record* record(int fd);              // nullptr when `fd` has none
  int ownerIndex(const Owner& owner);  // -1: no room
  // Takes `fd` off the parked list and out of the epoll set, then wake(why).
  void release(int fd, Wake why);

  event_base* base_;
  Callbacks callbacks_;
  int epoll_fd_;       // the parked sockets (-1: none could be made; nothing is parked)
  ::event* readable_;  // epoll_fd_ readable: a parked socket is
  ::event* timer_;
  List idle_;                                 // oldest first
  std::vector<std::unique_ptr<Page>> pages_;  // by fd >> kPageBits; freed when empty
  std::vector<OwnerEntry> owners_;
  absl::flat_hash_map<int, std::shared_ptr<void>> kept_;  // by socket (TLS sessions)
  int32_t parked_head_ = -1;                              // in parking order
  int32_t parked_tail_ = -1;
  size_t parked_count_ = 0;
  bool armed_ = false;
  bool soon_ = false;  // the next tick is due kBusyTickMs after going over kMaxUnparked
};

}  // namespace sluice::proxy
