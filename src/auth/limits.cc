#include "auth/limits.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>

namespace siomq::auth {
namespace {

using nlohmann::json;

// A number, or null for "keep the default"; zero or negative means unlimited.
void read_number(const json& block, const std::string& where, const char* key, double& out) {
  auto it = block.find(key);
  if (it == block.end() || it->is_null()) return;
  if (!it->is_number()) throw std::runtime_error(where + "." + key + " must be a number");
  double n = it->get<double>();
  out = std::isfinite(n) && n > 0 ? n : 0;
}

void read_values(const json& block, const std::string& where, LimitValues& v) {
  auto read = [&](const char* key, double& out) { read_number(block, where, key, out); };
  read("messages_per_second", v.messages_per_second);
  read("message_burst", v.message_burst);
  read("bytes_per_second", v.bytes_per_second);
  read("bytes_burst", v.bytes_burst);
  read("max_connections_per_ip", v.max_connections_per_ip);
  read("connections_per_minute_per_ip", v.connections_per_minute_per_ip);
  read("max_registrations_per_socket", v.max_registrations_per_socket);
  read("max_registrations_per_realm", v.max_registrations_per_realm);
  read("max_subscriptions_per_socket", v.max_subscriptions_per_socket);
  read("max_subscriptions_per_realm", v.max_subscriptions_per_realm);
  read("max_pending_authorization_requests", v.max_pending_authorization_requests);
  read("realms_per_hour_per_ip", v.realms_per_hour_per_ip);
  read("credential_attempts_per_second", v.credential_attempts_per_second);
  read("credential_attempt_burst", v.credential_attempt_burst);
}

}  // namespace

const LimitValues& Limits::for_realm(std::string_view realm) const {
  static const LimitValues defaults;
  if (!enabled) return defaults;
  auto it = realms.find(std::string(realm));
  return it == realms.end() ? values : it->second;
}

Limits parse_limits(const json& document) {
  Limits l;
  auto top = document.find("trust_proxy");
  if (top != document.end() && !top->is_null()) {
    if (!top->is_boolean()) throw std::runtime_error("trust_proxy must be a boolean");
    l.trust_proxy = top->get<bool>();
  }
  auto it = document.find("limits");
  if (it == document.end() || it->is_null()) return l;
  const json& block = *it;
  if (!block.is_object()) throw std::runtime_error("limits must be an object");
  if (auto e = block.find("enabled"); e != block.end() && !e->is_null() && !e->is_boolean())
    throw std::runtime_error("limits.enabled must be a boolean");
  l.enabled = !(block.contains("enabled") && block.at("enabled") == false);
  if (auto t = block.find("trust_proxy"); t != block.end() && !t->is_null()) {
    if (!t->is_boolean()) throw std::runtime_error("limits.trust_proxy must be a boolean");
    l.trust_proxy = t->get<bool>();
  }
  read_number(block, "limits", "max_realms", l.server.max_realms);
  read_number(block, "limits", "max_registrations_total", l.server.max_registrations_total);
  read_number(block, "limits", "max_subscriptions_total", l.server.max_subscriptions_total);
  read_values(block, "limits", l.values);
  if (auto r = block.find("realms"); r != block.end() && !r->is_null()) {
    if (!r->is_object()) throw std::runtime_error("limits.realms must be an object");
    for (const auto& [name, overrides] : r->items()) {
      if (!overrides.is_object()) throw std::runtime_error("limits.realms." + name + " must be an object");
      LimitValues v = l.values;
      read_values(overrides, "limits.realms." + name, v);
      l.realms.emplace(name, v);
    }
  }
  return l;
}

int64_t TokenBucket::take(double cost, double rate, double burst, int64_t now_ms) {
  if (rate <= 0) return 0;
  if (tokens_ < 0) {
    tokens_ = burst;
    last_ms_ = now_ms;
  }
  tokens_ = std::min(burst, tokens_ + static_cast<double>(now_ms - last_ms_) / 1000.0 * rate);
  last_ms_ = now_ms;
  if (tokens_ >= cost) {
    tokens_ -= cost;
    return 0;
  }
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil((cost - tokens_) / rate)));
}

}  // namespace siomq::auth
