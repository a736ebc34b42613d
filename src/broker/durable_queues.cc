#include "broker/durable_queues.h"

#include <spdlog/spdlog.h>

#include "broker/queue_state.h"
#include "store/writer.h"
#include "wire/thread_role.h"

namespace siomq::broker {

DurableQueues::DurableQueues(Broker& broker, store::Writer& writer, QueueOptions options)
    : state_(std::make_unique<State>(broker, writer, options)) {}

DurableQueues::~DurableQueues() { stop(); }

std::vector<DurableSubscription> DurableQueues::load(store::Backend::Contents contents, const ReadSubscription& read) {
  State& s = *state_;
  std::vector<DurableSubscription> out;
  std::vector<store::Op> purge;
  uint64_t quarantined = contents.quarantined;
  for (auto& rec : contents.subscriptions) {
    auto sub = read(rec);
    if (!sub) {
      // A record the store could read but the engine cannot use: moved aside like the store's own.
      spdlog::warn("store: a durable subscription of {} bytes cannot be used; moved to the quarantine", rec.spec.size());
      purge.push_back(store::quarantine(rec));
      ++quarantined;
      continue;
    }
    s.stored_specs[store::subscription_id(rec.realm, rec.key, rec.consumer)] = rec.spec;
    QueueCopy q{rec.realm, rec.key, sub->consumer_id, sub->consumer, sub->policy};
    s.queue_for(q);
    out.push_back(std::move(*sub));
  }
  int64_t now = unix_ms();
  for (auto& row : contents.rows) {
    s.next_seq = std::max(s.next_seq, row.seq + 1);
    if (row.expires_ms && row.expires_ms <= now) {
      purge.push_back(store::erase_row(row.seq));
      ++s.counters.expired;
      continue;
    }
    State::Queue& q = s.queue_for(QueueCopy{row.realm, row.event, row.consumer, {}, {}});
    s.add(q, std::move(row), true);
  }
  for (auto& d : contents.dead) {
    s.next_seq = std::max(s.next_seq, d.row.seq + 1);
    s.dead_by_id[d.row.id] = d.row.seq;
    s.dead.emplace(d.row.seq, std::move(d));
  }
  s.submit(std::move(purge));
  s.flush();  // now: the thread that would flush it has not started
  s.counters.quarantined = quarantined;
  spdlog::info("store: {} queued messages in {} queues, {} dead-lettered, {} durable subscriptions, {} quarantined",
               s.by_id.size(), s.queues.size(), s.dead.size(), out.size(), quarantined);
  return out;
}

void DurableQueues::start() {
  State& s = *state_;
  s.work.emplace(s.io.get_executor());
  s.schedule_expiry_sweep();
  s.thread = std::thread([&s] {
    become_background_thread("siomq-queues");
    s.io.run();
  });
}

void DurableQueues::stop() {
  State& s = *state_;
  if (!s.thread.joinable()) return;
  s.post([&s] {
    s.flush();  // what was submitted reaches the writer, which is drained after this
    s.expiry_timer.cancel();
    s.work.reset();
    s.io.stop();
  });
  s.thread.join();
}

void DurableQueues::enqueue(std::shared_ptr<const StoredMessage> message, std::vector<QueueCopy> copies, Confirm done) {
  State* s = state_.get();
  const size_t bytes = State::copy_bytes(*message) * copies.size();
  s->unwritten.fetch_add(bytes, std::memory_order_relaxed);
  // The bytes count until the copies are written (or refused): the confirm is where that is known.
  Confirm counted = [s, bytes, done = std::move(done)](size_t stored, const Status& status) {
    s->unwritten.fetch_sub(bytes, std::memory_order_relaxed);
    if (done) done(stored, status);
  };
  s->post([s, message = std::move(message), copies = std::move(copies), counted = std::move(counted)]() mutable {
    s->enqueue(message, copies, std::move(counted));
  });
}

bool DurableQueues::behind() const {
  const size_t cap = state_->options.max_unwritten_bytes;
  return cap && state_->unwritten.load(std::memory_order_relaxed) > cap;
}

void DurableQueues::replay(QueueCopy queue, EndpointPtr endpoint) {
  state_->post([s = state_.get(), queue = std::move(queue), endpoint = std::move(endpoint)] { s->replay(queue, endpoint); });
}

void DurableQueues::ack(std::string realm, std::string socket_id, std::string msg_id, AckReply reply) {
  state_->post([s = state_.get(), realm = std::move(realm), socket_id = std::move(socket_id), msg_id = std::move(msg_id),
                reply = std::move(reply)]() mutable { s->ack(realm, socket_id, msg_id, std::move(reply)); });
}

void DurableQueues::socket_closed(std::string socket_id) {
  state_->post([s = state_.get(), socket_id = std::move(socket_id)] { s->socket_closed(socket_id); });
}

void DurableQueues::save_subscription(DurableSubscription subscription) {
  state_->post([s = state_.get(), sub = std::move(subscription)]() mutable { s->save_subscription(std::move(sub)); });
}

void DurableQueues::remove_subscription(DurableSubscription subscription, bool drop_queue) {
  state_->post([s = state_.get(), sub = std::move(subscription), drop_queue] {
    s->remove_subscription(sub, drop_queue);
  });
}

void DurableQueues::dlq_list(std::optional<std::string> realm, std::function<void(std::vector<store::DeadRow>)> done) {
  state_->post([s = state_.get(), realm = std::move(realm), done = std::move(done)] {
    std::vector<store::DeadRow> out;
    for (const auto& [seq, d] : s->dead) {
      if (!realm || d.row.realm == *realm) out.push_back(d);
    }
    done(std::move(out));
  });
}

void DurableQueues::dlq_discard(std::string msg_id, std::optional<std::string> realm,
                                std::function<void(const Status&)> done) {
  state_->post([s = state_.get(), msg_id = std::move(msg_id), realm = std::move(realm), done = std::move(done)] {
    auto d = s->dead_by_id.find(msg_id);
    if (d == s->dead_by_id.end() || (realm && s->dead.at(d->second).row.realm != *realm))
      return done(make_error("DLQ entry not found", 404));
    uint64_t seq = d->second;
    s->dead.erase(seq);
    s->dead_by_id.erase(d);
    s->submit({store::erase_dead(seq)}, done);
  });
}

void DurableQueues::dlq_replay(std::string msg_id, std::optional<std::string> realm,
                               std::function<void(const Result<std::string>&)> done) {
  state_->post([s = state_.get(), msg_id = std::move(msg_id), realm = std::move(realm), done = std::move(done)] {
    auto d = s->dead_by_id.find(msg_id);
    if (d != s->dead_by_id.end() && realm && s->dead.at(d->second).row.realm != *realm)
      return done(make_error("DLQ entry not found", 404));
    s->dlq_replay(msg_id, done);
  });
}

void DurableQueues::purge_realm(std::string realm, std::function<void(const Status&)> done) {
  state_->post([s = state_.get(), realm = std::move(realm), done = std::move(done)] { s->purge_realm(realm, done); });
}

void DurableQueues::move_store(store::Backend& next, std::function<void(const Status&)> done, MoveAlong along) {
  state_->post([s = state_.get(), &next, done = std::move(done), along = std::move(along)]() mutable {
    // The whole state as it is now; whatever was submitted before reaches the old backend first, and
    // everything submitted after this goes to the new one.
    s->flush();
    std::vector<store::Op> ops;
    for (const auto& [id, e] : s->by_id) ops.push_back(store::put(e->row));
    for (const auto& [seq, d] : s->dead) ops.push_back(store::put(d));
    for (const auto& [id, spec] : s->stored_specs) {
      size_t a = id.find('\0');
      size_t b = id.find('\0', a + 1);
      store::SubscriptionRecord rec{id.substr(0, a), id.substr(a + 1, b - a - 1), id.substr(b + 1), spec};
      ops.push_back(store::put(rec));
    }
    auto commit = [s, &next, &done](std::vector<store::Op> all) { s->writer.switch_to(next, std::move(all), std::move(done)); };
    if (along) along(std::move(ops), commit);
    else commit(std::move(ops));
  });
}

void DurableQueues::set_default_ttl(std::optional<int64_t> ttl_ms) {
  state_->post([s = state_.get(), ttl_ms] { s->options.default_ttl_ms = ttl_ms; });
}

void DurableQueues::stats(std::function<void(const QueueStats&)> done) {
  state_->post([s = state_.get(), done = std::move(done)] { done(s->totals()); });
}

QueueStats DurableQueues::State::totals() const {
  QueueStats out = counters;
  out.queues = queues.size();
  out.queued = by_id.size();
  out.queued_bytes = total_bytes;
  out.dead = dead.size();
  for (const auto& [socket, c] : connections) {
    for (const Entry* e = c.first; e; e = e->next_out) out.in_flight += e->phase == Phase::in_flight;
  }
  return out;
}

}  // namespace siomq::broker
