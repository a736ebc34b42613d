#include "surfaces/console/console_namespace.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <utility>

#include "auth/auth_config.h"
#include "net/engine_session.h"
#include "net/sio_server.h"
#include "net/socket.h"
#include "net/worker_pool.h"
#include "surfaces/console/console_requests.h"
#include "surfaces/refusal_pace.h"
#include "wire/clock.h"
#include "wire/socketio.h"

namespace siomq::surfaces::console {
namespace {

using nlohmann::json;
constexpr auto kTick = std::chrono::seconds(1);

// One signed-in visitor. Lives as its socket's state; the timer's handler holds it too, until the socket
// goes (then the timer is cancelled and nothing is sent any more).
struct ConsoleSession {
  ConsoleSession(boost::asio::io_context& io, std::weak_ptr<net::Socket> s, ConsoleGrant g)
      : timer(io), socket(std::move(s)), grant(std::move(g)) {
    scope.admin = grant.admin;
    scope.realm = grant.realm;
  }
  boost::asio::steady_timer timer;
  std::weak_ptr<net::Socket> socket;
  ConsoleGrant grant;
  ConsoleScope scope;
  std::map<std::string, std::string> sent;  // key -> the JSON last sent
  bool gathering = false;
  bool again = false;  // the scope changed while gathering: gather again when it is done
  bool closed = false;
};

// Sessions by who holds them: kMaxSessions in all, and realm managers at most kMaxManagerSessions in all
// and kMaxSessionsPerRealm per realm, so that managers cannot take every place from the admin.
inline constexpr size_t kMaxManagerSessions = kMaxSessions / 2;
inline constexpr size_t kMaxSessionsPerRealm = 2;
class SessionCount {
 public:
  bool take(const ConsoleGrant& g) {
    std::lock_guard lock(mu_);
    if (all_ == kMaxSessions) return false;
    if (!g.admin && (managers_ == kMaxManagerSessions || per_realm_[g.realm] == kMaxSessionsPerRealm)) return false;
    ++all_;
    if (!g.admin) ++managers_, ++per_realm_[g.realm];
    return true;
  }
  void give_back(const ConsoleGrant& g) {
    std::lock_guard lock(mu_);
    --all_;
    if (g.admin) return;
    --managers_;
    if (--per_realm_[g.realm] == 0) per_realm_.erase(g.realm);
  }

