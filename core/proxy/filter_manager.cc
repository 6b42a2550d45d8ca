#include "core/proxy/filter_manager.h"

#include <time.h>

#include <algorithm>

#include "core/common/log.h"
#include "core/proxy/local_reply.h"

namespace sluice::proxy {
namespace {

// Held (paused) body above this stops reading from its source; at or below the low mark the
// source is read again (the same marks as the Stream's own backpressure).
constexpr size_t kHoldHigh = 256 * 1024;
constexpr size_t kHoldLow = 64 * 1024;

const char* dirName(FilterDir d) { return d == FilterDir::kRequest ? "request" : "response"; }

}  // namespace

uint64_t FilterManager::monoNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

FilterManager::FilterManager(FilterManagerCallbacks& callbacks, event_base* base,
                             sluice_stream* handle)
    : callbacks_(callbacks), base_(base), handle_(handle) {}

FilterManager::~FilterManager() {
  cancelTimers();
  destroyFilters();
}

bool FilterManager::createFilters(std::shared_ptr<WorkerFilterChain> chain, std::string* failed) {
  chain_ = std::move(chain);
  const size_t n = chain_->size();
  slots_.resize(n);
  slot_data_ = slots_.data();
  entries_ = chain_->entries();
  n_ = n;
  if (n == 0) return true;
  stats_ = &chain_->filterStats();
  timed_ = chain_->sampleTiming();
  body_hooks_[0] = chain_->bodyHooks(0);
  body_hooks_[1] = chain_->bodyHooks(1);
  for (size_t i = 0; i < n; ++i) {
    const WorkerFilterChain::Entry& e = entries_[i];
    Slot& slot = slot_data_[i];
    if (e.worker != nullptr && e.stream_create != nullptr) {
      slot.self = e.stream_create(e.worker, handle_);
      if (slot.self == nullptr) {
        chain_->info().filters[i]->hookFailed(plugin::Hook::kStreamCreate);
      } else {
        slot.created = true;
      }
    } else {
      slot.self = e.worker;  // NULL: its worker_create failed (counted when the chain was built)
    }
    if (slot.self != nullptr) continue;
    // Not running: its hooks are not called (headersHook/bodyHook read nullptr).
    for (int d = 0; d < 2; ++d) body_hooks_[d] -= e.body[d] != nullptr ? 1 : 0;
    countError(i);
    if (chain_->failureMode(i) == config::FailureMode::kOpen) {
      SLUICE_LOG(kDebug, "filter '", chain_->name(i), "' could not start: skipped (open)");
      continue;  // failure_mode open: the filter is skipped for this stream
    }
    *failed = chain_->name(i);
    // The filters after this one do not start either (their slots keep self nullptr).
    for (size_t k = i + 1; k < n; ++k) {
      for (int d = 0; d < 2; ++d) body_hooks_[d] -= entries_[k].body[d] != nullptr ? 1 : 0;
    }
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- hook calls

template <typename Call>
sluice_filter_status FilterManager::invoke(FilterDir d, size_t filter, bool headers, Call call) {
  const size_t prev = current_;
  const FilterDir prev_dir = current_dir_;
  const bool prev_headers = in_headers_hook_;
  current_ = filter;
  current_dir_ = d;
  in_headers_hook_ = headers;
  resume_requested_ = false;
  ++hook_depth_;
  // Timed streams only; one clock read per hook boundary: back-to-back hooks share the one
  // between them.
  const uint64_t t0 = !timed_ ? 0 : clock_fresh_ ? clock_ns_ : monoNs();
  const sluice_filter_status st = call();
  --hook_depth_;
  Slot& slot = slotAt(filter);
  ++slot.calls;
  if (timed_) {
    const uint64_t t1 = monoNs();
    clock_ns_ = t1;
    clock_fresh_ = true;
    slot.hook_ns += t1 - t0;
  }
  current_ = prev;
  current_dir_ = prev_dir;
  in_headers_hook_ = prev_headers;
  return st;
}

inline sluice_filter_status FilterManager::callHeaders(FilterDir d, size_t filter, HeadersHook fn,
                                                       bool end_stream) {
  void* self = slotAt(filter).self;
  return invoke(d, filter, true, [&] { return fn(self, handle_, end_stream ? 1 : 0); });
}

sluice_filter_status FilterManager::callBody(FilterDir d, size_t filter, BodyHook fn,
                                             const char* data, size_t len, bool end) {
  void* self = slotAt(filter).self;
  return invoke(d, filter, false,
                [&] { return fn(self, handle_, data == nullptr ? "" : data, len, end ? 1 : 0); });
}

FilterManager::Next FilterManager::afterHookSlow(FilterDir d, size_t filter,
                                                 sluice_filter_status status) {
  if (reply_pending_) {
    // A local reply sent during the hook wins over the status.
    reply_pending_ = false;
    resume_requested_ = false;
    replyFromFilter(d, filter, std::move(pending_reply_));
    return Next::kStop;
  }
  if (status == SLUICE_FILTER_PAUSE && resume_requested_) status = SLUICE_FILTER_CONTINUE;
  resume_requested_ = false;
  switch (status) {
    case SLUICE_FILTER_CONTINUE:
      return Next::kContinue;
    case SLUICE_FILTER_PAUSE:
      return Next::kPause;
    case SLUICE_FILTER_STOP:
      fail(d, filter, true);
      return Next::kStop;
    default:
      break;  // ERROR, or a value this host does not know: read as ERROR
  }
  countError(filter);
  if (chain_->failureMode(filter) == config::FailureMode::kOpen) {
    SLUICE_LOG(kDebug, "filter '", chain_->name(filter), "' failed in a ", dirName(d),
               " hook (status ", status, "): going on (failure_mode open)");
    return Next::kContinue;
  }
  fail(d, filter, false);
  return Next::kStop;
}

void FilterManager::fail(FilterDir d, size_t filter, bool stop_without_reply) {
  std::string what = "filter '" + chain_->name(filter) + "' ";
  if (stop_without_reply) {
    chain_->info().filters[filter]->hookFailed(plugin::Hook::kStopWithoutReply);
    countError(filter);
    what += "stopped the request without a reply";
  } else {
    what += "failed";
  }
  SLUICE_LOG(kWarn, what, " (", dirName(d), " hook): 500");
  FilterReply reply;
  reply.status = 500;
  reply.content_type = "application/json";
  reply.body = errorBody(500, what);
  Dir& s = dir(d);
  ++s.gen;
  s.state = State::kStopped;
  cb().onFilterReply(std::move(reply), filter, d == FilterDir::kRequest);
}

void FilterManager::replyFromFilter(FilterDir d, size_t filter, FilterReply reply) {
  if (filter != kNone) countReply(filter);
  Dir& s = dir(d);
  ++s.gen;
  s.state = State::kStopped;
  // Request phase: the reply passes the response filters. Response phase: it replaces the
  // response as it is.
  cb().onFilterReply(std::move(reply), filter, d == FilterDir::kRequest);
}

// ---------------------------------------------------------------- iteration

// An empty chain (n_ == 0, most listeners): no hook can pause, hold, collect or replace
// anything, so each event goes straight to the Stream; only the states that decide whether an
// event is still wanted (kDelivered, kStopped, ended_) are kept. The events come from the
// parsers' callbacks, which do not re-enter, so nothing can arrive while one is on the stack.

void FilterManager::decodeHeaders(bool end_stream) {
  clock_fresh_ = false;  // entered from the Stream: no hook ended just now
  Dir& s = dir(FilterDir::kRequest);
  ++s.gen;
  s.end_stream = end_stream;
  if (n_ == 0) {
    s.state = State::kDelivered;
    cb().onDecodedHeaders();
    return;
  }
  s.state = State::kRunning;
  s.pos = 0;
  advance(FilterDir::kRequest);
}

void FilterManager::encodeHeaders(bool end_stream, bool local) {
  clock_fresh_ = false;  // entered from the Stream: no hook ended just now
  Dir& s = dir(FilterDir::kResponse);
  ++s.gen;
  if (n_ == 0) {  // nothing held, queued or collected without a filter
    s.state = State::kDelivered;
    s.end_stream = end_stream;
    s.local = local;
    cb().onEncodedHeaders();
    return;
  }
  s.state = State::kRunning;
  s.pos = 0;
  s.paused = kNone;
  s.data_paused = false;
  s.end_stream = end_stream;
  s.local = local;
  s.held.clear();
  s.held_valid = false;
  s.queued.clear();
  s.queued_end = false;
  s.collected.clear();
  if (response_buffering_) {
    response_buffering_ = false;
    for (size_t i = 0; i < n_; ++i) slotAt(i).buffer[1] = BufferRequest{};
  }
  advance(FilterDir::kResponse);
}

void FilterManager::decodeData(const char* data, size_t len, bool end) {
  clock_fresh_ = false;  // entered from the Stream: no hook ended just now
  Dir& s = dir(FilterDir::kRequest);
  if (n_ == 0) {  // no filter: delivered headers mean a flowing body
    if (s.state == State::kDelivered && !ended_) cb().onDecodedData(data, len, end);
    return;
  }
  if (s.state == State::kStopped || s.state == State::kIdle || ended_) return;
  const bool flowing = s.state == State::kDelivered || s.state == State::kParked;
  if (flowing && !s.iterating && !s.data_paused && !s.held_valid && s.queued.empty() &&
      !s.queued_end) {
    if (s.state == State::kDelivered && !s.holding_above &&
        body_hooks_[static_cast<int>(FilterDir::kRequest)] == 0) {
      // No body hook this way and nothing parked, held or over the marks: runData would call no
      // hook and advance() would find nothing to do (what an auth or limit chain is).
      cb().onDecodedData(data, len, end);
      return;
    }
    runData(FilterDir::kRequest, data, len, end, 0);  // the common case: no copy
    advance(FilterDir::kRequest);  // a whole buffered body may let the headers go on
    return;
  }
  s.queued.append(data, len);
  if (end) s.queued_end = true;
  updateHolding(FilterDir::kRequest);
  advance(FilterDir::kRequest);
}

void FilterManager::encodeData(const char* data, size_t len, bool end) {
  clock_fresh_ = false;  // entered from the Stream: no hook ended just now
  Dir& s = dir(FilterDir::kResponse);
  if (n_ == 0) {  // no filter: delivered headers mean a flowing body
    if (s.state == State::kDelivered && !ended_) cb().onEncodedData(data, len, end);
    return;
  }
  if (s.state == State::kStopped || s.state == State::kIdle || ended_) return;
  const bool flowing = s.state == State::kDelivered || s.state == State::kParked;
  if (flowing && !s.iterating && !s.data_paused && !s.held_valid && s.queued.empty() &&
      !s.queued_end) {
    if (s.state == State::kDelivered && !s.holding_above &&
        body_hooks_[static_cast<int>(FilterDir::kResponse)] == 0) {
      // No body hook this way and nothing parked, held or over the marks: runData would call no
      // hook and advance() would find nothing to do (what an auth or limit chain is).
      cb().onEncodedData(data, len, end);
      return;
    }
    runData(FilterDir::kResponse, data, len, end, 0);
    advance(FilterDir::kResponse);  // a whole buffered body may let the headers go on
    return;
  }
  s.queued.append(data, len);
  if (end) s.queued_end = true;
  updateHolding(FilterDir::kResponse);
  advance(FilterDir::kResponse);
}

void FilterManager::advance(FilterDir d) {
  clock_fresh_ = false;  // entered from the Stream: no hook ended just now
  Dir& s = dir(d);
  if (s.iterating) return;  // the loop on the stack goes on with the new state
  s.iterating = true;
  while (!ended_) {
    if (s.state == State::kRunning) {
      runHeaders(d);
      continue;
    }
    if (s.state != State::kDelivered && s.state != State::kParked) break;
    if (s.data_paused) break;
    if (s.held_valid) {
      std::string piece = std::move(s.held);
      s.held.clear();
      s.held_valid = false;
      const bool end = s.held_end;
      s.held_end = false;
      runData(d, piece.data(), piece.size(), end, s.held_pos);
      continue;
    }
    if (!s.queued.empty() || s.queued_end) {
      s.held = std::move(s.queued);
      s.queued.clear();
      s.held_valid = true;
      s.held_end = s.queued_end;
      s.queued_end = false;
      s.held_pos = 0;
      continue;
    }
    break;
  }
  s.iterating = false;
  updateHolding(d);
}

void FilterManager::runHeaders(FilterDir d) {
  Dir& s = dir(d);
  const uint32_t gen = s.gen;
  const size_t n = size();
  while (s.pos < n) {
    const size_t j = s.pos;
    const size_t i = filterAt(d, j);
    const HeadersHook fn = headersHook(d, i);
    if (fn == nullptr) {  // no hook, or skipped (open)
      ++s.pos;
      continue;
    }
    sluice_filter_status st = callHeaders(d, i, fn, s.end_stream);
    if (ended_ || s.gen != gen) return;
    Next next = afterHook(d, i, st);
    if (ended_ || s.gen != gen || next == Next::kStop) return;
    if (next == Next::kPause) {
      s.state = State::kPaused;
      s.paused = j;
      return;
    }
    if (!s.end_stream && !s.local && bufferOf(d, i).on) {
      s.state = State::kParked;  // the headers wait here for the whole body
      if (d == FilterDir::kRequest) cb().onRequestBuffering();
      return;
    }
    ++s.pos;
  }
  s.state = State::kDelivered;
  if (d == FilterDir::kRequest) {
    cb().onDecodedHeaders();
  } else {
    cb().onEncodedHeaders();
  }
}

bool FilterManager::runData(FilterDir d, const char* data, size_t len, bool end, size_t from) {
  Dir& s = dir(d);
  const uint32_t gen = s.gen;
  const size_t n = size();
  // No body hook in this direction and no filter collecting the body: nothing to run.
  const bool hooks = !s.end_stream && !(d == FilterDir::kResponse && s.local) &&
                     (body_hooks_[static_cast<int>(d)] > 0 || s.state == State::kParked);
  for (size_t j = from; hooks && j < n; ++j) {
    if (s.state == State::kParked && j == s.pos) {
      collect(d, data, len, end);
      return false;
    }
    const size_t i = filterAt(d, j);
    const BodyHook fn = bodyHook(d, i);
    if (fn == nullptr) continue;  // no hook, or skipped
    sluice_filter_status st = callBody(d, i, fn, data, len, end);
    if (ended_ || s.gen != gen) return false;
    Next next = afterHook(d, i, st);
    if (ended_ || s.gen != gen || next == Next::kStop) return false;
    if (next == Next::kPause) {
      s.held.assign(data, len);
      s.held_valid = true;
      s.held_end = end;
      s.held_pos = j + 1;
      s.data_paused = true;
      s.paused = j;
      return false;
    }
  }
  if (d == FilterDir::kRequest) {
    cb().onDecodedData(data, len, end);
  } else {
    cb().onEncodedData(data, len, end);
  }
  return true;
}

void FilterManager::collect(FilterDir d, const char* data, size_t len, bool end) {
  Dir& s = dir(d);
  const uint32_t gen = s.gen;
  const size_t j = s.pos;
  const size_t i = filterAt(d, j);
  const BufferRequest& br = bufferOf(d, i);
  if (s.collected.size() + len > br.max_bytes) {
    const uint32_t status = br.status != 0 ? br.status : (d == FilterDir::kRequest ? 413 : 502);
    s.collected.clear();
    s.collected.shrink_to_fit();
    FilterReply reply;
    reply.status = status;
    reply.content_type = "application/json";
    reply.body = errorBody(status, "the " + std::string(dirName(d)) +
                                       " body is larger than filter '" + chain_->name(i) +
                                       "' buffers (" + std::to_string(br.max_bytes) + " bytes)");
    replyFromFilter(d, i, std::move(reply));
    return;
  }
  s.collected.append(data, len);
  if (!end) return;
  std::string body = std::move(s.collected);
  s.collected.clear();
  replace_filter_ = i;
  replace_dir_ = d;
  replaced_ = false;
  // The filter asked for the body (buffer_body), so it runs and has the hook; a plugin without
  // it gets nothing to call (CONTINUE).
  const BodyHook fn = bodyHook(d, i);
  sluice_filter_status st =
      fn == nullptr ? SLUICE_FILTER_CONTINUE : callBody(d, i, fn, body.data(), body.size(), true);
  replace_filter_ = kNone;
  const bool replaced = replaced_;
  replaced_ = false;
  if (ended_ || s.gen != gen) return;
  Next next = afterHook(d, i, st);
  if (ended_ || s.gen != gen || next == Next::kStop) return;
  if (replaced) {
    body = std::move(replacement_);
    replacement_.clear();
    cb().onBodyReplaced(d, body.size());
  }
  s.held = std::move(body);
  s.held_valid = true;
  s.held_end = true;
  s.held_pos = j + 1;
  if (next == Next::kPause) {
    s.data_paused = true;  // the headers stay parked here until resume()
    s.paused = j;
    return;
  }
  s.state = State::kRunning;
  s.pos = j + 1;
}

void FilterManager::updateHolding(FilterDir d) {
  Dir& s = dir(d);
  const size_t held = s.held.size() + s.queued.size();
  if (!s.holding_above && held > kHoldHigh) {
    s.holding_above = true;
    cb().onHolding(d, true);
  } else if (s.holding_above && held <= kHoldLow) {
    s.holding_above = false;
    cb().onHolding(d, false);
  }
}

void FilterManager::stop(FilterDir d) {
  Dir& s = dir(d);
  ++s.gen;
  s.state = State::kStopped;
  s.data_paused = false;
  s.held.clear();
  s.held_valid = false;
  s.queued.clear();
  s.queued_end = false;
  s.collected.clear();
  updateHolding(d);
}

void FilterManager::end() {
  if (ended_) return;
  ended_ = true;
  cancelTimers();
  for (Dir& s : dirs_) {
    ++s.gen;
    s.state = State::kStopped;
    s.held.clear();
    s.queued.clear();
    s.collected.clear();
  }
}

void FilterManager::countError(size_t filter) const {
  if (stats_ != nullptr && filter < stats_->size()) (*stats_)[filter].errors.inc();
}

void FilterManager::countReply(size_t filter) const {
  if (stats_ != nullptr && filter < stats_->size()) (*stats_)[filter].local_replies.inc();
}

void FilterManager::log() {
  if (logged_) return;
  logged_ = true;
  end();
  const size_t counted = stats_ == nullptr ? 0 : std::min(n_, stats_->size());
  for (size_t i = 0; i < n_; ++i) {
    const Slot& slot = slotAt(i);
    if (slot.calls != 0 && i < counted) {
      const stats::FilterStats& stats = (*stats_)[i];
      stats.calls.inc(slot.calls);
      if (timed_) stats.duration.observeMicros((slot.hook_ns + 500) / 1000);
    }
    const auto on_log = entries_[i].on_log;
    if (on_log == nullptr || slot.self == nullptr) continue;  // none, or skipped
    const size_t prev = current_;
    current_ = i;
    ++hook_depth_;
    on_log(slot.self, handle_);
    --hook_depth_;
    current_ = prev;
  }
}

void FilterManager::destroyFilters() {
  if (destroyed_) return;
  destroyed_ = true;
  cancelTimers();
  for (size_t i = 0; i < n_; ++i) {
    const Slot& slot = slotAt(i);
    const auto destroy = entries_[i].stream_destroy;
    if (slot.created && destroy != nullptr) destroy(slot.self);
  }
}

}  // namespace sluice::proxy
