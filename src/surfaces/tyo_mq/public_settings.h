// What settings replies (§8.2's `get` and every command's answer) show of the settings document: tokens
// as SHA-256 hashes, secrets as "<configured>" or "…_configured" flags, a store URL without its
// password. Keys are read as the settings parser reads them — every camelCase alias renamed to its
// snake_case key first — so no accepted alias carries a secret past the masking.
#pragma once

#include <nlohmann/json.hpp>

namespace siomq::surfaces {

// What `get` and every settings command answer as `settings` (§8.2): the `auth` block's keys at the top
// level (realms, tokens, management_tokens, external_validators, jwt_secret, enabled, …, masked), plus
// `persistence:{storage, storage_options}` and `namespaces`.
nlohmann::json public_settings(const nlohmann::json& doc);
// The `auth` block alone, masked.
nlohmann::json public_auth(const nlohmann::json& auth);
// One realm's block as replies show it.
nlohmann::json public_realm(const nlohmann::json& cfg);
// One token entry: realm, role, client_id, client_name, token_hash.
nlohmann::json token_view(const nlohmann::json& token);

}  // namespace siomq::surfaces
