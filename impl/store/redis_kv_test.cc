// RedisKv and RedisServer against a real redis-server (started per test on a unix socket).
#include "impl/store/redis_kv.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "impl/store/redis_server.h"
#include "testing/files.h"
#include "testing/redis.h"

namespace ratelab {
namespace {

using ::testing::HasSubstr;
using Argv = std::vector<std::string>;

KvReply Must(RedisKv& kv, const Argv& argv) {
  Result<KvReply> r = kv.Execute(argv);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : KvReply::Error("(not reached)");
}

TEST(RedisUrlTest, ParsesTcpAndUnixForms) {
  EXPECT_EQ(*ParseRedisUrl("redis://10.0.0.5:6380/3"), (RedisEndpoint{"10.0.0.5", 6380, "", 3}));
  EXPECT_EQ(*ParseRedisUrl("redis://cache"), (RedisEndpoint{"cache", 6379, "", 0}));
  EXPECT_EQ(*ParseRedisUrl("redis://"), (RedisEndpoint{"127.0.0.1", 6379, "", 0}));
  EXPECT_EQ(*ParseRedisUrl("redis://[::1]:7000/1"), (RedisEndpoint{"::1", 7000, "", 1}));
  EXPECT_EQ(*ParseRedisUrl("unix:///run/redis.sock"),
            (RedisEndpoint{"", 6379, "/run/redis.sock", 0}));
  EXPECT_EQ(*ParseRedisUrl("unix:///run/redis.sock?db=4"),
            (RedisEndpoint{"", 6379, "/run/redis.sock", 4}));
  EXPECT_EQ(ParseRedisUrl("redis://h:7/2")->Url(), "redis://h:7/2");
  EXPECT_EQ(ParseRedisUrl("unix:///s.sock?db=2")->Url(), "unix:///s.sock?db=2");
}

TEST(RedisUrlTest, RefusesWhatItCannotUse) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"http://h:1", "unknown scheme"},
      {"redis://h:", "empty port"},
      {"redis://h:70000", "port must be a number"},
      {"redis://h:x1", "port must be a number"},
      {"redis://h/zero", "database after '/'"},
      {"redis://user:pw@h", "passwords"},
      {"unix://relative.sock", "absolute"},
      {"unix:///s.sock?database=1", "db=N"},
  };
  for (const auto& [url, why] : bad) {
    const Result<RedisEndpoint> r = ParseRedisUrl(url);
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
    EXPECT_THAT(r.status().message(), HasSubstr(why)) << url;
    EXPECT_THAT(r.status().message(), HasSubstr(url));
  }
}

// The commands RedisKv writes are hiredis's, byte for byte: words of every length (empty, long,
// with CR, LF and NUL bytes) and counts of words (one to a hundred).
TEST(AppendRedisCommand, WritesWhatHiredisFormats) {
  std::mt19937_64 random(11);
  for (int i = 0; i < 500; ++i) {
    Argv argv(1 + random() % (i % 10 == 0 ? 100 : 12));
    for (std::string& word : argv) {
      word.resize(random() % 4 == 0 ? random() % 20000 : random() % 16);
      for (char& c : word)
        c = static_cast<char>(random() % 4 == 0 ? "\r\n\0"[random() % 3] : 'a' + random() % 26);
    }
    std::vector<const char*> words;
    std::vector<size_t> lengths;
    for (const std::string& w : argv) {
      words.push_back(w.data());
      lengths.push_back(w.size());
    }
    char* theirs = nullptr;
    const long long n = redisFormatCommandArgv(&theirs, static_cast<int>(argv.size()), words.data(),
                                               lengths.data());
    ASSERT_GT(n, 0);
    const std::string want(theirs, static_cast<size_t>(n));
    redisFreeCommand(theirs);
    std::string ours = "before";
    AppendRedisCommand(ours, argv);
    ASSERT_EQ(ours, "before" + want) << "command " << i;
  }
}

