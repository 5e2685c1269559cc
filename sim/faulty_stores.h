// Stores that can be cut off. One StoreLink stands for the network path to the store server (or
// the server itself while it restarts); while it is down, every command through FaultyKv or
// FaultyDocs fails with Unavailable and reaches nothing; otherwise it goes to the real store.
// Overlapping faults nest: the link is back when the last one ends. Single-threaded.
#ifndef RATELAB_SIM_FAULTY_STORES_H_
#define RATELAB_SIM_FAULTY_STORES_H_

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

 private:
  int down_ = 0;
};

class FaultyKv final : public KvWrapper {
 public:
  FaultyKv(Kv& kv, const StoreLink& link) : KvWrapper(kv), link_(link) {}
  Result<KvReply> Execute(std::span<const std::string> argv) override {
    if (link_.down()) return StoreLink::Unreachable();
    return KvWrapper::Execute(argv);
  }

 private:
  const StoreLink& link_;
};

class FaultyDocs final : public DocsWrapper {
 public:
  FaultyDocs(Docs& docs, const StoreLink& link) : DocsWrapper(docs), link_(link) {}
  Result<Document> Execute(const Document& command) override {
    if (link_.down()) return StoreLink::Unreachable();
    return DocsWrapper::Execute(command);
  }

 private:
  const StoreLink& link_;
};

class FaultySql final : public SqlWrapper {
 public:
  FaultySql(Sql& sql, const StoreLink& link) : SqlWrapper(sql), link_(link) {}
  Result<SqlReply> Execute(const SqlStatement& statement,
                           std::span<const std::string> params) override {
    if (link_.down()) return StoreLink::Unreachable();
    return SqlWrapper::Execute(statement, params);
  }

 private:
  const StoreLink& link_;
};

}  // namespace ratelab

#endif  // RATELAB_SIM_FAULTY_STORES_H_
