#include "train/fmllr.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

// Row-major n x n matrices in double.
using Square = std::vector<double>;

// Inverts m in place by Gauss-Jordan elimination with partial pivoting; log|det m| through
// log_abs_det. False where m is singular.
bool Invert(Square* m, int32_t n, double* log_abs_det = nullptr) {
  Square inv(size_t(n) * size_t(n), 0.0);
  for (int32_t i = 0; i < n; ++i) inv[size_t(i) * n + i] = 1.0;
  Square& a = *m;
  double log_det = 0.0;
  for (int32_t col = 0; col < n; ++col) {
    int32_t pivot = col;
    for (int32_t r = col + 1; r < n; ++r) {
      if (std::abs(a[size_t(r) * n + col]) > std::abs(a[size_t(pivot) * n + col])) pivot = r;
    }
    const double p = a[size_t(pivot) * n + col];
    if (p == 0.0 || !std::isfinite(p)) return false;
    if (pivot != col) {
      for (int32_t c = 0; c < n; ++c) {
        std::swap(a[size_t(pivot) * n + c], a[size_t(col) * n + c]);
        std::swap(inv[size_t(pivot) * n + c], inv[size_t(col) * n + c]);
      }
    }
    log_det += std::log(std::abs(p));
    for (int32_t c = 0; c < n; ++c) {
      a[size_t(col) * n + c] /= p;
      inv[size_t(col) * n + c] /= p;
    }
    for (int32_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = a[size_t(r) * n + col];
      if (f == 0.0) continue;
      for (int32_t c = 0; c < n; ++c) {
        a[size_t(r) * n + c] -= f * a[size_t(col) * n + c];
        inv[size_t(r) * n + c] -= f * inv[size_t(col) * n + c];
      }
    }
  }
  a = std::move(inv);
  if (log_abs_det != nullptr) *log_abs_det = log_det;
  return true;
}

double LogAbsDet(Square m, int32_t n) {
  double log_det = 0.0;
  if (!Invert(&m, n, &log_det)) return -std::numeric_limits<double>::infinity();
  return log_det;
}

std::string Number(double value) {
  std::ostringstream s;
  s << static_cast<float>(value);
  return s.str();
}

// Kaldi's ApproxEqual for floats (relative tolerance 0.001).
bool ApproxEqual(float a, float b) {
  if (a == b) return true;
  const float diff = std::abs(a - b);
  if (!std::isfinite(diff)) return false;
  return diff <= 0.001f * (std::abs(a) + std::abs(b));
}

}  // namespace

// The solver's view of the statistics and the transform, in double.
struct FmllrSolver {
  FmllrStats& stats;
  int32_t dim;
  int32_t cols;  // dim + 1

  double G(int32_t i, int32_t r, int32_t c) const {
    return stats.g_[(size_t(i) * cols + r) * cols + c];
  }
  double K(int32_t i, int32_t c) const { return stats.k_[size_t(i) * cols + c]; }

  double Objective(const std::vector<double>& w) const {
    Square a(size_t(dim) * dim);
    for (int32_t r = 0; r < dim; ++r) {
      for (int32_t c = 0; c < dim; ++c) a[size_t(r) * dim + c] = w[size_t(r) * cols + c];
    }
    double objective = stats.beta_ * LogAbsDet(std::move(a), dim);
    for (int32_t i = 0; i < dim; ++i) {
      const double* wi = &w[size_t(i) * cols];
      for (int32_t c = 0; c < cols; ++c) objective += wi[c] * K(i, c);
      double quadratic = 0.0;
      for (int32_t r = 0; r < cols; ++r) {
        double gw = 0.0;
        for (int32_t c = 0; c < cols; ++c) gw += G(i, r, c) * wi[c];
        quadratic += gw * wi[r];
      }
      objective -= 0.5 * quadratic;
    }
    return objective;
  }

