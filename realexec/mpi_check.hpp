// Turning MPI return codes into exceptions (STYLE.md §8): DTS_MPI_CHECK(call) throws dts::CommError with
// file:line, the call and MPI_Error_string's message. It only sees errors when the communicator's error
// handler is MPI_ERRORS_RETURN (MpiSession and the engine set it); with the default handler MPI aborts first.
// Internal to realexec/: this is the one header that includes <mpi.h>.
#pragma once

#include <mpi.h>

#include <string>

#include "core/errors.hpp"

namespace dts::mpi {

inline void check(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw CommError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + std::string(msg, len));
}

}  // namespace dts::mpi

#define DTS_MPI_CHECK(call) ::dts::mpi::check((call), #call, __FILE__, __LINE__)
