// `siomq auth request|next|approve|reject`: tyo-mq enrolment (§7). A client files a request (and may
// wait for the decision); a manager takes the oldest pending one and decides, signed with the admin
// token or the realm's manager key.
#include <CLI/CLI.hpp>

#include <random>

#include "tools/cli/commands.h"
#include "tools/cli/connect.h"
#include "tools/cli/output.h"
#include "tools/cli/signed.h"
#include "tools/cli/wait.h"

namespace siomq::cli {
namespace {

using nlohmann::json;

json request_json(const tyomq::PendingAuthRequest& p) {
  json o = json_or_string(p.raw);
  return o.is_object() ? o : json{{"request_id", p.request_id}, {"status", p.status}};
}

void print_request(const Output& out, const tyomq::PendingAuthRequest& p) {
  Fields f;
  f.add("Request", p.request_id).add("Status", p.status).add("Realm", p.realm).add("Role", p.role.empty() ? "-" : p.role);
  f.add("Client id", p.client_id).add("Client name", p.client_name).add("Token hash", p.client_token_hash);
  f.add("Created", p.created_at);
  if (!p.decided_at.empty()) f.add("Decided", p.decided_at);
  if (!p.decision_reason.empty()) f.add("Reason", p.decision_reason);
  f.print(out);
}

std::string random_token() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string t;
  for (int i = 0; i < 32; ++i) t.push_back(hex[rd() % 16]);
  return t;
}

struct RequestFlags {
  std::string client_id, client_name, client_token, role;
  bool wait = false;
};

// Decisions reach the main thread through this (held by the handler).
struct Decision {
  Waiter waiter;
  std::mutex mu;
  std::optional<tyomq::AuthorizationDecision> decision;
};

int request(const RequestFlags& f, const Context& ctx, const Output& out) {
  tyomq::AuthorizationRequest req;
  req.realm = ctx.realm.empty() ? "default" : ctx.realm;
  req.role = f.role;
  req.client_id = f.client_id;
  req.client_name = f.client_name.empty() ? f.client_id : f.client_name;
  bool generated = f.client_token.empty();
  req.client_token = generated ? random_token() : f.client_token;

  auto state = std::make_shared<Decision>();
  auto client = connect_tyomq(ctx, false, f.wait ? Use::waiting : Use::request);
  if (!client) return out.fail("auth request", client.error());
  (*client)->on_authorization_decided([state](const tyomq::AuthorizationDecision& d) {
    {
      std::lock_guard lock(state->mu);
      state->decision = d;
    }
    state->waiter.done(kExitOk);
  });
  auto r = (*client)->request_authorization(req).get();
  if (!r) return out.fail("auth request", r.error());
  json doc{{"request_id", r->request_id}, {"status", r->status}, {"realm", req.realm}, {"client_id", req.client_id}};
  if (generated) doc["client_token"] = req.client_token;
  if (!out.json()) {
    out.line("request " + r->request_id + " for realm " + req.realm + ": " + r->status);
    if (generated) out.line("client token: " + req.client_token + " (authenticate with it once approved)");
  }
  if (!f.wait) {
    if (out.json()) out.print_json(doc);
    return kExitOk;
  }
  out.note("waiting for the decision on " + r->request_id);
  auto end = state->waiter.wait(ctx.timeout);
  std::optional<tyomq::AuthorizationDecision> d;
  {
    std::lock_guard lock(state->mu);
    d = state->decision;
  }
  client->reset();
  if (!d) {
    if (out.json()) out.print_json(doc);
    if (end == Waiter::End::interrupted) return kExitOk;
    out.note("auth request: no decision in time");
    return kExitTimeout;
  }
  doc["decision"] = json{{"approved", d->approved}, {"realm", d->realm}, {"role", d->role}, {"reason", d->reason}};
  if (out.json()) out.print_json(doc);
  else if (d->approved) out.line("approved: realm " + d->realm + ", role " + d->role);
  else out.line("rejected" + (d->reason.empty() ? "" : ": " + d->reason));
  return d->approved ? kExitOk : kExitRefused;
}

int next(const std::string& manager_key, const Context& ctx, const Output& out) {
  return with_signer("auth next", manager_key, ctx, out, [&](tyomq::Client& client, const std::string& secret) {
    auto r = client.authorization_next(secret, ctx.realm).get();
    if (!r) return out.fail("auth next", r.error());
    if (out.json()) out.print_json(json{{"request", r->has_value() ? request_json(**r) : json(nullptr)}});
    else if (!r->has_value()) out.line("no pending request");
    else print_request(out, **r);
    return static_cast<int>(kExitOk);
  });
}

struct DecideFlags {
  std::string request_id, role, reason, manager_key;
};

int decide(const DecideFlags& f, bool approve, const Context& ctx, const Output& out) {
  const char* what = approve ? "auth approve" : "auth reject";
  return with_signer(what, f.manager_key, ctx, out, [&](tyomq::Client& client, const std::string& secret) {
    auto r = client.authorization_decide(secret, f.request_id, approve, f.role, f.reason).get();
    if (!r) return out.fail(what, r.error());
    if (out.json()) out.print_json(json{{"request", request_json(*r)}});
    else print_request(out, *r);
    return static_cast<int>(kExitOk);
  });
}

void decide_command(Commands& commands, CLI::App& group, bool approve) {
  auto d = std::make_shared<DecideFlags>();
  CLI::App* cmd = commands.add(
      group, approve ? "approve" : "reject", approve ? "Approve a pending request (the client token becomes valid)" : "Reject a pending request",
      approve ? "  siomq auth approve 3f2c... --admin-token $TYO_MQ_ADMIN_TOKEN\n"
                "  siomq auth approve 3f2c... --realm r1 --manager-key mk-r1 --role consumer\n"
              : "  siomq auth reject 3f2c... --reason 'unknown device'\n",
      [d, approve](const Context& ctx, const Output& out) { return decide(*d, approve, ctx, out); });
  cmd->add_option("request_id", d->request_id, "The request's id (auth next shows it)")->required();
  if (approve) cmd->add_option("--role", d->role, "Role to grant instead of the one asked for");
  cmd->add_option("--reason", d->reason, "Reason recorded with the decision");
  cmd->add_option("--manager-key", d->manager_key, "Sign with this realm manager key instead of the admin token");
}

}  // namespace

