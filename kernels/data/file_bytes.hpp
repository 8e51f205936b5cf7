// Whole-file reading for the data set readers: raw or gzip, told apart by zlib from the magic bytes 1f 8b
// (never by the file name). Every failure is a dts::InputError whose `where` is the path: missing file,
// directory, unreadable file, corrupt or truncated gzip stream.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace dts::data {

struct FileBytes {
  std::vector<std::uint8_t> bytes;  // decompressed contents
  bool gzip = false;                // the file was a gzip stream (for error messages)
};

// Reads the whole file, inflating it when it is gzip. Buffered (64 KiB zlib buffer, 1 MiB reads), so the
// 26 MB Fashion-MNIST training images inflate in well under a second.
FileBytes read_file_bytes(const std::filesystem::path& path);

}  // namespace dts::data
