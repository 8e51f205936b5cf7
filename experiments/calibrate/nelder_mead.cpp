#include "experiments/calibrate/nelder_mead.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/errors.hpp"

namespace dts::exp {
namespace {

using Point = std::vector<double>;

Point clamp(Point x) {
  for (double& v : x) v = std::clamp(v, 0.0, 1.0);
  return x;
}

// a + t (b - a)
Point along(const Point& a, const Point& b, double t) {
  Point p(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) p[i] = a[i] + t * (b[i] - a[i]);
  return clamp(p);
}

}  // namespace

SimplexResult nelder_mead(const std::function<double(const Point&)>& f, Point start, const SimplexOptions& opt) {
  DTS_ASSERT(!start.empty(), "nelder_mead: no parameters");
  const std::size_t n = start.size();
  SimplexResult res;
  const auto eval = [&](const Point& x) {
    ++res.evaluations;
    const double v = f(x);
    return std::isnan(v) ? std::numeric_limits<double>::infinity() : v;
  };
  std::vector<Point> xs{clamp(std::move(start))};
  for (std::size_t i = 0; i < n; ++i) {
    Point p = xs[0];
    // Away from the nearer bound, so that every vertex differs from the start on its axis.
    p[i] += p[i] + opt.step <= 1.0 ? opt.step : -opt.step;
    xs.push_back(clamp(p));
  }
  std::vector<double> fs;
  for (const Point& x : xs) fs.push_back(eval(x));
  std::vector<std::size_t> order(n + 1);
  for (;;) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return fs[a] < fs[b]; });
    const Point& best = xs[order[0]];
    double spread_x = 0;
    for (const Point& x : xs) {
      for (std::size_t i = 0; i < n; ++i) spread_x = std::max(spread_x, std::abs(x[i] - best[i]));
    }
    const double spread_f = fs[order[n]] - fs[order[0]];
    res.x = best;
    res.f = fs[order[0]];
    if (spread_x <= opt.x_tolerance && spread_f <= opt.f_tolerance) {
      res.converged = true;
      return res;
    }
    if (res.evaluations + 2 > opt.max_evaluations) return res;
    const std::size_t worst = order[n];
    Point centroid(n, 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < n; ++i) centroid[i] += xs[order[k]][i] / static_cast<double>(n);
    }
    const Point xr = along(centroid, xs[worst], -1.0);
    const double fr = eval(xr);
    if (fr < fs[order[0]]) {
      const Point xe = along(centroid, xs[worst], -2.0);
      const double fe = eval(xe);
      xs[worst] = fe < fr ? xe : xr;
      fs[worst] = std::min(fe, fr);
      continue;
    }
    if (fr < fs[order[n - 1]]) {
      xs[worst] = xr;
      fs[worst] = fr;
      continue;
    }
    // Contract: outside (toward the reflected point) when it beat the worst, inside otherwise.
    const bool outside = fr < fs[worst];
    const Point xc = along(centroid, outside ? xr : xs[worst], 0.5);
    const double fc = eval(xc);
    if (fc < (outside ? fr : fs[worst])) {
      xs[worst] = xc;
      fs[worst] = fc;
      continue;
    }
    // Shrink toward the best.
    const Point keep = xs[order[0]];
    for (std::size_t k = 1; k <= n; ++k) {
      if (res.evaluations >= opt.max_evaluations) break;
      xs[order[k]] = along(keep, xs[order[k]], 0.5);
      fs[order[k]] = eval(xs[order[k]]);
    }
  }
}

}  // namespace dts::exp
