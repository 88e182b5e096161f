// file.h: the one "read a whole file into a string" helper.
//
// Callers word their own errors (which flag or config the file was for);
// this only says whether the bytes could be read.
#ifndef INVARIANT_CORE_BASE_FILE_H_
#define INVARIANT_CORE_BASE_FILE_H_

#include <optional>
#include <string>

namespace invariant {

// The bytes of the file at `path` (binary, unmodified), or nullopt when it
// cannot be opened or read.
std::optional<std::string> ReadWholeFile(const std::string& path);

}  // namespace invariant

#endif  // INVARIANT_CORE_BASE_FILE_H_
