// A Socket.IO socket: one client's connection to one namespace. Lives on its session's worker.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "net/out_frame.h"

namespace siomq::json {
class Outline;
}

namespace siomq::net {

class EngineSession;
class SioConnection;
class SioServer;

// An event as a handler sees it. `json` is the packet's whole data array, event name first, as the
// client sent it; placeholders in it refer to `attachments`. `outline`, when not null, is where the
// decoder's one pass found the array's elements and their members (read against `json`).
struct Message {
  std::string_view event;
  std::string_view json;
  std::span<const std::string> attachments;
  std::optional<uint64_t> ack_id;
  const json::Outline* outline = nullptr;
};

class Socket : public std::enable_shared_from_this<Socket> {
 public:
  Socket(SioConnection& connection, std::string nsp, std::string id);

  const std::string& id() const { return id_; }
  const std::string& nsp() const { return nsp_; }
  EngineSession& session();
  int protocol() const;
  const std::string& remote_address() const;
  const std::string& forwarded_for() const;
  bool connected() const { return connected_; }

  // Sends `["<event>",<args>]`; `args` is the JSON text of the arguments, comma-separated, or empty.
  void emit(std::string_view event, std::string_view args = {}, std::vector<std::string> attachments = {});
  // Answers the client's ack id with a JSON array of values.
  void ack(uint64_t id, std::string_view json_array, std::vector<std::string> attachments = {});
  // Queues frames encoded elsewhere (a room broadcast).
  void send_frames(std::span<const OutFrame> frames);
  // `done(true)` once everything sent so far has been handed to the transport; `done(false)` if the
  // socket or its connection closes first (EngineSession::when_sent).
  void when_sent(SentReceipt done);

  void join(const std::string& room);
  void leave(const std::string& room);
  const std::unordered_set<std::string>& rooms() const {
    static const std::unordered_set<std::string> kNone;
    return rooms_ ? *rooms_ : kNone;
  }

  // What the namespace's surface keeps for this socket (its own type); null until set.
  template <class T>
  std::shared_ptr<T> state() const {
    return std::static_pointer_cast<T>(state_);
  }
  void set_state(std::shared_ptr<void> state) { state_ = std::move(state); }
  // A second surface's state on the same socket (the bus shares namespace "/" with tyo-mq); null until set.
  template <class T>
  std::shared_ptr<T> extension() const {
    return std::static_pointer_cast<T>(extension_);
  }
  void set_extension(std::shared_ptr<void> extension) { extension_ = std::move(extension); }

  // Sends DISCONNECT for this namespace and removes the socket; with `close_connection` the whole
  // Engine.IO session closes too.
  void disconnect(bool close_connection = false);

 private:
  friend class SioConnection;
  SioConnection& connection_;
  std::string nsp_;
  std::string id_;
  std::unique_ptr<std::unordered_set<std::string>> rooms_;  // allocated by the first join (most never join)
  std::shared_ptr<void> state_;
  std::shared_ptr<void> extension_;
  bool connected_ = false;
};

// Encodes an EVENT (or BINARY_EVENT with attachments) packet as Engine.IO frames.
std::vector<OutFrame> encode_event(std::string_view nsp, std::optional<uint64_t> ack_id, bool is_ack,
                                   std::string_view json_array, std::vector<std::string> attachments);
// The same for the call `event(args)`: `args` is the raw JSON of the arguments after the name, comma
// separated (empty: none). The packet is written in one string, the payload copied once.
std::vector<OutFrame> encode_emit(std::string_view nsp, std::string_view event, std::string_view args,
                                  std::vector<std::string> attachments);

}  // namespace siomq::net
