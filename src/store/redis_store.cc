// The redis backend: one hash per record family under the key prefix (family.h).
//   <prefix>:rows       field = decimal seq                      → row encoding (rows.h)
//   <prefix>:dead       field = decimal seq                      → dead row encoding
//   <prefix>:subs       field = realm NUL key NUL consumer       → subscription encoding
//   <prefix>:stream     field = stream NUL seq (8 bytes BE)      → stream log message (stream_log.h)
//   <prefix>:consumers  field = stream NUL consumer              → consumer state (consumer_state.h)
//   <prefix>:directory  field = directory NUL realm NUL key      → directory entry (directory.h)
//   <prefix>:quarantine field = "<hash>:<field>" → a record load() could not read, moved aside as it was
// A field is the record's key within its family, except for the families keyed by the row seq, whose
// fields are the decimal seq (as before families existed). Hashes have no order: load() sorts.
// One synchronous hiredis connection, used from the writer thread only. A write is one MULTI … EXEC
// sent as a single pipeline. `sync` adds nothing here: how durable an EXEC is depends on the server's
// own persistence settings (appendonly, appendfsync), which the operator chooses for redis.
#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <optional>
#include <span>
#include <unordered_set>

#include "redis/redis_url.h"
#include "store/backend.h"
#include "store/contents_builder.h"
#include "store/seq_key.h"

namespace siomq::store {
namespace {

struct ContextFree {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Context = std::unique_ptr<redisContext, ContextFree>;
using Reply = std::unique_ptr<redisReply, ReplyFree>;

constexpr timeval kConnectTimeout{5, 0};
// Longer than any one command should take (an EXEC of a large group, an HSCAN page); a server that
// stays silent longer is treated as gone.
constexpr timeval kCommandTimeout{30, 0};
// Fields per HSET / HDEL when consecutive changes to one hash are folded into one command.
constexpr size_t kFieldsPerCommand = 512;

// Queues one command, argument by argument (binary-safe: lengths are passed, nothing is formatted).
void append(redisContext* c, std::span<const std::string_view> args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (auto a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  redisAppendCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lengths.data());
}

// The next reply; null when the connection failed (c->errstr says why).
Reply next_reply(redisContext* c) {
  void* raw = nullptr;
  if (redisGetReply(c, &raw) != REDIS_OK) return nullptr;
  return Reply(static_cast<redisReply*>(raw));
}

Reply command(redisContext* c, std::initializer_list<std::string_view> args) {
  append(c, std::span(args.begin(), args.size()));
  return next_reply(c);
}

std::string_view text(const redisReply* r) { return {r->str ? r->str : "", r->str ? r->len : 0}; }

bool is_error(const redisReply* r) { return r->type == REDIS_REPLY_ERROR; }

// A connected, authenticated context on the URL's database, or why not.
Result<Context> connect(const redis::Url& url) {
  Context c(redisConnectWithTimeout(url.host.c_str(), url.port, kConnectTimeout));
  if (!c) return make_error("out of memory");
  auto where = url.where();
  if (c->err) return make_error("cannot connect to redis at " + where + ": " + c->errstr);
  redisSetTimeout(c.get(), kCommandTimeout);
  redisEnableKeepAlive(c.get());
  auto check = [&](Reply reply, const char* what) -> Status {
    if (!reply) return make_error(std::string("redis at ") + where + ": " + what + ": " + c->errstr);
    if (is_error(reply.get()))
      return make_error(std::string("redis at ") + where + ": " + what + ": " + std::string(text(reply.get())));
    return Ok{};
  };
  if (!url.password.empty()) {
    auto st = url.user.empty() ? check(command(c.get(), {"AUTH", url.password}), "AUTH")
                               : check(command(c.get(), {"AUTH", url.user, url.password}), "AUTH");
    if (!st) return st.error();
  }
  if (url.db != 0) {
    auto st = check(command(c.get(), {"SELECT", std::to_string(url.db)}), "SELECT");
    if (!st) return st.error();
  }
  auto st = check(command(c.get(), {"PING"}), "PING");
  if (!st) return st.error();
  // Named so an operator (or a test) can tell the store's connection in CLIENT LIST; a server that
  // refuses CLIENT (ACLs) works just as well without.
  command(c.get(), {"CLIENT", "SETNAME", "siomq-store-" + std::to_string(::getpid())});
  if (c->err) return make_error("redis at " + where + ": " + c->errstr);
  return c;
}

// The arguments of one command of a pipeline (views of the ops and of the field names).
using Command = std::vector<std::string_view>;

// The record's key of a field of its family's hash; nullopt for a field the family never writes.
std::optional<std::string> key_of_field(Family family, std::string_view field) {
  if (!info(family).keyed_by_row_seq) return std::string(field);
  uint64_t seq = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), seq);
  if (ec != std::errc() || end != field.data() + field.size() || std::to_string(seq) != field) return std::nullopt;
  return seq_key(seq);
}

class RedisStore final : public Backend {
 public:
  RedisStore(redis::Url url, Context c, const std::string& prefix)
      : url_(std::move(url)), c_(std::move(c)), quarantine_(prefix + ":" + std::string(kQuarantineRedisHash)) {
    for (const FamilyInfo& f : kFamilies) hashes_[static_cast<size_t>(f.family)] = prefix + ":" + std::string(f.redis_hash);
  }

