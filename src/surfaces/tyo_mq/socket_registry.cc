#include "surfaces/tyo_mq/socket_registry.h"

#include <algorithm>

namespace siomq::surfaces {

std::pair<size_t, size_t> SocketRegistry::add(const std::shared_ptr<SocketEndpoint>& e, const std::string& ip,
                                              int64_t now_ms) {
  std::lock_guard lock(mu_);
  sockets_[e.get()] = Entry{e, e->realm(), ip};
  auto recent = [&](int64_t t) { return now_ms - t < 60'000; };
  if (++adds_ % 1024 == 0) {  // addresses that stopped connecting are forgotten after a minute
    std::erase_if(opened_, [&](auto& kv) { return std::none_of(kv.second.begin(), kv.second.end(), recent); });
  }
  auto& opened = opened_[ip];
  std::erase_if(opened, [&](int64_t t) { return !recent(t); });
  opened.push_back(now_ms);
  return {++per_ip_[ip], opened.size()};
}

void SocketRegistry::set_realm(const SocketEndpoint* e, const std::string& realm) {
  std::lock_guard lock(mu_);
  if (auto it = sockets_.find(e); it != sockets_.end()) it->second.realm = realm;
}

void SocketRegistry::remove(const SocketEndpoint* e) {
  std::lock_guard lock(mu_);
  auto it = sockets_.find(e);
  if (it == sockets_.end()) return;
  auto ip = per_ip_.find(it->second.ip);
  if (ip != per_ip_.end() && --ip->second == 0) per_ip_.erase(ip);
  sockets_.erase(it);
}

std::vector<std::shared_ptr<SocketEndpoint>> SocketRegistry::in_realm(const std::string& realm) {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<SocketEndpoint>> out;
  for (const auto& [ptr, entry] : sockets_) {
    if (entry.realm != realm) continue;
    if (auto e = entry.endpoint.lock()) out.push_back(std::move(e));
  }
  return out;
}

size_t SocketRegistry::size() {
  std::lock_guard lock(mu_);
  return sockets_.size();
}

}  // namespace siomq::surfaces
