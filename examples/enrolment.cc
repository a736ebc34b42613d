// Enrolment (tyo-mq §7): a new device asks to join realm "r1" with a token it made up; a manager, with
// the realm's manager key, takes the next pending request and approves it; the device hears the decision
// and authenticates with its token.
//   enrolment <url> <realm manager key>
#include <siomq/tyomq.h>

#include <chrono>
#include <cstdio>
#include <future>

int main(int argc, char** argv) {
  siomq::Options options;
  if (argc > 1) options.urls = {argv[1]};
  const char* manager_key = argc > 2 ? argv[2] : "mk-r1";

  siomq::tyomq::Client device(options);
  if (!device.connect().get()) return 1;
  std::promise<siomq::tyomq::AuthorizationDecision> decision;
  device.on_authorization_decided([&](const siomq::tyomq::AuthorizationDecision& d) { decision.set_value(d); });
  siomq::tyomq::AuthorizationRequest request;
  request.realm = "r1";
  request.client_id = "thermostat-42";
  request.client_name = "Hall thermostat";
  request.client_token = "thermostat-42-secret";
  request.role = "producer";
  auto submitted = device.request_authorization(request).get();
  if (!submitted) {
    std::fprintf(stderr, "request: %s\n", submitted.error().message.c_str());
    return 1;
  }
  std::printf("request %s is %s\n", submitted->request_id.c_str(), submitted->status.c_str());

  siomq::tyomq::Client manager(options);
  if (!manager.connect().get()) return 1;
  auto next = manager.authorization_next(manager_key, "r1").get();
  if (!next || !*next) return 1;
  std::printf("manager sees %s from %s\n", (*next)->request_id.c_str(), (*next)->client_name.c_str());
  if (!manager.authorization_decide(manager_key, (*next)->request_id, true).get()) return 1;

  auto heard = decision.get_future();
  if (heard.wait_for(std::chrono::seconds(10)) != std::future_status::ready) return 1;
  std::printf("device: %s\n", heard.get().approved ? "approved" : "rejected");

  siomq::tyomq::Client enrolled(options);
  if (!enrolled.connect().get()) return 1;
  auto auth = enrolled.authenticate("thermostat-42-secret").get();
  if (!auth) return 1;
  std::printf("authenticated in realm %s as %s\n", auth->realm.c_str(), auth->role.c_str());
  return 0;
}