  // Gales' iteration; false where some G_i cannot be inverted.
  bool Full(int32_t num_iters, std::vector<double>* w) const {
    std::vector<Square> inv_g(size_t(dim), Square(size_t(cols) * cols));
    for (int32_t i = 0; i < dim; ++i) {
      for (int32_t r = 0; r < cols; ++r) {
        for (int32_t c = 0; c < cols; ++c) inv_g[size_t(i)][size_t(r) * cols + c] = G(i, r, c);
      }
      if (!Invert(&inv_g[size_t(i)], cols)) return false;
    }
    std::vector<double> cofactor(static_cast<size_t>(cols)), u(static_cast<size_t>(cols)),
        v(static_cast<size_t>(cols));
    for (int32_t iter = 0; iter < num_iters; ++iter) {
      for (int32_t i = 0; i < dim; ++i) {
        // Row i of (A^T)^-1: the cofactors of A's row i, up to det A, which does not matter.
        Square at(size_t(dim) * dim);
        for (int32_t r = 0; r < dim; ++r) {
          for (int32_t c = 0; c < dim; ++c) at[size_t(r) * dim + c] = (*w)[size_t(c) * cols + r];
        }
        if (!Invert(&at, dim)) return false;
        for (int32_t c = 0; c < dim; ++c) cofactor[size_t(c)] = at[size_t(i) * dim + c];
        cofactor[size_t(dim)] = 0.0;
        const Square& ig = inv_g[size_t(i)];
        double e1 = 0.0, e2 = 0.0;
        for (int32_t r = 0; r < cols; ++r) {
          double s = 0.0;
          for (int32_t c = 0; c < cols; ++c) s += ig[size_t(r) * cols + c] * cofactor[size_t(c)];
          u[size_t(r)] = s;
          e1 += s * cofactor[size_t(r)];
          e2 += s * K(i, r);
        }
        // alpha maximises beta log|alpha e1 + e2| - alpha^2 e1 / 2: a root of
        // e1 alpha^2 + e2 alpha - beta = 0.
        const double beta = stats.beta_;
        const double discriminant = std::sqrt(e2 * e2 + 4.0 * e1 * beta);
        const double alpha1 = (-e2 + discriminant) / (2.0 * e1),
                     alpha2 = (-e2 - discriminant) / (2.0 * e1);
        const auto f = [&](double alpha) {
          return beta * std::log(std::abs(alpha * e1 + e2)) - 0.5 * alpha * alpha * e1;
        };
        const double alpha = f(alpha1) > f(alpha2) ? alpha1 : alpha2;
        for (int32_t c = 0; c < cols; ++c) v[size_t(c)] = alpha * cofactor[size_t(c)] + K(i, c);
        for (int32_t r = 0; r < cols; ++r) {
          double s = 0.0;
          for (int32_t c = 0; c < cols; ++c) s += ig[size_t(r) * cols + c] * v[size_t(c)];
          (*w)[size_t(i) * cols + r] = s;
        }
      }
    }
    return true;
  }

  // Each row's scale and offset alone, A kept diagonal.
  void Diagonal(std::vector<double>* w) const {
    for (int32_t i = 0; i < dim; ++i) {
      const double k_ii = K(i, i), k_id = K(i, dim), g_iii = G(i, i, i), g_idd = G(i, dim, dim),
                   g_idi = G(i, dim, i);
      // The row's objective in its scale s, its offset solved for: a s^2/2 + b s + beta log s,
      // maximised where a s^2 + b s + beta = 0 (a < 0: the positive root).
      const double a = g_idi * g_idi / g_idd - g_iii, b = k_ii - g_idi * k_id / g_idd;
      const double s = (-b - std::sqrt(b * b - 4.0 * a * stats.beta_)) / (2.0 * a);
      (*w)[size_t(i) * cols + i] = s;
      (*w)[size_t(i) * cols + dim] = (k_id - s * g_idi) / g_idd;
    }
  }
};

