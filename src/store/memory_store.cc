// The memory backend: nothing survives a restart. The engine's in-memory state is the only copy, so a
// write has nothing to do and always succeeds.
#include "store/backend.h"

namespace siomq::store {
namespace {

class MemoryStore final : public Backend {
 public:
  const char* name() const override { return "memory"; }
  Contents load() override { return {}; }
  Status write(const std::vector<Op>&, bool) override { return Ok{}; }
};

}  // namespace

std::unique_ptr<Backend> open_memory() { return std::make_unique<MemoryStore>(); }

}  // namespace siomq::store
