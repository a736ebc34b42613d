// Turns a callback-taking call into a std::future-returning one (internal).
#pragma once

#include <functional>
#include <future>
#include <memory>

#include "siomq/result.h"

namespace siomq::detail {

// `start` is given the callback that fulfils the future; the future is ready once it is called.
template <class T, class Start>
std::future<Result<T>> as_future(Start&& start) {
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  start([promise](Result<T> r) { promise->set_value(std::move(r)); });
  return future;
}

}  // namespace siomq::detail
