// `ratelab rules`: rate-limit rules (impl/rules/rules.h) in a rules file (sim/rules_file.h) or
// in PostgreSQL's table ratelab.rules (impl/rules/postgres_rules.h): validate, list, import,
// export.
#include <CLI/CLI.hpp>
#include <array>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/options.h"
#include "impl/rules/postgres_rules.h"
#include "impl/store/postgres_sql.h"
#include "sim/rules_file.h"

namespace ratelab {

namespace {

Result<std::string> ParseDatabaseUrl(std::string_view text) {
  if (Status s = ParsePostgresUrl(text); !s.ok()) return s;
  return std::string(text);
}

// One line per rule: its id and what it says.
void PrintRules(const RuleSet& rules, std::ostream& out) {
  std::vector<Rule> sorted = rules.rules();
  SortRules(sorted);
  for (const Rule& r : sorted) out << r.rule_id << "  " << r.ToString() << "\n";
}

class Rules final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    std::string actions;
    std::vector<std::string> names;
    for (const Action& a : kActions) {
      actions += "\n  " + std::string(a.name) + std::string(9 - a.name.size(), ' ') +
                 std::string(a.summary);
      names.emplace_back(a.name);
    }
    CLI::App* c = app.add_subcommand(
        "rules",
        "Rate-limit rules (per scope and endpoint, and per-action limits) in a YAML rules file "
        "or in PostgreSQL: validate, list, import, export");
    c->footer("Actions:" + actions +
              "\n\nA rules file lists rules under 'rules:', each with scope_type (user, org, ip, "
              "apiKey or global), scope_value (a value or *), endpoint (/exact, /prefix/* or *), "
              "algorithm, max_requests, window_seconds, burst_size (bucket algorithms only) and "
              "an optional rule_id (docs/rules.md).");
    c->add_option("action", action_, "What to do")->required()->check(CLI::IsMember(names));
    c->add_option("file", file_, "The rules file (YAML)");
    AddParsed(*c, "--database", database_, ParseDatabaseUrl,
              "The PostgreSQL database whose table ratelab.rules holds the rules, "
              "postgresql://user@host/db (the table is made when missing)");
    c->add_flag("--replace", replace_,
                "import: also delete the rules the table holds that the file does not");
    c->add_option("--out", out_file_, "export: write the rules file here instead of stdout");
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream& err) override {
    for (const Action& a : kActions) {
      if (a.name != action_) continue;
      if (a.file == Need::kYes && file_.empty()) return Usage("a rules file");
      if (a.file == Need::kNo && !file_.empty()) return Usage("no rules file");
      if (a.database == Need::kYes && database_.empty()) return Usage("--database");
      if (a.database == Need::kNo && !database_.empty()) return Usage("no --database");
      if (a.file == Need::kEither && file_.empty() == database_.empty()) {
        return Usage("a rules file or --database, one of them");
      }
      if (replace_ && action_ != "import") return Refuse("--replace only with import");
      if (!out_file_.empty() && action_ != "export") return Refuse("--out only with export");
      return (this->*a.run)(out, err);
    }
    return absl::InvalidArgumentError("unknown action '" + action_ + "'");
  }

 private:
  enum class Need { kNo, kYes, kEither };
  struct Action {
    std::string_view name;
    std::string_view summary;
    Need file;
    Need database;
    Result<int> (Rules::*run)(std::ostream&, std::ostream&);
  };
  static const std::array<Action, 4> kActions;

  Result<int> Usage(const std::string& what) const { return Refuse(action_ + " takes " + what); }
  static Result<int> Refuse(const std::string& why) {
    return absl::InvalidArgumentError(why + " (ratelab rules --help)");
  }

  Result<std::unique_ptr<PostgresRules>> OpenDatabase() const {
    return PostgresRules::Open(database_);
  }

  Result<int> Validate(std::ostream& out, std::ostream&) {
    Result<RuleSet> rules = LoadRules(file_);
    if (!rules.ok()) return rules.status();
    out << file_ << ": " << rules->rules().size() << " rules, all valid\n";
    PrintRules(*rules, out);
    return kExitOk;
  }

  Result<int> List(std::ostream& out, std::ostream&) {
    Result<RuleSet> rules = RuleSet();
    if (!file_.empty()) {
      rules = LoadRules(file_);
    } else {
      Result<std::unique_ptr<PostgresRules>> db = OpenDatabase();
      if (!db.ok()) return db.status();
      rules = (*db)->List();
    }
    if (!rules.ok()) return rules.status();
    PrintRules(*rules, out);
    return kExitOk;
  }

  Result<int> Import(std::ostream& out, std::ostream&) {
    Result<RuleSet> rules = LoadRules(file_);
    if (!rules.ok()) return rules.status();
    Result<std::unique_ptr<PostgresRules>> db = OpenDatabase();
    if (!db.ok()) return db.status();
    Result<RulesImport> done = (*db)->Import(*rules, replace_);
    if (!done.ok()) return done.status();
    out << "imported " << file_ << ": " << done->inserted << " added, " << done->updated
        << " changed, " << done->unchanged << " unchanged";
    if (replace_) out << ", " << done->deleted << " deleted";
    out << "\n";
    return kExitOk;
  }

  Result<int> Export(std::ostream& out, std::ostream& err) {
    Result<std::unique_ptr<PostgresRules>> db = OpenDatabase();
    if (!db.ok()) return db.status();
    Result<RuleSet> rules = (*db)->List();
    if (!rules.ok()) return rules.status();
    const std::string yaml = RulesYaml(*rules);
    if (out_file_.empty()) {
      out << yaml;
      return kExitOk;
    }
    if (Status s = WriteTextFile(out_file_, yaml); !s.ok()) return s;
    err << "wrote " << rules->rules().size() << " rules to " << out_file_ << "\n";
    return kExitOk;
  }

  std::string action_;
  std::string file_;
  std::string database_;
  bool replace_ = false;
  std::string out_file_;
};

const std::array<Rules::Action, 4> Rules::kActions = {{
    {"validate", "check a rules file: every rule, each error at its field (exit 2)", Need::kYes,
     Need::kNo, &Rules::Validate},
    {"list", "print the rules of a file or of --database, one per line", Need::kEither,
     Need::kEither, &Rules::List},
    {"import", "write a file's rules into --database in one transaction (--replace)", Need::kYes,
     Need::kYes, &Rules::Import},
    {"export", "print --database's rules as a rules file (or --out FILE)", Need::kNo, Need::kYes,
     &Rules::Export},
}};

}  // namespace

std::unique_ptr<Command> RulesCommand() { return std::make_unique<Rules>(); }

}  // namespace ratelab
