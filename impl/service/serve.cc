#include "impl/service/serve.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "absl/strings/str_join.h"
#include "impl/core/frame_pool.h"
#include "impl/core/process_memory.h"
#include "impl/drivers/store_drivers.h"
#include "impl/rules/postgres_rules.h"
#include "impl/rules/rules_store.h"
#include "impl/service/http_wire.h"
#include "impl/service/live_rules.h"
#include "impl/service/service.h"
#include "impl/store/postgres_pool.h"
#include "impl/store/redis_pipeline.h"

namespace ratelab {

namespace {

// What one thread decides with: its own connection to the store, limiter and service.
struct ServeThread {
  explicit ServeThread(const LiveRules& live) : rules(live) {}

  // The coroutine frames of its requests' decisions, taken and given back on this thread (in
  // process, OneByOne; on a store that answers later, LaterDecisions: the store's driver resumes
  // them on this thread too), so that a decision allocates no frame once the pool holds as many
  // as the thread has had in flight at once.
  FramePool frames;

  // Overlapped (StoreConnectOptions): on one Redis server (not a cluster), the thread's
  // requests' commands sent in pipelines; on PostgreSQL, its statements run on several
  // connections at once. None in process.
  StoreConnection store;
  LiveRules::Reader rules;
  std::unique_ptr<RulesLimiter> limiter;
  std::unique_ptr<RateLimitService> service;
  InlineExecutor executor;
};

// A thread's decisions in flight on a store that answers later: each request read is started at
// once (its store steps submitted to the store's driver), answered as soon as its decision is
// done, and meanwhile the thread goes on reading and answering HTTP, so that a store that stalls
// keeps no other connection of the thread waiting (a health check is answered at once).
class LaterDecisions : public HttpServer::LaterHandler {
 public:
  LaterDecisions(ServeThread& w, const Clock& clock, Executor& store)
      : w_(w), clock_(clock), ctx_(store, /*request=*/-1, &w.frames) {}

  void Take(std::span<const HttpRequest* const> requests,
            std::span<HttpServer::Answer> answers) override {
    const Instant read = clock_.Now();
    for (size_t i = 0; i < requests.size(); ++i) {
      deciding_.push_back(
          Deciding{w_.service->Handle(ctx_, *requests[i], read), std::move(answers[i]), read});
      deciding_.back().task.Start();
    }
    AnswerDecided();
    Send();
  }

 protected:
  // Sends what the decisions submitted, if the store's driver is ready to.
  virtual void Send() = 0;

  // Answers the requests whose decisions are done.
  void AnswerDecided() {
    const Instant now = clock_.Now();
    size_t kept = 0;
    for (Deciding& d : deciding_) {
      if (!d.task.done()) {
        deciding_[kept++] = std::move(d);
        continue;
      }
      HttpResponse response;
      try {
        response = std::move(d.task.result());
      } catch (const std::exception&) {
        response = InternalError();
      }
      w_.service->metrics().Took(now - d.read);
      d.answer(response);
      w_.service->Reuse(std::move(response));
    }
    deciding_.erase(deciding_.begin() + static_cast<ptrdiff_t>(kept), deciding_.end());
  }

  ServeThread& w_;

 private:
  struct Deciding {
    Task<HttpResponse> task;
    HttpServer::Answer answer;
    Instant read;
  };

  const Clock& clock_;
  Context ctx_;
  std::vector<Deciding> deciding_;
};

// On one Redis server: a thread's requests decided in rounds of one pipeline each; what it reads
// while a round is out goes in the next round, sent as the replies of this one are in. A round
// is waited for until a timeout after its oldest step was submitted (not after it was sent), so
// that a decision read while the round before it stalled ends within the one timeout too; the
// round's newer steps fail with it, since their replies would come after the oldest's.
class OverlappedRounds final : public LaterDecisions {
 public:
  OverlappedRounds(ServeThread& w, const Clock& clock, Duration timeout)
      : LaterDecisions(w, clock, *w.store.pipeline), timeout_(timeout) {}

