// Durable queues across nodes (docs/scale-out.md "Durable queues across nodes"): a consumer's queues
// released to go to another node, their records forgotten once stored there, and another node's records
// adopted as this node's own.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <set>

#include "broker/queue_state.h"

namespace siomq::broker {

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
    auto rec = it->first.size() > tail.size() && it->first.ends_with(tail) ? subscription_record(it->first, it->second) : std::nullopt;
    if (!rec || rec->realm != realm || rec->consumer != consumer) {
      ++it;
      continue;
    }
    out.subscriptions.push_back(std::move(*rec));
    it = stored_specs.erase(it);
  }
  return out;
}

void DurableQueues::State::adopt(store::Backend::Contents& contents, const std::vector<DurableSubscription>& subs,
                                 std::vector<store::Op> ops, const std::function<void(const Status&, size_t rows, size_t dead)>& done) {
  for (const DurableSubscription& sub : subs) {
    // A queue whose consumer is known here keeps it, and its policy: a subscription made here since (the
    // consumer subscribed here again) is newer.
    Queue& q = queue_for(QueueCopy{sub.realm, sub.key, sub.consumer_id, {}, {}});
    if (q.consumer.empty()) {
      q.consumer = sub.consumer;
      q.policy = sub.policy;
    }
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
  submit(std::move(ops), [this, refs = std::move(refs), dead_rows = std::move(dead_rows), rows, done](const Status& status) mutable {
    // Committed copies go out to consumers online here; copies that were not written are forgotten.
    committed(refs, status, nullptr);
    const size_t dead_count = dead_rows.size();
    if (status) {
      for (auto& d : dead_rows) {
        dead_by_id[d.row.id] = d.row.seq;
        dead.emplace(d.row.seq, std::move(d));
      }
    }
    done(status, rows, dead_count);
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
          if (auto rec = subscription_record(id, spec)) all.emplace(rec->realm, rec->consumer);
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

// Erased by the first shard, which holds every stored subscription (and alone may have stored one again
// since); the rows' seqs are no one's now.
void DurableQueues::forget(Moved moved, std::function<void(const Status&)> done) {
  State* s = shards_[0].get();
  s->post([s, moved = std::move(moved), done = std::move(done)] {
    std::vector<store::Op> ops;
    for (const auto& row : moved.rows) {
      // A row adopted back here (a move that failed) has a seq of its own now; this one is the old record.
      ops.push_back(store::erase_row(row.seq));
    }
    for (const auto& rec : moved.subscriptions) {
      std::string id = store::subscription_id(rec.realm, rec.key, rec.consumer);
      if (!s->stored_specs.count(id)) ops.push_back(store::erase_subscription(std::move(id)));
    }
    s->submit(std::move(ops), done);
  });
}

// Each shard adopts the rows, DLQ entries and subscribed queues of its queues; the first, which holds every
// stored subscription, also writes those new here (one stored here since is newer and stays). `done` once
// all of it is written, with the new subscriptions. Posted to every shard at once, so requests made after
// it (an ACK of an adopted copy) find what it adopted. (A failure on one shard is the whole adoption's,
// though the other shards' records are kept: the move is tried again and adopts them once, by their ids.)
void DurableQueues::adopt(store::Backend::Contents contents, ReadSubscription read, Adopted done) {
  auto parts = std::make_shared<std::vector<store::Backend::Contents>>(shards_.size());
  auto subs = std::make_shared<std::vector<std::vector<DurableSubscription>>>(shards_.size());
  auto records = std::make_shared<std::vector<std::pair<store::SubscriptionRecord, DurableSubscription>>>();
  for (auto& rec : contents.subscriptions) {
    auto sub = read(rec);
    if (!sub) continue;  // unusable: dropped with the section
    (*subs)[shard_of_queue(sub->realm, sub->key, sub->consumer_id).index].push_back(*sub);
    records->emplace_back(std::move(rec), std::move(*sub));
  }
  for (auto& row : contents.rows)  // by seq: each part keeps its queues' order
    (*parts)[shard_of_queue(row.realm, row.event, row.consumer).index].rows.push_back(std::move(row));
  for (auto& d : contents.dead)
    (*parts)[shard_of_queue(d.row.realm, d.row.event, d.row.consumer).index].dead.push_back(std::move(d));
  struct Part {
    std::optional<Error> error;
    size_t rows = 0, dead = 0;
    std::vector<DurableSubscription> fresh;
  };
  gather<Part>(
      shards_,
      [parts, subs, records](State& s, std::function<void(Part)> reply) {
        std::vector<store::Op> ops;
        auto fresh = std::make_shared<std::vector<DurableSubscription>>();
        if (s.index == 0) {
          for (const auto& [rec, sub] : *records) {
            if (!s.stored_specs.try_emplace(store::subscription_id(rec.realm, rec.key, rec.consumer), rec.spec).second)
              continue;
            ops.push_back(store::put(rec));
            fresh->push_back(sub);
          }
        }
        s.adopt((*parts)[s.index], (*subs)[s.index], std::move(ops), [reply, fresh](const Status& st, size_t rows, size_t dead) {
          reply({st ? std::nullopt : std::optional<Error>(st.error()), rows, dead, std::move(*fresh)});
        });
      },
      [done](std::vector<Part> answers) {
        Part sum;
        for (auto& a : answers) {
          if (a.error && !sum.error) sum.error = a.error;
          sum.rows += a.rows;
          sum.dead += a.dead;
          sum.fresh.insert(sum.fresh.end(), std::make_move_iterator(a.fresh.begin()), std::make_move_iterator(a.fresh.end()));
        }
        if (sum.error) return done(*sum.error, std::move(sum.fresh));
        spdlog::info("store: adopted {} queued messages, {} dead-lettered, {} durable subscriptions", sum.rows, sum.dead,
                     sum.fresh.size());
        done(Ok{}, std::move(sum.fresh));
      });
}

}  // namespace siomq::broker
