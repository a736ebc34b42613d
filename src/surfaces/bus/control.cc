#include "surfaces/bus/control.h"

#include <unistd.h>

#include <fstream>

#include "auth/auth_config.h"
#include "broker/broker.h"
#include "surfaces/bus/answer.h"
#include "surfaces/bus/bus_stats.h"
#include "surfaces/tyo_mq/socket_endpoint.h"
#include "wire/clock.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::surfaces::bus {
namespace {

constexpr std::string_view kUnauthorized = "unauthorized";

// The CONNECT auth payload's string members `token` and `realm`.
struct ControlAuth {
  std::optional<std::string> token, realm;
};
ControlAuth read_auth(std::string_view auth) {
  ControlAuth out;
  if (auth.empty() || auth.front() != '{') return out;
  auto members = json_spans::object_members(auth);
  if (!members) return out;
  for (const auto& m : *members) {
    if (m.value.empty() || m.value.front() != '"') continue;
    auto v = json_spans::unescape(m.value);
    if (!v || v->empty() || v->size() > 4096) continue;
    if (m.key == "token") out.token = std::move(*v);
    if (m.key == "realm") out.realm = std::move(*v);
  }
  return out;
}

// Compares without leaking where the first difference is.
bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

std::optional<std::string> on_control_connect(BusContext& ctx, net::Socket& socket, std::string_view auth_json) {
  if (!ctx.options.enabled) return std::string("the bus is disabled on this server");
  const auth::Snapshot& snap = ctx.tyo->settings.current();
  const auth::LimitValues& pace = snap.limits.for_realm("default");
  if (ctx.refusals.paced_out(socket.remote_address(), pace)) return std::string(kUnauthorized);
  ControlAuth auth = read_auth(auth_json);
  std::optional<auth::Grant> grant;
  const std::string realm = auth.realm.value_or("default");
  if (auth.token && !ctx.options.control_token.empty() && same_secret(*auth.token, ctx.options.control_token)) {
    grant = auth::Grant{realm, "admin", false};
  } else if (ctx.options.control_token.empty() && !snap.auth.enabled) {
    grant = auth::Grant{realm, "admin", true};  // open: no control token and auth off (§3)
  } else if (auth.token && snap.auth.enabled) {
    auto outcome = auth::check_token(snap.auth, *auth.token, auth.realm, unix_ms() / 1000);
    if (outcome.kind == auth::AuthOutcome::Kind::granted) {
      const auth::Grant& g = outcome.grant;
      // The server's admin (role admin in realm "*") may manage any realm; an admin or manager of one realm
      // only that realm (§8.18). External validators are not asked here: CONNECT is answered at once.
      if (g.role == "admin" && g.realm == broker::Broker::kMirrorRealm) {
        grant = auth::Grant{realm, "admin", false};
      } else if ((g.role == "manager" || g.role == "admin") && (!auth.realm || *auth.realm == g.realm)) {
        grant = auth::Grant{g.realm, g.role, false};
      }
    }
  }
  // A realm named here is a realm name like any other (not "*", no control characters, at most 256 bytes).
  if (!grant || grant->realm == broker::Broker::kMirrorRealm || auth::bad_realm_name(grant->realm)) {
    ctx.refusals.count_refusal(socket.remote_address(), pace);
    return std::string(kUnauthorized);
  }
  endpoint_of(socket)->grant = std::move(grant);
  return std::nullopt;
}

uint64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

const std::string& control_realm(net::Socket& socket) { return endpoint_of(socket)->realm(); }

void on_stats(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  Answer answer(endpoint_of(socket), socket.nsp(), msg.ack_id);
  const std::string& realm = control_realm(socket);
  size_t subscriptions = 0;
  ctx.tyo->broker.if_realm(realm, [&](broker::RealmRegistry& r) { subscriptions = r.bus().size(); });
  const BusStats& s = bus_stats();
  auto n = [](const std::atomic<uint64_t>& v) { return std::to_string(v.load(std::memory_order_relaxed)); };
  std::string f = "\"stats\":{\"server_id\":";
  sio::append_json_string(f, ctx.options.server_id);
  f += ",\"version\":";
  sio::append_json_string(f, ctx.options.version);
  auto uptime = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - ctx.tyo->started);
  f += ",\"uptime_ms\":" + std::to_string(uptime.count());
  f += ",\"connections\":" + n(s.connections) + ",\"total_connections\":" + n(s.total_connections);
  f += ",\"subscriptions\":" + std::to_string(subscriptions);
  f += ",\"in_msgs\":" + n(s.in_msgs) + ",\"out_msgs\":" + n(s.out_msgs) + ",\"in_bytes\":" + n(s.in_bytes) +
       ",\"out_bytes\":" + n(s.out_bytes);
  f += ",\"slow_consumers\":" + std::to_string(ctx.options.slow_consumers ? ctx.options.slow_consumers() : 0);
  broker::RealmStreamCounts streams = ctx.streams ? ctx.streams->counts(realm) : broker::RealmStreamCounts{};
  f += ",\"streams\":" + std::to_string(streams.streams) + ",\"consumers\":" + std::to_string(streams.consumers) +
       ",\"stream_msgs\":" + std::to_string(streams.messages) + ",\"stream_bytes\":" + std::to_string(streams.bytes);
  f += ",\"rss_bytes\":" + std::to_string(rss_bytes()) + "}";
  answer.ok(f);
}

}  // namespace siomq::surfaces::bus
