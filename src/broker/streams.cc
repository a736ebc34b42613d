// The streams' public API (each call one hop onto the streams thread), their load from the store, and
// the store's names for them.
#include "broker/streams.h"

#include <spdlog/spdlog.h>

#include <future>
#include <iterator>

#include "broker/broker.h"
#include "broker/streams_state.h"
#include "wire/bus_subject.h"
#include "wire/clock.h"
#include "wire/json_fields.h"
#include "wire/json_spans.h"
#include "wire/log_text.h"
#include "wire/thread_role.h"

namespace siomq::broker {
namespace {

constexpr std::string_view kConfigDirectory = "bus_streams";

// "<realm length>:<realm>:<name>" back into (realm, name); nullopt for any other text.
std::optional<std::pair<std::string, std::string>> parse_store_name(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon > 4) return std::nullopt;
  auto len = json::parse_integer(text.substr(0, colon));
  if (!len || *len <= 0 || text.size() < colon + 1 + static_cast<size_t>(*len) + 2) return std::nullopt;
  std::string realm(text.substr(colon + 1, static_cast<size_t>(*len)));
  size_t rest = colon + 1 + static_cast<size_t>(*len);
  if (text[rest] != ':') return std::nullopt;
  std::string name(text.substr(rest + 1));
  if (stream_store_name(realm, name) != text) return std::nullopt;
  return std::make_pair(std::move(realm), std::move(name));
}

}  // namespace

std::string stream_store_name(std::string_view realm, std::string_view name) {
  std::string out = std::to_string(realm.size());
  out.push_back(':');
  out.append(realm);
  out.push_back(':');
  out.append(name);
  return out;
}

Streams::Streams(Broker& broker, store::Writer& writer, StreamsOptions options)
    : state_(std::make_unique<State>(broker, writer, options)) {}

Streams::~Streams() { stop(); }

void Streams::start() {
  State& s = *state_;
  s.work.emplace(s.io.get_executor());
  s.thread = std::thread([&s] {
    become_background_thread("siomq-streams");
    s.io.run();
  });
}

void Streams::stop() {
  State& s = *state_;
  if (!s.thread.joinable()) return;
  s.post([&s] {
    if (s.flush_posted) s.flush_writes();  // what was submitted still goes to the writer (stopped after us)
    s.work.reset();
    s.io.stop();
  });
  s.thread.join();
}

// ---- finding things -------------------------------------------------------------------------------------

Streams::State::RealmRt* Streams::State::realm_of(const std::string& realm) {
  auto it = realms.find(realm);
  return it == realms.end() ? nullptr : &it->second;
}

Streams::State::StreamRt* Streams::State::stream_of(const std::string& realm, const std::string& name) {
  RealmRt* r = realm_of(realm);
  if (!r) return nullptr;
  auto it = r->streams.find(name);
  return it == r->streams.end() ? nullptr : it->second.get();
}

Streams::State::ConsumerRt* Streams::State::consumer_of(const std::string& realm, const std::string& name) {
  RealmRt* r = realm_of(realm);
  if (!r) return nullptr;
  auto it = r->consumer_stream.find(name);
  if (it == r->consumer_stream.end()) return nullptr;
  auto c = it->second->consumers.find(name);
  return c == it->second->consumers.end() ? nullptr : c->second.get();
}

Streams::State::StreamRt* Streams::State::binding(const std::string& realm, std::string_view subject) {
  RealmRt* r = realm_of(realm);
  if (!r) return nullptr;
  std::vector<SubjectIndex::Id> ids;
  r->bindings.match(subject, ids);
  // Streams never overlap (§8.5): at most one binds the subject.
  auto it = ids.empty() ? streams_by_id.end() : streams_by_id.find(ids.front());
  return it == streams_by_id.end() ? nullptr : it->second;
}

void Streams::State::post(std::function<void()> f) {
  bool first;
  {
    std::lock_guard lock(posted_mu);
    first = posted.empty();
    posted.push_back(std::move(f));
  }
  if (first) boost::asio::post(io, [this] { run_posted(); });
}

