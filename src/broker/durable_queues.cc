// The public API of the durable queues: their shards made, loaded, started and stopped, and each request's
// hop onto the queues thread of the queue it concerns (or onto every one, gathering their answers). The
// DLQ's requests are in dead_letters.cc, a node's moves in queue_moves.cc, the console's view in
// queue_view.cc.
#include "broker/durable_queues.h"

#include <spdlog/spdlog.h>

#include <condition_variable>

#include "broker/queue_state.h"
#include "store/writer.h"
#include "wire/thread_role.h"

namespace siomq::broker {

void add_counts(QueueStats& sum, const QueueStats& s) {
  sum.queues += s.queues;
  sum.queued += s.queued;
  sum.in_flight += s.in_flight;
  sum.dead += s.dead;
  sum.enqueued += s.enqueued;
  sum.acked += s.acked;
  sum.redelivered += s.redelivered;
  sum.ack_timeouts += s.ack_timeouts;
  sum.dead_lettered += s.dead_lettered;
  sum.expired += s.expired;
  sum.dropped_over_cap += s.dropped_over_cap;
  sum.store_failures += s.store_failures;
  sum.quarantined += s.quarantined;
}

namespace {

// Whether the ACK of `id` in `realm` is for this shard: not if the id is not here, or is another realm's
// copy of the same id (ids made elsewhere are unique per shard only).
bool holds(const DurableQueues::State& s, const std::string& id, const std::string& realm) {
  auto it = s.by_id.find(id);
  return it != s.by_id.end() && it->second->queue->realm == realm;
}

}  // namespace

void ask_in_turn(const Shards& shards, size_t home, std::function<void(DurableQueues::State&, std::function<void()>)> ask,
                 size_t asked) {
  DurableQueues::State* s = shards[(home + asked) % shards.size()].get();
  s->post([&shards, home, asked, s, ask = std::move(ask)]() mutable {
    if (asked + 1 == shards.size()) return ask(*s, nullptr);
    auto next = [&shards, home, asked, ask] { ask_in_turn(shards, home, ask, asked + 1); };
    ask(*s, next);
  });
}

DurableQueues::DurableQueues(Broker& broker, store::Writer& writer, QueueOptions options)
    : shared_(std::make_unique<Shared>(std::clamp<size_t>(options.shards, 1, Shared::kMaxShards))) {
  QueueOptions own = options;
  // A connection's copies may come from every shard: each has its share of the connection's window.
  own.window_bytes = std::max<size_t>(1, options.window_bytes / shared_->shards);
  for (size_t i = 0; i < shared_->shards; ++i) shards_.push_back(std::make_unique<State>(broker, writer, own, *shared_, i));
}

DurableQueues::~DurableQueues() { stop(); }

DurableQueues::State& DurableQueues::shard_of_queue(std::string_view realm, std::string_view key,
                                                    std::string_view consumer_id) const {
  if (shards_.size() == 1) return *shards_[0];
  thread_local std::string id;  // no allocation per copy routed
  id.clear();
  store::append_subscription_id(id, realm, key, consumer_id);  // as queue_id() joins them
  return *shards_[shared_->shard_of(id)];
}

size_t DurableQueues::shard_of(std::string_view realm, std::string_view key, std::string_view consumer_id) const {
  return shard_of_queue(realm, key, consumer_id).index;
}

std::vector<DurableSubscription> DurableQueues::load(store::Backend::Contents contents, const ReadSubscription& read) {
  std::vector<DurableSubscription> out;
  std::vector<store::Op> purge;
  uint64_t quarantined = contents.quarantined;
  uint64_t next_seq = 1;
  for (auto& rec : contents.subscriptions) {
    auto sub = read(rec);
    if (!sub) {
      // A record the store could read but the engine cannot use: moved aside like the store's own.
      spdlog::warn("store: a durable subscription of {} bytes cannot be used; moved to the quarantine", rec.spec.size());
      purge.push_back(store::quarantine(rec));
      ++quarantined;
      continue;
    }
    shards_[0]->stored_specs[store::subscription_id(rec.realm, rec.key, rec.consumer)] = rec.spec;
    shard_of_queue(rec.realm, rec.key, sub->consumer_id)
        .queue_for(QueueCopy{rec.realm, rec.key, sub->consumer_id, sub->consumer, sub->policy});
    out.push_back(std::move(*sub));
  }
  int64_t now = unix_ms();
  size_t rows = 0;
  for (auto& row : contents.rows) {
    next_seq = std::max(next_seq, row.seq + 1);
    if (row.expires_ms && row.expires_ms <= now) {
      purge.push_back(store::erase_row(row.seq));
      ++shards_[0]->counters.expired;
      continue;
    }
    State& s = shard_of_queue(row.realm, row.event, row.consumer);
    // (Its queue first, in a statement of its own: an argument list may move the row before reading it.)
    State::Queue& q = s.queue_for(QueueCopy{row.realm, row.event, row.consumer, {}, {}});
    s.add(q, std::move(row), true);
    ++rows;
  }
  for (auto& d : contents.dead) {
    next_seq = std::max(next_seq, d.row.seq + 1);
    State& s = shard_of_queue(d.row.realm, d.row.event, d.row.consumer);
    s.dead_by_id[d.row.id] = d.row.seq;
    s.dead.emplace(d.row.seq, std::move(d));
  }
  shared_->next_seq.store(next_seq);
  shards_[0]->submit(std::move(purge));
  shards_[0]->flush();  // now: the thread that would flush it has not started
  shards_[0]->counters.quarantined = quarantined;
  size_t queues = 0, dead = 0;
  for (const auto& s : shards_) {
    queues += s->queues.size();
    dead += s->dead.size();
  }
  spdlog::info("store: {} queued messages in {} queues, {} dead-lettered, {} durable subscriptions, {} quarantined",
               rows, queues, dead, out.size(), quarantined);
  return out;
}

void DurableQueues::start() {
  for (auto& shard : shards_) {
    State& s = *shard;
    s.work.emplace(s.io.get_executor());
    s.schedule_expiry_sweep();
    // One shard's thread is "siomq-queues"; several are told apart in ps, top and perf by their index.
    std::string name = shards_.size() == 1 ? "siomq-queues" : "siomq-queues-" + std::to_string(s.index);
    s.thread = std::thread([&s, name] {
      become_background_thread(name.c_str());
      s.io.run();
    });
  }
}

void DurableQueues::stop() {
  for (auto& shard : shards_) {
    State& s = *shard;
    if (!s.thread.joinable()) continue;
    s.post([&s] {
      s.flush();  // what was submitted reaches the writer, which is drained after this
      s.expiry_timer.cancel();
      s.work.reset();
      s.io.stop();
    });
  }
  for (auto& shard : shards_) {
    if (shard->thread.joinable()) shard->thread.join();
  }
}

void DurableQueues::enqueue(std::shared_ptr<const StoredMessage> message, std::vector<QueueCopy> copies, Confirm done) {
  Shared* shared = shared_.get();
  const size_t bytes = State::copy_bytes(*message) * copies.size();
  shared->unwritten.fetch_add(bytes, std::memory_order_relaxed);
  // The bytes count until the copies are written (or refused): the confirm is where that is known.
  Confirm counted = [shared, bytes, done = std::move(done)](size_t stored, const Status& status) {
    shared->unwritten.fetch_sub(bytes, std::memory_order_relaxed);
    if (done) done(stored, status);
  };
  auto post_to = [&message](State* s, std::vector<QueueCopy> part, Confirm confirm) {
    s->post([s, message, part = std::move(part), confirm = std::move(confirm)]() mutable {
      s->enqueue(message, part, std::move(confirm));
    });
  };
  if (shards_.size() == 1 || copies.empty()) return post_to(shards_[0].get(), std::move(copies), std::move(counted));
  // Usually every copy is one shard's (a single copy, or copies for queues of one shard): no split.
  const size_t first = shard_of_queue(copies[0].realm, copies[0].key, copies[0].consumer_id).index;
  if (copies.size() == 1) return post_to(shards_[first].get(), std::move(copies), std::move(counted));
  std::vector<uint8_t> where(copies.size(), static_cast<uint8_t>(first));
  bool one = true;
  for (size_t i = 1; i < copies.size(); ++i) {
    where[i] = static_cast<uint8_t>(shard_of_queue(copies[i].realm, copies[i].key, copies[i].consumer_id).index);
    one = one && where[i] == first;
  }
  if (one) return post_to(shards_[first].get(), std::move(copies), std::move(counted));
  // Each shard stores the copies of its queues; the confirm waits for all of them.
  std::vector<std::vector<QueueCopy>> parts(shards_.size());
  for (size_t i = 0; i < copies.size(); ++i) parts[where[i]].push_back(std::move(copies[i]));
  const size_t touched = std::count_if(parts.begin(), parts.end(), [](const auto& p) { return !p.empty(); });
  struct Confirms {
    std::mutex mu;
    size_t left, stored = 0;
    std::optional<Error> error;
    Confirm done;
  };
  auto all = std::make_shared<Confirms>();
  all->left = touched;
  all->done = std::move(counted);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    post_to(shards_[i].get(), std::move(parts[i]), [all](size_t stored, const Status& status) {
      std::unique_lock lock(all->mu);
      all->stored += stored;
      if (!status && !all->error) all->error = status.error();
      if (--all->left) return;
      lock.unlock();
      // A failure on one shard is the message's, as one across nodes is (the tyo-mq surface's ConfirmJoin):
      // the producer is told, though the other shards' copies stay stored, and a retry stores them again.
      if (all->error) all->done(all->stored, *all->error);
      else all->done(all->stored, Ok{});
    });
  }
}

