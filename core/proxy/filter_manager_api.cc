// The FilterManager's side of the filter host API (core/proxy/filter_host.cc): local replies,
// resume, body buffering and replacement, timers and posts.
#include "core/event/timeval.h"
#include "core/proxy/filter_manager.h"

namespace sluice::proxy {

void FilterManager::localReply(FilterReply reply) {
  clock_fresh_ = false;
  if (ended_) return;
  if (hook_depth_ > 0) {
    if (!reply_pending_) {  // the first reply of a hook wins
      reply_pending_ = true;
      pending_reply_ = std::move(reply);
    }
    return;
  }
  // Outside a hook (timer, post): the response phase when a response is being filtered or
  // went out, else the request phase.
  const State rs = dir(FilterDir::kResponse).state;
  const FilterDir d =
      rs == State::kIdle || rs == State::kStopped ? FilterDir::kRequest : FilterDir::kResponse;
  size_t filter = current_;
  if (filter == kNone) {
    const Dir& s = dir(d);
    if (s.state == State::kPaused || s.data_paused) filter = filterAt(d, s.paused);
  }
  if (d == FilterDir::kRequest && dir(d).state == State::kStopped &&
      dir(FilterDir::kResponse).state == State::kStopped) {
    return;  // both directions over: a reply is on its way already
  }
  replyFromFilter(d, filter, std::move(reply));
}

void FilterManager::resume() {
  clock_fresh_ = false;
  if (ended_) return;
  if (hook_depth_ > 0) {
    // Only the hook on the stack can be resumed from inside it: its PAUSE reads as CONTINUE.
    resume_requested_ = true;
    return;
  }
  for (FilterDir d : {FilterDir::kRequest, FilterDir::kResponse}) {
    Dir& s = dir(d);
    if (s.state != State::kPaused && !s.data_paused) continue;
    const size_t pf = filterAt(d, s.paused);
    if (current_ != kNone && current_ != pf) continue;  // not paused by this filter
    if (s.state == State::kPaused) {
      if (!s.end_stream && !s.local && bufferOf(d, pf).on) {
        s.state = State::kParked;  // buffer_body from the paused headers: collect first
        s.pos = s.paused;
        if (d == FilterDir::kRequest) cb().onRequestBuffering();
      } else {
        s.state = State::kRunning;
        s.pos = s.paused + 1;
      }
    } else if (s.state == State::kParked && s.pos == s.paused) {
      // The whole-body call paused: the body and then the headers go on after it.
      s.state = State::kRunning;
      s.pos = s.paused + 1;
    }
    s.data_paused = false;
    s.paused = kNone;
    advance(d);
    if (ended_) return;
  }
}

int FilterManager::bufferBody(FilterDir d, uint64_t max_bytes, uint32_t over_limit_status) {
  if (ended_ || current_ == kNone || current_ >= size()) return -1;
  const Dir& s = dir(d);
  const bool in_hook = hook_depth_ > 0 && in_headers_hook_ && current_dir_ == d;
  const bool paused_here =
      hook_depth_ == 0 && s.state == State::kPaused && filterAt(d, s.paused) == current_;
  if (!in_hook && !paused_here) return -1;
  if (s.local) return -1;  // a local reply's body does not pass the body hooks
  if (over_limit_status != 0 && (over_limit_status < 200 || over_limit_status > 599)) {
    over_limit_status = 0;
  }
  bufferOf(d, current_) = BufferRequest{true, max_bytes, over_limit_status};
  if (d == FilterDir::kResponse) response_buffering_ = true;
  return 0;
}

int FilterManager::bodyReplace(FilterDir d, std::string_view data) {
  if (replace_filter_ == kNone || hook_depth_ == 0 || current_ != replace_filter_ ||
      replace_dir_ != d) {
    return -1;
  }
  replacement_.assign(data.data(), data.size());
  replaced_ = true;
  return 0;
}

uint64_t FilterManager::armTimer(uint64_t delay_ms, sluice_timer_fn fn, void* arg) {
  if (ended_ || fn == nullptr) return 0;
  static thread_local uint64_t next_id = 0;  // per worker thread: never reused
  auto t = std::make_unique<Timer>();
  t->fm = this;
  t->id = ++next_id;
  t->filter = current_;
  t->fn = fn;
  t->arg = arg;
  t->ev = evtimer_new(base_, &FilterManager::onTimer, t.get());
  if (t->ev == nullptr) return 0;
  const uint64_t delay = delay_ms > UINT32_MAX ? UINT32_MAX : delay_ms;
  // The promise is "not before delay_ms" (core/api/filter.h) by CLOCK_MONOTONIC. libevent's
  // clock is the coarse one (a jiffy behind at worst: core/event/worker.cc) and it counts from
  // the time cached when this loop turn began, so its timeout can end early; onTimer checks
  // `due_ns` and waits for the rest.
  t->due_ns = monoNs() + delay * 1000000;
  timeval tv = event::toTimeval(delay);
  event_base_update_cache_time(base_);
  evtimer_add(t->ev, &tv);
  const uint64_t id = t->id;
  timers_.push_back(std::move(t));
  return id;
}

int FilterManager::cancelTimer(uint64_t id) {
  for (size_t k = 0; k < timers_.size(); ++k) {
    if (timers_[k]->id != id) continue;
    event_free(timers_[k]->ev);
    timers_.erase(timers_.begin() + static_cast<std::ptrdiff_t>(k));
    return 1;
  }
  return 0;
}

void FilterManager::onTimer(evutil_socket_t, short, void* arg) {
  auto* t = static_cast<Timer*>(arg);
  FilterManager* fm = t->fm;
  const uint64_t now = monoNs();
  if (now < t->due_ns) {  // woken early by libevent's coarse clock: wait for the rest
    timeval tv = event::toTimevalUs((t->due_ns - now + 999) / 1000);
    evtimer_add(t->ev, &tv);
    return;
  }
  std::unique_ptr<Timer> owned;
  for (size_t k = 0; k < fm->timers_.size(); ++k) {
    if (fm->timers_[k].get() == t) {
      owned = std::move(fm->timers_[k]);
      fm->timers_.erase(fm->timers_.begin() + static_cast<std::ptrdiff_t>(k));
      break;
    }
  }
  if (owned == nullptr) return;
  event_free(owned->ev);
  owned->ev = nullptr;
  if (fm->ended_) return;
  fm->clock_fresh_ = false;
  const size_t prev = fm->current_;
  fm->current_ = owned->filter;
  owned->fn(owned->arg, fm->handle_, owned->id);
  fm->current_ = prev;
}

void FilterManager::runPosted(sluice_post_fn fn, void* arg) {
  clock_fresh_ = false;
  const size_t prev = current_;
  current_ = kNone;
  fn(arg, handle_);
  current_ = prev;
}

void FilterManager::freeTimers() {
  for (auto& t : timers_) {
    if (t->ev != nullptr) event_free(t->ev);
  }
  timers_.clear();
}

}  // namespace sluice::proxy
