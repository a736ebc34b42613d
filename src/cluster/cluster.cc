#include "cluster/cluster.h"

#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "auth/hmac.h"
#include "cluster/document_changes.h"
#include "cluster/durable_homes.h"
#include "cluster/relay_confirms.h"
#include "cluster/interest_sync.h"
#include "cluster/name_claims.h"
#include "cluster/relay_outbox.h"
#include "cluster/shared_settings.h"
#include "redis/async_client.h"
#include "wire/clock.h"
#include "wire/thread_role.h"

namespace siomq::cluster {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using redis::AsyncClient;
using redis::Value;

namespace {

// What may wait for Redis (relayed messages in the outbox, notes, commands unanswered) before new ones
// are dropped: a stalled Redis must not grow this node's memory without bound.
constexpr size_t kMaxOutboxEntries = RelayOutbox::kMaxEntries;
constexpr size_t kMaxUnansweredCommands = 100'000;
constexpr auto kConnectTimeout = 2000ms;
constexpr auto kHealthInterval = 1000ms;
constexpr auto kPingDeadline = 3000ms;
constexpr auto kFirstRetry = 250ms;
constexpr auto kMaxRetry = 2000ms;
// A claimed nonce lives as long as a proof could still be accepted (±5 min), twice over (§8.1).
constexpr const char* kNonceTtlMs = "600000";
// Document changes waiting their turn on this node, and how often one is tried against other nodes'.

// The settings document, its revision and the change note in one step, so that whatever this node
// publishes after a settings change (a decided enrolment request) reaches peers after the change's note.
constexpr const char* kPublishSettingsScript =
    "redis.call('SET', KEYS[1], ARGV[1]) "
    "local rev = redis.call('INCR', KEYS[2]) "
    "redis.call('PUBLISH', KEYS[3], '{\"revision\":' .. rev .. ARGV[2]) "
    "return rev";

Error unavailable() { return make_error("the cluster's store (redis) is unavailable; retry later", 503); }

// A confirmed message the relay dropped (Redis away, the outbox full): the copies other nodes would have
// stored are not, and the publisher is told so rather than given a confirm that covers less than it says.
Error not_relayed() {
  return make_error("not relayed to the other nodes (the cluster's redis is away or too slow); retry later", 503);
}

}  // namespace

class Cluster::Node {
 public:
  Node(ClusterConfig& config, Handlers handlers, size_t max_relayed_bytes, broker::InterestLedger* ledger)
      : config_(config),
        handlers_(std::move(handlers)),
        max_relayed_bytes_(max_relayed_bytes),
        ledger_(ledger),
        guard_(io_.get_executor()),
        retry_timer_(io_),
        health_timer_(io_),
        interest_(io_, config_, ledger,
                  [this](std::vector<std::string> args, AsyncClient::ReplyHandler h) { command(args, std::move(h)); }),
        names_(config_, [this](std::vector<std::string> args, AsyncClient::ReplyHandler h) { command(args, std::move(h)); },
               [this](const std::string& realm, const std::string& name) {
                 if (handlers_.name_lost) handlers_.name_lost(realm, name);
               }),
        homes_(io_, config_, [this](std::vector<std::string> args, AsyncClient::ReplyHandler h) { command(args, std::move(h)); },
               [this] { return state_ == State::up; },
               [this](const std::string& section) {
                 if (handlers_.adopt_section) handlers_.adopt_section(section);
               }) {
    messages_channel_ = config_.prefix + ":messages";
    settings_channel_ = config_.prefix + ":settings:changed";
    // A subscription made or dropped on a worker wakes this thread once per burst.
    if (ledger_) ledger_->set_wake([this] { asio::post(io_, [this] { interest_.wake(); }); });
    interest_.on_heartbeat([this](bool lease_kept) {
      names_.heartbeat(lease_kept);
      if (config_.durable_homes) homes_.sweep();
    });
  }

