#include "wire/subscription_key.h"

#include <gtest/gtest.h>

namespace siomq::tyo_mq {
namespace {

TEST(SubscriptionKey, ProducerDashEventLowercased) {
  EXPECT_EQ(subscription_key("ProdA", "Hello"), "proda-hello");
  EXPECT_EQ(subscription_key("TYO-MQ-ALL", "Org/+/Cmd"), "tyo-mq-all-org/+/cmd");
  EXPECT_EQ(subscription_key("", ""), "-");
}

TEST(SubscriptionKey, EveryEventOfAProducerKeepsTheSuffixAsWritten) {
  EXPECT_EQ(subscription_key("ProdA", "TM-ALL"), "proda-TM-ALL");
  EXPECT_EQ(subscription_key("ProdA", "tm-all"), "proda-tm-all");  // only TM-ALL itself means every event
}

TEST(SubscriptionKey, LowercasesAsciiOnly) {
  EXPECT_EQ(lower("AbC-\xC3\x89t\xC3\xA9"), "abc-\xC3\x89t\xC3\xA9");  // É stays: the "C" locale's tolower
}

TEST(SubscriptionKey, AssignReplacesTheBuffer) {
  std::string key = "left over from the last message";
  assign_subscription_key(key, "P", "E");
  EXPECT_EQ(key, "p-e");
  assign_subscription_key(key, "P", "TM-ALL");
  EXPECT_EQ(key, "p-TM-ALL");
}

}  // namespace
}  // namespace siomq::tyo_mq
