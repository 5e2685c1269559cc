#include "impl/service/serve.h"

#include <deque>
#include <list>
#include <optional>
#include <stdexcept>
#include <vector>

#include "absl/strings/str_join.h"
#include "impl/limiters/sql_protocols.h"
#include "impl/rules/postgres_rules.h"
#include "impl/rules/rules_store.h"
#include "impl/service/live_rules.h"
#include "impl/service/service.h"
#include "impl/store/postgres_pool.h"
#include "impl/store/postgres_server.h"
#include "impl/store/postgres_sql.h"
#include "impl/store/redis_cluster.h"
#include "impl/store/redis_pipeline.h"
#include "impl/store/redis_server.h"

namespace ratelab {

namespace {

// What one thread decides with: its own connection to the store, limiter and service.
struct ServeThread {
  explicit ServeThread(const LiveRules& live) : rules(live) {}

  std::unique_ptr<Kv> kv;
  // On one Redis server (not a cluster): the thread's requests' commands sent in pipelines,
  // a round at a time (RedisRounds).
  std::unique_ptr<RedisPipeline> pipeline;
  // On PostgreSQL: the thread's requests' statements run on several connections at once, a
  // batch at a time (Pipelined).
  std::unique_ptr<PgPool> sql;
  LiveRules::Reader rules;
  std::unique_ptr<RulesLimiter> limiter;
  std::unique_ptr<RateLimitService> service;
  InlineExecutor executor;
};

// A thread's requests decided on one Redis server without the thread waiting for it: their
// commands go out a round at a time (RedisPipeline), and while a round is out the thread reads
// and answers other requests, whose commands make the next round. A round is sent as soon as
// the one before is in, before its answers are written, so Redis and the thread work at once.
class RedisRounds final : public HttpServer::AsyncHandler {
 public:
  RedisRounds(ServeThread& thread, const Clock& clock, Duration limit)
      : thread_(thread), clock_(clock), limit_(limit) {}

  void Take(std::span<HttpServer::Reply> replies) override {
    const Instant read = clock_.Now();
    for (HttpServer::Reply& reply : replies) {
      Decision& d = deciding_.emplace_back(*thread_.pipeline, std::move(reply), read);
      d.task.emplace(thread_.service->Handle(d.context, d.reply.request(), read));
      d.task->Start();
    }
    Pump();
  }
  Wait Waiting() const override { return {thread_.pipeline->fd(), limit_}; }
  void Resume(bool readable) override {
    if (readable) {
      thread_.pipeline->Receive();
    } else {
      thread_.pipeline->GiveUp();
    }
    Pump();
  }

 private:
  struct Decision {
    Decision(Executor& executor, HttpServer::Reply r, Instant at)
        : context(executor), reply(std::move(r)), read(at) {}
    Context context;
    HttpServer::Reply reply;
    Instant read;
    std::optional<Task<HttpResponse>> task;
  };

  // Sends the next round unless one is out (a round that could not be sent is answered at
  // once, its steps failed), then answers every decision made.
  void Pump() {
    RedisPipeline& pipeline = *thread_.pipeline;
    while (pipeline.in_flight() == 0 && pipeline.Send() && pipeline.fd() < 0) pipeline.Receive();
    const Instant now = clock_.Now();
    for (auto d = deciding_.begin(); d != deciding_.end();) {
      if (!d->task->done()) {
        ++d;
        continue;
      }
      thread_.service->metrics().Took(now - d->read);
      std::move(d->reply).Send(std::move(d->task->result()));
      d = deciding_.erase(d);
    }
  }

  ServeThread& thread_;
  const Clock& clock_;
  Duration limit_;
  std::list<Decision> deciding_;  // in place: a decision's task holds its context
};

bool IsPostgres(const StoreName& store) {
  return store.kind == StoreName::Kind::kPrivatePostgres ||
         store.kind == StoreName::Kind::kPostgresUrl;
}

}  // namespace

struct RateLimitServer::Parts {
  ServeConfig config;
  const Clock* clock = nullptr;
  std::unique_ptr<PostgresServer> private_postgres;  // for the rules, the counters or both
  std::unique_ptr<RedisServer> private_redis;
  std::unique_ptr<RulesFollower> follower;  // rules in PostgreSQL
  std::optional<LiveRules> fixed;           // else
  LiveRules* rules = nullptr;               // the follower's or `fixed`
  std::unique_ptr<RulesStore> admin_store;
  std::string rules_where;
  std::string counters_where = "in process";
  std::string counters_url;  // of Redis or PostgreSQL
  SharedInProcessLimiters in_process;
  std::shared_ptr<ServiceState> shared;
  std::vector<std::unique_ptr<ServeThread>> workers;
  std::unique_ptr<HttpServer> http;  // declared last: stopped and destroyed first