bool DurableQueues::behind() const {
  const size_t cap = shards_[0]->options.max_unwritten_bytes;
  return cap && shared_->unwritten.load(std::memory_order_relaxed) > cap;
}

void DurableQueues::replay(QueueCopy queue, EndpointPtr endpoint) {
  State* s = &shard_of_queue(queue.realm, queue.key, queue.consumer_id);
  s->post([s, queue = std::move(queue), endpoint = std::move(endpoint)] { s->replay(queue, endpoint); });
}

void DurableQueues::ack(std::string realm, std::string socket_id, std::string msg_id, AckReply reply) {
  // To the shard the id names (the one that made it); one that does not know it passes the ACK on.
  const size_t home = shared_->home_of_message(msg_id);
  State* s = shards_[home].get();
  s->post([this, s, home, realm = std::move(realm), socket_id = std::move(socket_id), msg_id = std::move(msg_id),
           reply = std::move(reply)]() mutable {
    if (shards_.size() > 1 && !holds(*s, msg_id, realm))
      return pass_ack_on(home, std::move(realm), std::move(socket_id), std::move(msg_id), std::move(reply));
    s->ack(realm, socket_id, msg_id, std::move(reply));
  });
}

void DurableQueues::pass_ack_on(size_t home, std::string realm, std::string socket_id, std::string msg_id, AckReply reply) {
  struct Ack {
    std::string realm, socket, id;
    AckReply reply;
  };
  auto a = std::make_shared<Ack>(Ack{std::move(realm), std::move(socket_id), std::move(msg_id), std::move(reply)});
  ask_in_turn(
      shards_, home,
      [a](State& s, std::function<void()> next) {
        if (next && !holds(s, a->id, a->realm)) return next();
        s.ack(a->realm, a->socket, a->id, std::move(a->reply));
      },
      1);
}

