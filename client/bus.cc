// siomq::bus::Conn (siomq/bus.h): typed calls written as bus events, answers read into structs, and the
// subscriptions that come back after a reconnect.
#include "siomq/bus.h"

#include <mutex>
#include <unordered_map>

#include "future_call.h"
#include "json_text.h"

namespace siomq::bus {
namespace {

using simdjson::dom::element;

// The bytes a message's `data` stands for: an attachment (placeholder) or a string's UTF-8.
std::string data_of(element e, const std::vector<std::string>& attachments) {
  auto d = e["data"];
  if (d.error()) return {};
  element v = d.value_unsafe();
  if (v.is_string()) return std::string(v.get_string().value_unsafe());
  if (v.is_object()) {
    uint64_t num = json::get_u64(v, "num", UINT64_MAX);
    if (json::get_bool(v, "_placeholder") && num < attachments.size()) return attachments[num];
  }
  return {};
}

Header header_of(element e) {
  Header h;
  simdjson::dom::object fields;
  if (!json::get_object(e, "header", fields)) return h;
  for (auto field : fields)
    if (field.value.is_string()) h.emplace_back(std::string(field.key), std::string(field.value.get_string().value_unsafe()));
  return h;
}

Message message_of(element e, const std::vector<std::string>& attachments) {
  Message m;
  m.subject = json::get_str(e, "subject");
  m.data = data_of(e, attachments);
  m.header = header_of(e);
  m.reply = json::get_str(e, "reply");
  m.sid = json::get_str(e, "sid");
  m.stream = json::get_str(e, "stream");
  m.consumer = json::get_str(e, "consumer");
  m.seq = json::get_u64(e, "seq");
  m.delivered = json::get_u64(e, "delivered");
  m.timestamp_ms = json::get_i64(e, "timestamp_ms");
  return m;
}

void read_config(element e, StreamConfig& c) {
  c.name = json::get_str(e, "name");
  c.subjects = json::get_strs(e, "subjects");
  c.storage = json::get_str(e, "storage", c.storage);
  c.retention = json::get_str(e, "retention", c.retention);
  c.max_msgs = json::get_i64(e, "max_msgs", c.max_msgs);
  c.max_bytes = json::get_i64(e, "max_bytes", c.max_bytes);
  c.max_age_ms = json::get_i64(e, "max_age_ms", c.max_age_ms);
  c.max_msg_size = json::get_i64(e, "max_msg_size", c.max_msg_size);
  c.max_msgs_per_subject = json::get_i64(e, "max_msgs_per_subject", c.max_msgs_per_subject);
  c.discard = json::get_str(e, "discard", c.discard);
  c.dedup_window_ms = json::get_i64(e, "dedup_window_ms", c.dedup_window_ms);
  c.dead_letter_stream = json::get_str(e, "dead_letter_stream");
}

StreamMeta meta_of(element e) {
  StreamMeta m;
  read_config(e, m);
  m.created_ms = json::get_i64(e, "created_ms");
  return m;
}

std::string config_json(const StreamConfig& c) {
  json::Object o;
  o.str("name", c.name).strings("subjects", c.subjects).str("storage", c.storage).str("retention", c.retention);
  o.num("max_msgs", c.max_msgs).num("max_bytes", c.max_bytes).num("max_age_ms", c.max_age_ms);
  o.num("max_msg_size", c.max_msg_size).num("max_msgs_per_subject", c.max_msgs_per_subject);
  o.str("discard", c.discard).num("dedup_window_ms", c.dedup_window_ms).str_if("dead_letter_stream", c.dead_letter_stream);
  return o.done();
}

SequencePair pair_of(element e, const char* key) {
  SequencePair p;
  auto v = e[key];
  if (v.error() || !v.value_unsafe().is_object()) return p;
  p.consumer_seq = json::get_u64(v.value_unsafe(), "consumer_seq");
  p.stream_seq = json::get_u64(v.value_unsafe(), "stream_seq");
  return p;
}

ConsumerConfig consumer_config_of(element e) {
  ConsumerConfig c;
  c.stream = json::get_str(e, "stream");
  c.name = json::get_str(e, "name");
  c.deliver_policy = json::get_str(e, "deliver_policy", c.deliver_policy);
  c.opt_start_seq = json::get_u64(e, "opt_start_seq");
  c.opt_start_time_ms = json::get_i64(e, "opt_start_time_ms");
  c.ack_policy = json::get_str(e, "ack_policy", c.ack_policy);
  c.ack_wait_ms = json::get_i64(e, "ack_wait_ms", c.ack_wait_ms);
  c.max_deliver = json::get_i64(e, "max_deliver", c.max_deliver);
  simdjson::dom::array backoff;
  if (json::get_array(e, "backoff_ms", backoff))
    for (auto x : backoff) c.backoff_ms.push_back(x.is_int64() ? x.get_int64().value_unsafe() : 0);
  c.filter_subject = json::get_str(e, "filter_subject");
  c.max_ack_pending = json::get_i64(e, "max_ack_pending", c.max_ack_pending);
  c.deliver_subject = json::get_str(e, "deliver_subject");
  c.deliver_group = json::get_str(e, "deliver_group");
  return c;
}

ConsumerInfo consumer_info_of(element e) {
  ConsumerInfo i;
  i.stream = json::get_str(e, "stream");
  i.name = json::get_str(e, "name");
  auto c = e["config"];
  if (!c.error() && c.value_unsafe().is_object()) i.config = consumer_config_of(c.value_unsafe());
  i.delivered = pair_of(e, "delivered");
  i.ack_floor = pair_of(e, "ack_floor");
  i.num_pending = json::get_u64(e, "num_pending");
  i.num_ack_pending = json::get_u64(e, "num_ack_pending");
  i.num_redelivered = json::get_u64(e, "num_redelivered");
  i.num_waiting = json::get_u64(e, "num_waiting");
  i.created_ms = json::get_i64(e, "created_ms");
  return i;
}

std::string consumer_json(const ConsumerConfig& c) {
  json::Object o;
  o.str("stream", c.stream).str("name", c.name).str("deliver_policy", c.deliver_policy);
  if (c.opt_start_seq) o.num("opt_start_seq", static_cast<int64_t>(c.opt_start_seq));
  if (c.opt_start_time_ms) o.num("opt_start_time_ms", c.opt_start_time_ms);
  o.str("ack_policy", c.ack_policy).num("ack_wait_ms", c.ack_wait_ms).num("max_deliver", c.max_deliver);
  if (!c.backoff_ms.empty()) {
    std::string arr = "[";
    for (size_t k = 0; k < c.backoff_ms.size(); ++k) arr += (k ? "," : "") + std::to_string(c.backoff_ms[k]);
    o.raw("backoff_ms", arr + "]");
  }
  o.str_if("filter_subject", c.filter_subject).num("max_ack_pending", c.max_ack_pending);
  o.str_if("deliver_subject", c.deliver_subject).str_if("deliver_group", c.deliver_group);
  return o.done();
}

StreamState state_of(element e) {
  StreamState s;
  s.messages = json::get_u64(e, "messages");
  s.bytes = json::get_u64(e, "bytes");
  s.first_seq = json::get_u64(e, "first_seq");
  s.last_seq = json::get_u64(e, "last_seq");
  s.first_ts_ms = json::get_i64(e, "first_ts_ms");
  s.last_ts_ms = json::get_i64(e, "last_ts_ms");
  s.consumer_count = json::get_u64(e, "consumer_count");
  return s;
}

Stats stats_of(element e) {
  Stats s;
  s.server_id = json::get_str(e, "server_id");
  s.version = json::get_str(e, "version");
  s.uptime_ms = json::get_u64(e, "uptime_ms");
  s.connections = json::get_u64(e, "connections");
  s.total_connections = json::get_u64(e, "total_connections");
  s.subscriptions = json::get_u64(e, "subscriptions");
  s.in_msgs = json::get_u64(e, "in_msgs");
  s.out_msgs = json::get_u64(e, "out_msgs");
  s.in_bytes = json::get_u64(e, "in_bytes");
  s.out_bytes = json::get_u64(e, "out_bytes");
  s.slow_consumers = json::get_u64(e, "slow_consumers");
  s.streams = json::get_u64(e, "streams");
  s.consumers = json::get_u64(e, "consumers");
  s.stream_msgs = json::get_u64(e, "stream_msgs");
  s.stream_bytes = json::get_u64(e, "stream_bytes");
  s.rss_bytes = json::get_u64(e, "rss_bytes");
  return s;
}

element member(element e, const char* key) {
  auto v = e[key];
  return v.error() ? element() : v.value_unsafe();
}

// {"data":<placeholder 0>} with the bytes as the one attachment: the bus carries data as binary.
std::vector<std::string> data_attachment(std::string_view data) { return {std::string(data)}; }

}  // namespace

class Conn::Impl : public std::enable_shared_from_this<Conn::Impl> {
 public:
  Impl(DialOptions options, boost::asio::io_context* io)
      : options_(options), conn_(io ? std::make_unique<Connection>(options, *io) : std::make_unique<Connection>(options)) {}

