// Docs: a store with MongoDB's semantics, spoken to one database command at a time. A command is
// the document MongoDB's own wire protocol carries (the first field names the command and its
// collection), and the reply is what the server would answer:
//
//   {"findAndModify": "c", "query": F, "update": U, "upsert": b, "new": b, "fields": P}
//       -> {"value": doc or null, "lastErrorObject": {"n", "updatedExisting"[, "upserted"]}}
//   {"find": "c", "filter": F, "projection": P, "limit": n}
//       -> {"cursor": {"firstBatch": [docs], "id": 0, "ns": "ratelab.c"}}
//   {"insert": "c", "documents": [docs]}                  -> {"n"[, "writeErrors"]}
//   {"update": "c", "updates": [{"q": F, "u": U, "upsert": b}]}
//       -> {"n", "nModified"[, "upserted": [{"index", "_id"}]][, "writeErrors"]}
//   {"delete": "c", "deletes": [{"q": F, "limit": 0 or 1}]} -> {"n"}
//   {"createIndexes": "c", "indexes": [{"key": {f: 1}, "name", "unique", "expireAfterSeconds"}]}
//
// Every reply has "ok": 1, or "ok": 0 with "code", "codeName" and "errmsg" when the command
// failed (a duplicate key in findAndModify is code 11000; in insert and update it is a write
// error). Dates are Extended JSON, {"$date": unix ms}; ObjectIds {"$oid": "24 hex digits"}.
// Fields keep their insertion order, as BSON's do.
//
// Each Execute is atomic on one document or one batch: it is the one store operation of a
// protocol Step.
#ifndef RATELAB_IMPL_STORE_DOCS_H_
#define RATELAB_IMPL_STORE_DOCS_H_

#include <cstdint>
#include <nlohmann/json.hpp>

#include "impl/core/status.h"

namespace ratelab {

using Document = nlohmann::ordered_json;

// MongoDB's error codes that protocols act on.
inline constexpr int kDuplicateKey = 11000;

class Docs {
 public:
  virtual ~Docs() = default;
  // Runs one command. A failed command is an OK Result holding {"ok": 0, ...}; a non-OK Status
  // means the store could not be reached, and the command may or may not have run.
  [[nodiscard]] virtual Result<Document> Execute(const Document& command) = 0;
};

class DocsWrapper : public Docs {
 public:
  explicit DocsWrapper(Docs& target) : target_(target) {}
  Result<Document> Execute(const Document& command) override { return target_.Execute(command); }

 private:
  Docs& target_;
};

// A BSON date as Extended JSON.
inline Document DocsDate(int64_t unix_ms) { return Document{{"$date", unix_ms}}; }

// The error code of a reply: the command's, else its first write error's; 0 when it succeeded.
inline int DocsErrorCode(const Document& reply) {
  if (reply.value("ok", 0.0) != 1.0) return reply.value("code", -1);
  if (auto it = reply.find("writeErrors"); it != reply.end() && !it->empty()) {
    return (*it)[0].value("code", -1);
  }
  return 0;
}

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_DOCS_H_
