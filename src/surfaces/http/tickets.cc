#include "surfaces/http/tickets.h"

#include "auth/hmac.h"

namespace siomq::surfaces::http {

std::optional<std::string> TicketBook::issue(const auth::Grant& grant, int64_t now_ms) {
  std::string ticket = auth::random_hex(24);
  std::lock_guard lock(mu_);
  if (tickets_.size() >= max_) sweep_locked(now_ms);
  if (tickets_.size() >= max_) return std::nullopt;
  tickets_[ticket] = Entry{grant, now_ms + kLifetimeMs};
  return ticket;
}

std::optional<auth::Grant> TicketBook::take(const std::string& ticket, const std::string& realm, int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = tickets_.find(ticket);
  if (it == tickets_.end()) return std::nullopt;
  Entry e = std::move(it->second);
  tickets_.erase(it);
  if (e.expires_ms <= now_ms || e.grant.realm != realm) return std::nullopt;
  return e.grant;
}

void TicketBook::sweep(int64_t now_ms) {
  std::lock_guard lock(mu_);
  sweep_locked(now_ms);
}

void TicketBook::sweep_locked(int64_t now_ms) {
  std::erase_if(tickets_, [now_ms](const auto& kv) { return kv.second.expires_ms <= now_ms; });
}

size_t TicketBook::size() {
  std::lock_guard lock(mu_);
  return tickets_.size();
}

}  // namespace siomq::surfaces::http
