#include "broker/sublist.h"

#include <algorithm>

#include "broker/interest_ledger.h"
#include "wire/length_prefixed.h"

namespace siomq::broker {
namespace {

// A group's key: its queue and pattern, length-prefixed (either may hold any byte).
std::string group_key(std::string_view pattern, std::string_view queue) { return wire::join_length_prefixed(queue, pattern); }

}  // namespace

Sublist::Id Sublist::add(std::string_view pattern, std::string_view queue, BusSinkPtr sink, std::string sid, bool shared) {
  Id id = next_id_++;
  Sub sub{std::string(pattern), std::string(queue), std::move(sid), std::move(sink), std::nullopt, 0, shared};
  count_interest(sub, +1);
  if (queue.empty()) {
    index_.insert(pattern, id);
  } else {
    std::string key = group_key(sub.pattern, sub.queue);
    auto [it, fresh] = groups_by_key_.try_emplace(key, 0);
    if (fresh) {
      it->second = next_id_++;
      groups_[it->second].key = key;
      index_.insert(pattern, it->second);
    }
    sub.group = it->second;
    groups_[sub.group].members.push_back(id);
  }
  subs_.emplace(id, std::move(sub));
  return id;
}

bool Sublist::remove(Id id) {
  auto it = subs_.find(id);
  if (it == subs_.end()) return false;
  Sub& sub = it->second;
  count_interest(sub, -1);
  if (!sub.group) {
    index_.erase(sub.pattern, id);
  } else {
    Group& g = groups_[sub.group];
    g.members.erase(std::find(g.members.begin(), g.members.end(), id));
    if (g.members.empty()) {
      index_.erase(sub.pattern, sub.group);
      groups_by_key_.erase(g.key);
      groups_.erase(sub.group);
    }
  }
  subs_.erase(it);
  return true;
}

bool Sublist::set_max(Id id, uint64_t max) {
  auto it = subs_.find(id);
  if (it == subs_.end()) return false;
  if (max == 0) return remove(id);
  it->second.remaining = max;
  return true;
}

void Sublist::take(Id id, Sub& sub, std::vector<Copy>& out, std::vector<Id>& finished) {
  bool last = sub.remaining && --*sub.remaining == 0;
  out.push_back(Copy{sub.sink, sub.sid, last});
  if (last) finished.push_back(id);
}

void deliver(const std::vector<Sublist::Copy>& copies, const BusMessagePtr& message) {
  for (const auto& c : copies) c.sink->deliver(message, c.sid, c.last);
}

size_t Sublist::route(std::string_view subject, std::vector<Copy>& out, const BusScope& scope) {
  // The scratch vector may be in use by an outer call when a sink publishes in turn: take it.
  std::vector<Id> matched = std::move(scratch_);
  matched.clear();
  index_.match(subject, matched);
  std::vector<Id> finished;
  size_t copies = 0;
  named_keys_for_ = nullptr;  // (the previous message's list may have had this one's address)
  for (Id id : matched) {
    auto sit = subs_.find(id);
    if (sit != subs_.end()) {
      if (scope.groups_only) continue;
      take(id, sit->second, out, finished);
      ++copies;
      continue;
    }
    auto git = groups_.find(id);
    if (git == groups_.end() || git->second.members.empty()) continue;
    Group& g = git->second;
    copies += take_turn(g, subs_.at(g.members.front()), out, finished, scope);
  }
  // The other nodes' groups with no member here — before the finished subscriptions leave: a group
  // whose last member here took this message (its `max` reached) must not be given a turn elsewhere too.
  if (scope.remote && scope.picks) take_remote_turns(subject, scope);
  for (Id id : finished) remove(id);
  scratch_ = std::move(matched);
  return copies;
}

bool Sublist::named_here(const BusScope& scope, const Sub& first) {
  const auto& named = *scope.named;
  if (named.size() <= 8) {
    return std::any_of(named.begin(), named.end(),
                       [&](const auto& n) { return n.first == first.pattern && n.second == first.queue; });
  }
  // Many groups named (up to kMaxRelayedQueues): a set of their keys, made once per message, so that a
  // message matching many groups here costs linear time, not their product.
  if (named_keys_for_ != &named) {
    named_keys_.clear();
    for (const auto& [pattern, queue] : named) named_keys_.insert(group_key(pattern, queue));
    named_keys_for_ = &named;
  }
  return named_keys_.count(group_key(first.pattern, first.queue)) > 0;
}

bool Sublist::take_turn(Group& g, const Sub& first, std::vector<Copy>& out, std::vector<Id>& finished,
                        const BusScope& scope) {
  if (scope.named) {
    // Relayed: the publishing node gave this node the turns of the groups it named, and no others.
    if (!named_here(scope, first)) return false;
  } else if (scope.remote && scope.picks && !scope.keep_turns) {
    if (const RemoteBus::Queue* remote = scope.remote->queue(scope.realm, first.pattern, first.queue)) {
      // This node's members count as one place among the nodes that have some.
      uint64_t slot = g.turn++ % (remote->nodes.size() + 1);
      if (slot != 0) {
        scope.picks->push_back(QueuePick{remote->nodes[slot - 1], first.pattern, first.queue});
        return false;
      }
    }
  }
  Id member = g.members[g.next++ % g.members.size()];
  take(member, subs_.at(member), out, finished);
  return true;
}

void Sublist::take_remote_turns(std::string_view subject, const BusScope& scope) {
  thread_local std::vector<const RemoteBus::Queue*> remote;
  remote.clear();
  scope.remote->queues(scope.realm, subject, remote);
  for (const RemoteBus::Queue* q : remote) {
    if (q->nodes.empty()) continue;
    std::string key = group_key(q->pattern, q->queue);
    if (groups_by_key_.count(key)) continue;  // has members here: its turn was taken above
    if (remote_turns_.size() >= kMaxRemoteTurns && !remote_turns_.count(key)) remote_turns_.clear();
    auto [turn, fresh] = remote_turns_.try_emplace(key, 0);
    if (fresh) turn->second = std::hash<std::string>{}(key);  // groups start apart
    scope.picks->push_back(QueuePick{q->nodes[turn->second++ % q->nodes.size()], q->pattern, q->queue});
  }
}

bool Sublist::has_interest(std::string_view subject) const {
  std::vector<Id> matched = std::move(scratch_);
  matched.clear();
  index_.match(subject, matched);
  bool any = !matched.empty();
  scratch_ = std::move(matched);
  return any;
}

void Sublist::count_interest(const Sub& sub, int delta) {
  if (!track_interest_ || !sub.shared) return;
  std::optional<std::string> term =
      sub.queue.empty() ? std::optional<std::string>(bus_interest_term(sub.pattern)) : queue_interest_term(sub.queue, sub.pattern);
  if (!term) return;  // a group whose name and pattern are too long to share stays on its node
  if (delta > 0) {
    if (interest_[*term]++ == 0) interest_deltas_.emplace_back(std::move(*term), +1);
    return;
  }
  auto it = interest_.find(*term);
  if (it == interest_.end()) return;
  if (--it->second == 0) {
    interest_.erase(it);
    interest_deltas_.emplace_back(std::move(*term), -1);
  }
}

void Sublist::take_interest_deltas(std::vector<std::pair<std::string, int>>& out) {
  if (interest_deltas_.empty()) return;
  for (auto& d : interest_deltas_) out.push_back(std::move(d));
  interest_deltas_.clear();
}

void Sublist::interest_terms(std::vector<std::string>& out) const {
  for (const auto& [term, count] : interest_) out.push_back(term);
}

}  // namespace siomq::broker
