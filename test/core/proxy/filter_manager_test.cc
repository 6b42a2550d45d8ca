// The filter-chain runner alone (core/proxy/filter_manager.h): every status of every hook, NULL
// hooks, pause/resume (inside and outside the hook), held data, body buffering and replacement
// with its limits, local replies from both directions, failure_mode at start and on ERROR,
// timers. Scripted filters over hand-built hook tables; a fake Stream records what passed.
#include "core/proxy/filter_manager.h"

#include <event2/event.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace sluice::proxy {
namespace {

// What one scripted filter does; its hooks log "<index>:<hook>[:data][:end]".
struct Script {
  size_t index = 0;
  sluice_filter_status req_headers = SLUICE_FILTER_CONTINUE;
  sluice_filter_status req_body = SLUICE_FILTER_CONTINUE;
  sluice_filter_status resp_headers = SLUICE_FILTER_CONTINUE;
  sluice_filter_status resp_body = SLUICE_FILTER_CONTINUE;
  bool reply_in_req_headers = false;   // localReply(403) from on_request_headers
  bool reply_in_resp_headers = false;  // localReply(418) from on_response_headers
  bool resume_in_hook = false;         // resume() during the hook that returns PAUSE
  bool pause_body_once = false;        // req_body PAUSE only for the first piece
  uint64_t buffer_request = 0;         // buffer_body(request, N) from on_request_headers
  uint64_t buffer_response = 0;
  std::string replace_request;  // body_replace from the whole-body call
  bool fail_stream_create = false;
  bool timer_in_req_headers = false;  // arm a 1 ms timer that resumes
  int body_pauses = 0;
  uint32_t unused_hooks = 0;  // what sluice_filter_plugin.unused_hooks answers (ABI 1.3)
};

std::vector<std::string>* g_log = nullptr;
FilterManager* g_fm = nullptr;

void record(const Script& s, const std::string& what) {
  g_log->push_back(std::to_string(s.index) + ":" + what);
}

void* workerCreate(void* config, uint32_t) { return config; }
void workerDestroy(void*) {}
void* streamCreate(void* worker, sluice_stream*) {
  auto* s = static_cast<Script*>(worker);
  return s->fail_stream_create ? nullptr : s;
}
void streamDestroy(void* self) { record(*static_cast<Script*>(self), "destroy"); }

void onTimerFired(void* arg, sluice_stream*, uint64_t) {
  record(*static_cast<Script*>(arg), "timer");
  g_fm->resume();
}

sluice_filter_status reqHeaders(void* self, sluice_stream*, int end) {
  auto* s = static_cast<Script*>(self);
  record(*s, std::string("req_headers") + (end ? ":end" : ""));
  if (s->buffer_request > 0) {
    EXPECT_EQ(g_fm->bufferBody(FilterDir::kRequest, s->buffer_request, 0), 0);
  }
  if (s->reply_in_req_headers) {
    FilterReply r;
    r.status = 403;
    r.body = "no";
    g_fm->localReply(r);
  }
  if (s->timer_in_req_headers) {
    EXPECT_GT(g_fm->armTimer(1, &onTimerFired, s), 0u);
  }
  if (s->resume_in_hook) g_fm->resume();
  return s->req_headers;
}

sluice_filter_status reqBody(void* self, sluice_stream*, const char* data, size_t len, int end) {
  auto* s = static_cast<Script*>(self);
  record(*s, "req_body:" + std::string(data, len) + (end ? ":end" : ""));
  if (!s->replace_request.empty() && end) {
    EXPECT_EQ(g_fm->bodyReplace(FilterDir::kRequest, s->replace_request), 0);
  }
  if (s->pause_body_once) {
    if (s->body_pauses++ == 0) return SLUICE_FILTER_PAUSE;
    return SLUICE_FILTER_CONTINUE;
  }
  return s->req_body;
}

sluice_filter_status respHeaders(void* self, sluice_stream*, int end) {
  auto* s = static_cast<Script*>(self);
  record(*s, std::string("resp_headers") + (end ? ":end" : ""));
  if (s->buffer_response > 0) {
    EXPECT_EQ(g_fm->bufferBody(FilterDir::kResponse, s->buffer_response, 0), 0);
  }
  if (s->reply_in_resp_headers) {
    FilterReply r;
    r.status = 418;
    g_fm->localReply(r);
  }
  return s->resp_headers;
}

sluice_filter_status respBody(void* self, sluice_stream*, const char* data, size_t len, int end) {
  auto* s = static_cast<Script*>(self);
  record(*s, "resp_body:" + std::string(data, len) + (end ? ":end" : ""));
  return s->resp_body;
}

void onLog(void* self, const sluice_stream*) { record(*static_cast<Script*>(self), "log"); }

uint32_t unusedHooks(const void* config) {
  return static_cast<const Script*>(config)->unused_hooks;
}

sluice_filter_plugin hooksTable(bool with_body = true, bool with_stream = true) {
  sluice_filter_plugin h{};
  h.struct_size = sizeof(h);
  h.worker_create = &workerCreate;
  h.worker_destroy = &workerDestroy;
  if (with_stream) {
    h.stream_create = &streamCreate;
    h.stream_destroy = &streamDestroy;
  }
  h.on_request_headers = &reqHeaders;
  h.on_response_headers = &respHeaders;
  if (with_body) {
    h.on_request_body = &reqBody;
    h.on_response_body = &respBody;
  }
  h.on_log = &onLog;
  h.unused_hooks = &unusedHooks;
  return h;
}

// The Stream's part: records what passed the chain and answers replies like the Stream does.
class FakeStream : public FilterManagerCallbacks {
 public:
  void onDecodedHeaders() override { log->push_back("upstream:headers"); }
  void onDecodedData(const char* data, size_t len, bool end) override {
    log->push_back("upstream:" + std::string(data, len) + (end ? ":end" : ""));
  }
  void onEncodedHeaders() override {
    log->push_back(local ? "downstream:reply:" + std::to_string(reply_status)
                         : "downstream:headers");
  }
  void onEncodedData(const char* data, size_t len, bool end) override {
    log->push_back("downstream:" + std::string(data, len) + (end ? ":end" : ""));
  }
  void onFilterReply(FilterReply reply, size_t filter, bool filtered) override {
    log->push_back("reply:" + std::to_string(reply.status) + ":" +
                   (filter == FilterManager::kNone ? "host" : std::to_string(filter)) +
                   (filtered ? ":filtered" : ":unfiltered"));
    fm->stop(FilterDir::kRequest);
    local = true;
    reply_status = reply.status;
    if (filtered) {
      fm->encodeHeaders(reply.body.empty(), true);
    } else {
      fm->stop(FilterDir::kResponse);
      log->push_back("downstream:reply:" + std::to_string(reply.status));
    }
  }
  void onBodyReplaced(FilterDir, uint64_t len) override {
    log->push_back("replaced:" + std::to_string(len));
  }
  void onRequestBuffering() override { log->push_back("buffering"); }
  void onHolding(FilterDir, bool above) override {
    log->push_back(above ? "hold:above" : "hold:below");
  }

