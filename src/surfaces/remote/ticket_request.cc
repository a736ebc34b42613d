#include "surfaces/remote/ticket_request.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <string>

#include "surfaces/gate.h"
#include "surfaces/tyo_mq/answers.h"
#include "surfaces/tyo_mq/requests.h"
#include "wire/clock.h"
#include "wire/json_spans.h"
#include "wire/log_text.h"
#include "wire/socketio.h"

namespace siomq::remote {
namespace {

constexpr size_t kMaxIdBytes = 128;  // session_id and machine_id

struct TicketRequest {
  Role role = Role::agent;
  std::string session_id;  // empty: a random one
  std::string machine_id;  // empty: the socket's id
  std::string nsp{kRemoteNamespace};
};

// REMOTE_TICKET_FAIL {ok:false, code, message}, and the same as the answer.
void fail(surfaces::Reply& reply, int code, std::string_view message) {
  std::string payload = surfaces::error_reply(code, message);
  reply.emit("REMOTE_TICKET_FAIL", payload);
  if (reply.has_ack()) reply.ack("[" + payload + "]");
}

// An id field: a non-empty string of at most kMaxIdBytes, or an integer (its text, as String(x) gives
// it); nullopt when absent or null, an error otherwise.
Result<std::optional<std::string>> id_field(std::string_view value, std::string_view name) {
  if (value.empty() || value == "null") return std::optional<std::string>();
  std::string text;
  if (value.front() == '"') {
    text = json_spans::unescape(value).value_or("");
  } else if (value.find_first_not_of("-0123456789") == std::string_view::npos) {
    text = std::string(value);
  } else {
    return make_error(std::string(name) + " must be a string", 400);
  }
  if (text.empty() || text.size() > kMaxIdBytes)
    return make_error(std::string(name) + " must be 1 to " + std::to_string(kMaxIdBytes) + " bytes", 400);
  return std::optional<std::string>(std::move(text));
}

// The first of `names` present among the members (the reference's `a || b || …` over aliases).
std::string_view first_of(const std::vector<json_spans::Member>& members, std::initializer_list<std::string_view> names) {
  for (auto name : names) {
    for (const auto& m : members) {
      if (m.key == name && json_spans::truthy(m.value)) return m.value;
    }
  }
  return {};
}

Result<TicketRequest> parse_request(std::string_view object) {
  auto members = json_spans::object_members(object);
  if (!members) return make_error("Invalid remote ticket request JSON", 400);
  TicketRequest r;
  if (std::string_view role = first_of(*members, {"role"}); !role.empty()) {
    if (role == "\"viewer\"") r.role = Role::viewer;
    else if (role != "\"agent\"") return make_error("role must be \"agent\" or \"viewer\"", 400);
  }
  auto session = id_field(first_of(*members, {"session_id", "sessionId"}), "session_id");
  if (!session) return session.error();
  if (*session) r.session_id = std::move(**session);
  auto machine = id_field(first_of(*members, {"machine_id", "machineId", "client_id", "clientId"}), "machine_id");
  if (!machine) return machine.error();
  if (*machine) r.machine_id = std::move(**machine);
  if (std::string_view nsp = first_of(*members, {"namespace"}); !nsp.empty()) {
    if (nsp.front() != '"') return make_error("namespace must be a string", 400);
    r.nsp = json_spans::unescape(nsp).value_or("");
  }
  return r;
}

// The request's object; a missing or null payload reads as {} (the reference's `message || {}`).
Result<std::string_view> request_object_or_empty(std::string_view args, std::string& storage) {
  auto elements = json_spans::array_elements(args);
  if (elements && (elements->size() < 2 || (*elements)[1] == "null")) return std::string_view("{}");
  auto object = surfaces::request_object(args, storage);
  if (!object) return make_error("Invalid remote ticket request JSON", 400);
  return object;
}

}  // namespace

void on_remote_ticket_request(surfaces::Context& tyo_mq, RelayContext& relay, surfaces::Session& session,
                              const surfaces::Request& request, surfaces::Reply& reply) {
  const auth::Snapshot& snap = tyo_mq.settings.current();
  if (!surfaces::within_rate(snap, session, reply, request.args.size())) return;
  if (!surfaces::admit(tyo_mq.gate(), snap, session, reply, "REMOTE_TICKET_REQUEST", {})) return;
  std::string storage;
  auto object = request_object_or_empty(request.args, storage);
  if (!object) return fail(reply, 400, object.error().message);
  auto parsed = parse_request(*object);
  if (!parsed) return fail(reply, 400, parsed.error().message);
  TicketRequest& r = *parsed;

  auto settings = relay.settings.current();
  const RelayNamespace* ns = settings->find(r.nsp);
  if (!ns) return fail(reply, 404, "No relay namespace " + r.nsp);
  if (r.session_id.empty()) r.session_id = random_hex(8);
  if (r.machine_id.empty()) r.machine_id = session.id();
  const int64_t ttl_ms = ns->limits.ticket_ttl_ms;
  Ticket ticket{r.nsp, session.realm(), r.session_id, r.machine_id, r.role};
  auto minted = relay.tickets.mint(std::move(ticket), session.id(), ttl_ms, settings->tickets.max_tickets,
                                   settings->tickets.max_tickets_per_socket, steady_ms());
  if (!minted) return fail(reply, minted.error().code, minted.error().message);

  std::string answer = "{\"ok\":true,\"session_id\":";
  sio::append_json_string(answer, r.session_id);
  answer += ",\"ticket\":\"" + *minted + "\",\"role\":\"";
  answer += r.role == Role::agent ? "agent" : "viewer";
  answer += "\",\"expires_in\":" + std::to_string((ttl_ms + 999) / 1000) + "}";
  reply.emit("REMOTE_TICKET", answer);
  if (reply.has_ack()) reply.ack("[" + answer + "]");
  spdlog::info("REMOTE_TICKET issued on {} session={} role={} realm={}", r.nsp, log_text(r.session_id),
               r.role == Role::agent ? "agent" : "viewer", log_text(session.realm()));
}

}  // namespace siomq::remote
