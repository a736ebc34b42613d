// Publishing into a stream (bus.md §4 stream.pub, §6 retention and dedup, §8.7–§8.9, §8.16, §8.22),
// what leaves the log (limits, retention, max_age), and when consumers may see a message: once written.
#include <spdlog/spdlog.h>

#include "broker/broker.h"
#include "broker/streams_state.h"
#include "wire/bus_subject.h"
#include "wire/clock.h"
#include "wire/log_text.h"

namespace siomq::broker {

using State = Streams::State;

void State::store_message(const std::string& realm, PublishRequest& req, Done<PublishAck> done) {
  StreamRt* st = binding(realm, req.subject);
  if (!st) return done(Error{404, "no stream binds the subject"});
  const std::string& name = st->log.config().name;
  if (!req.stream.empty() && req.stream != name)
    return done(Error{409, "the subject is bound by stream '" + name + "', not '" + req.stream + "'"});
  if (req.expect_last_seq && *req.expect_last_seq != st->log.state().last_seq)
    return done(Error{409, "wrong last sequence: " + std::to_string(st->log.state().last_seq)});
  if (req.expect_last_subject_seq && *req.expect_last_subject_seq != st->log.last_seq_of_subject(req.subject))
    return done(Error{409, "wrong last sequence for the subject: " + std::to_string(st->log.last_seq_of_subject(req.subject))});
  store_into(*st, req, std::move(done));
}

void State::store_into(StreamRt& stream, PublishRequest& req, Done<PublishAck> done) {
  StreamRt* st = &stream;
  const std::string& realm = st->realm;
  const std::string& name = st->log.config().name;
  int64_t now = unix_ms();
  if (!req.msg_id.empty()) {
    if (auto seq = st->log.duplicate(req.msg_id, now)) {
      PublishAck ack{name, *seq, true};
      // The original may still be on its way to the disk: answer after it.
      if (!st->file()) return done(ack);
      return after_writes([done, ack](const Status& status) {
        if (!status) return done(Error{500, status.error().message});
        done(ack);
      });
    }
  }
  auto message = std::make_shared<BusMessage>();
  message->subject = std::move(req.subject);
  message->header = std::move(req.header);
  message->data = std::move(req.data);
  message->timestamp_ms = now;
  size_t bytes = stream_bytes(*message);
  if (auto ok = st->log.admit(message->subject, message->data.size() + message->header.size(), bytes); !ok)
    return done(ok.error());
  RealmRt& r = *realm_of(realm);
  if (r.bytes + bytes > options.max_bytes_per_realm) return done(Error{503, "the realm's stream storage is full"});
  if (total_bytes + bytes > options.max_bytes_total) return done(Error{503, "the server's stream storage is full"});
  if (st->file() && unwritten.load(std::memory_order_relaxed) > options.max_unwritten_bytes)
    return done(Error{503, "the store is behind"});

  // The ops go with this turn's writer submission (the submit() below): no vector of their own.
  std::vector<store::Op>& ops = unsubmitted_ops;
  uint64_t seq;
  // An interest stream with nobody interested keeps nothing, yet the publish gets its seq (§8.16).
  if (st->log.config().retention == Retention::interest && st->consumers.empty()) {
    seq = st->log.skip(now, req.msg_id);
    if (st->file()) ops.push_back(config_record(*st));
  } else {
    uint64_t before = st->log.state().bytes;
    std::vector<uint64_t> removed;
    seq = st->log.append(message, req.msg_id, now, removed);
    removed_from_log(*st, removed, ops);
    int64_t grown = static_cast<int64_t>(st->log.state().bytes) - static_cast<int64_t>(before);
    r.bytes += grown;
    total_bytes += grown;
    if (st->file())
      ops.push_back(store::put_stream_message(st->store_name, seq, message->subject,
                                              message->header.empty() ? nullptr : &message->header, message->data,
                                              message->timestamp_ms, req.msg_id.empty() ? nullptr : &req.msg_id));
  }
  // Core subscribers of the subject get it too (§8.8), now: they were promised nothing. (A captured core
  // publish reached them already.)
  if (!req.captured && options.route_core) {
    options.route_core(realm, message);
  } else if (!req.captured) {
    std::vector<Sublist::Copy> copies;
    broker.if_realm(realm, [&](RealmRegistry& reg) { reg.bus().route(message->subject, copies); });
    deliver(copies, message);
  }
  recount(realm);
  arm_expiry(*st);
  PublishAck ack{name, seq, false};
  if (!st->file()) {
    committed(st->id, seq);
    return done(ack);
  }
  unwritten.fetch_add(bytes, std::memory_order_relaxed);
  submit({}, [this, id = st->id, seq, bytes, ack, done](const Status& status) {
    unwritten.fetch_sub(bytes, std::memory_order_relaxed);
    if (!status) {
      spdlog::error("bus: stream write failed: {}", status.error().message);
      unstore(id, seq);
      return done(Error{500, "the store could not write the message: " + status.error().message});
    }
    committed(id, seq);
    done(ack);
  });
}

// A message whose write failed is taken back before any consumer could see it (callbacks run in write
// order, so no later commit has passed it): it was answered 500, and a retry stores it anew.
void State::unstore(uint64_t stream_id, uint64_t seq) {
  auto it = streams_by_id.find(stream_id);
  if (it == streams_by_id.end()) return;
  StreamRt& st = *it->second;
  const Stream::Entry* e = st.log.get(seq);
  if (!e) return;
  uint64_t bytes = e->bytes;
  st.log.forget_id(e->msg_id);
  st.log.remove(seq);
  realm_of(st.realm)->bytes -= bytes;
  total_bytes -= bytes;
  recount(st.realm);
}

void State::committed(uint64_t stream_id, uint64_t seq) {
  auto it = streams_by_id.find(stream_id);
  if (it == streams_by_id.end()) return;
  StreamRt& st = *it->second;
  if (seq > st.committed) st.committed = seq;
  // The message, held: an ack-none consumer's take() may remove it from the log (retention) meanwhile.
  const Stream::Entry* e = st.log.get(seq);
  BusMessagePtr m = e ? e->message : nullptr;
  for (auto& [name, c] : st.consumers) {
    if (m && !c->config.filter_subject.empty() && !siomq::bus::subject_matches(c->config.filter_subject, m->subject))
      continue;
    if (c->config.push()) push(*c);
    else wake(*c);
  }
}

// Seqs that left the log (limits, purge, expiry): no consumer waits for them any more.
void State::removed_from_log(StreamRt& st, const std::vector<uint64_t>& seqs, std::vector<store::Op>& ops) {
  if (seqs.empty()) return;
  for (uint64_t seq : seqs) {
    if (st.file()) ops.push_back(store::erase_stream_message(st.store_name, seq));
    for (auto& [name, c] : st.consumers) {
      if (c->pending.count(seq)) settle(*c, seq);
    }
  }
  for (auto& [name, c] : st.consumers) {
    update_floor(*c);
    // Room under max_ack_pending may have opened: waiting pulls and push go on, after this change.
    post([this, id = c->id] {
      auto it = consumers_by_id.find(id);
      if (it == consumers_by_id.end()) return;
      if (it->second->config.push()) push(*it->second);
      else wake(*it->second);
    });
  }
}

// Interest and workqueue retention (§6): a message goes once every consumer it concerns has acked it.
void State::after_ack(StreamRt& st, uint64_t seq) {
  if (st.log.config().retention == Retention::limits) return;
  const Stream::Entry* e = st.log.get(seq);
  if (!e) return;
  for (const auto& [name, c] : st.consumers) {
    if (!c->config.filter_subject.empty() && !siomq::bus::subject_matches(c->config.filter_subject, e->message->subject))
      continue;
    bool acked = seq <= c->ack_floor_stream || (seq <= c->delivered_stream && !c->pending.count(seq));
    if (!acked) return;
  }
  uint64_t bytes = e->bytes;
  st.log.remove(seq);
  RealmRt& r = *realm_of(st.realm);
  r.bytes -= bytes;
  total_bytes -= bytes;
  recount(st.realm);
  if (!st.file()) return;
  std::vector<store::Op> ops{store::erase_stream_message(st.store_name, seq)};
  // The newest message gone: its seq must survive a restart all the same (never reused, §8.6).
  if (seq == st.log.state().last_seq) ops.push_back(config_record(st));
  submit(std::move(ops), nullptr);
}

void State::arm_expiry(StreamRt& st) {
  auto at = st.log.next_expiry_ms();
  if (!at) return expiry_timers.cancel(st.id);
  auto now = unix_ms();
  expiry_timers.schedule_after(st.id, std::chrono::milliseconds(std::max<int64_t>(0, *at - now)));
}

void State::on_expiry_due(uint64_t stream_id) {
  auto it = streams_by_id.find(stream_id);
  if (it == streams_by_id.end()) return;
  StreamRt& st = *it->second;
  uint64_t before = st.log.state().bytes;
  std::vector<uint64_t> gone = st.log.expire(unix_ms());
  RealmRt& r = *realm_of(st.realm);
  r.bytes -= before - st.log.state().bytes;
  total_bytes -= before - st.log.state().bytes;
  std::vector<store::Op> ops;
  removed_from_log(st, gone, ops);
  if (st.file() && !gone.empty() && st.log.state().messages == 0) ops.push_back(config_record(st));
  if (!ops.empty()) submit(std::move(ops), nullptr);
  recount(st.realm);
  arm_expiry(st);
}

}  // namespace siomq::broker
