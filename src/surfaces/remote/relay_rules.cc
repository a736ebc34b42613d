#include "surfaces/remote/relay_rules.h"

#include <algorithm>
#include <array>

namespace siomq::remote {
namespace {

constexpr size_t kMaxPatternBytes = 256;

// "input.*" → "input." (the prefix with its dot); nullopt for an exact name.
std::optional<std::string_view> pattern_prefix(std::string_view key) {
  if (key.size() >= 3 && key.ends_with(".*")) return key.substr(0, key.size() - 1);
  return std::nullopt;
}

// The longest prefix of `event` that ends in a '.' and is a key of `prefixes`: one lookup per dot,
// from the right, so the cost does not depend on the number of patterns; only the first
// kMaxPatternBytes of the name can hold a prefix, so neither does it grow with a longer name.
template <class Map>
auto longest_prefix(const Map& prefixes, std::string_view event) -> decltype(prefixes.end()) {
  if (prefixes.empty()) return prefixes.end();
  for (size_t end = std::min(event.size(), kMaxPatternBytes); end > 0; --end) {
    if (event[end - 1] != '.' || end == event.size()) continue;  // "input." itself is not "input.*"
    auto it = prefixes.find(event.substr(0, end));
    if (it != prefixes.end()) return it;
  }
  return prefixes.end();
}

}  // namespace

bool valid_pattern(std::string_view pattern) {
  if (pattern.empty() || pattern.size() > kMaxPatternBytes) return false;
  for (unsigned char c : pattern) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  // A '*' is only the wildcard of "<prefix>.*", whose prefix holds at least one byte before its dot.
  if (auto prefix = pattern_prefix(pattern)) return prefix->size() >= 2 && prefix->find('*') == std::string_view::npos;
  return pattern.find('*') == std::string_view::npos;
}

bool is_reserved_event(std::string_view event) {
  // Socket.IO v4's reserved names, and v2's (its clients treat these as their own lifecycle events).
  static constexpr std::array<std::string_view, 20> kReserved = {
      "auth",           "auth_ok",         "auth_error",   "RATE_LIMITED",      "connect",
      "connect_error",  "connect_timeout", "connecting",   "disconnect",        "disconnecting",
      "error",          "newListener",     "removeListener", "reconnect",       "reconnect_attempt",
      "reconnect_error", "reconnect_failed", "reconnecting", "ping", "pong"};
  for (auto r : kReserved) {
    if (event == r) return true;
  }
  return false;
}

bool EventSet::add(std::string_view pattern) {
  if (!valid_pattern(pattern)) return false;
  if (auto prefix = pattern_prefix(pattern)) prefixes_.insert_or_assign(std::string(*prefix), true);
  else exact_.insert_or_assign(std::string(pattern), true);
  return true;
}

bool EventSet::contains(std::string_view event) const {
  return exact_.find(event) != exact_.end() || longest_prefix(prefixes_, event) != prefixes_.end();
}

bool RuleTable::set(std::string_view key, RelayRule rule) {
  if (!valid_pattern(key) || is_reserved_event(key)) return false;
  if (auto prefix = pattern_prefix(key)) prefixes_.insert_or_assign(std::string(*prefix), rule);
  else exact_.insert_or_assign(std::string(key), rule);
  return true;
}

const RelayRule* RuleTable::find(std::string_view event) const {
  if (auto it = exact_.find(event); it != exact_.end()) return &it->second;
  auto it = longest_prefix(prefixes_, event);
  return it == prefixes_.end() ? nullptr : &it->second;
}

RuleTable builtin_rules() {
  RuleTable t;
  t.set("frame", {.from = From::agent, .to = To::viewers, .binary = true});
  t.set("input.*", {.from = From::viewer, .to = To::agent});
  t.set("remote.setmonitor", {.from = From::viewer, .to = To::agent});
  t.set("rtc.offer", {.from = From::agent, .to = To::viewers});
  t.set("rtc.answer", {.from = From::viewer, .to = To::agent});
  t.set("rtc.ready", {.from = From::viewer, .to = To::agent});
  t.set("rtc.ice", {.from = From::any, .to = To::opposite});
  return t;
}

std::optional<RelayDecision> decide(const RelayRules& rules, std::string_view event, Role sender) {
  if (is_reserved_event(event)) return std::nullopt;
  if (rules.allow && !rules.allow->contains(event)) return std::nullopt;
  const Role opposite = sender == Role::agent ? Role::viewer : Role::agent;
  const RelayRule* rule = rules.table.find(event);
  if (!rule) {
    if (!rules.relay_unlisted) return std::nullopt;
    return RelayDecision{opposite, false, 0};
  }
  if (!rule->enabled) return std::nullopt;
  if ((rule->from == From::agent && sender != Role::agent) || (rule->from == From::viewer && sender != Role::viewer))
    return std::nullopt;  // the role guard
  Role to = rule->to == To::agent ? Role::agent : rule->to == To::viewers ? Role::viewer : opposite;
  return RelayDecision{to, rule->binary, rule->max_bytes};
}

}  // namespace siomq::remote