  std::vector<std::string>* log = nullptr;
  FilterManager* fm = nullptr;
  bool local = false;
  uint32_t reply_status = 0;
};

class FilterManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = event_base_new();
    g_log = &log_;
    callbacks_.log = &log_;
  }
  void TearDown() override {
    fm_.reset();
    chain_.reset();
    configs_.clear();
    event_base_free(base_);
    g_log = nullptr;
    g_fm = nullptr;
  }

  // n scripted filters (call before start()); `modes` sets failure_mode per filter.
  void build(size_t n, std::vector<config::FailureMode> modes = {}) {
    fm_.reset();  // a second chain in one test: the first one goes first
    chain_.reset();
    log_.clear();
    scripts_.assign(n, Script{});
    for (size_t i = 0; i < n; ++i) scripts_[i].index = i;
    modes_ = modes;
    modes_.resize(n, config::FailureMode::kClosed);
  }
  // Creates the chain and the runner; false when createFilters refused (failure closed).
  bool start(const sluice_filter_plugin& hooks) {
    hooks_ = hooks;
    auto info = std::make_shared<ListenerInfo>();
    info->config.name = "test";
    info->stats = std::make_shared<stats::ListenerStats>("filter_manager_test");
    for (size_t i = 0; i < scripts_.size(); ++i) {
      config::PluginRef ref;
      ref.name = "f" + std::to_string(i);
      ref.failure_mode = modes_[i];
      info->config.filters.push_back(ref);
      info->filters.push_back(std::make_shared<plugin::FilterConfig>(nullptr, &hooks_, &scripts_[i],
                                                                     "f" + std::to_string(i)));
    }
    chain_ = std::make_shared<WorkerFilterChain>(info, 0);
    fm_ = std::make_unique<FilterManager>(callbacks_, base_, nullptr);
    g_fm = fm_.get();
    callbacks_.fm = fm_.get();
    std::string failed;
    bool ok = fm_->createFilters(chain_, &failed);
    if (!ok) log_.push_back("failed:" + failed);
    return ok;
  }
  std::vector<std::string> take() {
    std::vector<std::string> out;
    out.swap(log_);
    return out;
  }
  // Runs the loop until something was logged (a timer's hook ran), at most `limit`. One turn
  // is not enough: a timer woken early by libevent's coarse clock waits again (not before).
  void runLoopUntilLogged(std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (log_.empty() && std::chrono::steady_clock::now() < end) {
      event_base_loop(base_, EVLOOP_ONCE);
    }
  }

  using V = std::vector<std::string>;
  event_base* base_ = nullptr;
  std::vector<std::string> log_;
  std::vector<Script> scripts_;
  std::vector<config::FailureMode> modes_;
  sluice_filter_plugin hooks_{};
  std::vector<std::shared_ptr<plugin::FilterConfig>> configs_;
  std::shared_ptr<WorkerFilterChain> chain_;
  FakeStream callbacks_;
  std::unique_ptr<FilterManager> fm_;
};

