// BIDMach's allreduce round over one line of its grid (papers/bidmach.md §3-4): a direct scatter-reduce then
// allgather among the p members of the line, every step on a quorum. The vector of n floats is cut into p
// blocks (block b, of ceil(n / p) floats, the last shorter, is member b's) and each block into chunks of at
// most chunk_floats. Each member sends block b's chunks to member b (members in the staggered order me + 1,
// me + 2, ...); member b reduces its chunk c to the MEAN of the contributions it holds (its own always among
// them) once it holds floor(reduce * p) of them, and sends the mean to every member; a member completes once it
// holds floor(complete * total chunks) reduced chunks (its own included). The output takes every reduced chunk
// that never arrived from the member's own copy (the code's rule, §3.2). After completing, a member still
// reduces and sends the chunks of its block that it has not reduced yet, as contributions arrive, until all are
// (then the round retires), or until force() reduces them with what has arrived (FORCE_COMPLETE).
// Means sum the contributions in member order and multiply by 1 / count, so results are reproducible bit for bit
// on both backends. Messages carry the round beside the two tags; a member's late messages of a round that is
// gone wait as unexpected until the receiver drops the round (Comm::drop_stale). In modeled numerics a backend may
// time the round as a whole instead of its messages (CollectiveEngine::line_round, algorithms/api/line_round.hpp:
// the simulator's collective fidelity on large lines); the quorums then count blocks, each block's chunks at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/compute.hpp"
#include "algorithms/api/group.hpp"
#include "algorithms/api/line_round.hpp"
#include "algorithms/api/reactor.hpp"

namespace dts::collectives {

struct QuorumConfig {
  double reduce = 1;    // theta_r: fraction of the line's members whose contribution a chunk's mean waits for
  double complete = 1;  // theta_c: fraction of all reduced chunks a member waits for before completing
  std::size_t chunk_floats = 20000;  // floats per message (BIDMach's maxChunkSize)
};

struct QuorumTags {
  Tag scatter = 0, reduce = 0;
};

// A round's payload-sized buffers: my contribution and its working buffers. A caller that runs round after round
// hands a finished round's buffers to the next (QuorumRound::take_buffers): fresh ones, which the kernel zeroes
// at first touch, cost more than a round's messages above a few MB.
struct QuorumBuffers {
  Vec data, contributions, out;
  // `spare` (one of these, moved from) where it has `count` floats of the same kind, else a new vector.
  static Vec reuse(Vec& spare, std::size_t count, bool real) {
    return spare.count() == count && spare.real() == real ? std::move(spare) : Vec(count, real);
  }
};

// What one member's round did.
struct QuorumCounts {
  std::size_t chunks = 0;         // chunks over all p blocks
  std::size_t short_reduced = 0;  // chunks of my block reduced from fewer than p contributions
  std::size_t missing = 0;        // chunks my output took from my own copy
  bool forced = false;            // force() ran before the round retired
};

class QuorumRound {
 public:
  using Complete = std::function<void(ConstSlice out)>;
  // `data`: my contribution (BIDMach's fetched model), kept with the round's buffers until the round is
  // destroyed; it must outlive the round's sends (drained()). `modeled_bytes`: the bytes charged for a message of
  // all n floats, proportionally for a chunk (default 4 per float). `compute`: charged the reductions (may be null).
  // `spare`: an earlier round's buffers (their data unused: `data` is the contribution), reused where they fit.
  QuorumRound(Comm& comm, Compute* compute, const Group& line, QuorumTags tags, Round round, const QuorumConfig& cfg,
              Vec data, std::optional<std::uint64_t> modeled_bytes, Complete on_complete, QuorumBuffers spare = {});
  QuorumRound(const QuorumRound&) = delete;
  QuorumRound& operator=(const QuorumRound&) = delete;

  // Sends my blocks and posts the receives on `reactor`, whose handlers then drive the round; on_complete runs
  // inside one of them (or inside start or force) with the output, which stays valid only during the call.
  void start(Reactor& reactor);
  // Reduces and sends every chunk of my block not yet reduced with the contributions that have arrived,
  // completes if the round has not, and cancels the round's receives.
  void force();

