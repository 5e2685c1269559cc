// What the key-expiry check judges: something a run left in its store that nothing will ever
// free (a key without a TTL, a document no TTL index covers, a row past its expiry that no sweep
// deletes).
#ifndef RATELAB_MODEL_NEVER_FREED_H_
#define RATELAB_MODEL_NEVER_FREED_H_

#include <string>
#include <vector>

namespace ratelab {

struct NeverFreed {
  std::string name;  // which: "store key rate:u1", "document rate_limits {userId: "u1"}"
  std::string why;   // "no TTL", "no TTL index", or why the TTL index does not apply
  // Texts that the steps of the requests that wrote it name, all of them (a key; a document's
  // string fields as they appear in a command's JSON, "\"userId\":\"u1\"").
  std::vector<std::string> fields;
};

}  // namespace ratelab

#endif  // RATELAB_MODEL_NEVER_FREED_H_
