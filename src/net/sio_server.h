// The Socket.IO server core: the namespace registry, the per-connection state that routes packets to
// namespaces (SioConnection; socket.io's server calls it a "client", a name our client library has), and
// rooms. Surfaces register namespaces before the server starts; a fallback namespace serves the names
// that none registered (the configured relay namespaces, which may change while the server runs).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "net/session_handler.h"
#include "net/socket.h"
#include "wire/socketio.h"

namespace siomq::net {

class EngineSession;
class WorkerPool;

struct Namespace {
  std::string name;
  // Sees the CONNECT auth payload (raw JSON, empty when absent); returns an error message to refuse.
  std::function<std::optional<std::string>(Socket&, std::string_view auth)> on_connect;
  std::unordered_map<std::string, std::function<void(Socket&, const Message&)>> handlers;
  // Events without a handler of their own; ignored when unset.
  std::function<void(Socket&, const Message&)> on_other;
  std::function<void(Socket&, std::string_view reason)> on_disconnect;
};

class SioServer {
 public:
  explicit SioServer(WorkerPool& pool);

  // Before start only.
  void add_namespace(Namespace ns);
  // Adds a handler to a namespace added before (another surface's event on it); before start only.
  void add_handler(std::string_view nsp, std::string event, std::function<void(Socket&, const Message&)> handler);
  // Another surface's hooks on a namespace added before: `on_connect` runs after the namespace's own
  // accepted the socket, `on_disconnect` after its own; before start only.
  void add_connect_hook(std::string_view nsp, std::function<void(Socket&, std::string_view auth)> on_connect);
  void add_disconnect_hook(std::string_view nsp, std::function<void(Socket&, std::string_view reason)> on_disconnect);
  // Serves every namespace name that was not added: its on_connect decides (by the socket's nsp())
  // which names exist, refusing the others. Before start only.
  void set_fallback_namespace(Namespace ns);
  // The namespace serving `name`: one added, else the fallback (null when there is none).
  const Namespace* find_namespace(std::string_view name) const;

  // The factory for EngineServer: one SioConnection per Engine.IO session.
  std::unique_ptr<SessionHandler> make_connection(EngineSession& session);

  // Sends an event to every socket of `nsp` in `room`, on every worker, except the socket whose id is
  // `except` (Socket.IO's socket.to(room): the sender does not hear itself); callable from any thread.
  void emit_to_room(const std::string& nsp, const std::string& room, std::string_view json_array,
                    std::vector<std::string> attachments = {}, std::string except = {});

  // Room membership, kept per worker and touched only by that worker's thread.
  void room_join(Socket& socket, const std::string& room);
  void room_leave(Socket& socket, const std::string& room);

 private:
  using RoomMap = std::unordered_map<std::string, std::unordered_set<Socket*>>;
  struct PerWorker {
    std::unordered_map<std::string, RoomMap> rooms;  // namespace -> room -> sockets
  };

  WorkerPool& pool_;
  std::unordered_map<std::string, Namespace> namespaces_;
  std::optional<Namespace> fallback_;
  std::vector<PerWorker> workers_;
};

// The Socket.IO state of one Engine.IO session.
class SioConnection : public SessionHandler {
 public:
  SioConnection(SioServer& server, EngineSession& session);
  ~SioConnection() override;

  void on_open() override;
  bool on_text(std::string_view text) override;
  bool on_binary(std::string bytes) override;
  void on_close(std::string_view reason) override;
  bool joined() const override { return ever_joined_; }
  bool unfinished_since(std::chrono::steady_clock::time_point since) const override {
    return decoder_.awaiting_attachments() && awaiting_since_ < since;
  }

  EngineSession& session() { return session_; }
  SioServer& server() { return server_; }
  void send(OutFrame frame);
  // Removes a socket after a DISCONNECT either way.
  void remove(Socket& socket, std::string_view reason);

 private:
  // (`outline`: what the decoder's one pass noted of the packet's JSON, or null.)
  bool decoded(Result<std::optional<sio::Packet>> r, const json::Outline* outline = nullptr);
  bool handle(sio::Packet&& packet, const json::Outline* outline);
  void connect(const std::string& nsp, std::string_view auth);
  Socket* find(std::string_view nsp);

  SioServer& server_;
  EngineSession& session_;
  sio::Decoder decoder_;
  std::chrono::steady_clock::time_point awaiting_since_;  // when the decoder began waiting for attachments
  bool waiting_ = false;
  std::vector<std::shared_ptr<Socket>> sockets_;
  bool ever_joined_ = false;
};

}  // namespace siomq::net