  std::optional<Wait> Waiting() override {
    if (w_.store.pipeline->in_flight() == 0) return std::nullopt;
    return Wait{w_.store.pipeline->reply_fd(), w_.store.pipeline->connection(),
                w_.store.pipeline->submitted() + timeout_};
  }

  void Waited(bool readable) override {
    if (readable) {
      w_.store.pipeline->Receive();
    } else {
      w_.store.pipeline->Expire();
    }
    AnswerDecided();
    SendRounds();
  }

 private:
  void Send() override {
    if (w_.store.pipeline->in_flight() == 0) SendRounds();
  }

  // Sends the steps waiting as a round, until one is out whose replies are to be waited for.
  void SendRounds() {
    while (w_.store.pipeline->Send()) {
      if (w_.store.pipeline->reply_fd() >= 0) return;
      w_.store.pipeline->Receive();
      AnswerDecided();
    }
  }

  const Duration timeout_;  // each round's replies are due within it of its oldest step
};

// On PostgreSQL: a thread's requests' statements each on a connection of its own (PostgresPool),
// sent as the pool's connections come free, every call carried on as its connection is ready:
// the thread watches the pool's descriptor beside its HTTP connections.
class PooledStatements final : public LaterDecisions {
 public:
  PooledStatements(ServeThread& w, const Clock& clock) : LaterDecisions(w, clock, *w.store.pool) {}

  std::optional<Wait> Waiting() override {
    const std::optional<std::chrono::steady_clock::time_point> until = w_.store.pool->deadline();
    if (!until) return std::nullopt;
    return Wait{w_.store.pool->fd(), kPool, *until};
  }

  void Waited(bool) override {
    w_.store.pool->Advance();
    AnswerDecided();
  }

 private:
  static constexpr int64_t kPool = 1;  // the pool's descriptor is its own for its whole life

  void Send() override {
    if (w_.store.pool->fd() < 0) {
      w_.store.pool->Run();  // no descriptor to watch: the thread waits for the pool
    } else {
      w_.store.pool->Advance();
    }
    AnswerDecided();
  }
};

}  // namespace

struct RateLimitServer::Parts {
  ~Parts() { StopDropping(); }

  ServeConfig config;
  const Clock* clock = nullptr;
  std::unique_ptr<StoreDriver> counters;  // where the counters are
  // Where the rules table is, unless on the counters' private PostgreSQL server.
  std::unique_ptr<StoreDriver> rules_server;
  std::unique_ptr<RulesFollower> follower;  // rules in PostgreSQL
  std::optional<LiveRules> fixed;           // else
  LiveRules* rules = nullptr;               // the follower's or `fixed`
  std::unique_ptr<RulesStore> admin_store;
  std::string rules_where;
  std::string counters_where = "in process";
  std::unique_ptr<SharedInProcessLimiters> in_process;
  std::shared_ptr<ServiceState> shared;
  std::string warning;  // RateLimitServer::Warning
  // In process: a thread that drops idle keys every second, until `stopping`.
  std::thread dropper;
  std::mutex dropper_mutex;
  std::condition_variable dropper_wake;
  bool stopping = false;  // guarded by dropper_mutex
  std::vector<std::unique_ptr<ServeThread>> workers;
  std::unique_ptr<HttpServer> http;  // declared last: stopped and destroyed first

  // Where the rules table is: on the counters' private PostgreSQL server when both are on one,
  // else on its own store, started.
  Result<std::string> RulesServer() {
    const StoreName& where = *config.rules_store;
    if (where.owns_server() && counters->name() == where) return counters->address();
    Result<std::unique_ptr<StoreDriver>> opened = OpenStoreDriver(where);
    if (!opened.ok()) return opened.status();
    rules_server = *std::move(opened);
    if (Status s = rules_server->Start(); !s.ok()) return s;
    return rules_server->address();
  }

