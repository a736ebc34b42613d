#include "cluster/interest_sync.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "cluster/link.h"
#include "cluster/name_claims.h"
#include "wire/clock.h"

namespace siomq::cluster {

namespace asio = boost::asio;
using redis::Value;

namespace {

// This node's hash written whole, its lease taken, and a note that makes every other node read it.
// KEYS: hash, nodes, note channel. ARGV: node id, lease ms, note head, note tail, the last version this
// node wrote, fields… The version goes on from the hash's or this node's, whichever is further, so that
// it never goes back while the node lives (Redis may have lost the hash); a node restarted under the same
// id may go back, which the others see at their next heartbeat (and on the reread note, which reads).
constexpr const char* kRewriteScript = R"lua(
local v = math.max(tonumber(redis.call('HGET', KEYS[1], 'v') or '0') or 0, tonumber(ARGV[5])) + 1
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', v)
for i = 6, #ARGV do redis.call('HSET', KEYS[1], ARGV[i], '1') end
local lease = tonumber(ARGV[2])
redis.call('PEXPIRE', KEYS[1], 3 * lease)
local t = redis.call('TIME')
redis.call('ZADD', KEYS[2], t[1] * 1000 + math.floor(t[2] / 1000) + lease, ARGV[1])
redis.call('PUBLISH', KEYS[3], ARGV[3] .. v .. ARGV[4])
return v
)lua";

// A change of this node's hash and its note, one version further. -1 when the hash is gone (the lease
// ended and another node dropped it, or Redis lost it) or its version is not a number: the node then
// writes it whole.
// KEYS: hash, note channel. ARGV: note head, note tail, how many fields are added, added…, removed…
constexpr const char* kChangeScript = R"lua(
if redis.call('EXISTS', KEYS[1]) == 0 or not tonumber(redis.call('HGET', KEYS[1], 'v') or '') then return -1 end
local v = redis.call('HINCRBY', KEYS[1], 'v', 1)
local n = tonumber(ARGV[3])
for i = 4, 3 + n do redis.call('HSET', KEYS[1], ARGV[i], '1') end
for i = 4 + n, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
redis.call('PUBLISH', KEYS[2], ARGV[1] .. v .. ARGV[2])
return v
)lua";

// The lease renewed, the nodes whose lease ended dropped with their hashes, and every live node's version.
// KEYS: nodes, this node's hash. ARGV: node id, lease ms, prefix.
// Answers {1 or 0 (whether this node's hash still exists), node, version, node, version, …}.
// The consumer names such a node held go too (cluster/name_claims.h).
constexpr const char* kHeartbeatBody = R"lua(
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  if id ~= ARGV[1] then
    redis.call('DEL', ARGV[3] .. ':node:' .. id .. ':interest')
    sweep_names(ARGV[3], id)
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local out = {redis.call('EXISTS', KEYS[2])}
if out[1] == 1 then
  local lease = tonumber(ARGV[2])
  redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[2], 3 * lease)
end
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', ARGV[3] .. ':node:' .. id .. ':interest', 'v') or ''
end
return out
)lua";

const std::string& heartbeat_script() {
  static const std::string script = sweep_names_lua() + kHeartbeatBody;
  return script;
}

// More nodes than this in one answer are not read (a hostile or broken Redis must not make this node
// read without bound).
constexpr size_t kMaxNodes = 1000;

