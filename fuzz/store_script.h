// What the store fuzzers share: an input is a script of lines run against one in-process store,
//   @N        the clock moves on N milliseconds (0..10^9),
//   !restart  the store restarts (under the durability the input's first byte picks),
//   anything else is one command, which the target reads and runs.
#ifndef RATELAB_FUZZ_STORE_SCRIPT_H_
#define RATELAB_FUZZ_STORE_SCRIPT_H_

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/text.h"
#include "impl/core/clock.h"
#include "impl/store/durability.h"

namespace ratelab::fuzz {

// Runs `data` on `store` (a MemoryKv or a MemoryDocs made with the clock and durability given
// to `make`), calling `command(store, line)` for each command line.
template <typename Make, typename Command>
void RunStoreScript(const uint8_t* data, size_t size, Make make, Command command) {
  if (size == 0) return;
  const Durability durability = kDurabilities[data[0] % kDurabilities.size()];
  ManualClock clock(FromUnixNanos(1'767'225'600'000'000'000));
  auto store = make(clock, durability);
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  for (std::string_view line : Split(text, '\n')) {
    if (line.starts_with('@')) {
      int64_t ms = 0;
      const auto [end, error] = std::from_chars(line.data() + 1, line.data() + line.size(), ms);
      if (error == std::errc() && ms >= 0 && ms <= 1'000'000'000) {
        clock.Advance(Duration(ms * 1'000'000));
      }
    } else if (line == "!restart") {
      store->Restart();
    } else if (!line.empty()) {
      command(*store, line);
    }
  }
}

}  // namespace ratelab::fuzz

#endif  // RATELAB_FUZZ_STORE_SCRIPT_H_
