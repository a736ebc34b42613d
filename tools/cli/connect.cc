// Connecting for a command (tools/cli/connect.h).
#include "tools/cli/connect.h"

#include <random>

namespace siomq::cli {

Result<std::unique_ptr<tyomq::Client>> connect_tyomq(const Context& ctx, bool authenticate, Use use) {
  auto client = std::make_unique<tyomq::Client>(connection_options(ctx, use));
  auto st = client->connect().get();
  if (!st) return Error{st.error().code, "connect: " + st.error().message};
  if (authenticate && !ctx.token.empty()) {
    tyomq::AuthRequest req;
    req.token = ctx.token;
    req.realm = ctx.realm;
    auto auth = client->authenticate(std::move(req)).get();
    if (!auth) return Error{auth.error().code, "authenticate: " + auth.error().message};
  }
  return client;
}

Result<std::unique_ptr<bus::Conn>> connect_bus(const Context& ctx, bool control, Use use) {
  bus::DialOptions options;
  static_cast<Options&>(options) = connection_options(ctx, use);
  options.token = ctx.token;
  options.control = control;
  if (control) {
    options.control_token = !ctx.control_token.empty() ? ctx.control_token
                            : !ctx.admin_token.empty() ? ctx.admin_token
                                                       : ctx.token;
    options.realm = ctx.realm;
  }
  auto conn = std::make_unique<bus::Conn>(std::move(options));
  auto st = conn->connect().get();
  if (!st) return Error{st.error().code, "connect: " + st.error().message};
  return conn;
}

Status flush(tyomq::Client& client) {
  auto r = client.ping().get();
  // The server's refusal of the PING (the gate) still means it got there; no answer does not.
  if (!r && (r.error().code == errc::timeout || r.error().code >= errc::disconnected)) return r.error();
  return Ok{};
}

bool is_flush_refusal(const tyomq::ServerError& e) { return e.message.ends_with(" PING"); }

Status flush(bus::Conn& conn) {
  std::random_device rd;
  std::string inbox = "_INBOX.siomq-flush." + std::to_string(rd()) + std::to_string(rd());
  auto sub = conn.subscribe(inbox, {}, [](const bus::Message&) {}).get();
  if (!sub) return sub.error();
  return sub->close();
}

std::string signing_secret(const Context& ctx, const std::string& manager_key) {
  return manager_key.empty() ? ctx.admin_token : manager_key;
}

}  // namespace siomq::cli
