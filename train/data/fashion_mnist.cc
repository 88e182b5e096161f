#include "train/data/fashion_mnist.h"

#include "absl/strings/str_cat.h"
#include "core/base/status_macros.h"
#include "train/data/idx.h"

namespace invariant::train {
namespace {

const char* Prefix(FashionMnistPart part) {
  return part == FashionMnistPart::kTrain ? "train" : "t10k";
}

IdxOptions Options(FashionMnistPart part) {
  IdxOptions options;
  options.name = part == FashionMnistPart::kTrain ? "fashion-mnist/train" : "fashion-mnist/test";
  options.class_names = FashionMnistClassNames();
  return options;
}

}  // namespace

const std::vector<std::string>& FashionMnistClassNames() {
  static const auto* names =
      new std::vector<std::string>{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                   "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return *names;
}

std::string FashionMnistImagesPath(const std::string& dir, FashionMnistPart part) {
  return absl::StrCat(dir, "/", Prefix(part), "-images-idx3-ubyte.gz");
}

std::string FashionMnistLabelsPath(const std::string& dir, FashionMnistPart part) {
  return absl::StrCat(dir, "/", Prefix(part), "-labels-idx1-ubyte.gz");
}

absl::StatusOr<std::unique_ptr<RowSource>> OpenFashionMnist(FashionMnistPart part,
                                                            const std::string& dir) {
  auto source = OpenIdxSource(FashionMnistImagesPath(dir, part), FashionMnistLabelsPath(dir, part),
                              Options(part));
  if (absl::IsNotFound(source.status())) {
    return absl::NotFoundError(absl::StrCat(source.status().message(),
                                            " (Fashion-MNIST: install the Debian package "
                                            "dataset-fashion-mnist)"));
  }
  return source;
}

absl::StatusOr<Dataset> LoadFashionMnist(FashionMnistPart part, const std::string& dir) {
  ASSIGN_OR_RETURN(std::unique_ptr<RowSource> source, OpenFashionMnist(part, dir));
  return ReadAllRows(*source);
}

}  // namespace invariant::train
