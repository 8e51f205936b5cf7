/* The SMPI side of `dtsim bench scale`: MPI_Allreduce of BYTES of floats (SMPI_SHARED_MALLOC: every rank
 * shares one buffer, so the sums are garbage and the memory is one copy), one warm-up call, then CALLS calls.
 * Rank 0 prints the simulated seconds per call (MPI_Wtime) and the wall seconds per call (the raw
 * clock_gettime system call: SMPI redirects the libc time functions to simulated time).
 * Usage: smpirun ... ./smpi_allreduce BYTES CALLS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double wall_s(void) {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const size_t count = (size_t)(atof(argv[1]) / sizeof(float));
  const int calls = atoi(argv[2]);
  float* in = (float*)SMPI_SHARED_MALLOC(count * sizeof(float));
  float* out = (float*)SMPI_SHARED_MALLOC(count * sizeof(float));
  MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const double w0 = wall_s(), t0 = MPI_Wtime();
  for (int i = 0; i < calls; ++i) MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const double t1 = MPI_Wtime(), w1 = wall_s();
  if (rank == 0) printf("dts_smpi sim_per_call %.12g wall_per_call %.9g\n", (t1 - t0) / calls, (w1 - w0) / calls);
  SMPI_SHARED_FREE(in);
  SMPI_SHARED_FREE(out);
  MPI_Finalize();
  return 0;
}
