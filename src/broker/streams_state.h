// The state behind Streams (streams.h), internal to the files that define its parts. Everything here is
// touched only on the streams thread, except `counts` (under counts_mu, read by Streams::counts on any
// thread) and `unwritten` (an atomic).
//
// Ownership: State owns the realms, a realm its streams, a stream its consumers (unique_ptr: addresses
// stable while they live). The id maps and the timers hold ids, looked up again when used, so nothing
// refers to a stream or consumer that is gone.
//
//   streams.cc           the public API's hops onto the thread, load, start and stop, the store's names
//   stream_admin.cc      streams and consumers made, changed, read and deleted
//   stream_publish.cc    publish and capture, retention, max_age expiry
//   consumer_delivery.cc what a consumer sends (pull, push), acks, ack deadlines, dead letters, its record
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "broker/deadlines.h"
#include "broker/streams.h"
#include "broker/subject_index.h"
#include "store/writer.h"

namespace siomq::broker {

struct Streams::State {
  struct StreamRt;
  struct Pending {
    uint64_t consumer_seq = 0;
    uint64_t deliveries = 0;
    int64_t last_delivered_ms = 0;
    bool waiting = false;  // not in flight: ready for redelivery, or nak'd with a delay
  };
  struct Pull {
    uint64_t id = 0;
    size_t batch = 1;
    Done<std::vector<BusMessagePtr>> done;
  };
  struct ConsumerRt {
    uint64_t id = 0;
    StreamRt* stream = nullptr;
    ConsumerConfig config;
    int64_t created_ms = 0;
    uint64_t delivered_stream = 0, delivered_consumer = 0, ack_floor_stream = 0, ack_floor_consumer = 0;
    std::map<uint64_t, Pending> pending;  // by stream seq
    std::set<uint64_t> redeliver;         // pending seqs due again now
    std::deque<Pull> waiting;
    // Its record's write: one at a time; changes meanwhile wait for the next (they coalesce).
    bool flushing = false;
    std::vector<std::function<void(const Status&)>> next_flush;
  };
  struct StreamRt {
    uint64_t id = 0;
    std::string realm;
    Stream log;
    std::map<std::string, std::unique_ptr<ConsumerRt>> consumers;
    uint64_t committed = 0;  // every seq up to it is written (consumers deliver no further)
    const std::string store_name;  // its records' stream name (stream_store_name); the name never changes
    StreamRt(uint64_t i, std::string r, StreamConfig c, int64_t created)
        : id(i), realm(std::move(r)), log(std::move(c), created), store_name(stream_store_name(realm, log.config().name)) {}
    bool file() const { return log.config().storage == StreamStorage::file; }
  };
  struct RealmRt {
    std::map<std::string, std::unique_ptr<StreamRt>> streams;
    SubjectIndex bindings{kNatsSyntax};  // every stream's subject patterns, by stream id
    std::unordered_map<std::string, StreamRt*> consumer_stream;  // consumer name -> its stream
    uint64_t bytes = 0;
    size_t waiting_pulls = 0;  // of all its consumers (kMaxWaitingPullsPerRealm)
  };

  State(Broker& b, store::Writer& w, StreamsOptions o)
      : broker(b), writer(w), options(o),
        ack_timers(io, [this](std::pair<uint64_t, uint64_t> k) { on_ack_due(k.first, k.second); }),
        pull_timers(io, [this](uint64_t id) { on_pull_due(id); }),
        expiry_timers(io, [this](uint64_t id) { on_expiry_due(id); }) {}

  Broker& broker;
  store::Writer& writer;
  StreamsOptions options;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::thread thread;
  Deadlines<std::pair<uint64_t, uint64_t>> ack_timers;  // (consumer id, stream seq): ack wait or nak delay
  Deadlines<uint64_t> pull_timers;                       // waiting pull id
  Deadlines<uint64_t> expiry_timers;                     // stream id: its oldest message's max_age

  std::map<std::string, RealmRt> realms;
  std::unordered_map<uint64_t, StreamRt*> streams_by_id;
  std::unordered_map<uint64_t, ConsumerRt*> consumers_by_id;
  std::unordered_map<uint64_t, uint64_t> pull_consumer;  // waiting pull id -> consumer id
  uint64_t next_id = 1;
  uint64_t total_bytes = 0;
  std::atomic<uint64_t> unwritten{0};
  // Bytes of publishes posted to this thread and not yet taken up (any thread adds, this one subtracts):
  // past StreamsOptions::max_unwritten_bytes a publish is refused before it is posted.
  std::atomic<uint64_t> queued{0};
  mutable std::mutex counts_mu;
  std::unordered_map<std::string, RealmStreamCounts> counts;

  // Work for this thread, from any thread (from this one: to run after the current change). Coalesced:
  // one asio post takes everything queued until this thread gets to it, so that a burst of publishes
  // costs one wakeup and one lock of asio's queue, not one each. Runs in the order posted.
  void post(std::function<void()> f);
  void run_posted();
  std::mutex posted_mu;
  std::vector<std::function<void()>> posted;
  std::vector<std::function<void()>> posted_spare;  // the other buffer: its capacity is kept

