#include "impl/limiters/exec_protocol.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "impl/limiters/exec_process.h"

namespace ratelab {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const Instant kEdge = FromUnixNanos(1767225600000000000);  // 2026-01-01, a whole window's edge

// The adapter written from docs/exec-protocol.md alone: a fixed window in awk.
std::string AwkFixedWindow() {
  return std::string(RATELAB_SOURCE_DIR) + "/adapters/awk/fixed-window";
}

// A toy subject in sh: answers the hello, then runs `body` (with $id the message's id).
std::string Toy(const std::string& body) {
  return "sh -c 'while read -r line; do id=$(echo \"$line\" | sed "
         "\"s/.*\\\"id\\\":\\([0-9]*\\).*/\\1/\"); "
         "case \"$line\" in *hello*) echo \"{\\\"id\\\":$id,\\\"version\\\":1}\";; *) " +
         body + ";; esac; done'";
}

Result<Decision> DecideAt(ExecSession& s, int64_t limiter, Instant at, std::string key = "k") {
  return s.Answer(limiter, s.Send(limiter, key, 1, at), key, 1, at);
}

TEST(ExecProtocol, CommandsSplitIntoWordsWithQuotesAndNoShell) {
  EXPECT_EQ(*SplitCommandWords("a  b\t'c d' \"e \\\"f\\\"\" g'h'"),
            (std::vector<std::string>{"a", "b", "c d", "e \"f\"", "gh"}));
  EXPECT_EQ(*SplitCommandWords("x $HOME;rm"), (std::vector<std::string>{"x", "$HOME;rm"}));
  EXPECT_TRUE(absl::StrContains(SplitCommandWords("a 'b").status().message(), "does not close"));
  EXPECT_FALSE(SplitCommandWords("   ").ok());
}

TEST(ExecProtocol, DecisionsInFlightTogetherAreAnsweredEachByItsIdAndRestartForgets) {
  Result<std::shared_ptr<ExecSession>> s = ExecSession::Start(AwkFixedWindow(), seconds(10));
  ASSERT_TRUE(s.ok()) << s.status();
  ExecSession& session = **s;
  EXPECT_EQ(session.hello().name, "awk fixed window");
  EXPECT_EQ(session.hello().resolution, milliseconds(1));
  EXPECT_TRUE(session.hello().remaining);
  const int64_t limiter = session.Open(Policy::Window(Algorithm::kFixedWindow, 2, seconds(10)));
  const int64_t other = session.Open(Policy::Window(Algorithm::kFixedWindow, 1, seconds(10)));
  // Three sent before any answer is read, read last first.
  const int64_t a = session.Send(limiter, "k", 1, kEdge);
  const int64_t b = session.Send(limiter, "k", 1, kEdge + seconds(1));
  const int64_t c = session.Send(limiter, "k", 1, kEdge + seconds(2));
  const Result<Decision> third = session.Answer(limiter, c, "k", 1, kEdge + seconds(2));
  const Result<Decision> first = session.Answer(limiter, a, "k", 1, kEdge);
  const Result<Decision> second = session.Answer(limiter, b, "k", 1, kEdge + seconds(1));
  ASSERT_TRUE(first.ok() && second.ok() && third.ok()) << third.status();
  EXPECT_TRUE(first->allowed);
  EXPECT_EQ(first->remaining, 1);
  EXPECT_TRUE(second->allowed);
  EXPECT_FALSE(third->allowed);
  // Each limiter counts alone; the next window starts afresh.
  EXPECT_TRUE(DecideAt(session, other, kEdge)->allowed);
  EXPECT_TRUE(DecideAt(session, limiter, kEdge + seconds(10))->allowed);
  // A restart forgets what was counted.
  EXPECT_TRUE(DecideAt(session, limiter, kEdge + seconds(11))->allowed);
  EXPECT_FALSE(DecideAt(session, limiter, kEdge + seconds(12))->allowed);
  session.Restart(limiter);
  EXPECT_TRUE(DecideAt(session, limiter, kEdge + seconds(13))->allowed);
  session.Close(limiter);
  session.Close(other);
}

TEST(ExecProtocol, APolicyTheProcessRefusesIsBadInputNamingWhy) {
  Result<std::shared_ptr<ExecSession>> s = ExecSession::Start(AwkFixedWindow(), seconds(10));
  ASSERT_TRUE(s.ok()) << s.status();
  const int64_t limiter = (*s)->Open(Policy::Bucket(Algorithm::kTokenBucket, 2, seconds(1)));
  const Result<Decision> d = DecideAt(**s, limiter, kEdge);
  EXPECT_TRUE(absl::IsInvalidArgument(d.status())) << d.status();
  EXPECT_TRUE(absl::StrContains(d.status().message(),
                                "refused the policy: this toy counts fixed "
                                "windows of whole milliseconds"))
      << d.status();
}

TEST(ExecProtocol, AProcessThatDiesAnswersGarbageOrNothingFailsTheDecisionSayingWhatHappened) {
  struct Case {
    std::string body;
    std::string says;
  };
  const Case cases[] = {
      {"echo \"out of memory\" >&2; exit 7",
       "closed its output while deciding key k (cost 1, now_ns 1767225600000000000"},
      {"echo garbage", "answered \"garbage\" while deciding key k"},
      {"echo \"{\\\"id\\\":$id}\"", "it must say \"allowed\": true or false"},
      {"sleep 5", "answered nothing for 300 ms"},
      {"while true; do echo \"{\\\"id\\\":1}\"; done",
       "answered more lines than it was sent messages"},
  };
  for (const Case& c : cases) {
    Result<std::shared_ptr<ExecSession>> s = ExecSession::Start(
        Toy("case \"$line\" in *decide*) " + c.body + ";; *) echo \"{\\\"id\\\":$id}\";; esac"),
        milliseconds(300));
    ASSERT_TRUE(s.ok()) << s.status();
    const int64_t limiter = (*s)->Open(Policy::Window(Algorithm::kFixedWindow, 2, seconds(10)));
    const Result<Decision> d = DecideAt(**s, limiter, kEdge);
    ASSERT_FALSE(d.ok()) << c.body;
    EXPECT_FALSE(IsStoreFailure(d.status())) << "a failure of the limiter, not a lost request";
    EXPECT_TRUE(absl::StrContains(d.status().message(), c.says)) << d.status();
    if (c.body.starts_with("echo \"out")) {
      EXPECT_TRUE(absl::StrContains(d.status().message(), "it exited with status 7"));
      EXPECT_TRUE(absl::StrContains(d.status().message(), "its stderr:\n  out of memory"));
    }
    // Once failed, it stays failed until a limiter is opened again (in a process started anew).
    EXPECT_FALSE(DecideAt(**s, limiter, kEdge).ok());
  }
}

// A decision carries its instant three ways: nanoseconds, and whole microseconds and
// milliseconds (floored) for a language whose numbers hold only those exactly.
TEST(ExecProtocol, ADecisionSaysItsInstantInNanosecondsMicrosecondsAndMilliseconds) {
  const std::string seen = ::testing::TempDir() + "/exec-lines-seen";
  std::remove(seen.c_str());
  Result<std::shared_ptr<ExecSession>> s = ExecSession::Start(
      Toy("echo \"$line\" >> " + seen +
          "; case \"$line\" in *decide*) echo "
          "\"{\\\"id\\\":$id,\\\"allowed\\\":true}\";; *) echo \"{\\\"id\\\":$id}\";; esac"),
      seconds(10));
  ASSERT_TRUE(s.ok()) << s.status();
  const int64_t limiter = (*s)->Open(Policy::Window(Algorithm::kFixedWindow, 2, seconds(10)));
  const Result<Decision> d = DecideAt(**s, limiter, kEdge + std::chrono::nanoseconds(123456789));
  ASSERT_TRUE(d.ok()) << d.status();
  std::ifstream in(seen);
  const std::string lines((std::istreambuf_iterator<char>(in)), {});
  EXPECT_TRUE(absl::StrContains(lines, R"("now_ns":1767225600123456789,"now_us":1767225600123456,)"
                                       R"("now_ms":1767225600123})"))
      << lines;
  // A limiter made at an instant says it (a library whose state starts then), and none of its
  // decisions goes before it; one made with no clock says none.
  const int64_t made =
      (*s)->Open(Policy::Window(Algorithm::kFixedWindow, 2, seconds(10)), kEdge + seconds(5));
  ASSERT_TRUE(DecideAt(**s, made, kEdge).ok());
  std::ifstream again(seen);
  const std::string all((std::istreambuf_iterator<char>(again)), {});
  EXPECT_TRUE(absl::StrContains(all, R"("window_ns":10000000000},"now_ns":1767225605000000000,)"
                                     R"("now_us":1767225605000000,"now_ms":1767225605000})"))
      << all;
  EXPECT_TRUE(absl::StrContains(all, R"("window_ns":10000000000}})")) << all;
  EXPECT_TRUE(absl::StrContains(all, R"("key":"k","cost":1,"now_ns":1767225605000000000,)")) << all;
}

TEST(ExecProtocol, AProgramThatCannotStartOrGreetIsSaidSo) {
  const Result<std::shared_ptr<ExecSession>> missing =
      ExecSession::Start("no-such-program-here --flag", seconds(1));
  EXPECT_TRUE(absl::IsFailedPrecondition(missing.status())) << missing.status();
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "could not be started"));
  const Result<std::shared_ptr<ExecSession>> rude =
      ExecSession::Start("sh -c 'read x; echo \"{\\\"id\\\":1,\\\"version\\\":9}\"'", seconds(1));
  EXPECT_TRUE(IsLimiterFailed(rude.status())) << rude.status();
  EXPECT_TRUE(absl::StrContains(rude.status().message(), "it must say \"version\":1"));
}

}  // namespace
}  // namespace ratelab

