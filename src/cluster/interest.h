// Interest-based relay, the pure part (docs/scale-out.md): what each other siomq node of the cluster
// wants, as this node knows it, and the texts by which nodes tell each other.
//
// A node's interest is a set of (realm, term) pairs (broker/interest_ledger.h): a term is "=" and the
// key of an exact subscription (tyo-mq §4.1: lower(producer)-lower(event), producer-TM-ALL,
// tyo-mq-all-event), or "~" and the lowercased MQTT pattern of a topic subscription. A message produced
// in realm R by P with event E goes to a node whose terms in R or in "*" (where every realm's messages
// are mirrored) hold one of the three keys the router looks up for it, or a pattern matching lower(E):
// the router's own rule, so a node is never left out of a message it would deliver. ("*" as a term, every
// event, is read too; a term of another shape is skipped: a newer node's, or junk.)
//
// In Redis, per node N (siomq's own keys, beside tyo-mq §10's):
//   <c>:node:N:interest   hash  field ["realm","term"] (JSON) -> "1", and field "v" -> its version
//   <c>:nodes             zset  N scored by its lease's end (ms, Redis's clock)
//   <c>:node:N            channel: messages relayed to N
//   <c>:interest          channel: {"node_id":N,"version":V,"add":[[r,t],…],"remove":[[r,t],…]}, or
//                         {"node_id":N,"version":V,"reread":true} when the change is too large to note
//                         or the node has rewritten its hash whole (it (re)joined)
// A note with version V follows the hash change that made V, in one script. A reader applies a note
// whose version is one past what it holds and re-reads the hash otherwise.
//
// Everything read here is hostile input: texts validated whole and bounded, fields type-checked; a peer
// holding more than kMaxPeerTerms terms is sent everything (safe, never a loss). Pure; not thread-safe
// (the cluster thread owns the view).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "broker/interest_ledger.h"
#include "broker/remote_bus.h"
#include "broker/remote_groups.h"
#include "broker/subject_index.h"
#include "wire/result.h"

namespace siomq::cluster {

using broker::InterestTerm;

// Above this many terms a peer is taken to want every message.
inline constexpr size_t kMaxPeerTerms = 100'000;
// A realm or a term longer than this is refused (writers widen theirs past broker::kMaxInterestTermBytes).
inline constexpr size_t kMaxInterestFieldBytes = 4 * broker::kMaxInterestTermBytes;
// The (group, node) pairs of one key a directory holds at most (past it, more groups stay on their nodes).
inline constexpr size_t kMaxGroupsPerKey = 256;
// A change larger than this goes out as a "reread" note.
inline constexpr size_t kMaxInterestNoteBytes = 64 * 1024;

struct InterestNote {
  std::string node_id;
  uint64_t version = 0;
  bool reread = false;
  std::vector<InterestTerm> add, remove;
};

// The hash field of a term: ["realm","term"].
std::string interest_field(const InterestTerm& t);
Result<InterestTerm> decode_interest_field(std::string_view text);

// The note's text around its version, which the script that makes the version splices in:
// head + V + tail. nullopt tail: the change is too large, note a reread instead.
std::string interest_note_head(const std::string& node_id);
std::optional<std::string> interest_note_tail(const std::vector<InterestTerm>& add, const std::vector<InterestTerm>& remove);
std::string interest_reread_tail();
Result<InterestNote> decode_interest_note(std::string_view text, size_t max_bytes);

// The other nodes' interest.
class InterestView {
 public:
  // Whether this node knows `node` (it holds a version for it), and which.
  bool knows(const std::string& node) const { return peers_.count(node) > 0; }
  uint64_t version(const std::string& node) const;
  std::vector<std::string> nodes() const;
  size_t size() const { return peers_.size(); }

  // A note from another node: applied when it follows the version held; false when the view of that
  // node must be read again (a gap, a reread note, a node not known yet).
  bool apply(const InterestNote& note);
  // The node's whole interest as read from its hash (HGETALL: field, value, field, value …): replaces what
  // is held unless it is older. Fields that do not decode are skipped (counted in the return).
  size_t replace(const std::string& node, uint64_t version, const std::vector<std::string>& fields);
  void forget(const std::string& node) {
    const bool gone = peers_.erase(node) > 0;
    groups_changed_ |= gone;
    bus_changed_ |= gone;
  }
  void clear() {
    groups_changed_ = bus_changed_ = true;
    peers_.clear();
  }

  // The other nodes' online consumer-group members (broker::group_interest_term),
  // built anew when they changed since the last call; null when they did not.
  std::shared_ptr<const broker::RemoteGroups> take_groups();
  bool groups_changed() const { return groups_changed_; }
  // The other nodes' bus interest (broker/remote_bus.h: "b" and "q" terms, and "*"), built anew when it
  // changed since the last call; null when it did not.
  std::shared_ptr<const broker::RemoteBus> take_bus();
  bool bus_changed() const { return bus_changed_; }

  // The nodes that want a message produced in `realm` by `producer` with `event` (as sent, any case):
  // appended to `out`.
  void targets(std::string_view realm, std::string_view producer, std::string_view event, std::vector<std::string>& out) const;

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  // One realm's terms of one peer.
  struct RealmTerms {
    bool all = false;
    std::unordered_set<std::string, StringHash, std::equal_to<>> keys;
    broker::SubjectIndex patterns{broker::kMqttSyntax};
    std::unordered_map<std::string, broker::SubjectIndex::Id> pattern_ids;
    std::set<std::string, std::less<>> groups;  // group terms without their "g"
    std::set<std::string, std::less<>> bus;     // bus terms, "b…" and "q…"
    bool empty() const { return !all && keys.empty() && pattern_ids.empty() && groups.empty() && bus.empty(); }
  };
  struct Peer {
    uint64_t version = 0;
    bool everything = false;  // over kMaxPeerTerms
    size_t count = 0;
    broker::SubjectIndex::Id next_id = 1;
    std::unordered_map<std::string, RealmTerms, StringHash, std::equal_to<>> realms;
    void add(const InterestTerm& t);
    void remove(const InterestTerm& t);
    // `keys`: the three keys the router looks up; `event` lowercased.
    bool wants(std::string_view realm, const std::string (&keys)[3], std::string_view event) const;
  };
  std::unordered_map<std::string, Peer> peers_;
  bool groups_changed_ = false;
  bool bus_changed_ = false;
};

}  // namespace siomq::cluster