  // The private PostgreSQL server, started on first need.
  Result<std::string> PrivatePostgres() {
    if (!private_postgres) {
      Result<std::unique_ptr<PostgresServer>> started =
          PostgresServer::Start(PostgresServerOptions{});
      if (!started.ok()) return started.status();
      private_postgres = *std::move(started);
    }
    return private_postgres->url();
  }

  Status OpenRules() {
    const std::string& where = config.rules_postgres;
    if (where.empty()) {
      const bool seeds = config.rules_file.empty();
      rules_where = seeds ? "the seeds' rules" : "the rules of " + config.rules_file;
      admin_store =
          std::make_unique<ReadOnlyRules>(config.rules, seeds ? "the seeds" : config.rules_file);
      rules = &fixed.emplace(config.rules);
      return absl::OkStatus();
    }
    std::string conninfo = where;
    if (where == "postgres") {
      Result<std::string> url = PrivatePostgres();
      if (!url.ok()) return url.status();
      conninfo = *url;
    } else if (Status s = ParsePostgresUrl(where); !s.ok()) {
      return s;
    }
    Result<std::unique_ptr<RulesFollower>> followed = RulesFollower::Start(conninfo);
    if (!followed.ok()) return followed.status();
    follower = *std::move(followed);
    rules = &follower->rules();
    Result<std::unique_ptr<PostgresRules>> table = PostgresRules::Open(conninfo);
    if (!table.ok()) return table.status();
    admin_store = *std::move(table);
    rules_where = "the rules of PostgreSQL at " + conninfo + ", followed";
    return absl::OkStatus();
  }

  Status OpenCounters() {
    switch (config.store.kind) {
      case StoreName::Kind::kMemory:
        return absl::OkStatus();
      case StoreName::Kind::kPrivateRedis: {
        Result<std::unique_ptr<RedisServer>> started = RedisServer::Start({});
        if (!started.ok()) return started.status();
        private_redis = *std::move(started);
        counters_url = private_redis->url();
        break;
      }
      case StoreName::Kind::kPrivatePostgres: {
        Result<std::string> url = PrivatePostgres();
        if (!url.ok()) return url.status();
        counters_url = *url;
        break;
      }
      case StoreName::Kind::kUrl:
      case StoreName::Kind::kPostgresUrl:
        counters_url = config.store.url;
        break;
    }
    if (IsPostgres(config.store)) {
      counters_where = "in PostgreSQL at " + counters_url;
      PgSql sql(counters_url, PgSqlOptions{});
      if (Status s = sql.Run(SqlTablesDdl()); !s.ok()) {
        return Status(s.code(), "cannot make ratelab's counter tables in PostgreSQL at " +
                                    counters_url + ": " + std::string(s.message()));
      }
    } else {
      counters_where = "on Redis at " + counters_url;
    }
    return absl::OkStatus();
  }

  // A thread's connection to the counters' store, and the protocols that use it.
  Result<RulesLimiter::ProtocolMaker> Connect(ServeThread& w) {
    Stores stores;
    if (config.store.kind == StoreName::Kind::kMemory) return in_process.Maker();
    if (IsPostgres(config.store)) {
      PgSqlOptions options;
      options.statement_timeout =
          std::chrono::duration_cast<std::chrono::milliseconds>(config.store_timeout);
      w.sql = std::make_unique<PgPool>(counters_url, config.store_connections, options);
      stores.sql = w.sql.get();
    } else {
      RedisOptions options;
      options.command_timeout = config.store_timeout;
      options.connect_timeout = config.store_timeout;
      Result<std::unique_ptr<Kv>> opened = OpenRedisUrl(counters_url, options);
      if (!opened.ok()) return opened.status();
      w.kv = *std::move(opened);
      stores.kv = w.kv.get();
      if (auto* redis = dynamic_cast<RedisKv*>(w.kv.get())) {
        w.pipeline = std::make_unique<RedisPipeline>(*redis);
        stores.kv = w.pipeline.get();
      }
    }
    if (Status s = CheckStoreProtocols(stores, *rules->Latest(), config.protocols); !s.ok()) {
      return s;
    }
    return StoreProtocols(stores, config.protocols);
  }

  // Each request decided at once, on the thread.
  HttpServer::BatchHandler OneByOne(ServeThread& w) const {
    return HttpServer::OneByOne([w = &w, clock = clock](const HttpRequest& request) {
      Context ctx(w->executor);
      const Instant read = clock->Now();
      HttpResponse answer = RunInline(w->service->Handle(ctx, request, read));
      w->service->metrics().Took(clock->Now() - read);
      return answer;
    });
  }