  // Runs `then` on the streams thread once `ops` (and everything submitted before) is written. The ops of
  // one turn of this thread go to the writer together, as one submission, when the turn ends
  // (flush_writes, posted): the writer groups them anyway, and one submission and one callback post for
  // a whole burst of publishes cost less than one each.
  void submit(std::vector<store::Op> ops, std::function<void(const Status&)> then);
  void flush_writes();
  std::vector<store::Op> unsubmitted_ops;
  std::vector<std::function<void(const Status&)>> unsubmitted_thens;
  bool flush_posted = false;
  // Runs `f` on the streams thread once everything submitted to the writer before is written.
  void after_writes(std::function<void(const Status&)> f);
  void recount(const std::string& realm);

  // streams.cc: finding things.
  RealmRt* realm_of(const std::string& realm);
  StreamRt* stream_of(const std::string& realm, const std::string& name);
  ConsumerRt* consumer_of(const std::string& realm, const std::string& name);
  StreamRt* binding(const std::string& realm, std::string_view subject);
  Result<ConsumerRt*> consumer_in(const std::string& realm, const std::string& stream, const std::string& name);

  // Every file stream's records as puts (set_persistence's copy).
  void append_records(std::vector<store::Op>& ops) const;

  // stream_admin.cc
  ConsumerInfo info_of(const ConsumerRt& c) const;
  StreamInfo info_of(const StreamRt& s, bool with_consumers) const;
  store::Op config_record(const StreamRt& s) const;
  void bind_subjects(const std::string& realm);
  void drop_stream(RealmRt& realm, StreamRt& s, std::vector<store::Op>& ops);
  void drop_consumer(ConsumerRt& c, std::vector<store::Op>* ops);

  // stream_publish.cc
  // Stores a publish (§4 stream.pub, §8.7–§8.9); `done` once it is written (at once for a memory stream or
  // a refusal), on this thread.
  void store_message(const std::string& realm, PublishRequest& req, Done<PublishAck> done);
  // The same into a given stream, whatever binds the subject (a dead letter).
  void store_into(StreamRt& st, PublishRequest& req, Done<PublishAck> done);
  void removed_from_log(StreamRt& s, const std::vector<uint64_t>& seqs, std::vector<store::Op>& ops);
  void after_ack(StreamRt& s, uint64_t seq);
  void arm_expiry(StreamRt& s);
  void on_expiry_due(uint64_t stream_id);
  void committed(uint64_t stream_id, uint64_t seq);
  void unstore(uint64_t stream_id, uint64_t seq);

  // consumer_delivery.cc
  std::vector<BusMessagePtr> take(ConsumerRt& c, size_t max);
  void wake(ConsumerRt& c);
  void push(ConsumerRt& c);
  void flush(ConsumerRt& c, std::function<void(const Status&)> then);
  store::ConsumerState record_of(const ConsumerRt& c) const;
  void settle(ConsumerRt& c, uint64_t seq);  // forget a pending seq (acked, termed, gone)
  // Each unacked delivery a consumer tracks (its pending entry, its ack-wait deadline, its place in the
  // redelivery set) counts this much against the realm's and the server's stream bytes, like a stored
  // message: max_ack_pending bounds one consumer, this bounds them all together.
  static constexpr uint64_t kPendingEntryBytes = 192;
  bool pending_room(const StreamRt& st) const;
  void charge_pending(const StreamRt& st, int64_t entries);
  // max_ack_pending as enforced: the consumer's, or the server's cap when it asked for no limit.
  static size_t ack_pending_cap(const ConsumerRt& c) {
    const int64_t asked = c.config.max_ack_pending;
    return static_cast<size_t>(asked > 0 && asked < kMaxAckPendingLimit ? asked : kMaxAckPendingLimit);
  }
  void update_floor(ConsumerRt& c);
  int64_t ack_wait_ms(const ConsumerRt& c, uint64_t deliveries) const;
  bool exhausted(const ConsumerRt& c, const Pending& p) const {
    return c.config.max_deliver > 0 && p.deliveries >= static_cast<uint64_t>(c.config.max_deliver);
  }
  void on_ack_due(uint64_t consumer_id, uint64_t seq);
  void on_pull_due(uint64_t pull_id);
  void pull_ended(const ConsumerRt& c);  // a waiting pull was answered or dropped
  void dead_letter(ConsumerRt& c, uint64_t seq, const std::string& reason, bool advisory);
  void acknowledge(const std::string& realm, const std::string& consumer, uint64_t seq, AckKind kind, int64_t delay_ms,
                   const std::string& reason, const Done<Ok>& done);
  void pull(const std::string& realm, PullRequest& req, Done<std::vector<BusMessagePtr>> done);
};

}  // namespace siomq::broker
