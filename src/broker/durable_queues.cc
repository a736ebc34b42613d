#include "broker/durable_queues.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <pthread.h>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "broker/broker.h"
#include "store/writer.h"
#include "wire/clock.h"
#include "wire/js_json.h"
#include "wire/log_text.h"
#include "wire/socketio.h"

namespace siomq::broker {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::string queue_id(std::string_view realm, std::string_view key, std::string_view consumer_id) {
  std::string id(realm);
  id.push_back('\0');
  id.append(key);
  id.push_back('\0');
  id.append(consumer_id);
  return id;
}

// The delivery object of an ACK-mode copy: the stored one plus msgId, msg_id and delivery_attempt.
std::string with_ack_fields(const std::string& payload, const std::string& id, int attempt) {
  std::string out = payload;
  if (out.empty() || out.back() != '}') return out;
  out.pop_back();
  if (out.size() > 1) out.push_back(',');
  std::string quoted;
  sio::append_json_string(quoted, id);
  out += "\"msgId\":" + quoted + ",\"msg_id\":" + quoted + ",\"delivery_attempt\":" + std::to_string(attempt) + "}";
  return out;
}

store::Op put_row(const store::Row& row) {
  return store::Op{store::Op::Kind::put_row, row.seq, {}, store::encode_row(row)};
}
store::Op delete_row(uint64_t seq) { return store::Op{store::Op::Kind::delete_row, seq, {}, {}}; }

}  // namespace

int64_t retry_delay_ms(const DeliveryPolicy& policy, int attempt) {
  if (!policy.exponential || attempt <= 1) return policy.retry_delay_ms;
  // delay · 2^(n-1), saturating at a day: an exponent past that only means "wait very long".
  constexpr int64_t kCap = 86400 * 1000LL;
  int64_t d = policy.retry_delay_ms;
  for (int i = 1; i < attempt && d < kCap; ++i) d *= 2;
  return std::min(d, std::max(kCap, policy.retry_delay_ms));
}

// Copies of one queue out at once: in ACK mode in flight or waiting for a retry, without ACK sent and
// waiting for the transport's receipt. This prefetch window (and QueueOptions::window_bytes) paces a
// backlog: it is sent as ACKs or receipts free room, never all at once, so a replay of any size neither
// overflows the connection's outbound bound (which cuts the consumer) nor holds the store's rows twice.
constexpr size_t kPrefetchWindow = 256;

// What keeping one stored row in memory costs besides its bytes (entry, indexes, ids), for the byte caps.
constexpr size_t kRowOverhead = 256;

struct DurableQueues::State {
  struct Queue;
  enum class Phase { stored, in_flight, backoff };
  struct Entry {
    store::Row row;
    Queue* queue = nullptr;
    bool committed = false;
    Phase phase = Phase::stored;
    int attempt = 0;
    bool acking = false;  // an ACK's deletion is being written
    uint64_t receipt = 0;  // without ACK: sent, deleted once the transport receipt with this token comes
    size_t charge = 0;     // what it counts against the byte caps (see charge_of)
    std::string socket;  // where the current attempt went
    std::optional<SteadyClock::time_point> due;  // the pending ACK deadline or retry, in `deadlines`
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
  };

  static bool occupies(const Entry& e) { return e.phase == Phase::in_flight || e.phase == Phase::backoff; }
  static size_t attachment_bytes(const std::vector<std::string>& attachments) {
    size_t n = 0;
    for (const auto& a : attachments) n += a.size();
    return n;
  }
  // What a copy puts on its connection.
  static size_t bytes_of(const Entry& e) { return e.row.payload.size() + attachment_bytes(e.row.attachments); }
  // No entry below scan_from waits to be sent: one that may be sent again lowers it.
  static void may_send_again(Entry& e) { e.queue->scan_from = std::min(e.queue->scan_from, e.row.seq); }

