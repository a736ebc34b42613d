// The settings of the relay namespaces: the `remote` block (/remote's rules, caps and the ticket store's
// bounds) and the `namespaces` block (declarative relay namespaces, tyo-mq §12), read from the settings
// document. C++ cannot load tyo-mq's Node modules, so a configured namespace is a relay namespace: the
// same rule table and caps as /remote, without /remote's built-in rules. "/" and "/remote" cannot be
// configured: such an entry is reported in `ignored` and the built-ins keep answering.
//
// Every value has a safe default; docs/configuration.md ("/remote and configured namespaces") lists them.
// Plain data: a new document gives new RelaySettings.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "surfaces/remote/relay_rules.h"

namespace siomq::remote {

// The bounds of one relay namespace. Rates of 0 are unlimited; everything else is at least 1.
struct RelayLimits {
  size_t max_event_bytes = size_t{1} << 20;  // one relayed event: its JSON and attachments
  size_t max_frame_bytes = size_t{4} << 20;  // one binary frame, after base64 decoding
  double events_per_second = 500;            // per socket, token bucket
  double event_burst = 1000;
  double bytes_per_second = 16.0 * 1024 * 1024;
  double bytes_burst = 32.0 * 1024 * 1024;
  size_t max_sessions = 10000;  // sessions with a peer in them, over every realm
  size_t max_agents_per_session = 4;
  size_t max_viewers_per_session = 32;
  int64_t auth_timeout_ms = 10000;  // a socket that has not authenticated by then is disconnected
  int64_t ticket_ttl_ms = 60000;    // how long a ticket for this namespace stays valid
};

struct RelayNamespace {
  std::string name;
  RelayRules rules;
  RelayLimits limits;
};

// The ticket store's bounds (the `remote` block; one store serves every relay namespace).
struct TicketLimits {
  size_t max_tickets = 10000;         // unredeemed tickets on the server
  size_t max_tickets_per_socket = 64;  // unredeemed tickets one requesting socket holds
};

struct RelaySettings {
  RelayNamespace remote;                                           // "/remote"
  std::map<std::string, RelayNamespace, std::less<>> namespaces;  // the configured ones
  TicketLimits tickets;
  std::vector<std::string> ignored;  // configured names that are reserved ("/", "/remote")

  // "/remote" or a configured namespace; null for any other name.
  const RelayNamespace* find(std::string_view nsp) const;
};

inline constexpr std::string_view kRemoteNamespace = "/remote";
// At most this many configured namespaces.
inline constexpr size_t kMaxNamespaces = 64;
// At most this many rules, or allow-list entries, per namespace.
inline constexpr size_t kMaxRules = 1024;

// Reads `remote` and `namespaces` from the settings document; throws std::runtime_error naming the key
// on a wrong type or value.
RelaySettings parse_relay_settings(const nlohmann::json& document);

// What `get` shows under `namespaces`: [{name, type}] for "/remote" (type "builtin") and each configured
// namespace that is attached (type "relay"), by name. An invalid block lists "/remote" only.
nlohmann::json attached_namespaces(const nlohmann::json& document);

// A configured namespace's name: "/" then 1 to 127 bytes, no control characters, '?', '#' or ','.
bool valid_namespace_name(std::string_view name);

}  // namespace siomq::remote
