#include "impl/limiters/exec_protocol.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace ratelab {

namespace {

using nlohmann::json;

// `line` cut short for an error message.
std::string Quote(std::string_view line) {
  constexpr size_t kShown = 200;
  std::string out = json(std::string(line.substr(0, kShown)))
                        .dump(-1, ' ', false, json::error_handler_t::replace);
  if (line.size() > kShown) out += "...";
  return out;
}

// The answer `line` as a JSON object, or what is wrong with it.
Result<json> ParseAnswer(std::string_view line) {
  json answer = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded()) return absl::InvalidArgumentError("it is not JSON");
  if (!answer.is_object()) return absl::InvalidArgumentError("it is not a JSON object");
  const auto id = answer.find("id");
  if (id == answer.end() || !id->is_number_integer()) {
    return absl::InvalidArgumentError("it has no \"id\", the id of the message it answers");
  }
  return answer;
}

// What a process said in a message's "error": its text, or the JSON it sent instead.
std::string ErrorText(const json& error) {
  return error.is_string() ? error.get<std::string>() : error.dump();
}

// A non-negative whole number field `name` of `answer`, if there.
Result<std::optional<int64_t>> Count(const json& answer, const char* name) {
  const auto it = answer.find(name);
  if (it == answer.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("its \"", name, "\" is ", it->dump(), ", not a whole number of at least 0"));
  }
  return std::optional<int64_t>(it->get<int64_t>());
}

// The policy as the open message gives it.
json PolicyJson(const Policy& policy) {
  json p = {{"algorithm", AlgorithmName(policy.algorithm)},
            {"limit", policy.limit},
            {"window_ns", policy.window.count()}};
  if (policy.IsBucket()) {
    p["burst"] = policy.limit;
    p["interval_ns"] = policy.window.count();
    p["rate_per_s"] = 1e9 / static_cast<double>(policy.window.count());
  }
  return p;
}

}  // namespace

Result<std::shared_ptr<ExecSession>> ExecSession::Start(std::string command,
                                                        std::chrono::milliseconds timeout,
                                                        std::string directory) {
  Result<std::vector<std::string>> words = SplitCommandWords(command);
  if (!words.ok()) return words.status();
  std::shared_ptr<ExecSession> session(
      new ExecSession(std::move(command), *std::move(words), timeout, std::move(directory)));
  std::unique_lock lock(session->mu_);
  if (Status s = session->Greet(); !s.ok()) {
    // A program that cannot start is bad input; one that started and failed, a failed limiter.
    return session->process_ == nullptr ? s : LimiterFailedError(std::string(s.message()));
  }
  return session;
}

ExecSession::~ExecSession() {
  std::unique_lock lock(mu_);
  if (process_ != nullptr && failed_.ok()) {
    Write("bye", -1, "");
    TakeProcess(lock);
    (void)process_->Flush();
  }
}

Status ExecSession::Broken(std::string what) {
  std::string message = "the limiter process '" + command_ + "' " + std::move(what);
  if (process_ != nullptr) {
    message += "; it " + process_->Fate();
    if (std::string tail = process_->StderrTail(); !tail.empty()) {
      message += "; the last lines of its stderr:" + tail;
    }
  }
  failed_ = absl::FailedPreconditionError(message);
  return failed_;
}

Status ExecSession::Greet() {
  process_.reset();
  decisions_.clear();
  setups_.clear();
  answers_.clear();
  refused_.clear();
  queued_.clear();
  failed_ = absl::OkStatus();
  unanswered_ = 0;
  Result<std::unique_ptr<ExecProcess>> started = ExecProcess::Start(words_, directory_);
  if (!started.ok())
    return Broken("could not be started (" + std::string(started.status().message()) + ")");
  process_ = *std::move(started);
  const int64_t id = Write("hello", -1, absl::StrCat(R"(,"version":)", kExecProtocolVersion));
  HandQueued();
  if (Status s = process_->Flush(); !s.ok()) {
    return Broken("did not read its hello: " + std::string(s.message()));
  }
  Result<std::string> line = process_->ReadLine(timeout_);
  if (!line.ok())
    return Broken("did not answer its hello: " + std::string(line.status().message()));
  --unanswered_;
  Result<json> answer = ParseAnswer(*line);
  if (!answer.ok() || (*answer)["id"] != id) {
    return Broken("answered its hello with " + Quote(*line) + ": " +
                  (answer.ok() ? "another id" : std::string(answer.status().message())) +
                  " (docs/exec-protocol.md)");
  }
  if (const auto e = answer->find("error"); e != answer->end()) {
    return Broken("refused the hello: " + ErrorText(*e));
  }
  const auto version = answer->find("version");
  if (version == answer->end() || *version != kExecProtocolVersion) {
    return Broken(absl::StrCat("answered its hello with ", Quote(*line),
                               ": it must say \"version\":", kExecProtocolVersion,
                               ", the version of the protocol it speaks"));
  }
  hello_ = ExecHello{};
  if (const auto name = answer->find("name"); name != answer->end() && name->is_string()) {
    // Shown in every report: one line, at most 80 characters.
    for (const char c : name->get<std::string>().substr(0, 80)) {
      hello_.name += c >= 0 && c < 0x20 ? ' ' : c;
    }
  }
  Result<std::optional<int64_t>> resolution = Count(*answer, "resolution_ns");
  if (!resolution.ok() || (*resolution && **resolution < 1)) {
    return Broken("answered its hello with " + Quote(*line) +
                  ": its \"resolution_ns\" must be a whole number of nanoseconds, at least 1");
  }
  hello_.resolution = Duration(resolution->value_or(1));
  if (const auto s = answer->find("supports"); s != answer->end()) {
    if (!s->is_array()) {
      return Broken("answered its hello with " + Quote(*line) +
                    ": its \"supports\" must be a list of names");
    }
    for (const json& what : *s) {
      if (what == "remaining") hello_.remaining = true;
      if (what == "retry_after") hello_.retry_after = true;
      if (what == "reset") hello_.reset = true;
      if (what == "wait") hello_.wait = true;
    }
  }
  return absl::OkStatus();
}

