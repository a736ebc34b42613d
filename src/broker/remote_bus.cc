#include "broker/remote_bus.h"

#include <algorithm>
#include <cstdint>

#include "wire/length_prefixed.h"

namespace siomq::broker {
namespace {

void add_once(std::vector<std::string>& nodes, const std::string& node) {
  if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
}

std::string queue_key(std::string_view pattern, std::string_view queue) {
  return wire::join_length_prefixed(queue, pattern);
}

}  // namespace

void RemoteBus::Patterns::add(std::string_view pattern, const std::string& node) {
  auto [it, fresh] = ids.try_emplace(std::string(pattern), nodes.size() + 1);
  if (fresh) {
    index.insert(pattern, it->second);
    nodes.emplace_back();
  }
  add_once(nodes[it->second - 1], node);
}

void RemoteBus::Patterns::match(std::string_view subject, std::vector<std::string>& out) const {
  if (nodes.empty()) return;
  thread_local std::vector<SubjectIndex::Id> matched;
  matched.clear();
  index.match(subject, matched);
  for (auto id : matched) {
    for (const auto& node : nodes[id - 1]) add_once(out, node);
  }
}

void RemoteBus::add_node(const std::string& node) { inbox_nodes_.emplace(inbox_token(node), node); }

void RemoteBus::add_plain(const std::string& realm, std::string_view pattern, const std::string& node) {
  realms_[realm].plain.add(pattern, node);
}

void RemoteBus::add_stream(const std::string& realm, std::string_view pattern, const std::string& node) {
  realms_[realm].streams.add(pattern, node);
}

void RemoteBus::add_everywhere(const std::string& node) { add_once(everywhere_, node); }

void RemoteBus::add_queue(const std::string& realm, std::string_view queue, std::string_view pattern,
                          const std::string& node) {
  Realm& r = realms_[realm];
  auto [it, fresh] = r.queue_ids.try_emplace(queue_key(pattern, queue), r.queue_list.size() + 1);
  if (fresh) {
    r.queue_index.insert(pattern, it->second);
    r.queue_list.push_back(Queue{std::string(pattern), std::string(queue), {}});
  }
  auto& nodes = r.queue_list[it->second - 1].nodes;
  if (nodes.size() < kMaxNodesPerQueue) add_once(nodes, node);
}

const RemoteBus::Realm* RemoteBus::realm(std::string_view name) const {
  auto it = realms_.find(name);
  return it == realms_.end() ? nullptr : &it->second;
}

void RemoteBus::plain_targets(std::string_view realm_name, std::string_view subject, std::vector<std::string>& out) const {
  for (const auto& node : everywhere_) add_once(out, node);
  if (const Realm* r = realm(realm_name)) {
    r->plain.match(subject, out);
    r->streams.match(subject, out);
  }
}

void RemoteBus::queues(std::string_view realm_name, std::string_view subject, std::vector<const Queue*>& out) const {
  const Realm* r = realm(realm_name);
  if (!r || r->queue_list.empty()) return;
  thread_local std::vector<SubjectIndex::Id> matched;
  matched.clear();
  r->queue_index.match(subject, matched);
  for (auto id : matched) out.push_back(&r->queue_list[id - 1]);
}

const RemoteBus::Queue* RemoteBus::queue(std::string_view realm_name, std::string_view pattern, std::string_view queue) const {
  const Realm* r = realm(realm_name);
  if (!r || r->queue_list.empty()) return nullptr;
  auto it = r->queue_ids.find(queue_key(pattern, queue));
  return it == r->queue_ids.end() ? nullptr : &r->queue_list[it->second - 1];
}

bool RemoteBus::any(std::string_view realm_name, std::string_view subject) const {
  if (!everywhere_.empty()) return true;
  thread_local std::vector<std::string> nodes;
  nodes.clear();
  if (const Realm* r = realm(realm_name)) r->plain.match(subject, nodes);
  if (!nodes.empty()) return true;
  thread_local std::vector<const Queue*> groups;
  groups.clear();
  queues(realm_name, subject, groups);
  return !groups.empty();
}

const std::string* RemoteBus::inbox_node(std::string_view subject) const {
  std::string_view token = inbox_token_of(subject);
  if (token.empty()) return nullptr;
  auto it = inbox_nodes_.find(std::string(token));
  return it == inbox_nodes_.end() ? nullptr : &it->second;
}

std::string_view inbox_token_of(std::string_view subject) {
  constexpr std::string_view kInbox = "_INBOX.";
  constexpr size_t kToken = 16;
  if (!subject.starts_with(kInbox) || subject.size() <= kInbox.size() + kToken || subject[kInbox.size() + kToken] != '.')
    return {};
  return subject.substr(kInbox.size(), kToken);
}

std::string inbox_token(std::string_view node_id) {
  // FNV-1a, 64 bits: stable across builds and machines (std::hash is not).
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : node_id) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<size_t>(i)] = kHex[h & 15];
  return out;
}

}  // namespace siomq::broker
