// siomq::tyomq::Manager: every signed management command of tyo-mq §8.2 as a typed call, each signed
// (§8.1) with an admin token or, for the realm-scoped ones, a realm's manager key.
//
// Answers: the server's result object as JSON text (settings commands answer the public settings,
// which are large and evolve; read what you need with your JSON library), typed where the value is
// small (DLQ entries, replayed ids). A refusal ({ok:false, code, message}) is an Error with the
// server's code (401 bad proof, 404, 409, 400).
//
// Threading and lifetime: as siomq::tyomq::Client, which must outlive its Manager.
#pragma once

#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "siomq/result.h"
#include "siomq/tyomq.h"

namespace siomq::tyomq {

struct RealmConfig {
  std::string realm;
  bool required = true;             // authentication required
  std::string manager_key;
  std::string key;                  // pre-shared key for consumers
  std::optional<bool> require_acceptance;
  std::string e2ee;                 // "" | off | opportunistic | required
  bool ephemeral = false;
  std::string ttl;                  // "1h", "2d", or seconds as digits
};

struct PersistenceConfig {
  std::string storage;              // memory | sqlite | redis | file (siomq)
  std::string options_json;         // storage_options, JSON text
  std::optional<int64_t> default_ttl;
};

struct ExternalAuth {
  std::string auth_url;             // empty: remove
  std::optional<std::string> auth_secret;  // nullopt: keep; "": clear
  std::string realm;                // either realm
  std::string realm_prefix;         // or realm_prefix
};

struct RevokeToken {
  std::string token;                // or
  std::string token_hash;           // or
  std::string realm, client_id;     // both
  bool allow_admin = false;
};

struct DlqEntry {
  std::string id, realm, event, consumer, producer, reason, created_at, expires_at, dead_lettered_at;
  std::string message;              // JSON text
};

class Manager {
 public:
  Manager(Client& client, std::string secret) : client_(client), secret_(std::move(secret)) {}

  // Any command: `body_json` is {command, ...}.
  std::future<Result<std::string>> command(std::string_view body_json);

  std::future<Result<std::string>> get_settings();
  std::future<Result<std::string>> reload_settings();
  std::future<Result<std::string>> set_global_auth(bool enabled);
  std::future<Result<std::string>> set_persistence(const PersistenceConfig& config);
  std::future<Result<std::string>> add_realm(const RealmConfig& config);
  std::future<Result<std::string>> rename_realm(std::string_view from, std::string_view to);
  std::future<Result<std::string>> remove_realm(std::string_view realm);
  std::future<Result<std::string>> set_realm_auth(std::string_view realm, bool required);
  std::future<Result<std::string>> set_realm_manager_key(std::string_view realm, std::optional<std::string> manager_key);
  std::future<Result<std::string>> set_realm_key(std::string_view realm, std::optional<std::string> key,
                                                 std::optional<bool> require_key = std::nullopt);
  std::future<Result<std::string>> set_realm_acceptance(std::string_view realm, bool required);
  std::future<Result<std::string>> set_realm_e2ee(std::string_view realm, std::string_view policy);
  std::future<Result<std::string>> set_realm_lifetime(std::string_view realm, bool ephemeral, std::string_view ttl = {});
  std::future<Result<std::string>> add_management_token(std::string_view token, std::string_view realm_prefix,
                                                        bool ephemeral_only = false, std::string_view max_ttl = {});
  std::future<Result<std::string>> revoke_management_token(std::string_view token_hash);
  std::future<Result<std::string>> set_external_auth(const ExternalAuth& config);
  std::future<Result<std::string>> revoke_token(const RevokeToken& which);
  std::future<Result<std::string>> stats();
  std::future<Result<std::vector<DlqEntry>>> dlq_list(std::string_view realm = {});
  std::future<Status> dlq_discard(std::string_view msg_id, std::string_view realm = {});
  // The id the replayed message got.
  std::future<Result<std::string>> dlq_replay(std::string_view msg_id, std::string_view realm = {});

 private:
  Client& client_;
  std::string secret_;
};

}  // namespace siomq::tyomq
