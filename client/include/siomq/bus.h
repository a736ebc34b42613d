// siomq::bus: the client of the bus surface (subjects, request/reply, streams, consumers) — every call
// of the bus Go client (Dial, Publish, Subscribe, Request, streams, consumers, pull, ack/nak/term/
// progress, Stats) in C++. Contract: docs/bus.md and the bus protocol; semantics follow NATS/JetStream.
//
// One Conn is one Socket.IO connection carrying both planes: "/" (data) and "/control" (streams and
// consumers). It reconnects by itself (Options::reconnect); after a reconnect every live Subscription
// is subscribed again before anything buffered is sent, so handlers keep receiving (core pub/sub is
// at-most-once: messages published while disconnected are not delivered).
//
// Threading: every call is thread-safe. Calls that wait for the server come in two forms: with a
// callback (run on the io thread, exactly once) and returning a std::future. Message handlers run on the
// io thread, one at a time, in arrival order. Do not wait on a future inside a handler or callback.
// Ownership: a Conn owns its connection and io thread; a Subscription must not outlive its Conn.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "siomq/connection.h"
#include "siomq/result.h"

namespace siomq::bus {

// Header fields, in order, case preserved. "Msg-Id" acts like PublishOptions::msg_id.
using Header = std::vector<std::pair<std::string, std::string>>;

// A core message, a push delivery or a stream message (pull, get): the stream fields are set for the
// last two (stream, consumer for deliveries, seq, delivered, timestamp_ms).
struct Message {
  std::string subject;
  std::string data;  // bytes
  Header header;
  std::string reply;  // a request's reply subject: answer with Conn::publish(reply, ...)
  std::string sid;    // core and push deliveries: the subscription
  std::string stream;
  std::string consumer;
  uint64_t seq = 0;
  uint64_t delivered = 0;
  int64_t timestamp_ms = 0;
};

struct StreamConfig {
  std::string name;
  std::vector<std::string> subjects;
  std::string storage = "file";       // file | memory
  std::string retention = "limits";   // limits | interest | workqueue
  int64_t max_msgs = -1;              // -1: unlimited (also for the others)
  int64_t max_bytes = -1;
  int64_t max_age_ms = 0;             // 0: unlimited
  int64_t max_msg_size = -1;
  int64_t max_msgs_per_subject = -1;
  std::string discard = "old";        // old | new
  int64_t dedup_window_ms = 120000;
  std::string dead_letter_stream;
};

struct StreamMeta : StreamConfig {
  int64_t created_ms = 0;
};

struct StreamState {
  uint64_t messages = 0, bytes = 0, first_seq = 0, last_seq = 0;
  int64_t first_ts_ms = 0, last_ts_ms = 0;
  uint64_t consumer_count = 0;
};

struct ConsumerConfig {
  std::string stream;
  std::string name;
  std::string deliver_policy = "all";  // all | last | new | by_start_seq | by_start_time
  uint64_t opt_start_seq = 0;
  int64_t opt_start_time_ms = 0;
  std::string ack_policy = "explicit";  // explicit | none | all
  int64_t ack_wait_ms = 30000;
  int64_t max_deliver = -1;
  std::vector<int64_t> backoff_ms;
  std::string filter_subject;
  int64_t max_ack_pending = 1000;
  std::string deliver_subject;  // push mode: deliveries are core messages on this subject
  std::string deliver_group;
};

struct SequencePair {
  uint64_t consumer_seq = 0, stream_seq = 0;
};

struct ConsumerInfo {
  std::string stream, name;
  ConsumerConfig config;
  SequencePair delivered, ack_floor;
  uint64_t num_pending = 0, num_ack_pending = 0, num_redelivered = 0, num_waiting = 0;
  int64_t created_ms = 0;
};

struct StreamInfo {
  StreamMeta stream;
  StreamState state;
  std::vector<ConsumerInfo> consumers;
};

struct PubAck {
  std::string stream;
  uint64_t seq = 0;
  bool duplicate = false;
};

struct PublishOptions {
  Header header;
  std::string msg_id;               // dedup within the stream's window
  std::string stream;               // must be the stream that binds the subject
  std::optional<uint64_t> expect_last_seq;
  std::optional<uint64_t> expect_last_subject_seq;
};

struct PurgeOptions {
  std::string subject;  // only this subject
  std::optional<uint64_t> keep;  // keep the newest N
};

struct Stats {
  std::string server_id, version;
  uint64_t uptime_ms = 0, connections = 0, total_connections = 0, subscriptions = 0;
  uint64_t in_msgs = 0, out_msgs = 0, in_bytes = 0, out_bytes = 0, slow_consumers = 0;
  uint64_t streams = 0, consumers = 0, stream_msgs = 0, stream_bytes = 0, rss_bytes = 0;
};

struct DialOptions : Options {
  std::string token;          // "/": CONNECT {token} (tyo-mq tokens, JWTs)
  std::string control_token;  // "/control": the control token, an admin or a manager token
  std::string realm;          // "/control" with an admin token: the realm to manage
  bool control = true;        // join "/control" (stream and consumer management)
};

template <class T>
using Callback = std::function<void(Result<T>)>;

class Conn;

// A live subscription; unsubscribes when closed or destroyed.
class Subscription {
 public:
  Subscription() = default;
  ~Subscription();
  Subscription(Subscription&& other) noexcept;
  Subscription& operator=(Subscription&& other) noexcept;
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;