TEST_F(FilterManagerTest, ContinueRunsEveryFilterInChainOrderThenReverseOrder) {
  build(3);
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(false);
  fm_->decodeData("ab", 2, false);
  fm_->decodeData("", 0, true);
  EXPECT_EQ(take(), (V{"0:req_headers", "1:req_headers", "2:req_headers", "upstream:headers",
                       "0:req_body:ab", "1:req_body:ab", "2:req_body:ab", "upstream:ab",
                       "0:req_body::end", "1:req_body::end", "2:req_body::end", "upstream::end"}));
  fm_->encodeHeaders(false, false);
  fm_->encodeData("x", 1, true);
  EXPECT_EQ(take(),
            (V{"2:resp_headers", "1:resp_headers", "0:resp_headers", "downstream:headers",
               "2:resp_body:x:end", "1:resp_body:x:end", "0:resp_body:x:end", "downstream:x:end"}));
  fm_->log();
  fm_->destroyFilters();
  EXPECT_EQ(take(), (V{"0:log", "1:log", "2:log", "0:destroy", "1:destroy", "2:destroy"}));
}

// ABI 1.3: the hooks a config instance calls unused are never called for its streams; the
// other instances of the same plugin keep theirs.
TEST_F(FilterManagerTest, HooksAConfigInstanceCallsUnusedAreNotCalled) {
  build(3);
  scripts_[0].unused_hooks = SLUICE_HOOK_RESPONSE_HEADERS | SLUICE_HOOK_LOG;
  scripts_[2].unused_hooks = SLUICE_HOOK_REQUEST_HEADERS | SLUICE_HOOK_REQUEST_BODY;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(false);
  fm_->decodeData("ab", 2, true);
  EXPECT_EQ(take(), (V{"0:req_headers", "1:req_headers", "upstream:headers", "0:req_body:ab:end",
                       "1:req_body:ab:end", "upstream:ab:end"}));
  fm_->encodeHeaders(true, false);
  EXPECT_EQ(take(), (V{"2:resp_headers:end", "1:resp_headers:end", "downstream:headers"}));
  fm_->log();
  fm_->destroyFilters();
  EXPECT_EQ(take(), (V{"1:log", "2:log", "0:destroy", "1:destroy", "2:destroy"}));
}

TEST_F(FilterManagerTest, NullBodyHooksAreContinueAndABodylessMessageSkipsBodyHooks) {
  build(2);
  ASSERT_TRUE(start(hooksTable(/*with_body=*/false, /*with_stream=*/false)));
  fm_->decodeHeaders(false);
  fm_->decodeData("ab", 2, true);
  EXPECT_EQ(take(), (V{"0:req_headers", "1:req_headers", "upstream:headers", "upstream:ab:end"}));
  build(2);
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);  // end_stream: the end still passes, no body hook sees it
  fm_->decodeData("", 0, true);
  EXPECT_EQ(take(),
            (V{"0:req_headers:end", "1:req_headers:end", "upstream:headers", "upstream::end"}));
}

