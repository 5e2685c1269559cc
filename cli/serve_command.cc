// `ratelab serve`: the rate-limit service (impl/service/service.h) over HTTP
// (impl/service/http_server.h), deciding by rules from a rules file or the seeds' own.
#include <CLI/CLI.hpp>
#include <atomic>
#include <thread>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "impl/core/system_clock.h"
#include "impl/service/http_server.h"
#include "impl/service/service.h"
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
        "Decides in process, by the rules of --rules (docs/rules.md) or, without it, by the "
        "seeds' own: 5 a minute per user on /api/hit, 100 a minute per user and endpoint "
        "elsewhere. SIGINT or SIGTERM stops it gracefully: requests already read are answered.");
    c->add_option_function<std::string>(
        "--listen",
        [this](const std::string& text) {
          if (Status s = ParseListenAddress(text, options_); !s.ok()) {
            throw CLI::ValidationError("--listen: " + std::string(s.message()));
          }
        },
        "HOST:PORT to listen on (default 127.0.0.1:8080; port 0: any free one)");
    c->add_option("--rules", rules_file_, "A rules file (YAML) to decide by");
    AddParsed(*c, "--max-body", options_.max_body_bytes, ParseBodyLimit,
              "The largest request body taken, in bytes (default 65536); a larger one is a 413");
    return c;
  }

  Result<int> Run(std::ostream&, std::ostream& err) override {
    RuleSet rules = SeedServiceRules();
    if (!rules_file_.empty()) {
      Result<RuleSet> loaded = LoadRules(rules_file_);
      if (!loaded.ok()) return loaded.status();
      rules = *std::move(loaded);
    }
    RulesLimiter limiter([&]() -> const RuleSet& { return rules; }, InProcessProtocols());
    RateLimitService service(limiter);
    SystemClock clock;
    InlineExecutor executor;
    Result<std::unique_ptr<HttpServer>> server =
        HttpServer::Listen(options_, [&](const HttpRequest& request) {
          Context ctx(executor);
          return RunInline(service.Handle(ctx, request, clock.Now()));
        });
    if (!server.ok()) return server.status();
    err << "ratelab serve: listening on http://" << options_.host << ":" << (*server)->port()
        << ", deciding in process by "
        << (rules_file_.empty() ? "the seeds' rules" : "the rules of " + rules_file_) << " ("
        << rules.rules().size() << ")\n"
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
    size_t n = 0;
    for (const char c : text) {
      if (c < '0' || c > '9' || n > (size_t{1} << 30)) {
        return absl::InvalidArgumentError("'" + std::string(text) +
                                          "' is not a byte count from 1 to 1073741824");
      }
      n = n * 10 + static_cast<size_t>(c - '0');
    }
    if (n < 1 || n > (size_t{1} << 30)) {
      return absl::InvalidArgumentError("'" + std::string(text) +
                                        "' is not a byte count from 1 to 1073741824");
    }
    return n;
  }

  HttpServerOptions options_;
  std::string rules_file_;
};

}  // namespace

std::unique_ptr<Command> ServeCommand() { return std::make_unique<Serve>(); }

}  // namespace ratelab