  void start() {
    conn_->join("/", options_.token.empty() ? std::string() : json::Object().str("token", options_.token).done(), {});
    if (options_.control) {
      json::Object auth;
      auth.str_if("token", options_.control_token).str_if("realm", options_.realm);
      conn_->join("/control", auth.text() == "{" ? std::string() : auth.done(), {});
    }
    std::weak_ptr<Impl> weak = weak_from_this();
    conn_->on("/", "msg", [weak](const Reply& r) {
      if (auto self = weak.lock()) self->on_msg(r);
    });
    conn_->on_rejoin("/", [weak](std::shared_ptr<RejoinSender> sender) {
      if (auto self = weak.lock()) self->resubscribe(std::move(sender));
      else sender->done();
    });
    unsubscribe_ = std::make_shared<std::function<Status(uint64_t)>>([weak](uint64_t id) -> Status {
      auto self = weak.lock();
      if (!self) return Error{errc::closed, "the connection is gone"};
      return self->unsubscribe(id);
    });
  }

  // A request on `nsp` whose {"ok":true,...} answer `parse` turns into a T.
  template <class T, class Parse>
  void call(const char* nsp, const char* event, std::string args, Callback<T> done, Parse parse,
            std::vector<std::string> attachments = {}, milliseconds timeout = {}) {
    conn_->request(nsp, event, args, std::move(attachments), timeout,
                   [done = std::move(done), parse = std::move(parse)](Result<Reply> r) {
                     if (!r) return done(r.error());
                     auto e = json::ok_answer(json::thread_parser(), r->json);
                     if (!e) return done(e.error());
                     done(parse(*e, *r));
                   });
  }

