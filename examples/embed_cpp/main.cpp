// Sparse SGD, sparse Adam and csr·dense from C++, through a library made by `sparsegen export`.
//
// The program owns its data (std::vector), hands it to the kernels as DLTensors (no copies: the
// kernels write the vectors in place), and checks every result against values it computes itself.
// Usage: embed_demo path/to/libsparsegen_kernels.so   (run.sh builds and runs it)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sparsegen_kernels.h"

namespace {

template <typename T>
DLDataType dl_dtype();
template <>
DLDataType dl_dtype<float>() { return DLDataType{kDLFloat, 32, 1}; }
template <>
DLDataType dl_dtype<int64_t>() { return DLDataType{kDLInt, 64, 1}; }

// A C-contiguous CPU array and the DLTensor that describes it.
template <typename T>
struct Array {
  std::vector<int64_t> shape;
  std::vector<T> values;
  DLTensor tensor{};

  Array(std::vector<int64_t> dims, std::vector<T> data)
      : shape(std::move(dims)), values(std::move(data)) {}

  DLTensor* dl() {
    tensor = DLTensor{values.data(), DLDevice{kDLCPU, 0}, static_cast<int32_t>(shape.size()),
                      dl_dtype<T>(), shape.data(), nullptr, 0};
    return &tensor;
  }
  T& at(int64_t row, int64_t col) { return values[row * shape[1] + col]; }
};

Array<float> matrix(int64_t rows, int64_t cols, float scale, float shift) {
  std::vector<float> v(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) {
    v[i] = scale * static_cast<float>((i * 7919) % 23) + shift;
  }
  return Array<float>({rows, cols}, v);
}

std::string last_error() {
  char buffer[2048];
  return sparsegen_kernels_last_error(buffer, sizeof(buffer));
}

void require(int status, const char* what) {
  if (status != 0) {
    std::fprintf(stderr, "FAILED %s: %s\n", what, last_error().c_str());
    std::exit(1);
  }
}

int compared = 0;

void expect_close(double got, double want, const char* what, int64_t i, int64_t j) {
  ++compared;
  if (!(std::fabs(got - want) <= 1e-5 * (1.0 + std::fabs(want)))) {
    std::fprintf(stderr, "FAILED %s [%lld, %lld]: got %.9g, expected %.9g\n", what,
                 static_cast<long long>(i), static_cast<long long>(j), got, want);
    std::exit(1);
  }
}

double clip(double x, double bound) { return x > bound ? bound : (x < -bound ? -bound : x); }

const int64_t kRows = 9, kCols = 19;  // 19 columns: the kernels' vector steps and scalar tail
const std::vector<int64_t> kGradRows = {0, 3, 4, 8};

bool in_grad(int64_t row, int64_t* position) {
  for (size_t p = 0; p < kGradRows.size(); ++p) {
    if (kGradRows[p] == row) { *position = static_cast<int64_t>(p); return true; }
  }
  return false;
}

// weight = (1 - lr*wd) * weight - lr * clip(rescale * grad) on the gradient's rows only.
void sparse_sgd(const sparsegen_kernels_library* lib) {
  const float lr = 0.1f, wd = 0.01f, rescale = 0.5f, bound = 0.2f;
  Array<float> weight = matrix(kRows, kCols, 0.05f, -0.5f);
  Array<float> grad = matrix(static_cast<int64_t>(kGradRows.size()), kCols, 0.1f, -1.0f);
  Array<int64_t> ids({static_cast<int64_t>(kGradRows.size())}, kGradRows);
  const Array<float> before = weight;
  require(sg_optim_sgd_float32_lazy(lib, weight.dl(), grad.dl(), ids.dl(), lr, wd, rescale,
                                    bound),
          "sparse SGD");
  for (int64_t i = 0; i < kRows; ++i) {
    int64_t p = 0;
    const bool has = in_grad(i, &p);
    for (int64_t j = 0; j < kCols; ++j) {
      const double w = before.values[i * kCols + j];
      const double step = double(lr) * clip(double(rescale) * grad.at(p, j), bound);
      const double want = has ? (1.0 - double(lr) * wd) * w - step : w;
      expect_close(weight.at(i, j), want, "sparse SGD", i, j);
    }
  }
}

// Two lazy Adam steps, the learning rate bias-corrected per step as MXNet's Adam does.
void sparse_adam(const sparsegen_kernels_library* lib) {
  const double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0.001, rescale = 1.0;
  const double bound = 0.6;
  Array<float> weight = matrix(kRows, kCols, 0.05f, -0.5f);
  Array<float> mean = matrix(kRows, kCols, 0.01f, -0.1f);
  Array<float> var = matrix(kRows, kCols, 0.001f, 0.0f);
  Array<float> grad = matrix(static_cast<int64_t>(kGradRows.size()), kCols, 0.1f, -1.0f);
  Array<int64_t> ids({static_cast<int64_t>(kGradRows.size())}, kGradRows);
  std::vector<double> w(weight.values.begin(), weight.values.end());
  std::vector<double> m(mean.values.begin(), mean.values.end());
  std::vector<double> v(var.values.begin(), var.values.end());
  for (int step = 1; step <= 2; ++step) {
    const double lr_t =
        lr * std::sqrt(1.0 - std::pow(beta2, step)) / (1.0 - std::pow(beta1, step));
    require(sg_optim_adam_float32_lazy(lib, weight.dl(), grad.dl(), ids.dl(), mean.dl(), var.dl(),
                                       float(lr_t), float(beta1), float(beta2), float(eps),
                                       float(wd), float(rescale), float(bound)),
            "sparse Adam");
    for (size_t p = 0; p < kGradRows.size(); ++p) {
      for (int64_t j = 0; j < kCols; ++j) {
        const int64_t at = kGradRows[p] * kCols + j;
        const double g = clip(grad.at(static_cast<int64_t>(p), j) * rescale + w[at] * wd, bound);
        m[at] = beta1 * m[at] + (1 - beta1) * g;
        v[at] = beta2 * v[at] + (1 - beta2) * g * g;
        w[at] -= double(float(lr_t)) * m[at] / (std::sqrt(v[at]) + eps);
      }
    }
  }
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      expect_close(weight.at(i, j), w[i * kCols + j], "sparse Adam weight", i, j);
      expect_close(mean.at(i, j), m[i * kCols + j], "sparse Adam mean", i, j);
      expect_close(var.at(i, j), v[i * kCols + j], "sparse Adam var", i, j);
    }
  }
}

