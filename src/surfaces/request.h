// A request as every surface's handlers see it, whatever carried it (a Socket.IO event, later an HTTP
// call): the event name, its raw JSON arguments and whether the requester waits for an answer.
//
// The views point into the transport's buffers: valid for the handler's call only; a handler that
// answers later copies what it needs.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace siomq::json {
class Outline;
}

namespace siomq::surfaces {

struct Request {
  std::string_view event;
  // The JSON array of the call as Socket.IO sends it, event name first: ["EVENT", arg, ...].
  std::string_view args;
  // Binary attachments the placeholders in `args` refer to.
  std::span<const std::string> attachments;
  bool wants_ack = false;
  // Where the transport's validating pass found the elements of `args` and their members, or null: a
  // reader takes them from here instead of scanning again (wire/json_outline.h).
  const ::siomq::json::Outline* outline = nullptr;
};

}  // namespace siomq::surfaces
