// Stores that can be cut off or stall. One StoreLink stands for the network path to the store
// server (or the server itself while it restarts); while it is down, every command through
// FaultyKv, FaultyDocs or FaultySql fails with Unavailable and reaches nothing. While the store is
// stalled (a server that stops answering: SIGSTOP, a long fsync, a machine paused), every
// command is taken in and answered DeadlineExceeded, as a client that gives up at its timeout
// is, and runs, in the order sent, when the store resumes: a request answered as failed still
// counts (docs/design.md). Otherwise a command goes to the real store. Overlapping faults nest:
// the link is back when the last one ends. Single-threaded.
#ifndef RATELAB_SIM_FAULTY_STORES_H_
#define RATELAB_SIM_FAULTY_STORES_H_

#include <functional>
#include <string>
#include <vector>

#include "impl/store/docs.h"
#include "impl/store/kv.h"
#include "impl/store/sql.h"

namespace ratelab {

class StoreLink {
 public:
  void Down() { ++down_; }
  void Up() { --down_; }
  bool down() const { return down_ > 0; }
  static Status Unreachable() { return absl::UnavailableError("store unreachable"); }

  void Stall() { ++stalled_; }
  // Once the last stall ends, runs what the store took in meanwhile, in order.
  void Resume() {
    if (--stalled_ > 0) return;
    std::vector<std::function<void()>> taken = std::move(taken_);
    taken_.clear();
    for (std::function<void()>& run : taken) run();
  }
  bool stalled() const { return stalled_ > 0; }
  // Keeps a command the stalled store took in, for Resume.
  void TakeIn(std::function<void()> run) { taken_.push_back(std::move(run)); }
  static Status NoAnswerInTime() {
    return absl::DeadlineExceededError("the store did not answer in time (stalled)");
  }

 private:
  int down_ = 0;
  int stalled_ = 0;
  std::vector<std::function<void()>> taken_;
};

class FaultyKv final : public KvWrapper {
 public:
  FaultyKv(Kv& kv, StoreLink& link) : KvWrapper(kv), link_(link) {}
  Result<KvReply> Execute(std::span<const std::string> argv) override {
    if (link_.down()) return StoreLink::Unreachable();
    if (link_.stalled()) {
      link_.TakeIn([this, argv = std::vector<std::string>(argv.begin(), argv.end())] {
        (void)KvWrapper::Execute(argv);
      });
      return StoreLink::NoAnswerInTime();
    }
    return KvWrapper::Execute(argv);
  }

 private:
  StoreLink& link_;
};

class FaultyDocs final : public DocsWrapper {
 public:
  FaultyDocs(Docs& docs, StoreLink& link) : DocsWrapper(docs), link_(link) {}
  Result<Document> Execute(const Document& command) override {
    if (link_.down()) return StoreLink::Unreachable();
    if (link_.stalled()) {
      link_.TakeIn([this, command] { (void)DocsWrapper::Execute(command); });
      return StoreLink::NoAnswerInTime();
    }
    return DocsWrapper::Execute(command);
  }

 private:
  StoreLink& link_;
};

class FaultySql final : public SqlWrapper {
 public:
  FaultySql(Sql& sql, StoreLink& link) : SqlWrapper(sql), link_(link) {}
  Result<SqlReply> Execute(const SqlStatement& statement,
                           std::span<const std::string> params) override {
    if (link_.down()) return StoreLink::Unreachable();
    if (link_.stalled()) {
      link_.TakeIn(
          [this, statement, params = std::vector<std::string>(params.begin(), params.end())] {
            (void)SqlWrapper::Execute(statement, params);
          });
      return StoreLink::NoAnswerInTime();
    }
    return SqlWrapper::Execute(statement, params);
  }

 private:
  StoreLink& link_;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_FAULTY_STORES_H_