void DurableQueues::socket_closed(std::string socket_id) {
  for (auto& shard : shards_) shard->post([s = shard.get(), socket_id] { s->socket_closed(socket_id); });
}

void DurableQueues::save_subscription(DurableSubscription subscription) {
  State* s = shards_[0].get();  // every stored subscription's
  s->post([s, sub = std::move(subscription)]() mutable { s->save_subscription(std::move(sub)); });
}

void DurableQueues::remove_subscription(DurableSubscription subscription, bool drop_queue) {
  if (drop_queue) {
    State* q = &shard_of_queue(subscription.realm, subscription.key, subscription.consumer_id);
    q->post([q, sub = subscription] { q->drop_queue(sub); });
  }
  State* s = shards_[0].get();
  s->post([s, sub = std::move(subscription)] { s->remove_subscription(sub); });
}

void DurableQueues::purge_realm(std::string realm, std::function<void(const Status&)> done) {
  gather<std::optional<Error>>(
      shards_,
      [realm](State& s, std::function<void(std::optional<Error>)> reply) {
        s.purge_realm(realm, [reply](const Status& st) { reply(st ? std::nullopt : std::optional<Error>(st.error())); });
      },
      [done](std::vector<std::optional<Error>> parts) {
        if (!done) return;
        for (auto& e : parts)
          if (e) return done(*e);
        done(Ok{});
      });
}