// out = csr · rhs, for a 5 x 7 csr matrix with an empty row; out starts as NaN.
void csr_dot_dense(const sparsegen_kernels_library* lib) {
  Array<float> data({8}, {1.5f, -2.0f, 0.5f, 3.0f, -1.0f, 2.5f, 4.0f, -0.25f});
  Array<int64_t> indices({8}, {0, 6, 1, 2, 5, 3, 0, 4});
  Array<int64_t> indptr({6}, {0, 2, 2, 5, 6, 8});
  Array<float> rhs = matrix(7, kCols, 0.1f, -1.0f);
  Array<float> out({5, kCols}, std::vector<float>(5 * kCols, NAN));
  require(sg_dot_csr_dense_float32_matmul(lib, data.dl(), indices.dl(), indptr.dl(), rhs.dl(),
                                          out.dl()),
          "csr dot dense");
  for (int64_t i = 0; i < 5; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      double want = 0;
      for (int64_t p = indptr.values[i]; p < indptr.values[i + 1]; ++p) {
        want += double(data.values[p]) * rhs.at(indices.values[p], j);
      }
      expect_close(out.at(i, j), want, "csr dot dense", i, j);
    }
  }
}

// A gradient whose ids do not match its rows is refused before anything is written.
std::string refused_call(const sparsegen_kernels_library* lib) {
  Array<float> weight = matrix(kRows, kCols, 0.05f, -0.5f);
  Array<float> grad = matrix(2, kCols, 0.1f, -1.0f);
  Array<int64_t> ids({3}, {0, 1, 2});
  const std::vector<float> before = weight.values;
  if (sg_optim_sgd_float32_lazy(lib, weight.dl(), grad.dl(), ids.dl(), 0.1f, 0.0f, 1.0f,
                                INFINITY) == 0) {
    std::fprintf(stderr, "FAILED: a mismatched call was accepted\n");
    std::exit(1);
  }
  const std::string message = last_error();
  if (weight.values != before || message.find("Mismatched") == std::string::npos) {
    std::fprintf(stderr, "FAILED: refused call wrote the weight or said %s\n", message.c_str());
    std::exit(1);
  }
  return message.substr(0, message.find('\n'));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s path/to/libsparsegen_kernels.so\n", argv[0]);
    return 2;
  }
  sparsegen_kernels_library lib;
  require(sparsegen_kernels_open(&lib, argv[1]), "opening the library");
  sparse_sgd(&lib);
  sparse_adam(&lib);
  csr_dot_dense(&lib);
  const std::string refusal = refused_call(&lib);
  sparsegen_kernels_close(&lib);
  std::printf("OK sparse SGD, sparse Adam (2 steps) and csr.dense match %d reference values; "
              "a mismatched call was refused (%s)\n", compared, refusal.c_str());
  return 0;
}