void Streams::State::run_posted() {
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard lock(posted_mu);
    batch.swap(posted);
    posted.swap(posted_spare);  // an empty vector with the capacity of an earlier batch
  }
  for (auto& f : batch) {
    if (io.stopped()) break;  // stop(): what was queued behind it is dropped, as asio drops its handlers
    f();
  }
  batch.clear();
  std::lock_guard lock(posted_mu);
  if (posted_spare.capacity() < batch.capacity()) posted_spare.swap(batch);
}

void Streams::State::submit(std::vector<store::Op> ops, std::function<void(const Status&)> then) {
  if (unsubmitted_ops.empty()) unsubmitted_ops = std::move(ops);
  else std::move(ops.begin(), ops.end(), std::back_inserter(unsubmitted_ops));
  unsubmitted_thens.push_back(std::move(then));
  if (flush_posted) return;
  flush_posted = true;
  post([this] { flush_writes(); });
}

void Streams::State::flush_writes() {
  flush_posted = false;
  auto thens = std::make_shared<std::vector<std::function<void(const Status&)>>>(std::move(unsubmitted_thens));
  unsubmitted_thens.clear();
  std::vector<store::Op> ops = std::move(unsubmitted_ops);
  unsubmitted_ops.clear();
  // The next turn's batch is likely as large: grown once, not doubling from one (bounded: a purge's
  // batch of a million erases is not kept for the next).
  unsubmitted_ops.reserve(std::min<size_t>(ops.size(), 4096));
  writer.submit(std::move(ops), [this, thens](const Status& status) {
    post([thens, status] {
      for (auto& then : *thens) {
        if (then) then(status);
      }
    });
  });
}

void Streams::State::after_writes(std::function<void(const Status&)> f) { submit({}, std::move(f)); }

void Streams::State::recount(const std::string& realm) {
  RealmStreamCounts c;
  if (RealmRt* r = realm_of(realm)) {
    for (const auto& [name, s] : r->streams) {
      ++c.streams;
      c.consumers += s->consumers.size();
      c.messages += s->log.state().messages;
      c.bytes += s->log.state().bytes;
    }
  }
  std::lock_guard lock(counts_mu);
  if (c.streams == 0) counts.erase(realm);
  else counts[realm] = c;
}

RealmStreamCounts Streams::counts(const std::string& realm) const {
  std::lock_guard lock(state_->counts_mu);
  auto it = state_->counts.find(realm);
  return it == state_->counts.end() ? RealmStreamCounts{} : it->second;
}

// ---- the API's hops -------------------------------------------------------------------------------------

void Streams::set_route_core(std::function<void(const std::string& realm, const BusMessagePtr& message)> route) {
  State& s = *state_;
  s.post([&s, route = std::move(route)]() mutable { s.options.route_core = std::move(route); });
}

void Streams::publish(std::string realm, PublishRequest request, Done<PublishAck> done) {
  State& s = *state_;
  // Refused before it is posted when the thread is that far behind: the queue of work is bounded too.
  const uint64_t bytes = request.data.size() + request.header.size() + request.subject.size();
  if (s.queued.fetch_add(bytes, std::memory_order_relaxed) > s.options.max_unwritten_bytes) {
    s.queued.fetch_sub(bytes, std::memory_order_relaxed);
    return done(Error{503, "the streams are behind; retry later"});
  }
  s.post([&s, bytes, realm = std::move(realm), request = std::move(request), done = std::move(done)]() mutable {
    s.queued.fetch_sub(bytes, std::memory_order_relaxed);
    s.store_message(realm, request, std::move(done));
  });
}

