// The registry of live sockets on "/": which realm each is in now and which address it came from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "surfaces/tyo_mq/socket_endpoint.h"

namespace siomq::surfaces {

// Every live socket on "/", with the realm it is in now and its address: what remove_realm disconnects
// and what the per-IP connection limits count. Thread-safe.
class SocketRegistry {
 public:
  // Adds a socket; returns how many sockets its address has now and how many it opened in the last minute.
  std::pair<size_t, size_t> add(const std::shared_ptr<SocketEndpoint>& e, const std::string& ip, int64_t now_ms);
  void set_realm(const SocketEndpoint* e, const std::string& realm);
  void remove(const SocketEndpoint* e);
  // The sockets whose realm is `realm` now.
  std::vector<std::shared_ptr<SocketEndpoint>> in_realm(const std::string& realm);
  size_t size();

 private:
  struct Entry {
    std::weak_ptr<SocketEndpoint> endpoint;
    std::string realm;
    std::string ip;
  };
  std::mutex mu_;
  std::unordered_map<const SocketEndpoint*, Entry> sockets_;
  std::unordered_map<std::string, size_t> per_ip_;
  std::unordered_map<std::string, std::vector<int64_t>> opened_;  // per ip, the last minute's connection times
  uint64_t adds_ = 0;
};

}  // namespace siomq::surfaces
