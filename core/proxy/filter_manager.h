// The filter-chain runner: the one place that calls a stream's filter hooks and reads their
// statuses (Envoy's FilterManager is the model). One per Stream; worker thread only.
//
// Two directions, each a sequence of events: headers, then body pieces, the last one with
// end_stream. Request events go through the chain in order (filter 0 first), response events in
// reverse order. An event that passed the last filter goes to the Stream (FilterManagerCallbacks):
// request headers are routed and sent upstream, body pieces follow them; response headers and
// body go downstream.
//
// Run-time semantics (what core/api/filter.h promises, precisely):
//   - A NULL hook is CONTINUE. A filter whose worker_create or stream_create failed is either
//     skipped for the whole stream (failure_mode open; counted as an error) or the request is
//     answered 500 before any hook runs (closed).
//   - CONTINUE: the event goes to the next filter.
//   - STOP: the filter answered with a local reply during the hook. Request direction: the
//     reply goes downstream through the response hooks of every (created) filter; nothing more
//     of the request is filtered or sent upstream. Response direction: the reply replaces the
//     upstream response without being filtered again (before any response byte went
//     downstream; after that the downstream connection is reset). STOP without a reply is
//     answered 500 the same way and counted as an error of the filter.
//   - PAUSE: the event stays at the filter; the filter calls resume() (or answers locally) later
//     from its worker thread (a timer, a post). resume() during the very hook that returns PAUSE
//     reads as CONTINUE. While a direction is paused, body that arrives for it is held at the
//     start of the chain (the caller stops reading above a limit: holdingAbove()) and goes
//     through the whole chain, in order, after the paused event passed the last filter.
//     Nothing of a paused direction passes the paused filter; a request paused in its headers is
//     not sent upstream.
//   - ERROR (and any value other than the four): failure_mode open counts the error and reads it
//     as CONTINUE; closed answers 500 like a STOP without reply (but counted as an error).
//   - A local reply sent during a hook wins over its status (read as STOP); one sent outside a
//     hook (timer, post) while paused replaces resume().
//   - buffer_body from a headers hook: the filter's body hook is called once, with the whole
//     body and end_stream 1 (body pieces pass the filters before it as they arrive and are
//     collected at it). The headers wait at that filter until the whole body went through it, so
//     nothing of the message passes it before. body_replace from that call replaces the body for
//     the rest of the chain; the Stream sets Content-Length to match. Over the limit: the given
//     status (0: 413 request, 502 response) is answered, unfiltered for a response.
//   - Hooks of a direction never run again after it stopped (a local reply, an error, the end of
//     the stream). A local reply's own headers pass the response header hooks once (not the
//     body hooks); a reply sent from there replaces it and is not filtered again.
#pragma once

#include <event2/event.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/api/filter.h"
#include "core/proxy/runtime.h"
#include "core/stats/families.h"

namespace sluice::proxy {

// A local reply a filter (or the host) asked for.
struct FilterReply {
  uint32_t status = 500;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // validated extra fields
};

enum class FilterDir : uint8_t { kRequest = 0, kResponse = 1 };

// What the runner drives; implemented by Stream.
class FilterManagerCallbacks {
 public:
  virtual ~FilterManagerCallbacks() = default;
  // Request headers passed the last filter: route and forward.
  virtual void onDecodedHeaders() = 0;
  // Request body passed the last filter. `end`: the last piece (possibly empty).
  virtual void onDecodedData(const char* data, size_t len, bool end) = 0;
  // Response headers passed the last (first-listed) filter: write them downstream.
  virtual void onEncodedHeaders() = 0;
  virtual void onEncodedData(const char* data, size_t len, bool end) = 0;
  // Answer `reply` (filter: index of the filter that asked, or SIZE_MAX for the host itself).
  // `filtered`: it passes the response header hooks (request-phase replies); otherwise it
  // replaces the response as it is (response-phase replies). The Stream resets the downstream
  // when response bytes went out already.
  virtual void onFilterReply(FilterReply reply, size_t filter, bool filtered) = 0;
  // A buffered body was replaced: `len` is the new body's size (set Content-Length, drop
  // chunked framing).
  virtual void onBodyReplaced(FilterDir dir, uint64_t len) = 0;
  // The request headers wait at a filter that buffers the body: the client may be waiting for
  // 100 Continue before it sends it.
  virtual void onRequestBuffering() = 0;
  // Held (paused) bytes of `dir` passed the high watermark (true) or fell back to none (false).
  virtual void onHolding(FilterDir dir, bool above) = 0;
};

class FilterManager {
 public:
  static constexpr size_t kNone = SIZE_MAX;

  FilterManager(FilterManagerCallbacks& callbacks, event_base* base, sluice_stream* handle);
  ~FilterManager();
  FilterManager(const FilterManager&) = delete;
  FilterManager& operator=(const FilterManager&) = delete;

