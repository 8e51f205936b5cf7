// A base for classes whose objects stand for something that exists once (a process's MPI library, a
// communicator MPI is still using): copying one would duplicate what must not be.
#pragma once

namespace dts {

class NoCopy {
 public:
  NoCopy() = default;
  NoCopy(const NoCopy&) = delete;
  NoCopy& operator=(const NoCopy&) = delete;

 protected:
  ~NoCopy() = default;
};

}  // namespace dts
