// Models of image files through the handlers: encoded JPEG and PNG files in
// InputBatch.images → the model's image front end → the usual batched path;
// every bad file refused naming it, a declared size over the limit refused
// from its header; the pixel budget and the decoding workers; metadata.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "server/handlers/image_files.h"
#include "tests/test_models/test_images.h"
#include "tests/unit/server/testing/serving_fixture.h"

namespace invariant::server {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace ti = invariant::testing_images;

class ImageHandlerTest : public ServingFixture {
 protected:
  ImageHandlerTest() : ServingFixture("image_handler_models") {}
  void SetUp() override {
    ServingFixture::SetUp();
    model_ = AddImageModel();
    ASSERT_NE(model_, nullptr);
    ASSERT_NE(model_->image_front_end(), nullptr);
  }
  void TearDown() override {
    decoders_.reset();  // runs what is queued
    ServingFixture::TearDown();
  }

  // A handler with a pixel budget of `pixels`, a memory budget of `memory`
  // bytes and a paused one-thread decoding queue.
  void Build(int64_t pixels, int64_t memory, int64_t server_max_pixels = kDefaultMaxImagePixels) {
    InflightBudgetOptions image;
    image.name = "max_decode_image_pixels";
    image.unit = "pixels";
    image.limit = pixels;
    images_ = std::make_unique<InflightBudget>(image);
    InflightBudgetOptions bytes;
    bytes.name = "max_inflight_bytes";
    bytes.limit = memory;
    memory_ = std::make_unique<InflightBudget>(bytes);
    decoders_ = std::make_unique<WorkerQueue>(1, /*start_paused=*/true);
    HandlerAdmission admission;
    admission.images = images_.get();
    admission.memory = memory_.get();
    admission.decoders = decoders_.get();
    handler_ =
        std::make_unique<FeatureHandler>(registry_.get(), batcher_.get(), 100, int64_t{64} << 20,
                                         InputLimits{30, server_max_pixels}, std::move(admission));
  }

  static v1::FeaturizeRequest Request(const std::vector<std::string>& files,
                                      const std::string& model = "pictures") {
    v1::FeaturizeRequest request;
    request.mutable_model()->set_name(model);
    for (const std::string& f : files) request.mutable_inputs()->add_images(f);
    return request;
  }

  absl::Status Featurize(const v1::FeaturizeRequest& request, v1::FeaturizeResponse* response,
                         const FeatureHandler* handler = nullptr) {
    std::promise<absl::Status> result;
    (handler != nullptr ? handler : features_.get())
        ->Featurize(request, response, absl::InfiniteFuture(),
                    [&result](absl::Status s) { result.set_value(s); });
    return result.get_future().get();
  }

  // The features of one file computed in process: front end, then Featurize.
  std::vector<float> InProcess(const std::string& file) const {
    const image::ImageFrontEnd& fe = *model_->image_front_end();
    std::vector<float> row(static_cast<size_t>(fe.output_dim()));
    EXPECT_TRUE(fe.Apply(file, fe.max_pixels(), row.data(), "f").ok());
    std::vector<float> features(static_cast<size_t>(model_->feature_dim()));
    model_->Featurize(1, row.data(), features.data());
    return features;
  }

