// Durable queues (protocol §5): for every queue (realm, subscription key, consumer id) an ordered log
// of stored copies, the pending set with ACK deadlines, redelivery with backoff, TTL expiry and the
// dead-letter queue. Each queue is owned by one of QueueOptions::shards threads (a hash of its id picks
// it): callers post requests, answers come back through callbacks run on a queues thread (the one of the
// queue concerned; for a request about several shards, the one that answers last), so a queue's
// deliveries leave in one order. Every change goes through
// the store writer, and nothing is promised to anyone — a producer's confirm, an ACK_OK, the delivery
// of a stored copy — before the change is written (and synced, per the writer's mode).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/queue_observer.h"
#include "broker/realm_registry.h"
#include "store/store.h"
#include "wire/result.h"

namespace siomq::store {
class Writer;
}

namespace siomq::broker {

class Broker;

struct QueueOptions {
  std::optional<int64_t> default_ttl_ms = 86400 * 1000LL;  // storage default_ttl; nullopt: never expires
  size_t max_queued_per_realm = 0;                          // 0: unlimited
  // Bytes held by stored copies (payload + attachments + kRowOverhead each), per realm and in all; a copy
  // past either is dropped and counted like one past max_queued_per_realm. 0: unlimited.
  size_t max_queued_bytes_per_realm = 0;
  size_t max_queued_bytes_total = 0;
  std::chrono::milliseconds expiry_interval{1000};          // how often expired rows are purged
  // The bytes of stored copies one queue has out at once (besides the count, kPrefetchWindow); at least
  // one copy goes whatever its size. The server sets a quarter of the connection's outbound bound, so a
  // replay never makes its consumer a slow consumer.
  size_t window_bytes = 16 * 1024 * 1024;
  // Bytes of copies handed to enqueue() whose write has not finished yet: past this the store is behind
  // (behind() says so) and the surface refuses new copies instead of queueing without bound.
  size_t max_unwritten_bytes = 256 * 1024 * 1024;
  // The id of the stored copy `seq`, as its surface names copies (tyo-mq: "msg-<base36 ms>-<12 hex>"); the
  // engine asks again until the id is unused. With several shards `shard` is the one storing the copy
  // (0 .. 15) and the id must end in its lowercase hex digit, which is how an ACK finds its shard; -1: any
  // id. Unset: the decimal seq (an ACK then looks for it shard after shard).
  std::function<std::string(uint64_t seq, int shard)> new_message_id;
  // Told of stored, sent, timed-out and dead-lettered copies (the metrics), from every queues thread;
  // null: nobody. Outlives the queues.
  QueueObserver* observer = nullptr;
  // Queues threads (docs/design.md "Durable queue shards"). Each owns the queues whose id hashes to it;
  // window_bytes is shared out between them (a connection's copies may come from all of them).
  size_t shards = 1;
};

// A durable subscription as the engine keeps it: the queue it feeds and how that queue delivers, with its
// surface's own description of it (`spec`), stored as it is and given back at start-up.
struct DurableSubscription {
  std::string realm, key, consumer;  // the stored record's identity
  std::string consumer_id;           // the queue is (realm, key, consumer_id)
  DeliveryPolicy policy;
  std::string spec;                  // the surface's encoding (a JSON object)
};
// Reads a stored subscription record back: nullopt when its surface cannot use it (it is quarantined).
using ReadSubscription = std::function<std::optional<DurableSubscription>(const store::SubscriptionRecord&)>;

// A produced message, shared by the copies stored for it.
struct StoredMessage {
  store::SharedText payload;  // the delivery object {event, message, from, …}, shared by the stored copies
  std::vector<std::string> attachments;
  std::string producer;
  std::optional<int64_t> ttl_ms;  // nullopt: never expires
};

// One copy to store: the queue it goes to and how that queue delivers.
struct QueueCopy {
  std::string realm;
  std::string key;
  std::string consumer_id;
  std::string consumer;  // the consumer name, to find its connection
  DeliveryPolicy policy;
  // A durable subscription without ACK mode whose consumer was online when the message was routed:
  // sent at once and not stored — unless the consumer went offline meanwhile, or its queue still has
  // copies being written (they go first), and then it is stored like any other copy. Passing live
  // copies through the queue keeps one order per queue with its replays.
  bool live = false;
  // With `live`: if it cannot go out live, it is dropped rather than stored (the store is behind).
  bool live_only = false;
};

struct QueueStats {
  uint64_t queues = 0;     // queues holding rows (empty ones are dropped by the next sweep)
  uint64_t queued = 0;     // rows stored now
  uint64_t queued_bytes = 0;  // what they hold, as the byte caps count it
  uint64_t in_flight = 0;  // delivered, waiting for an ACK
  uint64_t dead = 0;       // rows in the DLQ
  uint64_t enqueued = 0, acked = 0, redelivered = 0, ack_timeouts = 0, dead_lettered = 0, expired = 0,
           dropped_over_cap = 0, store_failures = 0;
  uint64_t quarantined = 0;  // unreadable records moved aside at start-up (store::Backend::Contents)
};

// One realm's part of the queues, and one queue, as the web console shows them.
struct RealmQueueCounts {
  uint64_t queued = 0, in_flight = 0, dead = 0;  // in_flight: sent, waiting for an ACK or a retry
};
struct QueueSummary {
  std::string key, consumer, consumer_id;
  uint64_t depth = 0, in_flight = 0;
  int64_t oldest_ms = 0;  // the oldest copy's creation (Unix ms); 0 when empty
};
struct QueueView {
  QueueStats totals;
  std::map<std::string, RealmQueueCounts> realms;  // realms with a queue or a DLQ entry
  std::vector<QueueSummary> queues;                // of the realm asked for
  bool truncated = false;
};

class DurableQueues {
 public:
  // `broker` and `writer` must outlive this object.
  DurableQueues(Broker& broker, store::Writer& writer, QueueOptions options);
  ~DurableQueues();
  DurableQueues(const DurableQueues&) = delete;
  DurableQueues& operator=(const DurableQueues&) = delete;

