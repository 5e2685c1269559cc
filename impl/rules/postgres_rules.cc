#include "impl/rules/postgres_rules.h"

#include <algorithm>
#include <pqxx/pqxx>

#include "impl/store/postgres_sql.h"

namespace ratelab {

namespace {

constexpr std::chrono::seconds kConnectTimeout{5};

constexpr char kColumns[] =
    "rule_id::text, scope_type, scope_value, endpoint, algorithm, max_requests, "
    "window_seconds, burst_size";

// "'a', 'b', 'c'": names of ratelab's own tables, never user input.
template <typename Range, typename Pick>
std::string SqlList(const Range& range, Pick pick) {
  std::string out;
  for (const auto& item : range) {
    const std::string_view name = pick(item);
    if (name.empty()) continue;
    out += (out.empty() ? "'" : ", '") + std::string(name) + "'";
  }
  return out;
}

std::string BucketAlgorithms() {
  return SqlList(Algorithms(),
                 [](const AlgorithmInfo& a) { return a.bucket ? a.name : std::string_view(); });
}

// A row of `kColumns` as a rule, checked as rules from a file are.
Result<Rule> RuleFromRow(const pqxx::row& row) {
  Rule r;
  r.rule_id = row[0].c_str();
  const std::optional<ScopeType> scope = ScopeTypeNamed(row[1].c_str());
  const std::optional<Algorithm> algorithm = AlgorithmNamed(row[4].c_str());
  const std::string where = "ratelab.rules holds rule " + r.rule_id;
  if (!scope) {
    return absl::InvalidArgumentError(where + " with scope_type '" + row[1].c_str() +
                                      "' (expected " + ScopeTypeChoices() + ")");
  }
  if (!algorithm) {
    return absl::InvalidArgumentError(where + " with algorithm '" + row[4].c_str() +
                                      "' (expected " + AlgorithmChoices() + ")");
  }
  r.scope_type = *scope;
  r.scope_value = row[2].c_str();
  r.endpoint = row[3].c_str();
  r.algorithm = *algorithm;
  r.max_requests = row[5].as<int64_t>();
  r.window_seconds = row[6].as<int64_t>();
  if (!row[7].is_null()) r.burst_size = row[7].as<int64_t>();
  if (std::optional<RuleProblem> p = FindProblem(r)) {
    return absl::InvalidArgumentError(where + " whose " + std::string(p->field) + " " + p->message);
  }
  return r;
}

Result<std::vector<Rule>> RulesFromResult(const pqxx::result& result) {
  std::vector<Rule> rules;
  for (const pqxx::row& row : result) {
    Result<Rule> r = RuleFromRow(row);
    if (!r.ok()) return r.status();
    rules.push_back(*std::move(r));
  }
  SortRules(rules);
  return rules;
}

// Runs `work`, turning what libpqxx throws into a Status: a lost server is Unavailable, a row the
// table's constraints refuse InvalidArgument with the server's words (the constraint is named
// after the field), anything else Internal.
template <typename Work>
Status Guarded(const std::string& doing, Work&& work) {
  try {
    return work();
  } catch (const pqxx::broken_connection& e) {
    return absl::UnavailableError("PostgreSQL connection lost while " + doing + ": " +
                                  std::string(e.what()));
  } catch (const pqxx::integrity_constraint_violation& e) {
    return absl::InvalidArgumentError("PostgreSQL refused " + doing + ": " + std::string(e.what()));
  } catch (const std::exception& e) {
    return absl::InternalError("PostgreSQL failed while " + doing + ": " + std::string(e.what()));
  }
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Status Trimmed(Status s) {
  if (s.ok()) return s;
  return Status(s.code(), Trim(std::string(s.message())));
}

// The parameters of the upsert for `r`, in kColumns order ("" for no burst_size).
std::vector<std::string> RuleParams(const Rule& r) {
  return {r.rule_id,
          std::string(Name(r.scope_type)),
          r.scope_value,
          r.endpoint,
          std::string(AlgorithmName(r.algorithm)),
          std::to_string(r.max_requests),
          std::to_string(r.window_seconds),
          r.burst_size ? std::to_string(*r.burst_size) : ""};
}

constexpr char kUpsert[] =
    "INSERT INTO ratelab.rules AS r (rule_id, scope_type, scope_value, endpoint, algorithm, "
    "max_requests, window_seconds, burst_size) "
    "VALUES ($1::uuid, $2, $3, $4, $5, $6::bigint, $7::bigint, NULLIF($8, '')::bigint) "
    "ON CONFLICT (rule_id) DO UPDATE SET scope_type = EXCLUDED.scope_type, "
    "scope_value = EXCLUDED.scope_value, endpoint = EXCLUDED.endpoint, "
    "algorithm = EXCLUDED.algorithm, max_requests = EXCLUDED.max_requests, "
    "window_seconds = EXCLUDED.window_seconds, burst_size = EXCLUDED.burst_size "
    "WHERE (r.scope_type, r.scope_value, r.endpoint, r.algorithm, r.max_requests, "
    "r.window_seconds, r.burst_size) IS DISTINCT FROM (EXCLUDED.scope_type, EXCLUDED.scope_value, "
    "EXCLUDED.endpoint, EXCLUDED.algorithm, EXCLUDED.max_requests, EXCLUDED.window_seconds, "
    "EXCLUDED.burst_size) "
    "RETURNING (xmax = 0)";

// A PostgreSQL array literal of rule ids: "{id,id}" (UUIDs need no quoting).
std::string IdArray(const std::vector<std::string>& ids) {
  std::string out = "{";
  for (const std::string& id : ids) out += (out.size() == 1 ? "" : ",") + id;
  return out + "}";
}

}  // namespace

std::string RulesTableDdl() {
  const std::string buckets = BucketAlgorithms();
  const std::string max = std::to_string(int64_t{1} << 40);
  return "SELECT pg_advisory_xact_lock(hashtext('ratelab.rules'));\n"
         "CREATE SCHEMA IF NOT EXISTS ratelab;\n"
         "CREATE TABLE IF NOT EXISTS ratelab.rules (\n"
         "  rule_id uuid PRIMARY KEY,\n"
         "  scope_type text NOT NULL,\n"
         "  scope_value text NOT NULL,\n"
         "  endpoint text NOT NULL,\n"
         "  algorithm text NOT NULL,\n"
         "  max_requests bigint NOT NULL,\n"
         "  window_seconds bigint NOT NULL,\n"
         "  burst_size bigint,\n"
         "  CONSTRAINT scope_type CHECK (scope_type IN (" +
         SqlList(ScopeTypes(), [](const ScopeTypeInfo& s) { return s.name; }) +
         ")),\n"
         "  CONSTRAINT scope_value CHECK (octet_length(scope_value) BETWEEN 1 AND " +
         std::to_string(kMaxRuleText) +
         "\n"
         "    AND (scope_type <> 'global' OR scope_value = '*')),\n"
         "  CONSTRAINT endpoint CHECK (octet_length(endpoint) <= " +
         std::to_string(kMaxRuleText) +
         "\n"
         "    AND (endpoint = '*' OR endpoint ~ '^/[^*]*$' OR endpoint ~ '^/([^*]*/)?\\*$')),\n"
         "  CONSTRAINT algorithm CHECK (algorithm IN (" +
         SqlList(Algorithms(), [](const AlgorithmInfo& a) { return a.name; }) +
         ")),\n"
         "  CONSTRAINT max_requests CHECK (max_requests BETWEEN 1 AND " +
         max +
         "),\n"
         "  CONSTRAINT window_seconds CHECK (window_seconds BETWEEN 1 AND " +
         std::to_string((int64_t{1} << 62) / 1'000'000'000) +
         "),\n"
         // A bucket's: a burst, one token every window / max_requests in whole nanoseconds, and
         // the full bucket (burst * interval) under 2^62 ns; a window algorithm's: none. A CHECK
         // passes on NULL, so a missing burst must read as false.
         "  CONSTRAINT burst_size CHECK (COALESCE(CASE WHEN algorithm IN (" +
         buckets + ")\n    THEN burst_size BETWEEN 1 AND " + max +
         "\n"
         "      AND (window_seconds::numeric * 1000000000) % max_requests = 0\n"
         "      AND burst_size::numeric * (window_seconds::numeric * 1000000000 / max_requests)\n"
         "        <= 4611686018427387904\n"
         "    ELSE burst_size IS NULL END, false)),\n"
         "  CONSTRAINT target UNIQUE (scope_type, scope_value, endpoint)\n"
         ");\n"
         "CREATE OR REPLACE FUNCTION ratelab.rules_changed() RETURNS trigger\n"
         "LANGUAGE plpgsql AS $f$\n"
         "BEGIN\n"
         "  IF TG_OP = 'TRUNCATE' THEN\n"
         "    PERFORM pg_notify('" +
         std::string(kRulesChannel) +
         "', '*');\n"
         "  ELSIF TG_OP = 'DELETE' THEN\n"
         "    PERFORM pg_notify('" +
         std::string(kRulesChannel) +
         "', OLD.rule_id::text);\n"
         "  ELSE\n"
         "    PERFORM pg_notify('" +
         std::string(kRulesChannel) +
         "', NEW.rule_id::text);\n"
         "    IF TG_OP = 'UPDATE' AND OLD.rule_id <> NEW.rule_id THEN\n"
         "      PERFORM pg_notify('" +
         std::string(kRulesChannel) +
         "', OLD.rule_id::text);\n"
         "    END IF;\n"
         "  END IF;\n"
         "  RETURN NULL;\n"
         "END\n"
         "$f$;\n"
         "CREATE OR REPLACE TRIGGER rules_changed AFTER INSERT OR UPDATE OR DELETE ON "
         "ratelab.rules\n"
         "  FOR EACH ROW EXECUTE FUNCTION ratelab.rules_changed();\n"
         "CREATE OR REPLACE TRIGGER rules_truncated AFTER TRUNCATE ON ratelab.rules\n"
         "  FOR EACH STATEMENT EXECUTE FUNCTION ratelab.rules_changed();\n";
}

struct PostgresRules::Connection {
  explicit Connection(const std::string& info) : c(info) {}
  pqxx::connection c;
};

PostgresRules::PostgresRules(std::unique_ptr<Connection> conn) : conn_(std::move(conn)) {}
PostgresRules::~PostgresRules() = default;

Result<std::unique_ptr<PostgresRules>> PostgresRules::Open(const std::string& conninfo) {
  std::unique_ptr<Connection> conn;
  try {
    conn = std::make_unique<Connection>(WithConnectTimeout(conninfo, kConnectTimeout));
  } catch (const std::exception& e) {
    return absl::UnavailableError("cannot connect to PostgreSQL: " + Trim(e.what()));
  }
  Status made = Guarded("making the table ratelab.rules", [&] {
    pqxx::work tx(conn->c);
    tx.exec(RulesTableDdl());
    tx.commit();
    return absl::OkStatus();
  });
  if (!made.ok()) return Trimmed(made);
  return std::unique_ptr<PostgresRules>(new PostgresRules(std::move(conn)));
}

Result<RuleSet> PostgresRules::List() {
  Result<std::vector<Rule>> rules = std::vector<Rule>();
  Status s = Guarded("reading the rules", [&] {
    pqxx::read_transaction tx(conn_->c);
    rules = RulesFromResult(tx.exec(std::string("SELECT ") + kColumns + " FROM ratelab.rules"));
    return absl::OkStatus();
  });
  if (!s.ok()) return Trimmed(s);
  if (!rules.ok()) return rules.status();
  return RuleSet::Make(*std::move(rules));
}

Result<RulesImport> PostgresRules::Import(const RuleSet& rules, bool replace) {
  RulesImport counts;
  size_t at = 0;
  Status s = Guarded("importing the rules", [&] {
    pqxx::work tx(conn_->c);
    if (replace) {
      std::vector<std::string> ids;
      for (const Rule& r : rules.rules()) ids.push_back(r.rule_id);
      counts.deleted =
          tx.exec_params("DELETE FROM ratelab.rules WHERE NOT (rule_id = ANY($1::uuid[]))",
                         IdArray(ids))
              .affected_rows();
    }
    for (at = 0; at < rules.rules().size(); ++at) {
      const std::vector<std::string> params = RuleParams(rules.rules()[at]);
      const pqxx::result r =
          tx.exec_params(kUpsert, pqxx::prepare::make_dynamic_params(params.begin(), params.end()));
      if (r.empty()) {
        ++counts.unchanged;
      } else if (r[0][0].as<bool>()) {
        ++counts.inserted;
      } else {
        ++counts.updated;
      }
    }
    tx.commit();
    return absl::OkStatus();
  });
  if (!s.ok()) {
    if (at < rules.rules().size() && s.code() == absl::StatusCode::kInvalidArgument) {
      return absl::InvalidArgumentError(
          "rules[" + std::to_string(at) + "] (" + rules.rules()[at].ToString() +
          "): " + Trim(std::string(s.message())) + "; nothing was imported");
    }
    return Trimmed(s);
  }
  return counts;
}

Status PostgresRules::Put(const Rule& rule) {
  if (std::optional<RuleProblem> p = FindProblem(rule)) {
    return absl::InvalidArgumentError(std::string(p->field) + ": " + p->message);
  }
  return Trimmed(Guarded("writing rule " + rule.rule_id, [&] {
    const std::vector<std::string> params = RuleParams(rule);
    pqxx::work tx(conn_->c);
    tx.exec_params(kUpsert, pqxx::prepare::make_dynamic_params(params.begin(), params.end()));
    tx.commit();
    return absl::OkStatus();
  }));
}

Status PostgresRules::Delete(std::string_view rule_id) {
  if (!IsUuid(rule_id)) {
    return absl::InvalidArgumentError("rule_id: must be a UUID (got '" + std::string(rule_id) +
                                      "')");
  }
  return Trimmed(Guarded("deleting rule " + std::string(rule_id), [&] {
    pqxx::work tx(conn_->c);
    const pqxx::result r =
        tx.exec_params("DELETE FROM ratelab.rules WHERE rule_id = $1::uuid", std::string(rule_id));
    tx.commit();
    if (r.affected_rows() == 0) {
      return absl::NotFoundError("no rule has rule_id " + std::string(rule_id));
    }
    return absl::OkStatus();
  }));
}

// The listen connection, and what it has been notified of and not yet applied.
struct RulesCache::Listener {
  class Receiver final : public pqxx::notification_receiver {
   public:
    Receiver(pqxx::connection_base& c, std::vector<std::string>& pending)
        : pqxx::notification_receiver(c, std::string(kRulesChannel)), pending_(pending) {}
    void operator()(const std::string& payload, int) override { pending_.push_back(payload); }

   private:
    std::vector<std::string>& pending_;
  };

  // Connecting, then LISTEN (the receiver's constructor sends it).
  explicit Listener(const std::string& info) : c(info), receiver(c, pending), pid(c.backendpid()) {}

  pqxx::connection c;
  std::vector<std::string> pending;
  Receiver receiver;
  int pid;  // the backend it LISTENed on: another one means libpqxx connected again itself
};

RulesCache::RulesCache(std::string conninfo) : conninfo_(std::move(conninfo)) {}
RulesCache::~RulesCache() = default;

Result<std::unique_ptr<RulesCache>> RulesCache::Open(const std::string& conninfo) {
  std::unique_ptr<RulesCache> cache(new RulesCache(WithConnectTimeout(conninfo, kConnectTimeout)));
  if (Status s = cache->Connect(); !s.ok()) return s;
  return cache;
}

int RulesCache::backend_pid() const { return listener_ ? listener_->pid : 0; }

Status RulesCache::Connect() {
  listener_.reset();
  try {
    listener_ = std::make_unique<Listener>(conninfo_);
  } catch (const std::exception& e) {
    listener_.reset();
    return absl::UnavailableError("cannot connect to PostgreSQL to listen for rule changes: " +
                                  Trim(e.what()));
  }
  // Listening first, then reading: a change after the read is notified.
  Status s = ReadAll();
  if (!s.ok()) listener_.reset();
  return s;
}

Status RulesCache::ReadAll() {
  Result<std::vector<Rule>> rules = std::vector<Rule>();
  Status s = Guarded("reading the rules", [&] {
    pqxx::read_transaction tx(listener_->c);
    rules = RulesFromResult(tx.exec(std::string("SELECT ") + kColumns + " FROM ratelab.rules"));
    return absl::OkStatus();
  });
  if (!s.ok()) return Trimmed(s);
  if (!rules.ok()) return rules.status();
  Result<RuleSet> set = RuleSet::Make(*std::move(rules));
  if (!set.ok()) return set.status();
  rules_ = *std::move(set);
  listener_->pending.clear();
  ++full_reads_;
  return absl::OkStatus();
}

Status RulesCache::Poll(std::chrono::milliseconds wait) {
  if (listener_ == nullptr) return Connect();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(wait);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(wait - seconds);
  bool lost = false;
  try {
    if (listener_->c.get_notifs() == 0 && wait.count() > 0) {
      listener_->c.await_notification(static_cast<long>(seconds.count()),
                                      static_cast<long>(micros.count()));
    }
    lost = !listener_->c.is_open() || listener_->c.backendpid() != listener_->pid;
  } catch (const std::exception&) {
    lost = true;
  }
  // Notifications sent while the connection was down are lost: read everything again.
  if (lost) return Connect();
  return Apply();
}

Status RulesCache::Apply() {
  std::vector<std::string> ids = std::move(listener_->pending);
  listener_->pending.clear();
  if (ids.empty()) return absl::OkStatus();
  notifications_ += static_cast<int64_t>(ids.size());
  if (std::any_of(ids.begin(), ids.end(), [](const std::string& id) { return !IsUuid(id); })) {
    return ReadAll();  // a TRUNCATE ("*")
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  Result<std::vector<Rule>> changed = std::vector<Rule>();
  Status s = Guarded("reading changed rules", [&] {
    pqxx::read_transaction tx(listener_->c);
    changed = RulesFromResult(tx.exec_params(
        std::string("SELECT ") + kColumns + " FROM ratelab.rules WHERE rule_id = ANY($1::uuid[])",
        IdArray(ids)));
    return absl::OkStatus();
  });
  if (s.code() == absl::StatusCode::kUnavailable) return Connect();
  if (!s.ok()) return Trimmed(s);
  if (!changed.ok()) return changed.status();
  std::vector<Rule> next;
  for (const Rule& r : rules_.rules()) {
    if (!std::binary_search(ids.begin(), ids.end(), r.rule_id)) next.push_back(r);
  }
  next.insert(next.end(), changed->begin(), changed->end());
  SortRules(next);
  Result<RuleSet> set = RuleSet::Make(std::move(next));
  // Two rules of one target for a moment (one notified, the other not yet): read everything.
  if (!set.ok()) return ReadAll();
  rules_ = *std::move(set);
  return absl::OkStatus();
}

}  // namespace ratelab
