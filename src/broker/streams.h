// The bus's persistent streams and their consumers (bus.md §5–§7), one engine part beside the durable
// queues: per realm, streams (broker/stream.h: the log, limits, dedup) bound to subject patterns that
// never overlap, and consumers — a cursor, a pending set with ack deadlines, redelivery with backoff,
// max_deliver and the dead-letter stream, pull requests waiting for messages, push delivery through the
// realm's core subscriptions.
//
// Threading: one thread owns all of it, like the durable queues: callers post requests, and every
// answer comes back through a callback run on that thread (the surface hops to its socket from there).
// Every change of a file stream — a message, a removal, a consumer's cursor, acks and delivery counts,
// a config — goes through the store writer, and nothing is answered (a publish, an ack, a pull's
// messages) before the change that backs it is written (§7, §8.17). Memory streams write nothing.
//
// Ownership: `broker` and `writer` outlive this object; stop() before the writer stops.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/bus_message.h"
#include "broker/stream.h"
#include "broker/stream_config.h"
#include "store/store.h"
#include "wire/result.h"

namespace siomq::store {
class Writer;
}

namespace siomq::broker {

class Broker;

struct StreamsOptions {
  size_t max_streams_per_realm = 100;
  size_t max_consumers_per_realm = 1000;
  // Bytes of stored messages (as Stream counts them), per realm and in all: streams are held in memory.
  uint64_t max_bytes_per_realm = 256ull << 20;
  uint64_t max_bytes_total = 1ull << 30;
  // Bytes of file-stream messages submitted to the writer and not yet written: past it, 503.
  uint64_t max_unwritten_bytes = 256ull << 20;
  // When set, a stream.pub's message reaches the core subscribers of its subject through this (the bus
  // surface: here and on the other nodes of a cluster, surfaces/bus/cluster_bus.h) rather than this node's
  // alone. Called on the streams thread, without locks held. (Streams::set_route_core sets it later.)
  std::function<void(const std::string& realm, const BusMessagePtr& message)> route_core;
};

struct ConsumerInfo {
  ConsumerConfig config;
  int64_t created_ms = 0;
  uint64_t delivered_consumer = 0, delivered_stream = 0, ack_floor_consumer = 0, ack_floor_stream = 0;
  uint64_t num_pending = 0, num_ack_pending = 0, num_redelivered = 0, num_waiting = 0;
};

struct StreamInfo {
  StreamConfig config;
  int64_t created_ms = 0;
  StreamState state;
  uint64_t consumer_count = 0;
  std::vector<ConsumerInfo> consumers;
};

struct PublishRequest {
  std::string subject;
  std::string header;  // JSON object text or empty
  std::string data;
  std::string msg_id;  // msg_id or the Msg-Id header; empty: none
  std::string stream;  // must bind the subject when given
  std::optional<uint64_t> expect_last_seq, expect_last_subject_seq;
  bool captured = false;  // a core pub the realm's core subscribers had already
};
struct PublishAck {
  std::string stream;
  uint64_t seq = 0;
  bool duplicate = false;
};

struct PullRequest {
  std::string consumer;
  size_t batch = 1;
  int64_t wait_ms = 0;
  bool no_wait = false;
};

// A realm's streams in numbers (`stats`).
struct RealmStreamCounts {
  uint64_t streams = 0, consumers = 0, messages = 0, bytes = 0;
};

class Streams {
 public:
  template <class T>
  using Done = std::function<void(Result<T>)>;

  Streams(Broker& broker, store::Writer& writer, StreamsOptions options);
  ~Streams();
  Streams(const Streams&) = delete;
  Streams& operator=(const Streams&) = delete;

  // Rebuilds every bus stream and consumer from the store (SSE history streams, "$…", are not ours);
  // returns the ops that erase records it cannot use (logged). Before start() only.
  std::vector<store::Op> load(const store::Contents& contents);
  void start();
  // StreamsOptions::route_core from now on (any thread; it is taken on the streams thread).
  void set_route_core(std::function<void(const std::string& realm, const BusMessagePtr& message)> route);
  void stop();

  // Control plane (§5). Names are validated by the caller (stream_config.h).
  void create(std::string realm, StreamConfig config, bool update, Done<StreamInfo> done);
  void remove(std::string realm, std::string name, Done<Ok> done);
  void purge(std::string realm, std::string name, std::string subject, uint64_t keep, Done<uint64_t> done);
  void info(std::string realm, std::string name, Done<StreamInfo> done);
  // `with_consumers`: each StreamInfo lists its consumers too (the web console).
  void list(std::string realm, Done<std::vector<StreamInfo>> done, bool with_consumers = false);
  // Direct get by seq, or the newest on `last_by_subject` when it is not empty (§8.23).
  void get(std::string realm, std::string name, uint64_t seq, std::string last_by_subject, Done<BusMessagePtr> done);
  void add_consumer(std::string realm, ConsumerConfig config, Done<ConsumerInfo> done);
  void remove_consumer(std::string realm, std::string stream, std::string name, Done<Ok> done);
  void consumer_info(std::string realm, std::string stream, std::string name, Done<ConsumerInfo> done);

  // Data plane (§4). stream.pub: answered once durable; 404 when no stream binds the subject.
  void publish(std::string realm, PublishRequest request, Done<PublishAck> done);
  // A core `pub` on a subject a stream binds (§8.8): stored (once per `msg_id` within the dedup window,
  // when not empty), nobody answered.
  void capture(std::string realm, BusMessagePtr message, std::string msg_id = {});
  // consumer.pull: the messages (each with its StreamOrigin) once at least one is there or the wait ends.
  void pull(std::string realm, PullRequest request, Done<std::vector<BusMessagePtr>> done);
  enum class AckKind { ack, nak, term, progress };
  void acknowledge(std::string realm, std::string consumer, uint64_t seq, AckKind kind, int64_t delay_ms,
                   std::string reason, Done<Ok> done);
  // A `sub` on `pattern` in the realm: push consumers whose deliver_subject it matches, waiting for a
  // subscriber, go on.
  void interest_changed(std::string realm, std::string pattern);

  // A removed realm: its streams and consumers are deleted (and their records). `done` may be empty.
  void purge_realm(std::string realm, std::function<void()> done);
  // A realm's totals, from any thread (kept in atomics-free snapshots updated on the thread).
  RealmStreamCounts counts(const std::string& realm) const;
  // set_persistence's copy (DurableQueues::MoveAlong): appends every file stream's records (config,
  // messages, consumers) to `ops` and calls `commit` with them all on the streams thread, the calling
  // thread waiting until it has, so that no stream change falls between the copy and the switch.
  void move_along(std::vector<store::Op> ops, const std::function<void(std::vector<store::Op>)>& commit);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// The stream's name in the store: "<realm byte length>:<realm>:<name>" (never "$…", the SSE history's).
std::string stream_store_name(std::string_view realm, std::string_view name);

}  // namespace siomq::broker
