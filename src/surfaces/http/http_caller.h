// The caller of one HTTP publish request as the tyo-mq handlers see it: a Session with no engine
// endpoint (HttpSession), a Reply that captures the handler's answer and events (CapturedReply), and the
// Bearer check, which runs the tyo-mq AUTHENTICATION handler itself (§6.4: static tokens, JWTs, external
// validators) so that HTTP accepts exactly the tokens a socket would.
//
// Ownership: one HttpSession per request, shared by the callbacks still pending for it.
// Threading: everything on the HTTP connection's worker; a CapturedReply's answer may arrive from any
// thread (a publish confirmed after its store write) and is posted to that worker.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "net/worker_pool.h"
#include "surfaces/reply.h"
#include "surfaces/session.h"
#include "surfaces/tyo_mq/context.h"

namespace siomq::surfaces::http {

class HttpSession : public Session, public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(net::Worker& worker, std::string address);
  const std::string& id() const override { return id_; }
  net::Worker& worker() override { return worker_; }
  void notify(std::string_view, std::string_view) override {}
  void close() override {}
  std::shared_ptr<Session> shared() override { return shared_from_this(); }
  broker::EndpointPtr endpoint() override { return nullptr; }
  void close_now() override {}

 private:
  net::Worker& worker_;
  std::string id_;
};

// What a handler answered: the first ack's array, and the last AUTH_FAIL / ERROR event's payload.
struct Captured {
  std::optional<std::string> ack;
  std::optional<std::string> auth_ok, auth_fail, error;
};

// Collects a handler's answer; `done` runs once on `worker`, with what was captured, when the ack
// arrives (or, for AUTHENTICATION, AUTH_OK / AUTH_FAIL).
class CapturedReply : public Reply, public std::enable_shared_from_this<CapturedReply> {
 public:
  CapturedReply(net::Worker& worker, bool finish_on_auth, std::function<void(Captured)> done);
  bool has_ack() const override { return true; }
  void ack(std::string_view json_array) override;
  void emit(std::string_view event, std::string_view payload) override;
  bool open() const override { return true; }
  std::shared_ptr<Reply> keep() override { return shared_from_this(); }

 private:
  void finish();
  net::Worker& worker_;
  bool finish_on_auth_;
  std::mutex mu_;
  Captured captured_;
  std::function<void(Captured)> done_;
};

// An HTTP error answer: status and {ok:false, code, message}.
struct HttpError {
  int status = 400;
  std::string message;
};

// The token of an `Authorization: Bearer <token>` header; nullopt when absent or not Bearer.
std::optional<std::string> bearer_token(std::string_view authorization);

// Gives `session` the grant `token` earns in `realm` (§6.4 through AUTHENTICATION), then `done` on the
// session's worker with nullopt, or the refusal: 401 without a valid token, 403 when the token belongs
// to another realm. With auth off no token is needed: the session is granted `realm` as "both".
void grant_for_realm(Context& ctx, const std::shared_ptr<HttpSession>& session, const std::optional<std::string>& token,
                     const std::string& realm, std::function<void(std::optional<HttpError>)> done);

// {ok:false, code, message}.
std::string error_body(int code, std::string_view message);
// The code and message of a handler's {ok:false, code, message} (in an ack array or alone).
HttpError read_failure(std::string_view json, int fallback_status);

}  // namespace siomq::surfaces::http