  std::shared_ptr<const Model> model_;
  std::unique_ptr<InflightBudget> images_, memory_;
  std::unique_ptr<WorkerQueue> decoders_;
  std::unique_ptr<FeatureHandler> handler_;
};

std::vector<float> Slice(const v1::FeaturizeResponse& r, int64_t row) {
  const int64_t d = r.feature_dim();
  return {r.features().begin() + row * d, r.features().begin() + (row + 1) * d};
}

TEST_F(ImageHandlerTest, JpegAndPngFilesGiveTheRowsTheFrontEndGivesInProcess) {
  const std::string png = ti::EncodePng(ti::Noise(20, 14, 3, 1));
  const std::string jpeg = ti::EncodeJpeg(ti::Noise(64, 48, 3, 2, 2));
  const std::string grey = ti::EncodePng(ti::Noise(8, 8, 1, 3));
  v1::FeaturizeResponse response;
  ASSERT_TRUE(Featurize(Request({png, jpeg, grey}), &response).ok());
  ASSERT_EQ(response.num_rows(), 3);
  EXPECT_EQ(Slice(response, 0), InProcess(png));
  EXPECT_EQ(Slice(response, 1), InProcess(jpeg));
  EXPECT_EQ(Slice(response, 2), InProcess(grey));
  // The same file alone gives the same bits.
  v1::FeaturizeResponse alone;
  ASSERT_TRUE(Featurize(Request({jpeg}), &alone).ok());
  EXPECT_EQ(Slice(alone, 0), Slice(response, 1));
}

TEST_F(ImageHandlerTest, PredictNamesTheClassOfEachImage) {
  v1::PredictRequest request;
  request.mutable_model()->set_name("pictures");
  request.mutable_inputs()->add_images(ti::EncodePng(ti::Noise(8, 8, 3, 4)));
  v1::PredictResponse response;
  std::promise<absl::Status> result;
  features_->Predict(request, &response, absl::InfiniteFuture(),
                     [&result](absl::Status s) { result.set_value(s); });
  ASSERT_TRUE(result.get_future().get().ok());
  ASSERT_EQ(response.predicted_classes_size(), 1);
  EXPECT_THAT(response.predicted_classes(0), StartsWith("shape_"));
}

TEST_F(ImageHandlerTest, ABombIsRefusedFromItsHeaderNamingTheImage) {
  const std::string ok = ti::EncodePng(ti::Noise(8, 8, 3, 4));
  v1::FeaturizeResponse response;
  const absl::Status s = Featurize(Request({ok, ti::PngDeclaring(30000, 30000)}), &response);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "inputs.images[1]: the PNG declares 30000 x 30000 = 900000000 pixels, above the limit "
            "of 50000000 pixels");
}

TEST_F(ImageHandlerTest, TheSmallerOfTheModelsAndTheServersLimitHolds) {
  Build(0, 0, /*server_max_pixels=*/1000);
  decoders_->Resume();
  v1::FeaturizeResponse response;
  const absl::Status s =
      Featurize(Request({ti::EncodePng(ti::Noise(40, 30, 3, 1))}), &response, handler_.get());
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("1200 pixels, above the limit of 1000 pixels"));
  v1::GetModelMetadataRequest request;
  request.mutable_model()->set_name("pictures");
  v1::GetModelMetadataResponse metadata;
  ASSERT_TRUE(handler_->GetModelMetadata(request, &metadata).ok());
  EXPECT_EQ(metadata.image().max_pixels(), 1000);
  EXPECT_EQ(metadata.image().height(), 8);
  EXPECT_EQ(metadata.image().channels(), 3);
  EXPECT_EQ(metadata.image().fit(), "crop");
  EXPECT_EQ(metadata.image().scaling(), "unit_byte");
}

TEST_F(ImageHandlerTest, CorruptFilesAndOtherBytesAreRefusedNamingTheImage) {
  const std::string png = ti::EncodePng(ti::Noise(30, 30, 3, 1));
  v1::FeaturizeResponse response;
  absl::Status s = Featurize(Request({png.substr(0, png.size() / 2)}), &response);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.images[0]: a corrupt or truncated PNG"));
  s = Featurize(Request({"not an image"}), &response);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("inputs.images[0]: expected a JPEG or PNG file"));
}

TEST_F(ImageHandlerTest, EachModelTakesOnlyItsOwnKindOfInput) {
  v1::FeaturizeResponse response;
  // Images to a model of rows.
  absl::Status s = Featurize(Request({"x"}, "feat"), &response);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.images: expected rows of input_dim="));
  // Rows to the model of images.
  v1::FeaturizeRequest rows = Request({});
  rows.mutable_inputs()->add_values(0.5f);
  s = Featurize(rows, &response);
  EXPECT_THAT(std::string(s.message()),
              StartsWith("inputs.values: expected image files in inputs.images"));
  // Both.
  rows.mutable_inputs()->add_images("x");
  s = Featurize(rows, &response);
  EXPECT_EQ(s.message(),
            "inputs: expected exactly one of values, raw_values, clips or images, received values "
            "and 1 images");
  // None.
  s = Featurize(Request({}), &response);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.images: empty batch"));
}