TEST_F(FilterManagerTest, ALocalReplyDuringAHookWinsOverItsStatusAndPassesResponseHooks) {
  build(3);
  scripts_[1].reply_in_req_headers = true;  // returns CONTINUE, but replied
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(false);
  EXPECT_EQ(take(), (V{"0:req_headers", "1:req_headers", "reply:403:1:filtered", "2:resp_headers",
                       "1:resp_headers", "0:resp_headers", "downstream:reply:403"}));
  fm_->decodeData("late", 4, true);  // the request direction stopped for good
  EXPECT_EQ(take(), V{});
}

TEST_F(FilterManagerTest, StopWithoutAReplyIs500) {
  build(2);
  scripts_[0].req_headers = SLUICE_FILTER_STOP;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  EXPECT_EQ(take(), (V{"0:req_headers:end", "reply:500:0:filtered", "1:resp_headers",
                       "0:resp_headers", "downstream:reply:500"}));
}

TEST_F(FilterManagerTest, ErrorAndUnknownStatusesFollowFailureMode) {
  build(3, {config::FailureMode::kClosed, config::FailureMode::kOpen});
  scripts_[1].req_headers = SLUICE_FILTER_ERROR;  // open: read as CONTINUE
  scripts_[2].req_headers = 77;                   // unknown: ERROR, closed: 500
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  EXPECT_EQ(take(), (V{"0:req_headers:end", "1:req_headers:end", "2:req_headers:end",
                       "reply:500:2:filtered", "2:resp_headers", "1:resp_headers", "0:resp_headers",
                       "downstream:reply:500"}));
}

TEST_F(FilterManagerTest, ErrorInAResponseHookIsAnUnfiltered500) {
  build(2);
  scripts_[1].resp_headers = SLUICE_FILTER_ERROR;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  take();
  fm_->encodeHeaders(false, false);
  EXPECT_EQ(take(), (V{"1:resp_headers", "reply:500:1:unfiltered", "downstream:reply:500"}));
}

TEST_F(FilterManagerTest, AReplyFromAResponseHookReplacesTheResponseUnfiltered) {
  build(3);
  scripts_[1].reply_in_resp_headers = true;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  take();
  fm_->encodeHeaders(false, false);
  fm_->encodeData("x", 1, true);  // the upstream's body goes nowhere
  EXPECT_EQ(take(), (V{"2:resp_headers", "1:resp_headers", "reply:418:1:unfiltered",
                       "downstream:reply:418"}));
}

TEST_F(FilterManagerTest, PauseInHeadersHoldsTheBodyUntilResume) {
  build(3);
  scripts_[1].req_headers = SLUICE_FILTER_PAUSE;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(false);
  fm_->decodeData("ab", 2, false);  // held at the start of the chain: no filter sees it yet
  fm_->decodeData("cd", 2, true);
  EXPECT_EQ(take(), (V{"0:req_headers", "1:req_headers"}));
  scripts_[1].req_headers = SLUICE_FILTER_CONTINUE;
  fm_->resume();
  EXPECT_EQ(take(), (V{"2:req_headers", "upstream:headers", "0:req_body:abcd:end",
                       "1:req_body:abcd:end", "2:req_body:abcd:end", "upstream:abcd:end"}));
}

TEST_F(FilterManagerTest, ResumeDuringTheHookThatPausesReadsAsContinue) {
  build(2);
  scripts_[0].req_headers = SLUICE_FILTER_PAUSE;
  scripts_[0].resume_in_hook = true;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  EXPECT_EQ(take(), (V{"0:req_headers:end", "1:req_headers:end", "upstream:headers"}));
}

TEST_F(FilterManagerTest, PauseInABodyHookHoldsThatPieceAndWhatFollows) {
  build(3);
  scripts_[1].pause_body_once = true;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(false);
  fm_->decodeData("a", 1, false);
  fm_->decodeData("b", 1, true);
  EXPECT_EQ(take(), (V{"0:req_headers", "1:req_headers", "2:req_headers", "upstream:headers",
                       "0:req_body:a", "1:req_body:a"}));
  fm_->resume();
  EXPECT_EQ(take(), (V{"2:req_body:a", "upstream:a", "0:req_body:b:end", "1:req_body:b:end",
                       "2:req_body:b:end", "upstream:b:end"}));
}

