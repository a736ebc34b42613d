// The dead-letter queue (§5.6): a copy out of attempts goes there; a DLQ entry can be replayed.
#include "broker/queue_state.h"

#include <spdlog/spdlog.h>

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
  row.seq = next_seq++;
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
