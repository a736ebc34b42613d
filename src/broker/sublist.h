// The bus's core interest in one realm (bus.md §4, NATS calls it the sublist): subscriptions by subject
// pattern (`*`, `>`) on the one SubjectIndex, queue groups keyed by (pattern, queue) with exactly one
// member per group getting each message (round-robin, so evenly), and `unsub` with `max`.
//
// In a cluster (track_interest) it also says what the other nodes should send here (interest terms,
// broker/interest_ledger.h: "b" and a plain subscription's pattern, "q" and a queue group's name and
// pattern), and routes with the other nodes' groups in view (BusScope): a group with members here and on
// other nodes takes its turns round-robin over its members here and those nodes, so each message reaches
// one member in the whole cluster (docs/scale-out.md "The bus across nodes").
//
// Not thread-safe: it lives in the realm's RealmRegistry and is used under the realm's lock. route() only
// says who gets a copy; the caller delivers them after releasing the lock (deliver()), because a sink
// may send at once and a send may close a slow consumer, whose end takes the realm's lock again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "broker/bus_message.h"
#include "broker/remote_bus.h"
#include "broker/subject_index.h"

namespace siomq::broker {

// How route() treats queue groups in a cluster. Default: as one node alone.
struct BusScope {
  // Published here: the other nodes' groups (null: none); a turn that falls to another node is
  // appended to `picks` instead of going to a member here.
  const RemoteBus* remote = nullptr;
  std::string_view realm;
  std::vector<QueuePick>* picks = nullptr;
  // Relayed from another node: only these groups (pattern, queue) get a member here — the turns the
  // publishing node gave this one. Null: not relayed.
  const std::vector<std::pair<std::string, std::string>>* named = nullptr;
  // With `named`: the plain subscriptions are left out (the turns of a relay that could not leave,
  // given back to this node's members).
  bool groups_only = false;
  // With `remote`: a group with members here keeps its turns here (the relay is backed up); one with
  // none here still takes turns over the other nodes (there is nobody here to give them to).
  bool keep_turns = false;
};

class Sublist {
 public:
  using Id = uint64_t;

  // Adds a subscription of `sink` under `sid`; `queue` empty: not in a group. The pattern is valid
  // (wire/bus_subject.h). `shared`: other nodes are told of it (false for a request's own inbox, whose
  // replies come back by the relay's reply route instead).
  Id add(std::string_view pattern, std::string_view queue, BusSinkPtr sink, std::string sid, bool shared = true);
  // Removes it; false when it is gone (unsubscribed, or its `max` was reached).
  bool remove(Id id);
  // After `max` more messages the subscription removes itself (§8.2: counted from now); max 0 removes it
  // now. False when it is gone.
  bool set_max(Id id, uint64_t max);

  // One copy to deliver: to `sink`, for its subscription `sid`; `last`: its `max` is reached and it is gone.
  struct Copy {
    BusSinkPtr sink;
    std::string sid;
    bool last = false;
  };
  using BusScope = broker::BusScope;
  // Every matching subscription of `subject` — one member of each matching queue group — appended to
  // `out`, counting `max` down (a finished subscription is removed now); returns how many.
  size_t route(std::string_view subject, std::vector<Copy>& out, const BusScope& scope = {});
  // Whether a publish to `subject` would reach anyone (request's "no responders", §4).
  bool has_interest(std::string_view subject) const;

  // From now on count the interest terms of shared subscriptions (a node in a cluster).
  void track_interest() { track_interest_ = true; }
  // Appends the terms that appeared (+1) or went (-1) since the last call.
  void take_interest_deltas(std::vector<std::pair<std::string, int>>& out);
  // Appends every term held now.
  void interest_terms(std::vector<std::string>& out) const;

  size_t size() const { return subs_.size(); }
  bool empty() const { return subs_.empty(); }

 private:
  struct Sub {
    std::string pattern, queue, sid;
    BusSinkPtr sink;
    std::optional<uint64_t> remaining;  // unsub's max, counting down
    Id group = 0;                       // the group's index id, 0 when not in one
    bool shared = true;
  };
  struct Group {
    std::vector<Id> members;  // in the order they joined
    uint64_t next = 0;        // round-robin cursor over the members
    uint64_t turn = 0;        // round-robin cursor over this node and the others with members (a cluster)
    std::string key;          // in groups_by_key_
  };
  void take(Id id, Sub& sub, std::vector<Copy>& out, std::vector<Id>& finished);
  // One member of the group `g` here, or its turn given to another node; whether a copy was added here.
  bool take_turn(Group& g, const Sub& first, std::vector<Copy>& out, std::vector<Id>& finished, const BusScope& scope);
  // Remote groups without a member here (their turns all go to other nodes).
  void take_remote_turns(std::string_view subject, const BusScope& scope);
  void count_interest(const Sub& sub, int delta);
  // Whether `first`'s group is one of scope.named.
  bool named_here(const BusScope& scope, const Sub& first);

  SubjectIndex index_{kNatsSyntax};  // a plain subscription's id, or a group's id
  std::unordered_map<Id, Sub> subs_;
  std::unordered_map<Id, Group> groups_;
  std::unordered_map<std::string, Id> groups_by_key_;  // group_key(pattern, queue) -> group id
  Id next_id_ = 1;
  mutable std::vector<Id> scratch_;
  // Round-robin over the nodes of each group with no member here, by group key; forgotten whole past
  // kMaxRemoteTurns groups (a turn then starts again at a node picked by the key's hash).
  std::unordered_map<std::string, uint64_t> remote_turns_;
  static constexpr size_t kMaxRemoteTurns = 4096;
  // named_here's set of the named groups' keys, for the list it was made from (one message's).
  std::unordered_set<std::string> named_keys_;
  const void* named_keys_for_ = nullptr;
  bool track_interest_ = false;
  std::unordered_map<std::string, size_t> interest_;  // term -> shared subscriptions naming it
  std::vector<std::pair<std::string, int>> interest_deltas_;
};

// Hands each copy to its sink. Call it without holding the realm's lock.
void deliver(const std::vector<Sublist::Copy>& copies, const BusMessagePtr& message);

}  // namespace siomq::broker
