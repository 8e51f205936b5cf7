// The Comm conformance suite (tests/conformance/comm_conformance.hpp) on MpiComm/MpiNode, under
// `mpirun -np 4 test_realexec_conformance [CASE]`. Every rank runs each case on a fresh MpiComm; rank 0
// gathers the facts, runs the same checker as the simulator's test and prints one line per case. The exit
// code (0: all conform) is the same on every rank. An exception in a case ends the job (MPI_Abort).
#include <chrono>
#include <cstdio>
#include <string>

#include "realexec/mpi_comm.hpp"
#include "realexec/mpi_node.hpp"
#include "tests/conformance/comm_conformance.hpp"

int main(int argc, char** argv) {
  using dts::conformance::kRanks;
  try {
    dts::mpi::MpiSession session;
    const int rank = session.rank();
    if (session.size() != kRanks) {
      if (rank == 0) std::fprintf(stderr, "run under mpirun -np %d (this job has %d ranks)\n", kRanks, session.size());
      return 2;
    }
    int failed = 0, ran = 0;
    for (const auto& c : dts::conformance::cases()) {
      if (argc > 1 && c.name != argv[1]) continue;
      ++ran;
      const auto t0 = std::chrono::steady_clock::now();
      nlohmann::json facts = nlohmann::json::object();
      {
        dts::mpi::MpiComm comm(session);
        dts::mpi::MpiNode node(rank);
        try {
          c.body(comm, node, facts);
        } catch (const std::exception& e) {
          dts::mpi::MpiSession::abort_job("rank " + std::to_string(rank) + ": case " + c.name + ": " + e.what(), 1);
        }
        comm.quiesce();
      }
      const auto all = session.gather_on_root(facts.dump());
      if (rank != 0) continue;
      nlohmann::json per_rank = nlohmann::json::array();
      for (const auto& s : all) per_rank.push_back(nlohmann::json::parse(s));
      const std::string why = c.check(per_rank);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%s %-22s %7.1f ms  %s\n", why.empty() ? "PASS" : "FAIL", c.name.c_str(), ms, c.what.c_str());
      if (!why.empty()) {
        ++failed;
        std::printf("     %s\n     facts: %s\n", why.c_str(), per_rank.dump().c_str());
      }
      std::fflush(stdout);
    }
    if (rank == 0) std::printf("%d of %d cases conform\n", ran - failed, ran);
    std::fflush(stdout);
    return session.max_over_ranks(failed > 0 || ran == 0 ? 1 : 0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