absl::StatusOr<FmllrOptions::Update> ParseFmllrUpdate(absl::string_view name) {
  if (name == "full") return FmllrOptions::Update::kFull;
  if (name == "diag") return FmllrOptions::Update::kDiag;
  if (name == "offset") return FmllrOptions::Update::kOffset;
  if (name == "none") return FmllrOptions::Update::kNone;
  return absl::InvalidArgumentError(
      absl::StrCat("Unknown fMLLR update type ", name,
                   ", fmllr-update-type must be one of \"full\"|\"diag\"|\"offset\"|\"none\""));
}

const char* FmllrUpdateName(FmllrOptions::Update update) {
  switch (update) {
    case FmllrOptions::Update::kFull:
      return "full";
    case FmllrOptions::Update::kDiag:
      return "diag";
    case FmllrOptions::Update::kOffset:
      return "offset";
    case FmllrOptions::Update::kNone:
      return "none";
  }
  return "full";
}

FmllrStats::FmllrStats(int32_t dim)
    : dim_(dim),
      k_(size_t(dim) * size_t(dim + 1), 0.0),
      g_(size_t(dim) * size_t(dim + 1) * size_t(dim + 1), 0.0),
      x_(size_t(dim), 0.0f),
      a_(size_t(dim), 0.0f),
      b_(size_t(dim), 0.0f) {}

void FmllrStats::Commit() {
  if (frame_count_ == 0.0) return;
  const int32_t cols = dim_ + 1;
  std::vector<double> xplus(static_cast<size_t>(cols), 1.0);
  for (int32_t d = 0; d < dim_; ++d) xplus[size_t(d)] = x_[size_t(d)];
  beta_ += frame_count_;
  for (int32_t i = 0; i < dim_; ++i) {
    const double a = a_[size_t(i)], b = b_[size_t(i)];
    double* k = &k_[size_t(i) * cols];
    double* g = &g_[size_t(i) * cols * cols];
    for (int32_t r = 0; r < cols; ++r) {
      k[r] += a * xplus[size_t(r)];
      for (int32_t c = 0; c < cols; ++c) {
        g[size_t(r) * cols + c] += b * (xplus[size_t(r)] * xplus[size_t(c)]);
      }
    }
  }
  frame_count_ = 0.0;
  std::fill(a_.begin(), a_.end(), 0.0f);
  std::fill(b_.begin(), b_.end(), 0.0f);
}

void FmllrStats::AccumulateFromPosteriors(const KaldiStoredGmm& gmm, const float* frame,
                                          const float* posteriors) {
  // Consecutive calls for the same frame (several pdfs of one frame) share its statistics.
  if (!std::equal(x_.begin(), x_.end(), frame)) {
    Commit();
    std::copy_n(frame, dim_, x_.begin());
  }
  float total = 0.0f;
  for (int32_t g = 0; g < gmm.num_gauss(); ++g) total += posteriors[g];
  frame_count_ += total;
  for (int32_t d = 0; d < dim_; ++d) {
    float a = 0.0f, b = 0.0f;
    for (int32_t g = 0; g < gmm.num_gauss(); ++g) {
      a += posteriors[g] * gmm.means_invvars.at(g, d);
      b += posteriors[g] * gmm.inv_vars.at(g, d);
    }
    a_[size_t(d)] += a;
    b_[size_t(d)] += b;
  }
}

float FmllrStats::AccumulateForGmm(const KaldiStoredGmm& gmm, const float* frame, float weight) {
  std::vector<float> posteriors(static_cast<size_t>(gmm.num_gauss()));
  const float loglike = KaldiComponentPosteriors(gmm, frame, posteriors.data());
  for (float& p : posteriors) p *= weight;
  AccumulateFromPosteriors(gmm, frame, posteriors.data());
  return loglike;
}

double FmllrStats::Count() {
  Commit();
  return beta_;
}