TEST_F(ImageHandlerTest, ImagesAreDecodedOnTheWorkersAndHoldTheirPixelsUntilDecoded) {
  Build(/*pixels=*/3000, /*memory=*/0);
  const std::string file = ti::EncodePng(ti::Noise(50, 40, 3, 1));  // 2,000 pixels
  auto kept = std::make_shared<v1::FeaturizeRequest>(Request({file}));
  v1::FeaturizeResponse first, second;
  std::promise<std::thread::id> where;
  handler_->Featurize(*kept, &first, absl::InfiniteFuture(), [&where](absl::Status s) {
    EXPECT_TRUE(s.ok()) << s;
    where.set_value(std::this_thread::get_id());
  });
  EXPECT_EQ(images_->in_flight(), 2000);  // priced from the header, the decoding queued
  const absl::Status refused = Featurize(Request({file}), &second, handler_.get());
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("max_decode_image_pixels=3000"));
  decoders_->Resume();
  EXPECT_NE(where.get_future().get(), std::this_thread::get_id());
  EXPECT_EQ(images_->in_flight(), 0);
  EXPECT_EQ(first.num_rows(), 1);
}

TEST_F(ImageHandlerTest, AnImageOverThePixelBudgetAloneIsRefusedBeforeDecoding) {
  Build(/*pixels=*/1000, /*memory=*/0);
  v1::FeaturizeResponse response;
  const absl::Status s =
      Featurize(Request({ti::EncodePng(ti::Noise(50, 40, 3, 1))}), &response, handler_.get());
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), StartsWith("inputs.images: "));
  EXPECT_EQ(decoders_->queued(), 0);
}

TEST_F(ImageHandlerTest, DecodingHoldsTheBytesItsLargestImageNeedsFromTheMemoryBudget) {
  // 50 × 40 PNG: 4 bytes a pixel decoded, three copies, plus the row.
  const std::string file = ti::EncodePng(ti::Noise(50, 40, 3, 1));
  absl::StatusOr<ImageBatchCost> cost =
      PlanImageBatch(InferRequestOfV1({}, Request({file, file}).inputs()),
                     *model_->image_front_end(), 100, 1 << 20);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost->pixels, 4000);
  EXPECT_EQ(cost->peak_bytes, 3 * 4 * 2000 + 8 * 8 * 3);
  Build(0, /*memory=*/1 << 20);
  v1::FeaturizeResponse response;
  std::promise<absl::Status> done;
  auto kept = std::make_shared<v1::FeaturizeRequest>(Request({file}));
  handler_->Featurize(*kept, &response, absl::InfiniteFuture(),
                      [&done](absl::Status s) { done.set_value(s); });
  EXPECT_GE(memory_->in_flight(), cost->peak_bytes);  // queued: rows and decoding held
  decoders_->Resume();
  EXPECT_TRUE(done.get_future().get().ok());
  EXPECT_EQ(memory_->in_flight(), 0);
}

TEST_F(ImageHandlerTest, ACallCancelledWhileItsImagesWaitIsAnsweredWithoutDecoding) {
  Build(/*pixels=*/1 << 20, /*memory=*/1 << 20);
  auto kept = std::make_shared<v1::FeaturizeRequest>(
      Request({ti::EncodePng(ti::Noise(20, 20, 3, 1)), ti::EncodePng(ti::Noise(20, 20, 3, 2))}));
  auto cancel = std::make_shared<CancelToken>();
  v1::FeaturizeResponse response;
  std::promise<absl::Status> done;
  handler_->Featurize(
      *kept, &response, absl::InfiniteFuture(), [&done](absl::Status s) { done.set_value(s); },
      cancel);
  cancel->Cancel(absl::CancelledError("the client went away"));
  decoders_->Resume();
  EXPECT_EQ(done.get_future().get().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(response.features_size(), 0);  // never decoded nor computed
  EXPECT_EQ(images_->in_flight(), 0);
  EXPECT_EQ(memory_->in_flight(), 0);
}

TEST_F(ImageHandlerTest, DecodingStopsAtTheNextImageOnceAskedTo) {
  const std::string file = ti::EncodePng(ti::Noise(10, 10, 3, 1));
  const v1::FeaturizeRequest request = Request({file, file, file, file});
  int asked = 0;
  absl::StatusOr<DecodedRows> rows = DecodeImageBatch(
      InferRequestOfV1({}, request.inputs()), *model_->image_front_end(), 100, 1 << 20,
      [&asked]() -> absl::Status {
        return ++asked == 3 ? absl::DeadlineExceededError("stop") : absl::OkStatus();
      });
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(asked, 3);  // asked before each image: two decoded, the third not
}

}  // namespace
}  // namespace invariant::server
