// MemoryDocs against MongoDB's documented behaviour: findAndModify, upserts built from the
// filter's equality fields, unique indexes and E11000, $inc, comparison brackets, projections,
// TTL indexes (dates only, on the 60-second monitor), durability on restart, and errors.
#include "impl/store/memory_docs.h"

#include <gtest/gtest.h>

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Instant kNoon = FromUnixNanos(0) + std::chrono::hours(12);

class MemoryDocsTest : public testing::Test {
 protected:
  Document Run(const Document& command) {
    Result<Document> r = docs_.Execute(command);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : Document();
  }
  Document Parse(const std::string& json) { return Document::parse(json); }
  // The documents of `collection` matching `filter`, in natural order.
  Document FindAll(const std::string& filter = "{}") {
    return Run(Parse(R"({"find": "c", "filter": )" + filter + "}"))["cursor"]["firstBatch"];
  }
  // findAndModify on "c" returning the new document.
  Document Fam(const std::string& query, const std::string& update, bool upsert) {
    return Run(Parse(R"({"findAndModify": "c", "query": )" + query + R"(, "update": )" + update +
                     R"(, "upsert": )" + (upsert ? "true" : "false") + R"(, "new": true})"));
  }
  void UniqueIndex(const std::string& key) {
    EXPECT_EQ(Run(Parse(R"({"createIndexes": "c", "indexes": [{"key": )" + key +
                        R"(, "name": "k", "unique": true}]})"))["ok"],
              1);
  }

  ManualClock clock_{kNoon};
  MemoryDocs docs_{clock_};
};

TEST_F(MemoryDocsTest, ConditionalIncrementStopsAtTheLimit) {
  ASSERT_EQ(Run(Parse(R"({"insert": "c", "documents": [{"user": "u", "count": 0}]})"))["n"], 1);
  for (int i = 1; i <= 2; ++i) {
    const Document r =
        Fam(R"({"user": "u", "count": {"$lt": 2}})", R"({"$inc": {"count": 1}})", false);
    EXPECT_EQ(r["value"]["count"], i);
    EXPECT_EQ(r["lastErrorObject"]["updatedExisting"], true);
  }
  const Document r =
      Fam(R"({"user": "u", "count": {"$lt": 2}})", R"({"$inc": {"count": 1}})", false);
  EXPECT_TRUE(r["value"].is_null());
  EXPECT_EQ(r["lastErrorObject"]["n"], 0);
}

TEST_F(MemoryDocsTest, UpsertBuildsTheDocumentFromTheFiltersEqualityFields) {
  const Document r =
      Fam(R"({"user": "u", "minute": 7, "count": {"$lt": 1}})", R"({"$inc": {"count": 1}})", true);
  EXPECT_EQ(r["lastErrorObject"]["updatedExisting"], false);
  ASSERT_TRUE(r["lastErrorObject"].contains("upserted"));
  Document doc = r["value"];
  EXPECT_EQ(doc.begin().key(), "_id") << "_id comes first";
  doc.erase("_id");
  EXPECT_EQ(doc, Parse(R"({"user": "u", "minute": 7, "count": 1})"));
  // The count has reached 1: the filter misses it, so the upsert inserts a second document for
  // the same (user, minute), as MongoDB does with no unique index.
  Fam(R"({"user": "u", "minute": 7, "count": {"$lt": 1}})", R"({"$inc": {"count": 1}})", true);
  EXPECT_EQ(FindAll(R"({"user": "u", "minute": 7})").size(), 2u);
}

TEST_F(MemoryDocsTest, AUniqueIndexTurnsTheSecondUpsertIntoE11000) {
  UniqueIndex(R"({"user": 1, "minute": 1})");
  Fam(R"({"user": "u", "minute": 7, "count": {"$lt": 1}})", R"({"$inc": {"count": 1}})", true);
  const Document r =
      Fam(R"({"user": "u", "minute": 7, "count": {"$lt": 1}})", R"({"$inc": {"count": 1}})", true);
  EXPECT_EQ(r["ok"], 0);
  EXPECT_EQ(r["code"], kDuplicateKey);
  EXPECT_EQ(r["codeName"], "DuplicateKey");
  EXPECT_EQ(r["errmsg"],
            "E11000 duplicate key error collection: ratelab.c index: k dup key: { user: \"u\", "
            "minute: 7 }");
  EXPECT_EQ(DocsErrorCode(r), kDuplicateKey);
  EXPECT_EQ(FindAll().size(), 1u);
}

