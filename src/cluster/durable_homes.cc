#include "cluster/durable_homes.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "cluster/link.h"
#include "wire/log_text.h"

namespace siomq::cluster {

using redis::Value;

namespace {

// How long an adoption may take before another node may try the section again (the adopter died). An
// adoption of a large section waits behind others on one thread; a repeated one only duplicates.
constexpr const char* kAdoptLockMs = "300000";
// Sections claimed per heartbeat: an adoption loads a whole section, so a node takes few at once.
constexpr const char* kSectionsPerSweep = "2";

// The Lua helpers every script here starts with (KEYS[2] is always <c>:nodes): whether a node's lease is
// alive, and the one rule by which a section is claimed for adoption — not `me`'s own, its node's lease
// over, and registered for anyone, for `me`, or for a node that is gone — with the adopt lock taken.
constexpr const char* kHelpers = R"lua(
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local function alive(id) return (tonumber(redis.call('ZSCORE', KEYS[2], id) or '0') or 0) > now end
local function claim(name, target, me, lock, ms)
  if name == me or alive(name) then return false end
  if target ~= '' and target ~= me and alive(target) then return false end
  return redis.call('SET', lock, me, 'NX', 'PX', ms) and true or false
end
)lua";

// The consumer's home is this node now; answers the live node that held it before ('' for none).
// KEYS: the realm's homes hash, <c>:nodes. ARGV: consumer, node id.
constexpr const char* kClaimBody = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if cur and cur ~= ARGV[2] and alive(cur) then return cur end
return ''
)lua";

// After an adoption: the live node that is the consumer's home, else '' and the home is this node.
// KEYS: the realm's homes hash, <c>:nodes. ARGV: consumer, node id.
constexpr const char* kSettleBody = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur and cur ~= ARGV[2] and alive(cur) then return cur end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return ''
)lua";

// This node's section registered again; answers the sections claimed for adoption here: those of nodes
// whose lease is over, and moves whose node is this one or gone.
// KEYS: <c>:sections, <c>:nodes. ARGV: node id, the adopt lock's key prefix, lock ms, how many at most.
constexpr const char* kSweepBody = R"lua(
redis.call('HSET', KEYS[1], ARGV[1], '')
local out = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if claim(all[i], all[i + 1], ARGV[1], ARGV[2] .. all[i], ARGV[3]) then
    out[#out + 1] = all[i]
    if #out >= tonumber(ARGV[4]) then break end
  end
end
return out
)lua";

// The consumer's home forgotten if it is this node. KEYS: the realm's homes hash. ARGV: consumer, node id.
constexpr const char* kForgetHomeScript = R"lua(
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
)lua";

// One section claimed for adoption here, as the sweep would (an offer note for this node is a hint, not an
// order): 1 when it is this node's to adopt now. KEYS: <c>:sections, <c>:nodes. ARGV: section, node id,
// the adopt lock's key, lock ms.
constexpr const char* kClaimSectionBody = R"lua(
local target = redis.call('HGET', KEYS[1], ARGV[1])
if target and claim(ARGV[1], target, ARGV[2], ARGV[3], ARGV[4]) then return 1 end
return 0
)lua";

// The section dropped, and its adopt lock if it is still this node's.
// KEYS: <c>:sections, the adopt lock. ARGV: section, node id.
constexpr const char* kAdoptedScript = R"lua(
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
return 1
)lua";

std::string with_helpers(const char* body) { return std::string(kHelpers) + body; }

}  // namespace

DurableHomes::DurableHomes(boost::asio::io_context& io, const ClusterConfig& config, Command command,
                           std::function<bool()> up, Adopt adopt)
    : io_(io),
      config_(config),
      command_(std::move(command)),
      up_(std::move(up)),
      adopt_(std::move(adopt)),
      sections_key_(config.prefix + ":sections"),
      nodes_key_(config.prefix + ":nodes") {}

void DurableHomes::when_up(std::function<void()> f, std::function<void()> otherwise) {
  boost::asio::post(io_, [this, f = std::move(f), otherwise = std::move(otherwise)] {
    if (up_()) f();
    else if (otherwise) otherwise();
  });
}