std::vector<store::Op> DurableQueues::State::records() const {
  std::vector<store::Op> ops;
  for (const auto& [id, e] : by_id) ops.push_back(store::put(e->row));
  for (const auto& [seq, d] : dead) ops.push_back(store::put(d));
  for (const auto& [id, spec] : stored_specs) {
    if (auto rec = subscription_record(id, spec)) ops.push_back(store::put(*rec));
  }
  return ops;
}

void DurableQueues::move_store(store::Backend& next, std::function<void(const Status&)> done, MoveAlong along) {
  // The whole state as it is now: whatever was submitted before reaches the old backend first, and
  // everything submitted after goes to the new one. So every shard flushes, hands over its records and
  // waits, submitting nothing, until the last one to arrive has switched the writer.
  struct Move {
    std::mutex mu;
    std::condition_variable switched_cv;
    size_t arrived = 0;
    bool switched = false;
    std::vector<store::Op> ops;
    std::function<void(const Status&)> done;
    MoveAlong along;
  };
  auto m = std::make_shared<Move>();
  m->done = std::move(done);
  m->along = std::move(along);
  const size_t n = shards_.size();
  for (auto& shard : shards_) {
    shard->post([s = shard.get(), m, n, &next] {
      s->flush();
      std::vector<store::Op> mine = s->records();
      std::unique_lock lock(m->mu);
      m->ops.insert(m->ops.end(), std::make_move_iterator(mine.begin()), std::make_move_iterator(mine.end()));
      if (++m->arrived < n) return m->switched_cv.wait(lock, [&] { return m->switched; });
      std::vector<store::Op> all = std::move(m->ops);
      lock.unlock();
      auto commit = [s, &next, m](std::vector<store::Op> ops) { s->writer.switch_to(next, std::move(ops), std::move(m->done)); };
      if (m->along) m->along(std::move(all), commit);
      else commit(std::move(all));
      lock.lock();
      m->switched = true;
      m->switched_cv.notify_all();
    });
  }
}

void DurableQueues::set_default_ttl(std::optional<int64_t> ttl_ms) {
  for (auto& shard : shards_) shard->post([s = shard.get(), ttl_ms] { s->options.default_ttl_ms = ttl_ms; });
}

void DurableQueues::stats(std::function<void(const QueueStats&)> done) {
  Shared* shared = shared_.get();
  gather<QueueStats>(
      shards_, [](State& s, std::function<void(QueueStats)> reply) { reply(s.totals()); },
      [shared, done](std::vector<QueueStats> parts) {
        QueueStats sum;
        for (const auto& p : parts) add_counts(sum, p);
        sum.queued_bytes = shared->queued_bytes();
        done(sum);
      });
}

QueueStats DurableQueues::State::totals() const {
  QueueStats out = counters;
  out.queues = queues.size();
  out.queued = by_id.size();
  out.dead = dead.size();
  for (const auto& [socket, c] : connections) {
    for (const Entry* e = c.first; e; e = e->next_out) out.in_flight += e->phase == Phase::in_flight;
  }
  return out;
}

}  // namespace siomq::broker
