// Sequence numbers in keys: 8 bytes big-endian, so that byte order (RocksDB's iteration order) is
// numeric order. Used by the row families and by the stream log.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace siomq::store {

inline constexpr size_t kSeqKeySize = 8;

inline void append_seq_key(std::string& out, uint64_t seq) {
  for (size_t i = kSeqKeySize; i-- > 0;) out.push_back(static_cast<char>((seq >> (8 * i)) & 0xff));
}

inline std::string seq_key(uint64_t seq) {
  std::string key;
  key.reserve(kSeqKeySize);
  append_seq_key(key, seq);
  return key;
}

// The seq of an 8-byte key; nullopt for any other length.
inline std::optional<uint64_t> seq_of_key(std::string_view key) {
  if (key.size() != kSeqKeySize) return std::nullopt;
  uint64_t seq = 0;
  for (char c : key) seq = (seq << 8) | static_cast<unsigned char>(c);
  return seq;
}

}  // namespace siomq::store
