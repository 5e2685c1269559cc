// `ratelab serve`: the rate-limit service (impl/service/service.h) over HTTP
// (impl/service/http_server.h), deciding by rules from a rules file or the seeds' own.
#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "impl/core/system_clock.h"
#include "impl/rules/postgres_rules.h"
#include "impl/service/http_server.h"
#include "impl/service/live_rules.h"
#include "impl/service/service.h"
#include "impl/store/postgres_server.h"
#include "impl/store/postgres_sql.h"
#include "impl/store/redis_cluster.h"
#include "impl/store/redis_server.h"
#include "sim/rules_file.h"

namespace ratelab {

namespace {

class Serve final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "serve",
        "Run the rate-limit service over HTTP: seed 003's decision API (POST /ratelimit/check), "
        "seed 001's API (POST /api/hit), GET /healthz, with X-RateLimit and RateLimit headers");
    c->footer(
        "Decides in process (or on Redis: --store), by the rules of --rules (docs/rules.md) or, "
        "without it, by the "
        "seeds' own: 5 a minute per user on /api/hit, 100 a minute per user and endpoint "
        "elsewhere. Rules in PostgreSQL are followed as they change (LISTEN/NOTIFY), and with "
        "--admin-token-file the admin API (GET, POST /ratelimit/rules; GET, PUT, DELETE "
        "/ratelimit/rules/ID) changes them. SIGINT or SIGTERM stops it gracefully: requests "
        "already read are answered.");
    c->add_option_function<std::string>(
        "--listen",
        [this](const std::string& text) {
          if (Status s = ParseListenAddress(text, options_); !s.ok()) {
            throw CLI::ValidationError("--listen: " + std::string(s.message()));
          }
        },
        "HOST:PORT to listen on (default 127.0.0.1:8080; port 0: any free one)");
    c->add_option("--rules", rules_,
                  "Where the rules are: a rules file (YAML, read-only), postgres (a private "
                  "PostgreSQL server, empty at the start), or postgresql://... (the table "
                  "ratelab.rules of that database, made when missing)");
    c->add_option("--admin-token-file", token_file_,
                  "A file holding the token the admin API's callers must send (Authorization: "
                  "Bearer TOKEN); without it the admin API is off");
    AddStoreOption(
        *c, store_,
        "Where the counters are: memory (in process, the default), redis (a private "
        "redis-server), or a running Redis, redis://host:port/db, unix:///path.sock?db=N "
        "or redis-cluster://host:port[,...]; on Redis each rule runs as its "
        "algorithm's Lua script (fixed-window, sliding-log, token-bucket, gcra)");
    c->add_option_function<std::string>(
        "--on-store-failure",
        [this](const std::string& text) {
          const std::optional<FailurePolicy::Kind> kind = FailurePolicyFromName(text);
          if (!kind) {
            throw CLI::ValidationError("--on-store-failure: '" + text +
                                       "' is not error, open, closed or breaker");
          }
          failure_.kind = *kind;
        },
        "When the store fails or times out: error (503), open (admit), closed (deny, 429 with "
        "Retry-After: 1), breaker (admit, and after 5 failures in a row stop asking the store "
        "for 10s, then let one request probe it); /healthz shows the breaker");
    AddParsed(*c, "--store-timeout", store_timeout_, ParsePositiveDuration,
              "The longest a call to Redis may take before it counts as failed (default 250ms)");
    AddParsed(*c, "--max-body", options_.max_body_bytes, ParseBodyLimit,
              "The largest request body taken, in bytes (default 65536); a larger one is a 413");
    return c;
  }

  Result<int> Run(std::ostream&, std::ostream& err) override {
    std::string token;
    if (!token_file_.empty()) {
      Result<std::string> read = ReadToken(token_file_);
      if (!read.ok()) return read.status();
      token = *std::move(read);
    }
    // Where the rules are: a file or the seeds' (fixed), or PostgreSQL (followed).
    std::unique_ptr<PostgresServer> private_server;
    std::unique_ptr<RulesFollower> follower;
    std::unique_ptr<RulesStore> store;
    std::optional<LiveRules> fixed;
    std::string source = "the seeds' rules";
    if (rules_ == "postgres" || rules_.starts_with("postgresql://") ||
        rules_.starts_with("postgres://")) {
      std::string conninfo = rules_;
      if (rules_ == "postgres") {
        Result<std::unique_ptr<PostgresServer>> started =
            PostgresServer::Start(PostgresServerOptions{});
        if (!started.ok()) return started.status();
        private_server = *std::move(started);
        conninfo = private_server->url();
      } else if (Status s = ParsePostgresUrl(rules_); !s.ok()) {
        return s;
      }
      Result<std::unique_ptr<RulesFollower>> followed = RulesFollower::Start(conninfo);
      if (!followed.ok()) return followed.status();
      follower = *std::move(followed);
      Result<std::unique_ptr<PostgresRules>> table = PostgresRules::Open(conninfo);
      if (!table.ok()) return table.status();
      store = *std::move(table);
      source = "the rules of PostgreSQL at " + conninfo + ", followed";
    } else {
      RuleSet rules = SeedServiceRules();
      if (!rules_.empty()) {
        Result<RuleSet> loaded = LoadRules(rules_);
        if (!loaded.ok()) return loaded.status();
        rules = *std::move(loaded);
        source = "the rules of " + rules_;
      }
      store = std::make_unique<ReadOnlyRules>(rules, rules_.empty() ? "the seeds" : rules_);
      fixed.emplace(std::move(rules));
    }
    LiveRules& live = follower ? follower->rules() : *fixed;
    // Where the counters are.
    std::unique_ptr<RedisServer> private_redis;
    std::unique_ptr<Kv> kv;
    RulesLimiter::ProtocolMaker protocols = InProcessProtocols();
    std::string counters = "in process";
    if (store_.kind == KvStoreName::Kind::kPrivatePostgres ||
        store_.kind == KvStoreName::Kind::kPostgresUrl) {
      return absl::InvalidArgumentError(
          "--store: serve keeps its counters in memory or Redis (PostgreSQL holds rules: "
          "--rules postgres)");
    }
    if (store_.kind != KvStoreName::Kind::kMemory) {
      std::string url = store_.url;
      if (store_.kind == KvStoreName::Kind::kPrivateRedis) {
        Result<std::unique_ptr<RedisServer>> started = RedisServer::Start({});
        if (!started.ok()) return started.status();
        private_redis = *std::move(started);
        url = private_redis->url();
      }
      RedisOptions redis;
      redis.command_timeout = store_timeout_;
      redis.connect_timeout = store_timeout_;
      Result<std::unique_ptr<Kv>> opened = OpenRedisUrl(url, redis);
      if (!opened.ok()) return opened.status();
      kv = *std::move(opened);
      if (Status s = CheckKvProtocols(live.Current()); !s.ok()) return s;
      protocols = KvProtocols(*kv);
      counters = "on Redis at " + url;
    }
    RulesLimiter limiter([&]() -> const RuleSet& { return live.Current(); }, protocols);
    RateLimitService service(limiter, token.empty() ? AdminApi{} : AdminApi{store.get(), token},
                             failure_);
    SystemClock clock;
    InlineExecutor executor;
    Result<std::unique_ptr<HttpServer>> server =
        HttpServer::Listen(options_, [&](const HttpRequest& request) {
          Context ctx(executor);
          const Instant read = clock.Now();
          HttpResponse answer = RunInline(service.Handle(ctx, request, read));
          service.metrics().Took(clock.Now() - read);
          return answer;
        });
    if (!server.ok()) return server.status();
    err << "ratelab serve: listening on http://" << options_.host << ":" << (*server)->port()
        << ", deciding " << counters << " by " << source << " (" << live.Current().rules().size()
        << "); on a store failure: " << FailurePolicyName(failure_.kind) << "; the admin API is "
        << (token.empty() ? "off" : "on") << "\n"
        << std::flush;
    // A signal only marks the process interrupted; this thread turns that into a stop.
    InterruptHandler interrupt;
    std::atomic<bool> done = false;
    std::thread watcher([&] {
      while (!done.load()) {
        if (interrupt.interrupted()) {
          (*server)->Stop();
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    (*server)->Run();
    done = true;
    watcher.join();
    err << "ratelab serve: stopped after answering " << (*server)->answered() << " requests\n";
    return kExitOk;
  }

 private:
  static Result<size_t> ParseBodyLimit(std::string_view text) {
    const Result<int64_t> n = ParsePositiveInteger(text);
    if (!n.ok() || *n > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError("'" + std::string(text) +
                                        "' is not a byte count from 1 to 1073741824");
    }
    return static_cast<size_t>(*n);
  }

  // The token of `path`: its text without surrounding white space, not empty.
  static Result<std::string> ReadToken(const std::string& path) {
    std::ifstream in(path);
    if (!in || std::filesystem::is_directory(path)) {
      return absl::NotFoundError(path + ": cannot read the admin token file");
    }
    std::string text((std::istreambuf_iterator<char>(in)), {});
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
      return absl::InvalidArgumentError(path + ": the admin token file is empty");
    text = text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
    return text;
  }

  HttpServerOptions options_;
  KvStoreName store_;
  FailurePolicy failure_;
  Duration store_timeout_ = std::chrono::milliseconds(250);
  std::string rules_;
  std::string token_file_;
};

}  // namespace

std::unique_ptr<Command> ServeCommand() { return std::make_unique<Serve>(); }

}  // namespace ratelab