TEST_F(MemoryDocsTest, InsertReportsDuplicatesAsWriteErrors) {
  UniqueIndex(R"({"user": 1})");
  const Document r =
      Run(Parse(R"({"insert": "c", "documents": [{"user": "a"}, {"user": "a"}, {"user": "b"}]})"));
  EXPECT_EQ(r["ok"], 1);
  EXPECT_EQ(r["n"], 1) << "ordered: stops at the first error";
  ASSERT_EQ(r["writeErrors"].size(), 1u);
  EXPECT_EQ(r["writeErrors"][0]["index"], 1);
  EXPECT_EQ(DocsErrorCode(r), kDuplicateKey);
  // _id is always unique.
  const Document id = Run(Parse(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 1}]})"));
  EXPECT_EQ(DocsErrorCode(id), kDuplicateKey);
  // Documents missing a uniquely indexed field index it as null: two of them collide.
  const Document nulls = Run(Parse(R"({"insert": "c", "documents": [{"x": 1}, {"y": 2}]})"));
  EXPECT_EQ(DocsErrorCode(nulls), kDuplicateKey);
}

TEST_F(MemoryDocsTest, IncKeepsIntegersAndRefusesNonNumbers) {
  Run(Parse(R"({"insert": "c", "documents": [{"_id": 1, "n": 1, "s": "x"}]})"));
  Document r = Fam(R"({"_id": 1})", R"({"$inc": {"n": 2, "new": 5}})", false);
  EXPECT_TRUE(r["value"]["n"].is_number_integer());
  EXPECT_EQ(r["value"]["n"], 3);
  EXPECT_EQ(r["value"]["new"], 5) << "$inc on a missing field sets it";
  r = Fam(R"({"_id": 1})", R"({"$inc": {"n": 0.5}})", false);
  EXPECT_DOUBLE_EQ(r["value"]["n"].get<double>(), 3.5);
  r = Fam(R"({"_id": 1})", R"({"$inc": {"s": 1}})", false);
  EXPECT_EQ(r["code"], 14);
  EXPECT_EQ(r["errmsg"],
            "Cannot apply $inc to a value of non-numeric type. {_id: 1} has the field 's' of "
            "non-numeric type string");
  EXPECT_EQ(Fam(R"({"_id": 1})", R"({"$inc": {"n": "1"}})", false)["code"], 14);
  EXPECT_EQ(Fam(R"({"_id": 1})", R"({"$set": {"_id": 2}})", false)["code"], 66);
}

TEST_F(MemoryDocsTest, ComparisonsMatchOnlyWithinATypeBracket) {
  Run(Parse(R"({"insert": "c", "documents": [{"_id": 1, "v": 3}, {"_id": 2, "v": 3.5},
               {"_id": 3, "v": "2"}, {"_id": 4}, {"_id": 5, "v": null},
               {"_id": 6, "v": {"$date": 1000}}]})"));
  const auto ids = [&](const std::string& filter) {
    std::vector<int> out;
    for (const Document& d : FindAll(filter)) out.push_back(d["_id"].get<int>());
    return out;
  };
  EXPECT_EQ(ids(R"({"v": {"$lt": 4}})"), (std::vector<int>{1, 2}));
  EXPECT_EQ(ids(R"({"v": 3.0})"), (std::vector<int>{1}));
  EXPECT_EQ(ids(R"({"v": null})"), (std::vector<int>{4, 5})) << "null matches missing";
  EXPECT_EQ(ids(R"({"v": {"$ne": 3}})"), (std::vector<int>{2, 3, 4, 5, 6}));
  EXPECT_EQ(ids(R"({"v": {"$gte": "1"}})"), (std::vector<int>{3}));
  EXPECT_EQ(ids(R"({"v": {"$gt": {"$date": 999}}})"), (std::vector<int>{6}));
  EXPECT_EQ(ids(R"({"v": {"$in": [3, "2"]}})"), (std::vector<int>{1, 3}));
  EXPECT_EQ(ids(R"({"v": {"$exists": false}})"), (std::vector<int>{4}));
  EXPECT_EQ(ids(R"({"v": {"$gt": 1, "$lt": 3.5}})"), (std::vector<int>{1}));
}

TEST_F(MemoryDocsTest, ProjectionsIncludeOrExclude) {
  Run(Parse(R"({"insert": "c", "documents": [{"_id": 1, "key": "k", "timestamp": 5,
               "tokens": 4}]})"));
  const Document r = Run(Parse(R"({"find": "c", "filter": {"key": "k"},
      "projection": {"timestamp": 1, "tokens": 1, "_id": 0}, "limit": 1})"));
  EXPECT_EQ(r["cursor"]["firstBatch"][0], Parse(R"({"timestamp": 5, "tokens": 4})"));
  const Document ex = Run(Parse(R"({"find": "c", "projection": {"key": 0}})"));
  EXPECT_EQ(ex["cursor"]["firstBatch"][0], Parse(R"({"_id": 1, "timestamp": 5, "tokens": 4})"));
}