  // Rebuilds the queues from the backend's contents (expired rows are purged) and returns the durable
  // subscriptions `read` could use, for their surface to restore. Before start() only.
  std::vector<DurableSubscription> load(store::Backend::Contents contents, const ReadSubscription& read);
  void start();
  // Stops the thread; callbacks not yet run are dropped. The writer is stopped (drained) after this.
  void stop();

  // Stores `copies` of `message` (or delivers the live ones). `done(stored, status)` once they are
  // written: `stored` copies were kept (the rest were delivered live or went over the realm's cap). Then
  // each ACK-mode copy whose consumer is online is delivered, and so is any copy whose consumer came
  // online in the meantime.
  using Confirm = std::function<void(size_t stored, const Status& status)>;
  void enqueue(std::shared_ptr<const StoredMessage> message, std::vector<QueueCopy> copies, Confirm done);
  // Whether the copies enqueued and not yet written exceed QueueOptions::max_unwritten_bytes: the disk (or
  // Redis) is slower than the publishers. Any thread.
  bool behind() const;

  // SUBSCRIBE's replay (§5.4) of one queue to `endpoint`, in order, a window at a time: in ACK mode each
  // row goes out as attempt 1 with a fresh ACK timer and the next rows as ACKs free the window; without
  // ACK the next window goes once the transport has taken the previous one, and a row is deleted only
  // then (a connection that closes first gets it again on its next replay).
  void replay(QueueCopy queue, EndpointPtr endpoint);

  // ACK (§3.7, §0 row 11) from `socket_id` in `realm`. `reply(code, message)`: 200 after the row's
  // deletion is written, 404 unknown, 403 someone else's, 500 when the deletion could not be written
  // (the copy then stays stored, waiting for its replay).
  using AckReply = std::function<void(int code, const std::string& message)>;
  void ack(std::string realm, std::string socket_id, std::string msg_id, AckReply reply);

  // The connection went away: its ACK timers and retries stop; the rows wait for replay (§4.7).
  void socket_closed(std::string socket_id);

  // Durable subscriptions are stored so that they survive restarts (§0 row 6). `remove_subscription`
  // forgets the stored spec and, with `drop_queue`, deletes the queue's rows (§0 row 4).
  // (`spec` is not used by remove_subscription.)
  void save_subscription(DurableSubscription subscription);
  void remove_subscription(DurableSubscription subscription, bool drop_queue);

  // The DLQ (§5.6), behind the management commands. dlq_list: oldest first, every realm when nullopt.
  void dlq_list(std::optional<std::string> realm, std::function<void(std::vector<store::DeadRow>)> done);
  // 404 when there is no such entry (in `realm`, when given).
  void dlq_discard(std::string msg_id, std::optional<std::string> realm, std::function<void(const Status&)> done);
  // Stores the message again under a new id with the default TTL and drops the DLQ entry; if the
  // consumer is online, its queue is replayed. `done` gets the new id; 404 as dlq_discard.
  void dlq_replay(std::string msg_id, std::optional<std::string> realm,
                  std::function<void(const Result<std::string>&)> done);

