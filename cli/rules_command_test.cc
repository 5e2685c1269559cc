// `ratelab rules`: a rules file validated and listed, imported into PostgreSQL and exported back.
#include <gtest/gtest.h>

#include "cli/cli_test_util.h"
#include "testing/files.h"
#include "testing/postgres.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;

constexpr char kRulesYaml[] = R"yaml(rules:
  - scope_type: user
    endpoint: /api/search
    algorithm: sliding-log
    max_requests: 100
    window_seconds: 60
  - scope_type: global
    endpoint: /checkout
    algorithm: token-bucket
    max_requests: 10
    window_seconds: 1
    burst_size: 50
)yaml";

TEST(RulesCommand, ValidatesAndListsAFile) {
  const fs::path dir = testing_files::TempDir("rules");
  const std::string file = testing_files::Write(dir, "rules.yaml", kRulesYaml).string();
  CliOutcome r = Ratelab({"rules", "validate", file});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.out.find(": 2 rules, all valid\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  user * /api/search: sliding-log 100 per 60s\n"), std::string::npos);
  r = Ratelab({"rules", "list", file});
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.out.find("  global * /checkout: token-bucket 10 per 1s, burst 50\n"),
            std::string::npos)
      << r.out;

  const std::string bad = testing_files::Write(dir, "bad.yaml",
                                               "rules:\n  - scope_type: user\n"
                                               "    algorithm: gcra\n"
                                               "    max_requests: 10\n"
                                               "    window_seconds: 60\n")
                              .string();
  r = Ratelab({"rules", "validate", bad});
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_EQ(r.err, "ratelab rules: " + bad +
                       ":2:5: burst_size is missing: a gcra rule needs a burst_size, how many "
                       "requests it admits at once\n");
}

TEST(RulesCommand, SaysWhatEachActionTakes) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"rules", "validate"},
       "ratelab rules: validate takes a rules file (ratelab rules --help)\n"},
      {{"rules", "list"},
       "ratelab rules: list takes a rules file or --database, one of them (ratelab rules "
       "--help)\n"},
      {{"rules", "import", "x.yaml"},
       "ratelab rules: import takes --database (ratelab rules --help)\n"},
      {{"rules", "export", "--database", "postgresql://u@/db", "--replace"},
       "ratelab rules: --replace only with import (ratelab rules --help)\n"},
  };
  for (const auto& [args, error] : cases) {
    const CliOutcome r = Ratelab(args);
    EXPECT_EQ(r.exit, kExitBadInput);
    EXPECT_EQ(r.err, error);
  }
  const CliOutcome url = Ratelab({"rules", "export", "--database", "mysql://x"});
  EXPECT_EQ(url.exit, kExitBadInput);
  EXPECT_NE(url.err.find("'mysql://x' is not a PostgreSQL URL"), std::string::npos) << url.err;
  const CliOutcome help = Ratelab({"rules", "--help"});
  EXPECT_NE(help.out.find("  import   write a file's rules into --database"), std::string::npos)
      << help.out;
}

TEST(RulesCommand, ImportsIntoPostgresAndExportsTheSameRules) {
  RATELAB_START_POSTGRES(server, PostgresServerOptions{});
  const fs::path dir = testing_files::TempDir("rules-db");
  const std::string file = testing_files::Write(dir, "rules.yaml", kRulesYaml).string();
  CliOutcome r = Ratelab({"rules", "import", file, "--database", server->url()});
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_EQ(r.out, "imported " + file + ": 2 added, 0 changed, 0 unchanged\n");
  r = Ratelab({"rules", "import", file, "--database", server->url()});
  EXPECT_EQ(r.out, "imported " + file + ": 0 added, 0 changed, 2 unchanged\n");

  const CliOutcome exported = Ratelab({"rules", "export", "--database", server->url()});
  ASSERT_EQ(exported.exit, kExitOk) << exported.err;
  const std::string again = testing_files::Write(dir, "exported.yaml", exported.out).string();
  EXPECT_EQ(Ratelab({"rules", "list", again}).out,
            Ratelab({"rules", "list", "--database", server->url()}).out);
  EXPECT_EQ(Ratelab({"rules", "list", file}).out, Ratelab({"rules", "list", again}).out)
      << "the file's rules, ids derived from their targets, came back";

  // Only the search rule, with --replace: the checkout rule goes.
  const std::string one =
      testing_files::Write(
          dir, "one.yaml",
          std::string(kRulesYaml).substr(0, std::string(kRulesYaml).find("  - scope_type: global")))
          .string();
  r = Ratelab({"rules", "import", one, "--database", server->url(), "--replace"});
  EXPECT_EQ(r.out, "imported " + one + ": 0 added, 0 changed, 1 unchanged, 1 deleted\n") << r.err;
  const std::string out = (dir / "out.yaml").string();
  r = Ratelab({"rules", "export", "--database", server->url(), "--out", out});
  EXPECT_EQ(r.err, "wrote 1 rules to " + out + "\n");
  EXPECT_NE(testing_files::Read(dir / "out.yaml").find("endpoint: \"/api/search\""),
            std::string::npos);
}

}  // namespace
}  // namespace ratelab
