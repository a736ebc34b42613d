// tyo-mq publish/subscribe: a consumer subscribes to "order-placed" from "order-service", a producer
// sends three orders, the consumer prints them.
#include <siomq/tyomq.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

int main(int argc, char** argv) {
  siomq::Options options;
  if (argc > 1) options.urls = {argv[1]};

  siomq::tyomq::Client consumer(options);
  if (auto st = consumer.connect().get(); !st) {
    std::fprintf(stderr, "connect: %s\n", st.error().message.c_str());
    return 1;
  }
  std::atomic<int> received{0};
  (void)consumer.register_consumer("email-service");
  siomq::tyomq::SubscribeRequest sub;
  sub.producer = "order-service";
  sub.event = "order-placed";
  sub.consumer = "email-service";
  (void)consumer.subscribe(sub, [&](const siomq::tyomq::ConsumedMessage& m) {
    std::printf("order event from %s: %s\n", m.from.c_str(), m.message.c_str());
    ++received;
  });
  (void)consumer.ping().get();  // the subscription is in place once the server has answered this

  siomq::tyomq::Client producer(options);
  if (auto st = producer.connect().get(); !st) return 1;
  (void)producer.register_producer("order-service");
  for (int id = 1001; id <= 1003; ++id)
    (void)producer.produce("order-service", "order-placed", "{\"orderId\":" + std::to_string(id) + "}");

  for (int i = 0; i < 500 && received < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return received == 3 ? 0 : 1;
}
