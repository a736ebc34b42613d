// A broker endpoint with nothing behind it but its socket id: the broker's tests route to these.
#pragma once

#include <memory>
#include <string>

#include "broker/realm.h"

namespace siomq::broker {

class FakeEndpoint : public Endpoint {
 public:
  explicit FakeEndpoint(std::string id) : id_(std::move(id)) {}
  const std::string& socket_id() const override { return id_; }

 private:
  std::string id_;
};

}  // namespace siomq::broker
