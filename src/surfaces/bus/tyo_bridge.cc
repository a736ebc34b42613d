#include "surfaces/bus/tyo_bridge.h"

#include <simdjson.h>

#include <algorithm>

#include "net/worker_pool.h"
#include "surfaces/bus/bus_stats.h"
#include "surfaces/bus/core.h"
#include "surfaces/http/http_caller.h"
#include "surfaces/tyo_mq/publish.h"
#include "wire/bus_subject.h"
#include "wire/js_json.h"
#include "wire/socketio.h"

namespace siomq::surfaces::bus {
namespace {

constexpr std::string_view kHex = "0123456789ABCDEF";

bool escaped(char c) {
  return c == '%' || c == '.' || c == '*' || c == '>' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool bridges(const BusContext& ctx, const std::string& realm) {
  const auto& realms = ctx.options.tyo_bridge_realms;
  return std::find(realms.begin(), realms.end(), realm) != realms.end();
}


}  // namespace

std::string escape_token(std::string_view name) {
  if (name.empty()) return "%";
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (!escaped(c)) {
      out.push_back(c);
      continue;
    }
    auto u = static_cast<unsigned char>(c);
    out.push_back('%');
    out.push_back(kHex[u >> 4]);
    out.push_back(kHex[u & 15]);
  }
  return out;
}

std::optional<std::string> unescape_token(std::string_view token) {
  if (token == "%") return std::string();
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] != '%') {
      out.push_back(token[i]);
      continue;
    }
    if (i + 2 >= token.size()) return std::nullopt;
    int hi = hex(token[i + 1]), lo = hex(token[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

std::optional<std::string> tyo_subject(std::string_view producer, std::string_view event) {
  std::string s(kTyoPrefix);
  s += escape_token(producer);
  s.push_back('.');
  s += escape_token(event);
  if (s.size() > siomq::bus::kMaxSubjectBytes) return std::nullopt;
  return s;
}

std::optional<std::pair<std::string, std::string>> parse_tyo_subject(std::string_view subject) {
  if (subject.substr(0, kTyoPrefix.size()) != kTyoPrefix) return std::nullopt;
  std::string_view rest = subject.substr(kTyoPrefix.size());
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos || rest.find('.', dot + 1) != std::string_view::npos) return std::nullopt;
  auto producer = unescape_token(rest.substr(0, dot));
  auto event = unescape_token(rest.substr(dot + 1));
  if (!producer || !event) return std::nullopt;
  return std::make_pair(std::move(*producer), std::move(*event));
}

void install_tyo_bridge(const std::shared_ptr<BusContext>& ctx) {
  if (ctx->options.tyo_bridge_realms.empty()) return;
  std::weak_ptr<BusContext> weak = ctx;
  ctx->tyo->to_bus = [weak](const std::string& realm, std::string_view event, std::string_view from,
                            std::string_view message) {
    auto ctx = weak.lock();
    if (!ctx || !bridges(*ctx, realm)) return;
    auto subject = tyo_subject(from, event);
    if (!subject) return;
    auto m = std::make_shared<broker::BusMessage>();
    m->subject = std::move(*subject);
    m->data = std::string(message);
    m->header = "{\"Tyo-From\":";
    sio::append_json_string(m->header, from);
    m->header += ",\"Tyo-Event\":";
    sio::append_json_string(m->header, event);
    m->header.push_back('}');
    publish_core(*ctx, realm, m, /*from_tyo=*/true);
  };
}

void bridge_to_tyo(BusContext& ctx, const std::string& realm, const broker::BusMessage& message) {
  if (!bridges(ctx, realm)) return;
  auto names = parse_tyo_subject(message.subject);
  net::Worker* worker = net::WorkerPool::current();
  if (!names || !worker) return;
  std::string body = "[\"PRODUCE\",{\"event\":";
  sio::append_json_string(body, names->second);
  body += ",\"from\":";
  sio::append_json_string(body, names->first);
  body += ",\"message\":";
  if (js::validate(message.data).ok()) {
    body += message.data;
  } else if (simdjson::validate_utf8(message.data.data(), message.data.size())) {
    sio::append_json_string(body, message.data);
  } else {
    return;  // neither JSON nor text: tyo-mq messages are JSON
  }
  body += "}]";
  auto session = std::make_shared<http::HttpSession>(*worker, "bus");
  session->grant = auth::Grant{realm, "producer", false};
  session->from_bus = true;
  NoReply reply;
  on_produce(*ctx.tyo, *session, Request{"PRODUCE", body, {}, false, nullptr}, reply);
}

}  // namespace siomq::surfaces::bus
