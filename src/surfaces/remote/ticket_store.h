// One-time tickets for the relay namespaces (tyo-mq §12): REMOTE_TICKET_REQUEST on "/" mints one (32
// hex digits from 16 random bytes) for a namespace, a session, a role and the requesting socket's realm;
// `auth` on the namespace redeems it. A ticket is redeemed at most once and never after its expiry.
//
// Bounded: at most `max_tickets` unredeemed tickets on the server and `max_tickets_per_socket` per
// requesting socket; expired tickets are swept on every mint and redeem (oldest first) and by sweep().
// Time is passed in (steady ms), so tests drive the clock.
//
// Thread-safe (one mutex; tickets are minted on one worker and redeemed on another).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "surfaces/remote/relay_rules.h"
#include "wire/result.h"

namespace siomq::remote {

struct Ticket {
  std::string nsp;         // the namespace it admits to
  std::string realm;       // the requesting socket's realm: the session lives in it
  std::string session_id;  // the session's name, chosen by the client or random
  std::string machine_id;  // informational
  Role role = Role::agent;
};

class TicketStore {
 public:
  // Mints a ticket valid for `ttl_ms` from `now_ms`, owned by `owner` (the requesting socket's id) for
  // the per-socket count; an error (code 429) past the bounds.
  Result<std::string> mint(Ticket ticket, std::string_view owner, int64_t ttl_ms, size_t max_tickets,
                           size_t max_per_owner, int64_t now_ms);
  // The ticket, removed; nullopt if it does not exist or has expired.
  std::optional<Ticket> redeem(std::string_view ticket, int64_t now_ms);
  // Drops every expired ticket.
  void sweep(int64_t now_ms);
  size_t size() const;

 private:
  struct Entry {
    Ticket ticket;
    std::string owner;
    int64_t expires_ms = 0;
    std::multimap<int64_t, std::string>::iterator by_expiry;
  };
  void erase(std::unordered_map<std::string, Entry>::iterator it);  // under mu_
  void sweep_locked(int64_t now_ms);

  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> tickets_;
  std::multimap<int64_t, std::string> by_expiry_;  // expiry → ticket, for the sweep
  std::unordered_map<std::string, size_t> per_owner_;
};

// 16 random bytes as 32 lowercase hex digits (OpenSSL's RAND_bytes).
std::string random_hex(size_t bytes);

}  // namespace siomq::remote