  bool start(std::chrono::milliseconds wait) {
    auto url = redis::parse_url(config_.redis_url);
    if (!url) throw std::runtime_error("cluster: " + url.error().message);
    url_ = *url;
    thread_ = std::thread([this] {
      become_background_thread("siomq-cluster");
      io_.run();
    });
    asio::post(io_, [this] { connect(); });
    std::unique_lock lock(sync_mu_);
    sync_cv_.wait_for(lock, wait, [this] { return synced_once_; });
    return up_.load(std::memory_order_relaxed);
  }

  void stop() {
    // The handlers hold the surfaces' context, which holds this cluster: dropping them once the thread
    // is gone breaks that cycle (else the whole node leaks at exit).
    if (ledger_) ledger_->set_wake(nullptr);
    if (!thread_.joinable()) return void(handlers_ = {});
    asio::post(io_, [this] {
      stopping_ = true;
      // Whoever waits on this node's Redis hears no, as in an outage: publishers waiting for the other
      // nodes' confirms, queued relays with a confirm, document changes (enrolment, shared keys).
      state_ = State::down;
      up_.store(false, std::memory_order_relaxed);
      for (auto& m : outbox_.take()) {
        if (m.confirmed) m.confirmed(0, not_relayed());
      }
      confirms_.fail_all(make_error("the node stopped before the other nodes confirmed their copies; they may be stored", 503));
      changes_.fail_all(make_error("the node is stopping; retry on another node", 503));
      interest_.lost();
      retry_timer_.cancel();
      health_timer_.cancel();
      confirm_timer_.cancel();
      if (cmd_) cmd_->close();
      if (sub_) sub_->close();
      cmd_.reset();
      sub_.reset();
      guard_.reset();
      // What is still queued (replies failed by the close, drains, wakes) is dropped rather than run: the
      // waiting callers were answered above, and a handler that arms something again must not hold the
      // shutdown (a full CI run once saw the shutdown stuck here under TSan, not reproduced in 36 runs).
      io_.stop();
    });
    thread_.join();
    handlers_ = {};
  }

  bool relay(RelayedMessage m) {
    m.node_id = config_.node_id;
    auto confirmed = std::move(m.confirmed);
    if (confirmed) m.confirm = next_confirm_.fetch_add(1, std::memory_order_relaxed);
    std::vector<Outgoing> outs;
    outs.push_back(Outgoing{m.realm, m.producer.value_or("ANONYMOUS"), m.event, m.broadcast, encode_relay(m),
                            std::move(m.group_picks), {}, false, m.confirm, confirmed});
    if (enqueue(std::move(outs))) return true;
    if (confirmed) confirmed(0, not_relayed());
    return false;
  }

  void answer_relayed(const std::string& origin, uint64_t confirm, size_t stored, const Status& status) {
    RelayAnswer a{config_.node_id, confirm, stored, status ? std::nullopt : std::optional<std::string>(status.error().message)};
    asio::post(io_, [this, channel = config_.prefix + ":node:" + origin, text = encode_relay_answer(a)]() mutable {
      if (state_ == State::up) command({"PUBLISH", std::move(channel), std::move(text)}, [](Result<Value>) {});
    });
  }

  // Bus texts go to the nodes the publisher picked (it holds the bus directory), through the same outbox
  // and bounds as tyo-mq's relayed messages.
  bool relay_bus(std::vector<std::pair<std::string, std::string>> texts) {
    std::vector<Outgoing> outs(texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      outs[i].channel = config_.prefix + ":node:" + texts[i].first;
      outs[i].text = std::move(texts[i].second);
      outs[i].counted = i == 0;
    }
    return enqueue(std::move(outs));
  }

  std::shared_ptr<const broker::RemoteBus> remote_bus() const { return interest_.remote_bus(); }


  void publish_settings(std::string document) {
    asio::post(io_, [this, document = std::move(document)]() mutable {
      pending_settings_ = std::move(document);
      if (state_ == State::up) publish_pending_settings();
    });
  }