  // stream_create for every filter of `chain` (failure_mode applies). False when a failure
  // with failure_mode closed happened: the caller answers 500 (`*failed` names the filter).
  bool createFilters(std::shared_ptr<WorkerFilterChain> chain, std::string* failed);
  const WorkerFilterChain* chain() const { return chain_.get(); }

  // --- events from the Stream ---
  void decodeHeaders(bool end_stream);
  void decodeData(const char* data, size_t len, bool end);
  // `local`: the response is a local reply (its body does not pass the body hooks; a reply
  // from a response hook replaces it unfiltered). Resets any response iteration in progress.
  void encodeHeaders(bool end_stream, bool local);
  void encodeData(const char* data, size_t len, bool end);
  // No more filtering in direction `d` (request: a reply is going out; response: it is being
  // replaced or the stream switched protocols): data held for that direction is dropped.
  void stop(FilterDir d);
  // The stream ended: timers cancelled, no hook but on_log runs again.
  void end();
  bool ended() const { return ended_; }
  // on_log of every created filter, then stream_destroy (idempotent).
  void log();
  void destroyFilters();

  // True when a response iteration (of the upstream's response or a local reply) has begun.
  bool encoding() const { return dirs_[1].state != State::kIdle; }
  bool decodeDelivered() const { return dirs_[0].state == State::kDelivered; }

  // --- for the host API (filter_host.cc), worker thread ---
  void localReply(FilterReply reply);
  void resume();
  int bufferBody(FilterDir dir, uint64_t max_bytes, uint32_t over_limit_status);
  int bodyReplace(FilterDir dir, std::string_view data);
  uint64_t armTimer(uint64_t delay_ms, sluice_timer_fn fn, void* arg);
  int cancelTimer(uint64_t id);
  // A post() arrived for this stream: runs fn with the stream (no known filter).
  void runPosted(sluice_post_fn fn, void* arg);

 private:
  using HeadersHook = WorkerFilterChain::HeadersHook;
  using BodyHook = WorkerFilterChain::BodyHook;
  enum class State : uint8_t {
    kIdle,       // no headers yet
    kRunning,    // headers at `pos`, being iterated
    kPaused,     // headers paused at `paused` (a PAUSE)
    kParked,     // headers wait at `pos` for the whole body (buffer_body of that filter)
    kDelivered,  // headers passed the last filter
    kStopped,    // a reply or an error ended this direction
  };
  struct Dir {
    State state = State::kIdle;
    uint32_t gen = 0;          // bumped whenever the iteration is replaced or stopped
    size_t pos = 0;            // next filter in direction order for the headers
    size_t paused = kNone;     // direction-order index of the filter that paused
    bool data_paused = false;  // a body piece is held after `paused`
    bool end_stream = false;   // the headers had end_stream: no body hooks
    bool local = false;        // response: a local reply
    bool iterating = false;    // advance() is on the stack
    std::string held;          // body piece held at `held_pos` (after a PAUSE / a whole body)
    size_t held_pos = 0;
    bool held_valid = false;
    bool held_end = false;
    std::string queued;  // body that arrived while paused: runs from the start
    bool queued_end = false;
    std::string collected;  // body collected for the parked filter
    bool holding_above = false;
  };
  struct BufferRequest {
    bool on = false;
    uint64_t max_bytes = 0;
    uint32_t status = 0;  // over the limit; 0: 413 request, 502 response
  };
  // CLOCK_MONOTONIC in ns, read now (hook timing, timer deadlines).
  static uint64_t monoNs();

  struct Timer {
    FilterManager* fm = nullptr;
    uint64_t id = 0;
    size_t filter = kNone;  // the filter whose hook armed it (kNone: from a post)
    sluice_timer_fn fn = nullptr;
    void* arg = nullptr;
    ::event* ev = nullptr;
    uint64_t due_ns = 0;  // CLOCK_MONOTONIC: the hook runs at or after it (onTimer re-arms)
  };

  size_t size() const { return n_; }
  BufferRequest& bufferOf(FilterDir d, size_t filter) {
    return slotAt(filter).buffer[static_cast<int>(d)];
  }
  // Filter index of direction-order position j.
  size_t filterAt(FilterDir d, size_t j) const {
    return d == FilterDir::kRequest ? j : size() - 1 - j;
  }
  Dir& dir(FilterDir d) { return dirs_[static_cast<int>(d)]; }

