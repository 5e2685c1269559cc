// Where ratelab writes: never into `/` or a system directory, never over others' files unless
// forced (and then beside them), and never leaving its own stale files beside new ones.
#include "reports/output_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ratelab {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("ratelab-output-dir-" + name);
  fs::remove_all(dir);
  return dir;
}

void Touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "x";
}

TEST(OutputDir, TheRootAndSystemDirectoriesAreRefusedEvenWhenForced) {
  for (const char* dir : {"/", "/etc", "/usr/share/x", "/tmp", "/home", "/proc/self"}) {
    const Result<OutputDir> out = OutputDir::Prepare(dir, /*force=*/true, "--out");
    ASSERT_FALSE(out.ok()) << dir;
    EXPECT_NE(out.status().message().find("--out: '" + std::string(dir) + "' is"),
              std::string::npos)
        << out.status();
  }
  // Under them, a directory of one's own is fine.
  EXPECT_TRUE(OutputDir::Prepare("/tmp/ratelab-report-x", false, "--out").ok());
}

TEST(OutputDir, OthersFilesAreRefusedUnlessForcedAndThenKept) {
  const fs::path dir = FreshDir("others");
  Touch(dir / "notes.txt");
  const Result<OutputDir> refused = OutputDir::Prepare(dir.string(), false, "--out");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("holds 1 file(s) ratelab did not write (such as "
                                            "notes.txt); give an empty or new directory, or "
                                            "--force"),
            std::string::npos)
      << refused.status();
  EXPECT_TRUE(fs::exists(dir / "notes.txt")) << "refusing touches nothing";

  const Result<OutputDir> forced = OutputDir::Prepare(dir.string(), true, "--out");
  ASSERT_TRUE(forced.ok()) << forced.status();
  ASSERT_TRUE(forced->Clear().ok());
  Touch(dir / "report.json");
  ASSERT_TRUE(forced->Record().ok());
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  std::ifstream manifest(dir / kManifestName);
  std::string listed((std::istreambuf_iterator<char>(manifest)), {});
  EXPECT_EQ(listed, "report.json\n") << "others' files are not ratelab's";
}

TEST(OutputDir, RewritingRemovesRatelabsOwnOldFilesFirst) {
  const fs::path dir = FreshDir("rewrite");
  Result<OutputDir> first = OutputDir::Prepare(dir.string(), false, "--out");
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->Clear().ok());
  Touch(dir / "report.json");
  Touch(dir / "plots" / "old-plot.svg");
  ASSERT_TRUE(first->Record().ok());

  Result<OutputDir> second = OutputDir::Prepare(dir.string(), false, "--out");
  ASSERT_TRUE(second.ok()) << "its own files are not in the way: " << second.status();
  EXPECT_TRUE(fs::exists(dir / "plots" / "old-plot.svg")) << "nothing removed before Clear";
  ASSERT_TRUE(second->Clear().ok());
  EXPECT_FALSE(fs::exists(dir / "plots" / "old-plot.svg")) << "no stale plot beside new ones";
  EXPECT_FALSE(fs::exists(dir / "report.json"));
}

TEST(OutputDir, AReportWrittenBeforeManifestsIsRecognised) {
  const fs::path dir = FreshDir("legacy");
  Touch(dir / "report.html");
  Touch(dir / "plots" / "window.svg");
  EXPECT_TRUE(OutputDir::Prepare(dir.string(), false, "--out").ok());
  Touch(dir / "plots" / "deeper" / "x.svg");
  EXPECT_FALSE(OutputDir::Prepare(dir.string(), false, "--out").ok());
}

TEST(OutputDir, AFileIsNotADirectory) {
  const fs::path dir = FreshDir("file");
  Touch(dir);
  const Result<OutputDir> out = OutputDir::Prepare(dir.string(), true, "--out");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("is a file, not a directory"), std::string::npos);
}

}  // namespace
}  // namespace ratelab

namespace ratelab {
namespace {

// A link where ratelab writes (a `plots` link to another folder, report.html to a file, a link
// inside plots/) once had what it names overwritten, without --force: each is refused, forced or
// not, and what it names is left as it was. A link elsewhere is another's file.
TEST(OutputDir, ALinkWhereRatelabWritesIsRefusedEvenWhenForced) {
  const fs::path elsewhere = FreshDir("elsewhere");
  Touch(elsewhere / "precious.svg");
  Touch(elsewhere / "notes.txt");
  struct Case {
    std::string link;
    fs::path target;
  };
  for (const Case& c : {Case{"plots", elsewhere}, Case{"report.html", elsewhere / "notes.txt"},
                        Case{"plots/latency.svg", elsewhere / "precious.svg"},
                        Case{kManifestName, elsewhere / "notes.txt"}}) {
    SCOPED_TRACE(c.link);
    const fs::path dir = FreshDir("link");
    fs::create_directories((dir / c.link).parent_path());
    fs::create_symlink(c.target, dir / c.link);
    for (const bool force : {false, true}) {
      const Result<OutputDir> out = OutputDir::Prepare(dir.string(), force, "--out");
      ASSERT_FALSE(out.ok());
      EXPECT_NE(out.status().message().find("--out: '" + (dir / c.link).string() +
                                            "' is a symbolic link where ratelab writes a file of "
                                            "its own; remove it, or give another directory"),
                std::string::npos)
          << out.status();
    }
  }
  const fs::path dir = FreshDir("link-elsewhere");
  fs::create_directories(dir);
  fs::create_symlink(elsewhere, dir / "mine");
  const Result<OutputDir> refused = OutputDir::Prepare(dir.string(), false, "--out");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("holds 1 file(s) ratelab did not write (such as mine)"),
            std::string::npos)
      << refused.status();
  EXPECT_TRUE(OutputDir::Prepare(dir.string(), true, "--out").ok());
  std::ifstream precious(elsewhere / "precious.svg");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(precious)), {}), "x");
}

}  // namespace
}  // namespace ratelab