TEST_F(MemoryDocsTest, UpdateUpsertsAndSetOnInsertAppliesOnlyToTheInsert) {
  const std::string update = R"({"update": "c", "updates": [{"q": {"key": "k"},
      "u": {"$set": {"tokens": 4}, "$setOnInsert": {"created": 1}}, "upsert": true}]})";
  Document r = Run(Parse(update));
  EXPECT_EQ(r["n"], 1);
  EXPECT_EQ(r["nModified"], 0);
  ASSERT_EQ(r["upserted"].size(), 1u);
  EXPECT_EQ(r["upserted"][0]["index"], 0);
  r = Run(Parse(update));
  EXPECT_EQ(r["n"], 1);
  EXPECT_EQ(r["nModified"], 0) << "setting the same value modifies nothing";
  EXPECT_FALSE(r.contains("upserted"));
  Document doc = FindAll()[0];
  doc.erase("_id");
  EXPECT_EQ(doc, Parse(R"({"key": "k", "tokens": 4, "created": 1})"));
}

TEST_F(MemoryDocsTest, TtlIndexesExpireDatesOnTheMinuteMonitorAndNeverNumbers) {
  const int64_t now_ms = ToUnixNanos(kNoon) / 1'000'000;
  Run(Parse(R"({"createIndexes": "c", "indexes": [{"key": {"at": 1}, "name": "ttl",
      "expireAfterSeconds": 10}]})"));
  Document insert = Parse(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})");
  insert["documents"][0]["at"] = DocsDate(now_ms);
  insert["documents"][1]["at"] = now_ms;  // a number, as Date.now() gives: never expires
  Run(insert);
  clock_.Advance(seconds(30));
  EXPECT_EQ(FindAll().size(), 2u) << "expired, but the monitor has not run since";
  clock_.Advance(seconds(30));
  const Document left = FindAll();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0]["_id"], 2);
  EXPECT_TRUE(FindAll(R"({"_id": 1})").empty()) << "looked up by value, it is gone too";
  EXPECT_EQ(FindAll(R"({"_id": 2.0})").size(), 1u) << "2.0 equals 2";
  const std::vector<NeverFreed> immortal = docs_.DocumentsWithoutExpiry();
  ASSERT_EQ(immortal.size(), 1u);
  EXPECT_EQ(immortal[0].name, "c { at: " + std::to_string(now_ms) + " }");
}

TEST_F(MemoryDocsTest, IndexCreationIsIdempotentAndRefusesConflictsAndDuplicates) {
  UniqueIndex(R"({"user": 1})");
  UniqueIndex(R"({"user": 1})");
  const Document conflict =
      Run(Parse(R"({"createIndexes": "c", "indexes": [{"key": {"user": 1}, "name": "other"}]})"));
  EXPECT_EQ(conflict["code"], 85);
  Run(Parse(R"({"insert": "d", "documents": [{"v": 1}, {"v": 1}]})"));
  const Document dup = Run(Parse(
      R"({"createIndexes": "d", "indexes": [{"key": {"v": 1}, "name": "v", "unique": true}]})"));
  EXPECT_EQ(dup["code"], kDuplicateKey);
}

TEST_F(MemoryDocsTest, RestartKeepsWhatTheDurabilityKeeps) {
  const auto count_after_restart = [&](Durability d) {
    ManualClock clock(kNoon);
    MemoryDocs docs(clock, d);
    (void)docs.Execute(Parse(R"({"insert": "c", "documents": [{"_id": 1}]})"));
    clock.Advance(seconds(1));
    (void)docs.Execute(Parse(R"({"insert": "c", "documents": [{"_id": 2}]})"));
    clock.Advance(milliseconds(500));
    docs.Restart();
    return (*docs.Execute(Parse(R"({"find": "c"})")))["cursor"]["firstBatch"].size();
  };
  EXPECT_EQ(count_after_restart(Durability::kNone), 0u);
  EXPECT_EQ(count_after_restart(Durability::kEverySec), 1u) << "the unfinished second is lost";
  EXPECT_EQ(count_after_restart(Durability::kAlways), 2u);
}

