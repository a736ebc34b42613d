#include "surfaces/http/http_caller.h"

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include <atomic>

#include "surfaces/request.h"
#include "surfaces/tyo_mq/auth.h"

namespace siomq::surfaces::http {
namespace {
using nlohmann::json;
std::atomic<uint64_t> next_session{1};
}  // namespace

HttpSession::HttpSession(net::Worker& worker, std::string address)
    : worker_(worker), id_("http-" + std::to_string(next_session.fetch_add(1, std::memory_order_relaxed))) {
  ip = std::move(address);
}

CapturedReply::CapturedReply(net::Worker& worker, bool finish_on_auth, std::function<void(Captured)> done)
    : worker_(worker), finish_on_auth_(finish_on_auth), done_(std::move(done)) {}

void CapturedReply::ack(std::string_view json_array) {
  {
    std::lock_guard lock(mu_);
    if (captured_.ack) return;
    captured_.ack = std::string(json_array);
  }
  if (!finish_on_auth_) finish();
}

void CapturedReply::emit(std::string_view event, std::string_view payload) {
  {
    std::lock_guard lock(mu_);
    if (event == "AUTH_OK") captured_.auth_ok = std::string(payload);
    else if (event == "AUTH_FAIL") captured_.auth_fail = std::string(payload);
    else if (event == "ERROR") captured_.error = std::string(payload);
    else return;
  }
  if (finish_on_auth_ && (event == "AUTH_OK" || event == "AUTH_FAIL")) finish();
}

// Once: the answer goes to the request's worker, whichever thread gave it.
void CapturedReply::finish() {
  std::function<void(Captured)> done;
  Captured captured;
  {
    std::lock_guard lock(mu_);
    if (!done_) return;
    done.swap(done_);
    captured = captured_;
  }
  boost::asio::post(worker_.io(), [done = std::move(done), captured = std::move(captured)]() mutable {
    done(std::move(captured));
  });
}

std::optional<std::string> bearer_token(std::string_view h) {
  if (h.size() < 7) return std::nullopt;
  std::string scheme(h.substr(0, 7));
  for (auto& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "bearer ") return std::nullopt;
  std::string_view t = h.substr(7);
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  if (t.empty()) return std::nullopt;
  return std::string(t);
}

std::string error_body(int code, std::string_view message) {
  return json{{"ok", false}, {"code", code}, {"message", std::string(message)}}.dump();
}

HttpError read_failure(std::string_view text, int fallback_status) {
  json v = json::parse(text, nullptr, false);
  if (v.is_array() && !v.empty()) v = v[0];
  HttpError e{fallback_status, "request failed"};
  if (!v.is_object()) return e;
  if (auto m = v.find("message"); m != v.end() && m->is_string()) e.message = m->get<std::string>();
  if (auto c = v.find("code"); c != v.end() && c->is_number_integer()) {
    int code = c->get<int>();
    if (code >= 400 && code <= 599) e.status = code;
  }
  return e;
}

void grant_for_realm(Context& ctx, const std::shared_ptr<HttpSession>& session, const std::optional<std::string>& token,
                     const std::string& realm, std::function<void(std::optional<HttpError>)> done) {
  const auth::Snapshot& snap = ctx.settings.current();
  if (!snap.auth.enabled) {
    session->grant = auth::Grant{realm, "both", true};
    return done(std::nullopt);
  }
  if (!token) return done(HttpError{401, "Bearer token required"});
  // The AUTHENTICATION handler itself decides, as for a socket that sends {token, realm}.
  std::string args = "[\"AUTHENTICATION\"," + json{{"token", *token}, {"realm", realm}}.dump() + "]";
  Request request{"AUTHENTICATION", args, {}, true};
  auto reply = std::make_shared<CapturedReply>(
      session->worker(), true, [session, realm, done = std::move(done)](Captured c) {
        if (!c.auth_ok || !session->grant) {
          HttpError e = read_failure(c.auth_fail.value_or("{}"), 401);
          if (e.status != 403 && e.status != 429) e.status = 401;
          return done(e);
        }
        if (session->grant->realm != realm)
          return done(HttpError{403, "Token does not grant access to realm '" + realm + "'"});
        done(std::nullopt);
      });
  on_authentication(ctx, *session, request, *reply);
}

}  // namespace siomq::surfaces::http