void Streams::capture(std::string realm, BusMessagePtr message, std::string msg_id) {
  State& s = *state_;
  // A core pub promised nothing: when the thread is that far behind, the stream does not get it.
  const uint64_t bytes = message->size();
  if (s.queued.fetch_add(bytes, std::memory_order_relaxed) > s.options.max_unwritten_bytes) {
    s.queued.fetch_sub(bytes, std::memory_order_relaxed);
    return;
  }
  s.post([&s, bytes, realm = std::move(realm), message = std::move(message), msg_id = std::move(msg_id)] {
    s.queued.fetch_sub(bytes, std::memory_order_relaxed);
    PublishRequest req{message->subject, message->header, message->data, msg_id, {}, std::nullopt, std::nullopt, true};
    s.store_message(realm, req, [](const Result<PublishAck>&) {});
  });
}

void Streams::pull(std::string realm, PullRequest request, Done<std::vector<BusMessagePtr>> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), request = std::move(request), done = std::move(done)]() mutable {
    s.pull(realm, request, std::move(done));
  });
}

void Streams::acknowledge(std::string realm, std::string consumer, uint64_t seq, AckKind kind, int64_t delay_ms,
                          std::string reason, Done<Ok> done) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), consumer = std::move(consumer), seq, kind, delay_ms, reason = std::move(reason),
          done = std::move(done)] { s.acknowledge(realm, consumer, seq, kind, delay_ms, reason, done); });
}

void Streams::interest_changed(std::string realm, std::string pattern) {
  State& s = *state_;
  s.post([&s, realm = std::move(realm), pattern = std::move(pattern)] {
    State::RealmRt* r = s.realm_of(realm);
    if (!r) return;
    // Only the push consumers the new subscription hears: a burst of subs in a realm with many push
    // consumers costs a subject match per consumer, not a delivery attempt per consumer.
    for (auto& [name, st] : r->streams) {
      for (auto& [cname, c] : st->consumers) {
        if (c->config.push() && siomq::bus::subject_matches(pattern, c->config.deliver_subject)) s.push(*c);
      }
    }
  });
}

// ---- load -----------------------------------------------------------------------------------------------

