// The service's JSON answers: a body of JSON text or a JSON value (bytes that are not UTF-8, which
// only a caller's echoed text can hold, written as U+FFFD, never thrown about), an error, and a
// request's own fault.
#ifndef RATELAB_IMPL_SERVICE_ANSWERS_H_
#define RATELAB_IMPL_SERVICE_ANSWERS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "impl/service/http.h"

namespace ratelab {

// An answer of JSON text `body`.
HttpResponse JsonTextAnswer(int status, std::string body, AnswerHeaders headers = {});
HttpResponse JsonAnswer(int status, const nlohmann::ordered_json& body, AnswerHeaders headers = {});
// {"error": `error`}.
HttpResponse ErrorAnswer(int status, const std::string& error, AnswerHeaders headers = {});
// A request's own fault: a 400 saying what is wrong with it.
HttpResponse BadRequest(const Status& s);

}  // namespace ratelab

#endif  // RATELAB_IMPL_SERVICE_ANSWERS_H_
