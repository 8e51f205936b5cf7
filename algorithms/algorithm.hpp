// What every training algorithm receives, and the registry that maps experiment names to algorithms.
// An algorithm is a function run once per rank, as straight-line blocking code against the seam.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/api/comm.hpp"
#include "algorithms/api/compute.hpp"
#include "algorithms/api/node.hpp"
#include "algorithms/api/recorder.hpp"
#include "algorithms/api/scenario.hpp"
#include "core/config_reader.hpp"

namespace dts {

struct Context {
  Comm& comm;
  Compute& compute;
  Node& node;
  Recorder& recorder;
  int workers = 1;         // training workers (ranks may include servers besides them)
  std::int64_t steps = 1;  // local training steps per worker
  // Membership (a scenario's joins and leaves, set by enter_run; only algorithms with AlgorithmSpec::membership
  // see any): whether some rank joins or leaves during the run, the ranks that join, ascending (their main starts
  // at their join time, the others' at 0), and when this rank is to leave (it ends cleanly as soon as it can
  // after; never: kForever).
  bool membership_changes = false;
  std::vector<Rank> joining = {};
  double leave_at_s = kForever;
  // Added for MPCA's recovery (issue 18): a scenario failure of this rank with restart_after_s (algorithms with
  // AlgorithmSpec::restarts): the rank loses its state at its first safe point at or after crash_at_s and is
  // back restart_after_s after crash_at_s (never: kForever).
  double crash_at_s = kForever;
  double restart_after_s = 0;
};

using RankMain = std::function<void(Context&)>;

// What every backend does before an algorithm's main: fills ctx's membership from the scenario (null: none)
// and, on a rank that joins, lets (simulated or wall) time pass until its join.
void enter_run(Context& ctx, const Scenario* scenario);

struct AlgorithmSpec {
  std::string name;
  std::string summary;
  // Ranks needed for `workers` training workers (a parameter server or EASGD center adds ranks), which may
  // depend on the algorithm's keys (a parameter server on machines of its own). Called before configure.
  std::function<int(ConfigReader& reader, int workers)> ranks;
  // Reads the algorithm's own keys (strictly, defaults recorded in reader.resolved()) and returns the code
  // every rank runs. Keys common to all algorithms (name, workers, batch_size, optimizer) are read by the
  // runner before.
  std::function<RankMain(ConfigReader& reader, int workers)> configure;
  // Whether ranks may join and leave during the run (a scenario's joins and leaves; README "Scenarios").
  bool membership = false;
  // Added for AGD (issue 16): a factor on the optimizer's learning rate for `workers` workers, read from the
  // algorithm's keys after configure (AGD's lr x sqrt(P)); null: 1. The runner multiplies optimizer.lr by it,
  // so config.resolved.json records the rate in effect.
  std::function<double(ConfigReader& reader, int workers)> lr_factor = nullptr;
  // Added for MPCA's recovery (issue 18): whether rank 0 may fail and restart (a failure with restart_after_s;
  // README "Scenarios"): the algorithm then models the crash and the restart itself (Context::crash_at_s).
  bool restarts = false;
};

// Throws ConfigError naming `where` on an unknown name.
const AlgorithmSpec& find_algorithm(const std::string& name, const std::string& where);
std::vector<std::string> algorithm_names();

// The tags of the algorithms, one per kind of message, all different so that a trace tells them apart. The
// round of an exchange travels beside the tag (SendOptions::round), never in it. A collective uses the one tag
// it is given for all its messages. The MPI backend carries tags below 4096 (realexec/tag_codec.hpp).
namespace tags {
enum : Tag {
  kCollective = 1,
  kEasgdUp,               // asynchronous EASGD: worker -> center, W^i
  kEasgdDown,             //   center -> worker, W~
  kEasgdDone,             //   worker -> center, no more exchanges
  kEasgdOriginalCenter,   // original EASGD: master -> worker j, W~ (worker j's turn)
  kEasgdOriginalWeights,  //   worker j -> master, W^j
  kEasgdHogwildUp,        // Hogwild EASGD: as asynchronous EASGD
  kEasgdHogwildDown,
  kEasgdHogwildDone,
  kEasgdSyncBroadcast,  // synchronous EASGD: W~_t, master -> everyone
  kEasgdSyncReduce,     //   sum_i W^i_t, everyone -> master
  kAsyncSgdUp,          // asynchronous SGD: dW_i up, W down, done
  kAsyncSgdDown,
  kAsyncSgdDone,
  kHogwildSgdUp,  // Hogwild SGD: dW_i up, W down, done
  kHogwildSgdDown,
  kHogwildSgdDone,
  kSyncSgdReduce,     // synchronous SGD: sum_i dW_i, everyone -> master
  kSyncSgdBroadcast,  //   W, master -> everyone
  kGossip,            // gossip SGD: the pairwise exchange
  kGossipAverage,     //   the final tree allreduce
  // The gossip family of issue 16 (algorithms/gossip_family.hpp).
  kGossipModel,        // a model, pairwise or one-way (Elastic Gossip, pull, push, GoSGD)
  kGossipBarrier,      //   global mode: the barrier of every update
  kGossipChoices,      //   global mode: the all_gather of the choices
  kGossipRequest,      //   async rendezvous: initiator -> peer
  kGossipReply,        //   async rendezvous: peer -> initiator
  kGossipDone,         //   async rendezvous: no more requests from this worker
  kGossipCounts,       //   async one-way: the allreduce of the message counts
  kGosgdWeight,        // GoSGD: the push-sum weight sent with a model
  kGossipGrad,         // GossipGraD: the model exchange (weights + optimizer state, one message)
  kGossipGradShuffle,  //   the ring sample shuffle
  kGossipGradAverage,  //   the final tree allreduce
  kAgdLayer,           // AGD: one layer's gradient allreduce
  kAgdAverage,         //   AGD every k steps: the weights' allreduce
  // MXNet-style parameter server (issue 17)
  kPsPush,   // worker -> server: its gradient's pieces on that server, packed
  kPsPull,   //   server -> worker: the pieces' updated values
  kPsFinal,  //   ps_async, server -> rank 0: the pieces' final values
  // BIDMach's grid (issue 17, algorithms/bidmach): per dimension (row, column) of the grid.
  kBidmachScatterRow,  // a round's scatter chunks, member -> member
  kBidmachScatterColumn,
  kBidmachReduceRow,  //   its reduced chunks, member -> every member
  kBidmachReduceColumn,
  kBidmachStartRow,  //   LineMaster -> member: start round r, or stop
  kBidmachStartColumn,
  kBidmachCompleteRow,  //   member -> LineMaster: round r complete
  kBidmachCompleteColumn,
  kBidmachDoneRow,  //   member -> LineMaster: my learner is done
  kBidmachDoneColumn,
  kBidmachAverage,    //   the final tree allreduce
  kBidmachGrid,       //   node -> GridMaster: joined, leaving, learner done, loops stopped (a changing membership)
  kBidmachConfigRow,  //   GridMaster -> node's dimension: its line from a new version on, out, or the end
  kBidmachConfigColumn,
  kBidmachFinal,  //   GridMaster -> node: the members of the final average
  // MPCA SGD (issue 18, algorithms/mpca)
  kMpcaJob,            // driver -> worker: a cycle's job (shards to reduce and to download, alpha) or stop
  kMpcaReduce,         //   the weighted binary tree reduce of one shard, up to the driver
  kMpcaBroadcast,      //   the swarm broadcast of one extrapolated shard
  kMpcaDone,           //   worker -> driver: my last step is taken
  kSparknetBroadcast,  // SparkNet-style averaging: x~, driver -> workers (swarm broadcast)
  kSparknetReduce,     //   the workers' models, up the binary tree
  // BIDMach's grid beyond two dimensions (dims 3 and 4): dimensions 2 and 3, six tags each, as the row's and the
  // column's above (scatter, reduce, start, complete, done, config; bidmach::dim_tags).
  kBidmachHigherDims,
  kBidmachHigherDimsEnd = kBidmachHigherDims + 12,
  kMicrobench,  // microbench (issue 19): a pair's messages
};
}  // namespace tags

}  // namespace dts
