// The dead-letter queue (§5.6): a copy out of attempts goes there; a DLQ entry can be replayed.
#include "broker/queue_state.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>

#include "wire/log_text.h"

namespace siomq::broker {

void DurableQueues::State::dead_letter(Entry& e, std::string reason) {
  store::DeadRow d{e.row, std::move(reason), unix_ms()};
  std::vector<store::Op> ops{store::erase_row(d.row.seq), store::put(d)};
  spdlog::info("dead-lettered {} for {} in realm {}: {}", d.row.id, log_text(d.row.consumer), d.row.realm, d.reason);
  observe([&](QueueObserver& o) { o.dead_lettered(d.row.realm); });  // before d is moved
  dead_by_id[d.row.id] = d.row.seq;
  dead.emplace(d.row.seq, std::move(d));
  ++counters.dead_lettered;
  Queue& q = *e.queue;
  remove(e);
  submit(std::move(ops));
  pump(q);
}

void DurableQueues::State::dlq_replay(const std::string& msg_id,
                                      const std::function<void(const Result<std::string>&)>& done) {
  auto d = dead_by_id.find(msg_id);
  if (d == dead_by_id.end()) return done(make_error("DLQ entry not found", 404));
  store::DeadRow dead_row = std::move(dead.at(d->second));
  dead.erase(d->second);
  dead_by_id.erase(d);
  QueueCopy where{dead_row.row.realm, dead_row.row.event, dead_row.row.consumer, {}, {}};
  Queue& q = queue_for(where);
  store::Row row = std::move(dead_row.row);
  uint64_t old_seq = row.seq;
  row.seq = next_seq();
  row.id = new_id(row.seq);
  row.created_ms = unix_ms();
  row.expires_ms = options.default_ttl_ms ? std::max<int64_t>(1, row.created_ms + *options.default_ttl_ms) : 0;
  std::vector<store::Op> ops{store::erase_dead(old_seq), store::put(row)};
  std::string id = row.id;
  Ref ref = await(add(q, std::move(row), false));
  observe([&](QueueObserver& o) { o.stored(q.realm); });
  submit(std::move(ops), [this, id, ref, done](const Status& status) {
    // A full replay of the queue for an online consumer, as the reference does, before the copy's own
    // commit: the replay stops at the copy (still being written, and the queue's newest), which the
    // commit then sends once. The other way round the replay sent it a second time, as a copy in flight.
    if (Entry* e = status ? peek(ref) : nullptr) {
      Queue& queue = *e->queue;
      if (EndpointPtr to = endpoint_of(queue))
        replay(QueueCopy{queue.realm, queue.key, queue.consumer_id, queue.consumer, queue.policy}, to);
    }
    committed({ref}, status, {});
    if (!status) return done(status.error());
    done(id);
  });
}

}  // namespace siomq::broker

namespace siomq::broker {

// Each shard keeps the DLQ entries of its queues; the list is theirs merged, oldest (lowest seq) first.
void DurableQueues::dlq_list(std::optional<std::string> realm, std::function<void(std::vector<store::DeadRow>)> done) {
  gather<std::vector<store::DeadRow>>(
      shards_,
      [realm](State& s, std::function<void(std::vector<store::DeadRow>)> reply) {
        std::vector<store::DeadRow> out;
        for (const auto& [seq, d] : s.dead) {
          if (!realm || d.row.realm == *realm) out.push_back(d);
        }
        reply(std::move(out));
      },
      [done](std::vector<std::vector<store::DeadRow>> parts) {
        std::vector<store::DeadRow> all = std::move(parts[0]);
        for (size_t i = 1; i < parts.size(); ++i) {
          const size_t mid = all.size();
          all.insert(all.end(), std::make_move_iterator(parts[i].begin()), std::make_move_iterator(parts[i].end()));
          std::inplace_merge(all.begin(), all.begin() + mid, all.end(),
                             [](const store::DeadRow& a, const store::DeadRow& b) { return a.row.seq < b.row.seq; });
        }
        done(std::move(all));
      });
}

void DurableQueues::dlq_discard(std::string msg_id, std::optional<std::string> realm,
                                std::function<void(const Status&)> done) {
  auto home = shared_->home_of_message(msg_id);
  ask_in_turn(shards_, home, [msg_id, realm, done](State& s, std::function<void()> next) {
    auto d = s.dead_by_id.find(msg_id);
    if (d == s.dead_by_id.end() && next) return next();
    if (d == s.dead_by_id.end() || (realm && s.dead.at(d->second).row.realm != *realm))
      return done(make_error("DLQ entry not found", 404));
    uint64_t seq = d->second;
    s.dead.erase(seq);
    s.dead_by_id.erase(d);
    s.submit({store::erase_dead(seq)}, done);
  });
}

void DurableQueues::dlq_replay(std::string msg_id, std::optional<std::string> realm,
                               std::function<void(const Result<std::string>&)> done) {
  auto home = shared_->home_of_message(msg_id);
  ask_in_turn(shards_, home, [msg_id, realm, done](State& s, std::function<void()> next) {
    auto d = s.dead_by_id.find(msg_id);
    if (d == s.dead_by_id.end() && next) return next();
    if (d != s.dead_by_id.end() && realm && s.dead.at(d->second).row.realm != *realm)
      return done(make_error("DLQ entry not found", 404));
    s.dlq_replay(msg_id, done);
  });
}

}  // namespace siomq::broker
