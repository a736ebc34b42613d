#include "surfaces/http/publish.h"

#include <boost/beast/http/field.hpp>
#include <nlohmann/json.hpp>

#include "auth/hmac.h"
#include "surfaces/tyo_mq/publish.h"
#include "surfaces/tyo_mq/requests.h"
#include "wire/clock.h"
#include "wire/js_json.h"
#include "wire/socketio.h"

namespace siomq::surfaces::http {
namespace {
namespace bh = boost::beast::http;
using nlohmann::json;

bool truthy_flag(const std::string* v) { return v && (*v == "1" || *v == "true"); }

bool json_content_type(std::string_view type) {
  // "application/json", with parameters (charset) or as a suffix type's base; case-insensitive.
  std::string t(type.substr(0, type.find(';')));
  for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  return t.find("application/json") != std::string::npos;
}

// The PRODUCE object a socket would send for this request.
std::optional<std::string> produce_object(const net::HttpRequest& req, const HttpTarget& target, const std::string& event,
                                          const std::string& producer, const std::string& msg_id, std::string& why) {
  std::string type(req[bh::field::content_type]);
  std::string out = "{\"event\":";
  sio::append_json_string(out, event);
  out += ",\"message\":";
  if (json_content_type(type)) {
    if (!js::validate(req.body())) {
      why = "the body is not valid JSON";
      return std::nullopt;
    }
    out += req.body();
  } else {
    sio::append_json_string(out, req.body());
  }
  out += ",\"from\":";
  sio::append_json_string(out, producer);
  out += ",\"id\":";
  sio::append_json_string(out, msg_id);
  if (truthy_flag(target.param("guaranteed"))) out += ",\"guaranteed\":true";
  if (const std::string* b = target.param("broadcast")) {
    if (*b != "realm" && *b != "group") {
      why = "broadcast must be realm or group";
      return std::nullopt;
    }
    out += ",\"method\":\"broadcast\",\"broadcast\":";
    sio::append_json_string(out, *b);
    if (const std::string* g = target.param("group")) {
      out += ",\"group\":";
      sio::append_json_string(out, *g);
    }
  } else if (target.param("group")) {
    why = "group is only meaningful with broadcast=group";
    return std::nullopt;
  }
  if (!type.empty() && type.size() <= 256) {
    out += ",\"contentType\":";
    sio::append_json_string(out, type);
  }
  out.push_back('}');
  if (auto ok = check_object_text(out); !ok) {
    why = "the body is not valid UTF-8 text";
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::shared_ptr<RateEntry> PublishState::rate_entry(const std::string& key, int64_t now_ms) {
  std::lock_guard lock(rates_mu);
  auto it = rates.find(key);
  if (it == rates.end()) {
    if (rates.size() >= options.max_rate_keys)
      std::erase_if(rates, [now_ms](const auto& kv) { return now_ms - kv.second->used_ms > 60000; });
    if (rates.size() >= options.max_rate_keys) rates.erase(rates.begin());
    it = rates.emplace(key, std::make_shared<RateEntry>()).first;
  }
  it->second->used_ms = now_ms;
  return it->second;
}

void serve_publish(const std::shared_ptr<PublishState>& state, const std::shared_ptr<net::HttpConnection>& conn,
                   net::HttpRequest& req, const HttpTarget& target) {
  if (req.method() != bh::verb::post) return answer_error(conn, req, 405, "Method not allowed", "POST");
  if (target.segments.size() < 2 || target.segments.size() > 3) return answer_error(conn, req, 404, "Not found");
  const std::string& realm = target.segments[1];
  std::string event = target.segments.size() == 3 ? target.segments[2] : "";
  if (event.empty()) {
    if (const std::string* e = target.param("event")) event = *e;
  }
  if (event.empty()) return answer_error(conn, req, 400, "event is required");
  if (reserved_name(realm) || reserved_name(event)) return answer_error(conn, req, 400, "Invalid realm or event name");
  if (req.body().size() > state->options.max_body_bytes) return answer_error(conn, req, 413, "Payload too large");
  auto token = bearer_token(req[bh::field::authorization]);
  auto session = std::make_shared<HttpSession>(conn->worker(), conn->remote_address());
  Context& ctx = *state->ctx;
  grant_for_realm(ctx, session, token, realm, [state, conn, session, token, realm, event, target,
                                               req = std::move(req)](std::optional<HttpError> refused) mutable {
    if (refused) return answer_error(conn, req, refused->status, refused->message);
    const std::string producer = "http:" + auth::sha256_hex(token.value_or("")).substr(0, 8);
    const std::string msg_id = "m-" + auth::random_hex(12);
    std::string why;
    auto object = produce_object(req, target, event, producer, msg_id, why);
    if (!object) return answer_error(conn, req, 400, why);
    std::string args = "[\"PRODUCE\"," + *object + "]";
    Request request{"PRODUCE", args, {}, true};
    auto reply = std::make_shared<CapturedReply>(session->worker(), false, [conn, req, msg_id](Captured c) {
      json answer = json::parse(c.ack.value_or("[]"), nullptr, false);
      if (answer.is_array() && !answer.empty() && answer[0].is_object() && answer[0].value("ok", false))
        return answer_json(conn, req, 202, json{{"ok", true}, {"msg_id", msg_id}}.dump());
      // The E2EE refusal is an ERROR with code -6 (§3.5): 403 here.
      if (c.error && c.error->find("\"code\":-6") != std::string::npos)
        return answer_error(conn, req, 403, read_failure(*c.error, 403).message);
      HttpError e = read_failure(c.ack.value_or("{}"), 400);
      answer_error(conn, req, e.status, e.message);
    });
    // §11.1's buckets, per token (per address without one), carried across this request's session.
    auto rate = state->rate_entry(token ? "t:" + auth::sha256_hex(*token) : "ip:" + conn->remote_address(), steady_ms());
    std::lock_guard lock(rate->mu);
    session->messages = rate->messages;
    session->bytes = rate->bytes;
    on_produce(*state->ctx, *session, request, *reply);
    rate->messages = session->messages;
    rate->bytes = session->bytes;
  });
}

}  // namespace siomq::surfaces::http
