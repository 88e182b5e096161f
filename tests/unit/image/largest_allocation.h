// largest_allocation.h: the largest single allocation the test binary made
// while a scope was open (this binary replaces operator new to watch).
#ifndef INVARIANT_TESTS_UNIT_IMAGE_LARGEST_ALLOCATION_H_
#define INVARIANT_TESTS_UNIT_IMAGE_LARGEST_ALLOCATION_H_

#include <cstddef>

namespace invariant::testing_images {

// Opens a scope on construction; largest() is the largest allocation since.
// Not for concurrent use (the image tests are single-threaded).
class LargestAllocation {
 public:
  LargestAllocation();
  ~LargestAllocation();
  size_t largest() const;
};

}  // namespace invariant::testing_images

#endif  // INVARIANT_TESTS_UNIT_IMAGE_LARGEST_ALLOCATION_H_
