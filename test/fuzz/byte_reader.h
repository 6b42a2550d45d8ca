// Reads fuzz input bytes as small decisions. Past the end every read returns 0, so any input,
// even an empty one, is a complete program.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::fuzz {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | u8();
    return v;
  }
  // A number in [0, n), n > 0.
  uint32_t below(uint32_t n) { return u8() % n; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace sluice::fuzz
