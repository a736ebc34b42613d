// Outbox: what a Connection has yet to send and what it waits to hear back (internal to the library).
//
// Emits and requests made while a namespace is not ready (disconnected, rejoining) are held, in order,
// within Options::max_buffered_packets / max_buffered_bytes. A request's callback is kept here from the
// moment it is made until exactly one of: its ack, its deadline (errc::timeout; one timer at the earliest
// deadline), a drop after it was sent (errc::disconnected), a refusal, or the end (fail_all).
//
// Threading: admit() from any thread; everything else on the io thread.
// Ownership: held by the Connection's state (shared, so that ack handlers and the timer can check it
// still exists).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "siomq/connection.h"
#include "transport/engine_socket.h"

namespace siomq {

// An emit or a request on its way: its data array (["event",args...]) written on the caller's thread.
struct Outgoing {
  std::string nsp;
  std::string data;
  std::vector<std::string> attachments;
  size_t bytes = 0;
  ReplyCallback done;  // a request, until track() takes it
  std::chrono::steady_clock::time_point deadline{};
  uint64_t request_id = 0;  // set by track()
};

class Outbox : public std::enable_shared_from_this<Outbox> {
 public:
  using Clock = std::chrono::steady_clock;
  // Tells the socket of `generation` to drop the ack it waits for (the request timed out).
  using ForgetAck = std::function<void(uint64_t ack_id, uint64_t generation)>;

  Outbox(boost::asio::io_context& io, const Options& options, ForgetAck forget);

  // Any thread: refuses at once what could never be sent while disconnected (past the caps).
  Status admit(size_t bytes, bool connected) const;

  // A request: gets its id, its callback is kept here and its deadline runs, sent or held.
  void track(Outgoing& out);
  // Whether a tracked request still waits (not answered, not timed out, not failed).
  bool waiting(uint64_t request_id) const { return pending_.count(request_id) > 0; }
  // Answers a tracked request that will not be sent.
  void settle(uint64_t request_id, const Error& e);

  void hold(Outgoing out);
  bool holding() const { return !held_.empty(); }
  // What is held, in order, for the caller to send or hold again.
  std::deque<Outgoing> take_held();

  // The handler to give the socket for a tracked request's ack, then what the socket numbered it.
  client::EngineSocket::AckHandler ack_handler(uint64_t request_id);
  void sent(uint64_t request_id, uint64_t ack_id, uint64_t generation);

  // A drop: the requests sent on the old socket fail with errc::disconnected (they may have been done).
  void fail_sent();
  // The end: everything held and waiting fails with `e`.
  void fail_all(const Error& e);

 private:
  struct Pending {
    ReplyCallback done;
    uint64_t ack_id = 0;  // 0 while held
    uint64_t generation = 0;
  };
  void count(const Outgoing& out, int sign);
  void rearm();
  void expire();

  const Options& options_;
  ForgetAck forget_;
  boost::asio::steady_timer timer_;
  std::deque<Outgoing> held_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::multimap<Clock::time_point, uint64_t> deadlines_;
  uint64_t next_request_ = 1;
  mutable std::mutex mu_;  // the counts admit() reads from other threads
  size_t held_packets_ = 0;
  size_t held_bytes_ = 0;
};

}  // namespace siomq
