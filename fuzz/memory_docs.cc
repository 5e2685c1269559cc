// MemoryDocs (impl/store/memory_docs.h) on any sequence of commands: each command line is a JSON
// command document ({"findAndModify": "limits", "query": {...}, "update": {...}, "upsert": true}).
// Every command gets a reply document, never a crash; MemoryDocs is always reachable.
#include "impl/store/memory_docs.h"

#include <cstddef>
#include <cstdint>
#include <memory>

#include "fuzz/store_script.h"
#include "nlohmann/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ratelab::fuzz::RunStoreScript(
      data, size,
      [](const ratelab::Clock& clock, ratelab::Durability durability) {
        return std::make_unique<ratelab::MemoryDocs>(clock, durability);
      },
      [](ratelab::MemoryDocs& docs, std::string_view line) {
        const nlohmann::json command = nlohmann::json::parse(line, nullptr, false);
        if (command.is_discarded()) return;
        const ratelab::Result<ratelab::Document> reply = docs.Execute(command);
        if (!reply.ok() || !reply->is_object() || !reply->contains("ok")) __builtin_trap();
      });
  return 0;
}
