// Changes of the documents the nodes share (<c>:authreqs, <c>:e2eekeys; cluster/link.h change_document),
// the Redis part: one change at a time, in call order. Each WATCHes the key, reads it, and writes the
// changed text in a MULTI/EXEC that Redis refuses when another node wrote the key in between; then it is
// read and changed again, at most kMaxAttempts times. MULTI, SET and EXEC go out in one turn of the
// cluster thread, so no other command of this node falls inside the transaction.
//
// Bounded: at most kMaxQueued changes wait (past it a change is answered 503 at once). A change that
// meets Redis away, or a reply from a connection that has gone since (`generation` moved on), is answered
// 503 with nothing written. Threading: the cluster thread only; `done` runs there.
#pragma once

#include <boost/asio/io_context.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "cluster/link.h"
#include "redis/async_client.h"

namespace siomq::cluster {

class DocumentChanges {
 public:
  using Command = std::function<void(std::vector<std::string> args, redis::AsyncClient::ReplyHandler)>;
  static constexpr size_t kMaxQueued = 1000;
  static constexpr int kMaxAttempts = 8;

  // `up`: whether Redis is there now; `generation`: the current connection's number (cluster.cc).
  DocumentChanges(boost::asio::io_context& io, Command command, std::function<bool()> up,
                  std::function<uint64_t()> generation);

  void change(std::string key, Link::Change change, std::function<void(const Status&)> done);
  // Answers every change still waiting with `s` (the node is stopping: nothing will run them).
  void fail_all(const Status& s);

 private:
  struct Pending {
    std::string key;
    Link::Change change;
    std::function<void(const Status&)> done;
    int attempts = 0;
  };
  void next();
  // Ends the change in front and starts the next one on a later turn (no recursion down a long queue).
  void finish(const Status& s);

  boost::asio::io_context& io_;
  Command command_;
  std::function<bool()> up_;
  std::function<uint64_t()> generation_;
  std::deque<Pending> pending_;  // the front one is running
};

}  // namespace siomq::cluster
