// A Session and a Reply that record what the gate and the handlers do, for tests of the protocol-neutral
// surface code (no sockets, no workers).
#pragma once

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "surfaces/reply.h"
#include "surfaces/session.h"

namespace siomq::surfaces::testing {

class FakeSession : public Session, public std::enable_shared_from_this<FakeSession> {
 public:
  explicit FakeSession(std::string id = "s1") : id_(std::move(id)) {}
  const std::string& id() const override { return id_; }
  net::Worker& worker() override { std::abort(); }  // no test asks for one
  void notify(std::string_view event, std::string_view payload) override {
    notified.emplace_back(std::string(event), std::string(payload));
  }
  void close() override { ++closed; }
  void close_now() override { ++closed; }
  std::shared_ptr<Session> shared() override { return shared_from_this(); }
  broker::EndpointPtr endpoint() override { return nullptr; }  // the engine never routes to it

  std::vector<std::pair<std::string, std::string>> notified;
  int closed = 0;

 private:
  std::string id_;
};

// Emits as (event, payload), the answer as its JSON array; keep() shares the same record.
class RecordingReply : public Reply {
 public:
  struct Record {
    std::vector<std::pair<std::string, std::string>> events;
    std::vector<std::string> acks;
    bool open = true;
  };
  explicit RecordingReply(bool wants_ack, std::shared_ptr<Record> record = std::make_shared<Record>())
      : wants_ack_(wants_ack), record_(std::move(record)) {}

  bool has_ack() const override { return wants_ack_; }
  void ack(std::string_view json_array) override {
    if (wants_ack_) record_->acks.emplace_back(json_array);
  }
  void emit(std::string_view event, std::string_view payload) override {
    record_->events.emplace_back(std::string(event), std::string(payload));
  }
  bool open() const override { return record_->open; }
  std::shared_ptr<Reply> keep() override { return std::make_shared<RecordingReply>(wants_ack_, record_); }

  const Record& record() const { return *record_; }

 private:
  bool wants_ack_;
  std::shared_ptr<Record> record_;
};

}  // namespace siomq::surfaces::testing