void DurableHomes::claim(const std::string& realm, const std::string& consumer) {
  when_up([=, this] {
    static const std::string script = with_helpers(kClaimBody);
    command_({"EVAL", script, "2", config_.prefix + ":homes:" + realm, nodes_key_, consumer, config_.node_id},
             [this, realm, consumer](Result<Value> r) {
               if (!r || r->kind != Value::Kind::string || r->text.empty()) return;
               // The queues are on a live node: it moves them here (a note every node reads; only `from` acts).
               DurableNote note{DurableNote::Kind::move, realm, consumer, r->text, config_.node_id, {}};
               command_({"PUBLISH", config_.prefix + ":" + kDurableChannel, encode_durable_note(note)}, [](Result<Value>) {});
             });
  });
}

void DurableHomes::release(const std::string& realm, const std::string& consumer) {
  when_up([=, this] {
    const std::string key = config_.prefix + ":homes:" + realm;
    if (consumer.empty()) return command_({"DEL", key}, [](Result<Value>) {});
    command_({"EVAL", kForgetHomeScript, "1", key, consumer, config_.node_id}, [](Result<Value>) {});
  });
}

void DurableHomes::settle(const std::string& realm, const std::string& consumer,
                          std::function<void(std::optional<std::string>)> done) {
  static const std::string script = with_helpers(kSettleBody);
  when_up(
      [=, this] {
        command_({"EVAL", script, "2", config_.prefix + ":homes:" + realm, nodes_key_, consumer, config_.node_id},
                 [done](Result<Value> r) {
                   if (!r || r->kind != Value::Kind::string || r->text.empty()) return done(std::nullopt);
                   done(std::move(r->text));
                 });
      },
      [done] { done(std::nullopt); });
}

void DurableHomes::offer(const std::string& section, const std::string& to, std::function<void(const Status&)> done) {
  when_up(
      [=, this] {
        DurableNote note{DurableNote::Kind::adopt, {}, {}, {}, to, section};
        command_({"HSET", sections_key_, section, to}, [this, note, done](Result<Value> r) {
          if (!r || r->kind == Value::Kind::error) return done(make_error(r ? r->text : r.error().message, 503));
          command_({"PUBLISH", config_.prefix + ":" + kDurableChannel, encode_durable_note(note)}, [](Result<Value>) {});
          done(Ok{});
        });
      },
      [done] { done(make_error("the cluster's redis is away", 503)); });
}

void DurableHomes::claim_section(const std::string& section) {
  when_up([=, this] {
    static const std::string script = with_helpers(kClaimSectionBody);
    command_({"EVAL", script, "2", sections_key_, nodes_key_, section, config_.node_id, config_.prefix + ":adopt:" + section,
              kAdoptLockMs},
             [this, section](Result<Value> r) {
               if (r && r->kind == Value::Kind::integer && r->integer == 1 && adopt_) adopt_(section);
             });
  });
}

void DurableHomes::adopted(const std::string& section) {
  when_up([=, this] {
    command_({"EVAL", kAdoptedScript, "2", sections_key_, config_.prefix + ":adopt:" + section, section, config_.node_id},
             [section](Result<Value> r) {
               if (!r || r->kind == Value::Kind::error)
                 spdlog::warn("cluster: section {} adopted but not dropped: {}", log_text(section),
                              r ? r->text : r.error().message);
             });
  });
}

void DurableHomes::sweep() {
  static const std::string script = with_helpers(kSweepBody);
  command_({"EVAL", script, "2", sections_key_, nodes_key_, config_.node_id, config_.prefix + ":adopt:", kAdoptLockMs,
            kSectionsPerSweep},
           [this](Result<Value> r) {
             if (!r || r->kind != Value::Kind::array) return;
             for (const Value& v : r->items) {
               if (v.kind == Value::Kind::string && valid_section(v.text) && adopt_) adopt_(v.text);
             }
           });
}

}  // namespace siomq::cluster
