#include "cli/ratelab_cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>

#include "cli/cli_docs.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "impl/core/text.h"
#include "ratelab_version.h"

namespace ratelab {

namespace {

constexpr char kDescription[] =
    "ratelab: a deterministic simulation and verification harness for rate limiters.\n"
    "It runs real limiter implementations beside reference models on a virtual clock and\n"
    "checks what they promise (never more than N per window, bucket conformance, exact\n"
    "Retry-After, no false denials). Every run prints its seed; the same seed gives the\n"
    "same result.";

// "unknown flag --sotre for compare (did you mean --store?)", for each of `args` that looks
// like a flag `command` does not have; empty when none does.
std::string UnknownFlags(CLI::App& command, const std::vector<std::string>& args) {
  std::vector<std::string> names;  // of the flags it has, as written: "--store"
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  const std::vector<std::string_view> choices(names.begin(), names.end());
  std::string out;
  for (const std::string& arg : args) {
    if (arg.size() < 2 || arg[0] != '-' || (arg[1] >= '0' && arg[1] <= '9')) continue;
    const std::string flag = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), flag) != names.end()) continue;
    out += (out.empty() ? "" : "; ") + std::string("unknown flag ") + flag;
    if (command.get_parent() != nullptr) {  // a subcommand's
      out += " for " + command.get_name();
    }
    if (const std::optional<std::string_view> near = NearestWord(flag, choices)) {
      out += " (did you mean " + std::string(*near) + "?)";
    }
  }
  return out;
}

// Flags renamed so that one flag has one meaning in every command; the old spelling still works
// for one release, with a note.
struct Renamed {
  std::string_view command, old_name, now;
  std::string_view why;  // what the flag means, said in the note
};
constexpr Renamed kRenamed[] = {
    {"check", "--concurrency", "--nodes", "the limiter nodes sending requests"},
    {"probe", "--concurrency", "--connections", "the connections sending at once"},
    {"worst", "--time", "--duration", "how long each search may run"},
    {"worst", "--claim", "--measure", "what the search pushes on"},
};

// `args` with each old spelling of its command's flags written as it is now, each told in `err`.
std::vector<std::string> WithFlagsRenamed(std::vector<std::string> args, std::ostream& err) {
  if (args.empty()) return args;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--") break;
    for (const Renamed& r : kRenamed) {
      const std::string_view arg = args[i];
      const bool with_value = arg.starts_with(std::string(r.old_name) + "=");
      if (args[0] != r.command || (arg != r.old_name && !with_value)) continue;
      args[i] = std::string(r.now) + std::string(arg.substr(r.old_name.size()));
      err << "note: " << r.command << " " << r.old_name << " is now " << r.now << " (" << r.why
          << "); the old spelling works until the next release\n";
    }
  }
  return args;
}

}  // namespace

int RunRatelab(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app(kDescription, "ratelab");
  app.set_version_flag(
      "--version", std::string("ratelab ") + RATELAB_VERSION + " (commit " + RATELAB_COMMIT + ")");
  app.require_subcommand(0, 1);

  std::unique_ptr<Command> commands[] = {ListCommand(),  DemoCommand(),  CompareCommand(),
                                         CheckCommand(), WorstCommand(), ReportCommand(),
                                         RunCommand(),   MergeCommand(), StressCommand(),
                                         ProbeCommand(), RulesCommand(), ServeCommand()};
  std::vector<std::pair<CLI::App*, Command*>> table;
  for (std::unique_ptr<Command>& c : commands) table.emplace_back(c->Add(app), c.get());
  // `ratelab help [COMMAND]` prints what `ratelab [COMMAND] --help` does (it is listed with the
  // commands, and answered here, before CLI11 would read it).
  app.add_subcommand("help", "Print the help of ratelab, or of one command (ratelab help check)");
  CLI::App* completion = app.add_subcommand(
      "completion", "Print a bash completion script for ratelab: source <(ratelab completion)");
  CLI::App* man = app.add_subcommand(
      "man", "Print ratelab's man page (roff): ratelab man > ratelab.1 && man ./ratelab.1");
  NameOptionValues(app);
  std::string footer = "Exit status:";
  for (const ExitStatus& e : kExitStatuses) {
    const std::string code = std::to_string(e.code);
    footer += "\n  " + std::string(3 - code.size(), ' ') + code + "  " + e.meaning;
  }
  app.footer(footer);
  if (!args.empty() && args[0] == "help") {
    if (args.size() == 1) return RunRatelab({"--help"}, out, err);
    std::string names;
    for (const auto& [subcommand, command] : table) {
      if (args.size() == 2 && subcommand->get_name() == args[1]) {
        return RunRatelab({args[1], "--help"}, out, err);
      }
      names += (names.empty() ? "" : ", ") + subcommand->get_name();
    }
    err << "ratelab help: "
        << (args.size() == 2 ? "unknown command '" + args[1] + "'" : "name one command")
        << " (expected one of " << names << ")\n";
    return kExitBadInput;
  }

  const std::vector<std::string> renamed = WithFlagsRenamed(args, err);
  std::vector<std::string> reversed(renamed.rbegin(), renamed.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ExtrasError& e) {
    CLI::App* const command = app.get_subcommands().empty() ? &app : app.get_subcommands().front();
    const std::string unknown = UnknownFlags(*command, args);
    err << "ratelab: " << (unknown.empty() ? std::string(e.what()) : unknown) << "\nRun 'ratelab "
        << (command == &app ? "" : command->get_name() + " ") << "--help' for usage.\n";
    return kExitBadInput;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // help of a subcommand
      out << (app.get_subcommands().empty() ? app.help() : app.get_subcommands().front()->help());
      return kExitOk;
    }
    const std::string help =
        app.get_subcommands().empty()
            ? "ratelab --help"
            : "ratelab " + app.get_subcommands().front()->get_name() + " --help";
    err << "ratelab: " << e.what() << "\nRun '" << help << "' for usage.\n";
    return kExitBadInput;
  }
  if (completion->parsed()) {
    out << BashCompletion(app);
    return kExitOk;
  }
  if (man->parsed()) {
    out << ManPage(app, std::string("ratelab ") + RATELAB_VERSION, kDescription);
    return kExitOk;
  }
  for (const auto& [subcommand, command] : table) {
    if (!subcommand->parsed()) continue;
    // The last line of defence: whatever a command throws is said, with its exit status, never
    // a terminate() (errors are Status values; this is for what no one foresaw).
    Result<int> exit = absl::InternalError("");
    try {
      exit = command->Run(out, err);
    } catch (const std::exception& e) {
      err << "ratelab " << subcommand->get_name() << ": stopped by an error ratelab did not "
          << "expect (please report it): " << e.what() << "\n";
      return kExitBadInput;
    }
    if (exit.ok()) return *exit;
    err << "ratelab " << subcommand->get_name() << ": " << exit.status().message() << "\n";
    return IsLimiterFailed(exit.status()) ? kExitLimiterFailed : kExitBadInput;
  }
  out << app.help();
  return kExitOk;
}

}  // namespace ratelab
