#include "cluster/name_claims.h"

#include <spdlog/spdlog.h>

#include "wire/length_prefixed.h"
#include "wire/log_text.h"

namespace siomq::cluster {

using redis::Value;

namespace {

// The name's holder when a node whose lease is alive holds it, else '' (the name is this node's now).
// KEYS: the realm's names hash, <c>:nodes, this node's index. ARGV: name, node id, index member.
constexpr const char* kClaimScript = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur and cur ~= ARGV[2] then
  local t = redis.call('TIME')
  local lease = tonumber(redis.call('ZSCORE', KEYS[2], cur) or '0') or 0
  if lease > t[1] * 1000 + math.floor(t[2] / 1000) then return cur end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[3], ARGV[3])
return ''
)lua";

// KEYS: the realm's names hash, this node's index. ARGV: name, node id, index member.
constexpr const char* kReleaseScript = R"lua(
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
redis.call('SREM', KEYS[2], ARGV[3])
return 1
)lua";

// Every name this node holds claimed again, the index's other members released; answers the members
// another live node holds now (lost here).
// KEYS: <c>:nodes, this node's index. ARGV: prefix, node id, members…
constexpr const char* kReclaimBody = R"lua(
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local held = {}
for i = 3, #ARGV do held[ARGV[i]] = true end
for _, m in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if not held[m] then
    local key, name = name_of(ARGV[1], m)
    if key and redis.call('HGET', key, name) == ARGV[2] then redis.call('HDEL', key, name) end
    redis.call('SREM', KEYS[2], m)
  end
end
local lost = {}
for i = 3, #ARGV do
  local key, name = name_of(ARGV[1], ARGV[i])
  if key then
    local cur = redis.call('HGET', key, name)
    if cur and cur ~= ARGV[2] and (tonumber(redis.call('ZSCORE', KEYS[1], cur) or '0') or 0) > now then
      lost[#lost + 1] = ARGV[i]
    else
      redis.call('HSET', key, name, ARGV[2])
      redis.call('SADD', KEYS[2], ARGV[i])
    end
  end
end
return lost
)lua";

// name_of(prefix, member): the names hash and the name an index member stands for (nil when malformed).
constexpr const char* kNameOfLua = R"lua(
local function name_of(prefix, m)
  local colon = string.find(m, ':', 1, true)
  if not colon then return nil end
  local n = tonumber(string.sub(m, 1, colon - 1))
  if not n or colon + n > #m then return nil end
  return prefix .. ':consumers:' .. string.sub(m, colon + 1, colon + n), string.sub(m, colon + n + 1)
end
)lua";

const std::string& reclaim_script() {
  static const std::string script = std::string(kNameOfLua) + kReclaimBody;
  return script;
}

}  // namespace

const std::string& sweep_names_lua() {
  static const std::string lua = std::string(kNameOfLua) + R"lua(
local function sweep_names(prefix, id)
  local index = prefix .. ':node:' .. id .. ':names'
  for _, m in ipairs(redis.call('SMEMBERS', index)) do
    local key, name = name_of(prefix, m)
    if key and redis.call('HGET', key, name) == id then redis.call('HDEL', key, name) end
  end
  redis.call('DEL', index)
end
)lua";
  return lua;
}

std::string name_index_member(std::string_view realm, std::string_view name) {
  return wire::join_length_prefixed(realm, name);
}

std::optional<std::pair<std::string, std::string>> parse_name_index_member(std::string_view member) {
  auto parts = wire::split_length_prefixed(member);
  if (!parts) return std::nullopt;
  return std::pair{std::string(parts->first), std::string(parts->second)};
}

NameClaims::NameClaims(const ClusterConfig& config, Command command, Lost lost)
    : config_(config),
      command_(std::move(command)),
      lost_(std::move(lost)),
      nodes_key_(config.prefix + ":nodes"),
      index_key_(config.prefix + ":node:" + config.node_id + ":names") {}

void NameClaims::claim(const std::string& realm, const std::string& name, bool up, std::function<void(const Status&)> done) {
  std::string member = name_index_member(realm, name);
  ++held_[member];
  if (!up) return done(Ok{});  // claimed by joined()
  command_({"EVAL", kClaimScript, "3", config_.prefix + ":consumers:" + realm, nodes_key_, index_key_, name, config_.node_id,
            member},
           [this, done = std::move(done)](Result<Value> r) {
             // Another live node holds it (the claim stays counted until its session releases it).
             if (r && r->kind == Value::Kind::string && !r->text.empty()) return done(make_error("held by node " + r->text, 409));
             if (!r || r->kind != Value::Kind::string) {
               spdlog::warn("cluster: a consumer name could not be claimed ({}); claimed again at the next heartbeat",
                            r ? r->text : r.error().message);
               reclaim_due_ = true;
             }
             done(Ok{});
           });
}

void NameClaims::release(const std::string& realm, const std::string& name, bool up) {
  std::string member = name_index_member(realm, name);
  auto it = held_.find(member);
  if (it == held_.end() || --it->second > 0) return;
  held_.erase(it);
  if (!up) return;  // joined() releases what is no longer held
  command_({"EVAL", kReleaseScript, "2", config_.prefix + ":consumers:" + realm, index_key_, name, config_.node_id,
            std::move(member)},
           [](Result<Value>) {});
}

void NameClaims::joined() {
  reclaim_due_ = false;
  std::vector<std::string> args{"EVAL", reclaim_script(), "2", nodes_key_, index_key_, config_.prefix, config_.node_id};
  args.reserve(args.size() + held_.size());
  for (const auto& [member, count] : held_) args.push_back(member);
  command_(std::move(args), [this](Result<Value> r) {
    if (!r || r->kind != Value::Kind::array) {
      spdlog::warn("cluster: consumer names not claimed again: {}", r ? r->text : r.error().message);
      reclaim_due_ = true;
      return;
    }
    // (Their claims stay counted: each is released by its session, which the holder's drop ends.)
    for (const auto& m : r->items) {
      auto parsed = parse_name_index_member(m.text);
      if (!parsed || !held_.count(m.text)) continue;
      spdlog::warn("cluster: consumer name '{}' in realm '{}' was taken by another node while redis was away; "
                   "its holder here is dropped", log_text(parsed->second), log_text(parsed->first));
      if (lost_) lost_(parsed->first, parsed->second);
    }
  });
}

}  // namespace siomq::cluster
