// A user's own limiter, in any language, as a protocol: a process (impl/limiters/exec_process.h)
// spoken to in the line-delimited JSON of docs/exec-protocol.md. One process serves a whole
// command: each run opens limiters in it (one per node, each its own state), sends them decisions
// with the virtual instant as "now", restarts them (the state forgotten, as a process restart
// would) and closes them.
//
// A decision is two halves: it is sent when the step is applied (at the instant the simulator
// chose), and its answer is read when the request resumes, so the decisions of requests in flight
// together are in the process's input together. A process that dies, answers garbage, or answers
// nothing in time fails the decision: an error that is not a store's (the run says FAILED), naming
// what happened, the process's last stderr lines, and the request.
#ifndef RATELAB_IMPL_LIMITERS_EXEC_PROTOCOL_H_
#define RATELAB_IMPL_LIMITERS_EXEC_PROTOCOL_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "impl/limiters/exec_process.h"
#include "impl/limiters/protocol.h"

namespace ratelab {

// The version of docs/exec-protocol.md this side speaks.
inline constexpr int kExecProtocolVersion = 1;

// What the process said of itself in its hello.
struct ExecHello {
  std::string name;        // its name, for reports
  Duration resolution{1};  // the finest time it decides at
  bool remaining = false;  // its answers say what is left
  bool retry_after = false;
  bool reset = false;
  bool wait = false;  // it may admit with a wait (a smoothing limiter)
};

// Safe to share between threads (runs on several threads, run --jobs, or the threads of stress
// share one process). One thread at a time reads the process's answers, without the lock, so
// that the others go on sending while it waits: what they send is queued, and handed to the
// process in order by the next thread to read; a thread whose answer the reader took is woken.
class ExecSession {
 public:
  // Starts `command` (its words: SplitCommandWords) and greets it: InvalidArgument for a command
  // that cannot be split, FailedPrecondition for one that cannot start or answers the hello out
  // of protocol. `timeout`: the longest it may take to answer anything.
  // It runs in `directory` (empty: ratelab's own).
  static Result<std::shared_ptr<ExecSession>> Start(std::string command,
                                                    std::chrono::milliseconds timeout,
                                                    std::string directory = "");
  ~ExecSession();

  const std::string& command() const { return command_; }
  const ExecHello& hello() const { return hello_; }

  // A new limiter with `policy` in the process (started again if it had failed), made at `now`
  // when given (sent as decide sends it, and no decision of it is sent earlier): its number.
  int64_t Open(const Policy& policy, std::optional<Instant> now = std::nullopt);
  // Tells limiter `limiter` to forget its state.
  void Restart(int64_t limiter);
  void Close(int64_t limiter);
  // Sends limiter `limiter` a decision at `now`, or at the latest instant it was sent before if
  // that is later (threads that read the clock and then send may reach here out of order, and
  // a limiter is promised that its time never goes back): its message id, for Answer.
  int64_t Send(int64_t limiter, const std::string& key, int64_t cost, Instant now);
  // The answer to decision `id` of limiter `limiter` (sent for `key` and `cost` at `now`, which
  // an error names).
  Result<Decision> Answer(int64_t limiter, int64_t id, const std::string& key, int64_t cost,
                          Instant now);

 private:
  ExecSession(std::string command, std::vector<std::string> words,
              std::chrono::milliseconds timeout, std::string directory)
      : command_(std::move(command)),
        words_(std::move(words)),
        timeout_(timeout),
        directory_(std::move(directory)) {}
  // Starts the process and reads its hello.
  Status Greet();  // mu_ held
  // Queues `message` (with "id" added) for the process: its id.
  int64_t Write(std::string op, int64_t limiter, std::string rest);  // mu_ held
  // Waits until no thread reads the process, then hands it what is queued: the process is this
  // thread's until the lock is let go.
  void TakeProcess(std::unique_lock<std::mutex>& lock);
  void HandQueued();  // mu_ held, and no other thread reading
  // Reads answers until `id`'s (each other one kept or, for open, restart and close, checked),
  // or waits for the thread that reads them; `deciding` names the decision for an error.
  Status ReadUntil(std::unique_lock<std::mutex>& lock, int64_t id, const std::string& deciding);
  // Takes `line`, answered by the process, as what it says (mu_ held).
  Status Take(std::string line, const std::string& deciding);
  // FailedPrecondition: the process failed, with what became of it and its stderr.
  Status Broken(std::string what);  // mu_ held, and no other thread reading

  std::string command_;
  std::vector<std::string> words_;  // command_'s
  std::chrono::milliseconds timeout_;
  std::string directory_;
  std::mutex mu_;                 // guards what follows, and the process but while reading_
  std::condition_variable read_;  // a line was taken, or a reader let go of the process
  // A thread reads the process without the lock; no other touches it meanwhile.
  bool reading_ = false;
  std::unique_ptr<ExecProcess> process_;
  std::string queued_;  // lines written, each with its newline, for the process's next read
  ExecHello hello_;     // written before the session is shared
  Status failed_;       // once the process failed, every decision fails until it is started again
  int64_t next_id_ = 1;
  // Messages written to this process that no line of its has answered yet: a process answering
  // more lines than it was sent is out of protocol (and could keep a wait going for ever).
  int64_t unanswered_ = 0;
  std::map<int64_t, int64_t> decisions_;  // decision id -> its limiter, until answered
  std::map<int64_t, int64_t> setups_;     // open or restart id -> its limiter, until answered
  // A decision's answer, read early: its line (for an error to quote) and what it says.
  struct Answered {
    std::string line;
    nlohmann::json said;
  };
  std::map<int64_t, Answered> answers_;  // by decision id
  std::map<int64_t, Status> refused_;    // limiter -> what it answered to open or restart
  std::map<int64_t, Instant> latest_;    // limiter -> the latest instant it was sent
};

class ExecProtocol final : public Protocol {
 public:
  // Deciding each request at `clock`'s instant when its step runs (null: at the request's now).
  ExecProtocol(std::shared_ptr<ExecSession> session, const Policy& policy, const Clock* clock)
      : session_(std::move(session)),
        policy_(policy),
        clock_(clock),
        limiter_(session_->Open(
            policy, clock != nullptr ? std::optional<Instant>(clock->Now()) : std::nullopt)) {}
  ~ExecProtocol() override { session_->Close(limiter_); }

  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
  void Restart() override { session_->Restart(limiter_); }

 private:
  std::shared_ptr<ExecSession> session_;
  Policy policy_;
  const Clock* clock_;
  int64_t limiter_;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_EXEC_PROTOCOL_H_
