#include "tools/bench/bus_load.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "transport/sio_client.h"
#include "tools/bench/histogram.h"
#include "wire/json_text.h"
#include "wire/socketio.h"

namespace siomq::bench {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;
using client::SioClient;

constexpr size_t kPullBatch = 100;

// The number after `"key":` in `json`, 0 when absent.
uint64_t number_after(const std::string& json, std::string_view key) {
  std::string k = "\"" + std::string(key) + "\":";
  size_t at = json.find(k);
  if (at == std::string::npos) return 0;
  uint64_t v = 0;
  std::from_chars(json.data() + at + k.size(), json.data() + json.size(), v);
  return v;
}

class BusLoad {
 public:
  explicit BusLoad(LoadOptions o) : o_(std::move(o)), timer_(io_) {
    url_ok_ = client::parse_url(o_.url, base_);
    base_.eio = o_.eio;
    base_.ca_file = o_.ca_file;
    // Across the nodes of a cluster: subscribers (responders) spread over the other URLs.
    for (const auto& url : o_.consumer_urls) {
      client::ClientOptions more;
      if (!client::parse_url(url, more)) url_ok_ = false;
      more.eio = o_.eio;
      more.ca_file = o_.ca_file;
      consumer_bases_.push_back(more);
    }
    run_ = std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count() % 100000000);
    subject_ = "bench." + run_;
    stream_ = "BENCH" + run_;
    body_ = std::string(o_.size, 'x');
    if (o_.scenario != "bus-pubsub") o_.producers = 1;
    if (o_.scenario != "bus-pubsub") o_.consumers = 1;
  }

  int run() {
    if (!url_ok_) return fail("bad URL");
    for (int i = 0; i < o_.producers; ++i) pubs_.push_back(open(base_));
    for (size_t i = 0; i < static_cast<size_t>(o_.consumers); ++i)
      subs_.push_back(open(consumer_bases_.empty() ? base_ : consumer_bases_[i % consumer_bases_.size()]));
    client::ClientOptions control = base_;
    control.nsp = "/control";
    control_ = open(control);
    io_.run();
    if (!error_.empty()) return fail(error_);
    report();
    return 0;
  }

 private:
  int fail(const std::string& m) {
    std::cerr << "siomq bench: " << m << "\n";
    return 1;
  }

  std::shared_ptr<SioClient> open(const client::ClientOptions& options) {
    auto c = std::make_shared<SioClient>(io_, options);
    ++opening_;
    c->on_close([this](std::string_view why) {
      if (!done_) stop("a connection closed: " + std::string(why));
    });
    c->connect([this, c, control = options.nsp == "/control"](std::optional<std::string> failure) {
      if (failure) return stop("connect: " + *failure);
      if (!control) clients_.push_back(c);
      if (--opening_ == 0) setup();
    });
    return c;
  }

  void stop(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    finish();
  }
  void finish() {
    if (done_) return;
    done_ = true;
    timer_.cancel();
    for (auto& c : clients_) c->close();
    if (control_) control_->close();
  }
  bool answered_ok(const SioClient::Incoming& in, const char* what) {
    if (in.json.find("\"ok\":true") != std::string::npos) return true;
    stop(std::string(what) + ": " + in.json.substr(0, 200));
    return false;
  }

  void setup() {
    const std::string& s = o_.scenario;
    if (s == "bus-pubsub" || s == "bus-request") {
      for (auto& c : subs_) {
        SioClient* self = c.get();
        c->on("msg", [this, self](const SioClient::Incoming& in) { on_msg(*self, in); });
        std::string sub = "{\"subject\":" + json_text::quoted(subject_) + "}";
        c->emit("sub", sub, [this](const SioClient::Incoming& in) {
          if (answered_ok(in, "sub") && ++subscribed_ == subs_.size()) warm_up_or_start();
        });
      }
      return;
    }
    // Streams: a file stream on the subject (and, to pull, a consumer once it is filled).
    std::string create = "{\"name\":" + json_text::quoted(stream_) + ",\"subjects\":[" + json_text::quoted(subject_) + "]}";
    control_->emit("stream.create", create, [this](const SioClient::Incoming& in) {
      if (answered_ok(in, "stream.create")) start();
    });
  }