  // An entry enters the window (sent: its socket is set) or leaves it (back to stored, or forgotten).
  // The count is the queue's; the bytes are the connection's, shared by all its queues, since what the
  // window protects is the connection's outbound bound.
  void take_off(Entry& e) {
    if (occupies(e)) return;
    ++e.queue->flying;
    socket_bytes[e.socket] += bytes_of(e);
  }
  void land(Entry& e) {
    if (occupies(e)) {
      --e.queue->flying;
      release_bytes(e.socket, bytes_of(e));
    }
    e.phase = Phase::stored;
    e.receipt = 0;
    may_send_again(e);
  }
  void release_bytes(const std::string& socket, size_t bytes) {
    auto it = socket_bytes.find(socket);
    if (it == socket_bytes.end()) return;
    if ((it->second -= bytes) == 0) socket_bytes.erase(it);
    // Queues of this connection that stopped for want of its room go on, first come first served, after
    // the current event (so that no pump runs inside another).
    if (starved.count(socket)) post([this, socket] { feed_starved(socket); });
  }
  void feed_starved(const std::string& socket) {
    auto waiting = starved.find(socket);
    while (waiting != starved.end() && !waiting->second.empty() && !connection_full(socket)) {
      std::string id = std::move(waiting->second.front());
      waiting->second.pop_front();
      if (waiting->second.empty()) starved.erase(waiting);
      if (auto q = queues.find(id); q != queues.end()) pump(q->second, true);  // may queue it again, last
      waiting = starved.find(socket);
    }
  }
  void wait_for_room(const std::string& socket, const std::string& queue_id) {
    auto& line = starved[socket];
    if (std::find(line.begin(), line.end(), queue_id) == line.end()) line.push_back(queue_id);
  }
  // What a stored row costs against the byte caps is what keeping it in memory takes. Its own part:
  // bookkeeping and attachments (copied per row). The payload is charged apart, once per buffer however
  // many rows share it (store::SharedText; charge_payload / release_payload).
  static size_t charge_of(const std::vector<std::string>& attachments) {
    return kRowOverhead + attachment_bytes(attachments);
  }
  // A payload buffer is charged to the realm of the first row holding it, until the last one goes.
  struct PayloadUse {
    size_t rows = 0;
    std::string realm;
  };
  void charge_payload(const store::Row& row) {
    PayloadUse& use = payloads[&row.payload.str()];
    if (use.rows++ > 0) return;
    use.realm = row.realm;
    realm_bytes[row.realm] += row.payload.size();
    total_bytes += row.payload.size();
  }
  void release_payload(const store::Row& row) {
    auto it = payloads.find(&row.payload.str());
    if (it == payloads.end() || --it->second.rows > 0) return;
    total_bytes -= row.payload.size();
    if ((realm_bytes[it->second.realm] -= row.payload.size()) == 0) realm_bytes.erase(it->second.realm);
    payloads.erase(it);
  }
  // What a message costs the writer's backlog: each copy is encoded (payload included) on its own.
  static size_t copy_bytes(const StoredMessage& m) { return m.payload.size() + charge_of(m.attachments); }
  // Whether one more copy of `bytes` fits in `realm` under the caps on rows and bytes.
  bool fits(const std::string& realm, size_t bytes) {
    auto over = [](size_t cap, size_t now, size_t more) { return cap && now + more > cap; };
    auto count = realm_counts.find(realm);
    auto held = realm_bytes.find(realm);
    return !over(options.max_queued_per_realm, count == realm_counts.end() ? 0 : count->second, 1) &&
           !over(options.max_queued_bytes_per_realm, held == realm_bytes.end() ? 0 : held->second, bytes) &&
           !over(options.max_queued_bytes_total, total_bytes, bytes);
  }

  // Room for one more copy of `q` to the connection `socket`: the queue's count, and the connection's
  // bytes (at least one copy goes whatever its size).
  bool window_open(const Queue& q, const std::string& socket) const {
    if (q.flying >= kPrefetchWindow) return false;
    auto it = socket_bytes.find(socket);
    return it == socket_bytes.end() || it->second < options.window_bytes;
  }
  bool connection_full(const std::string& socket) const {
    auto it = socket_bytes.find(socket);
    return it != socket_bytes.end() && it->second >= options.window_bytes;
  }

  // Sends stored copies of a queue while its window has room, oldest first, stopping at the first copy
  // still being written (commits finish in order, so nothing newer may pass it). Nothing to do (the
  // usual case of a consumer that keeps up) costs nothing; otherwise, unless `eager`, it refills only
  // once half the window is free, so the scan over the window's head is O(1) per ACK on average.
  // Without ACK mode the copies sent together are deleted when the transport's receipt for them comes.
  void pump(Queue& q, bool eager = false, EndpointPtr to = nullptr) {
    if (q.entries.size() <= q.flying + q.acking + q.uncommitted) return;
    if (!eager && q.flying > kPrefetchWindow / 2) return;
    if (!to) to = endpoint_of(q);
    if (!to) return;
    uint64_t token = q.policy.ack ? 0 : next_receipt++;
    std::vector<std::string> sent;
    const std::string& socket = to->socket_id();
    auto it = q.entries.lower_bound(q.scan_from);
    for (; it != q.entries.end(); ++it) {
      Entry& e = it->second;
      if (!e.committed) break;
      if (e.acking || e.phase != Phase::stored) continue;
      if (!window_open(q, socket)) {
        if (connection_full(socket)) wait_for_room(socket, q.id);  // fed again as the connection's room frees
        break;
      }
      if (q.policy.ack) {
        deliver(e, to, 1);
        continue;
      }
      link_socket(e, to);
      take_off(e);
      e.phase = Phase::in_flight;
      e.receipt = token;
      sink.deliver(to, q.key, e.row.payload, e.row.attachments);
      sent.push_back(e.row.id);
    }
    // Everything before where the walk stopped is out, or acking: the next walk starts there.
    q.scan_from = it == q.entries.end() ? next_seq : it->first;
    if (sent.empty()) return;
    sink.when_sent(to, [this, alive = std::weak_ptr(io_owner), token, ids = std::move(sent)](bool ok) mutable {
      if (auto io_alive = alive.lock())
        boost::asio::post(*io_alive, [this, token, ids = std::move(ids), ok] { on_sent(token, ids, ok); });
    });
  }

  // The transport took (or, `ok` false, never took) the copies sent together under `token`: taken ones
  // are deleted and the window refilled; the others wait for the consumer's next replay.
  void on_sent(uint64_t token, const std::vector<std::string>& ids, bool ok) {
    std::vector<store::Op> ops;
    Queue* q = nullptr;
    std::string socket;
    for (const auto& id : ids) {
      auto it = by_id.find(id);
      if (it == by_id.end() || it->second->receipt != token) continue;  // expired, purged or resent since
      Entry& e = *it->second;
      q = e.queue;
      socket = e.socket;
      if (ok) {
        ops.push_back(delete_row(e.row.seq));
        remove(e);
      } else {
        land(e);
        unlink_socket(e);
      }
    }
    submit(std::move(ops));
    // The queue object outlives this call (empty ones go in the sweep). Not taken: the copies go again
    // at once if the consumer is on another connection now (a reconnect), else with its next replay
    // (never back into the connection that is closing).
    if (!q) return;
    if (ok) return pump(*q, true);
    if (EndpointPtr to = endpoint_of(*q); to && to->socket_id() != socket) pump(*q, true, to);
  }

