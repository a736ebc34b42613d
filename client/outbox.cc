#include "outbox.h"

namespace siomq {

Outbox::Outbox(boost::asio::io_context& io, const Options& options, ForgetAck forget)
    : options_(options), forget_(std::move(forget)), timer_(io) {}

Status Outbox::admit(size_t bytes, bool connected) const {
  if (connected) return Ok{};
  std::lock_guard lock(mu_);
  if (held_packets_ + 1 > options_.max_buffered_packets || held_bytes_ + bytes > options_.max_buffered_bytes)
    return Error{errc::buffer_full, "too much is waiting to be sent while disconnected"};
  return Ok{};
}

void Outbox::track(Outgoing& out) {
  out.request_id = next_request_++;
  pending_[out.request_id] = Pending{std::move(out.done), 0, 0};
  out.done = nullptr;
  deadlines_.emplace(out.deadline, out.request_id);
  if (deadlines_.begin()->second == out.request_id) rearm();
}

void Outbox::settle(uint64_t request_id, const Error& e) {
  auto it = pending_.find(request_id);
  if (it == pending_.end()) return;
  auto done = std::move(it->second.done);
  pending_.erase(it);
  if (done) done(e);
}

void Outbox::count(const Outgoing& out, int sign) {
  std::lock_guard lock(mu_);
  held_packets_ += sign;
  held_bytes_ += sign * static_cast<ptrdiff_t>(out.bytes);
}

void Outbox::hold(Outgoing out) {
  count(out, +1);
  held_.push_back(std::move(out));
}

std::deque<Outgoing> Outbox::take_held() {
  std::deque<Outgoing> out;
  out.swap(held_);
  std::lock_guard lock(mu_);
  held_packets_ = 0;
  held_bytes_ = 0;
  return out;
}

client::EngineSocket::AckHandler Outbox::ack_handler(uint64_t request_id) {
  return [weak = weak_from_this(), request_id](client::EngineSocket::Incoming&& in) {
    auto self = weak.lock();
    if (!self) return;
    auto it = self->pending_.find(request_id);
    if (it == self->pending_.end()) return;  // timed out meanwhile
    auto done = std::move(it->second.done);
    self->pending_.erase(it);
    if (done) done(Reply{std::move(in.json), std::move(in.attachments)});
  };
}

void Outbox::sent(uint64_t request_id, uint64_t ack_id, uint64_t generation) {
  auto it = pending_.find(request_id);
  if (it == pending_.end()) return;
  it->second.ack_id = ack_id;
  it->second.generation = generation;
}

void Outbox::rearm() {
  if (deadlines_.empty()) return;
  timer_.expires_at(deadlines_.begin()->first);
  timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->expire();
  });
}

// Requests past their deadline answer errc::timeout. A held one stays held but is skipped when taken
// (it no longer waits); a sent one's ack is forgotten by its socket.
void Outbox::expire() {
  auto now = Clock::now();
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    uint64_t rid = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    auto it = pending_.find(rid);
    if (it == pending_.end()) continue;
    if (it->second.ack_id) forget_(it->second.ack_id, it->second.generation);
    settle(rid, Error{errc::timeout, "no answer within the request timeout"});
  }
  rearm();
}

void Outbox::fail_sent() {
  std::vector<ReplyCallback> failed;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.ack_id) {
      failed.push_back(std::move(it->second.done));
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& done : failed)
    if (done) done(Error{errc::disconnected, "the connection dropped before the answer"});
}

void Outbox::fail_all(const Error& e) {
  (void)take_held();
  auto pending = std::move(pending_);
  pending_.clear();
  deadlines_.clear();
  timer_.cancel();
  for (auto& [rid, p] : pending)
    if (p.done) p.done(e);
}

}  // namespace siomq
