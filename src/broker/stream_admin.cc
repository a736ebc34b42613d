// Streams and consumers made, changed, read and deleted (bus.md §5, §8.5, §8.6, §8.10, §8.16).
#include <spdlog/spdlog.h>

#include "broker/broker.h"
#include "broker/streams_state.h"
#include "wire/bus_subject.h"
#include "wire/clock.h"
#include "wire/log_text.h"

namespace siomq::broker {

using State = Streams::State;

ConsumerInfo State::info_of(const ConsumerRt& c) const {
  ConsumerInfo i;
  i.config = c.config;
  i.created_ms = c.created_ms;
  i.delivered_consumer = c.delivered_consumer;
  i.delivered_stream = c.delivered_stream;
  i.ack_floor_consumer = c.ack_floor_consumer;
  i.ack_floor_stream = c.ack_floor_stream;
  i.num_pending = c.stream->log.count_after(c.delivered_stream, c.config.filter_subject);
  i.num_ack_pending = c.pending.size();
  for (const auto& [seq, p] : c.pending) {
    if (p.deliveries > 1) ++i.num_redelivered;
  }
  i.num_waiting = c.waiting.size();
  return i;
}

StreamInfo State::info_of(const StreamRt& s, bool with_consumers) const {
  StreamInfo i;
  i.config = s.log.config();
  i.created_ms = s.log.created_ms();
  i.state = s.log.state();
  i.consumer_count = s.consumers.size();
  if (with_consumers) {
    for (const auto& [name, c] : s.consumers) i.consumers.push_back(info_of(*c));
  }
  return i;
}

store::Op State::config_record(const StreamRt& s) const {
  store::DirectoryEntry e;
  e.directory = "bus_streams";
  e.realm = s.realm;
  e.key = s.log.config().name;
  e.value = "{\"config\":" + to_json(s.log.config()) + ",\"created_ms\":" + std::to_string(s.log.created_ms()) +
            ",\"last_seq\":" + std::to_string(s.log.state().last_seq) + "}";
  e.updated_ms = unix_ms();
  return store::put(e);
}

// The realm's registry learns which subjects its streams bind, so that a core `pub` on one is captured
// (§8.8) without a hop here for every other message.
void State::bind_subjects(const std::string& realm) {
  std::vector<std::string> patterns;
  if (RealmRt* r = realm_of(realm)) {
    r->bindings = SubjectIndex(kNatsSyntax);
    for (const auto& [name, s] : r->streams) {
      patterns.insert(patterns.end(), s->log.config().subjects.begin(), s->log.config().subjects.end());
      for (const auto& p : s->log.config().subjects) r->bindings.insert(p, s->id);
    }
  }
  broker.with_realm(realm, [&](RealmRegistry& reg) { reg.set_stream_subjects(patterns); });
}

void State::drop_consumer(ConsumerRt& c, std::vector<store::Op>* ops) {
  for (const auto& [seq, p] : c.pending) ack_timers.cancel({c.id, seq});
  charge_pending(*c.stream, -static_cast<int64_t>(c.pending.size()));
  // What waits for the consumer's next record write is answered now: there will be none.
  auto waiting_flush = std::move(c.next_flush);
  c.next_flush.clear();
  for (auto& w : waiting_flush) {
    if (w) w(Error{404, "consumer deleted"});
  }
  for (Pull& p : c.waiting) {
    pull_timers.cancel(p.id);
    pull_consumer.erase(p.id);
    pull_ended(c);
    p.done(Error{404, "consumer deleted"});
  }
  c.waiting.clear();
  if (ops && c.stream->file()) ops->push_back(store::erase_consumer_state(c.stream->store_name, c.config.name));
  consumers_by_id.erase(c.id);
  if (RealmRt* r = realm_of(c.stream->realm)) r->consumer_stream.erase(c.config.name);
}

void State::drop_stream(RealmRt& r, StreamRt& s, std::vector<store::Op>& ops) {
  for (auto& [name, c] : s.consumers) drop_consumer(*c, &ops);
  s.consumers.clear();
  if (s.file()) {
    s.log.each_message([&ops, &s](uint64_t seq, const Stream::Entry&) { ops.push_back(store::erase_stream_message(s.store_name, seq)); });
    ops.push_back(store::erase_directory_entry("bus_streams", s.realm, s.log.config().name));
  }
  r.bytes -= s.log.state().bytes;
  total_bytes -= s.log.state().bytes;
  expiry_timers.cancel(s.id);
  streams_by_id.erase(s.id);
}

void Streams::create(std::string realm, StreamConfig config, bool update, Done<StreamInfo> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), config = std::move(config), update, done = std::move(done)]() mutable {
    State::RealmRt& r = s.realms[realm];
    auto it = r.streams.find(config.name);
    if (it != r.streams.end() && !update) {
      // Idempotent for the same effective config (§8.5); created_ms is kept.
      if (it->second->log.config() == config) return done(s.info_of(*it->second, false));
      return done(Error{409, "stream name already in use with a different configuration"});
    }
    if (it == r.streams.end() && update) return done(Error{404, "stream not found"});
    if (it != r.streams.end() && it->second->log.config().storage != config.storage)
      return done(Error{400, "storage: cannot be changed"});
    for (const auto& [name, other] : r.streams) {
      if (name == config.name) continue;
      for (const auto& a : other->log.config().subjects) {
        for (const auto& b : config.subjects) {
          if (siomq::bus::patterns_overlap(a, b))
            return done(Error{409, "subjects overlap with stream '" + name + "'"});
        }
      }
    }
    if (!update && r.streams.size() >= s.options.max_streams_per_realm)
      return done(Error{429, "too many streams in this realm"});
    State::StreamRt* st;
    std::vector<store::Op> ops;
    if (update) {
      st = it->second.get();
      uint64_t before = st->log.state().bytes;
      std::vector<uint64_t> gone = st->log.reconfigure(std::move(config), unix_ms());
      s.removed_from_log(*st, gone, ops);
      r.bytes -= before - st->log.state().bytes;
      s.total_bytes -= before - st->log.state().bytes;
      s.arm_expiry(*st);
    } else {
      auto rt = std::make_unique<State::StreamRt>(s.next_id++, realm, std::move(config), unix_ms());
      st = rt.get();
      s.streams_by_id[st->id] = st;
      r.streams[st->log.config().name] = std::move(rt);
    }
    if (st->file()) ops.push_back(s.config_record(*st));
    s.bind_subjects(realm);
    s.recount(realm);
    StreamInfo info = s.info_of(*st, false);
    if (!st->file()) return done(info);
    s.submit(std::move(ops), [done, info](const Status& status) {
      if (!status) return done(Error{500, "the store could not write the stream: " + status.error().message});
      done(info);
    });
  });
}

