#include "surfaces/diagnostics.h"

#include <simdjson.h>

#include <string>
#include <vector>

#include "net/sio_server.h"
#include "wire/js_json.h"
#include "wire/socketio.h"

namespace siomq::surfaces {
namespace {

// The event's arguments (everything after the name) as JSON texts.
std::vector<std::string> arguments(std::string_view json) {
  std::vector<std::string> out;
  simdjson::dom::parser parser;
  std::string tamed;
  auto doc = js::parse(parser, json, tamed);
  if (doc.error() || !doc.value_unsafe().is_array()) return out;
  bool first = true;
  simdjson::dom::array arr = doc.value_unsafe().get_array().value_unsafe();
  for (auto el : arr) {
    if (first) {
      first = false;
      continue;
    }
    std::string text;
    js::append_value(text, el);
    out.push_back(std::move(text));
  }
  return out;
}

std::string join_args(const std::vector<std::string>& args, size_t from) {
  std::string out;
  for (size_t i = from; i < args.size(); ++i) {
    if (i > from) out.push_back(',');
    out += args[i];
  }
  return out;
}

// A JSON string argument without its quotes, or nullopt when it is not a plain string.
std::optional<std::string> string_arg(const std::vector<std::string>& args, size_t i) {
  if (i >= args.size()) return std::nullopt;
  simdjson::dom::parser parser;
  auto doc = parser.parse(args[i].data(), args[i].size());
  if (doc.error() || !doc.value_unsafe().is_string()) return std::nullopt;
  return std::string(doc.value_unsafe().get_string().value_unsafe());
}

std::vector<std::string> copy_attachments(const net::Message& msg) {
  return {msg.attachments.begin(), msg.attachments.end()};
}

void ack_ok(net::Socket& socket, const net::Message& msg) {
  if (msg.ack_id) socket.ack(*msg.ack_id, "[true]");
}

}  // namespace

void register_diagnostics(net::SioServer& sio) {
  net::Namespace ns;
  ns.name = kDiagnosticsNamespace;
  // auth {"refuse":"<message>"} exercises a refused CONNECT.
  ns.on_connect = [](net::Socket&, std::string_view auth) -> std::optional<std::string> {
    if (auth.empty()) return std::nullopt;
    simdjson::dom::parser parser;
    auto doc = parser.parse(auth.data(), auth.size());
    if (doc.error()) return std::nullopt;
    auto refuse = doc.value_unsafe()["refuse"];
    if (!refuse.error() && refuse.value_unsafe().is_string())
      return std::string(refuse.value_unsafe().get_string().value_unsafe());
    return std::nullopt;
  };
  // echo(...args, ack): acks with the same arguments and attachments.
  ns.handlers["echo"] = [](net::Socket& socket, const net::Message& msg) {
    if (!msg.ack_id) return;
    socket.ack(*msg.ack_id, "[" + join_args(arguments(msg.json), 0) + "]", copy_attachments(msg));
  };
  // emit(event, ...args): the server emits `event` with the arguments back to this socket.
  ns.handlers["emit"] = [](net::Socket& socket, const net::Message& msg) {
    auto args = arguments(msg.json);
    auto event = string_arg(args, 0);
    if (!event) return;
    socket.emit(*event, join_args(args, 1), copy_attachments(msg));
    ack_ok(socket, msg);
  };
  ns.handlers["join"] = [](net::Socket& socket, const net::Message& msg) {
    if (auto room = string_arg(arguments(msg.json), 0)) socket.join(*room);
    ack_ok(socket, msg);
  };
  ns.handlers["leave"] = [](net::Socket& socket, const net::Message& msg) {
    if (auto room = string_arg(arguments(msg.json), 0)) socket.leave(*room);
    ack_ok(socket, msg);
  };
  // to_room(room, event, ...args): emits to every member of the room, on every worker.
  ns.handlers["to_room"] = [&sio](net::Socket& socket, const net::Message& msg) {
    auto args = arguments(msg.json);
    auto room = string_arg(args, 0);
    if (!room || args.size() < 2) return;
    std::string array = "[" + join_args(args, 1) + "]";
    sio.emit_to_room(socket.nsp(), *room, array, copy_attachments(msg));
    ack_ok(socket, msg);
  };
  // flood(count, size): emits `count` "flood" events carrying `size` bytes each.
  ns.handlers["flood"] = [](net::Socket& socket, const net::Message& msg) {
    auto args = arguments(msg.json);
    if (args.size() < 2) return;
    size_t count = std::strtoull(args[0].c_str(), nullptr, 10);
    size_t size = std::min<size_t>(std::strtoull(args[1].c_str(), nullptr, 10), 1 << 20);
    std::string payload = "\"" + std::string(size, 'x') + "\"";
    for (size_t i = 0; i < count && socket.connected(); ++i) socket.emit("flood", payload);
  };
  // bye(close_connection): the server disconnects this socket.
  ns.handlers["bye"] = [](net::Socket& socket, const net::Message& msg) {
    auto args = arguments(msg.json);
    socket.disconnect(!args.empty() && args[0] == "true");
  };
  sio.add_namespace(std::move(ns));
}

}  // namespace siomq::surfaces
