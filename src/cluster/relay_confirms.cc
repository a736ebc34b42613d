#include "cluster/relay_confirms.h"

#include <algorithm>

#include "wire/log_text.h"

namespace siomq::cluster {

void RelayConfirms::expect(uint64_t confirm, std::set<std::string> nodes, Done done, Clock::time_point now) {
  if (nodes.empty()) return done(0, Ok{});
  if (waiting_.size() >= kMaxWaiting)
    return done(0, make_error("too many confirms wait for other nodes; the copies there are not confirmed", 503));
  waiting_[confirm] = Waiting{std::move(nodes), 0, Ok{}, std::move(done), now + wait_};
}

void RelayConfirms::answer(const RelayAnswer& a) {
  auto it = waiting_.find(a.confirm);
  if (it == waiting_.end() || !it->second.nodes.erase(a.node_id)) return;
  Waiting& w = it->second;
  w.stored += std::min<uint64_t>(a.stored, 1u << 30);  // a hostile answer cannot wrap the count
  if (a.error && w.status)
    w.status = make_error("node " + log_text(a.node_id) + " could not store its copies: " + log_text(*a.error), 503);
  if (!w.nodes.empty()) return;
  Done done = std::move(w.done);
  size_t stored = w.stored;
  Status status = std::move(w.status);
  waiting_.erase(it);
  done(stored, status);
}

size_t RelayConfirms::expire(Clock::time_point now) {
  size_t n = 0;
  while (!waiting_.empty() && waiting_.begin()->second.deadline <= now) {
    Waiting w = std::move(waiting_.begin()->second);
    waiting_.erase(waiting_.begin());
    std::string names;
    for (const auto& node : w.nodes) names += (names.empty() ? "" : ", ") + log_text(node);
    w.done(w.stored, make_error("not confirmed by node " + names + " within " + std::to_string(wait_.count()) +
                                    " ms; its copies may be stored all the same", 504));
    ++n;
  }
  return n;
}

void RelayConfirms::fail_all(const Error& why) {
  auto all = std::move(waiting_);
  waiting_.clear();
  for (auto& [token, w] : all) w.done(w.stored, why);
}

std::optional<RelayConfirms::Clock::time_point> RelayConfirms::next_deadline() const {
  if (waiting_.empty()) return std::nullopt;
  return waiting_.begin()->second.deadline;
}

}  // namespace siomq::cluster
