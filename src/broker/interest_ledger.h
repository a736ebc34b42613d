// This node's interest, for the cluster (docs/scale-out.md, "Interest-based relay"): per realm, the
// terms its subscriptions name ("=" subscription key, "~" topic pattern: cluster/interest.h) — so that other nodes relay a message here only when one of them matches. The realms'
// registries count their own subscriptions per term and report each term that appears or goes
// (RealmRegistry::take_interest_deltas); the ledger sums those reports over the realms' lives (a realm
// removed while another of the same name is made reports its -1 and the new one its +1, in either
// order) and keeps which (realm, term) changed since the cluster last looked.
//
// Threading: report() is called by any worker, under a realm's lock; the cluster thread calls snapshot()
// and drain(). One mutex; nothing is done under it but counting. The wake callback (set once, before any
// report) is called outside the mutex, at most once between two drain()s, so a burst of subscriptions
// costs the cluster thread one wake-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace siomq::broker {

// A realm or a term longer than this is not shared as it is: the term becomes "*" (everything in the
// realm), the realm "*" (every realm) — more traffic, never a message left out. Readers take up to four
// times this (cluster/interest.h), so that a later, larger limit is read.
inline constexpr size_t kMaxInterestTermBytes = 1024;
// The term saying an online member of consumer group `group` subscribes under `key` on a node: "g", the
// group's length in bytes, ":", the group, the key (any bytes in either); nullopt when longer than
// kMaxInterestTermBytes (that group then stays on its node). parse_group_interest_term: (group, key) of
// `rest`, the term after its "g"; nullopt when it is not one.
std::optional<std::string> group_interest_term(const std::string& group, const std::string& key);
std::optional<std::pair<std::string_view, std::string_view>> parse_group_interest_term(std::string_view rest);
// The bus's terms (docs/scale-out.md "The bus across nodes"): "b" and the subject pattern of a core
// subscription, "s" and a pattern a stream binds; ">" (every subject) for the pattern when longer than
// kMaxInterestTermBytes allows.
std::string bus_interest_term(std::string_view pattern);
std::string stream_interest_term(std::string_view pattern);
// A queue group's member: "q", the queue's length, ":", the queue, the pattern; nullopt when too long
// (that group then stays on its node). parse_queue_interest_term: (queue, pattern) of the term after its "q".
std::optional<std::string> queue_interest_term(std::string_view queue, std::string_view pattern);
std::optional<std::pair<std::string_view, std::string_view>> parse_queue_interest_term(std::string_view rest);

struct InterestTerm {
  std::string realm, term;
  bool operator==(const InterestTerm&) const = default;
};

struct InterestTermHash {
  size_t operator()(const InterestTerm& t) const noexcept;
};

class InterestLedger {
 public:
  struct Change {
    InterestTerm term;
    bool present;  // whether the node wants it now
  };

  // `wake` is called (on the reporting thread) when a term changes and the cluster has not been woken
  // since its last drain().
  void set_wake(std::function<void()> wake);

  // Terms changed past this many since the last look (Redis away a long while, under churn): the
  // changes are forgotten and the cluster told to take a whole snapshot instead.
  static constexpr size_t kMaxDirty = 100'000;

  // A realm's registry reports its terms' appearances (+1) and departures (-1).
  void report(const std::string& realm, const std::vector<std::pair<std::string, int>>& deltas);

  // Every term held now; what changed before is folded in (drain() then returns nothing older).
  std::vector<InterestTerm> snapshot();
  // The terms whose presence may have changed since the last snapshot() or drain(), with their presence
  // now (a term that came and went is reported absent). nullopt when more than kMaxDirty changed: take a
  // snapshot() instead.
  std::optional<std::vector<Change>> drain();

  size_t size();

 private:
  std::mutex mu_;
  std::unordered_map<InterestTerm, int64_t, InterestTermHash> counts_;
  std::unordered_set<InterestTerm, InterestTermHash> dirty_;
  std::function<void()> wake_;
  bool woken_ = false;
  bool overflowed_ = false;
};

}  // namespace siomq::broker
