#include "cluster/bus_relay.h"

#include "wire/base64.h"
#include "wire/bus_subject.h"
#include "wire/js_json.h"
#include "wire/json_spans.h"
#include "wire/socketio.h"

namespace siomq::cluster {
namespace {

constexpr std::string_view kBusHead = "{\"bus\":";
// As a client's queue name is bounded (surfaces/bus/core_requests.h).
constexpr size_t kMaxBusQueueBytes = 256;

Error bus_bad(const std::string& why) { return Error{400, "relayed bus message: " + why}; }

// A string member; "" when absent; an error for any other type.
Result<std::string> bus_text(const std::vector<json_spans::Member>& members, std::string_view name) {
  std::string_view v = json_spans::last_member(members, name);
  if (v.empty()) return std::string();
  if (v.front() != '"') return bus_bad(std::string(name) + " must be a string");
  auto s = json_spans::unescape(v);
  if (!s) return bus_bad(std::string(name) + " is not a valid string");
  return std::move(*s);
}

Status check_bus_header(std::string_view header) {
  if (header.front() != '{') return bus_bad("header must be an object of strings");
  auto members = json_spans::object_members(header);
  if (!members) return bus_bad("header must be an object of strings");
  for (const auto& m : *members) {
    if (m.value.empty() || m.value.front() != '"') return bus_bad("header values must be strings");
  }
  return Ok{};
}

Result<std::vector<std::pair<std::string, std::string>>> read_bus_queues(std::string_view list) {
  std::vector<std::pair<std::string, std::string>> out;
  auto items = json_spans::array_elements(list);
  if (!items) return bus_bad("queues must be an array");
  if (items->size() > kMaxRelayedQueues) return bus_bad("too many queues");
  for (std::string_view item : *items) {
    auto pair = json_spans::array_elements(item);
    if (!pair || pair->size() != 2 || (*pair)[0].front() != '"' || (*pair)[1].front() != '"')
      return bus_bad("a queue must be [pattern, queue]");
    auto pattern = json_spans::unescape((*pair)[0]);
    auto queue = json_spans::unescape((*pair)[1]);
    if (!pattern || !queue || siomq::bus::pattern_error(*pattern) || queue->empty() || queue->size() > kMaxBusQueueBytes)
      return bus_bad("a queue must be [pattern, queue]");
    out.emplace_back(std::move(*pattern), std::move(*queue));
  }
  return out;
}

}  // namespace

std::string encode_bus_relay(std::string_view node_id, std::string_view realm, const broker::BusMessage& m,
                             const std::vector<std::pair<std::string, std::string>>& queues) {
  std::string out;
  out.reserve(96 + realm.size() + m.size() + m.data.size() / 3 + 16 * queues.size());
  out += kBusHead;
  out += "{\"realm\":";
  sio::append_json_string(out, realm);
  out += ",\"subject\":";
  sio::append_json_string(out, m.subject);
  if (!m.reply.empty()) {
    out += ",\"reply\":";
    sio::append_json_string(out, m.reply);
  }
  if (!m.header.empty()) out.append(",\"header\":").append(m.header);
  out += ",\"data\":\"";
  base64::encode_append(out, m.data);
  out += '"';
  if (!queues.empty()) {
    out += ",\"queues\":[";
    for (size_t i = 0; i < queues.size(); ++i) {
      out += i ? ",[" : "[";
      sio::append_json_string(out, queues[i].first);
      out += ',';
      sio::append_json_string(out, queues[i].second);
      out += ']';
    }
    out += ']';
  }
  out += "},\"node_id\":";
  sio::append_json_string(out, node_id);
  out += '}';
  return out;
}

bool is_bus_relay(std::string_view text) { return text.starts_with(kBusHead); }

Result<BusRelayed> decode_bus_relay(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) return bus_bad("larger than " + std::to_string(max_bytes) + " bytes");
  if (auto valid = js::validate(text); !valid) return bus_bad(valid.error().message);
  auto envelope = json_spans::object_members(text);
  if (!envelope) return bus_bad("not an object");
  BusRelayed r;
  auto node = bus_text(*envelope, "node_id");
  if (!node) return node.error();
  if (node->empty()) return bus_bad("node_id is required");
  r.node_id = std::move(*node);
  std::string_view body = json_spans::last_member(*envelope, "bus");
  if (body.empty() || body.front() != '{') return bus_bad("bus must be an object");
  auto fields = json_spans::object_members(body);
  if (!fields) return bus_bad("bus is not an object");
  auto realm = bus_text(*fields, "realm");
  if (!realm) return realm.error();
  if (realm->empty()) return bus_bad("realm is required");
  r.realm = std::move(*realm);
  auto subject = bus_text(*fields, "subject");
  if (!subject) return subject.error();
  if (const char* why = siomq::bus::subject_error(*subject)) return bus_bad(std::string("subject: ") + why);
  r.message.subject = std::move(*subject);
  auto reply = bus_text(*fields, "reply");
  if (!reply) return reply.error();
  if (!reply->empty()) {
    if (const char* why = siomq::bus::subject_error(*reply)) return bus_bad(std::string("reply: ") + why);
  }
  r.message.reply = std::move(*reply);
  if (std::string_view header = json_spans::last_member(*fields, "header"); !header.empty()) {
    if (auto ok = check_bus_header(header); !ok) return ok.error();
    r.message.header = std::string(header);
  }
  std::string_view data = json_spans::last_member(*fields, "data");
  // Base64 has no escapes: the string's text is between its quotes.
  if (data.size() < 2 || data.front() != '"') return bus_bad("data must be a base64 string");
  auto bytes = base64::decode(data.substr(1, data.size() - 2));
  if (!bytes) return bus_bad("data is not base64");
  r.message.data = std::move(*bytes);
  if (std::string_view list = json_spans::last_member(*fields, "queues"); !list.empty()) {
    auto queues = read_bus_queues(list);
    if (!queues) return queues.error();
    r.queues = std::move(*queues);
  }
  return r;
}

}  // namespace siomq::cluster