  Round round() const { return round_; }
  bool completed() const { return completed_; }
  bool retired() const { return retired_; }
  // Whether every send has completed; the round may be destroyed then, not before (its sends' handlers are on
  // the reactor until they complete).
  bool drained() const;
  // Once retired and drained: the round's buffers, for another round (this one keeps none).
  QuorumBuffers take_buffers();
  const QuorumCounts& counts() const { return counts_; }

  // Block b's floats [offset, offset + count) of the p-way split of n.
  static Chunk block(std::size_t n, int p, int b);

 private:
  Chunk chunk(int b, std::size_t c) const;  // chunk c of block b
  // The bytes charged for a message of `count` floats (SendOptions::modeled_bytes): a share of modeled_bytes_.
  std::optional<std::uint64_t> charged_bytes(std::size_t count) const;
  std::size_t chunks(int b) const;
  void send(int member, Tag tag, ConstSlice part);
  void pump(int member);
  void post_scatter(int k);
  void post_reduce(int k);
  void on_scatter(int k, std::size_t c, const Comm::Completion& got);
  void on_reduce(int k, std::size_t c, const Comm::Completion& got);
  void reduce(std::size_t c);
  void check_complete();
  void complete();
  void check_retired();
  // The round through a backend's line round (part_; quorum_round_flows.cpp).
  void start_flows();
  void post_reduce_due();
  void reduce_group(std::size_t quorum);
  void complete_flows(std::size_t quorum);
  // What arrives from one member in one direction: chunks posted so far (in order), those pending and their
  // tickets, those received, and (scatter) how many of them, in order, are counted toward the quorums.
  struct Inbound {
    std::size_t posted = 0, counted = 0;
    int outstanding = 0;
    bool failed = false;
    std::vector<bool> got;
    std::vector<Reactor::Ticket> tickets;  // per chunk; 0: none pending
    void resize(std::size_t chunks) {
      got.assign(chunks, false);
      tickets.assign(chunks, 0);
    }
  };
  void cancel_receives(std::vector<Inbound>& from);

  Comm& comm_;
  Compute* compute_;
  Group line_;
  QuorumTags tags_;
  Round round_;
  QuorumConfig cfg_;
  Vec data_, contributions_, out_;  // contributions_: member k's part of my block at k * my block's size
  std::optional<std::uint64_t> modeled_bytes_;
  Complete on_complete_;
  Reactor* reactor_ = nullptr;
  int p_, me_;
  std::size_t n_, need_reduce_, need_complete_;
  std::vector<Inbound> scatter_in_, reduce_in_;  // per member: my block's chunks from it; its block's reduced ones
  std::vector<int> have_;                        // per chunk of my block: contributions held
  std::vector<bool> reduced_;
  std::size_t mine_reduced_ = 0, received_ = 0;
  static constexpr int kWindow = 2;
  struct Outgoing {
    Tag tag;
    ConstSlice part;
  };
  std::vector<std::deque<Outgoing>> outbox_;  // per member: messages not yet sent
  std::vector<int> in_flight_;                // per member: sends not yet complete
  std::size_t sending_ = 0;                   // sends queued or in flight

  bool completed_ = false, retired_ = false;
  QuorumCounts counts_;
  std::unique_ptr<LineRoundPart> part_;  // set: the backend times the round (its quorums' requests below)
  Reactor::Ticket reduce_due_ = 0, complete_due_ = 0;
  std::size_t reduced_group_ = 0;  // the groups of my block reduced, in order
};

// One round, blocking, among the members of `line` (the caller among them): `data` holds my contribution and
// receives the output. Afterwards the rounds up to `round` of the two tags are given up (Comm::drop_stale).
// `buffers`: kept from call to call by a caller that makes many (reused where they fit, then replaced).
QuorumCounts quorum_allreduce(Comm& comm, Compute* compute, const Group& line, Slice data, QuorumTags tags, Round round,
                              const QuorumConfig& cfg, std::optional<std::uint64_t> modeled_bytes = std::nullopt,
                              QuorumBuffers* buffers = nullptr);

}  // namespace dts::collectives
