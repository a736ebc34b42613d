// Queues and their entries, the byte caps and payload charging, writes to the store and their hop back
// onto the queues thread, and a produced message's way in: enqueue, live delivery, commit.
#include "broker/queue_state.h"

#include <spdlog/spdlog.h>

#include <iterator>

#include "broker/broker.h"
#include "store/writer.h"
#include "wire/log_text.h"

namespace siomq::broker {

// (charge_payload and release_payload run under caps.mu: they move a realm's bytes.)
// An empty payload charges nothing and is not tracked: it would keep no realm's record alive (its bytes
// add nothing), and every empty SharedText is one buffer, shared by rows of any realm.
void DurableQueues::State::charge_payload(const store::Row& row, RealmUse& realm, bool precharged) {
  if (row.payload.size() == 0) return;
  PayloadUse& use = payloads[&row.payload.str()];
  if (use.rows++ > 0) return;
  use.realm = &realm;
  if (precharged) return;
  realm.bytes += row.payload.size();
  shared.caps.total_bytes += row.payload.size();
}

RealmUse* DurableQueues::State::release_payload(const store::Row& row) {
  if (row.payload.size() == 0) return nullptr;
  auto it = payloads.find(&row.payload.str());
  if (it == payloads.end() || --it->second.rows > 0) return nullptr;
  RealmUse* realm = it->second.realm;
  payloads.erase(it);
  shared.caps.total_bytes -= row.payload.size();
  realm->bytes -= row.payload.size();
  return realm;
}

bool DurableQueues::State::charge_if_fits(const std::string& realm, size_t bytes) {
  auto over = [](size_t cap, size_t now, size_t more) { return cap && now + more > cap; };
  QueueCaps& caps = shared.caps;
  std::lock_guard lock(caps.mu);
  RealmUse& use = realm_use_of(realm);
  if (over(options.max_queued_per_realm, use.rows, 1) || over(options.max_queued_bytes_per_realm, use.bytes, bytes) ||
      over(options.max_queued_bytes_total, caps.total_bytes, bytes)) {
    forget_unused(use);
    return false;
  }
  ++use.rows;
  use.bytes += bytes;
  caps.total_bytes += bytes;
  return true;
}

std::string DurableQueues::State::new_id(uint64_t seq) {
  const int shard = shared.shards == 1 ? -1 : static_cast<int>(index);
  for (;;) {
    std::string id = options.new_message_id ? options.new_message_id(seq, shard) : std::to_string(seq);
    if (!by_id.count(id) && !dead_by_id.count(id)) return id;
  }
}

DurableQueues::State::Queue* DurableQueues::State::find_queue(std::string_view realm, std::string_view key,
                                                              std::string_view consumer_id) {
  id_buffer.clear();
  store::append_subscription_id(id_buffer, realm, key, consumer_id);  // as queue_id() joins them
  auto it = queues.find(id_buffer);
  return it == queues.end() ? nullptr : &it->second;
}

DurableQueues::State::Queue& DurableQueues::State::queue_for(const QueueCopy& q) {
  Queue* queue = find_queue(q.realm, q.key, q.consumer_id);
  if (!queue) {
    auto it = queues.try_emplace(id_buffer).first;  // the id find_queue built
    queue = &it->second;
    queue->id = it->first;
    queue->realm = q.realm;
    queue->key = q.key;
    queue->consumer_id = q.consumer_id;
  }
  if (!q.consumer.empty()) {
    queue->consumer = q.consumer;
    queue->policy = q.policy;
  }
  return *queue;
}

DurableQueues::State::Entry& DurableQueues::State::add(Queue& q, store::Row row, bool committed, bool sole_payload,
                                                       bool precharged) {
  Entry& e = q.entries[row.seq];
  e.row = std::move(row);
  e.charge = charge_of(e.row.attachments);
  e.sole_payload = sole_payload;
  if (sole_payload) e.charge += e.row.payload.size();
  {
    std::lock_guard lock(shared.caps.mu);
    RealmUse& realm = realm_use_of(q.realm);
    if (!sole_payload) charge_payload(e.row, realm, precharged);
    if (!precharged) {
      ++realm.rows;
      realm.bytes += e.charge;
      shared.caps.total_bytes += e.charge;
    }
  }
  e.queue = &q;
  e.committed = committed;
  if (!committed) ++q.uncommitted;
  // The view is of this entry's id: one left by an entry with the same id (a damaged store's twin rows)
  // would outlive its string, so the key is made anew.
  if (auto [it, fresh] = by_id.try_emplace(e.row.id, &e); !fresh) {
    by_id.erase(it);
    by_id.emplace(e.row.id, &e);
  }
  if (e.row.expires_ms) expiries.emplace(e.row.expires_ms, &e);
  return e;
}

void DurableQueues::State::remove(Entry& e) {
  land(e);
  if (e.acking) --e.queue->acking;
  unlink_socket(e);
  cancel_due(e);
  if (e.row.expires_ms) expiries.erase({e.row.expires_ms, &e});
  Queue& q = *e.queue;
  if (!e.committed) --q.uncommitted;
  if (auto it = by_id.find(e.row.id); it != by_id.end() && it->second == &e) by_id.erase(it);
  if (e.awaited) gone_awaited[e.row.seq] += e.awaited;
  {
    std::lock_guard lock(shared.caps.mu);
    RealmUse& realm = shared.caps.realms.find(q.realm)->second;  // held since add(): its rows count this one
    --realm.rows;
    realm.bytes -= e.charge;
    shared.caps.total_bytes -= e.charge;
    if (RealmUse* charged = e.sole_payload ? nullptr : release_payload(e.row); charged && charged != &realm)
      forget_unused(*charged);
    forget_unused(realm);
  }
  q.entries.erase(e.row.seq);
  // An empty queue of a consumer that is gone holds nothing worth keeping (the next copy or its
  // subscription's replay brings its consumer and policy): the sweep drops it, so queues keyed by
  // short-lived socket ids do not pile up. (`swept`: it is in `emptied` already, no need to hash its id.)
  if (q.entries.empty() && !q.swept) {
    q.swept = true;
    emptied.insert(q.id);
  }
}

void DurableQueues::State::drop_empty_queues() {
  for (auto id = emptied.begin(); id != emptied.end();) {
    auto it = queues.find(*id);
    if (it != queues.end() && it->second.entries.empty() && endpoint_of(it->second)) {
      // Its consumer is connected: the queue keeps its consumer and policy, which a DLQ replay (bringing
      // neither) needs to reach it. Dropped by a sweep after the consumer has gone.
      ++id;
      continue;
    }
    if (it != queues.end() && it->second.entries.empty()) queues.erase(it);
    else if (it != queues.end()) it->second.swept = false;  // it has entries again
    id = emptied.erase(id);
  }
}

void DurableQueues::State::submit(std::vector<store::Op> ops, Then then) {
  if (ops.empty()) {
    if (then) then(Ok{});
    return;
  }
  if (batch.ops.empty()) {
    batch.ops = std::move(ops);
  } else {
    batch.ops.insert(batch.ops.end(), std::make_move_iterator(ops.begin()), std::make_move_iterator(ops.end()));
  }
  submit_appended(std::move(then));
}

void DurableQueues::State::submit(store::Op op, Then then) {
  batch.ops.push_back(std::move(op));
  submit_appended(std::move(then));
}

void DurableQueues::State::submit_appended(Then then) {
  batch.thens.push_back(std::move(then));
  // After the handlers already queued: whatever they submit joins this batch.
  if (!flush_posted) {
    flush_posted = true;
    post([this] {
      flush_posted = false;
      flush();
    });
  }
}

void DurableQueues::State::flush() {
  // (Called inline too, by a move and by stop: the posted handler, if any, then finds nothing to hand over,
  // and the flag stays its own.)
  if (batch.thens.empty()) return;
  Batch b = std::move(batch);
  batch = Batch{};
  // The next turn's batch is likely as large: grown once, not doubling from one (bounded: a purge's
  // million erases are not kept for the next).
  batch.ops.reserve(std::min<size_t>(b.ops.size(), 4096));
  batch.thens.reserve(std::min<size_t>(b.thens.size(), 4096));
  writer.submit(std::move(b.ops), [this, thens = std::move(b.thens)](const Status& status) mutable {
    // The writer finishes a whole group of submissions at once: their continuations go to this
    // thread together, in one handler, not one wake-up each.
    bool first;
    {
      std::lock_guard lock(written_mu);
      first = written.empty();
      written.emplace_back(std::move(thens), status);
    }
    if (first) boost::asio::post(io, [this] { run_written(); });
  });
}

void DurableQueues::State::run_written() {
  std::vector<std::pair<std::vector<Then>, Status>> done;
  {
    std::lock_guard lock(written_mu);
    done.swap(written);
  }
  for (auto& [thens, status] : done) {
    if (!status) counters.store_failures += thens.size();
    for (auto& then : thens) {
      if (then) then(status);
    }
  }
}

void DurableQueues::State::enqueue(const std::shared_ptr<const StoredMessage>& message, std::vector<QueueCopy>& copies,
                                   Confirm done) {
  int64_t now = unix_ms();
  std::vector<Ref> refs;
  // Live copies go first. The rest share one payload, charged with the first of them (a single one with
  // its entry: sole_payload).
  std::erase_if(copies, [&](const QueueCopy& copy) {
    if (copy.live && deliver_live(*message, copy)) return true;
    if (!copy.live_only) return false;
    ++counters.dropped_over_cap;  // the store is behind: a copy that cannot go live is refused
    return true;
  });
  // With caps, each copy is charged as it is checked (charge_if_fits): exactly what add() would charge,
  // its own part and, for the first copy stored, the shared payload.
  const size_t charge = charge_of(message->attachments);
  const bool checked = capped();
  bool payload_charged = false;
  for (const QueueCopy& copy : copies) {
    if (checked && !charge_if_fits(copy.realm, charge + (payload_charged ? 0 : message->payload.size()))) {
      if (counters.dropped_over_cap++ % 1000 == 0)
        spdlog::warn("realm {}: max_queued_per_realm ({}) or the queued bytes caps ({} per realm, {} in all) reached; "
                     "copy for {} dropped ({} so far)", copy.realm, options.max_queued_per_realm,
                     options.max_queued_bytes_per_realm, options.max_queued_bytes_total, log_text(copy.consumer_id),
                     counters.dropped_over_cap);
      continue;
    }
    Queue& q = queue_for(copy);
    store::Row row;
    row.seq = next_seq();
    row.id = new_id(row.seq);
    row.realm = copy.realm;
    row.event = copy.key;
    row.consumer = copy.consumer_id;
    row.producer = message->producer;
    row.payload = message->payload;
    row.attachments = message->attachments;
    row.created_ms = now;
    row.expires_ms = message->ttl_ms ? std::max<int64_t>(1, now + *message->ttl_ms) : 0;
    batch.ops.push_back(store::put(row));  // submitted below with its continuation (submit_appended)
    refs.push_back(await(add(q, std::move(row), false, copies.size() == 1, checked)));
    payload_charged = true;
    ++counters.enqueued;
    observe([&](QueueObserver& o) { o.stored(copy.realm); });
  }
  if (refs.empty()) {
    if (done) done(0, Ok{});
    return;
  }
  submit_appended([this, refs = std::move(refs), done = std::move(done)](const Status& status) {
    committed(refs, status, done);
  });
}

bool DurableQueues::State::deliver_live(const StoredMessage& message, const QueueCopy& copy) {
  Queue* q = find_queue(copy.realm, copy.key, copy.consumer_id);
  if (q && (q->uncommitted || !q->entries.empty())) return false;
  EndpointPtr to;
  broker.if_realm(copy.realm, [&](RealmRegistry& r) { to = r.consumer_endpoint(copy.consumer); });
  if (!to) return false;
  to->deliver(Delivery(copy.key, message.payload.str(), message.attachments));
  observe([&](QueueObserver& o) { o.sent(copy.realm, copy.key); });
  return true;
}

void DurableQueues::State::committed(const std::vector<Ref>& refs, const Status& status, const Confirm& done) {
  size_t stored = 0;
  std::vector<Queue*> touched;  // queues with newly committed copies, pumped once each
  for (const Ref& ref : refs) {
    Entry* entry = resolve(ref);
    if (!entry) {
      if (status) ++stored;  // purged or moved meanwhile: it was stored all the same
      continue;
    }
    Entry& e = *entry;
    if (!status) {
      remove(e);  // never reached the store: nobody may count on it
      continue;
    }
    e.committed = true;
    --e.queue->uncommitted;
    ++stored;
    if (e.phase != Phase::stored || e.acking) continue;
    if (touched.empty() || touched.back() != e.queue) touched.push_back(e.queue);
  }
  for (Queue* q : touched) pump(*q, true);
  if (done) done(status ? stored : 0, status);
}

}  // namespace siomq::broker
