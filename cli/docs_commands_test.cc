// Every command README.md, adapters/README.md and docs/*.md show (`build/ratelab ...`, `curl ...`,
// and the benchmarks' `build/bench/...` and `bench/...`, in ```sh blocks) runs as shown: it exits
// as a command that did its job (0, or 1 where it shows a violation), and each output line shown
// under it (`# ...`, where
// `...` stands for what varies) is in what it printed. A page's commands run in order, in a
// directory of their own holding build/ratelab, examples/, scenarios/ and adapters/ (and
// build/bench/ and bench/ where the benchmarks were built: a sanitizer's build has none, and then
// their commands are not run), so that they read and write as a user's would; the service a page
// starts on 127.0.0.1:8080 (`serve ... &`) is one the test starts, with examples/rules.yaml. Shown
// but not run: a command that names the reader's own servers (a redis://, unix:// or postgresql://
// URL) or elides part of itself with `...`, one that starts the service, and the blocks fenced
// ```shell (forms that need a server of the reader's, such as the admin API's).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
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

// The `build/ratelab` and `curl` commands of the ```sh blocks of `markdown`, each with the lines
// shown under it (a line ending in a backslash goes on).
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
    if (line.starts_with("build/ratelab ") || line.starts_with("curl ") ||
        line.starts_with("build/bench/") || line.starts_with("bench/")) {
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

// Whether a shown command is one to run here (see the top of the file).
bool Runnable(const std::string& command) {
#ifndef RATELAB_BENCH_DIR
  if (command.starts_with("build/bench/") || command.starts_with("bench/")) return false;
#endif
  for (const char* theirs : {"redis://", "unix://", "postgresql://", "...", "me@"}) {
    if (command.find(theirs) != std::string::npos) return false;
  }
  return !absl::EndsWith(absl::StripTrailingAsciiWhitespace(command.substr(0, command.find(" #"))),
                         "&");
}

// Runs the commands `page` shows, as the top of the file says; how many ran.
int RunShownCommands(const fs::path& page, uint16_t port) {
  const fs::path dir = testing_files::TempDir("docs-" + page.stem().string());
  fs::create_directories(dir / "build");
  fs::create_symlink(RATELAB_BINARY, dir / "build/ratelab");
  for (const char* shared : {"examples", "scenarios", "bench", "adapters"}) {
    fs::create_directory_symlink(fs::path(RATELAB_SOURCE_DIR) / shared, dir / shared);
  }
#ifdef RATELAB_BENCH_DIR
  fs::create_directory_symlink(RATELAB_BENCH_DIR, dir / "build/bench");
#endif
  int ran_count = 0;
  for (const ShownCommand& c : ShownCommands(testing_files::Read(page))) {
    if (!Runnable(c.command)) continue;
    ++ran_count;
    const std::string command =
        absl::StrReplaceAll(c.command, {{"127.0.0.1:8080", "127.0.0.1:" + std::to_string(port)},
                                        {"localhost:8080", "127.0.0.1:" + std::to_string(port)}});
    const testing_process::Finished ran = testing_process::RunToEnd(
        {"/bin/sh", "-c", "cd '" + dir.string() + "' && " + command}, dir.string());
    const std::string& output = ran.output;
    const bool shows_violation =
        Shows(output, "broken for") || Shows(output, "BROKEN") || Shows(output, "VIOLATION");
    // The commands that exit 1 on what they find; compare, demo and worst report it and exit 0.
    const std::vector<std::string> words = absl::StrSplit(command, ' ');
    const bool exits_on_violation =
        words.size() > 1 &&
        (words[1] == "run" || words[1] == "check" || words[1] == "stress" || words[1] == "probe");
    EXPECT_EQ(ran.exit, shows_violation && exits_on_violation ? kExitViolation : kExitOk)
        << page.filename() << ": " << command << "\n"
        << output;
    for (std::string line : c.shown) {
      line = absl::StrReplaceAll(line, {{"127.0.0.1:8080", "127.0.0.1:" + std::to_string(port)}});
      EXPECT_TRUE(Shows(output, line))
          << page.filename() << ": " << command << "\nshows: " << line << "\nprinted:\n"
          << output;
    }
  }
  return ran_count;
}

TEST(DocsCommands, EveryCommandTheReadmeAndTheDocsShowRunsAsShown) {
  const fs::path source(RATELAB_SOURCE_DIR);
  const fs::path serve_dir = testing_files::TempDir("docs-serve");
  fs::create_directories(serve_dir);
  ServeProcess serve({"--rules", (source / "examples/rules.yaml").string()},
                     serve_dir / "serve.txt");
  EXPECT_GE(RunShownCommands(source / "README.md", serve.port()), 3);
  EXPECT_EQ(RunShownCommands(source / "adapters/README.md", serve.port()), 4);
  int in_docs = 0;
  std::vector<fs::path> pages;
  for (const fs::directory_entry& page : fs::directory_iterator(source / "docs")) {
    if (page.path().extension() == ".md") pages.push_back(page.path());
  }
  std::sort(pages.begin(), pages.end());
  for (const fs::path& page : pages) in_docs += RunShownCommands(page, serve.port());
#ifdef RATELAB_BENCH_DIR
  EXPECT_GE(in_docs, 42);  // 5 of them the benchmarks'
#else
  EXPECT_GE(in_docs, 37);
#endif
}

}  // namespace
}  // namespace ratelab
