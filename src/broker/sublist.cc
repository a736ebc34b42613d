#include "broker/sublist.h"

#include <algorithm>

namespace siomq::broker {

Sublist::Id Sublist::add(std::string_view pattern, std::string_view queue, BusSinkPtr sink, std::string sid) {
  Id id = next_id_++;
  Sub sub{std::string(pattern), std::string(queue), std::move(sid), std::move(sink), std::nullopt, 0};
  if (queue.empty()) {
    index_.insert(pattern, id);
  } else {
    std::string key = sub.pattern + '\0' + sub.queue;
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

size_t Sublist::route(std::string_view subject, std::vector<Copy>& out) {
  // The scratch vector may be in use by an outer call when a sink publishes in turn: take it.
  std::vector<Id> matched = std::move(scratch_);
  matched.clear();
  index_.match(subject, matched);
  std::vector<Id> finished;
  size_t copies = 0;
  for (Id id : matched) {
    auto sit = subs_.find(id);
    if (sit != subs_.end()) {
      take(id, sit->second, out, finished);
      ++copies;
      continue;
    }
    auto git = groups_.find(id);
    if (git == groups_.end() || git->second.members.empty()) continue;
    Group& g = git->second;
    Id member = g.members[g.next++ % g.members.size()];
    take(member, subs_.at(member), out, finished);
    ++copies;
  }
  for (Id id : finished) remove(id);
  scratch_ = std::move(matched);
  return copies;
}

bool Sublist::has_interest(std::string_view subject) const {
  std::vector<Id> matched = std::move(scratch_);
  matched.clear();
  index_.match(subject, matched);
  bool any = !matched.empty();
  scratch_ = std::move(matched);
  return any;
}

}  // namespace siomq::broker