void Streams::remove(std::string realm, std::string name, Done<Ok> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), name = std::move(name), done = std::move(done)] {
    State::RealmRt* r = s.realm_of(realm);
    State::StreamRt* st = s.stream_of(realm, name);
    if (!r || !st) return done(Error{404, "stream not found"});
    std::vector<store::Op> ops;
    s.drop_stream(*r, *st, ops);
    r->streams.erase(name);
    s.bind_subjects(realm);
    s.recount(realm);
    s.submit(std::move(ops), [done](const Status& status) {
      if (!status) return done(Error{500, status.error().message});
      done(Ok{});
    });
  });
}

void Streams::purge(std::string realm, std::string name, std::string subject, uint64_t keep, Done<uint64_t> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), name = std::move(name), subject = std::move(subject), keep,
          done = std::move(done)] {
    State::StreamRt* st = s.stream_of(realm, name);
    if (!st) return done(Error{404, "stream not found"});
    uint64_t before = st->log.state().bytes;
    std::vector<uint64_t> gone = st->log.purge(subject, keep);
    State::RealmRt& r = *s.realm_of(realm);
    r.bytes -= before - st->log.state().bytes;
    s.total_bytes -= before - st->log.state().bytes;
    std::vector<store::Op> ops;
    s.removed_from_log(*st, gone, ops);
    if (st->file()) ops.push_back(s.config_record(*st));  // last_seq survives a full purge (§8.6)
    s.recount(realm);
    uint64_t n = gone.size();
    if (!st->file()) return done(n);
    s.submit(std::move(ops), [done, n](const Status& status) {
      if (!status) return done(Error{500, status.error().message});
      done(n);
    });
  });
}

