// The window that paces a queue's deliveries (kPrefetchWindow copies, the connection's window_bytes),
// the connections entries are out to, pump and the transport's receipts, replay and a closed socket.
#include "broker/queue_state.h"

#include "broker/broker.h"

namespace siomq::broker {

void DurableQueues::State::feed_starved(const std::string& socket) {
  auto waiting = starved.find(socket);
  while (waiting != starved.end() && !waiting->second.empty() && !connection_full(socket)) {
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

bool DurableQueues::State::window_open(const Queue& q, const std::string& socket) const {
  if (q.flying >= kPrefetchWindow) return false;
  auto it = socket_bytes.find(socket);
  return it == socket_bytes.end() || it->second < options.window_bytes;
}

bool DurableQueues::State::connection_full(const std::string& socket) const {
  auto it = socket_bytes.find(socket);
  return it != socket_bytes.end() && it->second >= options.window_bytes;
}

void DurableQueues::State::pump(Queue& q, bool eager, EndpointPtr to) {
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
    to->deliver(delivery_of(q.key, e.row));
    observe([&](QueueObserver& o) { o.sent(q.realm, q.key); });
    sent.push_back(e.row.id);
  }
  // Everything before where the walk stopped is out, or acking: the next walk starts there.
  q.scan_from = it == q.entries.end() ? next_seq : it->first;
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
    socket = e.socket;
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
  if (e.socket == to->socket_id()) return;
  if (occupies(e)) {  // its bytes move to the new connection
    release_bytes(e.socket, bytes_of(e));
    socket_bytes[to->socket_id()] += bytes_of(e);
  }
  unlink_socket(e);
  e.socket = to->socket_id();
  by_socket[e.socket].insert(&e);
}

void DurableQueues::State::unlink_socket(Entry& e) {
  if (e.socket.empty()) return;
  auto it = by_socket.find(e.socket);
  if (it != by_socket.end()) {
    it->second.erase(&e);
    if (it->second.empty()) by_socket.erase(it);
  }
  e.socket.clear();
}

void DurableQueues::State::replay(const QueueCopy& copy, const EndpointPtr& to) {
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

void DurableQueues::State::socket_closed(const std::string& socket) {
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

}  // namespace siomq::broker
