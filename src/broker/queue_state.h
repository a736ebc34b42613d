// The state behind DurableQueues: internal to the durable queues (src/broker/durable_queues.h is their
// interface), included only by the files that define its parts.
//
// Shards (docs/design.md "Durable queue shards"): QueueOptions::shards States, each with its own thread,
// each owning the queues whose id hashes to it (shard_of) with everything that is per queue or per copy:
// entries, by_id, deadlines, expiries, the DLQ entries of its queues, their stored subscriptions, the
// connections its copies are out to, its batch for the writer. A State is touched only on its own thread,
// except where a member says otherwise (`written`, filled by the writer thread under `written_mu`;
// `io_owner`, held weakly by transport receipts). What the shards share is in Shared: the seq counter,
// the bytes not yet written, and the caps' counts (under their mutex).
//
// Ownership: DurableQueues owns the State. `queues` owns each Queue, a Queue owns its entries (std::map:
// their addresses are stable while they live). by_id, the connections' lists, deadlines and expiries hold
// raw Entry pointers, and remove() takes an entry out of all of them before it dies; an entry points at
// its Connection, which lives while an entry is linked to it; the starved lines hold queue
// ids, looked up again when fed. A Queue outlives its entries (empty ones go in the sweep, or with their
// subscription or realm). `broker` and `writer` are the ones given to DurableQueues and outlive it.
//
// The small functions every part calls on the hot path (take_off, land, release_bytes, cancel_due, post, the
// byte counts) are defined here, inline; the rest in the file of their concept:
//   queue_log.cc         queues and their entries, the byte caps, writes to the store, enqueue and commit
//   delivery_window.cc   the prefetch window and the connection's bytes, pump, receipts, replay, close
//   ack_deadlines.cc     ACK deadlines, retries with backoff, the ACK itself, TTL expiry
//   dead_letters.cc      the dead-letter queue
//   durable_subscriptions.cc  stored subscriptions, and a removed realm's purge
//   durable_queues.cc    the public API: its hops onto the queues thread, load, start and stop
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "broker/deadlines.h"
#include "broker/durable_queues.h"
#include "store/store.h"
#include "wire/clock.h"

namespace siomq::broker {

using SteadyClock = std::chrono::steady_clock;

// A queue's identity, (realm, key, consumer_id), as one map key: the same joining as a stored
// subscription's id, whose third part is the consumer name instead.
inline std::string queue_id(std::string_view realm, std::string_view key, std::string_view consumer_id) {
  return store::subscription_id(realm, key, consumer_id);
}

// A stored subscription id (realm NUL key NUL consumer) and its spec as a record; nullopt when the id is
// not one.
inline std::optional<store::SubscriptionRecord> subscription_record(const std::string& id, const std::string& spec) {
  size_t a = id.find('\0');
  size_t b = a == std::string::npos ? a : id.find('\0', a + 1);
  if (b == std::string::npos) return std::nullopt;
  return store::SubscriptionRecord{id.substr(0, a), id.substr(a + 1, b - a - 1), id.substr(b + 1), spec};
}

// A copy as an endpoint receives it; `attempt` > 0 in ACK mode.
inline Delivery delivery_of(std::string_view key, const store::Row& row, int attempt = 0) {
  Delivery d(key, row.payload.str(), row.attachments);
  if (attempt) {
    d.msg_id = row.id;
    d.attempt = attempt;
  }
  return d;
}

// Copies of one queue out at once: in ACK mode in flight or waiting for a retry, without ACK sent and
// waiting for the transport's receipt. This prefetch window (and QueueOptions::window_bytes) paces a
// backlog: it is sent as ACKs or receipts free room, never all at once, so a replay of any size neither
// overflows the connection's outbound bound (which cuts the consumer) nor holds the store's rows twice.
constexpr size_t kPrefetchWindow = 256;

// What keeping one stored row in memory costs besides its bytes (entry, indexes, ids), for the byte caps.
constexpr size_t kRowOverhead = 256;

// A realm's share of the caps: its rows and the bytes charged to it. It lives while either is not zero.
struct RealmUse {
  const std::string* name = nullptr;  // its key in QueueCaps::realms
  size_t rows = 0;
  size_t bytes = 0;
};

// The counts the caps are judged on, shared by the shards (a realm's queues may be on any of them): a copy
// is checked against the caps and charged in one step under `mu` (charge_if_fits), so the caps are exact
// whichever shards store a realm's copies.
struct QueueCaps {
  std::mutex mu;
  std::unordered_map<std::string, RealmUse> realms;  // by realm
  size_t total_bytes = 0;
};

// What every shard reads or writes: atomics, or under their own mutex.
struct DurableQueues::Shared {
  explicit Shared(size_t n) : shards(n) {}
  static constexpr size_t kMaxShards = 16;  // a message id names its shard in one hex digit
  const size_t shards;
  std::atomic<uint64_t> next_seq{1};  // rows are keyed by seq, unique across the shards
  std::atomic<size_t> unwritten{0};   // bytes enqueued whose write has not finished (behind())
  QueueCaps caps;
  // What the stored copies hold, as the byte caps count it (QueueStats::queued_bytes). Any thread.
  size_t queued_bytes() {
    std::lock_guard lock(caps.mu);
    return caps.total_bytes;
  }
  // The shard that owns a queue (by its queue_id).
  size_t shard_of(std::string_view id) const { return shards == 1 ? 0 : std::hash<std::string_view>{}(id) % shards; }
  // The shard a message id is looked for first: the one its last hex digit names (QueueOptions::
  // new_message_id), else a hash of it. Ids made elsewhere (moved from another node, stored under another
  // shard count, the decimal seqs) may be in any shard; a shard that does not know one passes it on.
  size_t home_of_message(std::string_view id) const {
    if (shards == 1 || id.empty()) return 0;
    const char c = id.back();
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit >= 0 && static_cast<size_t>(digit) < shards) return static_cast<size_t>(digit);
    return shard_of(id);
  }
};