  State(Broker& b, store::Writer& w, DeliverySink& s, QueueOptions o)
      : broker(b), writer(w), sink(s), options(o), io_owner(std::make_shared<boost::asio::io_context>()), io(*io_owner),
        timer(io), expiry_timer(io) {
    uint64_t seed = 0;
    RAND_bytes(reinterpret_cast<unsigned char*>(&seed), sizeof seed);
    rng.seed(seed ^ static_cast<uint64_t>(SteadyClock::now().time_since_epoch().count()));
  }

  Broker& broker;
  store::Writer& writer;
  DeliverySink& sink;
  QueueOptions options;
  // Transport receipts may be answered from destructors after this state is gone (an endpoint held by a
  // realm, destroyed at shutdown after the queues): they hold the io_context weakly and post nothing then.
  std::shared_ptr<boost::asio::io_context> io_owner;
  boost::asio::io_context& io;
  boost::asio::steady_timer timer;
  boost::asio::steady_timer expiry_timer;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::thread thread;
  std::mt19937_64 rng;

  std::map<std::string, Queue> queues;  // by queue_id
  std::unordered_map<std::string, Entry*> by_id;
  std::unordered_map<std::string, std::unordered_set<Entry*>> by_socket;  // in flight or in backoff
  std::unordered_map<std::string, size_t> socket_bytes;  // bytes of the copies out to each connection
  // connection -> ids of its queues waiting for its room, in the order they began to wait
  std::unordered_map<std::string, std::deque<std::string>> starved;
  std::unordered_map<std::string, size_t> realm_counts;
  std::unordered_map<std::string, size_t> realm_bytes;  // the charges of a realm's rows and payloads
  std::unordered_map<const std::string*, PayloadUse> payloads;  // payload buffers held by rows
  size_t total_bytes = 0;
  // Both sets hold only live entries (a removed entry leaves them at once), so memory follows what is
  // stored, not what went through. An entry's deadline means "ACK timeout" in flight, "retry" in backoff.
  struct ByTime {
    template <class T>
    bool operator()(const std::pair<T, Entry*>& a, const std::pair<T, Entry*>& b) const {
      if (a.first != b.first) return a.first < b.first;
      return std::less<Entry*>{}(a.second, b.second);
    }
  };
  std::set<std::pair<SteadyClock::time_point, Entry*>, ByTime> deadlines;
  std::optional<SteadyClock::time_point> armed;
  std::set<std::pair<int64_t, Entry*>, ByTime> expiries;  // (expires_ms, entry)
  std::map<uint64_t, store::DeadRow> dead;  // by seq: oldest first
  std::unordered_map<std::string, uint64_t> dead_by_id;
  std::unordered_map<std::string, std::string> stored_specs;  // subscription_id -> stored spec
  std::vector<std::string> emptied;  // queues that became empty since the last sweep
  // Writes finished by the writer thread, waiting for run_written on this thread.
  std::mutex written_mu;
  std::vector<std::pair<std::function<void(const Status&)>, Status>> written;
  uint64_t next_seq = 1;
  uint64_t next_receipt = 1;
  std::atomic<size_t> unwritten{0};  // bytes enqueued whose write has not finished (DurableQueues::behind)
  QueueStats counters;

