// Durable queues across nodes (docs/scale-out.md "Durable queues across nodes"): a consumer's queues
// released to go to another node, their records forgotten once stored there, and another node's records
// adopted as this node's own.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "broker/queue_state.h"

namespace siomq::broker {

namespace {

// A stored subscription id (realm NUL key NUL consumer) split; nullopt when it is not one.
std::optional<store::SubscriptionRecord> record_of(const std::string& id, const std::string& spec) {
  size_t a = id.find('\0');
  size_t b = a == std::string::npos ? a : id.find('\0', a + 1);
  if (b == std::string::npos) return std::nullopt;
  return store::SubscriptionRecord{id.substr(0, a), id.substr(a + 1, b - a - 1), id.substr(b + 1), spec};
}

}  // namespace

DurableQueues::Moved DurableQueues::State::release(const std::string& realm, const std::string& consumer) {
  Moved out;
  for (auto it = queues.begin(); it != queues.end();) {
    Queue& q = it->second;
    if (q.realm != realm || q.consumer != consumer) {
      ++it;
      continue;
    }
    std::vector<Entry*> all;
    for (auto& [seq, e] : q.entries) all.push_back(&e);
    for (Entry* e : all) {
      out.rows.push_back(e->row);
      remove(*e);
    }
    emptied.erase(q.id);
    it = queues.erase(it);
  }
  // Its stored subscriptions: ids end with NUL and the name. A scan of the node's subscriptions: moves are
  // rare (a consumer that reconnects elsewhere), subscribing is not.
  const std::string tail = std::string(1, '\0') + consumer;
  for (auto it = stored_specs.begin(); it != stored_specs.end();) {
    auto rec = it->first.size() > tail.size() && it->first.ends_with(tail) ? record_of(it->first, it->second) : std::nullopt;
    if (!rec || rec->realm != realm || rec->consumer != consumer) {
      ++it;
      continue;
    }
    out.subscriptions.push_back(std::move(*rec));
    it = stored_specs.erase(it);
  }
  return out;
}

void DurableQueues::State::adopt(store::Backend::Contents& contents, const ReadSubscription& read, const Adopted& done) {
  std::vector<store::Op> ops;
  std::vector<DurableSubscription> subs;
  for (auto& rec : contents.subscriptions) {
    auto sub = read(rec);
    if (!sub) continue;  // unusable: dropped with the section
    // One made here since (the consumer subscribed here again) is newer: it stays, and so does the policy
    // its queue has from it.
    auto [at, fresh] = stored_specs.try_emplace(store::subscription_id(rec.realm, rec.key, rec.consumer), rec.spec);
    Queue& q = queue_for(QueueCopy{rec.realm, rec.key, sub->consumer_id, {}, {}});
    if (fresh || q.consumer.empty()) {
      q.consumer = sub->consumer;
      q.policy = sub->policy;
    }
    if (!fresh) continue;
    ops.push_back(store::put(rec));
    subs.push_back(std::move(*sub));
  }
  const int64_t now = unix_ms();
  std::vector<Ref> refs;
  for (auto& row : contents.rows) {  // by seq: each queue keeps its order
    if ((row.expires_ms && row.expires_ms <= now) || by_id.count(row.id) || dead_by_id.count(row.id)) continue;
    row.seq = next_seq();
    Queue& q = queue_for(QueueCopy{row.realm, row.event, row.consumer, {}, {}});
    ops.push_back(store::put(row));
    refs.push_back(await(add(q, std::move(row), false)));
    ++counters.enqueued;
  }
  std::vector<store::DeadRow> dead_rows;
  for (auto& d : contents.dead) {
    if (by_id.count(d.row.id) || dead_by_id.count(d.row.id)) continue;
    d.row.seq = next_seq();
    ops.push_back(store::put(d));
    dead_rows.push_back(std::move(d));
  }
  const size_t rows = refs.size();
  submit(std::move(ops), [this, refs = std::move(refs), dead_rows = std::move(dead_rows), subs = std::move(subs), rows,
                          done](const Status& status) mutable {
    // Committed copies go out to consumers online here; copies that were not written are forgotten.
    committed(refs, status, nullptr);
    if (status) {
      for (auto& d : dead_rows) {
        dead_by_id[d.row.id] = d.row.seq;
        dead.emplace(d.row.seq, std::move(d));
      }
      spdlog::info("store: adopted {} queued messages, {} dead-lettered, {} durable subscriptions", rows,
                   dead_rows.size(), subs.size());
    }
    done(status, std::move(subs));
  });
}

// A consumer's queues may be on every shard: each releases its own, and the rows are merged by seq.
void DurableQueues::release(std::string realm, std::string consumer, std::function<void(Moved)> done) {
  gather<Moved>(
      shards_, [realm, consumer](State& s, std::function<void(Moved)> reply) { reply(s.release(realm, consumer)); },
      [done](std::vector<Moved> parts) {
        Moved all = std::move(parts[0]);
        for (size_t i = 1; i < parts.size(); ++i) {
          all.rows.insert(all.rows.end(), std::make_move_iterator(parts[i].rows.begin()),
                          std::make_move_iterator(parts[i].rows.end()));
          all.subscriptions.insert(all.subscriptions.end(), std::make_move_iterator(parts[i].subscriptions.begin()),
                                   std::make_move_iterator(parts[i].subscriptions.end()));
        }
        if (parts.size() > 1)
          std::sort(all.rows.begin(), all.rows.end(), [](const store::Row& a, const store::Row& b) { return a.seq < b.seq; });
        done(std::move(all));
      });
}

void DurableQueues::consumers(std::function<void(Consumers)> done) {
  using Set = std::set<std::pair<std::string, std::string>>;
  gather<Set>(
      shards_,
      [](State& s, std::function<void(Set)> reply) {
        Set all;
        for (const auto& [id, spec] : s.stored_specs) {
          if (auto rec = record_of(id, spec)) all.emplace(rec->realm, rec->consumer);
        }
        for (const auto& [id, q] : s.queues) {
          if (!q.entries.empty() && !q.consumer.empty()) all.emplace(q.realm, q.consumer);
        }
        reply(std::move(all));
      },
      [done](std::vector<Set> parts) {
        Set all;
        for (auto& p : parts) all.merge(p);
        done(Consumers(all.begin(), all.end()));
      });
}

// The subscriptions go to the shard of their queue, which alone may have stored one again since; the
// rows' erasures to the first shard (their seqs are no one's now).
void DurableQueues::forget(Moved moved, std::function<void(const Status&)> done) {
  std::vector<std::vector<store::SubscriptionRecord>> subs(shards_.size());
  for (auto& rec : moved.subscriptions) {
    auto sub = read_ ? read_(rec) : std::nullopt;
    size_t i = sub ? shard_of_queue(rec.realm, rec.key, sub->consumer_id).index : 0;
    subs[i].push_back(std::move(rec));
  }
  auto rows = std::make_shared<std::vector<store::Row>>(std::move(moved.rows));
  auto by_shard = std::make_shared<std::vector<std::vector<store::SubscriptionRecord>>>(std::move(subs));
  gather<std::optional<Error>>(
      shards_,
      [rows, by_shard](State& s, std::function<void(std::optional<Error>)> reply) {
        std::vector<store::Op> ops;
        if (s.index == 0) {
          // A row adopted back here (a move that failed) has a seq of its own now; this one is the old record.
          for (const auto& row : *rows) ops.push_back(store::erase_row(row.seq));
        }
        for (const auto& rec : (*by_shard)[s.index]) {
          std::string id = store::subscription_id(rec.realm, rec.key, rec.consumer);
          if (!s.stored_specs.count(id)) ops.push_back(store::erase_subscription(std::move(id)));
        }
        s.submit(std::move(ops), [reply](const Status& st) { reply(st ? std::nullopt : std::optional<Error>(st.error())); });
      },
      [done](std::vector<std::optional<Error>> parts) {
        if (!done) return;
        for (auto& e : parts)
          if (e) return done(*e);
        done(Ok{});
      });
}

// Each shard adopts the records of its queues; `done` has every shard's subscriptions.
void DurableQueues::adopt(store::Backend::Contents contents, ReadSubscription read, Adopted done) {
  auto parts = std::make_shared<std::vector<store::Backend::Contents>>(shards_.size());
  for (auto& rec : contents.subscriptions) {
    auto sub = read(rec);
    size_t i = sub ? shard_of_queue(rec.realm, rec.key, sub->consumer_id).index : 0;
    (*parts)[i].subscriptions.push_back(std::move(rec));
  }
  for (auto& row : contents.rows)  // by seq: each part keeps its queues' order
    (*parts)[shard_of_queue(row.realm, row.event, row.consumer).index].rows.push_back(std::move(row));
  for (auto& d : contents.dead)
    (*parts)[shard_of_queue(d.row.realm, d.row.event, d.row.consumer).index].dead.push_back(std::move(d));
  using Part = std::pair<std::optional<Error>, std::vector<DurableSubscription>>;
  gather<Part>(
      shards_,
      [parts, read](State& s, std::function<void(Part)> reply) {
        s.adopt((*parts)[s.index], read, [reply](const Status& st, std::vector<DurableSubscription> subs) {
          reply({st ? std::nullopt : std::optional<Error>(st.error()), std::move(subs)});
        });
      },
      [done](std::vector<Part> answers) {
        std::optional<Error> error;
        std::vector<DurableSubscription> subs;
        for (auto& [e, s] : answers) {
          if (e && !error) error = e;
          subs.insert(subs.end(), std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
        }
        if (error) done(*error, std::move(subs));
        else done(Ok{}, std::move(subs));
      });
}

}  // namespace siomq::broker
