// The window that paces a queue's deliveries (kPrefetchWindow copies, the connection's window_bytes),
// the connections entries are out to, pump and the transport's receipts, replay and a closed socket.
#include "broker/queue_state.h"

#include "broker/broker.h"

namespace siomq::broker {

void DurableQueues::State::feed_starved(const std::string& socket) {
  auto waiting = starved.find(socket);
  while (waiting != starved.end() && !waiting->second.empty() && !connection_full(connection(socket))) {
    std::string id = std::move(waiting->second.front());
    waiting->second.pop_front();
    if (waiting->second.empty()) starved.erase(waiting);
    if (auto q = queues.find(id); q != queues.end()) pump(q->second, true);  // may queue it again, last
    waiting = starved.find(socket);
  }
}

void DurableQueues::State::wait_for_room(const std::string& socket, const std::string& queue_id) {
  auto& line = starved[socket];
  if (std::find(line.begin(), line.end(), queue_id) == line.end()) line.push_back(queue_id);
}

bool DurableQueues::State::window_open(const Queue& q, const Connection* c) const {
  return q.flying < kPrefetchWindow && !connection_full(c);
}

bool DurableQueues::State::connection_full(const Connection* c) const {
  return c && c->bytes >= options.window_bytes;
}

void DurableQueues::State::pump(Queue& q, bool eager, EndpointPtr to) {
  if (q.entries.size() <= q.flying + q.acking + q.uncommitted) return;
  if (!eager && q.flying > kPrefetchWindow / 2) return;
  if (!to) to = endpoint_of(q);
  if (!to) return;
  uint64_t token = q.policy.ack ? 0 : next_receipt++;
  std::vector<std::string> sent;
  const std::string& socket = to->socket_id();
  Connection* conn = connection(socket);  // looked up once; set by the first copy linked to it
  auto it = q.entries.lower_bound(q.scan_from);
  for (; it != q.entries.end(); ++it) {
    Entry& e = it->second;
    if (!e.committed) break;
    if (e.acking || e.phase != Phase::stored) continue;
    if (!window_open(q, conn)) {
      if (connection_full(conn)) wait_for_room(socket, q.id);  // fed again as the connection's room frees
      break;
    }
    if (q.policy.ack) {
      deliver(e, to, 1);
      conn = e.out;
      continue;
    }
    link_socket(e, to);
    conn = e.out;
    take_off(e);
    e.phase = Phase::in_flight;
    e.receipt = token;
    to->deliver(delivery_of(q.key, e.row));
    observe([&](QueueObserver& o) { o.sent(q.realm, q.key); });
    sent.push_back(e.row.id);
  }
  // Everything before where the walk stopped is out, or acking: the next walk starts there.
  q.scan_from = it == q.entries.end() ? shared.next_seq.load(std::memory_order_relaxed) : it->first;
  if (sent.empty()) return;
  to->when_sent([this, alive = std::weak_ptr(io_owner), token, ids = std::move(sent)](bool ok) mutable {
    if (auto io_alive = alive.lock())
      boost::asio::post(*io_alive, [this, token, ids = std::move(ids), ok] { on_sent(token, ids, ok); });
  });
}

void DurableQueues::State::on_sent(uint64_t token, const std::vector<std::string>& ids, bool ok) {
  std::vector<store::Op> ops;
  Queue* q = nullptr;
  std::string socket;
  for (const auto& id : ids) {
    auto it = by_id.find(id);
    if (it == by_id.end() || it->second->receipt != token) continue;  // expired, purged or resent since
    Entry& e = *it->second;
    q = e.queue;
    socket = socket_of(e);
    if (ok) {
      ops.push_back(store::erase_row(e.row.seq));
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

EndpointPtr DurableQueues::State::endpoint_of(const Queue& q) {
  if (q.consumer.empty()) return nullptr;
  EndpointPtr to;
  broker.if_realm(q.realm, [&](RealmRegistry& r) { to = r.consumer_endpoint(q.consumer); });
  return to;
}

void DurableQueues::State::link_socket(Entry& e, const EndpointPtr& to) {
  if (e.out && *e.out->id == to->socket_id()) return;
  auto [it, fresh] = connections.try_emplace(to->socket_id());
  Connection& c = it->second;
  if (fresh) c.id = &it->first;
  if (occupies(e)) {  // its bytes move to the new connection
    release_bytes(*e.out, bytes_of(e));
    c.bytes += bytes_of(e);
  }
  unlink_socket(e);  // may forget the old connection, never `c` (it is another)
  e.out = &c;
  e.prev_out = nullptr;
  e.next_out = c.first;
  if (c.first) c.first->prev_out = &e;
  c.first = &e;
}

void DurableQueues::State::unlink_socket(Entry& e) {
  Connection* c = e.out;
  if (!c) return;
  if (e.prev_out) e.prev_out->next_out = e.next_out;
  else c->first = e.next_out;
  if (e.next_out) e.next_out->prev_out = e.prev_out;
  e.out = nullptr;
  e.prev_out = e.next_out = nullptr;
  if (!c->first) connections.erase(*c->id);  // its last copy: nothing counts against it any more
}

void DurableQueues::State::replay(const QueueCopy& copy, const EndpointPtr& to) {
  Queue* found = find_queue(copy.realm, copy.key, copy.consumer_id);
  if (!found) return;
  Queue& q = *found;
  q.consumer = copy.consumer;
  q.policy = copy.policy;
  purge_expired();
  if (!q.policy.ack) return pump(q, true, to);  // copies waiting for a receipt are on their way already
  for (auto& [seq, e] : q.entries) {
    if (!e.committed) break;
    if (e.acking) continue;
    Connection* conn = connection(to->socket_id());
    if (occupies(e) || window_open(q, conn)) {
      deliver(e, to, 1);  // copies in flight go again to the new subscription; the rest within the window
    } else {
      // The rest go out as ACKs free the window (or the connection's room, shared with its other queues).
      if (connection_full(conn)) wait_for_room(to->socket_id(), q.id);
      break;
    }
  }
}

void DurableQueues::State::socket_closed(const std::string& socket) {
  Connection* c = connection(socket);
  if (!c) return;
  std::set<Queue*> landed;
  for (Entry* e = c->first; e;) {
    Entry& entry = *e;
    e = entry.next_out;  // read first: unlinking the last copy forgets the connection
    if (entry.receipt) continue;
    land(entry);
    cancel_due(entry);
    unlink_socket(entry);
    landed.insert(entry.queue);
  }
  for (Queue* q : landed) pump(*q, true);
}

}  // namespace siomq::broker
