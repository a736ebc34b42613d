// Standard base64 (RFC 4648, with padding), as Engine.IO uses for binary packets in text payloads.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace siomq::base64 {

std::string encode(std::string_view bytes);
void encode_append(std::string& out, std::string_view bytes);
size_t encoded_size(size_t n);

// Strict decode: only the standard alphabet, padding only at the end. nullopt on any error.
std::optional<std::string> decode(std::string_view text);

}  // namespace siomq::base64
