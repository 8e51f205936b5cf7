// Internal to kernels/ref: the inner loops the reference kernels are built from, BLAS-style with an
// increment for the strided operand. dot keeps 8 partial sums, a fixed summation order that compilers
// vectorise without -ffast-math; the axpy forms have no reduction and vectorise when contiguous.
// Plain loops still, only arranged so that the reference MLP and LeNet train at a usable speed in tests.
#pragma once

namespace dts::kernels::ref::detail {

// sum over i < n of a[i] * b[i * incb]
template <typename T>
T dot(const T* a, const T* b, int n, int incb = 1) {
  T acc[8] = {};
  int i = 0;
  if (incb == 1) {
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  } else {
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[(i + k) * incb];
  }
  T sum = 0;
  for (; i < n; ++i) sum += a[i] * b[i * incb];
  for (int k = 0; k < 8; ++k) sum += acc[k];
  return sum;
}

// y[i] += alpha * x[i * incx] for i < n
template <typename T>
void axpy(T* y, T alpha, const T* x, int n, int incx = 1) {
  if (incx == 1) {
    for (int i = 0; i < n; ++i) y[i] += alpha * x[i];
  } else {
    for (int i = 0; i < n; ++i) y[i] += alpha * x[i * incx];
  }
}

// y[i * incy] += alpha * x[i] for i < n
template <typename T>
void axpy_scatter(T* y, int incy, T alpha, const T* x, int n) {
  if (incy == 1) {
    axpy(y, alpha, x, n);
  } else {
    for (int i = 0; i < n; ++i) y[i * incy] += alpha * x[i];
  }
}

}  // namespace dts::kernels::ref::detail