namespace ratelab {
namespace {

// Whether process `pid` is gone (or a zombie, which runs nothing).
bool Gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  if (text.empty()) return true;
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

// A limiter process that leaves a child running (a server it started, a worker it forked) once
// left it running after ratelab exited: its whole process group goes with it, whether it exits
// when its input ends or has to be killed.
TEST(ExecProcess, WhatTheProcessLeftRunningInItsGroupEndsWithIt) {
  const std::string dir = ::testing::TempDir();
  for (const std::string then : {"exec cat", "trap '' TERM; cat; sleep 300"}) {
    SCOPED_TRACE(then);
    const std::string pid_file = dir + "/ratelab-exec-child.pid";
    std::remove(pid_file.c_str());
    Result<std::unique_ptr<ExecProcess>> p =
        ExecProcess::Start({"sh", "-c", "sleep 300 & echo $! > " + pid_file + "; " + then});
    ASSERT_TRUE(p.ok()) << p.status();
    (*p)->Write("ping");
    ASSERT_TRUE((*p)->Flush().ok());
    ASSERT_EQ(*(*p)->ReadLine(milliseconds(5000)), "ping");
    std::ifstream in(pid_file);
    pid_t child = 0;
    ASSERT_TRUE(in >> child);
    EXPECT_FALSE(Gone(child));
    p->reset();
    for (int i = 0; i < 100 && !Gone(child); ++i) usleep(10'000);
    EXPECT_TRUE(Gone(child)) << "the child it forked, " << child << ", still runs";
  }
}

}  // namespace
}  // namespace ratelab