  void advance(FilterDir d);
  // Runs the headers of `d` from its pos; returns with a new state.
  void runHeaders(FilterDir d);
  // Runs a body piece from direction-order position `from`. False when the piece stopped
  // (held, collected, or the direction stopped).
  bool runData(FilterDir d, const char* data, size_t len, bool end, size_t from);
  void collect(FilterDir d, const char* data, size_t len, bool end);
  void deliverHeaders(FilterDir d);
  // What to do with a hook's status: true to go on to the next filter.
  enum class Next { kContinue, kPause, kStop };
  Next afterHook(FilterDir d, size_t filter, sluice_filter_status status) {
    // The common case inline: CONTINUE and no reply (a resume() from the hook means nothing
    // then, and the next hook call clears it).
    if (status == SLUICE_FILTER_CONTINUE && !reply_pending_) return Next::kContinue;
    return afterHookSlow(d, filter, status);
  }
  Next afterHookSlow(FilterDir d, size_t filter, sluice_filter_status status);
  void fail(FilterDir d, size_t filter, bool count_stop_without_reply);
  void replyFromFilter(FilterDir d, size_t filter, FilterReply reply);
  void updateHolding(FilterDir d);
  // Hook `fn` (the filter's, not null) of `filter`.
  // Inlined into runHeaders, its one caller (a call per hook, on every request).
  [[gnu::always_inline]] inline sluice_filter_status callHeaders(FilterDir d, size_t filter,
                                                                 HeadersHook fn, bool end_stream);
  sluice_filter_status callBody(FilterDir d, size_t filter, BodyHook fn, const char* data,
                                size_t len, bool end);
  // Runs call() (one hook of `filter`) as the hook on the stack: current_ and friends set and
  // restored, the call counted and, on timed streams, its time added to the filter's.
  template <typename Call>
  sluice_filter_status invoke(FilterDir d, size_t filter, bool headers, Call call);
  // (Inline: nearly every stream has no timer, only filters arm them.)
  void cancelTimers() {
    if (!timers_.empty()) freeTimers();
  }
  void freeTimers();
  static void onTimer(evutil_socket_t, short, void* arg);

  // Every call into the Stream goes through cb(): time spent there is no filter's.
  FilterManagerCallbacks& cb() {
    clock_fresh_ = false;
    return callbacks_;
  }
  FilterManagerCallbacks& callbacks_;
  uint64_t clock_ns_ = 0;     // when the last hook returned (monotonic ns)
  bool clock_fresh_ = false;  // ... and nothing but the runner's bookkeeping ran since
  event_base* base_;
  sluice_stream* handle_;
  std::shared_ptr<WorkerFilterChain> chain_;
  // Per filter, in chain order, what is this stream's; inline for short chains (no allocation
  // per request). The hooks are the chain's (entries_).
  struct Slot {
    void* self = nullptr;  // the hooks' `self`; nullptr: the filter does not run (skipped)
    bool created = false;  // stream_create ran: stream_destroy is due
    uint32_t calls = 0;    // hook calls and their time, added to stats_ once, at log()
    uint64_t hook_ns = 0;
    BufferRequest buffer[2];
  };
  absl::InlinedVector<Slot, 6> slots_;
  // slots_.data() and the chain's entries, both n_ long, set once in createFilters: the
  // per-hook paths index them directly (i < n_ there by construction).
  Slot* slot_data_ = nullptr;
  const WorkerFilterChain::Entry* entries_ = nullptr;
  size_t n_ = 0;
  Slot& slotAt(size_t i) { return slot_data_[i]; }
  // The hooks of filter i by direction; nullptr when it has none or does not run. A hook that
  // is not there is not called (CONTINUE), without any bookkeeping.
  HeadersHook headersHook(FilterDir d, size_t i) const {
    return slot_data_[i].self == nullptr ? nullptr : entries_[i].headers[static_cast<int>(d)];
  }
  BodyHook bodyHook(FilterDir d, size_t i) const {
    return slot_data_[i].self == nullptr ? nullptr : entries_[i].body[static_cast<int>(d)];
  }
  // Body hooks by direction among the running filters: none (a GET through a chain of headers
  // filters) lets body pieces skip the chain.
  uint8_t body_hooks_[2] = {0, 0};
  // Some filter asked for buffer_body in the response direction (its request is reset when
  // the response iteration restarts).
  bool response_buffering_ = false;
  // This stream's hook time is measured (1 stream in WorkerFilterChain::kTimedEvery of its
  // chain): the clock is read only then, and only then is duration observed at log().
  bool timed_ = false;
  Dir dirs_[2];
  const std::vector<stats::FilterStats>* stats_ = nullptr;  // the chain's (chain_ keeps it)
  void countError(size_t filter) const;
  void countReply(size_t filter) const;

  // The hook on the stack: its filter and direction (kNone outside hooks; timers set the filter
  // that armed them, posts leave it unknown).
  size_t current_ = kNone;
  FilterDir current_dir_ = FilterDir::kRequest;
  bool in_headers_hook_ = false;
  int hook_depth_ = 0;
  bool resume_requested_ = false;
  bool reply_pending_ = false;
  FilterReply pending_reply_;
  // During the whole-body call of a buffering filter: which one, and its replacement.
  size_t replace_filter_ = kNone;
  FilterDir replace_dir_ = FilterDir::kRequest;
  bool replaced_ = false;
  std::string replacement_;

  std::vector<std::unique_ptr<Timer>> timers_;
  bool ended_ = false;
  bool logged_ = false;
  bool destroyed_ = false;
};

}  // namespace sluice::proxy
