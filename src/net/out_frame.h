// An outbound Engine.IO packet, shared between every connection it is sent to.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "net/write_latency.h"

namespace siomq::net {

// `bytes` of a text frame start with the Engine.IO type digit ("42[...]"); a binary frame holds a
// message's raw bytes. Encoded once, the same bytes go to every recipient.
// `read_us` is the stamp of the read that caused the frame, if any (write_latency.h).
struct OutFrame {
  std::shared_ptr<const std::string> bytes;
  bool binary = false;
  uint32_t read_us = read_stamp();

  size_t size() const { return bytes ? bytes->size() : 0; }
};

// A transport receipt: true once every frame queued before it was handed to the transport (written to
// the TCP socket, or taken by a long-poll response); false when the connection closed first.
using SentReceipt = std::function<void(bool sent)>;

inline OutFrame text_frame(std::string s) { return {std::make_shared<const std::string>(std::move(s)), false}; }
inline OutFrame binary_frame(std::string s) { return {std::make_shared<const std::string>(std::move(s)), true}; }

}  // namespace siomq::net