  // Unsubscribes (unsub) and drops the handler; idempotent. The handler is not called after it returns
  // on any thread but the io thread, where a message being handled finishes first.
  Status close();
  const std::string& subject() const { return subject_; }
  const std::string& queue() const { return queue_; }
  bool valid() const { return id_ != 0; }

 private:
  friend class Conn;
  std::shared_ptr<std::function<Status(uint64_t)>> unsubscribe_;  // the Conn's, while it lives
  uint64_t id_ = 0;
  std::string subject_, queue_;
};

class Conn {
 public:
  explicit Conn(DialOptions options);
  Conn(DialOptions options, boost::asio::io_context& io);
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Connects (and joins "/control" unless DialOptions::control is false).
  std::future<Status> connect();
  // Dial: a connected Conn, or why not (the Go client's Dial).
  static Result<std::unique_ptr<Conn>> dial(DialOptions options);
  void close();
  bool connected() const;
  Connection& connection();

  // ---- data plane ----
  // At most once; returns at once (errc::closed / buffer_full are the only errors it can see).
  Status publish(std::string_view subject, std::string_view data, const Header& header = {}, std::string_view reply = {});
  // Waits for the server's answer, as the Go client does.
  std::future<Result<Subscription>> subscribe(std::string subject, std::string queue, std::function<void(const Message&)> handler);
  void subscribe(std::string subject, std::string queue, std::function<void(const Message&)> handler, Callback<Subscription> done);
  // 503 no responders at once; 408 after `timeout` (0: 5 s, the server's default).
  std::future<Result<Message>> request(std::string_view subject, std::string_view data, milliseconds timeout = {}, const Header& header = {});
  void request(std::string_view subject, std::string_view data, milliseconds timeout, const Header& header, Callback<Message> done);

  // ---- streams (control plane) ----
  std::future<Result<StreamMeta>> create_stream(const StreamConfig& config);
  void create_stream(const StreamConfig& config, Callback<StreamMeta> done);
  std::future<Result<StreamMeta>> update_stream(const StreamConfig& config);
  void update_stream(const StreamConfig& config, Callback<StreamMeta> done);
  std::future<Status> delete_stream(std::string_view name);
  void delete_stream(std::string_view name, Callback<Ok> done);
  std::future<Result<uint64_t>> purge_stream(std::string_view name, const PurgeOptions& options = {});
  void purge_stream(std::string_view name, const PurgeOptions& options, Callback<uint64_t> done);
  std::future<Result<StreamInfo>> stream_info(std::string_view name);
  void stream_info(std::string_view name, Callback<StreamInfo> done);
  std::future<Result<std::vector<StreamMeta>>> list_streams();
  void list_streams(Callback<std::vector<StreamMeta>> done);
  std::future<Result<Message>> get_message(std::string_view stream, uint64_t seq);
  void get_message(std::string_view stream, uint64_t seq, Callback<Message> done);
  std::future<Result<Message>> get_last_message(std::string_view stream, std::string_view subject);
  void get_last_message(std::string_view stream, std::string_view subject, Callback<Message> done);

  // Appends to the stream binding `subject`; answered once durable (the stream's storage and fsync policy).
  std::future<Result<PubAck>> stream_publish(std::string_view subject, std::string_view data, const PublishOptions& options = {});
  void stream_publish(std::string_view subject, std::string_view data, const PublishOptions& options, Callback<PubAck> done);

  // ---- consumers ----
  std::future<Result<ConsumerInfo>> add_consumer(const ConsumerConfig& config);
  void add_consumer(const ConsumerConfig& config, Callback<ConsumerInfo> done);
  std::future<Status> delete_consumer(std::string_view stream, std::string_view name);
  void delete_consumer(std::string_view stream, std::string_view name, Callback<Ok> done);
  std::future<Result<ConsumerInfo>> consumer_info(std::string_view stream, std::string_view name);
  void consumer_info(std::string_view stream, std::string_view name, Callback<ConsumerInfo> done);

  // Up to `batch` messages (1..1000), waiting up to `wait` for the first; an empty vector when none came.
  std::future<Result<std::vector<Message>>> pull(std::string_view consumer, int batch = 1, milliseconds wait = {});
  void pull(std::string_view consumer, int batch, milliseconds wait, Callback<std::vector<Message>> done);
  std::future<Status> ack(std::string_view consumer, uint64_t seq);
  void ack(std::string_view consumer, uint64_t seq, Callback<Ok> done);
  std::future<Status> nak(std::string_view consumer, uint64_t seq, milliseconds delay = {});
  void nak(std::string_view consumer, uint64_t seq, milliseconds delay, Callback<Ok> done);
  std::future<Status> term(std::string_view consumer, uint64_t seq, std::string_view reason = {});
  void term(std::string_view consumer, uint64_t seq, std::string_view reason, Callback<Ok> done);
  std::future<Status> progress(std::string_view consumer, uint64_t seq);
  void progress(std::string_view consumer, uint64_t seq, Callback<Ok> done);

  std::future<Result<Stats>> stats();
  void stats(Callback<Stats> done);

  // Sends any event on a namespace and returns the first ack argument as JSON text (the Go client's Emit).
  std::future<Result<std::string>> emit(std::string_view nsp, std::string_view event, std::string_view request_json);

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace siomq::bus
