#include "surfaces/console/console_namespace.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <map>

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
struct ConsoleSession : std::enable_shared_from_this<ConsoleSession> {
  ConsoleSession(boost::asio::io_context& io, std::weak_ptr<net::Socket> s, ConsoleScope sc)
      : timer(io), socket(std::move(s)), scope(std::move(sc)) {}
  boost::asio::steady_timer timer;
  std::weak_ptr<net::Socket> socket;
  ConsoleScope scope;
  std::map<std::string, std::string> sent;  // key -> the JSON last sent
  bool gathering = false;
  bool closed = false;
};

struct Console {
  ConsoleParts parts;
  RefusalPace refusals;
  std::atomic<size_t> sessions{0};
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

// Gathers the session's view and sends what changed, on the socket's worker.
void refresh(const std::shared_ptr<Console>& console, const std::shared_ptr<ConsoleSession>& session) {
  if (session->gathering || session->closed) return;
  session->gathering = true;
  auto executor = session->timer.get_executor();
  // The callback holds `console`: the parts gather() reads stay alive until it is done.
  gather(console->parts, session->scope, [console, session, executor](ConsoleView view) {
    boost::asio::post(executor, [session, view = std::move(view)]() mutable {
      session->gathering = false;
      auto socket = session->socket.lock();
      if (session->closed || !socket || !socket->connected()) return;
      std::string d = delta(*session, std::move(view));
      if (!d.empty()) socket->emit("delta", d);
    });
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
  if (console->sessions.fetch_add(1) >= kMaxSessions) {
    console->sessions.fetch_sub(1);
    return std::string("too many console sessions");
  }
  auto session = std::make_shared<ConsoleSession>(socket.session().worker().io(), socket.weak_from_this(),
                                                  ConsoleScope{grant->admin, grant->realm, std::nullopt});
  socket.set_state(session);
  json hello = {{"role", grant->admin ? "admin" : "manager"},
                {"realm", grant->admin ? json() : json(grant->realm)},
                {"auth_enabled", snap.auth.enabled},
                {"version", console->parts.version},
                {"node_id", ctx.cluster ? json(ctx.cluster->node_id()) : json()}};
  // After the CONNECT's answer: the first delta follows the hello.
  boost::asio::post(socket.session().worker().io(), [console, session, hello = hello.dump()] {
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
  console->sessions.fetch_sub(1);
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
