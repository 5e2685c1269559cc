// `ratelab probe` as a user runs it: the plan printed before anything is sent, the verdict in
// the exit status, JSON and JUnit, and bad flags refused before anything is sent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cli_test_util.h"
#include "cli/exit_codes.h"
#include "impl/service/http_server.h"
#include "testing/files.h"

namespace ratelab {
namespace {

// A server that admits every request, and says it limits to 2 a minute.
class AdmitsAll {
 public:
  AdmitsAll() {
    HttpServerOptions options;
    options.port = 0;
    server_ = *HttpServer::Listen(options, [](const HttpRequest&) {
      return HttpResponse{200, {{"X-RateLimit-Limit", "2"}}, "{}"};
    });
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~AdmitsAll() {
    server_->Stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/x"; }

 private:
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

TEST(ProbeCommand, SaysWhatItWillSendThenFindsTheOverAdmission) {
  AdmitsAll server;
  const std::string junit = ::testing::TempDir() + "/probe-junit.xml";
  const CliOutcome r =
      Ratelab({"probe", server.url(), "--model", "fixed-window", "--limit", "2", "--window", "1m",
               "--max-requests", "6", "--max-rps", "200", "--json", "--junit", junit});
  EXPECT_EQ(r.exit, kExitViolation) << r.err;
  EXPECT_NE(r.err.find("probe: GET " + server.url()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at most 6 requests, at most 200 a second, for at most 10s"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("{user} = probe-"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sent"], 6);
  EXPECT_EQ(j["admitted"], 6);
  ASSERT_FALSE(j["violations"].empty()) << r.out;
  EXPECT_EQ(j["violations"][0]["invariant"], "aligned-window-cap");
  EXPECT_EQ(j["violations"][0]["witness"].size(), 3u);
  EXPECT_EQ(j["violations"][0]["witness"][0]["status"], 200);
  std::ifstream in(junit);
  const std::string xml((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(xml.find("<failure"), std::string::npos) << xml;
}

TEST(ProbeCommand, BadFlagsAreRefusedBeforeAnythingIsSent) {
  const auto refused = [](std::vector<std::string> args, const std::string& message) {
    args.insert(args.begin(), "probe");
    const CliOutcome r = Ratelab(args);
    EXPECT_EQ(r.exit, kExitBadInput) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("probe: GET"), std::string::npos) << "nothing is sent: " << r.err;
  };
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--max-requests", "0"},
          "--max-requests: 0 is not 1 to 1000000");
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--max-rps", "50000"},
          "--max-rps: 50000 is not above 0 and at most 10000");
  refused({"https://127.0.0.1/", "--model", "fixed-window"}, "is HTTPS");
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--header", "nocolon"},
          "--header: 'nocolon' is not a header");
  refused({"http://127.0.0.1:1/", "--model", "fixed-window", "--denied-if", "42"},
          "--denied-if: '42' is not an HTTP status");
  refused({"http://127.0.0.1:1/", "--model", "token-bucket", "--limit", "3"},
          "give --rate and --burst, not --limit and --window");
  refused({"http://127.0.0.1:1/", "--model", "leaky"}, "unknown algorithm 'leaky'");
  refused({"http://127.0.0.1:1/"}, "--model is required");
}

TEST(ProbeCommand, AServerThatIsNotThereIsAnErrorNotAPass) {
  const CliOutcome r = Ratelab({"probe", "http://127.0.0.1:1/", "--model", "fixed-window",
                                "--max-requests", "2", "--timeout", "2s"});
  EXPECT_EQ(r.exit, kExitBadInput) << r.err;
  EXPECT_NE(r.err.find("not one of 2 requests was answered"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ratelab
