// SSE tickets (tyo-mq §9, POST /sub-ticket/:realm): a 48-hex secret that stands for a consumer grant in
// one realm for 60 s, taken once by GET /sub (browsers' EventSource cannot send an Authorization header).
// At most `max_tickets` are outstanding; expired ones are swept when a new one would not fit, and by
// sweep().
//
// Thread-safe (one mutex).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "auth/authentication.h"

namespace siomq::surfaces::http {

class TicketBook {
 public:
  static constexpr int64_t kLifetimeMs = 60000;
  explicit TicketBook(size_t max_tickets) : max_(max_tickets) {}
  // A new ticket for `grant`, nullopt when max_tickets are outstanding and unexpired.
  std::optional<std::string> issue(const auth::Grant& grant, int64_t now_ms);
  // The ticket's grant if it exists, is unexpired and is for `realm`; it is used up either way.
  std::optional<auth::Grant> take(const std::string& ticket, const std::string& realm, int64_t now_ms);
  void sweep(int64_t now_ms);
  size_t size();

 private:
  struct Entry {
    auth::Grant grant;
    int64_t expires_ms;
  };
  void sweep_locked(int64_t now_ms);
  size_t max_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> tickets_;
};

}  // namespace siomq::surfaces::http