 private:
  std::mutex mu_;
  size_t all_ = 0, managers_ = 0;
  std::map<std::string, size_t> per_realm_;
};

struct Console {
  ConsoleParts parts;
  RefusalPace refusals;
  SessionCount sessions;
};

// The delta between what was sent and `view`, recorded as sent; "" when nothing changed.
std::string delta(ConsoleSession& s, ConsoleView view) {
  std::string set, del;
  std::map<std::string, std::string> now;
  for (auto& [key, value] : view) {
    auto it = s.sent.find(key);
    if (it == s.sent.end() || it->second != value) {
      set += set.empty() ? "" : ",";
      sio::append_json_string(set, key);
      set += ":" + value;
    }
    now.emplace(std::move(key), std::move(value));
  }
  for (const auto& [key, value] : s.sent) {
    if (now.count(key)) continue;
    del += del.empty() ? "" : ",";
    sio::append_json_string(del, key);
  }
  s.sent = std::move(now);
  if (set.empty() && del.empty()) return {};
  return "{\"t\":" + std::to_string(unix_ms()) + ",\"set\":{" + set + "},\"del\":[" + del + "]}";
}

// Gathers the session's view and sends what changed, on the socket's worker. A session whose credential
// no longer holds (revoked, rotated) is closed instead.
void refresh(const std::shared_ptr<Console>& console, const std::shared_ptr<ConsoleSession>& session) {
  if (session->closed) return;
  if (session->gathering) {
    session->again = true;
    return;
  }
  if (!still_granted(console->parts.tyo->settings.current(), session->grant)) {
    if (auto socket = session->socket.lock()) socket->disconnect();
    return;
  }
  session->gathering = true;
  auto executor = session->timer.get_executor();
  auto back = [executor](std::function<void()> f) { boost::asio::post(executor, std::move(f)); };
  // The callback holds `console`: the parts gather() reads stay alive until it is done.
  gather(console->parts, session->scope, back, [console, session](ConsoleView view) {
    session->gathering = false;
    auto socket = session->socket.lock();
    if (session->closed || !socket || !socket->connected()) return;
    std::string d = delta(*session, std::move(view));
    if (!d.empty()) socket->emit("delta", d);
    if (std::exchange(session->again, false)) refresh(console, session);
  });
}

void tick(const std::shared_ptr<Console>& console, const std::shared_ptr<ConsoleSession>& session) {
  refresh(console, session);
  session->timer.expires_after(kTick);
  session->timer.async_wait([console, session](const boost::system::error_code& ec) {
    if (!ec && !session->closed) tick(console, session);
  });
}

std::optional<std::string> on_connect(const std::shared_ptr<Console>& console, net::Socket& socket, std::string_view auth) {
  // The namespace exists only on the console's port: elsewhere it is refused like an unknown one.
  if (!socket.session().via_console()) return std::string("Invalid namespace");
  Context& ctx = *console->parts.tyo;
  const auth::Snapshot& snap = ctx.settings.current();
  const auth::LimitValues& pace = snap.limits.for_realm("default");
  if (console->refusals.paced_out(socket.remote_address(), pace)) return std::string("unauthorized");
  auto grant = console_grant(snap, auth, ctx.nonces, unix_ms());
  if (!grant) {
    console->refusals.count_refusal(socket.remote_address(), pace);
    return std::string("unauthorized");
  }
  if (!console->sessions.take(*grant)) return std::string("too many console sessions");
  auto session = std::make_shared<ConsoleSession>(socket.session().worker().io(), socket.weak_from_this(), *grant);
  socket.set_state(session);
  json hello = {{"role", grant->admin ? "admin" : "manager"},
                {"realm", grant->admin ? json() : json(grant->realm)},
                {"auth_enabled", snap.auth.enabled},
                {"version", console->parts.version},
                {"node_id", ctx.cluster ? json(ctx.cluster->node_id()) : json()}};
  // After the CONNECT's answer: the first delta follows the hello.
  boost::asio::post(socket.session().worker().io(), [console, session,
                                                     hello = hello.dump(-1, ' ', false, json::error_handler_t::replace)] {
    auto s = session->socket.lock();
    if (!s || session->closed) return;
    s->emit("hello", hello);
    tick(console, session);
  });
  return std::nullopt;
}

void answer(net::Socket& socket, const net::Message& msg, const json& result) {
  if (msg.ack_id) socket.ack(*msg.ack_id, "[" + result.dump() + "]");
}

// watch {realm: "<name>"|null}
void on_watch(const std::shared_ptr<Console>& console, net::Socket& socket, const net::Message& msg) {
  auto session = socket.state<ConsoleSession>();
  if (!session) return;
  auto read = read_watch(msg.json);
  if (!read) return answer(socket, msg, {{"ok", false}, {"code", 400}, {"message", read.error().message}});
  std::optional<std::string> realm = std::move(*read);
  if (realm && !session->scope.admin && *realm != session->scope.realm)
    return answer(socket, msg, {{"ok", false}, {"code", 403}, {"message", "a manager sees its own realm only"}});
  session->scope.watched = std::move(realm);
  answer(socket, msg, {{"ok", true}});
  refresh(console, session);
}

void on_disconnect(const std::shared_ptr<Console>& console, net::Socket& socket) {
  auto session = socket.state<ConsoleSession>();
  if (!session || session->closed) return;
  session->closed = true;
  session->timer.cancel();
  console->sessions.give_back(session->grant);
}

}  // namespace

void register_console(net::SioServer& sio, ConsoleParts parts) {
  auto console = std::make_shared<Console>();
  console->parts = std::move(parts);
  net::Namespace ns;
  ns.name = "/console";
  ns.on_connect = [console](net::Socket& s, std::string_view auth) { return on_connect(console, s, auth); };
  ns.handlers["watch"] = [console](net::Socket& s, const net::Message& m) { on_watch(console, s, m); };
  ns.on_disconnect = [console](net::Socket& s, std::string_view) { on_disconnect(console, s); };
  sio.add_namespace(std::move(ns));
}

}  // namespace siomq::surfaces::console
