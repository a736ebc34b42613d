#include "net/engine_server.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <future>

#include "net/engine_session.h"
#include "net/http_request.h"
#include "net/worker_pool.h"
#include "wire/base64.h"

namespace siomq::net {
namespace http = boost::beast::http;

std::string random_id() {
  unsigned char bytes[15];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("RAND_bytes failed");
  std::string id = base64::encode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
  for (char& c : id) {
    if (c == '+') c = '-';
    else if (c == '/') c = '_';
  }
  return id;
}

EngineServer::EngineServer(WorkerPool& pool, const TransportOptions& options, HandlerFactory factory)
    : pool_(pool), options_(options), factory_(std::move(factory)), workers_(pool.size()) {}

EngineServer::~EngineServer() = default;

void EngineServer::add_cors(HttpResponse& res, std::string_view origin) {
  if (origin.empty()) {
    res.set(http::field::access_control_allow_origin, "*");
  } else {
    res.set(http::field::access_control_allow_origin, origin);
    res.set(http::field::access_control_allow_credentials, "true");
    res.set(http::field::vary, "Origin");
  }
}

HttpResponse EngineServer::error_response(const HttpRequest& request, EngineError error) {
  std::string body = "{\"code\":" + std::to_string(static_cast<int>(error)) + ",\"message\":\"" +
                     std::string(engine_error_message(error)) + "\"}";
  auto status = error == EngineError::kForbidden ? http::status::forbidden : http::status::bad_request;
  auto res = make_response(request, status, std::move(body), "application/json");
  add_cors(res, request[http::field::origin]);
  return res;
}

bool EngineServer::handle(const std::shared_ptr<HttpConnection>& conn, HttpRequest& request, bool console) {
  EngineRequest r = classify_engine_request(std::string_view(request.method_string()), request.target(),
                                            request[http::field::upgrade], options_.path, options_.allow_eio3);
  switch (r.kind) {
    case EngineRequest::kNotEngine:
      return false;
    case EngineRequest::kPreflight: {
      auto res = make_response(request, http::status::no_content);
      add_cors(res, request[http::field::origin]);
      res.set(http::field::access_control_allow_methods, "GET,POST");
      auto asked = request[http::field::access_control_request_headers];
      if (!asked.empty()) res.set(http::field::access_control_allow_headers, asked);
      conn->respond(std::move(res));
      return true;
    }
    case EngineRequest::kError:
      conn->respond(error_response(request, r.error));
      return true;
    case EngineRequest::kSession:
      on_session_request(conn, request, r);
      return true;
    case EngineRequest::kHandshake:
      break;
  }
  if (r.websocket) {
    std::string remote = conn->remote_address();
    std::string forwarded(request["X-Forwarded-For"]);
    Worker& worker = conn->worker();
    int protocol = r.protocol;
    conn->accept_websocket(request, [this, protocol, remote, forwarded, console, &worker](boost::asio::ip::tcp::socket socket,
                                                                                 std::unique_ptr<TlsSession> tls,
                                                                                 std::string leftover) {
      auto session = create(worker, protocol, remote, console);
      session->set_forwarded_for(forwarded);
      session->open_websocket(std::move(socket), std::move(tls), std::move(leftover), factory_(*session));
    });
    return true;
  }
  auto session = create(conn->worker(), r.protocol, conn->remote_address(), console);
  session->set_forwarded_for(std::string(request["X-Forwarded-For"]));
  session->open_polling(conn, request, factory_(*session));
  return true;
}

void EngineServer::on_session_request(const std::shared_ptr<HttpConnection>& conn, HttpRequest& request,
                                      const EngineRequest& r) {
  auto session = find(r.sid);
  if (!session) {
    conn->respond(error_response(request, EngineError::kUnknownSid));
    return;
  }
  if (&session->worker() != &conn->worker()) {
    conn->migrate(session->worker(), std::move(request));
    return;
  }
  if (r.websocket) {
    session->on_upgrade_request(conn, request);
  } else if (session->is_websocket()) {
    conn->respond(error_response(request, EngineError::kBadRequest));
  } else if (request.method() == http::verb::get) {
    session->on_poll(conn, request);
  } else {
    session->on_post(conn, request);
  }
}

std::shared_ptr<EngineSession> EngineServer::create(Worker& worker, int protocol, const std::string& remote,
                                                    bool console) {
  auto session = std::make_shared<EngineSession>(*this, worker, random_id(), protocol, options_, remote);
  if (console) session->set_via_console();
  {
    std::lock_guard lock(mu_);
    registry_.emplace(session->sid(), session);
  }
  workers_[worker.index()].sessions.emplace(session.get(), session);
  workers_[worker.index()].count.fetch_add(1, std::memory_order_relaxed);
  return session;
}

void EngineServer::forget(EngineSession& session) {
  {
    std::lock_guard lock(mu_);
    registry_.erase(session.sid());
  }
  // Dropped from the worker's list later, not here: the sweep may be iterating over that list, and
  // this may be the last reference to the session whose member function is running.
  size_t index = session.worker().index();
  workers_[index].count.fetch_sub(1, std::memory_order_relaxed);
  boost::asio::post(session.worker().io(), [this, index, ptr = &session] { workers_[index].sessions.erase(ptr); });
}

std::shared_ptr<EngineSession> EngineServer::find(const std::string& sid) {
  std::lock_guard lock(mu_);
  auto it = registry_.find(sid);
  return it == registry_.end() ? nullptr : it->second;
}

size_t EngineServer::session_count() {
  std::lock_guard lock(mu_);
  return registry_.size();
}

void EngineServer::payload_too_large(std::string_view target) {
  Target parsed = parse_target(target);
  auto sid = parsed.param("sid");
  if (!sid) return;
  auto session = find(std::string(*sid));
  if (!session) return;
  boost::asio::post(session->worker().io(), [session] { session->close("payload too large"); });
}

std::chrono::milliseconds EngineServer::sweep_interval() const {
  auto shortest = std::min(options_.ping_interval, options_.ping_timeout);
  return std::clamp(shortest / 4, std::chrono::milliseconds(20), std::chrono::milliseconds(250));
}

void EngineServer::start() {
  for (size_t i = 0; i < pool_.size(); ++i) {
    workers_[i].timer = std::make_unique<boost::asio::steady_timer>(pool_.at(i).io());
    boost::asio::post(pool_.at(i).io(), [this, i] { sweep(i); });
  }
}

void EngineServer::sweep(size_t index) {
  auto& w = workers_[index];
  auto now = EngineSession::Clock::now();
  std::vector<std::pair<std::shared_ptr<EngineSession>, std::string_view>> expired;
  for (auto& [ptr, session] : w.sessions) {
    if (auto reason = ptr->tick(now)) expired.emplace_back(session, *reason);
  }
  for (auto& [session, reason] : expired) session->close(reason);
  w.timer->expires_after(sweep_interval());
  w.timer->async_wait([this, index](const boost::system::error_code& ec) {
    if (!ec) sweep(index);
  });
}

void EngineServer::close_all(std::string_view reason) {
  std::vector<std::future<void>> done;
  std::string why(reason);
  for (size_t i = 0; i < pool_.size(); ++i) {
    auto promise = std::make_shared<std::promise<void>>();
    done.push_back(promise->get_future());
    boost::asio::post(pool_.at(i).io(), [this, i, promise, why] {
      auto& w = workers_[i];
      if (w.timer) w.timer->cancel();
      std::vector<std::shared_ptr<EngineSession>> all;
      for (auto& [ptr, session] : w.sessions) all.push_back(session);
      for (auto& session : all) session->close(why);
      promise->set_value();
    });
  }
  for (auto& f : done) f.wait();
}

}  // namespace siomq::net