void Streams::info(std::string realm, std::string name, Done<StreamInfo> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), name = std::move(name), done = std::move(done)] {
    State::StreamRt* st = s.stream_of(realm, name);
    if (!st) return done(Error{404, "stream not found"});
    done(s.info_of(*st, true));
  });
}

void Streams::list(std::string realm, Done<std::vector<StreamInfo>> done, bool with_consumers) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), done = std::move(done), with_consumers] {
    std::vector<StreamInfo> out;
    if (State::RealmRt* r = s.realm_of(realm)) {
      for (const auto& [name, st] : r->streams) out.push_back(s.info_of(*st, with_consumers));
    }
    done(std::move(out));
  });
}

void Streams::get(std::string realm, std::string name, uint64_t seq, std::string last_by_subject,
                  Done<BusMessagePtr> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), name = std::move(name), seq, last_by_subject = std::move(last_by_subject),
          done = std::move(done)] {
    State::StreamRt* st = s.stream_of(realm, name);
    if (!st) return done(Error{404, "stream not found"});
    const Stream::Entry* e = last_by_subject.empty() ? st->log.get(seq) : st->log.last_by_subject(last_by_subject);
    if (!e) return done(Error{404, "no message found"});
    uint64_t at = last_by_subject.empty() ? seq : st->log.last_seq_of_subject(last_by_subject);
    auto m = std::make_shared<BusMessage>(*e->message);
    m->origin = StreamOrigin{st->log.config().name, {}, at, 0, e->message->timestamp_ms};
    done(BusMessagePtr(std::move(m)));
  });
}

void Streams::add_consumer(std::string realm, ConsumerConfig config, Done<ConsumerInfo> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), config = std::move(config), done = std::move(done)]() mutable {
    State::StreamRt* st = s.stream_of(realm, config.stream);
    if (!st) return done(Error{404, "stream not found"});
    State::RealmRt& r = *s.realm_of(realm);
    if (auto it = r.consumer_stream.find(config.name); it != r.consumer_stream.end()) {
      if (it->second != st) return done(Error{409, "consumer name already in use on another stream"});
      State::ConsumerRt& c = *st->consumers.at(config.name);
      if (c.config == config) return done(s.info_of(c));  // idempotent (§8.10)
      return done(Error{409, "consumer already exists with a different configuration"});
    }
    if (!config.filter_subject.empty()) {
      bool inside = false;
      for (const auto& p : st->log.config().subjects) {
        if (siomq::bus::patterns_overlap(p, config.filter_subject)) inside = true;
      }
      if (!inside) return done(Error{400, "filter_subject: does not match the stream's subjects"});
    }
    if (st->log.config().retention == Retention::workqueue) {
      for (const auto& [name, other] : st->consumers) {
        const std::string& a = other->config.filter_subject;
        const std::string& b = config.filter_subject;
        if (a.empty() || b.empty() || siomq::bus::patterns_overlap(a, b))
          return done(Error{409, "a workqueue stream takes one consumer per subject (filters overlap)"});
      }
    }
    if (r.consumer_stream.size() >= s.options.max_consumers_per_realm)
      return done(Error{429, "too many consumers in this realm"});
    auto c = std::make_unique<State::ConsumerRt>();
    c->id = s.next_id++;
    c->stream = st;
    c->created_ms = unix_ms();
    const Stream& log = st->log;
    switch (config.deliver_policy) {
      case DeliverPolicy::all: c->delivered_stream = log.state().first_seq ? log.state().first_seq - 1 : 0; break;
      case DeliverPolicy::last: {
        uint64_t last = log.last_matching(config.filter_subject);
        c->delivered_stream = last ? last - 1 : log.state().last_seq;
        break;
      }
      case DeliverPolicy::new_messages: c->delivered_stream = log.state().last_seq; break;
      case DeliverPolicy::by_start_seq: c->delivered_stream = config.opt_start_seq - 1; break;
      case DeliverPolicy::by_start_time: c->delivered_stream = log.seq_at_time(config.opt_start_time_ms) - 1; break;
    }
    c->ack_floor_stream = c->delivered_stream;
    c->config = std::move(config);
    State::ConsumerRt& ref = *c;
    s.consumers_by_id[c->id] = c.get();
    r.consumer_stream[ref.config.name] = st;
    st->consumers[ref.config.name] = std::move(c);
    s.recount(realm);
    ConsumerInfo info = s.info_of(ref);
    s.flush(ref, [done, info](const Status& status) {
      if (!status) return done(Error{500, "the store could not write the consumer: " + status.error().message});
      done(info);
    });
    if (ref.config.push()) s.push(ref);
  });
}

