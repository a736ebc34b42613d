#include "server/durable_moves.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <set>
#include <utility>

#include "broker/broker.h"
#include "cluster/durable_homes.h"
#include "net/engine_server.h"
#include "store/backend.h"
#include "surfaces/tyo_mq/context.h"
#include "surfaces/tyo_mq/stored_subscription.h"
#include "wire/log_text.h"
#include "wire/thread_role.h"

namespace siomq::server {

namespace asio = boost::asio;
using Moved = broker::DurableQueues::Moved;

namespace {

// How long after a move's first pass its second one runs (a worker hands routed copies to the queues
// within microseconds of routing them; a second is far beyond that).
constexpr std::chrono::milliseconds kStragglers{1000};

// What storing the durable queues' records of `contents` writes (a move's section, a node's own).
std::vector<store::Op> puts_of(const store::Backend::Contents& contents) {
  std::vector<store::Op> ops;
  for (const auto& row : contents.rows) ops.push_back(store::put(row));
  for (const auto& d : contents.dead) ops.push_back(store::put(d));
  for (const auto& rec : contents.subscriptions) ops.push_back(store::put(rec));
  return ops;
}

// What adopting `contents` leaves to erase in its section (their keys there, before they get seqs here).
std::vector<store::Op> erasures_of(const store::Backend::Contents& contents) {
  std::vector<store::Op> ops;
  for (const auto& row : contents.rows) ops.push_back(store::erase_row(row.seq));
  for (const auto& d : contents.dead) ops.push_back(store::erase_dead(d.row.seq));
  for (const auto& rec : contents.subscriptions)
    ops.push_back(store::erase_subscription(store::subscription_id(rec.realm, rec.key, rec.consumer)));
  return ops;
}

}  // namespace

void take_unsectioned(store::Backend& section, store::Backend::Contents& contents, const std::string& url,
                      const std::string& prefix) {
  if (!contents.rows.empty() || !contents.dead.empty() || !contents.subscriptions.empty()) return;
  auto old = store::open_redis(url, prefix);
  auto held = old->load();
  if (!held.stream_messages.empty() || !held.consumers.empty() || !held.directory.empty())
    spdlog::warn("store: {} stream messages, {} consumer states and {} directory entries under '{}' (kept before this "
                 "node was in a cluster) are not read in a cluster on the redis store", held.stream_messages.size(),
                 held.consumers.size(), held.directory.size(), log_text(prefix));
  if (held.rows.empty() && held.dead.empty() && held.subscriptions.empty()) return;
  store::Backend::Contents queues;
  queues.rows = std::move(held.rows);
  queues.dead = std::move(held.dead);
  queues.subscriptions = std::move(held.subscriptions);
  // Written here first, erased there after: a crash in between leaves them in both (read twice at worst).
  if (auto st = section.write(puts_of(queues), true); !st) throw store::StoreError("store: " + st.error().message);
  if (auto st = old->write(erasures_of(queues), true); !st) throw store::StoreError("store: " + st.error().message);
  spdlog::info("store: {} queued messages, {} dead-lettered and {} durable subscriptions moved from '{}' into this "
               "node's section", queues.rows.size(), queues.dead.size(), queues.subscriptions.size(), log_text(prefix));
  contents.rows = std::move(queues.rows);
  contents.dead = std::move(queues.dead);
  contents.subscriptions = std::move(queues.subscriptions);
}

DurableMoves::DurableMoves(std::shared_ptr<surfaces::Context> ctx, std::string store_url, std::string store_prefix)
    : ctx_(std::move(ctx)), store_url_(std::move(store_url)), store_prefix_(std::move(store_prefix)) {
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] {
    become_background_thread("siomq-moves");
    io_.run();
  });
}

DurableMoves::~DurableMoves() { stop(); }

void DurableMoves::stop() {
  if (!thread_.joinable()) return;
  work_.reset();
  io_.stop();
  thread_.join();
}

void DurableMoves::on_note(const std::string& text) {
  auto note = cluster::decode_durable_note(text);
  if (!note || !ctx_->cluster) return;
  const std::string& me = ctx_->cluster->node_id();
  if (note->kind == cluster::DurableNote::Kind::adopt) {
    // Claimed first: a sweep on another node may be taking it too (the offered node was thought gone).
    if (note->to == me) ctx_->cluster->claim_section(note->section);
    return;
  }
  if (note->from != me || note->to == me) return;
  asio::post(io_, [this, realm = note->realm, consumer = note->consumer, to = note->to] { release(realm, consumer, to); });
}

void DurableMoves::reconcile() {
  ctx_->queues.consumers([this](broker::DurableQueues::Consumers all) {
    asio::post(io_, [this, all = std::move(all)] {
      for (const auto& one : all) settle(one.first, one.second);
    });
  });
}

void DurableMoves::settle(const std::string& realm, const std::string& consumer) {
  ctx_->cluster->settle_home(realm, consumer, [this, realm, consumer](std::optional<std::string> home) {
    if (home) asio::post(io_, [this, realm, consumer, to = *home] { release(realm, consumer, to); });
  });
}

void DurableMoves::adopt(const std::string& section) {
  asio::post(io_, [this, section] { take(section); });
}

