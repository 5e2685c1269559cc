// The bash completion and the man page are written from the option tables --help prints: every
// option of every command's --help is in both; the completion works in bash, and the man page is
// roff that groff reads without a warning.
#include "cli/cli_docs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <set>

#include "cli/cli_test_util.h"
#include "testing/files.h"

namespace ratelab {
namespace {

namespace fs = std::filesystem;
using testing_files::Read;
using testing_files::TempDir;
using testing_files::Write;

const char* const kCommands[] = {"list", "demo", "compare", "check", "report", "run", "stress"};

// The long options a command's --help lists.
std::set<std::string> HelpOptions(const std::string& command) {
  const std::string help = Ratelab({command, "--help"}).out;
  std::set<std::string> out;
  const std::regex option(R"((?:^|\s|,)(--[a-z][a-z-]*))");
  for (auto it = std::sregex_iterator(help.begin(), help.end(), option);
       it != std::sregex_iterator(); ++it) {
    // Only where an option is declared: at the start of a line of the Options section.
    const size_t line = help.rfind('\n', static_cast<size_t>(it->position(1)));
    if (help.compare(line + 1, 3, "  -") == 0) out.insert((*it)[1]);
  }
  return out;
}

std::string Roff(std::string s) {
  for (size_t at = s.find('-'); at != std::string::npos; at = s.find('-', at + 2)) {
    s.insert(at, "\\");
  }
  return s;
}

TEST(CliDocs, EveryOptionOfEveryCommandIsInTheManPageAndTheCompletion) {
  const CliOutcome man = Ratelab({"man"});
  const CliOutcome completion = Ratelab({"completion"});
  ASSERT_EQ(man.exit, kExitOk);
  ASSERT_EQ(completion.exit, kExitOk);
  size_t options = 0;
  for (const char* command : kCommands) {
    const size_t section = man.out.find(".SS \"ratelab " + std::string(command));
    ASSERT_NE(section, std::string::npos) << command;
    const size_t next = man.out.find(".SS", section + 1);
    const std::string page = man.out.substr(section, next - section);
    const size_t line = completion.out.find("    " + std::string(command) + ") options='");
    ASSERT_NE(line, std::string::npos) << command;
    // Its options, each with a space either side.
    const size_t open = completion.out.find('\'', line),
                 close = completion.out.find('\'', open + 1);
    const std::string words = " " + completion.out.substr(open + 1, close - open - 1) + " ";
    for (const std::string& o : HelpOptions(command)) {
      ++options;
      EXPECT_NE(page.find(Roff(o) + "\""), std::string::npos) << command << " " << o;
      EXPECT_NE(words.find(" " + o + " "), std::string::npos) << command << " " << o;
    }
  }
  EXPECT_GT(options, 60u);  // the regex found the options
  // The value names are the ones --help prints.
  EXPECT_NE(Ratelab({"compare", "--help"}).out.find("--out DIR"), std::string::npos);
  EXPECT_NE(man.out.find(".BI \"\\-\\-out\" \" DIR\""), std::string::npos);
  // The exit statuses, from the one table.
  EXPECT_NE(man.out.find(".SH \"EXIT STATUS\"\n.TP\n.B 0\n"), std::string::npos);
  EXPECT_NE(man.out.find(".B 130\n"), std::string::npos);
  EXPECT_NE(Ratelab({"--help"}).out.find("Exit status:\n    0  done"), std::string::npos);
}

// The documents ratelab's design reproduces are not something its users have: no help text, no
// man page, README, user's doc or scenario (whose description its report shows) names them ("seed
// 003's decision API"); each API, protocol and rule set is named by what it does. (docs/design.md,
// the developers' record, may say where a design came from.)
TEST(CliDocs, NoHelpOrUsersDocNamesTheDesignDocuments) {
  const std::regex seed(R"((seeds? 0\d\d\b|seeds' (own|rules|claim)))", std::regex::icase);
  std::vector<std::pair<std::string, std::string>> texts = {
      {"ratelab --help", Ratelab({"--help"}).out}, {"ratelab man", Ratelab({"man"}).out}};
  for (const char* command : {"serve", "rules", "probe", "stress", "check", "worst", "compare"}) {
    texts.emplace_back(std::string("ratelab ") + command + " --help",
                       Ratelab({command, "--help"}).out);
  }
  const fs::path root = RATELAB_SOURCE_DIR;
  texts.emplace_back("README.md", Read(root / "README.md"));
  for (const auto& doc : fs::directory_iterator(root / "docs")) {
    if (doc.path().extension() != ".md" || doc.path().filename() == "design.md") continue;
    texts.emplace_back(doc.path().filename().string(), Read(doc.path()));
  }
  // A scenario's description is its report's.
  for (const auto& scenario : fs::directory_iterator(root / "scenarios")) {
    if (scenario.path().extension() != ".yaml") continue;
    texts.emplace_back(scenario.path().filename().string(), Read(scenario.path()));
  }
  for (const auto& [where, text] : texts) {
    std::smatch m;
    EXPECT_FALSE(std::regex_search(text, m, seed)) << where << ": \"" << m.str() << "\"";
  }
  EXPECT_GT(texts.size(), 20u);  // 9 commands' help, the README, 4 docs, 9 scenarios
}

// Runs `script` in bash, its output into `out`; the exit status.
int Bash(const fs::path& dir, const std::string& script, std::string& out) {
  const fs::path file = Write(dir, "script.sh", script);
  const int status =
      std::system(("bash " + file.string() + " > " + (dir / "out").string() + " 2>&1").c_str());
  out = Read(dir / "out");
  return status;
}

TEST(CliDocs, TheCompletionCompletesCommandsAndEachCommandsOptionsInBash) {
  const fs::path dir = TempDir("completion");
  Write(dir, "ratelab.bash", Ratelab({"completion"}).out);
  // COMPREPLY for the words typed so far, the last being completed.
  const auto complete = [&](const std::string& words) {
    std::string out;
    const int status =
        Bash(dir,
             "source " + (dir / "ratelab.bash").string() + "\nCOMP_WORDS=(" + words +
                 ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_ratelab\necho \"${COMPREPLY[*]}\"\n",
             out);
    EXPECT_EQ(status, 0) << out;
    return out;
  };
  EXPECT_EQ(complete("ratelab co"), "compare completion\n");
  EXPECT_EQ(complete("ratelab compare x.yaml --se"), "--seed --seeds\n");
  EXPECT_EQ(complete("ratelab check --lua-s"), "--lua-spec\n");
  EXPECT_EQ(complete("ratelab help st"), "stress\n");
  // An option's value and a positional are left to bash's file names (complete -o default).
  EXPECT_EQ(complete("ratelab compare --out ''"), "\n");
  EXPECT_EQ(complete("ratelab compare sc"), "\n");
}

TEST(CliDocs, TheManPageIsRoffGroffReadsWithoutAWarning) {
  const fs::path dir = TempDir("man");
  Write(dir, "ratelab.1", Ratelab({"man"}).out);
  std::string out;
  const int status =
      Bash(dir, "groff -man -Tutf8 -ww -z " + (dir / "ratelab.1").string() + "\n", out);
  if (status != 0 && out.find("not found") != std::string::npos && std::getenv("CI") == nullptr) {
    GTEST_SKIP() << "groff is not installed (Debian groff-base)";
  }
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "");  // no warning
  // Plain text, no overstriking (-P-cbou).
  ASSERT_EQ(Bash(dir, "groff -man -Tutf8 -P-cbou " + (dir / "ratelab.1").string() + "\n", out), 0);
  EXPECT_NE(out.find("ratelab compare [OPTIONS] scenario"), std::string::npos) << out;
}

// The README quotes the demo's verdict table of seed 1: it is the table the demo prints.
TEST(CliDocs, TheReadmesDemoTableIsTheOneTheDemoPrints) {
  const std::string readme = testing_files::Read(fs::path(RATELAB_SOURCE_DIR) / "README.md");
  const size_t from = readme.find("```\nlimiter ");
  ASSERT_NE(from, std::string::npos) << "the README's demo table";
  const size_t to = readme.find("```", from + 4);
  ASSERT_NE(to, std::string::npos);
  const std::string table = readme.substr(from + 4, to - from - 4);
  const CliOutcome demo =
      Ratelab({"demo", "--seed", "1", "--out", testing_files::TempDir("readme-demo").string()});
  ASSERT_EQ(demo.exit, 0) << demo.err;
  EXPECT_NE(demo.out.find(table), std::string::npos) << "README.md quotes:\n"
                                                     << table << "the demo prints:\n"
                                                     << demo.out;
}

// Every sentence of a report the docs quote is one a run prints: the run named beside it, its
// report.md searched for the quote (line breaks and a block quote's marks read as spaces).
TEST(CliDocs, TheSentencesTheDocsQuoteAreTheOnesARunPrints) {
  struct Quote {
    const char* page;
    const char* sentence;
    std::vector<std::string> args;  // the run, written to --out
  };
  const std::vector<std::string> twenty_seeds = {"compare", "examples/scenario.yaml", "--seeds",
                                                 "20"};
  const Quote quotes[] = {
      {"README.md",
       "Pick memory-sliding-log because it keeps the claim 10 in any 10s per key with 474.7 bytes "
       "of state per key, growing with the limit as a log does, unless admitting past the claim "
       "is acceptable: memory-fixed-window keeps 16 bytes of state per key and over-admits 80: up "
       "to 20 in one 10s window, 2.00x the limit.",
       {"compare", "examples/scenario.yaml"}},
      {"docs/reports.md",
       "memory-fixed-window and memory-token-bucket tie, each with 16 bytes of state per key",
       twenty_seeds},
      {"docs/reports.md", "over-admits a median of 76 over the 20 seeds (worst 87, in seed 17)",
       twenty_seeds},
      {"docs/reports.md",
       "a median of 462.5 bytes of state per key over the 20 seeds (worst 486.9)", twenty_seeds},
      {"docs/reports.md",
       "in all 20 seeds, all of one traffic",
       {"compare", "scenarios/boundary-attack.yaml", "--seeds", "20"}},
  };
  const auto flat = [](std::string text) {
    for (size_t at = text.find("\n> "); at != std::string::npos; at = text.find("\n> ", at)) {
      text.replace(at, 3, " ");
    }
    std::replace(text.begin(), text.end(), '\n', ' ');
    return text;
  };
  int run = 0;
  for (const Quote& q : quotes) {
    EXPECT_NE(flat(Read(fs::path(RATELAB_SOURCE_DIR) / q.page)).find(q.sentence), std::string::npos)
        << q.page << " no longer quotes: " << q.sentence;
    const fs::path out = TempDir("quoted-" + std::to_string(run++));
    std::vector<std::string> args = q.args;
    args[1] = (fs::path(RATELAB_SOURCE_DIR) / args[1]).string();
    args.insert(args.end(), {"--out", out.string(), "--force"});
    const CliOutcome r = Ratelab(args);
    ASSERT_LE(r.exit, 1) << r.err;
    EXPECT_NE(flat(Read(out / "report.md")).find(q.sentence), std::string::npos)
        << q.page << " quotes a sentence `" << args[0] << " " << q.args[1]
        << "` no longer writes: " << q.sentence;
  }
}

}  // namespace
}  // namespace ratelab