  void subscribe(std::string subject, std::string queue, std::function<void(const Message&)> handler, Callback<Subscription> done) {
    json::Object args;
    args.str("subject", subject).str_if("queue", queue);
    auto h = std::make_shared<std::function<void(const Message&)>>(std::move(handler));
    std::weak_ptr<Impl> weak = weak_from_this();
    call<Subscription>("/", "sub", args.done(), std::move(done),
                       [weak, subject, queue, h](element e, const Reply&) -> Result<Subscription> {
                         auto self = weak.lock();
                         if (!self) return Error{errc::closed, "the connection is gone"};
                         std::string sid = json::get_str(e, "sid");
                         std::lock_guard lock(self->mu_);
                         uint64_t id = self->next_sub_++;
                         self->subs_[id] = Sub{subject, queue, sid, h};
                         self->by_sid_[sid] = id;
                         Subscription s;
                         s.unsubscribe_ = self->unsubscribe_;
                         s.id_ = id;
                         s.subject_ = subject;
                         s.queue_ = queue;
                         return s;
                       });
  }

  Status unsubscribe(uint64_t id) {
    std::string sid;
    {
      std::lock_guard lock(mu_);
      auto it = subs_.find(id);
      if (it == subs_.end()) return Ok{};
      sid = it->second.sid;
      by_sid_.erase(sid);
      subs_.erase(it);
    }
    return conn_->emit("/", "unsub", json::Object().str("sid", sid).done());
  }

  DialOptions options_;
  std::unique_ptr<Connection> conn_;

 private:
  struct Sub {
    std::string subject, queue, sid;
    std::shared_ptr<std::function<void(const Message&)>> handler;
  };

  void on_msg(const Reply& r) {
    auto e = json::first_arg(json::thread_parser(), r.json);
    if (!e) return;
    Message m = message_of(*e, r.attachments);
    std::shared_ptr<std::function<void(const Message&)>> handler;
    {
      std::lock_guard lock(mu_);
      auto it = by_sid_.find(m.sid);
      if (it == by_sid_.end()) return;
      handler = subs_[it->second].handler;
    }
    (*handler)(m);
  }

