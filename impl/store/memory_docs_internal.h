// What MemoryDocs' two sources share (memory_docs.cc, memory_docs_commands.cc): the query
// language's names, used unqualified. Internal to them.
#ifndef RATELAB_IMPL_STORE_MEMORY_DOCS_INTERNAL_H_
#define RATELAB_IMPL_STORE_MEMORY_DOCS_INTERNAL_H_

#include "impl/store/docs_query.h"

namespace ratelab {

using docs_query::ApplyUpdate;
using docs_query::BadValue;
using docs_query::CheckFieldName;
using docs_query::CheckFilter;
using docs_query::DateMs;
using docs_query::Equal;
using docs_query::FailedToParse;
using docs_query::Failure;
using docs_query::FieldOf;
using docs_query::IsDate;
using docs_query::IsOperators;
using docs_query::kCannotCreateIndex;
using docs_query::kCommandNotFound;
using docs_query::kIndexOptionsConflict;
using docs_query::kInvalidNamespace;
using docs_query::LookupKey;
using docs_query::Matches;
using docs_query::Project;
using docs_query::Show;

}  // namespace ratelab

#endif  // RATELAB_IMPL_STORE_MEMORY_DOCS_INTERNAL_H_