  void claim_nonce(const std::string& nonce, std::function<void(const Status&)> done) {
    asio::post(io_, [this, key = config_.prefix + ":nonce:" + nonce, done = std::move(done)]() mutable {
      if (state_ != State::up) return done(unavailable());
      command({"SET", key, "1", "NX", "PX", kNonceTtlMs}, [done = std::move(done)](Result<Value> r) {
        if (!r || r->kind == Value::Kind::error) return done(unavailable());
        if (r->is_ok()) return done(Ok{});
        done(make_error("Manager proof nonce was already used", 401));
      });
    });
  }

  void claim_name(const std::string& realm, const std::string& name, std::function<void(const Status&)> done) {
    asio::post(io_, [this, realm, name, done = std::move(done)]() mutable {
      names_.claim(realm, name, state_ == State::up, std::move(done));
    });
  }

  void release_name(const std::string& realm, const std::string& name) {
    asio::post(io_, [this, realm, name] { names_.release(realm, name, state_ == State::up); });
  }

  DurableHomes& homes() { return homes_; }

  void read_document(const std::string& name, Link::Read done) {
    asio::post(io_, [this, key = config_.prefix + ":" + name, done = std::move(done)]() mutable {
      if (state_ != State::up) return done(unavailable());
      command({"GET", key}, [done = std::move(done)](Result<Value> r) {
        if (!r || (r->kind != Value::Kind::nil && r->kind != Value::Kind::string)) return done(unavailable());
        done(r->kind == Value::Kind::nil ? std::nullopt : std::optional<std::string>(std::move(r->text)));
      });
    });
  }

  void change_document(const std::string& name, Link::Change change, std::function<void(const Status&)> done) {
    asio::post(io_, [this, key = config_.prefix + ":" + name, change = std::move(change), done = std::move(done)]() mutable {
      changes_.change(std::move(key), std::move(change), std::move(done));
    });
  }