  Status OpenRules() {
    if (!config.rules_store) {
      const bool defaults = config.rules_file.empty();
      rules_where = defaults ? "the default rules" : "the rules of " + config.rules_file;
      admin_store = std::make_unique<ReadOnlyRules>(
          config.rules, defaults ? "the default rules" : config.rules_file);
      rules = &fixed.emplace(config.rules);
      return absl::OkStatus();
    }
    Result<std::string> server = RulesServer();
    if (!server.ok()) return server.status();
    const std::string& conninfo = *server;
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

  // The counters' store, started (before the rules, which may share its PostgreSQL server).
  Status StartCounters() {
    Result<std::unique_ptr<StoreDriver>> opened = OpenStoreDriver(config.store);
    if (!opened.ok()) return opened.status();
    counters = *std::move(opened);
    return counters->Start();
  }

  // Its tables made, where it has any (PostgreSQL's): the counters there outlive a restart.
  Status PrepareCounters() {
    if (Status s = counters->Prepare(false); !s.ok()) return s;
    if (config.store.kind != StoreName::Kind::kMemory) counters_where = counters->Where();
    return absl::OkStatus();
  }

  // A thread's connection to the counters' store, and the protocols that use it.
  Result<RulesLimiter::ProtocolMaker> Connect(ServeThread& w) {
    if (config.store.kind == StoreName::Kind::kMemory) return in_process->Maker();
    StoreConnectOptions options;
    options.timeout = config.store_timeout;
    options.overlapped = true;
    options.connections = config.store_connections;
    Result<StoreConnection> connected = counters->Connect(options);
    if (!connected.ok()) return connected.status();
    w.store = *std::move(connected);
    const Stores stores{w.store.kv, nullptr, w.store.sql};
    if (Status s = CheckStoreProtocols(stores, *rules->Latest(), config.protocols); !s.ok()) {
      return s;
    }
    return StoreProtocols(stores, config.protocols);
  }

  // Each request decided at once, on the thread, its answer written in the room of the one it
  // replaces (written out already).
  HttpServer::BatchHandler OneByOne(ServeThread& w) const {
    return HttpServer::OneByOne(HttpServer::AnswerInRoom(
        [w = &w, clock = clock](const HttpRequest& request, HttpResponse& answer) {
          Context ctx(w->executor, /*request=*/-1, &w->frames);
          const Instant read = clock->Now();
          w->service->Reuse(std::move(answer));
          answer = RunInline(w->service->Handle(ctx, request, read));
          w->service->metrics().Took(clock->Now() - read);
        }));
  }

  // Every second, the keys idle a second ago dropped; memory given back to the system when many
  // were (glibc keeps freed memory otherwise).
  void StartDropping() {
    dropper = std::thread([this] {
      std::unique_lock lock(dropper_mutex);
      while (!dropper_wake.wait_for(lock, std::chrono::seconds(1), [this] { return stopping; })) {
        lock.unlock();
        const int64_t dropped = in_process->DropIdle(clock->Now() - std::chrono::seconds(1));
        if (dropped >= 10'000) TrimFreedMemory();
        lock.lock();
      }
    });
  }
  void StopDropping() {
    {
      std::lock_guard lock(dropper_mutex);
      stopping = true;
    }
    dropper_wake.notify_all();
    if (dropper.joinable()) dropper.join();
  }

  Status StartWorkers() {
    shared = std::make_shared<ServiceState>(config.on_store_failure, config.service, config.log);
    in_process = std::make_unique<SharedInProcessLimiters>(config.max_keys);
    AdminApi admin;
    if (!config.admin_token.empty()) {
      admin_store = std::make_unique<TimedRules>(std::move(admin_store), config.store_timeout);
      admin = AdminApi{admin_store.get(), config.admin_token, {}};
    }
    std::vector<std::unique_ptr<HttpServer::LaterHandler>> handlers;
    for (int i = 0; i < config.threads; ++i) {
      auto w = std::make_unique<ServeThread>(*rules);
      Result<RulesLimiter::ProtocolMaker> protocols = Connect(*w);
      if (!protocols.ok()) return protocols.status();
      // Redis connects when first asked: ask once now, so that an operator hears at start of a
      // store that does not answer, and /readyz says so before the first request fails.
      if (i == 0 && w->store.direct_kv != nullptr) {
        const std::string ping[] = {"PING"};
        if (Result<KvReply> pong = w->store.direct_kv->Execute(ping); !pong.ok()) {
          shared->StoreFailed(pong.status());
          warning = "the store does not answer (" + std::string(pong.status().message()) +
                    "): serving anyway; until it does, each decision meets --on-store-failure (" +
                    std::string(FailurePolicyName(config.on_store_failure.kind)) +
                    ") and /readyz answers 503";
        }
      }
      // A rule written through the admin API must be one the counters' store can enforce.
      if (i == 0 && config.store.kind != StoreName::Kind::kMemory) {
        admin.enforceable = [stores = Stores{w->store.kv, nullptr, w->store.sql},
                             protocols = config.protocols](const Rule& rule) {
          return CheckStoreProtocol(stores, rule, protocols);
        };
      }
      w->limiter = std::make_unique<RulesLimiter>(
          [w = w.get()]() -> const RuleSet& { return w->rules.Current(); }, *protocols);
      w->service = std::make_unique<RateLimitService>(*w->limiter, admin, shared);
      if (w->store.pipeline != nullptr) {
        handlers.push_back(std::make_unique<OverlappedRounds>(*w, *clock, config.store_timeout));
      } else {
        handlers.push_back(w->store.pool != nullptr ? std::make_unique<PooledStatements>(*w, *clock)
                                                    : HttpServer::Batched(OneByOne(*w)));
      }
      workers.push_back(std::move(w));
    }
    if (config.http.max_connections == 0) {
      // Each thread's store connections, the rules' follower and the files the process keeps.
      config.http.max_connections = DefaultMaxConnections(64 + static_cast<size_t>(config.threads) *
                                                                   (config.store_connections + 1));
    }
    if (!config.http.log) config.http.log = config.log;
    Result<std::unique_ptr<HttpServer>> listening =
        HttpServer::Listen(config.http, std::move(handlers));
    if (!listening.ok()) return listening.status();
    http = *std::move(listening);
    ServiceMetrics::Sources sources;
    sources.connections = [server = http.get()] { return server->counts(); };
    if (config.store.kind == StoreName::Kind::kMemory) {
      sources.keys = [limiters = in_process.get()] { return limiters->keys(); };
      StartDropping();
    }
    shared->metrics().SetSources(std::move(sources));
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
    if (Status s = CheckProtocolChoices(config.protocols, config.store.postgres()); !s.ok()) {
      return s;
    }
  }
  auto parts = std::make_unique<Parts>();
  parts->config = std::move(config);
  parts->clock = &clock;
  if (Status s = parts->StartCounters(); !s.ok()) return s;
  if (Status s = parts->OpenRules(); !s.ok()) return s;
  if (Status s = parts->PrepareCounters(); !s.ok()) return s;
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
         "; the admin API is " + (p.config.admin_token.empty() ? "off" : "on") + "; at most " +
         std::to_string(p.config.http.max_connections) + " connections" +
         (p.config.store.kind == StoreName::Kind::kMemory
              ? (p.config.max_keys == 0 ? ", keys without bound"
                                        : ", " + std::to_string(p.config.max_keys) + " keys a rule")
              : "") +
         ", identities of " + std::to_string(p.config.service.max_key_bytes) + " bytes";
}

std::string RateLimitServer::Warning() const { return parts_->warning; }

uint16_t RateLimitServer::port() const { return parts_->http->port(); }

void RateLimitServer::Run() { parts_->http->Run(); }

void RateLimitServer::Stop() { parts_->http->Stop(); }

int64_t RateLimitServer::answered() const { return parts_->http->answered(); }

}  // namespace ratelab
