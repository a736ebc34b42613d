// siomq-client-bench: what one client of the public library (siomq/tyomq.h, siomq/bus.h) does against
// a server — the figures issue 16 asks for. Each shape runs for -d seconds and prints one line:
//   tyomq-publish        produce() fire-and-forget, 64 bytes, a consumer on another connection:
//                        calls/s, and deliveries/s at the consumer
//   tyomq-confirm        produce_confirmed() with W in flight (callbacks), live subscriber: confirms/s
//   tyomq-confirm-stored the same with the subscriber offline and durable: every message stored first
//   bus-publish          publish(), a subscriber on another connection: calls/s, deliveries/s
//   bus-stream           stream_publish() with W in flight: acks/s (answered once stored)
//
//   siomq-client-bench URL [-d SECONDS] [-w WINDOW]
#include <siomq/bus.h>
#include <siomq/tyomq.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string url = "http://127.0.0.1:17352";
  double seconds = 3;
  int window = 1000;
};

const std::string kPayload = "\"" + std::string(62, 'x') + "\"";  // 64 bytes of JSON

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Keeps `window` calls in flight: `start(done)` starts one, `done()` is called when it is answered.
class Window {
 public:
  explicit Window(int size) : free_(size) {}
  void acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return free_ > 0; });
    --free_;
  }
  void release() {
    std::lock_guard lock(mu_);
    ++free_;
    ++answered_;
    cv_.notify_one();
  }
  uint64_t answered() {
    std::lock_guard lock(mu_);
    return answered_;
  }
  void drain(int size) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(10), [&] { return free_ == size; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
  uint64_t answered_ = 0;
};

siomq::Options options(const Args& a) {
  siomq::Options o;
  o.urls = {a.url};
  o.max_buffered_packets = 1 << 20;
  return o;
}

void tyomq_publish(const Args& a) {
  std::atomic<uint64_t> delivered{0};
  siomq::tyomq::Client consumer(options(a));
  siomq::tyomq::Client producer(options(a));
  if (!consumer.connect().get() || !producer.connect().get()) return (void)std::puts("tyomq-publish: cannot connect");
  std::string run = std::to_string(std::rand());
  (void)consumer.register_consumer("bench-c" + run);
  siomq::tyomq::SubscribeRequest sub;
  sub.producer = "bench-p" + run;
  sub.event = "e";
  (void)consumer.subscribe(sub, [&](const siomq::tyomq::ConsumedMessage&) { ++delivered; });
  (void)consumer.ping().get();
  uint64_t sent = 0;
  auto t0 = Clock::now();
  while (since(t0) < a.seconds) {
    // Bounded by what the consumer has received, so the server's queues do not grow without bound.
    if (sent - delivered.load() > static_cast<uint64_t>(a.window) * 10) {
      std::this_thread::yield();
      continue;
    }
    if (producer.produce(sub.producer, "e", kPayload).ok()) ++sent;
  }
  double secs = since(t0);
  std::printf("tyomq-publish: %.0f calls/s, %.0f deliveries/s\n", sent / secs, delivered.load() / secs);
}

void tyomq_confirm(const Args& a, bool stored) {
  const char* name = stored ? "tyomq-confirm-stored" : "tyomq-confirm";
  std::string run = std::to_string(std::rand());
  siomq::tyomq::Client consumer(options(a));
  siomq::tyomq::Client producer(options(a));
  if (!consumer.connect().get() || !producer.connect().get()) return (void)std::printf("%s: cannot connect\n", name);
  (void)consumer.register_consumer("bench-c" + run);
  siomq::tyomq::SubscribeRequest sub;
  sub.producer = "bench-p" + run;
  sub.event = "e";
  sub.durable = stored;
  (void)consumer.subscribe(sub, [](const siomq::tyomq::ConsumedMessage&) {});
  (void)consumer.ping().get();
  if (stored) consumer.close();  // offline: every message is stored for it
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Window window(a.window);
  std::atomic<uint64_t> failed{0};
  siomq::tyomq::ProduceRequest m;
  m.from = sub.producer;
  m.event = "e";
  m.message = kPayload;
  auto t0 = Clock::now();
  while (since(t0) < a.seconds) {
    window.acquire();
    producer.produce_confirmed(m, [&](siomq::Result<uint64_t> r) {
      if (!r) ++failed;
      window.release();
    });
  }
  double secs = since(t0);
  uint64_t answered = window.answered();
  window.drain(a.window);
  std::printf("%s: %.0f confirms/s (window %d, %llu failed)\n", name, answered / secs, a.window,
              static_cast<unsigned long long>(failed.load()));
}

void bus_publish(const Args& a) {
  siomq::bus::DialOptions o;
  static_cast<siomq::Options&>(o) = options(a);
  auto sub_conn = siomq::bus::Conn::dial(o);
  auto pub_conn = siomq::bus::Conn::dial(o);
  if (!sub_conn || !pub_conn) return (void)std::puts("bus-publish: cannot connect");
  std::atomic<uint64_t> delivered{0};
  auto sub = (*sub_conn)->subscribe("bench.x", "", [&](const siomq::bus::Message&) { ++delivered; }).get();
  if (!sub) return;
  std::string data(64, 'x');
  uint64_t sent = 0;
  auto t0 = Clock::now();
  while (since(t0) < a.seconds) {
    if (sent - delivered.load() > static_cast<uint64_t>(a.window) * 10) {
      std::this_thread::yield();
      continue;
    }
    if ((*pub_conn)->publish("bench.x", data).ok()) ++sent;
  }
  double secs = since(t0);
  std::printf("bus-publish: %.0f calls/s, %.0f deliveries/s\n", sent / secs, delivered.load() / secs);
}

void bus_stream(const Args& a) {
  siomq::bus::DialOptions o;
  static_cast<siomq::Options&>(o) = options(a);
  auto conn = siomq::bus::Conn::dial(o);
  if (!conn) return (void)std::puts("bus-stream: cannot connect");
  std::string name = "BENCH" + std::to_string(std::rand());
  siomq::bus::StreamConfig cfg;
  cfg.name = name;
  cfg.subjects = {"benchs." + name};
  if (!(*conn)->create_stream(cfg).get()) return (void)std::puts("bus-stream: cannot create the stream");
  Window window(a.window);
  std::string data(64, 'x');
  auto t0 = Clock::now();
  while (since(t0) < a.seconds) {
    window.acquire();
    (*conn)->stream_publish(cfg.subjects[0], data, {}, [&](siomq::Result<siomq::bus::PubAck>) { window.release(); });
  }
  double secs = since(t0);
  uint64_t answered = window.answered();
  window.drain(a.window);
  (void)(*conn)->delete_stream(name).get();
  std::printf("bus-stream: %.0f acks/s (window %d)\n", answered / secs, a.window);
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "-d") && i + 1 < argc) a.seconds = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "-w") && i + 1 < argc) a.window = std::atoi(argv[++i]);
    else a.url = argv[i];
  }
  std::srand(static_cast<unsigned>(std::time(nullptr)));
  tyomq_publish(a);
  tyomq_confirm(a, false);
  tyomq_confirm(a, true);
  bus_publish(a);
  bus_stream(a);
  return 0;
}
