// What a stream consumer sends and what comes back (bus.md §4 consumer.*, §6, §8.11–§8.15, §8.17): the
// next messages for a pull or a push, the pending set with its ack deadlines (on the shared Deadlines
// timer), ack/nak/term/progress, max_deliver and the dead-letter stream, and the consumer's record —
// written before what it backs is sent or answered, one write at a time, later changes coalescing.
#include <spdlog/spdlog.h>

#include "broker/broker.h"
#include "broker/streams_state.h"
#include "wire/bus_subject.h"
#include "wire/clock.h"
#include "wire/socketio.h"

namespace siomq::broker {

using State = Streams::State;

namespace {

// Waiting pulls one consumer may hold; more are refused.
// Pulls waiting for messages, at most: each holds its answer (and through it the requester's socket).
constexpr size_t kMaxWaitingPulls = 1000;            // per consumer
constexpr size_t kMaxWaitingPullsPerRealm = 10000;   // of all the realm's consumers
constexpr size_t kMaxWaitingPullsTotal = 100000;     // on the server
// Messages a push consumer sends per turn of the thread, so that one backlog does not hold up the rest.
constexpr size_t kPushBatch = 256;

BusMessagePtr delivered_copy(const State::StreamRt& st, const State::ConsumerRt& c, uint64_t seq,
                             const Stream::Entry& e, uint64_t deliveries) {
  auto m = std::make_shared<BusMessage>(*e.message);
  m->origin = StreamOrigin{st.log.config().name, c.config.name, seq, deliveries, e.message->timestamp_ms};
  return m;
}

// Why a consumer's record write did not happen: the consumer was deleted first (404), or the store failed.
Error flush_error(const Status& status) {
  if (status.error().code == 404) return status.error();
  return Error{500, "the store could not write the consumer: " + status.error().message};
}

}  // namespace

int64_t State::ack_wait_ms(const ConsumerRt& c, uint64_t deliveries) const {
  // §8.13: after delivery k the wait is backoff_ms[k-1], the last entry repeating.
  if (c.config.backoff_ms.empty()) return c.config.ack_wait_ms;
  size_t i = std::min<size_t>(deliveries, c.config.backoff_ms.size()) - 1;
  return c.config.backoff_ms[i];
}

void State::settle(ConsumerRt& c, uint64_t seq) {
  if (c.pending.erase(seq)) charge_pending(*c.stream, -1);
  c.redeliver.erase(seq);
  ack_timers.cancel({c.id, seq});
}

bool State::pending_room(const StreamRt& st) const {
  auto it = realms.find(st.realm);
  return it != realms.end() && it->second.bytes + kPendingEntryBytes <= options.max_bytes_per_realm &&
         total_bytes + kPendingEntryBytes <= options.max_bytes_total;
}

void State::charge_pending(const StreamRt& st, int64_t entries) {
  const int64_t bytes = entries * static_cast<int64_t>(kPendingEntryBytes);
  if (RealmRt* r = realm_of(st.realm)) r->bytes += bytes;
  total_bytes += bytes;
}

void State::update_floor(ConsumerRt& c) {
  if (c.pending.empty()) {
    c.ack_floor_stream = c.delivered_stream;
    c.ack_floor_consumer = c.delivered_consumer;
    return;
  }
  c.ack_floor_stream = c.pending.begin()->first - 1;
  c.ack_floor_consumer = c.pending.begin()->second.consumer_seq - 1;
}

std::vector<BusMessagePtr> State::take(ConsumerRt& c, size_t max) {
  std::vector<BusMessagePtr> out;
  StreamRt& st = *c.stream;
  const bool acking = c.config.ack_policy != AckPolicy::none;
  const int64_t now = unix_ms();
  std::vector<uint64_t> unacked_free;  // ack none: delivered counts as acked
  auto send = [&](uint64_t seq, const Stream::Entry& e) {
    ++c.delivered_consumer;
    if (seq > c.delivered_stream) c.delivered_stream = seq;
    if (!acking) {
      out.push_back(delivered_copy(st, c, seq, e, 1));
      unacked_free.push_back(seq);
      return;
    }
    auto slot = c.pending.try_emplace(seq);
    if (slot.second) charge_pending(st, 1);
    Pending& p = slot.first->second;
    p.consumer_seq = c.delivered_consumer;
    ++p.deliveries;
    p.last_delivered_ms = now;
    p.waiting = false;
    ack_timers.schedule_after({c.id, seq}, std::chrono::milliseconds(ack_wait_ms(c, p.deliveries)));
    out.push_back(delivered_copy(st, c, seq, e, p.deliveries));
  };
  while (out.size() < max && !c.redeliver.empty()) {
    uint64_t seq = *c.redeliver.begin();
    c.redeliver.erase(c.redeliver.begin());
    const Stream::Entry* e = st.log.get(seq);
    if (!e) {
      settle(c, seq);
      continue;
    }
    // Delivered max_deliver times already (nak'd each time, or before a restart): dead, not again.
    if (auto p = c.pending.find(seq); p != c.pending.end() && exhausted(c, p->second)) {
      dead_letter(c, seq, "max_deliver", true);
      unacked_free.push_back(seq);
      continue;
    }
    send(seq, *e);
  }
  while (out.size() < max) {
    if (acking && (c.pending.size() >= ack_pending_cap(c) || !pending_room(st))) break;
    auto next = st.log.next(c.delivered_stream, c.config.filter_subject);
    if (!next || *next > st.committed) break;
    send(*next, *st.log.get(*next));
  }
  if (!out.empty() || !unacked_free.empty()) update_floor(c);
  for (uint64_t seq : unacked_free) after_ack(st, seq);
  // Dead letters change the record even when nothing goes out (then no caller writes it).
  if (out.empty() && !unacked_free.empty()) flush(c, nullptr);
  return out;
}

void State::wake(ConsumerRt& c) {
  while (!c.waiting.empty()) {
    std::vector<BusMessagePtr> msgs = take(c, c.waiting.front().batch);
    if (msgs.empty()) return;
    Pull p = std::move(c.waiting.front());
    c.waiting.pop_front();
    pull_ended(c);
    pull_timers.cancel(p.id);
    pull_consumer.erase(p.id);
    flush(c, [done = std::move(p.done), msgs = std::move(msgs)](const Status& status) {
      if (!status) return done(flush_error(status));
      done(msgs);
    });
  }
}

void State::push(ConsumerRt& c) {
  if (!c.config.push()) return;
  const std::string realm = c.stream->realm;
  bool interested = false;
  broker.if_realm(realm, [&](RealmRegistry& r) { interested = r.bus().has_interest(c.config.deliver_subject); });
  if (!interested) return;
  std::vector<BusMessagePtr> msgs = take(c, kPushBatch);
  if (msgs.empty()) return;
  if (msgs.size() == kPushBatch) post([this, id = c.id] {
    if (auto it = consumers_by_id.find(id); it != consumers_by_id.end()) push(*it->second);
  });
  flush(c, [this, realm, subject = c.config.deliver_subject, msgs = std::move(msgs)](const Status& status) {
    if (!status) return;  // not sent: the ack waits run out and they go again
    std::vector<std::vector<Sublist::Copy>> copies(msgs.size());
    broker.if_realm(realm, [&](RealmRegistry& r) {
      for (size_t i = 0; i < msgs.size(); ++i) r.bus().route(subject, copies[i]);
    });
    for (size_t i = 0; i < msgs.size(); ++i) deliver(copies[i], msgs[i]);
  });
}

store::ConsumerState State::record_of(const ConsumerRt& c) const {
  store::ConsumerState s;
  s.stream = c.stream->store_name;
  s.consumer = c.config.name;
  s.delivered = c.delivered_stream;
  s.ack_floor = c.ack_floor_stream;
  for (const auto& [seq, p] : c.pending) s.pending.push_back({seq, p.deliveries, p.last_delivered_ms});
  s.config = "{\"config\":" + to_json(c.config) + ",\"created_ms\":" + std::to_string(c.created_ms) +
             ",\"delivered_consumer\":" + std::to_string(c.delivered_consumer) +
             ",\"ack_floor_consumer\":" + std::to_string(c.ack_floor_consumer) + "}";
  return s;
}

void State::flush(ConsumerRt& c, std::function<void(const Status&)> then) {
  if (!c.stream->file()) {
    if (then) then(Ok{});
    return;
  }
  if (c.flushing) {
    c.next_flush.push_back(std::move(then));
    return;
  }
  c.flushing = true;
  submit({store::put(record_of(c))}, [this, id = c.id, then = std::move(then)](const Status& status) {
    if (auto it = consumers_by_id.find(id); it != consumers_by_id.end()) {
      ConsumerRt& c = *it->second;
      c.flushing = false;
      if (!c.next_flush.empty()) {
        auto waiters = std::move(c.next_flush);
        c.next_flush.clear();
        flush(c, [waiters = std::move(waiters)](const Status& s) {
          for (const auto& w : waiters) {
            if (w) w(s);
          }
        });
      }
    }
    if (then) then(status);
  });
}

void State::dead_letter(ConsumerRt& c, uint64_t seq, const std::string& reason, bool advisory) {
  StreamRt& st = *c.stream;
  const Stream::Entry* e = st.log.get(seq);
  uint64_t deliveries = c.pending.count(seq) ? c.pending[seq].deliveries : 0;
  settle(c, seq);
  update_floor(c);
  const std::string& dlq = st.log.config().dead_letter_stream;
  if (e && !dlq.empty()) {
    // §8.14: the original headers plus Dlq-Stream, Dlq-Consumer, Dlq-Seq, Dlq-Reason.
    std::string header = e->message->header.empty() ? "{" : e->message->header.substr(0, e->message->header.size() - 1) + ",";
    auto add = [&](std::string_view k, std::string_view v, bool last) {
      sio::append_json_string(header, k);
      header.push_back(':');
      sio::append_json_string(header, v);
      header.push_back(last ? '}' : ',');
    };
    add("Dlq-Stream", st.log.config().name, false);
    add("Dlq-Consumer", c.config.name, false);
    add("Dlq-Seq", std::to_string(seq), false);
    add("Dlq-Reason", reason, true);
    if (StreamRt* target = stream_of(st.realm, dlq)) {
      PublishRequest req{e->message->subject, std::move(header), e->message->data, {}, {}, std::nullopt, std::nullopt};
      store_into(*target, req, [dlq](const Result<PublishAck>& r) {
        if (!r) spdlog::warn("bus: dead letter into stream {} refused: {}", dlq, r.error().message);
      });
    }
  }
  if (advisory) {
    auto m = std::make_shared<BusMessage>();
    m->subject = "$SYS.ADVISORY.MAX_DELIVER." + st.log.config().name + "." + c.config.name;
    m->data = "{\"stream\":";
    sio::append_json_string(m->data, st.log.config().name);
    m->data += ",\"consumer\":";
    sio::append_json_string(m->data, c.config.name);
    m->data += ",\"stream_seq\":" + std::to_string(seq) + ",\"deliveries\":" + std::to_string(deliveries) + "}";
    m->timestamp_ms = unix_ms();
    std::vector<Sublist::Copy> copies;
    broker.if_realm(st.realm, [&](RealmRegistry& r) { r.bus().route(m->subject, copies); });
    deliver(copies, m);
  }
}

void State::on_ack_due(uint64_t consumer_id, uint64_t seq) {
  auto it = consumers_by_id.find(consumer_id);
  if (it == consumers_by_id.end()) return;
  ConsumerRt& c = *it->second;
  auto p = c.pending.find(seq);
  if (p == c.pending.end()) return;
  if (!p->second.waiting && exhausted(c, p->second)) {
    dead_letter(c, seq, "max_deliver", true);
    after_ack(*c.stream, seq);
    flush(c, nullptr);
  } else {
    p->second.waiting = true;
    c.redeliver.insert(seq);
  }
  // After every deadline due now has fired (a posted task runs after the timer's loop), so that the
  // redeliveries that fall due together go out together.
  post([this, consumer_id] {
    auto it = consumers_by_id.find(consumer_id);
    if (it == consumers_by_id.end()) return;
    if (it->second->config.push()) push(*it->second);
    else wake(*it->second);
  });
}

void State::pull_ended(const ConsumerRt& c) {
  if (RealmRt* r = realm_of(c.stream->realm); r && r->waiting_pulls > 0) --r->waiting_pulls;
}

void State::on_pull_due(uint64_t pull_id) {
  auto owner = pull_consumer.find(pull_id);
  if (owner == pull_consumer.end()) return;
  uint64_t consumer_id = owner->second;
  pull_consumer.erase(owner);
  auto it = consumers_by_id.find(consumer_id);
  if (it == consumers_by_id.end()) return;
  auto& waiting = it->second->waiting;
  for (auto w = waiting.begin(); w != waiting.end(); ++w) {
    if (w->id != pull_id) continue;
    auto done = std::move(w->done);
    waiting.erase(w);
    pull_ended(*it->second);
    done(std::vector<BusMessagePtr>{});
    return;
  }
}

void State::pull(const std::string& realm, PullRequest& req, Done<std::vector<BusMessagePtr>> done) {
  ConsumerRt* c = consumer_of(realm, req.consumer);
  if (!c) return done(Error{404, "consumer not found"});
  if (c->config.push()) return done(Error{409, "consumer is push-based (it has a deliver_subject)"});
  std::vector<BusMessagePtr> msgs = take(*c, req.batch);
  if (!msgs.empty()) {
    return flush(*c, [done = std::move(done), msgs = std::move(msgs)](const Status& status) {
      if (!status) return done(flush_error(status));
      done(msgs);
    });
  }
  if (req.no_wait || req.wait_ms <= 0) return done(std::vector<BusMessagePtr>{});
  if (c->waiting.size() >= kMaxWaitingPulls) return done(Error{429, "too many pulls waiting on this consumer"});
  RealmRt& r = *realm_of(realm);
  if (r.waiting_pulls >= kMaxWaitingPullsPerRealm) return done(Error{429, "too many pulls waiting in this realm"});
  if (pull_consumer.size() >= kMaxWaitingPullsTotal) return done(Error{429, "too many pulls waiting on this server"});
  ++r.waiting_pulls;
  uint64_t id = next_id++;
  c->waiting.push_back(Pull{id, req.batch, std::move(done)});
  pull_consumer[id] = c->id;
  pull_timers.schedule_after(id, std::chrono::milliseconds(req.wait_ms));
}

void State::acknowledge(const std::string& realm, const std::string& consumer, uint64_t seq, AckKind kind,
                        int64_t delay_ms, const std::string& reason, const Done<Ok>& done) {
  ConsumerRt* cp = consumer_of(realm, consumer);
  if (!cp) return done(Error{404, "consumer not found"});
  ConsumerRt& c = *cp;
  auto p = c.pending.find(seq);
  if (p == c.pending.end()) return done(Error{404, "seq is not pending for this consumer"});
  auto answer_after_flush = [done](const Status& status) {
    if (!status) return done(flush_error(status));
    done(Ok{});
  };
  switch (kind) {
    case Streams::AckKind::ack: {
      std::vector<uint64_t> acked;
      if (c.config.ack_policy == AckPolicy::all) {
        for (auto it = c.pending.begin(); it != c.pending.end() && it->first <= seq; ++it) acked.push_back(it->first);
      } else {
        acked.push_back(seq);
      }
      for (uint64_t s : acked) settle(c, s);
      update_floor(c);
      for (uint64_t s : acked) after_ack(*c.stream, s);
      flush(c, answer_after_flush);
      break;
    }
    case Streams::AckKind::nak:
      p->second.waiting = true;
      ack_timers.cancel({c.id, seq});
      if (delay_ms > 0) {
        c.redeliver.erase(seq);  // not before the delay, even if an ack wait had made it due
        ack_timers.schedule_after({c.id, seq}, std::chrono::milliseconds(delay_ms));
      } else {
        c.redeliver.insert(seq);
      }
      done(Ok{});
      break;
    case Streams::AckKind::term:
      dead_letter(c, seq, reason.empty() ? "term" : "term: " + reason, false);
      after_ack(*c.stream, seq);
      flush(c, answer_after_flush);
      break;
    case Streams::AckKind::progress:
      if (!p->second.waiting)
        ack_timers.schedule_after({c.id, seq}, std::chrono::milliseconds(ack_wait_ms(c, p->second.deliveries)));
      done(Ok{});
      break;
  }
  recount(realm);
  if (c.config.push()) push(c);
  else wake(c);
}

}  // namespace siomq::broker
