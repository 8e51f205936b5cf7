// Nelder-Mead simplex minimisation (Nelder & Mead 1965; the coefficients of Lagarias et al. 1998: reflection 1,
// expansion 2, contraction 1/2, shrink 1/2) over the unit box [0, 1]^n: `dtsim calibrate` maps each free
// parameter onto [0, 1] (linearly or by its logarithm), and a point outside the box is clamped onto it before
// `f` sees it. Deterministic: the same f gives the same sequence of points.
#pragma once

#include <functional>
#include <vector>

namespace dts::exp {

struct SimplexOptions {
  double step = 0.15;          // the initial simplex: start, and start moved by `step` along each axis
  int max_evaluations = 200;   // f is called at most this often
  double x_tolerance = 1e-4;   // converged when every vertex lies within this of the best, on every axis,
  double f_tolerance = 1e-10;  // and the simplex's values within this of the best
};

struct SimplexResult {
  std::vector<double> x;  // the best point (in the box)
  double f = 0;
  int evaluations = 0;
  bool converged = false;  // false: stopped at max_evaluations
};

SimplexResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> start,
                          const SimplexOptions& opt = {});

}  // namespace dts::exp
