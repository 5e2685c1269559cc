// The seeds' MongoDB limiters on a Docs store, each a coroutine with one Step per database
// command, as the seeds' JavaScript does them (Date.now() is the node's clock in whole
// milliseconds; the seeds' one minute is the policy's window). Every request counts 1, whatever
// its cost, as in the seeds.
//
//   docs-fixed-window-upsert   the MongoDB per-minute design read with an upsert and no unique
//   index:
//                              findOneAndUpdate({userId, minute, count: {$lt: N}}, {$inc: {count:
//                              1}}, {upsert: true}). Once count reaches N the filter misses, the
//                              upsert inserts a second document for the same minute, and every
//                              request is admitted from then on.
//   docs-fixed-window-unique   the MongoDB per-minute design with a unique index on (userId,
//   minute): the upsert that
//                              would create a second document fails with E11000, which becomes
//                              a 429. Correct per window; up to 2N across a window edge, and
//                              app servers whose clocks disagree disagree on `minute`. No TTL:
//                              every document stays forever.
//   docs-fixed-window-retry    the retried increment: conditional increment; if nothing matched,
//   read the
//                              document (429 if full), else insert {count: 1}; on E11000 retry
//                              the increment once, 429 if it still misses. Unique index on
//                              (userId, windowStart) and the TTL index the seed suggests (three
//                              hours, at least two windows) are ensured at startup. Correct
//                              under concurrency; 2N across a window edge.
//   docs-check-then-consume    the check-then-consume helper: checkLimit (findOne), then
//   consumeLimit (updateOne $set
//                              with upsert) as separate commands: two concurrent requests both
//                              read the last token and both spend it. The window starts at the
//                              first request after the last one ended (anchored-window). Its
//                              TTL index is on `timestamp`, which holds a number (Date.now()),
//                              not a date, so MongoDB never expires a document.
//
// Indexes are ensured by a process's first request (the seeds ensure them at startup): a
// restart forgets that they were.
#ifndef RATELAB_IMPL_LIMITERS_DOCS_PROTOCOLS_H_
#define RATELAB_IMPL_LIMITERS_DOCS_PROTOCOLS_H_

#include "impl/limiters/protocol.h"
#include "impl/store/docs.h"

namespace ratelab {

// What the three share: the store, the policy, and whether this process has ensured its indexes
// (a restart forgets that it has).
class DocsProtocol : public Protocol {
 public:
  void Restart() override { indexes_ensured_ = false; }

 protected:
  DocsProtocol(Docs& docs, const Policy& policy) : docs_(docs), policy_(policy) {}

  Docs& docs_;
  Policy policy_;
  bool indexes_ensured_ = false;
};

// The MongoDB per-minute design, either reading.
class DocsFixedWindowMinute final : public DocsProtocol {
 public:
  DocsFixedWindowMinute(Docs& docs, const Policy& policy, bool unique_index)
      : DocsProtocol(docs, policy), unique_index_(unique_index) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;

 private:
  bool unique_index_;
};

class DocsFixedWindowRetry final : public DocsProtocol {
 public:
  DocsFixedWindowRetry(Docs& docs, const Policy& policy) : DocsProtocol(docs, policy) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
};

class DocsCheckThenConsume final : public DocsProtocol {
 public:
  DocsCheckThenConsume(Docs& docs, const Policy& policy) : DocsProtocol(docs, policy) {}
  Task<Result<Decision>> Decide(Context& ctx, const Request& request) override;
};

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_DOCS_PROTOCOLS_H_