TEST_F(MemoryDocsTest, EverySecKeepsEachCollectionAsItWasAtTheEndOfTheLastSecond) {
  ManualClock clock(kNoon);
  MemoryDocs docs(clock, Durability::kEverySec);
  const auto ids = [&](const char* collection) {
    std::vector<int> out;
    const Document found = (*docs.Execute(Document{{"find", collection}}))["cursor"]["firstBatch"];
    for (const Document& d : found) out.push_back(d["_id"].get<int>());
    return out;
  };
  (void)docs.Execute(Parse(R"({"insert": "a", "documents": [{"_id": 1}]})"));
  clock.Advance(seconds(1));
  (void)docs.Execute(Parse(R"({"insert": "b", "documents": [{"_id": 1}]})"));
  clock.Advance(seconds(1));
  (void)docs.Execute(Parse(R"({"insert": "a", "documents": [{"_id": 2}]})"));
  (void)docs.Execute(Parse(R"({"delete": "b", "deletes": [{"q": {}, "limit": 0}]})"));
  docs.Restart();  // in the second of the last two writes: they are lost
  EXPECT_EQ(ids("a"), std::vector<int>{1});
  EXPECT_EQ(ids("b"), std::vector<int>{1});
  clock.Advance(seconds(1));
  docs.Restart();  // nothing written since: nothing more is lost
  EXPECT_EQ(ids("a"), std::vector<int>{1});
  EXPECT_EQ(ids("b"), std::vector<int>{1});
}

TEST_F(MemoryDocsTest, BadCommandsAreErrorsNotCrashes) {
  EXPECT_EQ(Run(Parse(R"({"drink": "c"})"))["code"], 59);
  EXPECT_EQ(Run(Parse(R"({"find": 3})"))["code"], 73);
  EXPECT_EQ(Run(Parse(R"([1, 2])"))["code"], 9);
  EXPECT_EQ(Run(Parse(R"({"find": "c", "filter": {"v": {"$near": 1}}})"))["errmsg"],
            "unknown operator: $near");
  EXPECT_EQ(Run(Parse(R"({"find": "c", "filter": {"$where": "1"}})"))["code"], 2);
  EXPECT_EQ(Fam(R"({"a": 1})", R"({"$push": {"a": 1}})", true)["code"], 9);
  EXPECT_EQ(Fam(R"({"a": 1})", R"({"$set": {"a": 1}, "b": 2})", true)["code"], 9);
  EXPECT_EQ(Run(Parse(R"({"insert": "c", "documents": []})"))["code"], 9);
  EXPECT_EQ(Run(Parse(R"({"find": "c", "filter": {"a.b": 1}})"))["code"], 2);
}

// Found by fuzz_memory_docs: a batch item that is not an object, or a field of the wrong type,
// threw from inside the store. Each is a TypeMismatch naming the field, as MongoDB's is.
TEST_F(MemoryDocsTest, FieldsOfTheWrongTypeAreTypeMismatchesNamingThePath) {
  const Document item = Run(Parse(R"({"update": "c", "updates": ["expireAfterSeconds"]})"));
  EXPECT_EQ(item["code"], 14);
  EXPECT_EQ(item["errmsg"], "BSON field 'update.updates' holds a 'string', expected type 'object'");
  const Document upsert =
      Run(Parse(R"({"update": "c", "updates": [{"q": {}, "u": {}, "upsert": "yes"}]})"));
  EXPECT_EQ(upsert["errmsg"],
            "BSON field 'update.updates.upsert' is the wrong type 'string', expected type 'bool'");
  EXPECT_EQ(Run(Parse(R"({"find": "c", "limit": 1e300})"))["code"], 14);
  EXPECT_EQ(Run(Parse(R"({"find": "c", "limit": -9223372036854775808})"))["ok"], 1);
  EXPECT_EQ(Run(Parse(R"({"findAndModify": "c", "update": [1], "new": 1})"))["code"], 14);
  EXPECT_EQ(
      Run(Parse(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": 7}]})"))["code"],
      14);
  EXPECT_EQ(Run(Parse(R"({"find": "c", "limit": 2.0})"))["ok"], 1);
}

// Found by fuzz_memory_docs: a date of 10^24 milliseconds was cast to an integer (undefined
// behaviour). A date is within 2^53 ms, and a TTL within MongoDB's 2^31 - 1 seconds, so a date
// plus a TTL never overflows either.
TEST_F(MemoryDocsTest, DatesAndTtlsPastTheirRangesAreNoDatesAndNoTtls) {
  const Document huge = Run(Parse(
      R"({"insert": "c", "documents": [{"key": "u", "at": {"$date": 1767225333333333333600000}}]})"));
  EXPECT_TRUE(huge.contains("ok")) << huge;
  EXPECT_EQ(FindAll(R"({"key": "u"})").size(), huge["ok"] == 1 ? 1u : 0u);
  EXPECT_EQ(Run(Parse(R"({"createIndexes": "c", "indexes": [{"key": {"at": 1}, "name": "t",
                          "expireAfterSeconds": 2147483648}]})"))["code"],
            67);
  EXPECT_EQ(Run(Parse(R"({"createIndexes": "c", "indexes": [{"key": {"at": 1}, "name": "t",
                          "expireAfterSeconds": 2147483647}]})"))["ok"],
            1);
}

}  // namespace
}  // namespace ratelab
