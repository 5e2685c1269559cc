#include "cli/cli_docs.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>

#include "cli/exit_codes.h"

namespace ratelab {

namespace {

// The commands of `app`, in the order --help lists them.
std::vector<const CLI::App*> Commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

bool TakesValue(const CLI::Option& o) { return o.get_items_expected_max() > 0; }

// The values whose name is not the option's own, upper-cased.
struct ValueName {
  std::string_view option, value;
};
constexpr ValueName kValueNames[] = {
    {"out", "DIR"},         {"junit", "FILE"},
    {"requests", "FILE"},   {"lua", "FILE"},
    {"lua-spec", "FILE"},   {"max-requests", "N"},
    {"max-simulated", "N"}, {"jobs", "N"},
    {"threads", "N"},       {"users", "N"},
    {"concurrency", "N"},   {"seeds", "N|A..B"},
    {"limit", "N"},         {"burst", "N"},
    {"window", "DURATION"}, {"resolution", "DURATION"},
    {"faults", "KINDS"},    {"window-offset", "TEMPLATE"},
};

std::string ValueNameOf(const std::string& option) {
  for (const ValueName& v : kValueNames) {
    if (v.option == option) return std::string(v.value);
  }
  std::string upper = option;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return upper;
}

// The options of a command as --help lists them: positionals apart, --help first.
std::vector<const CLI::Option*> Named(const CLI::App& command) {
  return command.get_options([](const CLI::Option* o) { return o->nonpositional(); });
}
std::vector<const CLI::Option*> Positionals(const CLI::App& command) {
  return command.get_options([](const CLI::Option* o) { return !o->nonpositional(); });
}

// Every spelling of an option: "-h --help".
std::vector<std::string> Spellings(const CLI::Option& o) {
  std::vector<std::string> out;
  for (const std::string& s : o.get_snames()) out.push_back("-" + s);
  for (const std::string& l : o.get_lnames()) out.push_back("--" + l);
  return out;
}

std::string Joined(const std::vector<std::string>& words, const std::string& by) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : by) + w;
  return s;
}

// roff text: a backslash and a hyphen escaped, a line that would start with a control
// character guarded.
std::string Roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

// "ratelab compare [OPTIONS] scenario", optional positionals in brackets.
std::string Usage(const CLI::App& command) {
  std::string s = "ratelab " + command.get_name();
  if (!Named(command).empty()) s += " [OPTIONS]";
  for (const CLI::Option* p : Positionals(command)) {
    s += " " + (p->get_required() ? p->get_name() : "[" + p->get_name() + "]");
  }
  return s;
}

// The help of an option, with its default and the options it excludes, as --help gives them.
std::string OptionHelp(const CLI::Option& o) {
  std::string s = o.get_description();
  if (!o.get_default_str().empty()) s += " (default: " + o.get_default_str() + ")";
  std::vector<std::string> excludes;
  for (const CLI::Option* e : o.get_excludes()) excludes.push_back(e->get_name());
  std::sort(excludes.begin(), excludes.end());
  if (!excludes.empty()) s += ". Not with " + Joined(excludes, " or ");
  return s;
}

}  // namespace

void NameOptionValues(CLI::App& app) {
  std::vector<CLI::App*> apps = {&app};
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; })) {
    apps.push_back(command);
  }
  for (CLI::App* a : apps) {
    for (CLI::Option* o : a->get_options()) {
      if (!o->nonpositional() || !TakesValue(*o) || o->get_lnames().empty()) continue;
      o->type_name(ValueNameOf(o->get_lnames().front()));
    }
  }
}

std::string BashCompletion(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* c : Commands(app)) names.push_back(c->get_name());
  std::vector<std::string> top;
  for (const CLI::Option* o : Named(app)) {
    for (const std::string& s : Spellings(*o)) top.push_back(s);
  }
  std::string cases;
  for (const CLI::App* c : Commands(app)) {
    std::vector<std::string> options, values;
    for (const CLI::Option* o : Named(*c)) {
      for (const std::string& s : Spellings(*o)) {
        options.push_back(s);
        if (TakesValue(*o)) values.push_back(s);
      }
    }
    cases += "    " + c->get_name() + ") options='" + Joined(options, " ") + "' values='" +
             Joined(values, " ") + "' ;;\n";
  }
  return "# bash completion for ratelab, written by `ratelab completion` from the options --help\n"
         "# lists. Use: source <(ratelab completion), or save it as\n"
         "# /etc/bash_completion.d/ratelab.\n"
         "_ratelab() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  local commands='" +
         Joined(names, " ") +
         "'\n"
         "  local command='' i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    if [[ \" $commands \" == *\" ${COMP_WORDS[i]} \"* ]]; then\n"
         "      command=${COMP_WORDS[i]}\n"
         "      break\n"
         "    fi\n"
         "  done\n"
         "  if [[ -z $command ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$commands " +
         Joined(top, " ") +
         "\" -- \"$cur\"))\n"
         "    return\n"
         "  fi\n"
         "  if [[ $command == help ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))\n"
         "    return\n"
         "  fi\n"
         "  local options='' values=''\n"
         "  case $command in\n" +
         cases +
         "  esac\n"
         "  # An option's value, or a positional: a file name (bash's own completion).\n"
         "  if [[ \" $values \" == *\" $prev \"* || $cur != -* ]]; then\n"
         "    COMPREPLY=()\n"
         "    return\n"
         "  fi\n"
         "  COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
         "}\n"
         "complete -o default -F _ratelab ratelab\n";
}

std::string ManPage(const CLI::App& app, std::string_view version, std::string_view description) {
  std::string first_line(description.substr(0, description.find('\n')));
  first_line = first_line.substr(first_line.find(": ") + 2);
  if (first_line.ends_with('.')) first_line.pop_back();
  std::string s =
      ".\\\" The man page of ratelab, written by `ratelab man` from the options --help lists.\n"
      ".TH RATELAB 1 \"\" \"" +
      Roff(version) + "\" \"User Commands\"\n.SH NAME\nratelab \\- " + Roff(first_line) +
      "\n.SH SYNOPSIS\n.B ratelab\n.I COMMAND\n.RI [ OPTIONS ]\n.br\n.B ratelab help\n"
      ".RI [ COMMAND ]\n.SH DESCRIPTION\n" +
      Roff(description) + "\n.SH COMMANDS\n";
  for (const CLI::App* c : Commands(app)) {
    s += ".SS \"" + Roff(Usage(*c)) + "\"\n" + Roff(c->get_description()) + "\n";
    for (const CLI::Option* p : Positionals(*c)) {
      s += ".TP\n.I " + Roff(p->get_name()) + "\n" + Roff(OptionHelp(*p)) + "\n";
    }
    for (const CLI::Option* o : Named(*c)) {
      // Bold spellings, then (.BI alternating bold and italic) the value's name in italics.
      const std::string spellings = "\"" + Roff(Joined(Spellings(*o), ", ")) + "\"";
      s += TakesValue(*o) ? ".TP\n.BI " + spellings + " \" " + Roff(o->get_type_name()) + "\"\n"
                          : ".TP\n.B " + spellings + "\n";
      s += Roff(OptionHelp(*o)) + "\n";
    }
  }
  s += ".SH \"EXIT STATUS\"\n";
  for (const ExitStatus& e : kExitStatuses) {
    s += ".TP\n.B " + std::to_string(e.code) + "\n" + Roff(e.meaning) + "\n";
  }
  s += ".SH \"SEE ALSO\"\nThe README and docs/ of ratelab's repository; ratelab help COMMAND.\n";
  return s;
}

}  // namespace ratelab
