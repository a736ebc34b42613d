// The layer above an Engine.IO session (the Socket.IO client state) as the session sees it.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace siomq::net {

class SessionHandler {
 public:
  virtual ~SessionHandler() = default;
  // The open packet has been queued; the handler may send.
  virtual void on_open() = 0;
  // One Engine.IO message. Returning false marks the input as malformed: the session closes.
  virtual bool on_text(std::string_view text) = 0;
  virtual bool on_binary(std::string bytes) = 0;
  // The session is gone; nothing can be sent any more.
  virtual void on_close(std::string_view reason) = 0;
  // Whether the client has joined any namespace yet (a session that never does is dropped).
  virtual bool joined() const = 0;
  // Whether a message begun before `since` is still unfinished (a binary packet's attachments that never
  // came): the session closes rather than hold it forever.
  virtual bool unfinished_since(std::chrono::steady_clock::time_point since) const = 0;
};

}  // namespace siomq::net
