// Helpers the stored records' tests share (store_test.cc, record_families_test.cc): one definition, so
// that the two files can share a unity translation unit.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "wire/result.h"

namespace siomq::store::record_checks {

// Every byte value once, 0 to 255: what a record must carry through its encoding unchanged.
inline std::string all_bytes() {
  std::string s;
  for (int c = 0; c < 256; ++c) s.push_back(static_cast<char>(c));
  return s;
}

// `r`, decoded from `text`, is refused with a message that says `why`.
template <class T>
void expect_refused(const Result<T>& r, const std::string& text, const std::string& why) {
  ASSERT_FALSE(r.ok()) << "accepted: " << text;
  EXPECT_NE(r.error().message.find(why), std::string::npos) << text << " -> " << r.error().message;
}

}  // namespace siomq::store::record_checks
