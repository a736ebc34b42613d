// Consumer groups' online members on the other nodes of a cluster (docs/scale-out.md "Consumer groups"):
// per realm and exact subscription key, each (group, node) with an online member subscribed under that
// key there. The cluster thread builds a new one whenever another node's group terms change
// (cluster/interest.h); the workers that route a PRODUCE share the one current then, read-only.
// A group's pick for another node (RemoteGroupPick) makes the message go there naming the group, and that
// node delivers it to one of its own members: one delivery per group across the cluster.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace siomq::broker {

struct RemoteGroupMember {
  std::string group, node;
};

struct RemoteGroups {
  using ByKey = std::map<std::string, std::vector<RemoteGroupMember>, std::less<>>;
  std::map<std::string, ByKey, std::less<>> realms;
  const ByKey* realm(std::string_view name) const {
    auto it = realms.find(name);
    return it == realms.end() ? nullptr : &it->second;
  }
};

struct RemoteGroupPick {
  std::string node, group;
};

}  // namespace siomq::broker
