// fashion_mnist.h: Fashion-MNIST (Xiao et al. 2017) from Debian's
// dataset-fashion-mnist package.
//
// The package installs four gzip IDX files under
// /usr/share/datasets/fashion-mnist: {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz
// (60,000 training and 10,000 test images of 28 × 28). Rows are 784 floats
// in [0, 1] (byte / 255, see idx.h) with the 10 class names below.
#ifndef INVARIANT_TRAIN_DATA_FASHION_MNIST_H_
#define INVARIANT_TRAIN_DATA_FASHION_MNIST_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "train/data/dataset.h"
#include "train/data/row_source.h"

namespace invariant::train {

inline constexpr char kFashionMnistDefaultDir[] = "/usr/share/datasets/fashion-mnist";

// "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
// "Sneaker", "Bag", "Ankle boot" (labels 0..9).
const std::vector<std::string>& FashionMnistClassNames();

enum class FashionMnistPart { kTrain, kTest };

// The paths of a part's image and label files under `dir`.
std::string FashionMnistImagesPath(const std::string& dir, FashionMnistPart part);
std::string FashionMnistLabelsPath(const std::string& dir, FashionMnistPart part);

// Streams one part (name "fashion-mnist/train" or "fashion-mnist/test").
// NOT_FOUND names the missing file (install dataset-fashion-mnist).
absl::StatusOr<std::unique_ptr<RowSource>> OpenFashionMnist(
    FashionMnistPart part, const std::string& dir = kFashionMnistDefaultDir);

// Loads one part into memory.
absl::StatusOr<Dataset> LoadFashionMnist(FashionMnistPart part,
                                         const std::string& dir = kFashionMnistDefaultDir);

}  // namespace invariant::train

#endif  // INVARIANT_TRAIN_DATA_FASHION_MNIST_H_
