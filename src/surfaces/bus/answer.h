// The answer to one bus request (bus.md §1: exactly one ack argument), sendable from any thread: a
// stream publish is answered from the store's thread once durable, a request's reply from the
// responder's worker. It sends through the requester's SocketEndpoint (its outbox), so it keeps nothing
// of the connection alive and answers nothing once the socket is gone. Without an ack id (a
// fire-and-forget request) every answer is dropped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "surfaces/bus/answers.h"
#include "wire/result.h"

namespace siomq::surfaces {
class SocketEndpoint;
}

namespace siomq::surfaces::bus {

class Answer {
 public:
  Answer(std::shared_ptr<SocketEndpoint> to, std::string nsp, std::optional<uint64_t> ack_id)
      : to_(std::move(to)), nsp_(std::move(nsp)), ack_id_(ack_id) {}

  bool wanted() const { return ack_id_.has_value(); }
  // {ok:true[,fields]} with the attachments its placeholders name.
  void ok(std::string_view fields = {}, std::vector<Bytes> attachments = {}) const;
  void error(int code, std::string_view message) const;
  void error(const Error& e) const { error(e.code, e.message); }

 private:
  void send(std::string_view json, std::vector<Bytes> attachments) const;
  std::shared_ptr<SocketEndpoint> to_;
  std::string nsp_;
  std::optional<uint64_t> ack_id_;
};

}  // namespace siomq::surfaces::bus
