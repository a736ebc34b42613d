#include "broker/remote_bus.h"

#include <algorithm>

namespace siomq::broker {
namespace {

void add_once(std::vector<std::string>& nodes, const std::string& node) {
  if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
}

std::string queue_key(std::string_view pattern, std::string_view queue) {
  std::string key(pattern);
  key += '\0';
  key += queue;
  return key;
}

}  // namespace

void RemoteBus::add_plain(const std::string& realm, std::string_view pattern, const std::string& node) {
  Realm& r = realms_[realm];
  auto [it, fresh] = r.plain_ids.try_emplace(std::string(pattern), r.plain_nodes.size() + 1);
  if (fresh) {
    r.plain.insert(pattern, it->second);
    r.plain_nodes.emplace_back();
  }
  add_once(r.plain_nodes[it->second - 1], node);
}

void RemoteBus::add_all(const std::string& realm, const std::string& node) { add_once(realms_[realm].all, node); }

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
  thread_local std::vector<SubjectIndex::Id> matched;
  for (const Realm* r : {realm(realm_name), realm_name == "*" ? nullptr : realm("*")}) {
    if (!r) continue;
    for (const auto& node : r->all) add_once(out, node);
    if (r->plain_nodes.empty()) continue;
    matched.clear();
    r->plain.match(subject, matched);
    for (auto id : matched) {
      for (const auto& node : r->plain_nodes[id - 1]) add_once(out, node);
    }
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
  thread_local std::vector<std::string> nodes;
  nodes.clear();
  plain_targets(realm_name, subject, nodes);
  if (!nodes.empty()) return true;
  thread_local std::vector<const Queue*> groups;
  groups.clear();
  queues(realm_name, subject, groups);
  return !groups.empty();
}

}  // namespace siomq::broker