struct DurableQueues::State {
  struct Queue;
  struct Connection;
  enum class Phase { stored, in_flight, backoff };
  struct Entry {
    store::Row row;
    Queue* queue = nullptr;
    bool committed = false;
    Phase phase = Phase::stored;
    int attempt = 0;
    bool acking = false;  // an ACK's deletion is being written
    uint32_t awaited = 0;  // how many writes' continuations hold a Ref to it (see Ref)
    uint64_t receipt = 0;  // without ACK: sent, deleted once the transport receipt with this token comes
    size_t charge = 0;     // what it counts against the byte caps (see charge_of)
    bool sole_payload = false;  // no other row holds its payload buffer: charged in `charge`, not `payloads`
    // Where the current attempt went, and its neighbours among the copies out to that connection.
    Connection* out = nullptr;
    Entry* prev_out = nullptr;
    Entry* next_out = nullptr;
  };
  // A connection copies are out to: the bytes of the copies out there (what the window protects is the
  // connection's outbound bound, shared by all its queues) and those copies, linked through their
  // entries, so that a closing connection finds its own without a search. It lives while a copy is linked
  // to it (an entry lands, giving its bytes back, before it is unlinked). One record per connection, so a
  // copy's way out and back costs pointer steps, not a string copy and lookups in three maps.
  struct Connection {
    const std::string* id = nullptr;  // its key in `connections`
    size_t bytes = 0;
    Entry* first = nullptr;
  };
  struct Queue {
    std::string realm, key, consumer_id, consumer;
    DeliveryPolicy policy;
    std::map<uint64_t, Entry> entries;  // by seq: the delivery order
    size_t uncommitted = 0;             // entries whose write is in progress
    size_t flying = 0;                  // entries in flight or in backoff: at most kPrefetchWindow
    size_t acking = 0;                  // entries whose ACK's deletion is being written
    // No entry below this seq waits to be sent (committed, stored, not acking): pump() starts here, so
    // a queue whose window is full of copies in flight does not walk them for every new copy.
    uint64_t scan_from = 0;
    std::string id;                     // its key in `queues`
    bool swept = false;                 // in `emptied`, waiting for the sweep
  };