TEST(RedisKvTest, NoServerIsUnavailable) {
  RedisKv kv(*ParseRedisUrl("unix:///nonexistent/ratelab.sock"));
  const Result<KvReply> r = kv.Execute(Argv{"PING"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/ratelab.sock"));
}

TEST(RedisKvTest, SilentServerIsDeadlineExceeded) {
  // A socket that accepts connections (the kernel's backlog does) but never answers.
  const std::string path = testing_files::TempDir("silent").string() + ".sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  RedisEndpoint e;
  e.unix_path = path;
  RedisOptions o;
  o.command_timeout = std::chrono::milliseconds(50);
  RedisKv kv(e, o);
  const Result<KvReply> r = kv.Execute(Argv{"PING"});
  close(fd);
  unlink(path.c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
}

// The reply a server that sends `bytes` to the first command it reads, then hangs up, gets read
// as.
Result<KvReply> ReplyOfACannedServer(const std::string& bytes) {
  const std::string path = testing_files::TempDir("canned").string() + ".sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 1) != 0) {
    return absl::InternalError("no socket for the canned server");
  }
  std::thread server([fd, &bytes] {
    const int c = accept(fd, nullptr, nullptr);
    if (c < 0) return;
    char command[4096];
    if (read(c, command, sizeof command) > 0) {
      for (size_t sent = 0; sent < bytes.size();) {
        const ssize_t n = write(c, bytes.data() + sent, bytes.size() - sent);
        if (n <= 0) break;
        sent += static_cast<size_t>(n);
      }
    }
    close(c);
  });
  RedisEndpoint e;
  e.unix_path = path;
  RedisOptions o;
  o.command_timeout = std::chrono::seconds(5);
  RedisKv kv(e, o);
  Result<KvReply> r = kv.Execute(Argv{"PING"});
  server.join();
  close(fd);
  unlink(path.c_str());
  return r;
}

TEST(RedisKvTest, WhateverTheServerSendsIsReadAsAReplyOrAFailure) {
  EXPECT_EQ(*ReplyOfACannedServer("*2\r\n*1\r\n$3\r\nabc\r\n:5\r\n"),
            KvReply::Array({KvReply::Array({KvReply::Bulk("abc")}), KvReply::Integer(5)}));
  EXPECT_EQ(*ReplyOfACannedServer("*-1\r\n"), KvReply::Nil());
  EXPECT_EQ(*ReplyOfACannedServer("$-1\r\n"), KvReply::Nil());
  EXPECT_EQ(*ReplyOfACannedServer("-ERR x\r\n"), KvReply::Error("ERR x"));
  EXPECT_EQ(*ReplyOfACannedServer("+OK\r\n"), KvReply::Ok());
  // Cut short, at any depth, or announcing far more elements than it sends: the connection lost,
  // and what was read of the reply freed (AddressSanitizer would see a leak, and stop on room made
  // for two billion elements).
  for (const std::string cut :
       {"*3\r\n:1\r\n", "*2\r\n*2\r\n$3\r\nabc\r\n", "*2147483647\r\n:1\r\n", "$10\r\nabc",
        "*1\r\n*2147483647\r\n*1\r\n"}) {
    const Result<KvReply> r = ReplyOfACannedServer(cut);
    ASSERT_FALSE(r.ok()) << cut;
    EXPECT_TRUE(absl::IsUnavailable(r.status())) << cut << ": " << r.status();
  }
  // Not a reply at all: hiredis's protocol error, as the connection's failure.
  const Result<KvReply> bad = ReplyOfACannedServer("?what\r\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsUnavailable(bad.status())) << bad.status();
}

TEST(RedisKvTest, RepliesOfEveryType) {
  RATELAB_START_REDIS(server, RedisServerOptions{});
  RedisKv kv(server->endpoint());
  EXPECT_EQ(Must(kv, {"SET", "k", "v"}), KvReply::Ok());
  EXPECT_EQ(Must(kv, {"GET", "k"}), KvReply::Bulk("v"));
  EXPECT_EQ(Must(kv, {"GET", "missing"}), KvReply::Nil());
  EXPECT_EQ(Must(kv, {"INCR", "n"}), KvReply::Integer(1));
  EXPECT_EQ(Must(kv, {"INCR", "k"}), KvReply::Error("ERR value is not an integer or out of range"));
  EXPECT_EQ(Must(kv, {"HSET", "h", "a", "1", "b", "2"}), KvReply::Integer(2));
  EXPECT_EQ(Must(kv, {"HGETALL", "h"}), KvReply::Array({KvReply::Bulk("a"), KvReply::Bulk("1"),
                                                        KvReply::Bulk("b"), KvReply::Bulk("2")}));
  EXPECT_EQ(Must(kv, {"EVAL", "return {1, 'x', redis.call('GET', KEYS[1])}", "1", "k"}),
            KvReply::Array({KvReply::Integer(1), KvReply::Bulk("x"), KvReply::Bulk("v")}));
  EXPECT_EQ(Must(kv, {"EVALSHA", std::string(40, 'a'), "0"}).text.substr(0, 8), "NOSCRIPT");
  // Arrays in arrays, empty ones, and a nil, a status and an error as elements (hiredis's reader
  // builds each KvReply in its place in its array).
  EXPECT_EQ(
      Must(kv, {"EVAL",
                "return {1, {2, {}, {'a', false}}, redis.status_reply('FINE'), "
                "redis.error_reply('ERR nope'), 'x'}",
                "0"}),
      KvReply::Array({KvReply::Integer(1),
                      KvReply::Array({KvReply::Integer(2), KvReply::Array({}),
                                      KvReply::Array({KvReply::Bulk("a"), KvReply::Nil()})}),
                      KvReply::Status("FINE"), KvReply::Error("ERR nope"), KvReply::Bulk("x")}));
  EXPECT_EQ(Must(kv, {"EVAL", "return {}", "0"}), KvReply::Array({}));
  EXPECT_EQ(Must(kv, {"LRANGE", "missing", "0", "-1"}), KvReply::Array({}));
  const std::string big(1 << 20, 'b');  // longer than a read of the socket
  EXPECT_EQ(Must(kv, {"SET", "big", big}), KvReply::Ok());
  EXPECT_EQ(Must(kv, {"EVAL", "return {redis.call('GET', 'big'), 7}", "0"}),
            KvReply::Array({KvReply::Bulk(big), KvReply::Integer(7)}));
  // Binary-safe: a key and a value with NUL and CRLF in them.
  const std::string odd("a\0b\r\n", 5);
  EXPECT_EQ(Must(kv, {"SET", odd, odd}), KvReply::Ok());
  EXPECT_EQ(Must(kv, {"GET", odd}), KvReply::Bulk(odd));
}

TEST(RedisKvTest, PipelineAnswersInOrder) {
  RATELAB_START_REDIS(server, RedisServerOptions{});
  RedisKv kv(server->endpoint(5));
  const std::vector<Argv> commands = {
      {"INCR", "c"}, {"INCR", "c"}, {"GET", "c"}, {"LPUSH", "c", "x"}};
  const Result<std::vector<KvReply>> r = kv.ExecutePipeline(commands);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0], KvReply::Integer(1));
  EXPECT_EQ((*r)[1], KvReply::Integer(2));
  EXPECT_EQ((*r)[2], KvReply::Bulk("2"));
  EXPECT_TRUE((*r)[3].is_error());
  // Database 5 was selected: database 0 is empty.
  RedisKv db0(server->endpoint(0));
  EXPECT_EQ(Must(db0, {"DBSIZE"}), KvReply::Integer(0));
}

TEST(RedisKvTest, ReconnectsAfterTheServerRestarts) {
  RedisServerOptions o;
  o.durability = Durability::kAlways;
  RATELAB_START_REDIS(server, o);
  RedisKv kv(server->endpoint());
  EXPECT_EQ(Must(kv, {"INCR", "n"}), KvReply::Integer(1));
  ASSERT_TRUE(server->Kill().ok());
  const Result<KvReply> down = kv.Execute(Argv{"INCR", "n"});
  ASSERT_FALSE(down.ok());
  EXPECT_TRUE(absl::IsUnavailable(down.status())) << down.status();
  ASSERT_TRUE(server->Launch().ok());
  EXPECT_EQ(Must(kv, {"INCR", "n"}), KvReply::Integer(2));  // the failure dropped the connection
}

// What a kill -9 keeps: appendonly no nothing, appendfsync always everything Redis answered
// (it writes before it answers). Under everysec a kill may lose writes held back during an fsync,
// a matter of timing, so only the clean stop is pinned there: it flushes.
TEST(RedisServerTest, KillKeepsWhatTheDurabilityKeeps) {
  for (const Durability d : kDurabilities) {
    RedisServerOptions o;
    o.durability = d;
    RATELAB_START_REDIS(server, o);
    RedisKv kv(server->endpoint());
    for (int i = 0; i < 5; ++i) Must(kv, {"INCR", "n"});
    ASSERT_TRUE(server->Restart().ok());
    kv.Disconnect();
    const KvReply after_kill = Must(kv, {"GET", "n"});
    if (d == Durability::kNone) {
      EXPECT_EQ(after_kill, KvReply::Nil());
    } else if (d == Durability::kAlways) {
      EXPECT_EQ(after_kill, KvReply::Bulk("5"));
    }
    Must(kv, {"SET", "n", "6"});
    ASSERT_TRUE(server->Stop().ok());
    ASSERT_TRUE(server->Launch().ok());
    kv.Disconnect();
    EXPECT_EQ(Must(kv, {"GET", "n"}), d == Durability::kNone ? KvReply::Nil() : KvReply::Bulk("6"))
        << DurabilityName(d);
  }
}

TEST(RedisServerTest, ScriptsAreForgottenOnRestart) {
  RATELAB_START_REDIS(server, RedisServerOptions{});
  RedisKv kv(server->endpoint());
  const KvReply sha = Must(kv, {"SCRIPT", "LOAD", "return 7"});
  EXPECT_EQ(Must(kv, {"EVALSHA", sha.text, "0"}), KvReply::Integer(7));
  ASSERT_TRUE(server->Restart().ok());
  kv.Disconnect();
  EXPECT_THAT(Must(kv, {"EVALSHA", sha.text, "0"}).text, HasSubstr("NOSCRIPT"));
}

TEST(RedisServerTest, VirtualClockIsTheServersWallClock) {
  const Instant start = FromUnixMillis(1'800'000'000'123);
  RedisServerOptions o;
  o.virtual_clock = start;
  RATELAB_START_REDIS(server, o);
  RedisKv kv(server->endpoint());
  EXPECT_EQ(Must(kv, {"TIME"}),
            KvReply::Array({KvReply::Bulk("1800000000"), KvReply::Bulk("123000")}));
  EXPECT_EQ(Must(kv, {"SET", "k", "v", "PX", "100"}), KvReply::Ok());
  server->virtual_clock()->Set(start + std::chrono::milliseconds(100));
  EXPECT_EQ(Must(kv, {"PTTL", "k"}), KvReply::Integer(0));  // alive through its expiry ms
  server->virtual_clock()->Set(start + std::chrono::milliseconds(101));
  EXPECT_EQ(Must(kv, {"GET", "k"}), KvReply::Nil());
  // A restart keeps the clock file, so the server comes back on virtual time.
  ASSERT_TRUE(server->Restart().ok());
  kv.Disconnect();
  EXPECT_EQ(Must(kv, {"TIME"}),
            KvReply::Array({KvReply::Bulk("1800000000"), KvReply::Bulk("224000")}));
}

TEST(RedisServerTest, RemovesItsDirectory) {
  std::string dir;
  {
    RATELAB_START_REDIS(server, RedisServerOptions{});
    dir = server->dir();
    EXPECT_TRUE(std::filesystem::exists(dir + "/redis.sock"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

// What a ratelab killed outright leaves: its dir, and a redis-server still running there.
TEST(RedisServerTest, TheNextStartCleansUpAfterAProcessKilledOutright) {
  RATELAB_REQUIRE_REDIS_SERVER();
  std::string root_template = "/tmp/rl-XXXXXX";  // short: a unix socket's path is limited
  ASSERT_NE(mkdtemp(root_template.data()), nullptr);
  const std::filesystem::path root = root_template;
  const std::string abandoned = (root / "ratelab-redis-abandoned").string();
  std::filesystem::create_directories(abandoned);
  Result<pid_t> server = SpawnLogged({"redis-server", "--port", "0", "--unixsocket",
                                      abandoned + "/redis.sock", "--dir", abandoned, "--save", ""},
                                     nullptr, abandoned + "/redis.log");
  ASSERT_TRUE(server.ok()) << server.status();
  RedisEndpoint e;
  e.unix_path = abandoned + "/redis.sock";
  RedisKv kv(e);
  for (int i = 0; i < 400 && !kv.Execute(std::vector<std::string>{"PING"}).ok(); ++i) {
    usleep(5000);
  }
  ASSERT_TRUE(kv.Execute(std::vector<std::string>{"PING"}).ok()) << "the server is up";
  const pid_t gone = fork();  // a pid whose process has exited: the owner that was killed
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  testing_files::Write(abandoned, "owner", std::to_string(gone) + " " + std::to_string(*server));
  // A live process's dir, and a dir with no owner, are not touched.
  testing_files::Write(root / "ratelab-redis-live", "owner", std::to_string(getpid()) + " 0");
  std::filesystem::create_directories(root / "ratelab-redis-unknown");

  EXPECT_EQ(RemoveAbandonedServers(root.string(), "ratelab-redis-", "redis-server"), 1);
  int status = 0;
  ASSERT_EQ(waitpid(*server, &status, 0), *server);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_FALSE(std::filesystem::exists(abandoned));
  EXPECT_TRUE(std::filesystem::exists(root / "ratelab-redis-live"));
  EXPECT_TRUE(std::filesystem::exists(root / "ratelab-redis-unknown"));
  std::filesystem::remove_all(root);
}

// Without redis-server, Start says so; under CI=true the fixture fails the test instead of
// skipping it.
TEST(RedisServerTest, MissingServerIsNotFoundAndFailsUnderCi) {
  const std::string path = getenv("PATH");
  const char* ci = getenv("CI");
  const std::string saved_ci = ci == nullptr ? "" : ci;
  setenv("PATH", "/nonexistent", 1);
  const auto started = RedisServer::Start({});
  setenv("PATH", path.c_str(), 1);
  ASSERT_FALSE(started.ok());
  EXPECT_TRUE(absl::IsNotFound(started.status()));
  EXPECT_THAT(started.status().message(), HasSubstr("redis-server"));
  setenv("CI", "true", 1);
  EXPECT_FALSE(testing_redis::MaySkip(started.status()));
  unsetenv("CI");
  EXPECT_TRUE(testing_redis::MaySkip(started.status()));
  if (ci != nullptr) setenv("CI", saved_ci.c_str(), 1);
}

}  // namespace
}  // namespace ratelab
