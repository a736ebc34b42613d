// The management commands that change the settings document (§8.2): each reads its signed body and
// edits the document it is given (LiveSettings::update's copy, under its lock), returning the error to
// answer with; update then checks and writes the file. Pure functions of (body, document); no I/O.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

#include "auth/live_settings.h"
#include "surfaces/tyo_mq/surface.h"
#include "wire/durations.h"
#include "wire/result.h"

namespace siomq::surfaces::management {

// What a command did: the reply's extra fields, and for a realm-scoped signer the realm it concerns.
struct Outcome {
  nlohmann::json extra = nlohmann::json::object();
  std::string realm;
};

// A realm duration (ttl, max_ttl) in ms: seconds as a number, or "<n>[.<n>](ms|s|m|h|d)"; 0 is invalid
// (a 400 naming `what`).
Result<int64_t> realm_duration(const nlohmann::json& v, const char* what);

// One change of the settings document.
using Change = std::function<Status(nlohmann::json& doc, Outcome& out)>;

Status set_global_auth(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
// add_realm: a new realm's settings (409 if it exists).
Status add_realm(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
Status rename_realm(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
Status set_realm_auth(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
Status set_realm_acceptance(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
Status set_realm_manager_key(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
Status set_realm_key(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
Status set_realm_e2ee(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
// A realm signer is held to the management tokens that own the realm's name (ephemeral_only, max_ttl).
Status set_realm_lifetime(const nlohmann::json& body, nlohmann::json& doc, Outcome& out, const auth::Snapshot& snap,
                          bool realm_signed);
Status add_management_token(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
Status revoke_management_token(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
Status set_external_auth(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);
Status revoke_token(const nlohmann::json& body, nlohmann::json& doc, Outcome& out);

// A realm-scoped reply: only that realm's settings (§8.2).
nlohmann::json scoped_reply(const nlohmann::json& doc, const Outcome& out);

// set_persistence's request: the store to move to and what the settings file will say of it.
struct PersistenceChange {
  StoreTarget target;
  std::string storage;  // as given ("sqlite" is kept in the file, served by the file store)
  nlohmann::json options = nlohmann::json::object();
  std::optional<durations::Ttl> default_ttl;
};
Result<PersistenceChange> parse_persistence(const nlohmann::json& body);

}  // namespace siomq::surfaces::management
