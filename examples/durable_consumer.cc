// A durable consumer with manual ACK: messages produced while it is away are kept by the server and
// replayed when it subscribes again; each one is acknowledged once its work is done, and a message not
// acknowledged in time is delivered again (retry policy), then dead-lettered.
#include <siomq/tyomq.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

namespace {

siomq::tyomq::SubscribeRequest durable_subscription() {
  siomq::tyomq::SubscribeRequest sub;
  sub.producer = "billing";
  sub.event = "invoice";
  sub.consumer = "archiver";
  sub.durable = true;
  sub.manual_ack = true;
  sub.ack_timeout = "30s";
  sub.retry = siomq::tyomq::RetryPolicy{5, "1s", "exponential"};
  return sub;
}

}  // namespace

int main(int argc, char** argv) {
  siomq::Options options;
  if (argc > 1) options.urls = {argv[1]};
  std::atomic<int> done{0};
  {
    // Subscribe once so that the server knows the durable subscription, then go away.
    siomq::tyomq::Client first(options);
    if (!first.connect().get()) return 1;
    (void)first.register_consumer("archiver");
    (void)first.subscribe(durable_subscription(), [](const siomq::tyomq::ConsumedMessage&) {});
    (void)first.ping().get();
  }

  siomq::tyomq::Client producer(options);
  if (!producer.connect().get()) return 1;
  for (int n = 1; n <= 3; ++n) {
    siomq::tyomq::ProduceRequest invoice;
    invoice.from = "billing";
    invoice.event = "invoice";
    invoice.message = "{\"invoice\":" + std::to_string(n) + "}";
    auto stored = producer.produce_confirmed(invoice).get();  // answered once the copy is durable
    if (!stored) {
      std::fprintf(stderr, "produce: %s\n", stored.error().message.c_str());
      return 1;
    }
    std::printf("invoice %d stored for %llu consumer(s)\n", n, static_cast<unsigned long long>(*stored));
  }

  // Back: the backlog is replayed; each message is acknowledged after its work.
  siomq::tyomq::Client consumer(options);
  if (!consumer.connect().get()) return 1;
  (void)consumer.register_consumer("archiver");
  (void)consumer.subscribe(durable_subscription(), [&](const siomq::tyomq::ConsumedMessage& m) {
    std::printf("archiving %s (attempt %lld)\n", m.message.c_str(), static_cast<long long>(m.delivery_attempt));
    (void)consumer.ack(m.msg_id);
    ++done;
  });
  for (int i = 0; i < 500 && done < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return done == 3 ? 0 : 1;
}