  // An entry as a write's continuation holds it: the commit of its put, or its ACK's deletion (both at
  // once when a copy moved from another node, whose id its consumer knows, is ACKed while it is written
  // here). The continuation reaches the entry by pointer instead of looking its id up again; an entry
  // removed meanwhile (a purge, a move, a dropped queue) leaves its seq in `gone_awaited`, once for each
  // continuation holding it, and seqs are never reused, so resolve() tells a live entry from a dead one
  // without touching the dead one's memory.
  struct Ref {
    Entry* entry;
    uint64_t seq;
  };
  Ref await(Entry& e) {
    ++e.awaited;
    return {&e, e.row.seq};
  }
  // The entry, or null if it was removed; the continuation holds it no longer.
  Entry* resolve(const Ref& r) {
    if (!gone_awaited.empty()) {
      if (auto it = gone_awaited.find(r.seq); it != gone_awaited.end()) {
        if (--it->second == 0) gone_awaited.erase(it);
        return nullptr;
      }
    }
    --r.entry->awaited;
    return r.entry;
  }
  // The entry, or null if it was removed, still held.
  Entry* peek(const Ref& r) const { return gone_awaited.count(r.seq) ? nullptr : r.entry; }

  static bool occupies(const Entry& e) { return e.phase == Phase::in_flight || e.phase == Phase::backoff; }
  // Each attachment's bytes and its bookkeeping (so that many empty ones are not free).
  static size_t attachment_bytes(const std::vector<std::string>& attachments) {
    size_t n = 0;
    for (const auto& a : attachments) n += a.size() + kAttachmentBookkeeping;
    return n;
  }
  static constexpr size_t kAttachmentBookkeeping = 64;
  // What a copy puts on its connection.
  static size_t bytes_of(const Entry& e) { return e.row.payload.size() + attachment_bytes(e.row.attachments); }
  // No entry below scan_from waits to be sent: one that may be sent again lowers it.
  static void may_send_again(Entry& e) { e.queue->scan_from = std::min(e.queue->scan_from, e.row.seq); }

  // An entry enters the window (sent: linked to its connection first, by link_socket) or leaves it (back
  // to stored, or forgotten). The count is the queue's; the bytes are the connection's, shared by all its
  // queues, since what the window protects is the connection's outbound bound.
  void take_off(Entry& e) {
    if (occupies(e)) return;
    ++e.queue->flying;
    e.out->bytes += bytes_of(e);
  }
  void land(Entry& e) {
    if (occupies(e)) {
      --e.queue->flying;
      release_bytes(*e.out, bytes_of(e));
    }
    e.phase = Phase::stored;
    e.receipt = 0;
    may_send_again(e);
  }
  void release_bytes(Connection& c, size_t bytes) {
    c.bytes -= bytes;
    // Queues of this connection that stopped for want of its room go on, first come first served, after
    // the current event (so that no pump runs inside another).
    if (!starved.empty() && starved.count(*c.id)) post([this, socket = *c.id] { feed_starved(socket); });
  }
  // The connection record of `socket`, if a copy is out to it.
  Connection* connection(const std::string& socket) {
    auto it = connections.find(socket);
    return it == connections.end() ? nullptr : &it->second;
  }
  static const std::string& socket_of(const Entry& e) {
    static const std::string kNone;
    return e.out ? *e.out->id : kNone;
  }
  void feed_starved(const std::string& socket);
  void wait_for_room(const std::string& socket, const std::string& queue_id);
  // What a stored row costs against the byte caps is what keeping it in memory takes. Its own part:
  // bookkeeping and attachments (copied per row). The payload is charged apart, once per buffer however
  // many rows share it (store::SharedText; charge_payload / release_payload).
  static size_t charge_of(const std::vector<std::string>& attachments) {
    return kRowOverhead + attachment_bytes(attachments);
  }
  // A payload buffer is charged to the realm of the first row holding it, until the last one goes.
  struct PayloadUse {
    size_t rows = 0;
    RealmUse* realm = nullptr;  // alive while the payload is charged to it (its bytes are not zero)
  };
  // (`precharged`: the realm's bytes were charged already, by charge_if_fits.)
  void charge_payload(const store::Row& row, RealmUse& realm, bool precharged);
  // The realm whose bytes the row's payload left when it was its last row (for forget_unused), else null.
  RealmUse* release_payload(const store::Row& row);
  // The realm's record, made if it has none yet; forget_unused drops one holding nothing. (Under caps.mu.)
  RealmUse& realm_use_of(const std::string& realm) {
    auto [it, fresh] = shared.caps.realms.try_emplace(realm);
    if (fresh) it->second.name = &it->first;
    return it->second;
  }
  void forget_unused(RealmUse& u) {
    if (u.rows == 0 && u.bytes == 0) shared.caps.realms.erase(*u.name);
  }
  // What a message costs the writer's backlog: each copy is encoded (payload included) on its own.
  static size_t copy_bytes(const StoredMessage& m) { return m.payload.size() + charge_of(m.attachments); }
  // Whether any cap on stored copies is set.
  bool capped() const {
    return options.max_queued_per_realm || options.max_queued_bytes_per_realm || options.max_queued_bytes_total;
  }
  // Whether one more copy of `bytes` fits in `realm` under the caps on rows and bytes; if it does, its row
  // and bytes are charged at once (one step under caps.mu, so shards racing on a realm cannot both pass the
  // last room), and the copy's add() is told `precharged`.
  bool charge_if_fits(const std::string& realm, size_t bytes);