void add_auth_commands(Commands& commands) {
  CLI::App* group = commands.group(commands.app(), "auth", "Enrolment (tyo-mq §7): request access, take and decide requests",
                                   "  siomq auth request --realm r1 --client-id dev-1 --wait\n"
                                   "  siomq auth next --realm r1 --manager-key mk-r1\n");
  auto rq = std::make_shared<RequestFlags>();
  CLI::App* request_cmd = commands.add(*group, "request", "File an authorization request for a realm (--realm, default \"default\")",
                                       "  siomq auth request --realm r1 --client-id dev-1 --client-name 'Build box'\n"
                                       "  siomq auth request --realm r1 --client-id dev-1 --role consumer --wait --timeout 5m\n",
                                       [rq](const Context& ctx, const Output& out) { return request(*rq, ctx, out); });
  request_cmd->add_option("--client-id", rq->client_id, "Client id")->required();
  request_cmd->add_option("--client-name", rq->client_name, "Client name (default: the id)");
  request_cmd->add_option("--client-token", rq->client_token, "The token to approve (default: a random one, printed)");
  request_cmd->add_option("--role", rq->role, "Role asked for")->check(CLI::IsMember({"producer", "consumer", "both"}));
  request_cmd->add_flag("--wait", rq->wait, "Wait for the decision (up to --timeout): exit 0 approved, 1 rejected, 4 none");

  auto key = std::make_shared<std::string>();
  CLI::App* next_cmd = commands.add(*group, "next", "Show the oldest pending request (of --realm, or of all with the admin token)",
                                    "  siomq auth next --admin-token $TYO_MQ_ADMIN_TOKEN\n"
                                    "  siomq auth next --realm r1 --manager-key mk-r1 --json\n",
                                    [key](const Context& ctx, const Output& out) { return next(*key, ctx, out); });
  next_cmd->add_option("--manager-key", *key, "Sign with this realm manager key instead of the admin token");

  decide_command(commands, *group, true);
  decide_command(commands, *group, false);
}

}  // namespace siomq::cli
