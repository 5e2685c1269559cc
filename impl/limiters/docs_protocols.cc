#include "impl/limiters/docs_protocols.h"

#include <algorithm>

#include "impl/limiters/docs_steps.h"

namespace ratelab {

namespace {

// Runs `create_indexes` once per process: the seeds ensure their indexes at startup.
Task<Status> EnsureIndexes(Context& ctx, Docs& docs, Document create_indexes, bool& ensured,
                           std::string_view protocol) {
  if (ensured) co_return absl::OkStatus();
  Result<Document> r = co_await DocsCommand(ctx, docs, std::move(create_indexes));
  if (!r.ok()) co_return r.status();
  if (DocsErrorCode(*r) != 0) co_return DocsFailed(protocol, *r);
  ensured = true;
  co_return absl::OkStatus();
}

Document IndexSpec(Document key, std::string name, bool unique) {
  Document spec = {{"key", std::move(key)}, {"name", std::move(name)}};
  if (unique) spec["unique"] = true;
  return spec;
}

Document CreateIndexes(const std::string& collection, Document specs) {
  return Document{{"createIndexes", collection}, {"indexes", std::move(specs)}};
}

// A fixed window's answer: `count` used of `limit` in a window ending at `end`.
Decision WindowDecision(bool allowed, int64_t count, int64_t limit, Instant end, Instant now) {
  Decision d;
  d.allowed = allowed;
  d.limit = limit;
  d.remaining = std::max<int64_t>(0, limit - count);
  d.reset = end;
  if (!allowed) d.retry_after = end - now;
  return d;
}

// findOneAndUpdate({...filter, count: {$lt: limit}}, {$inc: {count: 1}}, {upsert, new: true}).
Document ConditionalIncrement(const std::string& collection, const Document& filter, int64_t limit,
                              bool upsert) {
  Document query = filter;
  query["count"] = Document{{"$lt", limit}};
  Document update = {{"$inc", {{"count", 1}}}};
  return Document{{"findAndModify", collection},
                  {"query", std::move(query)},
                  {"update", std::move(update)},
                  {"upsert", upsert},
                  {"new", true}};
}

int64_t CountOf(const Document& doc) {
  const auto it = doc.find("count");
  return it != doc.end() && it->is_number() ? it->get<int64_t>() : 0;
}

}  // namespace

Task<Result<Decision>> DocsFixedWindowMinute::Decide(Context& ctx, const Request& request) {
  const std::string_view name =
      unique_index_ ? "docs-fixed-window-unique" : "docs-fixed-window-upsert";
  if (Status s = Validate(request); !s.ok()) co_return s;
  const std::string collection = "rate_limits";
  if (unique_index_) {
    Document key = {{"userId", 1}, {"minute", 1}};
    Document specs = Document::array();
    specs.push_back(IndexSpec(std::move(key), "userId_1_minute_1", true));
    Status s = co_await EnsureIndexes(ctx, docs_, CreateIndexes(collection, std::move(specs)),
                                      indexes_ensured_, name);
    if (!s.ok()) co_return s;
  }
  // Math.floor(Date.now() / 60000), with the policy's window for the minute.
  const int64_t window_ms = policy_.window.count() / kNanosPerMs;
  const int64_t minute = FloorDiv(UnixMillis(request.now), window_ms);
  const Instant end = FromUnixMillis((minute + 1) * window_ms);
  Document filter = {{"userId", LimiterKey(request)}, {"minute", minute}};
  const Result<Document> r = co_await DocsCommand(
      ctx, docs_, ConditionalIncrement(collection, filter, policy_.limit, /*upsert=*/true));
  if (!r.ok()) co_return r.status();
  const int code = DocsErrorCode(*r);
  if (code == kDuplicateKey && unique_index_) {
    co_return WindowDecision(false, policy_.limit, policy_.limit, end, request.now);
  }
  if (code != 0) co_return DocsFailed(name, *r);
  co_return WindowDecision(true, CountOf((*r)["value"]), policy_.limit, end, request.now);
}

Task<Result<Decision>> DocsFixedWindowRetry::Decide(Context& ctx, const Request& request) {
  constexpr std::string_view kName = "docs-fixed-window-retry";
  if (Status s = Validate(request); !s.ok()) co_return s;
  const std::string collection = "usage";
  {
    // The unique index, and the TTL index the seed suggests ("a few hours"; two windows at
    // least, so a window's document outlives the window).
    const int64_t ttl_s = std::max<int64_t>(3 * 3600, 2 * policy_.window.count() / 1'000'000'000);
    Document unique_key = {{"userId", 1}, {"windowStart", 1}};
    Document ttl_key = {{"windowStart", 1}};
    Document ttl = IndexSpec(std::move(ttl_key), "windowStart_1", false);
    ttl["expireAfterSeconds"] = ttl_s;
    Document specs = Document::array();
    specs.push_back(IndexSpec(std::move(unique_key), "userId_1_windowStart_1", true));
    specs.push_back(std::move(ttl));
    Status s = co_await EnsureIndexes(ctx, docs_, CreateIndexes(collection, std::move(specs)),
                                      indexes_ensured_, kName);
    if (!s.ok()) co_return s;
  }
  // The window start: now truncated to the window (a Date).
  const int64_t window_ms = policy_.window.count() / kNanosPerMs;
  const int64_t start_ms = FloorDiv(UnixMillis(request.now), window_ms) * window_ms;
  const Instant end = FromUnixMillis(start_ms + window_ms);
  Document filter = {{"userId", LimiterKey(request)}, {"windowStart", DocsDate(start_ms)}};

  // 1. findOneAndUpdate({userId, windowStart, count: {$lt: limit}}, {$inc: {count: 1}})
  Result<Document> r = co_await DocsCommand(
      ctx, docs_, ConditionalIncrement(collection, filter, policy_.limit, /*upsert=*/false));
  if (!r.ok()) co_return r.status();
  if (DocsErrorCode(*r) != 0) co_return DocsFailed(kName, *r);
  if (!(*r)["value"].is_null()) {
    co_return WindowDecision(true, CountOf((*r)["value"]), policy_.limit, end, request.now);
  }
  // 2. No match: if the document exists and is full, 429.
  Document find = {{"find", collection}, {"filter", filter}, {"limit", 1}};
  r = co_await DocsCommand(ctx, docs_, std::move(find));
  if (!r.ok()) co_return r.status();
  if (DocsErrorCode(*r) != 0) co_return DocsFailed(kName, *r);
  const Document& batch = (*r)["cursor"]["firstBatch"];
  if (!batch.empty() && CountOf(batch[0]) >= policy_.limit) {
    co_return WindowDecision(false, policy_.limit, policy_.limit, end, request.now);
  }
  // 3. Else insertOne({userId, windowStart, count: 1}).
  Document doc = filter;
  doc["count"] = 1;
  Document documents = Document::array();
  documents.push_back(std::move(doc));
  Document insert = {{"insert", collection}, {"documents", std::move(documents)}};
  r = co_await DocsCommand(ctx, docs_, std::move(insert));
  if (!r.ok()) co_return r.status();
  const int code = DocsErrorCode(*r);
  if (code == 0) co_return WindowDecision(true, 1, policy_.limit, end, request.now);
  if (code != kDuplicateKey) co_return DocsFailed(kName, *r);
  // 4. Duplicate key: another request inserted first; retry the increment once, else 429.
  r = co_await DocsCommand(
      ctx, docs_, ConditionalIncrement(collection, filter, policy_.limit, /*upsert=*/false));
  if (!r.ok()) co_return r.status();
  if (DocsErrorCode(*r) != 0) co_return DocsFailed(kName, *r);
  if ((*r)["value"].is_null()) {
    co_return WindowDecision(false, policy_.limit, policy_.limit, end, request.now);
  }
  co_return WindowDecision(true, CountOf((*r)["value"]), policy_.limit, end, request.now);
}

Task<Result<Decision>> DocsCheckThenConsume::Decide(Context& ctx, const Request& request) {
  constexpr std::string_view kName = "docs-check-then-consume";
  if (Status s = Validate(request); !s.ok()) co_return s;
  const std::string collection = "rate_limits";
  {
    // createIndex({timestamp: 1}, {expireAfterSeconds: 7776000}): 90 days.
    Document key = {{"timestamp", 1}};
    Document ttl = IndexSpec(std::move(key), "timestamp_1", false);
    ttl["expireAfterSeconds"] = 7'776'000;
    Document specs = Document::array();
    specs.push_back(std::move(ttl));
    Status s = co_await EnsureIndexes(ctx, docs_, CreateIndexes(collection, std::move(specs)),
                                      indexes_ensured_, kName);
    if (!s.ok()) co_return s;
  }
  // { key, ...(id ? { id } : {}) }: the action is the endpoint, the id who asks.
  Document find_query = {
      {"key", request.endpoint},
      {"id", EscapeKeyPart(request.scope_type) + ":" + EscapeKeyPart(request.scope_value)}};
  const int64_t window_ms = policy_.window.count() / kNanosPerMs;

  // checkLimit: findOne(findQuery, {projection: {timestamp: 1, tokens: 1, _id: 0}}).
  Document projection = {{"timestamp", 1}, {"tokens", 1}, {"_id", 0}};
  Document find = {
      {"find", collection}, {"filter", find_query}, {"projection", projection}, {"limit", 1}};
  Result<Document> r = co_await DocsCommand(ctx, docs_, std::move(find));
  if (!r.ok()) co_return r.status();
  if (DocsErrorCode(*r) != 0) co_return DocsFailed(kName, *r);
  const int64_t now_ms = UnixMillis(request.now);
  const Document& batch = (*r)["cursor"]["firstBatch"];
  int64_t timestamp = now_ms, tokens = policy_.limit;
  if (!batch.empty() && batch[0].value("timestamp", Document()).is_number() &&
      !(batch[0]["timestamp"].get<int64_t>() < now_ms - window_ms)) {
    timestamp = batch[0]["timestamp"].get<int64_t>();
    tokens = batch[0].value("tokens", int64_t{0});
  }
  // The window lasts through timestamp + window; the next one can open 1 ms later.
  const Instant next = FromUnixMillis(timestamp + window_ms + 1);
  Decision d;
  d.limit = policy_.limit;
  d.reset = next;
  if (tokens < 1) {  // throw new Error('Too Many Requests')
    d.retry_after = next - request.now;
    co_return d;
  }
  // consumeLimit: limit.tokens -= 1; updateOne(findQuery, {$set: limit}, {upsert: true}).
  tokens -= 1;
  Document set = {{"$set", {{"timestamp", timestamp}, {"tokens", tokens}}}};
  Document update_one = {{"q", find_query}, {"u", std::move(set)}, {"upsert", true}};
  Document updates = Document::array();
  updates.push_back(std::move(update_one));
  Document update = {{"update", collection}, {"updates", std::move(updates)}};
  r = co_await DocsCommand(ctx, docs_, std::move(update));
  if (!r.ok()) co_return r.status();
  if (DocsErrorCode(*r) != 0) co_return DocsFailed(kName, *r);
  d.allowed = true;
  d.remaining = tokens;
  co_return d;
}

}  // namespace ratelab
