// Durable queues across nodes, the node's part (docs/scale-out.md "Durable queues across nodes";
// cluster/durable_homes.h is the Redis part). With storage "redis" in a cluster, each node's durable store
// is a section of the store's keys, <storage prefix>:<node id>, and each durable consumer has one home node.
//
// A move (the consumer subscribed on another node, which claimed its home): this node drops the consumer's
// durable subscriptions (their interest goes with them), takes its queues out of the durable queues, writes
// their records to a section of their own ("move:<random>"), offers that section to the new home, and only
// then erases them from its own section. Nothing is lost if a node dies on the way: until the erasure the
// records are in both sections (a copy may then be delivered twice: at least once, as on one node).
//
// An adoption (a dead node's section, or a move offered here): the section is loaded, its rows, DLQ entries
// and subscriptions stored here as this node's own, then erased there and the section dropped. The
// subscriptions are restored offline (a consumer online here keeps its own); each adopted consumer's home is
// settled, and its queues move on when another live node is its home.
//
// Threading: a thread of its own does the sections' I/O (a synchronous Redis connection per section, for
// the time of one move or adoption). on_note() and adopt() may be called from any thread; the work runs
// there, in order, so a burst costs a queue, not threads.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "broker/durable_queues.h"
#include "store/backend.h"

namespace siomq::surfaces {
struct Context;
}

namespace siomq::server {

// At start-up, in a cluster on the redis store: the durable rows, DLQ entries and subscriptions a node kept
// under the store's prefix itself before it had a section (a node alone, upgraded) move into `section`
// when it holds none yet, and are erased there; `contents` (the section's, as loaded) gets them. Other
// families under the old keys (streams, directories) stay and are not read (logged). Throws StoreError.
void take_unsectioned(store::Backend& section, store::Backend::Contents& contents, const std::string& url,
                      const std::string& prefix);

class DurableMoves {
 public:
  // `ctx` (its cluster set) outlives this object. `store_prefix`: the storage prefix the sections are under.
  DurableMoves(std::shared_ptr<surfaces::Context> ctx, std::string store_url, std::string store_prefix);
  ~DurableMoves();
  DurableMoves(const DurableMoves&) = delete;
  DurableMoves& operator=(const DurableMoves&) = delete;

  // A note on <c>:durable (cluster/durable_homes.h): a move from this node, or a section offered to it.
  void on_note(const std::string& text);
  // A section claimed for this node: adopted.
  void adopt(const std::string& section);
  // After the node (re)joined: each consumer with durable queues here has its home settled — claimed for
  // this node (Redis may have lost it), or its queues moved to its home when that is another live node
  // (a move note lost while this node was away, a restart under the same id).
  void reconcile();
  // Stops the thread; work not begun is dropped (its records stay where they are, for the next sweep).
  void stop();

 private:
  void release(const std::string& realm, const std::string& consumer, const std::string& to);
  void take_queues(const std::string& realm, const std::string& consumer, const std::string& to);
  void settle(const std::string& realm, const std::string& consumer);
  void offer(broker::DurableQueues::Moved moved, const std::string& to);
  void keep(broker::DurableQueues::Moved moved);
  void take(const std::string& section);
  std::string prefix_of(const std::string& section) const { return store_prefix_ + ":" + section; }

  std::shared_ptr<surfaces::Context> ctx_;
  std::string store_url_, store_prefix_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace siomq::server