  // The requests read together decided together: their store steps run each on a connection of
  // its own (PgPool), round by round.
  HttpServer::BatchHandler Pipelined(ServeThread& w) const {
    return [w = &w, clock = clock](std::span<const HttpRequest* const> requests,
                                   std::span<HttpResponse> answers) {
      const Instant read = clock->Now();
      std::deque<Context> contexts;
      std::vector<Task<HttpResponse>> tasks;
      tasks.reserve(requests.size());
      for (const HttpRequest* request : requests) {
        contexts.emplace_back(*w->sql);
        tasks.push_back(w->service->Handle(contexts.back(), *request, read));
        tasks.back().Start();
      }
      w->sql->Run();
      const Duration took = clock->Now() - read;
      for (size_t i = 0; i < tasks.size(); ++i) {
        if (!tasks[i].done()) throw std::logic_error("a decision was left waiting on the store");
        answers[i] = std::move(tasks[i].result());
        w->service->metrics().Took(took);
      }
    };
  }

  Status StartWorkers() {
    shared = std::make_shared<ServiceState>(config.on_store_failure);
    AdminApi admin;
    if (!config.admin_token.empty()) {
      admin_store = std::make_unique<LockedRules>(std::move(admin_store));
      admin = AdminApi{admin_store.get(), config.admin_token, {}};
    }
    std::vector<std::unique_ptr<HttpServer::AsyncHandler>> handlers;
    for (int i = 0; i < config.threads; ++i) {
      auto w = std::make_unique<ServeThread>(*rules);
      Result<RulesLimiter::ProtocolMaker> protocols = Connect(*w);
      if (!protocols.ok()) return protocols.status();
      // A rule written through the admin API must be one the counters' store can enforce.
      if (i == 0 && config.store.kind != StoreName::Kind::kMemory) {
        admin.enforceable = [stores = Stores{w->kv.get(), nullptr, w->sql.get()},
                             protocols = config.protocols](const Rule& rule) {
          return CheckStoreProtocol(stores, rule, protocols);
        };
      }
      w->limiter = std::make_unique<RulesLimiter>(
          [w = w.get()]() -> const RuleSet& { return w->rules.Current(); }, *protocols);
      w->service = std::make_unique<RateLimitService>(*w->limiter, admin, shared);
      if (w->pipeline) {
        handlers.push_back(std::make_unique<RedisRounds>(*w, *clock, config.store_timeout));
      } else {
        handlers.push_back(HttpServer::AtOnce(w->sql ? Pipelined(*w) : OneByOne(*w)));
      }
      workers.push_back(std::move(w));
    }
    Result<std::unique_ptr<HttpServer>> listening =
        HttpServer::Listen(config.http, std::move(handlers));
    if (!listening.ok()) return listening.status();
    http = *std::move(listening);
    return absl::OkStatus();
  }
};

Result<std::unique_ptr<RateLimitServer>> RateLimitServer::Start(ServeConfig config,
                                                                const Clock& clock) {
  if (config.threads < 1) return absl::InvalidArgumentError("a server needs at least one thread");
  if (!config.protocols.empty()) {
    if (config.store.kind == StoreName::Kind::kMemory) {
      return absl::InvalidArgumentError(
          "--protocol chooses a protocol on Redis or PostgreSQL: give --store too");
    }
    if (Status s = CheckProtocolChoices(config.protocols, IsPostgres(config.store)); !s.ok()) {
      return s;
    }
  }
  auto parts = std::make_unique<Parts>();
  parts->config = std::move(config);
  parts->clock = &clock;
  if (Status s = parts->OpenRules(); !s.ok()) return s;
  if (Status s = parts->OpenCounters(); !s.ok()) return s;
  if (Status s = parts->StartWorkers(); !s.ok()) return s;
  return std::unique_ptr<RateLimitServer>(new RateLimitServer(std::move(parts)));
}

RateLimitServer::RateLimitServer(std::unique_ptr<Parts> parts) : parts_(std::move(parts)) {}

RateLimitServer::~RateLimitServer() = default;

std::string RateLimitServer::Banner() const {
  const Parts& p = *parts_;
  const size_t rules = const_cast<Parts&>(p).rules->Latest()->rules().size();
  return "listening on http://" + p.config.http.host + ":" + std::to_string(p.http->port()) + " (" +
         std::to_string(p.config.threads) + (p.config.threads == 1 ? " thread" : " threads") +
         "), deciding " + p.counters_where + " by " + p.rules_where + " (" + std::to_string(rules) +
         ")" +
         (p.config.protocols.empty() ? "" : " with " + absl::StrJoin(p.config.protocols, ", ")) +
         "; on a store failure: " + std::string(FailurePolicyName(p.config.on_store_failure.kind)) +
         "; the admin API is " + (p.config.admin_token.empty() ? "off" : "on");
}

uint16_t RateLimitServer::port() const { return parts_->http->port(); }

void RateLimitServer::Run() { parts_->http->Run(); }

void RateLimitServer::Stop() { parts_->http->Stop(); }

int64_t RateLimitServer::answered() const { return parts_->http->answered(); }

}  // namespace ratelab
