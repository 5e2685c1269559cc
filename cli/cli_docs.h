// What the command line says about itself beyond --help, written from the same CLI11 tables that
// --help prints (each command's options, their value names, help texts, defaults and exclusions),
// so neither can drift from the options:
//   ratelab completion   a bash completion script: source <(ratelab completion)
//   ratelab man          the man page, in roff: ratelab man > ratelab.1 && man ./ratelab.1
#ifndef RATELAB_CLI_CLI_DOCS_H_
#define RATELAB_CLI_CLI_DOCS_H_

#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace ratelab {

// Names every value an option of `app` or of its commands takes after the option: --seed SEED,
// --max-simulated MAX-REQUESTS (CLI11 would print TEXT or INT).
void NameOptionValues(CLI::App& app);

// A bash completion function for `ratelab`: its commands, each command's options, the commands
// after `help`; file names for option values and positionals.
std::string BashCompletion(const CLI::App& app);

// The man page ratelab(1): `description`, then every command with its options, then the exit
// statuses (cli/exit_codes.h).
std::string ManPage(const CLI::App& app, std::string_view version, std::string_view description);

}  // namespace ratelab

#endif  // RATELAB_CLI_CLI_DOCS_H_