  // "msg-" base36(now ms) "-" 12 hex digits, as the reference makes them.
  std::string new_id() {
    std::string time = js::base36(static_cast<uint64_t>(unix_ms()));
    for (;;) {
      char hex[13];
      std::snprintf(hex, sizeof hex, "%012llx", static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
      std::string id = "msg-" + time + "-" + hex;
      if (!by_id.count(id) && !dead_by_id.count(id)) return id;
    }
  }

  Queue& queue_for(const QueueCopy& q) {
    auto [it, fresh] = queues.try_emplace(queue_id(q.realm, q.key, q.consumer_id));
    Queue& queue = it->second;
    if (fresh) {
      queue.id = it->first;
      queue.realm = q.realm;
      queue.key = q.key;
      queue.consumer_id = q.consumer_id;
    }
    if (!q.consumer.empty()) {
      queue.consumer = q.consumer;
      queue.policy = q.policy;
    }
    return queue;
  }

  EndpointPtr endpoint_of(const Queue& q) {
    if (q.consumer.empty()) return nullptr;
    EndpointPtr to;
    broker.if_realm(q.realm, [&](Realm& r) { to = r.consumer_endpoint(q.consumer); });
    return to;
  }

  Entry& add(Queue& q, store::Row row, bool committed) {
    Entry& e = q.entries[row.seq];
    e.row = std::move(row);
    e.charge = charge_of(e.row.attachments);
    charge_payload(e.row);
    e.queue = &q;
    e.committed = committed;
    if (!committed) ++q.uncommitted;
    by_id[e.row.id] = &e;
    ++realm_counts[q.realm];
    realm_bytes[q.realm] += e.charge;
    total_bytes += e.charge;
    if (e.row.expires_ms) expiries.emplace(e.row.expires_ms, &e);
    return e;
  }

  void link_socket(Entry& e, const EndpointPtr& to) {
    if (e.socket == to->socket_id()) return;
    if (occupies(e)) {  // its bytes move to the new connection
      release_bytes(e.socket, bytes_of(e));
      socket_bytes[to->socket_id()] += bytes_of(e);
    }
    unlink_socket(e);
    e.socket = to->socket_id();
    by_socket[e.socket].insert(&e);
  }

  void unlink_socket(Entry& e) {
    if (e.socket.empty()) return;
    auto it = by_socket.find(e.socket);
    if (it != by_socket.end()) {
      it->second.erase(&e);
      if (it->second.empty()) by_socket.erase(it);
    }
    e.socket.clear();
  }

  // Forgets an entry (the caller writes the matching store change).
  void remove(Entry& e) {
    land(e);
    if (e.acking) --e.queue->acking;
    unlink_socket(e);
    cancel_due(e);
    if (e.row.expires_ms) expiries.erase({e.row.expires_ms, &e});
    Queue& q = *e.queue;
    if (!e.committed) --q.uncommitted;
    by_id.erase(e.row.id);
    if (--realm_counts[q.realm] == 0) realm_counts.erase(q.realm);
    total_bytes -= e.charge;
    if ((realm_bytes[q.realm] -= e.charge) == 0) realm_bytes.erase(q.realm);
    release_payload(e.row);
    q.entries.erase(e.row.seq);
    // An empty queue holds nothing worth keeping (the next copy or replay brings its consumer and
    // policy): the sweep drops it, so queues keyed by short-lived socket ids do not pile up.
    if (q.entries.empty()) emptied.push_back(q.id);
  }

  void drop_empty_queues() {
    for (const auto& id : emptied) {
      auto it = queues.find(id);
      if (it != queues.end() && it->second.entries.empty()) queues.erase(it);
    }
    emptied.clear();
  }

  void submit(std::vector<store::Op> ops, std::function<void(const Status&)> then = {}) {
    if (ops.empty()) {
      if (then) then(Ok{});
      return;
    }
    writer.submit(std::move(ops), [this, then = std::move(then)](const Status& status) mutable {
      if (status && !then) return;
      // The writer finishes a whole group of submissions at once: their continuations go to this
      // thread together, in one handler, not one wake-up each.
      bool first;
      {
        std::lock_guard lock(written_mu);
        first = written.empty();
        written.emplace_back(std::move(then), status);
      }
      if (first) boost::asio::post(io, [this] { run_written(); });
    });
  }

  void run_written() {
    std::vector<std::pair<std::function<void(const Status&)>, Status>> batch;
    {
      std::lock_guard lock(written_mu);
      batch.swap(written);
    }
    for (auto& [then, status] : batch) {
      if (!status) ++counters.store_failures;
      if (then) then(status);
    }
  }

  void schedule(Entry& e, int64_t after_ms) {
    cancel_due(e);
    e.due = SteadyClock::now() + std::chrono::milliseconds(after_ms);
    deadlines.emplace(*e.due, &e);
    if (!armed || *e.due < *armed) arm(*e.due);
  }

  void cancel_due(Entry& e) {
    if (!e.due) return;
    deadlines.erase({*e.due, &e});
    e.due.reset();
  }

  void arm(SteadyClock::time_point at) {
    armed = at;
    timer.expires_at(at);
    timer.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      armed.reset();
      fire_due();
    });
  }

  void fire_due() {
    auto now = SteadyClock::now();
    while (!deadlines.empty() && deadlines.begin()->first <= now) {
      Entry& e = *deadlines.begin()->second;
      deadlines.erase(deadlines.begin());
      e.due.reset();
      if (e.phase == Phase::in_flight) on_ack_timeout(e);
      else if (e.phase == Phase::backoff) on_retry(e);
    }
    if (!deadlines.empty()) arm(deadlines.begin()->first);
  }

  // Sends attempt `attempt` of an entry of an ACK-mode queue and starts its ACK timer.
  void deliver(Entry& e, const EndpointPtr& to, int attempt) {
    const Queue& q = *e.queue;
    link_socket(e, to);
    if (attempt > 1) ++counters.redelivered;
    take_off(e);
    e.phase = Phase::in_flight;
    e.receipt = 0;
    e.attempt = attempt;
    schedule(e, q.policy.ack_timeout_ms);
    sink.deliver(to, q.key, with_ack_fields(e.row.payload, e.row.id, attempt), e.row.attachments);
  }

  void on_ack_timeout(Entry& e) {
    ++counters.ack_timeouts;
    const DeliveryPolicy& p = e.queue->policy;
    if (e.attempt >= p.max_attempts) {
      dead_letter(e, "ack timeout after " + std::to_string(e.attempt) + " attempt(s)");
      return;
    }
    e.phase = Phase::backoff;
    schedule(e, retry_delay_ms(p, e.attempt));
  }

  void on_retry(Entry& e) {
    // Only a consumer online now gets the retry, and only while its queue is still in ACK mode;
    // otherwise the row waits for its replay (§5.2).
    EndpointPtr to = e.queue->policy.ack ? endpoint_of(*e.queue) : nullptr;
    if (to) {
      deliver(e, to, e.attempt + 1);
    } else {
      land(e);
      unlink_socket(e);
      pump(*e.queue);  // a queue no longer in ACK mode sends it on at once if its consumer is online
    }
  }

  void dead_letter(Entry& e, std::string reason) {
    store::DeadRow d{e.row, std::move(reason), unix_ms()};
    std::vector<store::Op> ops{delete_row(d.row.seq),
                               store::Op{store::Op::Kind::put_dead, d.row.seq, {}, store::encode_dead_row(d)}};
    spdlog::info("dead-lettered {} for {} in realm {}: {}", d.row.id, log_text(d.row.consumer), d.row.realm, d.reason);
    dead_by_id[d.row.id] = d.row.seq;
    dead.emplace(d.row.seq, std::move(d));
    ++counters.dead_lettered;
    Queue& q = *e.queue;
    remove(e);
    submit(std::move(ops));
    pump(q);
  }

  // Purges rows whose time has passed: every second, and before a replay.
  void purge_expired() {
    int64_t now = unix_ms();
    std::vector<store::Op> ops;
    // Uncommitted rows wait for their write to finish (their commit may still deliver them).
    std::vector<Entry*> due;
    for (auto it = expiries.begin(); it != expiries.end() && it->first <= now; ++it) {
      if (it->second->committed && !it->second->acking) due.push_back(it->second);
    }
    std::vector<Queue*> freed;  // ACK-mode queues whose window an expired copy left
    for (Entry* e : due) {
      ops.push_back(delete_row(e->row.seq));
      ++counters.expired;
      if (occupies(*e)) freed.push_back(e->queue);
      remove(*e);
    }
    submit(std::move(ops));
    for (Queue* q : freed) pump(*q, true);
  }

  void schedule_expiry_sweep() {
    expiry_timer.expires_after(options.expiry_interval);
    expiry_timer.async_wait([this](const boost::system::error_code& ec) {
      if (ec) return;
      purge_expired();
      drop_empty_queues();
      schedule_expiry_sweep();
    });
  }

  void enqueue(const std::shared_ptr<const StoredMessage>& message, std::vector<QueueCopy>& copies, Confirm done) {
    int64_t now = unix_ms();
    std::vector<store::Op> ops;
    std::vector<std::string> ids;
    // Live copies go first. The rest share one payload, charged with the first of them.
    std::erase_if(copies, [&](const QueueCopy& copy) {
      if (copy.live && deliver_live(*message, copy)) return true;
      if (!copy.live_only) return false;
      ++counters.dropped_over_cap;  // the store is behind: a copy that cannot go live is refused
      return true;
    });
    const size_t charge = charge_of(message->attachments);
    bool payload_charged = false;
    for (const QueueCopy& copy : copies) {
      if (!fits(copy.realm, charge + (payload_charged ? 0 : message->payload.size()))) {
        if (counters.dropped_over_cap++ % 1000 == 0)
          spdlog::warn("realm {}: max_queued_per_realm ({}) or the queued bytes caps ({} per realm, {} in all) reached; "
                       "copy for {} dropped ({} so far)", copy.realm, options.max_queued_per_realm,
                       options.max_queued_bytes_per_realm, options.max_queued_bytes_total, log_text(copy.consumer_id),
                       counters.dropped_over_cap);
        continue;
      }
      Queue& q = queue_for(copy);
      store::Row row;
      row.seq = next_seq++;
      row.id = new_id();
      row.realm = copy.realm;
      row.event = copy.key;
      row.consumer = copy.consumer_id;
      row.producer = message->producer;
      row.payload = message->payload;
      row.attachments = message->attachments;
      row.created_ms = now;
      row.expires_ms = message->ttl_ms ? std::max<int64_t>(1, now + *message->ttl_ms) : 0;
      ops.push_back(put_row(row));
      ids.push_back(row.id);
      add(q, std::move(row), false);
      payload_charged = true;
      ++counters.enqueued;
    }
    if (ids.empty()) {
      if (done) done(0, Ok{});
      return;
    }
    submit(std::move(ops), [this, ids = std::move(ids), done = std::move(done)](const Status& status) {
      committed(ids, status, done);
    });
  }

  // A live copy goes out now if its consumer is still online and nothing older of its queue is being
  // written; false: store it instead.
  bool deliver_live(const StoredMessage& message, const QueueCopy& copy) {
    auto it = queues.find(queue_id(copy.realm, copy.key, copy.consumer_id));
    if (it != queues.end() && (it->second.uncommitted || !it->second.entries.empty())) return false;
    EndpointPtr to;
    broker.if_realm(copy.realm, [&](Realm& r) { to = r.consumer_endpoint(copy.consumer); });
    if (!to) return false;
    sink.deliver(to, copy.key, message.payload, message.attachments);
    return true;
  }

  void committed(const std::vector<std::string>& ids, const Status& status, const Confirm& done) {
    size_t stored = 0;
    std::vector<Queue*> touched;  // queues with newly committed copies, pumped once each
    for (const auto& id : ids) {
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        if (status) ++stored;  // already acked or expired: it was stored all the same
        continue;
      }
      Entry& e = *it->second;
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

  void replay(const QueueCopy& copy, const EndpointPtr& to) {
    auto it = queues.find(queue_id(copy.realm, copy.key, copy.consumer_id));
    if (it == queues.end()) return;
    Queue& q = it->second;
    q.consumer = copy.consumer;
    q.policy = copy.policy;
    purge_expired();
    if (!q.policy.ack) return pump(q, true, to);  // copies waiting for a receipt are on their way already
    for (auto& [seq, e] : q.entries) {
      if (!e.committed) break;
      if (e.acking) continue;
      if (occupies(e) || window_open(q, to->socket_id())) {
        deliver(e, to, 1);  // copies in flight go again to the new subscription; the rest within the window
      } else {
        // The rest go out as ACKs free the window (or the connection's room, shared with its other queues).
        if (connection_full(to->socket_id())) wait_for_room(to->socket_id(), q.id);
        break;
      }
    }
  }

  void ack(const std::string& realm, const std::string& socket, const std::string& id, const AckReply& reply) {
    auto it = by_id.find(id);
    if (it == by_id.end() || it->second->queue->realm != realm || it->second->acking)
      return reply(404, "Pending ACK not found");
    Entry& e = *it->second;
    // The socket the copy went to may ACK it, and so may the queue's consumer wherever it is now
    // (after a reconnect, or during a retry delay: §0 row 11).
    if (e.socket != socket) {
      EndpointPtr now = endpoint_of(*e.queue);
      if (!now || now->socket_id() != socket) return reply(403, "ACK does not belong to this socket");
    }
    // The copy is forgotten only once its deletion is written; until then it is neither redelivered
    // nor expired, and a failed write leaves it stored, waiting for the next replay.
    e.acking = true;
    ++e.queue->acking;
    land(e);
    cancel_due(e);
    unlink_socket(e);
    // The window has room again: the next copies go out now, not after the deletion is written.
    pump(*e.queue);
    submit({delete_row(e.row.seq)}, [this, id, reply](const Status& status) {
      auto it = by_id.find(id);
      if (!status) {
        if (it != by_id.end()) {
          Entry& e = *it->second;
          e.acking = false;
          --e.queue->acking;
          may_send_again(e);
        }
        return reply(500, status.error().message);
      }
      ++counters.acked;
      if (it != by_id.end()) remove(*it->second);
      reply(200, "");
    });
  }

  // A copy sent without ACK mode and waiting for its transport receipt is left to the receipt (every
  // receipt is answered: true if the frames were written before the close, and then the copy is deleted
  // rather than sent again). The rest land, and their queues go on if their consumer is online elsewhere.
  void socket_closed(const std::string& socket) {
    auto it = by_socket.find(socket);
    if (it == by_socket.end()) return;
    std::set<Queue*> landed;
    for (auto e = it->second.begin(); e != it->second.end();) {
      Entry& entry = **e;
      if (entry.receipt) {
        ++e;
        continue;
      }
      land(entry);
      cancel_due(entry);
      entry.socket.clear();
      landed.insert(entry.queue);
      e = it->second.erase(e);
    }
    if (it->second.empty()) by_socket.erase(it);
    for (Queue* q : landed) pump(*q, true);
  }

  void save_subscription(const std::string& realm, const SubscribeSpec& spec) {
    std::string id = store::subscription_id(realm, subscription_key(spec.producer, spec.event), spec.consumer);
    std::string json = encode_spec(spec);
    auto& stored = stored_specs[id];
    if (stored == json) return;  // a client re-subscribing on every reconnect writes nothing
    stored = json;
    store::SubscriptionRecord rec{realm, subscription_key(spec.producer, spec.event), spec.consumer, json};
    submit({store::Op{store::Op::Kind::put_subscription, 0, id, store::encode_subscription(rec)}});
  }

  void remove_subscription(const std::string& realm, const SubscribeSpec& spec, bool drop_queue) {
    const std::string key = subscription_key(spec.producer, spec.event);
    std::vector<store::Op> ops;
    std::string id = store::subscription_id(realm, key, spec.consumer);
    if (stored_specs.erase(id)) ops.push_back(store::Op{store::Op::Kind::delete_subscription, 0, id, {}});
    if (drop_queue) {
      auto it = queues.find(queue_id(realm, key, spec.consumer_id));
      if (it != queues.end()) {
        std::vector<Entry*> all;
        for (auto& [seq, e] : it->second.entries) all.push_back(&e);
        for (Entry* e : all) {
          ops.push_back(delete_row(e->row.seq));
          remove(*e);
        }
        queues.erase(it);
      }
    }
    submit(std::move(ops));
  }

  void purge_realm(const std::string& realm, const std::function<void(const Status&)>& done) {
    std::vector<store::Op> ops;
    for (auto it = queues.begin(); it != queues.end();) {
      if (it->second.realm != realm) {
        ++it;
        continue;
      }
      std::vector<Entry*> all;
      for (auto& [seq, e] : it->second.entries) all.push_back(&e);
      for (Entry* e : all) {
        ops.push_back(delete_row(e->row.seq));
        remove(*e);
      }
      it = queues.erase(it);
    }
    for (auto it = dead.begin(); it != dead.end();) {
      if (it->second.row.realm != realm) {
        ++it;
        continue;
      }
      ops.push_back(store::Op{store::Op::Kind::delete_dead, it->first, {}, {}});
      dead_by_id.erase(it->second.row.id);
      it = dead.erase(it);
    }
    const std::string prefix = realm + '\0';
    for (auto it = stored_specs.begin(); it != stored_specs.end();) {
      if (!it->first.starts_with(prefix)) {
        ++it;
        continue;
      }
      ops.push_back(store::Op{store::Op::Kind::delete_subscription, 0, it->first, {}});
      it = stored_specs.erase(it);
    }
    submit(std::move(ops), done);
  }

  void dlq_replay(const std::string& msg_id, const std::function<void(const Result<std::string>&)>& done) {
    auto d = dead_by_id.find(msg_id);
    if (d == dead_by_id.end()) return done(make_error("DLQ entry not found", 404));
    store::DeadRow dead_row = std::move(dead.at(d->second));
    dead.erase(d->second);
    dead_by_id.erase(d);
    QueueCopy where{dead_row.row.realm, dead_row.row.event, dead_row.row.consumer, {}, {}};
    Queue& q = queue_for(where);
    store::Row row = std::move(dead_row.row);
    uint64_t old_seq = row.seq;
    row.seq = next_seq++;
    row.id = new_id();
    row.created_ms = unix_ms();
    row.expires_ms = options.default_ttl_ms ? std::max<int64_t>(1, row.created_ms + *options.default_ttl_ms) : 0;
    std::vector<store::Op> ops{store::Op{store::Op::Kind::delete_dead, old_seq, {}, {}}, put_row(row)};
    std::string id = row.id;
    add(q, std::move(row), false);
    submit(std::move(ops), [this, id, done](const Status& status) {
      committed({id}, status, {});
      if (!status) return done(status.error());
      done(id);
      // A full replay of the queue for an online consumer, as the reference does.
      auto it = by_id.find(id);
      if (it == by_id.end()) return;
      Queue& queue = *it->second->queue;
      if (EndpointPtr to = endpoint_of(queue))
        replay(QueueCopy{queue.realm, queue.key, queue.consumer_id, queue.consumer, queue.policy}, to);
    });
  }

  void post(std::function<void()> f) { boost::asio::post(io, std::move(f)); }
};