  // Room for one more copy of `q` to the connection `socket`: the queue's count, and the connection's
  // bytes (at least one copy goes whatever its size).
  // (`c`: the connection's record, null when nothing is out to it yet.)
  bool window_open(const Queue& q, const Connection* c) const;
  bool connection_full(const Connection* c) const;

  // Sends stored copies of a queue while its window has room, oldest first, stopping at the first copy
  // still being written (commits finish in order, so nothing newer may pass it). Nothing to do (the
  // usual case of a consumer that keeps up) costs nothing; otherwise, unless `eager`, it refills only
  // once half the window is free, so the scan over the window's head is O(1) per ACK on average.
  // Without ACK mode the copies sent together are deleted when the transport's receipt for them comes.
  void pump(Queue& q, bool eager = false, EndpointPtr to = nullptr);

  // The transport took (or, `ok` false, never took) the copies sent together under `token`: taken ones
  // are deleted and the window refilled; the others wait for the consumer's next replay.
  void on_sent(uint64_t token, const std::vector<std::string>& ids, bool ok);

  State(Broker& b, store::Writer& w, QueueOptions o, Shared& sh, size_t i)
      : broker(b), writer(w), options(o), shared(sh), index(i), io_owner(std::make_shared<boost::asio::io_context>()),
        io(*io_owner), due(io, [this](Entry* e) { on_due(*e); }), expiry_timer(io) {}

  Broker& broker;
  store::Writer& writer;
  QueueOptions options;  // window_bytes is this shard's share of the connection's window
  Shared& shared;
  const size_t index;  // which shard this is
  // Transport receipts may be answered from destructors after this state is gone (an endpoint held by a
  // realm, destroyed at shutdown after the queues): they hold the io_context weakly and post nothing then.
  std::shared_ptr<boost::asio::io_context> io_owner;
  boost::asio::io_context& io;
  // The pending ACK deadline ("ACK timeout" in flight) or retry (in backoff) of each entry that has one.
  Deadlines<Entry*> due;
  boost::asio::steady_timer expiry_timer;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::thread thread;

  // What stats() and view() report as the totals: this shard's, but for queued_bytes (the caps', shared).
  QueueStats totals() const;
  // A put of every stored row, DLQ entry and durable subscription of this shard (a move of the store).
  std::vector<store::Op> records() const;
  // view()'s per-realm counts (queue_view.cc): a pass over every queue and DLQ entry, made at most once a
  // second however many console sessions ask.
  std::map<std::string, RealmQueueCounts> viewed_realms;
  SteadyClock::time_point viewed_at{};

