/* Small ping-pong between ranks 0 and 1 for scripts/validation/calibrate (a trimmed-down
 * ../../../shared/peers/mpi_pingpong.c: sizes stop at 4 MiB so that a 100 Mbit/s link takes seconds,
 * not minutes). Prints "bytes oneway_median_s" per size; one-way = round trip / 2.
 *   mpicc -O2 pingpong.c -o pingpong && mpirun -np 2 ./pingpong */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long sizes[] = {8, 1024, 65536, 1048576, 4194304};
  const int ns = 5, reps = 5;
  char *buf = malloc(sizes[ns - 1]);
  memset(buf, rank, sizes[ns - 1]);
  for (int s = 0; s < ns; s++) {
    const long b = sizes[s];
    const int iters = b <= 1024 ? 200 : (b <= 65536 ? 20 : 2);
    double t[5];
    for (int r = -1; r < reps; r++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < iters && rank < 2; i++) {
        if (rank == 0) {
          MPI_Send(buf, (int)b, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, (int)b, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
          MPI_Recv(buf, (int)b, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, (int)b, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
      }
      if (r >= 0) t[r] = (MPI_Wtime() - t0) / iters / 2;
    }
    qsort(t, reps, sizeof(double), cmpd);
    if (rank == 0) printf("%ld %.9g\n", b, t[reps / 2]);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
