#include "cluster/reply_routes.h"

namespace siomq::cluster {

std::string ReplyRoutes::key(std::string_view realm, std::string_view subject) {
  std::string k(realm);
  k += '\0';
  k += subject;
  return k;
}

void ReplyRoutes::expire(int64_t now_ms) {
  while (!order_.empty() && (order_.front().second <= now_ms || order_.size() > kMaxEntries)) {
    auto it = routes_.find(order_.front().first);
    // Only the last noting of a key ends it (an older place in the order of a key noted again does not).
    if (it != routes_.end() && it->second.until == order_.front().second) routes_.erase(it);
    order_.pop_front();
  }
}

void ReplyRoutes::note(std::string_view realm, std::string_view subject, std::string_view node, int64_t now_ms) {
  std::string k = key(realm, subject);
  std::lock_guard lock(mu_);
  const int64_t until = now_ms + kKeepMs;
  routes_[k] = Entry{std::string(node), until};
  order_.emplace_back(std::move(k), until);
  expire(now_ms);
}

std::optional<std::string> ReplyRoutes::node(std::string_view realm, std::string_view subject, int64_t now_ms) {
  std::lock_guard lock(mu_);
  expire(now_ms);
  auto it = routes_.find(key(realm, subject));
  if (it == routes_.end()) return std::nullopt;
  return it->second.node;
}

size_t ReplyRoutes::size() {
  std::lock_guard lock(mu_);
  return routes_.size();
}

}  // namespace siomq::cluster