DurableQueues::DurableQueues(Broker& broker, store::Writer& writer, DeliverySink& sink, QueueOptions options)
    : state_(std::make_unique<State>(broker, writer, sink, options)) {}

DurableQueues::~DurableQueues() { stop(); }

std::vector<std::pair<std::string, SubscribeSpec>> DurableQueues::load(store::Backend::Contents contents) {
  State& s = *state_;
  std::vector<std::pair<std::string, SubscribeSpec>> out;
  std::vector<store::Op> purge;
  uint64_t quarantined = contents.quarantined;
  for (auto& rec : contents.subscriptions) {
    auto spec = decode_spec(rec.spec);
    if (!spec) {
      // A record the store could read but the engine cannot use: moved aside like the store's own.
      spdlog::warn("store: a durable subscription of {} bytes cannot be used; moved to the quarantine", rec.spec.size());
      const std::string id = store::subscription_id(rec.realm, rec.key, rec.consumer);
      purge.push_back(store::Op{store::Op::Kind::quarantine_subscription, 0, id, store::encode_subscription(rec)});
      ++quarantined;
      continue;
    }
    s.stored_specs[store::subscription_id(rec.realm, rec.key, rec.consumer)] = rec.spec;
    QueueCopy q{rec.realm, rec.key, spec->consumer_id, spec->consumer, spec->policy};
    s.queue_for(q);
    out.emplace_back(rec.realm, std::move(*spec));
  }
  int64_t now = unix_ms();
  for (auto& row : contents.rows) {
    s.next_seq = std::max(s.next_seq, row.seq + 1);
    if (row.expires_ms && row.expires_ms <= now) {
      purge.push_back(delete_row(row.seq));
      ++s.counters.expired;
      continue;
    }
    State::Queue& q = s.queue_for(QueueCopy{row.realm, row.event, row.consumer, {}, {}});
    s.add(q, std::move(row), true);
  }
  for (auto& d : contents.dead) {
    s.next_seq = std::max(s.next_seq, d.row.seq + 1);
    s.dead_by_id[d.row.id] = d.row.seq;
    s.dead.emplace(d.row.seq, std::move(d));
  }
  s.submit(std::move(purge));
  s.counters.quarantined = quarantined;
  spdlog::info("store: {} queued messages in {} queues, {} dead-lettered, {} durable subscriptions, {} quarantined",
               s.by_id.size(), s.queues.size(), s.dead.size(), out.size(), quarantined);
  return out;
}

