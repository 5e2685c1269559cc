#include "sim/simulation.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace ratelab {

namespace {
// Every simulated request is limited per user.
constexpr char kScopeType[] = "user";
}  // namespace

// A request between arrival and answer, as its node sees it at `now`. Lives at a stable
// address: its task refers to the request and the context.
struct Simulation::InFlight {
  int node;
  Random random;  // the request's own: its steps' latencies
  Request request;
  Context ctx;
  Task<Result<Decision>> task;
  InFlight(int n, Random r, const Arrival& a, std::string_view key, Instant now, Executor& executor,
           int64_t id, Protocol& protocol, FramePool& frames)
      : node(n),
        random(r),
        request{kScopeType, a.user, a.endpoint, a.cost, now, key},
        ctx(executor, id, &frames),
        task(protocol.Decide(ctx, request)) {}
  // From the run's pool (Simulation::frames_), as the frames of its task are.
  static void* operator new(size_t size, FramePool& pool) { return PoolNew(size, &pool); }
  static void operator delete(void* p, FramePool&) { PoolDelete(p, sizeof(InFlight)); }
  static void operator delete(void* p, size_t size) { PoolDelete(p, size); }
};

struct Simulation::Node {
  NodeClock clock;
  std::unique_ptr<Protocol> protocol;
  std::unique_ptr<SimulationExecutor> executor;
  bool up = true;
};

namespace {
// Independent random streams of a run.
constexpr uint64_t kProcessStreamBase = 2000;               // each node's own Math.random
constexpr uint64_t kRequestStreamBase = uint64_t{1} << 32;  // each request's (Arrival::stream)
}  // namespace

Simulation::Simulation(SimulationConfig config, const ProtocolFactory& factory)
    : config_(std::move(config)), factory_(factory), loop_(config_.start), root_(config_.seed) {
  for (size_t i = 0; i < config_.nodes.size(); ++i) {
    const NodeSpec& spec = config_.nodes[i];
    auto node = std::make_unique<Node>(
        Node{NodeClock(config_.start, spec.clock_offset, spec.drift_ppm), nullptr, nullptr, true});
    SimulationExecutor::Observer observer{
        [this](int64_t request, const std::string& label, Instant at) {
          HistoryEvent& e = history_[static_cast<size_t>(request)];
          e.steps.emplace_back(label, at);
          e.apply = at;
        },
        [this](int64_t request) { Finish(request); },
        [this](int64_t request) -> Random& {
          return in_flight_[static_cast<size_t>(request)]->random;
        }};
    node->executor = std::make_unique<SimulationExecutor>(
        loop_, config_.to_store, config_.from_store, config_.buggify, std::move(observer));
    nodes_.push_back(std::move(node));
  }
}

Simulation::~Simulation() = default;

StateSize Simulation::ProcessState() const {
  StateSize s;
  for (const auto& n : nodes_) {
    if (n->protocol) s += n->protocol->ProcessState();
  }
  return s;
}

void Simulation::CrashNode(int node, Instant at, Duration down_for) {
  loop_.At(at, [this, node, down_for] {
    Node& n = *nodes_[static_cast<size_t>(node)];
    n.executor->Crash();
    // Destroys the node's coroutines; their history events keep no answer.
    for (std::unique_ptr<InFlight>& f : in_flight_) {
      if (f != nullptr && f->node == node) f.reset();
    }
    n.protocol->Restart();
    n.up = false;
    loop_.After(down_for, [this, node] { nodes_[static_cast<size_t>(node)]->up = true; });
  });
}

void Simulation::LatencySpike(Instant at, Duration length, Duration extra) {
  loop_.At(at, [this, extra] {
    for (auto& n : nodes_) n->executor->AddExtraLatency(extra);
  });
  loop_.At(at + length, [this, extra] {
    for (auto& n : nodes_) n->executor->AddExtraLatency(-extra);
  });
}

void Simulation::JumpClock(int node, Instant at, Duration by) {
  loop_.At(at, [this, node, by] { nodes_[static_cast<size_t>(node)]->clock.Jump(by); });
}

int Simulation::PickNode(Random& random) {
  int64_t live = 0;
  for (const auto& n : nodes_) live += n->up ? 1 : 0;
  if (live == 0) return -1;
  int64_t pick = random.Uniform(0, live);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i]->up && pick-- == 0) return static_cast<int>(i);
  }
  return -1;
}