TEST_F(FilterManagerTest, HeldBytesAboveTheHighWatermarkStopTheSource) {
  build(1);
  scripts_[0].req_headers = SLUICE_FILTER_PAUSE;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(false);
  std::string piece(100 * 1024, 'x');
  for (int i = 0; i < 3; ++i) fm_->decodeData(piece.data(), piece.size(), false);
  V log = take();
  EXPECT_EQ(log.back(), "hold:above");
  scripts_[0].req_headers = SLUICE_FILTER_CONTINUE;
  fm_->resume();
  log = take();
  EXPECT_NE(std::find(log.begin(), log.end(), "hold:below"), log.end());
}

TEST_F(FilterManagerTest, ABufferedBodyReachesTheFilterWholeAndTheHeadersWait) {
  build(3);
  scripts_[1].buffer_request = 100;
  scripts_[1].replace_request = "XYZ";
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(false);
  fm_->decodeData("ab", 2, false);
  fm_->decodeData("cd", 2, false);
  EXPECT_EQ(take(),
            (V{"0:req_headers", "1:req_headers", "buffering", "0:req_body:ab", "0:req_body:cd"}));
  fm_->decodeData("", 0, true);
  EXPECT_EQ(take(), (V{"0:req_body::end", "1:req_body:abcd:end", "replaced:3", "2:req_headers",
                       "upstream:headers", "2:req_body:XYZ:end", "upstream:XYZ:end"}));
}

TEST_F(FilterManagerTest, ABodyOverTheBufferLimitIs413OrAnUnfiltered502) {
  build(2);
  scripts_[1].buffer_request = 3;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(false);
  fm_->decodeData("abcd", 4, false);
  EXPECT_EQ(take(), (V{"0:req_headers", "1:req_headers", "buffering", "0:req_body:abcd",
                       "reply:413:1:filtered", "1:resp_headers", "0:resp_headers",
                       "downstream:reply:413"}));
  build(2);
  scripts_[0].buffer_response = 3;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  take();
  fm_->encodeHeaders(false, false);
  fm_->encodeData("abcd", 4, false);
  EXPECT_EQ(take(), (V{"1:resp_headers", "0:resp_headers", "1:resp_body:abcd",
                       "reply:502:0:unfiltered", "downstream:reply:502"}));
}

TEST_F(FilterManagerTest, AFilterThatCannotStartIsSkippedWhenOpenAndRefusedWhenClosed) {
  build(3, {config::FailureMode::kClosed, config::FailureMode::kOpen});
  scripts_[1].fail_stream_create = true;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  EXPECT_EQ(take(), (V{"0:req_headers:end", "2:req_headers:end", "upstream:headers"}));
  fm_->log();
  fm_->destroyFilters();
  EXPECT_EQ(take(), (V{"0:log", "2:log", "0:destroy", "2:destroy"}));
  build(3);
  scripts_[1].fail_stream_create = true;
  EXPECT_FALSE(start(hooksTable()));
  EXPECT_EQ(take(), (V{"failed:f1"}));
  fm_->log();  // the filter started before it still gets on_log and stream_destroy
  fm_->destroyFilters();
  EXPECT_EQ(take(), (V{"0:log", "0:destroy"}));
}

TEST_F(FilterManagerTest, ATimerResumesItsFilterAndTimersEndWithTheStream) {
  build(2);
  scripts_[0].req_headers = SLUICE_FILTER_PAUSE;
  scripts_[0].timer_in_req_headers = true;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  EXPECT_EQ(take(), (V{"0:req_headers:end"}));
  scripts_[0].req_headers = SLUICE_FILTER_CONTINUE;
  runLoopUntilLogged();
  EXPECT_EQ(take(), (V{"0:timer", "1:req_headers:end", "upstream:headers"}));
  // Ids are never reused; cancel says whether it was pending; end() cancels the rest.
  uint64_t a = fm_->armTimer(1000, &onTimerFired, &scripts_[1]);
  uint64_t b = fm_->armTimer(1000, &onTimerFired, &scripts_[1]);
  EXPECT_GT(b, a);
  EXPECT_EQ(fm_->cancelTimer(a), 1);
  EXPECT_EQ(fm_->cancelTimer(a), 0);
  fm_->end();
  EXPECT_EQ(fm_->cancelTimer(b), 0);
  EXPECT_EQ(fm_->armTimer(1, &onTimerFired, &scripts_[1]), 0u);
}