void DurableQueues::start() {
  State& s = *state_;
  s.work.emplace(s.io.get_executor());
  s.schedule_expiry_sweep();
  s.thread = std::thread([&s] {
    pthread_setname_np(pthread_self(), "siomq-queues");
    s.io.run();
  });
}

void DurableQueues::stop() {
  State& s = *state_;
  if (!s.thread.joinable()) return;
  s.post([&s] {
    s.timer.cancel();
    s.expiry_timer.cancel();
    s.work.reset();
    s.io.stop();
  });
  s.thread.join();
}

void DurableQueues::enqueue(std::shared_ptr<const StoredMessage> message, std::vector<QueueCopy> copies, Confirm done) {
  State* s = state_.get();
  const size_t bytes = State::copy_bytes(*message) * copies.size();
  s->unwritten.fetch_add(bytes, std::memory_order_relaxed);
  // The bytes count until the copies are written (or refused): the confirm is where that is known.
  Confirm counted = [s, bytes, done = std::move(done)](size_t stored, const Status& status) {
    s->unwritten.fetch_sub(bytes, std::memory_order_relaxed);
    if (done) done(stored, status);
  };
  s->post([s, message = std::move(message), copies = std::move(copies), counted = std::move(counted)]() mutable {
    s->enqueue(message, copies, std::move(counted));
  });
}

