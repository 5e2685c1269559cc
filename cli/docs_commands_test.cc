// Every `build/ratelab` command README.md shows runs as shown: it exits as a command that did its
// job (0, or 1 where it shows a violation), and each output line shown under it (`# ...`, where
// `...` stands for what varies) is in what it printed. The commands run in a directory of their
// own holding build/ratelab and examples/, so that they read and write as a user's would.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/cli_test_util.h"
#include "testing/files.h"
#include "testing/process.h"
#include "testing/serve_process.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;

struct ShownCommand {
  std::string command;             // as a shell runs it
  std::vector<std::string> shown;  // the output lines shown under it, without "# "
};

// The `build/ratelab` commands of the ```sh blocks of `markdown`, each with the lines shown under
// it (a line ending in a backslash goes on).
std::vector<ShownCommand> ShownCommands(const std::string& markdown) {
  std::vector<ShownCommand> out;
  bool in_sh = false;
  std::istringstream lines(markdown);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("```")) {
      in_sh = line == "```sh";
      continue;
    }
    if (!in_sh) continue;
    if (line.starts_with("build/ratelab ")) {
      out.push_back({line, {}});
      while (out.back().command.ends_with("\\") && std::getline(lines, line)) {
        out.back().command.pop_back();
        out.back().command += line;
      }
    } else if (line.starts_with("# ") && !out.empty()) {
      out.back().shown.push_back(line.substr(2));
    }
  }
  return out;
}

// Whether `line` (with "..." for what varies) is in `output`, its pieces in order.
bool Shows(const std::string& output, const std::string& line) {
  size_t at = 0;
  for (absl::string_view piece : absl::StrSplit(line, "...")) {
    piece = absl::StripAsciiWhitespace(piece);
    if (piece.empty()) continue;
    at = output.find(std::string(piece), at);
    if (at == std::string::npos) return false;
    at += piece.size();
  }
  return true;
}

TEST(DocsCommands, EveryCommandTheReadmeShowsRunsAsShown) {
  const fs::path dir = testing_files::TempDir("readme");
  fs::create_directories(dir / "build");
  fs::create_symlink(RATELAB_BINARY, dir / "build/ratelab");
  fs::create_directory_symlink(fs::path(RATELAB_SOURCE_DIR) / "examples", dir / "examples");
  ServeProcess serve({"--rules", (fs::path(RATELAB_SOURCE_DIR) / "examples/rules.yaml").string()},
                     dir / "serve.txt");
  const std::vector<ShownCommand> commands =
      ShownCommands(testing_files::Read(fs::path(RATELAB_SOURCE_DIR) / "README.md"));
  ASSERT_GE(commands.size(), 3u);
  for (const ShownCommand& c : commands) {
    // The service the README starts on 8080 is the one started here.
    const std::string command = absl::StrReplaceAll(
        c.command, {{"127.0.0.1:8080", "127.0.0.1:" + std::to_string(serve.port())}});
    const testing_process::Finished ran = testing_process::RunToEnd(
        {"/bin/sh", "-c", "cd '" + dir.string() + "' && " + command}, dir.string());
    const std::string& output = ran.output;
    const bool shows_violation = Shows(output, "broken for");
    EXPECT_EQ(ran.exit, shows_violation && command.find(" run ") != std::string::npos
                            ? kExitViolation
                            : kExitOk)
        << command << "\n"
        << output;
    for (const std::string& line : c.shown) {
      EXPECT_TRUE(Shows(output, line)) << command << "\nshows: " << line << "\nprinted:\n"
                                       << output;
    }
  }
}

}  // namespace
}  // namespace ratelab
