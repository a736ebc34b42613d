// What settings replies (§8.2's `get` and every command's answer) show of the settings document: tokens
// as SHA-256 hashes, secrets as "<configured>" or "…_configured" flags, a store URL without its
// password. Keys are read as the settings parser reads them — every camelCase alias renamed to its
// snake_case key first — so no accepted alias carries a secret past the masking.
#pragma once

#include <nlohmann/json.hpp>

namespace siomq::surfaces {

// The whole document as `get` shows it, with `persistence` and `namespaces`.
nlohmann::json public_settings(const nlohmann::json& doc);
// One realm's block as replies show it.
nlohmann::json public_realm(const nlohmann::json& cfg);
// One token entry: realm, role, client_id, client_name, token_hash.
nlohmann::json token_view(const nlohmann::json& token);

}  // namespace siomq::surfaces
