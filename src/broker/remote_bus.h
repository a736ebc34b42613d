// The bus's interest on the other nodes of a cluster (docs/scale-out.md "The bus across nodes"): per
// realm, which nodes hold a core subscription or a stream binding matching a subject, and which queue
// groups have members where; and which node a request's inbox belongs to (its name carries the node's
// inbox token), so that replies go back there without any state per request. The cluster thread builds a new one whenever another node's bus terms
// change (cluster/interest.h, at most every 20 ms); the workers that publish share the one current then,
// read-only, to pick the nodes a message goes to and the node of each remote queue group's turn.
//
// Immutable once built; any thread may read it.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "broker/subject_index.h"

namespace siomq::broker {

class RemoteBus {
 public:
  // A queue group (its pattern and name) with members on `nodes`.
  struct Queue {
    std::string pattern, queue;
    std::vector<std::string> nodes;
  };

  // Building (the cluster thread).
  void add_node(const std::string& node);  // a node a reply may go to (every peer)
  void add_plain(const std::string& realm, std::string_view pattern, const std::string& node);
  // A stream's binding: it wants the messages, and answers no request.
  void add_stream(const std::string& realm, std::string_view pattern, const std::string& node);
  void add_everywhere(const std::string& node);  // everything (over the term cap)
  // At most kMaxNodesPerQueue nodes a group (past it, more members stay on their nodes).
  void add_queue(const std::string& realm, std::string_view queue, std::string_view pattern, const std::string& node);
  static constexpr size_t kMaxNodesPerQueue = 256;

  // No other node at all (replies need the nodes even when they subscribe to nothing).
  bool empty() const { return realms_.empty() && everywhere_.empty() && inbox_nodes_.empty(); }

  // The nodes wanting a message on `subject` in `realm` outside queue groups, appended to `out` once each.
  void plain_targets(std::string_view realm, std::string_view subject, std::vector<std::string>& out) const;
  // The other nodes' queue groups matching `subject` in `realm`, appended to `out`.
  void queues(std::string_view realm, std::string_view subject, std::vector<const Queue*>& out) const;
  // The group (pattern, queue) of `realm`, if another node has a member; null otherwise.
  const Queue* queue(std::string_view realm, std::string_view pattern, std::string_view queue) const;
  // Whether a request to `subject` could be answered on another node (request's no-responders): a core
  // subscription or a group member matches there (a stream binding does not; a node over the term cap
  // counts, as what it holds is unknown).
  bool any(std::string_view realm, std::string_view subject) const;
  // The node whose inbox `subject` is (`_INBOX.<its inbox token>.…`); null when none of the peers'.
  const std::string* inbox_node(std::string_view subject) const;

 private:
  // Patterns with the nodes holding them.
  struct Patterns {
    SubjectIndex index{kNatsSyntax};                       // id -> nodes[id - 1]
    std::unordered_map<std::string, SubjectIndex::Id> ids;  // pattern -> id
    std::vector<std::vector<std::string>> nodes;
    void add(std::string_view pattern, const std::string& node);
    void match(std::string_view subject, std::vector<std::string>& out) const;
  };
  struct Realm {
    Patterns plain, streams;
    SubjectIndex queue_index{kNatsSyntax};                 // id -> queue_list[id - 1]
    std::unordered_map<std::string, size_t> queue_ids;     // pattern NUL queue -> id
    std::vector<Queue> queue_list;
  };
  const Realm* realm(std::string_view name) const;

  std::map<std::string, Realm, std::less<>> realms_;
  std::vector<std::string> everywhere_;
  std::unordered_map<std::string, std::string> inbox_nodes_;  // inbox token -> node
};

// A node's inbox token: 16 hex digits of a hash of its id, the same on every node. A request's inbox on
// a node of a cluster is `_INBOX.<token>.<random>`; inbox_token_of gives the token of such a subject
// (empty for any other).
std::string inbox_token(std::string_view node_id);
std::string_view inbox_token_of(std::string_view subject);

// A remote queue group's turn (RemoteBus::Queue), given to `node`: the message goes there naming the
// group, and that node hands it to one of its members.
struct QueuePick {
  std::string node, pattern, queue;
};

}  // namespace siomq::broker