int64_t ExecSession::Write(std::string op, int64_t limiter, std::string rest) {
  const int64_t id = next_id_++;
  std::string line = absl::StrCat(R"({"id":)", id, R"(,"op":")", op, "\"");
  if (limiter >= 0) absl::StrAppend(&line, R"(,"limiter":)", limiter);
  absl::StrAppend(&line, rest, "}");
  if (process_ != nullptr) {
    // Queued even when no thread reads: a thread reading could have left lines queued, and the
    // process must get every message in the order they were written (their instants).
    queued_ += line;
    queued_ += '\n';
    ++unanswered_;
  }
  return id;
}

void ExecSession::TakeProcess(std::unique_lock<std::mutex>& lock) {
  read_.wait(lock, [&] { return !reading_; });
  HandQueued();
}

void ExecSession::HandQueued() {
  if (process_ != nullptr && !queued_.empty()) {
    queued_.pop_back();  // its last newline, which ExecProcess::Write adds again
    process_->Write(queued_);
  }
  queued_.clear();
}

namespace {

// `now` as decide and open send it: in nanoseconds, microseconds and milliseconds since the epoch.
std::string NowFields(Instant now) {
  return absl::StrCat(R"(,"now_ns":)", ToUnixNanos(now), R"(,"now_us":)",
                      FloorDiv(ToUnixNanos(now), 1000), R"(,"now_ms":)", UnixMillis(now));
}

}  // namespace

int64_t ExecSession::Open(const Policy& policy, std::optional<Instant> now) {
  std::unique_lock lock(mu_);
  if (!failed_.ok()) {
    TakeProcess(lock);                 // a thread reading the failed process lets go of it
    if (!failed_.ok()) (void)Greet();  // unless another started it again meanwhile
  }
  const int64_t limiter = next_id_;
  if (now) latest_[limiter] = *now;
  setups_[Write("open", limiter,
                R"(,"policy":)" + PolicyJson(policy).dump() + (now ? NowFields(*now) : ""))] =
      limiter;
  return limiter;
}

void ExecSession::Restart(int64_t limiter) {
  std::lock_guard lock(mu_);
  // Decisions a crash cut off are answered, and their answers dropped.
  std::erase_if(decisions_, [&](const auto& p) { return p.second == limiter; });
  setups_[Write("restart", limiter, "")] = limiter;
}

void ExecSession::Close(int64_t limiter) {
  std::lock_guard lock(mu_);
  std::erase_if(decisions_, [&](const auto& p) { return p.second == limiter; });
  std::erase_if(setups_, [&](const auto& p) { return p.second == limiter; });
  refused_.erase(limiter);
  latest_.erase(limiter);
  Write("close", limiter, "");
}

int64_t ExecSession::Send(int64_t limiter, const std::string& key, int64_t cost, Instant now) {
  std::lock_guard lock(mu_);
  Instant& latest = latest_[limiter];
  now = latest = std::max(latest, now);
  const int64_t id =
      Write("decide", limiter,
            absl::StrCat(R"(,"key":)", json(key).dump(), R"(,"cost":)", cost, NowFields(now)));
  decisions_[id] = limiter;
  // Written when an answer is next waited for (ReadLine writes what is queued as it waits), so
  // that the decisions of requests in flight together go in one write.
  return id;
}

