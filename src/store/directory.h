// The directory family: small named values the broker keeps per realm, such as the E2EE public-key
// directory ("e2ee": a client's key by its name) and auth data ("auth"). One record per (directory,
// realm, key); the value is JSON the directory's owner defines (the store does not look inside).
//
// Key: the directory name, a NUL byte, the realm, a NUL byte, the entry's key (the redis field is the
// same bytes); load() returns the entries in (directory, realm, key) order. Directory and realm names
// hold no NUL byte (the key would otherwise not name one entry); the entry's key may hold any bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "store/op.h"
#include "wire/result.h"

namespace siomq::store {

struct DirectoryEntry {
  std::string directory;  // "e2ee", "auth", …
  std::string realm;
  std::string key;
  std::string value;       // any JSON value, as text
  int64_t updated_ms = 0;  // when it was last set, Unix ms
};

// One JSON object: {"directory","realm","key","value" (spliced raw),"updated_at"}.
std::string encode_directory_entry(const DirectoryEntry& entry);
Result<DirectoryEntry> decode_directory_entry(std::string_view text);

std::string directory_key(std::string_view directory, std::string_view realm, std::string_view key);

Op put(const DirectoryEntry& entry);
Op erase_directory_entry(std::string_view directory, std::string_view realm, std::string_view key);
// Moves an entry its owner cannot use to the quarantine (its encoding kept byte for byte).
Op quarantine(const DirectoryEntry& entry);

}  // namespace siomq::store
