// jemalloc's options for dtsim, read at its first allocation (compiled only when dtsim links jemalloc).
// dirty_decay_ms:-1: freed pages stay with the process, as glibc keeps them under run_simulation's mallopt. By
// default jemalloc gives them back after a delay and faults them in again at the next use, which doubled the
// MPI backend's 16 MB allreduce (`dtsim bench allreduce`: 7.4 ms against 3.7).
extern "C" {
// NOLINTNEXTLINE: the name and type jemalloc looks for
extern const char* malloc_conf;
const char* malloc_conf = "dirty_decay_ms:-1";
}