absl::Status AccumulateFmllrForUtterance(
    const KaldiStoredModel& model, const Matrix& feats,
    const std::vector<std::vector<std::pair<int32_t, float>>>& pdf_posteriors, FmllrStats* stats) {
  if (feats.cols != stats->dim() || model.dim != stats->dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("features of dimension ", feats.cols, ", the model's is ", model.dim));
  }
  if (pdf_posteriors.size() != size_t(feats.rows)) {
    return absl::InvalidArgumentError(absl::StrCat("Posterior vector has wrong size ",
                                                   pdf_posteriors.size(), " vs. ", feats.rows));
  }
  for (int32_t t = 0; t < feats.rows; ++t) {
    for (const auto& [pdf, weight] : pdf_posteriors[size_t(t)]) {
      if (pdf < 0 || size_t(pdf) >= model.pdfs.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("frame ", t, ": pdf ", pdf, " is not in the model"));
      }
      stats->AccumulateForGmm(model.pdfs[size_t(pdf)], feats.row(t), weight);
    }
  }
  return absl::OkStatus();
}

double FmllrObjective(const Matrix& transform, FmllrStats& stats) {
  stats.Count();  // the frame in hand committed
  const FmllrSolver solver{stats, stats.dim(), stats.dim() + 1};
  std::vector<double> w(transform.data.begin(), transform.data.end());
  return solver.Objective(w);
}

FmllrEstimate EstimateFmllr(const FmllrOptions& options, FmllrStats& stats) {
  const int32_t dim = stats.dim(), cols = dim + 1;
  FmllrEstimate out;
  out.transform = Matrix(dim, cols);
  for (int32_t i = 0; i < dim; ++i) out.transform.at(i, i) = 1.0f;
  out.count = stats.Count();
  if (!(out.count > options.min_count)) {
    out.warnings.push_back("Not updating fMLLR since below min-count: count is " +
                           Number(out.count));
    return out;
  }
  if (options.update == FmllrOptions::Update::kNone) return out;
  const FmllrSolver solver{stats, dim, cols};
  std::vector<double> w(out.transform.data.begin(), out.transform.data.end());
  const float before = static_cast<float>(solver.Objective(w));
  switch (options.update) {
    case FmllrOptions::Update::kFull: {
      if (!solver.Full(options.num_iters, &w)) {
        out.warnings.push_back("fMLLR statistics are singular: not updating the transform");
        return out;
      }
      const float after = static_cast<float>(solver.Objective(w));
      const float change = after - before;
      out.log_lines.push_back("fMLLR objf improvement is " +
                              Number(change / (out.count + 1.0e-10)) + " per frame over " +
                              Number(out.count) + " frames.");
      if (change < 0.0f && !ApproxEqual(after, before)) {
        out.warnings.push_back(
            "No applying fMLLR transform change because objective function did not increase.");
        return out;
      }
      out.objective_change = change;
      break;
    }
    case FmllrOptions::Update::kDiag:
      solver.Diagonal(&w);
      out.objective_change = static_cast<float>(solver.Objective(w)) - before;
      break;
    case FmllrOptions::Update::kOffset: {
      float change = 0.0f;
      for (int32_t i = 0; i < dim; ++i) {
        const double g_dd = solver.G(i, dim, dim), g_id = solver.G(i, i, dim),
                     k_id = solver.K(i, dim);
        const float old_b = static_cast<float>(w[size_t(i) * cols + dim]);
        const float before_i =
            static_cast<float>(-0.5 * old_b * old_b * g_dd - old_b * g_id + old_b * k_id);
        const float b = static_cast<float>((k_id - g_id) / g_dd);
        w[size_t(i) * cols + dim] = b;
        const float after_i = static_cast<float>(-0.5 * b * b * g_dd - b * g_id + b * k_id);
        change += after_i - before_i;
      }
      out.objective_change = change;
      break;
    }
    case FmllrOptions::Update::kNone:
      break;
  }
  for (size_t i = 0; i < w.size(); ++i) out.transform.data[i] = static_cast<float>(w[i]);
  return out;
}

}  // namespace gmmscore