  std::map<std::string, Queue, std::less<>> queues;  // by queue_id
  // The queue of (realm, key, consumer_id), looked up by an id built in a buffer kept for it (every copy
  // looks up its queue: no allocation for it), or null.
  Queue* find_queue(std::string_view realm, std::string_view key, std::string_view consumer_id);
  std::string id_buffer;
  // By message id, viewing the entry's own row.id (no second copy of the id per copy stored): an entry's
  // row.id does not change while it lives, and remove() takes it out of here first.
  std::unordered_map<std::string_view, Entry*> by_id;
  std::unordered_map<std::string, Connection> connections;  // by socket id: where copies are out
  // Seqs of entries removed while continuations held them (Ref), with how many still do: few, and each
  // leaves when the last of its continuations runs.
  std::unordered_map<uint64_t, uint32_t> gone_awaited;
  // connection -> ids of its queues waiting for its room, in the order they began to wait
  std::unordered_map<std::string, std::deque<std::string>> starved;
  // Payload buffers held by this shard's rows. A message with copies on two shards is charged by each
  // (too much while both live, never too little).
  std::unordered_map<const std::string*, PayloadUse> payloads;
  // Expiries and `due` hold only live entries (a removed entry leaves them at once), so memory follows
  // what is stored, not what went through.
  struct ByTime {
    template <class T>
    bool operator()(const std::pair<T, Entry*>& a, const std::pair<T, Entry*>& b) const {
      if (a.first != b.first) return a.first < b.first;
      return std::less<Entry*>{}(a.second, b.second);
    }
  };
  std::set<std::pair<int64_t, Entry*>, ByTime> expiries;  // (expires_ms, entry)
  std::map<uint64_t, store::DeadRow> dead;  // by seq: oldest first
  std::unordered_map<std::string, uint64_t> dead_by_id;
  // subscription_id -> its surface's spec. Only the first shard's is used: a subscription is named by its
  // consumer's name, its queue by a consumer id that may change between subscribes, so the record cannot
  // follow its queue's shard; on one shard every write of a record is in one order. (Subscribing is rare.)
  std::unordered_map<std::string, std::string> stored_specs;
  std::unordered_set<std::string> emptied;  // empty queues for the sweep to drop (queue_log.cc)
  // The changes submitted during this turn of the thread's loop, handed to the writer together by flush()
  // (posted by the turn's first submission): one submission, one closure and one lock of the writer per
  // turn, not per message. `thens` holds every submission's continuation, empty ones too (they count
  // the store's failures), in submission order.
  using Then = std::function<void(const Status&)>;
  struct Batch {
    std::vector<store::Op> ops;
    std::vector<Then> thens;
  };
  Batch batch;
  bool flush_posted = false;
  // Batches written by the writer thread, with their outcome, waiting for run_written on this thread.
  std::mutex written_mu;
  std::vector<std::pair<std::vector<Then>, Status>> written;
  uint64_t next_seq() { return shared.next_seq.fetch_add(1, std::memory_order_relaxed); }
  uint64_t next_receipt = 1;
  QueueStats counters;

  // queue_log.cc: queues, their entries and the store.
  // A fresh id for the copy `seq`, as its surface names copies (QueueOptions::new_message_id), naming this
  // shard (Shared::home_of_message), so that its ACK comes here first.
  std::string new_id(uint64_t seq);
  Queue& queue_for(const QueueCopy& q);
  // `sole_payload`: no other row holds the row's payload buffer (one stored copy of a message), which is
  // then charged with the entry instead of counted in `payloads` (a hash node made and freed per message).
  // Said of a shared buffer, it would charge that buffer twice while both rows live, never too little.
  // `precharged`: charge_if_fits has charged its row and bytes (exactly what add would have).
  Entry& add(Queue& q, store::Row row, bool committed, bool sole_payload = false, bool precharged = false);
  // Forgets an entry (the caller writes the matching store change).
  void remove(Entry& e);
  void drop_empty_queues();
  // Adds `ops` to this turn's batch; `then(status)` runs on this thread once they are written (at once,
  // with Ok, when there are none).
  void submit(std::vector<store::Op> ops, Then then = {});
  // One change (an ACK's deletion), or those the caller appended to batch.ops itself (a copy's put):
  // no vector of their own per message.
  void submit(store::Op op, Then then = {});
  void submit_appended(Then then);
  // Hands this turn's batch to the writer (a change that must reach the store before something else
  // does, such as a move to another store, flushes first).
  void flush();
  void run_written();
  void enqueue(const std::shared_ptr<const StoredMessage>& message, std::vector<QueueCopy>& copies, Confirm done);
  // A live copy goes out now if its consumer is still online and nothing older of its queue is being
  // written; false: store it instead.
  bool deliver_live(const StoredMessage& message, const QueueCopy& copy);
  void committed(const std::vector<Ref>& refs, const Status& status, const Confirm& done);

