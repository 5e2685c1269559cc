// `ratelab list [SECTION]`: everything ratelab can run or check, one line each, from the
// libraries' own registries so the list cannot drift from the code.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "impl/limiters/protocol.h"
#include "judge/checks.h"
#include "judge/oracles.h"
#include "live/probe_plan.h"
#include "model/policy.h"
#include "sim/traffic.h"

namespace ratelab {

namespace {

struct Entry {
  std::string name;
  std::string text;
};

std::string Section(const std::string& title, const std::vector<Entry>& entries) {
  size_t width = 0;
  for (const Entry& e : entries) width = std::max(width, e.name.size());
  std::string out = title + "\n";
  for (const Entry& e : entries) {
    out += "  " + e.name + std::string(width - e.name.size() + 2, ' ') + e.text + "\n";
  }
  return out;
}

// The catalogue, or one section of it.
std::string RenderCatalogue(const std::string& section) {
  std::vector<std::pair<std::string, std::vector<Entry>>> sections;
  std::vector<Entry> algorithms;
  for (const AlgorithmInfo& a : Algorithms()) {
    algorithms.push_back({std::string(a.name), std::string(a.summary)});
  }
  sections.emplace_back("algorithms", algorithms);

  std::vector<Entry> protocols;
  for (const ProtocolInfo& p : Protocols()) {
    protocols.push_back({std::string(p.name), std::string(p.summary) + " [store: " +
                                                  std::string(StoreKindName(p.store)) +
                                                  "; source: " + std::string(p.source) + "]"});
  }
  sections.emplace_back("protocols", protocols);

  sections.emplace_back(
      "backends",
      std::vector<Entry>{
          {"memory",
           "an in-memory Redis and document store, embedded in this process; no server (the "
           "default)"},
          {"redis", "a private redis-server that ratelab starts on a unix socket, on virtual time"},
          {"redis://host:port/db", "a running Redis over TCP (its database must be empty)"},
          {"unix:///path.sock?db=N", "a running Redis over a unix socket (the same)"},
          {"redis-cluster://host:port,...", "a running Redis Cluster, routed by slot (the same)"},
          {"postgres",
           "for the SQL protocols: a private PostgreSQL server that ratelab starts on a unix "
           "socket (kv protocols on the in-memory store)"},
          {"postgresql://user@host/db",
           "an existing PostgreSQL database, for the SQL protocols "
           "(ratelab keeps to its schema `ratelab`; its tables must "
           "be empty)"}});

  std::vector<Entry> traffic;
  for (const TrafficInfo& t : TrafficGenerators()) {
    traffic.push_back(
        {std::string(t.name), std::string(t.summary) + (t.probe.empty() ? "" : " [probe too]")});
  }
  sections.emplace_back("traffic", traffic);

  // A scenario's checks first, then every other check with the commands that make it.
  std::vector<Entry> checks;
  for (const CheckInfo& c : Checks()) {
    checks.push_back({std::string(CheckName(c.id)), std::string(Describe(c.id).summary)});
  }
  const CheckIdInfo& burst = Describe(CheckId::kBoundaryBurst);
  checks.push_back({std::string(burst.name), std::string(burst.summary) + " [every run]"});
  for (const CheckIdInfo& c : CheckIds()) {
    const std::string_view made_by = c.judges == JudgedOn::kLinearizability ? "stress, probe"
                                     : c.judges == JudgedOn::kWorstCase     ? "worst --measure"
                                     : c.judges == JudgedOn::kHttpExchanges ? "probe"
                                                                            : "";
    if (made_by.empty()) continue;  // a scenario's, or a promise's (anchored-grid-cap)
    checks.push_back({std::string(c.name), std::string(c.summary) + " [" + std::string(made_by) +
                                               (Optional(c.id) ? ", optional: --require" : "") +
                                               "]"});
  }
  sections.emplace_back("checks", checks);

  std::string out;
  for (const auto& [title, entries] : sections) {
    if (section.empty() || section == title)
      out += (out.empty() ? "" : "\n") + Section(title, entries);
  }
  return out;
}

class List final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "list",
        "List algorithms, protocols (with the design each reproduces), backends, traffic "
        "generators and checks");
    c->add_option("section", section_, "Only this section")
        ->check(CLI::IsMember({"algorithms", "protocols", "backends", "traffic", "checks"}));
    return c;
  }

  Result<int> Run(std::ostream& out, std::ostream&) override {
    out << RenderCatalogue(section_);
    return kExitOk;
  }

 private:
  std::string section_;
};

}  // namespace

std::unique_ptr<Command> ListCommand() { return std::make_unique<List>(); }

}  // namespace ratelab