  const char* name() const override { return "redis"; }

  Contents load() override {
    if (!c_) {
      auto c = connect(url_);
      if (!c) throw StoreError(c.error().message);
      c_ = std::move(*c);
    }
    ContentsBuilder contents;
    std::vector<std::pair<Family, std::string>> unreadable;  // (family, field), moved after the scans
    for (const FamilyInfo& f : kFamilies) {
      const std::string& hash = hash_of(f.family);
      scan(hash, [&](std::string_view field, std::string_view value) {
        auto key = key_of_field(f.family, field);
        auto why = key ? contents.add(f.family, *key, value) : std::optional<std::string>("not a field of the store");
        if (!why) return;
        if (contents.note_quarantined() <= ContentsBuilder::kQuarantineWarnings)
          spdlog::warn("store (redis): {} field '{}' cannot be read ({}); moved to the quarantine", hash, printable(field), *why);
        unreadable.emplace_back(f.family, std::string(field));
      });
    }
    for (const auto& [family, field] : unreadable) move_to_quarantine(family, field);
    if (contents.quarantined())
      spdlog::warn("store (redis): {} unreadable records moved to {}", contents.quarantined(), quarantine_);
    return std::move(contents).finish();
  }

  // On a lost connection the whole transaction is sent again on a new one. That is safe even when the
  // first EXEC did run: every key ends as the last change of the group to it says, whatever it held.
  Status write(const std::vector<Op>& ops, bool /*sync: see the top of the file*/) override {
    if (ops.empty()) return Ok{};
    bool reconnected = false;
    if (!c_) {
      if (auto st = reconnect(); !st) return st;
      reconnected = true;
    }
    auto st = transact(ops);
    if (st || c_ || reconnected) return st;
    spdlog::warn("store (redis): {}; reconnecting", st.error().message);
    if (auto again = reconnect(); !again) return again;
    return transact(ops);
  }

  BackendStats stats() override {
    // MEMORY USAGE per key walks every field of the hashes; INFO's used_memory is the whole server's,
    // but costs nothing and is what an operator watches anyway.
    BackendStats stats;
    if (!c_) return stats;
    auto reply = command(c_.get(), {"INFO", "memory"});
    if (!reply) {
      c_.reset();
      return stats;
    }
    if (reply->type != REDIS_REPLY_STRING && reply->type != REDIS_REPLY_STATUS) return stats;
    std::string_view info = text(reply.get());
    constexpr std::string_view kField = "used_memory:";
    size_t at = info.starts_with(kField) ? 0 : info.find(std::string("\n").append(kField));
    if (at == std::string_view::npos) return stats;
    at = info.find(':', at) + 1;
    std::from_chars(info.data() + at, info.data() + info.size(), stats.disk_bytes);
    return stats;
  }

 private:
  Status reconnect() {
    c_.reset();
    auto c = connect(url_);
    if (!c) return make_error("redis connection lost; " + c.error().message);
    c_ = std::move(*c);
    return Ok{};
  }

  const std::string& hash_of(Family family) const { return hashes_[static_cast<size_t>(family)]; }

  // HGET, then HSET in the quarantine and HDEL in one transaction: the value moves byte for byte.
  void move_to_quarantine(Family family, const std::string& field) {
    const std::string& hash = hash_of(family);
    auto value = command(c_.get(), {"HGET", hash, field});
    if (!value || value->type != REDIS_REPLY_STRING) throw StoreError("redis: cannot quarantine " + hash + " field " + printable(field));
    const std::string moved = std::string(info(family).redis_hash) + ":" + field;
    const Command set{"HSET", quarantine_, moved, text(value.get())}, del{"HDEL", hash, field};
    if (auto st = run({set, del}); !st) throw StoreError("redis: cannot quarantine: " + st.error().message);
  }

  static std::string printable(std::string_view field) {
    std::string name;
    for (char c : field.substr(0, 200)) name += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '/' : c;
    return name;
  }

