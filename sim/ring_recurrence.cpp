// ring_recurrence: the ring pipeline's timing, in cache-sized blocks of members and bands of steps.
#include "sim/ring_recurrence.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

// advance() in the widest vectors the machine has, chosen when the program is loaded (an ifunc): 0.17 s
// instead of 0.21 at 16,384 members here (AVX-512). Not under ThreadSanitizer, whose instrumented resolver runs
// before its runtime is up and crashes the program at load.
#if defined(__SANITIZE_THREAD__)
#define DTS_NO_CLONES
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DTS_NO_CLONES
#endif
#endif
#ifdef DTS_NO_CLONES
#define DTS_VECTOR_CLONES
#else
#define DTS_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

namespace dts::sim {
namespace {

constexpr std::size_t kBlock = 1024;  // members per block
constexpr std::size_t kBand = 128;    // steps per band, and the halo a block recomputes on its left
// A block's working set: its members and halo, two step buffers and four figures each, 54 KiB (L1 and L2:
// fastest here of 256-4096 members and 32-128 steps).

struct Figures {
  const double *ws, *wb, *as, *ab;
};

// One step for entries [from, to) of a run of consecutive members (from >= 1): nxt[j] from cur[j] and its left
// neighbour cur[j - 1]. Entry j sends chunk (chunk + j) mod p, a big one below `extra`; entry j adds what entry
// j - 1 sent. The entries split into at most five runs whose own and left chunks keep their sizes, and the
// loops over a run have no branch (vectorized).
DTS_VECTOR_CLONES void advance(const double* cur, double* nxt, std::size_t from, std::size_t to, std::size_t chunk,
                               std::size_t p, std::size_t extra, bool adds, const Figures& f) {
  const auto big = [&](std::size_t j) { return (chunk + j) % p < extra; };
  const std::size_t wrap = (p - chunk) % p, edge = (extra + p - chunk) % p;  // entries that send chunks 0, extra
  std::size_t cuts[6] = {from, to, wrap, wrap + 1, edge, edge + 1};
  std::sort(std::begin(cuts), std::end(cuts));
  for (std::size_t k = 0; k + 1 < 6; ++k) {
    const std::size_t b = std::clamp(cuts[k], from, to), e = std::clamp(cuts[k + 1], from, to);
    if (b >= e) continue;
    const double* wire = big(b) ? f.wb : f.ws;
    const double* wire_left = big(b - 1) ? f.wb : f.ws;
    const double* add = big(b - 1) ? f.ab : f.as;
    if (adds) {
      for (std::size_t j = b; j < e; ++j)
        nxt[j] = std::max(std::max(cur[j], cur[j - 1] + wire_left[j - 1]) + add[j], cur[j] + wire[j]);
    } else {
      for (std::size_t j = b; j < e; ++j)
        nxt[j] = std::max(std::max(cur[j], cur[j - 1] + wire_left[j - 1]) + 0.0, cur[j] + wire[j]);
    }
  }
}

// Every member, one step at a time: for rings small enough to stay in the cache.
void whole(std::vector<double>& start, const RingFigures& rf, std::span<const RingStep> steps, std::size_t extra) {
  const std::size_t p = start.size();
  const Figures f{rf.wire_small.data(), rf.wire_big.data(), rf.add_small.data(), rf.add_big.data()};
  std::vector<double> other(p);
  double* cur = start.data();
  double* nxt = other.data();
  for (const RingStep& s : steps) {
    // Member 0 receives from member p - 1.
    const bool left_big = (s.chunk0 + p - 1) % p < extra, own_big = s.chunk0 % p < extra;
    const double received = std::max(cur[0], cur[p - 1] + (left_big ? f.wb : f.ws)[p - 1]);
    nxt[0] = std::max(received + (s.adds ? (left_big ? f.ab : f.as)[0] : 0.0), cur[0] + (own_big ? f.wb : f.ws)[0]);
    advance(cur, nxt, 1, p, s.chunk0, p, extra, s.adds, f);
    std::swap(cur, nxt);
  }
  if (cur != start.data()) std::copy(cur, cur + p, start.data());
}

}  // namespace

void ring_recurrence(std::vector<double>& start, const RingFigures& rf, std::span<const RingStep> steps,
                     std::size_t extra) {
  const std::size_t p = start.size();
  if (p < 4 * (kBlock + kBand)) {
    whole(start, rf, steps, extra);
    return;
  }
  // Bands of kBand steps; in each, every block of kBlock members with the kBand members on its left (entry j
  // is member (first + j) mod p): after t steps entries t.. are right, so after the band the block's own are.
  constexpr std::size_t kLocal = kBand + kBlock;
  std::vector<double> cur(kLocal), nxt(kLocal), ws(kLocal), wb(kLocal), as(kLocal), ab(kLocal);
  const Figures f{ws.data(), wb.data(), as.data(), ab.data()};
  std::vector<double> out(p);
  for (std::size_t s0 = 0; s0 < steps.size(); s0 += kBand) {
    const std::span<const RingStep> band = steps.subspan(s0, std::min(kBand, steps.size() - s0));
    for (std::size_t b = 0; b < p; b += kBlock) {
      const std::size_t members = std::min(kBlock, p - b), local = kBand + members;
      const std::size_t first = (b + p - kBand) % p;
      for (std::size_t j = 0; j < local; ++j) {
        const std::size_t m = (first + j) % p;
        cur[j] = start[m];
        ws[j] = rf.wire_small[m];
        wb[j] = rf.wire_big[m];
        as[j] = rf.add_small[m];
        ab[j] = rf.add_big[m];
      }
      double* c = cur.data();
      double* n = nxt.data();
      for (std::size_t t = 0; t < band.size(); ++t) {
        advance(c, n, t + 1, local, (band[t].chunk0 + first) % p, p, extra, band[t].adds, f);
        std::swap(c, n);
      }
      std::copy(c + kBand, c + local, out.begin() + static_cast<std::ptrdiff_t>(b));
    }
    start.swap(out);
  }
}

}  // namespace dts::sim
