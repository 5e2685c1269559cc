// RapidCheck generators of ratelab's policies and traffic, for properties of your own:
//
//   RC_GTEST_PROP(MyLimiter, DecidesAsTheModel, ()) {
//     const ratelab::api::Options options = *ratelab::api::gen::Policy("fixed-window");
//     const std::vector<ratelab::api::Request> traffic = *ratelab::api::gen::Traffic(options);
//     MyLimiter limiter(options.limit, options.window);
//     const std::vector<bool> expected = ratelab::api::ModelDecisions(options, traffic);
//     for (size_t i = 0; i < traffic.size(); ++i) {
//       RC_ASSERT(limiter.Allow(traffic[i].key, traffic[i].cost, traffic[i].at) == expected[i]);
//     }
//   }
//
// A failing property shrinks to fewer requests, fewer keys and smaller numbers, as RapidCheck
// shrinks anything. Needs RapidCheck (Debian's librapidcheck-dev).
#ifndef RATELAB_API_RATELAB_RAPIDCHECK_H_
#define RATELAB_API_RATELAB_RAPIDCHECK_H_

#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "ratelab/check.h"

namespace ratelab::api {

// How RapidCheck shows a counterexample's policy and requests.
inline void showValue(const Options& o, std::ostream& os) {
  os << o.model << ": limit " << o.limit << " per " << o.window.count() << "ns, burst " << o.burst
     << " at " << o.rate << "/s";
}
inline void showValue(const Request& r, std::ostream& os) {
  os << r.key << " cost " << r.cost << " at " << r.at.time_since_epoch().count() << "ns";
}

}  // namespace ratelab::api

namespace ratelab::api::gen {

// Options for `model` with a small policy: a limit of 1 to 10 per window of 1 ms to 60 s (whole
// milliseconds), or a bucket of 1 to 10 at 1 to 100 tokens a second. Everything else is Options'
// default.
inline rc::Gen<Options> Policy(std::string model) {
  return rc::gen::map(
      rc::gen::tuple(rc::gen::inRange<int64_t>(1, 11), rc::gen::inRange<int64_t>(1, 60'001),
                     rc::gen::inRange(1, 101)),
      [model](const std::tuple<int64_t, int64_t, int>& t) {
        Options o;
        o.model = model;
        o.limit = o.burst = std::get<0>(t);
        o.window = std::chrono::milliseconds(std::get<1>(t));
        o.rate = std::get<2>(t);
        return o;
      });
}

// Up to 100 requests for up to 3 keys ("k0".."k2"), each of cost 1 to 3, in non-decreasing
// instants from 2026-01-01T00:00:00Z, each gap at most a window (or a bucket's fill time): enough
// to cross windows, few enough to stay readable when shrunk.
inline rc::Gen<std::vector<Request>> Traffic(const Options& options) {
  using std::chrono::nanoseconds;
  const bool bucket = options.model.find("bucket") != std::string::npos ||
                      options.model.find("gcra") != std::string::npos;
  const int64_t span = bucket ? static_cast<int64_t>(options.burst * 1e9 / options.rate)
                              : nanoseconds(options.window).count();
  const Instant start{std::chrono::sys_days(std::chrono::year(2026) / 1 / 1)};
  return rc::gen::map(
      rc::gen::container<std::vector<std::tuple<int, int64_t, int64_t>>>(
          rc::gen::tuple(rc::gen::inRange(0, 3), rc::gen::inRange<int64_t>(1, 4),
                         rc::gen::inRange<int64_t>(0, std::max<int64_t>(span, 1) + 1))),
      [start](const std::vector<std::tuple<int, int64_t, int64_t>>& drawn) {
        std::vector<Request> out;
        Instant at = start;
        for (const auto& [key, cost, gap] : drawn) {
          if (out.size() == 100) break;
          at += nanoseconds(gap);
          out.push_back({"k" + std::to_string(key), cost, at});
        }
        return out;
      });
}

}  // namespace ratelab::api::gen

#endif  // RATELAB_API_RATELAB_RAPIDCHECK_H_
