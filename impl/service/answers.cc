#include "impl/service/answers.h"

namespace ratelab {

namespace {

const AnswerHeader kJson{"Content-Type", "application/json"};

}  // namespace

HttpResponse JsonTextAnswer(int status, std::string body, AnswerHeaders headers) {
  headers.push_back(kJson);
  return HttpResponse{status, std::move(headers), std::move(body)};
}

HttpResponse JsonAnswer(int status, const nlohmann::ordered_json& body, AnswerHeaders headers) {
  return JsonTextAnswer(status,
                        body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace),
                        std::move(headers));
}

HttpResponse ErrorAnswer(int status, const std::string& error, AnswerHeaders headers) {
  return JsonAnswer(status, nlohmann::ordered_json{{"error", error}}, std::move(headers));
}

HttpResponse BadRequest(const Status& s) { return ErrorAnswer(400, std::string(s.message())); }

}  // namespace ratelab