  // Consecutive puts (or erases) of one family become one HSET (or HDEL) with many fields, in order, so
  // a put and a later erase of one field keep their order. `fields` holds the field names the commands
  // view that are not the ops' own keys (decimal seqs, quarantine names).
  std::vector<Command> commands(const std::vector<Op>& ops, std::vector<std::string>& fields) const {
    fields.reserve(2 * ops.size());  // never reallocated below: the commands keep views of its strings
    std::vector<Command> out;
    const Op* group = nullptr;  // the op that opened the command being filled; none after a quarantine
    size_t in_command = 0;
    for (const Op& op : ops) {
      const std::string& hash = hash_of(op.family);
      std::string_view field = op.key;
      if (info(op.family).keyed_by_row_seq) field = fields.emplace_back(std::to_string(seq_of_key(op.key).value_or(0)));
      if (op.kind == Op::Kind::quarantine) {
        const std::string& moved = fields.emplace_back(std::string(info(op.family).redis_hash).append(":").append(field));
        out.push_back(Command{"HSET", quarantine_, moved, op.value});
        out.push_back(Command{"HDEL", hash, field});
        group = nullptr;
        continue;
      }
      if (!group || group->family != op.family || group->kind != op.kind || in_command == kFieldsPerCommand) {
        out.push_back(Command{op.kind == Op::Kind::put ? "HSET" : "HDEL", hash});
        group = &op;
        in_command = 0;
      }
      out.back().push_back(field);
      if (op.kind == Op::Kind::put) out.back().push_back(op.value);
      ++in_command;
    }
    return out;
  }

  // MULTI, the commands, EXEC in one pipeline, then every reply read and checked. On a connection
  // failure the context is dropped (c_ becomes null) so the caller can tell it from a refusal.
  Status transact(const std::vector<Op>& ops) {
    std::vector<std::string> fields;
    return run(commands(ops, fields));
  }

  Status run(const std::vector<Command>& cmds) {
    constexpr std::string_view kMulti[] = {"MULTI"}, kExec[] = {"EXEC"};
    append(c_.get(), kMulti);
    for (const auto& cmd : cmds) append(c_.get(), cmd);
    append(c_.get(), kExec);

    std::optional<std::string> refused;
    auto note = [&](std::string why) {
      if (!refused) refused = std::move(why);
    };
    for (size_t i = 0; i < cmds.size() + 2; ++i) {
      Reply reply = next_reply(c_.get());
      if (!reply) {
        std::string why = std::string("redis: ") + c_->errstr;
        c_.reset();
        return make_error(why);
      }
      if (is_error(reply.get())) {
        note("redis refused the write: " + std::string(text(reply.get())));
        continue;
      }
      if (i + 1 < cmds.size() + 2) continue;  // +OK for MULTI, +QUEUED for the commands
      if (reply->type != REDIS_REPLY_ARRAY) {
        note("redis: the transaction was not executed");
        continue;
      }
      // Redis does not roll back a transaction of which a command failed (a key of another type).
      for (size_t k = 0; k < reply->elements; ++k) {
        if (is_error(reply->element[k])) note("redis refused a change: " + std::string(text(reply->element[k])));
      }
    }
    if (refused) return make_error(*refused);
    return Ok{};
  }

  // Calls `each(field, value)` for every field of `hash`, HSCAN page by page. HSCAN may return a field
  // twice (when the hash is rehashed during the scan); `each` sees it once.
  template <class Each>
  void scan(const std::string& hash, Each each) {
    std::unordered_set<std::string> seen;
    std::string cursor = "0";
    do {
      auto reply = command(c_.get(), {"HSCAN", hash, cursor, "COUNT", "1000"});
      if (!reply) {
        std::string why = c_->errstr;
        c_.reset();
        throw StoreError("redis: reading " + hash + " failed: " + why);
      }
      if (is_error(reply.get()))
        throw StoreError("redis: reading " + hash + " failed: " + std::string(text(reply.get())));
      if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 || reply->element[0]->type != REDIS_REPLY_STRING ||
          reply->element[1]->type != REDIS_REPLY_ARRAY || reply->element[1]->elements % 2 != 0)
        throw StoreError("redis: unexpected HSCAN reply for " + hash);
      cursor = text(reply->element[0]);
      const redisReply* page = reply->element[1];
      for (size_t i = 0; i < page->elements; i += 2) {
        if (page->element[i]->type != REDIS_REPLY_STRING || page->element[i + 1]->type != REDIS_REPLY_STRING)
          throw StoreError("redis: unexpected HSCAN reply for " + hash);
        if (seen.emplace(text(page->element[i])).second) each(text(page->element[i]), text(page->element[i + 1]));
      }
    } while (cursor != "0");
  }

  const redis::Url url_;
  Context c_;  // null after a connection failure, until the next write reconnects
  const std::string quarantine_;
  std::array<std::string, kFamilies.size()> hashes_;  // by Family
};

}  // namespace

std::unique_ptr<Backend> open_redis(const std::string& url, const std::string& prefix) {
  auto parsed = redis::parse_url(url);
  if (!parsed) throw StoreError(parsed.error().message);
  auto c = connect(*parsed);
  if (!c) throw StoreError(c.error().message);
  return std::make_unique<RedisStore>(std::move(*parsed), std::move(*c), prefix);
}

}  // namespace siomq::store
