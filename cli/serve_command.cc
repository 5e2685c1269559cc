// `ratelab serve`: its flags into a ServeConfig, and RateLimitServer (impl/service/serve.h) run
// until a signal stops it.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <mutex>
#include <thread>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "impl/core/input_file.h"
#include "impl/core/process_memory.h"
#include "impl/core/system_clock.h"
#include "impl/service/serve.h"
#include "impl/service/service.h"
#include "sim/rules_file.h"

namespace ratelab {

namespace {

// A parse function for a count from 1 to `most`.
auto CountUpTo(int most) {
  return [most](std::string_view text) -> Result<int> {
    const Result<int64_t> n = ParsePositiveInteger(text);
    if (!n.ok() || *n > most) {
      return absl::InvalidArgumentError("'" + std::string(text) + "' is not a count from 1 to " +
                                        std::to_string(most));
    }
    return static_cast<int>(*n);
  };
}

class Serve final : public Command {
 public:
  CLI::App* Add(CLI::App& app) override {
    CLI::App* c = app.add_subcommand(
        "serve",
        "Run the rate-limit service over HTTP: the decision API (POST /ratelimit/check), the "
        "hit-counter API (POST /api/hit), GET /healthz (live) and GET /readyz (ready: the store "
        "answers), with X-RateLimit and RateLimit headers");
    c->footer(
        "Decides in process (or on Redis or PostgreSQL: --store), by the rules of --rules "
        "(docs/rules.md) or, "
        "without it, by the "
        "default rules: 5 a minute per user on /api/hit, 100 a minute per user and endpoint "
        "elsewhere. Rules in PostgreSQL are followed as they change (LISTEN/NOTIFY), and with "
        "--admin-token-file the admin API (GET, POST /ratelimit/rules; GET, PUT, DELETE "
        "/ratelimit/rules/ID) changes them. SIGINT or SIGTERM stops it gracefully: requests "
        "already read are answered.");
    c->add_option_function<std::string>(
        "--listen",
        [this](const std::string& text) {
          if (Status s = ParseListenAddress(text, config_.http); !s.ok()) {
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
        *c, config_.store,
        "Where the counters are: memory (in process, the default), redis (a private "
        "redis-server), a running Redis, redis://host:port/db, unix:///path.sock?db=N "
        "or redis-cluster://host:port[,...], postgres (a private PostgreSQL server) or "
        "postgresql://...; on Redis each rule runs as its algorithm's Lua script "
        "(fixed-window, sliding-log, token-bucket, gcra), on PostgreSQL as an upsert "
        "(fixed-window, token-bucket) in the schema ratelab, made when missing. A running "
        "store keeps the counts when serve restarts");
    c->add_option_function<std::string>(
        "--on-store-failure",
        [this](const std::string& text) {
          const std::optional<FailurePolicy::Kind> kind = FailurePolicyNamed(text);
          if (!kind) {
            throw CLI::ValidationError("--on-store-failure: '" + text +
                                       "' is not error, open, closed or breaker");
          }
          config_.on_store_failure.kind = *kind;
        },
        "When the store fails or times out: error (503), open (admit), closed (deny, 429 with "
        "Retry-After: 1), breaker (admit, and after 5 failures in a row stop asking the store "
        "for 10s, then let one request probe it); /healthz shows the breaker, /readyz is 503 "
        "while it is open");
    AddParsed(*c, "--store-timeout", config_.store_timeout, ParsePositiveDuration,
              "The longest a call to the store may take before it counts as failed (default "
              "250ms)");
    AddParsed(*c, "--threads", config_.threads, CountUpTo(256),
              "Threads answering requests, each with its own connection to the store (default "
              "1); the in-process counters, the circuit breaker and /metrics are shared");
    c->add_option("--protocol", config_.protocols,
                  "A protocol (ratelab list protocols) to enforce the rules of its algorithm "
                  "instead of the usual one, on the --store it runs on; repeatable. To see what "
                  "another protocol, a racy one among them, does in service");
    AddParsed(*c, "--store-connections", config_.store_connections, CountUpTo(64),
              "On PostgreSQL, each thread's connections (default 4): the requests a thread "
              "read together are decided on as many connections at once (on Redis a thread "
              "pipelines them on one connection)");
    AddParsed(*c, "--max-body", config_.http.max_body_bytes, ParseBodyLimit,
              "The largest request body taken, in bytes (default 65536); a larger one is a 413");
    AddParsed(*c, "--max-connections", config_.http.max_connections, CountUpTo(1'000'000),
              "The most connections open at once (default: 10000, or fewer when the file "
              "descriptor limit is lower, whose soft limit serve raises to the hard one); a "
              "connection past it closes the oldest idle one, or is closed at once when none is "
              "idle");
    AddParsed(*c, "--max-keys", config_.max_keys, ParseCount,
              "In process, the most keys each rule keeps (default 1000000; 0: no bound); past "
              "it the least recently used are dropped and start afresh (counted in /metrics). "
              "Keys whose window has passed or whose bucket is full are dropped every second "
              "whatever the bound");
    AddParsed(*c, "--max-key-bytes", config_.service.max_key_bytes, CountUpTo(65536),
              "The longest identity taken, in bytes (a user id, an API key, an address, an "
              "endpoint; default 256); a longer one is a 400 naming it");
    AddChoice(*c, "--endpoint-case", config_.service.paths.case_sensitive,
              {{"sensitive", true}, {"insensitive", false}},
              "Whether /API/Search is another endpoint than /api/search: sensitive (the default, "
              "as RFC 3986 has it) or insensitive (as Express routes by default)");
    AddChoice(*c, "--trailing-slash", config_.service.paths.trailing_slash_matters,
              {{"ignore", false}, {"keep", true}},
              "Whether /api/search/ is another endpoint than /api/search: ignore (the default: the "
              "same) or keep. Paths are otherwise matched as normalized: escapes of unreserved "
              "characters decoded, . and .. resolved, repeated slashes made one");
    return c;
  }

  Result<int> Run(std::ostream&, std::ostream& err) override {
    if (!token_file_.empty()) {
      Result<std::string> read = ReadToken(token_file_, err);
      if (!read.ok()) return read.status();
      config_.admin_token = *std::move(read);
    }
    config_.rules = SeedServiceRules();
    if (Result<StoreName> store = StoreName::Parse(rules_); store.ok() && store->postgres()) {
      config_.rules_store = *std::move(store);
    } else if (!rules_.empty()) {
      Result<RuleSet> loaded = LoadRules(rules_);
      if (!loaded.ok()) return loaded.status();
      config_.rules = *std::move(loaded);
      config_.rules_file = rules_;
    }
    // A server's memory must come back once the keys it held go idle (ratelab's main keeps freed
    // memory for the simulation's next run).
    GiveFreedMemoryBack();
    SystemClock clock;
    std::mutex log_mutex;
    config_.log = [&err, &log_mutex](std::string_view line) {
      std::lock_guard lock(log_mutex);
      err << "ratelab serve: " << line << "\n" << std::flush;
    };
    Result<std::unique_ptr<RateLimitServer>> started = RateLimitServer::Start(config_, clock);
    if (!started.ok()) return started.status();
    RateLimitServer& server = **started;
    err << "ratelab serve: " << server.Banner() << "\n" << std::flush;
    if (const std::string warning = server.Warning(); !warning.empty()) {
      err << "ratelab serve: warning: " << warning << "\n" << std::flush;
    }
    // A signal only marks the process interrupted; this thread turns that into a stop.
    InterruptHandler interrupt;
    std::atomic<bool> done = false;
    std::thread watcher([&] {
      while (!done.load()) {
        if (interrupt.interrupted()) {
          server.Stop();
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    server.Run();
    done = true;
    watcher.join();
    err << "ratelab serve: stopped after answering " << server.answered() << " requests\n";
    return kExitOk;
  }

 private:
  // A count from 0 up.
  static Result<size_t> ParseCount(std::string_view text) {
    if (text == "0") return size_t{0};
    const Result<int64_t> n = ParsePositiveInteger(text);
    if (!n.ok()) {
      return absl::InvalidArgumentError("'" + std::string(text) + "' is not a count from 0 up");
    }
    return static_cast<size_t>(*n);
  }

  static Result<size_t> ParseBodyLimit(std::string_view text) {
    const Result<int64_t> n = ParsePositiveInteger(text);
    if (!n.ok() || *n > (int64_t{1} << 30)) {
      return absl::InvalidArgumentError("'" + std::string(text) +
                                        "' is not a byte count from 1 to 1073741824");
    }
    return static_cast<size_t>(*n);
  }

  // The token of `path`: its one line without surrounding white space, not empty. What makes a
  // token easy to take or to guess (a file others may read, a short token) is warned of on
  // `err`.
  static Result<std::string> ReadToken(const std::string& path, std::ostream& err) {
    Result<std::string> read = ReadInputFile(path, kTokenFile);
    if (!read.ok()) return read.status();
    std::string text = *std::move(read);
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) {
      return absl::InvalidArgumentError(path + ": the admin token file is empty");
    }
    text = text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
    if (text.find_first_of("\r\n") != std::string::npos) {
      return absl::InvalidArgumentError(
          path +
          ": the admin token file holds more than one line (a token is sent in one "
          "header line, so no caller could send this one)");
    }
    for (const char c : text) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return absl::InvalidArgumentError(path +
                                          ": the admin token holds a control character, which "
                                          "no header can carry");
      }
    }
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRGRP | S_IROTH)) != 0) {
      err << "ratelab serve: warning: " << path
          << " may be read by other users (chmod 600 it): whoever reads it may change the "
             "rules\n";
    }
    if (text.size() < kShortestToken) {
      err << "ratelab serve: warning: the admin token is " << text.size()
          << (text.size() == 1 ? " character" : " characters") << " long: one of " << kShortestToken
          << " or more random characters cannot be guessed\n";
    }
    return text;
  }
  static constexpr size_t kShortestToken = 16;

  ServeConfig config_;
  std::string rules_;
  std::string token_file_;
};

}  // namespace

std::unique_ptr<Command> ServeCommand() { return std::make_unique<Serve>(); }

}  // namespace ratelab