Status ExecSession::ReadUntil(std::unique_lock<std::mutex>& lock, int64_t id,
                              const std::string& deciding) {
  for (;;) {
    if (!failed_.ok()) return failed_;
    if (answers_.contains(id)) return absl::OkStatus();
    if (!decisions_.contains(id)) {
      // Another thread's failure started the process again, and the new one never saw it.
      return absl::FailedPreconditionError(absl::StrCat("the limiter process '", command_,
                                                        "' failed and was started again while "
                                                        "deciding ",
                                                        deciding));
    }
    if (reading_) {  // another thread reads: it wakes this one when it took a line
      read_.wait(lock);
      continue;
    }
    TakeProcess(lock);
    reading_ = true;
    ExecProcess& process = *process_;
    lock.unlock();
    // Everything sent before `id` was handed to the process, so its answer comes.
    Result<std::string> line = process.ReadLine(timeout_);
    lock.lock();
    reading_ = false;
    read_.notify_all();
    if (!line.ok()) {
      return Broken(absl::StrCat(line.status().message(), " while deciding ", deciding));
    }
    if (Status s = Take(*std::move(line), deciding); !s.ok()) return s;
  }
}

Status ExecSession::Take(std::string line, const std::string& deciding) {
  if (--unanswered_ < 0) {
    return Broken(absl::StrCat("answered more lines than it was sent messages (the last ",
                               Quote(line), ") while deciding ", deciding,
                               " (docs/exec-protocol.md)"));
  }
  Result<json> answer = ParseAnswer(line);
  if (!answer.ok()) {
    return Broken(absl::StrCat("answered ", Quote(line), " while deciding ", deciding, ": ",
                               answer.status().message(), " (docs/exec-protocol.md)"));
  }
  const int64_t of = (*answer)["id"].get<int64_t>();
  if (decisions_.erase(of) > 0) {
    answers_[of] = {std::move(line), *std::move(answer)};
    return absl::OkStatus();
  }
  const auto setup = setups_.find(of);
  if (setup == setups_.end()) return absl::OkStatus();  // a decision a crash cut off, or a close
  const int64_t limiter = setup->second;
  setups_.erase(setup);
  // Open and restart are answered at the limiter's next decision.
  if (const auto error = answer->find("error"); error != answer->end()) {
    refused_[limiter] = absl::InvalidArgumentError("the limiter process '" + command_ +
                                                   "' refused the policy: " + ErrorText(*error));
  }
  return absl::OkStatus();
}

Result<Decision> ExecSession::Answer(int64_t limiter, int64_t id, const std::string& key,
                                     int64_t cost, Instant now) {
  const std::string which = absl::StrCat("key ", key, " (cost ", cost, ", now_ns ",
                                         now.time_since_epoch().count(), ", message id ", id, ")");
  std::unique_lock lock(mu_);
  if (Status s = ReadUntil(lock, id, which); !s.ok()) return s;
  if (const auto refused = refused_.find(limiter); refused != refused_.end()) {
    return refused->second;
  }
  const auto answered = answers_.extract(id);
  const std::string& line = answered.mapped().line;
  const json& answer = answered.mapped().said;
  const auto bad = [&](std::string why) -> Result<Decision> {
    TakeProcess(lock);  // Broken asks the process what became of it
    return Broken("answered " + Quote(line) + " while deciding " + which + ": " + std::move(why) +
                  " (docs/exec-protocol.md)");
  };
  if (const auto e = answer.find("error"); e != answer.end()) {
    return absl::FailedPreconditionError("the limiter process '" + command_ +
                                         "' answered an error while deciding " + which + ": " +
                                         ErrorText(*e));
  }
  const auto allowed = answer.find("allowed");
  if (allowed == answer.end() || !allowed->is_boolean()) {
    return bad("it must say \"allowed\": true or false");
  }
  Decision d;
  d.allowed = allowed->get<bool>();
  Result<std::optional<int64_t>> remaining = Count(answer, "remaining");
  Result<std::optional<int64_t>> retry_after = Count(answer, "retry_after_ns");
  Result<std::optional<int64_t>> reset_after = Count(answer, "reset_after_ns");
  Result<std::optional<int64_t>> wait = Count(answer, "wait_ns");
  for (const auto* field : {&remaining, &retry_after, &reset_after, &wait}) {
    if (!field->ok()) return bad(std::string(field->status().message()));
  }
  d.remaining = remaining->value_or(0);
  if (!d.allowed) d.retry_after = Duration(retry_after->value_or(0));
  d.reset = now + Duration(reset_after->value_or(0));
  if (d.allowed) d.wait = Duration(wait->value_or(0));
  return d;
}

Task<Result<Decision>> ExecProtocol::Decide(Context& ctx, const Request& request) {
  if (Status s = Validate(request); !s.ok()) co_return s;
  const std::string key = LimiterKey(request);
  Instant at = request.now;
  const int64_t id = co_await ctx.Step("decide", [&] {
    if (clock_ != nullptr) at = clock_->Now();
    return session_->Send(limiter_, key, request.cost, at);
  });
  Result<Decision> d = session_->Answer(limiter_, id, key, request.cost, at);
  if (d.ok()) d->limit = policy_.limit;
  co_return d;
}

}  // namespace ratelab