bool DurableQueues::behind() const {
  const size_t cap = state_->options.max_unwritten_bytes;
  return cap && state_->unwritten.load(std::memory_order_relaxed) > cap;
}

void DurableQueues::replay(QueueCopy queue, EndpointPtr endpoint) {
  state_->post([s = state_.get(), queue = std::move(queue), endpoint = std::move(endpoint)] { s->replay(queue, endpoint); });
}

void DurableQueues::ack(std::string realm, std::string socket_id, std::string msg_id, AckReply reply) {
  state_->post([s = state_.get(), realm = std::move(realm), socket_id = std::move(socket_id), msg_id = std::move(msg_id),
                reply = std::move(reply)] { s->ack(realm, socket_id, msg_id, reply); });
}

void DurableQueues::socket_closed(std::string socket_id) {
  state_->post([s = state_.get(), socket_id = std::move(socket_id)] { s->socket_closed(socket_id); });
}

void DurableQueues::save_subscription(std::string realm, SubscribeSpec spec) {
  state_->post([s = state_.get(), realm = std::move(realm), spec = std::move(spec)] { s->save_subscription(realm, spec); });
}

void DurableQueues::remove_subscription(std::string realm, SubscribeSpec spec, bool drop_queue) {
  state_->post([s = state_.get(), realm = std::move(realm), spec = std::move(spec), drop_queue] {
    s->remove_subscription(realm, spec, drop_queue);
  });
}