  // Across nodes a subscription reaches the publishers' node a Redis round trip after its answer
  // (docs/scale-out.md): until every subscriber has had a warm-up message (bus-pubsub) or one request was
  // answered (bus-request), one is sent every 20 ms, not counted. Given up after 5 s.
  static constexpr std::string_view kWarmUp = "bench-warm-up";
  void warm_up_or_start() {
    if (consumer_bases_.empty() || started_) return start();
    if (++warm_rounds_ > 250) return start();
    if (o_.scenario == "bus-pubsub") {
      pubs_[0]->emit("pub", "{\"subject\":" + json_text::quoted(subject_) + ",\"data\":\"" + std::string(kWarmUp) + "\"}");
    } else {
      pubs_[0]->emit("request", "{\"subject\":" + json_text::quoted(subject_) + ",\"data\":\"" + std::string(kWarmUp) + "\"}",
                     [this](const SioClient::Incoming& in) {
                       if (!started_ && in.json.find("\"ok\":true") != std::string::npos) start();
                     });
    }
    timer_.expires_after(std::chrono::milliseconds(20));
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec && !started_ && !done_) warm_up_or_start();
    });
  }

  void start() {
    if (started_) return;
    started_ = true;
    timer_.cancel();
    start_ = Clock::now();
    end_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.duration_s));
    timer_.expires_at(end_ + std::chrono::seconds(30));
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) stop("timed out waiting for the last answers");
    });
    pump();
  }

  bool sending() const { return Clock::now() < end_; }

  void pump() {
    if (done_) return;
    const std::string& s = o_.scenario;
    if (s == "bus-pubsub") {
      uint64_t fan = subs_.size();
      for (size_t k = 0; k < 256 && sent_ - std::min(sent_, received_ / fan) < o_.window && sending(); ++k) {
        pubs_[sent_ % pubs_.size()]->emit("pub", "{\"subject\":" + json_text::quoted(subject_) + ",\"data\":" + json_text::quoted(body_) + "}");
        ++sent_;
      }
    } else if (s == "bus-request") {
      while (sent_ - answers_ < o_.window && sending()) {
        ++sent_;
        Clock::time_point t0 = Clock::now();
        pubs_[0]->emit("request", "{\"subject\":" + json_text::quoted(subject_) + ",\"data\":" + json_text::quoted(body_) + "}",
                       [this, t0](const SioClient::Incoming& in) {
                         if (!answered_ok(in, "request")) return;
                         latency_.record(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
                         ++answers_;
                         last_ = Clock::now();
                         if (!sending() && answers_ == sent_) return finish();
                         pump();
                       });
      }
    } else if (s == "bus-stream" || (s == "bus-pull" && !filled_)) {
      while (sent_ - answers_ < o_.window && sending()) {
        ++sent_;
        pubs_[0]->emit("stream.pub", "{\"subject\":" + json_text::quoted(subject_) + ",\"data\":" + json_text::quoted(body_) + "}",
                       [this](const SioClient::Incoming& in) {
                         if (!answered_ok(in, "stream.pub")) return;
                         ++answers_;
                         last_ = Clock::now();
                         if (!sending() && answers_ == sent_) return published();
                         pump();
                       });
      }
    }
    if (s == "bus-pubsub" && sending()) asio::post(io_, [this] { pump(); });
    if (s == "bus-pubsub" && !sending() && received_ >= sent_ * subs_.size()) finish();
  }

  void on_msg(SioClient& self, const SioClient::Incoming& in) {
    if (!in.attachments.empty() && in.attachments[0] == kWarmUp) {
      if (o_.scenario == "bus-pubsub") {
        warm_.insert(&self);
        if (!started_ && warm_.size() >= subs_.size()) start();
        return;
      }
    }
    if (o_.scenario == "bus-request") {
      // The responder: the request's inbox is its `reply`.
      size_t at = in.json.find("\"reply\":\"");
      if (at == std::string::npos) return;
      size_t end = in.json.find('"', at + 9);
      self.emit("pub", "{\"subject\":\"" + in.json.substr(at + 9, end - at - 9) + "\",\"data\":\"ok\"}");
      return;
    }
    if (!received_) first_ = Clock::now();
    ++received_;
    last_ = Clock::now();
    if (!sending() && received_ >= sent_ * subs_.size()) return finish();
    if (sent_ - std::min(sent_, received_ / subs_.size()) < o_.window / 2) pump();
  }

  // bus-stream ends here; bus-pull goes on to consume what it stored.
  void published() {
    publish_end_ = last_;
    if (o_.scenario != "bus-pull") return finish();
    filled_ = true;
    std::string add = "{\"stream\":" + json_text::quoted(stream_) + ",\"name\":\"bench\",\"max_ack_pending\":-1}";
    control_->emit("consumer.add", add, [this](const SioClient::Incoming& in) {
      if (!answered_ok(in, "consumer.add")) return;
      pull_start_ = Clock::now();
      for (size_t i = 0; i < std::max<size_t>(1, o_.window / kPullBatch); ++i) pull();
    });
  }

  void pull() {
    if (done_ || requested_ >= answers_) return;
    size_t batch = static_cast<size_t>(std::min<uint64_t>(kPullBatch, answers_ - requested_));
    requested_ += batch;
    pubs_[0]->emit("consumer.pull", "{\"consumer\":\"bench\",\"batch\":" + std::to_string(batch) + ",\"wait_ms\":1000}",
                   [this, batch](const SioClient::Incoming& in) {
                     if (!answered_ok(in, "consumer.pull")) return;
                     // Each message: ack it (by its stream seq).
                     size_t at = 0;
                     uint64_t got = 0;
                     while ((at = in.json.find("\"seq\":", at)) != std::string::npos) {
                       uint64_t seq = number_after(in.json.substr(at), "seq");
                       at += 6;
                       ++got;
                       pubs_[0]->emit("consumer.ack", "{\"consumer\":\"bench\",\"seq\":" + std::to_string(seq) + "}",
                                      [this](const SioClient::Incoming& ack) {
                                        if (!answered_ok(ack, "consumer.ack")) return;
                                        if (++acked_ == answers_) {
                                          pull_end_ = Clock::now();
                                          finish();
                                        }
                                      });
                     }
                     // What a short batch (the wait ran out first) did not bring is asked for again.
                     requested_ -= batch - std::min<uint64_t>(batch, got);
                     pull();
                   });
  }

  void report() {
    auto secs = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
    const std::string& s = o_.scenario;
    double rate = 0;
    const char* what = "";
    if (s == "bus-pubsub") {
      rate = static_cast<double>(received_) / std::max(1e-9, secs(first_, last_));
      what = "deliveries/s (subscriber clock)";
    } else if (s == "bus-request") {
      rate = static_cast<double>(answers_) / std::max(1e-9, secs(start_, last_));
      what = "round trips/s";
    } else if (s == "bus-stream") {
      rate = static_cast<double>(answers_) / std::max(1e-9, secs(start_, publish_end_));
      what = "acked publishes/s";
    } else {
      rate = static_cast<double>(acked_) / std::max(1e-9, secs(pull_start_, pull_end_));
      what = "pulled and acked/s";
    }
    auto us = [](int64_t ns) { return static_cast<double>(ns) / 1000.0; };
    if (o_.json) {
      std::printf("{\"scenario\":%s,\"url\":%s,\"producers\":%d,\"consumers\":%d,\"size\":%zu,\"window\":%zu,"
                  "\"sent\":%llu,\"received\":%llu,\"acked\":%llu,\"rate\":%.0f,\"unit\":%s",
                  json_text::quoted(s).c_str(), json_text::quoted(o_.url).c_str(), o_.producers, o_.consumers, o_.size, o_.window,
                  static_cast<unsigned long long>(sent_), static_cast<unsigned long long>(received_ + answers_),
                  static_cast<unsigned long long>(acked_), rate, json_text::quoted(what).c_str());
      if (latency_.count())
        std::printf(",\"latency_us\":{\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f}", us(latency_.quantile(0.5)),
                    us(latency_.quantile(0.99)), us(latency_.max()));
      std::printf("}\n");
      return;
    }
    std::printf("scenario      %s (%d -> %d, %zu B, window %zu)\n", s.c_str(), o_.producers, o_.consumers, o_.size, o_.window);
    std::printf("result        %.0f %s\n", rate, what);
    if (latency_.count())
      std::printf("latency (µs)  p50 %.1f  p99 %.1f  max %.1f\n", us(latency_.quantile(0.5)), us(latency_.quantile(0.99)),
                  us(latency_.max()));
  }

  LoadOptions o_;
  client::ClientOptions base_;
  std::vector<client::ClientOptions> consumer_bases_;
  bool url_ok_ = false;
  bool started_ = false;
  int warm_rounds_ = 0;
  std::set<SioClient*> warm_;
  asio::io_context io_;
  asio::steady_timer timer_;
  std::vector<std::shared_ptr<SioClient>> clients_, pubs_, subs_;
  std::shared_ptr<SioClient> control_;
  size_t opening_ = 0, subscribed_ = 0;
  std::string run_, subject_, stream_, body_, error_;
  bool done_ = false, filled_ = false;
  uint64_t sent_ = 0, received_ = 0, answers_ = 0, acked_ = 0, requested_ = 0;
  Clock::time_point start_, end_, first_, last_, publish_end_, pull_start_, pull_end_;
  Histogram latency_;
};

}  // namespace

bool is_bus_scenario(const std::string& scenario) {
  return scenario == "bus-pubsub" || scenario == "bus-request" || scenario == "bus-stream" || scenario == "bus-pull";
}

int run_bus_load(LoadOptions options) { return BusLoad(std::move(options)).run(); }

}  // namespace siomq::bench