  // queue_moves.cc: durable queues across nodes.
  Moved release(const std::string& realm, const std::string& consumer);
  // This shard's part of an adoption: its queues' subscriptions (their consumer and policy, unless known
  // here), rows and DLQ entries, written with `ops` (the first shard's: the subscriptions new here); `done`
  // once written, with how many rows and DLQ entries were taken.
  void adopt(store::Backend::Contents& contents, const std::vector<DurableSubscription>& subs, std::vector<store::Op> ops,
             const std::function<void(const Status&, size_t rows, size_t dead)>& done);

  // delivery_window.cc (with the window's functions above): where entries are out to, replay, a closed socket.
  EndpointPtr endpoint_of(const Queue& q);
  void link_socket(Entry& e, const EndpointPtr& to);
  void unlink_socket(Entry& e);
  void replay(const QueueCopy& copy, const EndpointPtr& to);
  // A copy sent without ACK mode and waiting for its transport receipt is left to the receipt (every
  // receipt is answered: true if the frames were written before the close, and then the copy is deleted
  // rather than sent again). The rest land, and their queues go on if their consumer is online elsewhere.
  void socket_closed(const std::string& socket);

  // ack_deadlines.cc: the timers of ACK deadlines and retries, the ACK, TTL expiry.
  void schedule(Entry& e, int64_t after_ms);
  void cancel_due(Entry& e) { due.cancel(&e); }
  void on_due(Entry& e);
  // Sends attempt `attempt` of an entry of an ACK-mode queue and starts its ACK timer.
  void deliver(Entry& e, const EndpointPtr& to, int attempt);
  void on_ack_timeout(Entry& e);
  void on_retry(Entry& e);
  // (`reply` is taken: it waits in the deletion's continuation.)
  void ack(const std::string& realm, const std::string& socket, const std::string& id, AckReply reply);
  // Purges rows whose time has passed: every second, and before a replay.
  void purge_expired();
  void schedule_expiry_sweep();

  // dead_letters.cc
  void dead_letter(Entry& e, std::string reason);
  void dlq_replay(const std::string& msg_id, const std::function<void(const Result<std::string>&)>& done);

  // durable_subscriptions.cc
  // (Stored subscriptions are all the first shard's: see stored_specs.)
  void save_subscription(DurableSubscription sub);
  void remove_subscription(const DurableSubscription& sub);
  // Deletes the queue of `sub` with its rows (its own shard).
  void drop_queue(const DurableSubscription& sub);
  void purge_realm(const std::string& realm, const std::function<void(const Status&)>& done);

  void post(std::function<void()> f) { boost::asio::post(io, std::move(f)); }
  // Tells QueueOptions::observer, if there is one.
  template <class F>
  void observe(F&& tell) {
    if (options.observer) tell(*options.observer);
  }
};

using Shards = std::vector<std::unique_ptr<DurableQueues::State>>;

// Adds a shard's counts to `sum`, but for queued_bytes (the caps' count, already the shards' total).
void add_counts(QueueStats& sum, const QueueStats& shard);

// Runs `part(shard, reply)` on every shard's thread; once each has replied (at once or later, from any
// thread), `done` gets their answers in shard order, on the thread of the last reply.
template <class T>
void gather(const Shards& shards, std::function<void(DurableQueues::State&, std::function<void(T)>)> part,
            std::function<void(std::vector<T>)> done) {
  struct Pending {
    std::mutex mu;
    std::vector<T> answers;
    size_t left;
    std::function<void(std::vector<T>)> done;
  };
  auto p = std::make_shared<Pending>();
  p->answers.resize(shards.size());
  p->left = shards.size();
  p->done = std::move(done);
  for (size_t i = 0; i < shards.size(); ++i) {
    DurableQueues::State* s = shards[i].get();
    s->post([s, p, i, part] {
      part(*s, [p, i](T answer) {
        std::unique_lock lock(p->mu);
        p->answers[i] = std::move(answer);
        if (--p->left) return;
        lock.unlock();
        p->done(std::move(p->answers));
      });
    });
  }
}

// Asks the shards one after another, `home` first, on each one's thread: `ask(shard, next)` answers, or
// calls `next()` to pass the question on; the last shard gets a null `next` and must answer. (For what
// is looked up by message id: its id names a shard, but ids made elsewhere may be in any.)
void ask_in_turn(const Shards& shards, size_t home, std::function<void(DurableQueues::State&, std::function<void()>)> ask,
                 size_t asked = 0);

}  // namespace siomq::broker