std::optional<uint64_t> parse_version(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

// How many listen on <c>:messages beyond the siomq nodes. ARGV: the messages channel, the node channels'
// glob pattern, "1" while this node already takes a reference node to be there, the channels of the nodes
// holding a lease. The leased nodes' channels answer in steady state, and while a reference node is
// known (each heartbeat then only extends it). Only when more listen than those, and none was known, does
// the script read every node channel Redis has (PUBSUB CHANNELS walks all of Redis's channels): a node
// subscribes before it takes its lease, or may outlive it. Listeners are summed on both sides.
constexpr const char* kReferenceListenersScript = R"lua(
local function listeners(channels, first, last)
  local n = 0
  for i = first, last, 500 do
    local counts = redis.call('PUBSUB', 'NUMSUB', unpack(channels, i, math.min(i + 499, last)))
    for k = 2, #counts, 2 do n = n + counts[k] end
  end
  return n
end
local on_messages = redis.call('PUBSUB', 'NUMSUB', ARGV[1])[2]
local leased = listeners(ARGV, 4, #ARGV)
if on_messages <= leased or ARGV[3] == '1' then return on_messages - leased end
local channels = redis.call('PUBSUB', 'CHANNELS', ARGV[2])
return on_messages - listeners(channels, 1, #channels)
)lua";

// `text` matched literally in a Redis glob pattern: its *, ?, [, ] and \ escaped.
std::string glob_literal(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (char ch : text) {
    if (ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '\\') out.push_back('\\');
    out.push_back(ch);
  }
  return out;
}

}  // namespace

InterestSync::InterestSync(asio::io_context& io, const ClusterConfig& config, broker::InterestLedger* ledger, Command command)
    : config_(config),
      ledger_(ledger),
      command_(std::move(command)),
      heartbeat_timer_(io),
      heartbeat_every_(std::max<int64_t>(config.node_lease_ms / 4, 50)),
      groups_timer_(io) {
  const std::string& c = config_.prefix;
  relay_channel_ = c + ":node:" + config_.node_id;
  note_channel_ = c + ":interest";
  messages_channel_ = c + ":messages";
  hash_key_ = relay_channel_ + ":interest";
  nodes_key_ = c + ":nodes";
  node_channel_prefix_ = c + ":node:";
  node_channels_pattern_ = glob_literal(node_channel_prefix_) + "*";
}

void InterestSync::joined() {
  ++epoch_;
  up_ = true;
  flushing_ = flush_again_ = false;
  reading_.clear();
  read_again_.clear();
  // Whatever was held may be stale past what versions can tell (a node restarted under the same id while
  // this one was away, and came back to the version held): everyone is read again from the first
  // heartbeat. Until its answer (one round trip) only broadcasts go out.
  view_.clear();
  live_.clear();
  rewrite();
  heartbeat();
}

void InterestSync::lost() {
  ++epoch_;
  up_ = false;
  groups_usable_.store(false, std::memory_order_relaxed);
  bus_usable_.store(false, std::memory_order_relaxed);
  groups_timer_.cancel();
  flushing_ = flush_again_ = false;
  reading_.clear();
  read_again_.clear();
  heartbeat_timer_.cancel();
}

void InterestSync::rewrite() {
  rewrite_due_ = false;
  std::vector<InterestTerm> terms = ledger_ ? ledger_->snapshot() : std::vector<InterestTerm>{};
  std::vector<std::string> args{"EVAL", kRewriteScript, "3", hash_key_, nodes_key_, note_channel_, config_.node_id,
                                std::to_string(config_.node_lease_ms), interest_note_head(config_.node_id),
                                interest_reread_tail(), std::to_string(version_)};
  args.reserve(args.size() + terms.size());
  published_.clear();
  for (auto& t : terms) {
    args.push_back(interest_field(t));
    published_.insert(std::move(t));
  }
  count();
  flushing_ = true;
  command_(std::move(args), [this, epoch = epoch_](Result<Value> r) {
    if (epoch != epoch_) return;
    flushing_ = false;
    if (!r || r->kind != Value::Kind::integer) {
      spdlog::warn("cluster: this node's interest was not written: {}", r ? r->text : r.error().message);
      rewrite_due_ = true;  // by the next heartbeat
      return;
    }
    version_ = static_cast<uint64_t>(std::max<long long>(r->integer, 0));
    if (flush_again_) flush();
  });
}

void InterestSync::wake() {
  if (!up_) return;  // joined() takes the whole snapshot
  if (flushing_) {
    flush_again_ = true;
    return;
  }
  flush();
}

void InterestSync::flush() {
  flush_again_ = false;
  if (!ledger_) return;
  auto changes = ledger_->drain();
  if (!changes) return rewrite();  // too many changes while Redis was away: all of it
  std::vector<InterestTerm> add, remove;
  for (auto& c : *changes) {
    bool held = published_.count(c.term) > 0;
    if (c.present && !held) add.push_back(std::move(c.term));
    else if (!c.present && held) remove.push_back(std::move(c.term));
  }
  if (add.empty() && remove.empty()) return;
  std::optional<std::string> tail = interest_note_tail(add, remove);
  std::vector<std::string> args{"EVAL", kChangeScript, "2", hash_key_, note_channel_, interest_note_head(config_.node_id),
                                tail ? std::move(*tail) : interest_reread_tail(), std::to_string(add.size())};
  args.reserve(args.size() + add.size() + remove.size());
  for (auto& t : add) {
    args.push_back(interest_field(t));
    published_.insert(std::move(t));
  }
  for (auto& t : remove) {
    args.push_back(interest_field(t));
    published_.erase(t);
  }
  count();
  flushing_ = true;
  command_(std::move(args), [this, epoch = epoch_](Result<Value> r) {
    if (epoch != epoch_) return;
    flushing_ = false;
    if (r && r->kind == Value::Kind::integer && r->integer < 0) return rewrite();
    if (!r || r->kind != Value::Kind::integer) {
      // Redis refused the script: what it holds is unknown now; the next heartbeat writes it whole.
      spdlog::warn("cluster: this node's interest was not changed: {}", r ? r->text : r.error().message);
      rewrite_due_ = true;
      return;
    }
    version_ = static_cast<uint64_t>(r->integer);
    if (flush_again_) flush();
  });
}

void InterestSync::arm_heartbeat() {
  heartbeat_timer_.expires_after(heartbeat_every_);
  heartbeat_timer_.async_wait([this, epoch = epoch_](const boost::system::error_code& ec) {
    if (!ec && epoch == epoch_ && up_) heartbeat();
  });
}

void InterestSync::heartbeat() {
  command_({"EVAL", heartbeat_script(), "2", nodes_key_, hash_key_, config_.node_id, std::to_string(config_.node_lease_ms),
            config_.prefix},
           [this, epoch = epoch_](Result<Value> r) {
             if (epoch != epoch_) return;
             if (r && r->kind == Value::Kind::array) on_heartbeat(*r);
             else spdlog::warn("cluster: lease not renewed: {}", r ? r->text : r.error().message);
           });
  arm_heartbeat();
}

void InterestSync::on_heartbeat(const Value& v) {
  if (v.items.empty() || v.items[0].kind != Value::Kind::integer) return;
  // Our lease ended and another node dropped the hash, or a script of ours failed: write it whole.
  if ((v.items[0].integer == 0 || rewrite_due_) && !flushing_) rewrite();
  if (heartbeat_hook_) heartbeat_hook_(v.items[0].integer != 0);
  std::unordered_set<std::string> live{config_.node_id};
  for (size_t i = 1; i + 1 < v.items.size() && live.size() <= kMaxNodes; i += 2) {
    const Value& id = v.items[i];
    const Value& version = v.items[i + 1];
    if (id.kind != Value::Kind::string || id.text.empty() || id.text == config_.node_id) continue;
    live.insert(id.text);
    auto held = parse_version(version.text);
    if (!held) continue;  // no hash yet: its rewrite note comes
    if (!view_.knows(id.text) || *held > view_.version(id.text)) read(id.text, false);
    else if (*held < view_.version(id.text)) read(id.text, true);  // Redis lost it and the node wrote it anew
  }
  for (const auto& node : view_.nodes()) {
    if (!live.count(node)) view_.forget(node);
  }
  live_ = std::move(live);
  count_reference_nodes();
  count();
}

// Every siomq node listens on <c>:messages and on its own channel, both taken in one SUBSCRIBE; those
// listening on the first beyond the node channels' listeners are reference nodes. Counting only the
// channels of nodes holding a lease took a starting node (subscribed, its lease not yet taken) for a
// reference node; the script counts every node channel then, in the same step (no SUBSCRIBE between).
void InterestSync::count_reference_nodes() {
  if (config_.reference_relay != "auto") return;
  std::vector<std::string> args{"EVAL", kReferenceListenersScript, "0", messages_channel_, node_channels_pattern_,
                                reference_mode() ? "1" : "0"};
  for (const auto& node : live_) args.push_back(node_channel_prefix_ + node);
  command_(std::move(args), [this, epoch = epoch_](Result<Value> r) {
    if (epoch != epoch_ || !r || r->kind != Value::Kind::integer) return;
    if (r->integer > 0) saw_reference();
  });
}

void InterestSync::read(const std::string& node, bool force) {
  if (reading_.count(node)) {
    read_again_[node] |= force;
    return;
  }
  reading_.insert(node);
  interest_reads_.fetch_add(1, std::memory_order_relaxed);
  command_({"HGETALL", node_channel_prefix_ + node + ":interest"}, [this, node, force, epoch = epoch_](Result<Value> r) {
    if (epoch != epoch_) return;
    reading_.erase(node);
    if (r && r->kind == Value::Kind::array && r->items.size() % 2 == 0 && !r->items.empty()) {
      std::optional<uint64_t> version;
      std::vector<std::string> fields;
      fields.reserve(r->items.size() / 2);
      for (size_t i = 0; i + 1 < r->items.size(); i += 2) {
        if (r->items[i].text == "v") version = parse_version(r->items[i + 1].text);
        else fields.push_back(std::move(r->items[i].text));
      }
      if (version) {
        if (force) view_.forget(node);
        view_.replace(node, *version, fields);
      }
    } else if (r && r->kind == Value::Kind::array) {
      view_.forget(node);  // gone: its lease ended
    }
    count();
    if (auto again = read_again_.find(node); again != read_again_.end()) {
      bool forced = again->second;
      read_again_.erase(again);
      read(node, forced);
    }
  });
}

void InterestSync::on_note(std::string_view body) {
  auto note = decode_interest_note(body, kMaxNoteBytes);
  if (!note) {
    notes_refused_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (note->node_id == config_.node_id) return;
  // A reread note (the node wrote its hash whole) is read whatever version is held: Redis may have
  // lost the hash, the node may have restarted.
  if (!view_.apply(*note)) read(note->node_id, note->reread);
  share_groups();
}

void InterestSync::share_groups() {
  if ((!view_.groups_changed() && !view_.bus_changed()) || groups_timer_armed_) return;
  constexpr auto kGroupsEvery = std::chrono::milliseconds(20);
  auto wait = groups_built_ + kGroupsEvery - std::chrono::steady_clock::now();
  if (wait <= std::chrono::steady_clock::duration::zero()) return build_groups();
  groups_timer_armed_ = true;
  groups_timer_.expires_after(wait);
  groups_timer_.async_wait([this](const boost::system::error_code& ec) {
    groups_timer_armed_ = false;
    if (!ec) build_groups();
  });
}

void InterestSync::build_groups() {
  groups_built_ = std::chrono::steady_clock::now();
  if (auto fresh = view_.take_groups()) {
    const bool some = !fresh->realms.empty();
    {
      std::lock_guard lock(groups_mu_);
      groups_ = std::move(fresh);
    }
    groups_usable_.store(up_ && some, std::memory_order_relaxed);
  }
  if (auto fresh = view_.take_bus()) {
    const bool some = !fresh->empty();
    {
      std::lock_guard lock(groups_mu_);
      bus_ = std::move(fresh);
    }
    bus_usable_.store(up_ && some, std::memory_order_relaxed);
  }
}

std::shared_ptr<const broker::RemoteBus> InterestSync::remote_bus() const {
  if (!bus_usable_.load(std::memory_order_relaxed)) return nullptr;
  std::lock_guard lock(groups_mu_);
  return bus_;
}

std::shared_ptr<const broker::RemoteGroups> InterestSync::remote_groups() const {
  if (!groups_usable_.load(std::memory_order_relaxed) || reference_mode()) return nullptr;
  std::lock_guard lock(groups_mu_);
  return groups_;
}

void InterestSync::heard_on_messages(const std::string& node) {
  if (config_.reference_relay != "auto" || live_.count(node)) return;
  saw_reference();
}

// A reference node is taken to be there for a lease's time after it was last seen.
void InterestSync::saw_reference() {
  reference_until_ms_.store(steady_ms() + config_.node_lease_ms, std::memory_order_relaxed);
}

bool InterestSync::reference_mode() const {
  if (config_.reference_relay == "always") return true;
  if (config_.reference_relay == "never") return false;
  return steady_ms() < reference_until_ms_.load(std::memory_order_relaxed);
}

void InterestSync::count() {
  share_groups();
  peers_.store(view_.size(), std::memory_order_relaxed);
  terms_.store(published_.size(), std::memory_order_relaxed);
}

void InterestSync::route(std::string_view realm, std::string_view producer, std::string_view event, bool broadcast,
                         std::vector<std::string>& out) const {
  if (reference_mode()) return out.push_back(messages_channel_);
  size_t first = out.size();
  if (broadcast) {
    // Every live node, read yet or not (a broadcast reaches the realm's members wherever they are).
    for (const auto& node : live_) {
      if (node != config_.node_id) out.push_back(node);
    }
    for (const auto& node : view_.nodes()) {
      if (!live_.count(node)) out.push_back(node);
    }
  } else {
    view_.targets(realm, producer, event, out);
  }
  for (size_t i = first; i < out.size(); ++i) out[i].insert(0, node_channel_prefix_);
}

InterestSync::Stats InterestSync::stats() const {
  Stats s;
  s.peers = peers_.load(std::memory_order_relaxed);
  s.terms = terms_.load(std::memory_order_relaxed);
  s.reference_mode = reference_mode();
  s.interest_reads = interest_reads_.load(std::memory_order_relaxed);
  s.notes_refused = notes_refused_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace siomq::cluster
