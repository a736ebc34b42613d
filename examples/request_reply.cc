// Bus request/reply: a service answers on "svc.time" (in a queue group, so that several instances share
// the load); a client asks, with a timeout, and hears "no responders" at once when nobody listens.
#include <siomq/bus.h>

#include <cstdio>

int main(int argc, char** argv) {
  siomq::bus::DialOptions options;
  if (argc > 1) options.urls = {argv[1]};

  auto service = siomq::bus::Conn::dial(options);
  if (!service) {
    std::fprintf(stderr, "dial: %s\n", service.error().message.c_str());
    return 1;
  }
  siomq::bus::Conn& svc = **service;
  auto sub = svc.subscribe("svc.time", "time-workers", [&](const siomq::bus::Message& request) {
    (void)svc.publish(request.reply, "it is tea time for " + request.data);
  }).get();
  if (!sub) return 1;

  auto client = siomq::bus::Conn::dial(options);
  if (!client) return 1;
  auto reply = (*client)->request("svc.time", "alice", std::chrono::milliseconds(2000)).get();
  if (!reply) {
    std::fprintf(stderr, "request: %d %s\n", reply.error().code, reply.error().message.c_str());
    return 1;
  }
  std::printf("reply: %s\n", reply->data.c_str());

  auto nobody = (*client)->request("svc.nobody", "?", std::chrono::milliseconds(2000)).get();
  std::printf("svc.nobody: %d %s\n", nobody ? 0 : nobody.error().code, nobody ? "" : nobody.error().message.c_str());
  return !nobody && nobody.error().code == 503 ? 0 : 1;
}
