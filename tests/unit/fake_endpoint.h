// Broker endpoints for the engine's tests: FakeEndpoint has nothing behind it but its socket id (what it
// is given is dropped, its receipts are answered at once); RecordingEndpoint writes what it is given to a
// Recorder the test waits on, shaped as a tyo-mq consumer sees it (the ACK fields spliced in). Also the
// subscriptions those tests make, and the msgId of what they record.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "broker/endpoint.h"
#include "broker/realm_registry.h"
#include "surfaces/tyo_mq/delivery.h"

namespace siomq::broker {

class FakeEndpoint : public Endpoint {
 public:
  explicit FakeEndpoint(std::string id) : id_(std::move(id)) {}
  const std::string& socket_id() const override { return id_; }
  void deliver(const Delivery&) override {}
  void notify(const Presence&) override {}
  void when_sent(std::function<void(bool)> done) override { done(true); }
  void close() override {}

 private:
  std::string id_;
};

struct Sent {
  std::string socket, key, payload;
};

// What the endpoints of one test were given, for the test thread to wait on.
class Recorder {
 public:
  void record(Sent sent) {
    std::lock_guard lock(mu_);
    sent_.push_back(std::move(sent));
    cv_.notify_all();
  }
  // The transport takes everything at once, unless receipts are held for the test to release.
  void when_sent(std::function<void(bool)> done) {
    std::unique_lock lock(mu_);
    if (!hold_) {
      lock.unlock();
      return done(true);
    }
    receipts_.push_back(std::move(done));
    cv_.notify_all();
  }
  void hold_receipts() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }
  // Waits for a receipt to be asked for, then answers every one asked so far with `sent`.
  size_t release(bool sent, std::chrono::milliseconds timeout = std::chrono::seconds(3)) {
    std::vector<std::function<void(bool)>> due;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, timeout, [&] { return !receipts_.empty(); });
      due.swap(receipts_);
    }
    for (auto& d : due) d(sent);
    return due.size();
  }
  // Waits until `n` deliveries were made in all; returns them.
  std::vector<Sent> wait_for(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(3)) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return sent_.size() >= n; });
    return sent_;
  }
  size_t count() {
    std::lock_guard lock(mu_);
    return sent_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Sent> sent_;
  bool hold_ = false;
  std::vector<std::function<void(bool)>> receipts_;
};

// A subscription of `consumer` (its id and queue id named after it) to producer "p"'s event "e".
inline SubscribeSpec spec(const std::string& consumer, DeliveryPolicy policy, bool durable = true) {
  SubscribeSpec s;
  s.producer = "p";
  s.event = "e";
  s.consumer = consumer;
  s.id = consumer;
  s.consumer_id = consumer;
  s.durable = durable;
  s.policy = policy;
  return s;
}

inline DeliveryPolicy ack_policy(int64_t timeout_ms = 30000, int attempts = 3, int64_t delay_ms = 5000, bool exp = false) {
  return DeliveryPolicy{true, timeout_ms, attempts, delay_ms, exp};
}

// The msgId of a delivery payload (ACK mode), "" without one.
inline std::string msg_id(const std::string& payload) {
  auto at = payload.find("\"msgId\":\"");
  if (at == std::string::npos) return {};
  at += 9;
  return payload.substr(at, payload.find('"', at) - at);
}

class RecordingEndpoint : public FakeEndpoint {
 public:
  RecordingEndpoint(std::string id, Recorder& recorder) : FakeEndpoint(std::move(id)), recorder_(recorder) {}
  void deliver(const Delivery& d) override {
    std::string payload = d.attempt ? surfaces::with_ack_fields(d.payload, d.msg_id, d.attempt) : std::string(d.payload);
    recorder_.record({socket_id(), std::string(d.key), std::move(payload)});
  }
  void when_sent(std::function<void(bool)> done) override { recorder_.when_sent(std::move(done)); }

 private:
  Recorder& recorder_;
};

}  // namespace siomq::broker
