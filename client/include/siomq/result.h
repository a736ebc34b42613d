// siomq::Result<T>: a value or an Error. Every call of the client library that can fail answers with
// one (directly, through a callback or through a std::future); the library throws no exceptions.
// The server uses the same type on its request path.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace siomq {

// What went wrong. `code` is the server's code when the server refused (the bus's 400…503, tyo-mq's
// 401/403/404/429 and its negative ERROR codes), or one of siomq::errc's for what happened on the
// client's side; `message` says it in words.
struct Error {
  int code = 0;
  std::string message;
};

// The client library's own codes. Server codes are below 600.
namespace errc {
inline constexpr int bad_request = 400;    // an argument the library refused before sending anything
inline constexpr int timeout = 408;        // no answer within the request's timeout
inline constexpr int disconnected = 600;   // the connection dropped after sending, before the answer:
                                           // the server may or may not have done it
inline constexpr int closed = 601;         // the client was closed
inline constexpr int buffer_full = 602;    // too much already waiting to be sent while disconnected
inline constexpr int refused = 603;        // the server refused to connect (a namespace's CONNECT)
inline constexpr int unreachable = 604;    // no server could be reached
inline constexpr int protocol = 605;       // an answer the library could not read
}  // namespace errc

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const T& operator*() const& { return std::get<0>(v_); }

  const Error& error() const { return std::get<1>(v_); }
  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Error> v_;
};

struct Ok {};
using Status = Result<Ok>;

}  // namespace siomq
