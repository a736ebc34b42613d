#include "broker/interest_ledger.h"

#include "wire/length_prefixed.h"

namespace siomq::broker {

std::optional<std::string> group_interest_term(const std::string& group, const std::string& key) {
  std::string term = "g" + wire::join_length_prefixed(group, key);
  if (term.size() > kMaxInterestTermBytes) return std::nullopt;
  return term;
}

std::optional<std::pair<std::string_view, std::string_view>> parse_group_interest_term(std::string_view rest) {
  return wire::split_length_prefixed(rest);
}

namespace {
std::string subject_term(char kind, std::string_view pattern) {
  std::string term(1, kind);
  term += pattern.size() + 1 > kMaxInterestTermBytes ? std::string_view(">") : pattern;
  return term;
}
}  // namespace

std::string bus_interest_term(std::string_view pattern) { return subject_term('b', pattern); }
std::string stream_interest_term(std::string_view pattern) { return subject_term('s', pattern); }

std::optional<std::string> queue_interest_term(std::string_view queue, std::string_view pattern) {
  std::string term = "q" + wire::join_length_prefixed(queue, pattern);
  if (term.size() > kMaxInterestTermBytes) return std::nullopt;
  return term;
}

std::optional<std::pair<std::string_view, std::string_view>> parse_queue_interest_term(std::string_view rest) {
  auto parts = wire::split_length_prefixed(rest);
  if (!parts || parts->first.empty() || parts->second.empty()) return std::nullopt;
  return parts;
}

size_t InterestTermHash::operator()(const InterestTerm& t) const noexcept {
  std::hash<std::string> h;
  // The realm's hash mixed in, so that ("a", "b") and ("b", "a") differ.
  return h(t.realm) * 1000003u ^ h(t.term);
}

void InterestLedger::set_wake(std::function<void()> wake) {
  std::lock_guard lock(mu_);
  wake_ = std::move(wake);
}

void InterestLedger::report(const std::string& realm, const std::vector<std::pair<std::string, int>>& deltas) {
  if (deltas.empty()) return;
  // A realm name too long to share: its terms count as every realm's everything.
  const bool widen = realm.size() > kMaxInterestTermBytes;
  std::function<void()> wake;
  {
    std::lock_guard lock(mu_);
    for (const auto& [term, delta] : deltas) {
      InterestTerm key = widen ? InterestTerm{"*", "*"} : InterestTerm{realm, term};
      auto it = counts_.try_emplace(key, 0).first;
      it->second += delta;
      // Zero: nothing of this realm's lives wants it. Below zero cannot happen while every -1 follows
      // its +1; the entry is dropped all the same, so a bad report cannot hold memory.
      if (it->second <= 0) counts_.erase(it);
      if (overflowed_) continue;
      dirty_.insert(std::move(key));
      if (dirty_.size() > kMaxDirty) {
        dirty_.clear();
        overflowed_ = true;
      }
    }
    if (!woken_ && wake_) {
      woken_ = true;
      wake = wake_;
    }
  }
  if (wake) wake();
}

std::vector<InterestTerm> InterestLedger::snapshot() {
  std::lock_guard lock(mu_);
  dirty_.clear();
  woken_ = overflowed_ = false;
  std::vector<InterestTerm> out;
  out.reserve(counts_.size());
  for (const auto& [term, count] : counts_) out.push_back(term);
  return out;
}

std::optional<std::vector<InterestLedger::Change>> InterestLedger::drain() {
  std::lock_guard lock(mu_);
  woken_ = false;
  if (overflowed_) return std::nullopt;
  std::vector<Change> out;
  out.reserve(dirty_.size());
  for (const auto& term : dirty_) out.push_back({term, counts_.count(term) > 0});
  dirty_.clear();
  return out;
}

size_t InterestLedger::size() {
  std::lock_guard lock(mu_);
  return counts_.size();
}

}  // namespace siomq::broker
