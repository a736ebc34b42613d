#include "server/settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace siomq::server {
namespace {

using nlohmann::json;

TEST(Settings, DefaultsMatchTheReferenceLauncher) {
  auto s = settings_from_json(json::object());
  EXPECT_EQ(s.transport.path, "/socket.io/");
  EXPECT_EQ(s.transport.ping_interval.count(), 5000);
  EXPECT_EQ(s.transport.ping_timeout.count(), 10000);
  EXPECT_EQ(s.transport.max_payload, 1048576u);
  EXPECT_TRUE(s.transport.allow_eio3);
  EXPECT_FALSE(s.diagnostics);
}

TEST(Settings, ReadsTheTransportBlockAndKeepsTheDocument) {
  auto s = settings_from_json(json::parse(R"({"transport":{"path":"/mq","ping_interval":300,"max_payload":1000,
      "allow_eio3":false},"diagnostics":true,"auth":{"enabled":false},"something_else":1})"));
  EXPECT_EQ(s.transport.path, "/mq/");
  EXPECT_EQ(s.transport.ping_interval.count(), 300);
  EXPECT_EQ(s.transport.max_payload, 1000u);
  EXPECT_FALSE(s.transport.allow_eio3);
  EXPECT_TRUE(s.diagnostics);
  EXPECT_TRUE(s.document->contains("auth"));
}

TEST(Settings, ReadsTheClusterBlockWithTheReferenceAliases) {
  auto off = settings_from_json(json::parse(R"({"storage_options":{"url":"redis://r:6380"}})"));
  EXPECT_FALSE(off.cluster.enabled);
  EXPECT_EQ(off.cluster.redis_url, "redis://r:6380");  // storage_options.url, as §10 says
  EXPECT_EQ(off.cluster.prefix, "tyo-mq:cluster");
  auto on = settings_from_json(json::parse(R"({"cluster":{"enabled":true,"redisUrl":"redis://c","channelPrefix":"p",
      "nodeId":"n1","node_lease_ms":5000}})"));
  EXPECT_TRUE(on.cluster.enabled);
  EXPECT_EQ(on.cluster.redis_url, "redis://c");
  EXPECT_EQ(on.cluster.prefix, "p");
  EXPECT_EQ(on.cluster.node_id, "n1");
  EXPECT_EQ(on.cluster.node_lease_ms, 5000);
  for (const char* bad : {R"({"cluster":5})", R"({"cluster":{"enabled":"yes"}})", R"({"cluster":{"prefix":""}})",
                          R"({"cluster":{"node_id":7}})", R"({"cluster":{"reference_relay":"sometimes"}})",
                          R"({"cluster":{"node_lease_ms":10}})"}) {
    EXPECT_THROW(settings_from_json(json::parse(bad)), std::runtime_error) << bad;
  }
}

TEST(Settings, WrongTypesAreStartUpErrors) {
  EXPECT_THROW(settings_from_json(json::parse("[]")), std::runtime_error);
  EXPECT_THROW(settings_from_json(json::parse(R"({"transport":[]})")), std::runtime_error);
  EXPECT_THROW(settings_from_json(json::parse(R"({"transport":{"ping_interval":"5s"}})")), std::runtime_error);
  EXPECT_THROW(settings_from_json(json::parse(R"({"transport":{"ping_timeout":0}})")), std::runtime_error);
  EXPECT_THROW(settings_from_json(json::parse(R"({"transport":{"max_payload":-1}})")), std::runtime_error);
  EXPECT_THROW(settings_from_json(json::parse(R"({"transport":{"path":"nope"}})")), std::runtime_error);
  EXPECT_THROW(settings_from_json(json::parse(R"({"transport":{"allow_eio3":1}})")), std::runtime_error);
  EXPECT_THROW(settings_from_json(json::parse(R"({"diagnostics":"yes"})")), std::runtime_error);
}

TEST(Settings, EnvironmentOverridesMaxPayload) {
  auto s = settings_from_json(json::object());
  setenv("TYO_MQ_MAX_HTTP_BUFFER_SIZE", "1234", 1);
  apply_environment(s);
  EXPECT_EQ(s.transport.max_payload, 1234u);
  setenv("TYO_MQ_MAX_HTTP_BUFFER_SIZE", "12x", 1);
  EXPECT_THROW(apply_environment(s), std::runtime_error);
  unsetenv("TYO_MQ_MAX_HTTP_BUFFER_SIZE");
}

TEST(Settings, MissingOrBrokenFilesAreErrors) {
  EXPECT_THROW(load_settings_file("/nonexistent/settings.json"), std::runtime_error);
}

TEST(Settings, StorageBlockAsTyoMqReadsIt) {
  auto d = settings_from_json(json::object()).storage;
  EXPECT_EQ(d.backend, "file");
  EXPECT_EQ(d.default_ttl_ms, 86400000);
  EXPECT_EQ(d.max_queued_per_realm, 0u);
  auto s = settings_from_json(json::parse(R"({"storage":"redis","storage_options":{"url":"redis://h:1","prefix":"x",
      "default_ttl":"2h"},"max_queued_per_realm":10})")).storage;
  EXPECT_EQ(s.backend, "redis");
  EXPECT_EQ(s.redis_url, "redis://h:1");
  EXPECT_EQ(s.redis_prefix, "x");
  EXPECT_EQ(s.default_ttl_ms, 7200000);
  EXPECT_EQ(s.max_queued_per_realm, 10u);
  EXPECT_EQ(settings_from_json(json::parse(R"({"storage":"sqlite"})")).storage.backend, "file");
  EXPECT_EQ(settings_from_json(json::parse(R"({"default_ttl":-1})")).storage.default_ttl_ms, std::nullopt);
  EXPECT_EQ(settings_from_json(json::parse(R"({"default_ttl":60})")).storage.default_ttl_ms, 60000);
  // limits.max_queued_per_realm counts unless the block is disabled.
  EXPECT_EQ(settings_from_json(json::parse(R"({"limits":{"max_queued_per_realm":5}})")).storage.max_queued_per_realm, 5u);
  EXPECT_EQ(settings_from_json(json::parse(R"({"limits":{"enabled":false,"max_queued_per_realm":5}})"))
                .storage.max_queued_per_realm,
            0u);
  for (const char* bad : {R"({"storage":"mongo"})", R"({"storage":1})", R"({"storage_options":[]})",
                          R"({"storage_options":{"url":5}})", R"({"default_ttl":"soon"})", R"({"default_ttl":true})",
                          R"({"max_queued_per_realm":"many"})"})
    EXPECT_THROW(settings_from_json(json::parse(bad)), std::runtime_error) << bad;
}

