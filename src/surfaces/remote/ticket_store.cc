#include "surfaces/remote/ticket_store.h"

#include <openssl/rand.h>

#include <stdexcept>
#include <vector>

namespace siomq::remote {

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) throw std::runtime_error("RAND_bytes failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char b : raw) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

void TicketStore::erase(std::unordered_map<std::string, Entry>::iterator it) {
  auto owner = per_owner_.find(it->second.owner);
  if (owner != per_owner_.end() && --owner->second == 0) per_owner_.erase(owner);
  by_expiry_.erase(it->second.by_expiry);
  tickets_.erase(it);
}

void TicketStore::sweep_locked(int64_t now_ms) {
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now_ms) {
    auto it = tickets_.find(by_expiry_.begin()->second);
    if (it == tickets_.end()) {
      by_expiry_.erase(by_expiry_.begin());  // cannot happen: every entry is erased with its ticket
      continue;
    }
    erase(it);
  }
}

Result<std::string> TicketStore::mint(Ticket ticket, std::string_view owner, int64_t ttl_ms, size_t max_tickets,
                                      size_t max_per_owner, int64_t now_ms) {
  std::string id = random_hex(16);
  std::lock_guard lock(mu_);
  sweep_locked(now_ms);
  if (tickets_.size() >= max_tickets) return make_error("Too many unredeemed remote tickets on this server", 429);
  auto counted = per_owner_.find(std::string(owner));
  if (counted != per_owner_.end() && counted->second >= max_per_owner)
    return make_error("Too many unredeemed remote tickets for this socket", 429);
  if (tickets_.count(id)) return make_error("Ticket collision; try again", 503);  // 2^-128: never in practice
  Entry e{std::move(ticket), std::string(owner), now_ms + ttl_ms, {}};
  e.by_expiry = by_expiry_.emplace(e.expires_ms, id);
  tickets_.emplace(id, std::move(e));
  ++per_owner_[std::string(owner)];
  return id;
}

std::optional<Ticket> TicketStore::redeem(std::string_view ticket, int64_t now_ms) {
  std::lock_guard lock(mu_);
  sweep_locked(now_ms);
  auto it = tickets_.find(std::string(ticket));
  if (it == tickets_.end()) return std::nullopt;
  if (it->second.expires_ms <= now_ms) {
    erase(it);
    return std::nullopt;
  }
  Ticket t = std::move(it->second.ticket);
  erase(it);
  return t;
}

void TicketStore::sweep(int64_t now_ms) {
  std::lock_guard lock(mu_);
  sweep_locked(now_ms);
}

size_t TicketStore::size() const {
  std::lock_guard lock(mu_);
  return tickets_.size();
}

}  // namespace siomq::remote
