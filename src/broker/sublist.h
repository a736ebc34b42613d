// The bus's core interest in one realm (bus.md §4, NATS calls it the sublist): subscriptions by subject
// pattern (`*`, `>`) on the one SubjectIndex, queue groups keyed by (pattern, queue) with exactly one
// member per group getting each message (round-robin, so evenly), and `unsub` with `max`.
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
#include <vector>

#include "broker/bus_message.h"
#include "broker/subject_index.h"

namespace siomq::broker {

class Sublist {
 public:
  using Id = uint64_t;

  // Adds a subscription of `sink` under `sid`; `queue` empty: not in a group. The pattern is valid
  // (wire/bus_subject.h).
  Id add(std::string_view pattern, std::string_view queue, BusSinkPtr sink, std::string sid);
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
  // Every matching subscription of `subject` — one member of each matching queue group — appended to
  // `out`, counting `max` down (a finished subscription is removed now); returns how many.
  size_t route(std::string_view subject, std::vector<Copy>& out);
  // Whether a publish to `subject` would reach anyone (request's "no responders", §4).
  bool has_interest(std::string_view subject) const;

  size_t size() const { return subs_.size(); }
  bool empty() const { return subs_.empty(); }

 private:
  struct Sub {
    std::string pattern, queue, sid;
    BusSinkPtr sink;
    std::optional<uint64_t> remaining;  // unsub's max, counting down
    Id group = 0;                       // the group's index id, 0 when not in one
  };
  struct Group {
    std::vector<Id> members;  // in the order they joined
    uint64_t next = 0;        // round-robin cursor
    std::string key;          // in groups_by_key_
  };
  void take(Id id, Sub& sub, std::vector<Copy>& out, std::vector<Id>& finished);

  SubjectIndex index_{kNatsSyntax};  // a plain subscription's id, or a group's id
  std::unordered_map<Id, Sub> subs_;
  std::unordered_map<Id, Group> groups_;
  std::unordered_map<std::string, Id> groups_by_key_;  // pattern NUL queue -> group id
  Id next_id_ = 1;
  mutable std::vector<Id> scratch_;
};

// Hands each copy to its sink. Call it without holding the realm's lock.
void deliver(const std::vector<Sublist::Copy>& copies, const BusMessagePtr& message);

}  // namespace siomq::broker