  // Notes are bounded as relayed messages are: past kMaxOutboxEntries waiting for this thread, or with
  // Redis too slow to answer, they are dropped (counted with the relay's).
  void publish(const std::string& channel, std::string text) {
    if (notes_waiting_.fetch_add(1, std::memory_order_relaxed) >= kMaxOutboxEntries) {
      notes_waiting_.fetch_sub(1, std::memory_order_relaxed);
      relay_dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    asio::post(io_, [this, channel = config_.prefix + ":" + channel, text = std::move(text)]() mutable {
      notes_waiting_.fetch_sub(1, std::memory_order_relaxed);
      if (state_ != State::up) return;
      if (unanswered_ >= kMaxUnansweredCommands) return void(relay_dropped_.fetch_add(1, std::memory_order_relaxed));
      command({"PUBLISH", channel, std::move(text)}, [](Result<Value>) {});
    });
  }

  // The nodes that relayed requests here, by inbox token (Link::inbox_sender): at most kMaxSenders, a
  // node's id once (the ids of a cluster are few; a peer making up ids fills it, and then only the
  // directory answers, as it does once a node has been read).
  static constexpr size_t kMaxSenders = 1024;
  void note_sender(const std::string& node) {
    std::string token = broker::inbox_token(node);
    std::lock_guard lock(senders_mu_);
    if (senders_.size() < kMaxSenders) senders_.emplace(std::move(token), node);
  }
  std::optional<std::string> inbox_sender(std::string_view token) const {
    std::lock_guard lock(senders_mu_);
    auto it = senders_.find(std::string(token));
    if (it == senders_.end()) return std::nullopt;
    return it->second;
  }

  // Past half its bounds: a turn given to another node would likely be dropped on the way, so each node
  // keeps its groups' turns meanwhile.
  bool relay_backed_up() const {
    return outbox_.entries() > kMaxOutboxEntries / 2 ||
           unanswered_seen_.load(std::memory_order_relaxed) > kMaxUnansweredCommands / 2;
  }

  std::shared_ptr<const broker::RemoteGroups> remote_groups() const {
    return relay_backed_up() ? nullptr : interest_.remote_groups();
  }

  Stats stats() const {
    Stats s;
    s.connected = up_.load(std::memory_order_relaxed);
    s.relayed_out = relayed_out_.load(std::memory_order_relaxed);
    s.relayed_in = relayed_in_.load(std::memory_order_relaxed);
    s.relay_dropped = relay_dropped_.load(std::memory_order_relaxed);
    s.relay_refused = relay_refused_.load(std::memory_order_relaxed);
    s.outages = outages_.load(std::memory_order_relaxed);
    s.relay_unwanted = relay_unwanted_.load(std::memory_order_relaxed);
    InterestSync::Stats i = interest_.stats();
    s.peers = i.peers;
    s.interest_terms = i.terms;
    s.reference_mode = i.reference_mode;
    return s;
  }

 private:
  enum class State { down, connecting, up };

  // Both connections, then the subscriptions, then the settings sync: only then is the node "up".
  void connect() {
    if (stopping_) return;
    state_ = State::connecting;
    ++generation_;
    const uint64_t gen = generation_;
    auto both_ready = std::make_shared<int>(0);
    auto ready = [this, gen, both_ready](const Status& s) {
      if (gen != generation_ || stopping_) return;
      if (!s) return outage(s.error().message);
      if (++*both_ready == 2) subscribe(gen);
    };
    cmd_ = AsyncClient::connect(io_, url_, "siomq-cluster-" + config_.node_id, kConnectTimeout, ready);
    sub_ = AsyncClient::connect(io_, url_, "siomq-cluster-sub-" + config_.node_id, kConnectTimeout, ready);
    auto down = [this, gen](const std::string& why) {
      if (gen == generation_) outage(why);
    };
    cmd_->on_down(down);
    sub_->on_down(down);
  }

  void subscribe(uint64_t gen) {
    std::vector<std::string> channels{messages_channel_, settings_channel_, interest_.relay_channel(),
                                      interest_.note_channel()};
    for (const auto& c : handlers_.note_channels) channels.push_back(config_.prefix + ":" + c);
    sub_->subscribe(
        std::move(channels),
        [this](std::string_view channel, std::string_view body) { on_message(channel, body); },
        [this, gen](const Status& s) {
          if (gen != generation_ || stopping_) return;
          if (!s) return outage(s.error().message);
          sync_settings(gen);
        });
  }

  // After (re)connecting: a document changed here while Redis was away wins (last writer); else the
  // cluster's is adopted, or ours published when the cluster has none.
  void sync_settings(uint64_t gen) {
    command({"GET", config_.prefix + ":settings"}, [this, gen](Result<Value> r) {
      if (gen != generation_ || stopping_) return;
      if (!r || r->kind == Value::Kind::error) return outage(r ? r->text : r.error().message);
      now_up();
      if (pending_settings_) {
        publish_pending_settings();
      } else if (auto shared = r->kind == Value::Kind::string ? decode_shared_settings(r->text) : std::nullopt) {
        if (shared->node_id != config_.node_id) adopt(shared->document);
      } else if (handlers_.local_settings) {
        pending_settings_ = handlers_.local_settings();
        publish_pending_settings();
      }
      interest_.joined();
      names_.joined();
      mark_synced();
      if (handlers_.joined) handlers_.joined();
    });
  }

  void now_up() {
    state_ = State::up;
    up_.store(true, std::memory_order_relaxed);
    backoff_ = kFirstRetry;
    if (in_outage_) spdlog::info("cluster: redis at {} is back; node {} rejoined", url_.where(), config_.node_id);
    else spdlog::info("cluster: node {} joined through redis at {} (prefix {})", config_.node_id, url_.where(), config_.prefix);
    in_outage_ = false;
    arm_health();
  }

  void mark_synced() {
    std::lock_guard lock(sync_mu_);
    synced_once_ = true;
    sync_cv_.notify_all();
  }

  // Redis went away (or never came): drop both connections, retry with backoff, say so once.
  void outage(const std::string& why) {
    if (stopping_ || state_ == State::down) return;
    const bool was_up = state_ == State::up;
    state_ = State::down;
    up_.store(false, std::memory_order_relaxed);
    ++generation_;
    if (!in_outage_) {
      in_outage_ = true;
      outages_.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("cluster: redis at {} {}: {}; serving local clients only, retrying", url_.where(),
                   was_up ? "lost" : "unreachable", why);
    }
    if (cmd_) cmd_->close();
    if (sub_) sub_->close();
    cmd_.reset();
    sub_.reset();
    health_timer_.cancel();
    interest_.lost();
    ping_outstanding_ = false;
    unanswered_ = 0;
    // Dropped, not queued; a publisher waiting on them hears of what this node stored.
    auto dropped = outbox_.take();
    relay_dropped_.fetch_add(dropped.size(), std::memory_order_relaxed);
    for (auto& m : dropped) {
      if (m.confirmed) m.confirmed(0, not_relayed());
    }
    confirms_.fail_all(make_error("redis was lost before the other nodes confirmed their copies; they may be stored", 503));
    unanswered_seen_.store(0, std::memory_order_relaxed);
    // Startup must not wait out its whole budget when Redis is down: the node serves its own settings.
    mark_synced();
    retry_timer_.expires_after(backoff_);
    backoff_ = std::min<std::chrono::milliseconds>(backoff_ * 2, kMaxRetry);
    retry_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) connect();
    });
  }

  // A PING a second; one unanswered for kPingDeadline means Redis (or the way to it) is gone, even when
  // TCP has not noticed yet (a partition).
  void arm_health() {
    health_timer_.expires_after(kHealthInterval);
    health_timer_.async_wait([this, gen = generation_](const boost::system::error_code& ec) {
      if (ec || stopping_ || gen != generation_ || state_ != State::up) return;
      auto now = std::chrono::steady_clock::now();
      if (ping_outstanding_) {
        if (now - ping_sent_ > kPingDeadline) return outage("no answer to PING within 3 s");
      } else {
        ping_outstanding_ = true;
        ping_sent_ = now;
        command({"PING"}, [this, gen](Result<Value>) {
          if (gen == generation_) ping_outstanding_ = false;
        });
      }
      arm_health();
    });
  }

  void command(const std::vector<std::string>& args, AsyncClient::ReplyHandler h) {
    if (!cmd_) return h(make_error("redis is not connected", 503));
    unanswered_seen_.store(++unanswered_, std::memory_order_relaxed);
    cmd_->command(args, [this, gen = generation_, h = std::move(h)](Result<Value> r) {
      if (gen == generation_ && unanswered_ > 0) unanswered_seen_.store(--unanswered_, std::memory_order_relaxed);
      h(std::move(r));
    });
  }

  // Each message to the nodes that want it (cluster/interest_sync.h), or to none.
  void drain() {
    std::vector<Outgoing> batch = outbox_.take();
    std::vector<std::string> channels;
    for (auto& m : batch) {
      if (state_ != State::up || unanswered_ >= kMaxUnansweredCommands) {
        relay_dropped_.fetch_add(1, std::memory_order_relaxed);
        if (m.confirmed) m.confirmed(0, not_relayed());
        continue;
      }
      if (!m.channel.empty()) {  // a bus text, for the node its publisher picked
        if (m.counted) relayed_out_.fetch_add(1, std::memory_order_relaxed);
        command({"PUBLISH", std::move(m.channel), std::move(m.text)}, [](Result<Value>) {});
        continue;
      }
      channels.clear();
      interest_.route(m.realm, m.producer, m.event, m.broadcast, channels);
      // A node given a group's turn gets its own text, naming its groups (first, so it is sent once) —
      // unless a reference node came meanwhile: one text on <c>:messages then, and the turns are lost.
      if (std::find(channels.begin(), channels.end(), messages_channel_) != channels.end()) {
        if (!m.picks.empty()) relay_dropped_.fetch_add(1, std::memory_order_relaxed);
        m.picks.clear();
      }
      std::set<std::string> answering;  // the nodes whose answer a waiting publisher needs
      for (const auto& [channel, groups] : group_turns(m.picks)) {
        std::erase(channels, channel);
        command({"PUBLISH", channel, with_groups(m.text, groups)}, [](Result<Value>) {});
        if (m.confirmed) answering.insert(node_of_channel(channel));
      }
      if (channels.empty() && m.picks.empty()) {
        relay_unwanted_.fetch_add(1, std::memory_order_relaxed);
        if (m.confirmed) m.confirmed(0, Ok{});
        continue;
      }
      if (m.confirmed) {
        // A reference node stores nothing for us and answers nothing: on <c>:messages no answer is awaited.
        const bool reference = std::find(channels.begin(), channels.end(), messages_channel_) != channels.end();
        for (const auto& c : channels) {
          if (!reference) answering.insert(node_of_channel(c));
        }
        confirms_.expect(m.confirm, reference ? std::set<std::string>{} : std::move(answering), std::move(m.confirmed),
                         std::chrono::steady_clock::now());
        arm_confirms();
      }
      relayed_out_.fetch_add(1, std::memory_order_relaxed);
      for (size_t i = 0; i < channels.size(); ++i) {
        std::string text = i + 1 == channels.size() ? std::move(m.text) : m.text;
        command({"PUBLISH", std::move(channels[i]), std::move(text)}, [](Result<Value>) {});
      }
    }
  }

  void publish_pending_settings() {
    if (!pending_settings_) return;
    std::string doc = encode_shared_settings(*pending_settings_, config_.node_id, unix_ms());
    pending_settings_.reset();
    const std::string& prefix = config_.prefix;
    command({"EVAL", kPublishSettingsScript, "3", prefix + ":settings", prefix + ":settings:rev", settings_channel_,
             std::move(doc), settings_note_tail(config_.node_id)},
            [](Result<Value> r) {
              if (!r || r->kind != Value::Kind::integer)
                spdlog::warn("cluster: settings not published: {}", r ? r->text : r.error().message);
            });
  }

  void adopt(const std::string& document) {
    if (handlers_.adopt_settings) handlers_.adopt_settings(document);
  }

  // The node id of one of the nodes' relay channels (<c>:node:<id>).
  std::string node_of_channel(std::string_view channel) const {
    return std::string(channel.substr(std::min(channel.size(), config_.prefix.size() + 6)));
  }

  // The confirms waiting for other nodes' answers expire on one timer, armed for the oldest.
  void arm_confirms() {
    auto next = confirms_.next_deadline();
    if (!next || confirms_armed_) return;
    confirms_armed_ = true;
    confirm_timer_.expires_at(*next);
    confirm_timer_.async_wait([this](const boost::system::error_code& ec) {
      confirms_armed_ = false;
      if (ec || stopping_) return;
      confirms_.expire(std::chrono::steady_clock::now());
      arm_confirms();
    });
  }

  void on_message(std::string_view channel, std::string_view body) {
    if (channel == interest_.relay_channel() && is_relay_answer(body)) {
      if (auto a = decode_relay_answer(body)) confirms_.answer(*a);
      else relay_refused_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const bool to_all = channel == messages_channel_;
    if (!to_all && channel == interest_.relay_channel() && is_bus_relay(body)) return on_bus_message(body);
    if (to_all || channel == interest_.relay_channel()) {
      auto m = decode_relay(body, max_relayed_bytes_);
      if (!m) {
        relay_refused_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      if (m->node_id == config_.node_id) return;
      if (to_all) interest_.heard_on_messages(m->node_id);
      relayed_in_.fetch_add(1, std::memory_order_relaxed);
      if (handlers_.message) handlers_.message(*m);
      return;
    }
    if (channel == interest_.note_channel()) return interest_.on_note(body);
    if (channel == settings_channel_) {
      auto by = settings_note_author(body);
      if (!by || *by == config_.node_id) return;
      command({"GET", config_.prefix + ":settings"}, [this](Result<Value> r) {
        if (!r || r->kind != Value::Kind::string) return;
        if (auto shared = decode_shared_settings(r->text); shared && shared->node_id != config_.node_id) adopt(shared->document);
      });
      return;
    }
    // A note: handed over after a round trip, so that what was sent before it (the GET of a changed
    // settings document, just above) has been answered and applied.
    if (!handlers_.note || body.size() > kMaxNoteBytes) return;
    std::string name(channel.substr(std::min(channel.size(), config_.prefix.size() + 1)));
    command({"PING"}, [this, name = std::move(name), text = std::string(body)](Result<Value> r) {
      if (r && handlers_.note) handlers_.note(name, text);
    });
  }

  void on_bus_message(std::string_view body) {
    auto m = decode_bus_relay(body, max_relayed_bytes_);
    if (!m) {
      relay_refused_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    if (m->node_id == config_.node_id) return;
    relayed_in_.fetch_add(1, std::memory_order_relaxed);
    if (!m->message.reply.empty()) note_sender(m->node_id);
    if (handlers_.bus_message) handlers_.bus_message(*m);
  }

  // Into the outbox, all or none: false (counted as dropped) while Redis is away or past its bounds.
  bool enqueue(std::vector<Outgoing> outs) {
    if (outs.empty()) return true;
    auto pushed = up_.load(std::memory_order_relaxed) ? outbox_.push(std::move(outs)) : RelayOutbox::Pushed::refused;
    if (pushed == RelayOutbox::Pushed::refused) {
      relay_dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    if (pushed == RelayOutbox::Pushed::queued_wake) asio::post(io_, [this] { drain(); });
    return true;
  }

  // Each picked node's channel and the groups whose turn it got.
  std::map<std::string, std::vector<std::string>> group_turns(const std::vector<broker::RemoteGroupPick>& picks) {
    // A node's group names take at most 10 KiB (60 KiB escaped, at worst) of its text: a receiver reads a
    // relayed text up to the largest message plus 64 KiB. Past that, or kMaxRelayedGroups, the turns are
    // lost (counted).
    constexpr size_t kMaxGroupBytes = 10 * 1024;
    std::map<std::string, std::pair<std::vector<std::string>, size_t>> turns;
    for (const auto& p : picks) {
      auto& [groups, bytes] = turns[config_.prefix + ":node:" + p.node];
      if (groups.size() >= kMaxRelayedGroups || bytes + p.group.size() > kMaxGroupBytes) {
        relay_dropped_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      groups.push_back(p.group);
      bytes += p.group.size();
    }
    std::map<std::string, std::vector<std::string>> out;
    for (auto& [channel, groups] : turns) {
      if (!groups.first.empty()) out.emplace(channel, std::move(groups.first));
    }
    return out;
  }

  ClusterConfig& config_;
  Handlers handlers_;
  const size_t max_relayed_bytes_;
  broker::InterestLedger* const ledger_;
  redis::Url url_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
  // Cluster thread only:
  State state_ = State::down;
  uint64_t generation_ = 0;  // bumped per connection attempt: callbacks of an older one are ignored
  bool stopping_ = false;
  bool in_outage_ = false;
  std::chrono::milliseconds backoff_ = kFirstRetry;
  std::shared_ptr<AsyncClient> cmd_, sub_;
  asio::steady_timer retry_timer_, health_timer_;
  bool ping_outstanding_ = false;
  std::chrono::steady_clock::time_point ping_sent_;
  size_t unanswered_ = 0;
  std::optional<std::string> pending_settings_;
  DocumentChanges changes_{io_, [this](std::vector<std::string> args, AsyncClient::ReplyHandler h) { command(args, std::move(h)); },
                           [this] { return state_ == State::up; }, [this] { return generation_; }};
  std::string messages_channel_, settings_channel_;
  InterestSync interest_;
  NameClaims names_;
  DurableHomes homes_;
  // Publisher confirms waiting for other nodes' answers; they wait a lease and two seconds at most.
  RelayConfirms confirms_{std::chrono::milliseconds(config_.node_lease_ms + 2000)};
  asio::steady_timer confirm_timer_{io_};
  bool confirms_armed_ = false;
  // Tokens start at a random point, so that a late answer meant for this node id's previous process
  // matches none of this one's.
  std::atomic<uint64_t> next_confirm_{(std::random_device{}() | (uint64_t{std::random_device{}()} << 32)) >> 1 | 1};
  // Any thread:
  std::atomic<bool> up_{false};
  RelayOutbox outbox_;
  mutable std::mutex senders_mu_;
  std::unordered_map<std::string, std::string> senders_;  // inbox token -> node id, under senders_mu_
  std::mutex sync_mu_;
  std::condition_variable sync_cv_;
  bool synced_once_ = false;
  std::atomic<uint64_t> relayed_out_{0}, relayed_in_{0}, relay_dropped_{0}, relay_refused_{0}, outages_{0},
      relay_unwanted_{0};
  std::atomic<size_t> notes_waiting_{0};
  std::atomic<size_t> unanswered_seen_{0};  // for relay_backed_up(), from any thread
};

Cluster::Cluster(ClusterConfig config, Handlers handlers, size_t max_relayed_bytes, broker::InterestLedger* ledger)
    : config_(std::move(config)) {
  if (config_.node_id.empty()) config_.node_id = auth::random_hex(8);
  node_ = std::make_unique<Node>(config_, std::move(handlers), max_relayed_bytes, ledger);
}

Cluster::~Cluster() { stop(); }

bool Cluster::start(std::chrono::milliseconds wait) { return node_->start(wait); }
void Cluster::stop() { node_->stop(); }
bool Cluster::relay(RelayedMessage m) { return node_->relay(std::move(m)); }
bool Cluster::relay_bus(std::vector<std::pair<std::string, std::string>> texts) { return node_->relay_bus(std::move(texts)); }
std::shared_ptr<const broker::RemoteBus> Cluster::remote_bus() const { return node_->remote_bus(); }
bool Cluster::relay_backed_up() const { return node_->relay_backed_up(); }
std::optional<std::string> Cluster::inbox_sender(std::string_view token) const { return node_->inbox_sender(token); }
std::shared_ptr<const broker::RemoteGroups> Cluster::remote_groups() const { return node_->remote_groups(); }
void Cluster::publish_settings(std::string document) { node_->publish_settings(std::move(document)); }
void Cluster::claim_nonce(const std::string& nonce, std::function<void(const Status&)> done) {
  node_->claim_nonce(nonce, std::move(done));
}
void Cluster::claim_name(const std::string& realm, const std::string& name, std::function<void(const Status&)> done) {
  node_->claim_name(realm, name, std::move(done));
}
void Cluster::release_name(const std::string& realm, const std::string& name) { node_->release_name(realm, name); }
void Cluster::answer_relayed(const std::string& origin, uint64_t confirm, size_t stored, const Status& status) {
  node_->answer_relayed(origin, confirm, stored, status);
}
void Cluster::claim_home(const std::string& realm, const std::string& consumer) {
  if (config_.durable_homes) node_->homes().claim(realm, consumer);
}
void Cluster::release_home(const std::string& realm, const std::string& consumer) {
  if (config_.durable_homes) node_->homes().release(realm, consumer);
}
void Cluster::settle_home(const std::string& realm, const std::string& consumer,
                          std::function<void(std::optional<std::string>)> done) {
  node_->homes().settle(realm, consumer, std::move(done));
}
void Cluster::offer_section(const std::string& section, const std::string& to, std::function<void(const Status&)> done) {
  node_->homes().offer(section, to, std::move(done));
}
void Cluster::claim_section(const std::string& section) { node_->homes().claim_section(section); }
void Cluster::section_adopted(const std::string& section) { node_->homes().adopted(section); }
void Cluster::read_document(const std::string& name, Read done) { node_->read_document(name, std::move(done)); }
void Cluster::change_document(const std::string& name, Change change, std::function<void(const Status&)> done) {
  node_->change_document(name, std::move(change), std::move(done));
}
void Cluster::publish(const std::string& channel, std::string text) { node_->publish(channel, std::move(text)); }
Cluster::Stats Cluster::stats() const { return node_->stats(); }

}  // namespace siomq::cluster
