// Micro-benchmark of the shared GCRA table (not a test; timings are never asserted):
//   bazel run -c opt //test/filters/rate_limit:gcra_bench
// ns per admit() for an existing key (the hot path), for 100,000 keys in turn, and for new
// keys (insertion and eviction), with 1 and 2 threads.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "filters/rate_limit/gcra.h"

using sluice::filters::rate_limit::GcraTable;

namespace {

template <typename Fn>
double nsPerOp(int threads, int ops, Fn fn) {
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { fn(t, ops); });
  for (auto& t : ts) t.join();
  double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  return ns / ops;  // wall time per op of one thread
}

}  // namespace

int main() {
  constexpr int kOps = 2000000;
  std::vector<std::string> keys;
  for (int i = 0; i < 100000; ++i)
    keys.push_back("10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256));
  for (int threads : {1, 2}) {
    GcraTable hot(1000, 1000000000, 100000);  // never denies
    double one = nsPerOp(threads, kOps, [&](int, int n) {
      for (int i = 0; i < n; ++i) hot.admit("10.0.0.1", GcraTable::nowNs());
    });
    GcraTable many(1000, 1000000000, 100000);
    double spread = nsPerOp(threads, kOps, [&](int t, int n) {
      for (int i = 0; i < n; ++i)
        many.admit(keys[(i + t * 50000) % keys.size()], GcraTable::nowNs());
    });
    GcraTable small(1000000, 1, 1000);
    double fresh = nsPerOp(threads, kOps / 4, [&](int t, int n) {
      std::string k;
      for (int i = 0; i < n; ++i) {
        k = std::to_string(t) + "-" + std::to_string(i);
        small.admit(k, GcraTable::nowNs());
      }
    });
    GcraTable denied(1000000000, 1, 1000);
    denied.admit("x", GcraTable::nowNs());
    double deny = nsPerOp(threads, kOps, [&](int, int n) {
      for (int i = 0; i < n; ++i) denied.admit("x", GcraTable::nowNs());
    });
    std::printf(
        "%d thread(s): one hot key %.0f ns, 100k keys %.0f ns, new keys %.0f ns, "
        "denied %.0f ns per admit (wall, per thread)\n",
        threads, one, spread, fresh, deny);
  }
  return 0;
}
