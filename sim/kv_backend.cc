#include "sim/kv_backend.h"

#include <algorithm>

#include "impl/store/lua_scripting.h"
#include "impl/store/memory_kv.h"

namespace ratelab {

namespace {

class MemoryBackend final : public KvBackend {
 public:
  MemoryBackend(const Clock& clock, Durability durability, std::shared_ptr<LuaCache> lua_cache)
      : kv_(clock, durability, MemoryKv::kScriptBudget, std::move(lua_cache)) {}
  Result<KvReply> Execute(std::span<const std::string> argv) override { return kv_.Execute(argv); }
  void Restart() override { kv_.Restart(); }
  std::vector<std::string> KeysWithoutExpiry() override { return kv_.KeysWithoutExpiry(); }
  StateSize Usage() override { return kv_.Usage(); }
  void KeepLapses() override { kv_.KeepLapses(); }
  std::vector<KeyLapse> Lapses() override { return kv_.lapses(); }
  Status OnReplica(ReplicaEvent event) override {
    switch (event) {
      case ReplicaEvent::kDetach:
        kv_.DetachReplica();
        break;
      case ReplicaEvent::kFailOver:
        kv_.FailOver();
        break;
    }
    return absl::OkStatus();
  }

 private:
  MemoryKv kv_;
};

}  // namespace

std::unique_ptr<KvBackend> OpenMemoryKv(const Clock& clock, Durability durability,
                                        std::shared_ptr<LuaCache> lua_cache) {
  return std::make_unique<MemoryBackend>(clock, durability, std::move(lua_cache));
}

}  // namespace ratelab