  // After a reconnect: every live subscription again, each under its new sid.
  void resubscribe(std::shared_ptr<RejoinSender> sender) {
    std::vector<std::pair<uint64_t, Sub>> subs;
    {
      std::lock_guard lock(mu_);
      by_sid_.clear();
      for (auto& [id, s] : subs_) subs.emplace_back(id, s);
    }
    if (subs.empty()) return sender->done();
    auto left = std::make_shared<size_t>(subs.size());
    std::weak_ptr<Impl> weak = weak_from_this();
    for (auto& [id, s] : subs) {
      json::Object args;
      args.str("subject", s.subject).str_if("queue", s.queue);
      sender->request("sub", args.done(), [weak, id = id, sender, left](Result<Reply> r) {
        auto self = weak.lock();
        if (self && r) {
          auto e = json::ok_answer(json::thread_parser(), r->json);
          if (e) {
            std::string sid = json::get_str(*e, "sid");
            std::lock_guard lock(self->mu_);
            auto it = self->subs_.find(id);
            if (it != self->subs_.end()) {
              it->second.sid = sid;
              self->by_sid_[sid] = id;
            }
          }
        }
        if (--*left == 0) sender->done();
      });
    }
  }

  std::mutex mu_;
  std::unordered_map<uint64_t, Sub> subs_;
  std::unordered_map<std::string, uint64_t> by_sid_;
  uint64_t next_sub_ = 1;

