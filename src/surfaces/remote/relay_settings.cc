#include "surfaces/remote/relay_settings.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>

namespace siomq::remote {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw std::runtime_error(where + " " + what); }

// The value under `key`, else under its camelCase alias (tyo-mq accepts both); null when absent.
const json* member(const json& block, const char* key, const char* alias = nullptr) {
  auto it = block.find(key);
  if (it != block.end() && !it->is_null()) return &*it;
  if (alias) {
    it = block.find(alias);
    if (it != block.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

// A positive integer no larger than `max`.
template <class T>
void read_count(const json& block, const std::string& where, const char* key, T& out, const char* alias = nullptr,
                double max = 1e15) {
  const json* v = member(block, key, alias);
  if (!v) return;
  if (!v->is_number()) fail(where + "." + key, "must be a number");
  double n = v->get<double>();
  if (!std::isfinite(n) || n < 1 || n > max || n != std::floor(n)) fail(where + "." + key, "must be a positive integer");
  out = static_cast<T>(n);
}

// A rate: a number, 0 (or less) for unlimited.
void read_rate(const json& block, const std::string& where, const char* key, double& out) {
  const json* v = member(block, key);
  if (!v) return;
  if (!v->is_number()) fail(where + "." + key, "must be a number");
  double n = v->get<double>();
  out = std::isfinite(n) && n > 0 ? n : 0;
}

From read_from(const json& rule, const std::string& where) {
  const json* v = member(rule, "from");
  if (!v) return From::any;
  if (*v == "agent") return From::agent;
  if (*v == "viewer") return From::viewer;
  if (*v == "any") return From::any;
  fail(where + ".from", "must be \"agent\", \"viewer\" or \"any\"");
}

To read_to(const json& rule, const std::string& where) {
  const json* v = member(rule, "to");
  if (!v) fail(where + ".to", "is required: \"agent\", \"viewers\" or \"opposite\"");
  if (*v == "agent") return To::agent;
  if (*v == "viewers") return To::viewers;
  if (*v == "opposite") return To::opposite;
  fail(where + ".to", "must be \"agent\", \"viewers\" or \"opposite\"");
}

bool read_bool(const json& block, const std::string& where, const char* key, bool fallback) {
  const json* v = member(block, key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(where + "." + key, "must be true or false");
  return v->get<bool>();
}

// One rule: {from, to, binary, enabled, max_bytes}. A disabled rule needs nothing else.
RelayRule read_rule(const json& rule, const std::string& where) {
  if (!rule.is_object()) fail(where, "must be an object {from, to, binary, enabled, max_bytes}");
  RelayRule r;
  r.enabled = read_bool(rule, where, "enabled", true);
  if (!r.enabled) return r;
  r.from = read_from(rule, where);
  r.to = read_to(rule, where);
  r.binary = read_bool(rule, where, "binary", false);
  read_count(rule, where, "max_bytes", r.max_bytes);
  return r;
}

void read_rules(const json& block, const std::string& where, RelayRules& rules) {
  if (const json* relay = member(block, "relay")) {
    if (!relay->is_object()) fail(where + ".relay", "must be an object of rules by event name");
    if (relay->size() > kMaxRules) fail(where + ".relay", "has more than " + std::to_string(kMaxRules) + " rules");
    for (const auto& [event, rule] : relay->items()) {
      std::string at = where + ".relay." + event;
      if (is_reserved_event(event)) fail(at, "is a reserved event name and is never relayed");
      if (!valid_pattern(event)) fail(at, "is not an event name or a \"<prefix>.*\" pattern");
      rules.table.set(event, read_rule(rule, at));
    }
  }
  if (const json* unlisted = member(block, "relay_unlisted", "relayUnlisted")) {
    if (*unlisted == "off" || *unlisted == false) rules.relay_unlisted = false;
    else if (*unlisted == "opposite" || *unlisted == true) rules.relay_unlisted = true;
    else fail(where + ".relay_unlisted", "must be \"opposite\" or \"off\"");
  }
  if (const json* allow = member(block, "allow")) {
    if (!allow->is_array()) fail(where + ".allow", "must be an array of event names and \"<prefix>.*\" patterns");
    if (allow->size() > kMaxRules) fail(where + ".allow", "has more than " + std::to_string(kMaxRules) + " entries");
    EventSet set;
    for (const auto& e : *allow) {
      if (!e.is_string() || !set.add(e.get<std::string>()))
        fail(where + ".allow", "entries must be event names or \"<prefix>.*\" patterns");
    }
    rules.allow = std::move(set);
  }
}

void read_limits(const json& block, const std::string& where, RelayLimits& l) {
  read_count(block, where, "max_event_bytes", l.max_event_bytes);
  read_count(block, where, "max_frame_bytes", l.max_frame_bytes);
  read_rate(block, where, "events_per_second", l.events_per_second);
  read_rate(block, where, "event_burst", l.event_burst);
  read_rate(block, where, "bytes_per_second", l.bytes_per_second);
  read_rate(block, where, "bytes_burst", l.bytes_burst);
  read_count(block, where, "max_sessions", l.max_sessions);
  read_count(block, where, "max_agents_per_session", l.max_agents_per_session);
  read_count(block, where, "max_viewers_per_session", l.max_viewers_per_session);
  // Whole days at most: a duration, not a date.
  read_count(block, where, "auth_timeout_ms", l.auth_timeout_ms, nullptr, 86400e3);
  read_count(block, where, "ticket_ttl_ms", l.ticket_ttl_ms, "ticketTtlMs", 86400e3);
}

RelayNamespace read_namespace(const json& block, const std::string& name, const std::string& where, bool builtins) {
  if (!block.is_object()) fail(where, "must be an object");
  RelayNamespace ns;
  ns.name = name;
  if (builtins) ns.rules.table = builtin_rules();
  read_rules(block, where, ns.rules);
  read_limits(block, where, ns.limits);
  return ns;
}

// A tyo-mq entry is {module, options}: the module cannot be loaded, so the relay is read from `options`
// when it is an object, else from the entry itself.
const json& relay_block_of(const json& entry, const std::string& where) {
  if (!entry.is_object()) fail(where, "must be an object");
  if (const json* type = member(entry, "type"); type && *type != "relay")
    fail(where + ".type", "must be \"relay\" (the only kind of namespace this server can attach)");
  if (const json* options = member(entry, "options"); options && options->is_object()) return *options;
  return entry;
}

}  // namespace

bool valid_namespace_name(std::string_view name) {
  if (name.size() < 2 || name.size() > 128 || name.front() != '/') return false;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f || c == '?' || c == '#' || c == ',') return false;
  }
  return true;
}

const RelayNamespace* RelaySettings::find(std::string_view nsp) const {
  if (nsp == kRemoteNamespace) return &remote;
  auto it = namespaces.find(nsp);
  return it == namespaces.end() ? nullptr : &it->second;
}

RelaySettings parse_relay_settings(const json& doc) {
  RelaySettings s;
  static const json kEmpty = json::object();
  const json* remote = doc.is_object() ? member(doc, "remote") : nullptr;
  s.remote = read_namespace(remote ? *remote : kEmpty, std::string(kRemoteNamespace), "remote", true);
  if (remote) {
    read_count(*remote, "remote", "max_tickets", s.tickets.max_tickets);
    read_count(*remote, "remote", "max_tickets_per_socket", s.tickets.max_tickets_per_socket);
  }
  const json* namespaces = doc.is_object() ? member(doc, "namespaces") : nullptr;
  if (!namespaces) return s;
  if (!namespaces->is_object()) fail("namespaces", "must be an object of namespaces by name");
  if (namespaces->size() > kMaxNamespaces + 2) fail("namespaces", "has more than " + std::to_string(kMaxNamespaces) + " entries");
  for (const auto& [name, entry] : namespaces->items()) {
    std::string where = "namespaces." + name;
    if (name == "/" || name == kRemoteNamespace) {
      s.ignored.push_back(name);  // the built-ins keep answering
      continue;
    }
    if (!valid_namespace_name(name)) fail(where, "is not a namespace name (\"/name\", at most 128 bytes)");
    s.namespaces.emplace(name, read_namespace(relay_block_of(entry, where), name, where, false));
  }
  if (s.namespaces.size() > kMaxNamespaces) fail("namespaces", "has more than " + std::to_string(kMaxNamespaces) + " entries");
  return s;
}

json attached_namespaces(const json& doc) {
  json list = json::array();
  list.push_back({{"name", kRemoteNamespace}, {"type", "builtin"}});
  try {
    RelaySettings s = parse_relay_settings(doc);
    for (const auto& [name, ns] : s.namespaces) list.push_back({{"name", name}, {"type", "relay"}});
  } catch (const std::exception&) {
    // A live document has passed this parser; a broken one lists what is attached for sure.
  }
  return list;
}

}  // namespace siomq::remote
