#include "surfaces/tyo_mq/cluster_keys.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <vector>

#include "broker/key_directory.h"
#include "cluster/shared_keys.h"
#include "wire/log_text.h"

namespace siomq::surfaces {
namespace {

using cluster::SharedKeys;

void copy_keys(Context& ctx, const std::string& realm, const std::string& identity, std::vector<broker::PublicKey> keys) {
  ctx.keys.replace_keys(realm, identity, std::move(keys), [realm, identity](const Status& s) {
    if (!s)
      spdlog::warn("cluster: the keys of '{}' in realm '{}' are not copied here: {}", log_text(identity), log_text(realm),
                   s.error().message);
  });
}

// Reads the shared document and hands it to `then` (on the cluster's thread); a failure is logged.
template <class Then>
void with_shared_keys(Context& ctx, const char* what, Then then) {
  ctx.cluster->read_document(kSharedKeysDocument, [ctx = ctx.shared_from_this(), what, then = std::move(then)](
                                                      const Result<std::optional<std::string>>& text) {
    auto doc = text ? SharedKeys::parse(*text) : Result<SharedKeys>(text.error());
    if (!doc) return spdlog::warn("cluster: {}: {}", what, doc.error().message);
    then(*ctx, *doc);
  });
}

}  // namespace

void publish_key_shared(Context& ctx, Reply& reply, const std::string& realm, const std::string& identity,
                        broker::PublicKey key) {
  key.updated_ms = unix_ms();
  const broker::KeyDirectoryLimits limits = ctx.keys.limits();
  auto published = std::make_shared<std::vector<broker::PublicKey>>();
  ctx.cluster->change_document(
      kSharedKeysDocument,
      [realm, identity, key, limits, published](const std::optional<std::string>& text) -> Result<std::string> {
        auto doc = SharedKeys::parse(text);
        if (!doc) return doc.error();
        auto keys = doc->publish(realm, identity, key, limits);
        if (!keys) return keys.error();
        *published = std::move(*keys);
        return doc->text();
      },
      [ctx = ctx.shared_from_this(), kept = reply.keep(), realm, identity, published](const Status& s) {
        if (!s) return kept->ack("[" + error_reply(s.error().code, s.error().message) + "]");
        ctx->keys.replace_keys(realm, identity, *published, [ctx, kept, realm, identity](const Status& stored) {
          if (!stored) return kept->ack("[" + error_reply(stored.error().code, stored.error().message) + "]");
          ctx->cluster->publish(kKeysChannel, cluster::encode_keys_note({ctx->cluster->node_id(), realm, identity}));
          kept->ack("[{\"ok\":true}]");
        });
      });
}

void on_keys_note(Context& ctx, const std::string& text) {
  auto note = cluster::decode_keys_note(text);
  if (!note || note->node_id == ctx.cluster->node_id()) return;
  with_shared_keys(ctx, "a changed key is not copied here", [note = *note](Context& c, const SharedKeys& doc) {
    auto keys = doc.keys(note.realm, note.identity, c.keys.limits().max_keys_per_identity);
    if (!keys.empty()) copy_keys(c, note.realm, note.identity, std::move(keys));
  });
}

void copy_shared_keys(Context& ctx) {
  with_shared_keys(ctx, "the cluster's key directory is not copied here", [](Context& c, const SharedKeys& doc) {
    doc.for_each(c.keys.limits().max_keys_per_identity,
                 [&c](const std::string& realm, const std::string& identity, std::vector<broker::PublicKey> keys) {
                   copy_keys(c, realm, identity, std::move(keys));
                 });
  });
}

void forget_shared_keys(Context& ctx, const std::string& realm, std::function<void()> then) {
  if (!ctx.cluster) return;
  ctx.cluster->change_document(
      kSharedKeysDocument,
      [realm](const std::optional<std::string>& text) -> Result<std::string> {
        auto doc = SharedKeys::parse(text);
        if (!doc) return doc.error();
        doc->remove_realm(realm);
        return doc->text();
      },
      [realm, then = std::move(then)](const Status& s) {
        if (!s) spdlog::warn("removing realm '{}': its keys stay in the cluster's directory: {}", log_text(realm), s.error().message);
        if (then) then();
      });
}

}  // namespace siomq::surfaces
