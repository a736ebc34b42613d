#include "surfaces/session_registry.h"

#include <algorithm>

namespace siomq::surfaces {

std::pair<size_t, size_t> SessionRegistry::add(const std::shared_ptr<Session>& s, int64_t now_ms) {
  const std::string& ip = s->ip;
  std::lock_guard lock(mu_);
  sessions_[s.get()] = Entry{s, s->realm()};
  auto recent = [&](int64_t t) { return now_ms - t < 60'000; };
  if (++adds_ % 1024 == 0) {  // addresses that stopped connecting are forgotten after a minute
    std::erase_if(opened_, [&](auto& kv) { return std::none_of(kv.second.begin(), kv.second.end(), recent); });
  }
  auto& opened = opened_[ip];
  std::erase_if(opened, [&](int64_t t) { return !recent(t); });
  opened.push_back(now_ms);
  return {++per_ip_[ip], opened.size()};
}

void SessionRegistry::set_realm(const Session* s, const std::string& realm) {
  std::lock_guard lock(mu_);
  if (auto it = sessions_.find(s); it != sessions_.end()) it->second.realm = realm;
}

void SessionRegistry::remove(const Session* s) {
  std::lock_guard lock(mu_);
  auto it = sessions_.find(s);
  if (it == sessions_.end()) return;
  auto ip = per_ip_.find(s->ip);
  if (ip != per_ip_.end() && --ip->second == 0) per_ip_.erase(ip);
  sessions_.erase(it);
}

std::vector<std::shared_ptr<Session>> SessionRegistry::in_realm(const std::string& realm) {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<Session>> out;
  for (const auto& [ptr, entry] : sessions_) {
    if (entry.realm != realm) continue;
    if (auto s = entry.session.lock()) out.push_back(std::move(s));
  }
  return out;
}

size_t SessionRegistry::size() {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

}  // namespace siomq::surfaces
