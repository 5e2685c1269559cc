#include "impl/limiters/docs_steps.h"

namespace ratelab {

std::string DocsLabel(const Document& command) {
  if (!command.is_object() || command.empty()) return command.dump();
  Document rest = command;
  rest.erase(rest.begin());
  const Document& target = command.begin().value();
  return command.begin().key() + " " +
         (target.is_string() ? target.get<std::string>() : target.dump()) + " " + rest.dump();
}

Task<Result<Document>> DocsCommand(Context& ctx, Docs& docs, Document command) {
  co_return co_await ctx.Step(DocsLabel(command), [&] { return docs.Execute(command); });
}

Status DocsFailed(std::string_view protocol, const Document& reply) {
  std::string message = reply.value("errmsg", "");
  if (message.empty() && reply.contains("writeErrors") && !reply["writeErrors"].empty()) {
    message = reply["writeErrors"][0].value("errmsg", "");
  }
  return absl::InternalError(std::string(protocol) + ": the store answered error " +
                             std::to_string(DocsErrorCode(reply)) + ": " + message);
}

}  // namespace ratelab
