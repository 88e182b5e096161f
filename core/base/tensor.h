// tensor.h: read-only row-major 2-D arrays whose storage is owned or borrowed.
//
// Banks, landmark sets and model weights live in `Array2D<T>`. Storage is
// either owned (64-byte aligned, zero-initialised) or borrowed from memory
// that a `keeper` keeps alive (a bundle read into memory, bundle.h), so a
// multi-GB bank is never copied again. Copies share storage, so an array is immutable once shared:
// mutable_data() hands out the storage only while this array is the sole
// owner of its owned storage, and returns nullptr for views and for every
// copy (the original included) while another copy is alive.
#ifndef INVARIANT_CORE_BASE_TENSOR_H_
#define INVARIANT_CORE_BASE_TENSOR_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "Eigen/Core"

namespace invariant {

template <typename T>
class Array2D {
 public:
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  Array2D() = default;

  // Owned, 64-byte aligned, zero-filled rows × cols array.
  static Array2D Zeros(int64_t rows, int64_t cols) {
    Array2D a;
    a.rows_ = rows;
    a.cols_ = cols;
    const size_t bytes = RoundUp(static_cast<size_t>(rows * cols) * sizeof(T));
    void* p = std::aligned_alloc(64, bytes == 0 ? 64 : bytes);
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, bytes == 0 ? 64 : bytes);
    a.data_ = static_cast<T*>(p);
    a.keeper_ =
        std::shared_ptr<const void>(p, [](const void* q) { std::free(const_cast<void*>(q)); });
    a.owned_ = true;
    return a;
  }

  // Owned copy of an Eigen matrix (any storage order).
  template <typename Derived>
  static Array2D FromEigen(const Eigen::MatrixBase<Derived>& m) {
    Array2D a = Zeros(m.rows(), m.cols());
    a.mutable_map() = m.template cast<T>();
    return a;
  }

  // Borrowed view of rows × cols values at `data`, kept alive by `keeper`.
  static Array2D View(const T* data, int64_t rows, int64_t cols,
                      std::shared_ptr<const void> keeper) {
    Array2D a;
    a.data_ = const_cast<T*>(data);
    a.rows_ = rows;
    a.cols_ = cols;
    a.keeper_ = std::move(keeper);
    a.owned_ = false;
    return a;
  }

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }
  bool empty() const { return size() == 0; }
  size_t bytes() const { return static_cast<size_t>(size()) * sizeof(T); }
  const T* data() const { return data_; }
  const T* row(int64_t i) const { return data_ + i * cols_; }
  // Writable storage: only for owned arrays that are not shared.
  T* mutable_data() { return owned_ && keeper_.use_count() == 1 ? data_ : nullptr; }
  T* mutable_row(int64_t i) { return mutable_data() + i * cols_; }

  Eigen::Map<const RowMajor> map() const { return {data_, rows_, cols_}; }
  Eigen::Map<RowMajor> mutable_map() { return {mutable_data(), rows_, cols_}; }

 private:
  static size_t RoundUp(size_t b) { return (b + 63) / 64 * 64; }

  T* data_ = nullptr;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  std::shared_ptr<const void> keeper_;
  bool owned_ = false;
};

using FloatMatrix = Array2D<float>;
using DoubleMatrix = Array2D<double>;
using IntMatrix = Array2D<int32_t>;
// bfloat16 values as their 16 bits (the high half of the float's bits).
using Bf16Matrix = Array2D<uint16_t>;

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_TENSOR_H_
