#include "sim/rule_propagation.h"

#include <algorithm>

namespace ratelab {

namespace {

bool SameTarget(const Rule& a, const Rule& b) {
  return a.scope_type == b.scope_type && a.scope_value == b.scope_value && a.endpoint == b.endpoint;
}

// "fixed-window 10 per 60s" without the target, for a sentence that names it once.
std::string Terms(const Rule& r) {
  const std::string full = r.ToString();
  const size_t colon = full.find(": ");
  return colon == std::string::npos ? full : full.substr(colon + 2);
}

std::string Target(const Rule& r) {
  const std::string full = r.ToString();
  return full.substr(0, full.find(": "));
}

}  // namespace

Result<RuleSet> ApplyChange(const RuleSet& rules, RuleChange& change) {
  std::vector<Rule> next = rules.rules();
  auto same = std::find_if(next.begin(), next.end(),
                           [&](const Rule& r) { return SameTarget(r, change.rule); });
  if (same != next.end()) {
    change.rule.rule_id = same->rule_id;
    *same = change.rule;
  } else {
    next.push_back(change.rule);
  }
  return RuleSet::Make(std::move(next));
}

RulePlan RulePlan::Make(const RulesSpec& spec, Instant start, int nodes,
                        const std::vector<DeafSpan>& deaf, Random random) {
  RulePlan plan;
  plan.nodes_ = nodes;
  plan.versions_.push_back(spec.initial);
  for (const RuleChange& c : spec.changes) {
    RuleChange applied = c;
    const RuleSet& before = plan.versions_.back();
    Result<RuleSet> next = ApplyChange(before, applied);
    // The reader checked every change; one that does not apply leaves the rules as they were.
    const Rule* old = before.Find(applied.rule.rule_id);
    plan.replaced_.push_back(old != nullptr ? std::optional<Rule>(*old) : std::nullopt);
    plan.changed_.push_back(applied.rule);
    plan.versions_.push_back(next.ok() ? *std::move(next) : before);
    plan.written_.push_back(start + c.at);
  }
  plan.learned_.resize(plan.written_.size() * static_cast<size_t>(nodes));
  for (int node = 0; node < nodes; ++node) {
    Random draws = random.Fork(static_cast<uint64_t>(node));
    Instant previous = start;
    for (size_t c = 0; c < plan.written_.size(); ++c) {
      const Instant written = plan.written_[c];
      // Notifications arrive in the order they were sent.
      const Instant arrives = std::max(written + spec.propagation.Draw(draws), previous);
      Learned learned{arrives, false};
      // Lost when the connection is down at any moment from the write to the arrival: the node
      // learns it at the first reconnection after the loss.
      for (const DeafSpan& d : deaf) {
        if (d.node != node || d.from > arrives || d.to <= written) continue;
        if (!learned.reread || d.to < learned.at) learned = {std::max(d.to, previous), true};
      }
      plan.learned_[c * static_cast<size_t>(nodes) + static_cast<size_t>(node)] = learned;
      previous = learned.at;
    }
  }
  return plan;
}

std::vector<StaleDecisions> CountStaleDecisions(const RulePlan& plan,
                                                const std::vector<Arrival>& arrivals,
                                                const History& history) {
  std::vector<StaleDecisions> out;
  for (size_t c = 0; c < plan.change_count(); ++c) {
    const std::string& id = plan.changed(c).rule_id;
    for (int node = 0; node < plan.nodes(); ++node) {
      StaleDecisions s{c, node};
      const Instant from = plan.written(c);
      const Instant to = plan.learned(c, node).at;
      for (const HistoryEvent& e : history) {
        if (e.node != node || e.invoke < from || e.invoke >= to) continue;
        const Arrival& a = arrivals[static_cast<size_t>(e.id)];
        const Scope scope{ScopeType::kUser, a.user};
        const RuleSet::Applied applied = plan.Version(c + 1).Match({&scope, 1}, a.endpoint);
        if (std::none_of(applied.begin(), applied.end(),
                         [&](const AppliedRule& r) { return r.rule->rule_id == id; })) {
          continue;
        }
        s.admitted += e.admitted();
        s.denied += e.denied();
        s.unanswered += !e.decision.has_value();
      }
      out.push_back(s);
    }
  }
  return out;
}

int64_t CountUnruled(const RulePlan& plan, const std::vector<Arrival>& arrivals) {
  int64_t n = 0;
  for (const Arrival& a : arrivals) {
    size_t version = 0;
    while (version < plan.change_count() && plan.written(version) <= a.at) ++version;
    const Scope scope{ScopeType::kUser, a.user};
    n += plan.Version(version).Match({&scope, 1}, a.endpoint).empty();
  }
  return n;
}

std::vector<std::string> PropagationNotes(const RulePlan& plan, Instant end) {
  std::vector<std::string> notes;
  for (size_t c = 0; c < plan.change_count(); ++c) {
    const Rule& rule = plan.changed(c);
    const Rule* old = plan.replaced(c);
    std::string line = "rule change at " + FormatInstant(plan.written(c)) + ": " + Target(rule) +
                       (old != nullptr ? " from " + Terms(*old) + " to " : " added, ") +
                       Terms(rule) + "; learned by";
    for (int node = 0; node < plan.nodes(); ++node) {
      const RulePlan::Learned& l = plan.learned(c, node);
      line += (node == 0 ? " node " : ", node ") + std::to_string(node) + " ";
      line += FormatDurationTo(l.at - plan.written(c), 3) + " later";
      if (l.reread) line += " (its notification lost: at the re-read)";
      if (l.at > end) line += " (after the last request)";
    }
    notes.push_back(std::move(line));
  }
  return notes;
}

std::string StaleDecisionsNote(const std::string& limiter,
                               const std::vector<StaleDecisions>& stale) {
  std::string line = limiter + ", under the old rules until each node learned the change:";
  size_t last_change = SIZE_MAX;
  for (const StaleDecisions& s : stale) {
    line += s.change != last_change ? (last_change == SIZE_MAX ? " change " : "; change ") +
                                          std::to_string(s.change + 1) + ": node "
                                    : ", node ";
    last_change = s.change;
    line += std::to_string(s.node) + " admitted " + std::to_string(s.admitted) + ", denied " +
            std::to_string(s.denied);
    if (s.unanswered > 0) line += ", " + std::to_string(s.unanswered) + " unanswered";
  }
  return line;
}

}  // namespace ratelab
