// The channel a handler answers a request on, whatever the protocol: the answer to the request itself
// (a Socket.IO ack callback, an HTTP response) and events to the requester. Handlers take a Reply, not
// a socket, so that every surface can call the same code.
//
// A Reply passed to a handler is valid for the call only and used on the requester's worker; keep()
// gives one that outlives the call and may be used from any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace siomq::surfaces {

class Reply {
 public:
  virtual ~Reply() = default;

  // Whether the requester waits for an answer (a Socket.IO ack id).
  virtual bool has_ack() const = 0;
  // Answers the request with a JSON array of values; does nothing when has_ack() is false.
  virtual void ack(std::string_view json_array) = 0;
  // Sends `event` with the JSON `payload` (empty: no argument) to the requester.
  virtual void emit(std::string_view event, std::string_view payload) = 0;
  // Whether what is sent still reaches the requester. Meaningful on the requester's worker only.
  virtual bool open() const = 0;
  // The same channel for an answer that comes after the handler returns: usable from any thread, in
  // order with everything else sent to the requester; it keeps nothing of the connection alive.
  virtual std::shared_ptr<Reply> keep() = 0;
};

// A reply nobody hears (a request the server makes itself: a CONNECT token's AUTHENTICATION, a PRODUCE
// the bus bridged in): no ack is awaited and events go nowhere.
class NoReply final : public Reply, public std::enable_shared_from_this<NoReply> {
 public:
  bool has_ack() const override { return false; }
  void ack(std::string_view) override {}
  void emit(std::string_view, std::string_view) override {}
  bool open() const override { return true; }
  std::shared_ptr<Reply> keep() override { return shared_from_this(); }
};

// {ok:false, code, message}: the failure answer to a request.
std::string error_reply(int code, std::string_view message);

}  // namespace siomq::surfaces