void DurableMoves::release(const std::string& realm, const std::string& consumer, const std::string& to) {
  bool online = false;
  ctx_->broker.if_realm(realm, [&](broker::RealmRegistry& rm) {
    online = rm.consumer_endpoint(consumer) != nullptr;
    if (!online) rm.take_durable(consumer);
  });
  if (online) {
    // Still (or again) connected here — a half-open connection it left, or it came back: the home is
    // claimed back, so that the node it lands on next asks for the queues again.
    ctx_->cluster->claim_home(realm, consumer);
    return;
  }
  take_queues(realm, consumer, to);
  // A PRODUCE routed to the consumer just before its subscriptions went hands its copies to the queues a
  // moment later (after the realm's lock): they would stay here, stored for nobody. A second pass, once
  // such stragglers are in, moves them on too.
  auto later = std::make_shared<asio::steady_timer>(io_, kStragglers);
  later->async_wait([this, later, realm, consumer, to](const boost::system::error_code& ec) {
    if (ec) return;
    // Unless it subscribed here again meanwhile (its queues are this node's again).
    bool back = false;
    ctx_->broker.if_realm(realm, [&](broker::RealmRegistry& rm) { back = rm.has_durable(consumer); });
    if (!back) take_queues(realm, consumer, to);
  });
}

void DurableMoves::take_queues(const std::string& realm, const std::string& consumer, const std::string& to) {
  ctx_->queues.release(realm, consumer, [this, to](Moved moved) {
    if (moved.rows.empty() && moved.subscriptions.empty()) return;
    asio::post(io_, [this, moved = std::move(moved), to]() mutable { offer(std::move(moved), to); });
  });
}

void DurableMoves::offer(Moved moved, const std::string& to) {
  const std::string section = "move:" + net::random_id();
  Status written = Ok{};
  try {
    written = store::open_redis(store_url_, prefix_of(section))->write(puts_of(moved), true);
  } catch (const store::StoreError& e) {
    written = make_error(e.what());
  }
  if (!written) {
    spdlog::warn("cluster: {} durable messages not moved to node {}: {}; kept here", moved.rows.size(), log_text(to),
                 written.error().message);
    return keep(std::move(moved));
  }
  const size_t count = moved.rows.size();
  ctx_->cluster->offer_section(section, to, [this, moved = std::move(moved), to, count](const Status& s) mutable {
    asio::post(io_, [this, moved = std::move(moved), to, count, s]() mutable {
      if (!s) {
        // Not registered, so nobody adopts it: the section is left over (logged), the queues stay here.
        spdlog::warn("cluster: {} durable messages not moved to node {}: {}; kept here", count, log_text(to), s.error().message);
        return keep(std::move(moved));
      }
      spdlog::info("cluster: {} durable messages moved to node {}", count, log_text(to));
      // The section holds them now; `to`, or whoever adopts the section if `to` is gone, delivers them.
      ctx_->queues.forget(std::move(moved), nullptr);
    });
  });
}

void DurableMoves::keep(Moved moved) {
  // Taken back from their records here (new seqs), the old records erased after the new ones are written.
  Moved back = moved;
  ctx_->queues.adopt(std::move(back), surfaces::read_subscription,
                     [this, moved = std::move(moved)](const Status& s, std::vector<broker::DurableSubscription> subs) mutable {
                       if (!s) return;  // the old records stay, for this node's next start
                       surfaces::restore_subscriptions(ctx_->broker, subs);
                       ctx_->queues.forget(std::move(moved), nullptr);
                     });
}

void DurableMoves::take(const std::string& section) {
  std::shared_ptr<store::Backend> backend;
  store::Backend::Contents contents;
  try {
    backend = store::open_redis(store_url_, prefix_of(section));
    contents = backend->load();
  } catch (const store::StoreError& e) {
    // The lock lapses and the section is swept again.
    return spdlog::warn("cluster: section {} not adopted: {}", log_text(section), e.what());
  }
  // Only the durable queues' families move; a dead node's streams and directories stay in its section.
  store::Backend::Contents queues;
  queues.rows = std::move(contents.rows);
  queues.dead = std::move(contents.dead);
  queues.subscriptions = std::move(contents.subscriptions);
  auto erasures = erasures_of(queues);
  ctx_->queues.adopt(std::move(queues), surfaces::read_subscription,
                     [this, backend, section, erasures = std::move(erasures)](
                         const Status& s, std::vector<broker::DurableSubscription> subs) mutable {
                       if (!s) return spdlog::warn("cluster: section {} not adopted: {}", log_text(section), s.error().message);
                       asio::post(io_, [this, backend, section, erasures = std::move(erasures), subs = std::move(subs)] {
                         surfaces::restore_subscriptions(ctx_->broker, subs);
                         if (auto st = backend->write(erasures, true); !st)
                           spdlog::warn("cluster: section {} adopted but not erased: {}", log_text(section), st.error().message);
                         ctx_->cluster->section_adopted(section);
                         // Each consumer's queues go on to its home when that is another live node.
                         std::set<std::pair<std::string, std::string>> consumers;
                         for (const auto& sub : subs) consumers.emplace(sub.realm, sub.consumer);
                         for (const auto& one : consumers) settle(one.first, one.second);
                       });
                     });
}

}  // namespace siomq::server
