// An ACK-mode copy after it goes out: its ACK deadline, retries with backoff (§5.2), the ACK itself;
// and TTL expiry (§5.5), the other timer.
#include "broker/queue_state.h"

namespace siomq::broker {

int64_t retry_delay_ms(const DeliveryPolicy& policy, int attempt) {
  if (!policy.exponential || attempt <= 1) return policy.retry_delay_ms;
  // delay · 2^(n-1), saturating at a day: an exponent past that only means "wait very long".
  constexpr int64_t kCap = 86400 * 1000LL;
  int64_t d = policy.retry_delay_ms;
  for (int i = 1; i < attempt && d < kCap; ++i) d *= 2;
  return std::min(d, std::max(kCap, policy.retry_delay_ms));
}

void DurableQueues::State::schedule(Entry& e, int64_t after_ms) {
  due.schedule_after(&e, std::chrono::milliseconds(after_ms));
}

void DurableQueues::State::on_due(Entry& e) {
  if (e.phase == Phase::in_flight) on_ack_timeout(e);
  else if (e.phase == Phase::backoff) on_retry(e);
}

void DurableQueues::State::deliver(Entry& e, const EndpointPtr& to, int attempt) {
  const Queue& q = *e.queue;
  link_socket(e, to);
  if (attempt > 1) ++counters.redelivered;
  take_off(e);
  e.phase = Phase::in_flight;
  e.receipt = 0;
  e.attempt = attempt;
  schedule(e, q.policy.ack_timeout_ms);
  to->deliver(delivery_of(q.key, e.row, attempt));
  observe([&](QueueObserver& o) { o.sent(q.realm, q.key); });
}

void DurableQueues::State::on_ack_timeout(Entry& e) {
  ++counters.ack_timeouts;
  observe([&](QueueObserver& o) { o.ack_timed_out(e.queue->realm); });
  const DeliveryPolicy& p = e.queue->policy;
  if (e.attempt >= p.max_attempts) {
    dead_letter(e, "ack timeout after " + std::to_string(e.attempt) + " attempt(s)");
    return;
  }
  e.phase = Phase::backoff;
  schedule(e, retry_delay_ms(p, e.attempt));
}

void DurableQueues::State::on_retry(Entry& e) {
  // Only a consumer online now gets the retry, and only while its queue is still in ACK mode;
  // otherwise the row waits for its replay (§5.2).
  EndpointPtr to = e.queue->policy.ack ? endpoint_of(*e.queue) : nullptr;
  if (to) {
    deliver(e, to, e.attempt + 1);
  } else {
    land(e);
    unlink_socket(e);
    pump(*e.queue);  // a queue no longer in ACK mode sends it on at once if its consumer is online
  }
}

void DurableQueues::State::ack(const std::string& realm, const std::string& socket, const std::string& id,
                               AckReply reply) {
  auto it = by_id.find(id);
  if (it == by_id.end() || it->second->queue->realm != realm || it->second->acking)
    return reply(404, "Pending ACK not found");
  Entry& e = *it->second;
  // The socket the copy went to may ACK it, and so may the queue's consumer wherever it is now
  // (after a reconnect, or during a retry delay: §0 row 11).
  if (socket_of(e) != socket) {
    EndpointPtr now = endpoint_of(*e.queue);
    if (!now || now->socket_id() != socket) return reply(403, "ACK does not belong to this socket");
  }
  // The copy is forgotten only once its deletion is written; until then it is neither redelivered
  // nor expired, and a failed write leaves it stored, waiting for the next replay.
  e.acking = true;
  ++e.queue->acking;
  land(e);
  cancel_due(e);
  unlink_socket(e);
  // The window has room again: the next copies go out now, not after the deletion is written.
  pump(*e.queue);
  submit(store::erase_row(e.row.seq), [this, ref = await(e), reply = std::move(reply)](const Status& status) {
    Entry* e = resolve(ref);  // null: removed meanwhile (a purge or a move), its deletion written all the same
    if (!status) {
      if (e) {
        e->acking = false;
        --e->queue->acking;
        may_send_again(*e);
      }
      return reply(500, status.error().message);
    }
    ++counters.acked;
    if (e) remove(*e);
    reply(200, "");
  });
}

void DurableQueues::State::purge_expired() {
  int64_t now = unix_ms();
  std::vector<store::Op> ops;
  // Uncommitted rows wait for their write to finish (their commit may still deliver them).
  std::vector<Entry*> due;
  for (auto it = expiries.begin(); it != expiries.end() && it->first <= now; ++it) {
    if (it->second->committed && !it->second->acking) due.push_back(it->second);
  }
  std::vector<Queue*> freed;  // ACK-mode queues whose window an expired copy left
  for (Entry* e : due) {
    ops.push_back(store::erase_row(e->row.seq));
    ++counters.expired;
    if (occupies(*e)) freed.push_back(e->queue);
    remove(*e);
  }
  submit(std::move(ops));
  for (Queue* q : freed) pump(*q, true);
}

void DurableQueues::State::schedule_expiry_sweep() {
  expiry_timer.expires_after(options.expiry_interval);
  expiry_timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    purge_expired();
    drop_empty_queues();
    schedule_expiry_sweep();
  });
}

}  // namespace siomq::broker