TEST(Settings, TlsBlockIsReadWithItsDefaults) {
  EXPECT_FALSE(settings_from_json(json::object()).tls.has_value());
  auto s = settings_from_json(json::parse(R"({"tls":{"cert":"/c.pem","key":"/k.pem"}})"));
  ASSERT_TRUE(s.tls.has_value());
  EXPECT_EQ(s.tls->cert, "/c.pem");
  EXPECT_EQ(s.tls->key, "/k.pem");
  EXPECT_EQ(s.tls->ca, "");
  EXPECT_EQ(s.tls->min_version, "1.2");
  EXPECT_FALSE(s.tls->port.has_value());
  auto full = settings_from_json(
      json::parse(R"({"tls":{"cert":"c","key":"k","ca":"ca","min_version":"1.3","port":8443,"other":1}})"));
  EXPECT_EQ(full.tls->ca, "ca");
  EXPECT_EQ(full.tls->min_version, "1.3");
  EXPECT_EQ(full.tls->port, 8443);
  EXPECT_EQ(settings_from_json(json::parse(R"({"tls":{"cert":"c","key":"k","port":0}})")).tls->port, 0);
}

TEST(Settings, TlsBlockErrorsAreStartUpErrors) {
  for (const char* bad : {R"({"tls":true})", R"({"tls":{"cert":"c"}})", R"({"tls":{"key":"k"}})",
                          R"({"tls":{"cert":"","key":"k"}})", R"({"tls":{"cert":"c","key":5}})",
                          R"({"tls":{"cert":"c","key":"k","ca":[]}})", R"({"tls":{"cert":"c","key":"k","min_version":"1.1"}})",
                          R"({"tls":{"cert":"c","key":"k","min_version":1.2}})", R"({"tls":{"cert":"c","key":"k","port":-1}})",
                          R"({"tls":{"cert":"c","key":"k","port":65536}})", R"({"tls":{"cert":"c","key":"k","port":"443"}})"}) {
    EXPECT_THROW(settings_from_json(json::parse(bad)), std::runtime_error) << bad;
  }
}

}  // namespace
}  // namespace siomq::server