// The consumer `name` of `stream` in `realm`, or the 404 that says which is missing.
Result<State::ConsumerRt*> State::consumer_in(const std::string& realm, const std::string& stream, const std::string& name) {
  StreamRt* st = stream_of(realm, stream);
  if (!st) return Error{404, "stream not found"};
  auto it = st->consumers.find(name);
  if (it == st->consumers.end()) return Error{404, "consumer not found"};
  return it->second.get();
}

void Streams::remove_consumer(std::string realm, std::string stream, std::string name, Done<Ok> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), stream = std::move(stream), name = std::move(name), done = std::move(done)] {
    auto c = s.consumer_in(realm, stream, name);
    if (!c) return done(c.error());
    State::StreamRt* st = (*c)->stream;
    auto it = st->consumers.find(name);
    std::vector<store::Op> ops;
    s.drop_consumer(*it->second, &ops);
    st->consumers.erase(it);
    // An interest stream keeps a message only for its consumers: one less may free some. (A workqueue
    // stream keeps a message until it is acked, whoever is left.)
    if (st->log.config().retention == Retention::interest) {
      std::vector<uint64_t> seqs;
      st->log.each_message([&seqs](uint64_t seq, const Stream::Entry&) { seqs.push_back(seq); });
      for (uint64_t seq : seqs) s.after_ack(*st, seq);
    }
    s.recount(realm);
    s.submit(std::move(ops), [done](const Status& status) {
      if (!status) return done(Error{500, status.error().message});
      done(Ok{});
    });
  });
}

void Streams::consumer_info(std::string realm, std::string stream, std::string name, Done<ConsumerInfo> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), stream = std::move(stream), name = std::move(name), done = std::move(done)] {
    auto c = s.consumer_in(realm, stream, name);
    if (!c) return done(c.error());
    done(s.info_of(**c));
  });
}

void Streams::purge_realm(std::string realm, std::function<void()> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), done = std::move(done)] {
    State::RealmRt* r = s.realm_of(realm);
    if (!r) {
      if (done) done();
      return;
    }
    std::vector<store::Op> ops;
    for (auto& [name, st] : r->streams) s.drop_stream(*r, *st, ops);
    s.realms.erase(realm);
    s.broker.if_realm(realm, [](RealmRegistry& reg) { reg.set_stream_subjects({}); });
    s.recount(realm);
    s.submit(std::move(ops), [done](const Status&) {
      if (done) done();
    });
  });
}

}  // namespace siomq::broker
