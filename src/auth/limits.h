// The `limits` block of tyo-mq §11.1 (per-realm overrides under `limits.realms.<id>`) and the token
// bucket its rates are enforced with. Plain data: a new document gives new Limits.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace siomq::auth {

// One set of limits; 0 means unlimited (a zero or negative value in the file). The caps on names,
// subscriptions and credential attempts have safe defaults that apply without any `limits` block (issue
// 12); rates and per-address connection limits are off unless configured, so a busy single client is
// never slowed by default.
struct LimitValues {
  double messages_per_second = 0;
  double message_burst = 0;  // 0: 3 × messages_per_second
  double bytes_per_second = 0;
  double bytes_burst = 0;  // 0: 2 × bytes_per_second
  double max_connections_per_ip = 0;
  double connections_per_minute_per_ip = 0;
  double max_registrations_per_socket = 100;
  double max_registrations_per_realm = 100000;
  double max_subscriptions_per_socket = 1000;
  double max_subscriptions_per_realm = 100000;
  double max_pending_authorization_requests = 1000;
  double realms_per_hour_per_ip = 0;
  // AUTHENTICATION, AUTHORIZATION_* and AUTH_MANAGEMENT_COMMAND per socket: what a key, token or proof
  // guesser gets. A client authenticates once; an operator's script may send a burst of commands.
  double credential_attempts_per_second = 10;
  double credential_attempt_burst = 100;
};

// Caps on the whole server, whatever the realm: the per-realm caps times any number of realms would
// bound nothing. Read from the `limits` block's top level; they apply with or without one.
struct ServerLimits {
  double max_realms = 10000;                   // realms with live state at once (configured ones always admitted)
  double max_registrations_total = 1000000;    // producer and consumer names, online or offline
  double max_subscriptions_total = 1000000;
};

struct Limits {
  bool enabled = false;      // only with a `limits` block whose `enabled` is not false
  bool trust_proxy = false;  // the client's IP is the last hop of X-Forwarded-For
  ServerLimits server;
  LimitValues values;
  std::map<std::string, LimitValues> realms;  // the block's values overridden per realm

  // What applies in `realm`: the block's values, or the defaults while limits are off.
  const LimitValues& for_realm(std::string_view realm) const;
};

// Reads `limits` (and `trust_proxy` at the top level or inside it) from the settings document; throws
// std::runtime_error naming the key on a wrong type.
Limits parse_limits(const nlohmann::json& document);

// A token bucket that refills continuously: tokens = min(burst, tokens + dt × rate) (§11.1).
class TokenBucket {
 public:
  // Takes `cost` tokens if it can; otherwise returns the seconds to wait, max(1, ceil(deficit / rate)).
  // A rate of 0 is unlimited.
  int64_t take(double cost, double rate, double burst, int64_t now_ms);

 private:
  double tokens_ = -1;  // full on first use
  int64_t last_ms_ = 0;
};

}  // namespace siomq::auth