void DurableQueues::dlq_list(std::optional<std::string> realm, std::function<void(std::vector<store::DeadRow>)> done) {
  state_->post([s = state_.get(), realm = std::move(realm), done = std::move(done)] {
    std::vector<store::DeadRow> out;
    for (const auto& [seq, d] : s->dead) {
      if (!realm || d.row.realm == *realm) out.push_back(d);
    }
    done(std::move(out));
  });
}

void DurableQueues::dlq_discard(std::string msg_id, std::optional<std::string> realm,
                                std::function<void(const Status&)> done) {
  state_->post([s = state_.get(), msg_id = std::move(msg_id), realm = std::move(realm), done = std::move(done)] {
    auto d = s->dead_by_id.find(msg_id);
    if (d == s->dead_by_id.end() || (realm && s->dead.at(d->second).row.realm != *realm))
      return done(make_error("DLQ entry not found", 404));
    uint64_t seq = d->second;
    s->dead.erase(seq);
    s->dead_by_id.erase(d);
    s->submit({store::Op{store::Op::Kind::delete_dead, seq, {}, {}}}, done);
  });
}

void DurableQueues::dlq_replay(std::string msg_id, std::optional<std::string> realm,
                               std::function<void(const Result<std::string>&)> done) {
  state_->post([s = state_.get(), msg_id = std::move(msg_id), realm = std::move(realm), done = std::move(done)] {
    auto d = s->dead_by_id.find(msg_id);
    if (d != s->dead_by_id.end() && realm && s->dead.at(d->second).row.realm != *realm)
      return done(make_error("DLQ entry not found", 404));
    s->dlq_replay(msg_id, done);
  });
}

void DurableQueues::purge_realm(std::string realm, std::function<void(const Status&)> done) {
  state_->post([s = state_.get(), realm = std::move(realm), done = std::move(done)] { s->purge_realm(realm, done); });
}

void DurableQueues::move_store(store::Backend& next, std::function<void(const Status&)> done) {
  state_->post([s = state_.get(), &next, done = std::move(done)]() mutable {
    // The whole state as it is now; whatever was submitted before reaches the old backend first, and
    // everything submitted after this goes to the new one.
    std::vector<store::Op> ops;
    for (const auto& [id, e] : s->by_id) ops.push_back(put_row(e->row));
    for (const auto& [seq, d] : s->dead)
      ops.push_back(store::Op{store::Op::Kind::put_dead, seq, {}, store::encode_dead_row(d)});
    for (const auto& [id, spec] : s->stored_specs) {
      size_t a = id.find('\0');
      size_t b = id.find('\0', a + 1);
      store::SubscriptionRecord rec{id.substr(0, a), id.substr(a + 1, b - a - 1), id.substr(b + 1), spec};
      ops.push_back(store::Op{store::Op::Kind::put_subscription, 0, id, store::encode_subscription(rec)});
    }
    s->writer.switch_to(next, std::move(ops), std::move(done));
  });
}

void DurableQueues::set_default_ttl(std::optional<int64_t> ttl_ms) {
  state_->post([s = state_.get(), ttl_ms] { s->options.default_ttl_ms = ttl_ms; });
}

void DurableQueues::stats(std::function<void(const QueueStats&)> done) {
  state_->post([s = state_.get(), done = std::move(done)] {
    QueueStats out = s->counters;
    out.queues = s->queues.size();
    out.queued = s->by_id.size();
    out.queued_bytes = s->total_bytes;
    out.dead = s->dead.size();
    for (const auto& [socket, entries] : s->by_socket) {
      for (const auto* e : entries) out.in_flight += e->phase == State::Phase::in_flight;
    }
    done(out);
  });
}

}  // namespace siomq::broker
