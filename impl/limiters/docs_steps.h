// How a protocol talks to a Docs store: one database command per Step (one document operation,
// atomic on that document).
#ifndef RATELAB_IMPL_LIMITERS_DOCS_STEPS_H_
#define RATELAB_IMPL_LIMITERS_DOCS_STEPS_H_

#include <string>

#include "impl/core/step.h"
#include "impl/core/task.h"
#include "impl/store/docs.h"

namespace ratelab {

// What a history shows for a command: "findAndModify rate_limits {...the rest as JSON...}".
std::string DocsLabel(const Document& command);

// Runs `command` on `docs` as one step.
Task<Result<Document>> DocsCommand(Context& ctx, Docs& docs, Document command);

// Internal naming `protocol`, the command's verb and the server's message, for a reply that
// failed with a code the protocol does not handle.
Status DocsFailed(std::string_view protocol, const Document& reply);

}  // namespace ratelab

#endif  // RATELAB_IMPL_LIMITERS_DOCS_STEPS_H_