// timer_arm promises "not before delay_ms" by CLOCK_MONOTONIC (core/api/filter.h), though the
// loop keeps libevent's coarse clock (a jiffy, 4 ms at 250 Hz), which may end a wait early.
TEST_F(FilterManagerTest, TimersNeverFireBeforeTheirDelay) {
  build(1);
  ASSERT_TRUE(start(hooksTable()));
  struct Fired {
    std::chrono::steady_clock::time_point armed, ran;
    bool done = false;
  };
  static std::vector<Fired> fired;
  fired.assign(20, Fired{});
  auto fire = [](void* arg, sluice_stream*, uint64_t) {
    auto* f = static_cast<Fired*>(arg);
    f->ran = std::chrono::steady_clock::now();
    f->done = true;
  };
  for (size_t i = 0; i < fired.size(); ++i) {
    fired[i].armed = std::chrono::steady_clock::now();
    ASSERT_GT(fm_->armTimer(1 + i % 7, fire, &fired[i]), 0u);
    if (i % 3 == 0) event_base_loop(base_, EVLOOP_NONBLOCK);  // arm some later in a loop turn
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto all = [&] {
    for (const Fired& f : fired) {
      if (!f.done) return false;
    }
    return true;
  };
  while (!all() && std::chrono::steady_clock::now() < end) event_base_loop(base_, EVLOOP_ONCE);
  for (size_t i = 0; i < fired.size(); ++i) {
    ASSERT_TRUE(fired[i].done) << "timer " << i;
    EXPECT_GE(fired[i].ran - fired[i].armed, std::chrono::milliseconds(1 + i % 7)) << "timer " << i;
  }
}

TEST_F(FilterManagerTest, PauseInResponseHeadersHoldsTheResponseBody) {
  build(2);
  scripts_[1].resp_headers = SLUICE_FILTER_PAUSE;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  take();
  fm_->encodeHeaders(false, false);
  fm_->encodeData("body", 4, true);
  EXPECT_EQ(take(), (V{"1:resp_headers"}));
  fm_->resume();
  EXPECT_EQ(take(), (V{"0:resp_headers", "downstream:headers", "1:resp_body:body:end",
                       "0:resp_body:body:end", "downstream:body:end"}));
}

TEST_F(FilterManagerTest, PauseInAResponseBodyHookHoldsThatPieceAndWhatFollows) {
  build(2);
  scripts_[1].resp_body = SLUICE_FILTER_PAUSE;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(true);
  take();
  fm_->encodeHeaders(false, false);
  fm_->encodeData("a", 1, false);
  fm_->encodeData("b", 1, true);
  EXPECT_EQ(take(), (V{"1:resp_headers", "0:resp_headers", "downstream:headers", "1:resp_body:a"}));
  scripts_[1].resp_body = SLUICE_FILTER_CONTINUE;
  fm_->resume();
  EXPECT_EQ(take(), (V{"0:resp_body:a", "downstream:a", "1:resp_body:b:end", "0:resp_body:b:end",
                       "downstream:b:end"}));
}

TEST_F(FilterManagerTest, AReplyOutsideAHookReplacesResumeAndEndsThePause) {
  build(2);
  scripts_[0].req_headers = SLUICE_FILTER_PAUSE;
  ASSERT_TRUE(start(hooksTable()));
  fm_->decodeHeaders(false);
  fm_->decodeData("x", 1, true);
  take();
  FilterReply r;
  r.status = 429;
  fm_->localReply(r);  // as from a timer or a post: the paused filter answered
  EXPECT_EQ(take(), (V{"reply:429:0:filtered", "1:resp_headers:end", "0:resp_headers:end",
                       "downstream:reply:429"}));
  fm_->resume();  // nothing is paused any more
  EXPECT_EQ(take(), V{});
}

}  // namespace
}  // namespace sluice::proxy