 public:
  std::shared_ptr<std::function<Status(uint64_t)>> unsubscribe_;
};

// ---- Subscription ----

Subscription::~Subscription() { (void)close(); }

Subscription::Subscription(Subscription&& o) noexcept
    : unsubscribe_(std::move(o.unsubscribe_)), id_(std::exchange(o.id_, 0)), subject_(std::move(o.subject_)), queue_(std::move(o.queue_)) {}

Subscription& Subscription::operator=(Subscription&& o) noexcept {
  if (this != &o) {
    (void)close();
    unsubscribe_ = std::move(o.unsubscribe_);
    id_ = std::exchange(o.id_, 0);
    subject_ = std::move(o.subject_);
    queue_ = std::move(o.queue_);
  }
  return *this;
}

Status Subscription::close() {
  if (id_ == 0 || !unsubscribe_) return Ok{};
  uint64_t id = std::exchange(id_, 0);
  return (*unsubscribe_)(id);
}

// ---- Conn ----

Conn::Conn(DialOptions options) : impl_(std::make_shared<Impl>(std::move(options), nullptr)) { impl_->start(); }
Conn::Conn(DialOptions options, boost::asio::io_context& io) : impl_(std::make_shared<Impl>(std::move(options), &io)) {
  impl_->start();
}
Conn::~Conn() { impl_->conn_->shutdown(); }

std::future<Status> Conn::connect() { return impl_->conn_->connect(); }

Result<std::unique_ptr<Conn>> Conn::dial(DialOptions options) {
  auto conn = std::make_unique<Conn>(std::move(options));
  auto st = conn->connect().get();
  if (!st) return st.error();
  return conn;
}

void Conn::close() { impl_->conn_->close(); }
bool Conn::connected() const { return impl_->conn_->state() == State::connected; }
Connection& Conn::connection() { return *impl_->conn_; }

Status Conn::publish(std::string_view subject, std::string_view data, const Header& header, std::string_view reply) {
  json::Object args;
  args.str("subject", subject).raw("data", attachment_placeholder(0));
  if (!header.empty()) args.string_map("header", header);
  args.str_if("reply", reply);
  return impl_->conn_->emit("/", "pub", args.done(), data_attachment(data));
}

std::future<Result<Subscription>> Conn::subscribe(std::string subject, std::string queue, std::function<void(const Message&)> handler) {
  return detail::as_future<Subscription>([&](Callback<Subscription> cb) {
    subscribe(std::move(subject), std::move(queue), std::move(handler), std::move(cb));
  });
}
void Conn::subscribe(std::string subject, std::string queue, std::function<void(const Message&)> handler, Callback<Subscription> done) {
  impl_->subscribe(std::move(subject), std::move(queue), std::move(handler), std::move(done));
}

std::future<Result<Message>> Conn::request(std::string_view subject, std::string_view data, milliseconds timeout, const Header& header) {
  return detail::as_future<Message>([&](Callback<Message> cb) { request(subject, data, timeout, header, std::move(cb)); });
}
void Conn::request(std::string_view subject, std::string_view data, milliseconds timeout, const Header& header, Callback<Message> done) {
  json::Object args;
  args.str("subject", subject).raw("data", attachment_placeholder(0));
  if (!header.empty()) args.string_map("header", header);
  if (timeout.count() > 0) args.num("timeout_ms", static_cast<int64_t>(timeout.count()));
  // The client waits a little longer than the server, so that the server's 408 is what comes back.
  milliseconds wait = (timeout.count() > 0 ? timeout : milliseconds(5000)) + milliseconds(2000);
  impl_->call<Message>("/", "request", args.done(), std::move(done),
                       [](element e, const Reply& r) -> Result<Message> { return message_of(member(e, "msg"), r.attachments); },
                       data_attachment(data), wait);
}

#define SIOMQ_FUTURE(T, ...) \
  return detail::as_future<T>([&](Callback<T> cb) { __VA_ARGS__; })

std::future<Result<StreamMeta>> Conn::create_stream(const StreamConfig& c) { SIOMQ_FUTURE(StreamMeta, create_stream(c, std::move(cb))); }
void Conn::create_stream(const StreamConfig& c, Callback<StreamMeta> done) {
  impl_->call<StreamMeta>("/control", "stream.create", config_json(c), std::move(done),
                          [](element e, const Reply&) -> Result<StreamMeta> { return meta_of(member(e, "stream")); });
}

std::future<Result<StreamMeta>> Conn::update_stream(const StreamConfig& c) { SIOMQ_FUTURE(StreamMeta, update_stream(c, std::move(cb))); }
void Conn::update_stream(const StreamConfig& c, Callback<StreamMeta> done) {
  impl_->call<StreamMeta>("/control", "stream.update", config_json(c), std::move(done),
                          [](element e, const Reply&) -> Result<StreamMeta> { return meta_of(member(e, "stream")); });
}

std::future<Status> Conn::delete_stream(std::string_view name) { SIOMQ_FUTURE(Ok, delete_stream(name, std::move(cb))); }
void Conn::delete_stream(std::string_view name, Callback<Ok> done) {
  impl_->call<Ok>("/control", "stream.delete", json::Object().str("name", name).done(), std::move(done),
                  [](element, const Reply&) -> Result<Ok> { return Ok{}; });
}

std::future<Result<uint64_t>> Conn::purge_stream(std::string_view name, const PurgeOptions& o) {
  SIOMQ_FUTURE(uint64_t, purge_stream(name, o, std::move(cb)));
}
void Conn::purge_stream(std::string_view name, const PurgeOptions& o, Callback<uint64_t> done) {
  json::Object args;
  args.str("name", name).str_if("subject", o.subject);
  if (o.keep) args.num("keep", static_cast<int64_t>(*o.keep));
  impl_->call<uint64_t>("/control", "stream.purge", args.done(), std::move(done),
                        [](element e, const Reply&) -> Result<uint64_t> { return json::get_u64(e, "purged"); });
}

std::future<Result<StreamInfo>> Conn::stream_info(std::string_view name) { SIOMQ_FUTURE(StreamInfo, stream_info(name, std::move(cb))); }
void Conn::stream_info(std::string_view name, Callback<StreamInfo> done) {
  impl_->call<StreamInfo>("/control", "stream.info", json::Object().str("name", name).done(), std::move(done),
                          [](element e, const Reply&) -> Result<StreamInfo> {
                            StreamInfo info;
                            info.stream = meta_of(member(e, "stream"));
                            info.state = state_of(member(e, "state"));
                            simdjson::dom::array cs;
                            if (json::get_array(e, "consumers", cs))
                              for (auto c : cs) info.consumers.push_back(consumer_info_of(c));
                            return info;
                          });
}

std::future<Result<std::vector<StreamMeta>>> Conn::list_streams() { SIOMQ_FUTURE(std::vector<StreamMeta>, list_streams(std::move(cb))); }
void Conn::list_streams(Callback<std::vector<StreamMeta>> done) {
  impl_->call<std::vector<StreamMeta>>("/control", "stream.list", "{}", std::move(done),
                                       [](element e, const Reply&) -> Result<std::vector<StreamMeta>> {
                                         std::vector<StreamMeta> out;
                                         simdjson::dom::array ss;
                                         if (json::get_array(e, "streams", ss))
                                           for (auto s : ss) out.push_back(meta_of(s));
                                         return out;
                                       });
}

std::future<Result<Message>> Conn::get_message(std::string_view stream, uint64_t seq) { SIOMQ_FUTURE(Message, get_message(stream, seq, std::move(cb))); }
void Conn::get_message(std::string_view stream, uint64_t seq, Callback<Message> done) {
  impl_->call<Message>("/control", "stream.get", json::Object().str("name", stream).num("seq", static_cast<int64_t>(seq)).done(),
                       std::move(done),
                       [](element e, const Reply& r) -> Result<Message> { return message_of(member(e, "message"), r.attachments); });
}

std::future<Result<Message>> Conn::get_last_message(std::string_view stream, std::string_view subject) {
  SIOMQ_FUTURE(Message, get_last_message(stream, subject, std::move(cb)));
}
void Conn::get_last_message(std::string_view stream, std::string_view subject, Callback<Message> done) {
  impl_->call<Message>("/control", "stream.get", json::Object().str("name", stream).str("last_by_subject", subject).done(),
                       std::move(done),
                       [](element e, const Reply& r) -> Result<Message> { return message_of(member(e, "message"), r.attachments); });
}

std::future<Result<PubAck>> Conn::stream_publish(std::string_view subject, std::string_view data, const PublishOptions& o) {
  SIOMQ_FUTURE(PubAck, stream_publish(subject, data, o, std::move(cb)));
}
void Conn::stream_publish(std::string_view subject, std::string_view data, const PublishOptions& o, Callback<PubAck> done) {
  json::Object args;
  args.str("subject", subject).raw("data", attachment_placeholder(0));
  if (!o.header.empty()) args.string_map("header", o.header);
  args.str_if("msg_id", o.msg_id).str_if("stream", o.stream);
  if (o.expect_last_seq) args.num("expect_last_seq", static_cast<int64_t>(*o.expect_last_seq));
  if (o.expect_last_subject_seq) args.num("expect_last_subject_seq", static_cast<int64_t>(*o.expect_last_subject_seq));
  impl_->call<PubAck>("/", "stream.pub", args.done(), std::move(done),
                      [](element e, const Reply&) -> Result<PubAck> {
                        return PubAck{json::get_str(e, "stream"), json::get_u64(e, "seq"), json::get_bool(e, "duplicate")};
                      },
                      data_attachment(data));
}

std::future<Result<ConsumerInfo>> Conn::add_consumer(const ConsumerConfig& c) { SIOMQ_FUTURE(ConsumerInfo, add_consumer(c, std::move(cb))); }
void Conn::add_consumer(const ConsumerConfig& c, Callback<ConsumerInfo> done) {
  impl_->call<ConsumerInfo>("/control", "consumer.add", consumer_json(c), std::move(done),
                            [](element e, const Reply&) -> Result<ConsumerInfo> { return consumer_info_of(member(e, "consumer")); });
}

std::future<Status> Conn::delete_consumer(std::string_view stream, std::string_view name) {
  SIOMQ_FUTURE(Ok, delete_consumer(stream, name, std::move(cb)));
}
void Conn::delete_consumer(std::string_view stream, std::string_view name, Callback<Ok> done) {
  impl_->call<Ok>("/control", "consumer.delete", json::Object().str("stream", stream).str("name", name).done(), std::move(done),
                  [](element, const Reply&) -> Result<Ok> { return Ok{}; });
}

std::future<Result<ConsumerInfo>> Conn::consumer_info(std::string_view stream, std::string_view name) {
  SIOMQ_FUTURE(ConsumerInfo, consumer_info(stream, name, std::move(cb)));
}
void Conn::consumer_info(std::string_view stream, std::string_view name, Callback<ConsumerInfo> done) {
  impl_->call<ConsumerInfo>("/control", "consumer.info", json::Object().str("stream", stream).str("name", name).done(),
                            std::move(done),
                            [](element e, const Reply&) -> Result<ConsumerInfo> { return consumer_info_of(member(e, "consumer")); });
}

std::future<Result<std::vector<Message>>> Conn::pull(std::string_view consumer, int batch, milliseconds wait) {
  SIOMQ_FUTURE(std::vector<Message>, pull(consumer, batch, wait, std::move(cb)));
}
void Conn::pull(std::string_view consumer, int batch, milliseconds wait, Callback<std::vector<Message>> done) {
  json::Object args;
  args.str("consumer", consumer).num("batch", static_cast<int64_t>(batch));
  if (wait.count() > 0) args.num("wait_ms", static_cast<int64_t>(wait.count()));
  else args.boolean("no_wait", true);
  impl_->call<std::vector<Message>>("/", "consumer.pull", args.done(), std::move(done),
                                    [](element e, const Reply& r) -> Result<std::vector<Message>> {
                                      std::vector<Message> out;
                                      simdjson::dom::array ms;
                                      if (json::get_array(e, "messages", ms))
                                        for (auto m : ms) out.push_back(message_of(m, r.attachments));
                                      return out;
                                    },
                                    {}, wait + milliseconds(5000));
}

namespace {
Result<Ok> ok_result(element, const Reply&) { return Ok{}; }
}  // namespace

std::future<Status> Conn::ack(std::string_view consumer, uint64_t seq) { SIOMQ_FUTURE(Ok, ack(consumer, seq, std::move(cb))); }
void Conn::ack(std::string_view consumer, uint64_t seq, Callback<Ok> done) {
  impl_->call<Ok>("/", "consumer.ack", json::Object().str("consumer", consumer).num("seq", static_cast<int64_t>(seq)).done(),
                  std::move(done), ok_result);
}

std::future<Status> Conn::nak(std::string_view consumer, uint64_t seq, milliseconds delay) {
  SIOMQ_FUTURE(Ok, nak(consumer, seq, delay, std::move(cb)));
}
void Conn::nak(std::string_view consumer, uint64_t seq, milliseconds delay, Callback<Ok> done) {
  json::Object args;
  args.str("consumer", consumer).num("seq", static_cast<int64_t>(seq));
  if (delay.count() > 0) args.num("delay_ms", static_cast<int64_t>(delay.count()));
  impl_->call<Ok>("/", "consumer.nak", args.done(), std::move(done), ok_result);
}

std::future<Status> Conn::term(std::string_view consumer, uint64_t seq, std::string_view reason) {
  SIOMQ_FUTURE(Ok, term(consumer, seq, reason, std::move(cb)));
}
void Conn::term(std::string_view consumer, uint64_t seq, std::string_view reason, Callback<Ok> done) {
  json::Object args;
  args.str("consumer", consumer).num("seq", static_cast<int64_t>(seq)).str_if("reason", reason);
  impl_->call<Ok>("/", "consumer.term", args.done(), std::move(done), ok_result);
}

std::future<Status> Conn::progress(std::string_view consumer, uint64_t seq) { SIOMQ_FUTURE(Ok, progress(consumer, seq, std::move(cb))); }
void Conn::progress(std::string_view consumer, uint64_t seq, Callback<Ok> done) {
  impl_->call<Ok>("/", "consumer.progress", json::Object().str("consumer", consumer).num("seq", static_cast<int64_t>(seq)).done(),
                  std::move(done), ok_result);
}

std::future<Result<Stats>> Conn::stats() { SIOMQ_FUTURE(Stats, stats(std::move(cb))); }
void Conn::stats(Callback<Stats> done) {
  impl_->call<Stats>("/control", "stats", "{}", std::move(done),
                     [](element e, const Reply&) -> Result<Stats> { return stats_of(member(e, "stats")); });
}

std::future<Result<std::string>> Conn::emit(std::string_view nsp, std::string_view event, std::string_view request_json) {
  return detail::as_future<std::string>([&](Callback<std::string> cb) {
    impl_->conn_->request(nsp, event, request_json, {}, {}, [cb = std::move(cb)](Result<Reply> r) {
      if (!r) return cb(r.error());
      auto e = json::first_arg(json::thread_parser(), r->json);
      if (!e) return cb(e.error());
      cb(json::to_json(*e));
    });
  });
}

#undef SIOMQ_FUTURE

}  // namespace siomq::bus
