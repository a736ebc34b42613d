#include "tools/bench/load.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "transport/sio_client.h"
#include "tools/bench/histogram.h"
#include "wire/json_text.h"
#include "wire/socketio.h"
#include "wire/subscription_key.h"

namespace siomq::bench {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using client::SioClient;

constexpr size_t kConnectConcurrency = 64;
constexpr size_t kBurst = 256;  // messages per pump turn, before reading again
constexpr std::chrono::milliseconds kSetupWait{2000};

int64_t since(Clock::time_point t0, Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - t0).count();
}

// The server's resident set in KiB (VmRSS), 0 when unknown.
long rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

class Load {
 public:
  explicit Load(LoadOptions o) : o_(std::move(o)), ticker_(io_), progress_timer_(io_) {
    client::ClientOptions base;
    base.eio = o_.eio;
    url_ok_ = client::parse_url(o_.url, base);
    base.ca_file = o_.ca_file;
    base_ = base;
    for (const auto& url : o_.consumer_urls) {
      client::ClientOptions more;
      more.eio = o_.eio;
      more.ca_file = o_.ca_file;
      if (!client::parse_url(url, more)) bad_url_ = url;
      consumer_bases_.push_back(more);
    }
    if (o_.scenario == "fanout" || o_.scenario == "latency" || o_.scenario == "chunked") o_.producers = 1;
    if (o_.scenario == "latency" && o_.rate <= 0) o_.rate = 10000;
    if (o_.scenario == "chunked" && o_.size == 64) o_.size = 1024 * 1024;
    // Keep about 16 MiB in flight at most, whatever the message size.
    o_.window = std::max<size_t>(1, std::min(o_.window, (size_t{16} << 20) / std::max<size_t>(o_.size, 1)));
    fanout_ = o_.scenario == "group" ? 1 : std::max(1, o_.consumers);
    // Names of this run only: a durable queue left by an earlier run is not replayed into this one.
    run_id_ = std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch()).count() % 100000000);
  }

  int run() {
    if (!url_ok_) return fail("bad URL " + o_.url);
    if (!bad_url_.empty()) return fail("bad URL " + bad_url_);
    if (o_.scenario == "connections") return run_connections();
    bool known = o_.scenario == "pubsub" || o_.scenario == "fanout" || o_.scenario == "topics" || o_.scenario == "group" ||
                 o_.scenario == "durable" || o_.scenario == "latency" || o_.scenario == "chunked";
    if (!known) return fail("unknown scenario " + o_.scenario);
    connect(static_cast<size_t>(o_.consumers + o_.producers), [this] { setup(); });
    io_.run();
    if (!error_.empty()) return fail(error_);
    report();
    return 0;
  }

 private:
  int fail(const std::string& message) {
    std::cerr << "siomq bench: " << message << "\n";
    return 1;
  }

  // Opens `count` connections, kConnectConcurrency at a time; then `done`.
  // Client i is the i-th consumer (then the producers) whatever order the connections complete in, so
  // that each lands on its own node.
  void connect(size_t count, std::function<void()> done) {
    connect_done_ = std::move(done);
    connect_left_ = count;
    clients_.assign(count, nullptr);
    for (size_t i = 0; i < std::min(count, kConnectConcurrency); ++i) connect_next();
  }
  const client::ClientOptions& options_for(size_t i) const {
    bool consumer = i < static_cast<size_t>(o_.consumers) && o_.scenario != "connections";
    return consumer && !consumer_bases_.empty() ? consumer_bases_[i % consumer_bases_.size()] : base_;
  }
  void connect_next() {
    if (connect_started_ >= connect_left_) return;
    const size_t index = connect_started_++;
    auto c = std::make_shared<SioClient>(io_, options_for(index));
    c->on_close([this](std::string_view reason) {
      if (!stopping_ && error_.empty()) stop_with("a connection closed: " + std::string(reason));
    });
    c->connect([this, c, index](std::optional<std::string> failure) {
      if (failure) return stop_with("connect: " + *failure);
      clients_[index] = c;
      if (++connected_ == connect_left_) {
        if (auto done = std::move(connect_done_)) done();
        return;
      }
      connect_next();
    });
  }
  void stop_with(std::string error) {
    if (error_.empty()) error_ = std::move(error);
    finish();
  }

  // Registrations and subscriptions; a PING from every client makes sure the server has them all.
  void setup() {
    consumers_.assign(clients_.begin(), clients_.begin() + o_.consumers);
    producers_.assign(clients_.begin() + o_.consumers, clients_.end());
    for (int j = 0; j < o_.producers; ++j) {
      producers_[static_cast<size_t>(j)]->emit("PRODUCER", "{\"name\":" + json_text::quoted(producer_name(j)) + "}");
      producers_[static_cast<size_t>(j)]->on("ERROR", [this](const SioClient::Incoming& in) { note_error(in); });
    }
    for (int i = 0; i < o_.consumers; ++i) {
      auto& c = consumers_[static_cast<size_t>(i)];
      std::string name = "bench-c" + std::to_string(i) + "-" + run_id_;
      c->emit("CONSUMER", "{\"name\":" + json_text::quoted(name) + "}");
      c->on("ERROR", [this](const SioClient::Incoming& in) { note_error(in); });
      if (o_.scenario == "topics") {
        subscribe(*c, name, "TYO-MQ-ALL", "bench/+/x", ",\"mode\":\"topic\"");
      } else {
        for (int j = 0; j < o_.producers; ++j) {
          std::string extra;
          if (o_.scenario == "group") extra = ",\"group\":" + json_text::quoted("bench-g-" + run_id_);
          if (o_.scenario == "durable") extra = ",\"durable\":true,\"ack\":true,\"consumer_id\":" + json_text::quoted(name);
          subscribe(*c, name, producer_name(j), "bench", extra);
        }
      }
      if (o_.scenario == "durable") {
        c->on("ACK_OK", [this](const SioClient::Incoming&) {
          ++acked_;
          last_delivery_ = Clock::now();
          if (sending_done_ && complete()) finish();
        });
        c->on("ACK_FAIL", [this](const SioClient::Incoming& in) { note_error(in); });
      }
      if (o_.scenario == "chunked") {
        c->on("CONSUME_CHUNK", [this](const SioClient::Incoming& in) {
          // The last piece of a transfer completes a delivery.
          auto idx = in.json.find("\"index\":");
          auto tot = in.json.find("\"total\":");
          if (idx == std::string::npos || tot == std::string::npos) return;
          long index = std::strtol(in.json.c_str() + idx + 8, nullptr, 10);
          long total = std::strtol(in.json.c_str() + tot + 8, nullptr, 10);
          if (index == total - 1) delivered(in);
        });
      }
    }
    for (auto& c : clients_) {
      c->emit("PING", "{}", [this](const SioClient::Incoming&) {
        if (++pongs_ == clients_.size()) warm_up_or_start();
      });
    }
    // A server without PING (tyo-mq@0.2.14 has none) never answers: then the setup gets a fixed time.
    ticker_.expires_after(kSetupWait);
    ticker_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || started_ || stopping_) return;
      if (o_.progress) std::cerr << "siomq bench: no answer to PING; started after " << kSetupWait.count() << " ms\n";
      start();
    });
  }

  std::string producer_name(int j) const { return "bench-p" + std::to_string(j) + "-" + run_id_; }

  // Across the nodes of a cluster a subscription reaches the producers' node a round trip through Redis
  // after its PING answered (docs/scale-out.md): until every consumer has had one, the producers send a
  // warm-up message every 20 ms, not counted. Without it the first messages would be lost and, at the
  // maximum rate, hold the window for good. Given up after 5 s (a group across nodes reaches only the
  // producers' node's members).
  static constexpr const char* kWarmUp = "\"message\":\"bench-warm-up\"";
  void warm_up_or_start() {
    if (o_.consumer_urls.empty()) return start();
    if (warm_.size() >= consumers_.size() || ++warm_rounds_ > 250) return start();
    for (int j = 0; j < o_.producers; ++j) {
      std::string event = o_.scenario == "topics" ? "\"bench/0/x\"" : "\"bench\"";
      producers_[static_cast<size_t>(j)]->emit(
          "PRODUCE", "{\"event\":" + event + ",\"from\":" + json_text::quoted(producer_name(j)) + ",\"message\":\"bench-warm-up\"}");
    }
    ticker_.expires_after(std::chrono::milliseconds(20));
    ticker_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec && !started_ && !stopping_) warm_up_or_start();
    });
  }
  void warmed(SioClient& c) {
    warm_.insert(&c);
    if (!started_ && warm_.size() >= consumers_.size()) start();
  }

  void subscribe(SioClient& c, const std::string& consumer, const std::string& producer, const std::string& event,
                 const std::string& extra) {
    c.emit("SUBSCRIBE", "{\"event\":" + json_text::quoted(event) + ",\"producer\":" + json_text::quoted(producer) + ",\"consumer\":" +
                            json_text::quoted(consumer) + extra + "}");
    auto handler = [this, &c](const SioClient::Incoming& in) {
      if (o_.scenario == "durable") ack(c, in);
      if (in.json.find(kWarmUp) != std::string::npos) return warmed(c);
      delivered(in);
    };
    // tyo-mq delivers on CONSUME-<subscription key>; tyo-mq@0.2.14 on CONSUME-<event> instead. A server
    // uses one of them; a handler per event name, so a consumer of several producers counts once.
    c.on("CONSUME-" + tyo_mq::subscription_key(producer, event), handler);
    if (o_.scenario != "topics") c.on("CONSUME-" + event, handler);
  }

  void ack(SioClient& c, const SioClient::Incoming& in) {
    auto at = in.json.find("\"msgId\":\"");
    if (at == std::string::npos) return;
    auto end = in.json.find('"', at + 9);
    c.emit("ACK", "{\"msgId\":\"" + in.json.substr(at + 9, end - at - 9) + "\"}");
  }

  void note_error(const SioClient::Incoming& in) {
    if (++errors_ <= 3) std::cerr << "siomq bench: server says " << in.event << " " << in.json.substr(0, 200) << "\n";
  }

  void delivered(const SioClient::Incoming& in) {
    Clock::time_point now = Clock::now();
    ++delivered_;
    last_delivery_ = now;
    if (o_.scenario == "latency") {
      // The message starts with the intended send time in ns since the run began.
      auto at = in.json.find("\"message\":\"");
      if (at != std::string::npos) {
        int64_t intended = 0;
        const char* p = in.json.c_str() + at + 11;
        std::from_chars(p, in.json.c_str() + in.json.size(), intended);
        latency_.record(since(start_, now) - intended);
      }
    }
    if (!sending_done_ && !pump_scheduled_ && o_.rate <= 0 && outstanding() < o_.window) schedule_pump();
    if (sending_done_ && complete()) finish();
  }

  // Everything sent has arrived everywhere (and, durable, been acknowledged).
  bool complete() const {
    uint64_t expected = sent_ * static_cast<uint64_t>(fanout_);
    return delivered_ >= expected && (o_.scenario != "durable" || acked_ >= expected);
  }

  uint64_t outstanding() const {
    uint64_t f = static_cast<uint64_t>(fanout_);
    return sent_ - std::min(sent_, delivered_ / f);
  }

  void start() {
    if (started_) return;
    started_ = true;
    ticker_.cancel();
    start_ = Clock::now();
    ticker_end_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.duration_s));
    body_ = std::string(o_.size, 'x');
    if (o_.progress) schedule_progress();
    if (o_.rate > 0) tick();
    else schedule_pump();
  }

  std::string produce_args(int j, int64_t intended_ns) {
    std::string args = "{\"event\":";
    args += o_.scenario == "topics" ? json_text::quoted("bench/" + std::to_string(sent_ % 8) + "/x") : "\"bench\"";
    args += ",\"from\":" + json_text::quoted(producer_name(j)) + ",\"message\":\"";
    if (o_.scenario == "latency") {
      std::string stamp = std::to_string(intended_ns) + ":";
      args += stamp;
      if (body_.size() > stamp.size()) args.append(body_, 0, body_.size() - stamp.size());
    } else {
      args += body_;
    }
    args += "\"}";
    return args;
  }

  void send_one(int64_t intended_ns) {
    int j = static_cast<int>(sent_ % static_cast<uint64_t>(o_.producers));
    if (o_.scenario == "chunked") send_chunked(j, produce_args(j, intended_ns));
    else producers_[static_cast<size_t>(j)]->emit("PRODUCE", produce_args(j, intended_ns));
    ++sent_;
  }

  // As tyo-mq clients send a message over 256 KiB: PRODUCE_CHUNK pieces of its JSON text (one message
  // of a megabyte would pass the server's max_payload, 1 MiB by default).
  void send_chunked(int j, const std::string& text) {
    constexpr size_t kPiece = 256 * 1024;
    const size_t total = (text.size() + kPiece - 1) / kPiece;
    const std::string id = json_text::quoted("bench-" + std::to_string(j) + "-" + std::to_string(sent_));
    for (size_t i = 0; i < total; ++i) {
      producers_[static_cast<size_t>(j)]->emit(
          "PRODUCE_CHUNK", "{\"transferId\":" + id + ",\"index\":" + std::to_string(i) + ",\"total\":" +
                               std::to_string(total) + ",\"data\":" + json_text::quoted(std::string_view(text).substr(i * kPiece, kPiece)) + "}");
    }
  }

  void schedule_pump() {
    pump_scheduled_ = true;
    asio::post(io_, [this] { pump(); });
  }

  // As fast as the window allows: a burst, then the event loop reads before the next one.
  void pump() {
    pump_scheduled_ = false;
    if (sending_done_) return;
    if (Clock::now() >= ticker_end_) return end_sending();
    for (size_t k = 0; k < kBurst && outstanding() < o_.window; ++k) send_one(0);
    if (outstanding() < o_.window) schedule_pump();
  }

  // A fixed rate: what is due by now, each stamped with its intended time; then a timer for the next
  // message's own time (timerfd: microsecond resolution), so the generator adds no batching delay.
  void tick() {
    Clock::time_point now = Clock::now();
    if (now >= ticker_end_) return end_sending();
    double elapsed = std::chrono::duration<double>(now - start_).count();
    auto due = static_cast<uint64_t>(elapsed * o_.rate) + 1;
    while (sent_ < due) send_one(static_cast<int64_t>(static_cast<double>(sent_) / o_.rate * 1e9));
    auto next = start_ + std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(sent_) / o_.rate * 1e9));
    ticker_.expires_at(next);
    ticker_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) tick();
    });
  }

  void end_sending() {
    sending_done_ = true;
    send_end_ = Clock::now();
    if (complete()) return finish();
    // What is still on its way gets a few seconds.
    ticker_.expires_after(std::chrono::seconds(5));
    ticker_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) finish();
    });
  }

  void schedule_progress() {
    progress_timer_.expires_after(std::chrono::seconds(1));
    progress_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || stopping_) return;
      double t = std::chrono::duration<double>(Clock::now() - start_).count();
      std::fprintf(stderr, "  %5.1f s  sent %llu  delivered %llu  (%.0f deliveries/s)\n", t,
                   static_cast<unsigned long long>(sent_), static_cast<unsigned long long>(delivered_),
                   static_cast<double>(delivered_ - last_progress_delivered_));
      last_progress_delivered_ = delivered_;
      schedule_progress();
    });
  }

  void finish() {
    if (stopping_) return;
    stopping_ = true;
    if (send_end_ == Clock::time_point{}) send_end_ = Clock::now();
    ticker_.cancel();
    progress_timer_.cancel();
    for (auto& c : clients_) {
      if (c) c->close();
    }
  }

  void report() {
    double send_s = std::chrono::duration<double>(send_end_ - start_).count();
    Clock::time_point end = std::max(last_delivery_, start_);
    double deliver_s = std::chrono::duration<double>(end - start_).count();
    uint64_t expected = sent_ * static_cast<uint64_t>(fanout_);
    double msgs_per_s = send_s > 0 ? static_cast<double>(sent_) / send_s : 0;
    double deliveries_per_s = deliver_s > 0 ? static_cast<double>(delivered_) / deliver_s : 0;
    auto us = [](int64_t ns) { return static_cast<double>(ns) / 1000.0; };
    if (o_.json) {
      std::printf("{\"scenario\":%s,\"url\":%s,\"consumer_nodes\":%zu,\"eio\":%d,\"producers\":%d,\"consumers\":%d,\"size\":%zu,\"rate\":%.0f,"
                  "\"seconds\":%.3f,\"sent\":%llu,\"delivered\":%llu,\"expected\":%llu,\"lost\":%llu,\"errors\":%llu,"
                  "\"msgs_per_s\":%.0f,\"deliveries_per_s\":%.0f",
                  json_text::quoted(o_.scenario).c_str(), json_text::quoted(o_.url).c_str(),
                  std::max<size_t>(1, o_.consumer_urls.size()), o_.eio, o_.producers, o_.consumers, o_.size, o_.rate, send_s, static_cast<unsigned long long>(sent_), static_cast<unsigned long long>(delivered_),
                  static_cast<unsigned long long>(expected),
                  static_cast<unsigned long long>(expected > delivered_ ? expected - delivered_ : 0),
                  static_cast<unsigned long long>(errors_), msgs_per_s, deliveries_per_s);
      if (o_.scenario == "durable") std::printf(",\"acked\":%llu,\"acked_per_s\":%.0f", static_cast<unsigned long long>(acked_),
                                                deliver_s > 0 ? static_cast<double>(acked_) / deliver_s : 0);
      if (latency_.count())
        std::printf(",\"latency_us\":{\"p50\":%.1f,\"p90\":%.1f,\"p99\":%.1f,\"p999\":%.1f,\"max\":%.1f,\"mean\":%.1f}",
                    us(latency_.quantile(0.5)), us(latency_.quantile(0.9)), us(latency_.quantile(0.99)),
                    us(latency_.quantile(0.999)), us(latency_.max()), latency_.mean() / 1000.0);
      std::printf("}\n");
      return;
    }
    std::printf("scenario      %s (%d producer%s -> %d consumer%s, %zu B, %s, EIO %d)\n", o_.scenario.c_str(),
                o_.producers, o_.producers == 1 ? "" : "s", o_.consumers, o_.consumers == 1 ? "" : "s", o_.size,
                o_.rate > 0 ? (std::to_string(static_cast<long>(o_.rate)) + " msg/s").c_str() : "max rate", o_.eio);
    std::printf("sent          %llu in %.2f s (%.0f msg/s)\n", static_cast<unsigned long long>(sent_), send_s, msgs_per_s);
    std::printf("delivered     %llu of %llu (%.0f deliveries/s)\n", static_cast<unsigned long long>(delivered_),
                static_cast<unsigned long long>(expected), deliveries_per_s);
    if (o_.scenario == "durable") std::printf("acked         %llu\n", static_cast<unsigned long long>(acked_));
    if (errors_) std::printf("errors        %llu\n", static_cast<unsigned long long>(errors_));
    if (latency_.count())
      std::printf("latency (µs)  p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n", us(latency_.quantile(0.5)),
                  us(latency_.quantile(0.9)), us(latency_.quantile(0.99)), us(latency_.quantile(0.999)), us(latency_.max()));
  }

  // N idle connections; the server's RSS before and after, per connection.
  int run_connections() {
    long before = o_.server_pid ? rss_kib(o_.server_pid) : 0;
    Clock::time_point t0 = Clock::now();
    connect(static_cast<size_t>(o_.connections), [this] {
      connected_at_ = Clock::now();
      // Let the server settle, then measure and close.
      ticker_.expires_after(std::chrono::seconds(2));
      ticker_.async_wait([this](const boost::system::error_code&) {
        rss_after_ = o_.server_pid ? rss_kib(o_.server_pid) : 0;
        finish();
      });
    });
    io_.run();
    if (!error_.empty()) return fail(error_);
    double secs = std::chrono::duration<double>(connected_at_ - t0).count();
    double per = o_.server_pid && rss_after_ > before ? static_cast<double>(rss_after_ - before) / o_.connections : 0;
    if (o_.json) {
      std::printf("{\"scenario\":\"connections\",\"url\":%s,\"eio\":%d,\"connections\":%d,\"connect_seconds\":%.3f,"
                  "\"connects_per_s\":%.0f,\"server_rss_kib_before\":%ld,\"server_rss_kib_after\":%ld,"
                  "\"server_kib_per_connection\":%.2f}\n",
                  json_text::quoted(o_.url).c_str(), o_.eio, o_.connections, secs, secs > 0 ? o_.connections / secs : 0, before,
                  rss_after_, per);
    } else {
      std::printf("connections   %d open in %.2f s (%.0f/s)\n", o_.connections, secs, secs > 0 ? o_.connections / secs : 0);
      if (o_.server_pid)
        std::printf("server RSS    %ld KiB -> %ld KiB: %.2f KiB per connection\n", before, rss_after_, per);
    }
    return 0;
  }

  LoadOptions o_;
  bool url_ok_ = false;
  client::ClientOptions base_;
  std::vector<client::ClientOptions> consumer_bases_;  // --url given more than once: the consumers' nodes
  std::string bad_url_;
  asio::io_context io_;
  asio::steady_timer ticker_, progress_timer_;
  std::vector<std::shared_ptr<SioClient>> clients_, consumers_, producers_;
  std::function<void()> connect_done_;
  size_t connect_left_ = 0, connect_started_ = 0, connected_ = 0;
  size_t pongs_ = 0;
  std::set<const SioClient*> warm_;  // consumers that had a warm-up message
  int warm_rounds_ = 0;
  int fanout_ = 1;
  std::string body_;
  std::string run_id_;
  std::string error_;
  bool started_ = false, stopping_ = false, sending_done_ = false, pump_scheduled_ = false;
  uint64_t sent_ = 0, delivered_ = 0, acked_ = 0, errors_ = 0, last_progress_delivered_ = 0;
  Clock::time_point start_, send_end_, last_delivery_, ticker_end_, connected_at_;
  long rss_after_ = 0;
  Histogram latency_;
};

}  // namespace

int run_load(LoadOptions options) { return Load(std::move(options)).run(); }

}  // namespace siomq::bench
