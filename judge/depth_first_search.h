// The one depth-first search for a linearization of one key's calls (linearizability.h), over
// whatever a space says a search state is: instants tried one by one (linearizability.cc) or a
// bucket's zones (bucket_zones.cc). It places calls one at a time, keeps the longest order it
// found, stops at its budget of steps, and gives every verdict in one format: the order found (or
// the longest), and the call no order could place after it.
//
// A Space provides
//   Node, Step     where the search is, and how one call was placed (what an order records);
//   Frame          a node entered: `choices` (the ways on from it) and `blocking` (the sorted
//                  position of the answered call left that is answered first);
//   Entered<Frame> Enter(Node)        a linearization (nothing answered is left), nothing (a node
//                                     searched before, or that no instants reach), or its frame;
//   std::pair<Step, Node> Take(Frame&, size_t choice)   a choice followed;
//   bool CannotFollow(const Frame&)   whether the blocking call has no way on from the frame;
//   std::vector<LinearStep> Order(const std::vector<Step>&)   an order's calls and instants;
//   bool Exact()                      whether a search that found no order shows there is none
//                                     (not so where some instants went untried);
//   size_t Index(size_t position)     a call's index among those given, from its sorted position;
//   const SearchSteps& steps()        the steps taken, counted by the space as it takes them.
#ifndef RATELAB_JUDGE_DEPTH_FIRST_SEARCH_H_
#define RATELAB_JUDGE_DEPTH_FIRST_SEARCH_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "judge/linearizability.h"

namespace ratelab {

// A search's budget: the steps it may take (a state entered, an instant or a way of placing a call
// tried), and those it has.
struct SearchSteps {
  int64_t most = 0;
  int64_t taken = 0;

  void Take() { ++taken; }
  bool Spent() const { return taken > most; }
};

// What entering a node gives.
template <typename Frame>
struct Entered {
  static Entered Linearization() { return {true, std::nullopt}; }
  static Entered Nothing() { return {false, std::nullopt}; }  // searched before, or unreachable
  static Entered Open(Frame frame) { return {false, std::move(frame)}; }

  bool linearized = false;     // nothing answered is left to place
  std::optional<Frame> frame;  // none: linearized, or nothing to search
};

template <typename Space>
KeyLinearizability DepthFirstSearch(Space& space, typename Space::Node root) {
  using Frame = typename Space::Frame;
  using Step = typename Space::Step;
  struct Open {
    Frame frame;
    size_t next = 0;  // the choice to follow next
  };
  std::vector<Open> stack;
  std::vector<Step> path;  // the choice that led to each frame above the first
  // The longest path from which no choice led on (the history's longest linearizable prefix), and
  // the call it could not place.
  std::optional<std::vector<Step>> best;
  std::optional<size_t> stuck;
  bool stuck_cannot_follow = false;

  const auto enter = [&](typename Space::Node node) {
    Entered<Frame> e = space.Enter(std::move(node));
    if (e.frame) stack.push_back(Open{*std::move(e.frame), 0});
    return e.linearized;
  };
  const auto done = [&](LinearVerdict verdict) {
    KeyLinearizability out;
    out.verdict = verdict;
    out.states = space.steps().taken;
    if (verdict == LinearVerdict::kLinearizable) {
      out.order = space.Order(path);
    } else {
      out.order = space.Order(best.value_or(std::vector<Step>{}));
      out.stuck = stuck;
      out.stuck_cannot_follow = stuck_cannot_follow;
    }
    return out;
  };

  if (enter(std::move(root))) return done(LinearVerdict::kLinearizable);
  while (!stack.empty()) {
    if (space.steps().Spent()) return done(LinearVerdict::kUnknown);
    Open& open = stack.back();
    if (open.next == open.frame.choices.size()) {
      const Frame& f = open.frame;
      if (!best || path.size() > best->size()) {
        best = path;
        stuck = f.blocking ? std::optional<size_t>(space.Index(*f.blocking)) : std::nullopt;
        stuck_cannot_follow = f.blocking && space.CannotFollow(f);
      }
      stack.pop_back();
      if (!path.empty()) path.pop_back();
      continue;
    }
    auto [step, child] = space.Take(open.frame, open.next++);
    const size_t depth = stack.size();
    path.push_back(std::move(step));
    if (enter(std::move(child))) return done(LinearVerdict::kLinearizable);
    if (stack.size() == depth) path.pop_back();  // not entered: searched before
  }
  return done(space.steps().Spent() || !space.Exact() ? LinearVerdict::kUnknown
                                                      : LinearVerdict::kNotLinearizable);
}

}  // namespace ratelab

#endif  // RATELAB_JUDGE_DEPTH_FIRST_SEARCH_H_