void Simulation::Arrive(int64_t id, const Arrival& a) {
  if (static_cast<size_t>(id) == history_.size()) MakeEvent(static_cast<size_t>(id), a);
  HistoryEvent& e = history_[static_cast<size_t>(id)];
  e.invoke = loop_.now();  // an arrival scheduled before the start arrives at the start
  // The request's own stream: the one its arrival names, or its position's.
  Random random = root_.Fork(kRequestStreamBase + (a.stream != 0 ? a.stream : uint64_t(id) + 1));
  const int node = PickNode(random);
  if (node < 0) return;  // every node is down: no answer
  Node& n = *nodes_[static_cast<size_t>(node)];
  e.node = node;
  e.node_now = n.clock.Read(loop_.now());
  std::unique_ptr<InFlight>& f = in_flight_[static_cast<size_t>(id)];
  f.reset(new (frames_) InFlight(node, random, a,
                                 keys_[static_cast<size_t>(key_of_[static_cast<size_t>(id)])],
                                 e.node_now, *n.executor, id, *n.protocol, frames_));
  f->task.Start();
  Finish(id);
}

void Simulation::MakeEvent(size_t i, const Arrival& a) {
  HistoryEvent& e = history_.emplace_back();
  e.id = static_cast<int64_t>(i);
  e.cost = a.cost;
  e.key = keys_[static_cast<size_t>(key_of_[i])];  // also for requests never answered
  e.key_id = key_rank_[static_cast<size_t>(key_of_[i])];
}

void Simulation::Finish(int64_t id) {
  std::unique_ptr<InFlight>& f = in_flight_[static_cast<size_t>(id)];
  if (f == nullptr || !f->task.done()) return;
  HistoryEvent& e = history_[static_cast<size_t>(id)];
  e.complete = loop_.now();
  if (e.steps.empty()) e.apply = e.complete;
  const Result<Decision>& result = f->task.result();
  if (result.ok()) {
    e.decision = *result;
  } else if (!IsStoreFailure(result.status())) {
    e.failure = std::string(result.status().message());
  }  // a store error is recorded as no answer
  f.reset();
}

History Simulation::Run(const std::vector<Arrival>& arrivals) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i]->protocol = factory_(static_cast<int>(i));
    nodes_[i]->protocol->SeedProcess(Random(config_.seed).Fork(kProcessStreamBase + i).Next());
  }
  history_.clear();
  history_.reserve(arrivals.size());
  in_flight_.clear();
  in_flight_.resize(arrivals.size());
  std::vector<size_t>& order = arrival_order_;
  order.resize(arrivals.size());
  // Each distinct key is made once, and numbered in key order for the oracles
  // (HistoryEvent::key_id: they then need neither hash nor sort the keys).
  // (Keyed by abseil's own string_view, which abseil hashes itself: Debian's abseil hashes a
  // std::string_view through std::hash, about twice the work.)
  absl::flat_hash_map<std::pair<absl::string_view, absl::string_view>, int32_t> key_ids;
  keys_.clear();
  key_of_.resize(arrivals.size());  // by arrival: its key's index in keys_
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const std::string& user = arrivals[i].user;
    const std::string& endpoint = arrivals[i].endpoint;
    const auto [it, inserted] =
        key_ids.try_emplace(std::pair(absl::string_view(user.data(), user.size()),
                                      absl::string_view(endpoint.data(), endpoint.size())),
                            static_cast<int32_t>(keys_.size()));
    if (inserted) keys_.push_back(LimiterKey(kScopeType, arrivals[i].user, arrivals[i].endpoint));
    key_of_[i] = it->second;
    order[i] = i;
  }
  std::vector<int32_t> by_key(keys_.size());
  for (size_t k = 0; k < keys_.size(); ++k) by_key[k] = static_cast<int32_t>(k);
  std::sort(by_key.begin(), by_key.end(), [&](int32_t a, int32_t b) {
    return keys_[static_cast<size_t>(a)] < keys_[static_cast<size_t>(b)];
  });
  key_rank_.resize(keys_.size());
  for (size_t r = 0; r < by_key.size(); ++r) {
    key_rank_[static_cast<size_t>(by_key[r])] = static_cast<int32_t>(r);
  }
  const auto earlier = [&](size_t a, size_t b) { return arrivals[a].at < arrivals[b].at; };
  if (!std::is_sorted(order.begin(), order.end(), earlier)) {
    std::stable_sort(order.begin(), order.end(), earlier);
    // Out of time order, every event is made now; in order (the usual case), each is made as its
    // request arrives (Arrive), while the memory it is written to is still in the cache.
    for (size_t i = 0; i < arrivals.size(); ++i) MakeEvent(i, arrivals[i]);
  }
  // Arrivals are already in time order: they are fed to the loop as a stream, each taking its
  // place in the (time, sequence) order when the one before it has arrived, so the event queue
  // holds only what is in flight.
  size_t next = 0;
  uint64_t ticket = loop_.TakeTicket();
  while (true) {
    if (next < order.size() && loop_.ComesFirst(arrivals[order[next]].at, ticket)) {
      loop_.RunStreamed(arrivals[order[next]].at);
      Arrive(static_cast<int64_t>(order[next]), arrivals[order[next]]);
      ++next;
      ticket = loop_.TakeTicket();
    } else if (!loop_.RunOne()) {
      break;
    }
  }
  return std::move(history_);
}

}  // namespace ratelab