std::vector<store::Op> Streams::load(const store::Contents& contents) {
  State& s = *state_;
  std::vector<store::Op> erase;
  int64_t now = unix_ms();
  for (const store::DirectoryEntry& e : contents.directory) {
    if (e.directory != kConfigDirectory) continue;
    json::Fields f(e.value, {"config", "created_ms", "last_seq"});
    auto created = f.integer("created_ms", 0, INT64_MAX);
    auto last = f.integer("last_seq", 0, int64_t{1} << 53);
    auto config = f.raw("config") ? parse_stream_config(*f.raw("config")) : Result<StreamConfig>(Error{400, "no config"});
    if (f.error() || !config || config->name != e.key) {
      spdlog::warn("store: bus stream record {}/{} cannot be read: erased", log_text(e.realm), log_text(e.key));
      erase.push_back(store::erase_directory_entry(e.directory, e.realm, e.key));
      continue;
    }
    auto rt = std::make_unique<State::StreamRt>(s.next_id++, e.realm, std::move(*config), created.value_or(now));
    rt->log.restore_last_seq(static_cast<uint64_t>(last.value_or(0)));
    s.streams_by_id[rt->id] = rt.get();
    s.realms[e.realm].streams[e.key] = std::move(rt);
  }
  for (const store::StreamMessage& m : contents.stream_messages) {
    if (!m.stream.empty() && m.stream.front() == '$') continue;  // the SSE history's
    auto names = parse_store_name(m.stream);
    State::StreamRt* st = names ? s.stream_of(names->first, names->second) : nullptr;
    if (!st || m.payload_format != store::StreamMessage::Payload::bytes || !m.attachments.empty()) {
      erase.push_back(store::erase_stream_message(m.stream, m.seq));
      continue;
    }
    auto msg = std::make_shared<BusMessage>();
    msg->subject = m.subject;
    msg->header = m.headers.value_or("");
    msg->data = m.payload.str();
    msg->timestamp_ms = m.time_ms;
    st->log.restore(m.seq, std::move(msg), m.msg_id.value_or(""));
  }
  for (const store::ConsumerState& cs : contents.consumers) {
    auto names = parse_store_name(cs.stream);
    State::StreamRt* st = names ? s.stream_of(names->first, names->second) : nullptr;
    json::Fields f(cs.config, {"config", "created_ms", "delivered_consumer", "ack_floor_consumer"});
    auto created = f.integer("created_ms", 0, INT64_MAX);
    auto dc = f.integer("delivered_consumer", 0, INT64_MAX);
    auto fc = f.integer("ack_floor_consumer", 0, INT64_MAX);
    auto config = f.raw("config") ? parse_consumer_config(*f.raw("config")) : Result<ConsumerConfig>(Error{400, "no config"});
    if (!st || f.error() || !config || config->name != cs.consumer || config->stream != names->second) {
      erase.push_back(store::erase_consumer_state(cs.stream, cs.consumer));
      continue;
    }
    auto c = std::make_unique<State::ConsumerRt>();
    c->id = s.next_id++;
    c->stream = st;
    c->config = std::move(*config);
    c->created_ms = created.value_or(now);
    c->delivered_stream = cs.delivered;
    c->ack_floor_stream = cs.ack_floor;
    c->delivered_consumer = static_cast<uint64_t>(dc.value_or(0));
    c->ack_floor_consumer = static_cast<uint64_t>(fc.value_or(0));
    uint64_t cseq = c->ack_floor_consumer;
    // Unacked deliveries come back at once after a restart (§6), their count already includes the last one.
    for (const store::PendingDelivery& p : cs.pending) {
      c->pending[p.stream_seq] = State::Pending{++cseq, p.deliveries, p.last_delivered_ms, true};
      c->redeliver.insert(p.stream_seq);
    }
    s.charge_pending(*st, static_cast<int64_t>(c->pending.size()));
    s.consumers_by_id[c->id] = c.get();
    s.realms[st->realm].consumer_stream[cs.consumer] = st;
    st->consumers[cs.consumer] = std::move(c);
  }
  for (auto& [realm, r] : s.realms) {
    for (auto& [name, st] : r.streams) {
      st->committed = st->log.state().last_seq;
      std::vector<uint64_t> gone = st->log.apply_limits(now);
      s.removed_from_log(*st, gone, erase);
      r.bytes += st->log.state().bytes;
      s.total_bytes += st->log.state().bytes;
    }
    s.bind_subjects(realm);
    s.recount(realm);
  }
  for (auto& [id, st] : s.streams_by_id) s.arm_expiry(*st);
  if (!erase.empty()) spdlog::warn("store: {} bus stream record(s) could not be used and are erased", erase.size());
  return erase;
}

void Streams::move_along(std::vector<store::Op> ops, const std::function<void(std::vector<store::Op>)>& commit) {
  State& s = *state_;
  auto copy = [&s, &ops, &commit] {
    s.append_records(ops);
    commit(std::move(ops));
  };
  if (!s.thread.joinable()) return copy();
  std::promise<void> finished;
  s.post([&] {
    copy();
    finished.set_value();
  });
  finished.get_future().wait();
}

void Streams::State::append_records(std::vector<store::Op>& ops) const {
  const State& s = *this;
  for (const auto& [realm, r] : s.realms) {
    for (const auto& [name, st] : r.streams) {
      if (!st->file()) continue;
      ops.push_back(s.config_record(*st));
      const StreamRt& stream = *st;
      stream.log.each_message([&ops, &stream](uint64_t seq, const Stream::Entry& e) {
        const BusMessage& m = *e.message;
        ops.push_back(store::put_stream_message(stream.store_name, seq, m.subject, m.header.empty() ? nullptr : &m.header,
                                                m.data, m.timestamp_ms, e.msg_id.empty() ? nullptr : &e.msg_id));
      });
      for (const auto& [cname, c] : st->consumers) ops.push_back(store::put(s.record_of(*c)));
    }
  }
}

}  // namespace siomq::broker