  // A removed realm (management's remove_realm, an expired ephemeral realm): every stored row, DLQ
  // entry and durable subscription of `realm` is deleted. `done` (optional) once that is written.
  void purge_realm(std::string realm, std::function<void(const Status&)> done);

  void stats(std::function<void(const QueueStats&)> done);
  // What the web console shows of the queues (queue_view.cc): the totals, the realms' counts (of `only`
  // when given, else of every realm), and the queues of `watched` (when given; at most `limit`, by key).
  // The realms' counts are a pass over every queue and DLQ entry, made at most once a second.
  void view(std::optional<std::string> watched, std::optional<std::string> only, size_t limit,
            std::function<void(QueueView)> done);

  // Another part of the engine whose records move with the queues' (the key directory): called on the
  // queues thread with the queues' records, it appends its own and calls `commit` with them all while
  // none of its changes can be submitted (under its lock), so each of them reaches the old store before
  // the copy or the new one after it.
  using MoveAlong =
      std::function<void(std::vector<store::Op> ops, const std::function<void(std::vector<store::Op>)>& commit)>;
  // Moves every stored row, DLQ entry and durable subscription (and `along`'s records) to `next` and
  // makes the writer use it from then on (management's set_persistence). `done` on the writer thread; on
  // failure nothing moved. From one thread at a time (every shard waits for the others during a move: two
  // moves posted in different orders to the shards would wait for each other).
  void move_store(store::Backend& next, std::function<void(const Status&)> done, MoveAlong along = {});
  // Durable queues across nodes (docs/scale-out.md "Durable queues across nodes"; queue_moves.cc).
  // A consumer's queues taken out of this node, as a store holds them: their rows (by seq) and stored
  // subscriptions (no DLQ entries: those stay).
  using Moved = store::Backend::Contents;
  // Takes every queue of the consumer name `consumer` in `realm`, and its stored subscriptions, out of
  // this node: from now on they are not delivered, timed or expired here. Their records stay in the store
  // until forget(). `done` on the queues thread. Copies in flight there are delivered again where they go.
  void release(std::string realm, std::string consumer, std::function<void(Moved)> done);
  // Erases released records from the store (they are stored elsewhere now); a subscription stored here
  // again since (the consumer came back) is kept.
  void forget(Moved moved, std::function<void(const Status&)> done);
  // Stores another node's rows, DLQ entries and subscriptions here as this node's own: new seqs, the same
  // message ids (a row whose id is here already is skipped: it was adopted before). Expired rows are
  // dropped. `done(status, subscriptions)` once written, with the subscriptions `read` could use, for
  // their surface to restore; the queues whose consumer is online go out at once.
  using Adopted = std::function<void(const Status&, std::vector<DurableSubscription>)>;
  void adopt(store::Backend::Contents contents, ReadSubscription read, Adopted done);
  // Every (realm, consumer name) with a stored subscription or a stored copy here, once each.
  using Consumers = std::vector<std::pair<std::string, std::string>>;
  void consumers(std::function<void(Consumers)> done);

  // The TTL of copies without one of their own, and of DLQ replays (§5.5), from now on.
  void set_default_ttl(std::optional<int64_t> ttl_ms);

  // Which queues thread (0 .. QueueOptions::shards - 1) owns the queue (realm, key, consumer_id). Any thread.
  size_t shard_of(std::string_view realm, std::string_view key, std::string_view consumer_id) const;

  // The insides (src/broker/queue_state.h): a shard, and what the shards share. Named here for the files
  // that define the queues' parts; nothing else can use them.
  struct State;
  struct Shared;

 private:
  State& shard_of_queue(std::string_view realm, std::string_view key, std::string_view consumer_id) const;
  // An ACK its id's shard did not know, to the other shards in turn.
  void pass_ack_on(size_t home, std::string realm, std::string socket_id, std::string msg_id, AckReply reply);
  std::unique_ptr<Shared> shared_;
  std::vector<std::unique_ptr<State>> shards_;
};

// The §5.2 retry delay after attempt n (n ≥ 1).
int64_t retry_delay_ms(const DeliveryPolicy& policy, int attempt);

}  // namespace siomq::broker
