// The Stream's side of max_requests_per_host: pick a host with room (core/upstream/host_limit.h)
// or wait in the cluster's queue (core/upstream/wait_queue.h) until an attempt that ends on any
// worker hands this request its turn, its queue_timeout_ms runs out (503 + Retry-After, never
// sent upstream), or the client goes away (taken out of the queue). Request body bytes that
// arrive meanwhile collect in pending_, with the usual backpressure.
#include "core/common/log.h"
#include "core/event/timeval.h"
#include "core/proxy/downstream.h"
#include "core/proxy/local_reply.h"
#include "core/proxy/stream.h"
#include "core/upstream/host_limit.h"

namespace sluice::proxy {

int64_t Stream::pickHost(const sluice_pick_context& ctx) {
  const config::Cluster& cc = cluster_->info().config;
  const uint32_t limit = cc.max_requests_per_host;
  upstream::WaitQueue* queue = cluster_->queue();
  // First come, first served: while others wait, a new request waits behind them (a request
  // given its turn keeps its place at the head).
  if (limit != 0 && queue != nullptr && !queue_turn_ && !queue->empty()) {
    waitInQueue(false);
    return kWaiting;
  }
  upstream::RoomPick pick =
      upstream::pickWithRoom(*cluster_->hosts(), limit, ctx,
                             [this](const sluice_pick_context& c) { return cluster_->pick(c); });
  if (pick.index >= 0) {
    if (queue_timer_ != nullptr) {
      if (queue_turn_) queue_->stats().dispatched.inc();
      leaveQueue();
    }
    return pick.index;
  }
  if (!pick.full) return -1;
  if (queue == nullptr) {
    info_.setFlag(kQueueOverflow);
    queueReply("every host of cluster '" + cluster_->name() + "' is at max_requests_per_host");
    return kWaiting;
  }
  waitInQueue(queue_turn_);
  return kWaiting;
}

void Stream::waitInQueue(bool at_head) {
  const config::Cluster& cc = cluster_->info().config;
  upstream::WaitQueue* queue = cluster_->queue();
  upstream::WaitTicket::Waiter* waiter = this;
  auto ticket = std::make_shared<upstream::WaitTicket>(runtime_.worker(), waiter);
  upstream::WaitQueue::Push pushed = queue->push(ticket, cc.max_queue, at_head);
  if (pushed != upstream::WaitQueue::Push::kQueued) {
    bool full = pushed == upstream::WaitQueue::Push::kFull;
    if (full) {
      queue->stats().overflows.inc();
      info_.setFlag(kQueueOverflow);
    }
    queueReply(full ? "every host of cluster '" + cluster_->name() +
                          "' is at max_requests_per_host and its queue is full"
                    : "cluster '" + cluster_->name() + "' was removed");
    return;
  }
  queue_ = cluster_->sharedQueue();
  queue_ticket_ = std::move(ticket);
  if (queue_timer_ == nullptr) {  // a new wait (a turn that lost its slot keeps its deadline)
    queue->stats().queued.inc();
    queue_timer_ = evtimer_new(runtime_.worker().base(), &Stream::onQueueTimer, this);
    timeval tv = event::toTimeval(cc.queue_timeout_ms);
    evtimer_add(queue_timer_, &tv);
  }
  // A slot may have been freed between our pick and our push, by a release that found the queue
  // still empty: then the head of the queue (maybe us) gets a turn now, not at the next release.
  if (upstream::freeSlots(*cluster_->hosts(), cc.max_requests_per_host) > 0) queue->onSlotFreed();
}

void Stream::onQueueTurn(bool closed) {
  queue_ticket_.reset();
  if (finished_) return;
  if (closed) {
    queue_->stats().cancelled.inc();
    queueReply("cluster '" + cluster_->name() + "' was removed");
    return;
  }
  // The cluster as this worker knows it now: a reload may have replaced its settings or
  // balancer, and hosts may have come or gone since the request began to wait.
  std::string name = cluster_->name();
  std::shared_ptr<upstream::WorkerCluster> current = runtime_.cluster(name);
  if (current == nullptr) {
    queue_->stats().cancelled.inc();
    queueReply("cluster '" + name + "' was removed");
    return;
  }
  if (current != cluster_) {
    cluster_ = std::move(current);
    info_.cluster = cluster_->name();
  }
  queue_turn_ = true;
  startAttempt();
  queue_turn_ = false;
}

void Stream::onQueueTimer(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Stream*>(arg);
  self->leaveQueue();
  if (self->finished_) return;
  self->info_.setFlag(kQueueTimeout);
  if (self->queue_ != nullptr) self->queue_->stats().timeouts.inc();
  self->queueReply("no host of cluster '" + self->cluster_->name() +
                   "' had room within queue_timeout_ms");
}

bool Stream::leaveQueue() {
  bool waiting = queue_timer_ != nullptr;
  if (queue_ticket_ != nullptr) {
    queue_ticket_->cancel();  // a turn already on its way is passed on to the next request
    if (queue_ != nullptr) queue_->remove(queue_ticket_.get());
    queue_ticket_.reset();
  }
  if (queue_timer_ != nullptr) {
    event_free(queue_timer_);
    queue_timer_ = nullptr;
  }
  return waiting;
}

void Stream::queueReply(std::string_view detail) {
  leaveQueue();
  SLUICE_LOG(kDebug, request_.method, " ", original_target_, " from ", conn_.clientAddress(),
             ": 503 ", detail);
  // Overload, not failure: the connection stays open (unless the request body is unfinished)
  // and the client is told when to come back.
  retry_after_s_ = 1;
  sendLocalReply(503, "application/json", errorBody(503, detail), false);
}

}  // namespace sluice::proxy
